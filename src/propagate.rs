//! Unit propagation over a partial assignment, reusable across many calls on one formula.
//!
//! Repair and completion fix some variables and let propagation settle most of the rest, so the
//! solver only sees what propagation leaves open. Counters of false literals per clause are kept
//! instead of watched literals so that the formula itself stays shared and immutable.

use crate::assignment::Assignment;
use crate::formula::{var_index, Cnf, Lit};

/// The values the formula's unit clauses force through propagation, and the variables left
/// open: every model has these values, so what is forced need not be asked of a solver nor
/// checked clause by clause. Contradicting units force nothing here (a solver then finds
/// the formula unsatisfiable, and a check the contradiction).
pub fn forced_values(cnf: &Cnf) -> (Assignment, Vec<u32>) {
    let occurrences = LiteralOccurrences::new(cnf);
    let mut propagator = Propagator::new(cnf, &occurrences);
    if propagator.assign_units().is_err() {
        propagator.reset();
    }
    let mut forced = Assignment::zeros(cnf.num_vars());
    let mut open = Vec::new();
    for v in 0..cnf.num_vars() {
        match propagator.value(v) {
            Some(value) => forced.set(v, value),
            None => open.push(v as u32),
        }
    }
    (forced, open)
}

/// Index of a literal in per-literal tables.
#[inline]
fn code(lit: Lit) -> usize {
    2 * var_index(lit) + usize::from(lit < 0)
}

/// For each literal, the clauses it occurs in (once per occurrence); built once per formula.
pub struct LiteralOccurrences {
    by_literal: Vec<Vec<u32>>,
}

impl LiteralOccurrences {
    /// The clauses each literal occurs in, for `cnf`.
    pub fn new(cnf: &Cnf) -> Self {
        let mut by_literal = vec![Vec::new(); 2 * cnf.num_vars()];
        for (i, clause) in cnf.clauses().enumerate() {
            for &lit in clause {
                by_literal[code(lit)].push(i as u32);
            }
        }
        LiteralOccurrences { by_literal }
    }
}

/// The two literals' clauses contradict the current assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict;

/// A partial assignment with propagation; cheap to reset, so one serves many calls.
pub struct Propagator<'a> {
    cnf: &'a Cnf,
    occurrences: &'a LiteralOccurrences,
    /// 0 unassigned, 1 true, -1 false, per variable.
    value: Vec<i8>,
    false_count: Vec<u32>,
    trail: Vec<Lit>,
    /// Trail entries before this index have had their clauses' counters updated.
    processed: usize,
    /// Where the trail ends once the unit clauses are propagated, while that prefix stands:
    /// a completion starts from there, and 20.sk_1_51's 5,338 units had been propagated anew
    /// for every one.
    units_mark: Option<usize>,
}

impl<'a> Propagator<'a> {
    /// A propagator over `cnf` with nothing assigned.
    pub fn new(cnf: &'a Cnf, occurrences: &'a LiteralOccurrences) -> Self {
        Propagator {
            cnf,
            occurrences,
            value: vec![0; cnf.num_vars()],
            false_count: vec![0; cnf.num_clauses()],
            trail: Vec::new(),
            processed: 0,
            units_mark: None,
        }
    }

    /// The value of a variable (from 0), if assigned.
    #[inline]
    pub fn value(&self, var: usize) -> Option<bool> {
        match self.value[var] {
            0 => None,
            v => Some(v > 0),
        }
    }

    #[inline]
    fn literal_value(&self, lit: Lit) -> Option<bool> {
        self.value(var_index(lit)).map(|v| v == (lit > 0))
    }

    /// Number of assigned variables; a mark to undo to.
    pub fn mark(&self) -> usize {
        self.trail.len()
    }

    /// Unassigns everything assigned since `mark`.
    pub fn undo_to(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let lit = self.trail.pop().unwrap();
            if self.trail.len() < self.processed {
                for &c in &self.occurrences.by_literal[code(-lit)] {
                    self.false_count[c as usize] -= 1;
                }
            }
            self.value[var_index(lit)] = 0;
        }
        self.processed = self.processed.min(mark);
        if self.units_mark.is_some_and(|units| mark < units) {
            self.units_mark = None;
        }
    }

    /// Unassigns everything.
    pub fn reset(&mut self) {
        self.undo_to(0);
    }

    /// Makes `lit` true and propagates. On conflict the assignment is left as it was before.
    pub fn assign(&mut self, lit: Lit) -> Result<(), Conflict> {
        let mark = self.mark();
        match self.literal_value(lit) {
            Some(true) => return Ok(()),
            Some(false) => return Err(Conflict),
            None => self.enqueue(lit),
        }
        self.propagate().inspect_err(|_| self.undo_to(mark))
    }

    fn enqueue(&mut self, lit: Lit) {
        self.value[var_index(lit)] = if lit > 0 { 1 } else { -1 };
        self.trail.push(lit);
    }

    fn propagate(&mut self) -> Result<(), Conflict> {
        let mut conflict = false;
        while self.processed < self.trail.len() && !conflict {
            let lit = self.trail[self.processed];
            self.processed += 1;
            // Every counter is updated even after a conflict, so that undo stays exact.
            for &c in &self.occurrences.by_literal[code(-lit)] {
                let c = c as usize;
                self.false_count[c] += 1;
                if conflict {
                    continue;
                }
                let clause = self.cnf.clause(c);
                let falses = self.false_count[c] as usize;
                if falses + 1 < clause.len() {
                    continue;
                }
                let mut open = None;
                let mut satisfied = false;
                for &l in clause {
                    match self.literal_value(l) {
                        Some(true) => {
                            satisfied = true;
                            break;
                        }
                        None => open = Some(l),
                        Some(false) => {}
                    }
                }
                if satisfied {
                    continue;
                }
                match open {
                    Some(l) => self.enqueue(l),
                    None => conflict = true,
                }
            }
        }
        if conflict {
            Err(Conflict)
        } else {
            Ok(())
        }
    }

    /// Assigns every unit clause of the formula; fails when they contradict.
    pub fn assign_units(&mut self) -> Result<(), Conflict> {
        for clause in self.cnf.clauses() {
            match clause {
                [] => return Err(Conflict),
                [lit] => self.assign(*lit)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Unassigns everything but what the unit clauses force; fails when they contradict.
    /// The units are propagated once and kept while nothing undoes them.
    pub fn reset_to_units(&mut self) -> Result<(), Conflict> {
        if let Some(units) = self.units_mark {
            self.undo_to(units);
            return Ok(());
        }
        self.reset();
        self.assign_units()?;
        self.units_mark = Some(self.mark());
        Ok(())
    }

    /// Completes the assignment greedily: each open variable takes its preferred value, or the
    /// other one when that conflicts. Fails (and undoes its decisions) when both conflict, or
    /// after `max_conflicts` conflicts: each costs a propagation and its undoing, so on tightly
    /// chained formulas the solver is the cheaper way on.
    pub fn complete_greedily(
        &mut self,
        preferred: &Assignment,
        max_conflicts: usize,
    ) -> Result<(), Conflict> {
        let mark = self.mark();
        let mut conflicts = 0;
        for var in 0..self.value.len() {
            if self.value[var] != 0 {
                continue;
            }
            let lit = if preferred.get(var) {
                var as Lit + 1
            } else {
                -(var as Lit + 1)
            };
            if self.assign(lit).is_err() {
                conflicts += 1;
                if conflicts > max_conflicts || self.assign(-lit).is_err() {
                    self.undo_to(mark);
                    return Err(Conflict);
                }
            }
        }
        Ok(())
    }

    /// The clauses not yet satisfied, reduced to their open literals: what a solver must still
    /// decide. Empty when propagation already settled everything.
    pub fn residual(&self) -> Vec<Vec<Lit>> {
        self.cnf
            .clauses()
            .filter(|clause| !clause.iter().any(|&l| self.literal_value(l) == Some(true)))
            .map(|clause| {
                clause
                    .iter()
                    .copied()
                    .filter(|&l| self.literal_value(l).is_none())
                    .collect()
            })
            .collect()
    }

    /// The assignment, with open variables taken from `fill`.
    pub fn to_assignment(&self, fill: &Assignment) -> Assignment {
        let mut a = fill.clone();
        for &lit in &self.trail {
            a.set(var_index(lit), lit > 0);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Checker;
    use proptest::prelude::*;

    #[test]
    fn propagation_follows_implications_and_undoes_exactly() {
        let cnf = Cnf::from_clauses(4, &[vec![-1, 2], vec![-2, 3], vec![-3, -1, 4]]);
        let occ = LiteralOccurrences::new(&cnf);
        let mut p = Propagator::new(&cnf, &occ);
        p.assign(1).unwrap();
        assert_eq!(
            (p.value(1), p.value(2), p.value(3)),
            (Some(true), Some(true), Some(true))
        );
        assert_eq!(p.assign(-4), Err(Conflict));
        assert_eq!(
            p.value(3),
            Some(true),
            "a failed assign leaves the state as it was"
        );
        p.reset();
        assert!((0..4).all(|v| p.value(v).is_none()));
        p.assign(-4).unwrap();
        assert_eq!(p.assign(1), Err(Conflict));
        assert!(p.value(0).is_none());
    }

    #[test]
    fn resetting_to_units_keeps_exactly_what_they_force() {
        // x1 is a unit implying x2; x3 and x4 are open.
        let cnf = Cnf::from_clauses(4, &[vec![1], vec![-1, 2], vec![-2, -3, 4]]);
        let occ = LiteralOccurrences::new(&cnf);
        let mut p = Propagator::new(&cnf, &occ);
        let values = |p: &Propagator| (0..4).map(|v| p.value(v)).collect::<Vec<_>>();
        let forced = [Some(true), Some(true), None, None];
        p.reset_to_units().unwrap();
        assert_eq!(values(&p), forced);
        p.assign(3).unwrap();
        assert_eq!(p.value(3), Some(true));
        p.reset_to_units().unwrap();
        assert_eq!(values(&p), forced);
        // After a full reset the units are propagated again: the trail as long as theirs
        // holds other values now.
        p.reset();
        p.assign(3).unwrap();
        p.assign(4).unwrap();
        p.reset_to_units().unwrap();
        assert_eq!(values(&p), forced);
        assert_eq!(p.false_count, {
            let mut q = Propagator::new(&cnf, &occ);
            q.assign_units().unwrap();
            q.false_count
        });
    }

    #[test]
    fn residual_keeps_only_open_literals_of_open_clauses() {
        let cnf = Cnf::from_clauses(3, &[vec![1, 2], vec![-1, 2, 3], vec![2, 3]]);
        let occ = LiteralOccurrences::new(&cnf);
        let mut p = Propagator::new(&cnf, &occ);
        p.assign(1).unwrap();
        assert_eq!(p.residual(), vec![vec![2, 3], vec![2, 3]]);
    }

    proptest! {
        #[test]
        fn greedy_completion_yields_a_model_or_reports_failure(
            clauses in crate::testing::arbitrary_clauses(10, 4, 30),
            prefs in proptest::collection::vec(any::<bool>(), 10),
        ) {
            let cnf = Cnf::from_clauses(10, &clauses);
            let occ = LiteralOccurrences::new(&cnf);
            let mut p = Propagator::new(&cnf, &occ);
            let prefs: String = prefs.iter().map(|&b| if b { '1' } else { '0' }).collect();
            let prefs = Assignment::from_bit_string(&prefs).unwrap();
            if p.assign_units().is_ok() && p.complete_greedily(&prefs, usize::MAX).is_ok() {
                prop_assert!(Checker::new(&cnf).satisfies(&p.to_assignment(&prefs)));
            }
            p.reset();
            prop_assert!(p.false_count.iter().all(|&c| c == 0));
        }
    }
}
