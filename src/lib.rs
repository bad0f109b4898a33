//! snapsat: very small, 100%-valid, diverse test suites from CNF formulas by the Snap method.
//!
//! Data flows one way: [`dimacs`] reads a [`formula::Cnf`]; the [`sampler`] draws
//! [`assignment::Assignment`]s with a [`solver`] and [`propagate`], checks each with
//! [`verify`] before it leaves, and measures the suite with [`diversity`]; [`testfile`] writes
//! tests and statistics. [`distribute`] runs the sampler's tasks on ranks (threads or MPI
//! processes); [`tcg`] is a second front end that generates unit tests for methods of small
//! programs and can hand their path constraints to the sampler as CNF.
//!
//! Sampling a formula, each test received as it is found (every one already checked against
//! every clause):
//!
//! ```
//! use snapsat::assignment::Assignment;
//! use snapsat::dimacs::{self, Strictness};
//! use snapsat::solver::Splr;
//! use snapsat::sampler::{self, SnapConfig};
//! use snapsat::verify::Checker;
//! use std::sync::atomic::AtomicBool;
//!
//! let text = "p cnf 4 3\nc ind 1 2 3 0\n1 2 0\n-1 3 0\n-2 -3 4 0\n";
//! let cnf = dimacs::parse(text.as_bytes(), Strictness::Strict)?.cnf;
//! let checker = Checker::new(&cnf);
//! let config = SnapConfig { samples: 8, seed: 1, ..SnapConfig::default() };
//! let mut tests = Vec::new();
//! let mut receive = |test: &Assignment| {
//!     tests.push(test.to_dimacs_line());
//!     Ok(())
//! };
//! let report = sampler::sample(&checker, &Splr, &config, &mut receive, &AtomicBool::new(false))?;
//! assert_eq!(tests.len(), report.distinct_tests);
//! assert!(!tests.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod assignment;
pub mod budget;
pub mod dimacs;
pub mod distribute;
pub mod diversity;
pub mod formula;
pub mod handoff;
pub mod metrics;
pub mod minimize;
pub mod propagate;
pub mod sampler;
pub mod solver;
pub mod tcg;
pub mod testfile;
pub mod testing;
pub mod verify;
