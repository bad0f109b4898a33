//! `snapsat minimize`: the fewest tests of a suite (any sampler's) that keep its t-wise
//! coverage of the independent support, in greedy order.

use crate::check::read_test_file;
use crate::failure::{say, usage, Failure, Result};
use crate::output::{check_outputs, LazyFile};
use crate::{read_formula, InputArgs, OutputFormat};
use clap::Args;
use snapsat::assignment::Assignment;
use snapsat::budget::Budget;
use snapsat::formula::Cnf;
use snapsat::minimize::minimize;
use snapsat::minimize::shrink::shrink_with;
use snapsat::solver::native::Native;
use snapsat::testfile::TestWriter;
use snapsat::verify::Checker;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[derive(Args)]
pub struct MinimizeArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The pool: a test file (DIMACS literal lines or 0/1 strings, one test a line).
    tests: PathBuf,
    /// Write the kept tests here, most new combinations first (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// t: keep every combination of values of t support variables the pool shows (1 to 3).
    #[arg(short = 't', long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=3))]
    strength: u64,
    /// Stop once this share (above 0, at most 1) of the pool's combinations is covered.
    #[arg(long, value_name = "FRACTION", default_value_t = 1.0)]
    target: f64,
    /// Then build fewer tests that keep the same pairs (t = 2 only): new tests from the native
    /// solver near the kept ones, each checked against every clause. Every test of the pool
    /// must be valid.
    #[arg(long)]
    shrink: bool,
    /// Seed of --shrink's choices: the same seed gives the same suite (within the time limit).
    #[arg(short, long, default_value_t = 0, requires = "shrink")]
    seed: u64,
    /// Stop --shrink after this many seconds, keeping the smallest complete suite so far.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 60.0,
        requires = "shrink"
    )]
    time_limit: f64,
    /// How tests are written.
    #[arg(long, value_enum, default_value_t = OutputFormat::Dimacs)]
    format: OutputFormat,
    /// No summary on standard error.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: MinimizeArgs) -> Result<ExitCode> {
    if !(args.target > 0.0 && args.target <= 1.0) {
        return Err(usage(format!(
            "--target must be a share above 0 and at most 1, not {}",
            args.target
        )));
    }
    let outputs: Vec<(&str, &Path)> = args.output.iter().map(|p| ("-o", p.as_path())).collect();
    check_outputs(
        &[("formula", &args.input.formula), ("test file", &args.tests)],
        &outputs,
    )?;
    let cnf = read_formula(&args.input, args.quiet)?;
    let pool = read_test_file(&args.tests, cnf.num_vars())?;
    let vars = cnf.projection();
    let strength = args.strength as usize;
    if args.shrink && (strength != 2 || args.target < 1.0) {
        return Err(usage(
            "--shrink keeps every pair: it needs -t 2 and no --target",
        ));
    }
    let kept = minimize(&pool, &vars, strength, args.target).map_err(Failure::bad_input)?;
    let mut tests: Vec<Assignment> = kept.chosen.iter().map(|&i| pool[i].clone()).collect();
    if args.shrink {
        let time_limit = crate::flags::time_limit(args.time_limit)?;
        tests = shrunk(&cnf, &pool, tests, args.seed, time_limit)?;
    }
    let out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(LazyFile::create(path)),
        None => Box::new(std::io::stdout()),
    };
    let mut writer = TestWriter::new(out, args.format.into());
    for test in &tests {
        writer
            .write(test)
            .map_err(|e| Failure::from(anyhow::anyhow!("cannot write the kept tests: {e}")))?;
    }
    if !args.quiet {
        let share = |n: u64| 100.0 * n as f64 / kept.pool_tuples.max(1) as f64;
        say!(
            "snapsat: kept {} of {} tests ({:.1}%), covering {} of the pool's {} {strength}-wise combinations of {} support variables ({:.1}%)",
            kept.chosen.len(),
            pool.len(),
            100.0 * kept.chosen.len() as f64 / pool.len() as f64,
            kept.covered_tuples,
            kept.pool_tuples,
            vars.len(),
            share(kept.covered_tuples)
        );
        if args.shrink {
            say!("snapsat: --shrink: {} tests keep those pairs", tests.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `kept` shrunk with a native session; refused when a test of the pool is not a model.
fn shrunk(
    cnf: &Cnf,
    pool: &[Assignment],
    kept: Vec<Assignment>,
    seed: u64,
    time_limit: Duration,
) -> Result<Vec<Assignment>> {
    let checker = Checker::new(cnf);
    if let Some(line) = pool.iter().position(|t| !checker.satisfies(t)) {
        return Err(Failure::bad_input(anyhow::anyhow!(
            "test {} of the pool does not satisfy the formula: --shrink builds from valid tests (`snapsat verify` lists the invalid ones)",
            line + 1
        )));
    }
    let never = AtomicBool::new(false);
    let budget = Budget::new(time_limit, &never);
    let vars = cnf.projection();
    let shrunk = shrink_with(&kept, &vars, &checker, &Native, seed, &budget);
    Ok(shrunk.map_err(anyhow::Error::msg)?.tests)
}
