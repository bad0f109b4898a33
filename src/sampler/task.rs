//! The sampler's work vocabulary, shared by the sampler, its workforces and the ranks'
//! messages: a [`Task`] and its [`Verdict`], whether the sampler wants more ([`Demand`]),
//! how verdicts reach it ([`Deliver`]), and what a sharded round is and reports
//! ([`ShardPlan`], [`Drawn`]).

use super::repair::{Completed, Failure, Route};
use super::SampleError;
use crate::assignment::Assignment;
use serde::{Deserialize, Serialize};

/// One independent piece of work.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Task {
    /// Step 1: a fresh solution.
    Solve {
        /// Seeds the solution's phases.
        seed: u64,
    },
    /// Step 3b: candidate `centroids[centroid] ⊕ delta`, repaired if it is not a model.
    Check {
        /// Index of the centroid in the round's list.
        centroid: u32,
        /// `δi ∨ δj`.
        delta: Assignment,
        /// Seeds the repair.
        seed: u64,
    },
}

/// What became of a task.
#[derive(Debug, Clone, Serialize, Deserialize)]
///
/// A test comes with its [`Assignment::fingerprint`], worked out by the worker that made it:
/// the suite finds repeats by fingerprint, and hashing the test on the coordinator was a
/// ninth of merging it (70.sk_3_40, sharded).
pub enum Verdict {
    /// The candidate satisfied every clause as it was.
    Valid {
        /// The candidate.
        test: Assignment,
        /// The test's fingerprint.
        fingerprint: u64,
    },
    /// A solution from the solver or a repair, checked against every clause by the worker.
    Completed {
        /// The solution and how it was made.
        done: Completed,
        /// The test's fingerprint.
        fingerprint: u64,
    },
    /// A test the rank kept in its part of the suite's file ([`crate::testfile::Parts`]): a
    /// sharded run over several ranks that writes its suite to a file. The test stays there;
    /// the coordinator gets what it needs to admit it and place it.
    Kept {
        /// The rank whose part holds it.
        rank: u32,
        /// The test's fingerprint.
        fingerprint: u64,
        /// Its number in the part and its line's length; `None` for a test the rank started
        /// from (one of the suite's already).
        place: Option<(u64, u32)>,
        /// How a repair made it; `None` for a candidate valid as it was.
        repaired: Option<Repaired>,
    },
    /// A solution that failed the check against every clause (a solver's internal error):
    /// counted, never written.
    Invalid,
    /// No test came out.
    Failed(Failure),
    /// Not started: the time limit passed or the run was interrupted.
    Skipped,
}

/// A repair's figures, without its test ([`Verdict::Kept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repaired {
    /// How it was completed.
    pub route: Route,
    /// Solver calls it took.
    pub solver_calls: u32,
    /// The delta's bits it was asked to keep, and how many it kept.
    pub asked: usize,
    /// See [`Completed::kept`].
    pub kept: usize,
    /// Its kept bits were all dropped and a fresh solution taken instead.
    pub fresh: bool,
}

impl From<&Completed> for Repaired {
    fn from(done: &Completed) -> Self {
        Repaired {
            route: done.route,
            solver_calls: done.solver_calls,
            asked: done.asked,
            kept: done.kept,
            fresh: done.fresh,
        }
    }
}

/// Whether the sampler wants more verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Demand {
    /// Go on.
    More,
    /// The suite is full, or the run stops: tasks not started (or not sent to a rank) are
    /// dropped, neither done nor delivered, so a run capped by `--max-tests` does not repair
    /// candidates it has no room for; those already under way still deliver.
    Enough,
}

/// Receives verdicts in task order, those ready together at once (a burst: a rank's message,
/// the tasks done while this thread did one), and takes every one of them unless it fails;
/// an error (say, the suite's file cannot be written) stops the work. The sampler times its
/// merging a burst at a time: read twice a verdict, the clock was a quarter of what merging
/// a test of 70.sk_3_40 cost.
pub type Deliver<'d> =
    dyn FnMut(&mut dyn Iterator<Item = Verdict>) -> Result<Demand, SampleError> + 'd;

/// What steps 2 and 3a made of a round's samples: its figures, summed over the ranks in a
/// sharded round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    /// Distinct deltas in the pool.
    pub distinct_deltas: usize,
    /// Sample pairs whose delta another pair had already.
    pub repeated_delta_pairs: u64,
    /// Centroids.
    pub centroids: usize,
    /// Seconds building the pool.
    pub deltas_seconds: f64,
    /// Seconds clustering.
    pub clustering_seconds: f64,
    /// Seconds drawing the round, candidates included.
    pub seconds: f64,
}

impl Drawn {
    /// Another rank's figures added to these.
    pub fn add(&mut self, other: &Drawn) {
        self.distinct_deltas += other.distinct_deltas;
        self.repeated_delta_pairs += other.repeated_delta_pairs;
        self.centroids += other.centroids;
        self.deltas_seconds += other.deltas_seconds;
        self.clustering_seconds += other.clustering_seconds;
        self.seconds += other.seconds;
    }
}

/// What a rank needs to draw rounds of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardPlan {
    /// The run's `--seed`.
    pub seed: u64,
    /// N: samples a round draws from, and candidates per centroid.
    pub samples: usize,
    /// k: clusters.
    pub clusters: usize,
    /// Removal streams of the NCD share a rank measures ([`crate::diversity::RunningNcd`]).
    pub ncd_removals: usize,
    /// A rank may do its next round before the coordinator asks for it. Not when tasks
    /// follow the rounds (the cover step of `--small`): they run in the ranks' solvers, which
    /// a round done ahead and cut short would leave as timing had it.
    pub ahead: bool,
}
