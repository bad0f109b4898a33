//! `snapsat sample`: build a test suite, writing each test as it is found.

mod outcome;
mod progress;
mod resume;
mod threads;

use crate::failure::{status, usage, Classify, Failure, Result};
use crate::flags::{Algorithm, SolverChoice};
use crate::output::check_outputs;
use crate::signals::InputGuard;
use crate::summary;
use crate::{read_formula, InputArgs, OutputFormat};
use clap::Args;
use outcome::{conclude, without_suite, write_small, write_stats, SmallRun, Timing};
use progress::CliObserver;
use resume::{open_output, resumed_tests, Resumed};
use snapsat::budget::Budget;
use snapsat::distribute;
use snapsat::distribute::launch::{Launch, MAX_THREADS};
use snapsat::formula::Cnf;
use snapsat::sampler::quick::{self, QuickConfig};
use snapsat::sampler::{self, SampleError, Sampling, SnapConfig, StopMetric};
use snapsat::solver::Splr;
use snapsat::testfile::{Parts, TestFormat};
use snapsat::verify::Checker;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use threads::start_ranks;

/// The largest N: the delta pool holds up to N(N−1)/2 pairs.
const MAX_SAMPLES: u64 = 10_000;
/// The most clusters (k) and in-process ranks.
const MAX_CLUSTERS: u64 = 1_000;
const MAX_RANKS: u64 = 1_024;

#[derive(Args)]
pub struct SampleArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The sampler.
    #[arg(short, long, value_enum, default_value_t = Algorithm::Snap)]
    pub algorithm: Algorithm,
    /// The solver [default: native; QuickSampler: splr]. With native and cadical the same
    /// seed and --lanes give the same suite on any threads of one rank (across several ranks:
    /// with --sharded, the same for the same ranks and threads); with splr the same seed gives
    /// the same suite on any threads and ranks, where no fresh solution takes splr a second.
    #[arg(long, value_enum)]
    pub solver: Option<SolverChoice>,
    /// Solver lanes of each rank (native, cadical): task i goes to lane i mod LANES, whose session
    /// sees its tasks in order. At most LANES threads solve at once; each lane holds the
    /// formula and starts cold. Default: the threads of the rank.
    #[arg(long, value_name = "LANES", value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS))]
    pub lanes: Option<u64>,
    /// Write tests here (default: standard output), one a line, each within a millisecond of
    /// being found.
    /// The file is created (or emptied) only once the first test is ready.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// How tests are written (a resumed file keeps its own).
    #[arg(long, value_enum, default_value_t = OutputFormat::Dimacs)]
    pub format: OutputFormat,
    /// Seed of every random choice: the same seed gives the same suite.
    #[arg(short, long, default_value_t = 0)]
    pub seed: u64,
    /// N: initial solver solutions, and candidates per centroid per round (2 to 10000).
    #[arg(short = 'n', long, default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(2..=MAX_SAMPLES))]
    pub samples: u64,
    /// k: clusters (centroids mutated per round; 1 to 1000).
    #[arg(short = 'k', long, default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=MAX_CLUSTERS))]
    pub clusters: u64,
    /// X: go on while the suite's NCD improves by at least this many percent per round.
    #[arg(short = 'x', long, value_name = "PERCENT", default_value_t = 5.0)]
    pub min_improvement: f64,
    /// The measure X applies to: NCD (Eq. 2) of the suite projected onto `c ind` (all
    /// variables when there is none), Eq. 2's numerator alone, or pairwise literal coverage.
    #[arg(long, default_value = "ncd", value_parser = crate::flags::named::<StopMetric>(&StopMetric::NAMES))]
    pub stop_metric: StopMetric,
    /// T: stop after this many seconds (within about one more), keeping the suite built so far.
    #[arg(short = 't', long, value_name = "SECONDS", default_value_t = 600.0)]
    pub time_limit: f64,
    /// Stop once the suite holds this many tests.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tests: Option<u64>,
    /// Stop after this many rounds (Snap; 0: the initial solutions alone).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u64>,
    /// Run Snap's loop exactly as the paper's Fig. 2: all N initial solutions before the
    /// first round. By default the rounds start once 10 are in where fresh solutions are
    /// hard searches (a quarter of them past 1,000 conflicts, native and cadical), and the
    /// suite grows at the speed of repairs.
    #[arg(long)]
    pub paper_loop: bool,
    /// Stop once this many candidates were produced (QuickSampler).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_candidates: Option<u64>,
    /// Worker threads of each rank, 1 to 1024 (default: the cores of the machine shared by
    /// its ranks; RAYON_NUM_THREADS also sets it). The coordinator has two more beside
    /// them: one measures NCD, one writes the suite.
    #[arg(short = 'j', long,
          value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS))]
    pub threads: Option<u64>,
    /// Spread the work over this many ranks in this process (Snap; 1 to 1024); under
    /// `mpirun` or `srun` with an MPI build, the job's processes are the ranks instead.
    #[arg(long, default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=MAX_RANKS))]
    pub ranks: u64,
    /// Every rank draws and does rounds of its own from its own samples (steps 2-3; Snap),
    /// and the coordinator only merges their tests and applies the stop rule to the whole
    /// suite: for many ranks on formulas whose repairs take microseconds, where drawing
    /// rounds for all ranks keeps the coordinator from keeping up. A round is then one of
    /// every rank (N*k candidates each). One rank gives the suite of an unsharded run; more
    /// give another suite, the same for the same seed and ranks (native, cadical: of the same
    /// threads and --lanes). With several ranks and -o FILE, each rank measures and keeps its
    /// own tests (in FILE.parts/, a folder all ranks' hosts must share) and places them in
    /// FILE at the end: until then FILE holds the initial solutions
    #[arg(long)]
    pub sharded: bool,
    /// Continue the suite in FILE (an interrupted or earlier run's): its tests are verified
    /// again, count as found, and new tests are appended to FILE in its format (Snap). An
    /// unterminated last line (a write cut short by a crash) is dropped, and said so.
    #[arg(long, value_name = "FILE", conflicts_with = "output")]
    pub resume: Option<PathBuf>,
    /// Also write a very small suite that keeps the suite's t-wise coverage of `c ind`, most
    /// new combinations first, to FILE at the end of the run (an interrupted run's too): the
    /// fewest tests of the suite greedy choice finds (`snapsat minimize`) and, at t = 2 with
    /// native or cadical, fewer still, built by the solver near them (`minimize --shrink`;
    /// each checked, in the last tenth of -t). The suite itself is written as always, with,
    /// after the stop rule, tests planned to cover the suite's value pairs of `c ind`
    /// together (Snap, not with --paper-loop).
    #[arg(long, value_name = "FILE")]
    pub small: Option<PathBuf>,
    /// t of --small: combinations of how many support variables to keep (1 to 3).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=3), requires = "small")]
    pub strength: u64,
    /// Write run statistics as JSON here (replaced whole at the end of the run); a run without
    /// a suite (unsatisfiable, no solution in time) writes its answer and settings.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// No summary or progress on standard error.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// The run's internals after its one-line summary: where the time went (the coordinator's
    /// share, NCD, writing), solver calls, throughput and latencies, each rank's figures.
    #[arg(short, long)]
    pub verbose: bool,
    /// Progress where standard error is no terminal (a batch job's log): a line at the end of
    /// a round once this many seconds have passed since the last (0: none). On a terminal
    /// the progress is one line, redrawn.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub progress: f64,
}

impl SampleArgs {
    /// The solver asked for, or the algorithm's own: native, which measured fastest, for
    /// Snap; splr for QuickSampler, which asks one-shot questions alone.
    pub fn solver(&self) -> SolverChoice {
        self.solver.unwrap_or(match self.algorithm {
            Algorithm::Snap => SolverChoice::Native,
            Algorithm::Quicksampler => SolverChoice::Splr,
        })
    }
}

/// The flags' values, checked: every number within what the run can use.
fn checked_time_limit(args: &SampleArgs) -> Result<Duration> {
    let time_limit = crate::flags::time_limit(args.time_limit)?;
    if !(args.min_improvement >= 0.0 && args.min_improvement <= 1e6) {
        return Err(usage(format!(
            "--min-improvement must be a percentage from 0 to 1e6, not {}",
            args.min_improvement
        )));
    }
    if !(args.progress >= 0.0 && args.progress <= 1e9) {
        return Err(usage(format!(
            "--progress must be a number of seconds from 0 to 1e9, not {}",
            args.progress
        )));
    }
    let given = |flag: &'static str, is: bool| is.then_some(flag);
    let meaningless = match args.algorithm {
        Algorithm::Quicksampler => [
            given("--ranks", args.ranks > 1),
            given("--resume", args.resume.is_some()),
            given("--sharded", args.sharded),
            given("--max-rounds", args.max_rounds.is_some()),
            given("--paper-loop", args.paper_loop),
            given("--lanes", args.lanes.is_some()),
            // QuickSampler asks splr alone.
            given(
                "--solver",
                args.solver.is_some_and(|s| s != SolverChoice::Splr),
            ),
        ]
        .into_iter()
        .flatten()
        .next()
        .map(|flag| (flag, "snap")),
        Algorithm::Snap => given("--max-candidates", args.max_candidates.is_some())
            .map(|flag| (flag, "quicksampler")),
    };
    if let Some((flag, algorithm)) = meaningless {
        return Err(usage(format!(
            "{flag} works with --algorithm {algorithm} only"
        )));
    }
    Ok(time_limit)
}

pub fn run(args: SampleArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let time_limit = checked_time_limit(&args)?;
    // From here on SIGINT, SIGTERM and the time limit end the run: before the sampler
    // watches them (starting threads, reading the input), by ending the process.
    let interrupt = crate::signals::interrupt_on_signals()?;
    let guard = InputGuard::watch(
        interrupt.clone(),
        started.checked_add(time_limit),
        "the input",
    );
    let (launch, threads, lanes) = start_ranks(&args)?;
    let mut sampling = false;
    let run = Start {
        started,
        time_limit,
        interrupt,
        guard,
    };
    match run_ranks(&args, run, &launch, (threads, lanes), &mut sampling) {
        Err(failure)
            if !sampling
                && launch.abandon(
                    &format!("{:#}", failure.error),
                    failure.status == status::BAD_INPUT,
                ) =>
        {
            let rank = launch.rank();
            Err(Failure {
                status: status::HANDED_TO_RANK_0,
                error: failure
                    .error
                    .context(format!("rank {rank}, for rank 0 to end the job with")),
            })
        }
        outcome => outcome,
    }
}

/// The share of the time limit kept for --small's shrinking.
const SHRINK_SHARE: f64 = 0.1;

/// How a run began: its clock, its time limit from then, the interrupt flag, and the guard
/// that ends the process until the sampler watches them.
struct Start {
    started: Instant,
    time_limit: Duration,
    interrupt: Arc<std::sync::atomic::AtomicBool>,
    guard: InputGuard,
}

/// This rank's part of the run; `sampling` set once the coordinator has the ranks, or this
/// rank serves it.
fn run_ranks(
    args: &SampleArgs,
    start: Start,
    launch: &Launch,
    (threads, lanes): (usize, usize),
    sampling: &mut bool,
) -> Result<ExitCode> {
    check_run_outputs(args, launch)?;
    let solvers = args.solver().solvers(lanes)?;
    let quiet = args.quiet || launch.rank() > 0;
    let t = Instant::now();
    let cnf = read_formula(&args.input, quiet)?;
    let parse_seconds = t.elapsed().as_secs_f64();
    let checker = Checker::new(&cnf);
    #[cfg(feature = "mpi")]
    if let Launch::Mpi(job) = &launch {
        if job.rank() > 0 {
            use anyhow::Context as _;
            drop(start.guard);
            *sampling = true;
            job.serve(threads, &checker, solvers, &start.interrupt)
                .with_context(|| format!("rank {}", job.rank()))?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    let (resumed, format, mut observer) = open_observer(args, &checker, quiet, launch.ranks())?;
    // The time limit counts from the command's start: reading the input took some of it.
    // --small's shrinking (t = 2, with sessions) has the last tenth of it, so that a run
    // that samples until the limit still gets a shrunk suite within it.
    let shrinks = args.small.is_some() && args.strength == 2 && solvers.sessions.is_some();
    let share = if shrinks { SHRINK_SHARE } else { 0.0 };
    let time_limit = start
        .time_limit
        .mul_f64(1.0 - share)
        .saturating_sub(start.started.elapsed());
    let config = snap_config(args, time_limit);
    let run = Sampling {
        checker: &checker,
        solvers,
        config: &config,
        resumed: &resumed.tests,
        interrupt: &start.interrupt,
    };
    drop(start.guard);
    *sampling = true;
    let result = sample_suite(args, time_limit, launch, threads, run, &mut observer);
    // Every test handed over is written before the run says anything more.
    let (written, suite) = observer.finish();
    let outcome = without_suite(result, &args.input.formula)?;
    let writer_seconds = written.output("the tests")?;
    let small = match (&args.small, suite, &outcome) {
        (Some(path), Some(suite), Ok(report)) => {
            let directed = match report {
                summary::RunReport::Snap(r) => r.covering.new_tests as usize,
                summary::RunReport::Quick(_) => 0,
            };
            // New tests for --small are searched within the run's time limit.
            let deadline = start.started.checked_add(start.time_limit);
            let budget = match deadline {
                Some(deadline) => Budget::until(deadline, &start.interrupt),
                None => Budget::new(start.time_limit, &start.interrupt),
            };
            let run = SmallRun {
                checker: &checker,
                sessions: solvers.sessions,
                strength: args.strength,
                seed: args.seed,
                budget,
                format,
            };
            Some(write_small(path, &suite, directed, run)?)
        }
        _ => None,
    };
    if let Some(path) = &args.stats {
        let timing = Timing {
            parse_seconds,
            wall_seconds: start.started.elapsed().as_secs_f64(),
            writer_seconds,
        };
        let small = small.as_ref();
        write_stats(path, args, &cnf, launch, threads, &timing, small, &outcome)?;
    }
    Ok(conclude(
        args,
        &cnf,
        outcome,
        writer_seconds,
        small.as_ref(),
    ))
}

/// The tests `--resume` names (none without it), the format to write in, and the observer
/// that writes new tests after them.
fn open_observer(
    args: &SampleArgs,
    checker: &Checker,
    quiet: bool,
    ranks: usize,
) -> Result<(Resumed, TestFormat, CliObserver)> {
    let resumed = match &args.resume {
        Some(path) => resumed_tests(path, checker, quiet)?,
        None => Resumed::default(),
    };
    let cnf = checker.cnf();
    let format = output_format(args, &resumed, cnf)?;
    let keep = args.small.is_some().then(|| resumed.tests.clone());
    let parts = ranks_keep_tests(args, ranks, format)?;
    let output = open_output(args, resumed.cut_at)?;
    let num_vars = cnf.num_vars();
    let observer = CliObserver::new(output, format, num_vars, quiet, args.progress, keep, parts)
        .map_err(|e| anyhow::anyhow!("cannot start the test writer: {e}"))?;
    Ok((resumed, format, observer))
}

/// Where the ranks keep the tests they find: a sharded Snap run over several ranks writing
/// its suite to a file has each rank write its own, in a folder beside the file, placed in
/// it at the end (no test passes through rank 0). A folder left by a killed run holds tests
/// that `--resume` takes in; a new run does not overwrite it.
fn ranks_keep_tests(args: &SampleArgs, ranks: usize, format: TestFormat) -> Result<Option<Parts>> {
    let Some(path) = args.output.as_ref().or(args.resume.as_ref()) else {
        return Ok(None);
    };
    let folder = Parts::folder_of(path);
    if folder.exists() {
        return Err(usage(format!(
            "{} holds the tests of an interrupted run's ranks: continue it with --resume {}, \
             or delete the folder",
            folder.display(),
            path.display()
        )));
    }
    if !args.sharded || ranks < 2 || args.algorithm != Algorithm::Snap {
        return Ok(None);
    }
    let parts = Parts::beside(path, format).output(path.display())?;
    std::fs::create_dir(&parts.folder).output(parts.folder.display())?;
    Ok(Some(parts))
}

/// Refuses, before any work, outputs that are inputs or no files ([`check_outputs`]). Only
/// the first rank writes: a folder the others' nodes lack is none of theirs.
fn check_run_outputs(args: &SampleArgs, launch: &Launch) -> Result<()> {
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    outputs.extend(args.output.as_deref().map(|p| ("-o", p)));
    outputs.extend(args.resume.as_deref().map(|p| ("--resume", p)));
    outputs.extend(args.stats.as_deref().map(|p| ("--stats", p)));
    outputs.extend(args.small.as_deref().map(|p| ("--small", p)));
    if launch.rank() == 0 {
        check_outputs(&[("formula", &args.input.formula)], &outputs)?;
    }
    Ok(())
}

/// The format the tests are written in: a resumed file's own, else `--format`. A formula
/// without variables has one test, the empty one, which bits would write as an empty line.
fn output_format(args: &SampleArgs, resumed: &Resumed, cnf: &Cnf) -> Result<TestFormat> {
    let format = resumed.format.unwrap_or(args.format.into());
    if format == TestFormat::Bits && cnf.num_vars() == 0 {
        return Err(usage(
            "a formula without variables has one test, the empty one, which --format bits \
             would write as an empty line that no reader takes for a test: use --format dimacs",
        ));
    }
    Ok(format)
}

fn snap_config(args: &SampleArgs, time_limit: Duration) -> SnapConfig {
    SnapConfig {
        samples: args.samples as usize,
        clusters: args.clusters as usize,
        min_improvement: args.min_improvement / 100.0,
        time_limit,
        max_tests: args.max_tests.map(|n| n as usize),
        max_rounds: args.max_rounds.map(|n| n as usize),
        seed: args.seed,
        stop_metric: args.stop_metric,
        sharded: args.sharded,
        early_start: !args.paper_loop,
        cover: args.small.is_some() && !args.paper_loop,
        ..Default::default()
    }
}

/// Runs the chosen algorithm on the run's ranks (Snap's parameters are in `run.config`).
fn sample_suite(
    args: &SampleArgs,
    time_limit: Duration,
    launch: &Launch,
    threads: usize,
    run: Sampling,
    observer: &mut CliObserver,
) -> std::result::Result<summary::RunReport, SampleError> {
    match args.algorithm {
        Algorithm::Snap => {
            let report = match launch {
                Launch::Process { ranks: 1 } => sampler::sample_in_process(&run, observer),
                Launch::Process { ranks } => {
                    distribute::local::sample(*ranks, threads, &run, observer)
                }
                #[cfg(feature = "mpi")]
                Launch::Mpi(job) => job.coordinate(threads, &run, observer),
            };
            report.map(|r| summary::RunReport::Snap(Box::new(r)))
        }
        Algorithm::Quicksampler => {
            let config = QuickConfig {
                time_limit,
                max_tests: args.max_tests.map(|n| n as usize),
                max_candidates: args.max_candidates.map(|n| n as usize),
                seed: args.seed,
            };
            quick::sample(run.checker, &Splr, &config, observer, run.interrupt)
                .map(summary::RunReport::Quick)
        }
    }
}
