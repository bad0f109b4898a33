//! Mutation fuzzing of snapsat's readers on stable Rust: the DIMACS parser (plain and
//! gzip), the test-file reader and the `tcg` language (parser and rule translation).
//!
//! Each input is a seed (shipped examples and small texts made here) put through a few random
//! mutations: byte flips, interesting tokens inserted, ranges deleted, repeated or spliced
//! from another seed. A panic is caught, its input saved under `target/fuzz/` and the run
//! fails; an abort or stack overflow ends the process, which `scripts/fuzz` reports.
//!
//! `cargo run --release --example fuzz -- [INPUTS] [SEED]` (default 100000 inputs, seed 0),
//! spread over every core.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use snapsat::dimacs::{self, Strictness};
use snapsat::tcg;
use snapsat::testfile;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// Tokens that reach the parsers' corners when inserted.
const TOKENS: &[&str] = &[
    "p cnf ",
    "c ind ",
    "c p show ",
    " 0\n",
    "\n",
    " ",
    "-",
    "0",
    "1",
    "99999999999",
    "2147483648",
    "-2147483649",
    "33554432",
    "268435456",
    "v ",
    "c ",
    "%\n",
    "\t",
    "\r\n",
    "int ",
    "return ",
    "if (",
    ") ",
    "{",
    "}",
    "(",
    ")",
    "while (",
    "try { ",
    "} catch { ",
    "a",
    "b[",
    "]",
    ".length",
    " + ",
    " * ",
    " / ",
    " % ",
    " && ",
    " || ",
    "!",
    "==",
    "<=",
    ";",
    ",",
    "=",
    "f(",
    "int[3] ",
    "\u{00e9}",
    "\u{0000}",
];

/// One fuzzed reader.
#[derive(Clone, Copy, Debug)]
enum Target {
    Dimacs,
    DimacsGzip,
    Tests,
    Tcg,
}

const TARGETS: [Target; 4] = [
    Target::Dimacs,
    Target::DimacsGzip,
    Target::Tests,
    Target::Tcg,
];

fn seeds(target: Target) -> Vec<Vec<u8>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = |p: &str| std::fs::read(format!("{root}/{p}")).expect("shipped example");
    match target {
        Target::Dimacs | Target::DimacsGzip => vec![
            file("examples/mid.cnf"),
            b"c ind 1 2 0\np cnf 3 2\n1 -2 0\n2 3 0\n".to_vec(),
            b"p cnf 2 1\n1 2\n0\n%\n0\n".to_vec(),
            b"c p show 1 3 0\np cnf 3 1\n-1 -3 0\n".to_vec(),
        ],
        Target::Tests => vec![
            b"1 -2 3 0\n-1 2 -3 0\n".to_vec(),
            b"101\n010\n".to_vec(),
            b"v 1 -2 3 0\nc comment\n\n1 2 3 0".to_vec(),
        ],
        Target::Tcg => vec![
            file("examples/tcg/lcm.tcg"),
            file("examples/tcg/mid.tcg"),
            file("examples/tcg/datastructures.tcg"),
        ],
    }
}

fn mutate(rng: &mut ChaCha8Rng, input: &mut Vec<u8>, pool: &[Vec<u8>]) {
    for _ in 0..rng.gen_range(1..=8) {
        let at = rng.gen_range(0..=input.len());
        match rng.gen_range(0..7) {
            0 if !input.is_empty() => {
                let i = rng.gen_range(0..input.len());
                input[i] ^= 1 << rng.gen_range(0..8);
            }
            1 => input.insert(at, rng.gen()),
            2 | 3 => {
                let token = TOKENS[rng.gen_range(0..TOKENS.len())].as_bytes();
                let times = if rng.gen_ratio(1, 16) {
                    rng.gen_range(2..300)
                } else {
                    1
                };
                for _ in 0..times {
                    input.splice(at..at, token.iter().copied());
                }
            }
            4 => {
                let end = rng.gen_range(at..=input.len().min(at + 64));
                input.drain(at..end);
            }
            5 => {
                let end = rng.gen_range(at..=input.len().min(at + 64));
                let copy = input[at..end].to_vec();
                input.splice(at..at, copy);
            }
            _ => {
                let other = &pool[rng.gen_range(0..pool.len())];
                let from = rng.gen_range(0..=other.len());
                let end = rng.gen_range(from..=other.len().min(from + 256));
                input.splice(at..at, other[from..end].iter().copied());
            }
        }
    }
    input.truncate(16 * 1024);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("in memory");
    encoder.finish().expect("in memory")
}

/// Feeds one input to a reader; only a panic (or worse) is a finding.
fn exercise(target: Target, input: &[u8], rng: &mut ChaCha8Rng) {
    match target {
        Target::Dimacs => {
            let _ = dimacs::parse(input, Strictness::Strict);
            let _ = dimacs::parse(input, Strictness::Relaxed);
        }
        Target::DimacsGzip => {
            let mut packed = gzip(input);
            if rng.gen_ratio(1, 2) && packed.len() > 12 {
                let i = rng.gen_range(10..packed.len());
                packed[i] ^= 1 << rng.gen_range(0..8);
            }
            if let Ok(text) = dimacs::decompress(&packed) {
                let _ = dimacs::parse(&text, Strictness::Strict);
            }
        }
        Target::Tests => {
            let text = String::from_utf8_lossy(input);
            let vars = rng.gen_range(0..6);
            let _ = testfile::read_tests(&text, vars);
            let _ = testfile::read_suite(&text, vars);
            let _ = testfile::implied_num_vars(&text);
        }
        Target::Tcg => {
            let text = String::from_utf8_lossy(input);
            if let Ok(program) = tcg::lang::parse(&text) {
                let _ = tcg::rules::translate(&program);
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let inputs: u64 = args
        .next()
        .map_or(100_000, |a| a.parse().expect("INPUTS: a count"));
    let seed: u64 = args
        .next()
        .map_or(0, |a| a.parse().expect("SEED: a number"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let done = AtomicU64::new(0);
    let per_target: Vec<AtomicU64> = TARGETS.iter().map(|_| AtomicU64::new(0)).collect();
    let pools: Vec<Vec<Vec<u8>>> = TARGETS.iter().map(|&t| seeds(t)).collect();
    // Findings are reported by the harness, not by the default hook's backtrace per panic.
    static MESSAGE: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    std::panic::set_hook(Box::new(|info| {
        *MESSAGE.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string();
    }));
    let started = std::time::Instant::now();
    let failure = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (done, per_target, pools) = (&done, &per_target, &pools);
                // Big enough for any input the parsers accept; they refuse deeper nesting.
                std::thread::Builder::new()
                    .stack_size(64 << 20)
                    .spawn_scoped(scope, move || {
                        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (thread << 32));
                        while done.fetch_add(1, Ordering::Relaxed) < inputs {
                            let which = rng.gen_range(0..TARGETS.len());
                            let pool = &pools[which];
                            let mut input = pool[rng.gen_range(0..pool.len())].clone();
                            mutate(&mut rng, &mut input, pool);
                            let mut inner = rng.clone();
                            let run =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    exercise(TARGETS[which], &input, &mut inner);
                                }));
                            per_target[which].fetch_add(1, Ordering::Relaxed);
                            if run.is_err() {
                                return Some((TARGETS[which], input));
                            }
                        }
                        None
                    })
                    .expect("fuzz thread starts")
            })
            .collect();
        workers.into_iter().find_map(|w| w.join().expect("worker"))
    });
    let counts: Vec<String> = TARGETS
        .iter()
        .zip(&per_target)
        .map(|(t, n)| format!("{t:?} {}", n.load(Ordering::Relaxed)))
        .collect();
    let total: u64 = per_target.iter().map(|n| n.load(Ordering::Relaxed)).sum();
    println!(
        "fuzz: {total} inputs in {:.1} s on {threads} threads ({}), seed {seed}",
        started.elapsed().as_secs_f64(),
        counts.join(", ")
    );
    if let Some((target, input)) = failure {
        let dir = format!("{}/target/fuzz", env!("CARGO_MANIFEST_DIR"));
        let path = format!("{dir}/{target:?}-seed{seed}.input");
        let saved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &input));
        let message = MESSAGE.lock().unwrap_or_else(|e| e.into_inner()).clone();
        println!("fuzz: a panic in the {target:?} reader: {message}");
        match saved {
            Ok(()) => println!("fuzz: its input is in {path}"),
            Err(e) => println!("fuzz: its input could not be saved ({e}): {input:?}"),
        }
        std::process::exit(1);
    }
    println!("fuzz: no panic");
}
