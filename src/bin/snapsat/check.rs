//! `snapsat verify`, `ncd` and `measure`: figures of a test file someone already has.

use crate::failure::{say, status, Failure, Result};
use crate::output::print;
use crate::{read_formula, read_text, InputArgs};
use clap::Args;
use snapsat::assignment::Assignment;
use snapsat::diversity;
use snapsat::testfile::{implied_num_vars, read_tests};
use snapsat::verify::Checker;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Test file: DIMACS literal lines (a `v ` prefix is accepted) or 0/1 strings, one
    /// complete test a line.
    tests: PathBuf,
}

#[derive(Args)]
pub struct NcdArgs {
    /// Test file: DIMACS literal lines or 0/1 strings, one test a line.
    tests: PathBuf,
    /// Formula of the tests: gives the variable count and projects onto its `c ind` variables.
    #[arg(long, value_name = "FILE")]
    formula: Option<PathBuf>,
    /// With --formula, measure full assignments instead of the projection.
    #[arg(long)]
    all_vars: bool,
    /// Removals tried for the denominator of Eq. 2 on large suites (at least 1).
    #[arg(long, default_value_t = diversity::DEFAULT_REMOVALS as u64,
          value_parser = clap::value_parser!(u64).range(1..1_000_001))]
    removals: u64,
}

#[derive(Args)]
pub struct MeasureArgs {
    /// Formula of the tests.
    formula: PathBuf,
    /// Test file: DIMACS literal lines or 0/1 strings, one test a line.
    tests: PathBuf,
    /// Suite sizes (prefixes of the file) to measure at; the whole file is always measured.
    #[arg(long, value_delimiter = ',', default_value = "5,10,25,50,100,200,500,1000,2000,5000",
          value_parser = clap::value_parser!(u64).range(1..))]
    sizes: Vec<u64>,
}

/// The tests of a file, each a complete assignment of `num_vars` variables; a file without
/// any test is an error, since no figure of it means anything.
pub fn read_test_file(path: &Path, num_vars: usize) -> Result<Vec<Assignment>> {
    let text = read_text(path, "the test file")?;
    let tests = read_tests(&text, num_vars)
        .map_err(|e| Failure::bad_input(anyhow::anyhow!("{}: {e}", path.display())))?;
    if tests.is_empty() {
        return Err(Failure::bad_input(anyhow::anyhow!(
            "{}: no tests in the file",
            path.display()
        )));
    }
    Ok(tests)
}

fn formula_for_figures(path: &Path) -> Result<snapsat::formula::Cnf> {
    let input = InputArgs {
        formula: path.to_owned(),
        relaxed: true,
    };
    read_formula(&input, true)
}

pub fn verify(args: VerifyArgs) -> Result<ExitCode> {
    let cnf = read_formula(&args.input, false)?;
    let tests = read_test_file(&args.tests, cnf.num_vars())?;
    let checker = Checker::new(&cnf);
    let mut invalid = 0;
    for (i, test) in tests.iter().enumerate() {
        if let Some(clause) = checker.first_violated(test) {
            invalid += 1;
            if invalid <= 5 {
                say!(
                    "snapsat: test {} falsifies clause {} ({:?})",
                    i + 1,
                    clause + 1,
                    cnf.clause(clause)
                );
            }
        }
    }
    let distinct = tests.iter().collect::<std::collections::HashSet<_>>().len();
    print(&format!(
        "{} tests: {} valid, {} invalid, {} distinct\n",
        tests.len(),
        tests.len() - invalid,
        invalid,
        distinct
    ))?;
    Ok(if invalid == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(status::FAILED)
    })
}

pub fn ncd(args: NcdArgs) -> Result<ExitCode> {
    let (num_vars, projection) = match &args.formula {
        Some(path) => {
            let cnf = formula_for_figures(path)?;
            let projection = if args.all_vars {
                (0..cnf.num_vars()).collect()
            } else {
                cnf.projection()
            };
            (cnf.num_vars(), projection)
        }
        None => {
            let text = read_text(&args.tests, "the test file")?;
            let n = implied_num_vars(&text).map_err(|e| {
                Failure::bad_input(anyhow::anyhow!("{}: {e}", args.tests.display()))
            })?;
            (n, (0..n).collect())
        }
    };
    let tests = read_test_file(&args.tests, num_vars)?;
    let value = diversity::suite_ncd(&tests, &projection, args.removals as usize).value();
    print(&format!("{value:.6}\n"))?;
    Ok(ExitCode::SUCCESS)
}

pub fn measure(args: MeasureArgs) -> Result<ExitCode> {
    let cnf = formula_for_figures(&args.formula)?;
    let tests = read_test_file(&args.tests, cnf.num_vars())?;
    let projection = cnf.projection();
    let mut sizes: Vec<usize> = args
        .sizes
        .iter()
        .map(|&s| s as usize)
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
    print(&format!("{out}\n"))?;
    Ok(ExitCode::SUCCESS)
}
