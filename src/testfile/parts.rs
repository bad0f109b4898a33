//! A sharded run's tests kept where they are found. Each rank of a run over several ranks
//! writes the tests new to it to a part file of its own, in a folder beside the suite's file,
//! before it sends their verdicts; the coordinator admits them by fingerprint and gives each
//! admitted test its place in the suite's file, in the order admitted, after the tests it
//! wrote itself; at the end every rank copies its own tests to their places and removes its
//! part. No test's bytes pass through rank 0. A part left behind (a rank that died, a job
//! killed) still holds every test its rank sent: rank 0 places a dead rank's tests itself
//! ([`place_left_behind`]), and `--resume` takes in the parts of a killed job.

use super::{TestFormat, TestWriter};
use crate::assignment::{Assignment, FingerprintSet, KeptHash};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::BuildHasherDefault;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Where the ranks of a run keep their tests: a folder of part files, and the suite's file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// The folder of the parts, one file a rank.
    pub folder: PathBuf,
    /// The suite's file, where the tests are placed at the end.
    pub output: PathBuf,
    /// How the tests are written.
    pub format: TestFormat,
}

impl Parts {
    /// The parts of the suite in `output`, as absolute paths: ranks may run elsewhere (from
    /// another working folder), and need only the filesystem.
    pub fn beside(output: &Path, format: TestFormat) -> io::Result<Self> {
        let folder_of = |p: &Path| match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        let name = output
            .file_name()
            .ok_or_else(|| io::Error::other("the suite's file has no name"))?;
        let output = folder_of(output).canonicalize()?.join(name);
        Ok(Parts {
            folder: Self::folder_of(&output),
            output,
            format,
        })
    }

    /// The folder of the parts of the suite in `output`: its name and `.parts`.
    pub fn folder_of(output: &Path) -> PathBuf {
        let mut name = output.as_os_str().to_owned();
        name.push(".parts");
        PathBuf::from(name)
    }

    /// Rank `rank`'s part.
    pub fn part(&self, rank: usize) -> PathBuf {
        self.folder.join(format!("rank-{rank}.txt"))
    }
}

/// A rank's part: the tests new to the rank, numbered in the order it kept them.
pub struct PartWriter {
    writer: TestWriter<File>,
    /// Per fingerprint of a test in the part: its number, so that a test found again (its
    /// first verdict perhaps dropped by the coordinator) is named by where it is.
    numbers: HashMap<u64, u64, BuildHasherDefault<KeptHash>>,
    /// The tests the rank started from: the suite has them, and they are not kept.
    initial: FingerprintSet,
    /// Tests kept since the last flush, and the lengths of the lines of those written.
    unwritten: Vec<Assignment>,
    line_bytes: Vec<u32>,
}

impl PartWriter {
    /// Rank `rank`'s part, created empty, of a run whose ranks start from `initial`.
    pub fn create(parts: &Parts, rank: usize, initial: &[Assignment]) -> io::Result<Self> {
        let path = parts.part(rank);
        let file = File::create(&path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot write {}: {e} (every rank keeps its tests beside the suite's file, \
                     whose folder must be one all ranks' hosts share)",
                    path.display()
                ),
            )
        })?;
        Ok(PartWriter {
            writer: TestWriter::new(file, parts.format),
            numbers: HashMap::default(),
            initial: initial.iter().map(Assignment::fingerprint).collect(),
            unwritten: Vec::new(),
            line_bytes: Vec::new(),
        })
    }

    /// The number of `test` in the part, kept (written at the next flush) if it is new to
    /// it; `None` for a test the rank started from. The test is the verdict's own, moved in.
    pub fn keep(&mut self, test: Assignment, fingerprint: u64) -> Option<u64> {
        if self.initial.contains(&fingerprint) {
            return None;
        }
        let next = self.numbers.len() as u64;
        let number = *self.numbers.entry(fingerprint).or_insert(next);
        if number == next {
            self.unwritten.push(test);
        }
        Some(number)
    }

    /// Writes the tests kept since the last flush, in one write: from then on every test
    /// numbered is on disk.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.unwritten.is_empty() {
            return Ok(());
        }
        let lengths = &mut self.line_bytes;
        self.writer
            .write_lines(&self.unwritten, |bytes| lengths.push(bytes as u32))?;
        self.unwritten.clear();
        Ok(())
    }

    /// The length of test `number`'s line, once written.
    pub fn line_bytes(&self, number: u64) -> Option<u32> {
        self.line_bytes.get(number as usize).copied()
    }
}

/// Copies the tests of rank `rank`'s part to their places in the suite's file (`places`: a
/// test's number in the part and its offset in the file), then removes the part. Fails when
/// the part lacks a test it was to hold.
pub fn place(parts: &Parts, rank: usize, places: &[(u64, u64)]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let path = parts.part(rank);
    let mut places = places.to_vec();
    places.sort_unstable();
    if places.windows(2).any(|pair| pair[0].0 == pair[1].0) {
        return Err(io::Error::other("a test of a part is to go to two places"));
    }
    let output = OpenOptions::new().write(true).open(&parts.output)?;
    let mut part = BufReader::with_capacity(1 << 20, File::open(&path)?);
    let mut line = Vec::new();
    let mut number = 0;
    for (wanted, offset) in places {
        loop {
            line.clear();
            if part.read_until(b'\n', &mut line)? == 0 || !line.ends_with(b"\n") {
                return Err(io::Error::other(format!(
                    "{} ends before its test {}",
                    path.display(),
                    wanted + 1
                )));
            }
            number += 1;
            if number > wanted {
                break;
            }
        }
        output.write_all_at(&line, offset)?;
    }
    std::fs::remove_file(&path)
}

/// Places the tests of the parts their ranks left behind (a rank that died or failed before
/// it placed them), as rank 0 does once the ranks are done (`places`: rank by rank), and
/// removes the parts' folder: the ranks that did place theirs removed their parts.
pub fn place_left_behind(parts: &Parts, places: &[Vec<(u64, u64)>]) -> io::Result<()> {
    for (rank, places) in places.iter().enumerate() {
        if parts.part(rank).exists() {
            place(parts, rank, places)?;
        }
    }
    // Parts of ranks none of whose tests joined the suite hold nothing wanted.
    std::fs::remove_dir_all(&parts.folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank keeps each new test once (a test found again keeps its number; the tests it
    /// started from none), writes them at a flush, and placing them puts each line at its
    /// offset in the suite's file and removes the part.
    #[test]
    fn kept_tests_reach_their_places() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("suite.txt");
        std::fs::write(&output, "000\n").unwrap();
        let parts = Parts::beside(&output, TestFormat::Bits).unwrap();
        std::fs::create_dir(&parts.folder).unwrap();
        let test = |bits: &str| Assignment::from_bit_string(bits).unwrap();
        let mut part = PartWriter::create(&parts, 2, &[test("000")]).unwrap();
        let keep =
            |part: &mut PartWriter, bits: &str| part.keep(test(bits), test(bits).fingerprint());
        assert_eq!(keep(&mut part, "000"), None, "a test it started from");
        assert_eq!(keep(&mut part, "101"), Some(0));
        assert_eq!(keep(&mut part, "111"), Some(1));
        assert_eq!(keep(&mut part, "101"), Some(0), "found again");
        assert_eq!(part.line_bytes(0), None, "not written yet");
        part.flush().unwrap();
        assert_eq!(keep(&mut part, "011"), Some(2));
        part.flush().unwrap();
        assert_eq!(part.line_bytes(2), Some(4));
        let text = std::fs::read_to_string(parts.part(2)).unwrap();
        assert_eq!(text, "101\n111\n011\n");
        // The coordinator admitted 011 and 101, in that order, after its own test.
        place(&parts, 2, &[(2, 4), (0, 8)]).unwrap();
        assert_eq!(std::fs::read_to_string(&output).unwrap(), "000\n011\n101\n");
        assert!(!parts.part(2).exists());
        // A part that lacks a test it was to hold is an error, not a hole left quietly.
        std::fs::write(parts.part(3), "111\n01").unwrap();
        let short = place(&parts, 3, &[(1, 12)]).unwrap_err();
        assert!(
            short.to_string().contains("ends before its test 2"),
            "{short}"
        );
    }

    /// Rank 0 places what a rank left behind (rank 1 placed its own and removed its part;
    /// rank 0's is there), drops parts none of whose tests joined, and removes the folder.
    #[test]
    fn rank_0_places_the_parts_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("suite.txt");
        let parts = Parts::beside(&output, TestFormat::Bits).unwrap();
        std::fs::create_dir(&parts.folder).unwrap();
        std::fs::write(&output, "00\nxx\nxx\n11\n").unwrap();
        std::fs::write(parts.part(0), "10\n01\n").unwrap();
        std::fs::write(parts.part(2), "11\n").unwrap();
        let places = vec![vec![(1, 3), (0, 6)], vec![(0, 9)], Vec::new()];
        // Rank 1 placed "11" at 9 and removed its part.
        place_left_behind(&parts, &places).unwrap();
        assert_eq!(
            std::fs::read_to_string(&output).unwrap(),
            "00\n01\n10\n11\n"
        );
        assert!(!parts.folder.exists());
    }
}
