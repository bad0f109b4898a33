//! The Snap sampler (Fig. 2 of the paper): initial solutions, a weighted delta pool, k-means
//! centroids, candidates `c ⊕ (δi ∨ δj)`, verification, repair, and NCD-based termination.
//!
//! Work inside a round runs on all rayon threads; every random choice is drawn from seeds
//! derived from `--seed`, round and index, so the same seed gives the same suite on any number
//! of threads (unless a time limit cuts a round short).

pub mod deltas;
pub mod kmeans;
pub mod repair;
pub mod work;

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::diversity;
use crate::metrics::{Metrics, Phase, Quantiles};
use crate::oracle::{Oracle, Solvers};
use crate::verify::Checker;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use repair::{Completed, Failure, Route};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use work::{LocalWorkforce, RankReport, Task, Verdict, Worker, Workforce};

/// The diversity measure whose improvement decides whether another round runs (step 4a).
///
/// NCD is taken on the projection onto the independent support, where it separates suites
/// (on full assignments 100 copies of one model already score 0.989). Eq. 2 normalises by
/// `max C(X \ {x})`, which grows with the suite as fast as the numerator, so on the case
/// studies the first round lifts NCD by 2–3% (0.965 → 0.994) and the rule stops there. That is
/// the right call by combinatorial measures too: 2- and 3-wise coverage of `c ind` are
/// saturated by the initial solutions, and twenty more rounds add distinct tests but not one
/// new value combination (`results/stop-rule.md`). `Information` drops the normalisation and
/// runs while a round adds X of new incompressible content, for users who want more tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum StopMetric {
    /// NCD of the suite projected onto the independent support (Eq. 2): the paper's rule.
    #[default]
    Ncd,
    /// C(X) − min C(x) of the projected suite (Eq. 2's numerator).
    Information,
    /// Pairwise literal coverage of the independent support.
    Coverage,
}

/// Parameters of a run; the defaults are the paper's (§III-C).
#[derive(Debug, Clone)]
pub struct SnapConfig {
    /// N: initial solutions, and candidates per centroid per round.
    pub samples: usize,
    /// k: clusters.
    pub clusters: usize,
    /// X: go on while NCD improves by at least this fraction per round.
    pub min_improvement: f64,
    /// T: wall-clock limit of the whole run.
    pub time_limit: Duration,
    /// Stop once the suite holds this many tests.
    pub max_tests: Option<usize>,
    /// Stop after this many rounds.
    pub max_rounds: Option<usize>,
    pub seed: u64,
    /// Removal streams for NCD's denominator (see [`diversity::RunningNcd`]).
    pub ncd_removals: usize,
    pub stop_metric: StopMetric,
}

impl Default for SnapConfig {
    fn default() -> Self {
        SnapConfig {
            samples: 100,
            clusters: 5,
            min_improvement: 0.05,
            time_limit: Duration::from_secs(600),
            max_tests: None,
            max_rounds: None,
            seed: 0,
            ncd_removals: diversity::RUNNING_REMOVALS,
            stop_metric: StopMetric::default(),
        }
    }
}

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
    /// Tests taken from an earlier run's suite (see [`sample_with`]).
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

/// What the sampler tells its caller as it goes.
pub trait Observer {
    /// A new distinct, verified test; returning an error stops the run.
    fn test(&mut self, test: &Assignment) -> std::io::Result<()>;
    /// A round (or the initial solutions, round 0) ended.
    fn round(&mut self, _stats: &RoundStats) {}
}

impl<F: FnMut(&Assignment) -> std::io::Result<()>> Observer for F {
    fn test(&mut self, test: &Assignment) -> std::io::Result<()> {
        self(test)
    }
}

/// Derives an independent seed for one piece of work (SplitMix64 finaliser).
pub fn derive_seed(seed: u64, stream: u64, index: u64) -> u64 {
    let mut z = seed
        ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The test suite of either sampler: distinct tests in the order found, each checked against
/// every clause on the way in, with their pairwise coverage kept up to date.
pub struct Suite<'a> {
    checker: &'a Checker<'a>,
    tests: Vec<Assignment>,
    seen: HashSet<Assignment>,
    coverage: diversity::PairwiseCoverage,
    max_tests: Option<usize>,
    invalid: u64,
}

impl<'a> Suite<'a> {
    /// An empty suite whose coverage is measured over `projection`.
    pub fn new(checker: &'a Checker<'a>, projection: &[usize], max_tests: Option<usize>) -> Self {
        Suite {
            checker,
            tests: Vec::new(),
            seen: HashSet::new(),
            coverage: diversity::PairwiseCoverage::new(projection),
            max_tests,
            invalid: 0,
        }
    }

    pub fn tests(&self) -> &[Assignment] {
        &self.tests
    }

    pub fn coverage(&self) -> f64 {
        self.coverage.fraction()
    }

    /// Tests refused because they falsify a clause (0 unless a solver erred).
    pub fn invalid(&self) -> u64 {
        self.invalid
    }

    /// True once the suite holds `max_tests` tests.
    pub fn is_full(&self) -> bool {
        self.max_tests.is_some_and(|m| self.tests.len() >= m)
    }

    /// Adds a new test and hands it to `observer`; false (and nothing done) when the test is
    /// already in the suite, the suite is full, or the test falsifies a clause. This is the
    /// one check of every clause each test gets on its way out; a test that fails it (a
    /// solver's or the completion's internal error) is counted and never written.
    pub fn admit(
        &mut self,
        test: &Assignment,
        observer: &mut dyn Observer,
    ) -> std::io::Result<bool> {
        if !self.checker.satisfies(test) {
            self.invalid += 1;
            return Ok(false);
        }
        if self.is_full() || !self.seen.insert(test.clone()) {
            return Ok(false);
        }
        self.tests.push(test.clone());
        self.coverage.add(test);
        observer.test(test)?;
        Ok(true)
    }
}

/// The inputs of one sampling run, whoever does its tasks.
#[derive(Clone, Copy)]
pub struct Sampling<'a> {
    pub checker: &'a Checker<'a>,
    pub solvers: Solvers<'a>,
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
    let deadline = Instant::now() + run.config.time_limit;
    let worker = Worker::new(run.checker, run.solvers, deadline, run.interrupt);
    sample_with(&mut LocalWorkforce::new(worker), run, observer)
}

/// Runs `run` with its tasks done by `workforce`.
pub fn sample_with(
    workforce: &mut dyn Workforce,
    run: &Sampling,
    observer: &mut dyn Observer,
) -> Result<Report, SampleError> {
    let mut snap = Snap::new(run.checker, run.config, run.interrupt);
    let result = snap.run(workforce, run.resumed, observer);
    // The ranks are stopped however the run ended, so that none waits for work forever.
    let ranks = workforce.finish();
    let mut report = result?;
    report.ranks = ranks?;
    let mut merged = snap.metrics;
    for rank in &report.ranks {
        merged.merge(&rank.metrics);
    }
    report.latency = merged.summary();
    Ok(report)
}

struct Snap<'a> {
    config: &'a SnapConfig,
    /// The coordinator's own latencies (NCD).
    metrics: Metrics,
    start: Instant,
    deadline: Instant,
    interrupt: &'a AtomicBool,
    suite: Suite<'a>,
    /// The suite's NCD, kept up to date as tests join.
    ncd: diversity::RunningNcd,
    report: Report,
}

impl<'a> Snap<'a> {
    fn new(checker: &'a Checker<'a>, config: &'a SnapConfig, interrupt: &'a AtomicBool) -> Self {
        let start = Instant::now();
        let deadline = start + config.time_limit;
        let projection = checker.cnf().projection();
        Snap {
            config,
            metrics: Metrics::default(),
            start,
            deadline,
            interrupt,
            suite: Suite::new(checker, &projection, config.max_tests),
            ncd: diversity::RunningNcd::new(&projection, config.ncd_removals),
            report: Report {
                stop: StopReason::Converged,
                distinct_tests: 0,
                seconds: PhaseSeconds::default(),
                coordinator_seconds: 0.0,
                work_seconds: 0.0,
                solver_calls: SolverCalls::default(),
                completed_by_propagation: 0,
                candidates: 0,
                valid_before_repair: 0,
                valid_before_repair_percent: 0.0,
                repaired: 0,
                failed_repairs: 0,
                fresh_fallbacks: 0,
                duplicates: 0,
                invalid_dropped: 0,
                ncd_variables: projection.len(),
                rounds: Vec::new(),
                unknown: Vec::new(),
                resumed: 0,
                throughput: Throughput::default(),
                latency: BTreeMap::new(),
                ranks: Vec::new(),
            },
        }
    }

    /// Adds a verified test to the suite if it is new; true when added.
    fn admit(
        &mut self,
        test: &Assignment,
        observer: &mut dyn Observer,
    ) -> Result<bool, SampleError> {
        let invalid = self.suite.invalid();
        let added = self.suite.admit(test, observer)?;
        let refused = self.suite.invalid() > invalid;
        self.report.invalid_dropped += u64::from(refused);
        self.report.duplicates += u64::from(!added && !refused && !self.suite.is_full());
        Ok(added)
    }

    /// The round's figures on the suite; NCD is NaN (null in --stats) when the budget ran out
    /// before every new test was compressed.
    fn measure(&mut self, stats: &mut RoundStats) {
        let t = Instant::now();
        let budget = Budget::until(self.deadline, self.interrupt);
        self.ncd
            .extend(&self.suite.tests()[self.ncd.len()..], &budget);
        let terms = self.ncd.terms();
        stats.ncd = terms.map_or(f64::NAN, |t| t.value());
        stats.information = terms.map_or(0, |t| t.information());
        stats.coverage = self.suite.coverage();
        stats.suite_size = self.suite.tests().len();
        self.metrics.record(Phase::Ncd, t.elapsed());
        self.report.seconds.ncd += t.elapsed().as_secs_f64();
    }

    fn push_round(&mut self, stats: RoundStats) {
        self.report.coordinator_seconds += stats.coordinator_seconds;
        self.report.work_seconds += stats.work_seconds;
        self.report.rounds.push(stats);
    }

    /// The value of the stop metric in a round's figures.
    fn metric(&self, stats: &RoundStats) -> f64 {
        match self.config.stop_metric {
            StopMetric::Information => stats.information as f64,
            StopMetric::Ncd => stats.ncd,
            StopMetric::Coverage => stats.coverage,
        }
    }

    fn note_completion(&mut self, done: &Completed, purpose_generate: bool) {
        let calls = u64::from(done.solver_calls);
        if purpose_generate {
            self.report.solver_calls.generate += calls;
        } else {
            self.report.solver_calls.repair += calls;
        }
        self.report.completed_by_propagation += u64::from(done.route == Route::Propagation);
    }

    fn note_failure(&mut self, failure: Failure) {
        if let Failure::Unknown(why) = failure {
            if self.report.unknown.len() < 10 && !self.report.unknown.contains(&why) {
                self.report.unknown.push(why);
            }
        }
    }

    fn run(
        &mut self,
        workforce: &mut dyn Workforce,
        resumed: &[Assignment],
        observer: &mut dyn Observer,
    ) -> Result<Report, SampleError> {
        let mut samples = self.initial_samples(workforce, resumed, observer)?;
        let mut initial = RoundStats {
            round: 0,
            samples: samples.len(),
            new_tests: self.suite.tests().len(),
            work_seconds: workforce.busy().as_secs_f64(),
            ..Default::default()
        };
        self.measure(&mut initial);
        initial.seconds = self.start.elapsed().as_secs_f64();
        initial.coordinator_seconds = initial.seconds - self.report.seconds.initial;
        let mut metric = self.metric(&initial);
        observer.round(&initial);
        self.push_round(initial);
        let mut round = 0;
        let stop = loop {
            if self.interrupt.load(Ordering::Relaxed) {
                break StopReason::Interrupted;
            }
            if self.suite.is_full() {
                break StopReason::MaxTests;
            }
            if Instant::now() >= self.deadline {
                break StopReason::TimeLimit;
            }
            if self.config.max_rounds.is_some_and(|m| round >= m) {
                break StopReason::MaxRounds;
            }
            round += 1;
            let stats = self.round(workforce, round, &mut samples, observer)?;
            let previous = metric;
            metric = self.metric(&stats);
            let new_tests = stats.new_tests;
            observer.round(&stats);
            self.push_round(stats);
            if self.interrupt.load(Ordering::Relaxed) {
                break StopReason::Interrupted;
            }
            if self.suite.is_full() {
                break StopReason::MaxTests;
            }
            if Instant::now() >= self.deadline {
                break StopReason::TimeLimit;
            }
            if new_tests == 0 {
                break StopReason::NoNewTests;
            }
            if metric - previous < self.config.min_improvement * previous.max(f64::EPSILON) {
                break StopReason::Converged;
            }
        };
        self.report.stop = stop;
        self.report.distinct_tests = self.suite.tests().len();
        self.report.valid_before_repair_percent = if self.report.candidates == 0 {
            0.0
        } else {
            100.0 * self.report.valid_before_repair as f64 / self.report.candidates as f64
        };
        self.report.seconds.total = self.start.elapsed().as_secs_f64();
        let per_second = |count: f64, seconds: f64| {
            if seconds > 0.0 {
                count / seconds
            } else {
                0.0
            }
        };
        self.report.throughput = Throughput {
            candidates_per_second: per_second(
                self.report.candidates as f64,
                self.report.seconds.verify_repair,
            ),
            tests_per_second: per_second(
                self.report.distinct_tests as f64,
                self.report.seconds.total,
            ),
        };
        Ok(self.report.clone())
    }

    /// Step 1: resumed tests, then solutions up to N spread over the workforce; the first
    /// solve runs alone and decides whether the formula is satisfiable.
    fn initial_samples(
        &mut self,
        workforce: &mut dyn Workforce,
        resumed: &[Assignment],
        observer: &mut dyn Observer,
    ) -> Result<Vec<Assignment>, SampleError> {
        let t = Instant::now();
        let seed = self.config.seed;
        let n = self.config.samples.max(1);
        let mut samples = Vec::new();
        let mut quiet = |_: &Assignment| Ok(());
        for test in resumed {
            if self.suite.admit(test, &mut quiet)? {
                samples.push(test.clone());
            }
        }
        self.report.resumed = samples.len();
        // Seeds continue after the resumed tests, so that a resumed run with the same seed
        // does not solve for the solutions it already has.
        let offset = samples.len() as u64;
        let solve = |i: u64| Task::Solve {
            seed: derive_seed(seed, 0, offset + i),
        };
        let needed = n.saturating_sub(samples.len()) as u64;
        let mut first_failure = None;
        let mut first = 0;
        if needed > 0 && samples.is_empty() {
            // The first solve runs alone: it decides whether the formula is satisfiable.
            workforce.run(&[], vec![solve(0)], &mut |v| {
                self.take_initial(v, &mut samples, &mut first_failure, observer)
            })?;
            first = 1;
        }
        if first_failure.is_none() {
            let rest: Vec<Task> = (first..needed).map(solve).collect();
            if !rest.is_empty() {
                workforce.run(&[], rest, &mut |v| {
                    self.take_initial(v, &mut samples, &mut first_failure, observer)
                })?;
            }
        }
        self.report.seconds.initial = t.elapsed().as_secs_f64();
        if samples.is_empty() {
            return Err(match first_failure {
                Some(Failure::Unsat) | None => SampleError::Unsat,
                Some(Failure::Unknown(why)) => SampleError::Unknown(why),
            });
        }
        samples.sort();
        samples.dedup();
        Ok(samples)
    }

    /// An initial solution joins the suite (and its file) as soon as it is found.
    fn take_initial(
        &mut self,
        verdict: Verdict,
        samples: &mut Vec<Assignment>,
        first_failure: &mut Option<Failure>,
        observer: &mut dyn Observer,
    ) -> Result<(), SampleError> {
        match verdict {
            Verdict::Completed(done) => {
                self.note_completion(&done, true);
                self.admit(&done.test, observer)?;
                samples.push(done.test);
            }
            Verdict::Failed(failure) => {
                first_failure.get_or_insert(failure.clone());
                self.note_failure(failure);
            }
            Verdict::Skipped => {
                first_failure.get_or_insert(Failure::Unknown("time limit reached".into()));
            }
            Verdict::Valid(_) => unreachable!("solve tasks have no candidate"),
        }
        Ok(())
    }

    /// Steps 2–3 once: deltas, centroids, candidates, verify, repair; then NCD.
    fn round(
        &mut self,
        workforce: &mut dyn Workforce,
        round: usize,
        samples: &mut Vec<Assignment>,
        observer: &mut dyn Observer,
    ) -> Result<RoundStats, SampleError> {
        let started = Instant::now();
        let seed = self.config.seed;
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, 1, round as u64));
        let n = self.config.samples.max(1);

        // Step 2: the pool comes from at most N samples, so it holds at most N(N−1)/2 pairs
        // however many repaired samples have joined.
        let t = Instant::now();
        let mut basis: Vec<&Assignment> = samples.iter().collect();
        if basis.len() > n {
            basis.shuffle(&mut rng);
            basis.truncate(n);
        }
        let pool = deltas::DeltaPool::from_samples(&basis);
        self.report.seconds.deltas += t.elapsed().as_secs_f64();

        // Step 3a.
        let t = Instant::now();
        let all: Vec<&Assignment> = samples.iter().collect();
        let centroids = kmeans::centroids(&all, self.config.clusters, &mut rng);
        self.report.seconds.clustering += t.elapsed().as_secs_f64();

        let mut stats = RoundStats {
            round,
            samples: samples.len(),
            distinct_deltas: pool.len(),
            repeated_delta_pairs: pool.repeated_pairs(),
            centroids: centroids.len(),
            ..Default::default()
        };
        if pool.is_empty() {
            self.measure(&mut stats);
            stats.seconds = started.elapsed().as_secs_f64();
            stats.coordinator_seconds = stats.seconds;
            return Ok(stats);
        }

        // Step 3b: candidates drawn sequentially (cheap, deterministic), then checked and
        // repaired by the workforce.
        let t = Instant::now();
        let tasks: Vec<Task> = (0..centroids.len())
            .flat_map(|c| std::iter::repeat_n(c as u32, n))
            .enumerate()
            .map(|(i, centroid)| Task::Check {
                centroid,
                delta: pool.draw(&mut rng).or(pool.draw(&mut rng)),
                seed: derive_seed(seed, 2 + round as u64, i as u64),
            })
            .collect();
        let before = self.suite.tests().len();
        let busy = workforce.busy();
        workforce.run(&centroids, tasks, &mut |verdict| {
            match verdict {
                Verdict::Skipped => stats.skipped += 1,
                Verdict::Valid(test) => {
                    stats.candidates += 1;
                    stats.valid_before_repair += 1;
                    self.admit(&test, observer)?;
                }
                Verdict::Completed(done) => {
                    stats.candidates += 1;
                    stats.repaired += 1;
                    self.note_completion(&done, false);
                    self.report.fresh_fallbacks += u64::from(done.fresh);
                    if self.admit(&done.test, observer)? {
                        samples.push(done.test);
                    }
                }
                Verdict::Failed(failure) => {
                    stats.candidates += 1;
                    stats.failed_repairs += 1;
                    self.note_failure(failure);
                }
            }
            Ok(())
        })?;
        let working = t.elapsed().as_secs_f64();
        self.report.seconds.verify_repair += working;
        stats.work_seconds = (workforce.busy() - busy).as_secs_f64();

        self.report.candidates += stats.candidates;
        self.report.valid_before_repair += stats.valid_before_repair;
        self.report.repaired += stats.repaired;
        self.report.failed_repairs += stats.failed_repairs;
        stats.new_tests = self.suite.tests().len() - before;
        self.measure(&mut stats);
        stats.seconds = started.elapsed().as_secs_f64();
        stats.coordinator_seconds = stats.seconds - working;
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::Cnf;
    use crate::oracle::Splr;
    use proptest::prelude::*;

    fn planted(num_vars: usize, num_clauses: usize, seed: u64) -> Cnf {
        crate::testing::planted(num_vars, num_clauses, seed).0
    }

    fn run(cnf: &Cnf, config: &SnapConfig) -> (Vec<Assignment>, Report) {
        run_with(cnf, config, Solvers::splr())
    }

    /// The suite and report of a one-process run with `solvers`.
    fn run_with(cnf: &Cnf, config: &SnapConfig, solvers: Solvers) -> (Vec<Assignment>, Report) {
        let checker = Checker::new(cnf);
        let mut tests = Vec::new();
        let mut collect = |t: &Assignment| {
            tests.push(t.clone());
            Ok(())
        };
        let run = Sampling {
            checker: &checker,
            solvers,
            config,
            resumed: &[],
            interrupt: &AtomicBool::new(false),
        };
        let report = sample_in_process(&run, &mut collect).unwrap();
        (tests, report)
    }

    fn small_config(seed: u64) -> SnapConfig {
        SnapConfig {
            samples: 20,
            clusters: 3,
            seed,
            time_limit: Duration::from_secs(60),
            ..Default::default()
        }
    }

    #[test]
    fn unsat_formula_is_reported() {
        let cnf = Cnf::from_clauses(1, &[vec![1], vec![-1]]);
        let checker = Checker::new(&cnf);
        let mut sink = |_: &Assignment| Ok(());
        let err = sample(
            &checker,
            &Splr,
            &small_config(0),
            &mut sink,
            &AtomicBool::new(false),
        );
        assert!(matches!(err, Err(SampleError::Unsat)));
    }

    #[test]
    fn same_seed_gives_the_same_suite() {
        let cnf = planted(40, 120, 5);
        let (a, _) = run(&cnf, &small_config(9));
        let (b, _) = run(&cnf, &small_config(9));
        assert_eq!(a, b);
        let (c, _) = run(&cnf, &small_config(10));
        assert_ne!(a, c);
    }

    #[test]
    fn rounds_grow_the_suite_beyond_the_initial_samples() {
        let cnf = planted(60, 200, 3);
        let (tests, report) = run(&cnf, &small_config(1));
        assert!(report.rounds.len() >= 2);
        assert!(tests.len() > report.rounds[0].suite_size);
        assert_eq!(report.distinct_tests, tests.len());
    }

    #[test]
    fn max_tests_caps_the_suite() {
        let cnf = planted(60, 200, 4);
        let config = SnapConfig {
            max_tests: Some(25),
            ..small_config(2)
        };
        let (tests, report) = run(&cnf, &config);
        assert_eq!(tests.len(), 25);
        assert_eq!(report.stop, StopReason::MaxTests);
    }

    /// With CaDiCaL sessions, the suite depends on the seed, not on the threads: each solver
    /// lane's session sees its tasks in the same order however many threads share them.
    #[cfg(feature = "cadical")]
    #[test]
    fn cadical_suites_are_a_function_of_the_seed_whatever_the_threads() {
        let cnf = planted(80, 300, 11);
        let checker = Checker::new(&cnf);
        let solvers = Solvers {
            sessions: Some(&crate::oracle::cadical::Cadical),
            lanes: 4,
            ..Solvers::splr()
        };
        let suite = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut tests = Vec::new();
            let mut collect = |t: &Assignment| {
                tests.push(t.clone());
                Ok(())
            };
            let config = SnapConfig {
                max_rounds: Some(2),
                ..small_config(3)
            };
            let run = Sampling {
                checker: &checker,
                solvers,
                config: &config,
                resumed: &[],
                interrupt: &AtomicBool::new(false),
            };
            pool.install(|| sample_in_process(&run, &mut collect))
                .unwrap();
            tests
        };
        let one = suite(1);
        assert!(one.len() > 20 && one.iter().all(|t| checker.satisfies(t)));
        assert_eq!(one, suite(2));
        assert_eq!(one, suite(3));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn every_emitted_test_satisfies_the_formula_and_none_repeats(
            vars in 5usize..40, ratio in 1.0f64..4.2, seed in any::<u64>()
        ) {
            let cnf = planted(vars, (vars as f64 * ratio) as usize, seed);
            let checker = Checker::new(&cnf);
            let config = SnapConfig { samples: 10, clusters: 3, max_rounds: Some(3), seed, ..Default::default() };
            let (tests, _) = run(&cnf, &config);
            prop_assert!(!tests.is_empty());
            prop_assert!(tests.iter().all(|t| checker.satisfies(t)));
            let distinct: HashSet<_> = tests.iter().collect();
            prop_assert_eq!(distinct.len(), tests.len());
        }

        /// The same invariant with CaDiCaL sessions doing the solving.
        #[cfg(feature = "cadical")]
        #[test]
        fn every_test_from_cadical_sessions_satisfies_the_formula(
            vars in 5usize..40, ratio in 1.0f64..4.2, seed in any::<u64>()
        ) {
            let cnf = planted(vars, (vars as f64 * ratio) as usize, seed);
            let checker = Checker::new(&cnf);
            let config = SnapConfig { samples: 10, clusters: 3, max_rounds: Some(3), seed, ..Default::default() };
            let solvers = Solvers { sessions: Some(&crate::oracle::cadical::Cadical), lanes: 3, ..Solvers::splr() };
            let (tests, _) = run_with(&cnf, &config, solvers);
            prop_assert!(!tests.is_empty());
            prop_assert!(tests.iter().all(|t| checker.satisfies(t)));
            let distinct: HashSet<_> = tests.iter().collect();
            prop_assert_eq!(distinct.len(), tests.len());
        }
    }
}
