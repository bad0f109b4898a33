//! A round drawn from samples (steps 2, 3a and 3b's draw): the delta pool, the centroids
//! and the candidates' tasks, by the coordinator for every rank, or by each rank for itself
//! in a sharded run ([`super::shard`]).

use super::{candidates, deltas, kmeans};
use crate::assignment::Assignment;
use crate::sampler::derive_seed;
pub use crate::sampler::task::Drawn;
use crate::sampler::task::Task;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// A round drawn: its centroids and its tasks (none when every sample is the same).
pub(crate) struct Draw {
    pub(crate) drawn: Drawn,
    pub(crate) centroids: Vec<Assignment>,
    pub(crate) tasks: Vec<Task>,
}

/// Steps 2, 3a and 3b's draw for round `round` from `samples` (N = `samples_per_round`, k =
/// `clusters`), every choice from `seed`. `stop` (a time limit or an interrupt), asked
/// throughout, cuts it short with no tasks: with large N and k each step takes seconds.
///
/// Steps 2 and 3a work on at most N samples, drawn afresh each round: the pool then holds at
/// most N(N−1)/2 pairs, and k-means costs the same in round 30 as in round 1, however many
/// repaired samples have joined (over all of them it grew with the suite: 1.6 of the
/// coordinator's 2.5 s in 30 rounds of 70.sk_3_40, its 14,000 samples).
pub(crate) fn draw(
    samples_per_round: usize,
    clusters: usize,
    seed: u64,
    round: usize,
    samples: &[Assignment],
    stop: &dyn Fn() -> bool,
) -> Draw {
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, 1, round as u64));
    let n = samples_per_round.max(1);
    let t = Instant::now();
    let mut basis: Vec<&Assignment> = samples.iter().collect();
    if basis.len() > n {
        basis.shuffle(&mut rng);
        basis.truncate(n);
    }
    let pool = deltas::DeltaPool::from_samples(&basis, stop);
    let deltas_seconds = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let centroids = match &pool {
        Some(_) => kmeans::centroids(&basis, clusters, &mut rng, stop),
        None => Vec::new(),
    };
    let clustering_seconds = t.elapsed().as_secs_f64();

    // Step 3b's candidates, drawn sequentially (cheap, deterministic).
    let tasks = match &pool {
        Some(pool) if !pool.is_empty() && !stop() => {
            candidates::draw(pool, centroids.len(), n, &mut rng, seed, round, stop)
                .unwrap_or_default()
        }
        _ => Vec::new(),
    };
    Draw {
        drawn: Drawn {
            distinct_deltas: pool.as_ref().map_or(0, |p| p.len()),
            repeated_delta_pairs: pool.as_ref().map_or(0, |p| p.repeated_pairs()),
            centroids: centroids.len(),
            deltas_seconds,
            clustering_seconds,
            seconds: started.elapsed().as_secs_f64(),
        },
        centroids,
        tasks,
    }
}
