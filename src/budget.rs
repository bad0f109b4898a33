//! How long work may go on: a deadline and an interrupt flag (SIGINT/SIGTERM), checked
//! together wherever time matters, so that every loop stops for the same reasons.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A deadline (or none) and an interrupt flag (or none).
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget<'a> {
    deadline: Option<Instant>,
    interrupt: Option<&'a AtomicBool>,
}

impl<'a> Budget<'a> {
    /// No limit at all.
    pub fn unlimited() -> Self {
        Budget::default()
    }

    /// Until `time_limit` from now (saturating far in the future), or until `interrupt` is set.
    pub fn new(time_limit: Duration, interrupt: &'a AtomicBool) -> Self {
        Budget {
            deadline: Instant::now().checked_add(time_limit),
            interrupt: Some(interrupt),
        }
    }

    /// Until `deadline`, or until `interrupt` is set.
    pub fn until(deadline: Instant, interrupt: &'a AtomicBool) -> Self {
        Budget {
            deadline: Some(deadline),
            interrupt: Some(interrupt),
        }
    }

    /// True once the interrupt was set.
    pub fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|i| i.load(Ordering::Relaxed))
    }

    /// True once the deadline has passed or the interrupt was set.
    pub fn exhausted(&self) -> bool {
        self.exhausted_at(Instant::now())
    }

    /// [`Budget::exhausted`] at `now`, for a caller that read the clock already.
    pub fn exhausted_at(&self, now: Instant) -> bool {
        self.interrupted() || self.deadline.is_some_and(|d| now >= d)
    }

    /// Time left, `None` without a deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// `timeout` shortened to what is left.
    pub fn cap(&self, timeout: Option<Duration>) -> Option<Duration> {
        match (timeout, self.remaining()) {
            (Some(t), Some(r)) => Some(t.min(r)),
            (t, r) => t.or(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhausted_by_deadline_or_interrupt() {
        let stop = AtomicBool::new(false);
        let budget = Budget::new(Duration::from_secs(3600), &stop);
        assert!(!budget.exhausted());
        stop.store(true, Ordering::Relaxed);
        assert!(budget.exhausted());
        assert!(Budget::new(Duration::ZERO, &AtomicBool::new(false)).exhausted());
        assert!(!Budget::unlimited().exhausted());
    }

    #[test]
    fn a_huge_limit_saturates_instead_of_overflowing() {
        let stop = AtomicBool::new(false);
        let budget = Budget::new(Duration::MAX, &stop);
        assert!(!budget.exhausted());
        assert_eq!(
            budget.cap(Some(Duration::from_secs(1))),
            Some(Duration::from_secs(1))
        );
    }
}
