//! CaDiCaL (through rustsat) as a [`Session`]: the formula is loaded once per lane; each query
//! sets the phases that changed since the last one, assumes the literals to keep, and runs
//! under a conflict limit and a terminator that watches the budget.

use super::{Answer, Session, SessionBackend};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::formula::{Cnf, Lit};
use crate::propagate::forced_values;
use rustsat::solvers::{
    ControlSignal, LimitConflicts, PhaseLit, Solve, SolveIncremental, SolverResult, Terminate,
};
use rustsat::types::{Lit as RsLit, TernaryVal, Var};
use rustsat_cadical::CaDiCaL;

/// Opens CaDiCaL sessions.
#[derive(Debug, Default, Clone, Copy)]
pub struct Cadical;

struct CadicalSession<'a> {
    solver: CaDiCaL<'a, 'static>,
    /// The phases set so far (all false at first), so that a query sets only those that changed.
    phases: Assignment,
    /// What every model has in common: the values unit clauses and their propagation force.
    forced: Assignment,
    /// The variables they leave open: only these are read out of a model. Reading a value
    /// costs an FFI call, a fifth of an easy run when made for every variable, and on
    /// sketches most variables are forced (90% of 35.sk_3_52's).
    open: Vec<u32>,
}

fn rs_lit(lit: Lit) -> RsLit {
    RsLit::new(lit.unsigned_abs() - 1, lit < 0)
}

fn our_lit(lit: RsLit) -> Lit {
    lit.to_ipasir()
}

impl SessionBackend for Cadical {
    fn name(&self) -> &'static str {
        "cadical"
    }

    fn open<'a>(&self, cnf: &'a Cnf, budget: Budget<'a>) -> Result<Box<dyn Session + 'a>, String> {
        let mut solver = CaDiCaL::default();
        // The "lucky" pre-pass tries fixed assignments before the phases we set, and returns
        // the same few models whatever they are; off, the phases steer every query.
        solver.set_option("lucky", 0).map_err(|e| e.to_string())?;
        let num_vars = cnf.num_vars();
        if num_vars > 0 {
            solver
                .reserve(Var::new(num_vars as u32 - 1))
                .map_err(|e| e.to_string())?;
        }
        for clause in cnf.clauses() {
            let clause: rustsat::types::Clause = clause.iter().map(|&l| rs_lit(l)).collect();
            solver.add_clause(clause).map_err(|e| e.to_string())?;
        }
        // Every variable starts phased false, matching `phases`.
        for v in 0..num_vars {
            solver
                .phase_lit(RsLit::negative(v as u32))
                .map_err(|e| e.to_string())?;
        }
        solver.attach_terminator(move || {
            if budget.exhausted() {
                ControlSignal::Terminate
            } else {
                ControlSignal::Continue
            }
        });
        let (forced, open) = forced_values(cnf);
        Ok(Box::new(CadicalSession {
            solver,
            phases: Assignment::zeros(num_vars),
            forced,
            open,
        }))
    }
}

impl CadicalSession<'_> {
    fn set_phases(&mut self, phases: &Assignment) -> anyhow::Result<()> {
        for v in self.phases.xor(phases).ones() {
            self.solver
                .phase_lit(RsLit::new(v as u32, !phases.get(v)))?;
        }
        self.phases.clone_from(phases);
        Ok(())
    }

    fn query(
        &mut self,
        assumptions: &[Lit],
        phases: &Assignment,
        conflicts: Option<u32>,
    ) -> anyhow::Result<Answer> {
        self.set_phases(phases)?;
        self.solver.limit_conflicts(conflicts)?;
        let assumed: Vec<RsLit> = assumptions.iter().map(|&l| rs_lit(l)).collect();
        Ok(match self.solver.solve_assumps(&assumed)? {
            SolverResult::Sat => {
                let mut model = self.forced.clone();
                for &v in &self.open {
                    // A variable in no clause has no value of its own: it keeps its phase.
                    let value = match self.solver.lit_val(RsLit::positive(v))? {
                        TernaryVal::True => true,
                        TernaryVal::False => false,
                        TernaryVal::DontCare => phases.get(v as usize),
                    };
                    model.set(v as usize, value);
                }
                Answer::Model(model)
            }
            SolverResult::Unsat => {
                // rustsat's core is a clause the formula entails: the failed assumptions,
                // negated.
                Answer::Refuted(
                    self.solver
                        .core()?
                        .into_iter()
                        .map(|l| our_lit(!l))
                        .collect(),
                )
            }
            SolverResult::Interrupted => Answer::Unknown("conflict limit or time limit".into()),
        })
    }
}

impl Session for CadicalSession<'_> {
    fn solve(
        &mut self,
        assumptions: &[Lit],
        phases: &Assignment,
        conflicts: Option<u32>,
    ) -> Answer {
        self.query(assumptions, phases, conflicts)
            .unwrap_or_else(|e| Answer::Unknown(format!("cadical: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::planted;
    use crate::verify::Checker;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn models_satisfy_assumptions_and_phases_are_followed() {
        let cnf = Cnf::from_clauses(4, &[vec![1, 2], vec![-1, 3], vec![-2, -3], vec![2, 3, 4]]);
        let checker = Checker::new(&cnf);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        let phases = Assignment::from_bit_string("1010").unwrap();
        match session.solve(&[], &phases, None) {
            Answer::Model(m) => {
                assert!(checker.satisfies(&m));
                assert_eq!(m, phases, "an exact model given as phases comes back");
            }
            other => panic!("{other:?}"),
        }
        match session.solve(&[2], &phases, None) {
            Answer::Model(m) => assert!(checker.satisfies(&m) && m.get(1)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failed_assumptions_are_named() {
        // x1 → x2, and ¬x2 ∨ ¬x3: assuming x1, x3 and x4 fails on {x1, x3} alone.
        let cnf = Cnf::from_clauses(4, &[vec![-1, 2], vec![-2, -3]]);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        match session.solve(&[1, 3, 4], &Assignment::zeros(4), None) {
            Answer::Refuted(mut core) => {
                core.sort();
                assert_eq!(core, vec![1, 3]);
            }
            other => panic!("{other:?}"),
        }
        let unsat = crate::testing::unsatisfiable();
        let mut session = Cadical.open(&unsat, Budget::unlimited()).unwrap();
        assert_eq!(
            session.solve(&[], &Assignment::zeros(unsat.num_vars()), None),
            Answer::Refuted(vec![])
        );
    }

    /// Units and what they propagate are set without asking the solver; the rest are read,
    /// so a model still follows the phases there and satisfies every clause.
    #[test]
    fn forced_variables_are_set_and_open_ones_read() {
        // x1; x1 → x2; x2 ∨ x3 ∨ x4 leaves x3 and x4 open; x5 is in no clause.
        let cnf = Cnf::from_clauses(5, &[vec![1], vec![-1, 2], vec![2, 3, 4]]);
        let (forced, open) = forced_values(&cnf);
        assert_eq!(open, vec![2, 3, 4]);
        assert!(forced.get(0) && forced.get(1));
        let checker = Checker::new(&cnf);
        let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
        for phases in ["00000", "00111", "00101"] {
            let phases = Assignment::from_bit_string(phases).unwrap();
            match session.solve(&[], &phases, None) {
                Answer::Model(m) => {
                    assert!(checker.satisfies(&m));
                    assert_eq!(m.to_bit_string()[2..], phases.to_bit_string()[2..]);
                }
                other => panic!("{other:?}"),
            }
        }
        let contradicting = Cnf::from_clauses(2, &[vec![1], vec![-1, 2], vec![-2]]);
        let mut session = Cadical.open(&contradicting, Budget::unlimited()).unwrap();
        assert!(matches!(
            session.solve(&[], &Assignment::zeros(2), None),
            Answer::Refuted(_)
        ));
    }

    /// Every model of one long-lived session, over many queries with random phases and
    /// assumptions taken from a planted solution, satisfies every clause.
    #[test]
    fn a_session_stays_correct_over_many_queries() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for formula in 0..40 {
            let (cnf, plant) = planted(30 + formula, 4 * (30 + formula), formula as u64);
            let checker = Checker::new(&cnf);
            let mut session = Cadical.open(&cnf, Budget::unlimited()).unwrap();
            for _ in 0..50 {
                let mut phases = Assignment::zeros(cnf.num_vars());
                for v in 0..cnf.num_vars() {
                    phases.set(v, rng.gen());
                }
                let assumptions: Vec<Lit> = (0..rng.gen_range(0..6))
                    .map(|_| {
                        let v = rng.gen_range(0..cnf.num_vars());
                        crate::formula::literal(v, plant.get(v))
                    })
                    .collect();
                match session.solve(&assumptions, &phases, None) {
                    Answer::Model(m) => {
                        assert!(checker.satisfies(&m));
                        assert!(assumptions.iter().all(|&l| m.satisfies(l)));
                    }
                    other => panic!("planted formula, planted assumptions: {other:?}"),
                }
            }
        }
    }
}
