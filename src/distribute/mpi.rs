//! Ranks as MPI processes (`mpirun -np N snapsat sample …`).
//!
//! Every process reads the formula itself. Rank 0 runs the coordinator on its main thread and
//! its own rank's work on a second thread, linked in-process; ranks 1.. serve over MPI. One
//! thread of each process calls MPI (`MPI_THREAD_SERIALIZED`): rank 0's main thread, and on
//! other ranks the pool thread their loop runs on. Nobody busy-waits as MPI
//! would: between probes a process sleeps for a time that doubles while nothing comes, from
//! [`POLL_MIN`] up to [`COORDINATOR_POLL_MAX`] for the coordinator (a rank returning a batch
//! waits at most that long for the next) and [`POLL_MAX`] for a rank (which mostly waits out
//! the coordinator's NCD). Each wake-up of the coordinator takes a slice of a core from a
//! worker, so fewer of them is the point of the back-off.

use super::local::{self, Hub};
use super::{Endpoint, Rank, TransportError};
use crate::oracle::Oracle;
use crate::sampler::{Observer, Report, SampleError, Sampling};
use crate::verify::Checker;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// First sleep between probes for a message.
const POLL_MIN: Duration = Duration::from_micros(20);
/// Longest sleep of the coordinator between probes (rank 0's own worker wakes it at once).
const COORDINATOR_POLL_MAX: Duration = Duration::from_micros(500);
/// Longest sleep of a rank between probes.
const POLL_MAX: Duration = Duration::from_millis(2);

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

    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

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
        let (hub, lines) = local::links(1);
        let endpoint = WorldHub {
            world: &self.world,
            own: hub,
        };
        local::coordinate(endpoint, lines, threads, run, observer)
    }

    /// Ranks 1..: does the coordinator's batches on `threads` threads until it lets this
    /// rank go. The loop runs on a thread of the pool, as in-process ranks do, so that a
    /// batch starts without a hand-over between threads.
    pub fn serve(
        &self,
        threads: usize,
        checker: &Checker,
        oracle: &dyn Oracle,
        interrupt: &AtomicBool,
    ) -> Result<(), TransportError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| TransportError::Protocol(format!("no threads: {e}")))?;
        let me = Rank {
            checker,
            oracle,
            interrupt,
            rank: self.rank(),
        };
        let mut endpoint = WorldLine { world: &self.world };
        pool.install(move || me.serve(&mut endpoint))
    }
}

/// Rank 0's endpoint: peer 0 is its in-process rank, peer r > 0 is MPI rank r.
struct WorldHub<'a> {
    world: &'a SimpleCommunicator,
    own: Hub,
}

impl Endpoint for WorldHub<'_> {
    fn peers(&self) -> usize {
        self.world.size() as usize
    }

    fn send(&mut self, to: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        if to == 0 {
            self.own.send(0, bytes)
        } else {
            self.world.process_at_rank(to as i32).send(&bytes[..]);
            Ok(())
        }
    }

    fn receive(&mut self) -> Result<(usize, Vec<u8>), TransportError> {
        let mut backoff = Backoff::new(COORDINATOR_POLL_MAX);
        loop {
            if let Some(probed) = self.world.any_process().immediate_matched_probe() {
                let (bytes, status) = probed.matched_receive_vec::<u8>();
                return Ok((status.source_rank() as usize, bytes));
            }
            let wait = backoff.next();
            match self.own.receive_within(wait) {
                Ok(Some(message)) => return Ok(message),
                Ok(None) => {}
                // Rank 0's own worker has finished; the other ranks may still report.
                Err(TransportError::Disconnected) => std::thread::sleep(wait),
                Err(e) => return Err(e),
            }
        }
    }
}

/// A rank's endpoint to rank 0.
struct WorldLine<'a> {
    world: &'a SimpleCommunicator,
}

// SAFETY: the line moves to the pool thread that runs the rank's loop, and no other thread of
// the process calls MPI while it is in use; MPI is initialised MPI_THREAD_SERIALIZED, which
// allows calls from any one thread at a time.
unsafe impl Send for WorldLine<'_> {}

impl Endpoint for WorldLine<'_> {
    fn peers(&self) -> usize {
        1
    }

    fn send(&mut self, _to: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.world.process_at_rank(0).send(&bytes[..]);
        Ok(())
    }

    fn receive(&mut self) -> Result<(usize, Vec<u8>), TransportError> {
        let coordinator = self.world.process_at_rank(0);
        let mut backoff = Backoff::new(POLL_MAX);
        loop {
            if let Some(probed) = coordinator.immediate_matched_probe() {
                let (bytes, _) = probed.matched_receive_vec::<u8>();
                return Ok((0, bytes));
            }
            std::thread::sleep(backoff.next());
        }
    }
}
