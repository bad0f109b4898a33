//! The test suite of either sampler, and the observer that receives its tests: the one place
//! every test is checked against every clause before anyone sees it.

use crate::assignment::{Assignment, Hashed, HashedSet};
use crate::sampler::RoundStats;
use crate::verify::Checker;
use std::sync::Arc;

/// What the sampler tells its caller as it goes.
pub trait Observer {
    /// A new distinct, verified test; returning an error stops the run. The test is the
    /// suite's own copy: an observer that keeps it (a writer's queue) takes a share of it.
    fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()>;
    /// A round (or the initial solutions, round 0) ended.
    fn round(&mut self, _stats: &RoundStats) {}
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
/// A test joins as it came (a verdict's own, not a copy), and is shared by the set that
/// finds repeats, the list in suite order, the observer and the measuring thread: a copy for
/// each (and the projection and coverage made here) cost 18-33 µs a test of s38417_3_2's
/// 25,528 variables, most of the coordinator's time a round.
pub struct Suite<'a> {
    checker: &'a Checker<'a>,
    tests: Vec<Arc<Assignment>>,
    seen: HashedSet<Arc<Assignment>>,
    max_tests: Option<usize>,
}

impl<'a> Suite<'a> {
    /// An empty suite of tests of `checker`'s formula.
    pub fn new(checker: &'a Checker<'a>, max_tests: Option<usize>) -> Self {
        Suite {
            checker,
            tests: Vec::new(),
            seen: HashedSet::default(),
            max_tests,
        }
    }

    /// The tests, in the order they joined.
    pub fn tests(&self) -> &[Arc<Assignment>] {
        &self.tests
    }

    /// True once the suite holds `max_tests` tests.
    pub fn is_full(&self) -> bool {
        self.max_tests.is_some_and(|m| self.tests.len() >= m)
    }

    /// Adds a new test and hands it to `observer`; false (and nothing done) when the test is
    /// already in the suite, the suite is full, or the test falsifies a clause (a solver's or the
    /// completion's internal error): such a test is never written.
    pub fn admit(
        &mut self,
        test: &Assignment,
        observer: &mut dyn Observer,
    ) -> std::io::Result<bool> {
        if !self.checker.satisfies(test) {
            return Ok(false);
        }
        Ok(self.admit_checked(test.clone(), observer)?.is_some())
    }

    /// [`Suite::admit`] for a test already checked against every clause of this suite's
    /// formula (a worker's `Completed` or `Valid` verdict, a candidate QuickSampler
    /// extended): the check is not made twice. The test itself joins, not a copy; it comes
    /// back, shared, when it joined.
    pub fn admit_checked(
        &mut self,
        test: Assignment,
        observer: &mut dyn Observer,
    ) -> std::io::Result<Option<Arc<Assignment>>> {
        if self.is_full() {
            return Ok(None);
        }
        let shared = Hashed::new(Arc::new(test));
        if !self.seen.insert(shared.clone()) {
            return Ok(None);
        }
        self.tests.push(Arc::clone(&shared.test));
        observer.test(&shared.test)?;
        Ok(Some(shared.test))
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
        assert!(suite.admit(&a, &mut observer).unwrap());
        assert!(!suite.admit(&a.clone(), &mut observer).unwrap());
        assert!(suite.admit(&b, &mut observer).unwrap());
        assert!(!suite.admit(&falsifying, &mut observer).unwrap());
        assert_eq!(suite.tests(), &[Arc::new(a), Arc::new(b)]);
        assert_eq!(seen.len(), 2);
    }

    /// The observer is handed the suite's own copy of each test, not one of its own.
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
        assert!(keeps
            .0
            .iter()
            .zip(suite.tests())
            .all(|(a, b)| Arc::ptr_eq(a, b)));
    }
}
