//! Faults and bad input, tried as a new user would: nothing lost, nothing clobbered, no
//! crash, and the exit status the README promises (issue 10, one test per finding).

mod common;

use common::{case_study, snapsat, stderr};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn example() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mid.cnf")
}

fn tcg_example(name: &str) -> String {
    format!("{}/examples/tcg/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn assert_status(o: &Output, code: i32, mentions: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    assert!(err.contains(mentions), "expected `{mentions}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Runs snapsat with standard output (or error) on /dev/full.
fn to_full_device(args: &[&str], stderr_too: bool) -> Output {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_snapsat"));
    command.args(args).stdout(full());
    if stderr_too {
        command.stderr(full());
    }
    command.output().unwrap()
}

fn verify_ok(formula: &str, tests: &Path) -> String {
    let o = snapsat(&["verify", formula, path(tests)]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

// 1. A torn last line (a kill inside a write) is dropped on resume, not appended onto.
#[test]
fn resume_drops_a_torn_last_line_and_the_suite_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.txt");
    let first = snapsat(&[
        "sample",
        example(),
        "-o",
        path(&suite),
        "--max-tests",
        "5",
        "-q",
    ]);
    assert!(first.status.success());
    let mut text = std::fs::read_to_string(&suite).unwrap();
    let torn: String = text.lines().next().unwrap().chars().take(40).collect();
    text.push_str(&torn);
    std::fs::write(&suite, &text).unwrap();
    let resumed = snapsat(&[
        "sample",
        example(),
        "--resume",
        path(&suite),
        "--max-tests",
        "12",
        "-s",
        "1",
    ]);
    assert_status(&resumed, 0, "line 6 has no end");
    let report = verify_ok(example(), &suite);
    assert!(
        report.starts_with("12 tests: 12 valid, 0 invalid, 12 distinct"),
        "{report}"
    );
}

#[test]
fn resume_refuses_a_malformed_line_that_is_not_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.txt");
    std::fs::write(&suite, "1 2 0\n").unwrap();
    let o = snapsat(&["sample", example(), "--resume", path(&suite), "-q"]);
    assert_status(&o, 2, "line 1");
    assert_eq!(std::fs::read_to_string(&suite).unwrap(), "1 2 0\n");
}

// 2. No output may be an input.
#[test]
fn an_output_onto_an_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.cnf");
    std::fs::copy(example(), &f).unwrap();
    let link = dir.path().join("link.cnf");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    let gz = dir.path().join("f.cnf.gz");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("gzip -c {} > {}", path(&f), path(&gz)))
        .status()
        .unwrap();
    assert!(status.success());
    let original = std::fs::read(&f).unwrap();
    let gz_original = std::fs::read(&gz).unwrap();
    for args in [
        vec!["sample", path(&f), "-o", path(&f)],
        vec!["sample", path(&link), "-o", path(&f)],
        vec!["sample", path(&f), "-o", path(&link)],
        vec!["sample", path(&gz), "-o", path(&gz)],
        vec!["sample", path(&f), "--stats", path(&f)],
        vec!["sample", path(&f), "--resume", path(&f)],
    ] {
        let o = snapsat(&args);
        assert_status(&o, 2, "would be overwritten");
    }
    assert_eq!(std::fs::read(&f).unwrap(), original);
    assert_eq!(std::fs::read(&gz).unwrap(), gz_original);
    let o = snapsat(&[
        "sample",
        path(&f),
        "-o",
        path(&dir.path().join("s")),
        "--stats",
        path(&dir.path().join("s")),
    ]);
    assert_status(&o, 2, "same file");

    let program = dir.path().join("lcm.tcg");
    std::fs::copy(tcg_example("lcm.tcg"), &program).unwrap();
    let source = std::fs::read(&program).unwrap();
    let o = snapsat(&[
        "tcg",
        path(&program),
        "-m",
        "lcm",
        "--emit-cnf",
        path(&program),
    ]);
    assert_status(&o, 2, "would be overwritten");
    assert_eq!(std::fs::read(&program).unwrap(), source);
}

// 3. An existing suite survives a run that writes no test. Its statistics are that run's (the
// answer, unsat), not left to describe another.
#[test]
fn an_existing_output_is_kept_when_the_run_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let unsat = dir.path().join("unsat.cnf");
    std::fs::write(&unsat, "p cnf 1 2\n1 0\n-1 0\n").unwrap();
    let out = dir.path().join("suite.txt");
    let stats = dir.path().join("stats.json");
    std::fs::write(&out, "precious\n").unwrap();
    std::fs::write(&stats, "{}\n").unwrap();
    let o = snapsat(&[
        "sample",
        path(&unsat),
        "-o",
        path(&out),
        "--stats",
        path(&stats),
    ]);
    assert_status(&o, 20, "unsatisfiable");
    let malformed = dir.path().join("bad.cnf");
    std::fs::write(&malformed, "p cnf 2 1\n1 x 0\n").unwrap();
    let o = snapsat(&["sample", path(&malformed), "-o", path(&out)]);
    assert_status(&o, 2, "line 2");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious\n");
    let stats = std::fs::read_to_string(&stats).unwrap();
    assert!(stats.contains("\"answer\": \"unsat\""), "{stats}");
}

// 4. Initial solutions reach the file one by one, not all at once when the last is found.
#[test]
fn initial_solutions_are_written_as_found() {
    let Some(cnf) = case_study("70.sk_3_40.cnf") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("suite.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_snapsat"))
        .args([
            "sample",
            path(&cnf),
            "-o",
            path(&out),
            "-j",
            "1",
            "--max-rounds",
            "0",
            "-n",
            "2000",
            "-q",
        ])
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let lines = || std::fs::read_to_string(&out).map_or(0, |t| t.lines().count());
    while lines() == 0 {
        assert!(start.elapsed().as_secs() < 60, "no test within a minute");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // 2,000 solutions take a tenth of a millisecond each here: written as found, the file
    // grows in many steps until the run ends; written at the end, in one. (100 of them were
    // once all written between two looks a millisecond apart.)
    let mut counts = std::collections::BTreeSet::new();
    let watch = std::time::Instant::now();
    while watch.elapsed().as_secs() < 10 && child.try_wait().unwrap().is_none() {
        counts.insert(lines());
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let _ = child.kill();
    child.wait().unwrap();
    assert!(counts.len() >= 3, "the file grew in steps {counts:?}");
    verify_ok(path(&cnf), &out);
}

// 5. A test gives every variable a value.
#[test]
fn partial_tests_are_not_valid_tests() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.cnf");
    std::fs::write(&f, "p cnf 3 1\n-3 0\n").unwrap();
    let t = dir.path().join("t.txt");
    std::fs::write(&t, "1 2 0\n").unwrap();
    assert_status(
        &snapsat(&["verify", path(&f), path(&t)]),
        2,
        "must give every variable a value",
    );
    let mixed = dir.path().join("mixed.txt");
    std::fs::write(&mixed, "0101\n011\n").unwrap();
    assert_status(&snapsat(&["ncd", path(&mixed)]), 2, "line 2");
}

// 6. Deep nesting is an error with its place, never a stack overflow.
#[test]
fn deeply_nested_programs_are_refused_with_a_position() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("deep.tcg");
    let sum = vec!["a"; 20_000].join(" + ");
    for body in [
        format!("return {}a{};", "(".repeat(5000), ")".repeat(5000)),
        format!("return {sum};"),
        format!("return {}a;", "-".repeat(100_000)),
        format!(
            "{}a = 1;{} return a;",
            "{".repeat(20_000),
            "}".repeat(20_000)
        ),
    ] {
        std::fs::write(&program, format!("int f(int a) {{ {body} }}")).unwrap();
        let o = snapsat(&["tcg", path(&program), "-m", "f"]);
        assert_status(&o, 2, "line 1, column");
    }
}

// 7, 10. Every numeric flag is checked; bad usage exits 2.
#[test]
fn flags_out_of_range_exit_2() {
    for flags in [
        vec!["-t", "1e30"],
        vec!["-t", "0"],
        vec!["-t", "nan"],
        vec!["-x", "-1"],
        vec!["-x", "inf"],
        vec!["-n", "1"],
        vec!["-n", "100000"],
        vec!["-k", "0"],
        vec!["-j", "0"],
        vec!["--ranks", "0"],
        vec!["--max-tests", "0"],
        vec!["-a", "quicksampler", "--resume", "x.txt"],
        vec!["--resume", "/nonexistent/suite.txt"],
    ] {
        let mut args = vec!["sample", example()];
        args.extend(flags.iter().copied());
        let o = snapsat(&args);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

// 8. Sizes beyond what memory can hold are errors naming the limit.
#[test]
fn huge_sizes_are_refused_with_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.txt");
    std::fs::write(&t, "99999999999 0\n").unwrap();
    assert_status(&snapsat(&["ncd", path(&t)]), 2, "beyond the limit of");
    let f = dir.path().join("huge.cnf");
    std::fs::write(&f, "p cnf 268435456 1\n1 0\n").unwrap();
    assert_status(&snapsat(&["sample", path(&f)]), 2, "supported");
}

// 9. A full or closed stdout/stderr is an error or ignored, never a panic.
#[test]
fn a_full_output_device_is_reported_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.txt");
    assert!(snapsat(&["sample", example(), "-o", path(&suite), "-q"])
        .status
        .success());
    for args in [
        vec!["verify", example(), path(&suite)],
        vec!["ncd", path(&suite)],
        vec!["measure", example(), path(&suite)],
        vec!["sample", example(), "-q"],
    ] {
        let o = to_full_device(&args, false);
        assert_status(&o, 1, "No space left on device");
    }
    let lcm = tcg_example("lcm.tcg");
    assert_status(
        &to_full_device(&["tcg", &lcm, "-m", "lcm"], false),
        1,
        "No space",
    );
    let o = to_full_device(&["sample", example(), "-o", path(&suite)], true);
    assert_eq!(o.status.code(), Some(0));
    // A reader that goes away early: an error, not a panic.
    let mut child = Command::new(env!("CARGO_BIN_EXE_snapsat"))
        .args(["sample", example()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_status(&o, 1, "cannot write the tests");
}

// 10. Missing, folder and non-UTF-8 inputs exit 2; 1 stays "invalid tests found".
#[test]
fn unreadable_inputs_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("bin.tcg");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let folder = dir.path().to_str().unwrap();
    for args in [
        vec!["verify", example(), "/nonexistent/tests.txt"],
        vec!["verify", "/nonexistent/f.cnf", "/nonexistent/tests.txt"],
        vec!["tcg", "/nonexistent/p.tcg", "-m", "f"],
        vec!["tcg", folder, "-m", "f"],
        vec!["tcg", path(&binary), "-m", "f"],
        vec!["ncd", "/nonexistent/tests.txt"],
    ] {
        let o = snapsat(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    let help = String::from_utf8(snapsat(&["sample", "--help"]).stdout).unwrap();
    for code in [
        "0 success",
        "1 `verify`",
        "2 bad usage",
        "20 the formula",
        "30 no solution",
        "130 interrupted",
    ] {
        assert!(help.contains(code), "--help lacks `{code}`");
    }
}

// 11. Messages said once and meaningfully; formats kept; other tools' prefixes read.
#[test]
fn messages_are_said_once_and_formats_kept() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.cnf");
    std::fs::write(&bad, "p cnf 2 1\n1 x 0\n").unwrap();
    let o = snapsat(&["sample", path(&bad)]);
    assert_eq!(stderr(&o).matches("line 2").count(), 1, "{}", stderr(&o));

    let f = dir.path().join("f.cnf");
    std::fs::write(&f, "p cnf 2 1\n1 0\n").unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    assert_status(&snapsat(&["verify", path(&f), path(&empty)]), 2, "no tests");
    let v = dir.path().join("v.txt");
    std::fs::write(&v, "v 1 -2 0\n").unwrap();
    assert!(snapsat(&["verify", path(&f), path(&v)]).status.success());

    let program = dir.path().join("empty.tcg");
    std::fs::write(&program, "").unwrap();
    assert_status(
        &snapsat(&["tcg", path(&program), "-m", "f"]),
        2,
        "has no methods",
    );

    let suite = dir.path().join("bits.txt");
    let o = snapsat(&[
        "sample",
        example(),
        "--format",
        "bits",
        "-o",
        path(&suite),
        "--max-tests",
        "3",
        "-q",
    ]);
    assert!(o.status.success());
    let o = snapsat(&[
        "sample",
        example(),
        "--resume",
        path(&suite),
        "--max-tests",
        "6",
        "-s",
        "1",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&suite).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert!(
        text.lines()
            .all(|l| l.bytes().all(|b| b == b'0' || b == b'1')),
        "{text}"
    );
}

// 12. tcg stops at its time limit with what it found.
#[test]
fn tcg_honours_its_time_limit() {
    let start = std::time::Instant::now();
    let o = snapsat(&[
        "tcg",
        &tcg_example("lcm.tcg"),
        "-m",
        "gcd",
        "-k",
        "12",
        "-t",
        "2",
        "--json",
    ]);
    assert_status(&o, 0, "cut the run short");
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["time_limit_reached"], true);
}

// Issue 11.2: the coordinator's phases (NCD above all) honour the time limit on a wide
// formula. Before, `p cnf 50000 0` with `-t 5` ran 34 s: NCD of the first 100 tests alone.
#[test]
fn a_wide_formula_stops_at_its_time_limit_with_its_tests_kept() {
    let dir = tempfile::tempdir().unwrap();
    let formula = dir.path().join("wide.cnf");
    std::fs::write(&formula, "p cnf 50000 0\n").unwrap();
    let (suite, stats) = (dir.path().join("suite.txt"), dir.path().join("stats.json"));
    let start = std::time::Instant::now();
    let o = snapsat(&[
        "sample",
        path(&formula),
        "-t",
        "2",
        // No NCD stop: on a slow machine round 1 ended with NCD at its ceiling just as the
        // limit came (2.00 s), and the run stopped as converged instead.
        "-x",
        "0",
        "-j",
        "1",
        "-o",
        path(&suite),
        "--stats",
        path(&stats),
    ]);
    assert_status(&o, 0, "time limit reached");
    assert!(start.elapsed().as_secs() < 15, "took {:?}", start.elapsed());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(report["stop"], "time-limit");
    let tests = report["distinct_tests"].as_u64().unwrap();
    assert!(tests >= 1);
    let verdict = verify_ok(path(&formula), &suite);
    assert!(
        verdict.starts_with(&format!("{tests} tests: {tests} valid, 0 invalid")),
        "{verdict}"
    );
}

// 14. Statistics written through a symbolic link reach the file it names, and the link stays;
// written to a pipe or a device they go into it, and it stays what it was. (The statistics
// were renamed into place over whatever the path named: as root, `--stats /dev/null` left a
// regular file where the device had been.)
#[test]
fn statistics_through_a_link_or_into_a_pipe_leave_both_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    let target = kept.join("stats.json");
    let link = dir.path().join("stats-link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let pipe = dir.path().join("stats.pipe");
    let made = Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success(), "mkfifo");
    // The pipe's reader: a run that replaced the pipe would leave it waiting, so the test
    // waits for what it read a bounded time.
    let (read_tx, read_rx) = std::sync::mpsc::channel();
    let reading = pipe.clone();
    std::thread::spawn(move || {
        let _ = read_tx.send(std::fs::read(&reading));
    });
    for (stats, suite) in [(&link, "a.txt"), (&pipe, "b.txt")] {
        let o = snapsat(&[
            "sample",
            example(),
            "--max-tests",
            "5",
            "-o",
            path(&dir.path().join(suite)),
            "--stats",
            path(stats),
        ]);
        assert_status(&o, 0, "");
    }
    let kind = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();
    assert!(kind(&link).is_symlink(), "the link was replaced");
    assert!(kind(&pipe).is_fifo(), "the pipe was replaced");
    let linked: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(linked["distinct_tests"], 5);
    let piped = read_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("nothing was written into the pipe")
        .unwrap();
    let piped: serde_json::Value = serde_json::from_slice(&piped).unwrap();
    assert_eq!(piped["distinct_tests"], 5);
}

// 15. An output no file can be written to (a folder, or a path in a missing folder) is
// refused before any work, and nothing is written. A `--stats` path in a missing folder
// failed (exit 1) only once the run had ended.
#[test]
fn an_output_that_cannot_be_a_file_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.txt");
    let missing = dir.path().join("no-such-folder").join("stats.json");
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    for (args, mentions) in [
        (vec!["--stats", path(&missing)], "there is no folder"),
        (vec!["--small", path(&missing)], "there is no folder"),
        (vec!["--stats", path(&folder)], "is a folder"),
    ] {
        let mut all = vec!["sample", example(), "-o", path(&suite)];
        all.extend(args);
        let o = snapsat(&all);
        assert_status(&o, 2, mentions);
        assert!(!suite.exists(), "the run went ahead: {}", stderr(&o));
    }
    let o = snapsat(&["sample", example(), "-o", path(&folder)]);
    assert_status(&o, 2, "is a folder");
    let o = snapsat(&["minimize", example(), example(), "-o", path(&missing)]);
    assert_status(&o, 2, "there is no folder");
}

/// Runs snapsat with `stdin` as its standard input.
fn snapsat_reading(args: &[&str], stdin: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snapsat"))
        .args(args)
        .stdin(std::fs::File::open(stdin).unwrap())
        .output()
        .unwrap()
}

// Issue 58.1: a formula read from standard input was overwritten by `-o` (or `--stats`,
// `/dev/stdin`, `/proc/self/fd/0`) naming the same file.
#[test]
fn an_output_onto_the_standard_input_is_refused_and_the_formula_kept() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.cnf");
    std::fs::copy(example(), &f).unwrap();
    let original = std::fs::read(&f).unwrap();
    let tests = dir.path().join("tests.txt");
    let made = snapsat(&["sample", example(), "--max-tests", "5", "-o", path(&tests)]);
    assert!(made.status.success());
    for args in [
        vec!["sample", "-", "-t", "2", "-q", "-o", path(&f)],
        vec!["sample", "-", "-t", "2", "-q", "-o", "/dev/stdin"],
        vec!["sample", "-", "-t", "2", "-q", "-o", "/proc/self/fd/0"],
        vec!["sample", "-", "-t", "2", "-q", "--stats", path(&f)],
        vec!["minimize", "-", path(&tests), "-o", path(&f)],
    ] {
        let o = snapsat_reading(&args, &f);
        assert_status(&o, 2, "is the formula");
        assert_eq!(std::fs::read(&f).unwrap(), original, "{args:?}");
    }
    // A formula piped in, and an output of its own: the run goes ahead.
    let suite = dir.path().join("suite.txt");
    let o = snapsat_reading(&["sample", "-", "--max-tests", "3", "-o", path(&suite)], &f);
    assert_status(&o, 0, "");
    assert_eq!(std::fs::read_to_string(&suite).unwrap().lines().count(), 3);
}

// Issue 58.6: whole-file outputs to /dev/stdout or /proc/self/fd/1 failed on a pipe ("No such
// file or directory"): the link was followed by hand to `pipe:[…]`.
#[test]
fn whole_file_outputs_to_standard_output_reach_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.txt");
    for flag in ["--stats", "--small"] {
        for target in ["/dev/stdout", "/proc/self/fd/1"] {
            let o = snapsat(&[
                "sample",
                example(),
                "--max-tests",
                "20",
                "-q",
                "-o",
                path(&suite),
                flag,
                target,
            ]);
            assert_status(&o, 0, "");
            assert!(!o.stdout.is_empty(), "{flag} {target}: nothing written");
        }
    }
    let o = snapsat(&[
        "tcg",
        &tcg_example("lcm.tcg"),
        "-m",
        "lcm",
        "--emit-cnf",
        "/dev/stdout",
    ]);
    assert_status(&o, 0, "");
    assert!(String::from_utf8_lossy(&o.stdout).contains("p cnf"));
}

// Issue 58.7: more threads than the machine allows panicked in a rank's spawn (exit 101);
// under `ulimit -v` the process aborted (134). The plan is checked before any work.
#[test]
fn more_threads_than_allowed_are_refused_before_the_run() {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1000000 && exec {} sample {} --ranks 1024 -j 1024",
            env!("CARGO_BIN_EXE_snapsat"),
            example()
        ))
        .output()
        .unwrap();
    assert_status(&o, 2, "ulimit -v");
}

// Issue 58.9: `-o` through a dangling link to a missing folder, or ending in `/`, was refused
// only after the run (exit 1).
#[test]
fn an_output_through_a_dangling_link_or_ending_in_a_slash_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("gone").join("suite.txt"), &link).unwrap();
    let o = snapsat(&["sample", example(), "-o", path(&link)]);
    assert_status(&o, 2, "there is no folder");
    let slashed = format!("{}/", path(&dir.path().join("suite")));
    let o = snapsat(&["sample", example(), "-o", &slashed]);
    assert_status(&o, 2, "ends in `/`");
}

// Issue 58.10: resuming a file without tests was accepted silently.
#[test]
fn resuming_a_file_without_tests_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("empty.txt", ""), ("comments.txt", "c nothing here\n")] {
        let suite = dir.path().join(name);
        std::fs::write(&suite, text).unwrap();
        let o = snapsat(&["sample", example(), "--resume", path(&suite)]);
        assert_status(&o, 2, "holds no tests");
        assert_eq!(std::fs::read_to_string(&suite).unwrap(), text);
    }
}

// Issue 58.11: with no variables, `--format bits` wrote an empty line that `verify` could not
// read back, and `--resume` appended a DIMACS `0` to it.
#[test]
fn a_formula_without_variables_is_not_written_as_bits() {
    let dir = tempfile::tempdir().unwrap();
    let formula = dir.path().join("zero.cnf");
    std::fs::write(&formula, "p cnf 0 0\n").unwrap();
    let suite = dir.path().join("suite.txt");
    let o = snapsat(&[
        "sample",
        path(&formula),
        "--format",
        "bits",
        "-o",
        path(&suite),
    ]);
    assert_status(&o, 2, "--format dimacs");
    assert!(!suite.exists());
    let o = snapsat(&["sample", path(&formula), "-o", path(&suite)]);
    assert_status(&o, 0, "");
    let o = snapsat(&["sample", path(&formula), "--resume", path(&suite)]);
    assert_status(&o, 0, "");
    assert_eq!(std::fs::read_to_string(&suite).unwrap(), "0\n");
    verify_ok(path(&formula), &suite);
}

// Issue 58.12: `1 2 -0`, `+2` and `p cnf 03 002` were accepted in strict mode.
#[test]
fn numbers_not_written_as_dimacs_writes_them_are_refused_unless_relaxed() {
    let dir = tempfile::tempdir().unwrap();
    let formula = dir.path().join("f.cnf");
    for (text, line, column) in [
        ("p cnf 2 1\n1 2 -0\n", 2, 5),
        ("p cnf 2 1\n+2 0\n", 2, 1),
        ("p cnf 03 002\n1 0\n2 0\n", 1, 7),
    ] {
        std::fs::write(&formula, text).unwrap();
        let o = snapsat(&["sample", path(&formula), "--max-tests", "1", "-q"]);
        assert_status(&o, 2, &format!("line {line}, column {column}"));
        assert!(stderr(&o).contains("--relaxed"), "{}", stderr(&o));
        let o = snapsat(&[
            "sample",
            path(&formula),
            "--max-tests",
            "1",
            "-q",
            "--relaxed",
        ]);
        assert_status(&o, 0, "");
    }
}

// Issue 58.13: flags that mean nothing for the chosen algorithm were accepted silently.
#[test]
fn flags_of_the_other_algorithm_are_refused_by_name() {
    for (args, flag) in [
        (vec!["--max-candidates", "10"], "--max-candidates"),
        (
            vec!["-a", "quicksampler", "--max-rounds", "2"],
            "--max-rounds",
        ),
        (vec!["-a", "quicksampler", "--lanes", "2"], "--lanes"),
        (vec!["-a", "quicksampler", "--solver", "native"], "--solver"),
    ] {
        let mut all = vec!["sample", example(), "-q"];
        all.extend(args);
        let o = snapsat(&all);
        assert_status(&o, 2, flag);
    }
    // QuickSampler without --solver runs splr, its own.
    let o = snapsat(&[
        "sample",
        example(),
        "-a",
        "quicksampler",
        "--max-tests",
        "3",
        "-q",
    ]);
    assert_status(&o, 0, "");
}
