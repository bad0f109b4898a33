//! The test suite of either sampler, and the observer that receives its tests: the one place
//! every test is checked against every clause before anyone sees it.

use crate::assignment::{Assignment, FingerprintSet};
use crate::sampler::RoundStats;
use crate::testfile::Parts;
use crate::verify::Checker;
use std::sync::Arc;

/// What the sampler tells its caller as it goes.
pub trait Observer {
    /// A new distinct, verified test; returning an error stops the run. The test is the
    /// suite's own copy: an observer that keeps it (a writer's queue) takes a share of it.
    fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()>;
    /// A round (or the initial solutions, round 0) ended.
    fn round(&mut self, _stats: &RoundStats) {}
    /// Where the ranks of a sharded run may keep the tests they find, if this observer
    /// writes the suite to a file: they are then handed over by place ([`Observer::kept`]),
    /// not whole.
    fn parts(&self) -> Option<Parts> {
        None
    }
    /// A new distinct test, verified by its rank, which keeps it in its part:
    /// `(rank, number in the part, its line's bytes)`.
    fn kept(&mut self, _at: (usize, u64, u32)) -> std::io::Result<()> {
        Err(std::io::Error::other(
            "this observer takes tests, not places",
        ))
    }
    /// The tests this side writes are all written: each rank's kept tests' places in the
    /// suite's file, `(number in the part, offset)`, rank by rank.
    fn places(&mut self) -> std::io::Result<Vec<Vec<(u64, u64)>>> {
        Ok(Vec::new())
    }
}

impl<F: FnMut(&Assignment) -> std::io::Result<()>> Observer for F {
    fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()> {
        self(test)
    }
}

/// The test suite of either sampler: distinct tests in the order found, every one checked
/// against every clause — on the way in ([`Suite::admit`]), or by the worker that made it
/// ([`Suite::admit_checked`]: Snap's verdicts, QuickSampler's extended candidates).
///
/// A test joins as it came (a verdict's own, not a copy), shared by the observer and the
/// list of tests joined since [`Suite::take_joined`] (the measuring thread's next share): a
/// copy for each cost 18-33 µs a test of s38417_3_2's 25,528 variables. The suite keeps
/// only the tests' fingerprints to find repeats, so that the coordinator's memory does not
/// grow with the suite's width (584 bytes a test of 70.sk_3_40, 3.2 KB of s38417_3_2, first
/// touched as each joined) nor its time with comparing whole tests. A new test whose
/// fingerprint an earlier one had (2^-64 a pair: for ten million tests, odds of about three
/// in a million) is passed over as a repeat: the suite stays distinct and valid, one test
/// short.
pub struct Suite<'a> {
    checker: &'a Checker<'a>,
    seen: FingerprintSet,
    joined: Vec<Arc<Assignment>>,
    len: usize,
    max_tests: Option<usize>,
}

impl<'a> Suite<'a> {
    /// An empty suite of tests of `checker`'s formula.
    pub fn new(checker: &'a Checker<'a>, max_tests: Option<usize>) -> Self {
        Suite {
            checker,
            seen: FingerprintSet::default(),
            joined: Vec::new(),
            len: 0,
            max_tests,
        }
    }

    /// The check every test passes, and the formula behind it.
    pub fn checker(&self) -> &'a Checker<'a> {
        self.checker
    }

    /// Tests in the suite.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first test.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tests joined since [`Suite::take_joined`] last took them.
    pub fn joined(&self) -> usize {
        self.joined.len()
    }

    /// [`Suite::admit_checked`] for a test its rank keeps in its part (`at`: the rank, the
    /// test's number there and its line's bytes), known here by its fingerprint alone: the
    /// observer gets its place. True when it joined.
    pub fn admit_kept(
        &mut self,
        fingerprint: u64,
        at: (usize, u64, u32),
        observer: &mut dyn Observer,
    ) -> std::io::Result<bool> {
        if self.is_full() || !self.seen.insert(fingerprint) {
            return Ok(false);
        }
        self.len += 1;
        observer.kept(at)?;
        Ok(true)
    }

    /// The tests joined since this was last called (since the start, the first time), in
    /// the order they joined; the suite keeps none of them.
    pub fn take_joined(&mut self) -> Vec<Arc<Assignment>> {
        std::mem::take(&mut self.joined)
    }

    /// True once the suite holds `max_tests` tests.
    pub fn is_full(&self) -> bool {
        self.max_tests.is_some_and(|m| self.len >= m)
    }

    /// Adds a new test and hands it to `observer`; `None` (and nothing done) when the test is
    /// already in the suite, the suite is full, or the test falsifies a clause (a solver's or
    /// the completion's internal error): such a test is never written.
    pub fn admit(
        &mut self,
        test: &Assignment,
        observer: &mut dyn Observer,
    ) -> std::io::Result<Option<Arc<Assignment>>> {
        if !self.checker.satisfies(test) {
            return Ok(None);
        }
        self.admit_checked(test.clone(), test.fingerprint(), observer)
    }

    /// [`Suite::admit`] for a test already checked against every clause of this suite's
    /// formula (a worker's `Completed` or `Valid` verdict, a candidate QuickSampler
    /// extended), with its `fingerprint` ([`Assignment::fingerprint`]) worked out already,
    /// where the test was made: neither is done twice. The test itself joins, not a copy; it
    /// comes back, shared, when it joined.
    pub fn admit_checked(
        &mut self,
        test: Assignment,
        fingerprint: u64,
        observer: &mut dyn Observer,
    ) -> std::io::Result<Option<Arc<Assignment>>> {
        debug_assert_eq!(fingerprint, test.fingerprint());
        if self.is_full() || !self.seen.insert(fingerprint) {
            return Ok(None);
        }
        let test = Arc::new(test);
        self.len += 1;
        self.joined.push(Arc::clone(&test));
        observer.test(&test)?;
        Ok(Some(test))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::Cnf;

    /// A test joins once; tests that differ anywhere (here only in their last word) both
    /// join; a test that falsifies a clause never does.
    #[test]
    fn a_test_joins_the_suite_once_and_only_if_it_satisfies_the_formula() {
        let cnf = Cnf::from_clauses(130, &[vec![-1]]);
        let checker = Checker::new(&cnf);
        let mut suite = Suite::new(&checker, None);
        let mut seen = Vec::new();
        let mut observer = |t: &Assignment| {
            seen.push(t.clone());
            Ok(())
        };
        let a = Assignment::zeros(130);
        let mut b = a.clone();
        b.set(129, true);
        let mut falsifying = a.clone();
        falsifying.set(0, true);
        assert!(suite.admit(&a, &mut observer).unwrap().is_some());
        assert!(suite.admit(&a.clone(), &mut observer).unwrap().is_none());
        assert!(suite.admit(&b, &mut observer).unwrap().is_some());
        assert!(suite.admit(&falsifying, &mut observer).unwrap().is_none());
        assert_eq!(suite.len(), 2);
        assert_eq!(suite.take_joined(), [Arc::new(a), Arc::new(b)]);
        assert!(suite.take_joined().is_empty(), "taken once");
        assert_eq!(seen.len(), 2);
    }

    /// The observer is handed the suite's own copy of each test, as are the tests joined,
    /// not copies of their own.
    #[test]
    fn the_observer_shares_the_suites_copy() {
        struct Keeps(Vec<Arc<Assignment>>);
        impl Observer for Keeps {
            fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()> {
                self.0.push(Arc::clone(test));
                Ok(())
            }
        }
        let cnf = Cnf::from_clauses(3, &[vec![1, 2]]);
        let checker = Checker::new(&cnf);
        let mut suite = Suite::new(&checker, Some(2));
        let mut keeps = Keeps(Vec::new());
        for bits in ["100", "010", "110"] {
            suite
                .admit(&Assignment::from_bit_string(bits).unwrap(), &mut keeps)
                .unwrap();
        }
        assert_eq!(keeps.0.len(), 2, "the suite is full at 2");
        let joined = suite.take_joined();
        assert_eq!(joined.len(), 2);
        assert!(keeps.0.iter().zip(&joined).all(|(a, b)| Arc::ptr_eq(a, b)));
    }
}
