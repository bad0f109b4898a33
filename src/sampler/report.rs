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
    /// `--time-limit` passed.
    TimeLimit,
    /// The suite holds `--max-tests` tests.
    MaxTests,
    /// `--max-rounds` rounds ran.
    MaxRounds,
    /// A round added no new test.
    NoNewTests,
    /// SIGINT or SIGTERM.
    Interrupted,
}

/// Figures of one round (rounds count from 1; round 0 is the initial solutions).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RoundStats {
    /// 0 for the initial solutions, then 1, 2, …
    pub round: usize,
    /// Valid samples the round's deltas and centroids were taken from.
    pub samples: usize,
    /// Distinct non-zero deltas in the pool.
    pub distinct_deltas: usize,
    /// Sample pairs whose delta another pair shares (Fig. 5 of the paper).
    pub repeated_delta_pairs: u64,
    /// Centroids k-means gave (at most k).
    pub centroids: usize,
    /// Candidates checked (and repaired where needed).
    pub candidates: u64,
    /// Candidates that satisfied every clause as drawn.
    pub valid_before_repair: u64,
    /// Candidates repaired into a test.
    pub repaired: u64,
    /// Candidates no repair could complete (time-outs).
    pub failed_repairs: u64,
    /// Tasks not started because time ran out or the run was interrupted.
    pub skipped: u64,
    /// Tests the round added to the suite.
    pub new_tests: usize,
    /// Tests in the suite after the round.
    pub suite_size: usize,
    /// Eq. 2 on the suite after the round; NaN (null) when time ran out before it was measured.
    pub ncd: f64,
    /// C(X) − min C(x) in bytes: the numerator of Eq. 2.
    pub information: usize,
    /// Pairwise literal coverage of the suite over the NCD variables.
    pub coverage: f64,
    /// Wall time of the round, the next round's preparation included (it is made while this
    /// round's measures are taken), the wait for the round before's measures excluded (that
    /// is the round before's): with `Report::dropped_seconds`, the rounds' times add up to
    /// the run's.
    pub seconds: f64,
    /// The coordinator's own work: with no task out (deltas, k-means, candidates, reading
    /// NCD) and merging each verdict (deduplicating, handing the test to the observer and to
    /// the measuring thread; the clause check is made by the ranks, and the CLI's observer
    /// writes on a thread of its own).
    pub coordinator_seconds: f64,
    /// The ranks' time on this round's tasks, summed over ranks, merging excluded.
    pub work_seconds: f64,
    /// The part of `coordinator_seconds` spent merging verdicts, which goes on while ranks
    /// work: past `work_seconds / merge_seconds` ranks it alone outlasts their work.
    pub merge_seconds: f64,
    /// The part of `coordinator_seconds` spent encoding and sending messages to the ranks
    /// (0 in one process), which also goes on while they work; their messages are decoded
    /// beside it (`Report::decoding_seconds`).
    pub messaging_seconds: f64,
}

/// Wall time per phase, in seconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhaseSeconds {
    /// Step 1: the initial solutions.
    pub initial: f64,
    /// Step 2: delta pools.
    pub deltas: f64,
    /// Step 3a: k-means.
    pub clustering: f64,
    /// Step 3b: candidates checked and repaired, tests merged.
    pub verify_repair: f64,
    /// Step 4: measuring the suite (NCD's compression and the pairwise coverage, on a thread
    /// of their own beside the coordinator).
    pub ncd: f64,
    /// The whole run.
    pub total: f64,
}

/// Solver calls by purpose.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SolverCalls {
    /// Calls for initial solutions.
    pub generate: u64,
    /// Calls for repairs (a repair may take several; a session query refuted from a
    /// remembered core is not a call).
    pub repair: u64,
}

/// Everything measured in a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Why the run ended.
    pub stop: StopReason,
    /// Tests in the suite, resumed ones included.
    pub distinct_tests: usize,
    /// Wall time by phase.
    pub seconds: PhaseSeconds,
    /// The rounds' `coordinator_seconds` and `work_seconds`, summed: their ratio is how many
    /// ranks the run could use before the coordinator's time alone bounds it.
    pub coordinator_seconds: f64,
    /// See `coordinator_seconds`.
    pub work_seconds: f64,
    /// The rounds' `merge_seconds`, summed.
    pub merge_seconds: f64,
    /// The rounds' `messaging_seconds`, summed.
    pub messaging_seconds: f64,
    /// Time the relay thread beside the coordinator's (rank 0's under MPI, the in-process
    /// ranks' with `--ranks`) spent decoding the ranks' messages; 0 with no ranks.
    pub decoding_seconds: f64,
    /// Solver calls by purpose.
    pub solver_calls: SolverCalls,
    /// Tests completed by propagation and greedy decisions, without the solver.
    pub completed_by_propagation: u64,
    /// Failed repairs whose broken parts were taken from known tests, where the formula has
    /// parts that share no variable.
    pub completed_from_parts: u64,
    /// The rounds' candidates, summed.
    pub candidates: u64,
    /// The rounds' valid candidates before repair, summed.
    pub valid_before_repair: u64,
    /// `valid_before_repair` as a share of `candidates`.
    pub valid_before_repair_percent: f64,
    /// The rounds' repaired candidates, summed.
    pub repaired: u64,
    /// The rounds' failed repairs, summed.
    pub failed_repairs: u64,
    /// Candidates checked or repaired, then dropped (not in `candidates`): the stop rule
    /// ended the run after the round before theirs, the suite filled up before them, or they
    /// arrived once the time limit or an interrupt had ended the run.
    pub dropped_candidates: u64,
    /// Wall time of the round that ran while the last was measured and was then dropped: in
    /// no round's `seconds`.
    pub dropped_seconds: f64,
    /// Repairs that had to drop every kept bit and take a fresh solution.
    pub fresh_fallbacks: u64,
    /// The delta bits repairs were asked to keep (on the independent support, where the
    /// formula names one), summed over the repaired candidates.
    pub delta_bits_asked: u64,
    /// Those the repaired tests have (kept as asked, or taken again as the candidate's values
    /// once freed): how much of Step 3b's mutation survives repair.
    pub delta_bits_kept: u64,
    /// Completed tests already in the suite.
    pub duplicates: u64,
    /// Completed tests that failed the final check of every clause and were not written
    /// (a solver's internal error; 0 in every run so far).
    pub invalid_dropped: u64,
    /// Variables NCD is measured on (the independent support, or all).
    pub ncd_variables: usize,
    /// Each round's figures, round 0 first.
    pub rounds: Vec<RoundStats>,
    /// Why solver calls gave up, if any did (time-outs).
    pub unknown: Vec<String>,
    /// Tests taken from an earlier run's suite (see [`super::sample_with`]).
    pub resumed: usize,
    /// The rounds started before all N initial solutions were in, those being hard searches
    /// (see [`super::SnapConfig::early_start`]).
    pub started_early: bool,
    /// The coverage-directed step after the stop rule (`--small`); zeros without it.
    pub covering: crate::sampler::snap::cover::CoverReport,
    /// Work done per second.
    pub throughput: Throughput,
    /// Latency quantiles over all ranks, by phase.
    pub latency: BTreeMap<&'static str, Quantiles>,
    /// Each rank's work, rank 0 first.
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
    /// No test exists.
    #[error("the formula is unsatisfiable")]
    Unsat,
    /// No solution was found in time, and none was proved impossible.
    #[error("no solution found: {0}")]
    Unknown(String),
    /// SIGINT or SIGTERM came before the first test.
    #[error("interrupted before the first test")]
    Interrupted,
    /// The observer could not take a test (its file could not be written).
    #[error("writing a test failed: {0}")]
    Output(#[from] std::io::Error),
    /// A rank failed or broke the protocol.
    #[error("distributed run failed: {0}")]
    Distribution(String),
    /// A rank of the job cannot take part for its input (a formula its node lacks or cannot
    /// read); the message names the rank.
    #[error("{0}")]
    Refused(String),
}
