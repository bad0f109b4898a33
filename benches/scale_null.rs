//! Null-workload scaling: how many ranks the coordinator keeps busy when the work itself
//! costs nothing.
//!
//! The real coordinator (merging, deduplication, the suite's writer thread, NCD's measuring
//! thread and the stop rule) runs a sharded Snap job over in-process links, as `--ranks`
//! does; its ranks are null ranks, each a thread whose every task takes a fixed time without
//! using a core (a sleep) and returns a real, valid test of the formula from a pool read
//! first. The tests are distinct, so all of them are merged, written and measured. For each
//! rank count it prints (and writes as CSV) the measured wall time against the ideal one
//! (every rank doing one task every `--task-ms` from the start to the last test) and their
//! ratio, the efficiency.
//!
//! ```text
//! cargo bench --bench scale_null -- FORMULA POOL --ranks 1,16,256 --task-ms 10 \
//!     --tests 100000 [--out FILE.csv]
//! ```
//!
//! POOL is a test file of the formula (`snapsat sample FORMULA --format bits -o POOL`) with
//! more distinct tests than `--tests`. `scripts/scale-null` makes it and runs the sweep.
#![allow(missing_docs)]

use snapsat::assignment::Assignment;
use snapsat::dimacs::{self, Strictness};
use snapsat::distribute::local::{links, relayed, Line};
use snapsat::distribute::protocol::{self, ToCoordinator, ToRank};
use snapsat::distribute::{Endpoint, Received, TransportError};
use snapsat::diversity::MeasuringThread;
use snapsat::metrics::Metrics;
use snapsat::sampler::repair::Completed;
use snapsat::sampler::task::{Drawn, Verdict};
use snapsat::sampler::{self, Observer, Sampling, SnapConfig, StopMetric};
use snapsat::solver::Solvers;
use snapsat::testfile::{read_tests, BackgroundWriter, TestFormat, TestWriter};
use snapsat::verify::Checker;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the null ranks hand out: the pool's tests, each once, rank `r` of `ranks` taking
/// the tests `r`, `r + ranks`, `r + 2·ranks`, … (distinct across the ranks of an MPI job too,
/// where each process reads its own share alone).
struct Pool {
    /// Each rank's share, by rank (empty for the ranks of other processes).
    shares: Vec<Vec<(Assignment, u64)>>,
}

impl Pool {
    /// The shares of `ranks` ranks of the pool at `path`, those of `mine` only.
    fn read(path: &Path, num_vars: usize, ranks: usize, mine: impl Fn(usize) -> bool) -> Pool {
        use std::io::BufRead;
        let mut shares: Vec<Vec<(Assignment, u64)>> = (0..ranks).map(|_| Vec::new()).collect();
        let file = std::io::BufReader::new(std::fs::File::open(path).expect("the pool"));
        for (i, line) in file.lines().enumerate() {
            let line = line.expect("the pool's lines");
            if mine(i % ranks) {
                let test = read_tests(&line, num_vars)
                    .expect("a test of the formula")
                    .remove(0);
                let fingerprint = test.fingerprint();
                shares[i % ranks].push((test, fingerprint));
            }
        }
        Pool { shares }
    }

    /// `tests` dealt to `ranks` ranks as [`Pool::read`] shares them.
    fn dealt(tests: &[(Assignment, u64)], ranks: usize) -> Pool {
        let mut shares: Vec<Vec<(Assignment, u64)>> = (0..ranks).map(|_| Vec::new()).collect();
        for (i, test) in tests.iter().enumerate() {
            shares[i % ranks].push(test.clone());
        }
        Pool { shares }
    }

    fn verdict(&self, rank: usize, k: usize) -> Verdict {
        let share = &self.shares[rank];
        let (test, fingerprint) = &share[k % share.len()];
        Verdict::Completed {
            done: Completed::solved(test.clone(), 1),
            fingerprint: *fingerprint,
        }
    }
}

/// Sleeps until `at` (the schedule is absolute, so that waking late does not add up).
fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

/// A null rank: speaks the coordinator's protocol as a rank of one thread does, each task
/// taking `task` of sleep.
struct NullRank<'p> {
    line: Line,
    pool: &'p Pool,
    /// The variables NCD is measured on, and this rank's share of it (a sharded run over
    /// several ranks): its tests compressed as a real rank's are.
    vars: &'p [usize],
    share: Option<MeasuringThread>,
    task: Duration,
    /// Tasks of a sharded round (N·k).
    per_round: usize,
    tasks_done: u64,
    busy: Duration,
    /// Messages that came while a round ran, taken before any newer one.
    early: VecDeque<Vec<u8>>,
}

impl NullRank<'_> {
    fn reply(&mut self, message: &ToCoordinator) -> Result<(), TransportError> {
        self.line.send(0, protocol::encode(message))
    }

    /// The next task's verdict, once its time has passed (`at`).
    fn verdict_at(&mut self, at: Instant) -> Verdict {
        sleep_until(at);
        let verdict = self.pool.verdict(self.line.rank, self.tasks_done as usize);
        self.tasks_done += 1;
        verdict
    }

    /// Serves the coordinator until it lets the rank go.
    fn serve(mut self) {
        loop {
            let bytes = match self.early.pop_front() {
                Some(bytes) => bytes,
                None => match self.line.receive() {
                    Ok((_, bytes)) => bytes,
                    Err(_) => return,
                },
            };
            let message = protocol::decode::<ToRank>(&bytes).expect("the coordinator's message");
            let sent = match message {
                ToRank::Start { .. } => self.reply(&ToCoordinator::Ready {
                    threads: 1,
                    host: "null".into(),
                }),
                ToRank::Shard {
                    plan,
                    measures_share,
                    ..
                } => {
                    if measures_share {
                        let vars = self.vars.to_vec();
                        self.share = Some(MeasuringThread::spawn_share(vars, plan.ncd_removals));
                    }
                    Ok(())
                }
                ToRank::Centroids(_) | ToRank::EndRound { .. } => Ok(()),
                ToRank::Tasks { batch, tasks } => {
                    let started = Instant::now();
                    let verdicts: Vec<Verdict> = (1..=tasks.len() as u32)
                        .map(|i| self.verdict_at(started + self.task * i))
                        .collect();
                    self.busy += started.elapsed();
                    self.reply(&ToCoordinator::Results {
                        batch,
                        verdicts,
                        busy_nanos: started.elapsed().as_nanos() as u64,
                    })
                }
                ToRank::ShardRound { round } => self.round(round),
                ToRank::Finish { .. } => {
                    let _ = self.reply(&ToCoordinator::Finished {
                        tasks: self.tasks_done,
                        busy_nanos: self.busy.as_nanos() as u64,
                        // Null ranks keep no tests: nothing to place.
                        placing_nanos: 0,
                        histograms: Metrics::default().to_bytes(),
                    });
                    return;
                }
            };
            if sent.is_err() {
                return;
            }
        }
    }

    /// A sharded round: a verdict a message, as a rank sends verdicts that take longer than
    /// its chunks' millisecond, until the round's tasks are done or the coordinator ends it.
    fn round(&mut self, round: u64) -> Result<(), TransportError> {
        let started = Instant::now();
        for i in 1..=self.per_round as u32 {
            let verdict = self.verdict_at(started + self.task * i);
            let mut ended = false;
            while let Some((_, bytes)) = self.line.try_receive()? {
                match protocol::decode::<ToRank>(&bytes) {
                    Ok(ToRank::EndRound { round: theirs }) if theirs == round => ended = true,
                    _ => self.early.push_back(bytes),
                }
            }
            if ended {
                break;
            }
            if let (Some(share), Verdict::Valid { test, .. }) = (&mut self.share, &verdict) {
                share.extend(vec![Arc::new(test.clone())]);
            }
            self.reply(&ToCoordinator::ShardResults {
                round,
                drawn: Drawn::default(),
                verdicts: vec![verdict],
                busy_nanos: self.task.as_nanos() as u64,
                last: false,
                share: None,
            })?;
        }
        self.busy += started.elapsed();
        let share = self.share.as_mut().map(|share| share.measures().of_rank());
        self.reply(&ToCoordinator::ShardResults {
            round,
            drawn: Drawn::default(),
            verdicts: Vec::new(),
            busy_nanos: 0,
            last: true,
            share,
        })
    }
}

/// Serves `line` as a null rank.
fn null_rank(line: Line, pool: &Pool, vars: &[usize], task: Duration, per_round: usize) {
    NullRank {
        line,
        pool,
        vars,
        share: None,
        task,
        per_round,
        tasks_done: 0,
        busy: Duration::ZERO,
        early: VecDeque::new(),
    }
    .serve();
}

/// The coordinator's relay: decodes the ranks' messages beside it, as `--ranks` runs do.
fn relay(
    inbox: crossbeam_channel::Receiver<(usize, Vec<u8>)>,
    _remote: crossbeam_channel::Receiver<(usize, Vec<u8>)>,
    arrived: crossbeam_channel::Sender<Received>,
) {
    for (rank, bytes) in inbox {
        let _ = arrived.send(Received::decode(rank, bytes));
    }
}

/// Writes the suite as the command line does, on a thread beside the coordinator.
struct Writing(BackgroundWriter<std::io::BufWriter<std::fs::File>>);

impl Observer for Writing {
    fn test(&mut self, test: &Arc<Assignment>) -> std::io::Result<()> {
        self.0.write(test)
    }
}

struct Args {
    formula: PathBuf,
    pool: PathBuf,
    ranks: Vec<usize>,
    task: Duration,
    tests: usize,
    out: Option<PathBuf>,
}

fn args() -> Args {
    let mut words = std::env::args().skip(1).filter(|w| w != "--bench");
    let mut positional = Vec::new();
    let mut parsed = Args {
        formula: PathBuf::new(),
        pool: PathBuf::new(),
        ranks: vec![1, 4, 16, 64, 256],
        task: Duration::from_millis(10),
        tests: 100_000,
        out: None,
    };
    while let Some(word) = words.next() {
        let mut value = || words.next().expect("a value after the flag");
        match word.as_str() {
            "--ranks" => {
                parsed.ranks = value()
                    .split(',')
                    .map(|r| r.parse().expect("rank counts"))
                    .collect()
            }
            "--task-ms" => {
                parsed.task = Duration::from_secs_f64(value().parse::<f64>().expect("ms") / 1e3)
            }
            "--tests" => parsed.tests = value().parse().expect("a test count"),
            "--out" => parsed.out = Some(PathBuf::from(value())),
            _ => positional.push(PathBuf::from(word)),
        }
    }
    let [formula, pool] = <[PathBuf; 2]>::try_from(positional).expect(
        "usage: scale_null FORMULA POOL [--ranks 1,16] [--task-ms 10] [--tests N] [--out CSV]",
    );
    Args {
        formula,
        pool,
        ..parsed
    }
}

/// The job's parameters for `ranks` ranks.
fn config(tests: usize) -> SnapConfig {
    SnapConfig {
        sharded: true,
        max_tests: Some(tests),
        // Rounds go on until the suite is full: NCD is measured but never stops it.
        min_improvement: f64::NEG_INFINITY,
        stop_metric: StopMetric::Ncd,
        time_limit: Duration::from_secs(3600),
        seed: 1,
        ..SnapConfig::default()
    }
}

/// The CSV row of a job of `ranks` ranks that took `seconds` from the ranks' start.
fn row(
    args: &Args,
    ranks: usize,
    seconds: f64,
    report: &sampler::Report,
    config: &SnapConfig,
    writer_seconds: f64,
) -> String {
    let tests = report.distinct_tests;
    let task = args.task.as_secs_f64();
    let initial = config.samples;
    let ideal =
        task * (initial.div_ceil(ranks) + (tests - initial.min(tests)).div_ceil(ranks)) as f64;
    format!(
        "{ranks},{},{tests},{seconds:.3},{ideal:.3},{:.4},{:.0},{:.0},{:.3},{:.3},{:.3},{writer_seconds:.3}",
        task * 1e3,
        ideal / seconds,
        ranks as f64 / task,
        tests as f64 / seconds,
        report.coordinator_seconds,
        report.merge_seconds,
        report.seconds.ncd,
    )
}

const HEADER: &str = "ranks,task_ms,tests,seconds,ideal_seconds,efficiency,offered_per_second,merged_per_second,coordinator_seconds,merge_seconds,ncd_seconds,writer_seconds";

fn main() {
    let args = args();
    let cnf = dimacs::read_file(&args.formula, Strictness::Strict)
        .expect("the formula")
        .cnf;
    let checker = Checker::new(&cnf);
    #[cfg(feature = "mpi")]
    if let Some(job) = snapsat::distribute::mpi::Job::init().filter(|job| job.size() > 1) {
        return under_mpi(&job, &args, &checker);
    }
    let tests = Pool::read(&args.pool, cnf.num_vars(), 1, |_| true)
        .shares
        .remove(0);
    assert!(
        tests.iter().all(|(t, _)| checker.satisfies(t)),
        "every pool test satisfies the formula"
    );
    let vars = cnf.projection();
    println!("{HEADER}");
    let mut rows = vec![HEADER.to_string()];
    for &ranks in &args.ranks {
        let pool = Pool::dealt(&tests, ranks);
        let config = config(args.tests);
        let per_round = config.samples * config.clusters;
        let interrupt = AtomicBool::new(false);
        let run = Sampling {
            checker: &checker,
            solvers: Solvers::splr(),
            config: &config,
            resumed: &[],
            interrupt: &interrupt,
        };
        let (mut observer, suite) = writing(cnf.num_vars());
        let (hub, lines) = links(ranks);
        let started = Instant::now();
        let null_side = |line: Line| null_rank(line, &pool, &vars, args.task, per_round);
        let report = relayed(hub, ranks, relay, |endpoint| {
            snapsat::distribute::local::coordinate_with(
                endpoint,
                lines,
                &null_side,
                &run,
                &mut observer,
            )
        })
        .expect("the null job");
        let seconds = started.elapsed().as_secs_f64();
        let written = observer.0.finish().expect("the suite written");
        assert_eq!(written.tests, report.distinct_tests);
        let _ = std::fs::remove_file(&suite);
        let row = row(
            &args,
            ranks,
            seconds,
            &report,
            &config,
            written.busy.as_secs_f64(),
        );
        println!("{row}");
        rows.push(row);
    }
    if let Some(out) = &args.out {
        let mut file = std::fs::File::create(out).expect("the CSV");
        writeln!(file, "{}", rows.join("\n")).expect("the CSV written");
    }
}

/// The suite's writer, as the command line's (bits, on a thread beside the coordinator),
/// into a file of the temporary folder, and that file's path.
fn writing(num_vars: usize) -> (Writing, PathBuf) {
    let path = std::env::temp_dir().join(format!("snapsat-scale-null-{}", std::process::id()));
    let file = std::fs::File::create(&path).expect("the suite's file");
    let writer = BackgroundWriter::spawn(
        TestWriter::new(std::io::BufWriter::new(file), TestFormat::Bits),
        num_vars,
    )
    .expect("the writer thread");
    (Writing(writer), path)
}

/// One job of as many ranks as `mpirun` started: rank 0 coordinates (and serves a null
/// share), the others serve null shares; rank 0 prints the CSV header and row.
#[cfg(feature = "mpi")]
fn under_mpi(job: &snapsat::distribute::mpi::Job, args: &Args, checker: &Checker) {
    let ranks = job.size();
    let pool = Pool::read(&args.pool, checker.cnf().num_vars(), ranks, |r| {
        r == job.rank()
    });
    let config = config(args.tests);
    let per_round = config.samples * config.clusters;
    let vars = checker.cnf().projection();
    let null_side = |line: Line| null_rank(line, &pool, &vars, args.task, per_round);
    if job.rank() > 0 {
        job.serve_with(null_side).expect("the rank's null share");
        return;
    }
    let interrupt = AtomicBool::new(false);
    let run = Sampling {
        checker,
        solvers: Solvers::splr(),
        config: &config,
        resumed: &[],
        interrupt: &interrupt,
    };
    let (mut observer, suite) = writing(checker.cnf().num_vars());
    let started = Instant::now();
    let report = job
        .coordinate_with(&null_side, &run, &mut observer)
        .expect("the null job");
    let seconds = started.elapsed().as_secs_f64();
    let written = observer.0.finish().expect("the suite written");
    assert_eq!(written.tests, report.distinct_tests);
    let _ = std::fs::remove_file(&suite);
    println!("{HEADER}");
    println!(
        "{}",
        row(
            args,
            ranks,
            seconds,
            &report,
            &config,
            written.busy.as_secs_f64()
        )
    );
}
