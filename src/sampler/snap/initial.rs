//! Step 1: the initial solutions, N of them from the solver (after any resumed tests), each
//! joining the suite and its file as soon as it is found.

use super::Snap;
use crate::assignment::Assignment;
use crate::budget::CoarseClock;
use crate::sampler::repair::Failure;
use crate::sampler::task::{Demand, Task, Verdict};
use crate::sampler::work::Workforce;
use crate::sampler::{derive_seed, Observer, SampleError};
use std::time::Instant;

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
        let mut first = 0;
        if needed > 0 && samples.is_empty() {
            // The first solve runs alone: it decides whether the formula is satisfiable.
            let one = vec![solve(0)];
            self.solve_initial(workforce, one, &mut samples, &mut first_failure, observer)?;
            first = 1;
        }
        if first_failure.is_none() && !self.suite.is_full() {
            let rest: Vec<Task> = (first..needed).map(solve).collect();
            if !rest.is_empty() {
                self.solve_initial(workforce, rest, &mut samples, &mut first_failure, observer)?;
            }
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

    /// `tasks` (solves) done by the workforce, each solution taken in as it comes.
    fn solve_initial(
        &mut self,
        workforce: &mut dyn Workforce,
        tasks: Vec<Task>,
        samples: &mut Vec<Assignment>,
        first_failure: &mut Option<Failure>,
        observer: &mut dyn Observer,
    ) -> Result<(), SampleError> {
        workforce.run(&[], tasks, &mut |verdicts| {
            self.merge_burst(verdicts, observer, |snap, observer, verdict, clock| {
                snap.take_initial(verdict, samples, first_failure, observer, clock)
            })
        })
    }

    /// An initial solution joins the suite (and its file) as soon as it is found.
    fn take_initial(
        &mut self,
        verdict: Verdict,
        samples: &mut Vec<Assignment>,
        first_failure: &mut Option<Failure>,
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
        }
        Ok(self.demand(now))
    }
}
