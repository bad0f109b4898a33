//! A sharded run over several ranks writing to a file: each rank keeps the tests it finds in
//! a part of its own beside the file and places them there at the end; `--resume` takes in
//! the parts a killed run left.

mod common;

use common::{read_stats, snapsat, stderr};
use std::path::{Path, PathBuf};

fn mid() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mid.cnf")
}

/// What `snapsat sample` writes to standard output for the shipped example on one thread,
/// with `extra` flags; the run must succeed.
fn sample(extra: &[&str]) -> Vec<u8> {
    let mid = mid();
    let mut args = vec!["sample", mid.to_str().unwrap(), "-j", "1", "-q"];
    args.extend_from_slice(extra);
    let o = snapsat(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    o.stdout
}

fn parts_of(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".parts");
    PathBuf::from(name)
}

/// The file the ranks place their tests in is the suite the same run writes to standard
/// output (where the tests go through rank 0), byte for byte, in either format; the parts
/// are gone once placed, and every rank's time placing them is in `--stats`.
#[test]
fn ranks_place_their_tests_where_rank_0_would_have_written_them() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["dimacs", "bits"] {
        let out = dir.path().join(format!("suite-{format}.txt"));
        let run = [
            "-s",
            "3",
            "--sharded",
            "--ranks",
            "3",
            "--max-rounds",
            "3",
            "-x",
            "0",
        ];
        let stats = dir.path().join(format!("stats-{format}.json"));
        let mut to_file = run.to_vec();
        to_file.extend(["--format", format, "-o", out.to_str().unwrap()]);
        to_file.extend(["--stats", stats.to_str().unwrap()]);
        assert!(sample(&to_file).is_empty());
        let stats = read_stats(&stats);
        let placing: Vec<f64> = stats["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rank| rank["placing_seconds"].as_f64().unwrap())
            .collect();
        assert!(
            placing.len() == 3 && placing.iter().all(|&s| s > 0.0),
            "{placing:?}"
        );
        let mut to_stdout = run.to_vec();
        to_stdout.extend(["--format", format]);
        let streamed = sample(&to_stdout);
        let placed = std::fs::read(&out).unwrap();
        assert!(placed.len() > 1000, "{format}: {} bytes", placed.len());
        assert!(placed == streamed, "{format}: the placed suite differs");
        assert!(!parts_of(&out).exists(), "{format}: parts left");
        let check = snapsat(&["verify", mid().to_str().unwrap(), out.to_str().unwrap()]);
        assert!(check.status.success(), "{}", stderr(&check));
    }
}

/// The parts a killed run's ranks left (a torn last line included) are taken in by
/// `--resume`, each test once; a new run into the same file refuses to overwrite them.
#[test]
fn resume_takes_in_the_parts_a_killed_run_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("suite.txt");
    let out_text = out.to_str().unwrap();
    let first = ["--max-rounds", "0", "-n", "20"];
    sample(&[&first[..], &["-s", "3", "-o", out_text]].concat());
    let mut others = sample(&[&first[..], &["-s", "4"]].concat());
    let written = std::fs::read_to_string(&out).unwrap();
    let others_text = String::from_utf8(others.clone()).unwrap();
    let new: std::collections::HashSet<&str> = others_text
        .lines()
        .filter(|line| !written.lines().any(|w| w == *line))
        .collect();
    assert!(!new.is_empty());
    // One of the file's own tests is in the part too, and its last line was cut short.
    others.extend_from_slice(written.lines().next().unwrap().as_bytes());
    others.extend_from_slice(b"\n1 -2");
    let parts = parts_of(&out);
    std::fs::create_dir(&parts).unwrap();
    std::fs::write(parts.join("rank-2.txt"), &others).unwrap();

    let again = snapsat(&["sample", mid().to_str().unwrap(), "-q", "-o", out_text]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--resume"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), written, "untouched");

    let stats = dir.path().join("stats.json");
    let stats_text = stats.to_str().unwrap();
    sample(&[
        "--resume",
        out_text,
        "--max-rounds",
        "0",
        "-n",
        "20",
        "--stats",
        stats_text,
    ]);
    assert!(!parts.exists());
    let resumed = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = resumed.lines().collect();
    assert_eq!(lines.len(), 20 + new.len());
    assert!(resumed.starts_with(&written));
    assert!(new.iter().all(|line| lines.contains(line)));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["resumed"], lines.len());
    let check = snapsat(&["verify", mid().to_str().unwrap(), out_text]);
    assert!(check.status.success(), "{}", stderr(&check));
}
