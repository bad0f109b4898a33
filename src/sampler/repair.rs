//! Completing partial tests: fresh solutions (step 1a) and repair of invalid candidates (§III-A).
//!
//! Both fix some variables, let unit propagation settle what it can, try a greedy completion
//! that follows preferred values, and only then ask a solver: a session that stays loaded
//! (kept bits as assumptions, preferred values as phases; a refutation names the kept bits
//! to free), or else the oracle on the residual problem, rebuilt for the call. That residual
//! is taken from the formula with the variables outside the independent support eliminated
//! once ([`crate::eliminate`]), which spares the oracle most of its own simplification; a
//! repair first probes the support for failed literals, which refutes many kept-bit sets
//! the oracle would otherwise be rebuilt to refute.

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::eliminate::{eliminate, Elimination};
use crate::formula::{literal, var_index, Cnf, Lit};
use crate::oracle::{Answer, Oracle, Outcome, Preprocessing, Query, Session, Steering};
use crate::propagate::{Propagator, Watches};
use crate::refute::Refuter;
use crate::verify::Checker;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
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
/// Conflicts the refuter (`crate::refute`) may take to prove a repair's kept bits
/// contradictory before splr is asked. On isolateRightmost.sk_7_481 (seed 1) splr's 1,238
/// refutations needed 73 conflicts (median, its own count), 374 at the 90th percentile; with
/// 300 the refuter proved 1,237 of them, in 0.75 ms each (splr: 14 ms).
const REFUTING_CONFLICTS: u32 = 300;
/// Conflicts a session repair query may take before half its kept bits are freed. A query
/// that needs more is mostly a search the candidate's phases hold far from any model: traced
/// on karatsuba.sk_7_41, the 8% of repair queries that hit 2,000 conflicts took 42% of the
/// repairs' time (0.47 s each), while the median answer took 200. With 250, tests in 60 s
/// (seeds 1-3, two runs at a time) went from 540/405/513 to 1027/797/895 on karatsuba and
/// from 658/220/229 to 747/555/572 on parity.sk_11_11, and time to 1000 tests on the other
/// 27 case studies did not move beyond noise (0.86-1.20x, medians of 3); 100 gained more on
/// those two but cost LoginService2.sk_23_36 1.3x and 20.sk_1_51 1.4x, and freed every kept
/// bit of 8-40% of their repairs (250: 2-15%). NCD and coverage of the suites did not drop.
const REPAIR_CONFLICTS: u32 = 250;
/// The limit of a lane whose repair queries often hit `REPAIR_CONFLICTS` (see `RepairLimit`).
const HARD_REPAIR_CONFLICTS: u32 = 100;
/// Conflicts a fresh solution's searches may take in turn, then the time left: the first
/// under random phases on every variable, the others steered on the independent support. A
/// short first search suffices on every formula that needs no steering (seed 1 of the 29
/// case studies: 6 ever escalate) and wastes little on those that do (karatsuba.sk_7_41:
/// 782 tests in 120 s against 580 with 2,000 conflicts, parity.sk_11_11 699 against 675:
/// `results/engine-hard-session8`).
const FRESH_CONFLICTS: [u32; 3] = [200, 20_000, 200_000];
/// How often a session repair frees the failed kept bits and asks again.
const MAX_SESSION_ATTEMPTS: usize = 8;

/// Queries of `session` that reached its solver since it had made `before`.
fn calls_since(session: &dyn Session, before: u64) -> u32 {
    u32::try_from(session.solver_calls() - before).unwrap_or(u32::MAX)
}

/// How a test was completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Route {
    /// Propagation and greedy decisions alone.
    Propagation,
    /// The solver decided the residual problem.
    Solver,
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
    /// Repair only: kept bits (of the delta) that survived into the test.
    pub kept: usize,
    /// Repair only: the kept bits were all dropped and a fresh solution taken instead.
    pub fresh: bool,
}

/// Why no test came out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Failure {
    /// No test exists with what was fixed (for a fresh solution: the formula is unsatisfiable).
    Unsat,
    /// The solver gave up (time-out), with its reason.
    Unknown(String),
}

/// A solver lane: its session, and how propagation has fared as the first try at its
/// repairs and fresh solutions.
pub struct Lane<'a> {
    /// The lane's session, kept across rounds.
    pub session: Box<dyn Session + 'a>,
    propagation: PropagationFirst,
    limit: RepairLimit,
}

impl<'a> Lane<'a> {
    /// A lane answering through `session`.
    pub fn new(session: Box<dyn Session + 'a>) -> Self {
        Lane {
            session,
            propagation: PropagationFirst::default(),
            limit: RepairLimit::default(),
        }
    }
}

/// The conflict limit of a lane's repair queries, from how its last 32 queries ended. Where
/// repairs are searches the candidate's phases hold far from any model, most queries hit the
/// limit whatever it is, and each costs the whole limit: on parity.sk_11_11 half of them did
/// (61% of the repair time, 39 ms each), and 100 conflicts instead of 250 gave 15-24% more
/// tests in 60 s there and on karatsuba.sk_7_41 (session 18). Where a query that needs 100 to
/// 250 conflicts still finds a model, 100 would free its kept bits instead (LoginService2 and
/// 20.sk_1_51 took 1.3-1.4x with 100 for every lane); their queries never hit 250, so their
/// lanes keep it. Counts, not times, decide, so the suite stays a function of the seed and the
/// lanes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct RepairLimit {
    /// One bit a query, the latest lowest: set where it hit the limit.
    recent: u32,
}

impl RepairLimit {
    /// Hits among the last 32 queries from which the lower limit applies: one in four.
    const HITS_TO_LOWER: u32 = 8;

    fn conflicts(&self) -> u32 {
        if self.recent.count_ones() >= Self::HITS_TO_LOWER {
            HARD_REPAIR_CONFLICTS
        } else {
            REPAIR_CONFLICTS
        }
    }

    fn record(&mut self, hit_the_limit: bool) {
        self.recent = (self.recent << 1) | u32::from(hit_the_limit);
    }
}

/// A share of the formula's variables, as (part, whole).
type OpenShare = (usize, usize);

/// What a lane's session must leave open for a repair to try propagation first: it still
/// decides most of the formula (see `PropagationFirst`).
const REPAIR_OPEN_SHARE: OpenShare = (1, 2);

/// What it must leave open for a fresh solution to: nearly everything, as on the circuits
/// (97-100% after the first query; blasted_case_1_b12_2 75%). The sketches' sessions leave
/// 3-87% open after theirs, and there propagation completes fresh solutions at ten times a
/// query's cost (17.sk_3_45: 0.2 against 0.02 ms); its successes also kept the lane's
/// repairs on propagation, and the session, asked nothing more, never settled the rest:
/// 17.sk_3_45 took 2.5x CMSGen's time.
const FRESH_OPEN_SHARE: OpenShare = (19, 20);

/// Whether a lane tries propagation before a query (along the candidate for a repair, along
/// random values for a fresh solution; the two share the record). Where the session still
/// decides most of the formula (a circuit, whose inputs determine the rest), propagation
/// completes 9 candidates in 10 for less than a query: 1000-test runs of the
/// circuits took 0.79-0.99x as long (7 of 8; alternating medians of 9). Where the solver
/// has settled most of the formula (a sketch) a query is cheaper, and where propagation
/// mostly fails (blasted_squaring7: 42 of 1,274) it is wasted: tried first on every repair,
/// LoginService2.sk_23_36 took 1.7x and 70.sk_3_40 3x. Counts, not times, decide, so the
/// suite stays a function of the seed and the lanes.
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

/// How refuting kept bits before the oracle has fared, shared by the threads. The refuter
/// proves only contradictions the oracle would find too, so whether it runs changes no test,
/// only the time: times, not counts, may decide here. It runs while the refutations it made
/// and those it left to the oracle (the oracle's refusals of kept bits as unsatisfiable), at
/// the oracle's mean cost of a refusal, come to twice its own time, and while it finds any
/// when the oracle has refused none. Counting the refusals lets a refuter switched off after
/// a warm-up without refutations come back when refutable kept bits turn up: with two ranks
/// on LoginService2.sk_23_36 (seed 1), one rank's first 32 tries refuted nothing while the
/// other's refuted 38, and the first, off for good under the rule that counted only its own
/// refutations, left 46 refutations to splr (0.7 s). Seed 1, one rank, two runs at a time:
/// isolateRightmost.sk_7_481 1,492 refutations for 1.7 s, leaving the oracle 1;
/// doublyLinkedList.sk_8_37 all 920 for 0.9 s; 20.sk_1_51 345 for 0.6 s;
/// LoginService2.sk_23_36 84 in 325 tries for 0.5 s; enqueueSeqSK.sk_10_42 83 in 563 tries
/// for 2.8 s.
#[derive(Debug, Default)]
struct RefutingRecord {
    tries: AtomicU64,
    refuting_nanos: AtomicU64,
    /// Tries that refuted the kept bits.
    refutations: AtomicU64,
    /// Oracle calls on a repair's kept bits that found them unsatisfiable, and their time.
    oracle_refusals: AtomicU64,
    oracle_refusal_nanos: AtomicU64,
}

impl RefutingRecord {
    /// Tries always made, to measure.
    const WARM_UP: u64 = 32;

    fn worth_trying(&self) -> bool {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let (tries, refutations) = (load(&self.tries), load(&self.refutations));
        if tries < Self::WARM_UP {
            return true;
        }
        let refusals = load(&self.oracle_refusals);
        if refusals == 0 {
            // The refuter found every refutation, or there were none to find.
            return refutations > 0;
        }
        let refutable = u128::from(refutations + refusals);
        let spared =
            refutable * u128::from(load(&self.oracle_refusal_nanos)) / u128::from(refusals);
        spared >= 2 * u128::from(load(&self.refuting_nanos))
    }

    fn record_try(&self, refuted: bool, took: Duration) {
        self.tries.fetch_add(1, Ordering::Relaxed);
        self.refutations
            .fetch_add(u64::from(refuted), Ordering::Relaxed);
        self.refuting_nanos
            .fetch_add(nanos(took), Ordering::Relaxed);
    }

    fn record_oracle_refusal(&self, took: Duration) {
        self.oracle_refusals.fetch_add(1, Ordering::Relaxed);
        self.oracle_refusal_nanos
            .fetch_add(nanos(took), Ordering::Relaxed);
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Shared, read-only context for completing tests on any thread.
pub struct Completer<'a> {
    cnf: &'a Cnf,
    pub(super) checker: &'a Checker<'a>,
    watches: Watches,
    oracle: &'a dyn Oracle,
    pub(super) projection: Vec<usize>,
    /// Per variable: named by `c ind` (all false when the formula names none).
    in_support: Vec<bool>,
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
        let mut in_support = vec![false; cnf.num_vars()];
        for &v in cnf.independent_support() {
            in_support[v as usize - 1] = true;
        }
        let mut decision_order = projection.clone();
        if !cnf.independent_support().is_empty() {
            decision_order.extend((0..cnf.num_vars()).filter(|&v| !in_support[v]));
        }
        Completer {
            cnf,
            checker,
            watches: Watches::new(cnf),
            oracle,
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
            if let Some(done) =
                self.propagation_first(prop, lane, &[], &preferred, FRESH_OPEN_SHARE)
            {
                return Ok(done);
            }
            return self.fresh_in_session(lane.session.as_mut(), &preferred);
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
                Err(Failure::Unknown(_)) if !self.remaining().is_zero() => solver_calls += 1,
                result => {
                    return result.map(|mut done| {
                        done.solver_calls += solver_calls;
                        done
                    })
                }
            }
        }
        unreachable!("the last budget is the time remaining")
    }

    /// A model near `preferred` from a session, under escalating conflict limits. Past the
    /// first limit, `preferred` steers only the independent support (where the formula names
    /// one): random phases on every variable can hold the search far from any model, and a
    /// fresh solution of karatsuba.sk_7_41 took seconds to minutes.
    fn fresh_in_session(
        &self,
        session: &mut dyn Session,
        preferred: &Assignment,
    ) -> Result<Completed, Failure> {
        let limits = FRESH_CONFLICTS.iter().map(|&c| Some(c)).chain([None]);
        let mut why = String::from("time limit reached");
        let calls_before = session.solver_calls();
        for (attempt, limit) in limits.enumerate() {
            if self.expired() {
                break;
            }
            let steering = if attempt > 0 && self.projection.len() < self.cnf.num_vars() {
                Steering::Only(&self.projection)
            } else {
                Steering::All
            };
            match session.solve(&[], preferred, steering, limit) {
                Answer::Model(test) => {
                    return Ok(Self::solved(test, calls_since(session, calls_before)))
                }
                Answer::Refuted(_) => return Err(Failure::Unsat),
                Answer::Unknown(reason) => why = reason,
            }
        }
        Err(Failure::Unknown(why))
    }

    /// A session's model as a completed test (checked against every clause where it joins a
    /// suite).
    fn solved(test: Assignment, solver_calls: u32) -> Completed {
        Completed {
            test,
            route: Route::Solver,
            solver_calls,
            kept: 0,
            fresh: false,
        }
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
        if let Some(lane) = lane {
            if let Some(mut done) =
                self.propagation_first(prop, lane, &kept, candidate, REPAIR_OPEN_SHARE)
            {
                done.kept = surviving(&kept, &done.test);
                return Ok(done);
            }
            return self.repair_in_session(lane.session.as_mut(), &mut lane.limit, candidate, kept);
        }
        let (mut solver_calls, mut halvings) = (0, 0);
        // The last attempt keeps no bit but still prefers the candidate's values.
        for _ in 0..=MAX_HALVINGS + 1 {
            let budget = self.remaining().min(REPAIR_SOLVER_TIME);
            let thread_prop = prop.get_or_insert_with(|| self.propagator());
            match self.repair_attempt(thread_prop, &kept, candidate, rng.gen(), budget) {
                Ok(mut done) => {
                    done.solver_calls += solver_calls;
                    done.kept = surviving(&kept, &done.test);
                    return Ok(done);
                }
                // Kept bits that the refuter or the solver refutes, or that the solver cannot
                // settle quickly, are freed by half.
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
    /// phases. A refutation frees exactly the failed kept bits; a query that hits its
    /// conflict limit (the lane's `limit`) frees half of them.
    fn repair_in_session(
        &self,
        session: &mut dyn Session,
        limit: &mut RepairLimit,
        candidate: &Assignment,
        mut kept: Vec<Lit>,
    ) -> Result<Completed, Failure> {
        let calls_before = session.solver_calls();
        for _ in 0..MAX_SESSION_ATTEMPTS {
            if self.expired() {
                return Err(Failure::Unknown("time limit reached".into()));
            }
            let answer = session.solve(&kept, candidate, Steering::All, Some(limit.conflicts()));
            limit.record(matches!(answer, Answer::Unknown(_)));
            match answer {
                Answer::Model(test) => {
                    let mut done = Self::solved(test, calls_since(session, calls_before));
                    done.kept = kept.len();
                    return Ok(done);
                }
                Answer::Refuted(failed) if failed.is_empty() => return Err(Failure::Unsat),
                Answer::Refuted(failed) => kept.retain(|l| !failed.contains(l)),
                Answer::Unknown(_) if !kept.is_empty() => kept.truncate(kept.len() / 2),
                Answer::Unknown(_) => break,
            }
        }
        let mut done = self.fresh_in_session(session, candidate)?;
        done.solver_calls = calls_since(session, calls_before);
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
        Ok(Self::solved(test, 1))
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
        let support_named = self.projection.len() < self.cnf.num_vars();
        if support_named && !kept.is_empty() && self.refuting.worth_trying() {
            let started = Instant::now();
            let refuted = self.refutes(prop, kept);
            self.refuting.record_try(refuted, started.elapsed());
            if refuted {
                return Err((Failure::Unsat, 0));
            }
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
        Ok(Self::solved(test, 1))
    }

    /// Whether the refuter proves that the kept bits `prop` holds contradict the formula the
    /// oracle sees. Those `fix` dropped (propagation refuted them) are false in `prop` and
    /// left out: the oracle is asked without them too. The formula is the eliminated one
    /// where there is one: its models are the formula's, projected, and kept bits lie on the
    /// support, which elimination keeps.
    fn refutes(&self, prop: &Propagator, kept: &[Lit]) -> bool {
        let held: Vec<Lit> = kept
            .iter()
            .copied()
            .filter(|&lit| prop.value(var_index(lit)) == Some(lit > 0))
            .collect();
        let taken = self
            .refuters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut refuter = taken.unwrap_or_else(|| {
            Refuter::new(self.elimination().map_or(self.cnf, Elimination::reduced))
        });
        let refuted = refuter.refutes(&held, REFUTING_CONFLICTS, &|| self.expired());
        let mut refuters = self.refuters.lock().unwrap_or_else(|e| e.into_inner());
        refuters.push(refuter);
        refuted
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
            // Kept preferences: a residual near a given assignment (a repair), not a search
            // from scratch. A formula eliminated once needs no more than light elimination
            // even from scratch (LoginService2.sk_23_36: fresh solutions p50 28 ms, against
            // 41 ms with splr's own).
            preprocessing: if keep_preferences || elimination.is_some() {
                Preprocessing::Light
            } else {
                Preprocessing::Full
            },
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
    use crate::oracle::Splr;

    /// x1 → x2 → x3, and ¬x3 ∨ ¬x4.
    fn chain() -> Cnf {
        Cnf::from_clauses(5, &[vec![-1, 2], vec![-2, 3], vec![-3, -4]])
    }

    /// Candidate 1 0 0 1 1 of `chain` is invalid; its delta keeps x1 = 1, so x2 = x3 = 1 and
    /// x4 = 0 follow.
    fn invalid_candidate_keeping_x1() -> (Assignment, Assignment) {
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

    proptest::proptest! {
        /// The refuter before the oracle changes the time a repair takes, never its test: it
        /// is left to timings (`RefutingRecord`) only because of that.
        #[test]
        fn repairs_are_the_same_with_the_refuter_and_without(
            clauses in crate::testing::arbitrary_clauses(10, 4, 16),
            k in 1i32..=6,
            gadget in proptest::collection::vec(1i32..=10, 3),
            candidate in proptest::collection::vec(proptest::prelude::any::<bool>(), 10),
            delta in proptest::collection::vec(proptest::prelude::any::<bool>(), 10),
            seed in 0u64..1000,
        ) {
            // Random clauses of 2 or 3 literals, and the refutation of `kept_bits_the_refuter_
            // refutes_are_freed_without_asking_the_oracle` under the kept support variable k:
            // beyond propagation, where the refuter matters.
            let (a, b, c) = (gadget[0], gadget[1], gadget[2]);
            proptest::prop_assume!([k, a, b, c].iter().collect::<std::collections::HashSet<_>>().len() == 4);
            let mut clauses: Vec<Vec<Lit>> = clauses.into_iter().filter(|c| c.len() > 1).collect();
            clauses.extend([vec![-k, a, b], vec![-k, a, -b], vec![-k, -a, c], vec![-k, -a, -c]]);
            let mut cnf = Cnf::from_clauses(10, &clauses);
            cnf.set_independent_support((1..=6).collect());
            let checker = Checker::new(&cnf);
            let bits = |values: &[bool]| {
                let text: String = values.iter().map(|&b| if b { '1' } else { '0' }).collect();
                Assignment::from_bit_string(&text).unwrap()
            };
            let (mut candidate, mut delta) = (bits(&candidate), bits(&delta));
            // The candidate keeps k.
            candidate.set(k as usize - 1, true);
            delta.set(k as usize - 1, true);
            let repair = |refuting: bool| {
                let completer = Completer::new(&checker, &Splr, Budget::unlimited());
                if !refuting {
                    completer.refuting.tries.store(RefutingRecord::WARM_UP, Ordering::Relaxed);
                }
                let repaired = completer.repair(&mut None, None, &candidate, &delta, seed);
                let tries = completer.refuting.tries.load(Ordering::Relaxed);
                (repaired.map(|done| done.test.to_bit_string()), tries)
            };
            let ((with, tries), (without, _)) = (repair(true), repair(false));
            proptest::prop_assert_eq!(with, without, "{} tries", tries);
        }
    }

    /// A refuter switched off after a warm-up without refutations comes back once the
    /// oracle keeps refusing kept bits it could have refuted.
    #[test]
    fn a_refuter_switched_off_comes_back_when_the_oracle_refuses_kept_bits() {
        let record = RefutingRecord::default();
        for _ in 0..RefutingRecord::WARM_UP {
            assert!(record.worth_trying());
            record.record_try(false, Duration::from_millis(1));
        }
        record.record_oracle_refusal(Duration::from_millis(20));
        assert!(
            !record.worth_trying(),
            "32 ms of tries against one 20 ms refusal"
        );
        for _ in 0..3 {
            record.record_oracle_refusal(Duration::from_millis(20));
        }
        assert!(
            record.worth_trying(),
            "80 ms of refusals against 32 ms of tries"
        );
    }

    #[test]
    fn kept_bits_the_refuter_refutes_are_freed_without_asking_the_oracle() {
        // Under x4 every value of x1 falsifies a clause, which neither propagation nor
        // greedy completion can tell; x5 = x1 lies outside the support x1..x4.
        let mut clauses: Vec<Vec<Lit>> = [[1, 2], [1, -2], [-1, 3], [-1, -3]]
            .iter()
            .map(|pair| vec![-4, pair[0], pair[1]])
            .collect();
        clauses.extend([vec![-5, 1], vec![5, -1]]);
        let mut cnf = Cnf::from_clauses(5, &clauses);
        cnf.set_independent_support(vec![1, 2, 3, 4]);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let candidate = Assignment::from_bit_string("00010").unwrap();
        let delta = Assignment::from_bit_string("00010").unwrap();
        let done = completer
            .repair(&mut None, None, &candidate, &delta, 3)
            .unwrap();
        assert!(checker.satisfies(&done.test));
        assert!(!done.test.get(3), "x4 contradicts the formula");
        assert_eq!((done.solver_calls, done.kept), (0, 0));
        assert_eq!(done.route, Route::Propagation);
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
        assert_eq!(done.kept, 1);
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
        assert_eq!(done.kept, 1);
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

    /// A session that gives up on its first query and then answers `model`, noting how each
    /// query was steered.
    struct GivesUpOnce {
        model: Assignment,
        steered: Vec<Option<Vec<usize>>>,
    }

    impl Session for GivesUpOnce {
        fn solver_calls(&self) -> u64 {
            self.steered.len() as u64
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
            self.steered.push(match steering {
                Steering::All => None,
                Steering::Only(vars) => Some(vars.to_vec()),
            });
            if self.steered.len() == 1 {
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

    impl Session for Answers {
        fn solver_calls(&self) -> u64 {
            self.calls
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
    /// only the independent support (where the formula names one).
    #[test]
    fn a_fresh_solution_that_gives_up_is_steered_on_the_support_alone() {
        for support in [vec![], vec![1, 4]] {
            let mut cnf = chain();
            cnf.set_independent_support(support.clone());
            let checker = Checker::new(&cnf);
            let completer = Completer::new(&checker, &Splr, Budget::unlimited());
            let mut session = GivesUpOnce {
                model: Assignment::from_bit_string("11100").unwrap(),
                steered: Vec::new(),
            };
            let preferred = Assignment::from_bit_string("01011").unwrap();
            let done = completer
                .fresh_in_session(&mut session, &preferred)
                .unwrap();
            assert_eq!(done.test.to_bit_string(), "11100");
            assert_eq!(done.solver_calls, 2);
            let expected = if support.is_empty() {
                None
            } else {
                Some(vec![0, 3])
            };
            assert_eq!(session.steered, vec![None, expected]);
        }
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

    /// A query refuted from the session's remembered cores is not a solver call.
    #[cfg(feature = "cadical")]
    #[test]
    fn a_refutation_from_memory_is_not_counted_as_a_solver_call() {
        use crate::oracle::{cadical::Cadical, SessionBackend};
        // x1 → x2 → x3, ¬x3 ∨ ¬x4: keeping x1 and x4 fails on both, and the retry keeps none.
        let cnf = chain();
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        let candidate = Assignment::from_bit_string("10010").unwrap();
        let mut repair = || {
            completer
                .repair_in_session(
                    session.as_mut(),
                    &mut RepairLimit::default(),
                    &candidate,
                    vec![1, 4],
                )
                .unwrap()
        };
        let first = repair();
        assert!(checker.satisfies(&first.test));
        assert_eq!(first.solver_calls, 2, "refuted, then solved");
        let again = repair();
        assert!(checker.satisfies(&again.test));
        assert_eq!(again.solver_calls, 1, "refuted from memory, then solved");
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
