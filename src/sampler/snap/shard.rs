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

use super::draw::{draw, Draw};
use crate::assignment::{Assignment, FingerprintSet};
use crate::sampler::derive_seed;
pub use crate::sampler::task::ShardPlan;
use crate::sampler::task::{Deliver, Drawn, Verdict};
use crate::sampler::work::{ShardRounds, Worker};
use crate::sampler::SampleError;
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
}

impl ShardStream {
    /// Rank `rank`'s rounds, starting from the run's initial solutions.
    pub fn new(plan: ShardPlan, rank: usize, samples: Vec<Assignment>) -> Self {
        ShardStream {
            plan,
            seed: stream_seed(plan.seed, rank),
            seen: samples.iter().map(Assignment::fingerprint).collect(),
            samples,
            drawing: Duration::ZERO,
        }
    }

    /// [`ShardStream::new`] as a workforce starts it ([`crate::sampler::work::StartShards`]).
    pub fn start(plan: ShardPlan, rank: usize, samples: Vec<Assignment>) -> Box<dyn ShardRounds> {
        Box::new(ShardStream::new(plan, rank, samples))
    }
}

impl ShardRounds for ShardStream {
    fn drawing(&self) -> Duration {
        self.drawing
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
        let (samples, seen) = (&mut self.samples, &mut self.seen);
        worker.run_in_order(&tasks, &mut |burst| {
            deliver(&mut burst.inspect(|verdict| match verdict {
                Verdict::Valid { fingerprint, .. } => {
                    seen.insert(*fingerprint);
                }
                Verdict::Completed { done, fingerprint } => {
                    if seen.insert(*fingerprint) {
                        samples.push(done.test.clone());
                    }
                }
                Verdict::Invalid | Verdict::Failed(_) | Verdict::Skipped => {}
            }))
        })?;
        Ok(drawn)
    }
}
