//! Coverage-directed tests, beyond the paper (`SnapConfig::cover`, which `--small` asks for).
//!
//! Once the stop rule has spoken, tests are planned AETG-style (Cohen et al., TSE 1997) to
//! cover between them every value pair of the independent support that the samples show:
//! a plan starts from a pair no planned or directed test has covered yet and gives each other
//! support variable, in random order, the value that covers the most such pairs with the
//! values chosen before it. A plan goes to the workforce as a candidate `c ⊕ δ` like any
//! other: `c` the sample nearest the plan on the support, `δ` the support bits where the two
//! differ, so the repair keeps the plan's values where the formula lets it and frees the rest.
//! Only pairs a sample shows are aimed at: each is satisfiable, so no repair is spent proving
//! a pair impossible.
//!
//! The rounds' tests cover pairs by chance; a greedy minimization that can choose among
//! planned ones keeps fewer tests for the same coverage.

use super::Snap;
use crate::assignment::Assignment;
use crate::diversity::PairwiseCoverage;
use crate::formula::literal;
use crate::propagate::{Propagator, Watches};
use crate::sampler::derive_seed;
use crate::sampler::task::{Task, Verdict};
use crate::sampler::work::Workforce;
use crate::sampler::{Observer, SampleError};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::time::Instant;

/// Plans handed to the workforce together; each sees the pairs of those before it as
/// covered. Batches after the first aim at what the repairs of the earlier ones missed.
const PLANS_PER_BATCH: usize = 16;

/// Plans drawn for each one kept (the one covering the most open pairs), as AETG draws 50:
/// fewer where the support is large, each costing `m²`.
const PLANS_DRAWN: usize = 32;

/// Pair checks the drawing of one kept plan may take (`PLANS_DRAWN · m²` at most).
const PAIR_CHECKS_A_PLAN: usize = 4 << 20;

/// Batches at most.
const MAX_BATCHES: usize = 16;

/// Batches in a row that cover no new pair before the step gives up.
const MAX_STALLS: usize = 2;

/// Samples a plan's nearest centroid is sought among (the same for the whole step).
const CENTROIDS: usize = 100;

/// The seed stream of the step (round draws use 1 and `2 + round`, shards `u64::MAX`).
const COVER_STREAM: u64 = u64::MAX - 1;

/// The values a pair of variables can take together.
const VALUE_PAIRS: [(bool, bool); 4] = [(false, false), (false, true), (true, false), (true, true)];

/// What the step did, in the run's report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CoverReport {
    /// Value pairs of the support the samples show: the step's target.
    pub pairs_seen: u64,
    /// Of those, pairs the directed tests cover.
    pub pairs_covered: u64,
    /// Planned candidates handed to the workforce.
    pub candidates: u64,
    /// Directed tests new to the suite.
    pub new_tests: u64,
}

/// The pairs still to cover, and plans that cover them.
#[derive(Clone)]
struct Planner {
    /// Pairs the samples show.
    seen: PairwiseCoverage,
    /// Pairs the directed tests (and, within a batch, the plans) cover.
    covered: PairwiseCoverage,
}

impl Planner {
    fn new(vars: &[usize], samples: &[Assignment]) -> Self {
        Planner {
            seen: PairwiseCoverage::of(samples, vars),
            covered: PairwiseCoverage::new(vars),
        }
    }

    fn vars(&self) -> usize {
        self.seen.vars().len()
    }

    /// Seen by a sample and covered by no directed test or plan.
    fn open(&self, i: usize, a: bool, j: usize, b: bool) -> bool {
        self.seen.has(i, a, j, b) && !self.covered.has(i, a, j, b)
    }

    /// An open pair, looked for from a random variable on; none once all are covered.
    fn open_pair(&self, rng: &mut impl Rng) -> Option<(usize, bool, usize, bool)> {
        let m = self.vars();
        let start = rng.gen_range(0..m);
        (0..m).map(|k| (start + k) % m).find_map(|i| {
            (i + 1..m).find_map(|j| {
                VALUE_PAIRS
                    .into_iter()
                    .find(|&(a, b)| self.open(i, a, j, b))
                    .map(|(a, b)| (i, a, j, b))
            })
        })
    }

    /// Values of the tracked variables (`vars`, as the formula numbers them) that cover an
    /// open pair and, variable by variable in random order, the most open pairs with the
    /// values chosen before (ties by a coin). With a propagator, a value it forces is taken,
    /// and one it refutes is not: the plan is then consistent as far as propagation sees,
    /// and its repair keeps more of it.
    fn plan(
        &self,
        vars: &[usize],
        rng: &mut impl Rng,
        mut prop: Option<&mut Propagator>,
    ) -> Option<Vec<bool>> {
        let (i, a, j, b) = self.open_pair(rng)?;
        if let Some(prop) = prop.as_deref_mut() {
            prop.reset_to_units().ok()?;
        }
        let mut value = vec![false; self.vars()];
        let mut fixed = Vec::with_capacity(self.vars());
        let mut order: Vec<usize> = (0..self.vars()).filter(|&v| v != i && v != j).collect();
        order.shuffle(rng);
        for v in [i, j].into_iter().chain(order) {
            let forced = prop.as_deref().and_then(|p| p.value(vars[v]));
            let chosen = if v == i {
                a
            } else if v == j {
                b
            } else if let Some(forced) = forced {
                forced
            } else {
                let gain = |x: bool| {
                    fixed
                        .iter()
                        .filter(|&&u| self.open(u, value[u], v, x))
                        .count()
                };
                let (no, yes) = (gain(false), gain(true));
                if no == yes {
                    rng.gen()
                } else {
                    yes > no
                }
            };
            value[v] = chosen;
            if let (Some(prop), None) = (prop.as_deref_mut(), forced) {
                if prop.assign(literal(vars[v], chosen)).is_err()
                    && prop.assign(literal(vars[v], !chosen)).is_ok()
                {
                    value[v] = !chosen;
                }
            }
            fixed.push(v);
        }
        Some(value)
    }

    /// Open pairs `plan` would cover.
    fn gain(&self, plan: &[bool]) -> usize {
        let m = self.vars();
        (0..m)
            .map(|i| {
                (i + 1..m)
                    .filter(|&j| self.open(i, plan[i], j, plan[j]))
                    .count()
            })
            .sum()
    }

    /// Of several plans drawn, the one that covers the most open pairs.
    fn best_plan(
        &self,
        vars: &[usize],
        rng: &mut impl Rng,
        mut prop: Option<&mut Propagator>,
    ) -> Option<Vec<bool>> {
        let m = self.vars();
        let drawn = (PAIR_CHECKS_A_PLAN / (m * m).max(1)).clamp(1, PLANS_DRAWN);
        let mut best: Option<(usize, Vec<bool>)> = None;
        for _ in 0..drawn {
            let plan = self.plan(vars, rng, prop.as_deref_mut())?;
            let gain = self.gain(&plan);
            if best.as_ref().is_none_or(|(most, _)| gain > *most) {
                best = Some((gain, plan));
            }
        }
        best.map(|(_, plan)| plan)
    }

    /// Pairs the samples show that the directed tests cover.
    fn covered_seen(&self) -> u64 {
        let m = self.vars();
        let mut count = 0;
        for i in 0..m {
            for j in i + 1..m {
                for (a, b) in VALUE_PAIRS {
                    count += u64::from(self.seen.has(i, a, j, b) && self.covered.has(i, a, j, b));
                }
            }
        }
        count
    }
}

/// The index in `centroids` of the one nearest `plan` on `vars`, and the delta that turns
/// it into the plan there (`None` when the plan is that centroid).
fn nearest(centroids: &[Assignment], vars: &[usize], plan: &[bool]) -> (u32, Option<Assignment>) {
    let differing = |c: &Assignment| {
        vars.iter()
            .zip(plan)
            .filter(|&(&v, &x)| c.get(v) != x)
            .map(|(&v, _)| v)
            .collect::<Vec<usize>>()
    };
    let (index, centroid) = centroids
        .iter()
        .enumerate()
        .min_by_key(|(_, c)| differing(c).len())
        .expect("the step has centroids");
    let mut delta = Assignment::zeros(centroid.len());
    for v in differing(centroid) {
        delta.set(v, true);
    }
    let delta = (delta.count_ones() > 0).then_some(delta);
    (index as u32, delta)
}

impl Snap<'_> {
    /// The step: batches of planned candidates until every pair the samples show is covered
    /// by a directed test, the batches stop covering new ones, the suite is full or the
    /// budget is spent. Their new tests join the suite as the rounds' do.
    pub(super) fn cover(
        &mut self,
        workforce: &mut dyn Workforce,
        samples: &[Assignment],
        observer: &mut dyn Observer,
    ) -> Result<(), SampleError> {
        let vars = self.projection.clone();
        if vars.len() < 2 || vars.len() > PairwiseCoverage::MAX_VARS || samples.is_empty() {
            return Ok(());
        }
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(self.config.seed, COVER_STREAM, 0));
        let mut centroids: Vec<Assignment> = samples.to_vec();
        if centroids.len() > CENTROIDS {
            centroids.shuffle(&mut rng);
            centroids.truncate(CENTROIDS);
        }
        let mut planner = Planner::new(&vars, samples);
        let cnf = self.suite.checker().cnf();
        let mut prop = Propagator::new(cnf, Watches::new(cnf));
        let (mut stalls, mut task_index) = (0, 0);
        for _ in 0..MAX_BATCHES {
            if self.budget.exhausted() || self.suite.is_full() || stalls >= MAX_STALLS {
                break;
            }
            let covered_before = planner.covered.count();
            let mut tasks = Vec::new();
            let mut planning = planner.clone();
            for _ in 0..PLANS_PER_BATCH {
                if self.budget.exhausted() {
                    break;
                }
                let Some(plan) = planning.best_plan(&vars, &mut rng, Some(&mut prop)) else {
                    break;
                };
                let (centroid, delta) = nearest(&centroids, &vars, &plan);
                let base = &centroids[centroid as usize];
                let Some(delta) = delta else {
                    // The plan is a sample, and in the suite already.
                    planner.covered.add(base);
                    planning.covered.add(base);
                    continue;
                };
                planning.covered.add(&base.xor(&delta));
                tasks.push(Task::Check {
                    centroid,
                    delta,
                    seed: derive_seed(self.config.seed, COVER_STREAM, 1 + task_index),
                });
                task_index += 1;
            }
            if tasks.is_empty() && planning.open_pair(&mut rng).is_none() {
                break;
            }
            // A batch whose plans were all samples has nothing for the workers.
            if !tasks.is_empty() {
                self.report.covering.candidates += tasks.len() as u64;
                let before = self.suite.len();
                let mut deliver = |verdicts: &mut dyn Iterator<Item = Verdict>| {
                    self.merge_burst(verdicts, observer, |snap, observer, verdict, clock| {
                        let now = clock.now();
                        snap.take_directed(verdict, &mut planner.covered, observer, now)?;
                        Ok(snap.demand(now))
                    })
                };
                workforce.run(&centroids, tasks, &mut deliver)?;
                self.report.covering.new_tests += (self.suite.len() - before) as u64;
            }
            stalls = if planner.covered.count() > covered_before {
                0
            } else {
                stalls + 1
            };
        }
        self.report.covering.pairs_seen = planner.seen.count();
        self.report.covering.pairs_covered = planner.covered_seen();
        Ok(())
    }

    /// A directed candidate's verdict: its test joins the suite if new, and its pairs count
    /// as `covered` either way (a repeat covers them as well).
    fn take_directed(
        &mut self,
        verdict: Verdict,
        covered: &mut PairwiseCoverage,
        observer: &mut dyn Observer,
        now: Instant,
    ) -> Result<(), SampleError> {
        if self.too_late(now) {
            self.drop_verdicts([&verdict]);
            return Ok(());
        }
        match verdict {
            Verdict::Valid { test, fingerprint } => {
                covered.add(&test);
                self.admit(test, fingerprint, observer)?;
            }
            Verdict::Completed { done, fingerprint } => {
                self.note_completion(&done, false);
                covered.add(&done.test);
                self.admit(done.test, fingerprint, observer)?;
            }
            Verdict::Failed(failure) => self.note_failure(failure),
            Verdict::Invalid => self.report.invalid_dropped += 1,
            Verdict::Skipped => {}
            Verdict::Kept { .. } => return Err(super::kept_outside_a_round()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(s: &str) -> Assignment {
        Assignment::from_bit_string(s).unwrap()
    }

    #[test]
    fn plans_cover_every_seen_pair_in_fewer_tests_than_the_samples() {
        // Every pair of 6 free variables is seen in the 64 samples; a pairwise covering
        // array of 6 binary factors needs 6 tests, and AETG's greedy a few more at most.
        let vars: Vec<usize> = (0..6).collect();
        let samples: Vec<Assignment> = (0..64u32).map(|x| bits(&format!("{:06b}", x))).collect();
        let mut planner = Planner::new(&vars, &samples);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut plans = 0;
        while let Some(plan) = planner.best_plan(&vars, &mut rng, None) {
            planner.covered.add(&Assignment::from_values(&plan));
            plans += 1;
            assert!(plans <= 10, "{plans} plans and pairs still open");
        }
        assert_eq!(planner.covered_seen(), planner.seen.count());
        assert_eq!(planner.seen.count(), 4 * 15);
    }

    #[test]
    fn plans_aim_only_at_pairs_the_samples_show() {
        // x0 = x1 in every sample: the pairs (0, 1) and (1, 0) are never planned.
        let vars = [0, 1, 2];
        let samples = [bits("000"), bits("001"), bits("110"), bits("111")];
        let mut planner = Planner::new(&vars, &samples);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        while let Some(plan) = planner.plan(&vars, &mut rng, None) {
            assert_eq!(plan[0], plan[1], "a plan against what the samples show");
            planner.covered.add(&Assignment::from_values(&plan));
        }
        assert_eq!(planner.covered_seen(), planner.seen.count());
    }

    #[test]
    fn the_nearest_centroid_takes_the_fewest_flips() {
        let centroids = [bits("0000"), bits("1110")];
        let (index, delta) = nearest(&centroids, &[0, 1, 2], &[true, true, false]);
        assert_eq!(index, 1);
        assert_eq!(delta.unwrap(), bits("0010"));
        assert_eq!(nearest(&centroids, &[0, 1, 2], &[false; 3]), (0, None));
    }
}
