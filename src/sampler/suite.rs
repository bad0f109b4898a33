//! The test suite of either sampler, and the observer that receives its tests: the one place
//! every test is checked against every clause before anyone sees it.

use crate::assignment::Assignment;
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

/// The test suite of either sampler: distinct tests in the order found, each checked against
/// every clause on the way in, with their pairwise coverage kept up to date.
pub struct Suite<'a> {
    checker: &'a Checker<'a>,
    tests: Vec<Assignment>,
    seen: HashSet<Assignment>,
    coverage: diversity::PairwiseCoverage,
    max_tests: Option<usize>,
    invalid: u64,
}

impl<'a> Suite<'a> {
    /// An empty suite whose coverage is measured over `projection`.
    pub fn new(checker: &'a Checker<'a>, projection: &[usize], max_tests: Option<usize>) -> Self {
        Suite {
            checker,
            tests: Vec::new(),
            seen: HashSet::new(),
            coverage: diversity::PairwiseCoverage::new(projection),
            max_tests,
            invalid: 0,
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

    /// Tests refused because they falsify a clause (0 unless a solver erred).
    pub fn invalid(&self) -> u64 {
        self.invalid
    }

    /// True once the suite holds `max_tests` tests.
    pub fn is_full(&self) -> bool {
        self.max_tests.is_some_and(|m| self.tests.len() >= m)
    }

    /// Adds a new test and hands it to `observer`; false (and nothing done) when the test is
    /// already in the suite, the suite is full, or the test falsifies a clause. This is the
    /// one check of every clause each test gets on its way out; a test that fails it (a
    /// solver's or the completion's internal error) is counted and never written.
    pub fn admit(
        &mut self,
        test: &Assignment,
        observer: &mut dyn Observer,
    ) -> std::io::Result<bool> {
        if !self.checker.satisfies(test) {
            self.invalid += 1;
            return Ok(false);
        }
        if self.is_full() || !self.seen.insert(test.clone()) {
            return Ok(false);
        }
        self.tests.push(test.clone());
        self.coverage.add(test);
        observer.test(test)?;
        Ok(true)
    }
}
