//! `snapsat sample`: build a test suite, writing each test as it is found.

use crate::failure::{say, status, usage, Classify, Failure, Result};
use crate::flags::{Algorithm, SolverChoice};
use crate::output::{check_outputs, write_atomically, LazyFile};
use crate::signals::InputGuard;
use crate::summary::{self, Answer};
use crate::{read_formula, read_text, InputArgs, OutputFormat};
use clap::Args;
use snapsat::assignment::Assignment;
use snapsat::distribute;
use snapsat::distribute::launch::{Launch, LaunchError, MAX_THREADS};
use snapsat::sampler::quick::{self, QuickConfig};
use snapsat::sampler::{
    self, Observer, RoundStats, SampleError, Sampling, SnapConfig, StopMetric, StopReason,
};
use snapsat::solver::Splr;
use snapsat::testfile::{read_suite, BackgroundWriter, TestFormat, TestWriter};
use snapsat::verify::Checker;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Stop after this many rounds (Snap).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u64>,
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
    /// threads and --lanes).
    #[arg(long)]
    pub sharded: bool,
    /// Continue the suite in FILE (an interrupted or earlier run's): its tests are verified
    /// again, count as found, and new tests are appended to FILE in its format (Snap). An
    /// unterminated last line (a write cut short by a crash) is dropped, and said so.
    #[arg(long, value_name = "FILE", conflicts_with = "output")]
    pub resume: Option<PathBuf>,
    /// Also write the fewest tests of the suite that keep its t-wise coverage of `c ind`
    /// (`snapsat minimize`), most new combinations first, to FILE at the end of the run
    /// (an interrupted run's too). The suite itself is written as always.
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

/// Where the suite's lines go.
type Output = Box<dyn Write + Send>;

/// How a run shows its progress on standard error.
#[derive(Clone, Copy, PartialEq)]
enum Progress {
    None,
    /// One line, redrawn each round.
    Terminal,
    /// A line at a round's end once this long has passed since the last.
    Log(Duration),
}

/// Writes tests and shows progress as the sampler reports them.
struct CliObserver {
    writer: BackgroundWriter<Output>,
    progress: Progress,
    /// When the last progress line was written (the start before the first).
    logged: Instant,
    start: Instant,
    /// Every test of the suite, kept for --small.
    suite: Option<Vec<Assignment>>,
}

impl Observer for CliObserver {
    fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()> {
        self.writer.write(test)?;
        if let Some(suite) = &mut self.suite {
            suite.push(Assignment::clone(test));
        }
        Ok(())
    }

    fn round(&mut self, r: &RoundStats) {
        let line = || {
            format!(
                "snapsat: round {} · {} tests · NCD {} · {:.1} s",
                r.round,
                r.suite_size,
                summary::ncd_text(r.ncd),
                self.start.elapsed().as_secs_f64()
            )
        };
        match self.progress {
            Progress::None => {}
            Progress::Terminal => {
                use std::io::Write as _;
                let _ = write!(std::io::stderr(), "\r\x1b[2K{}", line());
            }
            Progress::Log(every) => {
                if self.logged.elapsed() >= every {
                    say!("{}", line());
                    self.logged = Instant::now();
                }
            }
        }
    }
}

/// The tests of the suite being resumed, and where its file is to be cut first (a torn
/// last line), with the format its lines have.
#[derive(Default)]
struct Resumed {
    tests: Vec<Assignment>,
    format: Option<TestFormat>,
    cut_at: Option<u64>,
}

/// Reads an earlier suite back: every line a complete test of this formula (exit 2 naming
/// the line otherwise), an unterminated last line set apart.
fn resumed_tests(path: &Path, checker: &Checker, quiet: bool) -> Result<Resumed> {
    let shown = path.display();
    let text = read_text(path, "the suite to resume")?;
    let suite = read_suite(&text, checker.cnf().num_vars()).input(&shown)?;
    if suite.tests.is_empty() {
        return Err(Failure::bad_input(anyhow::anyhow!(
            "{shown} holds no tests: there is no suite to resume (run without --resume to start one)"
        )));
    }
    if let Some((i, clause)) = suite
        .tests
        .iter()
        .enumerate()
        .find_map(|(i, t)| checker.first_violated(t).map(|c| (i, c)))
    {
        return Err(Failure::bad_input(anyhow::anyhow!(
            "{shown}: test {} falsifies clause {}: it is not a suite of this formula",
            i + 1,
            clause + 1
        )));
    }
    if let Some((_, line)) = suite.torn_tail {
        if !quiet {
            say!("snapsat: note: {shown}: line {line} has no end (a write cut short, as by a crash); it is no test and is dropped");
        }
    }
    Ok(Resumed {
        tests: suite.tests,
        format: suite.format,
        cut_at: suite.torn_tail.map(|(offset, _)| offset),
    })
}

/// Minimizes the suite (`snapsat minimize`) and writes the kept tests whole to `path`.
fn write_small(
    path: &Path,
    suite: &[Assignment],
    cnf: &snapsat::formula::Cnf,
    strength: u64,
    format: TestFormat,
) -> Result<summary::SmallSuite> {
    let kept = snapsat::minimize::minimize(suite, &cnf.projection(), strength as usize, 1.0)
        .map_err(Failure::bad_input)?;
    let mut writer = TestWriter::new(Vec::new(), format);
    for &i in &kept.chosen {
        writer.write(&suite[i]).map_err(anyhow::Error::from)?;
    }
    write_atomically(path, &writer.into_inner())?;
    Ok(summary::SmallSuite {
        tests: kept.chosen.len(),
        strength: strength as usize,
        pool_tests: suite.len(),
        covered_tuples: kept.covered_tuples,
        pool_tuples: kept.pool_tuples,
    })
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
    Start {
        started,
        time_limit,
        interrupt,
        guard,
    }: Start,
    launch: &Launch,
    (threads, lanes): (usize, usize),
    sampling: &mut bool,
) -> Result<ExitCode> {
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    outputs.extend(args.output.as_deref().map(|p| ("-o", p)));
    outputs.extend(args.resume.as_deref().map(|p| ("--resume", p)));
    outputs.extend(args.stats.as_deref().map(|p| ("--stats", p)));
    outputs.extend(args.small.as_deref().map(|p| ("--small", p)));
    // Only the first rank writes: a folder the others' nodes lack is none of theirs.
    if launch.rank() == 0 {
        check_outputs(&[("formula", &args.input.formula)], &outputs)?;
    }
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
            drop(guard);
            *sampling = true;
            job.serve(threads, &checker, solvers, &interrupt)
                .with_context(|| format!("rank {}", job.rank()))?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    let resumed = match &args.resume {
        Some(path) => resumed_tests(path, &checker, quiet)?,
        None => Resumed::default(),
    };
    let format = resumed.format.unwrap_or(args.format.into());
    if format == TestFormat::Bits && cnf.num_vars() == 0 {
        return Err(usage(
            "a formula without variables has one test, the empty one, which --format bits \
             would write as an empty line that no reader takes for a test: use --format dimacs",
        ));
    }
    let writer = TestWriter::new(open_output(args, resumed.cut_at)?, format);
    let mut observer = CliObserver {
        writer: BackgroundWriter::spawn(writer, cnf.num_vars())
            .map_err(|e| anyhow::anyhow!("cannot start the test writer: {e}"))?,
        progress: if quiet {
            Progress::None
        } else if std::io::stderr().is_terminal() {
            Progress::Terminal
        } else if args.progress > 0.0 {
            Progress::Log(Duration::from_secs_f64(args.progress))
        } else {
            Progress::None
        },
        logged: Instant::now(),
        start: Instant::now(),
        suite: args.small.is_some().then(|| resumed.tests.clone()),
    };
    // The time limit counts from the command's start: reading the input took some of it.
    let time_limit = time_limit.saturating_sub(started.elapsed());
    let config = snap_config(args, time_limit);
    let run = Sampling {
        checker: &checker,
        solvers,
        config: &config,
        resumed: &resumed.tests,
        interrupt: &interrupt,
    };
    drop(guard);
    *sampling = true;
    let result = sample_suite(args, time_limit, launch, threads, run, &mut observer);
    let CliObserver {
        writer,
        progress,
        suite,
        ..
    } = observer;
    if progress == Progress::Terminal {
        say!();
    }
    // Every test handed over is written before the run says anything more.
    let written = writer.finish();
    let outcome = without_suite(result, &args.input.formula)?;
    let writer_seconds = written.output("the tests")?.busy.as_secs_f64();
    let small = match (&args.small, suite, &outcome) {
        (Some(path), Some(suite), Ok(_)) => {
            Some(write_small(path, &suite, &cnf, args.strength, format)?)
        }
        _ => None,
    };
    if let Some(path) = &args.stats {
        let stats = summary::RunStats {
            answer: outcome
                .as_ref()
                .err()
                .map_or(Answer::Suite, NoSuite::answer),
            unknown: match &outcome {
                Err(NoSuite::Unknown(why)) => Some(why),
                _ => None,
            },
            algorithm: args.algorithm,
            solver: args.solver(),
            formula: args.input.formula.display().to_string(),
            variables: cnf.num_vars(),
            clauses: cnf.num_clauses(),
            independent_support: cnf.independent_support().len(),
            seed: args.seed,
            samples: args.samples,
            clusters: args.clusters,
            min_improvement_percent: args.min_improvement,
            stop_metric: args.stop_metric,
            sharded: args.sharded,
            time_limit_seconds: args.time_limit,
            launch: launch.name(),
            num_ranks: launch.ranks(),
            threads_per_rank: threads,
            parse_seconds,
            wall_seconds: started.elapsed().as_secs_f64(),
            writer_seconds,
            peak_memory_bytes: summary::peak_memory_bytes(),
            small: small.as_ref(),
            report: outcome.as_ref().ok(),
        };
        let json = serde_json::to_string_pretty(&stats).map_err(anyhow::Error::from)? + "\n";
        write_atomically(path, json.as_bytes())?;
    }
    let report = match outcome {
        Ok(report) => report,
        Err(no_suite) => return Ok(ExitCode::from(no_suite.status())),
    };
    if !args.quiet {
        let context = summary::Context {
            output: args.output.as_deref().or(args.resume.as_deref()),
            independent_support: !cnf.independent_support().is_empty(),
            verbose: args.verbose,
        };
        summary::print(&report, writer_seconds, &context);
        if let (Some(small), Some(path)) = (&small, &args.small) {
            summary::print_small(path, small);
        }
    }
    Ok(if report.stop() == StopReason::Interrupted {
        ExitCode::from(status::INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The answer of a run that has no suite.
enum NoSuite {
    Unsat,
    /// SIGINT or SIGTERM before the first test.
    Interrupted,
    /// With why no solution was found.
    Unknown(String),
}

impl NoSuite {
    fn answer(&self) -> Answer {
        match self {
            NoSuite::Unsat => Answer::Unsat,
            NoSuite::Interrupted => Answer::Interrupted,
            NoSuite::Unknown(_) => Answer::Unknown,
        }
    }

    fn status(&self) -> u8 {
        match self {
            NoSuite::Unsat => status::UNSAT,
            NoSuite::Interrupted => status::INTERRUPTED,
            NoSuite::Unknown(_) => status::UNKNOWN,
        }
    }
}

/// A run that ended without a suite: unsatisfiable and unknown are answers (said here; `Err`
/// inside), the rest are failures.
fn without_suite(
    result: std::result::Result<summary::RunReport, SampleError>,
    formula: &Path,
) -> Result<std::result::Result<summary::RunReport, NoSuite>> {
    match result {
        Ok(report) => Ok(Ok(report)),
        Err(SampleError::Unsat) => {
            say!(
                "snapsat: {}: the formula is unsatisfiable: no test exists",
                formula.display()
            );
            Ok(Err(NoSuite::Unsat))
        }
        Err(SampleError::Interrupted) => {
            say!("snapsat: interrupted before the first test: nothing was written");
            Ok(Err(NoSuite::Interrupted))
        }
        Err(SampleError::Unknown(why)) => {
            say!("snapsat: no solution found ({why}); try a longer --time-limit");
            Ok(Err(NoSuite::Unknown(why)))
        }
        Err(SampleError::Output(e)) => Err(e).output("the tests"),
        Err(e @ SampleError::Distribution(_)) => Err(anyhow::Error::from(e).into()),
        Err(e @ SampleError::Refused(_)) => Err(Failure::bad_input(e)),
    }
}

/// Worker threads a core may carry. Idle rayon workers spin before they sleep: on 2 cores,
/// 1,024 of them kept the coordinator from running for tens of seconds, past the time limit
/// and an interrupt. More threads than this are started as this many; the solver lanes stay
/// as many as asked, so the suite is the one the threads asked for would give.
const WORKERS_PER_CORE: usize = 16;

/// Threads beside the ranks' own: the main thread, the writer, NCD's, the relay.
const THREADS_BESIDE_RANKS: usize = 4;

/// The threads each rank starts (at most [`WORKERS_PER_CORE`] a core of this machine, for
/// all its in-process ranks together), and the solver lanes the threads asked for give.
fn thread_plan(args: &SampleArgs, launch: &Launch) -> Result<(usize, usize)> {
    let asked = launch.threads_per_rank(args.threads.map(|t| t as usize));
    let lanes = args.lanes.map_or(asked, |l| l as usize);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let local_ranks = match launch {
        Launch::Process { ranks } => *ranks,
        #[cfg(feature = "mpi")]
        Launch::Mpi(_) => 1,
    };
    let runnable = (cores * WORKERS_PER_CORE / local_ranks).max(1);
    let threads = asked.min(runnable);
    if threads < asked && !args.quiet && launch.rank() == 0 {
        say!(
            "snapsat: note: {asked} threads a rank are more than {cores} cores run well; \
             starting {threads} (the {lanes} solver lanes stay, and with them the suite)"
        );
    }
    // A rank's workers and the thread that serves the coordinator.
    let needed = local_ranks * (threads + 1) + THREADS_BESIDE_RANKS;
    if let Some((allowed, limit)) = thread_allowance().filter(|&(allowed, _)| needed > allowed) {
        return Err(usage(format!(
            "{local_ranks} rank(s) × {threads} thread(s) need about {needed} threads, and \
             {limit} allows {allowed}: ask for fewer --ranks or -j"
        )));
    }
    Ok((threads, lanes))
}

/// How many more threads this process may start, and the limit that says so: the user's
/// process limit (`ulimit -u`, which binds all but root), the system's `threads-max`, or the
/// address space (`ulimit -v`) at a worker's 2 MiB stack.
fn thread_allowance() -> Option<(usize, &'static str)> {
    let mut allowances = Vec::new();
    #[cfg(target_os = "linux")]
    {
        let limit = |resource| {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes the limit into `limit`, a valid rlimit, and reads nothing.
            let read = unsafe { libc::getrlimit(resource, &mut limit) } == 0;
            (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as usize)
        };
        // SAFETY: geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            if let Some(processes) = limit(libc::RLIMIT_NPROC) {
                allowances.push((processes, "`ulimit -u`"));
            }
        }
        if let Some(bytes) = limit(libc::RLIMIT_AS) {
            allowances.push((bytes / (4 << 20), "`ulimit -v`"));
        }
        let threads_max = std::fs::read_to_string("/proc/sys/kernel/threads-max");
        if let Some(max) = threads_max.ok().and_then(|t| t.trim().parse().ok()) {
            allowances.push((max, "the system's threads-max"));
        }
    }
    allowances.into_iter().min_by_key(|&(allowed, _)| allowed)
}

/// The ranks of the run, each one's threads and the solver lanes; this process's own work
/// gets a global pool of them (coordinated in-process ranks build their own).
fn start_ranks(args: &SampleArgs) -> Result<(Launch, usize, usize)> {
    let launch = Launch::detect(args.ranks as usize).map_err(|e| match e {
        LaunchError::NoMpiSupport(_) => usage(e),
        LaunchError::MpiInit => anyhow::Error::from(e).into(),
    })?;
    if args.ranks > 1 && launch.ranks() > 1 && launch.name() == "mpi" && launch.rank() == 0 {
        say!("snapsat: note: under MPI the job's processes are the ranks; --ranks is ignored");
    }
    let (threads, lanes) = thread_plan(args, &launch)?;
    if launch.ranks() == 1 || launch.rank() > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start the worker threads: {e}"))?;
    }
    Ok((launch, threads, lanes))
}

/// Where the tests go: `-o` (created at the first test), the resumed file (cut at a torn
/// last line, then appended to), or standard output.
fn open_output(args: &SampleArgs, cut_at: Option<u64>) -> Result<Output> {
    Ok(match (&args.output, &args.resume) {
        (Some(path), _) => Box::new(LazyFile::create(path)),
        (None, Some(path)) => {
            if let Some(offset) = cut_at {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .and_then(|f| f.set_len(offset))
                    .output(path.display())?;
            }
            Box::new(LazyFile::append(path))
        }
        (None, None) => Box::new(std::io::stdout()),
    })
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
