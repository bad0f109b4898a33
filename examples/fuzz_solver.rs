//! Differential fuzzing of the session backends (`snapsat::solver::differential`): random
//! formulas, each with a session asked queries as the sampler asks them, every answer
//! confirmed by exhaustive enumeration or splr. Prints the tally; exits 1 on the first
//! disagreement, with the formula and query to ask again.
//!
//! `cargo run --release --example fuzz_solver -- [SESSIONS] [SEED] [BACKEND]` (default 10000
//! sessions of 8 queries, seed 0, native), spread over every core.

use rayon::prelude::*;
use snapsat::solver::differential::{check_session, Tally};
use snapsat::solver::IncrementalBackend;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let sessions: u64 = args.next().map_or(10_000, |a| a.parse().expect("SESSIONS"));
    let seed: u64 = args.next().map_or(0, |a| a.parse().expect("SEED"));
    let backend: &dyn IncrementalBackend = match args.next().as_deref() {
        None | Some("native") => &snapsat::solver::native::Native,
        #[cfg(feature = "cadical")]
        Some("cadical") => &snapsat::solver::cadical::Cadical,
        Some(other) => panic!("no backend `{other}` in this build"),
    };
    let first = seed.wrapping_mul(1 << 32);
    let outcome = (first..first + sessions)
        .into_par_iter()
        .try_fold(Tally::default, |mut tally, s| {
            check_session(backend, s).map(|t| {
                tally.add(t);
                tally
            })
        })
        .try_reduce(Tally::default, |mut a, b| {
            a.add(b);
            Ok(a)
        });
    match outcome {
        Ok(t) => {
            println!(
                "{}: {} queries, {} models checked, {} refutations confirmed, {} given up at a \
                 conflict limit; no disagreement",
                backend.name(),
                t.queries,
                t.models,
                t.refutations,
                t.unknown
            );
            ExitCode::SUCCESS
        }
        Err(disagreement) => {
            eprintln!("{}: disagreement: {disagreement}", backend.name());
            ExitCode::FAILURE
        }
    }
}
