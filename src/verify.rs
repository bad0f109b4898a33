//! Checking tests against every clause: the gate that nothing leaves the sampler without passing.

use crate::assignment::Assignment;
use crate::formula::{var_index, Cnf, Lit};
use crate::propagate::forced_values;

/// Checks assignments against a formula, fully or only where they changed.
pub struct Checker<'a> {
    cnf: &'a Cnf,
    /// For each variable (from 0), the clauses it occurs in.
    occurrences: Vec<Vec<u32>>,
    /// The variables the unit clauses force through propagation ([`forced_values`]), as
    /// whole words, and the values they force. Every model has them, so a test that has them
    /// too satisfies every clause with a forced-true literal: those clauses (units included;
    /// on sketches most of the formula) are checked 64 variables at a time and not one by one.
    forced_mask: Vec<u64>,
    forced_values: Vec<u64>,
    /// Clauses of one or two literals without a forced-true literal, as [`packed`] literals
    /// (a unit written twice).
    pairs: Vec<[u32; 2]>,
    /// Clauses of three literals, as [`packed`] literals.
    triples: Vec<[u32; 3]>,
    /// The other clauses, by index.
    longer: Vec<u32>,
}

/// A literal as `variable index << 1 | positive`, the form the full check reads.
fn packed(lit: Lit) -> u32 {
    (var_index(lit) as u32) << 1 | u32::from(lit > 0)
}

impl<'a> Checker<'a> {
    /// A checker for `cnf` (its occurrence lists built once).
    pub fn new(cnf: &'a Cnf) -> Self {
        let (forced, open) = forced_values(cnf);
        let mut forced_mask = vec![!0u64; forced.words().len()];
        for &v in &open {
            forced_mask[v as usize / 64] &= !(1u64 << (v % 64));
        }
        if let Some(last) = forced_mask.last_mut() {
            if !cnf.num_vars().is_multiple_of(64) {
                *last &= (1u64 << (cnf.num_vars() % 64)) - 1;
            }
        }
        let forced_true = |lit: Lit| {
            let v = var_index(lit);
            forced_mask[v / 64] >> (v % 64) & 1 == 1 && forced.satisfies(lit)
        };
        let (mut pairs, mut triples, mut longer) = (Vec::new(), Vec::new(), Vec::new());
        for (i, clause) in cnf.clauses().enumerate() {
            if clause.iter().any(|&lit| forced_true(lit)) {
                continue;
            }
            match *clause {
                [a] => pairs.push([packed(a), packed(a)]),
                [a, b] => pairs.push([packed(a), packed(b)]),
                [a, b, c] => triples.push([packed(a), packed(b), packed(c)]),
                _ => longer.push(i as u32),
            }
        }
        Checker {
            cnf,
            occurrences: cnf.occurrence_lists(),
            forced_values: forced.words().to_vec(),
            forced_mask,
            pairs,
            triples,
            longer,
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
        a.len() == self.cnf.num_vars() && self.all_hold(a)
    }

    /// Every clause holds. Made on every test the sampler emits, so it is written for speed:
    /// whether a literal is true is as random as the test, and branching on it (stopping at
    /// the first true literal) was mispredicted so often that the short clauses that make up
    /// most formulas are checked as fixed-size rows with the outcomes combined, no branch.
    fn all_hold(&self, a: &Assignment) -> bool {
        let words = a.words();
        let holds = |lit: u32| {
            let v = (lit >> 1) as usize;
            (words[v / 64] >> (v % 64)) as u32 & 1 == lit & 1
        };
        let mut every = words.len() == self.forced_mask.len();
        for ((word, mask), values) in words.iter().zip(&self.forced_mask).zip(&self.forced_values) {
            every &= word & mask == *values;
        }
        for &[x, y] in &self.pairs {
            every &= holds(x) | holds(y);
        }
        for &[x, y, z] in &self.triples {
            every &= holds(x) | holds(y) | holds(z);
        }
        every
            && self
                .longer
                .iter()
                .all(|&c| self.clause_holds(c as usize, a))
    }

    /// The first clause the assignment falsifies, if any.
    pub fn first_violated(&self, a: &Assignment) -> Option<usize> {
        if self.all_hold(a) {
            return None;
        }
        (0..self.cnf.num_clauses()).find(|&i| !self.clause_holds(i, a))
    }

    /// Every clause the assignment falsifies: the starting point of incremental checks.
    pub fn violated(&self, a: &Assignment) -> Vec<u32> {
        (0..self.cnf.num_clauses())
            .filter(|&i| !self.clause_holds(i, a))
            .map(|i| i as u32)
            .collect()
    }

    /// True when `a` satisfies every clause, given that `valid` does (a test that passed a
    /// check). A clause none of whose variables changed keeps its outcome, so only the
    /// clauses of the variables where the two differ are checked; every clause, when they
    /// differ on more than a sixteenth of the variables. Consecutive tests of one solver
    /// session differ little (46 of 10,090 variables on 17.sk_3_45, median), and after
    /// CaDiCaL's sessions had shed what it fixes, the full check was a third of the
    /// solver thread's time there.
    pub fn satisfies_near(&self, a: &Assignment, valid: &Assignment) -> bool {
        if a.len() != self.cnf.num_vars() || valid.len() != a.len() {
            return self.satisfies(a);
        }
        let flipped = a.xor(valid);
        if flipped.count_ones() * 16 > a.len() {
            return self.all_hold(a);
        }
        self.satisfies_after_flips(&[], a, &flipped)
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

    /// A unit clause and its negation: no assignment satisfies both.
    #[test]
    fn contradictory_units_reject_every_assignment() {
        let cnf = Cnf::from_clauses(2, &[vec![2], vec![-2]]);
        let checker = Checker::new(&cnf);
        for bits in ["00", "01", "10", "11"] {
            let a = Assignment::from_bit_string(bits).unwrap();
            assert!(!checker.satisfies(&a), "{bits}");
            assert!(checker.first_violated(&a).is_some(), "{bits}");
        }
    }

    proptest! {
        /// The full check (units by words, short clauses as rows, the rest one by one) says
        /// what the definition says: some literal of every clause is true.
        #[test]
        fn full_check_agrees_with_the_definition(
            clauses in crate::testing::arbitrary_clauses(70, 6, 60),
            bits in proptest::collection::vec(any::<bool>(), 70),
        ) {
            let cnf = Cnf::from_clauses(70, &clauses);
            let a = Assignment::from_bit_string(&bits.iter().map(|&b| if b { '1' } else { '0' }).collect::<String>()).unwrap();
            let holds = |c: &Vec<i32>| c.iter().any(|&l| a.satisfies(l));
            let checker = Checker::new(&cnf);
            prop_assert_eq!(checker.satisfies(&a), clauses.iter().all(holds));
            prop_assert_eq!(checker.first_violated(&a), clauses.iter().position(|c| !holds(c)));
        }

        #[test]
        fn incremental_check_agrees_with_full_check(
            clauses in crate::testing::arbitrary_clauses(12, 4, 40),
            base in proptest::collection::vec(any::<bool>(), 12),
            flips in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let cnf = Cnf::from_clauses(12, &clauses);
            let checker = Checker::new(&cnf);
            let bits = |v: &[bool]| v.iter().map(|&b| if b { '1' } else { '0' }).collect::<String>();
            let base = Assignment::from_bit_string(&bits(&base)).unwrap();
            let flipped = Assignment::from_bit_string(&bits(&flips)).unwrap();
            let candidate = base.xor(&flipped);
            let incremental = checker.satisfies_after_flips(&checker.violated(&base), &candidate, &flipped);
            prop_assert_eq!(incremental, checker.satisfies(&candidate));
        }

        /// Checked near a valid test, an assignment passes exactly when the full check passes
        /// it: a few flips (checked where they are) or many (checked in full).
        #[test]
        fn the_check_near_a_valid_test_agrees_with_the_full_check(
            clauses in crate::testing::arbitrary_clauses(40, 4, 60),
            bits in proptest::collection::vec(any::<bool>(), 40),
            flips in proptest::collection::vec(0..40usize, 0..8),
        ) {
            // A valid test: the random bits, with each falsified clause's first literal made
            // true in turn until none is left (or give up on an unsatisfiable mix).
            let cnf = Cnf::from_clauses(40, &clauses);
            let checker = Checker::new(&cnf);
            let mut valid = Assignment::from_bit_string(&bits.iter().map(|&b| if b { '1' } else { '0' }).collect::<String>()).unwrap();
            for _ in 0..200 {
                match checker.first_violated(&valid) {
                    Some(c) => {
                        let l = cnf.clause(c)[0];
                        valid.set(var_index(l), l > 0);
                    }
                    None => break,
                }
            }
            prop_assume!(checker.satisfies(&valid));
            let mut a = valid.clone();
            for &v in &flips {
                a.set(v, !a.get(v));
            }
            prop_assert_eq!(checker.satisfies_near(&a, &valid), checker.satisfies(&a));
        }
    }
}
