//! `--resume`: an earlier suite read back, and where the run's tests go.

use super::progress::Output;
use super::SampleArgs;
use crate::failure::{say, Classify, Failure, Result};
use crate::output::LazyFile;
use crate::read_text;
use snapsat::assignment::Assignment;
use snapsat::assignment::FingerprintSet;
use snapsat::testfile::{read_suite, Parts, TestFormat, TestWriter};
use snapsat::verify::Checker;
use std::path::Path;

/// The tests of the suite being resumed, and where its file is to be cut first (a torn
/// last line), with the format its lines have.
#[derive(Default)]
pub struct Resumed {
    pub tests: Vec<Assignment>,
    pub format: Option<TestFormat>,
    pub cut_at: Option<u64>,
}

/// Reads an earlier suite back: every line a complete test of this formula (exit 2 naming
/// the line otherwise), an unterminated last line set apart.
pub fn resumed_tests(path: &Path, checker: &Checker, quiet: bool) -> Result<Resumed> {
    let shown = path.display();
    let suite = verified_suite(path, checker, "the suite to resume", "a suite")?;
    if suite.tests.is_empty() {
        return Err(Failure::bad_input(anyhow::anyhow!(
            "{shown} holds no tests: there is no suite to resume (run without --resume to start one)"
        )));
    }
    if let Some((_, line)) = suite.torn_tail {
        if !quiet {
            say!("snapsat: note: {shown}: line {line} has no end (a write cut short, as by a crash); it is no test and is dropped");
        }
    }
    let mut resumed = Resumed {
        tests: suite.tests,
        format: suite.format,
        cut_at: suite.torn_tail.map(|(offset, _)| offset),
    };
    take_in_parts(path, checker, &mut resumed, quiet)?;
    Ok(resumed)
}

/// A test file of this formula read back (`what` it is, for a read error), every test
/// checked against every clause: a test that falsifies one is bad input, `not_of` this
/// formula.
fn verified_suite(
    path: &Path,
    checker: &Checker,
    what: &str,
    not_of: &str,
) -> Result<snapsat::testfile::SuiteFile> {
    let shown = path.display();
    let text = read_text(path, what)?;
    let suite = read_suite(&text, checker.cnf().num_vars()).input(&shown)?;
    if let Some((i, clause)) = suite
        .tests
        .iter()
        .enumerate()
        .find_map(|(i, t)| checker.first_violated(t).map(|c| (i, c)))
    {
        return Err(Failure::bad_input(anyhow::anyhow!(
            "{shown}: test {} falsifies clause {}: it is not {not_of} of this formula",
            i + 1,
            clause + 1
        )));
    }
    Ok(suite)
}

/// The tests a killed sharded run's ranks kept in their parts beside the suite's file
/// ([`Parts`]), which no rank placed: each verified, those new to the suite appended to its
/// file, and the parts' folder removed.
fn take_in_parts(path: &Path, checker: &Checker, resumed: &mut Resumed, quiet: bool) -> Result<()> {
    let folder = Parts::folder_of(path);
    if !folder.is_dir() {
        return Ok(());
    }
    let mut seen: FingerprintSet = resumed.tests.iter().map(Assignment::fingerprint).collect();
    let mut found = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect())
        .output(folder.display())?;
    files.sort();
    for part in files {
        // A part's torn last line is a write its rank's death cut short: no test, dropped.
        let what = "a rank's part of the suite";
        let tests = verified_suite(&part, checker, what, "a part of a suite")?.tests;
        found.extend(tests.into_iter().filter(|t| seen.insert(t.fingerprint())));
    }
    let format = resumed.format.unwrap_or_default();
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .output(path.display())?;
    if let Some(offset) = resumed.cut_at.take() {
        file.set_len(offset).output(path.display())?;
    }
    TestWriter::new(file, format)
        .write_all(&found)
        .output(path.display())?;
    std::fs::remove_dir_all(&folder).output(folder.display())?;
    if !quiet {
        say!(
            "snapsat: note: took in {} tests the ranks of the interrupted run had kept in {}",
            found.len(),
            folder.display()
        );
    }
    resumed.tests.extend(found);
    Ok(())
}

/// Where the tests go: `-o` (created at the first test), the resumed file (cut at a torn
/// last line, then appended to), or standard output.
pub fn open_output(args: &SampleArgs, cut_at: Option<u64>) -> Result<Output> {
    Ok(match (&args.output, &args.resume) {
        (Some(path), _) => Box::new(LazyFile::create(path)),
        (None, Some(path)) => {
            if let Some(offset) = cut_at {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .and_then(|f| f.set_len(offset))
                    .output(path.display())?;
            }
            Box::new(LazyFile::append(path))
        }
        (None, None) => Box::new(std::io::stdout()),
    })
}
