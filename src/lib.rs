//! snapsat: very small, 100%-valid, diverse test suites from CNF formulas by the Snap method.
//!
//! Data flows one way: [`dimacs`] reads a [`formula::Cnf`]; the [`sampler`] draws
//! [`assignment::Assignment`]s with the [`oracle`] and [`propagate`], checks each with
//! [`verify`] before it leaves, and measures the suite with [`diversity`]; [`testfile`] writes
//! tests and statistics. [`distribute`] runs the sampler's tasks on ranks (threads or MPI
//! processes); [`tcg`] is a second front end that generates unit tests for methods of small
//! programs and can hand their path constraints to the sampler as CNF.

pub mod assignment;
pub mod budget;
pub mod dimacs;
pub mod distribute;
pub mod diversity;
pub mod formula;
pub mod metrics;
pub mod minimize;
pub mod oracle;
pub mod propagate;
pub mod sampler;
pub mod tcg;
pub mod testfile;
pub mod testing;
pub mod verify;
