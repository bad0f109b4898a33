//! Checking tests against every clause: the gate that nothing leaves the sampler without passing.

use crate::assignment::Assignment;
use crate::formula::Cnf;

/// Checks assignments against a formula, fully or only where they changed.
pub struct Checker<'a> {
    cnf: &'a Cnf,
    /// For each variable (from 0), the clauses it occurs in.
    occurrences: Vec<Vec<u32>>,
}

impl<'a> Checker<'a> {
    /// A checker for `cnf` (its occurrence lists built once).
    pub fn new(cnf: &'a Cnf) -> Self {
        Checker {
            cnf,
            occurrences: cnf.occurrence_lists(),
        }
    }

    /// The formula checked against.
    pub fn cnf(&self) -> &'a Cnf {
        self.cnf
    }

    #[inline]
    fn clause_holds(&self, clause: usize, a: &Assignment) -> bool {
        self.cnf.clause(clause).iter().any(|&lit| a.satisfies(lit))
    }

    /// True when the assignment satisfies every clause.
    pub fn satisfies(&self, a: &Assignment) -> bool {
        a.len() == self.cnf.num_vars() && self.first_violated(a).is_none()
    }

    /// The first clause the assignment falsifies, if any.
    pub fn first_violated(&self, a: &Assignment) -> Option<usize> {
        (0..self.cnf.num_clauses()).find(|&i| !self.clause_holds(i, a))
    }

    /// Every clause the assignment falsifies: the starting point of incremental checks.
    pub fn violated(&self, a: &Assignment) -> Vec<u32> {
        (0..self.cnf.num_clauses())
            .filter(|&i| !self.clause_holds(i, a))
            .map(|i| i as u32)
            .collect()
    }

    /// Checks `candidate = base ⊕ flipped` knowing `base_violated`, the clauses `base` falsifies:
    /// only those clauses and the ones touching a flipped variable can differ in outcome.
    pub fn satisfies_after_flips(
        &self,
        base_violated: &[u32],
        candidate: &Assignment,
        flipped: &Assignment,
    ) -> bool {
        base_violated
            .iter()
            .all(|&c| self.clause_holds(c as usize, candidate))
            && flipped.ones().all(|v| {
                self.occurrences[v]
                    .iter()
                    .all(|&c| self.clause_holds(c as usize, candidate))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn full_check_finds_the_falsified_clause() {
        let cnf = Cnf::from_clauses(3, &[vec![1, 2], vec![-1, 3], vec![-3]]);
        let checker = Checker::new(&cnf);
        let good = Assignment::from_bit_string("010").unwrap();
        let bad = Assignment::from_bit_string("100").unwrap();
        assert!(checker.satisfies(&good));
        assert_eq!(checker.first_violated(&bad), Some(1));
        assert_eq!(checker.violated(&bad), vec![1]);
        assert!(
            !checker.satisfies(&Assignment::zeros(2)),
            "wrong length is never valid"
        );
    }

    proptest! {
        #[test]
        fn incremental_check_agrees_with_full_check(
            clauses in proptest::collection::vec(proptest::collection::vec((1i32..=12, any::<bool>()), 1..4), 1..40),
            base in proptest::collection::vec(any::<bool>(), 12),
            flips in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let clauses: Vec<Vec<i32>> = clauses.iter().map(|c| c.iter().map(|&(v, n)| if n { -v } else { v }).collect()).collect();
            let cnf = Cnf::from_clauses(12, &clauses);
            let checker = Checker::new(&cnf);
            let bits = |v: &[bool]| v.iter().map(|&b| if b { '1' } else { '0' }).collect::<String>();
            let base = Assignment::from_bit_string(&bits(&base)).unwrap();
            let flipped = Assignment::from_bit_string(&bits(&flips)).unwrap();
            let candidate = base.xor(&flipped);
            let incremental = checker.satisfies_after_flips(&checker.violated(&base), &candidate, &flipped);
            prop_assert_eq!(incremental, checker.satisfies(&candidate));
        }
    }
}
