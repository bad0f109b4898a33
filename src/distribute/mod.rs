//! Ranks: the sampler's tasks spread over threads of one process or over MPI processes.
//!
//! Rank 0 hosts the coordinator, which runs the sampler itself (deltas, centroids, merging,
//! NCD, the stop rule) against the [`crate::sampler::work::Workforce`] interface and hands out tasks in batches;
//! every rank, rank 0 included, runs [`Rank::serve`] and does its batches on its own rayon threads.
//! Batches shrink as a list of tasks drains (guided self-scheduling), and a rank holds two at
//! a time, getting another each time it returns one, so ranks that draw cheap repairs take
//! more of them and none waits for a round trip between batches.
//! Messages are [`protocol`] types encoded with bincode and sent as byte buffers over an
//! [`Endpoint`]: crossbeam channels ([`local`]) or MPI (the `mpi` module, with `--features mpi`).
//! The coordinator's side of them is [`Ranks`]: a relay thread carries its messages and
//! decodes the ranks' ([`local::relayed`]), so its own thread only merges.

mod coordinator;
pub mod launch;
pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod protocol;
mod rank;
mod transport;

pub use coordinator::Coordinator;
pub use rank::Rank;
pub use transport::{Endpoint, Ranks, Received, TransportError};
