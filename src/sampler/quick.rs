//! The QuickSampler baseline (Dutra et al., ICSE'18), built in so that Snap and its baseline are
//! measured in one binary and one run.
//!
//! Each epoch takes a random solution σ; for each independent-support variable it finds a
//! solution near σ with that variable flipped (an atomic mutation; variables that cannot flip
//! are skipped from then on), and combines each new atomic mutation with every mutation found
//! so far in the epoch, `σ ⊕ ((σ ⊕ a) ∨ (σ ⊕ b))`, up to [`MAX_COMBINED`] atomic mutations per
//! candidate. Candidates are produced without checking, as QuickSampler does; like the Snap
//! paper's set-up, every candidate is then checked before the run ends: its support values are
//! extended to a full assignment by propagation, and only those that satisfy every clause are
//! written. The share of valid candidates is QuickSampler's credibility.
//!
//! Deviation: QuickSampler asks a MaxSAT solver for the *closest* flipped solution; here the
//! solver gets the flip as a unit and σ's values as preferred phases (see
//! [`crate::sampler::repair::Completer::flipped`]), a near but not always nearest solution.

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::diversity;
use crate::oracle::Oracle;
use crate::sampler::repair::{Completer, Failure};
use crate::sampler::{derive_seed, Observer, SampleError, StopReason, Suite};
use crate::verify::Checker;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Most atomic mutations combined into one candidate (QuickSampler's default).
pub const MAX_COMBINED: u8 = 6;
/// Candidates one epoch may produce; bounds the epoch's mutation list, which otherwise grows
/// as the sum of binomials C(m, ≤ 6) over m support variables.
pub const EPOCH_CANDIDATES: usize = 10_000;

#[derive(Debug, Clone)]
pub struct QuickConfig {
    pub time_limit: Duration,
    /// Stop once this many distinct valid tests are found.
    pub max_tests: Option<usize>,
    /// Stop once this many candidates were produced.
    pub max_candidates: Option<usize>,
    pub seed: u64,
}

impl Default for QuickConfig {
    fn default() -> Self {
        QuickConfig {
            time_limit: Duration::from_secs(600),
            max_tests: None,
            max_candidates: None,
            seed: 0,
        }
    }
}

/// Wall time per phase, in seconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QuickSeconds {
    /// Random solutions and atomic mutations (the solver's part).
    pub mutate: f64,
    pub verify: f64,
    pub total: f64,
}

/// Everything measured in a QuickSampler run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QuickReport {
    pub stop: Option<StopReason>,
    pub epochs: u64,
    pub atomic_mutations: u64,
    /// Support variables found unable to flip, skipped from then on.
    pub unflippable_vars: usize,
    /// Distinct candidates (by their support values), as produced, before checking.
    pub candidates: u64,
    pub duplicate_candidates: u64,
    /// Candidates whose support values extend to a model.
    pub valid_candidates: u64,
    pub credibility_percent: f64,
    pub distinct_tests: usize,
    pub solver_calls: u64,
    pub seconds: QuickSeconds,
    pub ncd: f64,
    pub coverage: f64,
    pub ncd_variables: usize,
}

/// Runs QuickSampler on the formula behind `checker`, handing each valid test to `observer`.
pub fn sample(
    checker: &Checker,
    oracle: &dyn Oracle,
    config: &QuickConfig,
    observer: &mut dyn Observer,
    interrupt: &AtomicBool,
) -> Result<QuickReport, SampleError> {
    let start = Instant::now();
    let completer = Completer::new(checker, oracle, Budget::new(config.time_limit, interrupt));
    let support = checker.cnf().projection();
    let mut report = QuickReport {
        ncd_variables: support.len(),
        ..Default::default()
    };
    let mut skipped = vec![false; checker.cnf().num_vars()];
    let mut seen_candidates: HashSet<Vec<u8>> = HashSet::new();
    let mut suite = Suite::new(checker, &support, config.max_tests);
    let out_of_time = || completer.expired();
    let stopped = |report: &QuickReport, suite: &Suite| -> Option<StopReason> {
        if interrupt.load(Ordering::Relaxed) {
            Some(StopReason::Interrupted)
        } else if completer.expired() {
            Some(StopReason::TimeLimit)
        } else if suite.is_full()
            || config
                .max_candidates
                .is_some_and(|m| report.candidates as usize >= m)
        {
            Some(StopReason::MaxTests)
        } else {
            None
        }
    };

    let stop = loop {
        if let Some(reason) = stopped(&report, &suite) {
            break reason;
        }
        let epoch = report.epochs;
        report.epochs += 1;
        let t = Instant::now();
        let mut prop = completer.propagator();
        let sigma = match completer.fresh(&mut prop, None, derive_seed(config.seed, 100, epoch)) {
            Ok(done) => {
                report.solver_calls += u64::from(done.solver_calls);
                done.test
            }
            Err(Failure::Unsat) if suite.tests().is_empty() => return Err(SampleError::Unsat),
            Err(Failure::Unsat) => continue,
            Err(Failure::Unknown(why)) if suite.tests().is_empty() => {
                return Err(SampleError::Unknown(why))
            }
            Err(Failure::Unknown(_)) => continue,
        };
        let flippable: Vec<usize> = support.iter().copied().filter(|&v| !skipped[v]).collect();
        // Each flip costs a pass over the formula even when no solver time is left, so past
        // the deadline (or an interrupt) the remaining flips are not started.
        let atomic: Vec<(usize, Result<_, Failure>)> = flippable
            .par_iter()
            .map_init(
                || completer.propagator(),
                |prop, &v| {
                    if out_of_time() {
                        return (v, Err(Failure::Unknown("stopped".into())));
                    }
                    let seed = derive_seed(config.seed, 101 + epoch, v as u64);
                    (v, completer.flipped(prop, &sigma, v, seed))
                },
            )
            .collect();
        report.seconds.mutate += t.elapsed().as_secs_f64();

        // Combine, in support order, exactly as QuickSampler enumerates.
        let mut mutations: Vec<(Assignment, u8)> = Vec::new();
        let mut candidates: Vec<Assignment> = vec![sigma.clone()];
        'combine: for (v, result) in atomic {
            let done = match result {
                Ok(done) => done,
                Err(Failure::Unsat) => {
                    skipped[v] = true;
                    continue;
                }
                Err(Failure::Unknown(_)) => continue,
            };
            report.atomic_mutations += 1;
            report.solver_calls += u64::from(done.solver_calls);
            let delta = sigma.xor(&done.test);
            let mut fresh = vec![(delta.clone(), 1u8)];
            fresh.extend(
                mutations
                    .iter()
                    .filter(|(_, level)| *level < MAX_COMBINED)
                    .map(|(m, level)| (m.or(&delta), level + 1)),
            );
            for (m, level) in fresh {
                candidates.push(sigma.xor(&m));
                mutations.push((m, level));
                if candidates.len() >= EPOCH_CANDIDATES {
                    break 'combine;
                }
            }
        }
        report.unflippable_vars = skipped.iter().filter(|&&s| s).count();

        // Distinct candidates by support values, within the candidate budget.
        let mut batch = Vec::new();
        for c in candidates {
            if config
                .max_candidates
                .is_some_and(|m| report.candidates as usize >= m)
            {
                break;
            }
            let mut key = Vec::with_capacity(support.len());
            c.project_bits(&support, &mut key);
            if seen_candidates.insert(key) {
                report.candidates += 1;
                batch.push(c);
            } else {
                report.duplicate_candidates += 1;
            }
        }
        if flippable.is_empty() && batch.is_empty() {
            break StopReason::NoNewTests;
        }
        let t = Instant::now();
        // Candidates left unchecked at the deadline are dropped and not counted, so the
        // credibility stays a measured share.
        let checked: Vec<Option<Option<Assignment>>> = batch
            .par_iter()
            .map_init(
                || completer.propagator(),
                |prop, c| (!out_of_time()).then(|| completer.extend_support(prop, c)),
            )
            .collect();
        report.seconds.verify += t.elapsed().as_secs_f64();
        report.candidates -= checked.iter().filter(|c| c.is_none()).count() as u64;
        for test in checked.into_iter().flatten().flatten() {
            report.valid_candidates += 1;
            suite.admit(&test, observer)?;
        }
    };
    report.stop = Some(stop);
    report.distinct_tests = suite.tests().len();
    report.credibility_percent = if report.candidates == 0 {
        0.0
    } else {
        100.0 * report.valid_candidates as f64 / report.candidates as f64
    };
    report.ncd = diversity::suite_ncd(suite.tests(), &support, diversity::DEFAULT_REMOVALS).value();
    report.coverage = suite.coverage();
    report.seconds.total = start.elapsed().as_secs_f64();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::Cnf;
    use crate::oracle::Splr;

    fn run(cnf: &Cnf, config: &QuickConfig) -> (Vec<Assignment>, QuickReport) {
        let checker = Checker::new(cnf);
        let mut tests = Vec::new();
        let mut keep = |t: &Assignment| {
            tests.push(t.clone());
            Ok(())
        };
        let report = sample(&checker, &Splr, config, &mut keep, &AtomicBool::new(false)).unwrap();
        (tests, report)
    }

    #[test]
    fn unconstrained_support_gives_only_valid_candidates() {
        // y1 = x1, y2 = x2, y3 = x3, with support x1..x3: every combination is valid.
        let mut cnf = Cnf::from_clauses(
            6,
            &[
                vec![-1, 4],
                vec![1, -4],
                vec![-2, 5],
                vec![2, -5],
                vec![-3, 6],
                vec![3, -6],
            ],
        );
        cnf.set_independent_support(vec![1, 2, 3]);
        let (tests, report) = run(
            &cnf,
            &QuickConfig {
                max_candidates: Some(8),
                ..Default::default()
            },
        );
        assert_eq!(report.candidates, 8);
        assert_eq!(report.credibility_percent, 100.0);
        assert_eq!(tests.len(), 8);
    }

    #[test]
    fn combined_mutations_can_be_invalid_and_are_not_written() {
        // At most one of x1, x2, x3 true: flipping two from all-false is invalid.
        let mut cnf = Cnf::from_clauses(3, &[vec![-1, -2], vec![-1, -3], vec![-2, -3]]);
        cnf.set_independent_support(vec![1, 2, 3]);
        let checker = Checker::new(&cnf);
        let (tests, report) = run(
            &cnf,
            &QuickConfig {
                max_candidates: Some(8),
                ..Default::default()
            },
        );
        assert!(report.credibility_percent < 100.0, "{report:?}");
        assert!(tests.iter().all(|t| checker.satisfies(t)));
        assert!(tests.len() <= 4);
    }

    #[test]
    fn unsat_formula_is_reported() {
        let cnf = Cnf::from_clauses(1, &[vec![1], vec![-1]]);
        let checker = Checker::new(&cnf);
        let mut sink = |_: &Assignment| Ok(());
        let result = sample(
            &checker,
            &Splr,
            &QuickConfig::default(),
            &mut sink,
            &AtomicBool::new(false),
        );
        assert!(matches!(result, Err(SampleError::Unsat)));
    }
}
