//! What a run tells its user: the summary on standard error and the `--stats` JSON.

use crate::failure::say;
use crate::flags::{Algorithm, SolverChoice};
use serde::Serialize;
use snapsat::sampler::quick::QuickReport;
use snapsat::sampler::{Report, StopMetric, StopReason};

/// The figures of either sampler, as written to `--stats`.
#[derive(Serialize)]
#[serde(untagged)]
pub enum RunReport {
    /// Boxed: a Snap report is several times a QuickSampler one.
    Snap(Box<Report>),
    Quick(QuickReport),
}

/// What a run found.
#[derive(Serialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    /// A suite of one test or more.
    Suite,
    /// The formula is unsatisfiable: no test exists.
    Unsat,
    /// No solution within the time limit, and none proved impossible.
    Unknown,
    /// SIGINT or SIGTERM before the first test.
    Interrupted,
}

#[derive(Serialize)]
pub struct RunStats<'a> {
    /// What the run found; the run's figures follow only for a suite.
    pub answer: Answer,
    /// Why no solution was found (`answer` unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<&'a str>,
    pub algorithm: Algorithm,
    pub solver: SolverChoice,
    pub formula: String,
    pub variables: usize,
    pub clauses: usize,
    pub independent_support: usize,
    pub seed: u64,
    pub samples: u64,
    pub clusters: u64,
    pub min_improvement_percent: f64,
    pub stop_metric: StopMetric,
    /// Ranks drew their own rounds (`--sharded`).
    pub sharded: bool,
    pub time_limit_seconds: f64,
    pub launch: &'static str,
    pub num_ranks: usize,
    pub threads_per_rank: usize,
    pub parse_seconds: f64,
    /// The run's wall time from the formula read on (the report's own `seconds` for a
    /// suite); the one time there is for a run without a suite.
    pub wall_seconds: f64,
    /// Time the thread that writes the suite spent rendering and writing its lines, beside
    /// the coordinator's merging rather than in it.
    pub writer_seconds: f64,
    pub peak_memory_bytes: Option<u64>,
    /// Rank 0's own time per test of the suite (Snap only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank0_per_test: Option<Rank0PerTest>,
    /// The minimized suite (--small), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub small: Option<&'a SmallSuite>,
    #[serde(flatten)]
    pub report: Option<&'a RunReport>,
}

/// Peak resident memory of this process, from the kernel (Linux only).
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The suite `--small` wrote: its size and the t-wise combinations it keeps.
#[derive(Serialize)]
pub struct SmallSuite {
    pub tests: usize,
    /// Tests greedy choice kept from the suite, before the shrinking (t = 2).
    pub chosen_tests: usize,
    pub strength: usize,
    pub pool_tests: usize,
    pub covered_tuples: u64,
    pub pool_tuples: u64,
    /// Tuples the written tests cover that the suite does not (the solver's witnesses).
    pub new_tuples: u64,
}

/// Rank 0's own time for each test of the whole suite, in microseconds: what no number of
/// ranks takes off it, and so what bounds a large job (cluster-configs/README.md).
#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
pub struct Rank0PerTest {
    /// Merging verdicts into the suite: deduplication, the suite's bookkeeping.
    pub merging_us: f64,
    /// Decoding the ranks' messages (0 in one process).
    pub decoding_us: f64,
    /// Rendering and writing the tests (the writer thread).
    pub writing_us: f64,
    /// Compressing the suite for NCD (the measuring thread).
    pub ncd_us: f64,
    /// The four together.
    pub total_us: f64,
}

impl RunReport {
    /// Rank 0's time per test of the suite, given the writer thread's `writer_seconds`;
    /// `None` for QuickSampler, which runs in one process, or an empty suite.
    pub fn rank0_per_test(&self, writer_seconds: f64) -> Option<Rank0PerTest> {
        let RunReport::Snap(r) = self else {
            return None;
        };
        let tests = r.distinct_tests.checked_sub(r.resumed).filter(|&n| n > 0)? as f64;
        let [merging_us, decoding_us, writing_us, ncd_us] = [
            r.merge_seconds,
            r.decoding_seconds,
            writer_seconds,
            r.seconds.ncd,
        ]
        .map(|seconds| 1e6 * seconds / tests);
        Some(Rank0PerTest {
            merging_us,
            decoding_us,
            writing_us,
            ncd_us,
            total_us: merging_us + decoding_us + writing_us + ncd_us,
        })
    }

    /// Why the run stopped.
    pub fn stop(&self) -> StopReason {
        match self {
            RunReport::Snap(r) => r.stop,
            RunReport::Quick(r) => r.stop.unwrap_or(StopReason::TimeLimit),
        }
    }
}

/// What the summary line says besides the report: where the tests went and what NCD was
/// measured over.
pub struct Context<'a> {
    /// The suite's file; none for standard output.
    pub output: Option<&'a std::path::Path>,
    /// The formula names an independent support (`c ind`), which NCD is measured over.
    pub independent_support: bool,
    /// The run's internals too (`--verbose`).
    pub verbose: bool,
}

/// The summary of either sampler on standard error: one line, the internals after it with
/// `--verbose`.
pub fn print(report: &RunReport, writer_seconds: f64, context: &Context) {
    match report {
        RunReport::Snap(r) => {
            say!("snapsat: {}", snap_line(r, context));
            if context.verbose {
                internals(r, writer_seconds);
            }
        }
        RunReport::Quick(r) => {
            say!("snapsat: {}", quick_line(r, context));
            if context.verbose {
                quick_internals(r);
            }
        }
    }
    if let RunReport::Snap(r) = report {
        if r.invalid_dropped > 0 {
            say!(
                "snapsat: internal error: {} completed tests falsified a clause and were not written",
                r.invalid_dropped
            );
        }
    }
}

/// `n` and the noun, plural unless `n` is 1.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What NCD was measured over, and where the tests are.
fn measured_and_written(ncd: f64, variables: usize, context: &Context) -> String {
    let over = if context.independent_support {
        format!("{} of `c ind`", count(variables, "variable"))
    } else {
        count(variables, "variable")
    };
    let to = context
        .output
        .map_or("standard output".to_string(), |p| p.display().to_string());
    format!("NCD {} over {over} · {to}", ncd_text(ncd))
}

/// Snap's summary line: tests, time, rounds and why they stopped, NCD, where the tests are.
fn snap_line(r: &Report, context: &Context) -> String {
    let ncd = r.rounds.last().map_or(0.0, |x| x.ncd);
    format!(
        "{} in {:.2} s · {} ({}) · {}",
        count(r.distinct_tests, "test"),
        r.seconds.total,
        count(r.rounds.len().saturating_sub(1), "round"),
        stop_text(r.stop),
        measured_and_written(ncd, r.ncd_variables, context)
    )
}

/// QuickSampler's summary line.
fn quick_line(r: &QuickReport, context: &Context) -> String {
    format!(
        "QuickSampler: {} of {} candidates valid ({:.1}%) in {:.2} s · {} ({}) · {}",
        count(r.distinct_tests, "test"),
        r.candidates,
        r.credibility_percent,
        r.seconds.total,
        count(r.epochs as usize, "epoch"),
        stop_text(r.stop.unwrap_or(StopReason::TimeLimit)),
        measured_and_written(r.ncd, r.ncd_variables, context)
    )
}

fn stop_text(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Converged => "NCD stopped improving",
        StopReason::TimeLimit => "time limit reached",
        StopReason::MaxTests => "--max-tests reached",
        StopReason::MaxRounds => "--max-rounds reached",
        StopReason::NoNewTests => "a round found no new test",
        StopReason::Interrupted => "interrupted",
    }
}

fn quick_internals(r: &QuickReport) {
    say!(
        "snapsat: {} distinct candidates, credibility {:.1}% ({} valid); {} atomic mutations, {} unflippable variables; {} solver calls",
        r.candidates,
        r.credibility_percent,
        r.valid_candidates,
        r.atomic_mutations,
        r.unflippable_vars,
        r.solver_calls
    );
}

/// The line `--small` adds to the summary.
pub fn print_small(path: &std::path::Path, small: &SmallSuite) {
    let chosen = if small.chosen_tests > small.tests {
        format!(" (greedy choice from the suite: {})", small.chosen_tests)
    } else {
        String::new()
    };
    let new = if small.new_tuples > 0 {
        format!(", and {} it does not show", small.new_tuples)
    } else {
        String::new()
    };
    say!(
        "snapsat: --small {}: {} tests{chosen} keep the suite's {} {}-wise combinations of `c ind`{new}",
        path.display(),
        small.tests,
        small.covered_tuples,
        small.strength
    );
}

/// NCD as the summaries print it: NaN stands for a measurement the time limit cut short.
pub fn ncd_text(ncd: f64) -> String {
    if ncd.is_nan() {
        "not measured (time ran out)".into()
    } else {
        format!("{ncd:.4}")
    }
}

/// The run's internals (`--verbose`): where its time went, what the solver did, and how
/// fast, per rank where there are several.
fn internals(r: &Report, writer_seconds: f64) {
    say!(
        "snapsat: coordinator {:.3} s ({:.3} s of it merging verdicts, {:.3} s sending messages), ranks on tasks {:.3} s: work/coordinator {:.1} (ranks the run can use before the coordinator bounds it)",
        r.coordinator_seconds,
        r.merge_seconds,
        r.messaging_seconds,
        r.work_seconds,
        r.work_seconds / r.coordinator_seconds.max(1e-9)
    );
    let decoding = if r.decoding_seconds > 0.0 {
        format!(
            ", decoding the ranks' messages {:.3} s (work/decoding {:.1})",
            r.decoding_seconds,
            r.work_seconds / r.decoding_seconds
        )
    } else {
        String::new()
    };
    say!(
        "snapsat: beside the coordinator, on threads of their own: NCD {:.3} s (work/NCD {:.1}), writing the tests {writer_seconds:.3} s (work/writing {:.1}){decoding}",
        r.seconds.ncd,
        r.work_seconds / r.seconds.ncd.max(1e-9),
        r.work_seconds / writer_seconds.max(1e-9)
    );
    let kept = if r.delta_bits_asked > 0 {
        format!(
            " (keeping {:.1}% of the delta bits asked, {} of {})",
            100.0 * r.delta_bits_kept as f64 / r.delta_bits_asked as f64,
            r.delta_bits_kept,
            r.delta_bits_asked
        )
    } else {
        String::new()
    };
    say!(
        "snapsat: {} candidates, {:.1}% valid before repair, {} repaired{kept}, {} failed repairs; solver calls: {} generate, {} repair",
        r.candidates,
        r.valid_before_repair_percent,
        r.repaired,
        r.failed_repairs,
        r.solver_calls.generate,
        r.solver_calls.repair
    );
    loop_notes(r);
    let latency = |phase: &str| {
        r.latency.get(phase).map_or(String::new(), |q| {
            format!(
                " · {} {} p50 {} p99 {}",
                phase.replace('_', " "),
                q.count,
                millis(q.p50_us),
                millis(q.p99_us)
            )
        })
    };
    say!(
        "snapsat: {:.1} candidates/s, {:.1} tests/s{}{}{}",
        r.throughput.candidates_per_second,
        r.throughput.tests_per_second,
        latency("initial_solve"),
        latency("repair"),
        latency("round_trip")
    );
    if r.ranks.len() > 1 {
        for rank in &r.ranks {
            say!(
                "snapsat:   rank {}: {} threads, {} tasks, busy {:.2} s, placing {:.2} s, {} messages, {:.1} KiB out, {:.1} KiB back",
                rank.rank,
                rank.threads,
                rank.tasks,
                rank.busy_seconds,
                rank.placing_seconds,
                rank.messages,
                rank.bytes_to_rank as f64 / 1024.0,
                rank.bytes_from_rank as f64 / 1024.0
            );
        }
    }
    for why in &r.unknown {
        say!("snapsat: note: some solver calls gave up: {why}");
    }
}

/// What the verbose summary says of the loop beyond the paper's: an early start, the
/// coverage-directed step, a round dropped by the stop rule.
fn loop_notes(r: &Report) {
    if r.started_early {
        say!(
            "snapsat: fresh solutions were hard searches: the rounds started after {} of them \
             (--paper-loop waits for all)",
            r.rounds.first().map_or(0, |round| round.samples)
        );
    }
    let covering = r.covering;
    if covering.candidates > 0 {
        say!(
            "snapsat: --small: {} coverage-directed candidates after the stop rule gave {} new \
             tests, covering {} of the {} value pairs of `c ind` the suite showed",
            covering.candidates,
            covering.new_tests,
            covering.pairs_covered,
            covering.pairs_seen
        );
    }
    if r.dropped_candidates > 0 {
        say!(
            "snapsat: the round run ahead while the last was measured was dropped by the stop \
             rule: {} candidates, {:.3} s, counted in neither the rounds nor the figures above, \
             but in the latencies below",
            r.dropped_candidates,
            r.dropped_seconds
        );
    }
}

/// Microseconds as a short human figure.
fn millis(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}
