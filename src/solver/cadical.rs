//! CaDiCaL (through `cadical-sys`) as a [`IncrementalSolver`]: the formula, less what its units force, is
//! loaded once per lane; each query sets the phases that changed since the last one, assumes
//! the literals to keep, and runs under a conflict limit and a terminator that watches the
//! budget.

use super::cores::RecentCores;
use super::{Answer, IncrementalBackend, IncrementalSolver, Steering};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{literal, var_index, Cnf, Lit};
use crate::propagate::forced_values;
use cadical_sys::{CaDiCal, Status, Terminator};

/// Opens CaDiCaL sessions.
#[derive(Debug, Default, Clone, Copy)]
pub struct Cadical;

struct CadicalSolver<'a> {
    solver: Solver,
    cnf: &'a Cnf,
    budget: Budget<'a>,
    /// The phases set so far (all false at first), so that a query sets only those that changed.
    phases: Assignment,
    /// Some variables are unphased (a query steered only some, before any model): the next
    /// query sets every phase again.
    loose: bool,
    /// The last model found: what variables a query does not steer are phased to. CaDiCaL's
    /// own saved phases would be those of the query before, which gave up under random
    /// phases when a fresh solution escalates.
    last_model: Option<Assignment>,
    /// What every model has in common: the values unit clauses and their propagation force,
    /// and then those CaDiCaL fixes at its root (`unsettled` says which are still open).
    forced: Assignment,
    /// The variables they leave open, in order: CaDiCaL's variable `i + 1` is `open[i]`.
    /// Only these are loaded, phased and read: on sketches most variables are forced, and
    /// CaDiCaL's decision queue would skip over each of them on every query, and reading a
    /// value is an FFI call.
    open: Vec<u32>,
    /// Per variable: its index in `open`, or `FORCED`.
    inner: Vec<u32>,
    /// Indices in `open` CaDiCaL has not fixed at its root: the only ones a model is read
    /// for. Its probing and learnt units fix most of what unit propagation leaves open on
    /// sketches within the first queries.
    unsettled: Vec<u32>,
    /// CaDiCaL's count of root-fixed variables when `unsettled` was last pruned.
    fixed_seen: i64,
    /// `calls` when that count last grew.
    fixed_grew_at: u64,
    /// The session has reloaded or probed: it probes at most once, and never after a reload
    /// (which runs CaDiCaL's preprocessing itself where the formula names a support).
    simplified: bool,
    /// Cores met so far: a query assuming one is refuted without a call.
    cores: RecentCores,
    /// Queries that reached CaDiCaL.
    calls: u64,
}

/// How many recent cores a session remembers.
const REMEMBERED_CORES: usize = 64;

/// Fixed variables CaDiCaL must hold, at least, before a session reloads it without them.
const RELOAD_AFTER_FIXED: usize = 64;
/// Queries in which CaDiCaL fixed nothing new before a session reloads it: it fixes them in
/// bursts in its first queries, and a reload at the first lull loses what comes next.
const RELOAD_AFTER_QUIET_QUERIES: u64 = 16;
/// Rounds of CaDiCaL's preprocessing on a reloaded solver.
const RELOAD_SIMPLIFY_ROUNDS: i32 = 3;
/// Queries after which a session that has not reloaded probes once. What CaDiCaL fixes at
/// its root comes from the searches of its first queries, so it depends on the seed: a
/// session that fixed little would never reload. Sessions that answer fewer queries (most
/// circuits complete by propagation) never pay for it.
const PROBE_AFTER_QUERIES: u64 = 128;
/// CaDiCaL's preprocessing steps switched off in the solver that probes: they cost several
/// times what probing does, and failed literals, binary-clause backbones and equivalent
/// literals, which stay on, fix what they would.
const COSTLY_STEPS: [&str; 6] = [
    "elim",
    "subsume",
    "vivify",
    "ternary",
    "sweep",
    "congruence",
];

/// `CadicalSolver::inner` of a forced variable, which CaDiCaL never sees.
const FORCED: u32 = u32::MAX;

/// `lit` in CaDiCaL's numbering, or `None` when its variable is forced.
fn inner_lit(inner: &[u32], lit: Lit) -> Option<i32> {
    let v = inner[var_index(lit)];
    (v != FORCED).then(|| if lit < 0 { -open_lit(v) } else { open_lit(v) })
}

/// The positive literal of `open`'s `i`th variable in CaDiCaL's numbering.
fn open_lit(i: u32) -> i32 {
    i as i32 + 1
}

/// A CaDiCaL solver that may move to another thread (a session is opened on one thread and
/// answers on a rayon worker).
struct Solver(CaDiCal);

// SAFETY: CaDiCaL's solver is a C++ object with no thread affinity (no thread-local state), and
// `Solver` is not `Sync`, so it is used from one thread at a time. The only callback it holds is
// a `BudgetTerminator`, which is `Send`.
unsafe impl Send for Solver {}

impl std::ops::Deref for Solver {
    type Target = CaDiCal;
    fn deref(&self) -> &CaDiCal {
        &self.0
    }
}

impl std::ops::DerefMut for Solver {
    fn deref_mut(&mut self) -> &mut CaDiCal {
        &mut self.0
    }
}

/// Stops CaDiCaL when the session's budget runs out.
struct BudgetTerminator(Budget<'static>);

impl Terminator for BudgetTerminator {
    fn terminated(&mut self) -> bool {
        self.0.exhausted()
    }
}

impl IncrementalBackend for Cadical {
    fn name(&self) -> &'static str {
        "cadical"
    }

    fn open<'a>(
        &self,
        cnf: &'a Cnf,
        budget: Budget<'a>,
    ) -> Result<Box<dyn IncrementalSolver + 'a>, String> {
        Ok(Box::new(CadicalSolver::open(cnf, budget)?))
    }
}

impl<'a> CadicalSolver<'a> {
    fn open(cnf: &'a Cnf, budget: Budget<'a>) -> Result<Self, String> {
        let (forced, open) = forced_values(cnf);
        let (solver, inner) = load(cnf, &forced, &open, budget, &[])?;
        Ok(CadicalSolver {
            solver,
            cnf,
            budget,
            phases: Assignment::zeros(cnf.num_vars()),
            loose: false,
            last_model: None,
            unsettled: (0..open.len() as u32).collect(),
            forced,
            open,
            inner,
            fixed_seen: 0,
            fixed_grew_at: 0,
            simplified: false,
            cores: RecentCores::new(REMEMBERED_CORES),
            calls: 0,
        })
    }
}

/// A CaDiCaL holding `cnf` less what `forced` sets (every variable not `open`), and each
/// variable's index in it; every phase false, the options `off` switched off, and stopped by
/// `budget`.
fn load<'a>(
    cnf: &Cnf,
    forced: &Assignment,
    open: &[u32],
    budget: Budget<'a>,
    off: &[&str],
) -> Result<(Solver, Vec<u32>), String> {
    let mut solver = Solver(CaDiCal::new());
    // The "lucky" pre-pass tries fixed assignments before the phases we set, and returns
    // the same few models whatever they are; off, the phases steer every query. The first
    // query's light preprocessing (gate extraction, sweeping, fast elimination) costs more
    // than a whole easy run's queries (results/engine).
    for option in ["lucky", "preprocesslight"].iter().chain(off) {
        if !solver.set(option, 0) {
            return Err(format!("cadical: no option {option}"));
        }
    }
    let mut inner = vec![FORCED; cnf.num_vars()];
    for (i, &v) in open.iter().enumerate() {
        inner[v as usize] = i as u32;
    }
    let last = i32::try_from(open.len()).map_err(|_| "cadical: too many variables")?;
    if last > 0 {
        solver.resize(last);
    }
    // Clauses a forced value satisfies are left out, and forced-false literals dropped:
    // no clause is left empty, or propagation would have found the contradiction (and
    // then nothing is forced); on a reload the values CaDiCaL fixed are entailed, and a
    // model has been seen.
    for clause in cnf.clauses() {
        let satisfied = clause
            .iter()
            .any(|&l| inner_lit(&inner, l).is_none() && forced.satisfies(l));
        if !satisfied {
            for lit in clause.iter().filter_map(|&l| inner_lit(&inner, l)) {
                solver.add(lit);
            }
            solver.add(0);
        }
    }
    // Every variable starts phased false, matching a session's `phases`.
    for i in 0..open.len() as u32 {
        solver.phase(-open_lit(i));
    }
    // SAFETY: the terminator only reads the budget (a deadline and a borrowed interrupt
    // flag), and CaDiCaL calls it only from `solve` and `simplify`. Every solver this
    // function returns is owned by a `CadicalSolver<'a>` or dropped within `probe`, so it
    // never outlives `'a`, the flag's lifetime; dropping the terminator does not touch the
    // flag.
    let budget = unsafe { std::mem::transmute::<Budget<'a>, Budget<'static>>(budget) };
    solver.connect_terminator(BudgetTerminator(budget));
    Ok((solver, inner))
}

/// Freezes the independent support in `solver` (variable indices in `inner`), if the formula
/// names one; true if it does. Queries assume only support literals then: frozen, they stay,
/// and CaDiCaL's preprocessing may take the other variables out.
fn freeze_support(solver: &mut CaDiCal, cnf: &Cnf, inner: &[u32]) -> bool {
    for &v in cnf.independent_support() {
        if let Some(lit) = inner_lit(inner, v as Lit) {
            solver.freeze(lit);
        }
    }
    !cnf.independent_support().is_empty()
}

impl CadicalSolver<'_> {
    fn set_phases(&mut self, phases: &Assignment, steering: Steering) {
        let steered = match steering {
            Steering::All | Steering::DecideFirst(_) => return self.steer(phases),
            Steering::Only(steered) => steered,
        };
        if let Some(mut target) = self.last_model.clone() {
            for &v in steered {
                target.set(v, phases.get(v));
            }
            return self.steer(&target);
        }
        for i in 0..self.open.len() as u32 {
            self.solver.unphase(open_lit(i));
        }
        for &v in steered {
            self.phase(v, phases.get(v));
        }
        self.phases.clone_from(phases);
        self.loose = true;
    }

    /// Phases every variable as `target` has it: those that changed since the last query, or
    /// all of them after a loose one.
    fn steer(&mut self, target: &Assignment) {
        if self.loose {
            for v in 0..target.len() {
                self.phase(v, target.get(v));
            }
            self.loose = false;
        } else {
            for v in self.phases.xor(target).ones() {
                self.phase(v, target.get(v));
            }
        }
        self.phases.clone_from(target);
    }

    /// Moves the variables CaDiCaL has fixed at its root since the last look into `forced`,
    /// whose values every model has: they are not read again.
    fn settle_fixed(&mut self) {
        let fixed = self.solver.get_statistic_value("fixed");
        if fixed == self.fixed_seen {
            return;
        }
        self.fixed_seen = fixed;
        self.fixed_grew_at = self.calls;
        settle(
            &self.solver,
            &self.open,
            &mut self.unsettled,
            &mut self.forced,
        );
    }

    /// Whether CaDiCaL has fixed enough of what it holds that a new one without it pays
    /// (it still decides around, extends models over and scans its queue past every
    /// variable it fixed), and has fixed nothing new for a while: it fixes them in bursts in
    /// its first queries, often from learnt clauses a new solver would not have.
    fn worth_reloading(&self) -> bool {
        let fixed = self.open.len() - self.unsettled.len();
        fixed >= RELOAD_AFTER_FIXED.max(self.open.len() / 4)
            && self.calls - self.fixed_grew_at >= RELOAD_AFTER_QUIET_QUERIES
    }

    /// Whether a session that has not reloaded has answered enough queries, fixing nothing
    /// new for a while, to probe once (`PROBE_AFTER_QUERIES`).
    fn worth_probing(&self) -> bool {
        !self.simplified
            && !self.open.is_empty()
            && self.calls >= PROBE_AFTER_QUERIES
            && self.calls - self.fixed_grew_at >= RELOAD_AFTER_QUIET_QUERIES
            && !self.cnf.independent_support().is_empty()
    }

    /// One round of CaDiCaL's root-level probing, the support frozen as a reload freezes it
    /// and `COSTLY_STEPS` off. Options are set only before a solver holds clauses, so it runs
    /// on a solver of its own holding what this one does; what it fixes counts towards a
    /// reload.
    fn probe(&mut self) -> Result<(), String> {
        self.simplified = true;
        let (mut prober, _) = load(
            self.cnf,
            &self.forced,
            &self.open,
            self.budget,
            &COSTLY_STEPS,
        )?;
        freeze_support(&mut prober, self.cnf, &self.inner);
        prober.simplify(1);
        let before = self.unsettled.len();
        settle(&prober, &self.open, &mut self.unsettled, &mut self.forced);
        if self.unsettled.len() < before {
            self.fixed_grew_at = self.calls;
        }
        Ok(())
    }

    /// Replaces the solver by one that holds only the unsettled variables, with the fixed
    /// ones as forced values (the formula entails them, so the models are the same). Learnt
    /// clauses are lost; the cores found stay true.
    fn reload(&mut self) -> Result<(), String> {
        let open: Vec<u32> = self
            .unsettled
            .iter()
            .map(|&i| self.open[i as usize])
            .collect();
        let (mut solver, inner) = load(self.cnf, &self.forced, &open, self.budget, &[])?;
        // CaDiCaL's preprocessing (probing, elimination, subsumption) may take what is not
        // frozen out of every query's propagation: on the solver first loaded it costs more
        // than it saves on the easy case studies, on the reduced one it pays.
        if freeze_support(&mut solver, self.cnf, &inner) {
            solver.simplify(RELOAD_SIMPLIFY_ROUNDS);
        }
        self.solver = solver;
        self.simplified = true;
        self.inner = inner;
        self.unsettled = (0..open.len() as u32).collect();
        self.open = open;
        self.fixed_seen = 0;
        self.fixed_grew_at = self.calls;
        self.phases = Assignment::zeros(self.cnf.num_vars());
        self.loose = false;
        Ok(())
    }

    /// Decide `v` first as `value` (nothing for a forced variable).
    fn phase(&mut self, v: usize, value: bool) {
        if let Some(lit) = inner_lit(&self.inner, literal(v, value)) {
            self.solver.phase(lit);
        }
    }

    fn query(
        &mut self,
        assumptions: &[Lit],
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Result<Answer, String> {
        // An assumption against a forced value fails on its own; one that agrees holds.
        if let Some(&against) = assumptions
            .iter()
            .find(|&&l| inner_lit(&self.inner, l).is_none() && !self.forced.satisfies(l))
        {
            return Ok(Answer::Refuted(vec![against]));
        }
        let known = self.cores.refuting(assumptions);
        if !known.is_empty() {
            return Ok(Answer::Refuted(known));
        }
        let assumed: Vec<(Lit, i32)> = assumptions
            .iter()
            .filter_map(|&l| Some((l, inner_lit(&self.inner, l)?)))
            .collect();
        self.set_phases(phases, steering);
        let limit = conflicts.map_or(-1, |c| i32::try_from(c).unwrap_or(i32::MAX));
        self.solver.limit("conflicts", limit);
        for &(_, lit) in &assumed {
            self.solver.assume(lit);
        }
        self.calls += 1;
        Ok(match self.solver.solve() {
            Status::SATISFIABLE => {
                self.settle_fixed();
                let mut model = self.forced.clone();
                for &i in &self.unsettled {
                    let v = self.open[i as usize] as usize;
                    // A variable in no clause has no value of its own: it keeps its phase.
                    let value = match self.solver.val(open_lit(i)) {
                        0 => phases.get(v),
                        value => value > 0,
                    };
                    model.set(v, value);
                }
                if self.worth_reloading() {
                    self.reload()?;
                } else if self.worth_probing() {
                    self.probe()?;
                }
                self.last_model = Some(model.clone());
                Answer::Model(model)
            }
            Status::UNSATISFIABLE => {
                let solver = &mut self.solver;
                let core: Vec<Lit> = assumed
                    .iter()
                    .filter(|&&(_, lit)| solver.failed(lit))
                    .map(|&(l, _)| l)
                    .collect();
                self.cores.learn(&core);
                Answer::Refuted(core)
            }
            Status::UNKNOWN => Answer::Unknown("conflict limit or time limit".into()),
        })
    }
}

/// Moves the variables of `open` (at the indices `unsettled` holds) that `solver` has fixed at
/// its root into `forced`.
fn settle(solver: &CaDiCal, open: &[u32], unsettled: &mut Vec<u32>, forced: &mut Assignment) {
    unsettled.retain(|&i| match solver.fixed(open_lit(i)) {
        0 => true,
        value => {
            forced.set(open[i as usize] as usize, value > 0);
            false
        }
    });
}

impl IncrementalSolver for CadicalSolver<'_> {
    fn solve(
        &mut self,
        assumptions: &[Lit],
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Answer {
        self.query(assumptions, phases, steering, conflicts)
            .unwrap_or_else(Answer::Unknown)
    }

    fn solver_calls(&self) -> u64 {
        self.calls
    }

    fn conflicts(&self) -> u64 {
        u64::try_from(self.solver.get_statistic_value("conflicts")).unwrap_or(0)
    }

    fn open_variables(&self) -> usize {
        self.unsettled.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::planted;
    use crate::verify::Checker;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn models_satisfy_assumptions_and_phases_are_followed() {
        let cnf = Cnf::from_clauses(4, &[vec![1, 2], vec![-1, 3], vec![-2, -3], vec![2, 3, 4]]);
        let checker = Checker::new(&cnf);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        let phases = Assignment::from_bit_string("1010").unwrap();
        match session.solve(&[], &phases, Steering::All, None) {
            Answer::Model(m) => {
                assert!(checker.satisfies(&m));
                assert_eq!(m, phases, "an exact model given as phases comes back");
            }
            other => panic!("{other:?}"),
        }
        match session.solve(&[2], &phases, Steering::All, None) {
            Answer::Model(m) => assert!(checker.satisfies(&m) && m.get(1)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failed_assumptions_are_named() {
        // x1 → x2, and ¬x2 ∨ ¬x3: assuming x1, x3 and x4 fails on {x1, x3} alone.
        let cnf = Cnf::from_clauses(4, &[vec![-1, 2], vec![-2, -3]]);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        match session.solve(&[1, 3, 4], &Assignment::zeros(4), Steering::All, None) {
            Answer::Refuted(mut core) => {
                core.sort();
                assert_eq!(core, vec![1, 3]);
            }
            other => panic!("{other:?}"),
        }
        let unsat = crate::testing::unsatisfiable();
        let mut session = Cadical.open(&unsat, Budget::unlimited()).unwrap();
        assert_eq!(
            session.solve(
                &[],
                &Assignment::zeros(unsat.num_vars()),
                Steering::All,
                None
            ),
            Answer::Refuted(vec![])
        );
    }

    /// A core met once refutes later queries that assume it, and only those.
    #[test]
    fn a_known_core_refutes_again_and_nothing_else() {
        // x1 → x2, and ¬x2 ∨ ¬x3: {x1, x3} is refuted whatever else is assumed.
        let cnf = Cnf::from_clauses(5, &[vec![-1, 2], vec![-2, -3]]);
        let checker = Checker::new(&cnf);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        let phases = Assignment::zeros(5);
        let refuted = |answer: Answer| match answer {
            Answer::Refuted(mut core) => {
                core.sort();
                core
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refuted(session.solve(&[1, 3, 4], &phases, Steering::All, None)),
            vec![1, 3]
        );
        assert_eq!(
            refuted(session.solve(&[5, 3, 1], &phases, Steering::All, None)),
            vec![1, 3]
        );
        for assumptions in [&[1, 4, 5][..], &[3, 4], &[-1, 3, 5]] {
            match session.solve(assumptions, &phases, Steering::All, None) {
                Answer::Model(m) => {
                    assert!(checker.satisfies(&m));
                    assert!(assumptions.iter().all(|&l| m.satisfies(l)));
                }
                other => panic!("{assumptions:?}: {other:?}"),
            }
        }
    }

    /// Variables a query does not steer are phased as in the last model, or left to CaDiCaL
    /// before there is one; steering all afterwards sets every phase, not only those that
    /// changed.
    #[test]
    fn unsteered_variables_follow_the_last_model() {
        // 0000, 0111 and 1111 are models.
        let cnf = Cnf::from_clauses(4, &[vec![1, 2, -3], vec![3, 4, -1]]);
        let model = |session: &mut Box<dyn IncrementalSolver + '_>, phases: &str, steering| {
            let phases = Assignment::from_bit_string(phases).unwrap();
            match session.solve(&[], &phases, steering, None) {
                Answer::Model(m) => m.to_bit_string(),
                other => panic!("{other:?}"),
            }
        };
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        assert_eq!(model(&mut session, "1111", Steering::All), "1111");
        assert_eq!(model(&mut session, "0000", Steering::Only(&[0])), "0111");
        assert_eq!(model(&mut session, "0000", Steering::All), "0000");
        assert_eq!(model(&mut session, "1111", Steering::Only(&[3])), "0001");
        // Before any model the others are CaDiCaL's to decide, until all are steered again.
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        assert!(model(&mut session, "0000", Steering::Only(&[0])).starts_with('0'));
        assert_eq!(model(&mut session, "0000", Steering::All), "0000");
    }

    /// CaDiCaL sees only the open variables, renumbered: failed assumptions come back as
    /// the caller's literals, and an assumption against a forced value fails on its own.
    #[test]
    fn assumptions_are_renumbered_both_ways() {
        // x1 forced; x2 → x3 and ¬x3 ∨ ¬x4 over the open x2, x3, x4 (CaDiCaL's 0, 1, 2).
        let cnf = Cnf::from_clauses(4, &[vec![1], vec![-1, -2, 3], vec![-3, -4]]);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        let phases = Assignment::zeros(4);
        match session.solve(&[1, 2, 4], &phases, Steering::All, None) {
            Answer::Refuted(mut core) => {
                core.sort();
                assert_eq!(core, vec![2, 4]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            session.solve(&[2, -1], &phases, Steering::All, None),
            Answer::Refuted(vec![-1])
        );
        match session.solve(&[1, 4], &phases, Steering::All, None) {
            Answer::Model(m) => assert_eq!(m.to_bit_string(), "1001"),
            other => panic!("{other:?}"),
        }
    }

    /// Units and what they propagate are set without asking the solver; the rest are read,
    /// so a model still follows the phases there and satisfies every clause.
    #[test]
    fn forced_variables_are_set_and_open_ones_read() {
        // x1; x1 → x2; x2 ∨ x3 ∨ x4 leaves x3 and x4 open; x5 is in no clause.
        let cnf = Cnf::from_clauses(5, &[vec![1], vec![-1, 2], vec![2, 3, 4]]);
        let (forced, open) = forced_values(&cnf);
        assert_eq!(open, vec![2, 3, 4]);
        assert!(forced.get(0) && forced.get(1));
        let checker = Checker::new(&cnf);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        for phases in ["00000", "00111", "00101"] {
            let phases = Assignment::from_bit_string(phases).unwrap();
            match session.solve(&[], &phases, Steering::All, None) {
                Answer::Model(m) => {
                    assert!(checker.satisfies(&m));
                    assert_eq!(m.to_bit_string()[2..], phases.to_bit_string()[2..]);
                }
                other => panic!("{other:?}"),
            }
        }
        let contradicting = Cnf::from_clauses(2, &[vec![1], vec![-1, 2], vec![-2]]);
        let mut session = Cadical.open(&contradicting, Budget::unlimited()).unwrap();
        assert!(matches!(
            session.solve(&[], &Assignment::zeros(2), Steering::All, None),
            Answer::Refuted(_)
        ));
    }

    /// Once CaDiCaL has fixed enough variables at its root (here each `x` by a conflict: `x ∨ y`
    /// and `x ∨ ¬y`, which unit propagation alone does not see), the session reloads it
    /// without them; models still satisfy every clause, and an assumption against a fixed
    /// value is refuted as itself.
    #[test]
    fn a_session_reloads_without_what_cadical_fixed_and_stays_correct() {
        // CaDiCaL decides its highest variables first: each x (101..200) before its y.
        let pairs = 100;
        let mut clauses: Vec<Vec<Lit>> = (1..=pairs)
            .flat_map(|y| [vec![pairs + y, y], vec![pairs + y, -y]])
            .collect();
        // A chain over z1..z20 the fixed values leave open.
        let z = 2 * pairs;
        clauses.extend((1..20).map(|i| vec![-(z + i), z + i + 1]));
        let cnf = Cnf::from_clauses(z as usize + 20, &clauses);
        let checker = Checker::new(&cnf);
        let mut session = CadicalSolver::open(&cnf, Budget::unlimited()).unwrap();
        assert_eq!(session.open.len(), cnf.num_vars(), "no unit to propagate");
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for query in 0..30 {
            // The first query decides every x false, and so fixes it.
            let mut phases = Assignment::zeros(cnf.num_vars());
            for v in 0..cnf.num_vars() {
                phases.set(v, query > 0 && rng.gen());
            }
            let x = pairs + rng.gen_range(1..=pairs);
            match session.solve(&[-x], &phases, Steering::All, None) {
                Answer::Refuted(core) => assert_eq!(core, vec![-x]),
                other => panic!("x{x} is entailed: {other:?}"),
            }
            let chain = literal(z as usize + rng.gen_range(0..20), rng.gen());
            match session.solve(&[chain], &phases, Steering::All, None) {
                Answer::Model(m) => {
                    assert!(checker.satisfies(&m), "query {query}");
                    assert!(m.satisfies(chain));
                    assert!((pairs as usize..2 * pairs as usize).all(|v| m.get(v)));
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(
            session.open.len() <= cnf.num_vars() - pairs as usize,
            "reloaded without the fixed x: {} held",
            session.open.len()
        );
    }

    /// With an independent support the reloaded CaDiCaL is simplified with the support
    /// frozen: queries assuming support literals still get models that satisfy every clause
    /// and the assumptions, or are refuted exactly when they contradict the formula.
    #[test]
    fn a_reloaded_session_with_a_support_stays_correct() {
        // Support a1..a8 with ¬a1 ∨ ¬a2; gates g_i = a_i ∧ a_(i+1) (variables 9..15); then
        // 100 pairs y, x (16..115, 116..215) with x ∨ y and x ∨ ¬y, for CaDiCaL to fix.
        let mut clauses: Vec<Vec<Lit>> = vec![vec![-1, -2]];
        for i in 1..8 {
            let g = 8 + i;
            clauses.extend([vec![-g, i], vec![-g, i + 1], vec![g, -i, -(i + 1)]]);
        }
        for y in 16..116 {
            clauses.extend([vec![y + 100, y], vec![y + 100, -y]]);
        }
        let mut cnf = Cnf::from_clauses(215, &clauses);
        cnf.set_independent_support((1..=8).collect());
        let checker = Checker::new(&cnf);
        let mut session = CadicalSolver::open(&cnf, Budget::unlimited()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for query in 0..60 {
            let mut phases = Assignment::zeros(cnf.num_vars());
            for v in 0..cnf.num_vars() {
                phases.set(v, query > 0 && rng.gen());
            }
            let mut assumptions: Vec<Lit> = (0..rng.gen_range(0..4))
                .map(|_| literal(rng.gen_range(0..8), rng.gen()))
                .collect();
            assumptions.dedup();
            let contradicting = assumptions.contains(&1) && assumptions.contains(&2);
            let opposite = assumptions.iter().any(|l| assumptions.contains(&-l));
            match session.solve(&assumptions, &phases, Steering::All, None) {
                Answer::Model(m) => {
                    assert!(!contradicting && !opposite, "{assumptions:?}");
                    assert!(checker.satisfies(&m), "query {query}");
                    assert!(assumptions.iter().all(|&l| m.satisfies(l)));
                }
                Answer::Refuted(core) => {
                    assert!(contradicting || opposite, "{assumptions:?}: {core:?}");
                    assert!(!core.is_empty() && core.iter().all(|l| assumptions.contains(l)));
                }
                Answer::Unknown(why) => panic!("{why}"),
            }
        }
        assert!(
            session.open.len() <= cnf.num_vars() - 100,
            "reloaded without the fixed x: {} held",
            session.open.len()
        );
    }

    /// A session whose queries never meet a conflict fixes nothing at CaDiCaL's root, so it
    /// would never reload: here every `x` of `x ∨ y`, `x ∨ ¬y` is phased true. After
    /// `PROBE_AFTER_QUERIES` it probes once, which fixes the `x`, and it reloads without
    /// them; models satisfy every clause throughout.
    #[test]
    fn a_session_that_fixes_nothing_probes_once_and_then_reloads() {
        // Support a1..a8 (free); pairs y (9..108), x (109..208).
        let clauses: Vec<Vec<Lit>> = (9..109)
            .flat_map(|y| [vec![y + 100, y], vec![y + 100, -y]])
            .collect();
        let mut cnf = Cnf::from_clauses(208, &clauses);
        cnf.set_independent_support((1..=8).collect());
        let checker = Checker::new(&cnf);
        let mut session = CadicalSolver::open(&cnf, Budget::unlimited()).unwrap();
        let phases = Assignment::from_literals(208, &(1..=208).collect::<Vec<Lit>>());
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let queries = PROBE_AFTER_QUERIES + 2 * RELOAD_AFTER_QUIET_QUERIES;
        for query in 0..queries {
            let support = literal(rng.gen_range(0..8), rng.gen());
            match session.solve(&[support], &phases, Steering::All, None) {
                Answer::Model(m) => assert!(checker.satisfies(&m) && m.satisfies(support)),
                other => panic!("query {query}: {other:?}"),
            }
            if query + 1 < PROBE_AFTER_QUERIES {
                assert_eq!(session.open.len(), 208, "nothing fixed before the probe");
            }
        }
        assert!(session.simplified);
        assert!(
            session.open.len() <= 108,
            "reloaded without the fixed x: {} held",
            session.open.len()
        );
    }

    /// Every model of one long-lived session, over many queries with random phases and
    /// assumptions taken from a planted solution, satisfies every clause.
    #[test]
    fn a_session_stays_correct_over_many_queries() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for formula in 0..40 {
            let (cnf, plant) = planted(30 + formula, 4 * (30 + formula), formula as u64);
            // Every other formula gets units from the plant, so some variables are forced
            // and CaDiCaL sees the rest renumbered.
            let cnf = if formula % 2 == 1 {
                let units = (0..formula % 7).map(|v| vec![literal(v * 3, plant.get(v * 3))]);
                let clauses: Vec<Vec<Lit>> =
                    cnf.clauses().map(<[Lit]>::to_vec).chain(units).collect();
                Cnf::from_clauses(cnf.num_vars(), &clauses)
            } else {
                cnf
            };
            let checker = Checker::new(&cnf);
            let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
            for _ in 0..50 {
                let mut phases = Assignment::zeros(cnf.num_vars());
                for v in 0..cnf.num_vars() {
                    phases.set(v, rng.gen());
                }
                let assumptions: Vec<Lit> = (0..rng.gen_range(0..6))
                    .map(|_| {
                        let v = rng.gen_range(0..cnf.num_vars());
                        crate::formula::literal(v, plant.get(v))
                    })
                    .collect();
                match session.solve(&assumptions, &phases, Steering::All, None) {
                    Answer::Model(m) => {
                        assert!(checker.satisfies(&m));
                        assert!(assumptions.iter().all(|&l| m.satisfies(l)));
                    }
                    other => panic!("planted formula, planted assumptions: {other:?}"),
                }
            }
        }
    }
}
