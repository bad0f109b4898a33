//! Test files: writing tests one line each (DIMACS literals, as CMSGen writes, or 0/1 strings)
//! and reading them back, strictly: a test gives every variable exactly one value.

use crate::assignment::{Assignment, DimacsLines};
use crate::dimacs::MAX_VARS;
use crate::handoff::{Dozing, Handoff, Napping, LONGEST_DOZE};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::sync::Arc;

mod parts;

pub use parts::{place, place_left_behind, PartWriter, Parts};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How tests are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TestFormat {
    /// `1 -2 3 0`: every variable as a signed literal, ended by 0.
    #[default]
    Dimacs,
    /// `101`: one 0/1 character a variable.
    Bits,
}

/// Streams tests to a writer. Each test, newline included, goes out in one `write_all` (with
/// the tests written along with it) and is flushed: a process killed between writes leaves
/// whole lines, and a torn last line can only come from a kill inside that one call (which
/// [`read_suite`] then reports).
pub struct TestWriter<W: Write> {
    out: W,
    format: TestFormat,
    written: usize,
    line: Vec<u8>,
    dimacs: DimacsLines,
}

impl<W: Write> TestWriter<W> {
    /// Writes tests to `out` in `format`.
    pub fn new(out: W, format: TestFormat) -> Self {
        TestWriter {
            out,
            format,
            written: 0,
            line: Vec::new(),
            dimacs: DimacsLines::default(),
        }
    }

    /// One test, its line and newline in one write, flushed.
    pub fn write(&mut self, test: &Assignment) -> io::Result<()> {
        self.write_all([test])
    }

    /// Tests in order, their lines in one write, flushed.
    pub fn write_all<'t>(
        &mut self,
        tests: impl IntoIterator<Item = &'t Assignment>,
    ) -> io::Result<()> {
        self.write_lines(tests, |_| {})
    }

    /// [`TestWriter::write_all`], telling `line_bytes` each line's length, newline included.
    pub fn write_lines<'t>(
        &mut self,
        tests: impl IntoIterator<Item = &'t Assignment>,
        mut line_bytes: impl FnMut(usize),
    ) -> io::Result<()> {
        self.line.clear();
        let mut count = 0;
        for test in tests {
            let start = self.line.len();
            match self.format {
                TestFormat::Dimacs => self.dimacs.write(test, &mut self.line),
                TestFormat::Bits => test.write_bits(&mut self.line),
            }
            self.line.push(b'\n');
            line_bytes(self.line.len() - start);
            count += 1;
        }
        self.out.write_all(&self.line)?;
        self.out.flush()?;
        self.written += count;
        Ok(())
    }

    /// Tests written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// The writer, once the tests are written.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// A [`TestWriter`] on a thread of its own. The coordinator merging verdicts hands each test
/// over and goes on: rendering and writing a test's line had been half of its work per test
/// (LoginService2.sk_23_36's 11,511 variables make 64 KB lines), time in which no verdict was
/// merged however many ranks waited. Lines go out in the order handed over, the tests waiting
/// when the thread looks written together in one flushed write (up to 1 MiB of lines): a
/// system call a test had been most of the thread's time on small formulas (1,000 writes of
/// 300-byte lines for blasted_case47). Dropping the writer still writes
/// every test handed over, so an interrupted run keeps them. Handing a test over does not
/// wake the thread ([`crate::handoff`]): it writes within a millisecond.
pub struct BackgroundWriter<W: Write + Send + 'static> {
    queue: Option<Handoff<Arc<Assignment>>>,
    thread: Option<JoinHandle<io::Result<Written<W>>>>,
}

/// What a [`BackgroundWriter`] did.
pub struct Written<W> {
    /// The output, every line written.
    pub out: W,
    /// Tests written.
    pub tests: usize,
    /// The thread's CPU time: rendering and writing lines, and looking for them.
    pub busy: Duration,
}

/// Text the tests waiting for a [`BackgroundWriter`] may make: a run's end, or an interrupt,
/// waits for them to be written (0.1–0.3 s here), so the bound is on their lines, not their
/// memory.
const QUEUE_TEXT_BYTES: usize = 32 << 20;

/// Lines written together at most: a write of them still lands within the millisecond.
const BATCH_TEXT_BYTES: usize = 1 << 20;

/// Bytes a DIMACS line of `num_vars` literals may take (7 on average past 100,000 variables).
fn line_bytes(num_vars: usize) -> usize {
    8 * num_vars + 2
}

/// Tests waiting that wake the writer before its nap is over: a quarter of its queue, at least
/// 16. Idle between the verdicts of a rank whose repairs take microseconds, it was woken every
/// 16 tests, a futex call each, which was a third of merging a test of 70.sk_3_40 (sharded);
/// only a full queue and the run's end wait for it, and its nap bounds a test's wait.
fn wake_at(capacity: usize) -> usize {
    (capacity / 4).max(16)
}

impl<W: Write + Send + 'static> BackgroundWriter<W> {
    /// Starts the thread. Tests of `num_vars` variables wait for it up to about 32 MiB of
    /// their lines; past that a slow disk holds the caller back.
    pub fn spawn(mut writer: TestWriter<W>, num_vars: usize) -> io::Result<Self> {
        let capacity = (QUEUE_TEXT_BYTES / line_bytes(num_vars)).clamp(1, 4096);
        let batch_tests = (BATCH_TEXT_BYTES / line_bytes(num_vars)).max(1);
        let (queue, tests) = crossbeam_channel::bounded::<Arc<Assignment>>(capacity);
        // Between bursts of tests (a sharded run's ranks keep theirs), the writer dozes.
        let dozing = Dozing::default();
        let doze = dozing.clone();
        let thread = std::thread::Builder::new()
            .name("snapsat-writer".into())
            .spawn(move || {
                crate::handoff::work_beside_the_coordinator();
                let mut busy = Duration::ZERO;
                let mut tests = Napping::new(tests).dozing(&doze, LONGEST_DOZE);
                let mut batch = Vec::with_capacity(batch_tests.min(capacity));
                while let Some(test) = tests.next() {
                    let started = Instant::now();
                    batch.push(test);
                    batch.extend(tests.waiting().take(batch_tests - 1));
                    writer.write_all(batch.iter().map(|t| &**t))?;
                    batch.clear();
                    busy += started.elapsed();
                }
                Ok(Written {
                    tests: writer.written(),
                    out: writer.into_inner(),
                    busy: crate::metrics::thread_cpu_time().unwrap_or(busy),
                })
            })?;
        Ok(BackgroundWriter {
            queue: Some(
                Handoff::new(queue, thread.thread().clone(), wake_at(capacity)).waking(&dozing),
            ),
            thread: Some(thread),
        })
    }

    /// Hands `test` over (a share of it, not a copy). An error is the thread's: a write that
    /// failed earlier.
    pub fn write(&mut self, test: &Arc<Assignment>) -> io::Result<()> {
        let handed = match &self.queue {
            Some(queue) => queue.send(Arc::clone(test)).is_ok(),
            None => false,
        };
        if handed {
            Ok(())
        } else {
            // The thread has stopped, so its error is waiting.
            Err(self
                .stop()
                .err()
                .unwrap_or_else(|| io::Error::other("the test writer has stopped")))
        }
    }

    /// Waits until every test handed over is written.
    pub fn finish(mut self) -> io::Result<Written<W>> {
        self.stop()?
            .ok_or_else(|| io::Error::other("the test writer has stopped"))
    }

    fn stop(&mut self) -> io::Result<Option<Written<W>>> {
        self.queue = None;
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(None),
            Some(Ok(result)) => result.map(Some),
            Some(Err(_)) => Err(io::Error::other("the test writer panicked")),
        }
    }
}

impl<W: Write + Send + 'static> Drop for BackgroundWriter<W> {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// A line of a test file that is not a test over the formula's variables.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TestParseError {
    /// Line of the file, from 1.
    pub line: usize,
    /// What was expected there.
    pub message: String,
}

/// True for a line of 0/1 characters (one a variable), as opposed to DIMACS literals: a lone
/// `0` is an empty DIMACS test.
pub fn is_bit_line(line: &str) -> bool {
    line != "0" && !line.is_empty() && line.bytes().all(|b| b == b'0' || b == b'1')
}

/// A test line without the `v ` prefix SAT-competition solvers write; `None` for blank and
/// comment lines.
fn test_text(line: &str) -> Option<&str> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('c') {
        return None;
    }
    Some(match line.strip_prefix("v ") {
        Some(rest) => rest.trim_start(),
        None => line,
    })
}

/// Reads tests, one a line, in either format (detected per line); blank lines and lines
/// starting with `c` are skipped, and a `v ` prefix is accepted. A DIMACS line names every
/// variable exactly once, in any order: a test that leaves a variable out is not a test.
pub fn read_tests(text: &str, num_vars: usize) -> Result<Vec<Assignment>, TestParseError> {
    let mut tests = Vec::new();
    let mut seen = vec![false; num_vars];
    for (i, line) in text.lines().enumerate() {
        let Some(line) = test_text(line) else {
            continue;
        };
        tests.push(
            parse_test(line, num_vars, &mut seen).map_err(|message| TestParseError {
                line: i + 1,
                message,
            })?,
        );
    }
    Ok(tests)
}

fn parse_test(line: &str, num_vars: usize, seen: &mut [bool]) -> Result<Assignment, String> {
    if is_bit_line(line) {
        if line.len() != num_vars {
            return Err(format!(
                "expected {num_vars} 0/1 characters, found {}",
                line.len()
            ));
        }
        return Ok(Assignment::from_bit_string(line).expect("checked characters"));
    }
    seen.fill(false);
    let mut test = Assignment::zeros(num_vars);
    let mut named = 0;
    let mut ended = false;
    for token in line.split_ascii_whitespace() {
        if ended {
            return Err(format!(
                "expected the end of the line after 0, found `{token}`"
            ));
        }
        let lit: i64 = token
            .parse()
            .map_err(|_| format!("expected a literal or 0, found `{token}`"))?;
        if lit == 0 {
            ended = true;
            continue;
        }
        let var = lit.unsigned_abs() as usize;
        if var > num_vars {
            return Err(format!("literal {lit} is beyond the {num_vars} variables"));
        }
        if std::mem::replace(&mut seen[var - 1], true) {
            return Err(format!("variable {var} is given twice"));
        }
        named += 1;
        test.set(var - 1, lit > 0);
    }
    if !ended {
        return Err("expected 0 to end the test".into());
    }
    if named != num_vars {
        let missing = seen.iter().position(|&s| !s).map_or(0, |v| v + 1);
        return Err(format!(
            "the test gives {named} of the {num_vars} variables a value (variable {missing} has none): a test must give every variable a value"
        ));
    }
    Ok(test)
}

/// The variable count a test file implies when no formula gives it: the length of its 0/1
/// lines or its largest DIMACS variable; at most [`MAX_VARS`].
pub fn implied_num_vars(text: &str) -> Result<usize, TestParseError> {
    let mut most = 0;
    for (i, line) in text.lines().enumerate() {
        let Some(line) = test_text(line) else {
            continue;
        };
        let vars = if is_bit_line(line) {
            line.len() as u64
        } else {
            line.split_ascii_whitespace()
                .filter_map(|t| t.parse::<i64>().ok())
                .map(i64::unsigned_abs)
                .max()
                .unwrap_or(0)
        };
        if vars > MAX_VARS as u64 {
            return Err(TestParseError {
                line: i + 1,
                message: format!(
                    "a test of {vars} variables is beyond the limit of {MAX_VARS} variables"
                ),
            });
        }
        most = most.max(vars as usize);
    }
    Ok(most)
}

/// A suite file read back to be continued.
#[derive(Debug)]
pub struct SuiteFile {
    /// The tests, in file order.
    pub tests: Vec<Assignment>,
    /// The format of its last test, which new tests keep.
    pub format: Option<TestFormat>,
    /// Where an unterminated last line starts (bytes) and its line number: a write cut short
    /// by a crash. It is no test; the file is to be cut there before appending.
    pub torn_tail: Option<(u64, usize)>,
}

/// Reads a suite to continue it: every complete line must be a test (or blank, or a comment);
/// an unterminated last line is set apart as torn rather than read.
pub fn read_suite(text: &str, num_vars: usize) -> Result<SuiteFile, TestParseError> {
    let (whole, torn_tail) = match text.rfind('\n') {
        _ if text.is_empty() || text.ends_with('\n') => (text, None),
        Some(end) => (
            &text[..=end],
            Some(((end + 1) as u64, whole_lines(&text[..=end]) + 1)),
        ),
        None => ("", Some((0, 1))),
    };
    let tests = read_tests(whole, num_vars)?;
    let format = whole.lines().rev().find_map(test_text).map(|line| {
        if is_bit_line(line) {
            TestFormat::Bits
        } else {
            TestFormat::Dimacs
        }
    });
    Ok(SuiteFile {
        tests,
        format,
        torn_tail,
    })
}

fn whole_lines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written(tests: &[Assignment], format: TestFormat) -> String {
        let mut w = TestWriter::new(Vec::new(), format);
        for t in tests {
            w.write(t).unwrap();
        }
        assert_eq!(w.written(), tests.len());
        String::from_utf8(w.out).unwrap()
    }

    #[test]
    fn both_formats_round_trip() {
        let tests = vec![
            Assignment::from_bit_string("1010").unwrap(),
            Assignment::from_bit_string("0111").unwrap(),
        ];
        for format in [TestFormat::Dimacs, TestFormat::Bits] {
            assert_eq!(read_tests(&written(&tests, format), 4).unwrap(), tests);
        }
    }

    /// A test is one write call: a writer that fails after N calls leaves whole lines.
    #[test]
    fn each_test_is_one_write_call() {
        struct Calls(Vec<Vec<u8>>);
        impl Write for Calls {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.push(buf.to_vec());
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let test = Assignment::from_bit_string(&"10".repeat(6000)).unwrap();
        for format in [TestFormat::Dimacs, TestFormat::Bits] {
            let mut w = TestWriter::new(Calls(Vec::new()), format);
            w.write(&test).unwrap();
            assert_eq!(w.out.0.len(), 1);
            assert!(w.out.0[0].ends_with(b"\n"));
        }
    }

    fn some_tests(count: usize, num_vars: usize) -> Vec<Assignment> {
        (0..count)
            .map(|i| {
                let bits: String = (0..num_vars)
                    .map(|v| if (i * 7 + v * 3) % 5 < 2 { '1' } else { '0' })
                    .collect();
                Assignment::from_bit_string(&bits).unwrap()
            })
            .collect()
    }

    #[test]
    fn the_background_writer_writes_what_the_writer_writes_in_order() {
        let tests = some_tests(300, 3000);
        let direct = written(&tests, TestFormat::Bits);
        let mut background =
            BackgroundWriter::spawn(TestWriter::new(Vec::new(), TestFormat::Bits), 3000).unwrap();
        for t in &tests {
            background.write(&Arc::new(t.clone())).unwrap();
        }
        let done = background.finish().unwrap();
        assert_eq!(done.tests, tests.len());
        assert!(String::from_utf8(done.out).unwrap() == direct);
    }

    /// Tests that wait while the thread writes go out together, whole lines in order, in one
    /// write call.
    #[test]
    fn tests_waiting_for_the_background_writer_go_out_in_one_write() {
        use std::sync::mpsc::{channel, Receiver, Sender};
        /// Says when its first write starts and holds it until the gate opens; records each
        /// write.
        struct Gated {
            entered: Sender<()>,
            gate: Receiver<()>,
            writes: Vec<String>,
        }
        impl Write for Gated {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.writes.is_empty() {
                    self.entered.send(()).unwrap();
                    self.gate.recv().unwrap();
                }
                self.writes.push(String::from_utf8(buf.to_vec()).unwrap());
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let tests = some_tests(40, 30);
        let (entered, started) = channel();
        let (open, gate) = channel();
        let out = Gated {
            entered,
            gate,
            writes: Vec::new(),
        };
        let mut background =
            BackgroundWriter::spawn(TestWriter::new(out, TestFormat::Bits), 30).unwrap();
        background.write(&Arc::new(tests[0].clone())).unwrap();
        started.recv().unwrap();
        for t in &tests[1..] {
            background.write(&Arc::new(t.clone())).unwrap();
        }
        open.send(()).unwrap();
        let done = background.finish().unwrap();
        assert_eq!(done.tests, tests.len());
        assert_eq!(
            done.out.writes.len(),
            2,
            "the first test, then the 39 that waited"
        );
        assert_eq!(done.out.writes.concat(), written(&tests, TestFormat::Bits));
    }

    /// A shared buffer, so that what a dropped writer wrote can still be read.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_dropped_background_writer_still_writes_every_test_handed_over() {
        let tests = some_tests(50, 300);
        let shared = Shared::default();
        let mut background =
            BackgroundWriter::spawn(TestWriter::new(shared.clone(), TestFormat::Dimacs), 300)
                .unwrap();
        for t in &tests {
            background.write(&Arc::new(t.clone())).unwrap();
        }
        drop(background);
        let text = String::from_utf8(shared.0.lock().unwrap().clone()).unwrap();
        assert_eq!(read_tests(&text, 300).unwrap(), tests);
    }

    #[test]
    fn a_failed_write_reaches_the_caller() {
        /// Takes `room` bytes, then fails as a full disk does.
        struct Full {
            room: usize,
        }
        impl Write for Full {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if buf.len() > self.room {
                    return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
                }
                self.room -= buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let tests = some_tests(20, 100);
        // The thread's own error, from a later write or from `finish`: never lost.
        let full = TestWriter::new(Full { room: 1000 }, TestFormat::Bits);
        let mut background = BackgroundWriter::spawn(full, 100).unwrap();
        let early = tests
            .iter()
            .find_map(|t| background.write(&Arc::new(t.clone())).err());
        let error = match (early, background.finish()) {
            (Some(e), _) | (None, Err(e)) => e,
            (None, Ok(_)) => panic!("a full output went unnoticed"),
        };
        assert_eq!(error.kind(), io::ErrorKind::StorageFull, "{error}");
    }

    #[test]
    fn malformed_test_lines_are_named() {
        let err = |text: &str| read_tests(text, 3).unwrap_err().to_string();
        assert_eq!(
            err("1 -2 3 0\n1 x 0\n"),
            "line 2: expected a literal or 0, found `x`"
        );
        assert_eq!(
            err("1 4 0\n"),
            "line 1: literal 4 is beyond the 3 variables"
        );
        assert_eq!(err("1 2 3\n"), "line 1: expected 0 to end the test");
        assert_eq!(err("0101\n"), "line 1: expected 3 0/1 characters, found 4");
        assert_eq!(err("1 -1 2 3 0\n"), "line 1: variable 1 is given twice");
    }

    #[test]
    fn a_partial_test_is_refused() {
        let err = read_tests("1 2 0\n", 3).unwrap_err().to_string();
        assert!(err.contains("gives 2 of the 3 variables"), "{err}");
        assert!(err.contains("variable 3 has none"), "{err}");
    }

    #[test]
    fn v_prefix_and_comments_are_accepted() {
        let tests = read_tests("c a comment\nv 1 -2 0\n\nv 01\n", 2).unwrap();
        assert_eq!(tests.len(), 2);
        assert_eq!(tests[0].to_bit_string(), "10");
        assert_eq!(tests[1].to_bit_string(), "01");
    }

    #[test]
    fn a_torn_last_line_is_set_apart_and_only_there() {
        let suite = read_suite("1 -2 0\n-1 2 0\n1 2", 2).unwrap();
        assert_eq!(suite.tests.len(), 2);
        assert_eq!(suite.torn_tail, Some((14, 3)));
        assert_eq!(suite.format, Some(TestFormat::Dimacs));
        let whole = read_suite("10\n01\n", 2).unwrap();
        assert_eq!(whole.torn_tail, None);
        assert_eq!(whole.format, Some(TestFormat::Bits));
        assert_eq!(read_suite("1", 2).unwrap().torn_tail, Some((0, 1)));
        // A malformed line that is not the last is an error, not a torn tail.
        assert!(read_suite("1 2\n-1 2 0\n", 2).is_err());
    }

    #[test]
    fn implied_variable_count_is_bounded() {
        assert_eq!(implied_num_vars("1 -3 2 0\n").unwrap(), 3);
        assert_eq!(implied_num_vars("0110\n").unwrap(), 4);
        let err = implied_num_vars("99999999999 0\n").unwrap_err().to_string();
        assert!(err.contains("beyond the limit"), "{err}");
    }

    proptest! {
        /// Whatever the text, reading never panics, and what it reads are complete tests.
        #[test]
        fn reading_arbitrary_text_never_panics(text in "[-0-9v c\n]{0,60}", vars in 1usize..5) {
            if let Ok(tests) = read_tests(&text, vars) {
                prop_assert!(tests.iter().all(|t| t.len() == vars));
            }
            let _ = read_suite(&text, vars);
            let _ = implied_num_vars(&text);
        }

        #[test]
        fn written_suites_read_back(bits in proptest::collection::vec("[01]{7}", 0..8), dimacs in any::<bool>()) {
            let tests: Vec<Assignment> = bits.iter().map(|b| Assignment::from_bit_string(b).unwrap()).collect();
            let format = if dimacs { TestFormat::Dimacs } else { TestFormat::Bits };
            let suite = read_suite(&written(&tests, format), 7).unwrap();
            prop_assert_eq!(suite.tests, tests);
            prop_assert!(suite.torn_tail.is_none());
        }
    }
}
