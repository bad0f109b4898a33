//! The `snapsat` command line: a thin layer over the library.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use snapsat::assignment::Assignment;
use snapsat::dimacs::{self, Strictness};
use snapsat::distribute;
use snapsat::diversity;
use snapsat::formula::Cnf;
use snapsat::oracle::Splr;
use snapsat::quicksampler::{self, QuickConfig, QuickReport};
use snapsat::report::{read_tests, TestFormat, TestWriter};
use snapsat::sampler::{
    self, Observer, Report, RoundStats, SampleError, Sampling, SnapConfig, StopMetric, StopReason,
};
use snapsat::verify::Checker;
use std::io::{BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit status when the formula is unsatisfiable (as SAT solvers report it).
const EXIT_UNSAT: u8 = 20;
/// Exit status when no solution was found in time.
const EXIT_UNKNOWN: u8 = 30;
/// Exit status after SIGINT or SIGTERM; every test found is on disk.
const EXIT_INTERRUPTED: u8 = 130;
/// Exit status for unreadable or malformed input.
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Parser)]
#[command(
    name = "snapsat",
    version,
    about = "Very small, 100%-valid, diverse test suites from CNF formulas, by the Snap method",
    after_help = "Exit status: 0 success; 1 `verify` found invalid tests, or an output error; \
                  2 bad usage or malformed input; 20 the formula is unsatisfiable; \
                  30 no solution found within the time limit; 130 interrupted (tests found so \
                  far are kept)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a test suite: every test is a distinct satisfying assignment, checked against
    /// every clause before it is written.
    Sample(SampleArgs),
    /// Check a test file against a formula: counts valid, invalid and distinct tests; exits 1
    /// if any test is invalid.
    Verify(VerifyArgs),
    /// Normalized compression distance (Eq. 2 of the Snap paper) of a test file.
    Ncd(NcdArgs),
    /// Diversity figures of a test file as JSON: NCD and pairwise coverage (projected on the
    /// formula's `c ind`) of its first tests at given sizes, and the Shannon entropy of each
    /// test (Fig. 9 of the paper).
    Measure(MeasureArgs),
    /// Guided test-case generation for one method of a small integer program, under the
    /// all-local-paths criterion (loop-k): sliced traces, test cases with their traces and
    /// path constraints, coverage, and the count of a non-guided generator beside it.
    Tcg(TcgArgs),
}

#[derive(Args)]
struct TcgArgs {
    /// Program in snapsat's small Java-like language (see examples/tcg/).
    program: PathBuf,
    /// The method under test.
    #[arg(short, long)]
    method: String,
    /// Most iterations of each loop, and recursive calls of each method, on a path.
    #[arg(short = 'k', long, default_value_t = 2)]
    loop_k: usize,
    #[arg(long, value_enum, default_value_t = snapsat::tcg::Criterion::AllLocalPaths)]
    criterion: snapsat::tcg::Criterion,
    /// Bits of an int: 32 is Java's; smaller widths solve faster.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(2..=64))]
    width: u32,
    /// Most traces, or paths, either generator considers.
    #[arg(long, default_value_t = 100_000)]
    limit: usize,
    /// Write the report as JSON to standard output instead of text.
    #[arg(long)]
    json: bool,
    /// Write the guided tests' path constraints as one CNF (a selector variable a path,
    /// `c ind` over the input bits) for `snapsat sample`.
    #[arg(long, value_name = "FILE")]
    emit_cnf: Option<PathBuf>,
}

#[derive(Args)]
struct MeasureArgs {
    /// Formula of the tests.
    formula: PathBuf,
    /// Test file: DIMACS literal lines or 0/1 strings, one test a line.
    tests: PathBuf,
    /// Suite sizes (prefixes of the file) to measure at; the whole file is always measured.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "100,200,500,1000,2000,5000"
    )]
    sizes: Vec<usize>,
}

#[derive(Args)]
struct InputArgs {
    /// DIMACS CNF file (plain, gzip or xz), or `-` for standard input.
    formula: PathBuf,
    /// Accept a clause count that differs from the header, with a warning.
    #[arg(long)]
    relaxed: bool,
}

/// Which sampler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Algorithm {
    /// Snap (Chen, Shen, Menzies): every test verified.
    Snap,
    /// The QuickSampler baseline (Dutra et al.): candidates unchecked until the end; only
    /// valid ones are written, and their share is reported as credibility.
    Quicksampler,
}

#[derive(Args)]
struct SampleArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The sampler.
    #[arg(short, long, value_enum, default_value_t = Algorithm::Snap)]
    algorithm: Algorithm,
    /// Write tests here (default: standard output), one a line, flushed as found.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// How tests are written.
    #[arg(long, value_enum, default_value_t = TestFormat::Dimacs)]
    format: TestFormat,
    /// Seed of every random choice: the same seed gives the same suite.
    #[arg(short, long, default_value_t = 0)]
    seed: u64,
    /// N: initial solver solutions, and candidates per centroid per round.
    #[arg(short = 'n', long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..))]
    samples: u64,
    /// k: clusters (centroids mutated per round).
    #[arg(short = 'k', long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    clusters: u64,
    /// X: go on while the suite's NCD improves by at least this many percent per round.
    #[arg(short = 'x', long, value_name = "PERCENT", default_value_t = 5.0)]
    min_improvement: f64,
    /// The measure X applies to: NCD (Eq. 2) of the suite projected onto `c ind` (all
    /// variables when there is none), Eq. 2's numerator alone, or pairwise literal coverage.
    #[arg(long, value_enum, default_value_t = StopMetric::Ncd)]
    stop_metric: StopMetric,
    /// T: stop after this many seconds, keeping every test found.
    #[arg(short = 't', long, value_name = "SECONDS", default_value_t = 600.0)]
    time_limit: f64,
    /// Stop once the suite holds this many tests.
    #[arg(long, value_name = "N")]
    max_tests: Option<usize>,
    /// Stop after this many rounds (Snap).
    #[arg(long, value_name = "N")]
    max_rounds: Option<usize>,
    /// Stop once this many candidates were produced (QuickSampler).
    #[arg(long, value_name = "N")]
    max_candidates: Option<usize>,
    /// Worker threads of each rank (default: the cores of the machine shared by its ranks;
    /// RAYON_NUM_THREADS also sets it).
    #[arg(short = 'j', long)]
    threads: Option<usize>,
    /// Spread the work over this many ranks in this process (Snap); under `mpirun` or
    /// `srun` with an MPI build, the job's processes are the ranks instead.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    ranks: u64,
    /// Continue the suite in FILE (an interrupted or earlier run's): its tests are verified
    /// again, count as found, and new tests are appended to FILE (Snap).
    #[arg(long, value_name = "FILE", conflicts_with = "output")]
    resume: Option<PathBuf>,
    /// Write run statistics as JSON here.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// No summary or progress on standard error.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct VerifyArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Test file: DIMACS literal lines or 0/1 strings, one test a line.
    tests: PathBuf,
}

#[derive(Args)]
struct NcdArgs {
    /// Test file: DIMACS literal lines or 0/1 strings, one test a line.
    tests: PathBuf,
    /// Formula of the tests: gives the variable count and projects onto its `c ind` variables.
    #[arg(long, value_name = "FILE")]
    formula: Option<PathBuf>,
    /// With --formula, measure full assignments instead of the projection.
    #[arg(long)]
    all_vars: bool,
    /// Removals tried for the denominator of Eq. 2 on large suites.
    #[arg(long, default_value_t = diversity::DEFAULT_REMOVALS)]
    removals: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sample(args) => sample(args),
        Command::Verify(args) => verify(args),
        Command::Ncd(args) => ncd(args),
        Command::Measure(args) => measure(args),
        Command::Tcg(args) => tcg(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("snapsat: error: {err:#}");
            let bad_input = err.chain().any(|e| {
                e.downcast_ref::<dimacs::ReadError>().is_some()
                    || e.downcast_ref::<UnfitInput>().is_some()
                    || e.downcast_ref::<snapsat::report::TestParseError>()
                        .is_some()
            });
            ExitCode::from(if bad_input { EXIT_BAD_INPUT } else { 1 })
        }
    }
}

fn read_formula(input: &InputArgs, quiet: bool) -> Result<Cnf> {
    let strictness = if input.relaxed {
        Strictness::Relaxed
    } else {
        Strictness::Strict
    };
    let parsed = dimacs::read_file(&input.formula, strictness)?;
    if !quiet {
        for warning in &parsed.warnings {
            eprintln!("snapsat: warning: {}: {warning}", input.formula.display());
        }
    }
    Ok(parsed.cnf)
}

/// Writes tests and shows progress as the sampler reports them.
struct CliObserver<W: Write> {
    writer: TestWriter<W>,
    progress: bool,
    start: Instant,
}

impl<W: Write> Observer for CliObserver<W> {
    fn test(&mut self, test: &Assignment) -> std::io::Result<()> {
        self.writer.write(test)
    }

    fn round(&mut self, r: &RoundStats) {
        if self.progress {
            eprint!(
                "\r\x1b[2Ksnapsat: round {} · {} tests · NCD {:.4} · {:.1} s",
                r.round,
                r.suite_size,
                r.ncd,
                self.start.elapsed().as_secs_f64()
            );
        }
    }
}

/// The figures of either sampler, as written to `--stats`.
#[derive(Serialize)]
#[serde(untagged)]
enum RunReport {
    Snap(Report),
    Quick(QuickReport),
}

#[derive(Serialize)]
struct RunStats<'a> {
    algorithm: Algorithm,
    formula: String,
    variables: usize,
    clauses: usize,
    independent_support: usize,
    seed: u64,
    samples: u64,
    clusters: u64,
    min_improvement_percent: f64,
    stop_metric: StopMetric,
    time_limit_seconds: f64,
    launch: &'static str,
    num_ranks: usize,
    threads_per_rank: usize,
    parse_seconds: f64,
    peak_memory_bytes: Option<u64>,
    #[serde(flatten)]
    report: &'a RunReport,
}

/// Peak resident memory of this process, from the kernel (Linux only).
fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Where the ranks of a run are.
enum Launch {
    /// One process; `ranks` of them as threads (1: no coordinator at all).
    Process { ranks: usize },
    #[cfg(feature = "mpi")]
    Mpi(snapsat::distribute::mpi::Job),
}

impl Launch {
    fn detect(ranks: usize) -> Result<Launch> {
        #[cfg(feature = "mpi")]
        if snapsat::distribute::launched_by_mpi() {
            let job =
                snapsat::distribute::mpi::Job::init().context("MPI could not be initialised")?;
            if ranks > 1 && job.rank() == 0 {
                eprintln!("snapsat: note: under MPI the job's processes are the ranks; --ranks is ignored");
            }
            return Ok(Launch::Mpi(job));
        }
        #[cfg(not(feature = "mpi"))]
        if let Some(size) = snapsat::distribute::mpi_job_size().filter(|&n| n > 1) {
            anyhow::bail!(
                "started as one of {size} MPI processes, but this snapsat was built without MPI: \
                 rebuild with `cargo build --release --features mpi` (scripts/install-mpi installs \
                 what it needs), or use --ranks on one machine"
            );
        }
        Ok(Launch::Process { ranks })
    }

    /// Rank of this process in the job.
    fn rank(&self) -> usize {
        match self {
            Launch::Process { .. } => 0,
            #[cfg(feature = "mpi")]
            Launch::Mpi(job) => job.rank(),
        }
    }

    fn ranks(&self) -> usize {
        match self {
            Launch::Process { ranks } => *ranks,
            #[cfg(feature = "mpi")]
            Launch::Mpi(job) => job.size(),
        }
    }

    /// Threads for each rank of this machine: `--threads`, else RAYON_NUM_THREADS, else the
    /// cores shared by the ranks the launcher put here.
    fn threads_per_rank(&self, requested: Option<usize>) -> usize {
        let from_env = |name: &str| std::env::var(name).ok()?.parse::<usize>().ok();
        let local_ranks = match self {
            Launch::Process { ranks } => *ranks,
            #[cfg(feature = "mpi")]
            Launch::Mpi(_) => from_env("OMPI_COMM_WORLD_LOCAL_SIZE")
                .or_else(|| from_env("MPI_LOCALNRANKS"))
                .unwrap_or(1),
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        requested
            .or_else(|| from_env("RAYON_NUM_THREADS"))
            .unwrap_or(cores / local_ranks.max(1))
            .max(1)
    }

    fn name(&self) -> &'static str {
        match self {
            Launch::Process { ranks: 1 } => "process",
            Launch::Process { .. } => "in-process-ranks",
            #[cfg(feature = "mpi")]
            Launch::Mpi(_) => "mpi",
        }
    }
}

/// Input that reads well but does not fit (exit status 2, like a malformed file).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct UnfitInput(String);

/// Tests of an earlier suite, each checked against every clause.
fn resumed_tests(path: &Path, checker: &Checker) -> Result<Vec<Assignment>> {
    let tests = open_tests(path, checker.cnf().num_vars())?;
    if let Some((i, clause)) = tests
        .iter()
        .enumerate()
        .find_map(|(i, t)| checker.first_violated(t).map(|c| (i, c)))
    {
        return Err(UnfitInput(format!(
            "{}: test {} falsifies clause {}: it is not a suite of this formula",
            path.display(),
            i + 1,
            clause + 1
        ))
        .into());
    }
    Ok(tests)
}

fn sample(args: SampleArgs) -> Result<ExitCode> {
    if !(args.time_limit > 0.0 && args.time_limit.is_finite()) {
        anyhow::bail!("--time-limit must be a positive number of seconds");
    }
    if !(args.min_improvement >= 0.0 && args.min_improvement.is_finite()) {
        anyhow::bail!("--min-improvement must be a percentage ≥ 0");
    }
    if args.algorithm == Algorithm::Quicksampler && (args.ranks > 1 || args.resume.is_some()) {
        anyhow::bail!("--ranks and --resume work with --algorithm snap only");
    }
    let launch = Launch::detect(args.ranks as usize)?;
    let threads = launch.threads_per_rank(args.threads);
    if launch.ranks() == 1 || launch.rank() > 0 {
        // This process's own work runs on the global pool; coordinated ranks build their own.
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .context("cannot start the worker threads")?;
    }
    let quiet = args.quiet || launch.rank() > 0;
    let t = Instant::now();
    let cnf = read_formula(&args.input, quiet)?;
    let parse_seconds = t.elapsed().as_secs_f64();

    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let interrupt = interrupt.clone();
        ctrlc::set_handler(move || interrupt.store(true, Ordering::Relaxed))
            .context("cannot install the interrupt handler")?;
    }
    let checker = Checker::new(&cnf);
    #[cfg(feature = "mpi")]
    if let Launch::Mpi(job) = &launch {
        if job.rank() > 0 {
            job.serve(threads, &checker, &Splr, &interrupt)
                .with_context(|| format!("rank {}", job.rank()))?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    let resumed = match &args.resume {
        Some(path) => resumed_tests(path, &checker)?,
        None => Vec::new(),
    };
    let out: Box<dyn Write> = match (&args.output, &args.resume) {
        (Some(path), _) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        )),
        (None, Some(path)) => Box::new(std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .with_context(|| format!("cannot append to {}", path.display()))?,
        )),
        (None, None) => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut observer = CliObserver {
        writer: TestWriter::new(out, args.format),
        progress: !quiet && std::io::stderr().is_terminal(),
        start: Instant::now(),
    };
    let result = match args.algorithm {
        Algorithm::Snap => {
            let config = SnapConfig {
                samples: args.samples as usize,
                clusters: args.clusters as usize,
                min_improvement: args.min_improvement / 100.0,
                time_limit: Duration::from_secs_f64(args.time_limit),
                max_tests: args.max_tests,
                max_rounds: args.max_rounds,
                seed: args.seed,
                stop_metric: args.stop_metric,
                ..Default::default()
            };
            let run = Sampling {
                checker: &checker,
                oracle: &Splr,
                config: &config,
                resumed: &resumed,
                interrupt: &interrupt,
            };
            let report = match &launch {
                Launch::Process { ranks: 1 } => sampler::sample_in_process(&run, &mut observer),
                Launch::Process { ranks } => {
                    distribute::local::sample(*ranks, threads, &run, &mut observer)
                }
                #[cfg(feature = "mpi")]
                Launch::Mpi(job) => job.coordinate(threads, &run, &mut observer),
            };
            report.map(RunReport::Snap)
        }
        Algorithm::Quicksampler => {
            let config = QuickConfig {
                time_limit: Duration::from_secs_f64(args.time_limit),
                max_tests: args.max_tests,
                max_candidates: args.max_candidates,
                seed: args.seed,
            };
            quicksampler::sample(&checker, &Splr, &config, &mut observer, &interrupt)
                .map(RunReport::Quick)
        }
    };
    if observer.progress {
        eprintln!();
    }
    let report = match result {
        Ok(report) => report,
        Err(SampleError::Unsat) => {
            eprintln!(
                "snapsat: {}: the formula is unsatisfiable: no test exists",
                args.input.formula.display()
            );
            return Ok(ExitCode::from(EXIT_UNSAT));
        }
        Err(SampleError::Unknown(why)) => {
            eprintln!("snapsat: no solution found ({why}); try a longer --time-limit");
            return Ok(ExitCode::from(EXIT_UNKNOWN));
        }
        Err(SampleError::Output(e)) => return Err(e).context("cannot write tests"),
        Err(e @ SampleError::Distribution(_)) => return Err(e.into()),
    };
    if let Some(path) = &args.stats {
        let stats = RunStats {
            algorithm: args.algorithm,
            formula: args.input.formula.display().to_string(),
            variables: cnf.num_vars(),
            clauses: cnf.num_clauses(),
            independent_support: cnf.independent_support().len(),
            seed: args.seed,
            samples: args.samples,
            clusters: args.clusters,
            min_improvement_percent: args.min_improvement,
            stop_metric: args.stop_metric,
            time_limit_seconds: args.time_limit,
            launch: launch.name(),
            num_ranks: launch.ranks(),
            threads_per_rank: threads,
            parse_seconds,
            peak_memory_bytes: peak_memory_bytes(),
            report: &report,
        };
        let json = serde_json::to_string_pretty(&stats)?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let stop = match &report {
        RunReport::Snap(r) => {
            if !args.quiet {
                summarize(r);
            }
            r.stop
        }
        RunReport::Quick(r) => {
            if !args.quiet {
                summarize_quick(r);
            }
            r.stop.unwrap_or(StopReason::TimeLimit)
        }
    };
    Ok(if stop == StopReason::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

fn stop_text(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Converged => "NCD stopped improving",
        StopReason::TimeLimit => "time limit reached",
        StopReason::MaxTests => "--max-tests reached",
        StopReason::MaxRounds => "--max-rounds reached",
        StopReason::NoNewTests => "a round found no new test",
        StopReason::Interrupted => "interrupted",
    }
}

fn summarize_quick(r: &QuickReport) {
    eprintln!(
        "snapsat: QuickSampler: {} distinct valid tests in {:.2} s, {} epochs ({}); NCD {:.4} over {} variables",
        r.distinct_tests,
        r.seconds.total,
        r.epochs,
        stop_text(r.stop.unwrap_or(StopReason::TimeLimit)),
        r.ncd,
        r.ncd_variables
    );
    eprintln!(
        "snapsat: {} distinct candidates, credibility {:.1}% ({} valid); {} atomic mutations, {} unflippable variables; {} solver calls",
        r.candidates,
        r.credibility_percent,
        r.valid_candidates,
        r.atomic_mutations,
        r.unflippable_vars,
        r.solver_calls
    );
}

fn summarize(r: &Report) {
    let ncd = r.rounds.last().map_or(0.0, |x| x.ncd);
    let stop = stop_text(r.stop);
    eprintln!(
        "snapsat: {} distinct valid tests in {:.2} s, {} rounds ({stop}); NCD {:.4} over {} variables",
        r.distinct_tests,
        r.seconds.total,
        r.rounds.len().saturating_sub(1),
        ncd,
        r.ncd_variables
    );
    eprintln!(
        "snapsat: {} candidates, {:.1}% valid before repair, {} repaired, {} failed repairs; solver calls: {} generate, {} repair",
        r.candidates,
        r.valid_before_repair_percent,
        r.repaired,
        r.failed_repairs,
        r.solver_calls.generate,
        r.solver_calls.repair
    );
    let latency = |phase: &str| {
        r.latency.get(phase).map_or(String::new(), |q| {
            format!(
                " · {} {} p50 {} p99 {}",
                phase.replace('_', " "),
                q.count,
                millis(q.p50_us),
                millis(q.p99_us)
            )
        })
    };
    eprintln!(
        "snapsat: {:.1} candidates/s, {:.1} tests/s{}{}{}",
        r.throughput.candidates_per_second,
        r.throughput.tests_per_second,
        latency("initial_solve"),
        latency("repair"),
        latency("round_trip")
    );
    if r.ranks.len() > 1 {
        for rank in &r.ranks {
            eprintln!(
                "snapsat:   rank {}: {} threads, {} tasks, busy {:.2} s, {} messages, {:.1} KiB out, {:.1} KiB back",
                rank.rank,
                rank.threads,
                rank.tasks,
                rank.busy_seconds,
                rank.messages,
                rank.bytes_to_rank as f64 / 1024.0,
                rank.bytes_from_rank as f64 / 1024.0
            );
        }
    }
    for why in &r.unknown {
        eprintln!("snapsat: note: some solver calls gave up: {why}");
    }
}

/// Microseconds as a short human figure.
fn millis(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn tcg(args: TcgArgs) -> Result<ExitCode> {
    use snapsat::tcg;
    let source = std::fs::read_to_string(&args.program)
        .with_context(|| format!("cannot read {}", args.program.display()))?;
    let place = |e: tcg::lang::SyntaxError| UnfitInput(format!("{}: {e}", args.program.display()));
    let program = tcg::lang::parse(&source).map_err(place)?;
    let rules = tcg::rules::translate(&program).map_err(place)?;
    if rules.method_block(&args.method).is_none() {
        let known: Vec<&str> = program.methods.iter().map(|m| m.name.as_str()).collect();
        return Err(UnfitInput(format!(
            "{}: no method `{}`; the program has {}",
            args.program.display(),
            args.method,
            known.join(", ")
        ))
        .into());
    }
    let config = tcg::TcgConfig {
        method: args.method.clone(),
        loop_k: args.loop_k,
        criterion: args.criterion,
        width: args.width,
        limit: args.limit,
    };
    let report = tcg::run(&rules, &config, &Splr)?;
    if let Some(path) = &args.emit_cnf {
        std::fs::write(
            path,
            tcg::emit_cnf(&report.terms, &report.guided.test_cases),
        )
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", tcg_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The TCG report as text.
fn tcg_text(r: &snapsat::tcg::TcgReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let criterion = match r.criterion {
        snapsat::tcg::Criterion::AllLocalPaths => "all-local-paths",
        snapsat::tcg::Criterion::AllPaths => "all-paths",
    };
    let _ = writeln!(
        out,
        "method {}: {criterion}, loop-{}, {}-bit ints",
        r.method, r.loop_k, r.width
    );
    let _ = writeln!(
        out,
        "\nrules of {} (block(rule) :- [guards] calls [blocks]):",
        r.method
    );
    for rule in &r.rules {
        let _ = writeln!(out, "  {rule}");
    }
    let sliced = if r.criterion == snapsat::tcg::Criterion::AllLocalPaths {
        "sliced "
    } else {
        ""
    };
    let _ = writeln!(out, "\n{sliced}traces ({}):", r.traces.len());
    for (i, t) in r.traces.iter().enumerate() {
        let mark = if r.infeasible_traces.contains(t) {
            "  (infeasible)"
        } else {
            ""
        };
        let _ = writeln!(out, "  {:>3}. {t}{mark}", i + 1);
    }
    let cases = |out: &mut String, title: &str, g: &snapsat::tcg::Generation| {
        let _ = writeln!(
            out,
            "\n{title}: {} test cases{}",
            g.test_cases.len(),
            if g.truncated { " (limit reached)" } else { "" }
        );
        for (i, t) in g.test_cases.iter().enumerate() {
            let inputs: Vec<String> = t.inputs.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let outcome = match (&t.result, &t.exception) {
                (Some(v), _) => format!("returns {v}"),
                (_, Some(e)) => format!("throws {e}"),
                _ => String::new(),
            };
            let _ = writeln!(out, "  #{:<3} {} → {outcome}", i + 1, inputs.join(" "));
            let _ = writeln!(out, "       trace: {}", t.trace);
            let _ = writeln!(
                out,
                "       path:  {}",
                if t.path_constraints.is_empty() {
                    "true".into()
                } else {
                    t.path_constraints.join(" ∧ ")
                }
            );
        }
        let c = &g.coverage;
        let _ = writeln!(
            out,
            "  coverage of {}: {} local paths; branches (rules) {}/{} ({:.0}%); code (blocks) {}/{} ({:.0}%); {} solver calls",
            r.method,
            c.local_paths,
            c.rules_covered,
            c.rules,
            100.0 * c.rules_covered as f64 / c.rules.max(1) as f64,
            c.blocks_covered,
            c.blocks,
            100.0 * c.blocks_covered as f64 / c.blocks.max(1) as f64,
            g.solver_calls
        );
    };
    cases(&mut out, "guided TCG", &r.guided);
    cases(
        &mut out,
        &format!("non-guided TCG (loop-{})", r.loop_k),
        &r.non_guided,
    );
    let _ = writeln!(
        out,
        "\nguided vs non-guided: {} vs {} test cases",
        r.guided.test_cases.len(),
        r.non_guided.test_cases.len()
    );
    out
}

fn open_tests(path: &Path, num_vars: usize) -> Result<Vec<Assignment>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    read_tests(BufReader::new(file), num_vars).with_context(|| path.display().to_string())
}

fn verify(args: VerifyArgs) -> Result<ExitCode> {
    let cnf = read_formula(&args.input, false)?;
    let tests = open_tests(&args.tests, cnf.num_vars())?;
    let checker = Checker::new(&cnf);
    let mut invalid = 0;
    for (i, test) in tests.iter().enumerate() {
        if let Some(clause) = checker.first_violated(test) {
            invalid += 1;
            if invalid <= 5 {
                eprintln!(
                    "snapsat: test {} falsifies clause {} ({:?})",
                    i + 1,
                    clause + 1,
                    cnf.clause(clause)
                );
            }
        }
    }
    let distinct = tests.iter().collect::<std::collections::HashSet<_>>().len();
    println!(
        "{} tests: {} valid, {} invalid, {} distinct",
        tests.len(),
        tests.len() - invalid,
        invalid,
        distinct
    );
    Ok(if invalid == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The variable count a test file implies: the longest 0/1 line or the largest literal.
fn implied_num_vars(path: &Path) -> Result<usize> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .map(|line| {
            let line = line.trim();
            if !line.contains(' ') && line.len() > 1 && line.bytes().all(|b| b == b'0' || b == b'1')
            {
                line.len()
            } else {
                line.split_ascii_whitespace()
                    .filter_map(|t| t.parse::<i64>().ok())
                    .map(|l| l.unsigned_abs() as usize)
                    .max()
                    .unwrap_or(0)
            }
        })
        .max()
        .unwrap_or(0))
}

fn ncd(args: NcdArgs) -> Result<ExitCode> {
    let (num_vars, projection) = match &args.formula {
        Some(path) => {
            let cnf = read_formula(
                &InputArgs {
                    formula: path.clone(),
                    relaxed: true,
                },
                true,
            )?;
            let projection = if args.all_vars {
                (0..cnf.num_vars()).collect()
            } else {
                cnf.projection()
            };
            (cnf.num_vars(), projection)
        }
        None => {
            let n = implied_num_vars(&args.tests)?;
            (n, (0..n).collect())
        }
    };
    let tests = open_tests(&args.tests, num_vars)?;
    let value = diversity::suite_ncd(&tests, &projection, args.removals).value();
    println!("{value:.6}");
    Ok(ExitCode::SUCCESS)
}

fn measure(args: MeasureArgs) -> Result<ExitCode> {
    let cnf = read_formula(
        &InputArgs {
            formula: args.formula.clone(),
            relaxed: true,
        },
        true,
    )?;
    let tests = open_tests(&args.tests, cnf.num_vars())?;
    let projection = cnf.projection();
    let mut sizes: Vec<usize> = args
        .sizes
        .iter()
        .copied()
        .filter(|&s| s < tests.len())
        .collect();
    sizes.push(tests.len());
    sizes.sort_unstable();
    sizes.dedup();
    let mut coverage = diversity::PairwiseCoverage::new(&projection);
    let mut added = 0;
    let mut at_sizes = Vec::new();
    for &size in &sizes {
        for t in &tests[added..size] {
            coverage.add(t);
        }
        added = size;
        let ncd =
            diversity::suite_ncd(&tests[..size], &projection, diversity::DEFAULT_REMOVALS).value();
        at_sizes.push(serde_json::json!({"tests": size, "ncd": ncd, "pairwise_coverage": coverage.fraction()}));
    }
    let entropy: Vec<f64> = tests.iter().map(diversity::shannon_entropy).collect();
    let out = serde_json::json!({"tests": tests.len(), "at_sizes": at_sizes, "entropy": entropy});
    println!("{out}");
    Ok(ExitCode::SUCCESS)
}
