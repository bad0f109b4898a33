//! Flag values the derive attributes cannot check alone (names of library types, the time
//! limit), and the choices `sample` offers, which its summary reports too.

use crate::failure::{self, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use snapsat::solver::Solvers;
use std::time::Duration;

/// The longest `--time-limit` (about 31 years): beyond it a deadline is meaningless.
const MAX_TIME_LIMIT: f64 = 1e9;

/// A `--time-limit` in seconds, checked (exit 2 outside (0, 1e9]).
pub fn time_limit(seconds: f64) -> Result<Duration> {
    if !(seconds > 0.0 && seconds <= MAX_TIME_LIMIT) {
        return Err(failure::usage(format!(
            "--time-limit must be a number of seconds above 0 and at most {MAX_TIME_LIMIT:e}, not {seconds}"
        )));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A flag that takes one of a library type's `names`, parsed by its `FromStr` (the library
/// knows nothing of clap).
pub fn named<T: std::str::FromStr + Clone + Send + Sync + 'static>(
    names: &'static [&'static str],
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(names).map(|name| match name.parse::<T>() {
        Ok(value) => value,
        Err(_) => unreachable!("`{name}` is one of the names the type parses"),
    })
}

/// Which solver answers the sampler's questions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolverChoice {
    /// splr 0.17 (pure Rust), rebuilt for each residual problem.
    Splr,
    /// snapsat's own search (pure Rust), one session per solver lane that stays loaded, with
    /// splr taking over searches past 20,000 conflicts.
    Native,
    /// CaDiCaL 3.0.1, one session per solver lane that stays loaded (needs a build with
    /// `--features cadical`).
    Cadical,
}

impl SolverChoice {
    /// The solvers this choice gives a run with `lanes` solver lanes a rank.
    pub fn solvers(self, lanes: usize) -> Result<Solvers<'static>> {
        match self {
            SolverChoice::Splr => Ok(Solvers::splr()),
            SolverChoice::Native => Ok(Solvers {
                sessions: Some(&snapsat::solver::native::Native),
                lanes,
                ..Solvers::splr()
            }),
            #[cfg(feature = "cadical")]
            SolverChoice::Cadical => Ok(Solvers {
                sessions: Some(&snapsat::solver::cadical::Cadical),
                lanes,
                ..Solvers::splr()
            }),
            #[cfg(not(feature = "cadical"))]
            SolverChoice::Cadical => {
                let _ = lanes;
                Err(failure::usage(
                    "this snapsat was built without CaDiCaL: rebuild with `cargo build --release \
                     --features cadical` (it needs a C++ compiler), or leave --solver out for \
                     the native search",
                ))
            }
        }
    }
}

/// Which sampler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Snap (Chen, Shen, Menzies): every test verified.
    Snap,
    /// The QuickSampler baseline (Dutra et al.): candidates unchecked until the end; only
    /// valid ones are written, and their share is reported as credibility.
    Quicksampler,
}
