//! Failed-assumption cores a session has met, answered again without the solver.
//!
//! A core is a set of literals the formula refutes, so it stays refuted whatever else is
//! assumed: a query whose assumptions contain one is answered at once. Repairs meet the
//! same few cores over and over (on 20.sk_1_51, 86% of the refuted repairs' cores were
//! among the last 10 met), and proving each again cost a full solver call, as long as the
//! call that then finds the model.

use crate::formula::Lit;
use std::collections::VecDeque;

/// The most recent distinct cores, newest last.
#[derive(Debug, Clone)]
pub struct RecentCores {
    cores: VecDeque<Vec<Lit>>,
    capacity: usize,
}

impl RecentCores {
    /// Remembers up to `capacity` cores.
    pub fn new(capacity: usize) -> Self {
        RecentCores {
            cores: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// Remembers `core` (a set of literals the formula refutes; empty ones say nothing
    /// about assumptions and are not kept), forgetting the oldest beyond capacity.
    pub fn learn(&mut self, core: &[Lit]) {
        let mut core = core.to_vec();
        core.sort_unstable();
        core.dedup();
        if core.is_empty() || self.capacity == 0 || self.cores.contains(&core) {
            return;
        }
        if self.cores.len() == self.capacity {
            self.cores.pop_front();
        }
        self.cores.push_back(core);
    }

    /// The union of the remembered cores that `assumptions` contain, sorted; empty when
    /// they contain none. Being a union of refuted sets, it is refuted too.
    pub fn refuting(&self, assumptions: &[Lit]) -> Vec<Lit> {
        let mut assumed = assumptions.to_vec();
        assumed.sort_unstable();
        let mut failed: Vec<Lit> = self
            .cores
            .iter()
            .filter(|core| core.iter().all(|l| assumed.binary_search(l).is_ok()))
            .flatten()
            .copied()
            .collect();
        failed.sort_unstable();
        failed.dedup();
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cores_the_assumptions_contain_refute_them() {
        let mut cores = RecentCores::new(4);
        cores.learn(&[3, -1]);
        cores.learn(&[2, 5]);
        assert_eq!(cores.refuting(&[-1, 2, 3, 4]), vec![-1, 3]);
        assert_eq!(cores.refuting(&[-1, 2, 3, 5]), vec![-1, 2, 3, 5]);
        assert!(cores.refuting(&[1, 2, 3]).is_empty(), "-1 is not assumed");
        assert!(cores.refuting(&[]).is_empty());
    }

    #[test]
    fn the_oldest_core_is_forgotten_and_repeats_are_kept_once() {
        let mut cores = RecentCores::new(2);
        cores.learn(&[1]);
        cores.learn(&[2]);
        cores.learn(&[2]);
        cores.learn(&[]);
        assert_eq!(cores.refuting(&[1, 2]), vec![1, 2]);
        cores.learn(&[3]);
        assert_eq!(cores.refuting(&[1, 2, 3]), vec![2, 3]);
    }
}
