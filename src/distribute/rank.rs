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

/// Where a round's messages go: to the coordinator once it has asked for the round, held
/// until then (a round done ahead).
struct Outbox {
    asked: bool,
    held: Vec<Vec<u8>>,
}

impl Outbox {
    fn post(&mut self, endpoint: &mut dyn Endpoint, bytes: Vec<u8>) -> Result<(), TransportError> {
        if self.asked {
            endpoint.send(0, bytes)
        } else {
            self.held.push(bytes);
            Ok(())
        }
    }

    /// The coordinator asks for the round: what was held goes, in order, and the rest follows.
    fn ask(&mut self, endpoint: &mut dyn Endpoint) -> Result<(), TransportError> {
        self.asked = true;
        std::mem::take(&mut self.held)
            .into_iter()
            .try_for_each(|bytes| endpoint.send(0, bytes))
    }
}

/// A rank does its next round ahead only where no verdict of the last took longer to come
/// than this: a run that stops then waits at most about this long for the rank's task under
/// way (rounds done ahead cannot stop a task once it has started).
const AHEAD_TASK_LIMIT: Duration = Duration::from_secs(1);

/// What became of a round's messages, and whether the rank goes on to the next round ahead.
enum RoundSent {
    /// All sent: the coordinator had asked for the round, or did while it ran.
    Sent {
        /// The round ran to its end and its tasks were short (see [`AHEAD_TASK_LIMIT`]).
        go_ahead: bool,
    },
    /// The round was done ahead and nobody has asked for it yet: its messages, in order.
    Held {
        /// The messages.
        held: Vec<Vec<u8>>,
        /// As in `Sent`.
        go_ahead: bool,
    },
    /// A round done ahead that another message cut short (the run ends): nothing was sent.
    Abandoned,
}

/// Draws and does round `round` of `stream` on `worker`, sending its verdicts to the
/// coordinator in task order, a chunk at a time, until it says it has what it wants of the
/// round (`EndRound`: no more tasks are started); the last chunk says so and carries what was
/// drawn. Any other message that comes meanwhile is kept in `early`. With a `part`, the tests
/// new to the rank go there, and their verdicts name them by place.
///
/// A round the coordinator has not asked for yet (`asked` false) is done ahead: its messages
/// are held until `ShardRound` asks for it, and any other message cuts it short, so a rank
/// that ends its round before the others does the next meanwhile. A round's tasks and
/// verdicts do not depend on when it runs, so the suite does not either.
fn send_shard_round(
    stream: &mut ShardStream,
    worker: &mut Worker,
    (round, rank): (u64, usize),
    endpoint: &mut dyn Endpoint,
    early: &mut VecDeque<Vec<u8>>,
    mut part: Option<&mut PartWriter>,
    asked: bool,
) -> Result<RoundSent, TransportError> {
    let mut outbox = Outbox {
        asked,
        held: Vec::new(),
    };
    let send = |endpoint: &mut dyn Endpoint,
                outbox: &mut Outbox,
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
        outbox.post(endpoint, protocol::encode(&message))
    };
    let mut chunk = Vec::new();
    let mut since = Instant::now();
    // The longest wait for a verdict (the draw counted in the first's).
    let (mut slowest, mut last_verdict) = (Duration::ZERO, Instant::now());
    let mut failed = None;
    let mut ended = false;
    let mut abandoned = false;
    let drawn = stream
        .round(round as usize, worker, &mut |burst| {
            let now = Instant::now();
            slowest = slowest.max(now.duration_since(last_verdict));
            last_verdict = now;
            match part.as_deref_mut() {
                Some(part) => chunk.extend(burst.map(|verdict| kept(verdict, part, rank))),
                None => chunk.extend(burst),
            }
            if failed.is_none()
                && (chunk.len() >= SHARD_CHUNK || now.duration_since(since) >= SHARD_CHUNK_WAIT)
            {
                let verdicts = std::mem::take(&mut chunk);
                let part = part.as_deref_mut();
                failed = send(&mut *endpoint, &mut outbox, part, verdicts, since, None).err();
                since = Instant::now();
            }
            while !ended && !abandoned && failed.is_none() {
                match endpoint.try_receive() {
                    Ok(Some((_, bytes))) => match protocol::decode::<ToRank>(&bytes) {
                        Ok(ToRank::EndRound { round: theirs }) if theirs == round => ended = true,
                        Ok(ToRank::ShardRound { round: theirs })
                            if theirs == round && !outbox.asked =>
                        {
                            failed = outbox.ask(&mut *endpoint).err();
                        }
                        // The end of a round this rank has finished.
                        Ok(ToRank::EndRound { .. }) if !outbox.asked => {}
                        _ => {
                            abandoned = !outbox.asked;
                            early.push_back(bytes);
                        }
                    },
                    Ok(None) => break,
                    Err(e) => failed = Some(e),
                }
            }
            Ok(if ended || abandoned || failed.is_some() {
                Demand::Enough
            } else {
                Demand::More
            })
        })
        .expect("the rank's delivery never fails");
    if let Some(e) = failed {
        return Err(e);
    }
    if abandoned {
        return Ok(RoundSent::Abandoned);
    }
    let share = stream.share();
    send(
        endpoint,
        &mut outbox,
        part,
        chunk,
        since,
        Some((drawn, share)),
    )?;
    let go_ahead = !ended && slowest < AHEAD_TASK_LIMIT;
    Ok(if outbox.asked {
        RoundSent::Sent { go_ahead }
    } else {
        RoundSent::Held {
            held: outbox.held,
            go_ahead,
        }
    })
}

/// A rank's rounds of a sharded run.
struct RankRounds {
    stream: ShardStream,
    /// The run lets ranks do rounds ahead ([`crate::sampler::task::ShardPlan::ahead`]).
    may_go_ahead: bool,
    /// A round done before the coordinator asked for it: its number, its messages, and
    /// whether the rank goes on ahead after it.
    ahead: Option<(u64, Vec<Vec<u8>>, bool)>,
}

impl RankRounds {
    /// Sends round `round` (done now, unless it was done ahead), then does the next rounds
    /// ahead, while the coordinator merges this one and the other ranks end theirs.
    fn answer(
        &mut self,
        (round, rank): (u64, usize),
        worker: &mut Worker,
        endpoint: &mut dyn Endpoint,
        early: &mut VecDeque<Vec<u8>>,
        mut part: Option<&mut PartWriter>,
    ) -> Result<(), TransportError> {
        let stream = &mut self.stream;
        let mut go_ahead = match self.ahead.take() {
            Some((done, held, go_ahead)) if done == round => {
                held.into_iter()
                    .try_for_each(|bytes| endpoint.send(0, bytes))?;
                go_ahead
            }
            Some((done, ..)) => {
                return Err(TransportError::Protocol(format!(
                    "round {round} asked for while round {done} was done ahead"
                )))
            }
            None => {
                let part = part.as_deref_mut();
                match send_shard_round(stream, worker, (round, rank), endpoint, early, part, true)?
                {
                    RoundSent::Sent { go_ahead } => go_ahead,
                    _ => unreachable!("a round asked for is sent"),
                }
            }
        };
        go_ahead &= self.may_go_ahead;
        let mut next = round + 1;
        while go_ahead {
            let part = part.as_deref_mut();
            match send_shard_round(stream, worker, (next, rank), endpoint, early, part, false)? {
                RoundSent::Sent { go_ahead: again } => go_ahead = again,
                RoundSent::Held { held, go_ahead } => {
                    self.ahead = Some((next, held, go_ahead));
                    break;
                }
                RoundSent::Abandoned => break,
            }
            next += 1;
        }
        Ok(())
    }
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
        let mut rounds: Option<RankRounds> = None;
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
                    rounds = Some(RankRounds {
                        may_go_ahead: plan.ahead,
                        stream: ShardStream::new(plan, rank, samples, measures_share),
                        ahead: None,
                    });
                }
                ToRank::ShardRound { round } => {
                    let worker = worker.as_mut().ok_or_else(started)?;
                    let rounds = rounds.as_mut().ok_or_else(|| {
                        TransportError::Protocol("a sharded round before its samples".into())
                    })?;
                    let part = part.as_mut().map(|(_, writer)| writer);
                    rounds.answer((round, rank), worker, endpoint, &mut early, part)?;
                }
                // The round it ends was over when it came.
                ToRank::EndRound { .. } => {}
                ToRank::Finish { places } => {
                    let placing = Instant::now();
                    if let Some((parts, writer)) = part.take() {
                        // Every test numbered was written before its verdict left.
                        drop(writer);
                        place(&parts, rank, &places)
                            .map_err(|e| TransportError::Output(format!("rank {rank}: {e}")))?;
                    }
                    let placing = placing.elapsed();
                    if let Some(worker) = &worker {
                        let stream = rounds.as_ref().map(|r| &r.stream);
                        reply(endpoint, &finished(worker, stream, placing, rank, threads))?;
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// A rank's last message: its figures, its rounds' drawing counted as work, and its time
/// placing its kept tests.
fn finished(
    worker: &Worker,
    stream: Option<&ShardStream>,
    placing: Duration,
    rank: usize,
    threads: usize,
) -> ToCoordinator {
    let report = worker.report(rank, threads);
    let drawing = stream.map_or(Duration::ZERO, ShardStream::drawing);
    ToCoordinator::Finished {
        tasks: report.tasks,
        busy_nanos: ((report.busy_seconds + drawing.as_secs_f64()) * 1e9) as u64,
        placing_nanos: placing.as_nanos() as u64,
        histograms: report.metrics.to_bytes(),
    }
}
