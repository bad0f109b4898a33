//! The messages between the coordinator and its ranks, and their bincode encoding.
//!
//! A run is: `Start` → `Ready` from every rank; per round `Centroids` (when they change) and
//! any number of `Tasks` → `Results`; in a sharded run, after the initial solutions, `Shard`
//! once and per round `ShardRound` → `ShardResults` chunks, the last marked (cut short by
//! `EndRound` once the coordinator has what it wants of the round) and carrying, with several
//! ranks, the measures of the rank's tests; at the end `Finish` → `Finished` with the rank's serialized
//! latency histograms. A rank that cannot go on sends `Failed`; one that cannot take part for
//! its input, `Refused`.

use super::TransportError;
use crate::assignment::Assignment;
use crate::diversity::RankMeasures;
use crate::sampler::task::Drawn;
use crate::sampler::task::ShardPlan;
use crate::sampler::task::{Task, Verdict};
use crate::testfile::Parts;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// Messages from the coordinator to a rank.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToRank {
    /// The formula's fingerprint (ranks read the file themselves) and the time left.
    Start {
        /// [`crate::formula::Cnf::fingerprint`] of the coordinator's formula.
        fingerprint: u64,
        /// The run's time left, in seconds.
        seconds_left: f64,
    },
    /// The centroids `Task::Check` refers to from now on.
    Centroids(Vec<Assignment>),
    /// A batch of tasks to do, in order.
    Tasks {
        /// The batch's number, echoed in its results.
        batch: u64,
        /// The tasks.
        tasks: Vec<Task>,
    },
    /// A sharded run's rounds start: the rank draws its own, as `plan` says, from `samples`
    /// (the run's initial solutions) and the repairs it finds, keeping the tests new to it in
    /// its part of `parts`, if given.
    Shard {
        /// How rounds are drawn.
        plan: ShardPlan,
        /// The run's initial solutions.
        samples: Vec<Assignment>,
        /// The rank measures the tests new to it, as its share of the suite's.
        measures_share: bool,
        /// Where the rank keeps the tests new to it ([`Verdict::Kept`]).
        parts: Option<Parts>,
    },
    /// Draw and do round `round` of a sharded run, and send its verdicts (a rank may have
    /// done it ahead, holding them until this came).
    ShardRound {
        /// The round's number.
        round: u64,
    },
    /// The coordinator has what it wants of round `round` (the suite is full, or the run
    /// ends): start no more of its tasks. A rank that has finished the round ignores it.
    EndRound {
        /// The round's number.
        round: u64,
    },
    /// No more work: place the tests kept in the rank's part (their numbers there and their
    /// offsets in the suite's file; none if it keeps none), report and end.
    Finish {
        /// `(number in the part, offset in the suite's file)` of each test to place.
        places: Vec<(u64, u64)>,
    },
}

/// Messages from a rank to the coordinator.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToCoordinator {
    /// The rank read the same formula and is ready.
    Ready {
        /// Threads it works on.
        threads: usize,
        /// The host it runs on, for the run's report.
        host: String,
    },
    /// One verdict per task of `batch`, in order, and the rank's time on it.
    Results {
        /// The batch's number.
        batch: u64,
        /// One verdict a task, in task order.
        verdicts: Vec<Verdict>,
        /// Wall time the rank spent on the batch, in nanoseconds.
        busy_nanos: u64,
    },
    /// The next verdicts of a sharded round, in task order, and the rank's time on them; the
    /// round's last chunk also has what the rank drew.
    ShardResults {
        /// The round's number.
        round: u64,
        /// The round's pool and centroids, in figures (in the last chunk).
        drawn: Drawn,
        /// The verdicts of the next tasks of the round, in task order.
        verdicts: Vec<Verdict>,
        /// Wall time the rank spent on the round since its last chunk, in nanoseconds.
        busy_nanos: u64,
        /// The round's last chunk.
        last: bool,
        /// In the last chunk, where the rank measures its tests: their measures, every test
        /// new to it up to this round's end taken in.
        share: Option<RankMeasures>,
    },
    /// The rank's figures, its last message.
    Finished {
        /// Tasks it did in all.
        tasks: u64,
        /// Wall time on batches in all, in nanoseconds.
        busy_nanos: u64,
        /// Wall time copying its kept tests to their places in the suite's file, in
        /// nanoseconds.
        placing_nanos: u64,
        /// [`crate::metrics::Metrics::to_bytes`].
        histograms: Vec<Vec<u8>>,
    },
    /// The rank could not go on (it says why).
    Failed(String),
    /// The rank cannot take part in this run for its input: a formula its node lacks or
    /// cannot read, flags it cannot take (it says why).
    Refused(String),
}

impl ToCoordinator {
    /// The message's name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            ToCoordinator::Ready { .. } => "ready",
            ToCoordinator::Results { .. } => "results",
            ToCoordinator::ShardResults { .. } => "sharded round",
            ToCoordinator::Finished { .. } => "finished",
            ToCoordinator::Failed(_) => "failed",
            ToCoordinator::Refused(_) => "refused",
        }
    }
}

/// A message as bytes (bincode's standard configuration).
pub fn encode(message: &impl Serialize) -> Vec<u8> {
    bincode::serde::encode_to_vec(message, bincode::config::standard())
        .expect("protocol messages always encode")
}

/// A message from bytes; malformed bytes are an error, not a panic.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, TransportError> {
    match bincode::serde::decode_from_slice(bytes, bincode::config::standard()) {
        Ok((message, used)) if used == bytes.len() => Ok(message),
        Ok((_, used)) => Err(TransportError::Malformed(format!(
            "{} bytes after the message",
            bytes.len() - used
        ))),
        Err(e) => Err(TransportError::Malformed(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diversity::{NcdShare, NcdTerms};
    use crate::sampler::repair::{Completed, Failure, Route};

    #[test]
    fn messages_survive_encoding() {
        let test = Assignment::from_bit_string("1011001110001").unwrap();
        let message = ToCoordinator::Results {
            batch: 7,
            verdicts: vec![
                Verdict::Valid {
                    test: test.clone(),
                    fingerprint: 17,
                },
                Verdict::Completed {
                    done: Completed {
                        test: test.clone(),
                        route: Route::Solver,
                        solver_calls: 2,
                        conflicts: 90,
                        asked: 4,
                        kept: 3,
                        fresh: false,
                    },
                    fingerprint: 18,
                },
                Verdict::Failed(Failure::Unknown("time".into())),
                Verdict::Skipped,
                Verdict::Invalid,
            ],
            busy_nanos: 12_345,
        };
        let bytes = encode(&message);
        let ToCoordinator::Results {
            batch, verdicts, ..
        } = decode(&bytes).unwrap()
        else {
            panic!("wrong message kind");
        };
        assert_eq!(batch, 7);
        assert!(matches!(&verdicts[0], Verdict::Valid { test: t, fingerprint: 17 } if *t == test));
        assert!(matches!(&verdicts[1],
            Verdict::Completed { done, fingerprint: 18 } if done.test == test && (done.asked, done.kept) == (4, 3)));
        assert!(matches!(&verdicts[2], Verdict::Failed(Failure::Unknown(w)) if w == "time"));
        assert!(matches!(verdicts[3], Verdict::Skipped));
        assert!(matches!(verdicts[4], Verdict::Invalid));
    }

    #[test]
    fn sharded_messages_survive_encoding() {
        let test = Assignment::from_bit_string("0110").unwrap();
        let parts = Parts {
            folder: "/runs/suite.txt.parts".into(),
            output: "/runs/suite.txt".into(),
            format: crate::testfile::TestFormat::Bits,
        };
        let plan = ShardPlan {
            ahead: true,
            seed: 3,
            samples: 40,
            clusters: 2,
            ncd_removals: 8,
        };
        let ToRank::Shard {
            plan: sent,
            samples,
            measures_share,
            parts: parts_back,
        } = decode(&encode(&ToRank::Shard {
            plan,
            samples: vec![test.clone()],
            measures_share: true,
            parts: Some(parts.clone()),
        }))
        .unwrap()
        else {
            panic!("wrong message kind");
        };
        assert_eq!(
            (sent, samples, measures_share),
            (plan, vec![test.clone()], true)
        );
        assert_eq!(parts_back, Some(parts));
        let drawn = Drawn {
            distinct_deltas: 9,
            repeated_delta_pairs: 1,
            centroids: 2,
            deltas_seconds: 0.5,
            clustering_seconds: 0.25,
            seconds: 1.0,
        };
        let share = RankMeasures {
            ncd: NcdShare {
                tests: 3,
                terms: NcdTerms {
                    whole: 30,
                    smallest: 8,
                    largest_without: 25,
                },
            },
            coverage: vec![(2, 0b1011)],
        };
        let message = ToCoordinator::ShardResults {
            round: 4,
            drawn,
            verdicts: vec![
                Verdict::Valid {
                    test: test.clone(),
                    fingerprint: 5,
                },
                Verdict::Skipped,
            ],
            busy_nanos: 7,
            last: true,
            share: Some(share.clone()),
        };
        let ToCoordinator::ShardResults {
            round,
            drawn: back,
            verdicts,
            busy_nanos,
            last,
            share: share_back,
        } = decode(&encode(&message)).unwrap()
        else {
            panic!("wrong message kind");
        };
        assert_eq!((round, back, busy_nanos, last), (4, drawn, 7, true));
        assert_eq!(share_back, Some(share));
        assert!(matches!(&verdicts[..],
            [Verdict::Valid { test: t, fingerprint: 5 }, Verdict::Skipped] if *t == test));
    }

    #[test]
    fn truncated_and_padded_messages_are_rejected() {
        let bytes = encode(&ToRank::Tasks {
            batch: 1,
            tasks: vec![Task::Solve { seed: 99 }],
        });
        assert!(decode::<ToRank>(&bytes[..bytes.len() - 1]).is_err());
        let mut padded = bytes.clone();
        padded.push(0);
        assert!(decode::<ToRank>(&padded).is_err());
        assert!(decode::<ToRank>(&bytes).is_ok());
    }
}
