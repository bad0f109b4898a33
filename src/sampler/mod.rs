//! Sampling a formula: the Snap sampler (Fig. 2 of the paper, [`snap`]) and the QuickSampler
//! baseline ([`quick`]) beside it, on shared ground: the [`Suite`] every test enters through
//! (the full clause check), the completion and [`repair`] machinery, and the [`work`]force
//! that does Snap's tasks on this process's threads or on many ranks.
//!
//! Work inside a round runs on all rayon threads; every random choice is drawn from seeds
//! derived from `--seed`, round and index, so the same seed gives the same suite on any number
//! of threads (unless a time limit cuts a round short).

pub mod quick;
pub mod repair;
mod report;
pub mod snap;
mod suite;
pub mod task;
pub mod work;

pub use report::{
    PhaseSeconds, Report, RoundStats, SampleError, SolverCalls, StopReason, Throughput,
};
pub use snap::{SnapConfig, StopMetric};
pub use suite::{Observer, Suite};

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::solver::{Oracle, Solvers};
use crate::verify::Checker;
use std::sync::atomic::AtomicBool;
use work::{LocalWorkforce, Worker, Workforce};

/// Derives an independent seed for one piece of work (SplitMix64 finaliser).
pub fn derive_seed(seed: u64, stream: u64, index: u64) -> u64 {
    let mut z = seed
        ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The inputs of one sampling run, whoever does its tasks.
#[derive(Clone, Copy)]
pub struct Sampling<'a> {
    /// The formula, and the check every test passes.
    pub checker: &'a Checker<'a>,
    /// The solvers the tasks use.
    pub solvers: Solvers<'a>,
    /// Snap's parameters.
    pub config: &'a SnapConfig,
    /// An earlier run's suite to continue (each test a verified model): its tests count as
    /// found and as initial solutions, and are not handed to the observer again.
    pub resumed: &'a [Assignment],
    /// Set on SIGINT/SIGTERM: stop, keeping what was found.
    pub interrupt: &'a AtomicBool,
}

/// Runs Snap on the formula behind `checker` in this process, handing each new test to
/// `observer`.
pub fn sample(
    checker: &Checker,
    oracle: &dyn Oracle,
    config: &SnapConfig,
    observer: &mut dyn Observer,
    interrupt: &AtomicBool,
) -> Result<Report, SampleError> {
    let run = Sampling {
        checker,
        solvers: Solvers {
            oracle,
            ..Solvers::splr()
        },
        config,
        resumed: &[],
        interrupt,
    };
    sample_in_process(&run, observer)
}

/// Runs `run` on this process's rayon threads.
pub fn sample_in_process(
    run: &Sampling,
    observer: &mut dyn Observer,
) -> Result<Report, SampleError> {
    let budget = Budget::new(run.config.time_limit, run.interrupt);
    let worker = Worker::new(run.checker, run.solvers, budget);
    sample_with(
        &mut LocalWorkforce::new(worker, snap::shard::ShardStream::start),
        run,
        budget,
        observer,
    )
}

/// Runs `run` with its tasks done by `workforce`, until `budget` is spent: the budget the
/// workforce was given, so that both read one deadline.
pub fn sample_with(
    workforce: &mut dyn Workforce,
    run: &Sampling,
    budget: Budget,
    observer: &mut dyn Observer,
) -> Result<Report, SampleError> {
    let mut snap = snap::Snap::new(run.checker, run.config, budget);
    let result = snap.run(workforce, run.resumed, observer);
    // The ranks place the tests they kept and are stopped however the run ended, so that
    // none waits for work forever.
    let placed = observer.places().map(|places| workforce.place(places));
    let ranks = workforce.finish();
    let mut report = result?;
    placed?;
    report.ranks = ranks?;
    report.decoding_seconds = workforce.decoding_beside().as_secs_f64();
    let mut merged = snap.into_metrics();
    for rank in &report.ranks {
        merged.merge(&rank.metrics);
    }
    report.latency = merged.summary();
    Ok(report)
}
