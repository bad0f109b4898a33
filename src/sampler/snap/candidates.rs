//! Step 3b's candidates: for each centroid `c`, N draws of `δi ∨ δj` from the weighted pool.
//! A task carries the centroid's index and the delta; the worker that takes it forms
//! `c ⊕ (δi ∨ δj)`, checks it against the clauses and repairs it if needed.

use super::deltas::DeltaPool;
use crate::sampler::derive_seed;
use crate::sampler::task::Task;
use rand::Rng;

/// Tasks drawn between two looks at `stop`.
const TASKS_BETWEEN_STOP_CHECKS: usize = 1024;

/// The round's tasks, `per_centroid` a centroid, drawn in order (cheap and deterministic, so
/// the suite is a function of the seed); each task gets a seed of its own for its repair.
/// `None` when `stop` cut the drawing short (N·k tasks may be millions).
pub fn draw(
    pool: &DeltaPool,
    centroids: usize,
    per_centroid: usize,
    rng: &mut impl Rng,
    seed: u64,
    round: usize,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<Task>> {
    let mut tasks = Vec::with_capacity(centroids * per_centroid);
    for (i, centroid) in (0..centroids)
        .flat_map(|c| std::iter::repeat_n(c as u32, per_centroid))
        .enumerate()
    {
        if i % TASKS_BETWEEN_STOP_CHECKS == 0 && stop() {
            return None;
        }
        tasks.push(Task::Check {
            centroid,
            delta: pool.draw(rng).or(&pool.draw(rng)),
            seed: derive_seed(seed, 2 + round as u64, i as u64),
        });
    }
    Some(tasks)
}
