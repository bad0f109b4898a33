use super::restarts::luby;
use super::*;
use crate::assignment::Assignment;
use crate::formula::literal;
use crate::verify::Checker;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Searches long enough to restart, to minimize many learned clauses and (on half the
/// formulas) to reduce them (planted 3-SAT, five clauses a variable: 16,000 conflicts
/// and 80 restarts in all) find models of formulas and assumptions the planted model
/// satisfies, never a refutation; under assumptions it may not satisfy, what they name
/// as failing is among the assumptions and not all true in the planted model.
#[test]
fn long_searches_stay_sound() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut models, mut refuted) = (0, 0);
    for seed in 0..30 {
        let (cnf, planted) = crate::testing::planted(300, 1500, seed);
        let checker = Checker::new(&cnf);
        let mut search = Refuter::new(&cnf);
        // Half the formulas see their learned clauses reduced many times a search.
        if seed % 2 == 1 {
            search.reduce_every = 20;
        }
        for query in 0..6 {
            for v in 0..300 {
                search.set_phase(v, rng.gen());
            }
            let assumptions: Vec<Lit> = (0..rng.gen_range(0..12))
                .map(|_| {
                    let v = rng.gen_range(0..300);
                    let value = if query % 2 == 0 {
                        planted.get(v)
                    } else {
                        rng.gen()
                    };
                    literal(v, value)
                })
                .collect();
            match search.search(&assumptions, u32::MAX, &|| false) {
                Found::Model(model) => {
                    assert!(checker.satisfies(&model), "seed {seed}");
                    assert!(assumptions.iter().all(|&l| model.satisfies(l)));
                    models += 1;
                }
                Found::Refuted(failed) => {
                    assert!(query % 2 == 1, "seed {seed}: the planted model holds");
                    assert!(failed.iter().all(|l| assumptions.contains(l)));
                    assert!(!failed.iter().all(|&l| planted.satisfies(l)));
                    refuted += 1;
                }
                Found::GaveUp => panic!("no limit was set"),
            }
        }
    }
    assert!(models >= 90 && refuted > 0, "{models} {refuted}");
}

#[test]
fn restarts_follow_luby_s_sequence() {
    let terms: Vec<u64> = (0..15).map(luby).collect();
    assert_eq!(terms, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]);
    let mut restarts = Restarts::default();
    let at: Vec<u64> = (1..=700).filter(|_| restarts.due()).collect();
    assert_eq!(at, [100, 200, 400, 500, 600]);
}

/// The models of `cnf` (8 variables) that make every literal of `assumptions` true.
fn models(cnf: &Cnf, assumptions: &[Lit]) -> usize {
    let checker = Checker::new(cnf);
    (0u32..256)
        .filter(|bits| {
            let text: String = (0..8)
                .map(|v| if bits >> v & 1 == 1 { '1' } else { '0' })
                .collect();
            let a = Assignment::from_bit_string(&text).unwrap();
            checker.satisfies(&a) && assumptions.iter().all(|&l| a.satisfies(l))
        })
        .count()
}

#[test]
fn refutes_what_needs_search_and_spares_what_holds() {
    // Under x4 every value of x1 falsifies a clause: no single propagation tells.
    let clauses: Vec<Vec<Lit>> = [[1, 2], [1, -2], [-1, 3], [-1, -3]]
        .iter()
        .map(|pair| vec![-4, pair[0], pair[1]])
        .collect();
    let cnf = Cnf::from_clauses(4, &clauses);
    let mut refuter = Refuter::new(&cnf);
    assert!(refuter.refutes(&[4], 10, &|| false));
    assert!(!refuter.refutes(&[-4], 10, &|| false));
    assert!(!refuter.refutes(&[], 10, &|| false));
    // What it learned under x4 is a consequence of the formula: ¬x4 is.
    assert!(refuter.refutes(&[4, 2], 0, &|| false));
    assert!(Refuter::new(&Cnf::from_clauses(1, &[vec![1], vec![-1]])).refutes(&[], 0, &|| false));
}

#[test]
fn models_follow_the_phases_where_the_formula_lets_them() {
    // x1 ∨ x2 and x3 free: any phases give a model, and with no conflict the one they give.
    let cnf = Cnf::from_clauses(3, &[vec![1, 2]]);
    let mut search = Refuter::new(&cnf);
    for phases in ["010", "101", "110"] {
        let wanted = Assignment::from_bit_string(phases).unwrap();
        for v in 0..3 {
            search.set_phase(v, wanted.get(v));
        }
        assert_eq!(search.search(&[], 10, &|| false), Found::Model(wanted));
    }
    // Under ¬x1 and ¬x2 the clause fails: both are named, not the unrelated x3.
    match search.search(&[3, -1, -2], 10, &|| false) {
        Found::Refuted(mut failed) => {
            failed.sort_unstable();
            assert_eq!(failed, vec![-2, -1]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(search.open_variables(), 3);
}

/// An assumption false under those placed before it is dropped alone: the one it fails
/// with stays, as do the assumptions after it; one that only search refutes is dropped
/// too; assumptions that hold together are all kept.
#[test]
fn a_relaxing_search_drops_each_failed_assumption_alone() {
    // x1 and x2 exclude each other; under x4 every value of x5 falsifies a clause.
    let mut clauses = vec![vec![-1, -2]];
    clauses.extend(
        [[5, 6], [5, -6], [-5, 7], [-5, -7]]
            .iter()
            .map(|pair| vec![-4, pair[0], pair[1]]),
    );
    let cnf = Cnf::from_clauses(7, &clauses);
    let checker = Checker::new(&cnf);
    let mut search = Refuter::new(&cnf);
    let mut assumptions = vec![1, 2, 3];
    let Found::Model(model) = search.search_relaxing(&mut assumptions, 10, &|| false) else {
        panic!("a model without x2");
    };
    assert_eq!(assumptions, [1, 3], "x2 fails under x1; x1 stays");
    assert!(checker.satisfies(&model) && model.satisfies(1) && model.satisfies(3));
    // x4 is refuted only by search; what it learns drops x4 and keeps the rest.
    let mut assumptions = vec![3, 4, -1];
    let Found::Model(model) = search.search_relaxing(&mut assumptions, 10, &|| false) else {
        panic!("a model without x4");
    };
    assert_eq!(assumptions, [3, -1]);
    assert!(checker.satisfies(&model) && model.satisfies(3) && model.satisfies(-1));
    let mut holding = vec![2, -4, 3];
    assert!(matches!(
        search.search_relaxing(&mut holding, 10, &|| false),
        Found::Model(_)
    ));
    assert_eq!(holding, [2, -4, 3]);
    // A contradictory formula is refuted, as `search` says.
    let mut none = Refuter::new(&Cnf::from_clauses(1, &[vec![1], vec![-1]]));
    assert_eq!(
        none.search_relaxing(&mut vec![1], 10, &|| false),
        Found::Refuted(Vec::new())
    );
}

/// Past its conflicts' threshold, a relaxing search drops an assumption found false with
/// the assumptions it failed with, and keeps those before them placed.
#[test]
fn a_relaxing_search_drops_failed_sets_whole_past_its_threshold() {
    // x2 and x3 exclude each other; x1 and x4 are free.
    let cnf = Cnf::from_clauses(4, &[vec![-2, -3]]);
    let checker = Checker::new(&cnf);
    let mut search = Refuter::new(&cnf);
    search.drop_sets_after = 0;
    let mut assumptions = vec![1, 2, 3, 4];
    let Found::Model(model) = search.search_relaxing(&mut assumptions, 10, &|| false) else {
        panic!("a model without x2 and x3");
    };
    assert_eq!(assumptions, [1, 4], "x3 fails with x2: both go");
    assert!(checker.satisfies(&model) && model.satisfies(1) && model.satisfies(4));
    search.drop_sets_after = u32::MAX;
    let mut assumptions = vec![1, 2, 3, 4];
    assert!(matches!(
        search.search_relaxing(&mut assumptions, 10, &|| false),
        Found::Model(_)
    ));
    assert_eq!(assumptions, [1, 2, 4], "below the threshold x3 goes alone");
}

#[test]
fn probing_fixes_a_failed_literal_and_keeps_the_phases() {
    // x1 implies x2 and ¬x2: x1 fails, ¬x1 holds at the root; x3 stays open.
    let cnf = Cnf::from_clauses(3, &[vec![-1, 2], vec![-1, -2], vec![2, 3]]);
    let mut search = Refuter::new(&cnf);
    for v in 0..3 {
        search.set_phase(v, true);
    }
    assert_eq!(search.open_variables(), 3);
    assert_eq!(search.probe(&|| false), 1);
    assert_eq!(search.open_variables(), 2);
    // The phases set before are the ones the search follows after.
    assert_eq!(
        search.search(&[], 10, &|| false),
        Found::Model(Assignment::from_bit_string("011").unwrap())
    );
    // Probing gives up when told, having fixed nothing.
    let mut told = Refuter::new(&cnf);
    assert_eq!(told.probe(&|| true), 0);
    assert_eq!(told.open_variables(), 3);
}

proptest! {
    /// Asked a run of questions, one refuter (keeping what it learns, and dropping it
    /// when `max_learned` says) refutes exactly the assumptions no model satisfies when
    /// its conflicts are not bounded, and never refutes a satisfiable one when they are.
    #[test]
    fn refutes_exactly_the_assumptions_no_model_satisfies(
        clauses in crate::testing::arbitrary_clauses(8, 4, 28),
        questions in proptest::collection::vec(
            proptest::collection::vec((0usize..8, any::<bool>()), 0..5), 1..6),
        max_learned in 0usize..4,
    ) {
        let cnf = Cnf::from_clauses(8, &clauses);
        let mut unbounded = Refuter::new(&cnf);
        let mut bounded = Refuter::new(&cnf);
        unbounded.max_learned = max_learned;
        bounded.max_learned = max_learned;
        for question in &questions {
            let assumptions: Vec<Lit> = question.iter().map(|&(v, b)| literal(v, b)).collect();
            let satisfiable = models(&cnf, &assumptions) > 0;
            prop_assert_eq!(unbounded.refutes(&assumptions, u32::MAX, &|| false), !satisfiable);
            if bounded.refutes(&assumptions, 2, &|| false) {
                prop_assert!(!satisfiable);
            }
        }
    }

    /// Probing fixes at the root only what every model holds, or finds the formula has
    /// none; afterwards the search answers as before: a model, or a refutation exactly
    /// where no model satisfies the assumptions.
    #[test]
    fn probing_fixes_only_what_every_model_holds(
        clauses in crate::testing::arbitrary_clauses(8, 4, 28),
        questions in proptest::collection::vec(
            proptest::collection::vec((0usize..8, any::<bool>()), 0..5), 1..6),
    ) {
        let cnf = Cnf::from_clauses(8, &clauses);
        let mut search = Refuter::new(&cnf);
        search.probe(&|| false);
        if search.contradictory {
            prop_assert_eq!(models(&cnf, &[]), 0);
        }
        let root = search.trail.clone();
        for &lit in &root {
            prop_assert_eq!(models(&cnf, &[-lit]), 0, "{} is no consequence", lit);
        }
        for question in &questions {
            let assumptions: Vec<Lit> = question.iter().map(|&(v, b)| literal(v, b)).collect();
            let satisfiable = models(&cnf, &assumptions) > 0;
            prop_assert_eq!(search.refutes(&assumptions, u32::MAX, &|| false), !satisfiable);
        }
    }

    /// Asked a run of questions under phases, one search's models satisfy the formula and
    /// the assumptions, and the assumptions it names as failing have no model together.
    #[test]
    fn models_hold_and_failed_assumptions_fail_together(
        clauses in crate::testing::arbitrary_clauses(8, 4, 28),
        questions in proptest::collection::vec(
            (proptest::collection::vec((0usize..8, any::<bool>()), 0..5),
             proptest::collection::vec(any::<bool>(), 8)), 1..6),
    ) {
        let cnf = Cnf::from_clauses(8, &clauses);
        let checker = Checker::new(&cnf);
        let mut search = Refuter::new(&cnf);
        for (question, phases) in &questions {
            let assumptions: Vec<Lit> = question.iter().map(|&(v, b)| literal(v, b)).collect();
            for (v, &phase) in phases.iter().enumerate() {
                search.set_phase(v, phase);
            }
            match search.search(&assumptions, u32::MAX, &|| false) {
                Found::Model(model) => {
                    prop_assert!(checker.satisfies(&model));
                    prop_assert!(assumptions.iter().all(|&l| model.satisfies(l)));
                }
                Found::Refuted(failed) => {
                    prop_assert!(failed.iter().all(|l| assumptions.contains(l)));
                    prop_assert_eq!(models(&cnf, &failed), 0);
                }
                Found::GaveUp => prop_assert!(false, "no limit was set"),
            }
        }
    }

    /// A relaxing search (asked a run of questions, as a repair lane's session is) keeps
    /// assumptions in their order, drops only ones that fail with some asked before them
    /// (or, past its conflicts' threshold, with a set a later dropped one failed with),
    /// keeps all where they hold together, and gives a model of the formula with every
    /// kept one true; a refutation only where the formula has no model.
    #[test]
    fn a_relaxing_search_keeps_what_holds_and_gives_a_model(
        clauses in crate::testing::arbitrary_clauses(8, 4, 28),
        questions in proptest::collection::vec(
            (proptest::collection::vec((0usize..8, any::<bool>()), 0..8),
             proptest::collection::vec(any::<bool>(), 8)), 1..6),
        drop_sets_after in prop_oneof![Just(0), 1u32..4, Just(u32::MAX)],
    ) {
        let cnf = Cnf::from_clauses(8, &clauses);
        let checker = Checker::new(&cnf);
        let mut search = Refuter::new(&cnf);
        search.drop_sets_after = drop_sets_after;
        for (question, phases) in &questions {
            let asked: Vec<Lit> = question.iter().map(|&(v, b)| literal(v, b)).collect();
            for (v, &phase) in phases.iter().enumerate() {
                search.set_phase(v, phase);
            }
            let mut kept = asked.clone();
            match search.search_relaxing(&mut kept, u32::MAX, &|| false) {
                Found::Model(model) => {
                    prop_assert!(checker.satisfies(&model));
                    prop_assert!(kept.iter().all(|&l| model.satisfies(l)));
                    let mut rest = asked.iter();
                    prop_assert!(kept.iter().all(|l| rest.any(|a| a == l)), "in order");
                    if models(&cnf, &asked) > 0 {
                        prop_assert_eq!(&kept, &asked);
                    }
                    // Each dropped assumption failed with those asked before it (alone),
                    // or with a set that failed with a later dropped one (whole sets).
                    let dropped: Vec<usize> =
                        (0..asked.len()).filter(|&i| !kept.contains(&asked[i])).collect();
                    for &i in &dropped {
                        let failed_at = |j: &usize| models(&cnf, &asked[..=*j]) == 0;
                        if drop_sets_after == u32::MAX {
                            prop_assert!(failed_at(&i), "{} dropped alone", asked[i]);
                        } else {
                            prop_assert!(dropped.iter().filter(|&&j| j >= i).any(failed_at),
                                "{} dropped", asked[i]);
                        }
                    }
                }
                Found::Refuted(failed) => {
                    prop_assert!(failed.is_empty());
                    prop_assert_eq!(models(&cnf, &[]), 0);
                }
                Found::GaveUp => prop_assert!(false, "no limit was set"),
            }
        }
    }
}
