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
//! flip is a unit and greedy completion follows σ's values (see `Completer::flipped` at the
//! end of this file), a near but not always nearest solution. Where greedy completion fails,
//! splr decides the rest, starting from σ's values (see [`crate::solver::Splr`]) but drifting
//! from them as it searches: with splr's earlier first phases (the more frequent signs), those
//! mutations lay 4-63 support bits from σ on average, where greedy ones lie 1-3
//! (measured on the 8 slowest case studies, 2026-12-03).

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::diversity;
use crate::formula::literal;
use crate::propagate::Propagator;
use crate::sampler::repair::{Completed, Completer, Failure, GREEDY_CONFLICTS};
use crate::sampler::{derive_seed, Observer, SampleError, StopReason, Suite};
use crate::solver::Oracle;
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

/// Parameters of a QuickSampler run.
#[derive(Debug, Clone)]
pub struct QuickConfig {
    /// Wall-clock limit of the whole run.
    pub time_limit: Duration,
    /// Stop once this many distinct valid tests are found.
    pub max_tests: Option<usize>,
    /// Stop once this many candidates were produced.
    pub max_candidates: Option<usize>,
    /// Seeds every random solution and flip.
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
    /// Extending candidates' support values by propagation.
    pub verify: f64,
    /// The whole run.
    pub total: f64,
}

/// Everything measured in a QuickSampler run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QuickReport {
    /// Why the run ended.
    pub stop: Option<StopReason>,
    /// Random solutions σ taken (one an epoch).
    pub epochs: u64,
    /// Flips of one support variable that found a solution.
    pub atomic_mutations: u64,
    /// Support variables found unable to flip, skipped from then on.
    pub unflippable_vars: usize,
    /// Distinct candidates (by their support values), as produced, before checking.
    pub candidates: u64,
    /// Candidates whose support values an earlier one had.
    pub duplicate_candidates: u64,
    /// Candidates whose support values extend to a model.
    pub valid_candidates: u64,
    /// `valid_candidates` as a share of `candidates`: QuickSampler's credibility.
    pub credibility_percent: f64,
    /// Tests written.
    pub distinct_tests: usize,
    /// Solver calls, random solutions and flips together.
    pub solver_calls: u64,
    /// Wall time by phase.
    pub seconds: QuickSeconds,
    /// Eq. 2 of the suite, projected onto the support.
    pub ncd: f64,
    /// Pairwise literal coverage of the support.
    pub coverage: f64,
    /// Variables NCD is measured on.
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
    let support = checker.cnf().projection();
    let mut quick = Quick {
        config,
        completer: Completer::new(checker, oracle, Budget::new(config.time_limit, interrupt)),
        interrupt,
        report: QuickReport {
            ncd_variables: support.len(),
            ..Default::default()
        },
        unflippable: vec![false; checker.cnf().num_vars()],
        seen_candidates: HashSet::new(),
        suite: Suite::new(checker, config.max_tests),
        support,
    };
    let stop = loop {
        if let Some(reason) = quick.stopped() {
            break reason;
        }
        if let Some(reason) = quick.epoch(observer)? {
            break reason;
        }
    };
    let mut report = quick.report;
    report.stop = Some(stop);
    let suite = quick.suite.take_joined();
    report.distinct_tests = suite.len();
    report.credibility_percent = if report.candidates == 0 {
        0.0
    } else {
        100.0 * report.valid_candidates as f64 / report.candidates as f64
    };
    report.ncd = diversity::suite_ncd(&suite, &quick.support, diversity::DEFAULT_REMOVALS).value();
    report.coverage = diversity::PairwiseCoverage::of(&suite, &quick.support).fraction();
    report.seconds.total = start.elapsed().as_secs_f64();
    Ok(report)
}

/// A QuickSampler run in progress.
struct Quick<'a> {
    config: &'a QuickConfig,
    completer: Completer<'a>,
    interrupt: &'a AtomicBool,
    report: QuickReport,
    support: Vec<usize>,
    /// Support variables found unable to flip, skipped from then on.
    unflippable: Vec<bool>,
    /// Support values of every candidate produced so far.
    seen_candidates: HashSet<Vec<u8>>,
    suite: Suite<'a>,
}

impl Quick<'_> {
    fn stopped(&self) -> Option<StopReason> {
        if self.interrupt.load(Ordering::Relaxed) {
            Some(StopReason::Interrupted)
        } else if self.completer.expired() {
            Some(StopReason::TimeLimit)
        } else if self.suite.is_full() || self.out_of_candidates() {
            Some(StopReason::MaxTests)
        } else {
            None
        }
    }

    fn out_of_candidates(&self) -> bool {
        self.config
            .max_candidates
            .is_some_and(|m| self.report.candidates as usize >= m)
    }

    /// One epoch: a random solution σ, its atomic mutations, their combinations, and the
    /// check of every new candidate. `Some` when the run must end here.
    fn epoch(&mut self, observer: &mut dyn Observer) -> Result<Option<StopReason>, SampleError> {
        let epoch = self.report.epochs;
        self.report.epochs += 1;
        let t = Instant::now();
        let mut prop = None;
        let seed = derive_seed(self.config.seed, 100, epoch);
        let sigma = match self.completer.fresh(&mut prop, None, seed) {
            Ok(done) => {
                self.report.solver_calls += u64::from(done.solver_calls);
                // σ is a test as soon as it is found: its candidate below is checked only if
                // time is left, and a run whose deadline fell during the epoch (karatsuba.sk_7_41,
                // 60 s) ended with no test, exit status 0 and no output file.
                self.suite.admit(&done.test, observer)?;
                done.test
            }
            Err(Failure::Unknown(_))
                if self.suite.is_empty() && self.interrupt.load(Ordering::Relaxed) =>
            {
                return Err(SampleError::Interrupted)
            }
            Err(Failure::Unsat) if self.suite.is_empty() => return Err(SampleError::Unsat),
            Err(Failure::Unknown(why)) if self.suite.is_empty() => {
                return Err(SampleError::Unknown(why))
            }
            Err(_) => return Ok(None),
        };
        let flippable: Vec<usize> = (self.support.iter().copied())
            .filter(|&v| !self.unflippable[v])
            .collect();
        let atomic = self.atomic_mutations(&sigma, &flippable, epoch);
        self.report.seconds.mutate += t.elapsed().as_secs_f64();
        let candidates = self.combine(&sigma, atomic);
        let batch = self.distinct(candidates);
        if flippable.is_empty() && batch.is_empty() {
            return Ok(Some(StopReason::NoNewTests));
        }
        self.check(&batch, observer)?;
        Ok(None)
    }

    /// A solution near σ with each flippable variable flipped, in support order. Each flip
    /// costs a pass over the formula even when no solver time is left, so past the deadline
    /// (or an interrupt) the remaining flips are not started.
    fn atomic_mutations(
        &self,
        sigma: &Assignment,
        flippable: &[usize],
        epoch: u64,
    ) -> Vec<(usize, Result<Completed, Failure>)> {
        flippable
            .par_iter()
            .map_init(
                || self.completer.propagator(),
                |prop, &v| {
                    if self.completer.expired() {
                        return (v, Err(Failure::Unknown("stopped".into())));
                    }
                    let seed = derive_seed(self.config.seed, 101 + epoch, v as u64);
                    (v, self.completer.flipped(prop, sigma, v, seed))
                },
            )
            .collect()
    }

    /// σ, then each atomic mutation combined with every mutation found before it in the epoch
    /// (up to [`MAX_COMBINED`] atomic ones), in support order, exactly as QuickSampler
    /// enumerates; at most [`EPOCH_CANDIDATES`].
    fn combine(
        &mut self,
        sigma: &Assignment,
        atomic: Vec<(usize, Result<Completed, Failure>)>,
    ) -> Vec<Assignment> {
        let mut mutations: Vec<(Assignment, u8)> = Vec::new();
        let mut candidates: Vec<Assignment> = vec![sigma.clone()];
        'combine: for (v, result) in atomic {
            let done = match result {
                Ok(done) => done,
                Err(Failure::Unsat) => {
                    self.unflippable[v] = true;
                    continue;
                }
                Err(Failure::Unknown(_)) => continue,
            };
            self.report.atomic_mutations += 1;
            self.report.solver_calls += u64::from(done.solver_calls);
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
        self.report.unflippable_vars = self.unflippable.iter().filter(|&&s| s).count();
        candidates
    }

    /// The candidates whose support values are new, within the candidate budget.
    fn distinct(&mut self, candidates: Vec<Assignment>) -> Vec<Assignment> {
        let mut batch = Vec::new();
        for c in candidates {
            if self.out_of_candidates() {
                break;
            }
            let mut key = Vec::with_capacity(self.support.len());
            c.project_bits(&self.support, &mut key);
            if self.seen_candidates.insert(key) {
                self.report.candidates += 1;
                batch.push(c);
            } else {
                self.report.duplicate_candidates += 1;
            }
        }
        batch
    }

    /// Each candidate's support values extended to a model by propagation, if they extend;
    /// the models join the suite. Candidates left unchecked at the deadline are dropped and
    /// not counted, so the credibility stays a measured share.
    fn check(
        &mut self,
        batch: &[Assignment],
        observer: &mut dyn Observer,
    ) -> Result<(), SampleError> {
        let t = Instant::now();
        let checked: Vec<Option<Option<Assignment>>> = batch
            .par_iter()
            .map_init(
                || self.completer.propagator(),
                |prop, c| {
                    (!self.completer.expired()).then(|| self.completer.extend_support(prop, c))
                },
            )
            .collect();
        self.report.seconds.verify += t.elapsed().as_secs_f64();
        self.report.candidates -= checked.iter().filter(|c| c.is_none()).count() as u64;
        for test in checked.into_iter().flatten().flatten() {
            self.report.valid_candidates += 1;
            // `extend_support` checked it against every clause already.
            let fingerprint = test.fingerprint();
            self.suite.admit_checked(test, fingerprint, observer)?;
        }
        Ok(())
    }
}

/// QuickSampler's own uses of the completion machinery.
impl Completer<'_> {
    /// A solution near `base` with variable `var` flipped (QuickSampler's atomic mutation): the
    /// flip is fixed and every other variable prefers its value in `base`. `Unsat` when no
    /// solution has the flip.
    fn flipped(
        &self,
        prop: &mut Propagator,
        base: &Assignment,
        var: usize,
        seed: u64,
    ) -> Result<Completed, Failure> {
        let flip = literal(var, !base.get(var));
        let done = self.complete(prop, &[flip], base, true, seed, Some(self.remaining()))?;
        // `complete` frees a fixed literal that propagation refutes; here that means no flip.
        if done.test.satisfies(flip) {
            Ok(done)
        } else {
            Err(Failure::Unsat)
        }
    }

    /// Extends the independent-support values of `test` to a full, verified assignment by unit
    /// propagation and greedy decisions along `test` (the completion QuickSampler's outputs
    /// get); `None` when the support values contradict the formula or greedy decisions fail.
    fn extend_support(&self, prop: &mut Propagator, test: &Assignment) -> Option<Assignment> {
        prop.reset_to_units().ok()?;
        for &v in &self.projection {
            prop.assign(literal(v, test.get(v))).ok()?;
        }
        prop.complete_greedily(test, self.decision_order.iter().copied(), GREEDY_CONFLICTS)
            .ok()?;
        let full = prop.to_assignment(test);
        self.checker.satisfies(&full).then_some(full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::Cnf;
    use crate::solver::Splr;

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

    /// An oracle that answers only once the run's time limit has passed.
    struct AnswersLate {
        after: Duration,
        calls: std::sync::atomic::AtomicUsize,
    }

    impl Oracle for AnswersLate {
        fn solve(&self, query: &crate::solver::Query) -> crate::solver::Outcome {
            self.calls.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(self.after);
            Splr.solve(query)
        }
    }

    /// A solution σ found as the time limit passes is kept, though no candidate of its epoch
    /// is checked (regression: the run ended with no test).
    #[test]
    fn a_solution_found_at_the_deadline_is_kept() {
        let (cnf, _) = crate::testing::planted(60, 250, 3);
        let checker = Checker::new(&cnf);
        let limit = Duration::from_millis(50);
        let oracle = AnswersLate {
            after: 2 * limit,
            calls: Default::default(),
        };
        let mut tests = Vec::new();
        let mut keep = |t: &Assignment| {
            tests.push(t.clone());
            Ok(())
        };
        let config = QuickConfig {
            time_limit: limit,
            ..Default::default()
        };
        let report = sample(
            &checker,
            &oracle,
            &config,
            &mut keep,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(
            oracle.calls.load(Ordering::Relaxed) > 0,
            "σ needed the oracle"
        );
        assert_eq!(report.stop, Some(StopReason::TimeLimit));
        assert_eq!(report.candidates, 0, "nothing checked past the deadline");
        assert_eq!(tests.len(), 1);
        assert!(checker.satisfies(&tests[0]));
    }

    #[test]
    fn unsat_formula_is_reported() {
        let cnf = crate::testing::unsatisfiable();
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
