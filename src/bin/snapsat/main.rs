//! The `snapsat` command line: parses, dispatches to one file per subcommand, and turns a
//! failure into its message and exit status.

mod check;
mod failure;
mod flags;
mod memory;
mod minimize;
mod output;
mod sample;
mod signals;
mod summary;
mod tcg;

use clap::{Args, Parser, Subcommand};
use failure::{say, Classify, Failure, Result};
use snapsat::dimacs::{self, Strictness};
use snapsat::formula::Cnf;
use snapsat::testfile::TestFormat;
use std::path::PathBuf;
use std::process::ExitCode;

/// splr is rebuilt for every query and allocates its clause database afresh each time:
/// with the system allocator, malloc and free were 15% of a splr run of doublyLinkedList.
/// mimalloc also stands in for `malloc` itself (the crate's `override` feature), so CaDiCaL's
/// C++ allocations use it too: through glibc's they were 5-6% of a cadical run's samples.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "snapsat",
    version,
    about = "Very small, 100%-valid, diverse test suites from CNF formulas, by the Snap method",
    after_help = failure::EXIT_STATUS_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a test suite: every test is a distinct satisfying assignment, checked against
    /// every clause before it is written.
    #[command(after_help = failure::EXIT_STATUS_HELP)]
    Sample(sample::SampleArgs),
    /// Check a test file against a formula: counts valid, invalid and distinct tests; exits 1
    /// if any test is invalid.
    #[command(after_help = failure::EXIT_STATUS_HELP)]
    Verify(check::VerifyArgs),
    /// Normalized compression distance (Eq. 2 of the Snap paper) of a test file.
    Ncd(check::NcdArgs),
    /// Diversity figures of a test file as JSON: NCD and pairwise coverage (projected on the
    /// formula's `c ind`) of its first tests at given sizes, and the Shannon entropy of each
    /// test (Fig. 9 of the paper).
    Measure(check::MeasureArgs),
    /// The fewest tests of a suite (any sampler's) that keep the t-wise coverage of the
    /// independent support it has, written most new combinations first.
    #[command(after_help = failure::EXIT_STATUS_HELP)]
    Minimize(minimize::MinimizeArgs),
    /// Guided test-case generation for one method of a small integer program, under the
    /// all-local-paths criterion (loop-k): sliced traces, test cases with their traces and
    /// path constraints, coverage, and the count of a non-guided generator beside it.
    #[command(after_help = failure::EXIT_STATUS_HELP)]
    Tcg(tcg::TcgArgs),
}

/// A formula to read.
#[derive(Args)]
pub struct InputArgs {
    /// DIMACS CNF file (plain, gzip or xz), or `-` for standard input.
    pub formula: PathBuf,
    /// Accept a clause count that differs from the header, with a warning.
    #[arg(long)]
    pub relaxed: bool,
}

/// How tests are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// `1 -2 3 0`: every variable as a signed literal, ended by 0 (as CMSGen writes).
    Dimacs,
    /// `101`: one 0/1 character a variable.
    Bits,
}

impl From<OutputFormat> for TestFormat {
    fn from(format: OutputFormat) -> Self {
        match format {
            OutputFormat::Dimacs => TestFormat::Dimacs,
            OutputFormat::Bits => TestFormat::Bits,
        }
    }
}

/// Reads the formula (exit 2 naming file, line and column when it cannot be).
pub fn read_formula(input: &InputArgs, quiet: bool) -> Result<Cnf> {
    let strictness = if input.relaxed {
        Strictness::Relaxed
    } else {
        Strictness::Strict
    };
    let parsed = dimacs::read_file(&input.formula, strictness).map_err(Failure::bad_input)?;
    memory::allow_huge_pages(memory::huge_pages_pay(&parsed.cnf));
    if !quiet {
        for warning in &parsed.warnings {
            say!("snapsat: warning: {}: {warning}", input.formula.display());
        }
    }
    Ok(parsed.cnf)
}

/// Reads a whole text input (exit 2 when missing, a folder, or not UTF-8).
pub fn read_text(path: &std::path::Path, what: &str) -> Result<String> {
    let bytes = std::fs::read(path).input(format!("cannot read {what} {}", path.display()))?;
    String::from_utf8(bytes).input(format!("{} is not UTF-8 text", path.display()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sample(args) => sample::run(args),
        Command::Verify(args) => check::verify(args),
        Command::Ncd(args) => check::ncd(args),
        Command::Measure(args) => check::measure(args),
        Command::Minimize(args) => minimize::run(args),
        Command::Tcg(args) => tcg::run(args),
    };
    result.unwrap_or_else(|Failure { status, error }| {
        say!("snapsat: error: {error:#}");
        ExitCode::from(status)
    })
}
