//! The units of a round's work and who does them.
//!
//! Each initial solution and each candidate is an independent [`Task`] whose [`Verdict`]
//! depends only on the formula, the round's centroids and the task itself (its seed included).
//! So the sampler hands lists of tasks to a [`Workforce`] and merges the verdicts in task
//! order: one process on its rayon threads ([`LocalWorkforce`]) and many ranks
//! ([`crate::distribute`]) give the same suite for the same seed.

use super::repair::{Completed, Completer, Failure, Lane};
use super::task::{Deliver, Demand, Drawn, ShardPlan, Task, Verdict};
use super::SampleError;
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::diversity::RankMeasures;
use crate::metrics::{Metrics, Phase, Quantiles};
use crate::propagate::Propagator;
use crate::solver::{IncrementalBackend, Solvers};
use crate::testfile::Parts;
use crate::verify::Checker;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Runs tasks for the sampler, wherever they run.
pub trait Workforce {
    /// Hands `deliver` one verdict per task, in task order, each as soon as it and those
    /// before it are done, so that tests reach the suite's file as they are found; once
    /// `deliver` has enough, only the tasks already under way follow. `centroids` are those
    /// `Task::Check` refers to.
    fn run(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError>;

    /// As [`Workforce::run`] with no centroids, every task on the first rank: fresh
    /// solutions that follow each other in one solver's search lie near each other, and
    /// candidates drawn from them need cheaper repairs than from solutions of several
    /// searches. One process is one rank.
    fn run_on_one_rank(
        &mut self,
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        self.run(&[], tasks, deliver)
    }

    /// Starts a sharded run ([`ShardRounds`]): every rank will draw its
    /// rounds as `plan` says, from `samples` (the run's initial solutions) and the repairs
    /// it finds.
    fn shard(&mut self, plan: &ShardPlan, samples: &[Assignment]) -> Result<(), SampleError>;

    /// Round `round` of a sharded run: every rank draws and does a round of its own; their
    /// verdicts go to `deliver` interleaved (every rank's first, rank 0 first, then every
    /// rank's second, ...), each rank's in task order. Returns what the ranks drew, summed.
    fn run_shards(&mut self, round: usize, deliver: &mut Deliver) -> Result<Drawn, SampleError>;

    /// Whether the ranks of a sharded run measure their own tests ([`ShardRounds::share`]):
    /// then the coordinator measures the suite up to the rounds only, and combines that with
    /// what they measured.
    fn measures_shares(&self) -> bool {
        false
    }

    /// What the ranks measured at the end of the last sharded round run, if they measure.
    fn take_shares(&mut self) -> Option<Vec<RankMeasures>> {
        None
    }

    /// Offers the ranks of a sharded run `parts` to keep the tests they find in, handed to
    /// the sampler by place ([`Verdict::Kept`]): where there are several ranks, they do.
    fn keep_tests_in(&mut self, _parts: &Parts) {}

    /// Where the ranks are to place the tests they kept when they finish, rank by rank:
    /// `(number in the part, offset in the suite's file)`.
    fn place(&mut self, _places: Vec<Vec<(u64, u64)>>) {}

    /// Ends the work (the ranks placing their kept tests) and returns each rank's figures
    /// (rank 0 first).
    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError>;

    /// Time this side has spent encoding and sending messages to the ranks so far: the
    /// coordinator's own work, though it happens while tasks run.
    fn messaging(&self) -> Duration;

    /// Time a thread beside the coordinator's has spent decoding the ranks' messages so far
    /// (the relay of ranks), apart from `messaging`.
    fn decoding_beside(&self) -> Duration {
        Duration::ZERO
    }

    /// Time the ranks have spent on tasks so far, summed over ranks: the work more ranks
    /// would share, against which the coordinator's time alone is set.
    fn busy(&self) -> Duration;
}

/// The work of one rank, as the sampler's report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RankReport {
    /// Rank number, 0 the coordinator's.
    pub rank: usize,
    /// The host it ran on (its hostname): where a job's ranks landed.
    pub host: String,
    /// Threads the rank worked on.
    pub threads: usize,
    /// Tasks the rank did.
    pub tasks: u64,
    /// Wall time spent on batches of tasks.
    pub busy_seconds: f64,
    /// Wall time copying the tests it kept to their places in the suite's file, once the
    /// run ended (`--sharded` over several ranks with `-o`).
    pub placing_seconds: f64,
    /// Messages and bytes from the coordinator to this rank and back (0 in one process).
    pub messages: u64,
    /// Bytes of those messages to the rank.
    pub bytes_to_rank: u64,
    /// Bytes of those messages from the rank.
    pub bytes_from_rank: u64,
    /// Latency quantiles by phase.
    pub latency: BTreeMap<&'static str, Quantiles>,
    /// Raw histograms, for merging; not written to the report.
    #[serde(skip)]
    pub metrics: Metrics,
}

/// This machine's hostname (empty where it cannot be read).
pub fn host_name() -> String {
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes into the buffer it is given.
    let ok = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } == 0;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    if ok {
        String::from_utf8_lossy(&name[..end]).into_owned()
    } else {
        String::new()
    }
}

/// Does tasks on the current rayon thread pool.
pub struct Worker<'a> {
    checker: &'a Checker<'a>,
    completer: Completer<'a>,
    /// Opens a session per lane when the run uses an incremental backend.
    sessions: Option<&'a dyn IncrementalBackend>,
    /// Each lane's session (with its record of repairs by propagation), opened by the lane's
    /// first task and kept across rounds.
    lanes: Vec<Mutex<Option<Lane<'a>>>>,
    /// Propagators made in earlier rounds, for the threads of the next: making one copies the
    /// formula's watch lists (a list a literal). Which thread gets which does not matter: a
    /// completion starts from the unit clauses whatever the propagator did before.
    propagators: Mutex<Vec<Propagator<'a>>>,
    centroids: Vec<Assignment>,
    /// Clauses each centroid falsifies, for checking candidates by their flips alone.
    violated: Vec<Vec<u32>>,
    budget: Budget<'a>,
    metrics: Metrics,
    tasks: u64,
    busy: Duration,
}

impl<'a> Worker<'a> {
    /// The budget no task starts after.
    pub fn budget(&self) -> Budget<'a> {
        self.budget
    }

    /// A worker for the formula behind `checker`; no task starts once `budget` is spent.
    pub fn new(checker: &'a Checker<'a>, solvers: Solvers<'a>, budget: Budget<'a>) -> Self {
        Worker {
            checker,
            completer: Completer::new(checker, solvers.oracle, budget),
            sessions: solvers.sessions,
            lanes: (0..solvers.lanes.max(1))
                .map(|_| Mutex::new(None))
                .collect(),
            propagators: Mutex::new(Vec::new()),
            centroids: Vec::new(),
            violated: Vec::new(),
            budget,
            metrics: Metrics::default(),
            tasks: 0,
            busy: Duration::ZERO,
        }
    }

    /// The formula's clause check.
    pub fn checker(&self) -> &'a Checker<'a> {
        self.checker
    }

    /// The centroids the next tasks refer to (their violated clauses computed once).
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
        self.run_in_order(tasks, &mut |burst| {
            verdicts.extend(burst);
            Ok(Demand::More)
        })
        .expect("collecting verdicts cannot fail");
        verdicts
    }

    /// Does `tasks` on all threads of the current pool and hands each verdict to `deliver`
    /// in task order as soon as the tasks before it are done. Threads take tasks in index
    /// order (with sessions: the lowest-indexed task of a lane no other thread holds), so
    /// verdicts wait for at most a task per thread; this thread works too and delivers
    /// between its tasks. After a delivery fails or has enough, tasks not started are
    /// dropped.
    pub fn run_in_order(
        &mut self,
        tasks: &[Task],
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        let started = Instant::now();
        let lanes = if self.sessions.is_some() {
            self.lanes.len()
        } else {
            0
        };
        let schedule = Schedule::new(tasks.len(), lanes);
        let mut ready: BTreeMap<usize, (Verdict, Timing)> = BTreeMap::new();
        let mut delivered = 0;
        let mut outcome = Ok(());
        let mut timings = Vec::with_capacity(tasks.len());
        // Time in `deliver` is the coordinator's (merging), not the rank's.
        let mut delivering = Duration::ZERO;
        let this = &*self;
        let schedule = &schedule;
        let mut hand_over = |ready: &mut BTreeMap<usize, (Verdict, Timing)>| {
            if !ready.contains_key(&delivered) {
                return;
            }
            let mut burst = std::iter::from_fn(|| {
                let (verdict, timing) = ready.remove(&delivered)?;
                delivered += 1;
                timings.push(timing);
                Some(verdict)
            });
            if outcome.is_ok() {
                let t = Instant::now();
                let demand = deliver(&mut burst);
                delivering += t.elapsed();
                match demand {
                    Ok(Demand::More) => {}
                    Ok(Demand::Enough) => schedule.stop(),
                    Err(e) => {
                        outcome = Err(e);
                        schedule.stop();
                    }
                }
            }
            // Those a failed delivery left are done all the same: their timings count.
            burst.for_each(drop);
        };
        rayon::in_place_scope(|scope| {
            let (sender, receiver) = crossbeam_channel::unbounded();
            for _ in 1..rayon::current_num_threads() {
                let sender = sender.clone();
                scope.spawn(move |_| {
                    let mut prop = this.take_propagator();
                    let mut last_valid = None;
                    while let Some((i, lane)) = schedule.take() {
                        let done = this.in_lane(&mut prop, &mut last_valid, &tasks[i], lane);
                        schedule.release(lane);
                        if sender.send((i, done)).is_err() {
                            break;
                        }
                    }
                    this.keep_propagator(prop);
                });
            }
            drop(sender);
            let mut prop = this.take_propagator();
            let mut last_valid = None;
            while let Some((i, lane)) = schedule.take() {
                ready.insert(i, this.in_lane(&mut prop, &mut last_valid, &tasks[i], lane));
                schedule.release(lane);
                ready.extend(receiver.try_iter());
                hand_over(&mut ready);
            }
            this.keep_propagator(prop);
            for (i, done) in receiver {
                ready.insert(i, done);
                hand_over(&mut ready);
            }
        });
        self.busy += started.elapsed().saturating_sub(delivering);
        // The tasks done: those not started once `deliver` had enough are not.
        self.tasks += timings.len() as u64;
        for (phase, elapsed) in timings.into_iter().flatten().flatten() {
            self.metrics.record(phase, elapsed);
        }
        outcome
    }

    /// A propagator an earlier round made, if one is left.
    fn take_propagator(&self) -> Option<Propagator<'a>> {
        self.propagators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
    }

    /// Keeps a thread's propagator, if it made or took one, for the next round.
    fn keep_propagator(&self, prop: Option<Propagator<'a>>) {
        if let Some(prop) = prop {
            let mut kept = self.propagators.lock().unwrap_or_else(|e| e.into_inner());
            kept.push(prop);
        }
    }

    /// Does one task with the session of `lane` (opening it first), or without a session.
    fn in_lane(
        &self,
        prop: &mut Option<Propagator<'a>>,
        last_valid: &mut Option<Assignment>,
        task: &Task,
        lane: Option<usize>,
    ) -> (Verdict, Timing) {
        let (Some(lane), Some(backend)) = (lane, self.sessions) else {
            return self.one(prop, last_valid, None, task);
        };
        let mut slot = self.lanes[lane].lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            let budget = self.budget;
            match backend.open(self.checker.cnf(), budget) {
                Ok(session) => *slot = Some(Lane::new(session)),
                Err(why) => {
                    let why = format!("{} could not load the formula: {why}", backend.name());
                    return (Verdict::Failed(Failure::Unknown(why)), [None, None]);
                }
            }
        }
        self.one(prop, last_valid, slot.as_mut(), task)
    }

    /// A completion's verdict after the check against every clause. The check is made here,
    /// on the rank's threads, so that the coordinator only merges: it was a third of the
    /// coordinator's time per test when made there. `last_valid` is the last test this
    /// thread's check passed: the new one is checked where it differs from it
    /// ([`Checker::satisfies_near`]), and takes its place if it passes.
    fn checked(
        &self,
        result: Result<Completed, Failure>,
        last_valid: &mut Option<Assignment>,
    ) -> Verdict {
        match result {
            Ok(done) => {
                let valid = match last_valid {
                    Some(valid) => self.checker.satisfies_near(&done.test, valid),
                    None => self.checker.satisfies(&done.test),
                };
                if valid {
                    *last_valid = Some(done.test.clone());
                    let fingerprint = done.test.fingerprint();
                    Verdict::Completed { done, fingerprint }
                } else {
                    Verdict::Invalid
                }
            }
            Err(failure) => Verdict::Failed(failure),
        }
    }

    /// This worker's figures so far.
    pub fn report(&self, rank: usize, threads: usize) -> RankReport {
        RankReport {
            rank,
            host: host_name(),
            threads,
            tasks: self.tasks,
            busy_seconds: self.busy.as_secs_f64(),
            placing_seconds: 0.0,
            messages: 0,
            bytes_to_rank: 0,
            bytes_from_rank: 0,
            latency: self.metrics.summary(),
            metrics: self.metrics.clone(),
        }
    }

    fn one(
        &self,
        prop: &mut Option<Propagator<'a>>,
        last_valid: &mut Option<Assignment>,
        lane: Option<&mut Lane<'a>>,
        task: &Task,
    ) -> (Verdict, Timing) {
        if self.budget.exhausted() {
            return (Verdict::Skipped, [None, None]);
        }
        let mut verdict = |result| self.checked(result, last_valid);
        match task {
            Task::Solve { seed } => {
                let t = Instant::now();
                let result = self.completer.fresh(prop, lane, *seed);
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
                    let fingerprint = test.fingerprint();
                    return (Verdict::Valid { test, fingerprint }, [verify, None]);
                }
                let t = Instant::now();
                let result = self.completer.repair(prop, lane, &test, delta, *seed);
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

/// Which task a thread takes next. Without sessions: the next by index. With sessions:
/// the lowest-indexed task among lanes no thread holds, so each lane runs its tasks
/// (`lane, lane + lanes, …`) one at a time in index order.
struct Schedule {
    len: usize,
    /// Solver lanes; 0 without sessions.
    lanes: usize,
    next: AtomicUsize,
    /// Per lane: its next task and whether a thread holds it.
    held: Mutex<Vec<(usize, bool)>>,
    stopped: AtomicBool,
}

impl Schedule {
    fn new(len: usize, lanes: usize) -> Self {
        Schedule {
            len,
            lanes,
            next: AtomicUsize::new(0),
            held: Mutex::new((0..lanes).map(|lane| (lane, false)).collect()),
            stopped: AtomicBool::new(false),
        }
    }

    /// The next task and its lane (with sessions); `None` when none is left for this thread.
    fn take(&self) -> Option<(usize, Option<usize>)> {
        if self.stopped.load(Ordering::Relaxed) {
            return None;
        }
        if self.lanes == 0 {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            return (i < self.len).then_some((i, None));
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (lane, (next, busy)) = held
            .iter_mut()
            .enumerate()
            .filter(|(_, (next, busy))| !*busy && *next < self.len)
            .min_by_key(|(_, (next, _))| *next)?;
        let task = *next;
        *next += self.lanes;
        *busy = true;
        Some((task, Some(lane)))
    }

    fn release(&self, lane: Option<usize>) {
        if let Some(lane) = lane {
            self.held.lock().unwrap_or_else(|e| e.into_inner())[lane].1 = false;
        }
    }

    /// No more tasks are handed out.
    fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }
}

/// A rank's own rounds in a sharded run: drawn from its samples (Snap's steps 2 and 3a,
/// `crate::sampler::snap::shard`) and done on its worker.
pub trait ShardRounds: Send {
    /// Round `round` drawn and done on `worker`; each verdict goes to `deliver` in task order.
    fn round(
        &mut self,
        round: usize,
        worker: &mut Worker,
        deliver: &mut Deliver,
    ) -> Result<Drawn, SampleError>;

    /// Time spent drawing the rounds so far.
    fn drawing(&self) -> Duration;

    /// The measures of the tests new to this rank so far, once every one of them is taken
    /// in (its coverage: what changed since the last call); `None` where it measures none.
    fn share(&mut self) -> Option<RankMeasures>;
}

/// Starts rank `rank`'s rounds of a sharded run as `plan` says, from `samples`, measuring its
/// NCD share if `measures_share`.
pub type StartShards = fn(
    plan: ShardPlan,
    rank: usize,
    samples: Vec<Assignment>,
    measures_share: bool,
) -> Box<dyn ShardRounds>;

/// All work in this process, on the global rayon pool: the single-rank case.
pub struct LocalWorkforce<'a> {
    worker: Worker<'a>,
    /// How a sharded run's rounds start.
    start_shards: StartShards,
    /// The rounds of a sharded run, this process its only rank.
    shard: Option<Box<dyn ShardRounds>>,
}

impl<'a> LocalWorkforce<'a> {
    /// All tasks on `worker`, in this process; a sharded run's rounds as `start_shards` makes
    /// them.
    pub fn new(worker: Worker<'a>, start_shards: StartShards) -> Self {
        LocalWorkforce {
            worker,
            start_shards,
            shard: None,
        }
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

    fn shard(&mut self, plan: &ShardPlan, samples: &[Assignment]) -> Result<(), SampleError> {
        // The one rank: the suite is its own, measured whole.
        self.shard = Some((self.start_shards)(*plan, 0, samples.to_vec(), false));
        Ok(())
    }

    fn run_shards(&mut self, round: usize, deliver: &mut Deliver) -> Result<Drawn, SampleError> {
        let stream = self.shard.as_mut().ok_or_else(not_sharded)?;
        stream.round(round, &mut self.worker, deliver)
    }

    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError> {
        let mut report = self.worker.report(0, rayon::current_num_threads());
        report.busy_seconds += self.drawing().as_secs_f64();
        Ok(vec![report])
    }

    fn busy(&self) -> Duration {
        self.worker.busy + self.drawing()
    }

    fn messaging(&self) -> Duration {
        Duration::ZERO
    }
}

impl LocalWorkforce<'_> {
    /// Time drawing sharded rounds: work, as a rank's is.
    fn drawing(&self) -> Duration {
        self.shard.as_ref().map_or(Duration::ZERO, |s| s.drawing())
    }
}

/// A sharded round asked of a workforce that was not told to shard: the sampler's error.
pub fn not_sharded() -> SampleError {
    SampleError::Distribution("a sharded round before the ranks had their samples".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::Cnf;

    /// A completion that falsifies a clause never becomes a test: the worker's check turns
    /// it into `Invalid` (what a solver's internal error would give), also when it is
    /// checked only where it differs from the last valid test.
    #[test]
    fn completions_failing_a_clause_are_invalid() {
        let cnf = Cnf::from_clauses(40, &[vec![1, 2], vec![-3, 40]]);
        let checker = Checker::new(&cnf);
        let worker = Worker::new(&checker, Solvers::splr(), Budget::unlimited());
        let completed = |head: &str| {
            let test = Assignment::from_bit_string(&format!("{head:0<40}")).unwrap();
            Ok(Completed::solved(test, 1))
        };
        let mut last_valid = None;
        let mut checked = |result| worker.checked(result, &mut last_valid);
        assert!(matches!(checked(completed("00")), Verdict::Invalid));
        assert!(matches!(
            checked(completed("01")),
            Verdict::Completed { .. }
        ));
        // One or two variables away from the last valid test (checked where they differ).
        assert!(matches!(checked(completed("00")), Verdict::Invalid));
        assert!(matches!(checked(completed("011")), Verdict::Invalid));
        assert!(matches!(
            checked(completed("11")),
            Verdict::Completed { .. }
        ));
        assert!(matches!(
            checked(completed("10")),
            Verdict::Completed { .. }
        ));
        assert!(matches!(checked(completed("00")), Verdict::Invalid));
        let short = Ok(Completed::solved(
            Assignment::from_bit_string("01").unwrap(),
            1,
        ));
        assert!(matches!(checked(short), Verdict::Invalid));
        assert!(matches!(
            checked(Err(Failure::Unsat)),
            Verdict::Failed(Failure::Unsat)
        ));
    }
}
