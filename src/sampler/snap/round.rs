//! Steps 2–3 once: the delta pool, the centroids, the candidates checked and repaired by the
//! workforce, each new test merged into the suite as its verdict arrives; then step 4's
//! measurement.
//!
//! A round is prepared (pool, centroids, candidates) from the samples as the previous round
//! left them, so the next one is prepared while the measuring thread finishes this one's
//! measures: on runs of small circuits, where a round's end waited 1–3 ms for them, that wait
//! was a quarter of the run. Preparing depends on nothing the measures say, so the suite is
//! the same; a round prepared and then not run (the stop rule said stop) costs one round's
//! preparation at the end of a run.

use super::{candidates, deltas, kmeans, Snap};
use crate::assignment::Assignment;
use crate::sampler::work::{Task, Verdict, Workforce};
use crate::sampler::{derive_seed, Observer, RoundStats, SampleError};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// A round ready to run: what steps 2 and 3a made of the samples, and its candidates.
pub(super) struct Prepared {
    /// The round's figures so far (its number, samples, deltas, centroids).
    stats: RoundStats,
    centroids: Vec<Assignment>,
    /// Empty when the delta pool is (every sample the same).
    tasks: Vec<Task>,
    /// Time spent preparing that counts in this round's figures: none when prepared ahead,
    /// within the previous round's.
    seconds: f64,
}

impl Snap<'_> {
    /// Steps 2, 3a and the draw of 3b for round `round` from the samples as they stand.
    pub(super) fn prepare(&mut self, round: usize, samples: &[Assignment]) -> Prepared {
        let started = Instant::now();
        let seed = self.config.seed;
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, 1, round as u64));
        let n = self.config.samples.max(1);

        // Steps 2 and 3a work on at most N samples, drawn afresh each round: the pool then
        // holds at most N(N−1)/2 pairs, and k-means costs the same in round 30 as in round 1,
        // however many repaired samples have joined (over all of them it grew with the suite:
        // 1.6 of the coordinator's 2.5 s in 30 rounds of 70.sk_3_40, its 14,000 samples).
        let t = Instant::now();
        let mut basis: Vec<&Assignment> = samples.iter().collect();
        if basis.len() > n {
            basis.shuffle(&mut rng);
            basis.truncate(n);
        }
        let pool = deltas::DeltaPool::from_samples(&basis);
        self.report.seconds.deltas += t.elapsed().as_secs_f64();

        // Step 3a.
        let t = Instant::now();
        let centroids = kmeans::centroids(&basis, self.config.clusters, &mut rng);
        self.report.seconds.clustering += t.elapsed().as_secs_f64();

        // Step 3b's candidates, drawn sequentially (cheap, deterministic).
        let tasks = if pool.is_empty() {
            Vec::new()
        } else {
            candidates::draw(&pool, centroids.len(), n, &mut rng, seed, round)
        };
        Prepared {
            stats: RoundStats {
                round,
                samples: samples.len(),
                distinct_deltas: pool.len(),
                repeated_delta_pairs: pool.repeated_pairs(),
                centroids: centroids.len(),
                ..Default::default()
            },
            centroids,
            tasks,
            seconds: started.elapsed().as_secs_f64(),
        }
    }

    /// Step 3b's candidates checked and repaired by the workforce, then step 4's measures;
    /// while they are being measured, the next round is prepared unless a stop is certain
    /// already (`next`, for round `round + 1`).
    pub(super) fn round(
        &mut self,
        workforce: &mut dyn Workforce,
        prepared: Prepared,
        samples: &mut Vec<Assignment>,
        observer: &mut dyn Observer,
        next: &mut Option<Prepared>,
    ) -> Result<RoundStats, SampleError> {
        let started = Instant::now();
        let Prepared {
            mut stats,
            centroids,
            tasks,
            seconds: preparing,
        } = prepared;
        let mut working = 0.0;
        let merged = self.merging;
        if !tasks.is_empty() {
            let t = Instant::now();
            let before = self.suite.tests().len();
            let busy = workforce.busy();
            workforce.run(&centroids, tasks, &mut |verdict| {
                match verdict {
                    Verdict::Skipped => stats.skipped += 1,
                    Verdict::Valid(test) => {
                        stats.candidates += 1;
                        stats.valid_before_repair += 1;
                        self.admit(&test, observer)?;
                    }
                    Verdict::Completed(done) => {
                        stats.candidates += 1;
                        stats.repaired += 1;
                        self.note_completion(&done, false);
                        self.report.fresh_fallbacks += u64::from(done.fresh);
                        if self.admit(&done.test, observer)? {
                            samples.push(done.test);
                        }
                    }
                    Verdict::Failed(failure) => {
                        stats.candidates += 1;
                        stats.failed_repairs += 1;
                        self.note_failure(failure);
                    }
                    Verdict::Invalid => {
                        stats.candidates += 1;
                        stats.failed_repairs += 1;
                        self.report.invalid_dropped += 1;
                    }
                }
                Ok(self.demand())
            })?;
            working = t.elapsed().as_secs_f64();
            self.report.seconds.verify_repair += working;
            stats.work_seconds = (workforce.busy() - busy).as_secs_f64();

            self.report.candidates += stats.candidates;
            self.report.valid_before_repair += stats.valid_before_repair;
            self.report.repaired += stats.repaired;
            self.report.failed_repairs += stats.failed_repairs;
            stats.new_tests = self.suite.tests().len() - before;
        }
        self.measures_up_to_date().ask();
        *next = self.prepare_ahead(stats.round, samples);
        self.measure(&mut stats);
        stats.seconds = preparing + started.elapsed().as_secs_f64();
        stats.merge_seconds = (self.merging - merged).as_secs_f64();
        stats.coordinator_seconds = stats.seconds - working + stats.merge_seconds;
        Ok(stats)
    }

    /// Round `round + 1` prepared, unless the run stops after round `round` whatever its
    /// measures say.
    pub(super) fn prepare_ahead(
        &mut self,
        round: usize,
        samples: &[Assignment],
    ) -> Option<Prepared> {
        if self.halted(round).is_some() {
            return None;
        }
        let prepared = self.prepare(round + 1, samples);
        Some(Prepared {
            seconds: 0.0,
            ..prepared
        })
    }
}
