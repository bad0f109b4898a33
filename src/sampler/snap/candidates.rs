//! Step 3b's candidates: for each centroid `c`, N draws of `δi ∨ δj` from the weighted pool.
//! A task carries the centroid's index and the delta; the worker that takes it forms
//! `c ⊕ (δi ∨ δj)`, checks it against the clauses and repairs it if needed.

use super::deltas::DeltaPool;
use crate::sampler::derive_seed;
use crate::sampler::work::Task;
use rand::Rng;

/// The round's tasks, `per_centroid` a centroid, drawn in order (cheap and deterministic, so
/// the suite is a function of the seed); each task gets a seed of its own for its repair.
pub fn draw(
    pool: &DeltaPool,
    centroids: usize,
    per_centroid: usize,
    rng: &mut impl Rng,
    seed: u64,
    round: usize,
) -> Vec<Task> {
    (0..centroids)
        .flat_map(|c| std::iter::repeat_n(c as u32, per_centroid))
        .enumerate()
        .map(|(i, centroid)| Task::Check {
            centroid,
            delta: pool.draw(rng).or(&pool.draw(rng)),
            seed: derive_seed(seed, 2 + round as u64, i as u64),
        })
        .collect()
}
