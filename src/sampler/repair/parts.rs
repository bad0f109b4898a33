//! Repair by parts. Where a formula falls into parts that share no variable (disjoint
//! programs in one file, a product line's independent modules), its models are the
//! combinations of the parts' models. A candidate whose repair failed then keeps its values
//! in the parts whose clauses it satisfies and takes each other part from the known test
//! nearest to it there: a test of the formula without a search, new wherever the parts come
//! from different tests. Known tests are a lane's recent models, so the suite stays a
//! function of the seed and the lanes.

use crate::assignment::Assignment;
use crate::formula::{Cnf, Components, NO_COMPONENT};
use crate::verify::Checker;
use std::collections::BTreeSet;

/// Recent models a lane keeps to take parts from.
const KNOWN_MODELS: usize = 16;

/// A formula's parts, where at least two hold variables that diversity is measured on.
pub struct Parts {
    components: Components,
    /// Per part: its variables that diversity is measured on, which choose the known test
    /// a part is taken from.
    measured: Vec<Vec<u32>>,
}

impl Parts {
    /// The parts of `cnf`, measured on `projection`; `None` when fewer than two parts hold a
    /// variable of the projection (then no candidate can combine tests).
    pub fn of(cnf: &Cnf, projection: &[usize]) -> Option<Self> {
        let components = cnf.components();
        if components.len() < 2 {
            return None;
        }
        let mut measured = vec![Vec::new(); components.len()];
        for &v in projection {
            if let Some(vars) = measured.get_mut(components.of_var(v) as usize) {
                vars.push(v as u32);
            }
        }
        (measured.iter().filter(|vars| !vars.is_empty()).count() >= 2).then_some(Parts {
            components,
            measured,
        })
    }

    /// `candidate` with each part whose clauses it falsifies taken from the test of `known`
    /// nearest to it on that part's measured variables (the first such test on a tie);
    /// `None` when there is none to take, or when the result does not differ from each
    /// test it drew on, on the measured variables.
    pub fn combine(
        &self,
        checker: &Checker,
        candidate: &Assignment,
        known: &Known,
    ) -> Option<Assignment> {
        let broken: BTreeSet<u32> = checker
            .violated(candidate)
            .into_iter()
            .map(|clause| self.components.of_clause(clause as usize))
            .collect();
        if known.models.is_empty() || broken.contains(&NO_COMPONENT) {
            return None;
        }
        let mut test = candidate.clone();
        let mut drawn_on = BTreeSet::new();
        for &part in &broken {
            let part = part as usize;
            let distance = |model: &Assignment| {
                self.measured[part]
                    .iter()
                    .filter(|&&v| model.get(v as usize) != candidate.get(v as usize))
                    .count()
            };
            let (nearest, model) = known
                .models
                .iter()
                .enumerate()
                .min_by_key(|&(i, model)| (distance(model), i))?;
            for &v in self.components.members(part) {
                test.set(v as usize, model.get(v as usize));
            }
            drawn_on.insert(nearest);
        }
        let differs = |model: &Assignment| {
            self.measured
                .iter()
                .flatten()
                .any(|&v| model.get(v as usize) != test.get(v as usize))
        };
        drawn_on
            .iter()
            .all(|&i| differs(&known.models[i]))
            .then_some(test)
    }
}

/// A lane's last `KNOWN_MODELS` models, oldest replaced first.
#[derive(Default)]
pub struct Known {
    models: Vec<Assignment>,
    next: usize,
}

impl Known {
    /// Keeps `model`, in place of the oldest once full.
    pub fn remember(&mut self, model: &Assignment) {
        if self.models.len() < KNOWN_MODELS {
            self.models.push(model.clone());
        } else {
            self.models[self.next].clone_from(model);
        }
        self.next = (self.next + 1) % KNOWN_MODELS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two copies of x1 → x2 (variables 1-2 and 3-4) and a variable in no clause (x5).
    fn two_parts() -> Cnf {
        Cnf::from_clauses(5, &[vec![-1, 2], vec![-3, 4]])
    }

    fn a(bits: &str) -> Assignment {
        Assignment::from_bit_string(bits).unwrap()
    }

    fn known(models: &[&str]) -> Known {
        let mut known = Known::default();
        models.iter().for_each(|m| known.remember(&a(m)));
        known
    }

    #[test]
    fn broken_parts_come_from_the_nearest_known_test() {
        let cnf = two_parts();
        let checker = Checker::new(&cnf);
        let parts = Parts::of(&cnf, &cnf.projection()).unwrap();
        // The candidate breaks the first part (x1 without x2) and keeps the second (x3, x4).
        let candidate = a("10111");
        let known = known(&["01000", "11000", "00000"]);
        let test = parts.combine(&checker, &candidate, &known).unwrap();
        // 11 and 00 are both at distance 1 from the candidate's 10: the first is taken.
        assert_eq!(test.to_bit_string(), "11111");
        assert!(checker.satisfies(&test));
    }

    #[test]
    fn a_combination_equal_to_a_known_test_is_no_test() {
        let cnf = two_parts();
        let checker = Checker::new(&cnf);
        let parts = Parts::of(&cnf, &cnf.projection()).unwrap();
        // Both parts broken and taken from the one known test, which differs on x5 alone.
        let candidate = a("10100");
        assert_eq!(
            parts.combine(&checker, &candidate, &known(&["11111"])),
            None
        );
        // From two known tests it is new.
        let test = parts.combine(&checker, &candidate, &known(&["11010", "00110"]));
        assert_eq!(test.unwrap().to_bit_string(), "11110");
        assert_eq!(parts.combine(&checker, &candidate, &Known::default()), None);
    }

    #[test]
    fn parts_count_only_where_two_hold_measured_variables() {
        let mut cnf = two_parts();
        assert!(Parts::of(&cnf, &cnf.projection()).is_some());
        cnf.set_independent_support(vec![1, 2]);
        assert!(Parts::of(&cnf, &cnf.projection()).is_none());
        let one = Cnf::from_clauses(3, &[vec![1, 2, 3]]);
        assert!(Parts::of(&one, &one.projection()).is_none());
    }

    #[test]
    fn known_tests_keep_the_latest() {
        let mut known = Known::default();
        for i in 0..KNOWN_MODELS + 3 {
            known.remember(&Assignment::from_bit_string(&format!("{:05b}", i % 32)).unwrap());
        }
        assert_eq!(known.models.len(), KNOWN_MODELS);
        assert!(!known.models.contains(&a("00000")));
        assert!(known
            .models
            .contains(&a(&format!("{:05b}", KNOWN_MODELS + 2))));
    }
}
