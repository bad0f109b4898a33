//! Ranks as MPI processes (`mpirun -np N snapsat sample …`).
//!
//! Every process reads the formula itself and does its share of the work on a worker thread
//! with a rayon pool of its own, linked in-process to the one thread of the process that
//! calls MPI (`MPI_THREAD_SERIALIZED`), a relay: on rank 0 it also decodes every rank's
//! messages for the coordinator, which runs on a thread of its own.
//! Sends never block (see `Sends`), so a rank holds its next batch while it works on the
//! current one. Nobody busy-waits as MPI would: between probes a relay sleeps for a time
//! that doubles while nothing comes, from `POLL_MIN` up to `RANK0_POLL_MAX` on
//! rank 0 and `POLL_MAX` on the others (which mostly wait out the coordinator's NCD); a
//! message from the process's own worker, or on rank 0 from the coordinator, ends the sleep
//! at once.

use super::local::{self, Hub};
use super::{Received, TransportError};
use crate::sampler::{Observer, Report, SampleError, Sampling};
use crate::solver::Solvers;
use crate::verify::Checker;
use crossbeam_channel::{Receiver, Sender};
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// First sleep between probes for a message.
const POLL_MIN: Duration = Duration::from_micros(20);
/// Longest sleep of rank 0's relay between probes (its own worker and the coordinator wake it
/// at once).
const RANK0_POLL_MAX: Duration = Duration::from_micros(500);
/// Longest sleep of a rank between probes.
const POLL_MAX: Duration = Duration::from_millis(2);
/// How long rank 0 waits, at the end, for its last sends to be received.
const SEND_DRAIN: Duration = Duration::from_secs(2);

/// Sleeps between probes, doubling while nothing arrives.
struct Backoff {
    wait: Duration,
    max: Duration,
}

impl Backoff {
    fn new(max: Duration) -> Self {
        Backoff {
            wait: POLL_MIN,
            max,
        }
    }

    /// The next wait.
    fn next(&mut self) -> Duration {
        let wait = self.wait;
        self.wait = (self.wait * 2).min(self.max);
        wait
    }
}

/// This process's place in the MPI job; MPI is finalised when it is dropped.
pub struct Job {
    world: SimpleCommunicator,
    _universe: Universe,
}

impl Job {
    /// Initialises MPI; `None` if it was initialised already.
    pub fn init() -> Option<Job> {
        let (universe, _) = mpi::initialize_with_threading(Threading::Serialized)?;
        Some(Job {
            world: universe.world(),
            _universe: universe,
        })
    }

    /// This process's rank in the world communicator.
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// Processes in the job.
    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// Rank 0: runs Snap over every rank of the job, with `threads` rayon threads for rank
    /// 0's own share of the work.
    pub fn coordinate(
        &self,
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
        let rank_side =
            |line: local::Line| local::run_rank(line, threads, checker, solvers, interrupt);
        self.coordinate_with(&rank_side, run, observer)
    }

    /// [`Job::coordinate`] with `rank_side` serving rank 0's own share (see
    /// [`local::coordinate_with`]).
    pub fn coordinate_with(
        &self,
        rank_side: &(dyn Fn(local::Line) + Sync),
        run: &Sampling,
        observer: &mut dyn Observer,
    ) -> Result<Report, SampleError> {
        let (own, lines) = local::links(1);
        local::relayed(own, self.size(), relay_for_coordinator, |ranks| {
            local::coordinate_with(ranks, lines, rank_side, run, observer)
        })
    }

    /// Rank 0: lets every other rank go before any work (see
    /// [`super::launch::Launch::abandon`]).
    pub fn release(&self) {
        let bytes =
            super::protocol::encode(&super::protocol::ToRank::Finish { places: Vec::new() });
        let mut sends = Sends::default();
        for rank in 1..self.size() {
            sends.start(&self.world, rank, bytes.clone());
        }
        // Dropping `sends` waits for them to be received.
    }

    /// Ranks 1..: tells rank 0 why this rank cannot take part (`Failed` or `Refused`), and
    /// waits until rank 0 lets it go: rank 0 then has the failure and ends the job with it. A
    /// rank that left at once, with a failing status, had `mpirun` abort the job, at times
    /// before rank 0 had said why.
    pub fn fail(&self, why: super::protocol::ToCoordinator) {
        use super::protocol::{decode, encode, ToRank};
        let mut sends = Sends::default();
        sends.start(&self.world, 0, encode(&why));
        let coordinator = self.world.process_at_rank(0);
        let mut backoff = Backoff::new(POLL_MAX);
        loop {
            sends.poll();
            match coordinator.immediate_matched_probe() {
                Some(probed) => {
                    let (bytes, _) = probed.matched_receive_vec::<u8>();
                    if matches!(decode(&bytes), Ok(ToRank::Finish { .. })) {
                        return;
                    }
                }
                None => std::thread::sleep(backoff.next()),
            }
        }
    }

    /// Ranks 1..: does the coordinator's batches on `threads` threads until it lets this
    /// rank go. The work runs on a thread of its own, as in-process ranks do; this thread
    /// relays its messages, the only one of the process that calls MPI.
    pub fn serve(
        &self,
        threads: usize,
        checker: &Checker,
        solvers: Solvers,
        interrupt: &AtomicBool,
    ) -> Result<(), TransportError> {
        self.serve_with(|line| local::run_rank(line, threads, checker, solvers, interrupt))
    }

    /// [`Job::serve`] with `rank_side` doing this rank's work on its line.
    pub fn serve_with(
        &self,
        rank_side: impl FnOnce(local::Line) + Send,
    ) -> Result<(), TransportError> {
        let (mut hub, line) = local::relay_link(self.rank());
        std::thread::scope(|scope| {
            scope.spawn(|| rank_side(line));
            relay(&self.world, &mut hub)
        })
    }
}

/// Rank 0's relay: while the coordinator runs, the one thread of the process that calls MPI.
/// It receives every rank's messages (rank 0's own worker's from `own`) and decodes them for
/// the coordinator, whose thread then only merges: decoding had been nearly half of its time
/// (70.sk_3_40, one rank: 3.5 of 8 ms). It sends what the coordinator hands it for the other
/// ranks (`outgoing`), and ends once the coordinator has let go of its side, when its last
/// sends have been received.
fn relay_for_coordinator(
    own: Receiver<(usize, Vec<u8>)>,
    outgoing: Receiver<(usize, Vec<u8>)>,
    arrived: Sender<Received>,
) {
    crate::handoff::work_beside_the_coordinator();
    let world = SimpleCommunicator::world();
    let mut sends = Sends::default();
    let mut backoff = Backoff::new(RANK0_POLL_MAX);
    let mut own = own;
    loop {
        sends.poll();
        if let Some(probed) = world.any_process().immediate_matched_probe() {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            let rank = status.source_rank() as usize;
            // A coordinator that has gone no longer reads; its side's end is seen below.
            let _ = arrived.send(Received::decode(rank, bytes));
            backoff = Backoff::new(RANK0_POLL_MAX);
            continue;
        }
        crossbeam_channel::select! {
            recv(own) -> message => match message {
                Ok((_, bytes)) => {
                    let _ = arrived.send(Received::decode(0, bytes));
                    backoff = Backoff::new(RANK0_POLL_MAX);
                }
                // Rank 0's own worker has finished; the other ranks may still report.
                Err(_) => own = crossbeam_channel::never(),
            },
            recv(outgoing) -> message => {
                match message {
                    Ok((rank, bytes)) => sends.start(&world, rank, bytes),
                    // The coordinator has let go: dropping `sends` waits for the last of them
                    // to be received.
                    Err(_) => return,
                }
                // An answer may follow soon: poll for it as the coordinator's wait once did,
                // from the shortest sleep on.
                backoff = Backoff::new(RANK0_POLL_MAX);
            },
            default(backoff.next()) => {}
        }
    }
}

/// Sends that do not block. A large MPI message moves only while both sides are inside MPI,
/// and the side that would wait is often busy elsewhere (a rank repairing, the coordinator
/// merging), so every send is started at once and completed by later polls.
#[derive(Default)]
struct Sends(Vec<Outgoing>);

/// A send in progress; MPI reads `buffer` until `request` completes, then it is freed.
struct Outgoing {
    request: Request<'static, [u8], StaticScope>,
    buffer: *mut [u8],
}

impl Sends {
    fn start(&mut self, world: &SimpleCommunicator, to: usize, bytes: Vec<u8>) {
        self.poll();
        let buffer = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: the buffer stays allocated until `poll` sees the send complete.
        let data: &'static [u8] = unsafe { &*buffer };
        let request = world
            .process_at_rank(to as i32)
            .immediate_send(StaticScope, data);
        self.0.push(Outgoing { request, buffer });
    }

    /// Frees the buffers of completed sends.
    fn poll(&mut self) {
        self.0 = std::mem::take(&mut self.0)
            .into_iter()
            .filter_map(|sent| match sent.request.test() {
                Ok(_) => {
                    // SAFETY: MPI is done with the buffer, and nothing else refers to it.
                    drop(unsafe { Box::from_raw(sent.buffer) });
                    None
                }
                Err(request) => Some(Outgoing { request, ..sent }),
            })
            .collect();
    }
}

impl Drop for Sends {
    /// Lets the last sends (finish messages, a rank's report) complete; a send to a process
    /// that has gone never does, so after [`SEND_DRAIN`] the rest are abandoned, buffers and
    /// all, as the process is about to end.
    fn drop(&mut self) {
        let until = Instant::now() + SEND_DRAIN;
        while !self.0.is_empty() && Instant::now() < until {
            self.poll();
            std::thread::sleep(POLL_MIN);
        }
        std::mem::forget(std::mem::take(&mut self.0));
    }
}

/// Carries messages between rank 0 and this process's worker thread (behind `hub`) until the
/// worker ends. Batches are received while the worker is still on the last one, and results
/// leave as soon as they are ready.
fn relay(world: &SimpleCommunicator, hub: &mut Hub) -> Result<(), TransportError> {
    let coordinator = world.process_at_rank(0);
    let mut sends = Sends::default();
    let mut backoff = Backoff::new(POLL_MAX);
    loop {
        sends.poll();
        if let Some(probed) = coordinator.immediate_matched_probe() {
            let (bytes, _) = probed.matched_receive_vec::<u8>();
            // A worker that has ended no longer takes messages; its end is seen below.
            let _ = hub.send(0, bytes);
            backoff = Backoff::new(POLL_MAX);
            continue;
        }
        match hub.receive_within(backoff.next()) {
            Ok(Some((_, bytes))) => {
                sends.start(world, 0, bytes);
                backoff = Backoff::new(POLL_MAX);
            }
            Ok(None) => {}
            Err(TransportError::Disconnected) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}
