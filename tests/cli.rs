//! End-to-end tests of the `snapsat` binary: suites are checked by `snapsat verify` and by an
//! independent clause check written here.

mod common;

use common::{case_study, read_stats, snapsat, stderr};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

/// `sample` arguments whose rounds go on until stopped (zero improvement needed, on the
/// information metric), on one thread.
fn endless_sample<'a>(formula: &'a Path, out: &'a Path) -> Vec<&'a str> {
    let (f, o) = (formula.to_str().unwrap(), out.to_str().unwrap());
    vec![
        "sample",
        f,
        "-o",
        o,
        "-x",
        "0",
        "--stop-metric",
        "information",
        "-t",
        "120",
        "-j",
        "1",
    ]
}

/// Starts `snapsat sample` with `args`, waits until `out` holds `lines` tests, sends SIGINT,
/// and returns the finished run.
fn interrupt_after(args: &[&str], out: &Path, lines: usize) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_snapsat"))
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::fs::read_to_string(out).map_or(0, |t| t.lines().count()) < lines {
        assert!(
            start.elapsed().as_secs() < 60,
            "no tests written within a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    child.wait_with_output().unwrap()
}

/// Clause check independent of the library: parse the DIMACS text naively.
fn satisfies_all(cnf_text: &str, test_line: &str) -> bool {
    let values: std::collections::HashSet<i64> = test_line
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .filter(|&l| l != 0)
        .collect();
    let mut clause = Vec::new();
    for line in cnf_text.lines() {
        let line = line.trim();
        if line.is_empty()
            || line.starts_with('c')
            || line.starts_with('p')
            || line.starts_with('%')
        {
            continue;
        }
        for lit in line.split_whitespace().map(|t| t.parse::<i64>().unwrap()) {
            if lit == 0 {
                if !clause.iter().any(|l| values.contains(l)) {
                    return false;
                }
                clause.clear();
            } else {
                clause.push(lit);
            }
        }
    }
    true
}

/// Samples `formula` within 60 seconds, then checks the suite independently of the library:
/// every test satisfies every clause, none repeats, and `--stats` counts them all.
fn sample_and_verify(formula: &Path, extra: &[&str]) -> (usize, serde_json::Value) {
    sample_and_verify_within(formula, "60", extra)
}

/// As `sample_and_verify`, within `seconds`.
fn sample_and_verify_within(
    formula: &Path,
    seconds: &str,
    extra: &[&str],
) -> (usize, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tests.txt");
    let stats = dir.path().join("stats.json");
    let mut args = vec![
        "sample",
        formula.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
        "-t",
        seconds,
    ];
    args.extend_from_slice(extra);
    let run = snapsat(&args);
    assert!(run.status.success(), "sample failed: {}", stderr(&run));
    let check = snapsat(&["verify", formula.to_str().unwrap(), out.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        check.status.success(),
        "verify rejected the suite: {report} {}",
        stderr(&check)
    );
    assert!(report.contains(" 0 invalid"), "{report}");

    let raw = std::fs::read(formula).unwrap();
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut plain = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut plain)
            .unwrap();
        plain
    } else {
        String::from_utf8(raw).unwrap()
    };
    let tests = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = tests.lines().collect();
    assert!(
        lines.iter().all(|t| satisfies_all(&text, t)),
        "a test falsifies a clause"
    );
    let distinct: std::collections::HashSet<_> = lines.iter().collect();
    assert_eq!(distinct.len(), lines.len(), "duplicate tests");
    let stats = read_stats(stats);
    assert_eq!(stats["answer"], "suite");
    assert_eq!(
        stats["distinct_tests"].as_u64().unwrap() as usize,
        lines.len()
    );
    (lines.len(), stats)
}

#[test]
fn shipped_example_gives_a_verified_suite() {
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    let (n, stats) = sample_and_verify(&mid, &[]);
    assert!(n > 100, "only {n} tests");
    assert!(stats["rounds"].as_array().unwrap().len() >= 2);
    // The suite is written on a thread of its own, whose time is measured beside the
    // coordinator's.
    assert!(stats["writer_seconds"].as_f64().unwrap() > 0.0);
    // Repairs count the delta bits they were asked to keep, and those their tests have.
    let asked = stats["delta_bits_asked"].as_u64().unwrap();
    let kept = stats["delta_bits_kept"].as_u64().unwrap();
    assert!(stats["repaired"].as_u64().unwrap() > 0);
    assert!(0 < kept && kept <= asked, "{kept} of {asked}");
}

#[test]
fn blasted_case47_suite_is_valid() {
    if let Some(f) = case_study("blasted_case47.cnf") {
        let (n, _) = sample_and_verify(&f, &["--seed", "3"]);
        assert!(n >= 100);
    }
}

#[test]
fn s820a_7_4_suite_is_valid_in_bits_format_too() {
    if let Some(f) = case_study("s820a_7_4.cnf") {
        sample_and_verify(&f, &["--max-rounds", "2"]);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bits.txt");
        let run = snapsat(&[
            "sample",
            f.to_str().unwrap(),
            "--format",
            "bits",
            "-o",
            out.to_str().unwrap(),
            "--max-rounds",
            "1",
            "-q",
        ]);
        assert!(run.status.success());
        let check = snapsat(&["verify", f.to_str().unwrap(), out.to_str().unwrap()]);
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stdout)
        );
        let first = std::fs::read_to_string(&out).unwrap();
        assert_eq!(first.lines().next().unwrap().len(), 616);
    }
}

#[test]
fn gzipped_input_is_read() {
    let mid =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("mid.cnf.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    enc.write_all(&mid).unwrap();
    enc.finish().unwrap();
    sample_and_verify(&gz, &["--max-tests", "50"]);
}

#[test]
fn unsatisfiable_formula_exits_20_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("unsat.cnf");
    std::fs::write(&f, "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n").unwrap();
    let run = snapsat(&["sample", f.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(20));
    assert!(stderr(&run).contains("unsatisfiable"), "{}", stderr(&run));
    assert!(run.stdout.is_empty());
    // `--stats` says so too, for scripts that run many formulas: the answer and the run's
    // settings, no figures of a suite.
    let stats = dir.path().join("stats.json");
    let run = snapsat(&[
        "sample",
        f.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(20));
    let stats = read_stats(&stats);
    assert_eq!(stats["answer"], "unsat");
    assert_eq!(stats["variables"], 2);
    assert!(stats["wall_seconds"].as_f64().unwrap() >= 0.0);
    assert!(stats.get("distinct_tests").is_none() && stats.get("unknown").is_none());
}

#[test]
fn malformed_input_names_line_and_column_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.cnf");
    std::fs::write(&f, "p cnf 3 2\n1 -2 0\n2 x 0\n").unwrap();
    let run = snapsat(&["sample", f.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).contains("line 3, column 3: expected a literal"),
        "{}",
        stderr(&run)
    );
    let missing = snapsat(&["sample", "/nonexistent.cnf"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn verify_rejects_an_invalid_test() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.cnf");
    let t = dir.path().join("t.txt");
    std::fs::write(&f, "p cnf 2 1\n1 2 0\n").unwrap();
    std::fs::write(&t, "1 -2 0\n-1 -2 0\n1 -2 0\n").unwrap();
    let run = snapsat(&["verify", f.to_str().unwrap(), t.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "3 tests: 2 valid, 1 invalid, 2 distinct"
    );
}

#[test]
fn ncd_command_reproduces_the_paper_toy_suite() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t1.txt");
    std::fs::write(&t, "00000\n00011\n00010\n").unwrap();
    let run = snapsat(&["ncd", t.to_str().unwrap()]);
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "0.166667");
}

#[test]
fn help_lists_the_paper_parameters() {
    let run = snapsat(&["sample", "--help"]);
    let help = String::from_utf8_lossy(&run.stdout);
    for flag in [
        "--samples",
        "--clusters",
        "--min-improvement",
        "--time-limit",
        "--seed",
        "--max-tests",
        "--stats",
        "--format",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}

/// The same seed gives the same suite on any threads: with the default (native) for the same
/// --lanes, with splr whatever the lanes.
#[test]
fn same_seed_gives_the_same_suite_from_the_cli() {
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    for solver in [["--lanes", "2"], ["--solver", "splr"]] {
        let run = |threads: &str| {
            let mut args = vec![
                "sample",
                mid.to_str().unwrap(),
                "-s",
                "11",
                "-j",
                threads,
                "-q",
            ];
            args.extend(solver);
            let o = snapsat(&args);
            assert!(o.status.success());
            o.stdout
        };
        assert_eq!(run("1"), run("2"), "{solver:?}");
    }
}

#[test]
fn interrupted_run_keeps_every_test_found_and_exits_130() {
    let Some(f) = case_study("s820a_7_4.cnf") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tests.txt");
    let args = endless_sample(&f, &out);
    let done = interrupt_after(&args, &out, 200);
    assert_eq!(done.status.code(), Some(130), "{}", stderr(&done));
    assert!(stderr(&done).contains("interrupted"));
    let check = snapsat(&["verify", f.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(check.status.success());
    let report = String::from_utf8_lossy(&check.stdout).into_owned();
    let count: usize = report.split_whitespace().next().unwrap().parse().unwrap();
    assert!(count >= 200, "{report}");
}

#[test]
fn quicksampler_baseline_writes_only_verified_tests_and_reports_credibility() {
    let Some(f) = case_study("blasted_case47.cnf") else {
        return;
    };
    let (n, stats) = sample_and_verify(
        &f,
        &["--algorithm", "quicksampler", "--max-candidates", "2000"],
    );
    assert_eq!(stats["algorithm"], "quicksampler");
    let credibility = stats["credibility_percent"].as_f64().unwrap();
    assert!(credibility > 0.0 && credibility <= 100.0);
    assert!(stats["valid_candidates"].as_u64().unwrap() as usize >= n);
}

/// The suite `snapsat sample` writes to standard output for the shipped example, seed 5, one
/// thread, with `extra` flags; the run must succeed.
fn sample_mid(extra: &[&str]) -> Vec<u8> {
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    let mut args = vec!["sample", mid.to_str().unwrap(), "-s", "5", "-j", "1", "-q"];
    args.extend_from_slice(extra);
    let o = snapsat(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    o.stdout
}

#[test]
fn in_process_ranks_give_the_same_suite_as_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let run = sample_mid;
    // splr's suite is the seed's on any ranks (native's, with --sharded: see mpi-check).
    let alone = run(&["--solver", "splr"]);
    let spread = run(&[
        "--solver",
        "splr",
        "--ranks",
        "3",
        "--stats",
        stats.to_str().unwrap(),
    ]);
    assert!(!alone.is_empty());
    assert_eq!(alone, spread);
    let stats = read_stats(stats);
    assert_eq!(stats["launch"], "in-process-ranks");
    assert_eq!(stats["num_ranks"], 3);
    let ranks = stats["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    // Each rank names its host: here all the same machine's.
    let host = snapsat::sampler::work::host_name();
    assert!(!host.is_empty());
    assert!(
        ranks.iter().all(|r| r["host"] == host.as_str()),
        "{ranks:?}"
    );
    // Rank 0's own time per test: its parts, each spent, and their sum.
    let share = &stats["rank0_per_test"];
    let part = |name: &str| share[name].as_f64().unwrap();
    for name in ["merging_us", "decoding_us", "writing_us", "ncd_us"] {
        assert!(part(name) > 0.0, "{name}: {share}");
    }
    let sum = part("merging_us") + part("decoding_us") + part("writing_us") + part("ncd_us");
    assert!((part("total_us") - sum).abs() < 1e-6 * sum, "{share}");
    let tasks: u64 = ranks.iter().map(|r| r["tasks"].as_u64().unwrap()).sum();
    // A round run while the last was measured, then dropped by the stop rule, did its tasks.
    let dropped = stats["dropped_candidates"].as_u64().unwrap();
    assert_eq!(tasks, 100 + stats["candidates"].as_u64().unwrap() + dropped);
    for phase in ["initial_solve", "repair", "round_trip", "ncd"] {
        let q = &stats["latency"][phase];
        assert!(q["count"].as_u64().unwrap() > 0, "{phase}");
        assert!(q["p50_us"].as_f64().unwrap() <= q["p99_us"].as_f64().unwrap());
    }
    assert!(
        stats["throughput"]["candidates_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// QuickSampler refuses a Snap-only `flag`, by name, with exit status 2.
fn assert_quicksampler_refuses(formula: &Path, flag: &str) {
    let refused = snapsat(&[
        "sample",
        formula.to_str().unwrap(),
        "--algorithm",
        "quicksampler",
        flag,
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(flag));
}

/// `--sharded`: one rank gives the unsharded suite; three give a verified suite of their
/// own rounds, said in `--stats`; QuickSampler refuses the flag.
#[test]
fn sharded_ranks_write_a_verified_suite_of_their_own_rounds() {
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    let dir = tempfile::tempdir().unwrap();
    let (stats, out) = (dir.path().join("stats.json"), dir.path().join("tests.txt"));
    let run = sample_mid;
    assert_eq!(run(&["--sharded"]), run(&[]));
    run(&[
        "--sharded",
        "--ranks",
        "3",
        "--max-rounds",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
    ]);
    let check = snapsat(&["verify", mid.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", stderr(&check));
    let stats = read_stats(stats);
    assert_eq!(stats["sharded"], true);
    let written = std::fs::read_to_string(&out).unwrap().lines().count();
    assert_eq!(stats["distinct_tests"].as_u64().unwrap() as usize, written);
    let round = &stats["rounds"][1];
    assert_eq!(round["candidates"], 3 * 100 * 5, "three ranks' rounds");
    assert_quicksampler_refuses(&mid, "--sharded");
}

/// `--paper-loop` runs the paper's loop: every initial solution before the first round
/// (mid.cnf's are easy, so the default does the same, with its first ten as a list of
/// their own); QuickSampler refuses the flag.
#[test]
fn the_paper_loop_waits_for_every_initial_solution() {
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    for loop_flag in [&["--paper-loop"][..], &[]] {
        let mut args = vec!["--max-rounds", "1", "--stats", stats.to_str().unwrap()];
        args.extend_from_slice(loop_flag);
        sample_mid(&args);
        let stats = read_stats(&stats);
        assert_eq!(stats["started_early"], false, "{loop_flag:?}");
        // Distinct ones of the 100 asked.
        assert!(stats["rounds"][0]["samples"].as_u64().unwrap() > 90);
    }
    assert_quicksampler_refuses(&mid, "--paper-loop");
}

#[test]
fn interrupted_multi_rank_run_resumes_into_the_same_file() {
    let Some(f) = case_study("s820a_7_4.cnf") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tests.txt");
    let mut args = endless_sample(&f, &out);
    args.extend(["--ranks", "2"]);
    let done = interrupt_after(&args, &out, 300);
    assert_eq!(done.status.code(), Some(130), "{}", stderr(&done));
    let kept = std::fs::read_to_string(&out).unwrap().lines().count();

    let stats = dir.path().join("stats.json");
    let resumed = snapsat(&[
        "sample",
        f.to_str().unwrap(),
        "--resume",
        out.to_str().unwrap(),
        "--ranks",
        "2",
        "-j",
        "1",
        "--max-rounds",
        "1",
        "--stats",
        stats.to_str().unwrap(),
    ]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let stats = read_stats(stats);
    assert_eq!(stats["resumed"].as_u64().unwrap() as usize, kept);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > kept, "no test added to {kept}");
    assert_eq!(
        stats["distinct_tests"].as_u64().unwrap() as usize,
        lines.len()
    );
    let distinct: std::collections::HashSet<_> = lines.iter().collect();
    assert_eq!(
        distinct.len(),
        lines.len(),
        "the resumed run repeated tests"
    );
    let check = snapsat(&["verify", f.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

#[test]
fn resume_rejects_a_suite_of_another_formula() {
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("f.cnf");
    std::fs::write(&cnf, "p cnf 2 1\n1 2 0\n").unwrap();
    let suite = dir.path().join("suite.txt");
    std::fs::write(&suite, "1 2 0\n-1 -2 0\n").unwrap();
    let o = snapsat(&[
        "sample",
        cnf.to_str().unwrap(),
        "--resume",
        suite.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("test 2 falsifies clause 1"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&suite).unwrap(), "1 2 0\n-1 -2 0\n");
}

#[test]
fn a_build_without_mpi_refuses_to_run_under_mpirun() {
    if cfg!(feature = "mpi") {
        return;
    }
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    let o = Command::new(env!("CARGO_BIN_EXE_snapsat"))
        .args(["sample", mid.to_str().unwrap(), "-q"])
        .env("OMPI_COMM_WORLD_SIZE", "4")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(o.stdout.is_empty(), "a copy ran on its own");
    assert!(stderr(&o).contains("--features mpi"), "{}", stderr(&o));
}

fn tcg_example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/tcg")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn tcg_reports_the_papers_lcm_test_cases_as_json() {
    let o = snapsat(&[
        "tcg",
        &tcg_example("lcm.tcg"),
        "-m",
        "lcm",
        "-k",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["traces"].as_array().unwrap().len(), 6);
    let tests = r["guided"]["test_cases"].as_array().unwrap();
    assert_eq!(tests.len(), 3);
    let caught = tests
        .iter()
        .filter(|t| t["result"] == -1 && t["inputs"] == serde_json::json!([["a", 0], ["b", 0]]))
        .count();
    assert_eq!(caught, 1, "a = b = 0 must divide by zero and return -1");
    let cov = &r["guided"]["coverage"];
    assert_eq!(cov["rules_covered"], cov["rules"]);
    assert!(r["non_guided"]["test_cases"].as_array().unwrap().len() > 3);
}

#[test]
fn tcg_text_report_shows_traces_tests_and_counts() {
    let o = snapsat(&["tcg", &tcg_example("mid.tcg"), "--method", "mid"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("sliced traces (6)"), "{text}");
    assert!(text.contains("guided TCG: 6 test cases"), "{text}");
    assert!(text.contains("guided vs non-guided: 6 vs 6"), "{text}");
    assert!(text.contains("branches (rules) 11/11 (100%)"), "{text}");
}

#[test]
fn tcg_emitted_cnf_feeds_the_sampler() {
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("mid.cnf");
    let tests = dir.path().join("tests.txt");
    let o = snapsat(&[
        "tcg",
        &tcg_example("mid.tcg"),
        "-m",
        "mid",
        "--width",
        "8",
        "--emit-cnf",
        cnf.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&cnf).unwrap();
    assert!(text.contains("c ind "), "no independent support");
    let s = snapsat(&[
        "sample",
        cnf.to_str().unwrap(),
        "-o",
        tests.to_str().unwrap(),
        "-q",
    ]);
    assert!(s.status.success(), "{}", stderr(&s));
    let v = snapsat(&["verify", cnf.to_str().unwrap(), tests.to_str().unwrap()]);
    assert!(v.status.success());
    assert!(std::fs::read_to_string(&tests).unwrap().lines().count() > 6);
}

#[test]
fn tcg_errors_name_the_place_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tcg");
    std::fs::write(&bad, "int f(int a) {\n  return a +;\n}\n").unwrap();
    let o = snapsat(&["tcg", bad.to_str().unwrap(), "-m", "f"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line 2, column 13"), "{}", stderr(&o));
    let o = snapsat(&["tcg", &tcg_example("lcm.tcg"), "-m", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("lcm, gcd, abs"), "{}", stderr(&o));
    std::fs::write(&bad, "int f(int a) { return g(a); }\n").unwrap();
    let o = snapsat(&["tcg", bad.to_str().unwrap(), "-m", "f"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown method `g`"), "{}", stderr(&o));
}

#[cfg(not(feature = "cadical"))]
#[test]
fn a_build_without_cadical_says_how_to_get_it() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mid.cnf");
    let o = snapsat(&["sample", example, "--solver", "cadical"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--features cadical"), "{}", stderr(&o));
}

/// A session backend's suite of `cnf`: verified, and the same for the same seed and lanes on
/// 1 and 2 threads.
fn sessions_give_a_verified_reproducible_suite(solver: &str, cnf: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let run = |threads: &str, name: &str| {
        let out = dir.path().join(name);
        let o = snapsat(&[
            "sample",
            cnf.to_str().unwrap(),
            "--solver",
            solver,
            "--lanes",
            "2",
            "-j",
            threads,
            "-x",
            "0",
            "--max-tests",
            "300",
            "-q",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v = snapsat(&["verify", cnf.to_str().unwrap(), out.to_str().unwrap()]);
        assert!(String::from_utf8_lossy(&v.stdout).starts_with("300 tests: 300 valid"));
        std::fs::read_to_string(out).unwrap()
    };
    assert_eq!(run("1", "one.txt"), run("2", "two.txt"));
}

#[test]
fn native_sessions_give_a_verified_reproducible_suite() {
    let example = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mid.cnf"));
    sessions_give_a_verified_reproducible_suite("native", example);
    if let Some(cnf) = case_study("LoginService2.sk_23_36.cnf") {
        sessions_give_a_verified_reproducible_suite("native", &cnf);
    }
}

#[cfg(feature = "cadical")]
#[test]
fn cadical_sessions_give_a_verified_reproducible_suite() {
    if let Some(cnf) = case_study("LoginService2.sk_23_36.cnf") {
        sessions_give_a_verified_reproducible_suite("cadical", &cnf);
    }
}

/// Fresh solutions from CaDiCaL sessions differ on xpose.sk_6_134. Written when phases drawn
/// 64 variables to a draw (6a34496) made them come out alike (1 distinct test of 100 on this
/// seed); since fresh solutions are steered on the support (2026-12-04), that build finds
/// distinct ones too (21, 6 and 75 in 60 s on seeds 1-3, against 10, 3 and 52 with a draw a
/// variable), so the test holds what its name says and no longer that build's failure.
/// CaDiCaL's first model of xpose takes 35-80 s on this machine kind (pycmsgen finds none in
/// 200 s), the next ones a second or less: the limit leaves a loaded machine room, and the
/// run asks for no more tests than it needs.
#[cfg(feature = "cadical")]
#[test]
fn fresh_solutions_of_xpose_differ() {
    let Some(cnf) = common::benchmark("large", "xpose.sk_6_134.cnf") else {
        return;
    };
    let (tests, stats) = sample_and_verify_within(
        &cnf,
        "900",
        &[
            "--solver",
            "cadical",
            "-j",
            "1",
            "-s",
            "1",
            "--max-tests",
            "5",
            "-q",
        ],
    );
    assert_eq!(tests, 5, "stopped for {}", stats["stop"]);
}

/// The `c ind` variables of a DIMACS file, read plainly.
fn support_of(formula: &str) -> Vec<usize> {
    std::fs::read_to_string(formula)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("c ind"))
        .flat_map(|l| {
            l.split_whitespace()
                .skip(2)
                .map(|t| t.parse::<usize>().unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|&v| v > 0)
        .collect()
}

/// The tests of a file of DIMACS literal lines.
fn literal_lines(path: &Path) -> Vec<Vec<i64>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect()
}

/// Every value pair of `support` the tests show, computed independently of the library.
fn pairs_of(
    tests: &[Vec<i64>],
    support: &[usize],
) -> std::collections::HashSet<(usize, usize, bool, bool)> {
    let mut seen = std::collections::HashSet::new();
    for t in tests {
        for (a, &i) in support.iter().enumerate() {
            for &j in &support[a + 1..] {
                seen.insert((i, j, t[i - 1] > 0, t[j - 1] > 0));
            }
        }
    }
    seen
}

/// `minimize` keeps a subset of the pool with all of its pairwise coverage of `c ind`,
/// checked here independently of the library.
#[test]
fn minimize_keeps_the_pools_pairs_with_a_subset() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mid.cnf");
    let dir = tempfile::tempdir().unwrap();
    let (pool, small) = (dir.path().join("pool.txt"), dir.path().join("small.txt"));
    let p = |x: &Path| x.to_str().unwrap().to_string();
    assert!(snapsat(&["sample", example, "-q", "-o", &p(&pool)])
        .status
        .success());
    let o = snapsat(&["minimize", example, &p(&pool), "-o", &p(&small)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("(100.0%)"), "{}", stderr(&o));
    let support = support_of(example);
    let (pool_tests, kept) = (literal_lines(&pool), literal_lines(&small));
    assert!(
        kept.len() * 10 <= pool_tests.len(),
        "{} of {}",
        kept.len(),
        pool_tests.len()
    );
    assert!(kept.iter().all(|t| pool_tests.contains(t)));
    assert_eq!(pairs_of(&kept, &support), pairs_of(&pool_tests, &support));
    // The pool is an input: writing onto it is refused; a target must be a share.
    let onto = snapsat(&["minimize", example, &p(&pool), "-o", &p(&pool)]);
    assert_eq!(onto.status.code(), Some(2));
    let zero = snapsat(&["minimize", example, &p(&pool), "--target", "0"]);
    assert_eq!(zero.status.code(), Some(2));
}

/// `minimize --shrink` writes fewer tests than greedy choice keeps, each valid, with every
/// pair of the pool (mid.cnf's 12 free support variables need 7 tests; greedy keeps more);
/// a pool with an invalid test is refused.
#[test]
fn minimize_shrink_builds_fewer_valid_tests_with_the_pools_pairs() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mid.cnf");
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let p = |name: &str| path(name).to_str().unwrap().to_string();
    assert!(snapsat(&["sample", example, "-q", "-o", &p("pool.txt")])
        .status
        .success());
    let greedy = snapsat(&["minimize", example, &p("pool.txt"), "-o", &p("greedy.txt")]);
    assert!(greedy.status.success(), "{}", stderr(&greedy));
    let o = snapsat(&[
        "minimize",
        example,
        &p("pool.txt"),
        "--shrink",
        "-s",
        "2",
        "-o",
        &p("shrunk.txt"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let support = support_of(example);
    let (pool, shrunk) = (
        literal_lines(&path("pool.txt")),
        literal_lines(&path("shrunk.txt")),
    );
    assert!(shrunk.len() < literal_lines(&path("greedy.txt")).len());
    assert!(pairs_of(&shrunk, &support).is_superset(&pairs_of(&pool, &support)));
    assert!(snapsat(&["verify", example, &p("shrunk.txt")])
        .status
        .success());
    // A pool test with its first literal negated no longer satisfies mid.cnf's first clause
    // when that literal is the clause's only true one; look for such a test.
    let text = std::fs::read_to_string(example).unwrap();
    let first: Vec<i64> = text
        .lines()
        .find(|l| !l.starts_with('c') && !l.starts_with('p') && !l.trim().is_empty())
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .filter(|&l| l != 0)
        .collect();
    let mut bad = pool[0].clone();
    for &lit in &first {
        let v = lit.unsigned_abs() as usize - 1;
        bad[v] = -lit;
    }
    std::fs::write(
        path("bad.txt"),
        format!(
            "{}\n",
            bad.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")
        ),
    )
    .unwrap();
    let refused = snapsat(&["minimize", example, &p("bad.txt"), "--shrink"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("does not satisfy"),
        "{}",
        stderr(&refused)
    );
}

/// `sample --small` writes the full suite as always and the minimized one beside it.
#[test]
fn sample_small_writes_a_minimized_suite_beside_the_full_one() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mid.cnf");
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let o = snapsat(&[
        "sample",
        example,
        "-o",
        &p("suite.txt"),
        "--small",
        &p("small.txt"),
        "--strength",
        "3",
        "--stats",
        &p("stats.json"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let suite = std::fs::read_to_string(p("suite.txt")).unwrap();
    let small = std::fs::read_to_string(p("small.txt")).unwrap();
    let stats = read_stats(p("stats.json"));
    assert_eq!(stats["small"]["tests"], small.lines().count());
    assert_eq!(stats["small"]["strength"], 3);
    assert_eq!(stats["small"]["pool_tests"], suite.lines().count());
    assert_eq!(
        stats["small"]["covered_tuples"],
        stats["small"]["pool_tuples"]
    );
    assert!(small.lines().count() < suite.lines().count());
    assert!(small.lines().all(|l| suite.lines().any(|s| s == l)));
    let v = snapsat(&["verify", example, &p("small.txt")]);
    assert!(v.status.success());
}

/// `sample --small` at t = 2 (the default) shrinks greedy choice's tests: fewer, valid, with
/// every pair of the suite, the count greedy kept in the statistics.
#[test]
fn sample_small_at_t2_is_smaller_than_greedy_choice_with_the_suites_pairs() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mid.cnf");
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let p = |name: &str| path(name).to_str().unwrap().to_string();
    let o = snapsat(&[
        "sample",
        example,
        "-q",
        "-o",
        &p("suite.txt"),
        "--small",
        &p("small.txt"),
        "--stats",
        &p("stats.json"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats = read_stats(p("stats.json"));
    let (suite, small) = (
        literal_lines(&path("suite.txt")),
        literal_lines(&path("small.txt")),
    );
    assert_eq!(stats["small"]["tests"], small.len());
    assert!(
        stats["small"]["chosen_tests"].as_u64().unwrap() > small.len() as u64,
        "{}",
        stats["small"]
    );
    let support = support_of(example);
    assert!(pairs_of(&small, &support).is_superset(&pairs_of(&suite, &support)));
    assert_eq!(
        stats["small"]["covered_tuples"],
        stats["small"]["pool_tuples"]
    );
    assert!(snapsat(&["verify", example, &p("small.txt")])
        .status
        .success());
}

/// A batch job's log (standard error no terminal) gets a progress line at a round's end once
/// `--progress` seconds have passed; none with `--progress 0` or `-q`. Before, progress was
/// shown on a terminal only, and a cluster job's log said nothing until the run ended.
#[test]
fn progress_reaches_a_log_that_is_no_terminal() {
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("suite.txt");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "sample",
            mid.to_str().unwrap(),
            "-x",
            "0",
            "--max-rounds",
            "3",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = snapsat(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
            .lines()
            .filter(|l| l.starts_with("snapsat: round "))
            .count()
    };
    // A nanosecond: every round's end is past it, rounds 0 to 3.
    assert_eq!(run(&["--progress", "1e-9"]), 4);
    assert_eq!(run(&["--progress", "0"]), 0);
    assert_eq!(run(&["--progress", "1e-9", "-q"]), 0);
    // The default, 10 s, is longer than the whole run.
    assert_eq!(run(&[]), 0);
}

/// A run says one line on standard error: tests, time, rounds and why they ended, NCD and
/// where the tests are; `--verbose` adds the internals, naming the round the stop rule
/// dropped so that its repairs in the latencies do not contradict the counts.
#[test]
fn the_summary_is_one_line_and_verbose_adds_the_internals() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mid.txt");
    let mid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf");
    let args = ["sample", mid.to_str().unwrap(), "-o", out.to_str().unwrap()];
    let o = snapsat(&args);
    assert!(o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    for part in ["tests in", "round", "NCD", "`c ind`", out.to_str().unwrap()] {
        assert!(err.contains(part), "`{part}` missing from: {err}");
    }
    assert!(!err.contains("1 rounds"), "{err}");
    let mut verbose = args.to_vec();
    verbose.push("--verbose");
    let o = snapsat(&verbose);
    let err = stderr(&o);
    assert!(err.lines().count() > 3, "{err}");
    assert!(err.contains("work/coordinator"), "{err}");
    if err.contains("repair 1000") {
        assert!(err.contains("dropped by the stop rule"), "{err}");
    }
}

/// `snapsat sample` exits 20 exactly when the formula is unsatisfiable, on random formulas
/// near the threshold (about half unsatisfiable) that the reference decides by enumeration or
/// splr; every suite of the others is valid.
#[test]
fn exit_20_exactly_when_the_reference_finds_no_model() {
    use snapsat::solver::differential::{dimacs_text, random_formula, satisfiable};
    let dir = tempfile::tempdir().unwrap();
    let (formula, suite) = (dir.path().join("f.cnf"), dir.path().join("suite.txt"));
    let (mut sat, mut unsat) = (0, 0);
    for seed in 0..60 {
        let cnf = random_formula(seed);
        std::fs::write(&formula, dimacs_text(&cnf)).unwrap();
        let _ = std::fs::remove_file(&suite);
        let (f, s) = (formula.to_str().unwrap(), suite.to_str().unwrap());
        let o = snapsat(&["sample", f, "-q", "--max-tests", "5", "-t", "60", "-o", s]);
        if satisfiable(&cnf, &[]) {
            assert_eq!(o.status.code(), Some(0), "seed {seed}: {}", stderr(&o));
            assert!(snapsat(&["verify", f, s]).status.success(), "seed {seed}");
            sat += 1;
        } else {
            assert_eq!(o.status.code(), Some(20), "seed {seed}: {}", stderr(&o));
            unsat += 1;
        }
    }
    assert!(sat > 5 && unsat > 5, "{sat} satisfiable, {unsat} not");
}
