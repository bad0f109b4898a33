//! Where a run's tests go and how it shows its progress, as the sampler reports them.

use crate::failure::say;
use crate::summary;
use snapsat::assignment::Assignment;
use snapsat::sampler::{Observer, RoundStats};
use snapsat::testfile::{
    place_left_behind, read_tests, BackgroundWriter, Parts, TestFormat, TestWriter, Written,
};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the suite's lines go.
pub type Output = Box<dyn Write + Send>;

/// How a run shows its progress on standard error.
#[derive(Clone, Copy, PartialEq)]
pub enum Progress {
    None,
    /// One line, redrawn each round.
    Terminal,
    /// A line at a round's end once this long has passed since the last.
    Log(Duration),
}

/// Writes tests and shows progress as the sampler reports them.
pub struct CliObserver {
    /// Rank 0's writer, until the ranks place their tests after its lines.
    writer: Option<BackgroundWriter<Output>>,
    written: Option<std::io::Result<Written<Output>>>,
    /// Where the ranks keep their tests (a sharded run over several ranks, to a file), the
    /// places of those that joined the suite (rank, number in its part, bytes), in order, and
    /// their offsets in the file, rank by rank, once given: until then no part is removed.
    parts: Option<Parts>,
    kept: Vec<(u32, u64, u32)>,
    places: Option<Vec<Vec<(u64, u64)>>>,
    num_vars: usize,
    progress: Progress,
    /// When the last progress line was written (the start before the first).
    logged: Instant,
    start: Instant,
    /// Every test of the suite, kept for --small.
    suite: Option<Vec<Assignment>>,
}

impl Observer for CliObserver {
    fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()> {
        let writer = self.writer.as_mut().ok_or_else(writer_closed)?;
        writer.write(test)?;
        if let Some(suite) = &mut self.suite {
            suite.push(Assignment::clone(test));
        }
        Ok(())
    }

    fn parts(&self) -> Option<Parts> {
        self.parts.clone()
    }

    fn kept(&mut self, (rank, number, bytes): (usize, u64, u32)) -> std::io::Result<()> {
        self.kept.push((rank as u32, number, bytes));
        Ok(())
    }

    /// Rank 0's lines first, then the ranks' tests in the order they joined.
    fn places(&mut self) -> std::io::Result<Vec<Vec<(u64, u64)>>> {
        let Some(parts) = &self.parts else {
            return Ok(Vec::new());
        };
        if let Some(writer) = self.writer.take() {
            self.written = Some(writer.finish());
        }
        let mut offset = match std::fs::metadata(&parts.output) {
            Ok(file) => file.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !self.kept.is_empty() => {
                std::fs::File::create(&parts.output)?;
                0
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e),
        };
        let ranks = self.kept.iter().map(|&(rank, ..)| rank as usize + 1).max();
        let mut places = vec![Vec::new(); ranks.unwrap_or(0)];
        for &(rank, number, bytes) in &self.kept {
            places[rank as usize].push((number, offset));
            offset += u64::from(bytes);
        }
        self.places = Some(places.clone());
        Ok(places)
    }

    fn round(&mut self, r: &RoundStats) {
        let line = || {
            format!(
                "snapsat: round {} · {} tests · NCD {} · {:.1} s",
                r.round,
                r.suite_size,
                summary::ncd_text(r.ncd),
                self.start.elapsed().as_secs_f64()
            )
        };
        match self.progress {
            Progress::None => {}
            Progress::Terminal => {
                use std::io::Write as _;
                let _ = write!(std::io::stderr(), "\r\x1b[2K{}", line());
            }
            Progress::Log(every) => {
                if self.logged.elapsed() >= every {
                    say!("{}", line());
                    self.logged = Instant::now();
                }
            }
        }
    }
}

impl CliObserver {
    /// Tests written to `output` in `format` (on a thread of its own) for a formula of
    /// `num_vars` variables; progress as `progress` says, or none when `quiet`; every test kept
    /// too (the `resumed` ones first) when `keep` (for --small).
    pub fn new(
        output: Output,
        format: TestFormat,
        num_vars: usize,
        quiet: bool,
        progress_every: f64,
        keep: Option<Vec<Assignment>>,
        parts: Option<Parts>,
    ) -> std::io::Result<Self> {
        let writer = BackgroundWriter::spawn(TestWriter::new(output, format), num_vars)?;
        let progress = if quiet {
            Progress::None
        } else if std::io::stderr().is_terminal() {
            Progress::Terminal
        } else if progress_every > 0.0 {
            Progress::Log(Duration::from_secs_f64(progress_every))
        } else {
            Progress::None
        };
        Ok(CliObserver {
            writer: Some(writer),
            written: None,
            parts,
            kept: Vec::new(),
            places: None,
            num_vars,
            progress,
            logged: Instant::now(),
            start: Instant::now(),
            suite: keep,
        })
    }

    /// Ends the progress line and waits until every test handed over is written, and every
    /// test a rank kept is in its place (rank 0 places those of a rank that could not): the
    /// seconds the writer was busy (or why it failed), and the suite kept for --small.
    pub fn finish(mut self) -> (std::io::Result<f64>, Option<Vec<Assignment>>) {
        if self.progress == Progress::Terminal {
            say!();
        }
        if self.parts.is_some() && self.places.is_none() {
            // The run failed before it said where the ranks' tests go: the parts stay if this
            // fails too, for --resume.
            if let Err(e) = self.places() {
                return (Err(e), None);
            }
        }
        let written = match (self.writer.take(), self.written.take()) {
            (Some(writer), _) => writer.finish(),
            (None, Some(written)) => written,
            (None, None) => Err(writer_closed()),
        };
        let mut written = written.map(|w| w.busy.as_secs_f64());
        if let (Ok(_), Some(parts)) = (&written, self.parts.clone()) {
            if let Err(e) = self.left_behind(&parts) {
                written = Err(e);
            }
        }
        (written, self.suite)
    }

    /// Places the tests of the parts their ranks did not (a rank that died or failed), and
    /// removes the parts' folder; the suite kept for --small then read back, whole.
    fn left_behind(&mut self, parts: &Parts) -> std::io::Result<()> {
        let places = self.places.as_deref().unwrap_or_default();
        place_left_behind(parts, places)?;
        if let (Some(suite), false) = (&mut self.suite, self.kept.is_empty()) {
            let text = std::fs::read_to_string(&parts.output)?;
            *suite = read_tests(&text, self.num_vars).map_err(std::io::Error::other)?;
        }
        Ok(())
    }
}

fn writer_closed() -> std::io::Error {
    std::io::Error::other("the test writer has finished")
}
