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
use crate::handoff::{Handoff, Napping};
use rayon::prelude::*;
use std::time::{Duration, Instant};
use zlib::Stream;

mod zlib;

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
pub fn suite_ncd(tests: &[Assignment], vars: &[usize], max_removals: usize) -> NcdTerms {
    let strings: Vec<Vec<u8>> = tests.iter().map(|t| projected(t, vars)).collect();
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
    /// Bytes of later tests the stream has been (or is about to be) given.
    fed: usize,
    /// In the batch being taken in: the test after which the window has forgotten the
    /// removal, and `C(X)` there.
    forgets_at: Option<(usize, usize)>,
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
/// one-shot compression clears ~300 KiB of compressor state: sampling them made a 1000-test
/// run of 35.sk_3_52 8% shorter (medians of 5: 0.226 s to 0.205 s).
pub struct RunningNcd {
    vars: Vec<usize>,
    max_removals: usize,
    whole: Stream,
    removals: Vec<Removal>,
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
    pub fn extend(&mut self, tests: &[Assignment], budget: &Budget) -> bool {
        let strings = tests.iter().map(|t| projected(t, &self.vars)).collect();
        self.extend_projected(strings, budget)
    }

    /// [`RunningNcd::extend`] with the tests already projected on the measured variables.
    fn extend_projected(&mut self, strings: Vec<Vec<u8>>, budget: &Budget) -> bool {
        if self.broken {
            return false;
        }
        let first = self.len;
        let mut sampled = Vec::new();
        for (at, s) in strings.iter().enumerate() {
            if self.len.is_multiple_of(self.stride) {
                self.removals.push(Removal {
                    position: self.len,
                    without: Without::Streaming(self.whole.clone()),
                    fed: 0,
                    forgets_at: None,
                });
                sampled.push(s);
            }
            if !feed(&mut self.whole, s, budget) {
                self.broken = true;
                return false;
            }
            for removal in &mut self.removals {
                let streaming = matches!(removal.without, Without::Streaming(_));
                if streaming && removal.forgets_at.is_none() && removal.position != self.len {
                    removal.fed += s.len();
                    if removal.fed >= FORGOTTEN_AFTER {
                        removal.forgets_at = Some((at, self.whole.length_if_ended()));
                    }
                }
            }
            self.len += 1;
            if self.removals.len() > self.max_removals {
                self.stride *= 2;
                let stride = self.stride;
                self.removals.retain(|r| r.position % stride == 0);
            }
        }
        // A stream made in this batch skips its own test and takes the ones after it, up to
        // where its window forgets that test.
        let feed_removal = |removal: &mut Removal| {
            let Without::Streaming(stream) = &mut removal.without else {
                return true;
            };
            let p = removal.position;
            let from = if p >= first { p + 1 - first } else { 0 };
            let to = removal.forgets_at.map_or(strings.len(), |(at, _)| at + 1);
            let fed = strings[from..to].iter().all(|s| feed(stream, s, budget));
            if let (true, Some((_, whole))) = (fed, removal.forgets_at.take()) {
                let offset = stream.length_if_ended() as isize - whole as isize;
                removal.without = Without::Forgotten(offset);
            }
            fed
        };
        // Small batches (a test merged at a time) stay on this thread: handing them out
        // would cost more than compressing them.
        let parallel = strings.iter().map(Vec::len).sum::<usize>() >= PIECE;
        let smallest = |s: &&Vec<u8>| compressed_len([s.as_slice()]);
        let (fed, batch_smallest) = if parallel {
            (
                self.removals.par_iter_mut().all(feed_removal),
                sampled.par_iter().map(smallest).min(),
            )
        } else {
            (
                self.removals.iter_mut().all(feed_removal),
                sampled.iter().map(smallest).min(),
            )
        };
        self.smallest = batch_smallest.map_or(self.smallest, |m| m.min(self.smallest));
        self.broken = !fed;
        fed
    }

    /// The terms of Eq. 2 for the tests pushed so far; `None` once a push was cut short.
    pub fn terms(&self) -> Option<NcdTerms> {
        if self.broken {
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
}

/// A [`RunningNcd`] on a thread of its own: the coordinator hands each merged test over
/// (projected on the measured variables) and reads the terms when a round ends. Compression
/// was most of its merging on s38417_3_2 (1,664 support bytes a test through the streams),
/// time in which no further verdict was merged; now it overlaps the ranks' work, and a round's
/// end waits only for what is left. The thread takes the same tests in the same order, so the
/// terms are the same.
pub struct NcdThread {
    vars: Vec<usize>,
    /// Tests go over without waking the thread ([`crate::handoff`]); a request for the
    /// lengths wakes it.
    requests: Handoff<NcdRequest>,
    replies: crossbeam_channel::Receiver<(Option<NcdTerms>, Duration)>,
    len: usize,
}

enum NcdRequest {
    Extend(Vec<Vec<u8>>),
    Terms,
}

/// Memory the tests waiting for an [`NcdThread`] may take; past it the coordinator waits.
const NCD_QUEUE_BYTES: usize = 64 << 20;

/// Requests that may wait for an [`NcdThread`] whatever their size. A bounded queue's slots
/// are allocated and written when it is made: 65,536 of them cleared 2.6 MB of fresh memory
/// at every run's start, for 28-byte tests of which a run may merge 1,000.
const NCD_QUEUE_SLOTS: usize = 4096;

impl NcdThread {
    /// Starts `ncd`'s thread in `scope`. It takes tests in under `budget` as
    /// [`RunningNcd::extend`] does, and ends when the `NcdThread` is dropped.
    pub fn spawn<'scope, 'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        mut ncd: RunningNcd,
        budget: Budget<'env>,
    ) -> Self {
        let vars = ncd.vars.clone();
        let len = ncd.len();
        let capacity = (NCD_QUEUE_BYTES / (vars.len() + 1)).clamp(1, NCD_QUEUE_SLOTS);
        let (requests, inbox) = crossbeam_channel::bounded(capacity);
        let (outbox, replies) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new().name("snapsat-ncd".into());
        let started = thread.spawn_scoped(scope, move || {
            let mut busy = Duration::ZERO;
            for request in Napping(inbox) {
                match request {
                    NcdRequest::Extend(strings) => {
                        let started = Instant::now();
                        ncd.extend_projected(strings, &budget);
                        busy += started.elapsed();
                    }
                    NcdRequest::Terms => {
                        if outbox.send((ncd.terms(), busy)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        // As `std::thread::scope`'s own `spawn`, a thread that cannot start is a panic.
        let thread = started.expect("cannot start NCD's thread").thread().clone();
        NcdThread {
            vars,
            requests: Handoff::new(requests, thread),
            replies,
            len,
        }
    }

    /// Tests handed over so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first test.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tests join the suite (in suite order).
    pub fn extend(&mut self, tests: &[Assignment]) {
        if tests.is_empty() {
            return;
        }
        self.len += tests.len();
        let strings = tests.iter().map(|t| projected(t, &self.vars)).collect();
        // The thread ends only once this handle is dropped: the send cannot fail before.
        let _ = self.requests.send(NcdRequest::Extend(strings));
    }

    /// The terms once every test handed over is taken in (as [`RunningNcd::terms`]), and the
    /// thread's time compressing so far.
    pub fn terms(&mut self) -> (Option<NcdTerms>, Duration) {
        let _ = self.requests.send(NcdRequest::Terms);
        self.requests.wake();
        self.replies.recv().unwrap_or((None, Duration::ZERO))
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
    fn wide_tests(count: usize) -> Vec<Assignment> {
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

    /// The thread takes the same tests in the same order as a `RunningNcd` on the caller's
    /// thread would, so it reads the same terms whenever asked, and a spent budget stops it
    /// as it does the other.
    #[test]
    fn ncd_on_its_own_thread_reads_what_it_would_on_the_callers() {
        let tests = wide_tests(40);
        let vars: Vec<usize> = (0..2000).step_by(2).collect();
        let mut here = RunningNcd::new(&vars, 8);
        std::thread::scope(|scope| {
            let mut there = NcdThread::spawn(scope, RunningNcd::new(&vars, 8), Budget::unlimited());
            let mut at = 0;
            for batch in [1, 1, 3, 1, 7, 1, 1, 25] {
                for test in &tests[at..at + batch] {
                    there.extend(std::slice::from_ref(test));
                }
                assert!(here.extend(&tests[at..at + batch], &Budget::unlimited()));
                at += batch;
                assert_eq!(there.len(), at);
                assert_eq!(there.terms().0, here.terms(), "at {at} tests");
            }
        });
        let stop = std::sync::atomic::AtomicBool::new(true);
        std::thread::scope(|scope| {
            let spent = Budget::new(std::time::Duration::from_secs(60), &stop);
            let mut there = NcdThread::spawn(scope, RunningNcd::new(&vars, 8), spent);
            there.extend(&tests);
            assert_eq!(there.terms().0, None);
        });
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

    /// Across word boundaries, the count is that of the definition: distinct
    /// `(i, j, a, b)` with `i < j` over the tests so far; mostly zeros, so that the counts
    /// grow slowly and stay far from full.
    #[test]
    fn coverage_matches_the_definition_on_wide_tests() {
        let coverage = coverage_against_the_definition(0.1, 40);
        assert!(coverage.fraction() < 0.9);
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
