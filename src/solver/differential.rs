//! Differential checking of a session backend: its answers on random formulas, queried as the
//! sampler queries (assumptions, phases, steering, conflict limits, many queries on one
//! session), each confirmed by another solver. A model must satisfy every clause and
//! assumption; every refutation, formula-wide or of a set of failed assumptions, must be one
//! that the reference cannot satisfy. The reference is exhaustive enumeration up to
//! 14 variables and splr above.
//!
//! The unit tests run a few thousand queries; `scripts/fuzz-solver` runs millions.

use super::{Answer, IncrementalBackend, Oracle, Outcome, Query, Splr, Steering};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{literal, var_index, Cnf, Lit};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Formulas up to this many variables are decided by trying every assignment.
const ENUMERATED_VARS: usize = 14;
/// Queries asked of one session.
const QUERIES_PER_SESSION: usize = 8;

/// What the checked queries came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Queries asked.
    pub queries: u64,
    /// Models checked.
    pub models: u64,
    /// Refutations confirmed (the formula's, or of a set of failed assumptions).
    pub refutations: u64,
    /// Queries given up (a conflict limit): nothing to check.
    pub unknown: u64,
}

impl Tally {
    /// Another tally added to this one.
    pub fn add(&mut self, other: Tally) {
        self.queries += other.queries;
        self.models += other.models;
        self.refutations += other.refutations;
        self.unknown += other.unknown;
    }
}

/// A query whose answer the reference contradicts, with all it takes to ask it again.
#[derive(Debug, Clone)]
pub struct Disagreement {
    /// The seed of the formula and its session's queries.
    pub seed: u64,
    /// The formula, as DIMACS text.
    pub formula: String,
    /// The query's assumptions.
    pub assumptions: Vec<Lit>,
    /// What is wrong with the answer.
    pub why: String,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {}: {} (assumptions {:?})\n{}",
            self.seed, self.why, self.assumptions, self.formula
        )
    }
}

/// A random formula of `seed`: 3-SAT near the satisfiability threshold (about half of them
/// unsatisfiable), or planted (satisfiable), with 10 to 200 variables, sometimes with short
/// clauses and units among them.
pub fn random_formula(seed: u64) -> Cnf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let num_vars = if rng.gen_bool(0.5) {
        rng.gen_range(10..=ENUMERATED_VARS)
    } else {
        rng.gen_range(10..=200)
    };
    let planted: Option<Vec<bool>> = rng
        .gen_bool(0.3)
        .then(|| (0..num_vars).map(|_| rng.gen()).collect());
    let ratio = rng.gen_range(3.8..4.8);
    let num_clauses = (num_vars as f64 * ratio) as usize;
    // Some formulas get gates over their variables, which are then their independent
    // support, as a sketch's or a circuit's: sessions that eliminate the gates are checked
    // on them.
    let gates = if rng.gen_bool(0.3) {
        rng.gen_range(1..=8)
    } else {
        0
    };
    let mut cnf = Cnf::new(num_vars + gates);
    for _ in 0..num_clauses {
        let len = match rng.gen_range(0..100) {
            0 => 1,
            1..=5 => 2,
            _ => 3,
        };
        let mut clause: Vec<Lit> = (0..len)
            .map(|_| literal(rng.gen_range(0..num_vars), rng.gen()))
            .collect();
        if let Some(plant) = &planted {
            let v = rng.gen_range(0..num_vars);
            clause[0] = literal(v, plant[v]);
        }
        cnf.add_clause(&clause);
    }
    for gate in num_vars..num_vars + gates {
        // gate = a ∧ b over earlier variables, gates included.
        let a = literal(rng.gen_range(0..gate), rng.gen());
        let b = literal(rng.gen_range(0..gate), rng.gen());
        let g = literal(gate, true);
        cnf.add_clause(&[-g, a]);
        cnf.add_clause(&[-g, b]);
        cnf.add_clause(&[g, -a, -b]);
    }
    if gates > 0 {
        cnf.set_independent_support((1..=num_vars as u32).collect());
    }
    cnf
}

/// The reference's verdict on `cnf` with `units` true: satisfiable or not.
pub fn satisfiable(cnf: &Cnf, units: &[Lit]) -> bool {
    if cnf.num_vars() <= ENUMERATED_VARS {
        let fixed = |values: u32, lit: Lit| (values >> var_index(lit) & 1 == 1) == (lit > 0);
        return (0..1u32 << cnf.num_vars()).any(|values| {
            units.iter().all(|&u| fixed(values, u))
                && cnf.clauses().all(|c| c.iter().any(|&l| fixed(values, l)))
        });
    }
    let clauses: Vec<Vec<Lit>> = cnf
        .clauses()
        .map(<[Lit]>::to_vec)
        .chain(units.iter().map(|&u| vec![u]))
        .collect();
    let query = Query::new(cnf.num_vars(), &clauses, 0);
    match Splr.solve(&query) {
        Outcome::Sat(_) => true,
        Outcome::Unsat => false,
        Outcome::Unknown(why) => panic!("the reference gave up: {why}"),
    }
}

/// `backend`'s session on the formula of `seed`, asked 8 queries, each
/// answer confirmed.
pub fn check_session(backend: &dyn IncrementalBackend, seed: u64) -> Result<Tally, Disagreement> {
    let cnf = random_formula(seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_5e55_1015);
    let n = cnf.num_vars();
    let disagree = |assumptions: &[Lit], why: String| Disagreement {
        seed,
        formula: dimacs_text(&cnf),
        assumptions: assumptions.to_vec(),
        why,
    };
    let mut session = backend
        .open(&cnf, Budget::unlimited())
        .map_err(|e| disagree(&[], format!("the session did not open: {e}")))?;
    let mut tally = Tally::default();
    let vars: Vec<usize> = (0..n).collect();
    for _ in 0..QUERIES_PER_SESSION {
        let count = rng.gen_range(0..=8.min(n));
        let mut assumptions: Vec<Lit> = vars
            .choose_multiple(&mut rng, count)
            .map(|&v| literal(v, rng.gen()))
            .collect();
        let phases = Assignment::from_values(&(0..n).map(|_| rng.gen()).collect::<Vec<_>>());
        let steered: Vec<usize> = vars.choose_multiple(&mut rng, n / 2).copied().collect();
        let steering = match rng.gen_range(0..3) {
            0 => Steering::All,
            1 => Steering::Only(&steered),
            _ => Steering::DecideFirst(&steered),
        };
        let conflicts = rng.gen_bool(0.3).then(|| rng.gen_range(0..200));
        let asked = assumptions.clone();
        let answer = if rng.gen_bool(0.5) {
            session.solve(&assumptions, &phases, steering, conflicts)
        } else {
            session.solve_relaxing(&mut assumptions, &phases, steering, conflicts)
        };
        tally.queries += 1;
        match answer {
            Answer::Model(model) => {
                if model.len() != n {
                    return Err(disagree(
                        &asked,
                        format!("a model of {} variables", model.len()),
                    ));
                }
                if let Some(clause) = cnf
                    .clauses()
                    .position(|c| !c.iter().any(|&l| model.satisfies(l)))
                {
                    return Err(disagree(
                        &asked,
                        format!("the model falsifies clause {}", clause + 1),
                    ));
                }
                // A relaxing query keeps the assumptions it did not drop.
                if let Some(&lit) = assumptions.iter().find(|&&l| !model.satisfies(l)) {
                    return Err(disagree(
                        &asked,
                        format!("the model falsifies assumption {lit}"),
                    ));
                }
                tally.models += 1;
            }
            Answer::Refuted(failed) => {
                if let Some(&lit) = failed.iter().find(|l| !asked.contains(l)) {
                    return Err(disagree(
                        &asked,
                        format!("{lit} failed but was not assumed"),
                    ));
                }
                if satisfiable(&cnf, &failed) {
                    return Err(disagree(
                        &asked,
                        format!("refuted with {failed:?}, which the reference satisfies"),
                    ));
                }
                tally.refutations += 1;
            }
            Answer::Unknown(why) => {
                if conflicts.is_none() {
                    return Err(disagree(&asked, format!("gave up without a limit: {why}")));
                }
                tally.unknown += 1;
            }
        }
    }
    Ok(tally)
}

/// `cnf` as DIMACS text, for a disagreement to be asked again.
pub fn dimacs_text(cnf: &Cnf) -> String {
    let mut text = format!("p cnf {} {}\n", cnf.num_vars(), cnf.num_clauses());
    for clause in cnf.clauses() {
        for lit in clause {
            text.push_str(&format!("{lit} "));
        }
        text.push_str("0\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference itself: enumeration and splr agree on the small formulas.
    #[test]
    fn the_two_references_agree() {
        for seed in 0..200 {
            let cnf = random_formula(seed);
            if cnf.num_vars() > ENUMERATED_VARS {
                continue;
            }
            let clauses: Vec<Vec<Lit>> = cnf.clauses().map(<[Lit]>::to_vec).collect();
            let query = Query::new(cnf.num_vars(), &clauses, seed);
            let splr_sat = matches!(Splr.solve(&query), Outcome::Sat(_));
            assert_eq!(satisfiable(&cnf, &[]), splr_sat, "seed {seed}");
        }
    }

    /// The checker catches a backend that lies: one that refutes everything.
    #[test]
    fn a_wrong_refutation_is_caught() {
        struct Liar;
        struct LyingSolver;
        impl super::super::IncrementalSolver for LyingSolver {
            fn solve(
                &mut self,
                assumptions: &[Lit],
                _: &Assignment,
                _: Steering,
                _: Option<u32>,
            ) -> Answer {
                Answer::Refuted(assumptions.to_vec())
            }
            fn solver_calls(&self) -> u64 {
                0
            }
            fn conflicts(&self) -> u64 {
                0
            }
            fn open_variables(&self) -> usize {
                0
            }
        }
        impl IncrementalBackend for Liar {
            fn name(&self) -> &'static str {
                "liar"
            }
            fn open<'a>(
                &self,
                _: &'a Cnf,
                _: Budget<'a>,
            ) -> Result<Box<dyn super::super::IncrementalSolver + 'a>, String> {
                Ok(Box::new(LyingSolver))
            }
        }
        let caught = (0..50).any(|seed| check_session(&Liar, seed).is_err());
        assert!(caught, "no lie was caught in 50 sessions");
    }

    /// The native search against the references: a few thousand queries.
    #[test]
    fn native_answers_agree_with_the_references() {
        let mut tally = Tally::default();
        for seed in 0..700 {
            match check_session(&super::super::native::Native, seed) {
                Ok(t) => tally.add(t),
                Err(disagreement) => panic!("{disagreement}"),
            }
        }
        assert!(tally.queries >= 5_000, "{tally:?}");
        assert!(tally.models > 0 && tally.refutations > 0, "{tally:?}");
    }

    #[cfg(feature = "cadical")]
    #[test]
    fn cadical_answers_agree_with_the_references() {
        let mut tally = Tally::default();
        for seed in 0..700 {
            match check_session(&super::super::cadical::Cadical, seed) {
                Ok(t) => tally.add(t),
                Err(disagreement) => panic!("{disagreement}"),
            }
        }
        assert!(tally.queries >= 5_000, "{tally:?}");
    }
}
