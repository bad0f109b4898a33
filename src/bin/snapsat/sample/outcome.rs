//! How a run ends: the answer of a run without a suite, the minimized suite (--small), the
//! statistics (--stats) and the summary.

use super::SampleArgs;
use crate::failure::{say, status, Classify, Failure, Result};
use crate::output::write_atomically;
use crate::summary::{self, Answer};
use snapsat::assignment::Assignment;
use snapsat::budget::Budget;
use snapsat::distribute::launch::Launch;
use snapsat::formula::Cnf;
use snapsat::minimize::shrink::shrink_with;
use snapsat::sampler::{SampleError, StopReason};
use snapsat::solver::IncrementalBackend;
use snapsat::testfile::{TestFormat, TestWriter};
use snapsat::verify::Checker;
use std::path::Path;
use std::process::ExitCode;

/// The answer of a run that has no suite.
pub enum NoSuite {
    Unsat,
    /// SIGINT or SIGTERM before the first test.
    Interrupted,
    /// With why no solution was found.
    Unknown(String),
}

impl NoSuite {
    fn answer(&self) -> Answer {
        match self {
            NoSuite::Unsat => Answer::Unsat,
            NoSuite::Interrupted => Answer::Interrupted,
            NoSuite::Unknown(_) => Answer::Unknown,
        }
    }

    fn status(&self) -> u8 {
        match self {
            NoSuite::Unsat => status::UNSAT,
            NoSuite::Interrupted => status::INTERRUPTED,
            NoSuite::Unknown(_) => status::UNKNOWN,
        }
    }
}

/// A run that ended without a suite: unsatisfiable and unknown are answers (said here; `Err`
/// inside), the rest are failures.
pub fn without_suite(
    result: std::result::Result<summary::RunReport, SampleError>,
    formula: &Path,
) -> Result<std::result::Result<summary::RunReport, NoSuite>> {
    match result {
        Ok(report) => Ok(Ok(report)),
        Err(SampleError::Unsat) => {
            say!(
                "snapsat: {}: the formula is unsatisfiable: no test exists",
                formula.display()
            );
            Ok(Err(NoSuite::Unsat))
        }
        Err(SampleError::Interrupted) => {
            say!("snapsat: interrupted before the first test: nothing was written");
            Ok(Err(NoSuite::Interrupted))
        }
        Err(SampleError::Unknown(why)) => {
            say!("snapsat: no solution found ({why}); try a longer --time-limit");
            Ok(Err(NoSuite::Unknown(why)))
        }
        Err(SampleError::Output(e)) => Err(e).output("the tests"),
        Err(e @ SampleError::Distribution(_)) => Err(anyhow::Error::from(e).into()),
        Err(e @ SampleError::Refused(_)) => Err(Failure::bad_input(e)),
    }
}

/// Minimizes the suite (`snapsat minimize`) and writes the kept tests whole to `path`. The
/// suite's last `directed` tests are the coverage-directed ones: greedy choice is not
/// monotone, so the suite without them is minimized too, and kept where it gives fewer tests
/// for as many combinations. At t = 2, with a solver that keeps sessions (not splr), the kept
/// tests are then shrunk ([`shrink`]): fewer tests, some of them new, valid and covering the
/// same pairs, in greedy order.
pub fn write_small(
    path: &Path,
    suite: &[Assignment],
    directed: usize,
    run: SmallRun,
) -> Result<summary::SmallSuite> {
    let projection = run.checker.cnf().projection();
    let minimize = |tests: &[Assignment]| {
        snapsat::minimize::minimize(tests, &projection, run.strength as usize, 1.0)
            .map_err(Failure::bad_input)
    };
    let mut kept = minimize(suite)?;
    if directed > 0 && directed < suite.len() {
        let rounds = minimize(&suite[..suite.len() - directed])?;
        if rounds.covered_tuples >= kept.covered_tuples && rounds.chosen.len() < kept.chosen.len() {
            kept = rounds;
        }
    }
    let mut tests: Vec<Assignment> = kept.chosen.iter().map(|&i| suite[i].clone()).collect();
    if let (2, Some(backend)) = (run.strength, run.sessions) {
        let checker = run.checker;
        tests = shrink_with(&tests, &projection, checker, backend, run.seed, &run.budget)
            .map_err(anyhow::Error::msg)?
            .tests;
    }
    let mut writer = TestWriter::new(Vec::new(), run.format);
    for test in &tests {
        writer.write(test).map_err(anyhow::Error::from)?;
    }
    write_atomically(path, &writer.into_inner())?;
    // The pool's tuples the written tests cover, and those beyond: counted, not assumed
    // from the search.
    let written = minimize(&tests)?.pool_tuples;
    let covered_tuples =
        kept.pool_tuples + written - minimize(&[suite, &tests[..]].concat())?.pool_tuples;
    Ok(summary::SmallSuite {
        tests: tests.len(),
        chosen_tests: kept.chosen.len(),
        strength: run.strength as usize,
        pool_tests: suite.len(),
        covered_tuples,
        pool_tuples: kept.pool_tuples,
        new_tuples: written - covered_tuples,
    })
}

/// What `--small` works with besides the suite.
pub struct SmallRun<'a> {
    pub checker: &'a Checker<'a>,
    /// Sessions to build new tests with; without them (splr) the kept tests are the answer.
    pub sessions: Option<&'a dyn IncrementalBackend>,
    pub strength: u64,
    pub seed: u64,
    pub budget: Budget<'a>,
    pub format: TestFormat,
}

/// What a run measured of itself, beside the sampler's report.
pub struct Timing {
    pub parse_seconds: f64,
    pub wall_seconds: f64,
    pub writer_seconds: f64,
}

/// Writes the run's statistics as JSON to `path` (replaced whole).
#[allow(clippy::too_many_arguments)]
pub fn write_stats(
    path: &Path,
    args: &SampleArgs,
    cnf: &Cnf,
    launch: &Launch,
    threads: usize,
    timing: &Timing,
    small: Option<&summary::SmallSuite>,
    outcome: &std::result::Result<summary::RunReport, NoSuite>,
) -> Result<()> {
    let stats = summary::RunStats {
        answer: outcome
            .as_ref()
            .err()
            .map_or(Answer::Suite, NoSuite::answer),
        unknown: match outcome {
            Err(NoSuite::Unknown(why)) => Some(why),
            _ => None,
        },
        algorithm: args.algorithm,
        solver: args.solver(),
        formula: args.input.formula.display().to_string(),
        variables: cnf.num_vars(),
        clauses: cnf.num_clauses(),
        independent_support: cnf.independent_support().len(),
        seed: args.seed,
        samples: args.samples,
        clusters: args.clusters,
        min_improvement_percent: args.min_improvement,
        stop_metric: args.stop_metric,
        sharded: args.sharded,
        time_limit_seconds: args.time_limit,
        launch: launch.name(),
        num_ranks: launch.ranks(),
        threads_per_rank: threads,
        parse_seconds: timing.parse_seconds,
        wall_seconds: timing.wall_seconds,
        writer_seconds: timing.writer_seconds,
        peak_memory_bytes: summary::peak_memory_bytes(),
        rank0_per_test: outcome
            .as_ref()
            .ok()
            .and_then(|report| report.rank0_per_test(timing.writer_seconds)),
        small,
        report: outcome.as_ref().ok(),
    };
    let json = serde_json::to_string_pretty(&stats).map_err(anyhow::Error::from)? + "\n";
    write_atomically(path, json.as_bytes())
}

/// The run's summary (unless --quiet) and its exit status.
pub fn conclude(
    args: &SampleArgs,
    cnf: &Cnf,
    outcome: std::result::Result<summary::RunReport, NoSuite>,
    writer_seconds: f64,
    small: Option<&summary::SmallSuite>,
) -> ExitCode {
    let report = match outcome {
        Ok(report) => report,
        Err(no_suite) => return ExitCode::from(no_suite.status()),
    };
    if !args.quiet {
        let context = summary::Context {
            output: args.output.as_deref().or(args.resume.as_deref()),
            independent_support: !cnf.independent_support().is_empty(),
            verbose: args.verbose,
        };
        summary::print(&report, writer_seconds, &context);
        if let (Some(small), Some(path)) = (small, &args.small) {
            summary::print_small(path, small);
        }
    }
    if report.stop() == StopReason::Interrupted {
        ExitCode::from(status::INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    }
}
