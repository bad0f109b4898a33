//! The test suite of either sampler, and the observer that receives its tests: the one place
//! every test is checked against every clause before anyone sees it.

use crate::assignment::{Assignment, BuildWordHasher};
use crate::diversity;
use crate::sampler::RoundStats;
use crate::verify::Checker;
use std::collections::HashSet;

/// What the sampler tells its caller as it goes.
pub trait Observer {
    /// A new distinct, verified test; returning an error stops the run.
    fn test(&mut self, test: &Assignment) -> std::io::Result<()>;
    /// A round (or the initial solutions, round 0) ended.
    fn round(&mut self, _stats: &RoundStats) {}
}

impl<F: FnMut(&Assignment) -> std::io::Result<()>> Observer for F {
    fn test(&mut self, test: &Assignment) -> std::io::Result<()> {
        self(test)
    }
}

/// The test suite of either sampler: distinct tests in the order found, every one checked
/// against every clause — on the way in ([`Suite::admit`]), or by the worker that made it
/// ([`Suite::admit_checked`]: Snap's verdicts, QuickSampler's extended candidates) — with
/// their pairwise coverage kept up to date.
pub struct Suite<'a> {
    checker: &'a Checker<'a>,
    tests: Vec<Assignment>,
    seen: HashSet<Assignment, BuildWordHasher>,
    coverage: diversity::PairwiseCoverage,
    max_tests: Option<usize>,
}

impl<'a> Suite<'a> {
    /// An empty suite whose coverage is measured over `projection`.
    pub fn new(checker: &'a Checker<'a>, projection: &[usize], max_tests: Option<usize>) -> Self {
        Suite {
            checker,
            tests: Vec::new(),
            seen: HashSet::default(),
            coverage: diversity::PairwiseCoverage::new(projection),
            max_tests,
        }
    }

    /// The tests, in the order they joined.
    pub fn tests(&self) -> &[Assignment] {
        &self.tests
    }

    /// Pairwise literal coverage of the projection, in [0, 1].
    pub fn coverage(&self) -> f64 {
        self.coverage.fraction()
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
        self.admit_checked(test, observer)
    }

    /// [`Suite::admit`] for a test already checked against every clause of this suite's
    /// formula (a worker's `Completed` or `Valid` verdict, a candidate QuickSampler
    /// extended): the check is not made twice.
    pub fn admit_checked(
        &mut self,
        test: &Assignment,
        observer: &mut dyn Observer,
    ) -> std::io::Result<bool> {
        if self.is_full() || !self.seen.insert(test.clone()) {
            return Ok(false);
        }
        self.tests.push(test.clone());
        self.coverage.add(test);
        observer.test(test)?;
        Ok(true)
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
        let mut suite = Suite::new(&checker, &[0, 129], None);
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
        assert_eq!(suite.tests(), &[a, b]);
        assert_eq!(seen.len(), 2);
    }
}
