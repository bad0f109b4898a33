//! Refuting a repair's kept bits before the oracle is rebuilt to refute them: a search that
//! stays loaded per thread ([`crate::solver::native::search`]), and the record, shared by the threads, of
//! whether it pays on this formula.

use super::Completer;
use crate::formula::{var_index, Lit};
use crate::propagate::Propagator;
use crate::solver::eliminate::Elimination;
use crate::solver::native::search::Refuter;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Conflicts the refuter (`crate::solver::native::search`) may take to prove a repair's kept bits
/// contradictory before splr is asked. On isolateRightmost.sk_7_481 (seed 1) splr's 1,238
/// refutations needed 73 conflicts (median, its own count), 374 at the 90th percentile; with
/// 300 the refuter proved 1,237 of them, in 0.75 ms each (splr: 14 ms).
const REFUTING_CONFLICTS: u32 = 300;

/// How refuting kept bits before the oracle has fared, shared by the threads. The refuter
/// proves only contradictions the oracle would find too, so whether it runs changes no test,
/// only the time: times, not counts, may decide here. It runs while the refutations it made
/// and those it left to the oracle (the oracle's refusals of kept bits as unsatisfiable), at
/// the oracle's mean cost of a refusal, come to twice its own time, and while it finds any
/// when the oracle has refused none. Counting the refusals lets a refuter switched off after
/// a warm-up without refutations come back when refutable kept bits turn up: with two ranks
/// on LoginService2.sk_23_36 (seed 1), one rank's first 32 tries refuted nothing while the
/// other's refuted 38, and the first, off for good under the rule that counted only its own
/// refutations, left 46 refutations to splr (0.7 s). Seed 1, one rank, two runs at a time:
/// isolateRightmost.sk_7_481 1,492 refutations for 1.7 s, leaving the oracle 1;
/// doublyLinkedList.sk_8_37 all 920 for 0.9 s; 20.sk_1_51 345 for 0.6 s;
/// LoginService2.sk_23_36 84 in 325 tries for 0.5 s; enqueueSeqSK.sk_10_42 83 in 563 tries
/// for 2.8 s.
#[derive(Debug, Default)]
pub(super) struct RefutingRecord {
    tries: AtomicU64,
    refuting_nanos: AtomicU64,
    /// Tries that refuted the kept bits.
    refutations: AtomicU64,
    /// Oracle calls on a repair's kept bits that found them unsatisfiable, and their time.
    oracle_refusals: AtomicU64,
    oracle_refusal_nanos: AtomicU64,
}

impl RefutingRecord {
    /// Tries always made, to measure.
    const WARM_UP: u64 = 32;

    fn worth_trying(&self) -> bool {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let (tries, refutations) = (load(&self.tries), load(&self.refutations));
        if tries < Self::WARM_UP {
            return true;
        }
        let refusals = load(&self.oracle_refusals);
        if refusals == 0 {
            // The refuter found every refutation, or there were none to find.
            return refutations > 0;
        }
        let refutable = u128::from(refutations + refusals);
        let spared =
            refutable * u128::from(load(&self.oracle_refusal_nanos)) / u128::from(refusals);
        spared >= 2 * u128::from(load(&self.refuting_nanos))
    }

    fn record_try(&self, refuted: bool, took: Duration) {
        self.tries.fetch_add(1, Ordering::Relaxed);
        self.refutations
            .fetch_add(u64::from(refuted), Ordering::Relaxed);
        self.refuting_nanos
            .fetch_add(nanos(took), Ordering::Relaxed);
    }

    pub(super) fn record_oracle_refusal(&self, took: Duration) {
        self.oracle_refusals.fetch_add(1, Ordering::Relaxed);
        self.oracle_refusal_nanos
            .fetch_add(nanos(took), Ordering::Relaxed);
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Completer<'_> {
    /// Whether the refuter proves the kept bits `prop` holds contradictory, tried where the
    /// formula names a support (kept bits lie on it) and the record says it pays.
    pub(super) fn refutes_first(&self, prop: &Propagator, kept: &[Lit]) -> bool {
        let support_named = self.projection.len() < self.cnf.num_vars();
        if !support_named || kept.is_empty() || !self.refuting.worth_trying() {
            return false;
        }
        let started = Instant::now();
        let refuted = self.refutes(prop, kept);
        self.refuting.record_try(refuted, started.elapsed());
        refuted
    }

    /// Whether the refuter proves that the kept bits `prop` holds contradict the formula the
    /// oracle sees. Those `fix` dropped (propagation refuted them) are false in `prop` and
    /// left out: the oracle is asked without them too. The formula is the eliminated one
    /// where there is one: its models are the formula's, projected, and kept bits lie on the
    /// support, which elimination keeps.
    fn refutes(&self, prop: &Propagator, kept: &[Lit]) -> bool {
        let held: Vec<Lit> = kept
            .iter()
            .copied()
            .filter(|&lit| prop.value(var_index(lit)) == Some(lit > 0))
            .collect();
        let taken = self
            .refuters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut refuter = taken.unwrap_or_else(|| {
            Refuter::new(self.elimination().map_or(self.cnf, Elimination::reduced))
        });
        let refuted = refuter.refutes(&held, REFUTING_CONFLICTS, &|| self.expired());
        let mut refuters = self.refuters.lock().unwrap_or_else(|e| e.into_inner());
        refuters.push(refuter);
        refuted
    }
}

#[cfg(test)]
mod tests {
    use super::super::Route;
    use super::*;
    use crate::assignment::Assignment;
    use crate::budget::Budget;
    use crate::formula::Cnf;
    use crate::solver::Splr;
    use crate::verify::Checker;

    proptest::proptest! {
        /// The refuter before the oracle changes the time a repair takes, never its test: it
        /// is left to timings (`RefutingRecord`) only because of that.
        #[test]
        fn repairs_are_the_same_with_the_refuter_and_without(
            clauses in crate::testing::arbitrary_clauses(10, 4, 16),
            k in 1i32..=6,
            gadget in proptest::collection::vec(1i32..=10, 3),
            candidate in proptest::collection::vec(proptest::prelude::any::<bool>(), 10),
            delta in proptest::collection::vec(proptest::prelude::any::<bool>(), 10),
            seed in 0u64..1000,
        ) {
            // Random clauses of 2 or 3 literals, and the refutation of `kept_bits_the_refuter_
            // refutes_are_freed_without_asking_the_oracle` under the kept support variable k:
            // beyond propagation, where the refuter matters.
            let (a, b, c) = (gadget[0], gadget[1], gadget[2]);
            proptest::prop_assume!([k, a, b, c].iter().collect::<std::collections::HashSet<_>>().len() == 4);
            let mut clauses: Vec<Vec<Lit>> = clauses.into_iter().filter(|c| c.len() > 1).collect();
            clauses.extend([vec![-k, a, b], vec![-k, a, -b], vec![-k, -a, c], vec![-k, -a, -c]]);
            let mut cnf = Cnf::from_clauses(10, &clauses);
            cnf.set_independent_support((1..=6).collect());
            let checker = Checker::new(&cnf);
            let bits = |values: &[bool]| {
                let text: String = values.iter().map(|&b| if b { '1' } else { '0' }).collect();
                Assignment::from_bit_string(&text).unwrap()
            };
            let (mut candidate, mut delta) = (bits(&candidate), bits(&delta));
            // The candidate keeps k.
            candidate.set(k as usize - 1, true);
            delta.set(k as usize - 1, true);
            let repair = |refuting: bool| {
                let completer = Completer::new(&checker, &Splr, Budget::unlimited());
                if !refuting {
                    completer.refuting.tries.store(RefutingRecord::WARM_UP, Ordering::Relaxed);
                }
                let repaired = completer.repair(&mut None, None, &candidate, &delta, seed);
                let tries = completer.refuting.tries.load(Ordering::Relaxed);
                (repaired.map(|done| done.test.to_bit_string()), tries)
            };
            let ((with, tries), (without, _)) = (repair(true), repair(false));
            proptest::prop_assert_eq!(with, without, "{} tries", tries);
        }
    }

    /// A refuter switched off after a warm-up without refutations comes back once the
    /// oracle keeps refusing kept bits it could have refuted.
    #[test]
    fn a_refuter_switched_off_comes_back_when_the_oracle_refuses_kept_bits() {
        let record = RefutingRecord::default();
        for _ in 0..RefutingRecord::WARM_UP {
            assert!(record.worth_trying());
            record.record_try(false, Duration::from_millis(1));
        }
        record.record_oracle_refusal(Duration::from_millis(20));
        assert!(
            !record.worth_trying(),
            "32 ms of tries against one 20 ms refusal"
        );
        for _ in 0..3 {
            record.record_oracle_refusal(Duration::from_millis(20));
        }
        assert!(
            record.worth_trying(),
            "80 ms of refusals against 32 ms of tries"
        );
    }

    #[test]
    fn kept_bits_the_refuter_refutes_are_freed_without_asking_the_oracle() {
        // Under x4 every value of x1 falsifies a clause, which neither propagation nor
        // greedy completion can tell; x5 = x1 lies outside the support x1..x4.
        let mut clauses: Vec<Vec<Lit>> = [[1, 2], [1, -2], [-1, 3], [-1, -3]]
            .iter()
            .map(|pair| vec![-4, pair[0], pair[1]])
            .collect();
        clauses.extend([vec![-5, 1], vec![5, -1]]);
        let mut cnf = Cnf::from_clauses(5, &clauses);
        cnf.set_independent_support(vec![1, 2, 3, 4]);
        let checker = Checker::new(&cnf);
        let completer = Completer::new(&checker, &Splr, Budget::unlimited());
        let candidate = Assignment::from_bit_string("00010").unwrap();
        let delta = Assignment::from_bit_string("00010").unwrap();
        let done = completer
            .repair(&mut None, None, &candidate, &delta, 3)
            .unwrap();
        assert!(checker.satisfies(&done.test));
        assert!(!done.test.get(3), "x4 contradicts the formula");
        assert_eq!((done.solver_calls, done.kept), (0, 0));
        assert_eq!(done.route, Route::Propagation);
    }
}
