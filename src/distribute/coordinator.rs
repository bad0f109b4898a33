//! The coordinator: the sampler's [`Workforce`] on rank 0, handing tasks to the ranks in
//! batches and merging their verdicts in task order.

use super::protocol::{self, ToCoordinator, ToRank};
use super::transport::{Ranks, Received, TransportError};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::diversity::RankMeasures;
use crate::metrics::{Metrics, Phase};
use crate::sampler::task::{Deliver, Demand, Drawn, ShardPlan, Task, Verdict};
use crate::sampler::work::{not_sharded, RankReport, Workforce};
use crate::sampler::SampleError;
use crate::testfile::Parts;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Batches a rank holds at once: the one it works on and the next, already sent, so it never
/// waits a round trip (a blocking MPI send would stall the coordinator; ours do not block).
const BATCHES_IN_FLIGHT: usize = 2;

/// A thread's time on a task from which tasks count as long: a round trip is then a small
/// part of a task, and what matters is that no rank holds tasks while another waits. Long
/// tasks go out one a thread, a batch a rank at a time; a fresh solution of a hard formula
/// can take seconds, and karatsuba.sk_7_41's initial solutions left one of two ranks idle
/// while the other held half of them.
const LONG_TASK: Duration = Duration::from_millis(5);

/// What the coordinator knows of a rank.
#[derive(Default)]
struct RankState {
    threads: usize,
    host: String,
    messages: u64,
    bytes_to: u64,
    bytes_from: u64,
    round_trips: Metrics,
}

/// The coordinator's side: a [`Workforce`] whose tasks run on the ranks behind an endpoint.
pub struct Coordinator<'a, E: Ranks> {
    endpoint: E,
    ranks: Vec<RankState>,
    centroids: Vec<Assignment>,
    next_batch: u64,
    budget: Budget<'a>,
    finished: bool,
    /// The ranks have their samples and draw their own rounds.
    sharded: bool,
    /// Sharded over several ranks: each measures its own tests.
    measures_shares: bool,
    /// What the ranks measured at the end of the last sharded round.
    shares: Option<Vec<RankMeasures>>,
    /// Where the ranks may keep their tests, and, once they are to, where they place them.
    parts: Option<Parts>,
    places: Vec<Vec<(u64, u64)>>,
    /// Tasks go to the ranks in fixed shares rather than in batches as ranks free up (see
    /// [`Coordinator::fix_shares`]).
    fixed_shares: bool,
    /// The ranks' time on batches so far, as they reported it.
    busy: Duration,
    /// Time encoding and sending messages.
    messaging: Duration,
    /// The relay's time decoding the ranks' messages, beside the coordinator's thread.
    decoding_beside: Duration,
    /// A thread's time per task in the last batch returned, carried to the next list of
    /// tasks (the first solution, alone, tells how long the others may take).
    task_time: Option<Duration>,
}

impl<'a, E: Ranks> Coordinator<'a, E> {
    /// Starts every rank on `cnf_fingerprint` with what `budget` leaves; fails when a rank
    /// refuses (it read another formula).
    pub fn connect(
        endpoint: E,
        cnf_fingerprint: u64,
        budget: Budget<'a>,
    ) -> Result<Self, SampleError> {
        let mut coordinator = Coordinator {
            ranks: (0..endpoint.ranks())
                .map(|_| RankState::default())
                .collect(),
            endpoint,
            centroids: Vec::new(),
            next_batch: 0,
            budget,
            finished: false,
            sharded: false,
            measures_shares: false,
            shares: None,
            parts: None,
            places: Vec::new(),
            fixed_shares: false,
            busy: Duration::ZERO,
            messaging: Duration::ZERO,
            decoding_beside: Duration::ZERO,
            task_time: None,
        };
        coordinator.broadcast(&ToRank::Start {
            fingerprint: cnf_fingerprint,
            seconds_left: budget
                .remaining()
                .map_or(f64::INFINITY, |left| left.as_secs_f64()),
        })?;
        for _ in 0..coordinator.ranks.len() {
            let (rank, message) = coordinator.receive()?;
            match message {
                ToCoordinator::Ready { threads, host } => {
                    coordinator.ranks[rank].threads = threads;
                    coordinator.ranks[rank].host = host;
                }
                other => return Err(unexpected(rank, &other).into()),
            }
        }
        Ok(coordinator)
    }

    /// From now on, [`Workforce::run`] hands every rank a fixed share of the tasks (by its
    /// threads, in rank order), not batches from one queue as ranks free up: which rank does
    /// a task then depends on the task, not on timing. A run that shards its rounds asks for
    /// it so that its initial solutions, the only tasks it hands out, go to the same ranks
    /// every time: a session (native, cadical) answers by what it solved before, so the suite
    /// is then a function of the seed and the ranks with any backend. A share goes out in
    /// batches, so that a sampler with enough stops it.
    pub fn fix_shares(&mut self) {
        self.fixed_shares = true;
    }

    /// The first task of each rank's fixed share of `total`, by its threads, and `total`.
    /// What does not divide evenly goes to the first ranks: a lone task to rank 0, which
    /// needs no message.
    fn share_bounds(&self, total: usize) -> Vec<usize> {
        let threads: Vec<usize> = self.ranks.iter().map(|r| r.threads.max(1)).collect();
        let all: usize = threads.iter().sum();
        let mut before = 0;
        let mut bounds = Vec::with_capacity(threads.len() + 1);
        for t in threads {
            bounds.push((total * before).div_ceil(all));
            before += t;
        }
        bounds.push(total);
        bounds
    }

    fn send(&mut self, rank: usize, message: &ToRank) -> Result<(), TransportError> {
        let started = Instant::now();
        let bytes = protocol::encode(message);
        let state = &mut self.ranks[rank];
        state.messages += 1;
        state.bytes_to += bytes.len() as u64;
        let sent = self.endpoint.send_to(rank, bytes);
        self.messaging += started.elapsed();
        sent
    }

    fn broadcast(&mut self, message: &ToRank) -> Result<(), TransportError> {
        (0..self.ranks.len()).try_for_each(|rank| self.send(rank, message))
    }

    /// The next message from a rank, counted.
    fn receive(&mut self) -> Result<(usize, ToCoordinator), TransportError> {
        let Received {
            rank,
            size,
            message,
            decoding,
        } = self.endpoint.next_message()?;
        self.decoding_beside += decoding;
        let state = self
            .ranks
            .get_mut(rank)
            .ok_or_else(|| TransportError::Protocol(format!("message from unknown rank {rank}")))?;
        state.messages += 1;
        state.bytes_from += size as u64;
        match message? {
            ToCoordinator::Failed(why) => {
                Err(TransportError::Protocol(format!("rank {rank}: {why}")))
            }
            ToCoordinator::Refused(why) => {
                Err(TransportError::Refused(format!("rank {rank}: {why}")))
            }
            message => Ok((rank, message)),
        }
    }

    /// Tasks for `rank`'s next batch when `remaining` are left to it and ranks of
    /// `sharing_threads` threads in all (its own, for a fixed share): its share of half the
    /// remainder, so early batches are large and the last ones small enough to even out, and
    /// a sampler with enough stops what is left.
    fn batch_size(&self, rank: usize, remaining: usize, sharing_threads: usize) -> usize {
        let threads = self.ranks[rank].threads.max(1);
        (remaining * threads)
            .div_ceil(2 * sharing_threads)
            .max(threads)
            .min(remaining)
    }

    fn stopping(&self) -> bool {
        self.budget.exhausted()
    }
}

impl<E: Ranks> Coordinator<'_, E> {
    /// The next batch of verdicts a rank returns, checked against what it was sent
    /// (`in_flight`: batch → rank, first task, tasks, sent at), with its round trip (from the
    /// later of its sending and the rank's return before, `last_return`) and busy time
    /// recorded: the rank, where its verdicts go in the task list, and the verdicts.
    fn batch_returned(
        &mut self,
        in_flight: &mut HashMap<u64, (usize, usize, usize, Instant)>,
        last_return: &mut [Instant],
    ) -> Result<(usize, usize, Vec<Verdict>), SampleError> {
        let (rank, message) = self.receive()?;
        let ToCoordinator::Results {
            batch,
            verdicts: done,
            busy_nanos,
        } = message
        else {
            return Err(unexpected(rank, &message).into());
        };
        let (owner, first, count, sent) = in_flight.remove(&batch).ok_or_else(|| {
            TransportError::Protocol(format!("rank {rank} returned unknown batch {batch}"))
        })?;
        if owner != rank || done.len() != count {
            return Err(TransportError::Protocol(format!(
                "rank {rank} returned {} verdicts for batch {batch} of rank {owner} ({count} tasks)",
                done.len()
            ))
            .into());
        }
        let trip = sent
            .max(last_return[rank])
            .elapsed()
            .saturating_sub(Duration::from_nanos(busy_nanos));
        self.ranks[rank].round_trips.record(Phase::RoundTrip, trip);
        self.busy += Duration::from_nanos(busy_nanos);
        if count > 0 {
            let threads = self.ranks[rank].threads.max(1) as u64;
            self.task_time = Some(Duration::from_nanos(
                busy_nanos.saturating_mul(threads) / count as u64,
            ));
        }
        last_return[rank] = Instant::now();
        Ok((rank, first, done))
    }

    /// Hands `tasks` to the ranks, each verdict to `deliver` in task order (see
    /// [`Workforce::run`]): each rank its share of them where `shares` gives the first
    /// task of every rank's (and the total), otherwise in batches as ranks free up.
    fn hand_out(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
        shares: Option<Vec<usize>>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        if centroids != self.centroids.as_slice() {
            self.centroids = centroids.to_vec();
            self.broadcast(&ToRank::Centroids(self.centroids.clone()))?;
        }
        let total = tasks.len();
        let mut tasks: Vec<Option<Task>> = tasks.into_iter().map(Some).collect();
        let mut verdicts: Vec<Option<Verdict>> = (0..total).map(|_| None).collect();
        // batch id → (rank, first task index, task count, sent at)
        let mut in_flight: HashMap<u64, (usize, usize, usize, Instant)> = HashMap::new();
        let mut pending = vec![0usize; self.ranks.len()];
        // A rank starts a queued batch when it returns the one before, so a batch's round
        // trip counts from the later of its sending and that return.
        let mut last_return = vec![Instant::now(); self.ranks.len()];
        // The next task to hand out: of all (`next`), or of each rank's fixed share.
        let mut next = 0;
        let mut share_next: Vec<usize> = shares.clone().unwrap_or_default();
        let all_threads: usize = self.ranks.iter().map(|r| r.threads.max(1)).sum();
        let mut delivered = 0;
        let mut enough = false;
        loop {
            if !self.stopping() && !enough {
                let long = self.task_time.is_some_and(|time| time >= LONG_TASK);
                let in_flight_limit = if long { 1 } else { BATCHES_IN_FLIGHT };
                for (rank, held) in pending.iter_mut().enumerate() {
                    while *held < in_flight_limit {
                        let own = self.ranks[rank].threads.max(1);
                        let (first, left, sharing) = match &shares {
                            Some(bounds) => {
                                (share_next[rank], bounds[rank + 1] - share_next[rank], own)
                            }
                            None => (next, total - next, all_threads),
                        };
                        let size = if long {
                            own.min(left)
                        } else {
                            self.batch_size(rank, left, sharing)
                        };
                        if size == 0 {
                            break;
                        }
                        let batch = self.next_batch;
                        self.next_batch += 1;
                        let tasks: Vec<Task> = tasks[first..first + size]
                            .iter_mut()
                            .map(|task| task.take().expect("a task is handed out once"))
                            .collect();
                        self.send(rank, &ToRank::Tasks { batch, tasks })?;
                        in_flight.insert(batch, (rank, first, size, Instant::now()));
                        match &shares {
                            Some(_) => share_next[rank] += size,
                            None => next += size,
                        }
                        *held += 1;
                    }
                }
            }
            if in_flight.is_empty() {
                break;
            }
            let (rank, first, done) = self.batch_returned(&mut in_flight, &mut last_return)?;
            let count = done.len();
            for (slot, verdict) in verdicts[first..first + count].iter_mut().zip(done) {
                *slot = Some(verdict);
            }
            pending[rank] -= 1;
            if verdicts.get(delivered).is_some_and(Option::is_some) {
                let mut burst = std::iter::from_fn(|| {
                    let verdict = verdicts.get_mut(delivered).and_then(Option::take)?;
                    delivered += 1;
                    Some(verdict)
                });
                enough |= deliver(&mut burst)? == Demand::Enough;
            }
        }
        // Tasks never sent because the time limit passed, or on an interrupt, are skipped;
        // those the sampler had no room for are dropped.
        if !enough && delivered < total {
            let rest = verdicts.into_iter().skip(delivered);
            deliver(&mut rest.map(|verdict| verdict.unwrap_or(Verdict::Skipped)))?;
        }
        Ok(())
    }
}

impl<E: Ranks> Workforce for Coordinator<'_, E> {
    fn run(
        &mut self,
        centroids: &[Assignment],
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        let shares = self.fixed_shares.then(|| self.share_bounds(tasks.len()));
        self.hand_out(centroids, tasks, shares, deliver)
    }

    fn run_on_one_rank(
        &mut self,
        tasks: Vec<Task>,
        deliver: &mut Deliver,
    ) -> Result<(), SampleError> {
        let mut all_to_rank_zero = vec![0];
        all_to_rank_zero.resize(self.ranks.len() + 1, tasks.len());
        self.hand_out(&[], tasks, Some(all_to_rank_zero), deliver)
    }

    fn shard(&mut self, plan: &ShardPlan, samples: &[Assignment]) -> Result<(), SampleError> {
        // With one rank, the suite is its rank's: the coordinator measures it whole.
        self.measures_shares = self.ranks.len() > 1;
        self.broadcast(&ToRank::Shard {
            plan: *plan,
            samples: samples.to_vec(),
            measures_share: self.measures_shares,
            parts: self.parts.clone().filter(|_| self.measures_shares),
        })?;
        self.sharded = true;
        Ok(())
    }

    /// Every rank's round is asked for at once, and the ranks send their verdicts in chunks
    /// as they go; `deliver` gets them interleaved, the first verdict of every rank (rank 0
    /// first), then the second, and so on (a rank whose round had fewer tasks drops out once it
    /// has none left), each as soon as those before it are in. So the suite depends neither on
    /// which rank is faster nor on how their verdicts were chunked. Once `deliver` has enough,
    /// the ranks are told to start no more of the round's tasks; the verdicts of those under
    /// way are delivered still (the sampler counts what it drops).
    fn run_shards(&mut self, round: usize, deliver: &mut Deliver) -> Result<Drawn, SampleError> {
        if !self.sharded {
            return Err(not_sharded());
        }
        self.broadcast(&ToRank::ShardRound {
            round: round as u64,
        })?;
        let ranks = self.ranks.len();
        let mut waiting: Vec<VecDeque<Verdict>> = (0..ranks).map(|_| VecDeque::new()).collect();
        let mut done = vec![false; ranks];
        let mut drawn = Drawn::default();
        let mut shares = vec![None; ranks];
        let mut next = 0;
        let mut enough = false;
        while done.iter().any(|d| !d) {
            let (rank, message) = self.receive()?;
            let ToCoordinator::ShardResults {
                round: theirs,
                drawn: their_draw,
                verdicts,
                busy_nanos,
                last,
                share,
            } = message
            else {
                return Err(unexpected(rank, &message).into());
            };
            if theirs != round as u64 || done[rank] {
                return Err(TransportError::Protocol(format!(
                    "rank {rank} sent verdicts of round {theirs} during round {round}"
                ))
                .into());
            }
            self.busy += Duration::from_nanos(busy_nanos);
            waiting[rank].extend(verdicts);
            if last {
                done[rank] = true;
                drawn.add(&their_draw);
                shares[rank] = share;
            }
            // Deliver in turn while the rank whose turn it is has a verdict in, passing over
            // ranks that have finished theirs.
            let mut passed = 0;
            let mut burst = std::iter::from_fn(|| {
                while passed < ranks {
                    let turn = next;
                    if let Some(verdict) = waiting[turn].pop_front() {
                        passed = 0;
                        next = (turn + 1) % ranks;
                        return Some(verdict);
                    }
                    if !done[turn] {
                        return None;
                    }
                    passed += 1;
                    next = (turn + 1) % ranks;
                }
                None
            });
            if deliver(&mut burst)? == Demand::Enough && !enough {
                // The ranks stop starting tasks; those under way still come.
                enough = true;
                self.broadcast(&ToRank::EndRound {
                    round: round as u64,
                })?;
            }
        }
        if self.measures_shares {
            let measured: Option<Vec<RankMeasures>> = shares.into_iter().collect();
            let missing =
                || TransportError::Protocol("a rank sent no measures of its tests".into());
            self.shares = Some(measured.ok_or_else(missing)?);
        }
        Ok(drawn)
    }

    fn measures_shares(&self) -> bool {
        self.measures_shares
    }

    fn keep_tests_in(&mut self, parts: &Parts) {
        self.parts = Some(parts.clone());
    }

    fn place(&mut self, places: Vec<Vec<(u64, u64)>>) {
        self.places = places;
    }

    fn take_shares(&mut self) -> Option<Vec<RankMeasures>> {
        self.shares.take()
    }

    fn busy(&self) -> Duration {
        self.busy
    }

    fn messaging(&self) -> Duration {
        self.messaging
    }

    fn decoding_beside(&self) -> Duration {
        self.decoding_beside
    }

    fn finish(&mut self) -> Result<Vec<RankReport>, SampleError> {
        self.finished = true;
        for rank in 0..self.ranks.len() {
            let places = self.places.get_mut(rank).map(std::mem::take);
            let places = places.unwrap_or_default();
            self.send(rank, &ToRank::Finish { places })?;
        }
        let mut reports: Vec<Option<RankReport>> = (0..self.ranks.len()).map(|_| None).collect();
        for _ in 0..self.ranks.len() {
            let (rank, message) = self.receive()?;
            let ToCoordinator::Finished {
                tasks,
                busy_nanos,
                placing_nanos,
                histograms,
            } = message
            else {
                return Err(unexpected(rank, &message).into());
            };
            let mut metrics = Metrics::from_bytes(&histograms).ok_or_else(|| {
                TransportError::Malformed(format!("rank {rank} sent unreadable histograms"))
            })?;
            let state = &self.ranks[rank];
            metrics.merge(&state.round_trips);
            reports[rank] = Some(RankReport {
                rank,
                host: state.host.clone(),
                threads: state.threads,
                tasks,
                busy_seconds: busy_nanos as f64 / 1e9,
                placing_seconds: placing_nanos as f64 / 1e9,
                messages: state.messages,
                bytes_to_rank: state.bytes_to,
                bytes_from_rank: state.bytes_from,
                latency: metrics.summary(),
                metrics,
            });
        }
        Ok(reports.into_iter().flatten().collect())
    }
}

impl<E: Ranks> Drop for Coordinator<'_, E> {
    /// Releases ranks still waiting for work when the run ended early (an error, a failed
    /// rank); they exit without reporting.
    fn drop(&mut self) {
        if !self.finished {
            let bytes = protocol::encode(&ToRank::Finish { places: Vec::new() });
            for rank in 0..self.ranks.len() {
                let _ = self.endpoint.send_to(rank, bytes.clone());
            }
        }
    }
}

/// A message no rank should send where this one came.
fn unexpected(rank: usize, message: &ToCoordinator) -> TransportError {
    TransportError::Protocol(format!(
        "unexpected message from rank {rank}: {}",
        message.kind()
    ))
}
