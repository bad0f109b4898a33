//! Unit propagation over two watched literals (the loop is `crate::propagate`'s), and backtracking.

use super::*;

impl WatchedTrail for Refuter {
    #[inline(always)]
    fn watched(&mut self) -> (&mut [Vec<Watch>], &mut [Lit], &[i8]) {
        (&mut self.watches, &mut self.literals, &self.value)
    }

    #[inline(always)]
    fn enqueue(&mut self, lit: Lit, reason: u32) {
        Refuter::enqueue(self, lit, reason);
    }
}

impl Refuter {
    /// Propagates the trail; the clause found false, if any.
    pub(super) fn propagate(&mut self) -> Option<u32> {
        while self.processed < self.trail.len() {
            let falsified = -self.trail[self.processed];
            self.processed += 1;
            prefetch_watch_lists(&self.trail[self.processed..], &self.watches);
            let (conflict, read) = visit_watches(self, falsified);
            self.ticks += read as u64;
            if conflict.is_some() {
                return conflict;
            }
        }
        None
    }

    /// Unassigns every level above `level`, saving the phases.
    pub(super) fn backtrack(&mut self, level: u32) {
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
        self.first_cursor = 0;
    }
}
