//! A rank's side: the coordinator's batches (or its own sharded rounds) done on its threads.

use super::protocol::{self, ToCoordinator, ToRank};
use super::transport::{Endpoint, TransportError};
use crate::budget::Budget;
use crate::diversity::RankMeasures;
use crate::sampler::snap::shard::ShardStream;
use crate::sampler::task::{Demand, Drawn, Repaired, Verdict};
use crate::sampler::work::{host_name, ShardRounds, Worker};
use crate::solver::Solvers;
use crate::testfile::{place, PartWriter, Parts};
use crate::verify::Checker;
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Verdicts a rank sends together at most in a sharded round, so that the coordinator merges
/// them while the rank works rather than all at its round's end (when its ranks would wait).
const SHARD_CHUNK: usize = 64;

/// How long a rank holds a verdict of a sharded round before sending what it has: tests reach
/// the suite's file soon after they are found, however slow the repairs.
const SHARD_CHUNK_WAIT: Duration = Duration::from_millis(1);

/// A verdict's test kept in the rank's part (`rank`): the verdict then names it by place.
fn kept(verdict: Verdict, part: &mut PartWriter, rank: usize) -> Verdict {
    let (test, fingerprint, repaired) = match verdict {
        Verdict::Valid { test, fingerprint } => (test, fingerprint, None),
        Verdict::Completed { done, fingerprint } => {
            let repaired = Some(Repaired::from(&done));
            (done.test, fingerprint, repaired)
        }
        other => return other,
    };
    Verdict::Kept {
        rank: rank as u32,
        fingerprint,
        place: part.keep(test, fingerprint).map(|number| (number, 0)),
        repaired,
    }
}

/// Writes the tests of `chunk` kept since the last chunk to the part, and puts their lines'
/// lengths in their verdicts: a verdict leaves the rank once its test is on disk.
fn written(part: &mut PartWriter, chunk: &mut [Verdict]) -> Result<(), TransportError> {
    part.flush()
        .map_err(|e| TransportError::Output(e.to_string()))?;
    for verdict in chunk {
        if let Verdict::Kept {
            place: Some((number, bytes)),
            ..
        } = verdict
        {
            *bytes = part
                .line_bytes(*number)
                .expect("a kept test is written at the flush");
        }
    }
    Ok(())
}

/// Draws and does round `round` of `stream` on `worker`, sending its verdicts to the
/// coordinator in task order, a chunk at a time, until it says it has what it wants of the
/// round (`EndRound`: no more tasks are started); the last chunk says so and carries what was
/// drawn. Any other message that comes meanwhile is kept in `early`. With a `part`, the tests
/// new to the rank go there, and their verdicts name them by place.
fn send_shard_round(
    stream: &mut ShardStream,
    worker: &mut Worker,
    (round, rank): (u64, usize),
    endpoint: &mut dyn Endpoint,
    early: &mut VecDeque<Vec<u8>>,
    mut part: Option<&mut PartWriter>,
) -> Result<(), TransportError> {
    let send = |endpoint: &mut dyn Endpoint,
                part: Option<&mut PartWriter>,
                mut verdicts: Vec<Verdict>,
                since: Instant,
                last: Option<(Drawn, Option<RankMeasures>)>| {
        if let Some(part) = part {
            written(part, &mut verdicts)?;
        }
        let is_last = last.is_some();
        let (drawn, share) = last.unwrap_or_default();
        let message = ToCoordinator::ShardResults {
            round,
            drawn,
            verdicts,
            busy_nanos: since.elapsed().as_nanos() as u64,
            last: is_last,
            share,
        };
        endpoint.send(0, protocol::encode(&message))
    };
    let mut chunk = Vec::new();
    let mut since = Instant::now();
    let mut failed = None;
    let mut ended = false;
    let drawn = stream
        .round(round as usize, worker, &mut |burst| {
            match part.as_deref_mut() {
                Some(part) => chunk.extend(burst.map(|verdict| kept(verdict, part, rank))),
                None => chunk.extend(burst),
            }
            if failed.is_none()
                && (chunk.len() >= SHARD_CHUNK || since.elapsed() >= SHARD_CHUNK_WAIT)
            {
                let verdicts = std::mem::take(&mut chunk);
                let part = part.as_deref_mut();
                failed = send(&mut *endpoint, part, verdicts, since, None).err();
                since = Instant::now();
            }
            while !ended && failed.is_none() {
                match endpoint.try_receive() {
                    Ok(Some((_, bytes))) => match protocol::decode::<ToRank>(&bytes) {
                        Ok(ToRank::EndRound { round: theirs }) if theirs == round => ended = true,
                        _ => early.push_back(bytes),
                    },
                    Ok(None) => break,
                    Err(e) => failed = Some(e),
                }
            }
            Ok(if ended || failed.is_some() {
                Demand::Enough
            } else {
                Demand::More
            })
        })
        .expect("the rank's delivery never fails");
    if let Some(e) = failed {
        return Err(e);
    }
    let share = stream.share();
    send(endpoint, part, chunk, since, Some((drawn, share)))
}

/// A rank's side: what it needs to do the coordinator's tasks.
pub struct Rank<'a> {
    /// The formula this rank read, and the clause check.
    pub checker: &'a Checker<'a>,
    /// The solvers its tasks use.
    pub solvers: Solvers<'a>,
    /// Set on SIGINT/SIGTERM: remaining tasks are skipped.
    pub interrupt: &'a AtomicBool,
    /// This rank's number.
    pub rank: usize,
}

impl Rank<'_> {
    /// Does the coordinator's batches on the current rayon pool until told to finish (or
    /// the coordinator goes away). Errors are reported to the coordinator too.
    pub fn serve(&self, endpoint: &mut dyn Endpoint) -> Result<(), TransportError> {
        let result = self.serve_batches(&mut *endpoint);
        if let Err(e) = &result {
            let _ = endpoint.send(0, protocol::encode(&ToCoordinator::Failed(e.to_string())));
        }
        result
    }

    fn serve_batches(&self, endpoint: &mut dyn Endpoint) -> Result<(), TransportError> {
        let (checker, solvers, interrupt, rank) =
            (self.checker, self.solvers, self.interrupt, self.rank);
        let threads = rayon::current_num_threads();
        let mut worker: Option<Worker> = None;
        let mut stream: Option<ShardStream> = None;
        let mut part: Option<(Parts, PartWriter)> = None;
        let reply = |endpoint: &mut dyn Endpoint, message: &ToCoordinator| {
            endpoint.send(0, protocol::encode(message))
        };
        // Messages that came while a sharded round ran, taken before any newer one.
        let mut early: VecDeque<Vec<u8>> = VecDeque::new();
        loop {
            let next = early.pop_front().map(Ok);
            let bytes = match next.unwrap_or_else(|| endpoint.receive().map(|(_, bytes)| bytes)) {
                Ok(bytes) => bytes,
                Err(TransportError::Disconnected) => return Ok(()),
                Err(e) => return Err(e),
            };
            let started =
                || TransportError::Protocol("work arrived before the start message".into());
            match protocol::decode::<ToRank>(&bytes)? {
                ToRank::Start {
                    fingerprint,
                    seconds_left,
                } => {
                    let mine = checker.cnf().fingerprint();
                    if fingerprint != mine {
                        return Err(TransportError::Protocol(format!(
                        "rank {rank} read another formula (fingerprint {mine:016x}, coordinator's {fingerprint:016x})"
                    )));
                    }
                    let left = Duration::try_from_secs_f64(seconds_left).unwrap_or(Duration::MAX);
                    worker = Some(Worker::new(checker, solvers, Budget::new(left, interrupt)));
                    reply(
                        endpoint,
                        &ToCoordinator::Ready {
                            threads,
                            host: host_name(),
                        },
                    )?;
                }
                ToRank::Centroids(centroids) => worker
                    .as_mut()
                    .ok_or_else(started)?
                    .set_centroids(&centroids),
                ToRank::Tasks { batch, tasks } => {
                    let worker = worker.as_mut().ok_or_else(started)?;
                    let t = Instant::now();
                    let verdicts = worker.run(&tasks);
                    let busy_nanos = t.elapsed().as_nanos() as u64;
                    reply(
                        endpoint,
                        &ToCoordinator::Results {
                            batch,
                            verdicts,
                            busy_nanos,
                        },
                    )?;
                }
                ToRank::Shard {
                    plan,
                    samples,
                    measures_share,
                    parts,
                } => {
                    if let Some(parts) = parts {
                        let writer = PartWriter::create(&parts, rank, &samples)
                            .map_err(|e| TransportError::Output(e.to_string()))?;
                        part = Some((parts, writer));
                    }
                    stream = Some(ShardStream::new(plan, rank, samples, measures_share));
                }
                ToRank::ShardRound { round } => {
                    let worker = worker.as_mut().ok_or_else(started)?;
                    let stream = stream.as_mut().ok_or_else(|| {
                        TransportError::Protocol("a sharded round before its samples".into())
                    })?;
                    let part = part.as_mut().map(|(_, writer)| writer);
                    send_shard_round(stream, worker, (round, rank), endpoint, &mut early, part)?;
                }
                // The round it ends was over when it came.
                ToRank::EndRound { .. } => {}
                ToRank::Finish { places } => {
                    if let Some((parts, writer)) = part.take() {
                        // Every test numbered was written before its verdict left.
                        drop(writer);
                        place(&parts, rank, &places)
                            .map_err(|e| TransportError::Output(format!("rank {rank}: {e}")))?;
                    }
                    if let Some(worker) = &worker {
                        reply(endpoint, &finished(worker, stream.as_ref(), rank, threads))?;
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// A rank's last message: its figures, its rounds' drawing counted as work.
fn finished(
    worker: &Worker,
    stream: Option<&ShardStream>,
    rank: usize,
    threads: usize,
) -> ToCoordinator {
    let report = worker.report(rank, threads);
    let drawing = stream.map_or(Duration::ZERO, ShardStream::drawing);
    ToCoordinator::Finished {
        tasks: report.tasks,
        busy_nanos: ((report.busy_seconds + drawing.as_secs_f64()) * 1e9) as u64,
        histograms: report.metrics.to_bytes(),
    }
}
