//! The units of a round's work and who does them.
//!
//! Each initial solution and each candidate is an independent [`Task`] whose [`Verdict`]
//! depends only on the formula, the round's centroids and the task itself (its seed included).
//! So the sampler hands lists of tasks to a [`Workforce`] and merges the verdicts in task
//! order: one process on its rayon threads ([`LocalWorkforce`]) and many ranks
//! ([`crate::distribute`]) give the same suite for the same seed.

use super::repair::{Completed, Completer, Failure};
use super::SampleError;
use crate::assignment::Assignment;
use crate::metrics::{Metrics, Phase, Quantiles};
use crate::oracle::Oracle;
use crate::propagate::Propagator;
use crate::verify::Checker;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One independent piece of work.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Task {
    /// Step 1: a fresh solution.
    Solve { seed: u64 },
    /// Step 3b: candidate `centroids[centroid] ⊕ delta`, repaired if it is not a model.
    Check {
        centroid: u32,
        delta: Assignment,
        seed: u64,
    },
}

/// What became of a task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Verdict {
    /// The candidate satisfied every clause as it was.
    Valid(Assignment),
    /// A solution from the solver or a repair, verified.
    Completed(Completed),
    Failed(Failure),
    /// Not started: the time limit passed or the run was interrupted.
    Skipped,
}

/// Runs tasks for the sampler, wherever they run.
pub trait Workforce {
    /// One verdict per task, in task order. `centroids` are those `Task::Check` refers to.
    fn run(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
    ) -> Result<Vec<Verdict>, SampleError>;

    /// Ends the work and returns each rank's figures (rank 0 first).
    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError>;
}

/// The work of one rank, as the sampler's report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RankReport {
    pub rank: usize,
    pub threads: usize,
    pub tasks: u64,
    /// Wall time spent on batches of tasks.
    pub busy_seconds: f64,
    /// Messages and bytes from the coordinator to this rank and back (0 in one process).
    pub messages: u64,
    pub bytes_to_rank: u64,
    pub bytes_from_rank: u64,
    pub latency: BTreeMap<&'static str, Quantiles>,
    /// Raw histograms, for merging; not written to the report.
    #[serde(skip)]
    pub metrics: Metrics,
}

/// Does tasks on the current rayon thread pool.
pub struct Worker<'a> {
    checker: &'a Checker<'a>,
    completer: Completer<'a>,
    centroids: Vec<Assignment>,
    /// Clauses each centroid falsifies, for checking candidates by their flips alone.
    violated: Vec<Vec<u32>>,
    deadline: Instant,
    interrupt: &'a AtomicBool,
    metrics: Metrics,
    tasks: u64,
    busy: Duration,
}

impl<'a> Worker<'a> {
    pub fn new(
        checker: &'a Checker<'a>,
        oracle: &'a dyn Oracle,
        deadline: Instant,
        interrupt: &'a AtomicBool,
    ) -> Self {
        Worker {
            checker,
            completer: Completer::new(checker, oracle, Some(deadline)),
            centroids: Vec::new(),
            violated: Vec::new(),
            deadline,
            interrupt,
            metrics: Metrics::default(),
            tasks: 0,
            busy: Duration::ZERO,
        }
    }

    pub fn set_centroids(&mut self, centroids: &[Assignment]) {
        if centroids != self.centroids.as_slice() {
            self.centroids = centroids.to_vec();
            let checker = self.checker;
            self.violated = centroids.par_iter().map(|c| checker.violated(c)).collect();
        }
    }

    /// Verdicts of `tasks`, in order, computed on all threads of the current pool.
    pub fn run(&mut self, tasks: &[Task]) -> Vec<Verdict> {
        let started = Instant::now();
        let timed: Vec<(Verdict, Timing)> = {
            let this = &*self;
            tasks
                .par_iter()
                .map_init(
                    || this.completer.propagator(),
                    |prop, task| this.one(prop, task),
                )
                .collect()
        };
        self.busy += started.elapsed();
        self.tasks += tasks.len() as u64;
        timed
            .into_iter()
            .map(|(verdict, timing)| {
                for (phase, elapsed) in timing.into_iter().flatten() {
                    self.metrics.record(phase, elapsed);
                }
                verdict
            })
            .collect()
    }

    /// This worker's figures so far.
    pub fn report(&self, rank: usize, threads: usize) -> RankReport {
        RankReport {
            rank,
            threads,
            tasks: self.tasks,
            busy_seconds: self.busy.as_secs_f64(),
            messages: 0,
            bytes_to_rank: 0,
            bytes_from_rank: 0,
            latency: self.metrics.summary(),
            metrics: self.metrics.clone(),
        }
    }

    fn one(&self, prop: &mut Propagator, task: &Task) -> (Verdict, Timing) {
        if Instant::now() >= self.deadline || self.interrupt.load(Ordering::Relaxed) {
            return (Verdict::Skipped, [None, None]);
        }
        let verdict = |result: Result<Completed, Failure>| match result {
            Ok(done) => Verdict::Completed(done),
            Err(failure) => Verdict::Failed(failure),
        };
        match task {
            Task::Solve { seed } => {
                let t = Instant::now();
                let result = self.completer.fresh(prop, *seed);
                (
                    verdict(result),
                    [Some((Phase::InitialSolve, t.elapsed())), None],
                )
            }
            Task::Check {
                centroid,
                delta,
                seed,
            } => {
                let t = Instant::now();
                let centroid = *centroid as usize;
                let test = self.centroids[centroid].xor(delta);
                let valid =
                    self.checker
                        .satisfies_after_flips(&self.violated[centroid], &test, delta);
                let verify = Some((Phase::Verify, t.elapsed()));
                if valid {
                    return (Verdict::Valid(test), [verify, None]);
                }
                let t = Instant::now();
                let result = self.completer.repair(prop, &test, delta, *seed);
                (
                    verdict(result),
                    [verify, Some((Phase::Repair, t.elapsed()))],
                )
            }
        }
    }
}

/// Latencies measured on one task.
type Timing = [Option<(Phase, Duration)>; 2];

/// All work in this process, on the global rayon pool: the single-rank case.
pub struct LocalWorkforce<'a> {
    worker: Worker<'a>,
}

impl<'a> LocalWorkforce<'a> {
    pub fn new(worker: Worker<'a>) -> Self {
        LocalWorkforce { worker }
    }
}

impl Workforce for LocalWorkforce<'_> {
    fn run(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
    ) -> Result<Vec<Verdict>, SampleError> {
        self.worker.set_centroids(centroids);
        Ok(self.worker.run(&tasks))
    }

    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError> {
        Ok(vec![self.worker.report(0, rayon::current_num_threads())])
    }
}
