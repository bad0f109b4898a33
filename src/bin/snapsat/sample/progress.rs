//! Where a run's tests go and how it shows its progress, as the sampler reports them.

use crate::failure::say;
use crate::summary;
use snapsat::assignment::Assignment;
use snapsat::sampler::{Observer, RoundStats};
use snapsat::testfile::{BackgroundWriter, TestFormat, TestWriter};
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
    writer: BackgroundWriter<Output>,
    progress: Progress,
    /// When the last progress line was written (the start before the first).
    logged: Instant,
    start: Instant,
    /// Every test of the suite, kept for --small.
    suite: Option<Vec<Assignment>>,
}

impl Observer for CliObserver {
    fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()> {
        self.writer.write(test)?;
        if let Some(suite) = &mut self.suite {
            suite.push(Assignment::clone(test));
        }
        Ok(())
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
            writer,
            progress,
            logged: Instant::now(),
            start: Instant::now(),
            suite: keep,
        })
    }

    /// Ends the progress line and waits until every test handed over is written: the seconds
    /// the writer was busy (or why it failed), and the suite kept for --small.
    pub fn finish(self) -> (std::io::Result<f64>, Option<Vec<Assignment>>) {
        if self.progress == Progress::Terminal {
            say!();
        }
        let written = self.writer.finish().map(|w| w.busy.as_secs_f64());
        (written, self.suite)
    }
}
