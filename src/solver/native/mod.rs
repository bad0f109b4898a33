//! snapsat's own search as a session backend (`--solver native`): the refuter
//! ([`crate::solver::native::search`]) loaded once per lane, answering with models near the phases it is given
//! and naming the assumptions that fail, and splr behind it for the long searches.
//!
//! A pure-Rust build's answer to CaDiCaL's sessions: splr 0.17 has no assumptions and no
//! phases, so it is rebuilt for every query, and on the slow case studies the rebuilding, not
//! the search, is the time (`crate::solver::native::search`). Of preprocessing the refuter has
//! failed-literal probing when a lane opens and, once a session's searches prove hard,
//! bounded variable elimination outside the independent support
//! ([`crate::solver::eliminate`]): on a sketch the support is the holes and the rest are
//! gates, and a search over the holes alone finds models near given values in far fewer
//! conflicts. Some formulas it does not solve where splr does: a query allowed more than
//! `FIRST_TURN` conflicts goes to splr after the refuter's part.

use super::{
    drop_refuted, Answer, IncrementalBackend, IncrementalSolver, Oracle, Outcome, Query, Splr,
    Steering,
};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{var_index, Cnf, Lit};
pub mod search;

use super::eliminate::{eliminate, Elimination};
use search::{Found, Refuter};
use std::time::Duration;

/// Conflicts past which a query is a long one (`NativeSolver::long_query`), and the
/// refuter's part of one where splr is favoured. Every repair query (at most 250 conflicts)
/// and a fresh solution's first two searches (200 and 20,000: `sampler::repair::lane`) are
/// the refuter's alone. Which engine answers a long search depends on the formula: with the
/// refuter alone to 200,000 conflicts before splr, karatsuba.sk_7_41 gave 319/562/297/322/457
/// tests in 120 s against 506/16/82/17/91 with splr after 20,000 (seeds 1–5), but
/// xpose.sk_6_134 one test in 60 s against 9 and 10 (seeds 1, 2).
const FIRST_TURN: u32 = 20_000;
/// Conflicts the refuter takes in a long query before splr, where it is favoured.
const REFUTER_LONG_TURN: u32 = 200_000;

/// Conflicts a session's searches take on the whole formula before it searches the formula
/// with the gates outside the independent support eliminated
/// ([`NativeSolver::eliminate_when_hard`]). Each model of the reduced formula is extended
/// back, a walk over every removed clause: on a formula whose queries take a conflict or
/// two, that walk would be most of a query's time. And the reduced formula's refuter starts
/// without what the whole one learned: switched early, within a formula's first fresh
/// solutions, the next ones came out less diverse.
const ELIMINATE_AFTER: u64 = 20_000;

/// The refuter per lane, splr behind it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Native;

impl IncrementalBackend for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    fn open<'a>(
        &self,
        cnf: &'a Cnf,
        budget: Budget<'a>,
    ) -> Result<Box<dyn IncrementalSolver + 'a>, String> {
        Ok(Box::new(NativeSolver::open(cnf, budget, FIRST_TURN)))
    }
}

struct NativeSolver<'a> {
    /// The refuter: over the whole formula, or, once its searches are hard
    /// ([`NativeSolver::eliminate_when_hard`]), over the formula with the gates outside the
    /// independent support eliminated.
    search: Refuter,
    /// What elimination left out of the refuter's formula, to extend its models to the
    /// whole formula; once tried.
    elimination: Option<Elimination>,
    /// `ELIMINATE_AFTER`, but for tests.
    eliminate_after: u64,
    /// Conflicts of the refuter the reduced formula's replaced.
    replaced_conflicts: u64,
    /// Per variable: in the independent support. A query may assume only these in the
    /// reduced formula (which only a formula naming a support has).
    kept: Vec<bool>,
    /// Once `search` is over the reduced formula: a refuter over the whole one, for a query
    /// that assumes a variable outside the support (made when one first does).
    whole: Option<Refuter>,
    /// The current query asks `whole`.
    on_whole: bool,
    cnf: &'a Cnf,
    budget: Budget<'a>,
    /// What variables a query does not steer are phased to, as with CaDiCaL's sessions: the
    /// refuter's own saved phases would be those of the query before, which may have given up.
    last_model: Option<Assignment>,
    calls: u64,
    /// `FIRST_TURN`, but for tests of splr's part (0: splr answers every query allowed any
    /// conflict).
    first_turn: u32,
    /// `REFUTER_LONG_TURN`, but for tests.
    refuter_long_turn: u32,
    /// Which engine a long query starts with.
    favour: Favour,
}

impl<'a> NativeSolver<'a> {
    fn open(cnf: &'a Cnf, budget: Budget<'a>, first_turn: u32) -> Self {
        let mut search = Refuter::new(cnf);
        search.probe(&|| budget.exhausted());
        NativeSolver {
            search,
            elimination: None,
            eliminate_after: ELIMINATE_AFTER,
            replaced_conflicts: 0,
            kept: cnf.support_mask(),
            whole: None,
            on_whole: false,
            cnf,
            budget,
            last_model: None,
            calls: 0,
            first_turn,
            refuter_long_turn: REFUTER_LONG_TURN,
            favour: Favour::default(),
        }
    }

    /// Once the session's searches have taken `eliminate_after` conflicts, where the formula
    /// names an independent support: the refuter is replaced by one over the formula with
    /// the gates outside the support eliminated.
    fn eliminate_when_hard(&mut self) {
        if self.elimination.is_some()
            || self.cnf.independent_support().is_empty()
            || self.search.conflicts() < self.eliminate_after
        {
            return;
        }
        let budget = self.budget;
        let elimination = eliminate(self.cnf, &self.kept, &|| budget.exhausted());
        if elimination.eliminated() > 0 {
            self.replaced_conflicts = self.search.conflicts();
            self.search = Refuter::new(elimination.reduced());
            self.search.probe(&|| budget.exhausted());
        }
        self.elimination = Some(elimination);
    }

    /// Chooses the refuter for a query assuming `assumptions`: the whole formula's where the
    /// refuter searches the reduced one and one of them is outside what it keeps (made then).
    fn choose_refuter(&mut self, assumptions: &[Lit]) {
        let reduced = self
            .elimination
            .as_ref()
            .is_some_and(|elimination| elimination.eliminated() > 0);
        self.on_whole = reduced && assumptions.iter().any(|&lit| !self.kept[var_index(lit)]);
        if self.on_whole && self.whole.is_none() {
            let mut whole = Refuter::new(self.cnf);
            whole.probe(&|| self.budget.exhausted());
            self.whole = Some(whole);
        }
    }

    /// The refuter the current query asks ([`NativeSolver::choose_refuter`]).
    fn refuter(&mut self) -> &mut Refuter {
        match &mut self.whole {
            Some(whole) if self.on_whole => whole,
            _ => &mut self.search,
        }
    }

    fn steer(&mut self, phases: &Assignment, steering: Steering) {
        let last_model = self.last_model.take();
        let refuter = self.refuter();
        refuter.decide_first(match steering {
            Steering::DecideFirst(first) => first,
            Steering::All | Steering::Only(_) => &[],
        });
        match steering {
            Steering::All | Steering::DecideFirst(_) => {
                for v in 0..phases.len() {
                    refuter.set_phase(v, phases.get(v));
                }
            }
            Steering::Only(steered) => {
                if let Some(model) = &last_model {
                    for v in 0..model.len() {
                        refuter.set_phase(v, model.get(v));
                    }
                }
                for &v in steered {
                    refuter.set_phase(v, phases.get(v));
                }
            }
        }
        self.last_model = last_model;
    }

    /// splr on the formula with `assumptions` as units, preferring `phases`, for the whole
    /// seconds of `time_left` (none: no deadline).
    fn splr(
        &self,
        assumptions: &[Lit],
        phases: &Assignment,
        time_left: Option<Duration>,
    ) -> Answer {
        let clauses: Vec<Vec<Lit>> = self
            .cnf
            .clauses()
            .map(<[Lit]>::to_vec)
            .chain(assumptions.iter().map(|&lit| vec![lit]))
            .collect();
        let preferred: Vec<bool> = (0..phases.len()).map(|v| phases.get(v)).collect();
        let query = Query {
            num_vars: self.cnf.num_vars(),
            clauses: &clauses,
            preferred: Some(&preferred),
            seed: self.calls,
            // splr counts whole seconds, rounding up.
            timeout: time_left.map(|left| Duration::from_secs(left.as_secs())),
            interrupt: self.budget.interrupt(),
        };
        match Splr.solve(&query) {
            Outcome::Sat(values) => Answer::Model(Assignment::from_values(&values)),
            // splr names no core: every assumption is one that failed, with the others.
            Outcome::Unsat => Answer::Refuted(assumptions.to_vec()),
            Outcome::Unknown(why) => Answer::Unknown(why),
        }
    }

    /// A query; with `drop_failed`, failed assumptions are dropped from `assumptions`
    /// ([`IncrementalSolver::solve_relaxing`]).
    fn query(
        &mut self,
        assumptions: &mut Vec<Lit>,
        drop_failed: bool,
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Answer {
        if self.budget.exhausted() {
            return Answer::Unknown("time limit".into());
        }
        self.calls += 1;
        self.eliminate_when_hard();
        self.choose_refuter(assumptions);
        self.steer(phases, steering);
        let limit = conflicts.unwrap_or(u32::MAX);
        let budget = self.budget;
        let give_up = || budget.exhausted();
        let mut answer = if limit > self.first_turn {
            let answer = self.long_query(assumptions, phases, limit);
            if drop_failed {
                drop_refuted(assumptions, &answer);
            }
            answer
        } else {
            let found = if drop_failed {
                self.refuter().search_relaxing(assumptions, limit, &give_up)
            } else {
                self.refuter().search(assumptions, limit, &give_up)
            };
            match found {
                Found::Model(model) => Answer::Model(model),
                Found::Refuted(failed) => Answer::Refuted(failed),
                Found::GaveUp => Answer::Unknown(format!("no answer in {limit} conflicts")),
            }
        };
        if let Answer::Model(model) = &mut answer {
            // A model from the whole formula's refuter needs no extension.
            if let Some(elimination) = self.elimination.as_ref().filter(|_| !self.on_whole) {
                elimination.extend(model);
            }
            self.last_model = Some(model.clone());
        }
        answer
    }

    /// Conflicts the refuter takes in a long query before splr (see `Favour`).
    fn refuter_part(&self) -> u32 {
        if self.favour.splr_first() || self.favour.refuter_gave_up {
            self.first_turn
        } else {
            self.refuter_long_turn.max(self.first_turn)
        }
    }

    /// A query allowed `limit` conflicts (more than `first_turn`): the refuter for
    /// `REFUTER_LONG_TURN` of them (`first_turn` where splr goes first, `Favour`), keeping what
    /// it learned, then, if the query allows more, splr for the time left. Nothing here
    /// depends on timing but the run's deadline, so a seed's answers are the same from run
    /// to run.
    fn long_query(&mut self, assumptions: &[Lit], phases: &Assignment, limit: u32) -> Answer {
        let budget = self.budget;
        let own = self.refuter_part().min(limit);
        if own > 0 {
            let found = self
                .refuter()
                .search(assumptions, own, &|| budget.exhausted());
            self.favour.refuter_gave_up = found == Found::GaveUp && own > self.first_turn;
            match found {
                Found::Model(model) => {
                    self.favour.refuter_answered = true;
                    return Answer::Model(model);
                }
                Found::Refuted(failed) => return Answer::Refuted(failed),
                Found::GaveUp => {}
            }
        }
        // splr counts whole seconds, rounding up: with less than one left it would overrun.
        let left = budget.remaining();
        if budget.exhausted() || left.is_some_and(|left| left < Duration::from_secs(1)) {
            return Answer::Unknown("time limit".into());
        }
        if limit <= own {
            return Answer::Unknown(format!("no answer in {own} conflicts"));
        }
        let answer = self.splr(assumptions, phases, left);
        if !matches!(answer, Answer::Unknown(_)) {
            self.favour.splr_answered = true;
        }
        answer
    }
}

/// Which engine a long query starts with. The refuter for `REFUTER_LONG_TURN` conflicts,
/// unless its last such part gave up, or splr has answered a long query and the refuter none: on xpose.sk_6_134 (large/) the refuter answers none of its fresh
/// searches in 400,000 conflicts and splr takes seconds once asked, so there every fresh
/// solution past the first goes to splr after `FIRST_TURN` conflicts; on karatsuba.sk_7_41 the
/// refuter answers most of them, and splr takes long on the others. Decided by what answered,
/// not by times, so a seed's suite stays the same from run to run.
#[derive(Debug, Default, Clone, Copy)]
struct Favour {
    refuter_answered: bool,
    splr_answered: bool,
    /// The refuter's long part of the last long query gave up: the next (a fresh solution's
    /// next try) goes to splr after `FIRST_TURN` conflicts, not after the same search again.
    refuter_gave_up: bool,
}

impl Favour {
    fn splr_first(&self) -> bool {
        self.splr_answered && !self.refuter_answered
    }
}

impl IncrementalSolver for NativeSolver<'_> {
    fn solve(
        &mut self,
        assumptions: &[Lit],
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Answer {
        self.query(
            &mut assumptions.to_vec(),
            false,
            phases,
            steering,
            conflicts,
        )
    }

    /// Short queries (every repair's) drop failed assumptions within the search
    /// ([`Refuter::search_relaxing`]); long ones as any session does.
    fn solve_relaxing(
        &mut self,
        assumptions: &mut Vec<Lit>,
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Answer {
        self.query(assumptions, true, phases, steering, conflicts)
    }

    fn conflicts(&self) -> u64 {
        self.replaced_conflicts
            + self.search.conflicts()
            + self.whole.as_ref().map_or(0, Refuter::conflicts)
    }

    fn solver_calls(&self) -> u64 {
        self.calls
    }

    /// The reduced formula's open variables: the eliminated ones follow from them.
    fn open_variables(&self) -> usize {
        let eliminated = self.elimination.as_ref().map_or(0, Elimination::eliminated);
        self.search.open_variables().saturating_sub(eliminated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::literal;
    use crate::testing::planted;
    use crate::verify::Checker;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Every model a session gives satisfies the formula and its assumptions, and the
    /// assumptions it names as failing are ones the planted model does not all satisfy:
    /// from the refuter, and (with no conflicts of its own) from splr.
    #[test]
    fn answers_hold_on_planted_formulas() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut models, mut refuted, mut unknown) = (0, 0, 0);
        for round in 0..400 {
            let (cnf, planted_model) = planted(30, 120, round);
            let checker = Checker::new(&cnf);
            let own = [FIRST_TURN, 0][round as usize % 2];
            let mut session = NativeSolver::open(&cnf, Budget::unlimited(), own);
            if own == 0 {
                session.refuter_long_turn = 0;
            }
            for query in 0..5 {
                let literals = |rng: &mut ChaCha8Rng, n| -> Vec<Lit> {
                    (0..n)
                        .map(|_| literal(rng.gen_range(0..30), rng.gen()))
                        .collect()
                };
                let n = rng.gen_range(0..8);
                let assumptions = literals(&mut rng, n);
                let phases = Assignment::from_literals(30, &literals(&mut rng, 30));
                let conflicts = [None, Some(2)][query % 2];
                match session.solve(&assumptions, &phases, Steering::All, conflicts) {
                    Answer::Model(model) => {
                        assert!(checker.satisfies(&model), "round {round}");
                        assert!(assumptions.iter().all(|&l| model.satisfies(l)));
                        models += 1;
                    }
                    Answer::Refuted(failed) => {
                        assert!(failed.iter().all(|l| assumptions.contains(l)));
                        assert!(!failed.iter().all(|&l| planted_model.satisfies(l)));
                        refuted += 1;
                    }
                    Answer::Unknown(why) => {
                        assert_eq!(conflicts, Some(2), "round {round}: {why}");
                        unknown += 1;
                    }
                }
            }
        }
        assert!(
            models > 100 && refuted > 100 && unknown > 10,
            "{models} {refuted} {unknown}"
        );
    }

    /// A query of `session` allowed `conflicts` comes back with a model of the formula.
    fn assert_model(
        session: &mut NativeSolver,
        checker: &Checker,
        phases: &Assignment,
        conflicts: u32,
    ) {
        match session.solve(&[], phases, Steering::All, Some(conflicts)) {
            Answer::Model(model) => assert!(checker.satisfies(&model)),
            other => panic!("{other:?}"),
        }
    }

    /// A long query the refuter's part cannot answer goes to splr, whose answer holds.
    #[test]
    fn splr_answers_a_long_query_the_refuter_gives_up_on() {
        let (cnf, _) = planted(120, 500, 3);
        let checker = Checker::new(&cnf);
        let phases = Assignment::zeros(120);
        let mut alone = Refuter::new(&cnf);
        assert_eq!(
            alone.search(&[], 1, &|| false),
            Found::GaveUp,
            "the refuter needs more than one conflict here"
        );
        let mut session = NativeSolver::open(&cnf, Budget::unlimited(), 1);
        session.refuter_long_turn = 1;
        assert_model(&mut session, &checker, &phases, 2);
        assert!(
            session.favour.splr_first(),
            "splr answered, the refuter did not"
        );
    }

    /// After the refuter's long part of a query gives up, the next long query gives it only
    /// `first_turn` conflicts before splr, not the same long search again; once it answers a
    /// long query, its long part is back.
    #[test]
    fn the_refuter_s_long_part_is_not_repeated_right_after_it_gave_up() {
        let (cnf, _) = planted(300, 1275, 5);
        let checker = Checker::new(&cnf);
        let phases = Assignment::zeros(300);
        let mut session = NativeSolver::open(&cnf, Budget::unlimited(), 1);
        session.refuter_long_turn = 2;
        session.favour.refuter_answered = true;
        assert_eq!(session.refuter_part(), 2);
        assert_model(&mut session, &checker, &phases, 3);
        assert!(
            session.favour.refuter_gave_up,
            "two conflicts were not enough"
        );
        assert_eq!(session.refuter_part(), 1);
        session.refuter_long_turn = 1_000_000;
        session.favour.refuter_gave_up = false;
        assert!(matches!(
            session.solve(&[], &phases, Steering::All, Some(2_000_000)),
            Answer::Model(_)
        ));
        assert_eq!(session.refuter_part(), 1_000_000);
    }

    #[test]
    fn splr_takes_no_turn_past_the_deadline() {
        let (cnf, _) = planted(120, 500, 3);
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        let budget = Budget::new(Duration::from_millis(500), &interrupt);
        let mut session = NativeSolver::open(&cnf, budget, 0);
        session.refuter_long_turn = 0;
        let phases = Assignment::zeros(120);
        assert_eq!(
            session.solve(&[], &phases, Steering::All, None),
            Answer::Unknown("time limit".into())
        );
        assert!(!session.favour.splr_answered);
    }

    /// A long query starts with splr once splr has answered one and the refuter none, and
    /// with the refuter for good once the refuter has answered one.
    #[test]
    fn splr_goes_first_only_where_the_refuter_has_answered_no_long_query() {
        let mut favour = Favour::default();
        assert!(!favour.splr_first(), "the refuter goes first to begin with");
        favour.splr_answered = true;
        assert!(favour.splr_first());
        favour.refuter_answered = true;
        assert!(!favour.splr_first());
    }

    /// Where the formula names an independent support, the session searches the formula with
    /// the gates outside it eliminated and extends each model to the whole; a query that
    /// assumes a gate is asked of the whole formula, or the gate, free in the reduced one,
    /// would be set back against the assumption.
    #[test]
    fn a_query_assuming_an_eliminated_variable_is_asked_of_the_whole_formula() {
        // x3 = x1 ∧ x2 over the support x1, x2.
        let mut cnf = Cnf::from_clauses(3, &[vec![-3, 1], vec![-3, 2], vec![3, -1, -2]]);
        cnf.set_independent_support(vec![1, 2]);
        let mut session = NativeSolver::open(&cnf, Budget::unlimited(), FIRST_TURN);
        session.eliminate_after = 0;
        let ones = Assignment::from_bit_string("111").unwrap();
        let zeros = Assignment::zeros(3);
        let model = |answer| match answer {
            Answer::Model(model) => Assignment::to_bit_string(&model),
            other => panic!("{other:?}"),
        };
        assert_eq!(model(session.solve(&[], &ones, Steering::All, None)), "111");
        assert_eq!(
            session.elimination.as_ref().map(Elimination::eliminated),
            Some(1)
        );
        assert_eq!(
            model(session.solve(&[-2], &ones, Steering::All, None)),
            "100"
        );
        assert_eq!(
            model(session.solve(&[3], &zeros, Steering::All, None)),
            "111"
        );
        assert_eq!(session.open_variables(), 2);
    }

    /// A session's conflicts count on when its refuter is replaced by the reduced formula's:
    /// the sampler reads a query's conflicts as a difference of two counts.
    #[test]
    fn conflicts_count_on_across_elimination() {
        let (planted_cnf, _) = planted(120, 500, 3);
        let mut cnf = Cnf::new(121);
        for clause in planted_cnf.clauses() {
            cnf.add_clause(clause);
        }
        // x121 = x1 ∧ x2, outside the support.
        cnf.add_clause(&[-121, 1]);
        cnf.add_clause(&[-121, 2]);
        cnf.add_clause(&[121, -1, -2]);
        cnf.set_independent_support((1..=120).collect());
        let mut session = NativeSolver::open(&cnf, Budget::unlimited(), FIRST_TURN);
        session.eliminate_after = 1;
        let phases = Assignment::zeros(121);
        let _ = session.solve(&[], &phases, Steering::All, Some(100));
        let before = session.conflicts();
        assert!(before > 0 && session.elimination.is_none());
        let _ = session.solve(&[], &phases, Steering::All, Some(100));
        assert!(session.elimination.is_some());
        assert_eq!(session.conflicts(), before + session.search.conflicts());
    }

    /// Native sessions that search the reduced formula from their first query.
    struct EliminatingAtOnce;

    impl IncrementalBackend for EliminatingAtOnce {
        fn name(&self) -> &'static str {
            "native, eliminating at once"
        }

        fn open<'a>(
            &self,
            cnf: &'a Cnf,
            budget: Budget<'a>,
        ) -> Result<Box<dyn IncrementalSolver + 'a>, String> {
            let mut session = NativeSolver::open(cnf, budget, FIRST_TURN);
            session.eliminate_after = 0;
            Ok(Box::new(session))
        }
    }

    /// Sessions on the reduced formula against the references, on the random formulas with
    /// gates over an independent support (and the others, which have nothing to eliminate).
    #[test]
    fn sessions_on_the_reduced_formula_agree_with_the_references() {
        let mut tally = crate::solver::differential::Tally::default();
        for seed in 0..700 {
            match crate::solver::differential::check_session(&EliminatingAtOnce, seed) {
                Ok(t) => tally.add(t),
                Err(disagreement) => panic!("{disagreement}"),
            }
        }
        assert!(tally.models > 1_000 && tally.refutations > 100, "{tally:?}");
    }

    #[test]
    fn steering_some_variables_keeps_the_last_model_elsewhere() {
        let cnf = Cnf::from_clauses(4, &[vec![1, 2, 3, 4]]);
        let mut session = NativeSolver::open(&cnf, Budget::unlimited(), FIRST_TURN);
        let ones = Assignment::from_bit_string("1111").unwrap();
        let zeros = Assignment::from_bit_string("0000").unwrap();
        assert_eq!(
            session.solve(&[], &ones, Steering::All, None),
            Answer::Model(ones)
        );
        let steered = session.solve(&[], &zeros, Steering::Only(&[0, 2]), None);
        assert_eq!(
            steered,
            Answer::Model(Assignment::from_bit_string("0101").unwrap())
        );
        assert_eq!(session.solver_calls(), 2);
    }

    /// Of two variables at most one of which can be true, both preferred true, the one
    /// decided first gets its phase: either one, as the order says.
    #[test]
    fn variables_decided_first_take_their_phases_in_that_order() {
        let cnf = Cnf::from_clauses(3, &[vec![-1, -2], vec![1, 2, 3]]);
        let mut session = NativeSolver::open(&cnf, Budget::unlimited(), FIRST_TURN);
        let ones = Assignment::from_bit_string("111").unwrap();
        for (first, model) in [([0, 1], "101"), ([1, 0], "011")] {
            assert_eq!(
                session.solve(&[], &ones, Steering::DecideFirst(&first), None),
                Answer::Model(Assignment::from_bit_string(model).unwrap()),
                "deciding {first:?} first"
            );
        }
    }
}
