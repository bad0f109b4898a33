//! Pairwise literal coverage of a suite, kept up to date test by test.

use crate::assignment::Assignment;
use std::borrow::Borrow;

/// Pairwise literal coverage: which value pairs of which variable pairs a suite has shown,
/// kept up to date test by test.
///
/// Over `m` variables there are `4·m(m−1)/2` (pair, values) combinations; each new test costs
/// `O(m²)`. Above [`PairwiseCoverage::MAX_VARS`] variables an evenly spaced subset is tracked.
#[derive(Clone)]
pub struct PairwiseCoverage {
    vars: Vec<usize>,
    /// Row `(2a + b)·m + i`, a bitset over `j`: pair `(i, j)`, `i < j`, was seen with values
    /// `(a, b)`. A test then marks its pairs a row of words at a time, not a pair at a time:
    /// pair by pair, 512 variables cost the coordinator 4% of a run on s38417_3_2.
    rows: Vec<u64>,
    /// Words in a row.
    words: usize,
    /// One bit a row: every partner has been seen. Such rows are skipped: coverage saturates
    /// early (the initial solutions cover 98% of s820a_7_4's pairs), and marking 512
    /// variables' rows had become a third of the coordinator's merging on s38417_3_2.
    full: Vec<u64>,
    count: u64,
}

impl PairwiseCoverage {
    /// Variables tracked at most: `4·m²/2` combinations must stay a few hundred KiB.
    pub const MAX_VARS: usize = 512;

    /// Coverage over `vars` (variables from 0), or an evenly spaced subset of them.
    pub fn new(vars: &[usize]) -> Self {
        let m = vars.len();
        let vars: Vec<usize> = if m > Self::MAX_VARS {
            (0..Self::MAX_VARS)
                .map(|i| vars[i * m / Self::MAX_VARS])
                .collect()
        } else {
            vars.to_vec()
        };
        let words = vars.len().div_ceil(64);
        PairwiseCoverage {
            rows: vec![0; 4 * vars.len() * words],
            full: vec![0; (4 * vars.len()).div_ceil(64)],
            vars,
            words,
            count: 0,
        }
    }

    /// A test joins: its value pairs are marked covered.
    pub fn add(&mut self, test: &Assignment) {
        let (m, words) = (self.vars.len(), self.words);
        let mut ones = vec![0u64; words];
        for (j, &v) in self.vars.iter().enumerate() {
            ones[j / 64] |= u64::from(test.get(v)) << (j % 64);
        }
        // The last word's bits past the `m` variables stand for no partner.
        let last_word = (!0u64) >> ((64 - m % 64) % 64);
        for i in 0..m {
            let a = (ones[i / 64] >> (i % 64)) & 1;
            // Only the partners after `i`.
            let after_i = (!0u64).checked_shl((i % 64) as u32 + 1).unwrap_or(0);
            for b in 0..2 {
                let index = (2 * a as usize + b) * m + i;
                if self.full[index / 64] >> (index % 64) & 1 == 1 {
                    continue;
                }
                let row = &mut self.rows[index * words..][..words];
                let mut complete = true;
                for (w, (cell, &one)) in row.iter_mut().zip(&ones).enumerate().skip(i / 64) {
                    // The partners this row stands for in word `w`.
                    let mut partners = !0u64;
                    if w == i / 64 {
                        partners &= after_i;
                    }
                    if w == words - 1 {
                        partners &= last_word;
                    }
                    let seen = partners & if b == 1 { one } else { !one };
                    self.count += u64::from((seen & !*cell).count_ones());
                    *cell |= seen;
                    complete &= *cell & partners == partners;
                }
                if complete {
                    self.full[index / 64] |= 1 << (index % 64);
                }
            }
        }
    }

    /// The coverage of `tests` over `vars` (variables from 0), or an evenly spaced subset.
    pub fn of(tests: &[impl Borrow<Assignment>], vars: &[usize]) -> Self {
        let mut coverage = Self::new(vars);
        for test in tests {
            coverage.add(test.borrow());
        }
        coverage
    }

    /// The variables tracked (all those given, up to [`PairwiseCoverage::MAX_VARS`]).
    pub fn vars(&self) -> &[usize] {
        &self.vars
    }

    /// Whether the `i`-th and `j`-th tracked variables (`i != j`) were seen with values `a`
    /// and `b` together.
    pub fn has(&self, i: usize, a: bool, j: usize, b: bool) -> bool {
        let ((i, a), (j, b)) = if i < j {
            ((i, a), (j, b))
        } else {
            ((j, b), (i, a))
        };
        let row = (2 * usize::from(a) + usize::from(b)) * self.vars.len() + i;
        self.rows[row * self.words + j / 64] >> (j % 64) & 1 == 1
    }

    /// The words of the pairs' bitsets that gained pairs since `reported` (this coverage's
    /// words as last reported, kept by the caller and brought up to date here), each with its
    /// place: what another coverage of the same variables needs to take these pairs in
    /// ([`PairwiseCoverage::merge`]). A rank's coverage reaches the coordinator so, a round at
    /// a time: once coverage saturates, few words change.
    pub fn changes_since(&self, reported: &mut Vec<u64>) -> Vec<(u32, u64)> {
        reported.resize(self.rows.len(), 0);
        let mut changes = Vec::new();
        for (at, (&now, before)) in self.rows.iter().zip(reported.iter_mut()).enumerate() {
            if now != *before {
                changes.push((at as u32, now));
                *before = now;
            }
        }
        changes
    }

    /// Takes in the pairs of another coverage of the same variables, as its
    /// [`PairwiseCoverage::changes_since`] gave them; a place outside the bitsets is ignored.
    pub fn merge(&mut self, changes: &[(u32, u64)]) {
        for &(at, bits) in changes {
            if let Some(cell) = self.rows.get_mut(at as usize) {
                self.count += u64::from((bits & !*cell).count_ones());
                *cell |= bits;
            }
        }
    }

    /// Value pairs covered.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Share of all combinations covered, in [0, 1].
    pub fn fraction(&self) -> f64 {
        let m = self.vars.len();
        let combos = 4 * m * m.saturating_sub(1) / 2;
        if combos == 0 {
            1.0
        } else {
            self.count as f64 / combos as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_answers_for_either_order_of_the_pair() {
        let mut c = PairwiseCoverage::new(&[0, 1, 2]);
        c.add(&Assignment::from_bit_string("101").unwrap());
        assert!(c.has(0, true, 1, false) && c.has(1, false, 0, true));
        assert!(c.has(0, true, 2, true) && c.has(2, true, 1, false));
        assert!(!c.has(0, false, 1, false) && !c.has(2, false, 0, true));
        assert_eq!(c.count(), 3);
    }

    #[test]
    fn coverage_counts_value_pairs() {
        let mut c = PairwiseCoverage::new(&[0, 1]);
        c.add(&Assignment::from_bit_string("00").unwrap());
        assert_eq!(c.fraction(), 0.25);
        c.add(&Assignment::from_bit_string("00").unwrap());
        c.add(&Assignment::from_bit_string("11").unwrap());
        assert_eq!(c.fraction(), 0.5);
        c.add(&Assignment::from_bit_string("01").unwrap());
        c.add(&Assignment::from_bit_string("10").unwrap());
        assert_eq!(c.fraction(), 1.0);
    }

    /// Across word boundaries, the count is that of the definition: distinct
    /// `(i, j, a, b)` with `i < j` over the tests so far; mostly zeros, so that the counts
    /// grow slowly and stay far from full.
    #[test]
    fn coverage_matches_the_definition_on_wide_tests() {
        let coverage = coverage_against_the_definition(0.1, 40);
        assert!(coverage.fraction() < 0.9);
    }

    /// Tests dealt to three coverages, merged into a fourth by their changes as they go,
    /// cover what one coverage of all the tests does.
    #[test]
    fn merged_changes_cover_what_the_parts_do() {
        let vars: Vec<usize> = (0..130).collect();
        let tests: Vec<Assignment> = (0..60u64)
            .map(|i| {
                let bits: String = (0..130u64)
                    .map(|v| if (i * 7 + v * v) % 5 < 2 { '1' } else { '0' })
                    .collect();
                Assignment::from_bit_string(&bits).unwrap()
            })
            .collect();
        let mut parts: Vec<(PairwiseCoverage, Vec<u64>)> = (0..3)
            .map(|_| (PairwiseCoverage::new(&vars), Vec::new()))
            .collect();
        let mut merged = PairwiseCoverage::new(&vars);
        for round in tests.chunks(20) {
            for (i, test) in round.iter().enumerate() {
                parts[i % 3].0.add(test);
            }
            for (part, reported) in &mut parts {
                merged.merge(&part.changes_since(reported));
                assert!(part.changes_since(reported).is_empty(), "reported once");
            }
        }
        let whole = PairwiseCoverage::of(&tests, &vars);
        assert_eq!(merged.count(), whole.count());
        assert_eq!(merged.rows, whole.rows);
        assert!(whole.fraction() > 0.3 && whole.fraction() < 1.0);
    }

    /// The same as rows fill up and are skipped, up to full coverage.
    #[test]
    fn coverage_matches_the_definition_as_rows_fill_up() {
        let coverage = coverage_against_the_definition(0.5, 150);
        assert!(coverage.full.iter().any(|&w| w != 0));
        assert_eq!(coverage.fraction(), 1.0);
    }

    /// `tests` tests over 150 variables, each one with probability `p_one`, every other one
    /// tracked; the coverage checked against the definition after each.
    fn coverage_against_the_definition(p_one: f64, tests: usize) -> PairwiseCoverage {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let vars: Vec<usize> = (0..150).step_by(2).collect();
        let mut coverage = PairwiseCoverage::new(&vars);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..tests {
            let bits: String = (0..150)
                .map(|_| if rng.gen_bool(p_one) { '1' } else { '0' })
                .collect();
            let test = Assignment::from_bit_string(&bits).unwrap();
            coverage.add(&test);
            for (i, &u) in vars.iter().enumerate() {
                for &v in &vars[i + 1..] {
                    seen.insert((u, v, test.get(u), test.get(v)));
                }
            }
            let m = vars.len() as f64;
            assert_eq!(
                coverage.fraction(),
                seen.len() as f64 / (2.0 * m * (m - 1.0))
            );
        }
        coverage
    }
}
