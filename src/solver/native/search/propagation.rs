//! Unit propagation over two watched literals (the loop shared with `crate::propagate`), and backtracking.

use super::*;

impl Refuter {
    /// Propagates the trail; the clause found false, if any.
    pub(super) fn propagate(&mut self) -> Option<u32> {
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
    }
}
