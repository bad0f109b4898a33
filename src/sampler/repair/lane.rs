//! Repairs and fresh solutions through a solver lane: a session that stays loaded, asked
//! with the kept bits as assumptions and the preferred values as phases, and the records
//! that decide, per lane, whether propagation is tried first and how long a query may search.
//! Counts, not times, decide here, so the suite stays a function of the seed and the lanes.

use super::parts::Known;
use super::{Completed, Completer, Failure};
use crate::assignment::Assignment;
use crate::formula::Lit;
use crate::propagate::Propagator;
use crate::solver::{Answer, IncrementalSolver, Steering};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// The constants below were each set by paired runs on the case studies; the commit that set
// one (`git log -S NAME`) gives its measurements.

/// Conflicts a session repair query may take before half its kept bits are freed. A query
/// that needs more is mostly a search the candidate's phases hold far from any model, and the
/// few such queries took most of the repair time on the hardest formulas; a lower limit frees
/// every kept bit of too many repairs on the others.
const REPAIR_CONFLICTS: u32 = 250;
/// The limit of a lane whose repair queries often hit `REPAIR_CONFLICTS` (see `RepairLimit`).
/// There a query that finds a model finds it within a few conflicts, and one that does not
/// costs the whole limit.
const HARD_REPAIR_CONFLICTS: u32 = 10;
/// Conflicts a fresh solution's searches may take in turn, then the time left: the first
/// under random phases on every variable, the others steered on the independent support. A
/// short first search suffices on every formula that needs no steering and wastes little on
/// those that do.
const FRESH_CONFLICTS: [u32; 3] = [200, 20_000, 200_000];
/// The searches of a repair's fallback to a fresh solution, after which the repair gives
/// up: any model is a new test there, and where fresh solutions are hard, heavy-tailed
/// searches the candidate costs less dropped than solved.
const FALLBACK_CONFLICTS: [u32; 2] = [200, 2_000];
/// How often a session repair asks again: after freeing the failed kept bits (cadical), or
/// half of them when a query reaches its conflict limit.
const MAX_SESSION_ATTEMPTS: usize = 8;
/// One variable in this many outside the independent support is steered too, along with the
/// support, when a fresh solution's search is steered on the support: the others follow the
/// session's last model, which alone mostly brings that model back. Many more steered find
/// as many tests that cover fewer pairs of support values.
const STEERED_SHARE_OUTSIDE_SUPPORT: u32 = 50;

/// Mixed into a fresh solution's seed for the order its support is decided in.
const SUPPORT_ORDER_SEED: u64 = 0x005e_ed0f_5eed;

/// Queries of `session` that reached its solver since it had made `before`.
fn calls_since(session: &dyn IncrementalSolver, before: u64) -> u32 {
    u32::try_from(session.solver_calls() - before).unwrap_or(u32::MAX)
}

/// A solver lane: its session, and the records of how its searches have fared that choose
/// the next ones (propagation first or not, the repair limit, the fallback's first search).
pub struct Lane<'a> {
    /// The lane's session, kept across rounds.
    pub session: Box<dyn IncrementalSolver + 'a>,
    propagation: PropagationFirst,
    limit: RepairLimit,
    fallback: FullSteering,
    /// The session's recent models, where the formula has parts to combine.
    pub(super) known: Known,
}

impl<'a> Lane<'a> {
    /// A lane answering through `session`.
    pub fn new(session: Box<dyn IncrementalSolver + 'a>) -> Self {
        Lane {
            session,
            propagation: PropagationFirst::default(),
            limit: RepairLimit::default(),
            fallback: FullSteering::default(),
            known: Known::default(),
        }
    }
}

/// The conflict limit of a lane's repair queries, from how its last 32 queries ended. Where
/// repairs are searches the candidate's phases hold far from any model, most queries hit the
/// limit whatever it is, and each costs the whole limit: a low one pays there. Where a query
/// that needs many conflicts still finds a model, a low limit would free its kept bits
/// instead; those lanes never hit it, so they keep the high one. Counts, not times, decide,
/// so the suite stays a function of the seed and the lanes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct RepairLimit(RecentHits);

impl RepairLimit {
    fn conflicts(&self) -> u32 {
        if self.0.often() {
            HARD_REPAIR_CONFLICTS
        } else {
            REPAIR_CONFLICTS
        }
    }

    fn record(&mut self, hit_the_limit: bool) {
        self.0.record(hit_the_limit);
    }
}

/// Which of a lane's last 32 searches of a kind hit their conflict limit.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct RecentHits {
    /// One bit a search, the latest lowest: set where it hit the limit.
    recent: u32,
}

impl RecentHits {
    /// Hits among the last 32 from which they are often: one in four.
    const OFTEN: u32 = 8;

    fn often(&self) -> bool {
        self.recent.count_ones() >= Self::OFTEN
    }

    fn record(&mut self, hit_the_limit: bool) {
        self.recent = (self.recent << 1) | u32::from(hit_the_limit);
    }
}

/// Whether a repair that falls back to a fresh solution starts with a search steered on
/// every variable by the candidate, or goes straight to one steered on the independent
/// support. The first finds a test far from the session's last model, where it finds one;
/// but where repairs rarely keep a bit, the candidate's phases are as far from any model, and
/// those first searches mostly hit their limit: lanes where 8 of the last 32 did go straight
/// to the support-steered search from then on. Counts, not times, decide, so the suite stays
/// a function of the seed and the lanes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct FullSteering(RecentHits);

impl FullSteering {
    /// Stops for good: a search not made records nothing.
    fn worth_trying(&self) -> bool {
        !self.0.often()
    }

    fn record(&mut self, hit_the_limit: bool) {
        self.0.record(hit_the_limit);
    }
}

/// A share of the formula's variables, as (part, whole).
type OpenShare = (usize, usize);

/// What a lane's session must leave open for a repair to try propagation first: it still
/// decides most of the formula (see `PropagationFirst`).
const REPAIR_OPEN_SHARE: OpenShare = (1, 2);

/// What it must leave open for a fresh solution to: nearly everything, as on the circuits.
/// Where a session has settled part of the formula (a sketch's), a query is cheaper than
/// completing by propagation, and propagation's successes would keep the session from being
/// asked, and so from settling the rest.
const FRESH_OPEN_SHARE: OpenShare = (19, 20);

/// Whether a lane tries propagation before a query (along the candidate for a repair, along
/// random values for a fresh solution; the two share the record). Where the session still
/// decides most of the formula (a circuit, whose inputs determine the rest), propagation
/// completes most candidates for less than a query; where the solver has settled most of the
/// formula (a sketch) a query is cheaper, and where propagation mostly fails it is wasted.
/// Counts, not times, decide, so the suite stays a function of the seed and the lanes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct PropagationFirst {
    tries: u32,
    completions: u32,
}

impl PropagationFirst {
    /// Failures allowed beyond one try in four: a lane where propagation never completes
    /// stops after 3 tries (each can cost more than a query), one where 9 in 10 do goes on.
    const SLACK: u32 = 2;

    /// While at most one try in four, and `SLACK` more, has failed; once it stops, it stays
    /// stopped (its counts no longer move).
    fn worth_trying(&self) -> bool {
        4 * (self.tries - self.completions) <= self.tries + 4 * Self::SLACK
    }

    fn record(&mut self, completed: bool) {
        self.tries += 1;
        self.completions += u32::from(completed);
    }
}

impl<'a> Completer<'a> {
    /// A repair through `lane`: propagation along the candidate first where the lane's
    /// record of it says it pays, else the lane's session.
    pub(super) fn repair_in_lane(
        &self,
        prop: &mut Option<Propagator<'a>>,
        lane: &mut Lane,
        kept: &[Lit],
        candidate: &Assignment,
        seed: u64,
    ) -> Result<Completed, Failure> {
        if let Some(done) = self.propagation_first(prop, lane, kept, candidate, REPAIR_OPEN_SHARE) {
            return Ok(done);
        }
        // The session frees kept bits from its own copy.
        self.repair_in_session(lane, candidate, kept.to_vec(), seed)
    }

    /// A fresh solution through `lane`: greedy completion along `preferred` first where the
    /// lane's record says it pays and the session leaves nearly everything open, else the
    /// lane's session.
    pub(super) fn fresh_in_lane(
        &self,
        prop: &mut Option<Propagator<'a>>,
        lane: &mut Lane,
        preferred: &Assignment,
        seed: u64,
    ) -> Result<Completed, Failure> {
        if let Some(done) = self.propagation_first(prop, lane, &[], preferred, FRESH_OPEN_SHARE) {
            return Ok(done);
        }
        self.fresh_in_session(lane.session.as_mut(), preferred, seed, None)
    }

    /// A completion by propagation alone of `fixed` along `preferred`, tried before the
    /// lane's session is asked where the lane's record (`PropagationFirst`) says it pays and
    /// the session, once it has answered a query, still leaves open at least `open_share`
    /// of the variables (a session settles nothing before its first query).
    fn propagation_first(
        &self,
        prop: &mut Option<Propagator<'a>>,
        lane: &mut Lane,
        fixed: &[Lit],
        preferred: &Assignment,
        open_share: OpenShare,
    ) -> Option<Completed> {
        let (part, whole) = open_share;
        if lane.session.solver_calls() == 0
            || !lane.propagation.worth_trying()
            || whole * lane.session.open_variables() < part * self.cnf.num_vars()
        {
            return None;
        }
        let thread_prop = prop.get_or_insert_with(|| self.propagator());
        let completed = self.complete(thread_prop, fixed, preferred, true, 0, None);
        lane.propagation.record(completed.is_ok());
        completed.ok()
    }

    /// Repair with a session: the kept bits as assumptions and the candidate's values as
    /// phases. Kept bits that fail are freed ([`IncrementalSolver::solve_relaxing`]: exactly the
    /// failed ones, or with native sessions each one found false under the kept bits placed
    /// before it, alone, and past 16 conflicts with those it failed with); a query that hits
    /// its conflict limit (the lane's `limit`) frees half of them.
    fn repair_in_session(
        &self,
        lane: &mut Lane,
        candidate: &Assignment,
        mut kept: Vec<Lit>,
        seed: u64,
    ) -> Result<Completed, Failure> {
        let (session, limit) = (lane.session.as_mut(), &mut lane.limit);
        let calls_before = session.solver_calls();
        for _ in 0..MAX_SESSION_ATTEMPTS {
            if self.expired() {
                return Err(Failure::Unknown("time limit reached".into()));
            }
            let answer = session.solve_relaxing(
                &mut kept,
                candidate,
                Steering::All,
                Some(limit.conflicts()),
            );
            limit.record(matches!(answer, Answer::Unknown(_)));
            match answer {
                Answer::Model(test) => {
                    return Ok(Completed::solved(test, calls_since(session, calls_before)))
                }
                Answer::Refuted(failed) if failed.is_empty() => return Err(Failure::Unsat),
                // Dropped from `kept` already.
                Answer::Refuted(_) => {}
                Answer::Unknown(_) if !kept.is_empty() => kept.truncate(kept.len() / 2),
                Answer::Unknown(_) => break,
            }
        }
        let mut done = self.fresh_in_session(session, candidate, seed, Some(&mut lane.fallback))?;
        done.solver_calls = calls_since(session, calls_before);
        done.fresh = true;
        Ok(done)
    }

    /// A model near `preferred` from a session, under escalating conflict limits. Past the
    /// first limit, `preferred` steers only the independent support (where the formula names
    /// one) and a share of the other variables drawn under `seed`: random phases on every
    /// variable can hold the search far from any model, and a fresh solution of
    /// karatsuba.sk_7_41 took seconds to minutes. The first search decides the independent
    /// support first, in an order drawn under `seed`. A repair's fallback (`full_steering`,
    /// its lane's record) searches within `FALLBACK_CONFLICTS` only, and skips the first
    /// search where the record says it rarely pays.
    fn fresh_in_session(
        &self,
        session: &mut dyn IncrementalSolver,
        preferred: &Assignment,
        seed: u64,
        mut full_steering: Option<&mut FullSteering>,
    ) -> Result<Completed, Failure> {
        let skip_first = full_steering.as_ref().is_some_and(|r| !r.worth_trying());
        let fallback = full_steering.is_some();
        let limits: Vec<Option<u32>> = if fallback {
            FALLBACK_CONFLICTS.iter().map(|&c| Some(c)).collect()
        } else {
            FRESH_CONFLICTS
                .iter()
                .map(|&c| Some(c))
                .chain([None])
                .collect()
        };
        let mut why = String::from("time limit reached");
        let (calls_before, conflicts_before) = (session.solver_calls(), session.conflicts());
        let mut steered: Option<Vec<usize>> = None;
        let has_support = self.projection.len() < self.cnf.num_vars();
        let support_first = (has_support && !fallback).then(|| {
            let mut order = self.projection.clone();
            order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed ^ SUPPORT_ORDER_SEED));
            order
        });
        for (attempt, &limit) in limits.iter().enumerate().skip(usize::from(skip_first)) {
            if self.expired() {
                break;
            }
            let steering = match &support_first {
                _ if attempt > 0 && has_support => {
                    Steering::Only(steered.get_or_insert_with(|| self.steered_variables(seed)))
                }
                Some(order) => Steering::DecideFirst(order),
                None => Steering::All,
            };
            let answer = session.solve(&[], preferred, steering, limit);
            if let Some(record) = full_steering.as_mut().filter(|_| attempt == 0) {
                record.record(matches!(answer, Answer::Unknown(_)));
            }
            match answer {
                Answer::Model(test) => {
                    let mut done = Completed::solved(test, calls_since(session, calls_before));
                    done.conflicts = session.conflicts() - conflicts_before;
                    return Ok(done);
                }
                Answer::Refuted(_) => return Err(Failure::Unsat),
                Answer::Unknown(reason) => why = reason,
            }
        }
        Err(Failure::Unknown(why))
    }

    /// The independent support and, drawn under `seed`, one in
    /// `STEERED_SHARE_OUTSIDE_SUPPORT` of the other variables.
    fn steered_variables(&self, seed: u64) -> Vec<usize> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut steered = self.projection.clone();
        steered.extend(
            (0..self.cnf.num_vars()).filter(|&v| {
                !self.in_support[v] && rng.gen_ratio(1, STEERED_SHARE_OUTSIDE_SUPPORT)
            }),
        );
        steered
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{chain, invalid_candidate_keeping_x1};
    use super::super::Route;
    use super::*;
    use crate::budget::Budget;
    use crate::formula::Cnf;
    use crate::solver::Splr;
    use crate::verify::Checker;

    /// When a [`GivesUp`] session gives up.
    enum Giving {
        /// On its first query only.
        OnTheFirstQuery,
        /// Whenever every variable is steered.
        WhenFullySteered,
        /// On every query.
        Always,
    }

    /// A session that gives up as `giving` says and answers `model` otherwise, noting how
    /// each query was steered.
    struct GivesUp {
        model: Assignment,
        steered: Vec<Option<Vec<usize>>>,
        giving: Giving,
    }

    impl GivesUp {
        fn new(model: &str, giving: Giving) -> Self {
            GivesUp {
                model: Assignment::from_bit_string(model).unwrap(),
                steered: Vec::new(),
                giving,
            }
        }
    }

    impl IncrementalSolver for GivesUp {
        fn solver_calls(&self) -> u64 {
            self.steered.len() as u64
        }

        fn conflicts(&self) -> u64 {
            0
        }

        fn open_variables(&self) -> usize {
            self.model.len()
        }

        fn solve(
            &mut self,
            _: &[Lit],
            _: &Assignment,
            steering: Steering,
            _: Option<u32>,
        ) -> Answer {
            let steered = match steering {
                Steering::All | Steering::DecideFirst(_) => None,
                Steering::Only(vars) => Some(vars.to_vec()),
            };
            let gives_up = match self.giving {
                Giving::OnTheFirstQuery => self.steered.is_empty(),
                Giving::WhenFullySteered => steered.is_none(),
                Giving::Always => true,
            };
            self.steered.push(steered);
            if gives_up {
                Answer::Unknown("conflict limit".into())
            } else {
                Answer::Model(self.model.clone())
            }
        }
    }

    /// A session that answers `model` to every query and counts them; it decides `open`
    /// variables once it has answered one, every variable before (as CaDiCaL, whose first
    /// query settles what the formula forces).
    struct Answers {
        model: Assignment,
        open: usize,
        calls: u64,
    }

    impl IncrementalSolver for Answers {
        fn solver_calls(&self) -> u64 {
            self.calls
        }

        fn conflicts(&self) -> u64 {
            0
        }

        fn open_variables(&self) -> usize {
            if self.calls == 0 {
                self.model.len()
            } else {
                self.open
            }
        }

        fn solve(&mut self, _: &[Lit], _: &Assignment, _: Steering, _: Option<u32>) -> Answer {
            self.calls += 1;
            Answer::Model(self.model.clone())
        }
    }

    /// A lane whose session answers `model`, having answered `calls` queries, and leaves
    /// `open` variables open once it has answered one.
    fn lane_answering(model: &Assignment, open: usize, calls: u64) -> Lane<'static> {
        Lane::new(Box::new(Answers {
            model: model.clone(),
            open,
            calls,
        }))
    }

    /// Propagation is tried first while at most a quarter of its tries, and 2 more, failed:
    /// 3 failures in a row stop it, a failure in four does not; once stopped it stays stopped.
    #[test]
    fn propagation_first_goes_on_while_it_mostly_completes() {
        let mut record = PropagationFirst::default();
        for _ in 0..3 {
            assert!(record.worth_trying());
            record.record(false);
        }
        assert!(!record.worth_trying());
        let mut record = PropagationFirst::default();
        for i in 0..100 {
            assert!(record.worth_trying(), "try {i}");
            record.record(i % 4 != 3);
        }
        for _ in 0..3 {
            record.record(false);
        }
        assert!(!record.worth_trying());
        assert!(!record.worth_trying(), "stopped for good");
    }

    /// A lane whose session decides most of the formula repairs by propagation when that
    /// completes the candidate (no query), and asks its session once propagation has stopped,
    /// or where the session has settled most of the formula.
    #[test]
    fn a_lane_repairs_by_propagation_only_where_it_pays() {
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut prop = None;
        let (candidate, delta) = invalid_candidate_keeping_x1();
        let model = Assignment::from_bit_string("11100").unwrap();
        // Each lane's session has answered a query already.
        let lane_deciding = |open| lane_answering(&model, open, 1);

        let mut lane = lane_deciding(5);
        let done = completer
            .repair(&mut prop, Some(&mut lane), &candidate, &delta, 1)
            .unwrap();
        assert_eq!(done.route, Route::Propagation);
        assert_eq!(done.test.to_bit_string(), "11101");
        assert_eq!(done.kept, 1);
        assert_eq!(lane.session.solver_calls(), 1);
        assert_eq!(
            lane.propagation,
            PropagationFirst {
                tries: 1,
                completions: 1
            }
        );

        lane.propagation = PropagationFirst {
            tries: 3,
            completions: 0,
        };
        let done = completer
            .repair(&mut prop, Some(&mut lane), &candidate, &delta, 1)
            .unwrap();
        assert_eq!((done.route, done.test), (Route::Solver, model.clone()));
        assert_eq!(lane.session.solver_calls(), 2);
        assert_eq!(
            lane.propagation,
            PropagationFirst {
                tries: 3,
                completions: 0
            }
        );

        let mut lane = lane_deciding(2);
        let done = completer
            .repair(&mut prop, Some(&mut lane), &candidate, &delta, 1)
            .unwrap();
        assert_eq!(done.route, Route::Solver);
        assert_eq!(lane.propagation, PropagationFirst::default());
    }

    /// A fresh solution's phases steer every variable at first; once that search gives up,
    /// only the independent support and a share of the others (where the formula names a
    /// support).
    #[test]
    fn a_fresh_solution_that_gives_up_is_steered_on_the_support_and_a_share() {
        for support in [vec![], vec![1, 4]] {
            let mut cnf = chain();
            cnf.set_independent_support(support.clone());
            let checker = Checker::new(&cnf);
            let completer = Completer::new(&checker, &Splr, Budget::unlimited());
            let mut session = GivesUp::new("11100", Giving::OnTheFirstQuery);
            let preferred = Assignment::from_bit_string("01011").unwrap();
            let done = completer
                .fresh_in_session(&mut session, &preferred, 7, None)
                .unwrap();
            assert_eq!(done.test.to_bit_string(), "11100");
            assert_eq!(done.solver_calls, 2);
            let expected = (!support.is_empty()).then(|| completer.steered_variables(7));
            assert_eq!(session.steered, vec![None, expected]);
        }
    }

    /// The variables a support-steered search steers: the support, and about one in
    /// `STEERED_SHARE_OUTSIDE_SUPPORT` of the others, the same for the same seed.
    #[test]
    fn a_steered_search_steers_the_support_and_a_share_drawn_by_the_seed() {
        let mut cnf = Cnf::from_clauses(5_000, &[vec![1, 2]]);
        let support: Vec<u32> = (101..=110).collect();
        cnf.set_independent_support(support);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let steered = completer.steered_variables(1);
        assert_eq!(steered[..10], (100..110).collect::<Vec<_>>());
        let others = &steered[10..];
        assert!(others.iter().all(|&v| !(100..110).contains(&v)));
        let expected = 4_990 / STEERED_SHARE_OUTSIDE_SUPPORT as usize;
        assert!(
            (expected / 2..expected * 2).contains(&others.len()),
            "{} steered outside the support",
            others.len()
        );
        assert_eq!(completer.steered_variables(1), steered);
        assert_ne!(completer.steered_variables(2), steered);
    }

    /// A repair that falls back to a fresh solution tries the search steered on every
    /// variable first until 8 of its lane's last 32 such searches gave up; from then on
    /// it goes straight to the support-steered one.
    #[test]
    fn a_fallback_skips_the_fully_steered_search_where_it_often_gives_up() {
        let mut cnf = chain();
        cnf.set_independent_support(vec![1, 4]);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let model = Assignment::from_bit_string("11100").unwrap();
        let mut lane = Lane::new(Box::new(GivesUp::new("11100", Giving::WhenFullySteered)));
        let (candidate, _) = invalid_candidate_keeping_x1();
        for repair in 0..10 {
            let before = lane.session.solver_calls();
            let done = completer
                .repair_in_session(&mut lane, &candidate, Vec::new(), repair)
                .unwrap();
            assert_eq!((done.test.clone(), done.fresh), (model.clone(), true));
            // The repair's own query, then the fallback's searches.
            let expected = if repair < 8 { 3 } else { 2 };
            assert_eq!(
                lane.session.solver_calls() - before,
                expected,
                "repair {repair}"
            );
        }
        assert!(!lane.fallback.worth_trying());
    }

    /// A repair's fallback to a fresh solution gives up after `FALLBACK_CONFLICTS`' searches,
    /// where a fresh solution of its own goes on to a search without a limit.
    #[test]
    fn a_fallback_gives_up_where_a_fresh_solution_searches_on() {
        let mut cnf = chain();
        cnf.set_independent_support(vec![1, 4]);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut lane = Lane::new(Box::new(GivesUp::new("11100", Giving::Always)));
        let (candidate, _) = invalid_candidate_keeping_x1();
        let repaired = completer.repair_in_session(&mut lane, &candidate, Vec::new(), 3);
        assert!(matches!(repaired, Err(Failure::Unknown(_))));
        // The repair's own query, then the fallback's searches.
        assert_eq!(
            lane.session.solver_calls(),
            1 + FALLBACK_CONFLICTS.len() as u64
        );
        let mut session = GivesUp::new("11100", Giving::Always);
        let fresh = completer.fresh_in_session(&mut session, &candidate, 3, None);
        assert!(matches!(fresh, Err(Failure::Unknown(_))));
        assert_eq!(session.solver_calls(), FRESH_CONFLICTS.len() as u64 + 1);
    }

    /// The record of fully steered searches stops once 8 of the last 32 gave up, and stays
    /// stopped.
    #[test]
    fn the_fully_steered_search_stops_after_a_quarter_of_searches_give_up() {
        let mut record = FullSteering::default();
        for search in 0..32 {
            assert!(record.worth_trying());
            record.record(search % 5 == 4);
        }
        assert!(record.worth_trying(), "6 of 32");
        record.record(true);
        record.record(true);
        assert!(!record.worth_trying());
    }

    /// A lane's first fresh solution comes from its session; the next ones from greedy
    /// completion along random values while the session still decides most of the formula
    /// and the lane's record says propagation pays (no query), and from the session once
    /// propagation has stopped.
    #[test]
    fn a_lane_draws_fresh_solutions_by_propagation_while_it_pays() {
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let model = Assignment::from_bit_string("11100").unwrap();
        let mut lane = lane_answering(&model, 5, 0);
        let mut prop = None;
        let first = completer.fresh(&mut prop, Some(&mut lane), 0).unwrap();
        assert_eq!((first.route, first.test), (Route::Solver, model.clone()));
        for seed in 1..20 {
            let done = completer.fresh(&mut prop, Some(&mut lane), seed).unwrap();
            assert_eq!(done.route, Route::Propagation);
            assert!(checker.satisfies(&done.test));
        }
        assert!(prop.is_some());
        assert_eq!(lane.session.solver_calls(), 1);

        lane.propagation = PropagationFirst {
            tries: 3,
            completions: 0,
        };
        let done = completer.fresh(&mut prop, Some(&mut lane), 0).unwrap();
        assert_eq!((done.route, done.test), (Route::Solver, model));
        assert_eq!(lane.session.solver_calls(), 2);
    }

    /// A session whose first query settles part of the formula (a sketch's) answers every
    /// fresh solution: propagation, which would complete them at ten times a query's cost,
    /// is not tried on the count of open variables the session had before it, nor where a
    /// repair would try it (a regression: 17.sk_3_45 took 2.5x CMSGen's time).
    #[test]
    fn a_session_that_settles_most_of_the_formula_answers_every_fresh_solution() {
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let model = Assignment::from_bit_string("11100").unwrap();
        // 3 of 5 open: a repair would try propagation first, a fresh solution does not.
        let mut lane = lane_answering(&model, 3, 0);
        let mut prop = None;
        for seed in 0..5 {
            let done = completer.fresh(&mut prop, Some(&mut lane), seed).unwrap();
            assert_eq!((done.route, &done.test), (Route::Solver, &model));
        }
        assert_eq!(lane.session.solver_calls(), 5);
        assert_eq!(lane.propagation, PropagationFirst::default());
    }

    /// A lane gives up sooner once a quarter of its last 32 repair queries hit the limit, and
    /// goes back once they no longer do.
    #[test]
    fn repairs_give_up_sooner_where_queries_often_hit_the_limit() {
        let mut limit = RepairLimit::default();
        assert_eq!(limit.conflicts(), REPAIR_CONFLICTS);
        for query in 0..32 {
            // 7 hits in 32, the latest: below a quarter.
            limit.record(query >= 25);
        }
        assert_eq!(limit.conflicts(), REPAIR_CONFLICTS);
        limit.record(true);
        assert_eq!(limit.conflicts(), HARD_REPAIR_CONFLICTS);
        for _ in 0..24 {
            limit.record(false);
        }
        assert_eq!(
            limit.conflicts(),
            HARD_REPAIR_CONFLICTS,
            "8 hits among the last 32"
        );
        for _ in 0..8 {
            limit.record(false);
        }
        assert_eq!(limit.conflicts(), REPAIR_CONFLICTS);
    }

    /// A native repair whose kept bits fail as a pair frees the later one alone, in one
    /// query: asked again without the pair, it kept neither and took two.
    #[test]
    fn a_native_repair_frees_one_bit_of_a_failed_pair_in_one_query() {
        use crate::solver::{native::Native, IncrementalBackend};
        // x1 → x2 → x3, ¬x3 ∨ ¬x4: x4 is false once x1 is placed.
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut lane = Lane::new(Native.open(&cnf, Budget::unlimited()).unwrap());
        let candidate = Assignment::from_bit_string("10010").unwrap();
        let done = completer
            .repair_in_session(&mut lane, &candidate, vec![1, 4], 0)
            .unwrap();
        assert!(checker.satisfies(&done.test));
        assert_eq!(done.test.to_bit_string(), "11100", "x1 kept, x4 freed");
        assert_eq!(done.solver_calls, 1);
    }

    /// A session that gives `models` in turn, then gives up on every query, and leaves no
    /// variable open (so propagation is never tried first).
    struct ModelsThenGivesUp {
        models: Vec<Assignment>,
        calls: u64,
    }

    impl IncrementalSolver for ModelsThenGivesUp {
        fn solver_calls(&self) -> u64 {
            self.calls
        }

        fn conflicts(&self) -> u64 {
            0
        }

        fn open_variables(&self) -> usize {
            0
        }

        fn solve(&mut self, _: &[Lit], _: &Assignment, _: Steering, _: Option<u32>) -> Answer {
            self.calls += 1;
            match self.models.get(self.calls as usize - 1) {
                Some(model) => Answer::Model(model.clone()),
                None => Answer::Unknown("conflict limit".into()),
            }
        }
    }

    /// Two copies of x1 → x2: where the session gives up on a repair, the part the candidate
    /// breaks comes from the lane's known tests and the part it satisfies stays; on one part
    /// alone the repair fails as before.
    #[test]
    fn a_repair_given_up_takes_broken_parts_from_known_tests() {
        let cnf = Cnf::from_clauses(4, &[vec![-1, 2], vec![-3, 4]]);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let models = ["1100", "0011"].map(|m| Assignment::from_bit_string(m).unwrap());
        let mut lane = Lane::new(Box::new(ModelsThenGivesUp {
            models: models.to_vec(),
            calls: 0,
        }));
        let mut prop = None;
        for (seed, model) in models.iter().enumerate() {
            let done = completer
                .fresh(&mut prop, Some(&mut lane), seed as u64)
                .unwrap();
            assert_eq!(&done.test, model);
        }
        // x1 x2 = 0 1 holds; x3 x4 = 1 0 breaks, and 1100's 00 is the nearest (first of two).
        let candidate = Assignment::from_bit_string("0110").unwrap();
        let delta = Assignment::from_bit_string("0010").unwrap();
        let done = completer
            .repair(&mut prop, Some(&mut lane), &candidate, &delta, 1)
            .unwrap();
        assert_eq!(
            (done.route, done.test.to_bit_string()),
            (Route::Parts, "0100".into())
        );

        let one_part = Cnf::from_clauses(4, &[vec![-1, 2], vec![-3, 4], vec![2, 4]]);
        let checker = Checker::new(&one_part);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut lane = Lane::new(Box::new(ModelsThenGivesUp {
            models: models.to_vec(),
            calls: 0,
        }));
        for seed in 0..2 {
            completer.fresh(&mut None, Some(&mut lane), seed).unwrap();
        }
        let failed = completer.repair(&mut None, Some(&mut lane), &candidate, &delta, 1);
        assert!(matches!(failed, Err(Failure::Unknown(_))), "{failed:?}");
    }

    /// A query refuted from the session's remembered cores is not a solver call.
    #[cfg(feature = "cadical")]
    #[test]
    fn a_refutation_from_memory_is_not_counted_as_a_solver_call() {
        use crate::solver::{cadical::Cadical, IncrementalBackend};
        // x1 → x2 → x3, ¬x3 ∨ ¬x4: keeping x1 and x4 fails on both, and the retry keeps none.
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut lane = Lane::new(Cadical.open(&cnf, Budget::unlimited()).unwrap());
        let candidate = Assignment::from_bit_string("10010").unwrap();
        let mut repair = || {
            completer
                .repair_in_session(&mut lane, &candidate, vec![1, 4], 0)
                .unwrap()
        };
        let first = repair();
        assert!(checker.satisfies(&first.test));
        assert_eq!(first.solver_calls, 2, "refuted, then solved");
        let again = repair();
        assert!(checker.satisfies(&again.test));
        assert_eq!(again.solver_calls, 1, "refuted from memory, then solved");
    }
}
