//! Step 1: the initial solutions, N of them from the solver (after any resumed tests), each
//! joining the suite and its file as soon as it is found.
//!
//! Where fresh solutions are hard searches and repairs near a known model are not (as on
//! karatsuba.sk_7_41), waiting for all N leaves the run at the speed of its fresh solutions.
//! So, unless the paper's loop is asked for (`SnapConfig::early_start` false), the rounds
//! start once `EARLY_SAMPLES` solutions are in if a quarter of them took `HARD_CONFLICTS`
//! conflicts or more. Conflicts, not times, decide, and the solutions are taken in task order, so the
//! suite stays a function of the seed and the lanes.
//!
//! Those first solutions come from one rank: solutions one search finds after each other lie
//! near each other, and on such formulas candidates drawn from several ranks' searches fail
//! their repairs more often.

use super::Snap;
use crate::assignment::Assignment;
use crate::budget::CoarseClock;
use crate::sampler::repair::Failure;
use crate::sampler::task::{Demand, Task, Verdict};
use crate::sampler::work::Workforce;
use crate::sampler::{derive_seed, Observer, SampleError};
use std::time::Instant;

/// Initial solutions before the rounds may start early: two per cluster.
const EARLY_SAMPLES: usize = 10;

/// Conflicts from which a fresh solution counts as a hard search: above what all but a few
/// fresh solutions of the easier case studies take, below what most of the hardest ones'
/// take (`git log -S HARD_CONFLICTS` gives the figures).
const HARD_CONFLICTS: u64 = 1_000;

/// How the first initial solutions went: whether the rounds start without the rest.
#[derive(Default)]
struct EarlyStart {
    allowed: bool,
    solutions: usize,
    hard: usize,
}

impl EarlyStart {
    /// Counts a solution whose searches had `conflicts`.
    fn record(&mut self, conflicts: u64) {
        self.solutions += 1;
        self.hard += usize::from(conflicts >= HARD_CONFLICTS);
    }

    /// The rounds start now: at least a quarter of the solutions so far were hard.
    fn starts(&self) -> bool {
        self.allowed && self.solutions > 0 && 4 * self.hard >= self.solutions
    }
}

/// The initial solutions so far, the first failure, and whether the rounds start early.
type Progress<'p> = (
    &'p mut Vec<Assignment>,
    &'p mut Option<Failure>,
    &'p mut EarlyStart,
);

impl Snap<'_> {
    /// Step 1: resumed tests, then solutions up to N spread over the workforce; the first
    /// solve runs alone and decides whether the formula is satisfiable.
    pub(super) fn initial_samples(
        &mut self,
        workforce: &mut dyn Workforce,
        resumed: &[Assignment],
        observer: &mut dyn Observer,
    ) -> Result<Vec<Assignment>, SampleError> {
        let t = Instant::now();
        let seed = self.config.seed;
        let n = self.config.samples.max(1);
        let mut samples = Vec::new();
        let mut quiet = |_: &Assignment| Ok(());
        for test in resumed {
            if self.suite.admit(test, &mut quiet)?.is_some() {
                samples.push(test.clone());
            }
        }
        self.report.resumed = samples.len();
        // Seeds continue after the resumed tests, so that a resumed run with the same seed
        // does not solve for the solutions it already has.
        let offset = samples.len() as u64;
        let solve = |i: u64| Task::Solve {
            seed: derive_seed(seed, 0, offset + i),
        };
        let needed = n.saturating_sub(samples.len()) as u64;
        let mut first_failure = None;
        let mut early = EarlyStart {
            allowed: self.config.early_start,
            ..EarlyStart::default()
        };
        let mut progress = (&mut samples, &mut first_failure, &mut early);
        let mut next = 0;
        if needed > 0 && progress.0.is_empty() {
            // The first solve runs alone: it decides whether the formula is satisfiable.
            self.solve_initial(workforce, vec![solve(0)], true, &mut progress, observer)?;
            // An unsatisfiable formula (or a first search given up) asks nothing more.
            next = if progress.1.is_some() { needed } else { 1 };
        }
        // Where the rounds may start early, the first `EARLY_SAMPLES` are a list of their
        // own, all done before the rule reads them: each lane's session has then seen the
        // same tasks, whatever the timing. They are solved on one rank: where fresh
        // solutions are hard searches, the rounds may start from them alone, and candidates
        // drawn from one search's solutions need cheaper repairs.
        let early_end = if progress.2.allowed {
            (EARLY_SAMPLES as u64).clamp(next, needed)
        } else {
            next
        };
        for end in [early_end, needed] {
            if next == end || self.suite.is_full() {
                continue;
            }
            if next == early_end && progress.2.starts() {
                self.report.started_early = true;
                break;
            }
            let list: Vec<Task> = (next..end).map(solve).collect();
            let on_one_rank = end == early_end;
            self.solve_initial(workforce, list, on_one_rank, &mut progress, observer)?;
            next = end;
        }
        self.report.seconds.initial = t.elapsed().as_secs_f64();
        if samples.is_empty() {
            if self.budget.interrupted() {
                return Err(SampleError::Interrupted);
            }
            return Err(match first_failure {
                Some(Failure::Unsat) | None => SampleError::Unsat,
                Some(Failure::Unknown(why)) => SampleError::Unknown(why),
            });
        }
        samples.sort();
        samples.dedup();
        Ok(samples)
    }

    /// `tasks` (solves) done by the workforce, or by its first rank alone, each solution
    /// taken in as it comes.
    fn solve_initial(
        &mut self,
        workforce: &mut dyn Workforce,
        tasks: Vec<Task>,
        on_one_rank: bool,
        progress: &mut Progress,
        observer: &mut dyn Observer,
    ) -> Result<(), SampleError> {
        let mut deliver = |verdicts: &mut dyn Iterator<Item = Verdict>| {
            self.merge_burst(verdicts, observer, |snap, observer, verdict, clock| {
                snap.take_initial(verdict, progress, observer, clock)
            })
        };
        if on_one_rank {
            workforce.run_on_one_rank(tasks, &mut deliver)
        } else {
            workforce.run(&[], tasks, &mut deliver)
        }
    }

    /// An initial solution joins the suite (and its file) as soon as it is found.
    fn take_initial(
        &mut self,
        verdict: Verdict,
        (samples, first_failure, early): &mut Progress,
        observer: &mut dyn Observer,
        clock: &CoarseClock,
    ) -> Result<Demand, SampleError> {
        let now = clock.now();
        if self.too_late(now) {
            // Initial solutions are no candidates: not in `dropped_candidates` either.
            return Ok(Demand::Enough);
        }
        match verdict {
            Verdict::Completed { done, fingerprint } => {
                self.note_completion(&done, true);
                self.admit(done.test.clone(), fingerprint, observer)?;
                samples.push(done.test);
                early.record(done.conflicts);
            }
            Verdict::Failed(failure) => {
                first_failure.get_or_insert(failure.clone());
                self.note_failure(failure);
            }
            Verdict::Skipped => {
                first_failure.get_or_insert(Failure::Unknown("time limit reached".into()));
            }
            Verdict::Invalid => {
                self.report.invalid_dropped += 1;
                first_failure.get_or_insert(Failure::Unknown(
                    "the solver's model failed the clause check".into(),
                ));
            }
            Verdict::Valid { .. } => unreachable!("solve tasks have no candidate"),
            Verdict::Kept { .. } => return Err(super::kept_outside_a_round()),
        }
        Ok(self.demand(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rounds start early where a quarter of the solutions so far were hard; never when
    /// the paper's loop is asked for.
    #[test]
    fn early_start_takes_a_quarter_of_hard_solutions() {
        let starts = |allowed: bool, hard: usize, easy: usize| {
            let mut early = EarlyStart {
                allowed,
                ..EarlyStart::default()
            };
            (0..hard).for_each(|_| early.record(HARD_CONFLICTS));
            (0..easy).for_each(|_| early.record(HARD_CONFLICTS - 1));
            early.starts()
        };
        assert!(starts(true, 3, 7));
        assert!(!starts(true, 2, 7));
        assert!(!starts(false, 10, 0));
        assert!(!starts(true, 0, 0));
    }
}
