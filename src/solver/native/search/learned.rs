//! The learned clauses: how many are kept, and which are dropped when they are reduced.

use super::*;

/// Learned clauses kept before all of them are dropped (at the start of a call): what bounds
/// the memory of a refuter asked all run long.
pub(super) const MAX_LEARNED: usize = 20_000;

/// A learned clause, by its name in `Refuter::literals`, and its glue ([`Refuter::glue`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Learned {
    pub(super) name: u32,
    pub(super) glue: u32,
}

/// Learned clauses of glue up to this are never dropped within a call (Glucose's "glue
/// clauses" are those of 2).
pub(super) const KEPT_GLUE: u32 = 2;

/// Learned clauses a call adds between reductions of them ([`Refuter::reduce_learned`]).
pub(super) const REDUCE_EVERY: usize = 2_000;

impl Refuter {
    /// Drops the worse half of the learned clauses whose glue is above `KEPT_GLUE`, the
    /// higher glue first, the older first among equals; at level 0. A long search otherwise
    /// propagates through every clause it ever learned: a fresh solution of
    /// karatsuba.sk_7_41 learns up to 20,000.
    pub(super) fn reduce_learned(&mut self) {
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

    /// Keeps the learned clauses `keep` says, in their order, and watches every clause
    /// anew; at level 0 only, where no reason is needed.
    pub(super) fn keep_learned(&mut self, keep: impl Fn(usize) -> bool) {
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
}
