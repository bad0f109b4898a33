//! Diversity of a test suite: normalized compression distance (Eq. 2 of the Snap paper).
//!
//! Convention: each test is written as ASCII `0`/`1` characters, tests are concatenated in the
//! order they joined the suite with no separator, and compressed with zlib at the default level.
//! With it the paper's toy suites T1, T2, T3 (§III-B) score 0.3125, 0.4286 and 0.5417 (the paper
//! printed 0.142, 0.272 and 0.305 with its own gzip settings).

use crate::assignment::Assignment;
use flate2::{Compress, Compression, FlushCompress, Status};
use std::cell::RefCell;

/// How many removals `NCD(X)` tries for its denominator on large suites (see [`ncd`]).
pub const DEFAULT_REMOVALS: usize = 32;

thread_local! {
    /// One zlib compressor per thread, reset between uses: a fresh one allocates and clears
    /// ~300 KiB of state, which cost more than compressing a short test.
    static COMPRESSOR: RefCell<(Compress, Vec<u8>)> =
        RefCell::new((Compress::new(Compression::default(), true), vec![0; 1 << 16]));
}

/// Length of the zlib compression (default level) of the concatenated parts.
pub fn compressed_len<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> usize {
    COMPRESSOR.with(|cell| {
        let (compressor, scratch) = &mut *cell.borrow_mut();
        compressor.reset();
        for mut part in parts {
            while !part.is_empty() {
                let before = compressor.total_in();
                compressor
                    .compress(part, scratch, FlushCompress::None)
                    .expect("in-memory compression does not fail");
                part = &part[(compressor.total_in() - before) as usize..];
            }
        }
        while compressor
            .compress(&[], scratch, FlushCompress::Finish)
            .expect("in-memory compression does not fail")
            != Status::StreamEnd
        {}
        compressor.total_out() as usize
    })
}

/// NCD(X) = (C(X) − min_x C(x)) / max_x C(X \ {x}), Eq. 2.
///
/// `C(X)` and `min_x C(x)` are exact. The maximum in the denominator needs one compression of the
/// whole suite per test, quadratic in the suite; above `max_removals` tests it is taken over
/// `max_removals` evenly spaced removals instead (first and last included). For large suites
/// every `C(X \ {x})` lies within a few bytes of `C(X)`, so the error is small; it can only
/// underestimate the maximum, that is overestimate NCD, by at most those few bytes over `C(X)`.
pub fn ncd(strings: &[&[u8]], max_removals: usize) -> f64 {
    ncd_terms(strings, max_removals).value()
}

/// The three compressed lengths Eq. 2 is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NcdTerms {
    /// C(X): the whole suite.
    pub whole: usize,
    /// min C(x): the most compressible single test.
    pub smallest: usize,
    /// max C(X \ {x}), exact or sampled (see [`ncd`]).
    pub largest_without: usize,
}

impl NcdTerms {
    pub fn value(&self) -> f64 {
        if self.largest_without == 0 {
            0.0
        } else {
            (self.whole as f64 - self.smallest as f64) / self.largest_without as f64
        }
    }

    /// The numerator C(X) − min C(x): compressed information the suite holds beyond its
    /// simplest test. Unlike NCD it is not pinned near 1 as the suite grows.
    pub fn information(&self) -> usize {
        self.whole.saturating_sub(self.smallest)
    }
}

/// The terms of Eq. 2 (see [`ncd`]); all zero for fewer than two strings.
pub fn ncd_terms(strings: &[&[u8]], max_removals: usize) -> NcdTerms {
    if strings.len() < 2 {
        return NcdTerms::default();
    }
    let smallest = strings
        .iter()
        .map(|s| compressed_len([*s]))
        .min()
        .unwrap_or(0);
    NcdTerms {
        smallest,
        ..whole_terms(strings, max_removals)
    }
}

/// `C(X)` and the (sampled) `max C(X \ {x})` of at least two strings; `smallest` left 0.
fn whole_terms(strings: &[&[u8]], max_removals: usize) -> NcdTerms {
    let n = strings.len();
    let whole = compressed_len(strings.iter().copied());
    let removals: Vec<usize> = if n <= max_removals.max(2) {
        (0..n).collect()
    } else {
        let m = max_removals.max(2);
        (0..m).map(|i| i * (n - 1) / (m - 1)).collect()
    };
    let largest_without = removals
        .iter()
        .map(|&skip| {
            compressed_len(
                strings
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != skip)
                    .map(|(_, s)| *s),
            )
        })
        .max()
        .unwrap_or(1)
        .max(1);
    NcdTerms {
        whole,
        smallest: 0,
        largest_without,
    }
}

/// The terms of Eq. 2 for a suite projected onto `vars` (variables from 0), in suite order.
pub fn suite_ncd(tests: &[Assignment], vars: &[usize], max_removals: usize) -> NcdTerms {
    let mut growing = GrowingNcd::new(vars, max_removals);
    for test in tests {
        growing.push(test);
    }
    growing.terms()
}

/// Eq. 2 of a suite that grows: each test is projected and compressed alone once, when it
/// joins, so a measurement costs only the whole-suite compressions (`C(X)` and the sampled
/// `C(X \ {x})`). Exactly [`suite_ncd`] of the tests pushed so far.
pub struct GrowingNcd {
    vars: Vec<usize>,
    max_removals: usize,
    strings: Vec<Vec<u8>>,
    /// min C(x) over the tests so far.
    smallest: usize,
}

impl GrowingNcd {
    pub fn new(vars: &[usize], max_removals: usize) -> Self {
        GrowingNcd {
            vars: vars.to_vec(),
            max_removals,
            strings: Vec::new(),
            smallest: usize::MAX,
        }
    }

    /// A test joins the suite (in suite order).
    pub fn push(&mut self, test: &Assignment) {
        let mut s = Vec::with_capacity(self.vars.len());
        test.project_bits(&self.vars, &mut s);
        self.smallest = self.smallest.min(compressed_len([s.as_slice()]));
        self.strings.push(s);
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// The terms of Eq. 2 for the tests pushed so far.
    pub fn terms(&self) -> NcdTerms {
        if self.strings.len() < 2 {
            return NcdTerms::default();
        }
        let refs: Vec<&[u8]> = self.strings.iter().map(|s| s.as_slice()).collect();
        NcdTerms {
            smallest: self.smallest,
            ..whole_terms(&refs, self.max_removals)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&'static str]) -> Vec<&'static [u8]> {
        r.iter().map(|s| s.as_bytes()).collect()
    }

    #[test]
    fn paper_toy_suites_score_as_documented() {
        let t1 = ["00000", "00011", "00010"];
        let t2 = ["00000", "00011", "00010", "10000", "01011"];
        let t3 = [
            "00000", "00011", "00010", "10000", "01011", "00001", "01010",
        ];
        let scores: Vec<f64> = [&t1[..], &t2, &t3]
            .iter()
            .map(|t| ncd(&rows(t), DEFAULT_REMOVALS))
            .collect();
        for (got, want) in scores.iter().zip([0.3125, 0.42857, 0.54167]) {
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
        assert!(scores[0] < scores[1] && scores[1] < scores[2]);
    }

    #[test]
    fn identical_tests_score_lower_than_distinct_ones() {
        let same: Vec<Vec<u8>> = (0..50).map(|_| b"0110100111010010".to_vec()).collect();
        let distinct: Vec<Vec<u8>> = (0..50u32)
            .map(|i| format!("{:016b}", i.wrapping_mul(2654435761) >> 16).into_bytes())
            .collect();
        let score = |v: &Vec<Vec<u8>>| ncd(&v.iter().map(|s| s.as_slice()).collect::<Vec<_>>(), 8);
        assert!(score(&same) < score(&distinct));
    }

    #[test]
    fn sampled_denominator_stays_close_to_exact() {
        let tests: Vec<Vec<u8>> = (0..120u64)
            .map(|i| format!("{:064b}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = tests.iter().map(|s| s.as_slice()).collect();
        let exact = ncd(&refs, usize::MAX);
        let sampled = ncd(&refs, 16);
        assert!(
            sampled >= exact && sampled - exact < 0.01,
            "{sampled} vs {exact}"
        );
    }

    /// The reused compressor gives the lengths a fresh zlib stream gives.
    #[test]
    fn compressed_lengths_match_a_fresh_encoder() {
        use std::io::Write;
        for text in [&b""[..], b"0", b"0101010101", &[b'1'; 100_000][..]] {
            let mut fresh = flate2::write::ZlibEncoder::new(Vec::new(), Compression::default());
            fresh.write_all(text).unwrap();
            assert_eq!(compressed_len([text]), fresh.finish().unwrap().len());
        }
    }

    /// A growing suite's terms equal the one-shot computation at every size.
    #[test]
    fn growing_ncd_is_exactly_the_one_shot_value() {
        let tests: Vec<Assignment> = (0..150u64)
            .map(|i| {
                let bits = format!("{:064b}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                Assignment::from_bit_string(&bits).unwrap()
            })
            .collect();
        let vars: Vec<usize> = (0..64).step_by(3).collect();
        let mut growing = GrowingNcd::new(&vars, 16);
        for (i, test) in tests.iter().enumerate() {
            growing.push(test);
            if i % 7 == 0 || i == tests.len() - 1 {
                let strings: Vec<Vec<u8>> = tests[..=i]
                    .iter()
                    .map(|t| {
                        let mut s = Vec::new();
                        t.project_bits(&vars, &mut s);
                        s
                    })
                    .collect();
                let refs: Vec<&[u8]> = strings.iter().map(|s| s.as_slice()).collect();
                assert_eq!(growing.terms(), ncd_terms(&refs, 16), "at {} tests", i + 1);
            }
        }
    }

    #[test]
    fn tiny_suites_have_zero_distance() {
        assert_eq!(ncd(&[], 8), 0.0);
        assert_eq!(ncd(&[b"0101"], 8), 0.0);
    }
}

/// Pairwise literal coverage: which value pairs of which variable pairs a suite has shown,
/// kept up to date test by test.
///
/// Over `m` variables there are `4·m(m−1)/2` (pair, values) combinations; each new test costs
/// `O(m²)`. Above [`PairwiseCoverage::MAX_VARS`] variables an evenly spaced subset is tracked.
pub struct PairwiseCoverage {
    vars: Vec<usize>,
    covered: Vec<u64>,
    count: u64,
}

impl PairwiseCoverage {
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
        let combos = 4 * vars.len() * vars.len().saturating_sub(1) / 2;
        PairwiseCoverage {
            vars,
            covered: vec![0; combos.div_ceil(64)],
            count: 0,
        }
    }

    pub fn add(&mut self, test: &Assignment) {
        let values: Vec<usize> = self
            .vars
            .iter()
            .map(|&v| usize::from(test.get(v)))
            .collect();
        let mut pair = 0;
        for i in 0..values.len() {
            for j in i + 1..values.len() {
                let bit = 4 * pair + 2 * values[i] + values[j];
                let (word, mask) = (bit / 64, 1u64 << (bit % 64));
                if self.covered[word] & mask == 0 {
                    self.covered[word] |= mask;
                    self.count += 1;
                }
                pair += 1;
            }
        }
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
mod coverage_tests {
    use super::*;

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
}

/// Shannon entropy of a test, `H(p) = −p log₂ p − (1−p) log₂(1−p)` with `p` its share of ones
/// (the paper's Fig. 9 measure).
pub fn shannon_entropy(test: &Assignment) -> f64 {
    if test.is_empty() {
        return 0.0;
    }
    let p = test.count_ones() as f64 / test.len() as f64;
    let term = |q: f64| if q <= 0.0 { 0.0 } else { -q * q.log2() };
    term(p) + term(1.0 - p)
}

#[cfg(test)]
mod entropy_tests {
    use super::*;

    #[test]
    fn entropy_is_one_at_half_ones_and_zero_at_none() {
        assert_eq!(
            shannon_entropy(&Assignment::from_bit_string("0101").unwrap()),
            1.0
        );
        assert_eq!(
            shannon_entropy(&Assignment::from_bit_string("0000").unwrap()),
            0.0
        );
        let quarter = shannon_entropy(&Assignment::from_bit_string("1000").unwrap());
        assert!((quarter - 0.811278).abs() < 1e-6);
    }
}
