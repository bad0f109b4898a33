//! Criterion benchmarks of the hot paths: parsing, full and incremental verification,
//! completion by propagation, the delta pool, NCD, and a test's way to the suite (a rank
//! encoding its verdicts, the coordinator decoding them, admitting their tests and merging
//! whole sharded rounds). Run with `cargo bench`; read medians, compare runs made together.
// criterion_group! defines a public function without a doc comment.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use snapsat::assignment::Assignment;
use snapsat::budget::Budget;
use snapsat::dimacs::{self, Strictness};
use snapsat::distribute::protocol::{self, ToCoordinator};
use snapsat::diversity;
use snapsat::formula::Cnf;
use snapsat::propagate::{Propagator, Watches};
use snapsat::sampler::snap::draw::Drawn;
use snapsat::sampler::snap::shard::ShardPlan;
use snapsat::sampler::task::{Deliver, Task, Verdict};
use snapsat::sampler::work::{RankReport, Workforce};
use snapsat::sampler::{self, SampleError, Sampling, SnapConfig, StopMetric, Suite};
use snapsat::solver::Solvers;
use snapsat::solver::Splr;
use snapsat::verify::Checker;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Case study `name` when the case studies are present, else a planted random 3-CNF of
/// `vars` variables and `clauses` clauses.
fn formula(name: &str, vars: usize, clauses: usize) -> Cnf {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/benchmarks/paper")
        .join(name);
    if let Ok(parsed) = dimacs::read_file(&case, Strictness::Strict) {
        return parsed.cnf;
    }
    eprintln!(
        "{} missing: benchmarking a planted random 3-CNF",
        case.display()
    );
    snapsat::testing::planted(vars, clauses, 1).0
}

/// A small suite drawn by the sampler itself, to measure the steps on real tests.
fn suite(cnf: &Cnf) -> Vec<Assignment> {
    let checker = Checker::new(cnf);
    let mut tests = Vec::new();
    let mut keep = |t: &Assignment| {
        tests.push(t.clone());
        Ok(())
    };
    let config = SnapConfig {
        max_rounds: Some(1),
        ..Default::default()
    };
    sampler::sample(&checker, &Splr, &config, &mut keep, &Default::default()).expect("satisfiable");
    tests
}

fn benches(c: &mut Criterion) {
    let cnf = formula("70.sk_3_40.cnf", 4670, 15864);
    let mut text = Vec::new();
    dimacs::write(&cnf, &mut text).unwrap();
    c.bench_function("parse", |b| {
        b.iter(|| dimacs::parse(black_box(&text), Strictness::Strict).unwrap())
    });

    let tests = suite(&cnf);
    let checker = Checker::new(&cnf);
    c.bench_function("verify/full", |b| {
        b.iter(|| checker.satisfies(black_box(&tests[0])))
    });

    let delta = tests[0].xor(&tests[1]);
    let candidate = tests[2].xor(&delta);
    let base_violated = checker.violated(&tests[2]);
    c.bench_function("verify/incremental", |b| {
        b.iter(|| checker.satisfies_after_flips(black_box(&base_violated), &candidate, &delta))
    });

    let hundred: Vec<&Assignment> = tests.iter().take(100).collect();
    c.bench_function("deltas/100-samples", |b| {
        b.iter(|| sampler::snap::deltas::DeltaPool::from_samples(black_box(&hundred), &|| false))
    });

    // Completing a test by propagation, as a repair does on a circuit: its inputs decide
    // the rest.
    let circuit = formula("s1196a_3_2.cnf", 690, 1805);
    let circuit_tests = suite(&circuit);
    let watches = Watches::new(&circuit);
    let mut propagator = Propagator::new(&circuit, watches);
    let order: Vec<usize> = circuit
        .projection()
        .into_iter()
        .chain(0..circuit.num_vars())
        .collect();
    let mut next = 0;
    c.bench_function("propagate/complete-circuit", |b| {
        b.iter(|| {
            next = (next + 1) % circuit_tests.len();
            propagator.reset_to_units().unwrap();
            propagator
                .complete_greedily(&circuit_tests[next], order.iter().copied(), usize::MAX)
                .unwrap();
        })
    });

    coordinator_benches(c, &tests, &checker);

    let projection = cnf.projection();
    let mut group = c.benchmark_group("ncd");
    group.sample_size(10);
    group.bench_function("projected", |b| {
        b.iter(|| diversity::suite_ncd(black_box(&tests), &projection, diversity::DEFAULT_REMOVALS))
    });
    group.finish();
}

/// The coordinator's share of a run: messages, admitting tests, merging rounds.
fn coordinator_benches(c: &mut Criterion, tests: &[Assignment], checker: &Checker) {
    // The coordinator's part of a test: a sharded rank's chunk of 64 verdicts decoded, and
    // their tests admitted to a suite (the fingerprints worked out by the rank). Divide by 64
    // for a test's.
    let chunk: Vec<Verdict> = tests
        .iter()
        .cycle()
        .take(64)
        .map(|t| Verdict::Valid {
            test: t.clone(),
            fingerprint: t.fingerprint(),
        })
        .collect();
    let message = ToCoordinator::ShardResults {
        round: 1,
        drawn: Default::default(),
        verdicts: chunk.clone(),
        busy_nanos: 0,
        last: false,
        share: None,
    };
    c.bench_function("rank/encode-64-verdicts", |b| {
        b.iter(|| protocol::encode(black_box(&message)))
    });
    let bytes = protocol::encode(&message);
    c.bench_function("coordinator/decode-64-verdicts", |b| {
        b.iter(|| protocol::decode::<ToCoordinator>(black_box(&bytes)).unwrap())
    });
    let distinct: Vec<(Assignment, u64)> = (0..64u64)
        .map(|i| {
            let mut test = tests[i as usize % tests.len()].clone();
            test.set(i as usize, !test.get(i as usize));
            let fingerprint = test.fingerprint();
            (test, fingerprint)
        })
        .collect();
    c.bench_function("coordinator/admit-64-tests", |b| {
        b.iter_batched(
            || distinct.clone(),
            |batch| {
                let mut suite = Suite::new(checker, None);
                let mut observer = |_: &Assignment| Ok(());
                for (test, fingerprint) in batch {
                    suite
                        .admit_checked(test, fingerprint, &mut observer)
                        .unwrap();
                }
                suite.take_joined()
            },
            criterion::BatchSize::SmallInput,
        )
    });

    // The coordinator's whole part of a sharded run, merging: 20 rounds of 500 verdicts each
    // from a workforce that has them ready, timed by the run's own `merge_seconds` (the
    // wall time of such a run is NCD's, which the coordinator waits for). Divide by 10,100
    // for a verdict's.
    c.bench_function("coordinator/merge-20-sharded-rounds", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| merge_time(checker, tests, 20, 500))
                .sum()
        })
    });
}

/// Ranks whose verdicts are ready at once: new tests made from `tests`, each distinct.
struct Ready {
    verdicts: std::vec::IntoIter<Verdict>,
    per_round: usize,
}

impl Ready {
    fn new(tests: &[Assignment], count: usize, per_round: usize) -> Self {
        let verdicts: Vec<Verdict> = (0..count)
            .map(|i| {
                let mut test = tests[i % tests.len()].clone();
                // The variable `i / tests.len()` flipped: a test of its own.
                let at = (i / tests.len()) % test.len();
                test.set(at, !test.get(at));
                snapsat::testing::solved(test)
            })
            .collect();
        Ready {
            verdicts: verdicts.into_iter(),
            per_round,
        }
    }

    fn deliver(&mut self, count: usize, deliver: &mut Deliver) -> Result<(), SampleError> {
        deliver(&mut self.verdicts.by_ref().take(count))?;
        Ok(())
    }
}

impl Workforce for Ready {
    fn run(
        &mut self,
        _: &[Assignment],
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        self.deliver(tasks.len(), deliver)
    }

    fn shard(&mut self, _: &ShardPlan, _: &[Assignment]) -> Result<(), SampleError> {
        Ok(())
    }

    fn run_shards(&mut self, _: usize, deliver: &mut Deliver) -> Result<Drawn, SampleError> {
        let per_round = self.per_round;
        self.deliver(per_round, deliver)?;
        Ok(Drawn::default())
    }

    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError> {
        Ok(Vec::new())
    }

    fn messaging(&self) -> Duration {
        Duration::ZERO
    }

    fn busy(&self) -> Duration {
        Duration::ZERO
    }
}

/// The merging time of a sharded run of `rounds` rounds of `per_round` ready verdicts (after
/// 100 initial solutions), its tests handed to an observer that drops them.
fn merge_time(
    checker: &Checker,
    tests: &[Assignment],
    rounds: usize,
    per_round: usize,
) -> Duration {
    let config = SnapConfig {
        sharded: true,
        min_improvement: 0.0,
        stop_metric: StopMetric::Information,
        max_rounds: Some(rounds),
        ..Default::default()
    };
    let mut ready = Ready::new(tests, 100 + rounds * per_round, per_round);
    let stop = AtomicBool::new(false);
    let run = Sampling {
        checker,
        solvers: Solvers::splr(),
        config: &config,
        resumed: &[],
        interrupt: &stop,
    };
    let mut observer = |_: &Assignment| Ok(());
    let report = sampler::sample_with(&mut ready, &run, Budget::unlimited(), &mut observer)
        .expect("a run of ready verdicts");
    assert_eq!(report.distinct_tests, 100 + rounds * per_round);
    Duration::from_secs_f64(report.merge_seconds)
}

criterion_group!(core, benches);
criterion_main!(core);
