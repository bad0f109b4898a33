//! Completing partial tests: fresh solutions (step 1a) and repair of invalid candidates (§III-A).
//!
//! Both fix some variables, let unit propagation settle what it can, try a greedy completion
//! that follows preferred values, and only then ask a solver: a session that stays loaded
//! (kept bits as assumptions, preferred values as phases; a refutation names the kept bits
//! to free; `lane`), or else the oracle on the residual problem, rebuilt for the call. That
//! residual is taken from the formula with the variables outside the independent support
//! eliminated once ([`crate::solver::eliminate`]), which spares the oracle most of its own
//! simplification; before the oracle is asked, a search that stays loaded tries to refute the
//! kept bits, which the oracle would otherwise be rebuilt to refute (`refuting`). A session
//! repair that gives up, on a formula of parts that share no variable, takes the parts it
//! breaks from the lane's recent models (`parts`).

mod lane;
mod parts;
mod refuting;

pub use lane::Lane;

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{literal, var_index, Cnf, Lit};
use crate::propagate::{Propagator, Watches};
use crate::solver::eliminate::{eliminate, Elimination};
use crate::solver::native::search::Refuter;
use crate::solver::{Oracle, Outcome, Query};
use crate::verify::Checker;
use parts::Parts;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use refuting::RefutingRecord;
use serde::{Deserialize, Serialize};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How many literals of the independent support a fresh solution fixes at random.
const RANDOM_CUBE: usize = 8;
/// Conflicts greedy completion may meet before the solver takes over.
pub(super) const GREEDY_CONFLICTS: usize = 8;
/// Solver seconds a fresh solution gets in its first tries, before it gets all time left.
const FRESH_BUDGETS: [u64; 3] = [1, 2, 4];
/// Solver time one repair attempt may take before its kept bits are halved.
const REPAIR_SOLVER_TIME: Duration = Duration::from_secs(5);
/// How often repair halves the kept bits before it falls back to a fresh solution.
const MAX_HALVINGS: usize = 3;

/// How a test was completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Route {
    /// Propagation and greedy decisions alone.
    Propagation,
    /// The solver decided the residual problem.
    Solver,
    /// A failed repair's broken parts taken from known tests (`parts`).
    Parts,
}

/// A completed test; checked against every clause where it joins a suite.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Completed {
    /// The completed test.
    pub test: Assignment,
    /// How it was completed.
    pub route: Route,
    /// Solver calls it took.
    pub solver_calls: u32,
    /// Conflicts its session's searches took (0 without a session).
    pub conflicts: u64,
    /// Repair only: the delta's bits the repair was asked to keep (those on the independent
    /// support, where the formula names one).
    pub asked: usize,
    /// Repair only: how many of them the test has, kept as asked or taken again as the
    /// candidate's values once freed.
    pub kept: usize,
    /// Repair only: the kept bits were all dropped and a fresh solution taken instead.
    pub fresh: bool,
}

impl Completed {
    /// A solver's model as a completed test (checked against every clause where it joins a
    /// suite).
    pub fn solved(test: Assignment, solver_calls: u32) -> Self {
        Completed {
            test,
            route: Route::Solver,
            solver_calls,
            conflicts: 0,
            asked: 0,
            kept: 0,
            fresh: false,
        }
    }

    /// A test combined from known tests' parts ([`Route::Parts`]).
    fn from_parts(test: Assignment) -> Self {
        Completed {
            route: Route::Parts,
            ..Completed::solved(test, 0)
        }
    }
}

/// Why no test came out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Failure {
    /// No test exists with what was fixed (for a fresh solution: the formula is unsatisfiable).
    Unsat,
    /// The solver gave up (time-out), with its reason.
    Unknown(String),
}

/// Shared, read-only context for completing tests on any thread.
pub struct Completer<'a> {
    cnf: &'a Cnf,
    pub(super) checker: &'a Checker<'a>,
    watches: Watches,
    oracle: &'a dyn Oracle,
    pub(super) projection: Vec<usize>,
    /// Per variable: named by `c ind` (all false when the formula names none).
    pub(super) in_support: Vec<bool>,
    /// The formula's parts, where it has several to combine.
    parts: Option<Parts>,
    /// The order greedy completion decides variables in: the independent support first, then
    /// the rest by index. The support determines the rest, which propagation then sets; a
    /// dependent variable decided first by its preferred value could overrule the support's
    /// (a gate output deciding its inputs). On blasted_case110, where the support is not the
    /// first variables, repairs by propagation gave 99-114 duplicates in 1000 tests against
    /// 211-221, and needed 1-4 solver calls against 27-40.
    pub(super) decision_order: Vec<usize>,
    /// Work after it runs out is wasted: repairs stop, calls are capped to what is left.
    budget: Budget<'a>,
    /// Whether refuting kept bits before the oracle pays, on this formula.
    refuting: RefutingRecord,
    /// Refuters loaded with the formula the oracle sees, for the threads to take and return:
    /// each keeps what it learned.
    refuters: Mutex<Vec<Refuter>>,
    /// The formula without the variables outside the support that elimination removes,
    /// made on the first query the oracle answers (sessions never need it).
    elimination: OnceLock<Option<Elimination>>,
}

impl<'a> Completer<'a> {
    /// A completer for the formula behind `checker`, asking `oracle`, within `budget`.
    pub fn new(checker: &'a Checker<'a>, oracle: &'a dyn Oracle, budget: Budget<'a>) -> Self {
        let cnf = checker.cnf();
        let projection = cnf.projection();
        let in_support = cnf.support_mask();
        let mut decision_order = projection.clone();
        if !cnf.independent_support().is_empty() {
            decision_order.extend((0..cnf.num_vars()).filter(|&v| !in_support[v]));
        }
        Completer {
            cnf,
            checker,
            watches: Watches::new(cnf),
            oracle,
            parts: Parts::of(cnf, &projection),
            projection,
            in_support,
            decision_order,
            budget,
            elimination: OnceLock::new(),
            refuting: RefutingRecord::default(),
            refuters: Mutex::new(Vec::new()),
        }
    }

    /// The formula with the variables outside its independent support eliminated, where it
    /// names one and elimination removes any; made once, on the first query to the oracle.
    fn elimination(&self) -> Option<&Elimination> {
        self.elimination
            .get_or_init(|| {
                if self.cnf.independent_support().is_empty() {
                    return None;
                }
                let elimination = eliminate(self.cnf, &self.in_support, &|| self.expired());
                (elimination.eliminated() > 0).then_some(elimination)
            })
            .as_ref()
    }

    /// A propagator for one thread's use.
    pub fn propagator(&self) -> Propagator<'a> {
        Propagator::new(self.cnf, self.watches.clone())
    }

    /// A fresh solution under `seed`: random preferred values everywhere, completed greedily
    /// (after a random cube over the independent support when there is no solver lane), and
    /// the solver (the lane's session when there is one) where greedy completion fails.
    /// `prop` is the thread's propagator, made here on first use: with a session none may be
    /// needed, and making one copies the formula's watch lists.
    pub fn fresh(
        &self,
        prop: &mut Option<Propagator<'a>>,
        lane: Option<&mut Lane>,
        seed: u64,
    ) -> Result<Completed, Failure> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let preferred = random_assignment(self.cnf.num_vars(), &mut rng);
        // Where the support decides the rest (a circuit's inputs), greedy completion along
        // random values is a uniform draw over the support, in a third of a query's time;
        // where the session has settled much of the formula, or propagation mostly fails,
        // the session gets the random phases directly.
        if let Some(lane) = lane {
            let result = self.fresh_in_lane(prop, lane, &preferred, rng.gen());
            return self.known_to(lane, result);
        }
        let prop = prop.get_or_insert_with(|| self.propagator());
        let cube: Vec<Lit> = self
            .projection
            .choose_multiple(&mut rng, RANDOM_CUBE.min(self.projection.len()))
            .map(|&v| literal(v, rng.gen()))
            .collect();
        // The cube is tried by propagation alone: a solver proving a bad cube unsatisfiable
        // can take a minute on XOR-heavy formulas (parity.sk_11_11).
        if let Ok(done) = self.complete(prop, &cube, &preferred, false, rng.gen(), None) {
            return Ok(done);
        }
        // splr's solve times under random perturbations are heavy-tailed (karatsuba.sk_7_41:
        // 0.9 s to 8 s by seed), so short budgets are tried first, each with a new seed.
        let mut solver_calls = 0;
        for budget in FRESH_BUDGETS
            .iter()
            .map(|&s| Duration::from_secs(s))
            .chain([Duration::MAX])
        {
            let budget = budget.min(self.remaining());
            match self.complete(prop, &[], &preferred, false, rng.gen(), Some(budget)) {
                Err(Failure::Unknown(_)) if !self.expired() => solver_calls += 1,
                result => {
                    return result.map(|mut done| {
                        done.solver_calls += solver_calls;
                        done
                    })
                }
            }
        }
        Err(Failure::Unknown("time limit reached".into()))
    }

    /// Whether the budget ran out (deadline or interrupt): work started after it is wasted.
    pub fn expired(&self) -> bool {
        self.budget.exhausted()
    }

    /// Time left until the deadline (a day when there is none).
    pub(super) fn remaining(&self) -> Duration {
        self.budget
            .remaining()
            .unwrap_or(Duration::from_secs(86_400))
    }

    /// Repairs `candidate = c ⊕ delta`: keeps its values where `delta` is set, frees the rest
    /// (preferring the candidate's values), frees the kept bits that contradict the formula
    /// (those a session names, or else half of them at a time), and falls back to a fresh
    /// solution when none can stay. With a solver lane, propagation along the candidate is
    /// tried first where the lane's record of it (`PropagationFirst`) says it pays.
    pub fn repair(
        &self,
        prop: &mut Option<Propagator<'a>>,
        lane: Option<&mut Lane>,
        candidate: &Assignment,
        delta: &Assignment,
        seed: u64,
    ) -> Result<Completed, Failure> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // With an independent support only its bits are kept: the dependent ones follow from
        // it by propagation, and keeping them too mostly adds contradictions.
        let (mut kept, dependent): (Vec<Lit>, Vec<Lit>) = delta
            .ones()
            .map(|v| literal(v, candidate.get(v)))
            .partition(|&l| self.in_support[var_index(l)]);
        if self.projection.len() == self.cnf.num_vars() {
            kept = dependent;
        }
        kept.shuffle(&mut rng);
        let mut done = match lane {
            Some(lane) => {
                let result = self.repair_in_lane(prop, lane, &kept, candidate, rng.gen());
                let result = match (result, &self.parts) {
                    (Err(Failure::Unknown(why)), Some(parts)) => parts
                        .combine(self.checker, candidate, &lane.known)
                        .map(Completed::from_parts)
                        .ok_or(Failure::Unknown(why)),
                    (result, _) => result,
                };
                self.known_to(lane, result)
            }
            None => self.repair_by_halving(prop, &kept, candidate, &mut rng),
        }?;
        done.asked = kept.len();
        done.kept = surviving(&kept, &done.test);
        Ok(done)
    }

    /// `result`, its test kept among the lane's known tests where the formula has parts to
    /// combine.
    fn known_to(
        &self,
        lane: &mut Lane,
        result: Result<Completed, Failure>,
    ) -> Result<Completed, Failure> {
        if let (Some(_), Ok(done)) = (&self.parts, &result) {
            lane.known.remember(&done.test);
        }
        result
    }

    /// [`Completer::repair`] without a solver lane: the kept bits that the refuter or the
    /// solver refutes, or that the solver cannot settle quickly, are freed by half.
    fn repair_by_halving(
        &self,
        prop: &mut Option<Propagator<'a>>,
        kept: &[Lit],
        candidate: &Assignment,
        rng: &mut ChaCha8Rng,
    ) -> Result<Completed, Failure> {
        let mut kept = kept.to_vec();
        let (mut solver_calls, mut halvings) = (0, 0);
        // The last attempt keeps no bit but still prefers the candidate's values.
        for _ in 0..=MAX_HALVINGS + 1 {
            let budget = self.remaining().min(REPAIR_SOLVER_TIME);
            let thread_prop = prop.get_or_insert_with(|| self.propagator());
            match self.repair_attempt(thread_prop, &kept, candidate, rng.gen(), budget) {
                Ok(mut done) => {
                    done.solver_calls += solver_calls;
                    return Ok(done);
                }
                Err((_, calls)) if !kept.is_empty() && !self.remaining().is_zero() => {
                    solver_calls += calls;
                    halvings += 1;
                    let halved = kept.len() / 2;
                    kept.truncate(if halved == 0 || halvings > MAX_HALVINGS {
                        0
                    } else {
                        halved
                    });
                }
                Err((failure, _)) => return Err(failure),
            }
        }
        let mut done = self.fresh(prop, None, rng.gen())?;
        done.solver_calls += solver_calls;
        done.fresh = true;
        Ok(done)
    }

    /// Fixes `fixed` (dropping literals that propagation refutes), then completes greedily
    /// along `preferred`, then by the solver within `solver_time` (`None`: no solver). The
    /// result is checked against every clause where it joins a suite.
    pub(super) fn complete(
        &self,
        prop: &mut Propagator,
        fixed: &[Lit],
        preferred: &Assignment,
        keep_preferences: bool,
        seed: u64,
        solver_time: Option<Duration>,
    ) -> Result<Completed, Failure> {
        Self::fix(prop, fixed)?;
        if let Some(done) = self.greedily(prop, preferred) {
            return Ok(done);
        }
        let Some(time) = solver_time else {
            return Err(Failure::Unknown("greedy completion failed".into()));
        };
        let test = self.solve_residual(prop, preferred, keep_preferences, seed, time)?;
        Ok(Completed::solved(test, 1))
    }

    /// One repair attempt without a session: `complete` with the kept bits fixed, where the
    /// refuter may prove them contradictory before the oracle is asked (`RefutingRecord`; a
    /// refutation costs no solver call: `(Failure::Unsat, 0)`). On doublyLinkedList.sk_8_37,
    /// 98% of the repairs' first oracle calls (every kept bit) and 920 of their 1,420 calls
    /// were refutations, at 19 ms each.
    fn repair_attempt(
        &self,
        prop: &mut Propagator,
        kept: &[Lit],
        candidate: &Assignment,
        seed: u64,
        solver_time: Duration,
    ) -> Result<Completed, (Failure, u32)> {
        Self::fix(prop, kept).map_err(|failure| (failure, 0))?;
        if let Some(done) = self.greedily(prop, candidate) {
            return Ok(done);
        }
        if self.refutes_first(prop, kept) {
            return Err((Failure::Unsat, 0));
        }
        let started = Instant::now();
        let test = self
            .solve_residual(prop, candidate, true, seed, solver_time)
            .map_err(|failure| {
                if !kept.is_empty() && failure == Failure::Unsat {
                    self.refuting.record_oracle_refusal(started.elapsed());
                }
                (failure, 1)
            })?;
        Ok(Completed::solved(test, 1))
    }

    /// Unassigns all but what the unit clauses force, then fixes `fixed`; a literal that
    /// propagation refutes is freed, its opposite being implied.
    fn fix(prop: &mut Propagator, fixed: &[Lit]) -> Result<(), Failure> {
        prop.reset_to_units().map_err(|_| Failure::Unsat)?;
        for &lit in fixed {
            let _ = prop.assign(lit);
        }
        Ok(())
    }

    /// A greedy completion along `preferred` of what `prop` holds, which it leaves as it was
    /// where none is found.
    fn greedily(&self, prop: &mut Propagator, preferred: &Assignment) -> Option<Completed> {
        prop.complete_greedily(
            preferred,
            self.decision_order.iter().copied(),
            GREEDY_CONFLICTS,
        )
        .ok()?;
        Some(Completed {
            test: prop.to_assignment(preferred),
            route: Route::Propagation,
            solver_calls: 0,
            conflicts: 0,
            asked: 0,
            kept: 0,
            fresh: false,
        })
    }

    fn solve_residual(
        &self,
        prop: &Propagator,
        preferred: &Assignment,
        keep_preferences: bool,
        seed: u64,
        timeout: Duration,
    ) -> Result<Assignment, Failure> {
        let elimination = self.elimination();
        let residual = match elimination {
            Some(elimination) => prop.residual_of(elimination.reduced()),
            None => prop.residual(),
        };
        let mut compact = vec![u32::MAX; self.cnf.num_vars()];
        let mut original = Vec::new();
        let clauses: Vec<Vec<Lit>> = residual
            .iter()
            .map(|clause| {
                clause
                    .iter()
                    .map(|&lit| {
                        let v = var_index(lit);
                        if compact[v] == u32::MAX {
                            compact[v] = original.len() as u32;
                            original.push(v);
                        }
                        literal(compact[v] as usize, lit > 0)
                    })
                    .collect()
            })
            .collect();
        let phases: Vec<bool> = original.iter().map(|&v| preferred.get(v)).collect();
        if timeout.is_zero() {
            return Err(Failure::Unknown("time limit reached".into()));
        }
        let query = Query {
            num_vars: original.len(),
            clauses: &clauses,
            preferred: keep_preferences.then_some(&phases[..]),
            seed,
            timeout: Some(timeout),
            interrupt: self.budget.interrupt(),
        };
        match self.oracle.solve(&query) {
            Outcome::Sat(model) => {
                let mut test = prop.to_assignment(preferred);
                for (i, &v) in original.iter().enumerate() {
                    test.set(v, model[i]);
                }
                if let Some(elimination) = elimination {
                    elimination.extend(&mut test);
                }
                Ok(test)
            }
            Outcome::Unsat => Err(Failure::Unsat),
            Outcome::Unknown(why) => Err(Failure::Unknown(why)),
        }
    }
}

/// How many of the `kept` literals `test` has: a repair's kept bits that survived it.
fn surviving(kept: &[Lit], test: &Assignment) -> usize {
    kept.iter().filter(|&&l| test.satisfies(l)).count()
}

/// Fair coin flips for `len` variables, a draw each. Drawn 64 variables to a draw (the bits
/// of one `u64`), the phases cost 4% less of a 70.sk_3_40 run, but xpose.sk_6_134's fresh
/// solutions came out alike: 1 distinct test of 100 on seeds 1 and 2, where a draw a
/// variable gives 87 and 44 (and the first solution was not found in 12 s on two more
/// seeds). Why the solver meets them so differently is not understood; a test holds it.
fn random_assignment(len: usize, rng: &mut impl Rng) -> Assignment {
    let mut a = Assignment::zeros(len);
    for v in 0..len {
        a.set(v, rng.gen());
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Splr;

    /// x1 → x2 → x3, and ¬x3 ∨ ¬x4.
    pub(super) fn chain() -> Cnf {
        Cnf::from_clauses(5, &[vec![-1, 2], vec![-2, 3], vec![-3, -4]])
    }

    /// Candidate 1 0 0 1 1 of `chain` is invalid; its delta keeps x1 = 1, so x2 = x3 = 1 and
    /// x4 = 0 follow.
    pub(super) fn invalid_candidate_keeping_x1() -> (Assignment, Assignment) {
        let candidate = Assignment::from_bit_string("10011").unwrap();
        let delta = Assignment::from_bit_string("10000").unwrap();
        (candidate, delta)
    }

    #[test]
    fn greedy_completion_decides_the_independent_support_first() {
        // x1 is a gate output, x1 = x2 ∧ x3, over the support x2, x3.
        let mut cnf = Cnf::from_clauses(3, &[vec![-1, 2], vec![-1, 3], vec![1, -2, -3]]);
        cnf.set_independent_support(vec![2, 3]);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        // The candidate's output contradicts its inputs; its delta keeps x2. Deciding x1 by
        // index first would set x3 = 1 against the candidate; the support decides x1 = 0.
        let candidate = Assignment::from_bit_string("110").unwrap();
        let delta = Assignment::from_bit_string("010").unwrap();
        let done = completer
            .repair(&mut None, None, &candidate, &delta, 7)
            .unwrap();
        assert_eq!(done.test.to_bit_string(), "010");
        assert_eq!(done.route, Route::Propagation);
    }

    #[test]
    fn the_oracle_answers_without_dependent_variables_and_its_models_are_extended() {
        // x4 = x1 ⊕ x2 ⊕ x3 over the support x1, x2, x3, with x1 ∨ x2: eliminating x4 leaves
        // x1 ∨ x2 for the oracle, and x4 must then follow from the oracle's model.
        let mut clauses: Vec<Vec<Lit>> = (0..8u32)
            .filter(|signs| signs.count_ones() % 2 == 0)
            .map(|signs| {
                (0..4)
                    .map(|i| if signs >> i & 1 == 1 { -(i + 1) } else { i + 1 })
                    .collect()
            })
            .collect();
        clauses.push(vec![1, 2]);
        let mut cnf = Cnf::from_clauses(4, &clauses);
        cnf.set_independent_support(vec![1, 2, 3]);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut prop = completer.propagator();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut outputs = std::collections::HashSet::new();
        for seed in 0..32 {
            prop.reset_to_units().unwrap();
            prop.assign(literal(2, seed % 2 == 0)).unwrap();
            let preferred = random_assignment(4, &mut rng);
            let test = completer
                .solve_residual(&prop, &preferred, true, seed, Duration::from_secs(5))
                .unwrap();
            assert!(checker.satisfies(&test), "{test:?} from seed {seed}");
            assert_eq!(test.get(2), seed % 2 == 0);
            outputs.insert(test.get(3));
        }
        let elimination = completer.elimination().expect("x4 is eliminated");
        assert_eq!(elimination.reduced().num_clauses(), 1);
        assert_eq!(outputs.len(), 2);
    }

    #[test]
    fn repair_keeps_delta_bits_and_follows_the_candidate_elsewhere() {
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut prop = None;
        let (candidate, delta) = invalid_candidate_keeping_x1();
        let done = completer
            .repair(&mut prop, None, &candidate, &delta, 7)
            .unwrap();
        assert_eq!(done.test.to_bit_string(), "11101");
        assert_eq!((done.asked, done.kept), (1, 1));
        assert!(!done.fresh);
    }

    #[test]
    fn contradictory_kept_bits_are_freed() {
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut prop = None;
        // Keeping both x1 = 1 and x4 = 1 is impossible; one of them must go.
        let candidate = Assignment::from_bit_string("10010").unwrap();
        let delta = Assignment::from_bit_string("10010").unwrap();
        let done = completer
            .repair(&mut prop, None, &candidate, &delta, 1)
            .unwrap();
        assert!(checker.satisfies(&done.test));
        assert_eq!(
            (done.asked, done.kept),
            (2, 1),
            "one of the two delta bits survives"
        );
    }

    #[test]
    fn fresh_solutions_are_valid_and_vary_with_the_seed() {
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut prop = None;
        let tests: std::collections::HashSet<_> = (0..30)
            .map(|seed| completer.fresh(&mut prop, None, seed).unwrap().test)
            .inspect(|t| assert!(checker.satisfies(t)))
            .collect();
        assert!(tests.len() > 5);
    }

    #[test]
    fn an_unsatisfiable_formula_gives_no_test() {
        let cnf = crate::testing::unsatisfiable();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut prop = None;
        assert_eq!(
            completer.fresh(&mut prop, None, 0).unwrap_err(),
            Failure::Unsat
        );
    }
}
