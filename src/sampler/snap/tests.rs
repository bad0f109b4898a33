use super::*;
use crate::formula::Cnf;
use crate::sampler::task::{Deliver, Task};
use crate::sampler::work::{LocalWorkforce, RankReport, Worker, Workforce};
use crate::sampler::{sample, sample_in_process, sample_with, SampleError, Sampling};
use crate::solver::Solvers;
use crate::solver::Splr;
use proptest::prelude::*;
use shard::ShardPlan;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

pub(super) fn planted(num_vars: usize, num_clauses: usize, seed: u64) -> Cnf {
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

/// The report of a one-process splr run on `threads` threads, its tests to `observer`.
fn run_on_threads(
    checker: &Checker,
    config: &SnapConfig,
    interrupt: &AtomicBool,
    threads: usize,
    observer: &mut (dyn Observer + Send),
) -> Report {
    let run = Sampling {
        checker,
        solvers: Solvers::splr(),
        config,
        resumed: &[],
        interrupt,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| sample_in_process(&run, observer)).unwrap()
}

/// The names the command line takes are the ones `--stats` writes, and no others parse.
#[test]
fn stop_metric_names_parse_to_what_stats_write() {
    for name in StopMetric::NAMES {
        let metric: StopMetric = name.parse().unwrap();
        assert_eq!(
            serde_json::to_string(&metric).unwrap(),
            format!("\"{name}\"")
        );
    }
    assert!("NCD".parse::<StopMetric>().is_err());
}

pub(super) fn small_config(seed: u64) -> SnapConfig {
    SnapConfig {
        samples: 20,
        clusters: 3,
        seed,
        time_limit: Duration::from_secs(60),
        ..Default::default()
    }
}

/// A one-process workforce with a fault put in before every round's tasks (those with
/// centroids, or a sharded round's: not the initial solutions): `late` lets the deadline
/// pass, so that they are all skipped; `talk` is spent on messages, as a coordinator
/// decoding its ranks' verdicts does; `share` is an NCD share every sharded round reports
/// besides, as a rank measuring one does.
struct Staged<'a> {
    inner: LocalWorkforce<'a>,
    late: Option<Budget<'a>>,
    talk: Duration,
    messaging: Duration,
    share: Option<diversity::RankMeasures>,
}

impl<'a> Staged<'a> {
    fn new(inner: LocalWorkforce<'a>) -> Self {
        Staged {
            inner,
            late: None,
            talk: Duration::ZERO,
            messaging: Duration::ZERO,
            share: None,
        }
    }

    fn before_a_round(&mut self) {
        if let Some(budget) = self.late {
            let left = budget.remaining().expect("a deadline");
            std::thread::sleep(left + Duration::from_millis(1));
        }
        std::thread::sleep(self.talk);
        self.messaging += self.talk;
    }
}

impl Workforce for Staged<'_> {
    fn run(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        if !centroids.is_empty() {
            self.before_a_round();
        }
        self.inner.run(centroids, tasks, deliver)
    }

    fn shard(&mut self, plan: &ShardPlan, samples: &[Assignment]) -> Result<(), SampleError> {
        self.inner.shard(plan, samples)
    }

    fn run_shards(
        &mut self,
        round: usize,
        deliver: &mut Deliver,
    ) -> Result<draw::Drawn, SampleError> {
        self.before_a_round();
        self.inner.run_shards(round, deliver)
    }

    fn measures_shares(&self) -> bool {
        self.share.is_some()
    }

    fn take_shares(&mut self) -> Option<Vec<diversity::RankMeasures>> {
        self.share.clone().map(|share| vec![share])
    }

    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError> {
        self.inner.finish()
    }

    fn busy(&self) -> Duration {
        self.inner.busy()
    }

    fn messaging(&self) -> Duration {
        self.inner.messaging() + self.messaging
    }
}

const MESSAGES: Duration = Duration::from_millis(30);

/// The formula of the staged runs.
fn staged_formula() -> Cnf {
    planted(30, 90, 5)
}

/// The report of a one-process splr run of `config` on [`staged_formula`], its
/// workforce staged by `stage` from the one-process workforce, made first, and the run's
/// budget.
fn staged_report(
    config: &SnapConfig,
    stage: impl for<'a> FnOnce(LocalWorkforce<'a>, Budget<'a>) -> Staged<'a>,
) -> Report {
    staged_run(config, stage, &mut |_: &Assignment| Ok(()))
}

/// [`staged_report`] with the run's tests to `observer`.
fn staged_run(
    config: &SnapConfig,
    stage: impl for<'a> FnOnce(LocalWorkforce<'a>, Budget<'a>) -> Staged<'a>,
    observer: &mut dyn Observer,
) -> Report {
    let cnf = staged_formula();
    let checker = Checker::new(&cnf);
    let interrupt = AtomicBool::new(false);
    let run = Sampling {
        checker: &checker,
        solvers: Solvers::splr(),
        config,
        resumed: &[],
        interrupt: &interrupt,
    };
    let budget = Budget::new(config.time_limit, &interrupt);
    let worker = Worker::new(&checker, run.solvers, budget);
    let mut workforce = stage(
        LocalWorkforce::new(worker, shard::ShardStream::start),
        budget,
    );
    sample_with(&mut workforce, &run, budget, observer).unwrap()
}

/// Where the ranks measure their own tests, a round's NCD combines their shares with the
/// share of the tests before the rounds, and its coverage merges theirs into those tests':
/// the coordinator measures none of the rounds' tests.
#[test]
fn sharded_rounds_combine_the_ranks_ncd_shares() {
    let config = SnapConfig {
        sharded: true,
        max_rounds: Some(2),
        min_improvement: 0.0,
        stop_metric: StopMetric::Information,
        ..small_config(1)
    };
    let cnf = staged_formula();
    let ranks = NcdShare {
        tests: 400,
        terms: diversity::NcdTerms {
            whole: 9_000,
            smallest: 4,
            largest_without: 8_990,
        },
    };
    // The ranks' coverage: that of tests the run is unlikely to find (any assignment will
    // do: coverage does not check them).
    let vars = cnf.projection();
    let elsewhere: Vec<Assignment> = ["0", "1", "01", "10", "0011"]
        .iter()
        .map(|motif| Assignment::from_bit_string(&motif.repeat(30)[..30]).unwrap())
        .collect();
    let theirs = diversity::PairwiseCoverage::of(&elsewhere, &vars);
    let share = Some(diversity::RankMeasures {
        ncd: ranks,
        coverage: theirs.changes_since(&mut Vec::new()),
    });
    let mut tests = Vec::new();
    let mut keep = |t: &Assignment| {
        tests.push(t.clone());
        Ok(())
    };
    let report = staged_run(
        &config,
        |inner, _| Staged {
            share,
            ..Staged::new(inner)
        },
        &mut keep,
    );
    assert_eq!(report.rounds.len(), 3, "{:?}", report.stop);
    let before_rounds = report.rounds[0].suite_size;
    assert!(tests.len() > before_rounds, "the rounds found tests");
    let mut own = diversity::RunningNcd::new(&cnf.projection(), config.ncd_removals);
    own.extend(&tests[..before_rounds], &Budget::unlimited());
    let combined = diversity::combined_terms(&[ranks, own.share().unwrap()]);
    let mut coverage = diversity::PairwiseCoverage::of(&tests[..before_rounds], &vars);
    let own_coverage = coverage.fraction();
    coverage.merge(&theirs.changes_since(&mut Vec::new()));
    assert!(
        coverage.fraction() > own_coverage,
        "the ranks' pairs add to the suite's"
    );
    for round in &report.rounds[1..] {
        assert_eq!(round.ncd, combined.value());
        assert_eq!(round.information, combined.information());
        assert_eq!(round.coverage, coverage.fraction());
    }
}

/// The coordinator's time on messages counts in its own seconds, not in the ranks'
/// work: left in the work, a sharded coordinator's decoding of every verdict was hidden.
#[test]
fn the_coordinators_messages_count_as_its_own_time() {
    let config = SnapConfig {
        sharded: true,
        max_rounds: Some(2),
        min_improvement: 0.0,
        stop_metric: StopMetric::Information,
        ..small_config(1)
    };
    let report = staged_report(&config, |inner, _| Staged {
        talk: MESSAGES,
        ..Staged::new(inner)
    });
    assert_eq!(report.rounds.len(), 3, "{:?}", report.stop);
    for round in &report.rounds[1..] {
        assert!(
            round.messaging_seconds >= MESSAGES.as_secs_f64(),
            "{round:?}"
        );
        assert!(
            round.coordinator_seconds >= round.messaging_seconds,
            "{round:?}"
        );
    }
    assert!(report.messaging_seconds >= 2.0 * MESSAGES.as_secs_f64());
}

/// A round whose tasks the deadline skipped ends the run for the time limit. The run's
/// deadline had been set after its workforce's, as late as building the workforce took
/// (on a large formula, its watch lists): the workforce skipped a round's tasks while
/// the run, not yet at its own deadline, read the round as finding nothing new and
/// stopped as converged (xpose.sk_6_134 with `-t 60`: "no-new-tests"). The same with
/// rounds drawn by the ranks.
#[test]
fn a_round_the_deadline_cut_stops_for_the_time_limit() {
    for sharded in [false, true] {
        a_round_the_deadline_cut_stops_for_the_time_limit_when(sharded);
    }
}

fn a_round_the_deadline_cut_stops_for_the_time_limit_when(sharded: bool) {
    let config = SnapConfig {
        time_limit: Duration::from_millis(800),
        sharded,
        ..small_config(1)
    };
    let report = staged_report(&config, |inner, budget| {
        // As long as a large formula's workforce takes to build.
        std::thread::sleep(Duration::from_millis(200));
        Staged {
            late: Some(budget),
            ..Staged::new(inner)
        }
    });
    let last = report.rounds.last().unwrap();
    // Cut in its tasks, or before them in its draw.
    let cut = last.skipped > 0 || last.candidates == 0;
    assert!(last.round > 0 && cut, "{last:?}");
    assert_eq!(report.stop, StopReason::TimeLimit);
}

#[test]
fn unsat_formula_is_reported() {
    let cnf = crate::testing::unsatisfiable();
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

/// `--max-rounds 0` writes the initial solutions and runs no round (it once ran one, as
/// `--max-rounds 1` does).
#[test]
fn zero_rounds_keep_the_initial_solutions_only() {
    let cnf = planted(60, 200, 3);
    let config = SnapConfig {
        max_rounds: Some(0),
        ..small_config(1)
    };
    let (tests, report) = run(&cnf, &config);
    assert_eq!(report.stop, StopReason::MaxRounds);
    assert_eq!(report.rounds.len(), 1);
    assert_eq!(tests.len(), report.rounds[0].suite_size);
    assert_eq!(report.candidates, 0);
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

/// A run on one thread capped at `max_tests`: every verdict arrives as its task ends.
fn capped_on_one_thread(max_tests: usize, seed: u64) -> (Vec<Assignment>, Report) {
    let cnf = planted(60, 200, 4);
    let config = SnapConfig {
        max_tests: Some(max_tests),
        ..small_config(seed)
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| run(&cnf, &config))
}

/// A workforce whose verdicts are distinct tests of a formula without clauses, made on
/// the spot: a round's first half is delivered as soon as the round starts, while the
/// round before is still being measured (20 tests of 20,000 variables: milliseconds of
/// compression, against microseconds until the first half is in), so it is held back;
/// the rest half a second later, when the measures are in.
struct Halves {
    vars: usize,
    made: u64,
    candidates: u64,
}

impl Halves {
    fn verdicts(&mut self, count: usize) -> std::vec::IntoIter<Verdict> {
        let words = self.vars.div_ceil(64);
        let verdicts: Vec<Verdict> = (0..count)
            .map(|_| {
                self.made += 1;
                let mut bits = vec![0; words];
                bits[0] = self.made;
                crate::testing::solved(Assignment::from_words(bits, self.vars))
            })
            .collect();
        verdicts.into_iter()
    }
}

impl Workforce for Halves {
    fn run(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        if centroids.is_empty() {
            deliver(&mut self.verdicts(tasks.len()))?;
            return Ok(());
        }
        self.candidates += tasks.len() as u64;
        let half = tasks.len() / 2;
        deliver(&mut self.verdicts(half))?;
        std::thread::sleep(Duration::from_millis(500));
        deliver(&mut self.verdicts(tasks.len() - half))?;
        Ok(())
    }

    fn shard(&mut self, _: &ShardPlan, _: &[Assignment]) -> Result<(), SampleError> {
        Err(crate::sampler::work::not_sharded())
    }

    fn run_shards(&mut self, _: usize, _: &mut Deliver) -> Result<draw::Drawn, SampleError> {
        Err(crate::sampler::work::not_sharded())
    }

    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError> {
        Ok(Vec::new())
    }

    fn busy(&self) -> Duration {
        Duration::ZERO
    }

    fn messaging(&self) -> Duration {
        Duration::ZERO
    }
}

/// Every candidate delivered is counted, as taken or as dropped: here the held-back half
/// of round 1 fills the suite once round 0's measures come, with the verdict that found
/// them in; that verdict had been neither taken nor dropped.
#[test]
fn a_verdict_that_comes_as_held_ones_fill_the_suite_is_counted() {
    let cnf = Cnf::new(20_000);
    let checker = Checker::new(&cnf);
    let config = SnapConfig {
        max_tests: Some(21),
        ..small_config(1)
    };
    let interrupt = AtomicBool::new(false);
    let run = Sampling {
        checker: &checker,
        solvers: Solvers::splr(),
        config: &config,
        resumed: &[],
        interrupt: &interrupt,
    };
    let mut workforce = Halves {
        vars: 20_000,
        made: 0,
        candidates: 0,
    };
    let mut sink = |_: &Assignment| Ok(());
    let budget = Budget::new(config.time_limit, &interrupt);
    let report = sample_with(&mut workforce, &run, budget, &mut sink).unwrap();
    assert_eq!(report.distinct_tests, 21);
    assert!(workforce.candidates > 2, "round 1 ran");
    assert_eq!(
        report.candidates + report.dropped_candidates,
        workforce.candidates,
        "{report:?}"
    );
}

/// Once the suite is full, the round's other candidates are not taken: on one thread the
/// last verdict taken is the one that filled the suite (those repaired while the round
/// before was measured are dropped, not counted).
#[test]
fn a_full_suite_ends_the_round_at_the_candidate_that_filled_it() {
    let (tests, report) = capped_on_one_thread(25, 2);
    assert_eq!(tests.len(), 25);
    let last = report.rounds.last().unwrap();
    assert_eq!(last.round, 1);
    assert!(last.new_tests == 5 && last.candidates < 20, "{last:?}");
}

/// A round runs while the last one's measures are read; where the stop rule then says
/// stop, that round's verdicts are dropped and the suite is the one a run that never
/// started it gives (here one capped at the round the rule stops after).
#[test]
fn a_round_run_while_the_stop_rule_stops_leaves_no_test() {
    let cnf = planted(60, 200, 6);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    // No round improves NCD by 1000%: the rule stops after round 1.
    let stopped_by_the_rule = SnapConfig {
        min_improvement: 10.0,
        ..small_config(4)
    };
    let capped = SnapConfig {
        max_rounds: Some(1),
        ..stopped_by_the_rule.clone()
    };
    let (tests, report) = pool.install(|| run(&cnf, &stopped_by_the_rule));
    let (expected, capped_report) = pool.install(|| run(&cnf, &capped));
    assert_eq!(report.stop, StopReason::Converged);
    assert_eq!(capped_report.rounds.len(), 2);
    assert_eq!(tests, expected);
    assert_eq!(report.rounds.len(), 2);
    assert_eq!(report.candidates, capped_report.candidates);
    assert!(
        report.dropped_candidates >= 1,
        "round 2 ran and was dropped"
    );
    assert_eq!(capped_report.dropped_candidates, 0, "round 2 never ran");
    // Round 2's time is in no round's, and no time is in two.
    assert!(report.dropped_seconds > 0.0);
    let rounds: f64 = report.rounds.iter().map(|r| r.seconds).sum();
    assert!(
        rounds + report.dropped_seconds <= report.seconds.total + 1e-9,
        "{rounds} + {} > {}",
        report.dropped_seconds,
        report.seconds.total
    );
}

/// An interrupt that comes while the next round runs ahead (here: as round 1 is
/// reported) ends that round as it would have had it not run ahead: the verdicts it held
/// back are taken, not dropped, so the tests found before the interrupt are kept.
#[test]
fn an_interrupt_while_a_round_runs_ahead_keeps_its_tests() {
    struct InterruptAfterRound1<'i> {
        tests: Vec<Assignment>,
        interrupt: &'i AtomicBool,
    }
    impl Observer for InterruptAfterRound1<'_> {
        fn test(&mut self, test: &std::sync::Arc<Assignment>) -> std::io::Result<()> {
            self.tests.push((**test).clone());
            Ok(())
        }
        fn round(&mut self, stats: &RoundStats) {
            if stats.round == 1 {
                self.interrupt
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
    let cnf = planted(60, 200, 6);
    let checker = Checker::new(&cnf);
    // Never converged: only the interrupt stops the run.
    let config = SnapConfig {
        min_improvement: -10.0,
        ..small_config(4)
    };
    let interrupt = AtomicBool::new(false);
    let mut observer = InterruptAfterRound1 {
        tests: Vec::new(),
        interrupt: &interrupt,
    };
    let report = run_on_threads(&checker, &config, &interrupt, 1, &mut observer);
    assert_eq!(report.stop, StopReason::Interrupted);
    assert_eq!(report.rounds.len(), 3, "round 2 ran and was kept");
    assert!(report.rounds[2].candidates >= 1);
    assert_eq!(report.dropped_candidates, 0);
    let joined: usize = report.rounds.iter().map(|r| r.new_tests).sum();
    assert_eq!(observer.tests.len(), joined);
}

/// A suite of one is full after the first solution: no other is solved.
#[test]
fn one_test_takes_one_solution() {
    let (tests, report) = capped_on_one_thread(1, 3);
    assert_eq!(tests.len(), 1);
    assert_eq!(report.rounds[0].samples, 1);
}

/// Tests the observer is handed once `stop` ends a run where the workers outpace it, as
/// they outpace the suite's file on a wide formula: `stop` sets the interrupt at the
/// observer's `at`-th test (none: the time limit of `limit`). Before merging heeded
/// the budget, every verdict ready by then was merged: with `-t 5` a million-variable
/// suite went on being written for 1–5 s.
fn tests_handed_over_late(limit: Duration, interrupt_at: Option<usize>) -> (usize, usize) {
    let cnf = planted(40, 60, 5);
    let checker = Checker::new(&cnf);
    let interrupt = AtomicBool::new(false);
    let config = SnapConfig {
        samples: 100,
        time_limit: limit,
        min_improvement: 0.0,
        ..small_config(1)
    };
    let mut handed = 0;
    let mut stopped_at: Option<Instant> = None;
    let mut late = 0;
    let started = Instant::now();
    let mut slow_disk = |_: &Assignment| {
        let now = Instant::now();
        handed += 1;
        if interrupt_at == Some(handed) {
            interrupt.store(true, std::sync::atomic::Ordering::Relaxed);
            stopped_at = Some(now);
        }
        let stop = stopped_at.unwrap_or(started + limit);
        // The grace, and as much again for a loaded machine.
        if now > stop + 2 * MERGE_GRACE {
            late += 1;
        }
        std::thread::sleep(Duration::from_millis(20));
        Ok(())
    };
    run_on_threads(&checker, &config, &interrupt, 2, &mut slow_disk);
    (handed, late)
}

#[test]
fn merging_stops_soon_after_the_time_limit_or_an_interrupt() {
    // 100 initial solutions at 20 ms each: 2 s of writing, most of it past either stop.
    let (handed, late) = tests_handed_over_late(Duration::from_millis(100), None);
    assert!(handed >= 1 && late <= 1, "{handed} tests, {late} late");
    let (handed, late) = tests_handed_over_late(Duration::from_secs(60), Some(3));
    assert!(handed >= 3 && late <= 1, "{handed} tests, {late} late");
}

/// Tests merged in the grace after the time limit are measured too: a run that ran out of
/// time reports its suite's NCD (it had read "not measured" for any test merged late).
#[test]
fn tests_merged_after_the_time_limit_are_measured() {
    let cnf = planted(40, 60, 5);
    let checker = Checker::new(&cnf);
    let interrupt = AtomicBool::new(false);
    let config = SnapConfig {
        samples: 100,
        time_limit: Duration::from_millis(100),
        ..small_config(1)
    };
    let started = Instant::now();
    let mut late = 0;
    // 20 ms a test: most of the initial solutions are merged past the limit.
    let mut slow_disk = |_: &Assignment| {
        late += usize::from(started.elapsed() > config.time_limit);
        std::thread::sleep(Duration::from_millis(20));
        Ok(())
    };
    let report = run_on_threads(&checker, &config, &interrupt, 2, &mut slow_disk);
    assert!(late > 0, "no test merged after the limit");
    let last = report.rounds.last().expect("round 0 is reported");
    assert!(!last.ncd.is_nan(), "NCD not measured");
}

/// With sessions of `backend`, the suite depends on the seed, not on the threads: each
/// solver lane's session sees its tasks in the same order however many threads share them.
fn suites_are_a_function_of_the_seed_whatever_the_threads(
    backend: &dyn crate::solver::IncrementalBackend,
) {
    let cnf = planted(80, 300, 11);
    let checker = Checker::new(&cnf);
    let solvers = Solvers {
        sessions: Some(backend),
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

#[test]
fn native_suites_are_a_function_of_the_seed_whatever_the_threads() {
    suites_are_a_function_of_the_seed_whatever_the_threads(&crate::solver::native::Native);
}

#[cfg(feature = "cadical")]
#[test]
fn cadical_suites_are_a_function_of_the_seed_whatever_the_threads() {
    suites_are_a_function_of_the_seed_whatever_the_threads(&crate::solver::cadical::Cadical);
}

/// A run of up to 3 rounds on a planted formula with `solvers`: every emitted test
/// satisfies the formula, and none repeats.
fn every_emitted_test_holds(
    vars: usize,
    ratio: f64,
    seed: u64,
    solvers: Solvers,
) -> Result<(), TestCaseError> {
    let cnf = planted(vars, (vars as f64 * ratio) as usize, seed);
    let checker = Checker::new(&cnf);
    let config = SnapConfig {
        samples: 10,
        clusters: 3,
        max_rounds: Some(3),
        seed,
        ..Default::default()
    };
    let (tests, _) = run_with(&cnf, &config, solvers);
    prop_assert!(!tests.is_empty());
    prop_assert!(tests.iter().all(|t| checker.satisfies(t)));
    let distinct: HashSet<_> = tests.iter().collect();
    prop_assert_eq!(distinct.len(), tests.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn every_emitted_test_satisfies_the_formula_and_none_repeats(
        vars in 5usize..40, ratio in 1.0f64..4.2, seed in any::<u64>()
    ) {
        every_emitted_test_holds(vars, ratio, seed, Solvers::splr())?;
    }

    /// The same invariant with native sessions doing the solving.
    #[test]
    fn every_test_from_native_sessions_satisfies_the_formula(
        vars in 5usize..40, ratio in 1.0f64..4.2, seed in any::<u64>()
    ) {
        let solvers = Solvers { sessions: Some(&crate::solver::native::Native), lanes: 3, ..Solvers::splr() };
        every_emitted_test_holds(vars, ratio, seed, solvers)?;
    }

    /// The same invariant with CaDiCaL sessions doing the solving.
    #[cfg(feature = "cadical")]
    #[test]
    fn every_test_from_cadical_sessions_satisfies_the_formula(
        vars in 5usize..40, ratio in 1.0f64..4.2, seed in any::<u64>()
    ) {
        let solvers = Solvers { sessions: Some(&crate::solver::cadical::Cadical), lanes: 3, ..Solvers::splr() };
        every_emitted_test_holds(vars, ratio, seed, solvers)?;
    }
}

/// Native sessions whose every search reports `CONFLICTS` more conflicts, and that say they
/// leave nothing open (so that no fresh solution is tried by propagation first): fresh
/// solutions that read as hard searches.
struct HardSearches;

impl HardSearches {
    const CONFLICTS: u64 = 5_000;
}

struct HardSession<'a>(Box<dyn crate::solver::IncrementalSolver + 'a>);

impl crate::solver::IncrementalSolver for HardSession<'_> {
    fn solve(
        &mut self,
        assumptions: &[crate::formula::Lit],
        phases: &Assignment,
        steering: crate::solver::Steering,
        conflicts: Option<u32>,
    ) -> crate::solver::Answer {
        self.0.solve(assumptions, phases, steering, conflicts)
    }

    fn solver_calls(&self) -> u64 {
        self.0.solver_calls()
    }

    fn conflicts(&self) -> u64 {
        self.0.conflicts() + HardSearches::CONFLICTS * self.0.solver_calls()
    }

    fn open_variables(&self) -> usize {
        0
    }
}

impl crate::solver::IncrementalBackend for HardSearches {
    fn name(&self) -> &'static str {
        "hard"
    }

    fn open<'a>(
        &self,
        cnf: &'a Cnf,
        budget: Budget<'a>,
    ) -> Result<Box<dyn crate::solver::IncrementalSolver + 'a>, String> {
        let native = crate::solver::native::Native.open(cnf, budget)?;
        Ok(Box::new(HardSession(native)))
    }
}

/// Where fresh solutions are hard searches the rounds start once ten are in, and the suite
/// stays a function of the seed; the paper's loop waits for all N.
#[test]
fn rounds_start_early_where_fresh_solutions_are_hard_searches() {
    let cnf = planted(40, 100, 3);
    let solvers = Solvers {
        oracle: &Splr,
        sessions: Some(&HardSearches),
        lanes: 2,
    };
    let config = SnapConfig {
        samples: 40,
        clusters: 2,
        max_rounds: Some(1),
        ..small_config(5)
    };
    let (tests, report) = run_with(&cnf, &config, solvers);
    assert!(report.started_early);
    assert_eq!(report.rounds[0].samples, 10);
    assert!(report.rounds.len() > 1, "a round ran");
    assert_eq!(run_with(&cnf, &config, solvers).0, tests, "the same seed");
    let paper = SnapConfig {
        early_start: false,
        ..config.clone()
    };
    let (_, report) = run_with(&cnf, &paper, solvers);
    assert!(!report.started_early);
    assert_eq!(report.rounds[0].samples, 40);
    let native = Solvers {
        sessions: Some(&crate::solver::native::Native),
        ..solvers
    };
    assert!(!run_with(&cnf, &config, native).1.started_early);
}

/// The step after the stop rule that `cover` asks for: its tests between them cover every
/// value pair of the support that the samples show, each is a model and new to the suite,
/// a greedy minimization of the suite keeps no more tests than of the suite without them,
/// and the same seed gives the same suite. Without `cover` there is no such step.
#[test]
fn directed_tests_cover_every_value_pair_the_samples_show() {
    // c ind x1..x10; x11 = x1 ∧ x2; x3 and x4 never both true; one of x5..x8 true.
    let text = "p cnf 11 5\nc ind 1 2 3 4 5 6 7 8 9 10 0\n-11 1 0\n-11 2 0\n11 -1 -2 0\n-3 -4 0\n5 6 7 8 0\n";
    let cnf = crate::dimacs::parse(text.as_bytes(), crate::dimacs::Strictness::Strict)
        .unwrap()
        .cnf;
    let checker = Checker::new(&cnf);
    let plain = SnapConfig {
        samples: 12,
        clusters: 2,
        ..small_config(3)
    };
    let covering = SnapConfig {
        cover: true,
        ..plain.clone()
    };
    let natives = Solvers {
        sessions: Some(&crate::solver::native::Native),
        ..Solvers::splr()
    };
    let (without, report) = run_with(&cnf, &plain, natives);
    assert_eq!(report.covering, cover::CoverReport::default());
    let (tests, report) = run_with(&cnf, &covering, natives);
    let directed = report.covering;
    assert!(directed.candidates > 0 && directed.new_tests > 0);
    assert_eq!(directed.pairs_covered, directed.pairs_seen);
    assert_eq!(tests.len(), report.distinct_tests);
    assert_eq!(
        tests[..without.len()],
        without[..],
        "the rounds ran as before"
    );
    assert!(tests.iter().all(|t| checker.satisfies(t)));
    assert_eq!(
        tests
            .iter()
            .map(Assignment::fingerprint)
            .collect::<HashSet<_>>()
            .len(),
        tests.len()
    );
    let support = cnf.projection();
    let kept = |suite: &[Assignment]| {
        crate::minimize::minimize(suite, &support, 2, 1.0)
            .unwrap()
            .chosen
            .len()
    };
    assert!(
        kept(&tests) <= kept(&without),
        "{} > {}",
        kept(&tests),
        kept(&without)
    );
    assert_eq!(run_with(&cnf, &covering, natives).0, tests, "the same seed");
}

/// Ranks may do rounds ahead only where no tasks follow the rounds: the cover step's run in
/// the ranks' solvers, whose state a round done ahead and cut short would leave to timing.
#[test]
fn ranks_go_ahead_only_where_no_tasks_follow_the_rounds() {
    assert!(SnapConfig::default().shard_plan().ahead);
    let covering = SnapConfig {
        cover: true,
        ..SnapConfig::default()
    };
    assert!(!covering.shard_plan().ahead);
}
