//! Conflict analysis: first-UIP learning, recursive minimization, glue, and the assumptions a final conflict fails.

use super::*;

impl Refuter {
    /// The first-UIP clause learned from the false clause `conflict`, its asserting literal
    /// first and a literal of the level to go back to second; and that level.
    pub(super) fn analyze(&mut self, conflict: u32) -> (Vec<Lit>, u32) {
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
    pub(super) fn glue(&mut self, learned: &[Lit]) -> u32 {
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

    /// Drops from `learned` (its literals past the first marked `seen`) every literal implied
    /// by the others (recursive minimization, as MiniSat does): shorter clauses propagate
    /// sooner and cost fewer watches. A literal goes when its reason's other literals are
    /// each in the clause, fixed at level 0, or themselves implied so; the search stops
    /// early at a decision, or at a level no literal of the clause is on. Leaves `seen` set
    /// exactly on the literals kept.
    pub(super) fn minimize(&mut self, learned: &mut Vec<Lit>) {
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
    pub(super) fn implied_by_marked(&mut self, lit: Lit, levels: u64) -> bool {
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

    /// The assumptions behind assumption `falsified` being false: those on the trail its
    /// negation was implied from (the assumptions are the trail's only decisions yet), and
    /// itself.
    pub(super) fn failed_assumptions(&mut self, falsified: Lit) -> Vec<Lit> {
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
}
