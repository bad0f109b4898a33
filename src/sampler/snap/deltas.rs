//! The delta pool (steps 2a–2b): XOR differences of valid samples, identical ones merged and
//! weighted by how often they occur, since a repeated delta is more likely to keep a test valid.

use super::columns::differing_words;
use crate::assignment::{Assignment, BuildWordHasher};
use rand::Rng;
use std::cmp::Ordering;
use std::collections::HashMap;

/// Step 2's pool: distinct XOR deltas of sample pairs, weighted by how often each occurs. A
/// delta is held as the first pair that gave it, and formed only when drawn: formed for every
/// pair, N(N−1)/2 deltas of a wide formula (4,950 of 15,475 bits on 20.sk_1_51) were 10 MB of
/// fresh memory and as many hashes of it, each round.
pub struct DeltaPool<'s> {
    samples: &'s [&'s Assignment],
    /// Distinct non-zero deltas, as the pair of samples that first gave each, most frequent
    /// first (ties in the deltas' bit order, for determinism).
    pairs: Vec<(u32, u32)>,
    counts: Vec<u64>,
    /// Running sums of `counts`, for drawing by weight.
    cumulative: Vec<u64>,
}

impl<'s> DeltaPool<'s> {
    /// Deltas of all pairs of samples; pairs of equal samples give no delta. `None` when
    /// `stop`, asked once a sample (N of its pairs), cut the pool short.
    pub fn from_samples(samples: &'s [&'s Assignment], stop: &dyn Fn() -> bool) -> Option<Self> {
        let differing = DifferingWords::of(samples);
        // A hash that is linear in XOR, so a pair's delta hashes without being formed; equal
        // hashes are told apart by comparing the deltas word by word.
        let hasher = XorLinearHash::new();
        let hashes: Vec<u64> = (0..samples.len())
            .map(|i| hasher.hash(differing.words_of(i)))
            .collect();
        let pairs_count = samples.len() * samples.len().saturating_sub(1) / 2;
        // Per hash, the first distinct delta with it; `next` chains the others.
        // The keys are the sampler's own hashes: the word hasher, not SipHash (a sixth of
        // building a pool).
        let mut first: HashMap<u64, u32, BuildWordHasher> =
            HashMap::with_capacity_and_hasher(pairs_count, Default::default());
        let mut next: Vec<u32> = Vec::new();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut counts: Vec<u64> = Vec::new();
        for i in 0..samples.len() as u32 {
            if stop() {
                return None;
            }
            for j in i + 1..samples.len() as u32 {
                let hash = hashes[i as usize] ^ hashes[j as usize];
                if hash == 0 && differing.same(i as usize, j as usize) {
                    continue;
                }
                let mut entry = first.get(&hash).copied();
                while let Some(e) = entry {
                    if differing.delta_cmp(pairs[e as usize], (i, j)).is_eq() {
                        break;
                    }
                    entry = (next[e as usize] != NONE).then_some(next[e as usize]);
                }
                match entry {
                    Some(e) => counts[e as usize] += 1,
                    None => {
                        let e = pairs.len() as u32;
                        next.push(first.insert(hash, e).unwrap_or(NONE));
                        pairs.push((i, j));
                        counts.push(1);
                    }
                }
            }
        }
        let order = differing.order(&pairs, &counts);
        let pairs: Vec<(u32, u32)> = order.iter().map(|&e| pairs[e]).collect();
        let counts: Vec<u64> = order.iter().map(|&e| counts[e]).collect();
        let cumulative = counts
            .iter()
            .scan(0u64, |sum, &c| {
                *sum += c;
                Some(*sum)
            })
            .collect();
        Some(DeltaPool {
            samples,
            pairs,
            counts,
            cumulative,
        })
    }

    /// Number of distinct deltas.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when all samples were equal.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Number of pairs whose delta also occurs for another pair (Fig. 5 of the paper).
    pub fn repeated_pairs(&self) -> u64 {
        self.counts.iter().filter(|&&c| c > 1).sum()
    }

    /// The `index`th delta, most frequent first.
    fn delta(&self, index: usize) -> Assignment {
        let (a, b) = self.pairs[index];
        self.samples[a as usize].xor(self.samples[b as usize])
    }

    /// A delta drawn with probability proportional to its count. The pool must not be empty.
    pub fn draw(&self, rng: &mut impl Rng) -> Assignment {
        let total = *self
            .cumulative
            .last()
            .expect("draw from an empty delta pool");
        let ticket = rng.gen_range(0..total);
        self.delta(self.cumulative.partition_point(|&c| c <= ticket))
    }
}

/// No further delta with the same hash.
const NONE: u32 = u32::MAX;

/// The words where some sample differs from the first: every delta is zero elsewhere, so
/// hashing, comparing and ordering deltas need only these (a round's samples of 70.sk_3_40
/// differ in 18 of its 73 words). The samples are read in place: copying those words into
/// fresh rows each round made s38417_3_2's pool slower (0.48 → 0.71 ms), most of its words
/// differing.
struct DifferingWords<'s> {
    samples: &'s [&'s Assignment],
    /// Where they differ: indices into every sample's words.
    positions: Vec<usize>,
}

impl<'s> DifferingWords<'s> {
    fn of(samples: &'s [&'s Assignment]) -> Self {
        let positions = (differing_words(samples).iter().enumerate())
            .filter(|&(_, &d)| d != 0)
            .map(|(k, _)| k)
            .collect();
        DifferingWords { samples, positions }
    }

    /// Sample `sample`'s words where the samples differ.
    fn words_of(&self, sample: usize) -> impl Iterator<Item = u64> + '_ {
        let words = self.samples[sample].words();
        self.positions.iter().map(move |&k| words[k])
    }

    /// Whether two samples are equal.
    fn same(&self, a: usize, b: usize) -> bool {
        self.words_of(a).eq(self.words_of(b))
    }

    /// The order of two pairs' deltas as `Assignment`s order (word by word, as numbers).
    fn delta_cmp(&self, (a, b): (u32, u32), (c, d): (u32, u32)) -> Ordering {
        let words = |i: u32| self.words_of(i as usize);
        (words(a).zip(words(b)))
            .zip(words(c).zip(words(d)))
            .map(|((a, b), (c, d))| (a ^ b).cmp(&(c ^ d)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// The pool's order of its distinct deltas (`pairs`, counted `counts`): most frequent
    /// first, ties in the deltas' order. Each delta's lead settles most ties without forming
    /// the delta (see `Lead`). Grouped by count, then sorted as numbers that pack the lead
    /// and the delta's index: sorting indices with a comparison that looked counts and leads
    /// up was half of building a pool of 100 samples (4,950 pairs) of 70.sk_3_40.
    fn order(&self, pairs: &[(u32, u32)], counts: &[u64]) -> Vec<usize> {
        let mut order = Vec::with_capacity(pairs.len());
        let mut keys: Vec<u128> = Vec::new();
        let mut entries: Vec<usize> = (0..pairs.len()).collect();
        entries.sort_by_key(|&e| std::cmp::Reverse(counts[e]));
        for same_count in entries.chunk_by(|&x, &y| counts[x] == counts[y]) {
            keys.clear();
            keys.extend(
                same_count
                    .iter()
                    .map(|&e| self.lead(pairs[e]).key() << 32 | e as u128),
            );
            keys.sort_unstable();
            for same_lead in keys.chunk_by(|x, y| x >> 32 == y >> 32) {
                let first = order.len();
                order.extend(same_lead.iter().map(|&k| k as u32 as usize));
                if same_lead.len() > 1 {
                    order[first..].sort_unstable_by(|&x, &y| self.delta_cmp(pairs[x], pairs[y]));
                }
            }
        }
        order
    }

    /// A pair's delta's lead.
    fn lead(&self, (a, b): (u32, u32)) -> Lead {
        let (at, word) = (self.words_of(a as usize).zip(self.words_of(b as usize)))
            .map(|(a, b)| a ^ b)
            .enumerate()
            .find(|&(_, w)| w != 0)
            .unwrap_or((self.positions.len(), 0));
        Lead { at, word }
    }
}

/// A delta's first non-zero word and where it is (among the words where samples differ).
struct Lead {
    at: usize,
    word: u64,
}

impl Lead {
    /// A number ordered as the deltas are (word by word, as numbers) wherever two leads
    /// differ: a delta whose first non-zero word comes earlier is the larger; at the same
    /// place the word decides; equal leads leave the rest of the words to decide. 96 bits.
    fn key(&self) -> u128 {
        // A later first word is a smaller delta.
        let depth = u32::MAX - u32::try_from(self.at).expect("fewer than 2^32 words");
        u128::from(depth) << 64 | u128::from(self.word)
    }
}

/// A hash of bit vectors with `hash(a ⊕ b) = hash(a) ⊕ hash(b)`: each word goes through a
/// random linear map of 64 bits (eight byte tables), rotated by its position.
struct XorLinearHash {
    tables: Box<[[u64; 256]; 8]>,
}

impl XorLinearHash {
    fn new() -> Self {
        // A fixed image for each of the 64 bits (splitmix64 of the bit), and each byte's
        // value as the XOR of its bits' images.
        let image = |bit: u64| {
            let mut z = bit.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut tables = Box::new([[0u64; 256]; 8]);
        for (byte, table) in tables.iter_mut().enumerate() {
            for (value, slot) in table.iter_mut().enumerate() {
                *slot = (0..8)
                    .filter(|b| value >> b & 1 == 1)
                    .fold(0, |h, b| h ^ image(8 * byte as u64 + b));
            }
        }
        XorLinearHash { tables }
    }

    fn hash(&self, words: impl IntoIterator<Item = u64>) -> u64 {
        words.into_iter().enumerate().fold(0, |h, (k, w)| {
            let mapped = (0..8).fold(0, |m, byte| {
                m ^ self.tables[byte][(w >> (8 * byte)) as usize & 0xFF]
            });
            h ^ mapped.rotate_left((k % 64) as u32)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn a(s: &str) -> Assignment {
        Assignment::from_bit_string(s).unwrap()
    }

    /// The pool holds exactly the distinct non-zero deltas of every pair, formed and
    /// counted one by one, in the same order: samples of a few shapes (so that deltas
    /// repeat, and some samples are equal), over widths around word boundaries.
    #[test]
    fn the_pool_is_every_pair_delta_formed_and_counted() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for width in [1, 3, 63, 64, 65, 130, 700] {
            let shapes: Vec<Assignment> = (0..4)
                .map(|_| {
                    let mut s = Assignment::zeros(width);
                    (0..width).for_each(|v| s.set(v, rng.gen()));
                    s
                })
                .collect();
            let samples: Vec<Assignment> = (0..40)
                .map(|_| {
                    let mut s = shapes[rng.gen_range(0..shapes.len())].clone();
                    for _ in 0..rng.gen_range(0..3) {
                        let v = rng.gen_range(0..width);
                        s.set(v, !s.get(v));
                    }
                    s
                })
                .collect();
            let refs: Vec<&Assignment> = samples.iter().collect();
            let mut counted: HashMap<Assignment, u64> = HashMap::new();
            for (i, a) in refs.iter().enumerate() {
                for b in &refs[i + 1..] {
                    let delta = a.xor(b);
                    if delta.count_ones() > 0 {
                        *counted.entry(delta).or_default() += 1;
                    }
                }
            }
            let mut expected: Vec<(Assignment, u64)> = counted.into_iter().collect();
            expected.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let pool = DeltaPool::from_samples(&refs, &|| false).unwrap();
            let held: Vec<(Assignment, u64)> = (0..pool.len())
                .map(|i| (pool.delta(i), pool.counts[i]))
                .collect();
            assert_eq!(held, expected, "width {width}");
            assert!(expected.iter().any(|(_, c)| *c > 1), "deltas repeat");
        }
    }

    /// A delta's lead orders as the delta does wherever the two leads differ, also when the
    /// deltas' first words are zero to different depths (the leading words of many formulas'
    /// samples are fixed by unit clauses).
    #[test]
    fn leads_order_as_the_deltas_do() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let width = 4 * 64 + 10;
        let samples: Vec<Assignment> = (0..24)
            .map(|_| {
                let mut s = Assignment::zeros(width);
                // Zero up to three leading words, and few bits set in the next.
                let fixed = rng.gen_range(0..4) * 64;
                for v in fixed..width {
                    s.set(v, rng.gen_bool(if v < fixed + 64 { 0.05 } else { 0.5 }));
                }
                s
            })
            .collect();
        let refs: Vec<&Assignment> = samples.iter().collect();
        let differing = DifferingWords::of(&refs);
        let pairs: Vec<(u32, u32)> = (0..24u32)
            .flat_map(|i| (i + 1..24).map(move |j| (i, j)))
            .collect();
        let mut depths = std::collections::HashSet::new();
        for &x in &pairs {
            let lead = differing.lead(x).key();
            depths.insert(differing.lead(x).at);
            for &y in &pairs {
                let (dx, dy) = (
                    refs[x.0 as usize].xor(refs[x.1 as usize]),
                    refs[y.0 as usize].xor(refs[y.1 as usize]),
                );
                let by_lead = lead.cmp(&differing.lead(y).key());
                if by_lead.is_ne() {
                    assert_eq!(by_lead, dx.cmp(&dy), "{x:?} against {y:?}");
                }
                assert_eq!(differing.delta_cmp(x, y), dx.cmp(&dy));
            }
        }
        assert!(
            depths.len() >= 3,
            "leads at several depths: {}",
            depths.len()
        );
    }

    /// The hash is linear in XOR, and deltas whose hashes are equal are still told apart
    /// (no hash of many words is injective): a pool with a collision forced stays exact.
    #[test]
    fn the_hash_is_linear_and_collisions_are_told_apart() {
        let hasher = XorLinearHash::new();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..100 {
            let a: Vec<u64> = (0..5).map(|_| rng.gen()).collect();
            let b: Vec<u64> = (0..5).map(|_| rng.gen()).collect();
            let x: Vec<u64> = a.iter().zip(&b).map(|(a, b)| a ^ b).collect();
            assert_eq!(
                hasher.hash(x.iter().copied()),
                hasher.hash(a.iter().copied()) ^ hasher.hash(b.iter().copied())
            );
        }
        // Words 0 and 64 go through the same map, unrotated: these two deltas collide. The
        // pool hashes the words where samples differ, so a sample with a bit in every word
        // keeps word 64 the 65th it hashes.
        let mut one = Assignment::zeros(65 * 64);
        one.set(0, true);
        let mut other = Assignment::zeros(65 * 64);
        other.set(64 * 64, true);
        assert_eq!(
            hasher.hash(one.words().iter().copied()),
            hasher.hash(other.words().iter().copied())
        );
        let zero = Assignment::zeros(65 * 64);
        let mut every_word = Assignment::zeros(65 * 64);
        (0..65).for_each(|k| every_word.set(64 * k + 1, true));
        let refs = [&zero, &one, &other, &every_word];
        let pool = DeltaPool::from_samples(&refs, &|| false).unwrap();
        assert_eq!(pool.len(), 6, "every pair's delta differs");
    }

    #[test]
    fn identical_deltas_are_merged_and_weighted() {
        // 0000 ⊕ 1100 = 0011 ⊕ 1111 = 1100: that delta occurs twice.
        let samples = [a("0000"), a("1100"), a("0011"), a("1111"), a("0000")];
        let refs: Vec<&Assignment> = samples.iter().collect();
        let pool = DeltaPool::from_samples(&refs, &|| false).unwrap();
        assert_eq!(pool.delta(0), a("1100"));
        assert_eq!(
            pool.counts.iter().sum::<u64>(),
            9,
            "10 pairs, one of equal samples"
        );
        assert!(pool.repeated_pairs() >= 2);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let draws = 4000;
        let heavy = (0..draws)
            .filter(|_| pool.draw(&mut rng) == a("1100"))
            .count();
        let share = pool.counts[0] as f64 / 9.0;
        assert!((heavy as f64 / draws as f64 - share).abs() < 0.05);
    }
}
