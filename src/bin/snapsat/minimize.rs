//! `snapsat minimize`: the fewest tests of a suite (any sampler's) that keep its t-wise
//! coverage of the independent support, in greedy order.

use crate::check::read_test_file;
use crate::failure::{say, usage, Failure, Result};
use crate::output::{check_outputs, LazyFile};
use crate::{read_formula, InputArgs, OutputFormat};
use clap::Args;
use snapsat::minimize::minimize;
use snapsat::testfile::TestWriter;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    let kept = minimize(&pool, &vars, strength, args.target).map_err(Failure::bad_input)?;
    let out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(LazyFile::create(path)),
        None => Box::new(std::io::stdout()),
    };
    let mut writer = TestWriter::new(out, args.format.into());
    for &i in &kept.chosen {
        writer
            .write(&pool[i])
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
    }
    Ok(ExitCode::SUCCESS)
}
