//! Criterion benchmarks of the hot paths: parsing, full and incremental verification, the
//! delta pool and NCD. Run with `cargo bench`; read medians, compare runs made together.
// criterion_group! defines a public function without a doc comment.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use snapsat::assignment::Assignment;
use snapsat::dimacs::{self, Strictness};
use snapsat::diversity;
use snapsat::formula::Cnf;
use snapsat::oracle::Splr;
use snapsat::sampler::{self, SnapConfig};
use snapsat::verify::Checker;
use std::path::Path;

/// 70.sk_3_40 when the case studies are present, else a planted random 3-CNF of like size.
fn formula() -> Cnf {
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/paper/70.sk_3_40.cnf");
    if let Ok(parsed) = dimacs::read_file(&case, Strictness::Strict) {
        return parsed.cnf;
    }
    eprintln!(
        "{} missing: benchmarking a planted random 3-CNF",
        case.display()
    );
    snapsat::testing::planted(4670, 15864, 1).0
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
    let cnf = formula();
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
        b.iter(|| sampler::snap::deltas::DeltaPool::from_samples(black_box(&hundred)))
    });

    let projection = cnf.projection();
    let mut group = c.benchmark_group("ncd");
    group.sample_size(10);
    group.bench_function("projected", |b| {
        b.iter(|| diversity::suite_ncd(black_box(&tests), &projection, diversity::DEFAULT_REMOVALS))
    });
    group.finish();
}

criterion_group!(core, benches);
criterion_main!(core);
