//! What carries the messages between the coordinator and the ranks: an [`Endpoint`] of
//! encoded messages (channels or MPI), the coordinator's [`Ranks`] side, decoded.

use super::protocol::{self, ToCoordinator};
use crate::sampler::SampleError;
use std::time::{Duration, Instant};

/// Why a message could not be sent or received.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The peer closed its end (a rank or the coordinator ended).
    #[error("the other side has gone")]
    Disconnected,
    /// Bytes that do not decode to a message.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A message that makes no sense where it came (another formula, an unknown batch).
    #[error("{0}")]
    Protocol(String),
    /// A rank cannot take part for its input (it says which rank and why).
    #[error("{0}")]
    Refused(String),
    /// A rank could not write the tests it keeps ([`crate::testfile::Parts`]).
    #[error("{0}")]
    Output(String),
}

impl From<TransportError> for SampleError {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::Refused(why) => SampleError::Refused(why),
            e => SampleError::Distribution(e.to_string()),
        }
    }
}

/// One side of the coordinator–rank links. The coordinator's endpoint reaches ranks
/// `0..peers()`; a rank's endpoint reaches the coordinator only, as peer 0.
pub trait Endpoint {
    /// Peers this endpoint reaches.
    fn peers(&self) -> usize;
    /// Sends a message to peer `to` without waiting for it to be received.
    fn send(&mut self, to: usize, bytes: Vec<u8>) -> Result<(), TransportError>;
    /// Waits for the next message from any peer.
    fn receive(&mut self) -> Result<(usize, Vec<u8>), TransportError>;
    /// The next message, if one has come, without waiting.
    fn try_receive(&mut self) -> Result<Option<(usize, Vec<u8>)>, TransportError>;
}

/// The coordinator's side of the links to ranks `0..ranks()`: it sends encoded messages and
/// takes decoded ones.
pub trait Ranks {
    /// Ranks this side reaches.
    fn ranks(&self) -> usize;
    /// Sends a message to `rank` without waiting for it to be received.
    fn send_to(&mut self, rank: usize, bytes: Vec<u8>) -> Result<(), TransportError>;
    /// Waits for the next message from any rank.
    fn next_message(&mut self) -> Result<Received, TransportError>;
}

/// A message from a rank, decoded by the relay that received it.
pub struct Received {
    /// The rank it came from.
    pub rank: usize,
    /// Its size, encoded.
    pub size: usize,
    /// The message, or why its bytes are not one.
    pub message: Result<ToCoordinator, TransportError>,
    /// Time decoding took the relay.
    pub decoding: Duration,
}

impl Received {
    /// `bytes` from `rank`, decoded on this thread.
    pub fn decode(rank: usize, bytes: Vec<u8>) -> Self {
        let started = Instant::now();
        let message = protocol::decode(&bytes);
        Received {
            rank,
            size: bytes.len(),
            message,
            decoding: started.elapsed(),
        }
    }
}
