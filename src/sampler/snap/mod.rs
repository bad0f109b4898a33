//! The Snap sampler, Fig. 2 of the paper, a file a step: `initial` solutions (step 1), the
//! weighted [`deltas`] pool (step 2), [`kmeans`] centroids (step 3a) on the `columns` where
//! the round's samples differ, [`candidates`]
//! `c ⊕ (δi ∨ δj)` for the workforce to check and repair (step 3b), one `round` of steps 2–3,
//! and the `stop` rule on the suite's NCD (step 4). This file holds the parameters and the
//! loop that ties the steps together.

pub mod candidates;
mod columns;
pub mod cover;
pub mod deltas;
pub mod draw;
mod initial;
pub mod kmeans;
mod round;
pub mod shard;
mod stop;

use crate::assignment::Assignment;
use crate::budget::{Budget, CoarseClock};
use crate::diversity::{self, NcdShare};
use crate::metrics::Metrics;
use crate::sampler::repair::{Completed, Failure, Route};
use crate::sampler::task::{Demand, Verdict};
use crate::sampler::work::Workforce;
use crate::sampler::{
    Observer, PhaseSeconds, Report, RoundStats, SampleError, SolverCalls, StopReason, Suite,
    Throughput,
};
use crate::verify::Checker;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The diversity measure whose improvement decides whether another round runs (step 4a).
///
/// NCD is taken on the projection onto the independent support, where it separates suites
/// (on full assignments 100 copies of one model already score 0.989). Eq. 2 normalises by
/// `max C(X \ {x})`, which grows with the suite as fast as the numerator, so on the case
/// studies the first round lifts NCD by 2–3% (0.965 → 0.994) and the rule stops there. That is
/// the right call by combinatorial measures too: 2- and 3-wise coverage of `c ind` are
/// saturated by the initial solutions, and twenty more rounds add distinct tests but not one
/// new value combination (`results/stop-rule.md`). `Information` drops the normalisation and
/// runs while a round adds X of new incompressible content, for users who want more tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopMetric {
    /// NCD of the suite projected onto the independent support (Eq. 2): the paper's rule.
    #[default]
    Ncd,
    /// C(X) − min C(x) of the projected suite (Eq. 2's numerator).
    Information,
    /// Pairwise literal coverage of the independent support.
    Coverage,
}

impl StopMetric {
    /// The names `FromStr` takes, as `--stats` writes them.
    pub const NAMES: [&'static str; 3] = ["ncd", "information", "coverage"];
}

impl std::str::FromStr for StopMetric {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "ncd" => Ok(StopMetric::Ncd),
            "information" => Ok(StopMetric::Information),
            "coverage" => Ok(StopMetric::Coverage),
            _ => Err(format!(
                "unknown stop metric `{name}` (one of {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// Parameters of a run; the defaults are the paper's (§III-C).
#[derive(Debug, Clone)]
pub struct SnapConfig {
    /// N: initial solutions, and candidates per centroid per round.
    pub samples: usize,
    /// k: clusters.
    pub clusters: usize,
    /// X: go on while NCD improves by at least this fraction per round.
    pub min_improvement: f64,
    /// T: wall-clock limit of the whole run.
    pub time_limit: Duration,
    /// Stop once the suite holds this many tests.
    pub max_tests: Option<usize>,
    /// Stop after this many rounds.
    pub max_rounds: Option<usize>,
    /// Seeds every random choice of the run (`--seed`).
    pub seed: u64,
    /// Removal streams for NCD's denominator (see [`diversity::RunningNcd`]).
    pub ncd_removals: usize,
    /// The measure the stop rule watches.
    pub stop_metric: StopMetric,
    /// Every rank draws and does rounds of its own ([`shard`]).
    pub sharded: bool,
    /// Rounds start before all N initial solutions are in where those are hard searches
    /// (see `initial`); false runs the paper's loop exactly.
    pub early_start: bool,
    /// After the stop rule, tests planned to cover the support's value pairs the samples
    /// show ([`cover`]; beyond the paper, for `--small`).
    pub cover: bool,
}

impl SnapConfig {
    /// What a rank needs to draw rounds as this run does.
    pub fn shard_plan(&self) -> shard::ShardPlan {
        shard::ShardPlan {
            seed: self.seed,
            samples: self.samples,
            clusters: self.clusters,
            ncd_removals: self.ncd_removals,
            ahead: !self.cover,
        }
    }
}

impl Default for SnapConfig {
    fn default() -> Self {
        SnapConfig {
            samples: 100,
            clusters: 5,
            min_improvement: 0.05,
            time_limit: Duration::from_secs(600),
            max_tests: None,
            max_rounds: None,
            seed: 0,
            ncd_removals: diversity::RUNNING_REMOVALS,
            stop_metric: StopMetric::default(),
            sharded: false,
            early_start: true,
            cover: false,
        }
    }
}

/// Tests handed to the measuring thread at a time while a round merges (the rest when the
/// round ends): one message a test cost the coordinator as much as merging the test.
const MEASURED_TOGETHER: usize = 32;

/// How long merging goes on once the time limit or an interrupt has ended the run.
const MERGE_GRACE: Duration = Duration::from_millis(250);

/// How long after the time limit the suite's measures may take in what was merged by the end
/// of [`MERGE_GRACE`]: a suite built for a minute was reported "NCD not measured" for the
/// few tests merged in the grace. Longer backlogs (very wide tests) are still cut short.
const MEASURE_GRACE: Duration = Duration::from_millis(750);

/// `elapsed`, but for the rounds settled meanwhile (`settled`: their settling), which counts
/// in those rounds' seconds.
fn without_settling(elapsed: Duration, settled: Duration) -> Duration {
    elapsed.saturating_sub(settled)
}

/// A verdict of a task outside a sharded round that names a rank's part, where only the
/// verdicts of sharded rounds do: a rank's fault.
fn kept_outside_a_round() -> SampleError {
    SampleError::Distribution("a rank kept a test outside a sharded round".into())
}

/// One run of the loop: its suite, its running NCD and its report.
pub(super) struct Snap<'a> {
    config: &'a SnapConfig,
    /// The coordinator's own latencies (NCD).
    metrics: Metrics,
    start: Instant,
    /// The run's deadline and interrupt, checked by every phase of the loop.
    budget: Budget<'a>,
    /// When merging first found the budget spent (see [`Snap::too_late`]).
    spent_at: Option<Instant>,
    /// Time spent merging verdicts (counting them, deduplicating their tests, handing those
    /// to the observer and to the measuring thread; the clause check is the workers'): the
    /// coordinator's, however the ranks' work goes on meanwhile. Timed a burst at a time
    /// ([`Snap::merge_burst`]), the deadline checked per verdict on a [`CoarseClock`].
    merging: Duration,
    /// Time spent settling rounds (reading their measures): each in the settled round's
    /// seconds, and left out of whatever was timed meanwhile ([`without_settling`]).
    settling: Duration,
    suite: Suite<'a>,
    /// The variables NCD is measured on.
    projection: Vec<usize>,
    /// The suite's NCD and coverage, kept up to date as tests join, on a thread of their
    /// own while [`Snap::run`] goes on.
    measures: Option<diversity::MeasuringThread>,
    /// The stop metric of the last round settled (NaN before the initial solutions are).
    settled_metric: f64,
    /// Where the ranks measure their own tests: their NCD shares at the end of each round
    /// not yet settled, by round.
    rank_shares: Option<BTreeMap<usize, Vec<NcdShare>>>,
    report: Report,
}

impl<'a> Snap<'a> {
    /// A run under `budget`: the one its workforce was given, so that no task is skipped
    /// for a deadline the run has not reached (a round of skipped tasks then read as one
    /// that found nothing new).
    pub(super) fn new(
        checker: &'a Checker<'a>,
        config: &'a SnapConfig,
        budget: Budget<'a>,
    ) -> Self {
        let start = Instant::now();
        let projection = checker.cnf().projection();
        Snap {
            config,
            metrics: Metrics::default(),
            start,
            budget,
            spent_at: None,
            merging: Duration::ZERO,
            settling: Duration::ZERO,
            suite: Suite::new(checker, config.max_tests),
            measures: None,
            settled_metric: f64::NAN,
            rank_shares: None,
            report: Report {
                stop: StopReason::Converged,
                distinct_tests: 0,
                seconds: PhaseSeconds::default(),
                coordinator_seconds: 0.0,
                work_seconds: 0.0,
                merge_seconds: 0.0,
                messaging_seconds: 0.0,
                decoding_seconds: 0.0,
                solver_calls: SolverCalls::default(),
                completed_by_propagation: 0,
                completed_from_parts: 0,
                candidates: 0,
                valid_before_repair: 0,
                valid_before_repair_percent: 0.0,
                repaired: 0,
                failed_repairs: 0,
                dropped_candidates: 0,
                dropped_seconds: 0.0,
                fresh_fallbacks: 0,
                delta_bits_asked: 0,
                delta_bits_kept: 0,
                duplicates: 0,
                invalid_dropped: 0,
                ncd_variables: projection.len(),
                rounds: Vec::new(),
                unknown: Vec::new(),
                resumed: 0,
                started_early: false,
                covering: cover::CoverReport::default(),
                throughput: Throughput::default(),
                latency: BTreeMap::new(),
                ranks: Vec::new(),
            },
            projection,
        }
    }

    /// The measuring thread, handed the tests that joined since it last took some (none once
    /// the ranks measure their own).
    fn measures_up_to_date(&mut self) -> &mut diversity::MeasuringThread {
        let joined = self.suite.take_joined();
        let measures = self
            .measures
            .as_mut()
            .expect("the measures run while the loop does");
        if self.rank_shares.is_none() {
            measures.extend(joined);
        }
        measures
    }

    /// Whether the measures asked for are ready to read without waiting.
    fn measures_ready(&self) -> bool {
        self.measures.as_ref().is_some_and(|m| m.ready())
    }

    /// Adds a test a worker checked against every clause (and fingerprinted) to the suite if
    /// it is new; the suite's copy when added.
    fn admit(
        &mut self,
        test: Assignment,
        fingerprint: u64,
        observer: &mut dyn Observer,
    ) -> Result<Option<Arc<Assignment>>, SampleError> {
        let added = self.suite.admit_checked(test, fingerprint, observer)?;
        self.report.duplicates += u64::from(added.is_none() && !self.suite.is_full());
        if self.suite.joined() >= MEASURED_TOGETHER {
            // The measuring thread takes tests as they are merged, while the ranks work; the
            // round's end is left to read the measures.
            self.measures_up_to_date();
        }
        Ok(added)
    }

    /// A burst of verdicts ([`crate::sampler::task::Deliver`]) merged one by one by
    /// `merge`, which reads the time from the burst's clock. Enough once `merge` said so of
    /// any verdict.
    fn merge_burst(
        &mut self,
        verdicts: &mut dyn Iterator<Item = Verdict>,
        observer: &mut dyn Observer,
        mut merge: impl FnMut(
            &mut Self,
            &mut dyn Observer,
            Verdict,
            &CoarseClock,
        ) -> Result<Demand, SampleError>,
    ) -> Result<Demand, SampleError> {
        let clock = CoarseClock::start();
        let settled = self.settling;
        let mut demand = Demand::More;
        for verdict in verdicts {
            if merge(self, observer, verdict, &clock)? == Demand::Enough {
                demand = Demand::Enough;
            }
        }
        self.merged(&clock, settled);
        Ok(demand)
    }

    /// The time since `clock` started counted as merging, but for rounds settled meanwhile
    /// (`settled`: the settling time then).
    fn merged(&mut self, clock: &CoarseClock, settled: Duration) {
        self.merging += without_settling(clock.elapsed(), self.settling - settled);
    }

    /// True from [`MERGE_GRACE`] after the budget was found spent, once the suite holds a
    /// test: verdicts that arrive then are dropped, not merged. Merging waits for the
    /// suite's file, and on wide formulas the ranks outpace it (a million variables: 7 MB a
    /// line), so merging all they had ready at the deadline overran `-t 5` by 1–5 s; within
    /// the grace, the verdicts done by the deadline of any narrower formula are kept. A run
    /// that has no test yet still takes its first.
    /// That is asked per verdict, with the clock read once for it (`now`).
    fn too_late(&mut self, now: Instant) -> bool {
        if !self.budget.exhausted_at(now) || self.suite.is_empty() {
            return false;
        }
        let spent = *self.spent_at.get_or_insert(now);
        now.saturating_duration_since(spent) > MERGE_GRACE
    }

    /// Verdicts stop being wanted once the suite is full or it is too late (at `now`) for
    /// them.
    fn demand(&mut self, now: Instant) -> Demand {
        if self.suite.is_full() || self.too_late(now) {
            Demand::Enough
        } else {
            Demand::More
        }
    }

    fn note_completion(&mut self, done: &Completed, purpose_generate: bool) {
        self.note_solving(done.solver_calls, done.route, purpose_generate);
    }

    /// A completion's solver calls and route counted in the run's figures.
    fn note_solving(&mut self, solver_calls: u32, route: Route, purpose_generate: bool) {
        let calls = u64::from(solver_calls);
        if purpose_generate {
            self.report.solver_calls.generate += calls;
        } else {
            self.report.solver_calls.repair += calls;
        }
        self.report.completed_by_propagation += u64::from(route == Route::Propagation);
        self.report.completed_from_parts += u64::from(route == Route::Parts);
    }

    /// Adds a test a rank kept in its part ([`Verdict::Kept`]) to the suite if it is new,
    /// handing its place to the observer.
    fn admit_kept(
        &mut self,
        rank: u32,
        fingerprint: u64,
        place: Option<(u64, u32)>,
        observer: &mut dyn Observer,
    ) -> Result<(), SampleError> {
        let added = match place {
            Some((number, bytes)) => {
                let at = (rank as usize, number, bytes);
                self.suite.admit_kept(fingerprint, at, observer)?
            }
            // One of the tests the rank started from: the suite's already.
            None => false,
        };
        self.report.duplicates += u64::from(!added && !self.suite.is_full());
        Ok(())
    }

    fn note_failure(&mut self, failure: Failure) {
        if let Failure::Unknown(why) = failure {
            if self.report.unknown.len() < 10 && !self.report.unknown.contains(&why) {
                self.report.unknown.push(why);
            }
        }
    }

    pub(super) fn run(
        &mut self,
        workforce: &mut dyn Workforce,
        resumed: &[Assignment],
        observer: &mut dyn Observer,
    ) -> Result<Report, SampleError> {
        let (vars, removals) = (self.projection.clone(), self.config.ncd_removals);
        let budget = self.budget.extended(MEASURE_GRACE);
        std::thread::scope(|scope| {
            self.measures = Some(diversity::MeasuringThread::spawn(
                scope, vars, removals, budget,
            ));
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.run_loop(workforce, resumed, observer)
            }));
            // Dropping the handle ends the thread, which the scope waits for (a panic too).
            self.measures = None;
            result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    fn run_loop(
        &mut self,
        workforce: &mut dyn Workforce,
        resumed: &[Assignment],
        observer: &mut dyn Observer,
    ) -> Result<Report, SampleError> {
        let mut samples = self.initial_samples(workforce, resumed, observer)?;
        if self.config.sharded {
            if let Some(parts) = observer.parts() {
                workforce.keep_tests_in(&parts);
            }
            workforce.shard(&self.config.shard_plan(), &samples)?;
            if workforce.measures_shares() {
                // The ranks measure the tests of the rounds; this side, those before.
                self.measures_up_to_date().freeze();
                self.rank_shares = Some(BTreeMap::new());
            }
        }
        let initial = RoundStats {
            round: 0,
            samples: samples.len(),
            new_tests: self.suite.len(),
            work_seconds: workforce.busy().as_secs_f64(),
            merge_seconds: self.merging.as_secs_f64(),
            messaging_seconds: workforce.messaging().as_secs_f64(),
            ..Default::default()
        };
        let initial_messaging = initial.messaging_seconds;
        self.measures_up_to_date().ask();
        let mut next = self.prepare_ahead(0, &samples);
        let mut unsettled = Some(round::Unsettled {
            stats: initial,
            seconds: self.start.elapsed().as_secs_f64(),
            working: self.report.seconds.initial - initial_messaging,
            initial: true,
        });
        let mut round = 0;
        let stop = loop {
            // With no round prepared, a stop is certain once the last round is settled. A
            // covering sharded run settles each round before it starts the next too: the cover
            // step's tasks run in the ranks' solvers after the rounds, and a round the stop
            // rule cut short once it had started would leave them as timing had it.
            if next.is_none() || (self.config.cover && self.config.sharded) {
                if let Some(last) = unsettled.take() {
                    let converged = self.settle(last, observer);
                    if let Some(stop) = self.halted(None).or(converged) {
                        break stop;
                    }
                }
            }
            let Some(prepared) = next.take() else {
                match self.halted(Some(round)) {
                    Some(stop) => break stop,
                    None => {
                        next = Some(self.prepare(round + 1, &samples));
                        continue;
                    }
                }
            };
            let last = unsettled.take();
            round += 1;
            match self.round(workforce, prepared, &mut samples, observer, &mut next, last)? {
                round::RoundEnd::Ran(this) => unsettled = Some(this),
                round::RoundEnd::Stopped(stop) => break stop,
            }
        };
        if self.config.cover && !matches!(stop, StopReason::TimeLimit | StopReason::Interrupted) {
            self.cover(workforce, &samples, observer)?;
        }
        self.report.stop = stop;
        self.report.distinct_tests = self.suite.len();
        self.report.valid_before_repair_percent = if self.report.candidates == 0 {
            0.0
        } else {
            100.0 * self.report.valid_before_repair as f64 / self.report.candidates as f64
        };
        self.report.seconds.total = self.start.elapsed().as_secs_f64();
        let per_second = |count: f64, seconds: f64| {
            if seconds > 0.0 {
                count / seconds
            } else {
                0.0
            }
        };
        self.report.throughput = Throughput {
            candidates_per_second: per_second(
                self.report.candidates as f64,
                self.report.seconds.verify_repair,
            ),
            tests_per_second: per_second(
                self.report.distinct_tests as f64,
                self.report.seconds.total,
            ),
        };
        Ok(self.report.clone())
    }

    /// The coordinator's own latencies, for merging with the ranks'.
    pub(super) fn into_metrics(self) -> Metrics {
        self.metrics
    }
}

#[cfg(test)]
mod tests;
