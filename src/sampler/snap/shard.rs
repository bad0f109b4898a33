//! Sharded rounds: every rank draws its own rounds (steps 2, 3a and 3b's draw) from samples
//! of its own, and does them on its own threads; the coordinator only merges their tests
//! into the suite and applies the stop rule (step 4) to the whole suite.
//!
//! Unsharded, the coordinator draws each round and hands its tasks out: per test it builds
//! a delta, encodes a task and merges a verdict, and per round it builds the pool and the
//! centroids. On formulas whose repairs take microseconds that bounds the run at a few ranks
//! (70.sk_3_40: the coordinator's seconds were a quarter of the ranks' work). Sharded, a
//! global round is one round of every rank, N·k candidates each, and the pool and centroids
//! are the ranks' work.
//!
//! Every rank starts from the run's initial solutions; rank r's draws come from a seed of its
//! own ([`stream_seed`]), and its samples grow by the repaired tests it found itself, as the
//! one-process loop's grow by the new repaired tests of the suite. Rank 0's stream is the
//! run's own, so one sharded rank gives the suite of an unsharded run.
//!
//! With several ranks, each also measures the tests new to it (NCD, as its share of the
//! suite's: [`crate::diversity::combined_terms`]; pairwise coverage) on a thread of its own,
//! and reports them at the end of each round: the coordinator measures none of them.

use super::draw::{draw, Draw};
use crate::assignment::{Assignment, FingerprintSet};
use crate::diversity::{MeasuringThread, RankMeasures};
use crate::sampler::derive_seed;
pub use crate::sampler::task::ShardPlan;
use crate::sampler::task::{Deliver, Drawn, Verdict};
use crate::sampler::work::{ShardRounds, Worker};
use crate::sampler::SampleError;
use std::sync::Arc;
use std::time::Duration;

/// The seed of rank `rank`'s draws: the run's own for rank 0.
pub fn stream_seed(seed: u64, rank: usize) -> u64 {
    if rank == 0 {
        seed
    } else {
        derive_seed(seed, u64::MAX, rank as u64)
    }
}

/// One rank's rounds in a sharded run.
pub struct ShardStream {
    plan: ShardPlan,
    seed: u64,
    samples: Vec<Assignment>,
    /// The fingerprints of every test this rank has seen (the initial solutions, its
    /// candidates that were models, its repairs): a repair joins the samples only when new,
    /// as in one process, where only the suite's new tests do. Fingerprints, not copies: two
    /// tests sharing one (2^-64 a pair) would only keep a repair out of this rank's samples.
    seen: FingerprintSet,
    /// Time drawing its rounds: the rank's work, beside its worker's tasks.
    drawing: Duration,
    /// Whether this rank measures its NCD share; its thread, from its first round.
    measures_share: bool,
    share: Option<MeasuringThread>,
}

impl ShardStream {
    /// Rank `rank`'s rounds, starting from the run's initial solutions; measuring the NCD
    /// share of the tests new to it if `measures_share`.
    pub fn new(
        plan: ShardPlan,
        rank: usize,
        samples: Vec<Assignment>,
        measures_share: bool,
    ) -> Self {
        ShardStream {
            plan,
            seed: stream_seed(plan.seed, rank),
            seen: samples.iter().map(Assignment::fingerprint).collect(),
            samples,
            drawing: Duration::ZERO,
            measures_share,
            share: None,
        }
    }

    /// [`ShardStream::new`] as a workforce starts it ([`crate::sampler::work::StartShards`]).
    pub fn start(
        plan: ShardPlan,
        rank: usize,
        samples: Vec<Assignment>,
        measures_share: bool,
    ) -> Box<dyn ShardRounds> {
        Box::new(ShardStream::new(plan, rank, samples, measures_share))
    }
}

impl ShardRounds for ShardStream {
    fn drawing(&self) -> Duration {
        self.drawing
    }

    fn share(&mut self) -> Option<RankMeasures> {
        if !self.measures_share {
            return None;
        }
        Some(match &mut self.share {
            Some(share) => share.measures().of_rank(),
            None => RankMeasures::default(),
        })
    }

    /// Round `round` drawn from this rank's samples and done on `worker`'s threads; each
    /// verdict goes to `deliver` in task order.
    fn round(
        &mut self,
        round: usize,
        worker: &mut Worker,
        deliver: &mut Deliver,
    ) -> Result<Drawn, SampleError> {
        let Draw {
            drawn,
            centroids,
            tasks,
        } = draw(
            self.plan.samples,
            self.plan.clusters,
            self.seed,
            round,
            &self.samples,
            &|| worker.budget().exhausted(),
        );
        self.drawing += Duration::from_secs_f64(drawn.seconds);
        worker.set_centroids(&centroids);
        if self.measures_share && self.share.is_none() {
            let vars = worker.checker().cnf().projection();
            self.share = Some(MeasuringThread::spawn_share(vars, self.plan.ncd_removals));
        }
        let (samples, seen, share) = (&mut self.samples, &mut self.seen, &mut self.share);
        worker.run_in_order(&tasks, &mut |burst| {
            let mut new = Vec::new();
            let demand = deliver(&mut burst.inspect(|verdict| match verdict {
                Verdict::Valid { test, fingerprint } => {
                    if seen.insert(*fingerprint) && share.is_some() {
                        new.push(Arc::new(test.clone()));
                    }
                }
                Verdict::Completed { done, fingerprint } => {
                    if seen.insert(*fingerprint) {
                        samples.push(done.test.clone());
                        if share.is_some() {
                            new.push(Arc::new(done.test.clone()));
                        }
                    }
                }
                Verdict::Invalid | Verdict::Failed(_) | Verdict::Skipped | Verdict::Kept { .. } => {
                }
            }));
            if let Some(share) = share {
                share.extend(new);
            }
            demand
        })?;
        Ok(drawn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use crate::diversity::{PairwiseCoverage, RunningNcd};
    use crate::sampler::task::{Demand, Task};
    use crate::solver::Solvers;
    use crate::verify::Checker;

    /// A rank measuring its share takes in the tests new to it, each once, in the order it
    /// found them: not the initial solutions it started from, nor repeats. Its coverage
    /// comes as changes, each reported once.
    #[test]
    fn a_ranks_share_holds_the_tests_new_to_it() {
        let cnf = crate::testing::planted(40, 120, 2).0;
        let checker = Checker::new(&cnf);
        let mut worker = Worker::new(&checker, Solvers::splr(), Budget::unlimited());
        let solves: Vec<Task> = (0..10).map(|seed| Task::Solve { seed }).collect();
        let samples: Vec<Assignment> = worker
            .run(&solves)
            .into_iter()
            .filter_map(|verdict| match verdict {
                Verdict::Completed { done, .. } => Some(done.test),
                _ => None,
            })
            .collect();
        let plan = ShardPlan {
            seed: 5,
            samples: 10,
            clusters: 2,
            ncd_removals: 8,
            ahead: true,
        };
        let mut stream = ShardStream::new(plan, 1, samples.clone(), true);
        let mut seen: FingerprintSet = samples.iter().map(Assignment::fingerprint).collect();
        let mut new = Vec::new();
        let mut verdicts = 0;
        for round in 1..=2 {
            stream
                .round(round, &mut worker, &mut |burst| {
                    for verdict in burst {
                        verdicts += 1;
                        let (test, fingerprint) = match verdict {
                            Verdict::Valid { test, fingerprint } => (test, fingerprint),
                            Verdict::Completed { done, fingerprint } => (done.test, fingerprint),
                            _ => continue,
                        };
                        if seen.insert(fingerprint) {
                            new.push(test);
                        }
                    }
                    Ok(Demand::More)
                })
                .unwrap();
        }
        assert!(
            new.len() >= 2 && new.len() < verdicts,
            "{} of {verdicts}",
            new.len()
        );
        let vars = cnf.projection();
        let mut expected = RunningNcd::new(&vars, 8);
        expected.extend(&new, &Budget::unlimited());
        let share = stream.share().unwrap();
        assert_eq!(Some(share.ncd), expected.share());
        let mut coverage = PairwiseCoverage::new(&vars);
        coverage.merge(&share.coverage);
        assert_eq!(coverage.count(), PairwiseCoverage::of(&new, &vars).count());
        assert!(coverage.count() > 0);
        let again = stream.share().unwrap();
        assert_eq!(again.ncd, share.ncd);
        assert!(
            again.coverage.is_empty(),
            "coverage changes are reported once"
        );
        let alone = ShardStream::new(plan, 1, samples, false).share();
        assert_eq!(alone, None, "a rank told to measure no share");
    }
}
