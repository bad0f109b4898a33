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

mod order;

use crate::assignment::Assignment;
use crate::formula::{literal_index, var_index, Cnf, Lit};
use crate::propagate::{
    clause_range, keep_unvisited, prefetch, prefetch_clause, prefetch_watch_lists, push_clause,
    visit_clause, DistinctLiterals, Visited, Watch, BINARY,
};
use order::DecisionOrder;
use std::borrow::Cow;

/// No reason: a decision, an assumption, or a value fixed at level 0.
const NO_REASON: u32 = u32::MAX;
/// Learned clauses kept before all of them are dropped (at the start of a call): what bounds
/// the memory of a refuter asked all run long.
const MAX_LEARNED: usize = 20_000;
/// Passes of failed-literal probing at most ([`Refuter::probe`]).
const PROBE_PASSES: usize = 4;
/// Watches probing may visit per literal occurrence of the formula.
const PROBE_TICKS: u64 = 50;

/// A learned clause, by its name in `Refuter::literals`, and its glue ([`Refuter::glue`]).
#[derive(Debug, Clone, Copy)]
struct Learned {
    name: u32,
    glue: u32,
}

/// Learned clauses of glue up to this are never dropped within a call (Glucose's "glue
/// clauses" are those of 2).
const KEPT_GLUE: u32 = 2;
/// Learned clauses a call adds between reductions of them ([`Refuter::reduce_learned`]).
const REDUCE_EVERY: usize = 2_000;

/// Conflicts after which a relaxing search ([`Refuter::search_relaxing`]) drops the whole set
/// an assumption found false failed with, not that assumption alone (see there).
const DROP_SETS_AFTER: u32 = 16;

/// Conflicts between restarts, times the Luby sequence's terms (MiniSat's unit).
const RESTART_UNIT: u64 = 100;

/// When a search starts over from its assumptions, keeping what it learned and its saved
/// phases: after `RESTART_UNIT` times 1, 1, 2, 1, 1, 2, 4, … conflicts (Luby's sequence).
/// Without restarts a search stays under its first decisions however badly they chose, and
/// the long searches of a fresh solution on the hardest case studies are where its time
/// went.
#[derive(Debug, Default)]
struct Restarts {
    /// Restarts so far.
    done: u64,
    /// Conflicts since the last.
    conflicts: u64,
}

impl Restarts {
    /// Counts a conflict; true when the search is to restart now.
    fn due(&mut self) -> bool {
        self.conflicts += 1;
        if self.conflicts < RESTART_UNIT * luby(self.done) {
            return false;
        }
        self.done += 1;
        self.conflicts = 0;
        true
    }
}

/// Term `i` (from 0) of Luby's sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, ….
fn luby(mut i: u64) -> u64 {
    // The smallest complete prefix 2^k − 1 holding term i, then down into the copy i is in.
    let (mut size, mut exponent) = (1u64, 0u32);
    while size < i + 1 {
        exponent += 1;
        size = 2 * size + 1;
    }
    while size - 1 != i {
        size = (size - 1) >> 1;
        exponent -= 1;
        i %= size;
    }
    1 << exponent
}

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
            order: DecisionOrder::new(num_vars),
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

    /// Propagates the trail; the clause found false, if any.
    fn propagate(&mut self) -> Option<u32> {
        while self.processed < self.trail.len() {
            let falsified = -self.trail[self.processed];
            self.processed += 1;
            prefetch_watch_lists(&self.trail[self.processed..], &self.watches);
            let mut watching = std::mem::take(&mut self.watches[literal_index(falsified)]);
            let (mut read, mut kept) = (0, 0);
            let mut conflict = None;
            while read < watching.len() {
                let mut watch = watching[read];
                read += 1;
                prefetch_clause(&self.literals, watching.get(read));
                let blocker_value = self.value[literal_index(watch.blocker)];
                if blocker_value > 0 {
                    watching[kept] = watch;
                    kept += 1;
                    continue;
                }
                if watch.clause & BINARY != 0 {
                    // The clause may hold the implied literal second: its reasons are read
                    // by variable, not by place (`analyze`, `failed_assumptions`).
                    watching[kept] = watch;
                    kept += 1;
                    let clause = watch.clause & !BINARY;
                    if blocker_value < 0 {
                        conflict = Some(clause);
                        break;
                    }
                    self.enqueue(watch.blocker, clause);
                    continue;
                }
                let range = self.clause(watch.clause);
                let clause = &mut self.literals[range];
                let visited = visit_clause(clause, falsified, &self.value);
                watch.blocker = clause[0];
                match visited {
                    Visited::Moved(to) => {
                        self.watches[literal_index(to)].push(watch);
                        continue;
                    }
                    Visited::Satisfied => {}
                    Visited::Unit(lit) => self.enqueue(lit, watch.clause),
                    Visited::Conflict => conflict = Some(watch.clause),
                }
                watching[kept] = watch;
                kept += 1;
                if conflict.is_some() {
                    break;
                }
            }
            self.ticks += read as u64;
            keep_unvisited(&mut watching, kept, read);
            self.watches[literal_index(falsified)] = watching;
            if conflict.is_some() {
                return conflict;
            }
        }
        None
    }

    /// Unassigns every level above `level`, saving the phases.
    fn backtrack(&mut self, level: u32) {
        if self.decision_level() <= level {
            return;
        }
        let start = self.levels[level as usize];
        for i in (start..self.trail.len()).rev() {
            let lit = self.trail[i];
            let v = var_index(lit);
            self.value[literal_index(lit)] = 0;
            self.value[literal_index(-lit)] = 0;
            self.saved_phase[v] = lit > 0;
            self.order.insert(v);
        }
        self.trail.truncate(start);
        self.processed = start;
        self.levels.truncate(level as usize);
    }

    /// The first-UIP clause learned from the false clause `conflict`, its asserting literal
    /// first and a literal of the level to go back to second; and that level.
    fn analyze(&mut self, conflict: u32) -> (Vec<Lit>, u32) {
        let mut learned: Vec<Lit> = vec![0];
        let mut open = 0;
        let mut index = self.trail.len();
        let mut clause = conflict;
        let mut resolved: Option<Lit> = None;
        loop {
            let range = self.clause(clause);
            // A reason clause holds the literal it implied, resolved on here.
            let implied = resolved.map(var_index);
            for k in range {
                let lit = self.literals[k];
                let v = var_index(lit);
                if Some(v) != implied && !self.seen[v] && self.level[v] > 0 {
                    self.seen[v] = true;
                    self.order.bump(v);
                    if self.level[v] >= self.decision_level() {
                        open += 1;
                    } else {
                        learned.push(lit);
                    }
                }
            }
            loop {
                index -= 1;
                if self.seen[var_index(self.trail[index])] {
                    break;
                }
            }
            let lit = self.trail[index];
            let v = var_index(lit);
            self.seen[v] = false;
            open -= 1;
            resolved = Some(lit);
            if open == 0 {
                learned[0] = -lit;
                break;
            }
            clause = self.reason[v];
        }
        self.minimize(&mut learned);
        for &lit in &learned[1..] {
            self.seen[var_index(lit)] = false;
        }
        let mut back_to = 0;
        if learned.len() > 1 {
            let deepest = (1..learned.len())
                .max_by_key(|&k| self.level[var_index(learned[k])])
                .expect("a literal past the first");
            learned.swap(1, deepest);
            back_to = self.level[var_index(learned[1])];
        }
        (learned, back_to)
    }

    /// The decision levels among `learned`'s literals (its glue, or LBD): the fewer, the more
    /// often the clause propagates, as Glucose keeps them.
    fn glue(&mut self, learned: &[Lit]) -> u32 {
        let levels = self.decision_level() as usize + 1;
        if self.glue_stamp.len() < levels {
            self.glue_stamp.resize(levels, 0);
        }
        let mut glue = 0;
        for &lit in learned {
            let level = self.level[var_index(lit)] as usize;
            if self.glue_stamp[level] != self.total_conflicts {
                self.glue_stamp[level] = self.total_conflicts;
                glue += 1;
            }
        }
        glue
    }

    /// Drops the worse half of the learned clauses whose glue is above `KEPT_GLUE`, the
    /// higher glue first, the older first among equals; at level 0. A long search otherwise
    /// propagates through every clause it ever learned: a fresh solution of
    /// karatsuba.sk_7_41 learns up to 20,000.
    fn reduce_learned(&mut self) {
        let mut candidates: Vec<usize> = (0..self.learned.len())
            .filter(|&k| self.learned[k].glue > KEPT_GLUE)
            .collect();
        candidates.sort_by_key(|&k| (std::cmp::Reverse(self.learned[k].glue), k));
        let mut dropped = vec![false; self.learned.len()];
        for &k in &candidates[..candidates.len() / 2] {
            dropped[k] = true;
        }
        self.keep_learned(|k| !dropped[k]);
    }

    /// Drops from `learned` (its literals past the first marked `seen`) every literal implied
    /// by the others (recursive minimization, as MiniSat does): shorter clauses propagate
    /// sooner and cost fewer watches. A literal goes when its reason's other literals are
    /// each in the clause, fixed at level 0, or themselves implied so; the search stops
    /// early at a decision, or at a level no literal of the clause is on. Leaves `seen` set
    /// exactly on the literals kept.
    fn minimize(&mut self, learned: &mut Vec<Lit>) {
        let levels = learned[1..].iter().fold(0u64, |levels, &lit| {
            levels | 1 << (self.level[var_index(lit)] % 64)
        });
        let mut kept = 1;
        for k in 1..learned.len() {
            let lit = learned[k];
            if self.reason[var_index(lit)] == NO_REASON || !self.implied_by_marked(lit, levels) {
                learned[kept] = lit;
                kept += 1;
            } else {
                // Still marked while the others are looked at: it is implied by them.
                self.marked_on_the_way.push(var_index(lit));
            }
        }
        learned.truncate(kept);
        for v in self.marked_on_the_way.drain(..) {
            self.seen[v] = false;
        }
    }

    /// Whether `lit`'s reason clause, followed back, ends only in literals marked `seen` or
    /// fixed at level 0 (see [`Refuter::minimize`]). Literals found implied on the way are
    /// marked too, and listed in `marked_on_the_way` for clearing; on a failure, the marks of
    /// this search are undone.
    fn implied_by_marked(&mut self, lit: Lit, levels: u64) -> bool {
        let undo_to = self.marked_on_the_way.len();
        self.pending.clear();
        self.pending.push(lit);
        while let Some(implied) = self.pending.pop() {
            let implied_var = var_index(implied);
            for k in self.clause(self.reason[implied_var]) {
                let v = var_index(self.literals[k]);
                if v == implied_var || self.seen[v] || self.level[v] == 0 {
                    continue;
                }
                let on_a_clause_level = levels & (1 << (self.level[v] % 64)) != 0;
                if self.reason[v] == NO_REASON || !on_a_clause_level {
                    for v in self.marked_on_the_way.drain(undo_to..) {
                        self.seen[v] = false;
                    }
                    return false;
                }
                self.seen[v] = true;
                self.marked_on_the_way.push(v);
                self.pending.push(self.literals[k]);
            }
        }
        true
    }

    /// Keeps the learned clauses `keep` says, in their order, and watches every clause
    /// anew; at level 0 only, where no reason is needed.
    fn keep_learned(&mut self, keep: impl Fn(usize) -> bool) {
        let learned = std::mem::take(&mut self.learned);
        let mut end = self.learned_from;
        for (k, clause) in learned.iter().enumerate() {
            if !keep(k) {
                continue;
            }
            let range = self.clause(clause.name);
            let len = range.len();
            self.literals.copy_within(range.start - 1..range.end, end);
            self.learned.push(Learned {
                name: (end + 1) as u32,
                glue: clause.glue,
            });
            end += len + 1;
        }
        self.literals.truncate(end);
        for list in &mut self.watches {
            list.clear();
        }
        let mut length_at = 0;
        while length_at < self.literals.len() {
            let c = length_at as u32 + 1;
            self.watch_clause(c);
            length_at = self.clause(c).end;
        }
        for &lit in &self.trail {
            self.reason[var_index(lit)] = NO_REASON;
        }
        // Watches chosen anew may be false at level 0: propagating level 0 again moves them.
        self.processed = 0;
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

    /// Fixes at the root every literal whose opposite propagates to a conflict (failed-literal
    /// probing), until `give_up` says so; the number of literals fixed so. The units alone
    /// leave most of a sketch's variables open at the root (81.sk_5_51: 8,800 of 10,775),
    /// and every query assigned them all again; probing leaves 999 open there, as CaDiCaL's
    /// preprocessing does. A literal implied by one probed without a conflict is not probed
    /// in the same pass (its implications are among that one's); another pass follows while
    /// the last fixed a tenth of the open variables or more, all within `PROBE_TICKS`
    /// watches visited per literal of the formula (81.sk_5_51 takes 43, compress.sk_17_291
    /// 207 for less).
    pub fn probe(&mut self, give_up: &dyn Fn() -> bool) -> usize {
        self.backtrack(0);
        if self.contradictory || self.propagate().is_some() {
            self.contradictory = true;
            return 0;
        }
        let phases = self.saved_phase.clone();
        let limit = self.ticks + PROBE_TICKS * self.size;
        let mut fixed = 0;
        for _ in 0..PROBE_PASSES {
            let open = self.open_variables();
            if !self.probe_pass(limit, give_up, &mut fixed) {
                break;
            }
            if self.contradictory || (open - self.open_variables()) * 10 < open {
                break;
            }
        }
        // Probing's assignments are nobody's phases.
        self.saved_phase = phases;
        fixed
    }

    /// One pass of [`Refuter::probe`], counting the literals it fixes in `fixed`; false when
    /// the ticks reached `limit` or `give_up` said so before the end.
    fn probe_pass(&mut self, limit: u64, give_up: &dyn Fn() -> bool, fixed: &mut usize) -> bool {
        let mut covered = vec![false; self.value.len()];
        for v in 0..self.num_vars() {
            if self.ticks >= limit || (v % 1024 == 0 && give_up()) {
                return false;
            }
            for lit in [v as Lit + 1, -(v as Lit + 1)] {
                if self.value[literal_index(lit)] != 0 || covered[literal_index(lit)] {
                    continue;
                }
                let start = self.trail.len();
                self.levels.push(start);
                self.enqueue(lit, NO_REASON);
                let conflict = self.propagate().is_some();
                if !conflict {
                    for &implied in &self.trail[start..] {
                        covered[literal_index(implied)] = true;
                    }
                }
                self.backtrack(0);
                if conflict {
                    *fixed += 1;
                    self.enqueue(-lit, NO_REASON);
                    if self.propagate().is_some() {
                        self.contradictory = true;
                        return true;
                    }
                }
            }
        }
        true
    }

    /// Variables no value at the root fixes (after a search, which ends there).
    pub fn open_variables(&self) -> usize {
        let root = self.levels.first().copied().unwrap_or(self.trail.len());
        self.num_vars() - root
    }

    /// Every variable's value, all of them assigned.
    fn model(&self) -> Assignment {
        let mut model = Assignment::zeros(self.num_vars());
        for &lit in &self.trail {
            if lit > 0 {
                model.set(var_index(lit), true);
            }
        }
        model
    }

    /// The assumptions behind assumption `falsified` being false: those on the trail its
    /// negation was implied from (the assumptions are the trail's only decisions yet), and
    /// itself.
    fn failed_assumptions(&mut self, falsified: Lit) -> Vec<Lit> {
        let mut failed = vec![falsified];
        let v = var_index(falsified);
        if self.level[v] == 0 {
            return failed;
        }
        self.seen[v] = true;
        let start = self.levels[0];
        for i in (start..self.trail.len()).rev() {
            let lit = self.trail[i];
            let u = var_index(lit);
            if !self.seen[u] {
                continue;
            }
            self.seen[u] = false;
            let reason = self.reason[u];
            if reason == NO_REASON {
                failed.push(lit);
                continue;
            }
            for k in self.clause(reason) {
                let w = var_index(self.literals[k]);
                if w != u && self.level[w] > 0 {
                    self.seen[w] = true;
                }
            }
        }
        failed
    }

    fn next_decision(&mut self) -> Option<usize> {
        let open = self.num_vars() - self.trail.len();
        let value = &self.value;
        self.order.next(open, |v| value[2 * v] == 0)
    }

    fn num_vars(&self) -> usize {
        self.level.len()
    }
}

#[cfg(test)]
mod tests;
