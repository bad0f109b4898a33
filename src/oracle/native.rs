//! snapsat's own search as a session backend (`--solver native`): the refuter
//! ([`crate::refute`]) loaded once per lane, answering with models near the phases it is given
//! and naming the assumptions that fail, and splr behind it for the long searches.
//!
//! A pure-Rust build's answer to CaDiCaL's sessions: splr 0.17 has no assumptions and no
//! phases, so it is rebuilt for every query, and on the slow case studies the rebuilding, not
//! the search, is the time (`crate::refute`). Of preprocessing the refuter has only
//! failed-literal probing when a lane opens, and some formulas it does not solve where splr
//! does: a query allowed more than `FIRST_TURN` conflicts has the two take turns.

use super::{
    Answer, Oracle, Outcome, Preprocessing, Query, Session, SessionBackend, Splr, Steering,
};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{Cnf, Lit};
use crate::refute::{Found, Refuter};
use std::time::{Duration, Instant};

/// Conflicts past which a query is a long one, where the refuter and splr take turns
/// (`NativeSession::take_turns`), and the refuter's first turn when splr goes first. Every
/// repair query (at most 250 conflicts) and a fresh solution's first two searches (200 and
/// 20,000: `sampler::repair::lane`) are the refuter's alone. Which of the two answers a long
/// search depends on the formula: with the refuter alone to 200,000 conflicts before splr,
/// karatsuba.sk_7_41 gave 319/562/297/322/457 tests in 120 s against 506/16/82/17/91 with splr
/// after 20,000 (seeds 1–5), but xpose.sk_6_134 one test in 60 s against 9 and 10 (seeds 1, 2).
const FIRST_TURN: u32 = 20_000;
/// Conflicts of the refuter's first turn when it goes first.
const REFUTER_FIRST_TURN: u32 = 200_000;
/// The shortest turn splr gets: it counts whole seconds, and is rebuilt for each turn.
const SPLR_FIRST_TURN: Duration = Duration::from_secs(1);

/// The refuter per lane, splr behind it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Native;

impl SessionBackend for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    fn open<'a>(&self, cnf: &'a Cnf, budget: Budget<'a>) -> Result<Box<dyn Session + 'a>, String> {
        Ok(Box::new(NativeSession::open(cnf, budget, FIRST_TURN)))
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
    /// `FIRST_TURN`, but for tests of splr's part (0: splr answers every query allowed any
    /// conflict).
    first_turn: u32,
    /// `REFUTER_FIRST_TURN`, but for tests.
    refuter_first_turn: u32,
    /// Which engine goes first in a long query.
    pace: Pace,
}

impl<'a> NativeSession<'a> {
    fn open(cnf: &'a Cnf, budget: Budget<'a>, first_turn: u32) -> Self {
        let mut search = Refuter::new(cnf);
        search.probe(&|| budget.exhausted());
        NativeSession {
            search,
            cnf,
            budget,
            last_model: None,
            calls: 0,
            first_turn,
            refuter_first_turn: REFUTER_FIRST_TURN.max(first_turn),
            pace: Pace::default(),
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

    /// splr on the formula with `assumptions` as units, preferring `phases`, for `time` at most
    /// (in whole seconds, within the time left); each call perturbs the formula otherwise
    /// (`turn`).
    fn splr(&self, assumptions: &[Lit], phases: &Assignment, time: Duration, turn: u64) -> Answer {
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
            seed: self.calls.wrapping_mul(1 << 16) ^ turn,
            // splr counts whole seconds, rounding up: whole seconds within the time left.
            timeout: Some(Duration::from_secs(
                self.budget
                    .remaining()
                    .map_or(time, |left| left.min(time))
                    .as_secs()
                    .max(1),
            )),
            preprocessing: Preprocessing::Full,
        };
        match Splr.solve(&query) {
            Outcome::Sat(values) => Answer::Model(Assignment::from_values(&values)),
            // splr names no core: every assumption is one that failed, with the others.
            Outcome::Unsat => Answer::Refuted(assumptions.to_vec()),
            Outcome::Unknown(why) => Answer::Unknown(why),
        }
    }

    /// A query allowed `limit` conflicts (more than `first_turn`), the refuter and splr in
    /// turn, each turn twice as long as that engine's last, until one answers. The one that
    /// needed less time in the last query either answered goes first (`Pace`): the refuter
    /// with `REFUTER_FIRST_TURN` conflicts, splr for twice what it needed (at least
    /// `SPLR_FIRST_TURN`: it is rebuilt for each turn and counts whole seconds); the other's
    /// first turn is `first_turn` conflicts, or as long as the refuter's last turn took. The
    /// refuter keeps what it learned across its turns. The query gives up once the refuter
    /// has spent `limit` conflicts, or the budget is spent.
    fn take_turns(&mut self, assumptions: &[Lit], phases: &Assignment, limit: u32) -> Answer {
        let budget = self.budget;
        let refuter_plays = self.first_turn > 0;
        let mut splr_next = !refuter_plays || self.pace.splr_first();
        let mut refuter_turn = if splr_next {
            self.first_turn
        } else {
            self.refuter_first_turn
        };
        let mut splr_turn = SPLR_FIRST_TURN.max(2 * self.pace.splr.unwrap_or_default());
        let (mut spent, mut refuter_time, mut splr_time) = (0u32, Duration::ZERO, Duration::ZERO);
        for turn in 0u64.. {
            if budget.exhausted() {
                break;
            }
            let started = Instant::now();
            // splr's turns are whole seconds: with less left, only the refuter's fit.
            let splr_fits = budget
                .remaining()
                .is_none_or(|left| left >= SPLR_FIRST_TURN);
            if splr_next && !splr_fits && !refuter_plays {
                return Answer::Unknown("time limit".into());
            }
            if splr_next && splr_fits {
                let answer = self.splr(assumptions, phases, splr_turn, turn);
                splr_time += started.elapsed();
                if !matches!(answer, Answer::Unknown(_)) {
                    self.pace.splr_answered(splr_time, refuter_time);
                    return answer;
                }
                splr_turn *= 2;
            } else {
                if spent >= limit {
                    break;
                }
                let conflicts = refuter_turn.min(limit - spent);
                let found = self
                    .search
                    .search(assumptions, conflicts, &|| budget.exhausted());
                refuter_time += started.elapsed();
                match found {
                    Found::Model(model) => {
                        self.pace.refuter_answered(refuter_time, splr_time);
                        return Answer::Model(model);
                    }
                    Found::Refuted(failed) => return Answer::Refuted(failed),
                    Found::GaveUp => {
                        spent = spent.saturating_add(conflicts);
                        refuter_turn = refuter_turn.saturating_mul(2);
                        splr_turn = splr_turn.max(started.elapsed());
                    }
                }
            }
            splr_next = !splr_next || !refuter_plays;
        }
        if budget.exhausted() {
            Answer::Unknown("time limit".into())
        } else {
            Answer::Unknown(format!("no answer in {spent} conflicts"))
        }
    }
}

/// How long each engine needed in the last long query it answered, or at least (the time it
/// spent on the last one the other answered): whichever needed less goes first in the next.
/// On karatsuba.sk_7_41 the refuter answers most long queries and splr takes long where it
/// does; on xpose.sk_6_134 the refuter answers none in 400,000 conflicts and splr takes a
/// few seconds.
#[derive(Debug, Default, Clone, Copy)]
struct Pace {
    refuter: Duration,
    /// `None` until splr has taken a turn.
    splr: Option<Duration>,
}

impl Pace {
    fn splr_first(&self) -> bool {
        self.splr.is_some_and(|splr| splr < self.refuter)
    }

    /// splr answered in `splr` after the refuter gave up in `refuter`.
    fn splr_answered(&mut self, splr: Duration, refuter: Duration) {
        self.splr = Some(splr);
        self.refuter = self.refuter.max(refuter);
    }

    /// The refuter answered in `refuter`, after splr gave up in `splr` (zero: splr took no
    /// turn).
    fn refuter_answered(&mut self, refuter: Duration, splr: Duration) {
        self.refuter = refuter;
        if !splr.is_zero() {
            self.splr = Some(self.splr.unwrap_or_default().max(splr));
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
        let answer = if limit > self.first_turn {
            self.take_turns(assumptions, phases, limit)
        } else {
            let budget = self.budget;
            match self
                .search
                .search(assumptions, limit, &|| budget.exhausted())
            {
                Found::Model(model) => Answer::Model(model),
                Found::Refuted(failed) => Answer::Refuted(failed),
                Found::GaveUp => Answer::Unknown(format!("no answer in {limit} conflicts")),
            }
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
            let own = [FIRST_TURN, 0][round as usize % 2];
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

    /// A long query the refuter's turns cannot answer goes to splr, whose answer holds.
    #[test]
    fn splr_answers_a_long_query_the_refuter_gives_up_on() {
        let (cnf, _) = planted(120, 500, 3);
        let checker = Checker::new(&cnf);
        let phases = Assignment::zeros(120);
        let mut alone = Refuter::new(&cnf);
        assert_eq!(
            alone.search(&[], 1, &|| false),
            Found::GaveUp,
            "the refuter needs more than one conflict here"
        );
        let mut session = NativeSession::open(&cnf, Budget::unlimited(), 1);
        session.refuter_first_turn = 1;
        match session.solve(&[], &phases, Steering::All, Some(2)) {
            Answer::Model(model) => assert!(checker.satisfies(&model)),
            other => panic!("{other:?}"),
        }
        assert!(session.pace.splr.is_some(), "splr answered");
    }

    /// With less than a second left, splr (whose turns are whole seconds) takes none: the
    /// query ends within the deadline.
    #[test]
    fn splr_takes_no_turn_past_the_deadline() {
        let (cnf, _) = planted(120, 500, 3);
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        let budget = Budget::new(Duration::from_millis(500), &interrupt);
        let mut session = NativeSession::open(&cnf, budget, 0);
        let phases = Assignment::zeros(120);
        assert_eq!(
            session.solve(&[], &phases, Steering::All, None),
            Answer::Unknown("time limit".into())
        );
        assert!(session.pace.splr.is_none());
    }

    /// The engine that needed less time goes first: splr after it answered sooner than the
    /// refuter had given up, the refuter again once it answered sooner than splr had.
    #[test]
    fn the_engine_that_needed_less_time_goes_first() {
        let s = Duration::from_secs;
        let mut pace = Pace::default();
        assert!(!pace.splr_first(), "the refuter goes first to begin with");
        pace.refuter_answered(s(1), s(0));
        assert!(!pace.splr_first(), "splr has not taken a turn");
        pace.splr_answered(s(4), s(7));
        assert!(pace.splr_first());
        pace.splr_answered(s(3), s(0));
        assert!(pace.splr_first(), "the refuter's 7 s stand");
        pace.refuter_answered(s(2), s(1));
        assert!(!pace.splr_first(), "2 s against splr's 3 s");
        pace.splr_answered(s(30), s(2));
        assert!(!pace.splr_first());
    }

    #[test]
    fn steering_some_variables_keeps_the_last_model_elsewhere() {
        let cnf = Cnf::from_clauses(4, &[vec![1, 2, 3, 4]]);
        let mut session = NativeSession::open(&cnf, Budget::unlimited(), FIRST_TURN);
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
