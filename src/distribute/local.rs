//! In-process ranks: each a thread with a rayon pool of its own, linked to the coordinator by
//! crossbeam channels that carry the same encoded messages MPI would, through a relay thread
//! that decodes the ranks' (as rank 0's does under MPI: [`relayed`]).

use super::{Coordinator, Endpoint, Rank, Ranks, Received, TransportError};
use crate::budget::Budget;
use crate::sampler::{self, Observer, Report, SampleError, Sampling};
use crate::solver::Solvers;
use crate::verify::Checker;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The coordinator's end of in-process links.
pub struct Hub {
    to_ranks: Vec<Sender<Vec<u8>>>,
    inbox: Receiver<(usize, Vec<u8>)>,
}

/// A rank's end of an in-process link.
pub struct Line {
    /// The rank it serves.
    pub rank: usize,
    to_hub: Sender<(usize, Vec<u8>)>,
    inbox: Receiver<Vec<u8>>,
}

/// How long a rank waits awake for its next message before it sleeps. Its next message is
/// mostly the coordinator's next round, tens of microseconds after the rank's last verdicts;
/// asleep by then, the rank had to be woken by the coordinator's send, a futex call that was
/// a tenth of a sharded coordinator's time on 70.sk_3_40 as a one-rank MPI job (0.5 of 5 ms
/// over 40 rounds; 0.1 ms waiting awake). The rank yields its core while it waits.
const AWAKE_FOR_MESSAGE: Duration = Duration::from_micros(200);

/// Links between a coordinator and `ranks` ranks.
pub fn links(ranks: usize) -> (Hub, Vec<Line>) {
    numbered_links(0..ranks)
}

/// A link to one rank numbered `rank`, the hub's peer 0: how an MPI rank's relay thread
/// reaches the rank's worker thread.
pub fn relay_link(rank: usize) -> (Hub, Line) {
    let (hub, mut lines) = numbered_links([rank]);
    (hub, lines.remove(0))
}

/// Links to ranks numbered `numbers`, in that order as the hub's peers.
fn numbered_links(numbers: impl IntoIterator<Item = usize>) -> (Hub, Vec<Line>) {
    let (to_hub, inbox) = crossbeam_channel::unbounded();
    let (to_ranks, lines) = numbers
        .into_iter()
        .map(|rank| {
            let (tx, rx) = crossbeam_channel::unbounded();
            let line = Line {
                rank,
                to_hub: to_hub.clone(),
                inbox: rx,
            };
            (tx, line)
        })
        .unzip();
    (Hub { to_ranks, inbox }, lines)
}

/// The hub is the coordinator's end of the links only in tests ([`Ranks`] below); otherwise
/// its ranks' messages go to a relay and the coordinator sends on its channels itself
/// ([`relayed`]), or an MPI rank's relay thread uses it to reach that rank's worker.
impl Hub {
    /// Sends `bytes` to rank `to` (the hub's peer number).
    pub fn send(&mut self, to: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.to_ranks[to]
            .send(bytes)
            .map_err(|_| TransportError::Disconnected)
    }

    /// The next message if one arrives within `wait`.
    pub fn receive_within(
        &mut self,
        wait: Duration,
    ) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        match self.inbox.recv_timeout(wait) {
            Ok(message) => Ok(Some(message)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(TransportError::Disconnected),
        }
    }

    /// Waits for the next message.
    #[cfg(test)]
    fn receive(&mut self) -> Result<(usize, Vec<u8>), TransportError> {
        self.inbox.recv().map_err(|_| TransportError::Disconnected)
    }
}

/// Tests drive a coordinator over the ranks' channel itself, decoding on its thread.
#[cfg(test)]
impl Ranks for Hub {
    fn ranks(&self) -> usize {
        self.to_ranks.len()
    }

    fn send_to(&mut self, rank: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.send(rank, bytes)
    }

    fn next_message(&mut self) -> Result<Received, TransportError> {
        let (rank, bytes) = self.receive()?;
        Ok(Received::decode(rank, bytes))
    }
}

impl Endpoint for Line {
    fn peers(&self) -> usize {
        1
    }

    fn send(&mut self, _to: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.to_hub
            .send((self.rank, bytes))
            .map_err(|_| TransportError::Disconnected)
    }

    fn receive(&mut self) -> Result<(usize, Vec<u8>), TransportError> {
        let awake_until = Instant::now() + AWAKE_FOR_MESSAGE;
        while Instant::now() < awake_until {
            if let Some(message) = self.try_receive()? {
                return Ok(message);
            }
            std::thread::yield_now();
        }
        self.inbox
            .recv()
            .map(|bytes| (0, bytes))
            .map_err(|_| TransportError::Disconnected)
    }

    fn try_receive(&mut self) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        match self.inbox.try_recv() {
            Ok(bytes) => Ok(Some((0, bytes))),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(TransportError::Disconnected),
        }
    }
}

/// Runs `line`'s rank on a pool of `threads` threads until the coordinator lets it go. A
/// panic is reported to the coordinator as the rank's failure, as a dying MPI rank would
/// end the job.
pub fn run_rank(
    mut line: Line,
    threads: usize,
    checker: &Checker,
    solvers: Solvers,
    interrupt: &AtomicBool,
) {
    let rank = line.rank;
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(move |i| format!("snapsat-rank{rank}-{i}"))
        .build()
    {
        Ok(pool) => pool,
        Err(e) => {
            let message = super::protocol::ToCoordinator::Failed(format!("no threads: {e}"));
            let _ = line.send(0, super::protocol::encode(&message));
            return;
        }
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let me = Rank {
            checker,
            solvers,
            interrupt,
            rank,
        };
        pool.install(|| me.serve(&mut line))
    }));
    if outcome.is_err() {
        let message = super::protocol::ToCoordinator::Failed("panicked".into());
        let _ = line.send(0, super::protocol::encode(&message));
    }
}

/// Runs Snap with `ranks` in-process ranks of `threads` threads each; same suites as
/// [`sampler::sample`] for the same seed.
pub fn sample(
    ranks: usize,
    threads: usize,
    run: &Sampling,
    observer: &mut dyn Observer,
) -> Result<Report, SampleError> {
    let (hub, lines) = links(ranks.max(1));
    relayed(hub, ranks.max(1), relay, |relayed| {
        coordinate(relayed, lines, threads, run, observer)
    })
}

/// The coordinator's side of links whose messages to it a relay thread receives and decodes
/// (see [`relayed`]): it sends to the ranks of this process itself, to the others (MPI's)
/// through the relay.
pub struct Relayed {
    /// The channel to each rank of this process; `None` for a rank only the relay reaches.
    local: Vec<Option<Sender<Vec<u8>>>>,
    outgoing: Sender<(usize, Vec<u8>)>,
    incoming: Receiver<Received>,
}

impl Ranks for Relayed {
    fn ranks(&self) -> usize {
        self.local.len()
    }

    fn send_to(&mut self, rank: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        let sent = match &self.local[rank] {
            Some(to) => to.send(bytes).is_ok(),
            None => self.outgoing.send((rank, bytes)).is_ok(),
        };
        sent.then_some(()).ok_or(TransportError::Disconnected)
    }

    fn next_message(&mut self) -> Result<Received, TransportError> {
        self.incoming
            .recv()
            .map_err(|_| TransportError::Disconnected)
    }
}

/// Runs `coordinate` on this thread with the coordinator's side of links to `ranks` ranks,
/// the first of them behind `hub`, and `relay` on a thread of its own: it receives the
/// messages of `hub`'s ranks (and beyond them, MPI's) and decodes them, so the coordinator's
/// thread only merges their verdicts, and it sends what the coordinator hands it for ranks
/// beyond `hub`. Decoding had been nearly half of the coordinator's time on 70.sk_3_40 (3.5
/// of 8 ms as a one-rank MPI job). `hub`'s ranks the coordinator reaches itself: through
/// the relay too, a one-rank MPI job took 3% longer (two more thread hops a round).
pub fn relayed<T>(
    hub: Hub,
    ranks: usize,
    relay: impl FnOnce(Receiver<(usize, Vec<u8>)>, Receiver<(usize, Vec<u8>)>, Sender<Received>) + Send,
    coordinate: impl FnOnce(Relayed) -> Result<T, SampleError>,
) -> Result<T, SampleError> {
    let Hub { to_ranks, inbox } = hub;
    let (outgoing, to_send) = crossbeam_channel::unbounded();
    let (arrived, incoming) = crossbeam_channel::unbounded();
    let mut local: Vec<Option<Sender<Vec<u8>>>> = to_ranks.into_iter().map(Some).collect();
    local.resize(ranks.max(local.len()), None);
    let side = Relayed {
        local,
        outgoing,
        incoming,
    };
    std::thread::scope(|scope| {
        let relay = std::thread::Builder::new()
            .name("snapsat-relay".into())
            .spawn_scoped(scope, move || relay(inbox, to_send, arrived))
            .map_err(|e| SampleError::Distribution(format!("cannot start the relay: {e}")))?;
        let result = coordinate(side);
        if relay.join().is_err() {
            return Err(SampleError::Distribution("the relay panicked".into()));
        }
        result
    })
}

/// The relay of in-process ranks: every rank's messages decoded for the coordinator as they
/// come, until every rank has ended (the coordinator's wait for them ends with it, as when it
/// read their channel itself); none are beyond them (`_remote`). A batch thread, as the
/// writer's and NCD's are: woken by every message, it would otherwise take the coordinator's
/// core each time.
fn relay(
    inbox: Receiver<(usize, Vec<u8>)>,
    _remote: Receiver<(usize, Vec<u8>)>,
    arrived: Sender<Received>,
) {
    crate::handoff::work_beside_the_coordinator();
    for (rank, bytes) in inbox {
        // A coordinator that has gone no longer reads; the ranks end with it.
        let _ = arrived.send(Received::decode(rank, bytes));
    }
}

/// Runs Snap with a coordinator on `endpoint`, starting a thread for each of `lines`' ranks
/// (of `threads` threads each); the endpoint may reach further ranks (MPI).
pub fn coordinate<E: Ranks>(
    endpoint: E,
    lines: Vec<Line>,
    threads: usize,
    run: &Sampling,
    observer: &mut dyn Observer,
) -> Result<Report, SampleError> {
    let Sampling {
        checker,
        solvers,
        interrupt,
        ..
    } = *run;
    let rank_side = |line: Line| run_rank(line, threads, checker, solvers, interrupt);
    coordinate_with(endpoint, lines, &rank_side, run, observer)
}

/// [`coordinate`] with `rank_side` serving each of `lines` on a thread of its own: a real
/// rank ([`run_rank`]), or a stand-in (the null ranks of `benches/scale_null.rs`).
pub fn coordinate_with<E: Ranks>(
    endpoint: E,
    lines: Vec<Line>,
    rank_side: &(dyn Fn(Line) + Sync),
    run: &Sampling,
    observer: &mut dyn Observer,
) -> Result<Report, SampleError> {
    let Sampling {
        checker, interrupt, ..
    } = *run;
    std::thread::scope(|scope| {
        for line in lines {
            let rank = line.rank;
            std::thread::Builder::new()
                .name(format!("snapsat-rank{rank}"))
                .spawn_scoped(scope, move || rank_side(line))
                .map_err(|e| SampleError::Distribution(format!("cannot start rank {rank}: {e}")))?;
        }
        let fingerprint = checker.cnf().fingerprint();
        let budget = Budget::new(run.config.time_limit, interrupt);
        let mut coordinator = Coordinator::connect(endpoint, fingerprint, budget)?;
        if run.config.sharded {
            coordinator.fix_shares();
        }
        sampler::sample_with(&mut coordinator, run, budget, observer)
        // Dropping the coordinator closes the links, so every rank thread ends.
    })
}

#[cfg(test)]
mod tests;
