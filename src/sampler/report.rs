//! What a Snap run reports: why it stopped, each round's figures, phase times, solver calls,
//! throughput and the ranks' work, as `--stats` writes them.

use crate::metrics::Quantiles;
use crate::sampler::work::RankReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// NCD improved by less than X in the last round: the paper's criterion.
    Converged,
    TimeLimit,
    MaxTests,
    MaxRounds,
    /// A round added no new test.
    NoNewTests,
    Interrupted,
}

/// Figures of one round (rounds count from 1; round 0 is the initial solutions).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RoundStats {
    pub round: usize,
    pub samples: usize,
    pub distinct_deltas: usize,
    pub repeated_delta_pairs: u64,
    pub centroids: usize,
    pub candidates: u64,
    pub valid_before_repair: u64,
    pub repaired: u64,
    pub failed_repairs: u64,
    pub skipped: u64,
    pub new_tests: usize,
    pub suite_size: usize,
    pub ncd: f64,
    /// C(X) − min C(x) in bytes: the numerator of Eq. 2.
    pub information: usize,
    /// Pairwise literal coverage of the suite over the NCD variables.
    pub coverage: f64,
    pub seconds: f64,
    /// Wall time the coordinator worked with no task out (deltas, k-means, candidates, NCD).
    pub coordinator_seconds: f64,
    /// The ranks' time on this round's tasks, summed over ranks.
    pub work_seconds: f64,
}

/// Wall time per phase, in seconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhaseSeconds {
    pub initial: f64,
    pub deltas: f64,
    pub clustering: f64,
    pub verify_repair: f64,
    pub ncd: f64,
    pub total: f64,
}

/// Solver calls by purpose.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SolverCalls {
    pub generate: u64,
    pub repair: u64,
}

/// Everything measured in a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub stop: StopReason,
    pub distinct_tests: usize,
    pub seconds: PhaseSeconds,
    /// The rounds' `coordinator_seconds` and `work_seconds`, summed: their ratio is how many
    /// ranks the run could use before the coordinator's time alone bounds it.
    pub coordinator_seconds: f64,
    pub work_seconds: f64,
    pub solver_calls: SolverCalls,
    /// Tests completed by propagation and greedy decisions, without the solver.
    pub completed_by_propagation: u64,
    pub candidates: u64,
    pub valid_before_repair: u64,
    pub valid_before_repair_percent: f64,
    pub repaired: u64,
    pub failed_repairs: u64,
    /// Repairs that had to drop every kept bit and take a fresh solution.
    pub fresh_fallbacks: u64,
    pub duplicates: u64,
    /// Completed tests that failed the final check of every clause and were not written
    /// (a solver's internal error; 0 in every run so far).
    pub invalid_dropped: u64,
    /// Variables NCD is measured on (the independent support, or all).
    pub ncd_variables: usize,
    pub rounds: Vec<RoundStats>,
    /// Why solver calls gave up, if any did (time-outs).
    pub unknown: Vec<String>,
    /// Tests taken from an earlier run's suite (see [`super::sample_with`]).
    pub resumed: usize,
    pub throughput: Throughput,
    /// Latency quantiles over all ranks, by phase.
    pub latency: BTreeMap<&'static str, Quantiles>,
    pub ranks: Vec<RankReport>,
}

/// Work done per second of the phases that did it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Throughput {
    /// Candidates verified or repaired per second of step 3b.
    pub candidates_per_second: f64,
    /// Distinct valid tests per second of the whole run.
    pub tests_per_second: f64,
}

/// Errors that end a run without a suite.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("the formula is unsatisfiable")]
    Unsat,
    #[error("no solution found: {0}")]
    Unknown(String),
    #[error("writing a test failed: {0}")]
    Output(#[from] std::io::Error),
    /// A rank failed or broke the protocol.
    #[error("distributed run failed: {0}")]
    Distribution(String),
}
