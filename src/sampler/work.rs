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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// Receives verdicts in task order; an error (say, the suite's file cannot be written) stops
/// the work.
pub type Deliver<'d> = dyn FnMut(Verdict) -> Result<(), SampleError> + 'd;

/// Runs tasks for the sampler, wherever they run.
pub trait Workforce {
    /// Hands `deliver` one verdict per task, in task order, each as soon as it and those
    /// before it are done, so that tests reach the suite's file as they are found.
    /// `centroids` are those `Task::Check` refers to.
    fn run(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError>;

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
        let mut verdicts = Vec::with_capacity(tasks.len());
        self.run_in_order(tasks, &mut |v| {
            verdicts.push(v);
            Ok(())
        })
        .expect("collecting verdicts cannot fail");
        verdicts
    }

    /// Does `tasks` on all threads of the current pool and hands each verdict to `deliver`
    /// in task order as soon as the tasks before it are done. Threads take tasks in index
    /// order, so verdicts wait for at most a task per thread; this thread works too and
    /// delivers between its tasks. After a delivery fails, tasks not started are skipped.
    pub fn run_in_order(
        &mut self,
        tasks: &[Task],
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        let started = Instant::now();
        let next_task = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let mut ready: BTreeMap<usize, (Verdict, Timing)> = BTreeMap::new();
        let mut delivered = 0;
        let mut outcome = Ok(());
        let mut timings = Vec::with_capacity(tasks.len());
        let this = &*self;
        let take = || {
            let i = next_task.fetch_add(1, Ordering::Relaxed);
            (i < tasks.len() && !failed.load(Ordering::Relaxed)).then_some(i)
        };
        let mut hand_over = |ready: &mut BTreeMap<usize, (Verdict, Timing)>| {
            while let Some((verdict, timing)) = ready.remove(&delivered) {
                delivered += 1;
                timings.push(timing);
                if outcome.is_ok() {
                    outcome = deliver(verdict);
                    if outcome.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                }
            }
        };
        rayon::in_place_scope(|scope| {
            let (sender, receiver) = crossbeam_channel::unbounded();
            for _ in 1..rayon::current_num_threads() {
                let sender = sender.clone();
                scope.spawn(move |_| {
                    let mut prop = this.completer.propagator();
                    while let Some(i) = take() {
                        if sender.send((i, this.one(&mut prop, &tasks[i]))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            let mut prop = this.completer.propagator();
            while let Some(i) = take() {
                ready.insert(i, this.one(&mut prop, &tasks[i]));
                ready.extend(receiver.try_iter());
                hand_over(&mut ready);
            }
            for (i, done) in receiver {
                ready.insert(i, done);
                hand_over(&mut ready);
            }
        });
        self.busy += started.elapsed();
        self.tasks += tasks.len() as u64;
        for (phase, elapsed) in timings.into_iter().flatten().flatten() {
            self.metrics.record(phase, elapsed);
        }
        outcome
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
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        self.worker.set_centroids(centroids);
        self.worker.run_in_order(&tasks, deliver)
    }

    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError> {
        Ok(vec![self.worker.report(0, rayon::current_num_threads())])
    }
}
