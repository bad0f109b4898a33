//! Unit propagation over a partial assignment, reusable across many calls on one formula.
//!
//! Repair and completion fix some variables and let propagation settle most of the rest, so the
//! solver only sees what propagation leaves open. Two watched literals per clause: each
//! propagator keeps which two literals it watches in every clause (the formula itself stays
//! shared and immutable), so an assignment visits only the clauses watching the literal it
//! falsifies, and undoing it touches nothing but the values.

use crate::assignment::Assignment;
use crate::formula::{literal_index, var_index, Cnf, Lit};

/// The values the formula's unit clauses force through propagation, and the variables left
/// open: every model has these values, so what is forced need not be asked of a solver nor
/// checked clause by clause. Contradicting units force nothing here (a solver then finds
/// the formula unsatisfiable, and a check the contradiction).
pub fn forced_values(cnf: &Cnf) -> (Assignment, Vec<u32>) {
    let mut propagator = Propagator::new(cnf, Watches::new(cnf));
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

/// Marks a watch on a binary clause, whose other literal is the whole rest of the clause.
pub(crate) const BINARY: u32 = 1 << 31;

/// A clause watching a literal, and a literal of it that, when true, satisfies it: checked
/// before the clause's literals are read, which mostly spares reading them (the way
/// MiniSat and CaDiCaL watch). A binary clause needs no more than its other literal.
#[derive(Clone, Copy)]
pub(crate) struct Watch {
    /// Where the clause's literals start ([`push_clause`]), or'ed with [`BINARY`] for a
    /// binary clause (here, that flag alone: the propagator keeps no binary clause but in
    /// its watches).
    pub(crate) clause: u32,
    pub(crate) blocker: Lit,
}

/// The formula as propagation reads it, built once per formula and copied for each
/// propagator that works on it beside others: each copy reorders its clauses' literals so
/// that the two it watches come first.
#[derive(Clone)]
pub struct Watches {
    /// The clauses of three or more distinct literals, end to end, each after its length,
    /// without repeated literals; a clause holding a literal and its negation always holds
    /// and is left out. A watch names a clause by where its literals start ([`push_clause`]).
    literals: Vec<Lit>,
    /// Per literal: the clauses watching it, visited when it becomes false.
    by_literal: Vec<Vec<Watch>>,
    /// The unit clauses' literals, in file order.
    units: Vec<Lit>,
    /// The formula has an empty clause.
    has_empty_clause: bool,
}

impl Watches {
    /// The initial watches of `cnf`.
    pub fn new(cnf: &Cnf) -> Self {
        let mut watches = Watches {
            literals: Vec::new(),
            by_literal: vec![Vec::new(); 2 * cnf.num_vars()],
            units: Vec::new(),
            has_empty_clause: false,
        };
        let mut distinct = DistinctLiterals::new(cnf.num_vars());
        for clause in cnf.clauses() {
            match distinct.of(clause) {
                None => {}
                Some([]) => watches.has_empty_clause = true,
                Some(&[unit]) => watches.units.push(unit),
                Some(&[a, b]) => {
                    watches.by_literal[literal_index(a)].push(Watch {
                        clause: BINARY,
                        blocker: b,
                    });
                    watches.by_literal[literal_index(b)].push(Watch {
                        clause: BINARY,
                        blocker: a,
                    });
                }
                Some(long) => {
                    let clause = push_clause(&mut watches.literals, long);
                    for (watched, other) in [(long[0], long[1]), (long[1], long[0])] {
                        watches.by_literal[literal_index(watched)].push(Watch {
                            clause,
                            blocker: other,
                        });
                    }
                }
            }
        }
        watches
    }
}

/// A clause's distinct literals, for the watch structures built here and in
/// [`crate::solver::native::search`]; none for a clause that holds a literal and its negation (it always
/// holds).
pub(crate) struct DistinctLiterals {
    /// Per literal: the clause it was last seen in (a count from 1).
    seen: Vec<u32>,
    clause: u32,
    literals: Vec<Lit>,
}

impl DistinctLiterals {
    pub(crate) fn new(num_vars: usize) -> Self {
        DistinctLiterals {
            seen: vec![0; 2 * num_vars],
            clause: 0,
            literals: Vec::new(),
        }
    }

    /// `clause` without repeated literals, in order; `None` for a tautology.
    pub(crate) fn of(&mut self, clause: &[Lit]) -> Option<&[Lit]> {
        self.clause += 1;
        self.literals.clear();
        for &lit in clause {
            if self.seen[literal_index(-lit)] == self.clause {
                return None;
            }
            if self.seen[literal_index(lit)] != self.clause {
                self.seen[literal_index(lit)] = self.clause;
                self.literals.push(lit);
            }
        }
        Some(&self.literals)
    }
}

/// What visiting a clause whose watched literal just became false found.
enum Visited {
    /// Its other watch is true.
    Satisfied,
    /// It watches this literal, not false, instead.
    Moved(Lit),
    /// Its other watch is the one literal not false: it must become true.
    Unit(Lit),
    /// Every literal is false.
    Conflict,
}

/// Appends `clause` to `literals`, clauses end to end, each after its length; its name: where
/// its literals start. Reading a clause so named is one access to memory, not two (an index
/// of where clauses start, read first, was a tenth of the refuter's propagation time on
/// doublyLinkedList.sk_8_37: a cache miss where the formula outgrows the cache).
pub(crate) fn push_clause(literals: &mut Vec<Lit>, clause: &[Lit]) -> u32 {
    literals.push(clause.len() as Lit);
    let start = literals.len();
    assert!(
        start + clause.len() < BINARY as usize,
        "more literals than a watch can name"
    );
    literals.extend_from_slice(clause);
    start as u32
}

/// Where clause `c` ([`push_clause`]) is in `literals`.
#[inline]
pub(crate) fn clause_range(literals: &[Lit], c: u32) -> std::ops::Range<usize> {
    let start = c as usize;
    start..start + literals[start - 1] as usize
}

/// Asks the processor to bring `data` into the cache ahead of its use: propagation's
/// time goes to cache misses where the formula outgrows the cache, and the watch lists it
/// visits next, and the clauses they name, are known ahead.
#[inline(always)]
pub(crate) fn prefetch<T>(data: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing and faults on no address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(data.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Literals of the trail whose watch lists are fetched ahead of their visit
/// ([`prefetch_watch_lists`]): one ahead made the refuter's repairs of doublyLinkedList.sk_8_37
/// take half the time, three a further tenth or more.
const PREFETCH_AHEAD: usize = 3;

/// Fetches the watch lists of the next literals of the trail to be propagated (`ahead`),
/// whose headers their enqueueing fetched.
#[inline]
pub(crate) fn prefetch_watch_lists(ahead: &[Lit], by_literal: &[Vec<Watch>]) {
    for &lit in ahead.iter().take(PREFETCH_AHEAD) {
        prefetch(by_literal[literal_index(-lit)].as_ptr());
    }
}

/// Fetches the clause (not binary) of the watch visited next, if any.
#[inline]
fn prefetch_clause(literals: &[Lit], next: Option<&Watch>) {
    if let Some(watch) = next.filter(|w| w.clause & BINARY == 0) {
        prefetch(literals.as_ptr().wrapping_add(watch.clause as usize - 1));
    }
}

/// Closes the gap a visit of `watching` left: its first `kept` watches stay, and those from
/// `read` on, not visited before a conflict, keep watching after them.
#[inline]
fn keep_unvisited(watching: &mut Vec<Watch>, kept: usize, read: usize) {
    let unvisited = watching.len() - read;
    watching.copy_within(read.., kept);
    watching.truncate(kept + unvisited);
}

/// Visits `clause` (its two watched literals first, values by [`literal_index`] in `value`)
/// whose watched literal `falsified` just became false; its other watch ends first.
#[inline]
fn visit_clause(clause: &mut [Lit], falsified: Lit, value: &[i8]) -> Visited {
    if clause[0] == falsified {
        clause.swap(0, 1);
    }
    let other_value = value[literal_index(clause[0])];
    if other_value > 0 {
        return Visited::Satisfied;
    }
    if let Some(k) = (2..clause.len()).find(|&k| value[literal_index(clause[k])] >= 0) {
        clause.swap(1, k);
        return Visited::Moved(clause[1]);
    }
    if other_value < 0 {
        Visited::Conflict
    } else {
        Visited::Unit(clause[0])
    }
}

/// A trail that two-watched-literal propagation extends: the sampler's [`Propagator`] and the
/// native search, which also records why each literal was implied.
pub(crate) trait WatchedTrail {
    /// The watch lists by [`literal_index`], the clause store ([`push_clause`]) and the values
    /// by literal, borrowed together.
    fn watched(&mut self) -> (&mut [Vec<Watch>], &mut [Lit], &[i8]);
    /// Makes `lit` true, implied by clause `reason`.
    fn enqueue(&mut self, lit: Lit, reason: u32);
}

/// Visits the clauses watching the literal just `falsified`: each is satisfied by its blocker
/// or its other watch, or moves that watch to another literal not false (and leaves the
/// list), or makes its other watch true, or is the conflict. The conflicting clause, if any,
/// and how many watches were read.
#[inline(always)]
pub(crate) fn visit_watches<T: WatchedTrail>(
    trail: &mut T,
    falsified: Lit,
) -> (Option<u32>, usize) {
    // The list is taken out while it is visited: moved watches go onto other lists.
    let mut watching = std::mem::take(&mut trail.watched().0[literal_index(falsified)]);
    let (mut read, mut kept) = (0, 0);
    let mut conflict = None;
    while read < watching.len() {
        let mut watch = watching[read];
        read += 1;
        let (watches, literals, value) = trail.watched();
        prefetch_clause(literals, watching.get(read));
        let blocker_value = value[literal_index(watch.blocker)];
        if blocker_value > 0 {
            watching[kept] = watch;
            kept += 1;
            continue;
        }
        if watch.clause & BINARY != 0 {
            // The clause may hold the implied literal second: its reasons are read by
            // variable, not by place.
            watching[kept] = watch;
            kept += 1;
            let clause = watch.clause & !BINARY;
            if blocker_value < 0 {
                conflict = Some(clause);
                break;
            }
            trail.enqueue(watch.blocker, clause);
            continue;
        }
        let range = clause_range(literals, watch.clause);
        let clause = &mut literals[range];
        let visited = visit_clause(clause, falsified, value);
        watch.blocker = clause[0];
        match visited {
            Visited::Moved(to) => {
                watches[literal_index(to)].push(watch);
                continue;
            }
            Visited::Satisfied => {}
            Visited::Unit(lit) => trail.enqueue(lit, watch.clause),
            Visited::Conflict => conflict = Some(watch.clause),
        }
        watching[kept] = watch;
        kept += 1;
        if conflict.is_some() {
            break;
        }
    }
    keep_unvisited(&mut watching, kept, read);
    trail.watched().0[literal_index(falsified)] = watching;
    (conflict, read)
}

/// The two literals' clauses contradict the current assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict;

/// A partial assignment with propagation; cheap to reset, so one serves many calls.
pub struct Propagator<'a> {
    cnf: &'a Cnf,
    /// Per literal (by [`literal_index`]): 0 unassigned, 1 true, -1 false.
    value: Vec<i8>,
    watches: Watches,
    trail: Vec<Lit>,
    /// Trail entries before this index have had their watching clauses visited.
    processed: usize,
    /// Where the trail ends once the unit clauses are propagated, while that prefix stands:
    /// a completion starts from there, and 20.sk_1_51's 5,338 units had been propagated anew
    /// for every one.
    units_mark: Option<usize>,
}

impl WatchedTrail for Propagator<'_> {
    #[inline(always)]
    fn watched(&mut self) -> (&mut [Vec<Watch>], &mut [Lit], &[i8]) {
        (
            &mut self.watches.by_literal,
            &mut self.watches.literals,
            &self.value,
        )
    }

    /// The sampler needs no reasons.
    #[inline(always)]
    fn enqueue(&mut self, lit: Lit, _reason: u32) {
        prefetch(&self.watches.by_literal[literal_index(-lit)]);
        self.value[literal_index(lit)] = 1;
        self.value[literal_index(-lit)] = -1;
        self.trail.push(lit);
    }
}

impl<'a> Propagator<'a> {
    /// A propagator over `cnf` with nothing assigned, watching as `watches` (made for `cnf`).
    pub fn new(cnf: &'a Cnf, watches: Watches) -> Self {
        Propagator {
            cnf,
            value: vec![0; 2 * cnf.num_vars()],
            watches,
            trail: Vec::new(),
            processed: 0,
            units_mark: None,
        }
    }

    /// The value of a variable (from 0), if assigned.
    #[inline]
    pub fn value(&self, var: usize) -> Option<bool> {
        match self.value[2 * var] {
            0 => None,
            v => Some(v > 0),
        }
    }

    #[inline]
    fn literal_value(&self, lit: Lit) -> Option<bool> {
        match self.value[literal_index(lit)] {
            0 => None,
            v => Some(v > 0),
        }
    }

    /// Number of assigned variables; a mark to undo to.
    pub fn mark(&self) -> usize {
        self.trail.len()
    }

    /// Unassigns everything assigned since `mark`. The watches stay as they are: a clause
    /// watches two literals that were not false when it last moved them, and undoing only
    /// unassigns.
    pub fn undo_to(&mut self, mark: usize) {
        for &lit in &self.trail[mark.min(self.trail.len())..] {
            self.value[literal_index(lit)] = 0;
            self.value[literal_index(-lit)] = 0;
        }
        self.trail.truncate(mark);
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
            None => self.enqueue(lit, 0),
        }
        self.propagate().inspect_err(|_| self.undo_to(mark))
    }

    #[inline]
    fn propagate(&mut self) -> Result<(), Conflict> {
        while self.processed < self.trail.len() {
            let falsified = -self.trail[self.processed];
            self.processed += 1;
            prefetch_watch_lists(&self.trail[self.processed..], &self.watches.by_literal);
            let (conflict, _) = visit_watches(self, falsified);
            if conflict.is_some() {
                return Err(Conflict);
            }
        }
        Ok(())
    }

    /// Assigns every unit clause of the formula; fails when they contradict.
    pub fn assign_units(&mut self) -> Result<(), Conflict> {
        if self.watches.has_empty_clause {
            return Err(Conflict);
        }
        for i in 0..self.watches.units.len() {
            self.assign(self.watches.units[i])?;
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

    /// Completes the assignment greedily: each open variable, in `order` (which names every
    /// variable), takes its preferred value, or the other one when that conflicts. Fails (and
    /// undoes its decisions) when both conflict, or after `max_conflicts` conflicts: each
    /// costs a propagation and its undoing, so on tightly chained formulas the solver is the
    /// cheaper way on.
    pub fn complete_greedily(
        &mut self,
        preferred: &Assignment,
        order: impl IntoIterator<Item = usize>,
        max_conflicts: usize,
    ) -> Result<(), Conflict> {
        let mark = self.mark();
        let mut conflicts = 0;
        for var in order {
            if self.value(var).is_some() {
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
        self.residual_of(self.cnf)
    }

    /// [`Self::residual`] of another formula over the same variables (one implied by this
    /// propagator's, such as its reduction by variable elimination).
    pub fn residual_of(&self, cnf: &Cnf) -> Vec<Vec<Lit>> {
        cnf.clauses()
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
        let watches = Watches::new(&cnf);
        let mut p = Propagator::new(&cnf, watches.clone());
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
        let watches = Watches::new(&cnf);
        let mut p = Propagator::new(&cnf, watches.clone());
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
        let mut q = Propagator::new(&cnf, watches.clone());
        q.assign_units().unwrap();
        assert_eq!(values(&p), values(&q));
    }

    #[test]
    fn residual_keeps_only_open_literals_of_open_clauses() {
        let cnf = Cnf::from_clauses(3, &[vec![1, 2], vec![-1, 2, 3], vec![2, 3]]);
        let watches = Watches::new(&cnf);
        let mut p = Propagator::new(&cnf, watches.clone());
        p.assign(1).unwrap();
        assert_eq!(p.residual(), vec![vec![2, 3], vec![2, 3]]);
    }

    /// Unit propagation by scanning every clause until nothing changes: the values `fixed`
    /// force, or `None` on a conflict.
    fn propagated_by_scanning(cnf: &Cnf, fixed: &[Lit]) -> Option<Vec<Option<bool>>> {
        let mut value = vec![None; cnf.num_vars()];
        for &lit in fixed {
            match value[var_index(lit)] {
                Some(v) if v != (lit > 0) => return None,
                _ => value[var_index(lit)] = Some(lit > 0),
            }
        }
        loop {
            let mut changed = false;
            for clause in cnf.clauses() {
                let holds = |l: Lit| value[var_index(l)].map(|v| v == (l > 0));
                if clause.iter().any(|&l| holds(l) == Some(true)) {
                    continue;
                }
                let open: Vec<Lit> = clause
                    .iter()
                    .copied()
                    .filter(|&l| holds(l).is_none())
                    .collect();
                match open.as_slice() {
                    [] => return None,
                    [l, rest @ ..] if rest.iter().all(|r| r == l) => {
                        value[var_index(*l)] = Some(*l > 0);
                        changed = true;
                    }
                    _ => {}
                }
            }
            if !changed {
                return Some(value);
            }
        }
    }

    proptest! {
        /// After the unit clauses and any sequence of assignments and undos, the values are
        /// exactly what scanning every clause propagates from the literals assigned and kept, and an assignment
        /// fails exactly when scanning finds a conflict.
        #[test]
        fn watched_propagation_matches_scanning_every_clause(
            clauses in crate::testing::arbitrary_clauses(8, 5, 24),
            steps in proptest::collection::vec((-8i32..=8, any::<bool>()), 1..40),
        ) {
            let cnf = Cnf::from_clauses(8, &clauses);
            let watches = Watches::new(&cnf);
            let mut p = Propagator::new(&cnf, watches);
            // Scanning propagates the unit clauses too.
            if p.assign_units().is_err() {
                prop_assert_eq!(propagated_by_scanning(&cnf, &[]), None);
                return Ok(());
            }
            // The literals assigned and kept, with the trail mark before each.
            let mut kept: Vec<(Lit, usize)> = Vec::new();
            for (lit, undo) in steps {
                if undo || lit == 0 {
                    if let Some((_, mark)) = kept.pop() {
                        p.undo_to(mark);
                    }
                } else {
                    let mark = p.mark();
                    let fixed: Vec<Lit> = kept.iter().map(|&(l, _)| l).chain([lit]).collect();
                    let expected = propagated_by_scanning(&cnf, &fixed);
                    let before: Vec<_> = (0..8).map(|v| p.value(v)).collect();
                    match p.assign(lit) {
                        Ok(()) => {
                            prop_assert_eq!(Some((0..8).map(|v| p.value(v)).collect()), expected);
                            kept.push((lit, mark));
                        }
                        Err(Conflict) => {
                            prop_assert_eq!(expected, None);
                            prop_assert_eq!((0..8).map(|v| p.value(v)).collect::<Vec<_>>(), before);
                        }
                    }
                }
                let fixed: Vec<Lit> = kept.iter().map(|&(l, _)| l).collect();
                let now: Vec<_> = (0..8).map(|v| p.value(v)).collect();
                prop_assert_eq!(Some(now), propagated_by_scanning(&cnf, &fixed));
            }
        }

        #[test]
        fn greedy_completion_yields_a_model_or_reports_failure(
            clauses in crate::testing::arbitrary_clauses(10, 4, 30),
            prefs in proptest::collection::vec(any::<bool>(), 10),
        ) {
            let cnf = Cnf::from_clauses(10, &clauses);
            let watches = Watches::new(&cnf);
            let mut p = Propagator::new(&cnf, watches.clone());
            let prefs: String = prefs.iter().map(|&b| if b { '1' } else { '0' }).collect();
            let prefs = Assignment::from_bit_string(&prefs).unwrap();
            if p.assign_units().is_ok() && p.complete_greedily(&prefs, 0..10, usize::MAX).is_ok() {
                prop_assert!(Checker::new(&cnf).satisfies(&p.to_assignment(&prefs)));
            }
            p.reset();
            prop_assert!((0..10).all(|v| p.value(v).is_none()));
        }
    }
}
