//! The delta pool (steps 2a–2b): XOR differences of valid samples, identical ones merged and
//! weighted by how often they occur, since a repeated delta is more likely to keep a test valid.

use crate::assignment::{Assignment, BuildWordHasher};
use rand::Rng;
use std::collections::HashMap;

/// Step 2's pool: distinct XOR deltas of sample pairs, weighted by how often each occurs.
pub struct DeltaPool {
    /// Distinct non-zero deltas, most frequent first (ties in bit order, for determinism).
    deltas: Vec<Assignment>,
    counts: Vec<u64>,
    /// Running sums of `counts`, for drawing by weight.
    cumulative: Vec<u64>,
}

impl DeltaPool {
    /// Deltas of all pairs of samples; pairs of equal samples give no delta.
    pub fn from_samples(samples: &[&Assignment]) -> Self {
        // Sized for every pair at once: growing it rehashed every delta several times.
        let pairs = samples.len() * samples.len().saturating_sub(1) / 2;
        let mut counts: HashMap<Assignment, u64, BuildWordHasher> =
            HashMap::with_capacity_and_hasher(pairs, BuildWordHasher::default());
        for (i, a) in samples.iter().enumerate() {
            for b in &samples[i + 1..] {
                let delta = a.xor(b);
                if delta.count_ones() > 0 {
                    *counts.entry(delta).or_default() += 1;
                }
            }
        }
        let mut weighted: Vec<(Assignment, u64)> = counts.into_iter().collect();
        weighted.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let (deltas, counts): (Vec<_>, Vec<_>) = weighted.into_iter().unzip();
        let cumulative = counts
            .iter()
            .scan(0u64, |sum, &c| {
                *sum += c;
                Some(*sum)
            })
            .collect();
        DeltaPool {
            deltas,
            counts,
            cumulative,
        }
    }

    /// Number of distinct deltas.
    pub fn len(&self) -> usize {
        self.deltas.len()
    }

    /// True when all samples were equal.
    pub fn is_empty(&self) -> bool {
        self.deltas.is_empty()
    }

    /// Number of pairs whose delta also occurs for another pair (Fig. 5 of the paper).
    pub fn repeated_pairs(&self) -> u64 {
        self.counts.iter().filter(|&&c| c > 1).sum()
    }

    /// A delta drawn with probability proportional to its count. The pool must not be empty.
    pub fn draw(&self, rng: &mut impl Rng) -> &Assignment {
        let total = *self
            .cumulative
            .last()
            .expect("draw from an empty delta pool");
        let ticket = rng.gen_range(0..total);
        let index = self.cumulative.partition_point(|&c| c <= ticket);
        &self.deltas[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn a(s: &str) -> Assignment {
        Assignment::from_bit_string(s).unwrap()
    }

    #[test]
    fn identical_deltas_are_merged_and_weighted() {
        // 0000 ⊕ 1100 = 0011 ⊕ 1111 = 1100: that delta occurs twice.
        let samples = [a("0000"), a("1100"), a("0011"), a("1111"), a("0000")];
        let refs: Vec<&Assignment> = samples.iter().collect();
        let pool = DeltaPool::from_samples(&refs);
        assert_eq!(pool.deltas[0], a("1100"));
        assert_eq!(
            pool.counts.iter().sum::<u64>(),
            9,
            "10 pairs, one of equal samples"
        );
        assert!(pool.repeated_pairs() >= 2);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let draws = 4000;
        let heavy = (0..draws)
            .filter(|_| pool.draw(&mut rng) == &a("1100"))
            .count();
        let share = pool.counts[0] as f64 / 9.0;
        assert!((heavy as f64 / draws as f64 - share).abs() < 0.05);
    }
}
