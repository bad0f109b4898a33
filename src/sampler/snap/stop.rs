//! Step 4: the suite measured after every round (NCD, its numerator, pairwise coverage), and
//! the rule that decides whether another round runs.

use super::{Snap, StopMetric};
use crate::diversity;
use crate::metrics::Phase;
use crate::sampler::work::Workforce;
use crate::sampler::{RoundStats, StopReason};
use std::time::Instant;

impl Snap<'_> {
    /// The round's figures on the suite; NCD is NaN (null in --stats) when the budget ran out
    /// before every new test was compressed.
    pub(super) fn measure(&mut self, stats: &mut RoundStats) {
        let t = Instant::now();
        let measures = self.measures_up_to_date().measures();
        let ranks = self
            .rank_shares
            .as_mut()
            .and_then(|r| r.remove(&stats.round));
        let ncd = match (ranks, measures.share) {
            // The tests before the rounds are this side's share, the rest the ranks'.
            (Some(mut shares), Some(own)) => {
                shares.push(own);
                Some(diversity::combined_terms(&shares))
            }
            (Some(_), None) => None,
            (None, _) => measures.ncd,
        };
        stats.ncd = ncd.map_or(f64::NAN, |t| t.value());
        stats.information = ncd.map_or(0, |t| t.information());
        stats.coverage = measures.coverage;
        stats.suite_size = self.suite.len();
        self.metrics.record(Phase::Ncd, t.elapsed());
        self.report.seconds.ncd = measures.busy.as_secs_f64();
    }

    /// What the ranks measured of their tests in round `round`, if they measure them: their
    /// coverage merged into the suite's at once, before this round's measures are asked for;
    /// their NCD shares kept until the round is settled.
    pub(super) fn take_rank_measures(&mut self, round: usize, workforce: &mut dyn Workforce) {
        let (Some(by_round), Some(ranks)) = (&mut self.rank_shares, workforce.take_shares()) else {
            return;
        };
        let measures = self
            .measures
            .as_mut()
            .expect("the measures run while the loop does");
        let mut shares = Vec::with_capacity(ranks.len());
        for rank in ranks {
            measures.merge_coverage(rank.coverage);
            shares.push(rank.ncd);
        }
        by_round.insert(round, shares);
    }

    pub(super) fn push_round(&mut self, stats: RoundStats) {
        self.report.coordinator_seconds += stats.coordinator_seconds;
        self.report.work_seconds += stats.work_seconds;
        self.report.merge_seconds += stats.merge_seconds;
        self.report.messaging_seconds += stats.messaging_seconds;
        self.report.rounds.push(stats);
    }

    /// The value of the stop metric in a round's figures.
    pub(super) fn metric(&self, stats: &RoundStats) -> f64 {
        match self.config.stop_metric {
            StopMetric::Information => stats.information as f64,
            StopMetric::Ncd => stats.ncd,
            StopMetric::Coverage => stats.coverage,
        }
    }

    /// A reason to stop before round `round + 1` whatever the last round gave (`None`: the
    /// round limit not checked).
    pub(super) fn halted(&self, round: Option<usize>) -> Option<StopReason> {
        if self.budget.interrupted() {
            Some(StopReason::Interrupted)
        } else if self.suite.is_full() {
            Some(StopReason::MaxTests)
        } else if self.budget.exhausted() {
            Some(StopReason::TimeLimit)
        } else if round.is_some_and(|r| self.config.max_rounds.is_some_and(|m| r >= m)) {
            Some(StopReason::MaxRounds)
        } else {
            None
        }
    }

    /// The paper's rule on a round's figures: stop when the round added nothing, or when the
    /// stop metric improved by less than X of its previous value. Measures that the budget
    /// cut short (NCD not measured, its numerator read as 0) give the rule nothing to read:
    /// the deadline or interrupt that cut them ends the run, under its own reason. Read as a
    /// fall, they stopped an interrupted run as converged, with exit status 0 (a round run
    /// while the last was measured settles it after the interrupt).
    pub(super) fn converged(&self, stats: &RoundStats, previous: f64) -> Option<StopReason> {
        if stats.ncd.is_nan() {
            return None;
        }
        let metric = self.metric(stats);
        if stats.new_tests == 0 && self.budget.exhausted() {
            // Cut short before its tasks (drawing them is stopped too): the budget's reason.
            None
        } else if stats.new_tests == 0 {
            Some(StopReason::NoNewTests)
        } else if metric - previous < self.config.min_improvement * previous.max(f64::EPSILON) {
            Some(StopReason::Converged)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{planted, small_config};
    use super::*;
    use crate::budget::Budget;
    use crate::verify::Checker;
    use std::sync::atomic::AtomicBool;

    /// A round whose measures the budget cut short is not judged by the rule; measured, the
    /// same fall in the metric stops the run.
    #[test]
    fn measures_cut_short_do_not_read_as_convergence() {
        let cnf = planted(20, 60, 1);
        let checker = Checker::new(&cnf);
        let config = super::super::SnapConfig {
            stop_metric: StopMetric::Information,
            min_improvement: 0.0,
            ..small_config(1)
        };
        let interrupt = AtomicBool::new(true);
        let snap = Snap::new(
            &checker,
            &config,
            Budget::new(config.time_limit, &interrupt),
        );
        let cut_short = RoundStats {
            new_tests: 5,
            ncd: f64::NAN,
            information: 0,
            ..Default::default()
        };
        assert_eq!(snap.converged(&cut_short, 100.0), None);
        let measured = RoundStats {
            ncd: 0.5,
            information: 90,
            ..cut_short
        };
        assert_eq!(
            snap.converged(&measured, 100.0),
            Some(StopReason::Converged)
        );
    }
}
