//! A small conflict-driven search, loaded once and asked many times: it proves literals
//! contradict a formula, and (`--solver native`) finds models near given phases.
//!
//! A splr repair fixes its kept bits and asks splr, rebuilt for the call, for a model; most of
//! those calls on the slow case studies prove the kept bits contradictory instead. Traced on
//! isolateRightmost.sk_7_481 (seed 1), 1,238 such refutations took 11 ms of splr's search
//! each (median), yet needed only 73 conflicts (median): the time goes to building and
//! preprocessing, not to the proof. This search keeps its formula and what it learned across
//! calls, takes the kept bits as assumptions, and gives up after a few hundred conflicts.
//! Under `--solver splr` it only refutes: a repair whose kept bits it cannot refute asks splr
//! as before, so the tests are the same whether it runs or not. Under `--solver native` it is
//! a lane's session (`crate::solver::native`), and its models are the answers.

mod analysis;
mod learned;
mod order;
mod probe;
mod propagation;
mod restarts;

use crate::assignment::Assignment;
use crate::formula::{literal_index, var_index, Cnf, Lit};
use crate::propagate::{
    clause_range, prefetch, prefetch_watch_lists, push_clause, visit_watches, DistinctLiterals,
    Watch, WatchedTrail, BINARY,
};
use learned::{Learned, MAX_LEARNED, REDUCE_EVERY};
use order::DecisionOrder;
use restarts::Restarts;
use std::borrow::Cow;

/// No reason: a decision, an assumption, or a value fixed at level 0.
const NO_REASON: u32 = u32::MAX;

/// Conflicts after which a relaxing search ([`Refuter::search_relaxing`]) drops the whole set
/// an assumption found false failed with, not that assumption alone (see there).
const DROP_SETS_AFTER: u32 = 16;

/// What a search under assumptions found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A model of the formula with every assumption true.
    Model(Assignment),
    /// The assumptions contradict the formula: these failed together (empty when the formula
    /// itself is contradictory).
    Refuted(Vec<Lit>),
    /// The conflict limit, or `give_up`, ended the search.
    GaveUp,
}

/// How [`Refuter::run`] ended.
enum Ended {
    Model,
    /// By the formula alone (`None`), or by this assumption found false.
    Refuted(Option<Lit>),
    GaveUp,
}

/// A CDCL search over a fixed formula (two watched literals, first-UIP learning with
/// recursive minimization, decisions by activity (`order`), saved phases, Luby restarts),
/// answering whether assumptions contradict
/// it, and with which model or failed assumptions.
pub struct Refuter {
    /// Clauses end to end, each named (in watches and reasons) by where its literals start
    /// ([`push_clause`]); each clause's two watched literals come first.
    literals: Vec<Lit>,
    /// Where the learned clauses start in `literals`: the formula's own come before.
    learned_from: usize,
    /// The learned clauses held, in the order they are in `literals`, each with its glue.
    learned: Vec<Learned>,
    /// Per literal: the clauses watching it, visited when it becomes false.
    watches: Vec<Vec<Watch>>,
    /// Per literal: 0 unassigned, 1 true, -1 false.
    value: Vec<i8>,
    level: Vec<u32>,
    reason: Vec<u32>,
    trail: Vec<Lit>,
    /// Where each decision level starts on the trail.
    levels: Vec<usize>,
    processed: usize,
    /// Level-0 values contradict: every call refutes.
    contradictory: bool,
    /// Learned clauses kept before all of them are dropped.
    max_learned: usize,
    /// Learned clauses a call adds between reductions (`REDUCE_EVERY`, but for tests).
    reduce_every: usize,
    /// `DROP_SETS_AFTER`, but for tests.
    drop_sets_after: u32,
    order: DecisionOrder,
    /// The variables in no clause: never decided, their values in a model are their phases.
    free: Vec<u32>,
    /// Variables decided before the activity order's ([`Refuter::decide_first`]).
    first: Vec<u32>,
    /// Entries of `first` before this one are assigned (reset by every backtrack).
    first_cursor: usize,
    saved_phase: Vec<bool>,
    seen: Vec<bool>,
    /// Per decision level: the conflict that last counted it in a learned clause's glue.
    glue_stamp: Vec<u64>,
    /// Conflicts of all calls so far: the stamps of `glue_stamp`.
    total_conflicts: u64,
    /// Variables [`Refuter::minimize`] marked `seen` beyond the learned clause's own.
    marked_on_the_way: Vec<usize>,
    /// Literals whose reasons [`Refuter::minimize`] has still to follow.
    pending: Vec<Lit>,
    /// Watches visited by propagation so far: the measure of probing's effort.
    ticks: u64,
    /// Literal occurrences in the formula's clauses.
    size: u64,
}

impl Refuter {
    /// A search over `cnf`.
    pub fn new(cnf: &Cnf) -> Self {
        let num_vars = cnf.num_vars();
        let free = free_variables(cnf);
        let mut refuter = Refuter {
            literals: Vec::new(),
            learned_from: 0,
            learned: Vec::new(),
            watches: vec![Vec::new(); 2 * num_vars],
            value: vec![0; 2 * num_vars],
            level: vec![0; num_vars],
            reason: vec![NO_REASON; num_vars],
            trail: Vec::new(),
            levels: Vec::new(),
            processed: 0,
            contradictory: false,
            max_learned: MAX_LEARNED,
            reduce_every: REDUCE_EVERY,
            drop_sets_after: DROP_SETS_AFTER,
            order: DecisionOrder::new(num_vars, &free),
            free,
            first: Vec::new(),
            first_cursor: 0,
            saved_phase: vec![false; num_vars],
            seen: vec![false; num_vars],
            glue_stamp: Vec::new(),
            total_conflicts: 0,
            marked_on_the_way: Vec::new(),
            pending: Vec::new(),
            ticks: 0,
            size: 0,
        };
        let mut units = Vec::new();
        let mut distinct = DistinctLiterals::new(num_vars);
        for clause in cnf.clauses() {
            refuter.size += clause.len() as u64;
            match distinct.of(clause) {
                None => {}
                Some([]) => refuter.contradictory = true,
                Some(&[unit]) => units.push(unit),
                Some(long) => {
                    refuter.add_clause(long);
                }
            }
        }
        refuter.learned_from = refuter.literals.len();
        for lit in units {
            match refuter.literal_value(lit) {
                Some(true) => {}
                Some(false) => refuter.contradictory = true,
                None => refuter.enqueue(lit, NO_REASON),
            }
        }
        if refuter.propagate().is_some() {
            refuter.contradictory = true;
        }
        refuter
    }

    fn clause(&self, c: u32) -> std::ops::Range<usize> {
        clause_range(&self.literals, c)
    }

    /// Adds a clause of at least two literals, watching its first two; its name.
    fn add_clause(&mut self, lits: &[Lit]) -> u32 {
        let clause = push_clause(&mut self.literals, lits);
        self.watch_clause(clause);
        clause
    }

    /// Watches clause `c`'s first two literals, each with the other as its blocker. A binary
    /// clause's watches say so: propagation then reads the other literal from the watch
    /// alone, never the clause, as the propagator does. A third of a sketch's clauses are
    /// binary (doublyLinkedList.sk_8_37: 9,980 of 26,918); alone, before propagation
    /// fetched ahead, this moved its run times by less than their noise.
    fn watch_clause(&mut self, c: u32) {
        let range = self.clause(c);
        let (a, b) = (self.literals[range.start], self.literals[range.start + 1]);
        let clause = if range.len() == 2 { c | BINARY } else { c };
        self.watches[literal_index(a)].push(Watch { clause, blocker: b });
        self.watches[literal_index(b)].push(Watch { clause, blocker: a });
    }

    #[inline]
    fn literal_value(&self, lit: Lit) -> Option<bool> {
        match self.value[literal_index(lit)] {
            0 => None,
            v => Some(v > 0),
        }
    }

    fn decision_level(&self) -> u32 {
        self.levels.len() as u32
    }

    fn enqueue(&mut self, lit: Lit, reason: u32) {
        prefetch(&self.watches[literal_index(-lit)]);
        let v = var_index(lit);
        self.value[literal_index(lit)] = 1;
        self.value[literal_index(-lit)] = -1;
        self.level[v] = self.decision_level();
        self.reason[v] = reason;
        self.trail.push(lit);
    }

    /// Whether `assumptions` contradict the formula, found within `max_conflicts`
    /// conflicts. `false` when a model was found, or when it gave up: at the limit, or when
    /// `give_up` says so (asked every few conflicts and decisions, so a run's deadline holds
    /// on large formulas). Neither the model nor the failed assumptions are made: splr's
    /// repairs ask this before every rebuild.
    pub fn refutes(
        &mut self,
        assumptions: &[Lit],
        max_conflicts: u32,
        give_up: &dyn Fn() -> bool,
    ) -> bool {
        let ended = self.run(
            &mut Cow::Borrowed(assumptions),
            false,
            max_conflicts,
            give_up,
        );
        self.backtrack(0);
        matches!(ended, Ended::Refuted(_))
    }

    /// A model with every literal of `assumptions` true, deciding free variables by their
    /// saved phases ([`Refuter::set_phase`]); or the assumptions that fail together; or
    /// nothing, after `max_conflicts` conflicts or when `give_up` says so.
    pub fn search(
        &mut self,
        assumptions: &[Lit],
        max_conflicts: u32,
        give_up: &dyn Fn() -> bool,
    ) -> Found {
        let ended = self.run(
            &mut Cow::Borrowed(assumptions),
            false,
            max_conflicts,
            give_up,
        );
        self.found(ended)
    }

    /// [`Refuter::search`] that keeps what it can of `assumptions`: an assumption found false
    /// under those placed before it (by propagation, or by what conflicts taught) is dropped
    /// from `assumptions` alone, and the search goes on from there, within the same
    /// `max_conflicts`; past 16 conflicts, the assumptions it failed with go with it. The
    /// model then has every assumption left true; `Refuted` only when the formula itself is
    /// contradictory. Assumptions that hold together are all kept.
    ///
    /// A repair's kept bits mostly fail by propagation alone, a pair at a time. Asked again
    /// without the failed set (`search`'s answer) until a model came, isolateRightmost.sk_7_481
    /// (seed 1, 1000 tests) took 6,851 refuted queries, each propagating its assumptions from
    /// level 0 again, 57% of the repairs' time; a repair refuted 8 times fell back to a fresh
    /// solution (751 of 900); a failed pair freed both bits where freeing one was enough. In
    /// one search the repairs kept 323 of their 344 bits on average (270 when each failed set
    /// was dropped whole and the search went on), and 1000-test runs of the slow sketches
    /// took 0.76-0.91x the time (sort.sk_8_52, isolateRightmost, doublyLinkedList.sk_8_37,
    /// enqueueSeqSK.sk_10_42; 0.97x over the 27, geometric mean). Where more kept bits leave
    /// a harder search, runs took longer: blasted_squaring16 1.74x (still a fifth of CMSGen's
    /// time), and isolateRightmost 1.31x on one seed of three. Each bit is on a level of its
    /// own, so a conflict that goes back below some places those above again (on
    /// blasted_squaring16, 85 placements a repair for 44 kept bits); with all on one level, a
    /// bit dropped on a conflict there placed the rest again, and isolateRightmost took twice
    /// as long.
    ///
    /// There, the time was in few searches: 8% of blasted_squaring16's repairs (seed 1) took
    /// 50-240 conflicts, 63% of all, freeing 23 of 53 bits one at a time, each found false
    /// only after conflicts. Once a search has had 16 conflicts (`DROP_SETS_AFTER`), a bit
    /// found false takes the bits it failed with along: blasted_squaring16 then took 0.59x
    /// the time (5,335 conflicts against 12,778), blasted_squaring7 0.83x, isolateRightmost
    /// 0.84x, the other 24 case studies 0.91-1.07x (medians of 4 runs, seeds 1-3), and the
    /// repairs kept nearly as many bits (blasted_squaring16 43.4 of 47.9 against 44.3 of
    /// 48.4, isolateRightmost 316 of 345 against 323 of 344). Against 16, sets dropped from 4
    /// conflicts on took isolateRightmost 1.19x (blasted_squaring16 0.82x), from 64 on
    /// blasted_squaring16 1.41x (isolateRightmost 1.15x); 8 and 32 were within 7%.
    pub fn search_relaxing(
        &mut self,
        assumptions: &mut Vec<Lit>,
        max_conflicts: u32,
        give_up: &dyn Fn() -> bool,
    ) -> Found {
        // Owned already: a drop takes the assumptions' own vector, not a copy.
        let mut kept = Cow::Owned(std::mem::take(assumptions));
        let ended = self.run(&mut kept, true, max_conflicts, give_up);
        *assumptions = kept.into_owned();
        self.found(ended)
    }

    /// What a search that `ended` so found, the trail then cleared.
    fn found(&mut self, ended: Ended) -> Found {
        let found = match ended {
            Ended::Model => Found::Model(self.model()),
            Ended::Refuted(None) => Found::Refuted(Vec::new()),
            Ended::Refuted(Some(falsified)) => Found::Refuted(self.failed_assumptions(falsified)),
            Ended::GaveUp => Found::GaveUp,
        };
        self.backtrack(0);
        found
    }

    /// The search itself, leaving the trail as it ended for the caller to read. With
    /// `drop_failed`, an assumption found false is dropped from `assumptions` instead of
    /// ending it.
    fn run(
        &mut self,
        assumptions: &mut Cow<[Lit]>,
        drop_failed: bool,
        max_conflicts: u32,
        give_up: &dyn Fn() -> bool,
    ) -> Ended {
        self.backtrack(0);
        if self.contradictory {
            return Ended::Refuted(None);
        }
        if self.learned.len() > self.max_learned {
            self.keep_learned(|_| false);
        }
        let (mut conflicts, mut decisions) = (0, 0u64);
        let mut restarts = Restarts::default();
        let mut reduce_at = self.learned.len() + self.reduce_every;
        loop {
            if let Some(conflict) = self.propagate() {
                if self.decision_level() == 0 {
                    self.contradictory = true;
                    break Ended::Refuted(None);
                }
                conflicts += 1;
                self.total_conflicts += 1;
                let (learned, back_to) = self.analyze(conflict);
                let glue = self.glue(&learned);
                self.backtrack(back_to);
                if learned.len() == 1 {
                    self.enqueue(learned[0], NO_REASON);
                } else {
                    let name = self.add_clause(&learned);
                    self.learned.push(Learned { name, glue });
                    self.enqueue(learned[0], name);
                }
                self.order.decay();
                if conflicts >= max_conflicts || (conflicts % 16 == 0 && give_up()) {
                    break Ended::GaveUp;
                }
                if restarts.due() {
                    if self.learned.len() >= reduce_at {
                        self.backtrack(0);
                        self.reduce_learned();
                        reduce_at = self.learned.len() + self.reduce_every;
                    } else {
                        self.backtrack(self.decision_level().min(assumptions.len() as u32));
                    }
                }
                continue;
            }
            let level = self.decision_level() as usize;
            if level < assumptions.len() {
                let lit = assumptions[level];
                match self.literal_value(lit) {
                    Some(false) if drop_failed && conflicts >= self.drop_sets_after => {
                        let failed = self.failed_assumptions(lit);
                        let first = assumptions[..level]
                            .iter()
                            .position(|a| failed.contains(a))
                            .unwrap_or(level);
                        assumptions.to_mut().retain(|a| !failed.contains(a));
                        // The assumptions before the first dropped one stand.
                        self.backtrack(first as u32);
                    }
                    // The assumptions placed so far stand; the next one takes its level.
                    Some(false) if drop_failed => _ = assumptions.to_mut().remove(level),
                    Some(false) => break Ended::Refuted(Some(lit)),
                    Some(true) => self.levels.push(self.trail.len()),
                    None => {
                        self.levels.push(self.trail.len());
                        self.enqueue(lit, NO_REASON);
                    }
                }
                continue;
            }
            decisions += 1;
            if decisions % 4096 == 0 && give_up() {
                break Ended::GaveUp;
            }
            let Some(v) = self.next_decision() else {
                break Ended::Model;
            };
            self.levels.push(self.trail.len());
            let lit = if self.saved_phase[v] {
                v as Lit + 1
            } else {
                -(v as Lit + 1)
            };
            self.enqueue(lit, NO_REASON);
        }
    }

    /// The value free variable `v` (from 0) is decided first with, until the search's own
    /// saved phase replaces it.
    pub fn set_phase(&mut self, v: usize, value: bool) {
        self.saved_phase[v] = value;
    }

    /// From the next search on, `vars` (from 0) are decided before any other, in this order,
    /// each as its phase says; empty: by activity alone.
    pub fn decide_first(&mut self, vars: &[usize]) {
        self.first.clear();
        self.first.extend(vars.iter().map(|&v| v as u32));
        self.first_cursor = 0;
    }

    /// Conflicts of every search so far.
    pub fn conflicts(&self) -> u64 {
        self.total_conflicts
    }

    /// Variables no value at the root fixes (after a search, which ends there).
    pub fn open_variables(&self) -> usize {
        let root = self.levels.first().copied().unwrap_or(self.trail.len());
        self.num_vars() - root
    }

    /// Every variable's value: as assigned, or for a variable in no clause, its phase.
    fn model(&self) -> Assignment {
        let mut model = Assignment::zeros(self.num_vars());
        for &v in &self.free {
            model.set(v as usize, self.saved_phase[v as usize]);
        }
        for &lit in &self.trail {
            model.set(var_index(lit), lit > 0);
        }
        model
    }

    fn next_decision(&mut self) -> Option<usize> {
        while let Some(&v) = self.first.get(self.first_cursor) {
            self.first_cursor += 1;
            if self.value[2 * v as usize] == 0 {
                return Some(v as usize);
            }
        }
        let open = self.num_vars() - self.trail.len();
        let value = &self.value;
        self.order.next(open, |v| value[2 * v] == 0)
    }

    fn num_vars(&self) -> usize {
        self.level.len()
    }
}

/// The variables in no clause of `cnf`. A formula whose gates were eliminated
/// ([`crate::solver::eliminate`]) keeps their numbers: deciding them would cost a query as
/// much as deciding the variables it has.
fn free_variables(cnf: &Cnf) -> Vec<u32> {
    let mut free = vec![true; cnf.num_vars()];
    for clause in cnf.clauses() {
        for &lit in clause {
            free[var_index(lit)] = false;
        }
    }
    (0..cnf.num_vars() as u32)
        .filter(|&v| free[v as usize])
        .collect()
}

#[cfg(test)]
mod tests;
