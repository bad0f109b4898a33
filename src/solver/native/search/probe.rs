//! Failed-literal probing when a lane opens.

use super::*;

/// Passes of failed-literal probing at most ([`Refuter::probe`]).
pub(super) const PROBE_PASSES: usize = 4;

/// Watches probing may visit per literal occurrence of the formula.
pub(super) const PROBE_TICKS: u64 = 50;

impl Refuter {
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
    pub(super) fn probe_pass(
        &mut self,
        limit: u64,
        give_up: &dyn Fn() -> bool,
        fixed: &mut usize,
    ) -> bool {
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
}
