//! The variables where a round's samples differ, for k-means (step 3a): distances and
//! per-bit medians are the same on them alone, and elsewhere every centroid takes the
//! samples' common value. On some sketches they are a few percent of the variables (114 of
//! 4,670 across 100 samples of 70.sk_3_40), and clustering on them took k-means from 0.70 to
//! 0.13 ms a round of the coordinator's (medians of 7). The delta pool works on the words
//! that hold them ([`differing_words`]).

use crate::assignment::Assignment;

/// Per word of the samples, the bits where some sample differs from the first (all zero for
/// no samples), found sample by sample, as the samples lie in memory.
pub(super) fn differing_words(samples: &[&Assignment]) -> Vec<u64> {
    let Some(&first) = samples.first() else {
        return Vec::new();
    };
    let mut differing = vec![0u64; first.words().len()];
    for sample in &samples[1..] {
        for ((d, a), b) in differing.iter_mut().zip(first.words()).zip(sample.words()) {
            *d |= a ^ b;
        }
    }
    differing
}

/// Narrowing pays where at most one variable in this many differs: it costs a step a sample
/// and differing variable, and LoginService2.sk_23_36's samples (44% of its variables
/// differ), narrowed, took 2.9 ms a round more than whole.
const NARROWING_SHARE: usize = 8;

/// The variables where some sample differs from the first, and the first sample, whose
/// values elsewhere are every sample's.
pub struct Varying {
    columns: Vec<usize>,
    template: Assignment,
}

impl Varying {
    /// The variables where `samples` differ, where they are at most one in
    /// `NARROWING_SHARE` of the variables (none for fewer than two samples).
    pub fn of(samples: &[&Assignment]) -> Option<Self> {
        let Some(&first) = samples.first() else {
            return Some(Varying {
                columns: Vec::new(),
                template: Assignment::zeros(0),
            });
        };
        let differing = Assignment::from_words(differing_words(samples), first.len());
        if differing.count_ones() * NARROWING_SHARE > first.len() {
            return None;
        }
        Some(Varying {
            columns: differing.ones().collect(),
            template: first.clone(),
        })
    }

    /// `sample`'s values on the differing variables, in their order.
    pub fn narrow(&self, sample: &Assignment) -> Assignment {
        let mut narrow = Assignment::zeros(self.columns.len());
        for (at, &v) in self.columns.iter().enumerate() {
            narrow.set(at, sample.get(v));
        }
        narrow
    }

    /// The whole assignment whose values on the differing variables are `narrow`: the first
    /// sample's elsewhere.
    pub fn widen(&self, narrow: &Assignment) -> Assignment {
        let mut whole = self.template.clone();
        for (at, &v) in self.columns.iter().enumerate() {
            whole.set(v, narrow.get(at));
        }
        whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Samples of `len` variables that differ only on `free` of them, drawn under `seed`.
    fn samples(len: usize, free: &[usize], count: usize, seed: u64) -> Vec<Assignment> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut common = Assignment::zeros(len);
        (0..len).for_each(|v| common.set(v, rng.gen()));
        (0..count)
            .map(|_| {
                let mut s = common.clone();
                free.iter().for_each(|&v| s.set(v, rng.gen()));
                s
            })
            .collect()
    }

    /// Narrowing keeps what k-means reads: a sample widens back to itself and distances are
    /// the same (differing variables in several words, at both ends of a word, and in the
    /// last, partial one).
    #[test]
    fn narrowed_samples_widen_back_and_keep_distances() {
        let free = [0, 5, 63, 64, 70, 127, 128, 200, 255, 300, 301, 329];
        let whole = samples(330, &free, 40, 1);
        let refs: Vec<&Assignment> = whole.iter().collect();
        let varying = Varying::of(&refs).expect("12 of 330 differ");
        assert_eq!(varying.columns.len(), free.len());
        let narrow: Vec<Assignment> = whole.iter().map(|s| varying.narrow(s)).collect();
        for (i, (s, n)) in whole.iter().zip(&narrow).enumerate() {
            assert_eq!(&varying.widen(n), s);
            for j in 0..whole.len() {
                assert_eq!(s.hamming(&whole[j]), n.hamming(&narrow[j]), "{i}, {j}");
            }
        }
    }

    /// Samples that differ on more than one variable in eight are not narrowed; equal ones
    /// differ nowhere and widen from nothing.
    #[test]
    fn only_samples_that_differ_on_few_variables_are_narrowed() {
        let many: Vec<usize> = (0..13).collect();
        let whole = samples(100, &many, 40, 2);
        let refs: Vec<&Assignment> = whole.iter().collect();
        assert!(Varying::of(&refs).is_none(), "13 of 100 differ");
        let whole = samples(100, &[], 3, 2);
        let refs: Vec<&Assignment> = whole.iter().collect();
        let varying = Varying::of(&refs).unwrap();
        assert!(varying.columns.is_empty());
        assert_eq!(varying.widen(&varying.narrow(&whole[1])), whole[0]);
        assert!(Varying::of(&[]).unwrap().columns.is_empty());
    }
}
