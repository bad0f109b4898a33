//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn snapsat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snapsat"))
        .args(args)
        .output()
        .expect("snapsat runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `--stats` file at `path`, parsed.
pub fn read_stats(path: impl AsRef<Path>) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A case study from `../shared/benchmarks/paper/`, or `None` (with a note) when absent.
pub fn case_study(name: &str) -> Option<PathBuf> {
    benchmark("paper", name)
}

/// A formula from `../shared/benchmarks/<folder>/`, or `None` (with a note) when absent.
pub fn benchmark(folder: &str, name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/benchmarks")
        .join(folder)
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!(
            "skipping: {} is missing (run scripts/fetch-benchmarks)",
            path.display()
        );
        None
    }
}
