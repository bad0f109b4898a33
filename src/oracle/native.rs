//! snapsat's own search as a session backend (`--solver native`): the refuter
//! ([`crate::refute`]) loaded once per lane, answering with models near the phases it is given
//! and naming the assumptions that fail, and splr behind it for the long searches.
//!
//! A pure-Rust build's answer to CaDiCaL's sessions: splr 0.17 has no assumptions and no
//! phases, so it is rebuilt for every query, and on the slow case studies the rebuilding, not
//! the search, is the time (`crate::refute`). The refuter's learned clauses are dropped only
//! between calls, and of preprocessing it has only failed-literal probing when a lane
//! opens: a search past
//! `OWN_CONFLICTS` goes to splr, with the assumptions as units.

use super::{
    Answer, Oracle, Outcome, Preprocessing, Query, Session, SessionBackend, Splr, Steering,
};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{Cnf, Lit};
use crate::refute::{Found, Refuter};

/// Conflicts a query may take in the refuter before splr takes it over (queries allowed
/// more). Every repair query (at most 250) and the three bounded searches of a fresh
/// solution (200, 20,000 and 200,000: `sampler::repair::lane`) stay in the refuter; splr
/// gets what is left of a fresh solution's last search. It was 20,000 while the refuter had
/// no restarts; with them, splr's part was most of a karatsuba.sk_7_41 run (seed 2: 60% of
/// perf's samples), and 200,000 gave 319/562/297/322/457 tests in 120 s against
/// 506/16/82/17/91 (seeds 1–5), parity.sk_11_11's time to 1000 tests unchanged.
const OWN_CONFLICTS: u32 = 200_000;

/// The refuter per lane, splr behind it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Native;

impl SessionBackend for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    fn open<'a>(&self, cnf: &'a Cnf, budget: Budget<'a>) -> Result<Box<dyn Session + 'a>, String> {
        Ok(Box::new(NativeSession::open(cnf, budget, OWN_CONFLICTS)))
    }
}

struct NativeSession<'a> {
    search: Refuter,
    cnf: &'a Cnf,
    budget: Budget<'a>,
    /// What variables a query does not steer are phased to, as with CaDiCaL's sessions: the
    /// refuter's own saved phases would be those of the query before, which may have given up.
    last_model: Option<Assignment>,
    calls: u64,
    /// `OWN_CONFLICTS`, but for tests of splr's part.
    own_conflicts: u32,
}

impl<'a> NativeSession<'a> {
    fn open(cnf: &'a Cnf, budget: Budget<'a>, own_conflicts: u32) -> Self {
        let mut search = Refuter::new(cnf);
        search.probe(&|| budget.exhausted());
        NativeSession {
            search,
            cnf,
            budget,
            last_model: None,
            calls: 0,
            own_conflicts,
        }
    }

    fn steer(&mut self, phases: &Assignment, steering: Steering) {
        match steering {
            Steering::All => {
                for v in 0..phases.len() {
                    self.search.set_phase(v, phases.get(v));
                }
            }
            Steering::Only(steered) => {
                if let Some(model) = &self.last_model {
                    for v in 0..model.len() {
                        self.search.set_phase(v, model.get(v));
                    }
                }
                for &v in steered {
                    self.search.set_phase(v, phases.get(v));
                }
            }
        }
    }

    /// splr on the formula with `assumptions` as units, preferring `phases`, for the time left.
    fn splr(&self, assumptions: &[Lit], phases: &Assignment) -> Answer {
        let clauses: Vec<Vec<Lit>> = self
            .cnf
            .clauses()
            .map(<[Lit]>::to_vec)
            .chain(assumptions.iter().map(|&lit| vec![lit]))
            .collect();
        let preferred: Vec<bool> = (0..phases.len()).map(|v| phases.get(v)).collect();
        let query = Query {
            num_vars: self.cnf.num_vars(),
            clauses: &clauses,
            preferred: Some(&preferred),
            seed: self.calls,
            timeout: self.budget.remaining(),
            preprocessing: Preprocessing::Full,
        };
        match Splr.solve(&query) {
            Outcome::Sat(values) => Answer::Model(Assignment::from_values(&values)),
            // splr names no core: every assumption is one that failed, with the others.
            Outcome::Unsat => Answer::Refuted(assumptions.to_vec()),
            Outcome::Unknown(why) => Answer::Unknown(why),
        }
    }
}

impl Session for NativeSession<'_> {
    fn solve(
        &mut self,
        assumptions: &[Lit],
        phases: &Assignment,
        steering: Steering,
        conflicts: Option<u32>,
    ) -> Answer {
        if self.budget.exhausted() {
            return Answer::Unknown("time limit".into());
        }
        self.calls += 1;
        self.steer(phases, steering);
        let limit = conflicts.unwrap_or(u32::MAX);
        let own = limit.min(self.own_conflicts);
        let budget = self.budget;
        let answer = match self.search.search(assumptions, own, &|| budget.exhausted()) {
            Found::Model(model) => Answer::Model(model),
            Found::Refuted(failed) => Answer::Refuted(failed),
            Found::GaveUp if limit > own && !budget.exhausted() => self.splr(assumptions, phases),
            Found::GaveUp => Answer::Unknown(format!("no answer in {own} conflicts")),
        };
        if let Answer::Model(model) = &answer {
            self.last_model = Some(model.clone());
        }
        answer
    }

    fn solver_calls(&self) -> u64 {
        self.calls
    }

    fn open_variables(&self) -> usize {
        self.search.open_variables()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::literal;
    use crate::testing::planted;
    use crate::verify::Checker;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Every model a session gives satisfies the formula and its assumptions, and the
    /// assumptions it names as failing are ones the planted model does not all satisfy:
    /// from the refuter, and (with no conflicts of its own) from splr.
    #[test]
    fn answers_hold_on_planted_formulas() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut models, mut refuted, mut unknown) = (0, 0, 0);
        for round in 0..400 {
            let (cnf, planted_model) = planted(30, 120, round);
            let checker = Checker::new(&cnf);
            let own = [OWN_CONFLICTS, 0][round as usize % 2];
            let mut session = NativeSession::open(&cnf, Budget::unlimited(), own);
            for query in 0..5 {
                let literals = |rng: &mut ChaCha8Rng, n| -> Vec<Lit> {
                    (0..n)
                        .map(|_| literal(rng.gen_range(0..30), rng.gen()))
                        .collect()
                };
                let n = rng.gen_range(0..8);
                let assumptions = literals(&mut rng, n);
                let phases = Assignment::from_literals(30, &literals(&mut rng, 30));
                let conflicts = [None, Some(2)][query % 2];
                match session.solve(&assumptions, &phases, Steering::All, conflicts) {
                    Answer::Model(model) => {
                        assert!(checker.satisfies(&model), "round {round}");
                        assert!(assumptions.iter().all(|&l| model.satisfies(l)));
                        models += 1;
                    }
                    Answer::Refuted(failed) => {
                        assert!(failed.iter().all(|l| assumptions.contains(l)));
                        assert!(!failed.iter().all(|&l| planted_model.satisfies(l)));
                        refuted += 1;
                    }
                    Answer::Unknown(why) => {
                        assert_eq!(conflicts, Some(2), "round {round}: {why}");
                        unknown += 1;
                    }
                }
            }
        }
        assert!(
            models > 100 && refuted > 100 && unknown > 10,
            "{models} {refuted} {unknown}"
        );
    }

    #[test]
    fn steering_some_variables_keeps_the_last_model_elsewhere() {
        let cnf = Cnf::from_clauses(4, &[vec![1, 2, 3, 4]]);
        let mut session = NativeSession::open(&cnf, Budget::unlimited(), OWN_CONFLICTS);
        let ones = Assignment::from_bit_string("1111").unwrap();
        let zeros = Assignment::from_bit_string("0000").unwrap();
        assert_eq!(
            session.solve(&[], &ones, Steering::All, None),
            Answer::Model(ones)
        );
        let steered = session.solve(&[], &zeros, Steering::Only(&[0, 2]), None);
        assert_eq!(
            steered,
            Answer::Model(Assignment::from_bit_string("0101").unwrap())
        );
        assert_eq!(session.solver_calls(), 2);
    }
}
