//! Latency histograms of a rank's work (HdrHistogram, nanoseconds, 3 significant digits), so
//! that throughput experiments see tails and not only means, and ranks' figures can be merged
//! exactly at the coordinator.

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// CPU time the calling thread has used so far (user and system), where the system tells
/// it. A thread beside the coordinator (the suite's writer, the measuring thread) reports
/// this as its time at work: timed by the clock around its work, it also counted the time it
/// waited for a core, which ranks running in the same process made most of it.
pub fn thread_cpu_time() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid timespec for the call to fill.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } == 0 {
            return Some(Duration::new(now.tv_sec as u64, now.tv_nsec as u32));
        }
    }
    None
}

/// What a latency was measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// One initial solution (step 1).
    InitialSolve,
    /// Checking one candidate against the formula (step 3b).
    Verify,
    /// Repairing one invalid candidate (propagation and solver).
    Repair,
    /// Measuring the suite's NCD after a round (coordinator only).
    Ncd,
    /// A batch's trip from the coordinator to a rank and back, less the rank's work on it; a
    /// batch queued behind another counts from the other's return, so this is the overhead
    /// the second batch in flight did not hide.
    RoundTrip,
}

impl Phase {
    const ALL: [Phase; 5] = [
        Phase::InitialSolve,
        Phase::Verify,
        Phase::Repair,
        Phase::Ncd,
        Phase::RoundTrip,
    ];

    /// How reports name the phase.
    pub fn name(self) -> &'static str {
        match self {
            Phase::InitialSolve => "initial_solve",
            Phase::Verify => "verify",
            Phase::Repair => "repair",
            Phase::Ncd => "ncd",
            Phase::RoundTrip => "round_trip",
        }
    }
}

/// One histogram per [`Phase`].
#[derive(Debug, Clone)]
pub struct Metrics {
    histograms: Vec<Histogram<u64>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            histograms: Phase::ALL
                .iter()
                .map(|_| Histogram::new(3).expect("3 significant digits are supported"))
                .collect(),
        }
    }
}

/// Quantiles of one phase, in microseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Quantiles {
    /// Measurements.
    pub count: u64,
    /// Median, in microseconds.
    pub p50_us: f64,
    /// 90th percentile, in microseconds.
    pub p90_us: f64,
    /// 99th percentile, in microseconds.
    pub p99_us: f64,
    /// Largest, in microseconds.
    pub max_us: f64,
}

impl Metrics {
    /// One latency of `phase`.
    pub fn record(&mut self, phase: Phase, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let histogram = &mut self.histograms[phase as usize];
        // `record` grows the histogram as needed; `saturating_record` would clamp at its
        // initial bound instead.
        if histogram.record(nanos.max(1)).is_err() {
            histogram.saturating_record(nanos);
        }
    }

    /// Latencies recorded for `phase`.
    pub fn count(&self, phase: Phase) -> u64 {
        self.histograms[phase as usize].len()
    }

    /// Adds another rank's (or thread's) counts to these.
    pub fn merge(&mut self, other: &Metrics) {
        for (mine, theirs) in self.histograms.iter_mut().zip(&other.histograms) {
            mine.add(theirs)
                .expect("auto-resizing histograms accept any value");
        }
    }

    /// The V2 HdrHistogram encoding of each phase, for shipping to the coordinator.
    pub fn to_bytes(&self) -> Vec<Vec<u8>> {
        let mut serializer = V2Serializer::new();
        self.histograms
            .iter()
            .map(|h| {
                let mut bytes = Vec::new();
                serializer
                    .serialize(h, &mut bytes)
                    .expect("serializing to memory cannot fail");
                bytes
            })
            .collect()
    }

    /// Inverse of [`Metrics::to_bytes`]; `None` on a malformed encoding.
    pub fn from_bytes(encoded: &[Vec<u8>]) -> Option<Metrics> {
        if encoded.len() != Phase::ALL.len() {
            return None;
        }
        let mut deserializer = Deserializer::new();
        let histograms = encoded
            .iter()
            .map(|bytes| {
                let mut h: Histogram<u64> = deserializer.deserialize(&mut &bytes[..]).ok()?;
                // Decoding forgets that the histogram may grow; merging needs it to.
                h.auto(true);
                Some(h)
            })
            .collect::<Option<Vec<Histogram<u64>>>>()?;
        Some(Metrics { histograms })
    }

    /// Quantiles of every phase that saw at least one measurement, by phase name.
    pub fn summary(&self) -> BTreeMap<&'static str, Quantiles> {
        Phase::ALL
            .iter()
            .filter(|&&p| self.count(p) > 0)
            .map(|&p| {
                let h = &self.histograms[p as usize];
                let us = |nanos: u64| nanos as f64 / 1000.0;
                let quantiles = Quantiles {
                    count: h.len(),
                    p50_us: us(h.value_at_quantile(0.5)),
                    p90_us: us(h.value_at_quantile(0.9)),
                    p99_us: us(h.value_at_quantile(0.99)),
                    max_us: us(h.max()),
                };
                (p.name(), quantiles)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_histograms_count_both_sides_and_survive_encoding() {
        let mut a = Metrics::default();
        let mut b = Metrics::default();
        for micros in 1..=100 {
            a.record(Phase::Repair, Duration::from_micros(micros));
        }
        b.record(Phase::Repair, Duration::from_millis(50));
        b.record(Phase::Verify, Duration::from_nanos(300));
        b.record(Phase::Ncd, Duration::from_secs(3));
        // A decoded histogram must still grow to take larger values than it has seen.
        let mut merged = Metrics::from_bytes(&a.to_bytes()).unwrap();
        merged.merge(&Metrics::from_bytes(&b.to_bytes()).unwrap());
        let a = merged;
        let summary = a.summary();
        assert_eq!(summary["repair"].count, 101);
        assert!((summary["repair"].p50_us - 51.0).abs() < 0.1);
        assert!((summary["repair"].max_us - 50_000.0).abs() < 50.0);
        assert_eq!(summary["verify"].count, 1);
        assert!((summary["verify"].max_us - 0.3).abs() < 0.01);
        assert!((summary["ncd"].max_us - 3e6).abs() < 3e3);
        assert!(!summary.contains_key("round_trip"));
    }

    #[test]
    fn malformed_encodings_are_rejected() {
        assert!(Metrics::from_bytes(&[vec![1, 2, 3]]).is_none());
        let garbage = vec![vec![0u8; 8]; Phase::ALL.len()];
        assert!(Metrics::from_bytes(&garbage).is_none());
    }
}
