//! Bounded variable elimination, done once per formula, for an oracle rebuilt per query, and
//! once per native session whose searches prove hard ([`crate::solver::native`]).
//!
//! splr's own eliminator ran again on every query: about a third of a repair-bound run
//! (perf, LoginService2.sk_23_36), and the variables it removed were the same each time, the
//! dependent ones of the formula's gates. Removing them once, outside the independent support,
//! leaves splr a smaller formula to build per query, and splr is built without its eliminator
//! ([`crate::solver::Splr`]). The support stays: the sampler keeps and prefers values there,
//! and diversity is measured there.
//!
//! Eliminating `x` replaces the clauses holding `x` or `¬x` by their resolvents on `x` (as
//! SatELite does, only where that adds at most a few clauses). The reduced formula, under any
//! assignment of the variables it keeps, is satisfiable exactly when the whole one is, and
//! [`Elimination::extend`] turns a model of it into a model of the whole.

use crate::assignment::Assignment;
use crate::formula::{literal_index, var_index, Cnf, Lit};

/// A variable is tried only while it occurs at most this often with each sign: gate outputs
/// occur a handful of times, and trying more costs quadratic work for rare gains.
const MAX_OCCURRENCES: usize = 40;
/// Resolvents longer than this keep the variable: long clauses propagate poorly.
const MAX_RESOLVENT_LEN: usize = 24;
/// Passes over the variables whose clauses changed in the previous pass.
const PASSES: usize = 8;
/// Clauses an elimination may add beyond those it removes. Allowing a few more lets a second
/// round of eliminations go further: against none, and with 16 occurrences and 3 passes,
/// seed 1-2 runs to 600 tests took 0.79-0.87x on doublyLinkedList.sk_8_37 and 0.82x on
/// enqueueSeqSK.sk_10_42 (0.72-1.25x, within noise, on 20.sk_1_51 and LoginService2).
const MAX_GROWTH: usize = 4;
/// Variables tried between two questions whether to stop.
const STOP_CHECK_INTERVAL: usize = 1024;

/// A formula with some variables eliminated, and what it takes to restore them.
#[derive(Debug, Clone)]
pub struct Elimination {
    reduced: Cnf,
    /// The removed clauses in the order they were removed, each led by its witness: the
    /// literal of the eliminated variable that extension makes true if the clause is false.
    removed: Cnf,
    eliminated: usize,
}

impl Elimination {
    /// The formula without the eliminated variables, numbered as before.
    pub fn reduced(&self) -> &Cnf {
        &self.reduced
    }

    /// Variables eliminated.
    pub fn eliminated(&self) -> usize {
        self.eliminated
    }

    /// Sets the eliminated variables of `assignment`, a model of the reduced formula, so that
    /// it satisfies the whole one; the other variables keep their values. Removed clauses are
    /// visited newest first: a variable eliminated before a clause was removed occurs in it
    /// no more, so a value set later in this walk never falsifies a clause visited before,
    /// and the clauses of one variable never need opposite values of it (their resolvents,
    /// in the reduced formula or removed later, hold).
    pub fn extend(&self, assignment: &mut Assignment) {
        for i in (0..self.removed.num_clauses()).rev() {
            let clause = self.removed.clause(i);
            if !clause.iter().any(|&l| assignment.satisfies(l)) {
                let witness = clause[0];
                assignment.set(var_index(witness), witness > 0);
            }
        }
    }
}

/// Eliminates variables outside `frozen` (per variable, from 0) where the resolvents are at
/// most 4 more clauses than they replace. `stop` is asked every 1,024 variables tried:
/// once it says so, what is eliminated by then is the result (any prefix of the work is a
/// valid elimination), so a deadline holds on any width of formula.
pub fn eliminate(cnf: &Cnf, frozen: &[bool], stop: &dyn Fn() -> bool) -> Elimination {
    let n = cnf.num_vars();
    let mut store = ClauseStore {
        clauses: Vec::with_capacity(cnf.num_clauses()),
        alive: Vec::with_capacity(cnf.num_clauses()),
        occurs: vec![Vec::new(); 2 * n],
    };
    cnf.clauses()
        .filter_map(|clause| normalized(clause.iter().copied()))
        .for_each(|clause| store.add(clause));
    let mut removed = Cnf::new(n);
    let mut gone = vec![false; n];
    let mut candidates: Vec<usize> = (0..n).filter(|&v| !frozen[v]).collect();
    let mut touched = vec![false; n];
    let mut resolvents: Vec<Vec<Lit>> = Vec::new();
    let mut tried = 0usize;
    'passes: for _ in 0..PASSES {
        // The cheapest first: a variable's resolvents can make its neighbours' dearer.
        for &v in &candidates {
            let x = v as Lit + 1;
            store.drop_removed(x);
            store.drop_removed(-x);
        }
        candidates.sort_by_cached_key(|&v| {
            let x = v as Lit + 1;
            store.occurs[literal_index(x)].len() * store.occurs[literal_index(-x)].len()
        });
        touched.iter_mut().for_each(|t| *t = false);
        for &v in &candidates {
            tried += 1;
            if tried.is_multiple_of(STOP_CHECK_INTERVAL) && stop() {
                break 'passes;
            }
            let x = v as Lit + 1;
            store.drop_removed(x);
            store.drop_removed(-x);
            let pos = std::mem::take(&mut store.occurs[literal_index(x)]);
            let neg = std::mem::take(&mut store.occurs[literal_index(-x)]);
            if pos.len() > MAX_OCCURRENCES
                || neg.len() > MAX_OCCURRENCES
                || !resolve_all(x, &pos, &neg, &store.clauses, &mut resolvents)
            {
                store.occurs[literal_index(x)] = pos;
                store.occurs[literal_index(-x)] = neg;
                continue;
            }
            for (sign, list) in [(x, pos), (-x, neg)] {
                for c in list {
                    let c = c as usize;
                    store.alive[c] = false;
                    let mut entry = vec![sign];
                    entry.extend(store.clauses[c].iter().copied().filter(|&l| l != sign));
                    removed.add_clause(&entry);
                }
            }
            for resolvent in resolvents.drain(..) {
                resolvent.iter().for_each(|&l| touched[var_index(l)] = true);
                store.add(resolvent);
            }
            gone[v] = true;
        }
        candidates.retain(|&v| touched[v] && !gone[v]);
        if candidates.is_empty() {
            break;
        }
    }
    let mut reduced = Cnf::new(n);
    for (clause, &alive) in store.clauses.iter().zip(&store.alive) {
        if alive {
            reduced.add_clause(clause);
        }
    }
    Elimination {
        reduced,
        removed,
        eliminated: gone.iter().filter(|&&g| g).count(),
    }
}

/// The clauses during elimination: removed ones stay in place, marked dead, and leave the
/// occurrence lists lazily.
struct ClauseStore {
    clauses: Vec<Vec<Lit>>,
    alive: Vec<bool>,
    /// Per literal (by [`literal_index`]): the clauses holding it, some possibly dead.
    occurs: Vec<Vec<u32>>,
}

impl ClauseStore {
    fn add(&mut self, clause: Vec<Lit>) {
        for &lit in &clause {
            self.occurs[literal_index(lit)].push(self.clauses.len() as u32);
        }
        self.clauses.push(clause);
        self.alive.push(true);
    }

    /// Forgets the dead clauses among those holding `lit`.
    fn drop_removed(&mut self, lit: Lit) {
        let alive = &self.alive;
        self.occurs[literal_index(lit)].retain(|&c| alive[c as usize]);
    }
}

/// The non-tautological resolvents on `x` of the clauses `pos` (holding `x`) and `neg`
/// (holding `¬x`) into `out`, if they are at most [`MAX_GROWTH`] more than the clauses they
/// replace, none is empty and none is longer than [`MAX_RESOLVENT_LEN`]; false (and `out`
/// cleared) otherwise.
fn resolve_all(
    x: Lit,
    pos: &[u32],
    neg: &[u32],
    clauses: &[Vec<Lit>],
    out: &mut Vec<Vec<Lit>>,
) -> bool {
    out.clear();
    let bound = pos.len() + neg.len() + MAX_GROWTH;
    for &p in pos {
        for &q in neg {
            let merged = clauses[p as usize]
                .iter()
                .chain(&clauses[q as usize])
                .copied()
                .filter(|&l| l != x && l != -x);
            if let Some(resolvent) = normalized(merged) {
                if resolvent.is_empty() || resolvent.len() > MAX_RESOLVENT_LEN || out.len() == bound
                {
                    out.clear();
                    return false;
                }
                out.push(resolvent);
            }
        }
    }
    true
}

/// The clause's literals sorted and without repeats, or `None` for a tautology.
fn normalized(literals: impl Iterator<Item = Lit>) -> Option<Vec<Lit>> {
    let mut clause: Vec<Lit> = literals.collect();
    clause.sort_unstable_by_key(|&l| (var_index(l), l));
    clause.dedup();
    if clause.windows(2).any(|w| w[0] == -w[1]) {
        None
    } else {
        Some(clause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Checker;
    use proptest::prelude::*;

    fn all_assignments(n: usize) -> impl Iterator<Item = Assignment> {
        (0u64..1 << n).map(move |bits| Assignment::from_words(vec![bits], n))
    }

    #[test]
    fn gate_outputs_are_eliminated_and_restored() {
        // x3 = x1 AND x2, x4 = x3 OR x1; the support is x1, x2.
        let cnf = Cnf::from_clauses(
            4,
            &[
                vec![-3, 1],
                vec![-3, 2],
                vec![3, -1, -2],
                vec![4, -3],
                vec![4, -1],
                vec![-4, 3, 1],
            ],
        );
        let elimination = eliminate(&cnf, &[true, true, false, false], &|| false);
        assert_eq!(elimination.eliminated(), 2);
        assert_eq!(elimination.reduced().num_clauses(), 0);
        let checker = Checker::new(&cnf);
        for mut a in all_assignments(4) {
            elimination.extend(&mut a);
            assert!(checker.satisfies(&a), "{a:?}");
        }
    }

    #[test]
    fn frozen_variables_stay() {
        let cnf = Cnf::from_clauses(2, &[vec![1, 2], vec![-1, 2]]);
        let elimination = eliminate(&cnf, &[true, true], &|| false);
        assert_eq!(elimination.eliminated(), 0);
        assert_eq!(elimination.reduced(), &cnf);
    }

    #[test]
    fn elimination_stops_when_asked_and_what_it_did_holds() {
        // A chain of equivalences x1 = x2 = ... = x3000, the first frozen.
        let n = 3000;
        let clauses: Vec<Vec<Lit>> = (1..n as Lit)
            .flat_map(|v| [vec![-v, v + 1], vec![v, -(v + 1)]])
            .collect();
        let cnf = Cnf::from_clauses(n, &clauses);
        let mut frozen = vec![false; n];
        frozen[0] = true;
        let whole = eliminate(&cnf, &frozen, &|| false);
        assert_eq!(whole.eliminated(), n - 1);
        let stopped = eliminate(&cnf, &frozen, &|| true);
        assert!(stopped.eliminated() < STOP_CHECK_INTERVAL);
        let checker = Checker::new(&cnf);
        for value in [false, true] {
            let mut a = Assignment::zeros(n);
            a.set(0, value);
            // The reduced formula's model on the variables it keeps: all equal to x1.
            for clause in stopped.reduced().clauses() {
                clause.iter().for_each(|&l| a.set(var_index(l), value));
            }
            stopped.extend(&mut a);
            assert!(checker.satisfies(&a));
        }
    }

    /// A small random formula and a frozen set.
    fn formula() -> impl Strategy<Value = (Cnf, Vec<bool>)> {
        (1usize..9).prop_flat_map(|n| {
            let lit = (1..=n as Lit, any::<bool>()).prop_map(|(v, s)| if s { v } else { -v });
            (
                prop::collection::vec(prop::collection::vec(lit, 1..4), 0..20),
                prop::collection::vec(any::<bool>(), n),
            )
                .prop_map(move |(clauses, frozen)| (Cnf::from_clauses(n, &clauses), frozen))
        })
    }

    proptest! {
        /// For every assignment of the kept variables: the reduced formula holds exactly when
        /// some value of the eliminated ones satisfies the whole, and extension finds one.
        #[test]
        fn reduced_formulas_are_projections_and_extension_finds_models(
            (cnf, frozen) in formula()
        ) {
            let n = cnf.num_vars();
            let elimination = eliminate(&cnf, &frozen, &|| false);
            let whole = Checker::new(&cnf);
            let reduced = Checker::new(elimination.reduced());
            let mut kept_vars = vec![false; n];
            for clause in elimination.reduced().clauses() {
                clause.iter().for_each(|&l| kept_vars[var_index(l)] = true);
            }
            for (v, &f) in frozen.iter().enumerate() {
                kept_vars[v] |= f;
            }
            let models: Vec<Assignment> = all_assignments(n).filter(|a| whole.satisfies(a)).collect();
            for a in all_assignments(n) {
                let agrees = |m: &Assignment| (0..n).all(|v| !kept_vars[v] || m.get(v) == a.get(v));
                let extendable = models.iter().any(agrees);
                prop_assert_eq!(reduced.satisfies(&a), extendable);
                if extendable {
                    let mut extended = a.clone();
                    elimination.extend(&mut extended);
                    prop_assert!(whole.satisfies(&extended));
                    prop_assert!(agrees(&extended));
                }
            }
        }
    }
}
