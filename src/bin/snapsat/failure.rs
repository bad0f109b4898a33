//! Why a command failed, and the exit status each reason gets: the one place that maps
//! failures to codes, so `--help`, the README and the code cannot drift apart.

use std::fmt::Display;

/// Exit statuses, as `--help` and the README list them.
pub mod status {
    /// `verify` found invalid tests; or output could not be written; or an internal failure.
    pub const FAILED: u8 = 1;
    /// Bad usage, or input that is missing, unreadable or malformed.
    pub const BAD_INPUT: u8 = 2;
    /// The formula is unsatisfiable (as SAT solvers report it).
    pub const UNSAT: u8 = 20;
    /// No solution was found within the time limit.
    pub const UNKNOWN: u8 = 30;
    /// SIGINT or SIGTERM; every test of the suite is on disk.
    pub const INTERRUPTED: u8 = 130;
    /// A rank of an MPI job that could not take part and told rank 0, which ends the job
    /// with the failure's own status: `mpirun` aborts a job on any rank's failing status,
    /// perhaps before rank 0 has said why.
    pub const HANDED_TO_RANK_0: u8 = 0;
}

/// The text `--help` ends with.
pub const EXIT_STATUS_HELP: &str = "Exit status: 0 success; 1 `verify` found invalid tests, an \
output could not be written (full disk, closed pipe) or an internal failure; 2 bad usage, or \
input that is missing, unreadable or malformed (the message names file, line and what was \
expected); 20 the formula is unsatisfiable; 30 no solution within the time limit; 130 \
interrupted by SIGINT or SIGTERM (within about a second; every test of the suite so far is on \
disk).";

/// A failed command: the error to print and the status to exit with.
#[derive(Debug)]
pub struct Failure {
    pub status: u8,
    pub error: anyhow::Error,
}

pub type Result<T> = std::result::Result<T, Failure>;

impl Failure {
    /// Input that is missing, unreadable or malformed, whose message already names it.
    pub fn bad_input(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            status: status::BAD_INPUT,
            error: error.into(),
        }
    }
}

/// Bad usage: a flag out of range, a combination that does not work.
pub fn usage(message: impl Display) -> Failure {
    Failure {
        status: status::BAD_INPUT,
        error: anyhow::anyhow!("{message}"),
    }
}

/// Classifies the error of a fallible step, naming what it was about.
pub trait Classify<T> {
    /// Reading an input failed, or the input does not fit (exit 2).
    fn input(self, what: impl Display) -> Result<T>;
    /// Writing an output failed (exit 1).
    fn output(self, what: impl Display) -> Result<T>;
}

impl<T, E: Into<anyhow::Error>> Classify<T> for std::result::Result<T, E> {
    fn input(self, what: impl Display) -> Result<T> {
        self.map_err(|e| Failure {
            status: status::BAD_INPUT,
            error: e.into().context(what.to_string()),
        })
    }

    fn output(self, what: impl Display) -> Result<T> {
        self.map_err(|e| Failure {
            status: status::FAILED,
            error: e.into().context(format!("cannot write {what}")),
        })
    }
}

impl From<anyhow::Error> for Failure {
    /// Anything not classified is an internal failure (exit 1).
    fn from(error: anyhow::Error) -> Self {
        Failure {
            status: status::FAILED,
            error,
        }
    }
}

/// Prints to standard error, ignoring failure: a closed or full stderr must not turn into a
/// panic, and there is nowhere left to report it.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use say;
