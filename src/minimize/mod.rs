//! Very small suites: the fewest tests of a pool, greedily chosen, that keep every t-wise
//! combination of values of the independent support the pool shows (or a target share).
//!
//! A t-tuple is `t` support variables `i1 < … < it` with a value each. The tuples still to
//! cover are kept as rows: one per prefix (`i1 … i(t−1)`), prefix values and last value,
//! each a bitset over the last variable `it`. A test covers, in each prefix's row for its
//! own prefix values, the bits of the variables where it has that last value, so its gain is
//! a few popcounts per prefix and choosing it a few ANDs. Greedy is lazy: gains only fall as
//! tests are chosen, so a stale gain is an upper bound and only the top of the heap is
//! recomputed. Ties go to the test that comes first in the pool, so the order is the plain
//! greedy order and the same pool always gives the same suite.
//!
//! [`shrink`] goes beyond the pool: it builds new tests with the solver so that fewer cover
//! the same pairs.

pub mod shrink;

use crate::assignment::Assignment;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The most memory the tuple rows may take.
pub const MAX_ROW_BYTES: usize = 1 << 30;

/// Why a pool cannot be minimized as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MinimizeError {
    /// Only t = 1, 2 and 3 are supported.
    #[error("strength must be 1, 2 or 3, not {0}")]
    Strength(usize),
    /// The coverage rows would not fit in [`MAX_ROW_BYTES`].
    #[error("{tuples} rows of {vars}-variable t-wise tuples need {bytes} bytes, more than the {MAX_ROW_BYTES} allowed: use a lower --strength")]
    TooLarge {
        /// Support variables.
        vars: usize,
        /// t-wise value tuples over them.
        tuples: usize,
        /// Memory the rows would take.
        bytes: usize,
    },
}

/// A chosen suite: pool indices in the order chosen, and what they cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minimized {
    /// Indices into the pool, in greedy order (most new tuples first).
    pub chosen: Vec<usize>,
    /// t-tuples the whole pool covers.
    pub pool_tuples: u64,
    /// t-tuples the chosen tests cover.
    pub covered_tuples: u64,
    /// New tuples each chosen test added, in order.
    pub gains: Vec<u64>,
}

/// Tuples still to cover, as rows of bits over the last variable.
struct Rows {
    /// Support size (bits a row).
    m: usize,
    words: usize,
    strength: usize,
    /// Each prefix (t−1 positions in the support, increasing); empty for t = 1.
    prefixes: Vec<Vec<usize>>,
    bits: Vec<u64>,
}

impl Rows {
    fn new(m: usize, strength: usize) -> Result<Self, MinimizeError> {
        if !(1..=3).contains(&strength) {
            return Err(MinimizeError::Strength(strength));
        }
        // Checked before any row is built: C(m, t−1) prefixes, 2^t rows each.
        let prefix_count = (0..strength - 1).fold(1usize, |n, k| {
            n.saturating_mul(m.saturating_sub(k)) / (k + 1)
        });
        let words = m.div_ceil(64).max(1);
        let rows = prefix_count.saturating_mul(1 << strength);
        let bytes = rows.saturating_mul(words * 8);
        if bytes > MAX_ROW_BYTES {
            return Err(MinimizeError::TooLarge {
                vars: m,
                tuples: rows,
                bytes,
            });
        }
        let prefixes = increasing(m, strength - 1);
        debug_assert_eq!(prefixes.len(), prefix_count);
        Ok(Rows {
            m,
            words,
            strength,
            prefixes,
            bits: vec![0; rows * words],
        })
    }

    /// Where the row of prefix `p` with the test's prefix values starts (last value 0; the
    /// row for last value 1 follows).
    fn row(&self, p: usize, test: &[u64]) -> usize {
        let values = self.prefixes[p]
            .iter()
            .fold(0, |v, &i| (v << 1) | usize::from(bit(test, i)));
        ((p << (self.strength - 1)) + values) * 2 * self.words
    }

    /// The first word a prefix counts and its mask: variables after the prefix's last.
    fn above(&self, p: usize) -> (usize, u64) {
        let from = self.prefixes[p].last().map_or(0, |&l| l + 1);
        (from / 64, !0u64 << (from % 64))
    }

    /// `f(zero_row_word, one_row_word, test_word, keep)` over the words a test's rows count,
    /// prefix by prefix; `keep` marks the word's variables after the prefix's last.
    fn each_word(&mut self, test: &[u64], mut f: impl FnMut(&mut u64, &mut u64, u64, u64)) {
        let tail = self.tail_mask();
        let last = self.words - 1;
        for p in 0..self.prefixes.len() {
            let (first, mask) = self.above(p);
            let at = self.row(p, test);
            let (zeros, ones) = self.bits[at..at + 2 * self.words].split_at_mut(self.words);
            for w in first..self.words {
                let keep = if w == first { mask } else { !0 } & if w == last { tail } else { !0 };
                f(&mut zeros[w], &mut ones[w], test[w], keep);
            }
        }
    }

    /// Marks every tuple `test` covers as to be covered (building the pool's tuples).
    fn add(&mut self, test: &[u64]) {
        self.each_word(test, |zero, one, x, keep| {
            *one |= x & keep;
            *zero |= !x & keep;
        });
    }

    /// New tuples `test` would cover.
    fn gain(&mut self, test: &[u64]) -> u64 {
        let mut gain = 0;
        self.each_word(test, |zero, one, x, keep| {
            gain += u64::from((*one & x & keep).count_ones() + (*zero & !x & keep).count_ones());
        });
        gain
    }

    /// Covers every tuple `test` covers.
    fn cover(&mut self, test: &[u64]) {
        self.each_word(test, |zero, one, x, keep| {
            *one &= !(x & keep);
            *zero &= !(!x & keep);
        });
    }

    fn count(&self) -> u64 {
        self.bits.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Bits of the last word that are variables (the rest stay 0).
    fn tail_mask(&self) -> u64 {
        match self.m % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        }
    }
}

/// Every increasing sequence of `k` positions below `m`, in lexicographic order.
fn increasing(m: usize, k: usize) -> Vec<Vec<usize>> {
    let mut sequences: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..k {
        sequences = sequences
            .into_iter()
            .flat_map(|p| {
                let from = p.last().map_or(0, |&l| l + 1);
                (from..m).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    sequences
}

fn bit(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}

/// The test's values on `vars`, packed.
fn project(test: &Assignment, vars: &[usize]) -> Vec<u64> {
    let mut words = vec![0u64; vars.len().div_ceil(64).max(1)];
    for (i, &v) in vars.iter().enumerate() {
        if test.get(v) {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    words
}

/// The fewest tests of `pool` (greedy) whose values on `vars` cover at least `target` (a
/// share, 0 to 1) of the t-tuples the whole pool covers.
pub fn minimize(
    pool: &[Assignment],
    vars: &[usize],
    strength: usize,
    target: f64,
) -> Result<Minimized, MinimizeError> {
    let mut rows = Rows::new(vars.len(), strength)?;
    let projected: Vec<Vec<u64>> = pool.iter().map(|t| project(t, vars)).collect();
    for test in &projected {
        rows.add(test);
    }
    let pool_tuples = rows.count();
    let wanted = ((target.clamp(0.0, 1.0) * pool_tuples as f64).ceil() as u64).min(pool_tuples);
    let mut heap: BinaryHeap<(u64, Reverse<usize>)> = projected
        .iter()
        .enumerate()
        .map(|(i, t)| (rows.gain(t), Reverse(i)))
        .collect();
    let mut result = Minimized {
        chosen: Vec::new(),
        pool_tuples,
        covered_tuples: 0,
        gains: Vec::new(),
    };
    while result.covered_tuples < wanted {
        let Some((_, Reverse(i))) = heap.pop() else {
            break;
        };
        let gain = rows.gain(&projected[i]);
        if gain == 0 {
            continue;
        }
        // A stale bound is at least the true gain: the test wins when its fresh gain still
        // ranks first (ties to the earlier test).
        if heap.peek().is_some_and(|&top| (gain, Reverse(i)) < top) {
            heap.push((gain, Reverse(i)));
            continue;
        }
        rows.cover(&projected[i]);
        result.chosen.push(i);
        result.gains.push(gain);
        result.covered_tuples += gain;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// Every t-tuple a suite covers, computed plainly (independently of the rows).
    fn tuples(tests: &[&Assignment], vars: &[usize], t: usize) -> HashSet<Vec<(usize, bool)>> {
        let mut out = HashSet::new();
        let combos = increasing(vars.len(), t);
        for test in tests {
            for c in &combos {
                out.insert(c.iter().map(|&i| (i, test.get(vars[i]))).collect());
            }
        }
        out
    }

    fn pool_of(bits: &[String]) -> Vec<Assignment> {
        bits.iter()
            .map(|b| Assignment::from_bit_string(b).unwrap())
            .collect()
    }

    #[test]
    fn a_covering_pair_is_found_among_redundant_tests() {
        // 0000 and 1111 cover every value pair that tests of all-equal bits show.
        let pool = pool_of(&["0000", "0011", "1111", "1100", "0000"].map(String::from));
        let vars: Vec<usize> = (0..4).collect();
        let m = minimize(&pool, &vars, 2, 1.0).unwrap();
        let chosen: Vec<&Assignment> = m.chosen.iter().map(|&i| &pool[i]).collect();
        let all: Vec<&Assignment> = pool.iter().collect();
        assert_eq!(tuples(&chosen, &vars, 2), tuples(&all, &vars, 2));
        assert_eq!(m.covered_tuples, m.pool_tuples);
        assert_eq!(m.pool_tuples as usize, tuples(&all, &vars, 2).len());
        assert!(m.chosen.len() <= 4);
    }

    #[test]
    fn too_large_a_strength_is_an_error() {
        assert_eq!(minimize(&[], &[0], 4, 1.0), Err(MinimizeError::Strength(4)));
        let vars: Vec<usize> = (0..5000).collect();
        assert!(matches!(
            minimize(&[], &vars, 3, 1.0),
            Err(MinimizeError::TooLarge { .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// The chosen tests are a subset of the pool, cover exactly the tuples the pool
        /// covers, and were chosen greedily (each had the most new tuples, ties to the first).
        #[test]
        fn the_subset_covers_what_the_pool_covers_in_greedy_order(
            bits in proptest::collection::vec("[01]{70}", 1..20),
            strength in 1usize..=3,
            stride in 3usize..6,
        ) {
            // Support sizes 14 to 24 (t = 3 has C(m, 3) tuples to check plainly).
            let pool = pool_of(&bits);
            let vars: Vec<usize> = (0..70).step_by(stride).collect();
            let m = minimize(&pool, &vars, strength, 1.0).unwrap();
            let distinct: HashSet<usize> = m.chosen.iter().copied().collect();
            prop_assert_eq!(distinct.len(), m.chosen.len());
            prop_assert!(m.chosen.iter().all(|&i| i < pool.len()));
            let all: Vec<&Assignment> = pool.iter().collect();
            let want = tuples(&all, &vars, strength);
            let mut have = HashSet::new();
            for (step, &i) in m.chosen.iter().enumerate() {
                let gain = |j: usize| tuples(&[&pool[j]], &vars, strength).difference(&have).count();
                let best = (0..pool.len()).map(gain).max().unwrap();
                prop_assert_eq!(gain(i), best, "step {}", step);
                prop_assert!((0..i).all(|j| gain(j) < best), "a tie went to a later test");
                prop_assert_eq!(gain(i) as u64, m.gains[step]);
                have.extend(tuples(&[&pool[i]], &vars, strength));
            }
            prop_assert_eq!(&have, &want);
            prop_assert_eq!(m.pool_tuples as usize, want.len());
        }

        /// Rows of several words (150 support variables): the pool's pairs are all kept.
        #[test]
        fn wide_supports_keep_every_pair(
            bits in proptest::collection::vec("[01]{150}", 1..12),
            strength in 1usize..=2,
        ) {
            let pool = pool_of(&bits);
            let vars: Vec<usize> = (0..150).collect();
            let m = minimize(&pool, &vars, strength, 1.0).unwrap();
            let all: Vec<&Assignment> = pool.iter().collect();
            let chosen: Vec<&Assignment> = m.chosen.iter().map(|&i| &pool[i]).collect();
            let want = tuples(&all, &vars, strength);
            prop_assert_eq!(tuples(&chosen, &vars, strength), want.clone());
            prop_assert_eq!(m.pool_tuples as usize, want.len());
            prop_assert_eq!(m.covered_tuples, m.pool_tuples);
        }

        /// A target share stops as soon as it is reached.
        #[test]
        fn a_target_share_is_reached_and_not_passed_by_more_than_one_test(
            bits in proptest::collection::vec("[01]{40}", 2..20),
            target in 0.1f64..1.0,
        ) {
            let pool = pool_of(&bits);
            let vars: Vec<usize> = (0..40).collect();
            let m = minimize(&pool, &vars, 2, target).unwrap();
            let wanted = (target * m.pool_tuples as f64).ceil() as u64;
            prop_assert!(m.covered_tuples >= wanted.min(m.pool_tuples));
            let before_last = m.covered_tuples - m.gains.last().copied().unwrap_or(0);
            prop_assert!(before_last < wanted);
        }
    }
}
