//! Flag values the derive attributes cannot check alone: names of library types, and the
//! time limit.

use crate::failure::{self, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
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
