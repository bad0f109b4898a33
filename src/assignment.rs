//! Tests as packed bitsets: one bit a variable, 64 to a word, so that XOR, OR and hashing of
//! whole assignments cost a few instructions per 64 variables.

use crate::formula::{var_index, Lit};

/// A complete assignment of `len` variables; bit `i` is variable `i + 1`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Assignment {
    words: Box<[u64]>,
    len: usize,
}

/// Messages carry an assignment as its length and its words' bytes, in one piece: as a
/// sequence of words, bincode wrote each as a variable-length integer (9 bytes for most
/// words of a test) and read it back one by one, which was most of a sharded coordinator's
/// decoding of a rank's tests.
impl serde::Serialize for Assignment {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Bytes<'b>(&'b [u8]);
        impl serde::Serialize for Bytes<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(self.0)
            }
        }
        let bytes: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        serde::Serialize::serialize(&(self.len as u64, Bytes(&bytes)), serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Assignment {
    /// Rejects bytes that are not the words of `len` variables, with no bit set past them.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        struct Words;
        impl<'de> serde::de::Visitor<'de> for Words {
            type Value = Vec<u64>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the bytes of whole 64-bit words")
            }
            fn visit_bytes<E: Error>(self, bytes: &[u8]) -> Result<Vec<u64>, E> {
                if !bytes.len().is_multiple_of(8) {
                    return Err(E::invalid_length(bytes.len(), &self));
                }
                Ok(bytes
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
                    .collect())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Vec<u64>, A::Error> {
                let mut bytes = Vec::new();
                while let Some(byte) = seq.next_element::<u8>()? {
                    bytes.push(byte);
                }
                self.visit_bytes(&bytes)
            }
        }
        struct AsBytes(Vec<u64>);
        impl<'de> serde::Deserialize<'de> for AsBytes {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_bytes(Words).map(AsBytes)
            }
        }
        let (len, AsBytes(words)) = <(u64, AsBytes)>::deserialize(deserializer)?;
        let len = usize::try_from(len).map_err(D::Error::custom)?;
        if words.len() != len.div_ceil(64) {
            return Err(D::Error::custom(format!(
                "{} words for {len} variables",
                words.len()
            )));
        }
        let past_the_last = match (words.last(), len % 64) {
            (Some(last), used) if used > 0 => last >> used,
            _ => 0,
        };
        if past_the_last != 0 {
            return Err(D::Error::custom("bits set past the last variable"));
        }
        Ok(Assignment {
            words: words.into_boxed_slice(),
            len,
        })
    }
}

impl std::fmt::Debug for Assignment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Assignment({})", self.to_bit_string())
    }
}

impl Assignment {
    /// All variables false.
    pub fn zeros(len: usize) -> Self {
        Assignment {
            words: vec![0; len.div_ceil(64)].into_boxed_slice(),
            len,
        }
    }

    /// From a solver model or test line: each literal sets its variable; unnamed ones stay false.
    pub fn from_literals(len: usize, lits: &[Lit]) -> Self {
        let mut a = Assignment::zeros(len);
        for &lit in lits {
            if lit > 0 {
                a.set(var_index(lit), true);
            }
        }
        a
    }

    /// From each variable's value, as a solver's model gives them.
    pub fn from_values(values: &[bool]) -> Self {
        let mut a = Assignment::zeros(values.len());
        for (v, &value) in values.iter().enumerate() {
            a.set(v, value);
        }
        a
    }

    /// From a string of `0` and `1`, one character a variable.
    pub fn from_bit_string(bits: &str) -> Option<Self> {
        let mut a = Assignment::zeros(bits.len());
        for (i, c) in bits.bytes().enumerate() {
            match c {
                b'0' => {}
                b'1' => a.set(i, true),
                _ => return None,
            }
        }
        Some(a)
    }

    /// Number of variables.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an assignment of no variables.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed bits, 64 variables a word, bit `i % 64` of word `i / 64` for variable `i + 1`.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// From packed words (bit `i` of the whole is variable `i + 1`); bits past `len` cleared.
    pub fn from_words(mut words: Vec<u64>, len: usize) -> Self {
        words.resize(len.div_ceil(64), 0);
        if !len.is_multiple_of(64) {
            if let Some(last) = words.last_mut() {
                *last &= (1u64 << (len % 64)) - 1;
            }
        }
        Assignment {
            words: words.into_boxed_slice(),
            len,
        }
    }

    /// The value of variable `i + 1`.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Sets variable `i + 1`.
    #[inline]
    pub fn set(&mut self, i: usize, value: bool) {
        let mask = 1u64 << (i % 64);
        if value {
            self.words[i / 64] |= mask;
        } else {
            self.words[i / 64] &= !mask;
        }
    }

    /// True when the literal holds under this assignment.
    #[inline]
    pub fn satisfies(&self, lit: Lit) -> bool {
        self.get(var_index(lit)) == (lit > 0)
    }

    /// Bitwise XOR: where the two differ (a delta), or a test with a delta applied.
    pub fn xor(&self, other: &Assignment) -> Assignment {
        self.zip(other, |a, b| a ^ b)
    }

    /// Bitwise OR: two deltas combined.
    pub fn or(&self, other: &Assignment) -> Assignment {
        self.zip(other, |a, b| a | b)
    }

    fn zip(&self, other: &Assignment, op: impl Fn(u64, u64) -> u64) -> Assignment {
        assert_eq!(
            self.len, other.len,
            "assignments over different variable counts"
        );
        Assignment {
            words: self
                .words
                .iter()
                .zip(other.words.iter())
                .map(|(&a, &b)| op(a, b))
                .collect(),
            len: self.len,
        }
    }

    /// Number of variables set true.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Number of variables on which the two assignments differ.
    pub fn hamming(&self, other: &Assignment) -> usize {
        self.words
            .iter()
            .zip(other.words.iter())
            .map(|(a, b)| (a ^ b).count_ones() as usize)
            .sum()
    }

    /// Indices of the variables set true, in increasing order.
    pub fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    w * 64 + bit
                })
            })
        })
    }

    /// The DIMACS literal line CMSGen writes: `1 -2 3 0`.
    pub fn to_dimacs_line(&self) -> String {
        let mut line = Vec::new();
        self.write_dimacs_line(&mut line);
        String::from_utf8(line).expect("ASCII digits")
    }

    /// Appends [`Assignment::to_dimacs_line`] to `out`: the suite's file is mostly these lines
    /// (4,915 literals a test on 35.sk_3_52), so their cost is paid on every test.
    pub fn write_dimacs_line(&self, out: &mut Vec<u8>) {
        self.write_dimacs_literals(0, self.len, out);
        out.push(b'0');
    }

    /// Appends the literals of variables `from..to` (indices from 0), each followed by a
    /// space.
    fn write_dimacs_literals(&self, from: usize, to: usize, out: &mut Vec<u8>) {
        // Variables go by in tens sharing every digit but the last (`123` is `12` and `3`): the
        // shared digits are kept in one 8-byte word and stored whole, so a literal costs a few
        // stores instead of a byte push (with its capacity check) per digit. The buffer is
        // sized for the longest text (every literal as wide as the widest: sign, digits,
        // space), plus slack for the whole-word store, and cut to fit.
        const WORD: usize = 8;
        assert!(to < 1_000_000_000, "variable numbers fit 9 digits");
        let widest = 2 + ascii_digits(to).1;
        let start = out.len();
        out.resize(start + (to - from) * widest + WORD, 0);
        let buf = &mut out[start..];
        let mut at = 0;
        let (mut tens, mut tens_len) = ascii_digits((from + 1) / 10);
        let mut last = ((from + 1) % 10) as u8;
        for i in from..to {
            // Signs are as random as the tests: a branch on them would be mispredicted half
            // the time, so the `-` is always stored and kept or not by where `at` goes next.
            buf[at] = b'-';
            at += usize::from(!self.get(i));
            buf[at..at + WORD].copy_from_slice(&tens.to_le_bytes());
            at += tens_len;
            buf[at] = b'0' + last;
            buf[at + 1] = b' ';
            at += 2;
            last += 1;
            if last == 10 {
                last = 0;
                (tens, tens_len) = ascii_digits((i + 2) / 10);
            }
        }
        out.truncate(start + at);
    }

    /// One `0`/`1` character a variable.
    pub fn to_bit_string(&self) -> String {
        let mut line = Vec::new();
        self.write_bits(&mut line);
        String::from_utf8(line).expect("ASCII 0 and 1")
    }

    /// Appends [`Assignment::to_bit_string`] to `out`, eight characters a store: a suite in
    /// `--format bits` is mostly these lines, written on the coordinator, where a character
    /// at a time had been 5% of a run of 70.sk_3_40.
    pub fn write_bits(&self, out: &mut Vec<u8>) {
        /// Byte `b` as eight characters, bit `i` the `i`-th.
        const SPREAD: [u64; 256] = {
            let mut table = [0u64; 256];
            let mut byte = 0;
            while byte < 256 {
                let mut i = 0;
                while i < 8 {
                    table[byte] |= (b'0' as u64 + ((byte as u64 >> i) & 1)) << (8 * i);
                    i += 1;
                }
                byte += 1;
            }
            table
        };
        let start = out.len();
        out.reserve(self.words.len() * 64);
        for word in &self.words {
            for byte in word.to_le_bytes() {
                out.extend_from_slice(&SPREAD[usize::from(byte)].to_le_bytes());
            }
        }
        out.truncate(start + self.len);
    }

    /// A 64-bit hash of the variables' values (and their number), as [`WordHasher`]'s
    /// multiply-rotate, in four lanes of every fourth word: one chain of multiplies through
    /// all the words took ~370 cycles a test of 4,670 variables, on the coordinator's path.
    pub fn fingerprint(&self) -> u64 {
        let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
        let mut lanes = [self.len as u64, 1, 2, 3];
        let mut fours = self.words.chunks_exact(4);
        for four in &mut fours {
            for (lane, &word) in lanes.iter_mut().zip(four) {
                *lane = mix(*lane, word);
            }
        }
        for (lane, &word) in lanes.iter_mut().zip(fours.remainder()) {
            *lane = mix(*lane, word);
        }
        lanes.into_iter().fold(0, mix)
    }

    /// The `0`/`1` characters of the given variables only, in the given order.
    pub fn project_bits(&self, vars: &[usize], out: &mut Vec<u8>) {
        out.extend(vars.iter().map(|&v| if self.get(v) { b'1' } else { b'0' }));
    }
}

/// Tests known by their [`Assignment::fingerprint`] alone, where remembering them whole
/// would cost memory and time that grow with the formula's width.
pub type FingerprintSet = std::collections::HashSet<u64, std::hash::BuildHasherDefault<KeptHash>>;

/// The hasher of [`FingerprintSet`]: a fingerprint is a hash already, taken as it is.
#[derive(Default)]
pub struct KeptHash(u64);

impl std::hash::Hasher for KeptHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, _: &[u8]) {
        unreachable!("fingerprints are words")
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

/// Hashes assignments (the suite's tests, the delta pool's deltas) by a multiply-rotate per
/// word, as rustc's FxHash. std's SipHash, made to withstand chosen keys, was 3% of an easy
/// run; the keys here are the sampler's own.
#[derive(Default)]
pub struct WordHasher(u64);

/// Builds [`WordHasher`]s: the hasher of sets and maps keyed by assignments.
pub type BuildWordHasher = std::hash::BuildHasherDefault<WordHasher>;

impl WordHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.mix(word);
    }

    fn write_usize(&mut self, word: usize) {
        self.mix(word as u64);
    }
}

/// `n` as ASCII digits packed little-endian in a word (first digit in the lowest byte; the
/// word holds 8), and how many (right for any `n`; 0 for 0).
/// DIMACS lines of the tests of one formula, written one after another: each 64-variable
/// word's text is kept and used again while the word is unchanged. Most words of a sketch's
/// tests are (unit clauses and what they force), and rendering every literal had made the
/// writer's thread the slowest of the run on 70.sk_3_40 (as long as all verify/repair work).
#[derive(Default)]
pub struct DimacsLines {
    len: usize,
    words: Vec<Option<u64>>,
    texts: Vec<Vec<u8>>,
}

impl DimacsLines {
    /// Appends `test`'s line, as [`Assignment::write_dimacs_line`] writes it, to `out`.
    pub fn write(&mut self, test: &Assignment, out: &mut Vec<u8>) {
        let words = test.words();
        if self.len != test.len() || self.words.len() != words.len() {
            self.len = test.len();
            self.words = vec![None; words.len()];
            self.texts = vec![Vec::new(); words.len()];
        }
        for (k, &word) in words.iter().enumerate() {
            let text = &mut self.texts[k];
            if self.words[k] != Some(word) {
                text.clear();
                test.write_dimacs_literals(64 * k, (64 * k + 64).min(test.len()), text);
                self.words[k] = Some(word);
            }
            out.extend_from_slice(text);
        }
        out.push(b'0');
    }
}

fn ascii_digits(mut n: usize) -> (u64, usize) {
    let mut len = 0;
    let mut reversed = 0u64;
    while n > 0 {
        reversed = reversed << 8 | (b'0' + (n % 10) as u8) as u64;
        n /= 10;
        len += 1;
    }
    (reversed, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bit_operations_match_their_definitions() {
        let a = Assignment::from_bit_string("1100").unwrap();
        let b = Assignment::from_bit_string("1010").unwrap();
        assert_eq!(a.xor(&b).to_bit_string(), "0110");
        assert_eq!(a.or(&b).to_bit_string(), "1110");
        assert_eq!(a.hamming(&b), 2);
        assert_eq!(a.ones().collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn dimacs_line_names_every_variable() {
        let a = Assignment::from_literals(3, &[1, -2, 3]);
        assert_eq!(a.to_dimacs_line(), "1 -2 3 0");
        assert!(a.satisfies(1) && a.satisfies(-2) && !a.satisfies(2));
    }

    /// The shared leading digits name every variable across carries (9, 99, 9999, …).
    #[test]
    fn dimacs_lines_of_wide_assignments_match_formatted_numbers() {
        let bits: String = (0..12_345)
            .map(|i| if i % 3 == 0 { '0' } else { '1' })
            .collect();
        let a = Assignment::from_bit_string(&bits).unwrap();
        let expected: Vec<String> = (1..=12_345i64)
            .map(|v| if (v - 1) % 3 == 0 { -v } else { v }.to_string())
            .chain(["0".to_string()])
            .collect();
        assert_eq!(a.to_dimacs_line(), expected.join(" "));
    }

    #[test]
    fn bit_strings_reject_other_characters() {
        assert!(Assignment::from_bit_string("01x").is_none());
    }

    /// Lines written with words' texts kept are the lines written afresh: tests that share
    /// some words and not others, wide enough for carries inside a word (var 1000), and a
    /// narrower formula after (the texts start again).
    #[test]
    fn kept_word_texts_give_the_same_lines() {
        let mut lines = DimacsLines::default();
        let mut rng = 12_345u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for width in [1_100, 1_100, 70] {
            let mut test = Assignment::zeros(width);
            for round in 0..20 {
                for _ in 0..next() % 40 {
                    let v = (next() % width as u64) as usize;
                    test.set(v, !test.get(v));
                }
                let mut kept = Vec::new();
                lines.write(&test, &mut kept);
                assert_eq!(
                    String::from_utf8(kept).unwrap(),
                    test.to_dimacs_line(),
                    "{round}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn forms_round_trip(bits in proptest::collection::vec(any::<bool>(), 0..300)) {
            let s: String = bits.iter().map(|&b| if b { '1' } else { '0' }).collect();
            let a = Assignment::from_bit_string(&s).unwrap();
            prop_assert_eq!(a.to_bit_string(), s);
            let lits: Vec<Lit> = a.to_dimacs_line().split(' ').map(|t| t.parse().unwrap()).filter(|&l| l != 0).collect();
            prop_assert_eq!(Assignment::from_literals(bits.len(), &lits), a.clone());
            prop_assert_eq!(a.ones().count(), a.count_ones());
            prop_assert_eq!(a.xor(&a).count_ones(), 0);
            let config = bincode::config::standard();
            let bytes = bincode::serde::encode_to_vec(&a, config).unwrap();
            let (back, used): (Assignment, usize) =
                bincode::serde::decode_from_slice(&bytes, config).unwrap();
            prop_assert_eq!(used, bytes.len());
            prop_assert_eq!(back, a);
        }
    }

    proptest! {
        /// Every step of the fingerprint is a bijection of a lane, so tests one variable
        /// apart (or of different lengths, same bits) never share one; equal tests do.
        #[test]
        fn fingerprints_tell_apart_tests_one_variable_apart(
            bits in proptest::collection::vec(any::<bool>(), 1..600),
            flip in any::<proptest::sample::Index>(),
        ) {
            let a = Assignment::from_values(&bits);
            let mut b = a.clone();
            let v = flip.index(bits.len());
            b.set(v, !a.get(v));
            prop_assert_ne!(a.fingerprint(), b.fingerprint());
            prop_assert_eq!(a.fingerprint(), a.clone().fingerprint());
            let longer = Assignment::from_words(a.words().to_vec(), bits.len() + 1);
            prop_assert_ne!(a.fingerprint(), longer.fingerprint());
        }
    }

    /// In a message, an assignment is its length and its words' bytes in one piece, and
    /// bytes that are not the words of that many variables are refused, not taken in.
    #[test]
    fn encoded_assignments_are_their_bytes_and_malformed_ones_are_refused() {
        let config = bincode::config::standard();
        let encode = |len: u64, bytes: &[u8]| {
            struct Raw<'b>(&'b [u8]);
            impl serde::Serialize for Raw<'_> {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_bytes(self.0)
                }
            }
            bincode::serde::encode_to_vec((len, Raw(bytes)), config).unwrap()
        };
        let decode = |bytes: &[u8]| {
            bincode::serde::decode_from_slice::<Assignment, _>(bytes, config).map(|(a, _)| a)
        };
        let a = Assignment::from_bit_string(&"01".repeat(35)).unwrap();
        let words: Vec<u8> = a.words().iter().flat_map(|w| w.to_le_bytes()).collect();
        let bytes = bincode::serde::encode_to_vec(&a, config).unwrap();
        assert_eq!(bytes, encode(70, &words));
        assert_eq!(bytes.len(), 1 + 1 + 16, "length, byte count, two words");
        assert_eq!(decode(&bytes).unwrap(), a);
        assert!(decode(&encode(70, &words[..8])).is_err(), "a word short");
        assert!(
            decode(&encode(70, &words[..12])).is_err(),
            "not whole words"
        );
        assert!(
            decode(&encode(69, &words)).is_err(),
            "variable 70 set past 69"
        );
        assert!(decode(&encode(64, &words)).is_err(), "a word too many");
        assert_eq!(decode(&encode(71, &words)).unwrap().len(), 71);
    }
}
