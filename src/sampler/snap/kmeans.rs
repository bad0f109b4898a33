//! k-means over tests (step 3a): k-means++ start, Hamming distance, per-bit median centroids.

use super::columns::Varying;
use crate::assignment::Assignment;
use rand::Rng;
use rayon::prelude::*;

const MAX_ITERATIONS: usize = 20;

/// Hamming word operations an iteration's assignment step must reach before it is spread
/// over threads (about 0.1 ms of work).
const PARALLEL_WORD_OPERATIONS: usize = 1 << 18;

/// Up to `k` centroids of `points` (fewer when there are fewer distinct points); `stop`,
/// asked between steps, cuts the clustering short (a time limit or an interrupt), with the
/// centres found so far.
pub fn centroids(
    points: &[&Assignment],
    k: usize,
    rng: &mut impl Rng,
    stop: &dyn Fn() -> bool,
) -> Vec<Assignment> {
    // Clustered where the points differ, when they differ on few variables (see `columns`).
    let Some(varying) = Varying::of(points) else {
        return cluster_here_or_on_the_pool(points, k, rng, stop);
    };
    let narrow: Vec<Assignment> = points.iter().map(|p| varying.narrow(p)).collect();
    let narrow: Vec<&Assignment> = narrow.iter().collect();
    let centres = cluster_here_or_on_the_pool(&narrow, k, rng, stop);
    centres.iter().map(|c| varying.widen(c)).collect()
}

fn cluster_here_or_on_the_pool(
    points: &[&Assignment],
    k: usize,
    rng: &mut impl Rng,
    stop: &dyn Fn() -> bool,
) -> Vec<Assignment> {
    // Assignment is the costly half of an iteration: spread over the rank's threads when it
    // is large enough to pay for waking them (on a 118-variable formula, handing out each
    // iteration's few microseconds of work made k-means a third of a 1000-test run).
    let word_operations = points.len() * points.first().map_or(0, |p| p.words().len()) * k;
    cluster(
        points,
        k,
        rng,
        word_operations >= PARALLEL_WORD_OPERATIONS,
        stop,
    )
}

/// [`centroids`], the assignment step on the current rayon pool or on this thread; both
/// give the same centres.
fn cluster(
    points: &[&Assignment],
    k: usize,
    rng: &mut impl Rng,
    parallel: bool,
    stop: &dyn Fn() -> bool,
) -> Vec<Assignment> {
    if points.is_empty() || k == 0 {
        return Vec::new();
    }
    let mut centres = plus_plus_start(points, k, rng, stop);
    let mut membership = vec![usize::MAX; points.len()];
    for _ in 0..MAX_ITERATIONS {
        if stop() {
            break;
        }
        let assign = |(p, m): (&&Assignment, &mut usize)| {
            let nearest = nearest(p, &centres).0;
            let moved = *m != nearest;
            *m = nearest;
            moved
        };
        let changed = if parallel {
            points
                .par_iter()
                .zip(membership.par_iter_mut())
                .map(assign)
                .reduce(|| false, |a, b| a || b)
        } else {
            // Every point is assigned (counted, not `any`, which would stop at the first
            // move and leave the rest of membership stale).
            points
                .iter()
                .zip(membership.iter_mut())
                .map(assign)
                .filter(|&moved| moved)
                .count()
                > 0
        };
        if !changed {
            break;
        }
        let mut counters: Vec<BitCounter> = centres.iter().map(|_| BitCounter::default()).collect();
        for (p, &m) in points.iter().zip(&membership) {
            counters[m].add(p.words());
        }
        for (centre, counter) in centres.iter_mut().zip(&counters) {
            if counter.count > 0 {
                *centre = counter.majority(centre.len());
            }
        }
    }
    centres
}

fn nearest(p: &Assignment, centres: &[Assignment]) -> (usize, usize) {
    centres
        .iter()
        .enumerate()
        .map(|(i, c)| (i, p.hamming(c)))
        .min_by_key(|&(_, d)| d)
        .expect("at least one centre")
}

/// k-means++: each next centre drawn with probability proportional to squared distance to
/// the nearest centre so far, which is kept per point and lowered by each new centre alone
/// (k·n distances, where measuring against every centre again took k²·n: 10 s for k = 1,000).
fn plus_plus_start(
    points: &[&Assignment],
    k: usize,
    rng: &mut impl Rng,
    stop: &dyn Fn() -> bool,
) -> Vec<Assignment> {
    let mut centres = vec![points[rng.gen_range(0..points.len())].clone()];
    let mut weights = vec![u64::MAX; points.len()];
    while centres.len() < k && !stop() {
        let newest = centres.last().expect("one centre at least");
        for (w, p) in weights.iter_mut().zip(points) {
            let d = p.hamming(newest) as u64;
            *w = (*w).min(d * d);
        }
        let total: u64 = weights.iter().sum();
        if total == 0 {
            break;
        }
        let mut ticket = rng.gen_range(0..total);
        let chosen = weights
            .iter()
            .position(|&w| {
                if ticket < w {
                    true
                } else {
                    ticket -= w;
                    false
                }
            })
            .expect("ticket below total");
        centres.push(points[chosen].clone());
    }
    centres
}

/// Per-bit counts over many assignments, kept as bit planes (plane `j` holds bit `j` of every
/// count): adding a member costs a few word operations per 64 variables, not one step per
/// set bit, which made the per-bit median most of the coordinator's time on long runs.
#[derive(Default)]
struct BitCounter {
    planes: Vec<Vec<u64>>,
    count: usize,
}

impl BitCounter {
    fn add(&mut self, words: &[u64]) {
        self.count += 1;
        for (w, &word) in words.iter().enumerate() {
            let mut carry = word;
            for plane in &mut self.planes {
                if carry == 0 {
                    break;
                }
                let bits = plane[w];
                plane[w] = bits ^ carry;
                carry &= bits;
            }
            if carry != 0 {
                let mut plane = vec![0; words.len()];
                plane[w] = carry;
                self.planes.push(plane);
            }
        }
    }

    /// The per-bit median: a bit is set when more than half of the members set it.
    fn majority(&self, len: usize) -> Assignment {
        let threshold = self.count / 2 + 1;
        let width = usize::BITS - threshold.leading_zeros();
        let words = len.div_ceil(64);
        let median = (0..words)
            .map(|w| {
                // Count >= threshold, compared from the most significant bit down.
                let (mut greater, mut equal) = (0u64, !0u64);
                for j in (0..width.max(self.planes.len() as u32) as usize).rev() {
                    let plane = self.planes.get(j).map_or(0, |p| p[w]);
                    if threshold >> j & 1 == 1 {
                        equal &= plane;
                    } else {
                        greater |= equal & plane;
                        equal &= !plane;
                    }
                }
                greater | equal
            })
            .collect();
        Assignment::from_words(median, len)
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
    fn two_clear_clusters_are_found() {
        let pts = [
            a("00000001"),
            a("00000010"),
            a("00000000"),
            a("11111110"),
            a("11111101"),
            a("11111111"),
        ];
        let refs: Vec<&Assignment> = pts.iter().collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut got = centroids(&refs, 2, &mut rng, &|| false);
        got.sort();
        assert_eq!(got, vec![a("00000000"), a("11111111")]);
    }

    /// Clustering on one thread and on the pool give the same centres (each iteration
    /// assigns every point either way).
    #[test]
    fn one_thread_and_the_pool_agree() {
        use rand::Rng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let points: Vec<Assignment> = (0..300)
            .map(|_| {
                let bits: String = (0..150)
                    .map(|_| if rng.gen_bool(0.3) { '1' } else { '0' })
                    .collect();
                a(&bits)
            })
            .collect();
        let refs: Vec<&Assignment> = points.iter().collect();
        for seed in 0..5 {
            let run = |parallel| {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                cluster(&refs, 5, &mut rng, parallel, &|| false)
            };
            assert_eq!(run(false), run(true), "seed {seed}");
        }
    }

    /// Clustering the points narrowed to where they differ gives the centres clustering the
    /// whole points does: points that differ on a few variables of several words, as a
    /// sketch's samples do.
    #[test]
    fn narrowed_points_give_the_same_centres() {
        use rand::Rng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        let len = 700;
        let base: String = (0..len)
            .map(|_| if rng.gen_bool(0.5) { '1' } else { '0' })
            .collect();
        let free: Vec<usize> = (0..40).map(|_| rng.gen_range(0..len)).collect();
        let points: Vec<Assignment> = (0..100)
            .map(|_| {
                let mut p = a(&base);
                free.iter().for_each(|&v| p.set(v, rng.gen_bool(0.3)));
                p
            })
            .collect();
        let refs: Vec<&Assignment> = points.iter().collect();
        assert!(Varying::of(&refs).is_some(), "narrowed");
        for seed in 0..5 {
            let whole = cluster(
                &refs,
                5,
                &mut rand_chacha::ChaCha8Rng::seed_from_u64(seed),
                false,
                &|| false,
            );
            let narrowed = centroids(
                &refs,
                5,
                &mut rand_chacha::ChaCha8Rng::seed_from_u64(seed),
                &|| false,
            );
            assert_eq!(narrowed, whole, "seed {seed}");
        }
    }

    /// The bit-plane counter's majority is the per-bit median, counted one bit at a time.
    #[test]
    fn bit_plane_majority_is_the_per_bit_median() {
        use rand::Rng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for members in [1, 2, 3, 4, 7, 8, 64, 65, 200] {
            let len = 130;
            let points: Vec<Assignment> = (0..members)
                .map(|_| {
                    let bits: String = (0..len)
                        .map(|_| if rng.gen_bool(0.5) { '1' } else { '0' })
                        .collect();
                    a(&bits)
                })
                .collect();
            let mut counter = BitCounter::default();
            for p in &points {
                counter.add(p.words());
            }
            let expected: String = (0..len)
                .map(|v| {
                    let ones = points.iter().filter(|p| p.get(v)).count();
                    if 2 * ones > members {
                        '1'
                    } else {
                        '0'
                    }
                })
                .collect();
            assert_eq!(counter.majority(len), a(&expected), "{members} members");
        }
    }

    #[test]
    fn fewer_distinct_points_than_k_give_fewer_centroids() {
        let pts = [a("0101"), a("0101")];
        let refs: Vec<&Assignment> = pts.iter().collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        assert_eq!(centroids(&refs, 5, &mut rng, &|| false), vec![a("0101")]);
    }
}
