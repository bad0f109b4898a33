//! Formula generators shared by the tests of every module (and by benchmarks): planted
//! random 3-CNFs, satisfiable by construction, with their planted model, and a small
//! unsatisfiable formula; and the verdict a worker gives a test, for workforces that make
//! their verdicts up.

use crate::assignment::Assignment;
use crate::formula::{literal, Cnf};
use crate::sampler::repair::Completed;
use crate::sampler::task::Verdict;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random 3-CNF satisfied by a planted assignment (returned with it): each clause keeps
/// one planted literal.
pub fn planted(num_vars: usize, num_clauses: usize, seed: u64) -> (Cnf, Assignment) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let plant: Vec<bool> = (0..num_vars).map(|_| rng.gen()).collect();
    let mut cnf = Cnf::new(num_vars);
    for _ in 0..num_clauses {
        let mut clause: Vec<i32> = (0..3)
            .map(|_| {
                let v = rng.gen_range(0..num_vars);
                literal(v, rng.gen())
            })
            .collect();
        let v = rng.gen_range(0..num_vars);
        clause[0] = literal(v, plant[v]);
        cnf.add_clause(&clause);
    }
    (cnf, Assignment::from_values(&plant))
}

/// Two variables, every combination of their values excluded: unsatisfiable, and with no
/// unit clause, so that propagation alone cannot tell and a solver must refute it.
pub fn unsatisfiable() -> Cnf {
    Cnf::from_clauses(2, &[vec![1, 2], vec![-1, 2], vec![1, -2], vec![-1, -2]])
}

/// Proptest strategy: 1 to `max_clauses - 1` clauses of 1 to `max_len - 1` literals over
/// variables `1..=num_vars`, as DIMACS literals.
#[cfg(test)]
pub fn arbitrary_clauses(
    num_vars: i32,
    max_len: usize,
    max_clauses: usize,
) -> impl proptest::strategy::Strategy<Value = Vec<Vec<i32>>> {
    use proptest::prelude::*;
    let lit = (1..=num_vars, any::<bool>()).prop_map(|(v, negated)| if negated { -v } else { v });
    proptest::collection::vec(proptest::collection::vec(lit, 1..max_len), 1..max_clauses)
}

/// `test` as a worker's verdict on it: completed by one solver call, fingerprinted. The test
/// is taken as checked: a workforce that makes its verdicts up must make valid tests.
pub fn solved(test: Assignment) -> Verdict {
    let fingerprint = test.fingerprint();
    let done = Completed::solved(test, 1);
    Verdict::Completed { done, fingerprint }
}
