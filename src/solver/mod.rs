//! Solver oracles, by capability.
//!
//! [`Oracle`] answers one self-contained [`Query`] (splr 0.17, rebuilt for every query: it has
//! no seed, no assumptions and no phase API). [`IncrementalSolver`] is a formula loaded once that
//! answers many queries under assumptions and preferred phases, reporting the assumptions
//! that failed; [`IncrementalBackend`] opens one per solver lane (CaDiCaL, with the `cadical`
//! feature). A session's answers depend on what it solved before, so callers give each
//! lane's session its tasks in a fixed order (see `sampler::work`).

#[cfg(feature = "cadical")]
pub mod cadical;
pub mod cores;
pub mod differential;
pub mod eliminate;
pub mod native;
pub mod splr;

pub use self::splr::Splr;

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{Cnf, Lit};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A satisfiability question: clauses over variables `1..=num_vars`.
pub struct Query<'a> {
    /// Variables of the formula, numbered from 1.
    pub num_vars: usize,
    /// The clauses the solver gets (the formula plus any units the query adds).
    pub clauses: &'a [Vec<Lit>],
    /// The value the solver should try first for each variable (from 0); `None` leaves it free.
    /// splr starts from them and saves phases as it searches (see [`Splr`]).
    pub preferred: Option<&'a [bool]>,
    /// Seeds the renaming of variables and, without `preferred`, random preferred values.
    pub seed: u64,
    /// Give up after this long (unknown), if set.
    pub timeout: Option<Duration>,
    /// Give up at once (unknown) when this is set: SIGINT and SIGTERM must end a run within a
    /// second, and a solver without a terminate hook (splr) is then left to finish alone.
    pub interrupt: Option<&'a AtomicBool>,
}

impl<'a> Query<'a> {
    /// The question whether `clauses` over `num_vars` variables has a model, with nothing
    /// preferred and no limit.
    pub fn new(num_vars: usize, clauses: &'a [Vec<Lit>], seed: u64) -> Self {
        Query {
            num_vars,
            clauses,
            preferred: None,
            seed,
            timeout: None,
            interrupt: None,
        }
    }
}

/// What the solver found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A model: the value of each variable (from 0).
    Sat(Vec<bool>),
    /// No model exists.
    Unsat,
    /// Gave up: time-out or an internal error of the solver, with the reason.
    Unknown(String),
}

/// Anything that can answer a [`Query`]; shared by the threads of a run.
pub trait Oracle: Sync {
    /// A model of the query's clauses (its preferred values tried first), unsat, or unknown.
    fn solve(&self, query: &Query) -> Outcome;
}

/// What a session found under assumptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A model of the whole formula with every assumption true.
    Model(Assignment),
    /// No model has all the assumptions: these failed together (a subset of them, from the
    /// solver's final conflict); empty when the formula itself is unsatisfiable.
    Refuted(Vec<Lit>),
    /// Gave up: the conflict limit, the budget, or a solver error.
    Unknown(String),
}

/// Which variables a session query's phases steer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steering<'p> {
    /// Every variable is decided first as the phases give it.
    All,
    /// Only these variables (from 0); the others are decided first as in the session's last
    /// model (before any, as the solver chooses). Random phases on every variable can hold
    /// the search far from any model (a fresh solution of karatsuba.sk_7_41 took seconds);
    /// random phases on the independent support alone still vary what the tests are made of.
    Only(&'p [usize]),
    /// Every variable's phase as given, and these variables (from 0) decided before any
    /// other, in this order: a fresh solution then draws the independent support first, as
    /// a uniform sampler would, instead of getting it by propagation from whatever the
    /// activity order decided first. A session that cannot order its decisions takes it as
    /// `All`.
    DecideFirst(&'p [usize]),
}

/// A formula loaded once, answering many queries: one per solver lane, used by one thread at
/// a time.
pub trait IncrementalSolver: Send {
    /// A model with every literal of `assumptions` true, deciding each variable `steering`
    /// names first as `phases` gives it, within `conflicts` (no limit when `None`) and the
    /// session's budget.
    fn solve(
        &mut self,
        assumptions: &[Lit],
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Answer;

    /// [`IncrementalSolver::solve`] keeping what it can of `assumptions`: those found to fail are
    /// dropped from it. Here the first set that fails together ends the query, dropped and
    /// answered as `Refuted`, for the caller to ask again without it; a session may instead
    /// drop what fails and search on in the same query, answering `Refuted` only when the
    /// formula itself is unsatisfiable (native: [`crate::solver::native::search::Refuter::search_relaxing`]).
    fn solve_relaxing(
        &mut self,
        assumptions: &mut Vec<Lit>,
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Answer {
        let answer = self.solve(assumptions, phases, steering, conflicts);
        drop_refuted(assumptions, &answer);
        answer
    }

    /// Queries that reached the solver so far; one answered from what the session remembers
    /// (a known core) did not.
    fn solver_calls(&self) -> u64;

    /// Conflicts of the session's own searches so far: how hard its queries were, counted
    /// the same from run to run (a native query's part handed to splr is not counted).
    fn conflicts(&self) -> u64;

    /// Variables whose values the session's models do not all share: what a query still
    /// decides, once unit propagation and the solver's own root-level reasoning have fixed
    /// the rest.
    fn open_variables(&self) -> usize;
}

/// The solvers of a run: the oracle for one-shot questions and, when chosen, the backend
/// whose sessions do the sampler's solving.
#[derive(Clone, Copy)]
pub struct Solvers<'a> {
    /// One-shot queries: every backend has them.
    pub oracle: &'a dyn Oracle,
    /// Sessions that stay loaded, where the backend has them (native, cadical).
    pub sessions: Option<&'a dyn IncrementalBackend>,
    /// Solver lanes, each with its own session: task `i` of a list goes to lane `i mod
    /// lanes`, whose session sees its tasks in index order, so the suite depends on the seed
    /// and the lanes, not on threads or timing. Lanes bound how many threads solve at once;
    /// each holds the formula, and each starts cold.
    pub lanes: usize,
}

impl Solvers<'static> {
    /// splr alone, rebuilt for every query (`--solver splr`).
    pub fn splr() -> Self {
        Solvers {
            oracle: &Splr,
            sessions: None,
            lanes: 1,
        }
    }
}

/// Drops from `assumptions` those `answer` names as failing together, if it is a refutation.
fn drop_refuted(assumptions: &mut Vec<Lit>, answer: &Answer) {
    if let Answer::Refuted(failed) = answer {
        assumptions.retain(|lit| !failed.contains(lit));
    }
}

/// Opens sessions; shared by the threads of a run.
pub trait IncrementalBackend: Sync {
    /// The name `--solver` gives it.
    fn name(&self) -> &'static str;
    /// Loads `cnf` into a new session that stops when `budget` runs out.
    fn open<'a>(
        &self,
        cnf: &'a Cnf,
        budget: Budget<'a>,
    ) -> Result<Box<dyn IncrementalSolver + 'a>, String>;
}
