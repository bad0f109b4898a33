//! k-means over tests (step 3a): k-means++ start, Hamming distance, per-bit median centroids.

use crate::assignment::Assignment;
use rand::Rng;

const MAX_ITERATIONS: usize = 20;

/// Up to `k` centroids of `points` (fewer when there are fewer distinct points).
pub fn centroids(points: &[&Assignment], k: usize, rng: &mut impl Rng) -> Vec<Assignment> {
    if points.is_empty() || k == 0 {
        return Vec::new();
    }
    let mut centres = plus_plus_start(points, k, rng);
    let mut membership = vec![usize::MAX; points.len()];
    for _ in 0..MAX_ITERATIONS {
        let mut changed = false;
        for (p, m) in points.iter().zip(membership.iter_mut()) {
            let nearest = nearest(p, &centres).0;
            changed |= *m != nearest;
            *m = nearest;
        }
        if !changed {
            break;
        }
        for (c, centre) in centres.iter_mut().enumerate() {
            let members: Vec<&Assignment> = points
                .iter()
                .zip(&membership)
                .filter(|&(_, &m)| m == c)
                .map(|(p, _)| *p)
                .collect();
            if !members.is_empty() {
                *centre = median(&members);
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

/// k-means++: each next centre drawn with probability proportional to squared distance.
fn plus_plus_start(points: &[&Assignment], k: usize, rng: &mut impl Rng) -> Vec<Assignment> {
    let mut centres = vec![points[rng.gen_range(0..points.len())].clone()];
    while centres.len() < k {
        let weights: Vec<u64> = points
            .iter()
            .map(|p| {
                let d = nearest(p, &centres).1 as u64;
                d * d
            })
            .collect();
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

/// Per-bit median: a bit is set when more than half of the members set it.
fn median(members: &[&Assignment]) -> Assignment {
    let len = members[0].len();
    let mut ones = vec![0u32; len];
    for m in members {
        for v in m.ones() {
            ones[v] += 1;
        }
    }
    let mut centre = Assignment::zeros(len);
    for (v, &count) in ones.iter().enumerate() {
        if 2 * count as usize > members.len() {
            centre.set(v, true);
        }
    }
    centre
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
        let mut got = centroids(&refs, 2, &mut rng);
        got.sort();
        assert_eq!(got, vec![a("00000000"), a("11111111")]);
    }

    #[test]
    fn fewer_distinct_points_than_k_give_fewer_centroids() {
        let pts = [a("0101"), a("0101")];
        let refs: Vec<&Assignment> = pts.iter().collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        assert_eq!(centroids(&refs, 5, &mut rng), vec![a("0101")]);
    }
}
