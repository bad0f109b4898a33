//! Fewer tests for the same pairs: a covering suite made smaller one test at a time by local
//! search with the solver, beyond choosing among a pool's tests.
//!
//! Greedy choice keeps the tests a pool happens to hold; a test built for the suite can cover
//! what two chosen ones cover between them. So, as constrained covering-array generators do
//! (CASA, Garvin et al. 2011; TCA, Lin et al. 2015), the suite drops the test whose pairs the
//! others cover most of, and then changes its tests until every pair is covered again: an
//! open pair is picked at random, the tests that would lose fewest pairs by taking its two
//! values are asked of the solver with those values assumed and their own as phases (a
//! test near the old one that has the pair, valid by construction), and the best answer
//! replaces its test. A change that uncovers more than it covers is taken with a
//! probability that falls with the loss, so the search leaves plateaus. When nothing is open
//! the next test is dropped; when the moves of a size run out the last complete suite is the
//! answer. Before that, each value pair no test shows is asked of the solver once: a model
//! joins the suite, so the answer covers it too, and a refutation proves it impossible. Every
//! test it returns satisfies every clause: each answer is checked.

use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::literal;
use crate::solver::{Answer, IncrementalBackend, IncrementalSolver, Steering};
use crate::verify::Checker;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Support variables at most: the pair counts take `10·m²` bytes (40 MiB at the most).
pub const MAX_VARS: usize = 2048;

/// How hard the search tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShrinkConfig {
    /// Seeds the choice of pairs, ties and uphill moves.
    pub seed: u64,
    /// Moves tried at each suite size before the search stops.
    pub moves_per_size: usize,
    /// Tests asked of the solver for each move: those that would lose fewest pairs.
    pub candidates: usize,
    /// Conflicts each solver query may take.
    pub conflicts: u32,
    /// Pairs no test shows, at most, for each to be asked of the solver first (0: none are).
    pub unseen_queries: usize,
}

impl Default for ShrinkConfig {
    fn default() -> Self {
        ShrinkConfig {
            seed: 0,
            moves_per_size: 2_000,
            candidates: 3,
            conflicts: 1_000,
            unseen_queries: 20_000,
        }
    }
}

/// What the search did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shrunk {
    /// The smallest suite covering every target pair, in greedy order: the input's tests
    /// where it found none smaller.
    pub tests: Vec<Assignment>,
    /// Solver queries asked.
    pub queries: u64,
    /// Moves made.
    pub moves: u64,
    /// Pairs no input test showed that a solver model gave the suite.
    pub pairs_witnessed: u64,
    /// Pairs no input test showed that the solver proved impossible.
    pub pairs_refuted: u64,
}

/// Value pairs of the support, counted over the suite's tests.
struct PairCounts {
    /// Support size.
    m: usize,
    /// Tests covering each pair, indexed by [`PairCounts::id`].
    count: Vec<u32>,
    /// Pairs to keep covered.
    target: Vec<bool>,
    /// Target pairs no test covers.
    open: usize,
    /// Pairs that were open when last looked at (some may be covered since).
    open_list: Vec<u32>,
}

impl PairCounts {
    fn new(m: usize) -> Self {
        let pairs = 4 * m * m.saturating_sub(1) / 2;
        PairCounts {
            m,
            count: vec![0; pairs],
            target: vec![false; pairs],
            open: 0,
            open_list: Vec::new(),
        }
    }

    /// The pair of variables `i < j` at values `a`, `b`.
    fn id(&self, i: usize, j: usize, a: bool, b: bool) -> usize {
        debug_assert!(i < j && j < self.m);
        let before = i * (2 * self.m - i - 1) / 2 + (j - i - 1);
        4 * before + 2 * usize::from(a) + usize::from(b)
    }

    /// The pair's variables and values.
    fn pair(&self, id: usize) -> (usize, bool, usize, bool) {
        let (mut before, a, b) = (id / 4, id & 2 != 0, id & 1 != 0);
        let mut i = 0;
        while before >= self.m - i - 1 {
            before -= self.m - i - 1;
            i += 1;
        }
        (i, a, i + 1 + before, b)
    }

    /// Ids of the pairs a test covers that involve a variable of `changed` (each pair once).
    fn touching<'r>(
        &'r self,
        row: &'r [bool],
        changed: &'r [usize],
        in_changed: &'r [bool],
    ) -> impl Iterator<Item = usize> + 'r {
        changed.iter().flat_map(move |&k| {
            (0..self.m)
                .filter(move |&l| l != k && !(in_changed[l] && l < k))
                .map(move |l| {
                    let (i, j) = (k.min(l), k.max(l));
                    self.id(i, j, row[i], row[j])
                })
        })
    }

    fn add(&mut self, id: usize) {
        if self.count[id] == 0 && self.target[id] {
            self.open -= 1;
        }
        self.count[id] += 1;
    }

    fn remove(&mut self, id: usize) {
        self.count[id] -= 1;
        if self.count[id] == 0 && self.target[id] {
            self.open += 1;
            self.open_list.push(id as u32);
        }
    }

    /// Ids of every pair a test covers, `i < j` in order.
    fn row_ids<'r>(&'r self, row: &'r [bool]) -> impl Iterator<Item = usize> + 'r {
        (0..self.m).flat_map(move |i| (i + 1..self.m).map(move |j| self.id(i, j, row[i], row[j])))
    }

    fn add_row(&mut self, row: &[bool]) {
        let ids: Vec<usize> = self.row_ids(row).collect();
        ids.into_iter().for_each(|id| self.add(id));
    }

    fn remove_row(&mut self, row: &[bool]) {
        let ids: Vec<usize> = self.row_ids(row).collect();
        ids.into_iter().for_each(|id| self.remove(id));
    }

    /// Change in open target pairs were `old` (a test of the suite) replaced by `new`.
    fn delta(&self, old: &[bool], new: &[bool], scratch: &mut Vec<bool>) -> i64 {
        let changed: Vec<usize> = (0..self.m).filter(|&k| old[k] != new[k]).collect();
        scratch.clear();
        scratch.resize(self.m, false);
        changed.iter().for_each(|&k| scratch[k] = true);
        let lost = self
            .touching(old, &changed, scratch)
            .filter(|&id| self.count[id] == 1 && self.target[id])
            .count() as i64;
        let gained = self
            .touching(new, &changed, scratch)
            .filter(|&id| self.count[id] == 0 && self.target[id])
            .count() as i64;
        lost - gained
    }

    /// Replaces `old` by `new` in the counts.
    fn replace(&mut self, old: &[bool], new: &[bool]) {
        let changed: Vec<usize> = (0..self.m).filter(|&k| old[k] != new[k]).collect();
        let mut in_changed = vec![false; self.m];
        changed.iter().for_each(|&k| in_changed[k] = true);
        let gone: Vec<usize> = self.touching(old, &changed, &in_changed).collect();
        let come: Vec<usize> = self.touching(new, &changed, &in_changed).collect();
        come.into_iter().for_each(|id| self.add(id));
        gone.into_iter().for_each(|id| self.remove(id));
    }

    /// Target pairs only this test covers.
    fn unique(&self, row: &[bool]) -> usize {
        self.row_ids(row)
            .filter(|&id| self.count[id] == 1 && self.target[id])
            .count()
    }

    /// An open target pair, at random; `None` when none is open.
    fn open_pair(&mut self, rng: &mut impl Rng) -> Option<usize> {
        while self.open > 0 {
            let k = rng.gen_range(0..self.open_list.len());
            let id = self.open_list[k] as usize;
            if self.count[id] == 0 && self.target[id] {
                return Some(id);
            }
            self.open_list.swap_remove(k);
        }
        None
    }
}

/// A test of the suite: whole, and its values on the support.
#[derive(Clone)]
struct Row {
    test: Assignment,
    values: Vec<bool>,
}

impl Row {
    fn new(test: Assignment, vars: &[usize]) -> Self {
        let values = vars.iter().map(|&v| test.get(v)).collect();
        Row { test, values }
    }
}

/// The smallest suite the search finds that covers every value pair of `vars` (support
/// variables, from 0, at most [`MAX_VARS`]) that `suite` covers, and each pair it does not
/// that the solver finds a model with (up to `unseen_queries` of them), most new pairs
/// first; `suite` must be valid. Each query goes to `session` (over `checker`'s formula);
/// every answer is checked before it joins.
pub fn shrink(
    suite: &[Assignment],
    vars: &[usize],
    checker: &Checker,
    session: &mut dyn IncrementalSolver,
    config: &ShrinkConfig,
    budget: &Budget,
) -> Shrunk {
    let m = vars.len();
    if !(2..=MAX_VARS).contains(&m) || suite.len() < 2 {
        return Shrunk {
            tests: suite.to_vec(),
            ..Shrunk::default()
        };
    }
    let mut search = Search {
        rows: suite.iter().map(|t| Row::new(t.clone(), vars)).collect(),
        counts: PairCounts::new(m),
        rng: ChaCha8Rng::seed_from_u64(config.seed),
        scratch: Vec::new(),
        vars,
        checker,
        session,
        config,
        budget,
        result: Shrunk::default(),
    };
    search.run();
    let mut result = search.result;
    // Most new pairs first, as a minimized suite is written.
    if let Ok(order) = super::minimize(&result.tests, vars, 2, 1.0) {
        result.tests = order
            .chosen
            .iter()
            .map(|&i| result.tests[i].clone())
            .collect();
    }
    result
}

/// [`shrink`] with the default effort and a session of its own from `backend`, which stops
/// with `budget`; `Err` when the session cannot be opened.
pub fn shrink_with(
    suite: &[Assignment],
    vars: &[usize],
    checker: &Checker,
    backend: &dyn IncrementalBackend,
    seed: u64,
    budget: &Budget,
) -> Result<Shrunk, String> {
    let mut session = backend.open(checker.cnf(), *budget)?;
    let config = ShrinkConfig {
        seed,
        ..ShrinkConfig::default()
    };
    Ok(shrink(
        suite,
        vars,
        checker,
        session.as_mut(),
        &config,
        budget,
    ))
}

/// The search's state: the suite as it is changed, and what it works with.
struct Search<'s, 'c> {
    rows: Vec<Row>,
    counts: PairCounts,
    rng: ChaCha8Rng,
    scratch: Vec<bool>,
    vars: &'s [usize],
    checker: &'s Checker<'c>,
    session: &'s mut dyn IncrementalSolver,
    config: &'s ShrinkConfig,
    budget: &'s Budget<'s>,
    result: Shrunk,
}

impl Search<'_, '_> {
    fn run(&mut self) {
        self.rows
            .iter()
            .for_each(|r| self.counts.add_row(&r.values));
        let unseen = self.counts.count.iter().filter(|&&c| c == 0).count();
        if self.config.unseen_queries > 0 && unseen <= self.config.unseen_queries {
            self.witness_unseen_pairs();
        }
        self.result.tests = self.tests();
        let counts = &mut self.counts;
        for (id, target) in counts.target.iter_mut().enumerate() {
            *target = counts.count[id] > 0;
        }
        while self.rows.len() > 1 && !self.budget.exhausted() {
            let drop = (0..self.rows.len())
                .min_by_key(|&r| self.counts.unique(&self.rows[r].values))
                .expect("two rows at least");
            let dropped = self.rows.swap_remove(drop);
            self.counts.remove_row(&dropped.values);
            let mut moves = 0;
            while self.counts.open > 0
                && moves < self.config.moves_per_size
                && !self.budget.exhausted()
            {
                moves += 1;
                self.step();
            }
            if self.counts.open > 0 {
                break;
            }
            self.result.tests = self.tests();
        }
    }

    fn tests(&self) -> Vec<Assignment> {
        self.rows.iter().map(|r| r.test.clone()).collect()
    }

    /// Each pair no test shows, asked of the solver (near a test drawn at random): a model
    /// joins the suite as a test, so the pair and every other it shows are kept from then
    /// on; a refutation proves the pair impossible.
    fn witness_unseen_pairs(&mut self) {
        for id in 0..self.counts.count.len() {
            if self.counts.count[id] > 0 || self.budget.exhausted() {
                continue;
            }
            let (i, a, j, b) = self.counts.pair(id);
            let near = self.rows[self.rng.gen_range(0..self.rows.len())]
                .test
                .clone();
            self.result.queries += 1;
            let assumptions = [literal(self.vars[i], a), literal(self.vars[j], b)];
            let conflicts = Some(self.config.conflicts);
            match self
                .session
                .solve(&assumptions, &near, Steering::All, conflicts)
            {
                Answer::Model(test) if self.checker.satisfies(&test) => {
                    let row = Row::new(test, self.vars);
                    self.counts.add_row(&row.values);
                    self.rows.push(row);
                    self.result.pairs_witnessed += 1;
                }
                Answer::Refuted(_) => self.result.pairs_refuted += 1,
                _ => {}
            }
        }
    }

    /// One move toward an open pair: the tests that lose fewest pairs by taking its values
    /// as they are get them from the solver, and the best answer replaces its test.
    fn step(&mut self) {
        let Some(id) = self.counts.open_pair(&mut self.rng) else {
            return;
        };
        let (i, a, j, b) = self.counts.pair(id);
        let mut ranked: Vec<(i64, u32, usize)> = Vec::with_capacity(self.rows.len());
        for (r, row) in self.rows.iter().enumerate() {
            let mut moved = row.values.clone();
            moved[i] = a;
            moved[j] = b;
            let delta = self.counts.delta(&row.values, &moved, &mut self.scratch);
            ranked.push((delta, self.rng.gen(), r));
        }
        ranked.sort_unstable();
        let assumptions = [literal(self.vars[i], a), literal(self.vars[j], b)];
        let mut best: Option<(i64, usize, Row)> = None;
        for &(_, _, r) in ranked.iter().take(self.config.candidates) {
            self.result.queries += 1;
            let conflicts = Some(self.config.conflicts);
            let answer =
                self.session
                    .solve(&assumptions, &self.rows[r].test, Steering::All, conflicts);
            let Answer::Model(test) = answer else {
                continue;
            };
            if !self.checker.satisfies(&test) {
                continue;
            }
            let row = Row::new(test, self.vars);
            let delta = self
                .counts
                .delta(&self.rows[r].values, &row.values, &mut self.scratch);
            if best.as_ref().is_none_or(|(d, _, _)| delta < *d) {
                best = Some((delta, r, row));
            }
        }
        let Some((delta, r, row)) = best else {
            return;
        };
        // Uphill moves are taken less often the more they uncover.
        if delta > 0 && self.rng.gen::<f64>() >= (-(delta as f64)).exp() {
            return;
        }
        self.counts.replace(&self.rows[r].values, &row.values);
        self.rows[r] = row;
        self.result.moves += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::Cnf;
    use crate::solver::native::Native;
    use std::collections::HashSet;

    /// `suite` shrunk with a native session of its own, no limit.
    fn shrink_alone(
        cnf: &Cnf,
        suite: &[Assignment],
        vars: &[usize],
        config: &ShrinkConfig,
    ) -> Shrunk {
        let mut session = Native.open(cnf, Budget::unlimited()).unwrap();
        let checker = Checker::new(cnf);
        shrink(
            suite,
            vars,
            &checker,
            session.as_mut(),
            config,
            &Budget::unlimited(),
        )
    }

    /// Every value pair of `vars` the tests cover, computed plainly.
    fn pairs(tests: &[Assignment], vars: &[usize]) -> HashSet<(usize, bool, usize, bool)> {
        let mut out = HashSet::new();
        for t in tests {
            for (x, &i) in vars.iter().enumerate() {
                for &j in &vars[x + 1..] {
                    out.insert((i, t.get(i), j, t.get(j)));
                }
            }
        }
        out
    }

    #[test]
    fn pair_ids_are_dense_and_invertible() {
        let counts = PairCounts::new(7);
        let mut seen = HashSet::new();
        for i in 0..7 {
            for j in i + 1..7 {
                for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
                    let id = counts.id(i, j, a, b);
                    assert!(id < counts.count.len());
                    assert!(seen.insert(id));
                    assert_eq!(counts.pair(id), (i, a, j, b));
                }
            }
        }
        assert_eq!(seen.len(), counts.count.len());
    }

    #[test]
    fn the_delta_of_a_replacement_is_what_the_replacement_does() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..50 {
            let m = rng.gen_range(2..12);
            let rows: Vec<Vec<bool>> = (0..rng.gen_range(1..6))
                .map(|_| (0..m).map(|_| rng.gen()).collect())
                .collect();
            let mut counts = PairCounts::new(m);
            rows.iter().for_each(|r| counts.add_row(r));
            for (id, t) in counts.target.iter_mut().enumerate() {
                *t = counts.count[id] > 0 || id % 3 == 0;
            }
            counts.open = (0..counts.count.len())
                .filter(|&id| counts.target[id] && counts.count[id] == 0)
                .count();
            let new: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
            let before = counts.open as i64;
            let delta = counts.delta(&rows[0], &new, &mut Vec::new());
            counts.replace(&rows[0], &new);
            assert_eq!(counts.open as i64 - before, delta);
        }
    }

    /// An unconstrained support of 8 variables: a pool of every test holds all 112 pairs,
    /// and 6 tests can cover them (greedy choice from the pool keeps more or as many).
    #[test]
    fn a_suite_of_every_test_shrinks_to_a_small_covering_one_with_every_pair() {
        let cnf = Cnf::from_clauses(9, &[vec![9]]);
        let checker = Checker::new(&cnf);
        let vars: Vec<usize> = (0..8).collect();
        let suite: Vec<Assignment> = (0..256u32)
            .map(|x| {
                let mut t = Assignment::zeros(9);
                (0..8).for_each(|v| t.set(v, x >> v & 1 == 1));
                t.set(8, true);
                t
            })
            .collect();
        let config = ShrinkConfig {
            seed: 3,
            ..ShrinkConfig::default()
        };
        let shrunk = shrink_alone(&cnf, &suite, &vars, &config);
        assert!(shrunk.tests.len() <= 6, "{} tests", shrunk.tests.len());
        assert_eq!(pairs(&shrunk.tests, &vars), pairs(&suite, &vars));
        assert!(shrunk.tests.iter().all(|t| checker.satisfies(t)));
    }

    /// Pairs the suite does not show are witnessed where the formula allows them (x1 → x2
    /// forbids x1 = 1, x2 = 0 alone): two tests 0000 and 1111 grow into a suite with the
    /// other 23 pairs.
    #[test]
    fn pairs_no_test_shows_are_covered_where_the_formula_allows_them() {
        let cnf = Cnf::from_clauses(4, &[vec![-1, 2]]);
        let checker = Checker::new(&cnf);
        let vars: Vec<usize> = (0..4).collect();
        let suite = vec![
            Assignment::from_bit_string("0000").unwrap(),
            Assignment::from_bit_string("1111").unwrap(),
        ];
        let shrunk = shrink_alone(&cnf, &suite, &vars, &ShrinkConfig::default());
        let covered = pairs(&shrunk.tests, &vars);
        assert_eq!(covered.len(), 23);
        assert!(!covered.contains(&(0, true, 1, false)));
        assert_eq!(shrunk.pairs_refuted, 1);
        assert!(shrunk.tests.iter().all(|t| checker.satisfies(t)));
        let none = ShrinkConfig {
            unseen_queries: 0,
            ..ShrinkConfig::default()
        };
        let kept = shrink_alone(&cnf, &suite, &vars, &none);
        assert_eq!(pairs(&kept.tests, &vars), pairs(&suite, &vars));
    }

    /// With a constraint (x1 → x2), every test kept is valid and the pairs stay covered.
    #[test]
    fn tests_built_under_constraints_are_valid_and_keep_the_pairs() {
        let cnf = Cnf::from_clauses(6, &[vec![-1, 2], vec![-3, -4, 5], vec![6, -5]]);
        let checker = Checker::new(&cnf);
        let vars: Vec<usize> = (0..6).collect();
        let suite: Vec<Assignment> = (0..64u32)
            .map(|x| {
                let mut t = Assignment::zeros(6);
                (0..6).for_each(|v| t.set(v, x >> v & 1 == 1));
                t
            })
            .filter(|t| checker.satisfies(t))
            .collect();
        let shrunk = shrink_alone(&cnf, &suite, &vars, &ShrinkConfig::default());
        assert!(shrunk.tests.len() < suite.len());
        assert_eq!(pairs(&shrunk.tests, &vars), pairs(&suite, &vars));
        assert!(shrunk.tests.iter().all(|t| checker.satisfies(t)));
    }
}
