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

use super::{candidates, deltas, kmeans};
use crate::assignment::{Assignment, Hashed, HashedSet};
use crate::sampler::derive_seed;
use crate::sampler::work::{Deliver, Task, Verdict, Worker};
use crate::sampler::SampleError;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What a rank needs to draw rounds of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardPlan {
    /// The run's `--seed`.
    pub seed: u64,
    /// N: samples a round draws from, and candidates per centroid.
    pub samples: usize,
    /// k: clusters.
    pub clusters: usize,
}

/// What steps 2 and 3a made of a round's samples: its figures, summed over the ranks in a
/// sharded round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    /// Distinct deltas in the pool.
    pub distinct_deltas: usize,
    /// Sample pairs whose delta another pair had already.
    pub repeated_delta_pairs: u64,
    /// Centroids.
    pub centroids: usize,
    /// Seconds building the pool.
    pub deltas_seconds: f64,
    /// Seconds clustering.
    pub clustering_seconds: f64,
}

impl Drawn {
    /// Another rank's figures added to these.
    pub fn add(&mut self, other: &Drawn) {
        self.distinct_deltas += other.distinct_deltas;
        self.repeated_delta_pairs += other.repeated_delta_pairs;
        self.centroids += other.centroids;
        self.deltas_seconds += other.deltas_seconds;
        self.clustering_seconds += other.clustering_seconds;
    }
}

/// A round drawn: its centroids and its tasks (none when every sample is the same).
pub(crate) struct Draw {
    pub(crate) drawn: Drawn,
    pub(crate) centroids: Vec<Assignment>,
    pub(crate) tasks: Vec<Task>,
}

/// Steps 2, 3a and 3b's draw for round `round` from `samples`, every choice from `seed`.
///
/// Steps 2 and 3a work on at most N samples, drawn afresh each round: the pool then holds at
/// most N(N−1)/2 pairs, and k-means costs the same in round 30 as in round 1, however many
/// repaired samples have joined (over all of them it grew with the suite: 1.6 of the
/// coordinator's 2.5 s in 30 rounds of 70.sk_3_40, its 14,000 samples).
pub(crate) fn draw(plan: &ShardPlan, seed: u64, round: usize, samples: &[Assignment]) -> Draw {
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, 1, round as u64));
    let n = plan.samples.max(1);
    let t = Instant::now();
    let mut basis: Vec<&Assignment> = samples.iter().collect();
    if basis.len() > n {
        basis.shuffle(&mut rng);
        basis.truncate(n);
    }
    let pool = deltas::DeltaPool::from_samples(&basis);
    let deltas_seconds = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let centroids = kmeans::centroids(&basis, plan.clusters, &mut rng);
    let clustering_seconds = t.elapsed().as_secs_f64();

    // Step 3b's candidates, drawn sequentially (cheap, deterministic).
    let tasks = if pool.is_empty() {
        Vec::new()
    } else {
        candidates::draw(&pool, centroids.len(), n, &mut rng, seed, round)
    };
    Draw {
        drawn: Drawn {
            distinct_deltas: pool.len(),
            repeated_delta_pairs: pool.repeated_pairs(),
            centroids: centroids.len(),
            deltas_seconds,
            clustering_seconds,
        },
        centroids,
        tasks,
    }
}

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
    /// Every test this rank has seen (the initial solutions, its candidates that were
    /// models, its repairs): a repair joins the samples only when new, as in one process,
    /// where only the suite's new tests do.
    seen: HashedSet<Assignment>,
}

impl ShardStream {
    /// Rank `rank`'s rounds, starting from the run's initial solutions.
    pub fn new(plan: ShardPlan, rank: usize, samples: Vec<Assignment>) -> Self {
        ShardStream {
            plan,
            seed: stream_seed(plan.seed, rank),
            seen: samples.iter().cloned().map(Hashed::new).collect(),
            samples,
        }
    }

    /// Round `round` drawn from this rank's samples and done on `worker`'s threads; each
    /// verdict goes to `deliver` in task order.
    pub fn round(
        &mut self,
        round: usize,
        worker: &mut Worker,
        deliver: &mut Deliver,
    ) -> Result<Drawn, SampleError> {
        let Draw {
            drawn,
            centroids,
            tasks,
        } = draw(&self.plan, self.seed, round, &self.samples);
        worker.set_centroids(&centroids);
        let (samples, seen) = (&mut self.samples, &mut self.seen);
        worker.run_in_order(&tasks, &mut |verdict| {
            match &verdict {
                Verdict::Valid(test) => {
                    seen.insert(Hashed::new(test.clone()));
                }
                Verdict::Completed(done) => {
                    if seen.insert(Hashed::new(done.test.clone())) {
                        samples.push(done.test.clone());
                    }
                }
                Verdict::Invalid | Verdict::Failed(_) | Verdict::Skipped => {}
            }
            deliver(verdict)
        })?;
        Ok(drawn)
    }
}
