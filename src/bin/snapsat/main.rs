//! The `snapsat` command line: parses, dispatches to one file per subcommand, and turns a
//! failure into its message and exit status.

mod check;
mod failure;
mod flags;
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

/// Formulas from this many literal occurrences (and variables) on get transparent huge pages.
/// mimalloc asks the kernel for them, and the kernel clears all 2 MiB of one at its first
/// touch: a small formula's run touches little of each, and on blasted_case47 (1,000 tests in
/// 17 ms) clearing them was 23% of the process's CPU; without them six small case studies'
/// 1000-test runs took 2-13% less. Where a solver's clauses outgrow what the TLB reaches with
/// 4 KiB pages (a few MiB), huge pages pay for themselves again.
const HUGE_PAGES_FROM: usize = 1 << 20;

/// True for formulas large enough that huge pages pay for their clearing.
fn huge_pages_pay(cnf: &Cnf) -> bool {
    cnf.num_literals() + cnf.num_vars() >= HUGE_PAGES_FROM
}

/// Lets the kernel back this process's memory with transparent huge pages, or not, from now on
/// (`PR_SET_THP_DISABLE` is checked at each page fault; pages already mapped stay as they are).
/// Best effort: a kernel without the call leaves things as they were.
fn allow_huge_pages(allow: bool) {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and three zero arguments, and only
    // changes how later page faults of this process are served; no memory is passed.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            libc::c_ulong::from(!allow),
            0,
            0,
            0,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = allow;
}

/// Huge pages off from the start, before Rust's runtime and the first allocation: glibc reads
/// `/proc/self/maps` for the main thread's stack as the runtime starts, mimalloc reserves its
/// first arena for that, and with huge pages on, its first touches were served 2 MiB pages the
/// kernel cleared. In a third of blasted_case47's 1000-test runs that was 9 ms of the process's
/// 22 of CPU (31 against 22 ms, 14 ms of wall against 23-29), before `main` could say no.
/// A function in `.init_array` runs before `main`, as C constructors do.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static HUGE_PAGES_OFF_AT_LOAD: extern "C" fn() = {
    extern "C" fn huge_pages_off() {
        allow_huge_pages(false);
    }
    huge_pages_off
};

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
    allow_huge_pages(huge_pages_pay(&parsed.cnf));
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn huge_pages_disabled() -> bool {
        // SAFETY: PR_GET_THP_DISABLE takes no memory and only reads this process's flag.
        unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 }
    }

    /// Off from the process's start (this test binary's too: the constructor is in this
    /// file), then as the formula says.
    #[test]
    fn huge_pages_are_off_for_small_formulas_and_back_for_large_ones() {
        assert!(huge_pages_disabled(), "huge pages on at the start");
        let small = Cnf::from_clauses(3, &[vec![1, -2], vec![2, 3]]);
        let large = Cnf::new(HUGE_PAGES_FROM);
        assert!(!huge_pages_pay(&small));
        assert!(huge_pages_pay(&large));
        allow_huge_pages(huge_pages_pay(&small));
        assert!(huge_pages_disabled());
        allow_huge_pages(huge_pages_pay(&large));
        assert!(!huge_pages_disabled());
    }
}
