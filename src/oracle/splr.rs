//! splr 0.17 as an [`Oracle`]: rebuilt for every query, made diverse by input perturbation.
//!
//! splr has no seed, no assumptions and no phase API: diversity comes from renaming variables
//! (which reorders splr's decisions) under a seed. A preferred value is shown by flipping the
//! polarity of a variable in the input, so that splr, which decides false first, tries it
//! first. But splr 0.17.2 first sets each variable's phase to the sign it occurs with more
//! often, which a flip does not change, and then saves phases as it searches: on the case
//! studies its models agree with random preferred values on 49-52% of the variables, as any
//! assignment would, and with each variable's more frequent sign on 72-81%
//! (enqueueSeqSK.sk_10_42, LoginService2.sk_23_36, s820a_7_4). Preferences steer it only on
//! small formulas, so they are a hint. Making each preferred sign the more frequent one, with
//! clauses a fresh variable satisfies, made splr follow them where they were a model, but
//! repairs got slower (enqueueSeqSK, 300 tests: 63 s against 45 s) and QuickSampler's atomic
//! mutations no nearer σ; not kept (`results/README.md`, "splr on the 8 slowest", session 30).
//! splr's clause elimination must stay on:
//! with `enable_eliminator = false`, 0.17.2 answers UNSAT on satisfiable formulas. Where little
//! simplification pays, it is kept from most eliminations instead
//! (`LIGHT_ELIMINATION_OCCURRENCE_LIMIT`).

use super::{Oracle, Outcome, Preprocessing, Query};
use crate::formula::{var_index, Lit};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Under [`Preprocessing::Light`], splr eliminates a variable only while its positive ×
/// negative occurrences are at most this (its default: 20,000). Rebuilt for every query, splr
/// spent about half of a repair-bound run eliminating the same variables again (perf,
/// 20.sk_1_51); bounded, repairs took 0.4-1.0x the time. Fresh solutions from scratch keep
/// the default: they are long searches that elimination shortens (bounded, sort.sk_8_52 found
/// less than half as many in 120 s), unless the sampler eliminated the formula once itself
/// ([`crate::eliminate`]). Figures: `results/README.md`, "splr on the 8 slowest".
const LIGHT_ELIMINATION_OCCURRENCE_LIMIT: usize = 8;

/// splr 0.17, made diverse by input perturbation.
#[derive(Debug, Default, Clone, Copy)]
pub struct Splr;

impl Oracle for Splr {
    fn solve(&self, query: &Query) -> Outcome {
        let n = query.num_vars;
        if query.clauses.iter().any(|c| c.is_empty()) {
            return Outcome::Unsat;
        }
        if n == 0 {
            return Outcome::Sat(Vec::new());
        }
        let mut rng = ChaCha8Rng::seed_from_u64(query.seed);
        // Variable v (from 0) is shown to splr as renamed[v] + 1, negated when flipped[v].
        let mut renamed: Vec<u32> = (0..n as u32).collect();
        renamed.shuffle(&mut rng);
        let flipped: Vec<bool> = match query.preferred {
            // splr decides false first where occurrences tie, so a variable preferred true is
            // shown negated.
            Some(preferred) => preferred.to_vec(),
            None => (0..n).map(|_| rng.gen()).collect(),
        };
        let shown = |lit: Lit| -> i32 {
            let v = var_index(lit);
            let name = renamed[v] as i32 + 1;
            if (lit < 0) != flipped[v] {
                -name
            } else {
                name
            }
        };
        let clauses: Vec<Vec<i32>> = query
            .clauses
            .iter()
            .map(|c| c.iter().map(|&l| shown(l)).collect())
            .collect();
        let mut config = splr::Config {
            quiet_mode: true,
            ..Default::default()
        };
        if query.preprocessing == Preprocessing::Light {
            config.elm_var_occ = LIGHT_ELIMINATION_OCCURRENCE_LIMIT;
        }
        if let Some(t) = query.timeout {
            // splr counts whole seconds.
            config.c_timeout = t.as_secs_f64().ceil().max(1.0);
        }
        // Variables that occur in no clause are unknown to splr and come back false, which
        // the polarity flip turns into the preferred value.
        let mut solver = match splr::Solver::try_from((config, clauses.as_slice())) {
            Ok(solver) => solver,
            Err(Ok(splr::Certificate::UNSAT)) => return Outcome::Unsat,
            Err(Ok(splr::Certificate::SAT(_))) => unreachable!("splr does not solve while loading"),
            Err(Err(splr::SolverError::EmptyClause | splr::SolverError::RootLevelConflict(_))) => {
                return Outcome::Unsat
            }
            Err(Err(e)) => {
                return Outcome::Unknown(format!("splr could not load the formula: {e}"))
            }
        };
        use splr::SolveIF;
        match solver.solve() {
            Ok(splr::Certificate::SAT(model)) => {
                let mut shown_value = vec![false; n];
                for lit in model {
                    let v = lit.unsigned_abs() as usize;
                    if v >= 1 && v <= n {
                        shown_value[v - 1] = lit > 0;
                    }
                }
                Outcome::Sat(
                    (0..n)
                        .map(|v| shown_value[renamed[v] as usize] != flipped[v])
                        .collect(),
                )
            }
            Ok(splr::Certificate::UNSAT) => Outcome::Unsat,
            Err(splr::SolverError::TimeOut) => Outcome::Unknown("time-out".into()),
            Err(splr::SolverError::EmptyClause | splr::SolverError::RootLevelConflict(_)) => {
                Outcome::Unsat
            }
            Err(e) => Outcome::Unknown(format!("splr: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query<'a>(
        n: usize,
        clauses: &'a [Vec<Lit>],
        preferred: Option<&'a [bool]>,
        seed: u64,
    ) -> Query<'a> {
        Query {
            num_vars: n,
            clauses,
            preferred,
            seed,
            timeout: None,
            preprocessing: Preprocessing::Full,
        }
    }

    fn satisfies(clauses: &[Vec<Lit>], model: &[bool]) -> bool {
        clauses
            .iter()
            .all(|c| c.iter().any(|&l| model[var_index(l)] == (l > 0)))
    }

    #[test]
    fn models_satisfy_and_unsat_is_reported() {
        let clauses = vec![vec![1, 2], vec![-1, 3], vec![-2, -3], vec![2, 3, 4]];
        for seed in 0..20 {
            match Splr.solve(&query(4, &clauses, None, seed)) {
                Outcome::Sat(m) => assert!(satisfies(&clauses, &m)),
                other => panic!("expected a model, got {other:?}"),
            }
        }
        let unsat = vec![vec![1], vec![-1, 2], vec![-2]];
        assert_eq!(Splr.solve(&query(2, &unsat, None, 0)), Outcome::Unsat);
        assert_eq!(
            Splr.solve(&query(2, &[vec![1], vec![]], None, 0)),
            Outcome::Unsat
        );
    }

    /// A planted random 3-CNF of `n` variables and `3n` clauses, loose enough to leave choices.
    fn loose(n: i32) -> Vec<Vec<Lit>> {
        (0..3 * n)
            .map(|i| {
                vec![
                    1 + (i * 7) % n,
                    -(1 + (i * 13 + 5) % n),
                    1 + (i * 29 + 11) % n,
                ]
            })
            .collect()
    }

    /// On a formula this small the flips steer splr; on the case studies they do not (see the
    /// module's documentation).
    #[test]
    fn preferred_values_steer_the_model() {
        let clauses = loose(60);
        let ones = |pref: bool| match Splr.solve(&query(60, &clauses, Some(&[pref; 60]), 3)) {
            Outcome::Sat(m) => {
                assert!(satisfies(&clauses, &m));
                m.iter().filter(|&&b| b).count()
            }
            other => panic!("expected a model, got {other:?}"),
        };
        assert!(
            ones(true) > ones(false),
            "{} vs {}",
            ones(true),
            ones(false)
        );
    }

    /// Random formulas with a planted model, `count` of them with up to `max_vars`
    /// variables, each solved under its own seed with either preprocessing; every one must
    /// come back with a model.
    fn check_planted_formulas(count: u64, max_vars: u64) {
        let mut state = 1u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        for round in 0..count {
            let n = next(max_vars) as i32 + 3;
            let plant: Vec<bool> = (0..n).map(|_| next(2) == 0).collect();
            let clauses: Vec<Vec<Lit>> = (0..next(5 * n as u64) + 1)
                .map(|_| {
                    let mut c: Vec<Lit> = (0..next(4) + 1)
                        .map(|_| {
                            let v = next(n as u64) as i32 + 1;
                            if next(2) == 0 {
                                v
                            } else {
                                -v
                            }
                        })
                        .collect();
                    let v = next(n as u64) as usize;
                    c[0] = if plant[v] {
                        v as i32 + 1
                    } else {
                        -(v as i32 + 1)
                    };
                    c
                })
                .collect();
            for preprocessing in [Preprocessing::Full, Preprocessing::Light] {
                let query = Query {
                    preprocessing,
                    ..query(n as usize, &clauses, None, round)
                };
                match Splr.solve(&query) {
                    Outcome::Sat(m) => {
                        assert!(satisfies(&clauses, &m), "bad model on {clauses:?}")
                    }
                    other => panic!("{other:?} ({preprocessing:?}) on satisfiable {clauses:?}"),
                }
            }
        }
    }

    /// Guards the solver build: with some feature sets or settings (its eliminator off)
    /// splr 0.17.2 answers UNSAT on satisfiable formulas.
    #[test]
    fn planted_formulas_are_always_satisfiable() {
        check_planted_formulas(400, 30);
    }

    /// The same on 20,000 formulas of up to 200 variables, for a change to splr's settings:
    /// `cargo test --release -- --ignored planted`.
    #[test]
    #[ignore = "minutes in a debug build; run in release when splr's settings change"]
    fn many_planted_formulas_are_always_satisfiable() {
        check_planted_formulas(20_000, 200);
    }

    #[test]
    fn different_seeds_give_different_models() {
        let clauses = loose(60);
        let models: std::collections::HashSet<_> = (0..20)
            .filter_map(|seed| match Splr.solve(&query(60, &clauses, None, seed)) {
                Outcome::Sat(m) => Some(m),
                _ => None,
            })
            .collect();
        assert!(models.len() > 5, "only {} distinct models", models.len());
    }
}
