//! Diversity of a test suite: normalized compression distance (Eq. 2 of the Snap paper).
//!
//! Convention: each test is written as ASCII `0`/`1` characters, tests are concatenated in the
//! order they joined the suite with no separator, and compressed with zlib at the default level.
//! The compressor is zlib-rs (`diversity/zlib.rs`), given the concatenation in 4 KiB blocks;
//! with it the paper's toy suites T1, T2, T3 (§III-B) score 0.1667, 0.3182 and 0.4615 (the
//! paper printed 0.142, 0.272 and 0.305 with its own gzip settings; miniz_oxide, used up to
//! December 2026, gave 0.3125, 0.4286 and 0.5417).

use crate::assignment::Assignment;
use crate::budget::Budget;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::collections::VecDeque;
use zlib::Stream;

mod coverage;
mod measures;
mod zlib;

pub use coverage::PairwiseCoverage;
pub use measures::{Measures, MeasuringThread};

pub use zlib::compressed_len;

/// How many removals `NCD(X)` tries for its denominator on large suites (see [`ncd_terms`]).
pub const DEFAULT_REMOVALS: usize = 32;

/// Removal streams a running measurement keeps (see [`RunningNcd`]): each one compresses
/// every later test again, so they are the cost of the sampler's NCD. On a 1000-test suite of
/// 35.sk_3_52 the running value with 8 was 0.99725 against the exact 0.99663 (all 1000
/// removals; 32 sampled removals in one go gave 0.99712, 8 gave 0.99725, 4 gave 0.99750): far
/// below any stop threshold's resolution. Fewer would be cheaper still, but stray further on
/// small suites (see the tests).
pub const RUNNING_REMOVALS: usize = 8;

/// The three compressed lengths Eq. 2 is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NcdTerms {
    /// C(X): the whole suite.
    pub whole: usize,
    /// min C(x): the most compressible single test.
    pub smallest: usize,
    /// max C(X \ {x}), exact or sampled (see [`ncd_terms`]).
    pub largest_without: usize,
}

impl NcdTerms {
    /// NCD itself, (C(X) − min C(x)) / max C(X \ {x}); 0 for fewer than two tests.
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

/// The terms of NCD(X) = (C(X) − min_x C(x)) / max_x C(X \ {x}), Eq. 2; all zero for fewer
/// than two strings.
///
/// `C(X)` and `min_x C(x)` are exact. The maximum in the denominator needs one compression of the
/// whole suite per test, quadratic in the suite; above `max_removals` tests it is taken over
/// `max_removals` evenly spaced removals instead (first and last included). For large suites
/// every `C(X \ {x})` lies within a few bytes of `C(X)`, so the error is small; it can only
/// underestimate the maximum, that is overestimate NCD, by at most those few bytes over `C(X)`.
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

/// The terms of Eq. 2 for a suite projected onto `vars` (variables from 0), in suite order,
/// computed in one go (see [`ncd_terms`]): the reference [`RunningNcd`] is checked against.
pub fn suite_ncd(
    tests: &[impl Borrow<Assignment>],
    vars: &[usize],
    max_removals: usize,
) -> NcdTerms {
    let strings: Vec<Vec<u8>> = tests.iter().map(|t| projected(t.borrow(), vars)).collect();
    let refs: Vec<&[u8]> = strings.iter().map(|s| s.as_slice()).collect();
    ncd_terms(&refs, max_removals)
}

fn projected(test: &Assignment, vars: &[usize]) -> Vec<u8> {
    let mut s = Vec::with_capacity(vars.len());
    test.project_bits(vars, &mut s);
    s
}

/// Input is handed to the compressors in pieces of this size, with the budget checked
/// between pieces, so a measurement on a very wide formula still stops within the second.
const PIECE: usize = 1 << 16;

/// Appends `s` in pieces, checking the budget before each; false if it ran out.
fn feed(stream: &mut Stream, s: &[u8], budget: &Budget) -> bool {
    s.chunks(PIECE).all(|piece| {
        let go_on = !budget.exhausted();
        if go_on {
            stream.append(piece);
        }
        go_on
    })
}

/// Input a removal stream takes after its removed test before it is dropped: deflate's
/// window (32 KiB) and one longest match. From there on the stream sees the same window as
/// the whole suite's, so it finds the same matches and its length grows as the whole's does,
/// up to where the two streams end their blocks.
const FORGOTTEN_AFTER: usize = 32 * 1024 + 258;

/// `C(X \ {x})` of one sampled removal.
enum Without {
    /// Still compressed: its window remembers the tests around the removed one.
    Streaming(Stream),
    /// Its window has forgotten the removal: `C(X \ {x}) = C(X) + offset`.
    Forgotten(isize),
}

struct Removal {
    /// The removed test's position in the suite.
    position: usize,
    without: Without,
    /// The position of the next test the stream takes in (the removed one skipped).
    next: usize,
    /// Bytes of later tests the stream has been (or is about to be) given.
    fed: usize,
    /// The position of the test after which the window has forgotten the removal, and
    /// `C(X)` there.
    forgets_at: Option<(usize, usize)>,
}

impl Removal {
    /// Feeds the stream the tests it has not taken in, up to where its window forgets the
    /// removal (then it turns [`Without::Forgotten`]); `recent` holds the tests from position
    /// `from` to `len`. False if the budget ran out.
    fn catch_up(
        &mut self,
        recent: &VecDeque<Vec<u8>>,
        from: usize,
        len: usize,
        budget: &Budget,
    ) -> bool {
        let Without::Streaming(stream) = &mut self.without else {
            return true;
        };
        let to = self.forgets_at.map_or(len, |(at, _)| at + 1);
        let fed = (self.next..to).all(|i| feed(stream, &recent[i - from], budget));
        if !fed {
            return false;
        }
        self.next = self.next.max(to);
        if let Some((_, whole)) = self.forgets_at.filter(|&(at, _)| self.next > at) {
            let offset = stream.length_if_ended() as isize - whole as isize;
            self.without = Without::Forgotten(offset);
        }
        true
    }
}

/// Eq. 2 of a suite that grows, each test compressed when it joins: a measurement costs
/// O(new tests), not O(suite), so the coordinator's NCD does not grow with the run.
///
/// `C(X)` is exact. The other two terms are taken over sampled tests: a test whose position
/// `p` is a multiple of a stride when it joins is compressed alone (for `min C(x)`) and gets a
/// stream of the suite *without* it (for the denominator); the stride starts at 1 and doubles
/// (dropping every other stream) whenever more than `max_removals` streams would be kept. A
/// removal's stream is compressed until deflate's window has forgotten the removed test
/// (32 KiB and one longest match later); from then on `C(X \ {x})` is the whole's length
/// plus the offset measured there, so past the first few hundred KiB a test is compressed
/// about once, not once per stream. Up to `max_removals` tests and 32 KiB this is exactly Eq. 2 (and equal
/// to [`suite_ncd`]); beyond, the extremes are over evenly spaced tests from the first on, as
/// [`ncd_terms`] samples removals: the denominator falls short of Eq. 2's by a few bytes at
/// most, and the value stays within 0.005 of Eq. 2 once the suite compresses to a few KiB
/// (tests check both against the exact value). Compressing every test alone costs little in bytes, but each
/// one-shot compression clears ~370 KiB of compressor state: sampling them made a 1000-test
/// run of 35.sk_3_52 8% shorter (medians of 5: 0.226 s to 0.205 s).
///
/// A stream the next doubling drops (its position an odd multiple of the stride) takes its
/// tests in only when the terms are read, or once its window has forgotten the removal:
/// until then it may never be needed. The terms are the same either way.
pub struct RunningNcd {
    vars: Vec<usize>,
    max_removals: usize,
    whole: Stream,
    removals: Vec<Removal>,
    /// The tests, from position `recent_from` on, that a stream has yet to take in.
    recent: VecDeque<Vec<u8>>,
    recent_from: usize,
    stride: usize,
    len: usize,
    smallest: usize,
    /// A push was cut short by the budget: the streams no longer describe the suite.
    broken: bool,
}

impl RunningNcd {
    /// An empty suite measured on `vars`, with at most `max_removals` removal streams.
    pub fn new(vars: &[usize], max_removals: usize) -> Self {
        RunningNcd {
            vars: vars.to_vec(),
            max_removals: max_removals.max(2),
            whole: Stream::new(),
            removals: Vec::new(),
            recent: VecDeque::new(),
            recent_from: 0,
            stride: 1,
            len: 0,
            smallest: usize::MAX,
            broken: false,
        }
    }

    /// Tests that joined so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first test.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tests join the suite (in suite order). The removal streams take them in parallel on
    /// the current rayon pool. False, and no value from then on, if the budget ran out before
    /// every test was taken in.
    pub fn extend(&mut self, tests: &[impl Borrow<Assignment>], budget: &Budget) -> bool {
        let strings = tests
            .iter()
            .map(|t| projected(t.borrow(), &self.vars))
            .collect();
        self.extend_projected(strings, budget)
    }

    /// [`RunningNcd::extend`] with the tests already projected on the measured variables.
    fn extend_projected(&mut self, strings: Vec<Vec<u8>>, budget: &Budget) -> bool {
        if self.broken {
            return false;
        }
        let bytes: usize = strings.iter().map(Vec::len).sum();
        let mut sampled = Vec::new();
        for s in strings {
            if self.len.is_multiple_of(self.stride) {
                self.removals.push(Removal {
                    position: self.len,
                    without: Without::Streaming(self.whole.clone()),
                    next: self.len + 1,
                    fed: 0,
                    forgets_at: None,
                });
                sampled.push(self.len);
            }
            if !feed(&mut self.whole, &s, budget) {
                self.broken = true;
                return false;
            }
            for removal in &mut self.removals {
                let streaming = matches!(removal.without, Without::Streaming(_));
                if streaming && removal.forgets_at.is_none() && removal.position != self.len {
                    removal.fed += s.len();
                    if removal.fed >= FORGOTTEN_AFTER {
                        removal.forgets_at = Some((self.len, self.whole.length_if_ended()));
                    }
                }
            }
            self.recent.push_back(s);
            self.len += 1;
            if self.removals.len() > self.max_removals {
                self.stride *= 2;
                let stride = self.stride;
                self.removals.retain(|r| r.position % stride == 0);
            }
        }
        let kept_after_doubling = 2 * self.stride;
        let due =
            |r: &Removal| r.position.is_multiple_of(kept_after_doubling) || r.forgets_at.is_some();
        let alone = |&p: &usize| compressed_len([self.recent[p - self.recent_from].as_slice()]);
        let smallest = match bytes >= PIECE {
            true => sampled.par_iter().map(alone).min(),
            false => sampled.iter().map(alone).min(),
        };
        self.smallest = smallest.map_or(self.smallest, |m| m.min(self.smallest));
        // Small batches (a test merged at a time) stay on this thread: handing them out
        // would cost more than compressing them.
        let fed = self.catch_up(bytes >= PIECE, due, budget);
        self.broken = !fed;
        fed
    }

    /// The streams `due` take in the tests they have not; the tests no stream waits for
    /// are let go. False if the budget ran out.
    fn catch_up(
        &mut self,
        parallel: bool,
        due: impl Fn(&Removal) -> bool + Sync,
        budget: &Budget,
    ) -> bool {
        let (recent, from, len) = (&self.recent, self.recent_from, self.len);
        let catch_up = |r: &mut Removal| !due(r) || r.catch_up(recent, from, len, budget);
        let fed = if parallel {
            self.removals.par_iter_mut().all(catch_up)
        } else {
            self.removals.iter_mut().all(catch_up)
        };
        let waited_for = self
            .removals
            .iter()
            .filter(|r| matches!(r.without, Without::Streaming(_)))
            .map(|r| r.next)
            .min()
            .unwrap_or(self.len);
        while self.recent_from < waited_for.min(self.len) {
            self.recent.pop_front();
            self.recent_from += 1;
        }
        fed
    }

    /// Every stream takes in the tests it put off; false (and no value from then on) if a
    /// push was cut short. Not budgeted: a stream puts off less than its window's worth
    /// ([`FORGOTTEN_AFTER`]).
    fn settle(&mut self) -> bool {
        if !self.broken {
            let parallel = self.recent.iter().map(Vec::len).sum::<usize>() >= PIECE;
            self.broken = !self.catch_up(parallel, |_| true, &Budget::unlimited());
        }
        !self.broken
    }

    /// The terms of Eq. 2 for the tests pushed so far; `None` once a push was cut short.
    pub fn terms(&mut self) -> Option<NcdTerms> {
        if !self.settle() {
            return None;
        }
        if self.len < 2 {
            return Some(NcdTerms::default());
        }
        let whole = self.whole.length_if_ended();
        let largest_without = self
            .removals
            .iter()
            .map(|removal| match &removal.without {
                Without::Streaming(stream) => stream.length_if_ended(),
                Without::Forgotten(offset) => whole.saturating_add_signed(*offset),
            })
            .max()
            .unwrap_or(1)
            .max(1);
        Some(NcdTerms {
            whole,
            smallest: self.smallest,
            largest_without,
        })
    }

    /// The suite so far as one share of a suite measured in parts ([`NcdShare`]); `None`
    /// once a push was cut short.
    pub fn share(&mut self) -> Option<NcdShare> {
        if !self.settle() {
            return None;
        }
        let terms = match self.len {
            0 => NcdTerms::default(),
            // Without its one test, the share is empty: nothing to compress.
            1 => NcdTerms {
                whole: self.whole.length_if_ended(),
                smallest: self.smallest,
                largest_without: 0,
            },
            _ => self.terms()?,
        };
        Some(NcdShare {
            tests: self.len,
            terms,
        })
    }
}

/// Eq. 2's terms of one part of a suite measured in parts, each part by a [`RunningNcd`] of
/// its own (a rank's tests, in a sharded run): no one compresses the whole suite.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NcdShare {
    /// Tests in the part.
    pub tests: usize,
    /// The part's own terms; for one test, `largest_without` is 0 (the empty part).
    pub terms: NcdTerms,
}

impl NcdShare {
    /// The part's terms as those of a suite of its own ([`RunningNcd::terms`]): all zero for
    /// fewer than two tests.
    pub fn suite_terms(self) -> NcdTerms {
        if self.tests < 2 {
            NcdTerms::default()
        } else {
            self.terms
        }
    }
}

/// What a rank measured of its own tests in a sharded run, for the coordinator to combine:
/// its NCD share, and the words of its pairwise coverage that changed since its last report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankMeasures {
    /// The NCD share of the tests new to the rank.
    pub ncd: NcdShare,
    /// [`PairwiseCoverage::changes_since`] the rank's last report.
    pub coverage: Vec<(u32, u64)>,
}

/// Eq. 2 of a suite made of `shares`, each compressed on its own: `C(X)` is the sum of the
/// parts' lengths, `min C(x)` the least of theirs, and `max C(X \ {x})` is `C(X)` changed by
/// the most a part's length changes (up, or least down) when it loses one of its tests. A
/// part compressed alone does not see the others' strings, so `C(X)` is at or above the whole
/// suite's compressed in one stream, by what the parts have in common; one part gives its
/// own terms.
pub fn combined_terms(shares: &[NcdShare]) -> NcdTerms {
    let parts: Vec<&NcdShare> = shares.iter().filter(|s| s.tests > 0).collect();
    if parts.iter().map(|s| s.tests).sum::<usize>() < 2 {
        return NcdTerms::default();
    }
    let whole: usize = parts.iter().map(|s| s.terms.whole).sum();
    let smallest = parts.iter().map(|s| s.terms.smallest).min().unwrap_or(0);
    // A removal may also lengthen a part (a match lost), so the change is signed.
    let change = parts
        .iter()
        .map(|s| s.terms.largest_without as isize - s.terms.whole as isize)
        .max()
        .unwrap_or(0);
    NcdTerms {
        whole,
        smallest,
        largest_without: whole.saturating_add_signed(change).max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ncd(strings: &[&[u8]], max_removals: usize) -> f64 {
        ncd_terms(strings, max_removals).value()
    }

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
        for (got, want) in scores.iter().zip([0.16667, 0.31818, 0.46154]) {
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

    /// The reused compressor gives the lengths a fresh zlib stream gives when handed the
    /// concatenation in blocks of 4 KiB, however the input is cut when appended, including
    /// output longer than its scratch buffer; a copy's length is the length the original
    /// reaches when it ends.
    #[test]
    fn compressed_lengths_match_a_fresh_encoder() {
        use flate2::{Compress, Compression, FlushCompress, Status};
        let noise: Vec<u8> = (0..200_000u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect();
        for text in [&b""[..], b"0", b"0101010101", &[b'1'; 100_000][..], &noise] {
            let mut fresh = Compress::new(Compression::default(), true);
            let mut out = Vec::with_capacity(2 * text.len() + 1024);
            for block in text.chunks(4096) {
                fresh
                    .compress_vec(block, &mut out, FlushCompress::None)
                    .unwrap();
            }
            let end = fresh.compress_vec(&[], &mut out, FlushCompress::Finish);
            assert_eq!(
                (end.unwrap(), fresh.total_in()),
                (Status::StreamEnd, text.len() as u64)
            );
            let expected = out.len();
            assert_eq!(compressed_len([text]), expected);
            assert_eq!(compressed_len(text.chunks(7)), expected);
            let mut stream = Stream::new();
            let (head, tail) = text.split_at(text.len() / 3);
            stream.append(head);
            let copy = stream.clone();
            stream.append(tail);
            assert_eq!(stream.length_if_ended(), expected);
            assert_eq!(stream.finish(), expected);
            assert_eq!(copy.length_if_ended(), compressed_len([head]));
        }
    }

    fn hashed_tests(count: u64) -> Vec<Assignment> {
        (0..count)
            .map(|i| {
                let bits = format!("{:064b}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                Assignment::from_bit_string(&bits).unwrap()
            })
            .collect()
    }

    /// Up to `max_removals` tests the running value is Eq. 2 exactly; beyond, its sampled
    /// denominator falls short of the exact one by a few bytes at most. On these 22-bit
    /// tests, whose suites compress to 11-700 bytes, 2 bytes short moved NCD by 0.0057 at 78
    /// tests; on wider suites the value stays within 0.005 (the next test).
    #[test]
    fn running_ncd_is_exact_on_small_suites_and_close_above() {
        let tests = hashed_tests(150);
        let vars: Vec<usize> = (0..64).step_by(3).collect();
        let mut running = RunningNcd::new(&vars, 8);
        let mut at = 0;
        for i in (0..tests.len()).filter(|i| i % 7 == 0 || *i == tests.len() - 1) {
            assert!(running.extend(&tests[at..=i], &Budget::unlimited()));
            at = i + 1;
            {
                let got = running.terms().unwrap();
                let exact = suite_ncd(&tests[..=i], &vars, usize::MAX);
                assert_eq!(got.whole, exact.whole);
                assert!(got.smallest >= exact.smallest);
                if i < 8 {
                    assert_eq!(got, exact, "at {} tests", i + 1);
                } else {
                    // The sampled maximum can only fall short of the exact one, by a few bytes.
                    let short = exact.largest_without.checked_sub(got.largest_without);
                    assert!(
                        short.is_some_and(|s| s <= 4),
                        "{got:?} vs {exact:?} at {} tests",
                        i + 1
                    );
                }
            }
        }
    }

    /// Tests of 2,000 bits, each a shared base with a tenth of its bits flipped at random:
    /// compressible as real suites are, and wide enough that deflate's window forgets a
    /// removal within 17 tests.
    pub(super) fn wide_tests(count: usize) -> Vec<Assignment> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let base: Vec<bool> = (0..2000).map(|_| rng.gen()).collect();
        (0..count)
            .map(|_| {
                let mut test = Assignment::zeros(base.len());
                for (i, &bit) in base.iter().enumerate() {
                    test.set(i, bit ^ rng.gen_bool(0.1));
                }
                test
            })
            .collect()
    }

    /// Once deflate's window has forgotten a removed test, the removal's length follows the
    /// whole suite's: each sampled `C(X \ {x})` stays within a few bytes of its exact value,
    /// and NCD within 0.005 of Eq. 2, whatever the batches the tests come in.
    #[test]
    fn forgotten_removals_follow_the_whole_suite() {
        let tests = wide_tests(64);
        let vars: Vec<usize> = (0..2000).collect();
        let strings: Vec<Vec<u8>> = tests.iter().map(|t| projected(t, &vars)).collect();
        let mut running = RunningNcd::new(&vars, 8);
        let mut at = 0;
        for batch in [1, 1, 2, 5, 1, 13, 1, 1, 20, 3, 16] {
            assert!(running.extend(&tests[at..at + batch], &Budget::unlimited()));
            assert!(running.settle());
            at += batch;
            let whole = running.whole.length_if_ended();
            for removal in &running.removals {
                let exact = compressed_len(
                    strings[..at]
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != removal.position)
                        .map(|(_, s)| s.as_slice()),
                );
                let got = match &removal.without {
                    Without::Streaming(stream) => stream.length_if_ended(),
                    Without::Forgotten(offset) => whole.saturating_add_signed(*offset),
                };
                assert!(
                    got.abs_diff(exact) <= 32,
                    "without test {} of {at}: {got} vs {exact}",
                    removal.position
                );
            }
        }
        assert_eq!(at, tests.len());
        let (got, exact) = (
            running.terms().unwrap().value(),
            suite_ncd(&tests, &vars, usize::MAX).value(),
        );
        assert!((got - exact).abs() < 0.005, "{got} vs {exact}");
        let forgotten = running
            .removals
            .iter()
            .filter(|r| matches!(r.without, Without::Forgotten(_)))
            .count();
        assert!(forgotten >= 4, "only {forgotten} removals forgotten");
    }

    /// Streams the next doubling drops take their tests in only when the terms are read (or
    /// once their window forgets the removal): read after every test or only at the end, the
    /// terms are the same, on narrow suites (every stream under 32 KiB) and wide ones.
    #[test]
    fn streams_put_off_give_the_terms_of_streams_fed_at_once() {
        let narrow = (hashed_tests(300), (0..64).collect::<Vec<usize>>());
        let wide = (wide_tests(90), (0..2000).collect());
        for (tests, vars) in [narrow, wide] {
            let mut read_often = RunningNcd::new(&vars, 8);
            let mut read_seldom = RunningNcd::new(&vars, 8);
            for (i, test) in tests.iter().enumerate() {
                assert!(read_often.extend(&[test], &Budget::unlimited()));
                assert!(read_seldom.extend(&[test], &Budget::unlimited()));
                let often = read_often.terms();
                if i % 37 == 36 || i + 1 == tests.len() {
                    assert_eq!(read_seldom.terms(), often, "at {} tests", i + 1);
                    // A stream still compressing is the suite without its test, exactly.
                    let strings: Vec<Vec<u8>> =
                        tests[..=i].iter().map(|t| projected(t, &vars)).collect();
                    for removal in &read_seldom.removals {
                        if let Without::Streaming(stream) = &removal.without {
                            let without = strings
                                .iter()
                                .enumerate()
                                .filter(|&(at, _)| at != removal.position)
                                .map(|(_, s)| s.as_slice());
                            assert_eq!(stream.length_if_ended(), compressed_len(without));
                        }
                    }
                }
            }
        }
    }

    /// Wide tests are taken in pieces, and a spent budget stops a push between pieces.
    #[test]
    fn running_ncd_stops_when_the_budget_is_spent() {
        let wide = Assignment::from_bit_string(&"01".repeat(PIECE)).unwrap();
        let vars: Vec<usize> = (0..wide.len()).collect();
        let mut running = RunningNcd::new(&vars, 8);
        let wide = [wide];
        assert!(running.extend(&wide, &Budget::unlimited()));
        let stop = std::sync::atomic::AtomicBool::new(true);
        let spent = Budget::new(std::time::Duration::from_secs(60), &stop);
        assert!(!running.extend(&wide, &spent));
        assert_eq!(running.terms(), None);
        assert!(!running.extend(&wide, &Budget::unlimited()));
    }

    /// One part gives its own terms; parts of one test each give Eq. 2 with the suite's
    /// length taken as the sum of theirs; a suite dealt to three parts stays close to its
    /// Eq. 2 where its tests have little in common.
    #[test]
    fn shares_combine_into_the_suites_terms() {
        let tests = hashed_tests(300);
        let vars: Vec<usize> = (0..tests[0].len()).collect();
        let share_of = |tests: &[Assignment]| {
            let mut ncd = RunningNcd::new(&vars, RUNNING_REMOVALS);
            assert!(ncd.extend(tests, &Budget::unlimited()));
            ncd.share().unwrap()
        };
        let whole = share_of(&tests);
        assert_eq!(whole.tests, 300);
        assert_eq!(combined_terms(&[whole]), whole.terms);
        assert_eq!(
            combined_terms(&[NcdShare::default(), whole, NcdShare::default()]),
            whole.terms
        );
        let (a, b) = (share_of(&tests[..1]), share_of(&tests[1..2]));
        let (ca, cb) = (a.terms.whole, b.terms.whole);
        assert_eq!(a.terms.smallest, ca);
        assert_eq!(
            combined_terms(&[a, b]),
            NcdTerms {
                whole: ca + cb,
                smallest: ca.min(cb),
                largest_without: ca.max(cb),
            }
        );
        assert_eq!(combined_terms(&[a]), NcdTerms::default(), "one test");
        let dealt: Vec<NcdShare> = (0..3)
            .map(|r| {
                let part: Vec<Assignment> = tests.iter().skip(r).step_by(3).cloned().collect();
                share_of(&part)
            })
            .collect();
        let combined = combined_terms(&dealt);
        let exact = suite_ncd(&tests, &vars, usize::MAX);
        assert_eq!(
            combined.whole,
            dealt.iter().map(|s| s.terms.whole).sum::<usize>()
        );
        assert!(combined.whole >= exact.whole);
        assert!(
            (combined.value() - exact.value()).abs() < 0.01,
            "{combined:?} against {exact:?}"
        );
    }

    #[test]
    fn tiny_suites_have_zero_distance() {
        assert_eq!(ncd(&[], 8), 0.0);
        assert_eq!(ncd(&[b"0101"], 8), 0.0);
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
