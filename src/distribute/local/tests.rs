use super::*;
use crate::assignment::Assignment;
use crate::distribute::protocol::{self, ToCoordinator, ToRank};
use crate::diversity::RankMeasures;
use crate::formula::Cnf;
use crate::sampler;
use crate::sampler::task::Task;
use crate::sampler::SnapConfig;
use crate::solver::Splr;

fn formula() -> Cnf {
    // A 6x6 grid of "at most one neighbour pair both true" constraints: many models, and
    // median centroids that are not models, so repairs happen.
    let side = 6;
    let var = |r: usize, c: usize| (r * side + c + 1) as i32;
    let mut clauses = Vec::new();
    for r in 0..side {
        for c in 0..side {
            if c + 1 < side {
                clauses.push(vec![-var(r, c), -var(r, c + 1)]);
            }
            if r + 1 < side {
                clauses.push(vec![-var(r, c), -var(r + 1, c)]);
            }
        }
        clauses.push((0..side).map(|c| var(r, c)).collect());
    }
    Cnf::from_clauses(side * side, &clauses)
}

fn config(seed: u64) -> SnapConfig {
    SnapConfig {
        samples: 30,
        clusters: 3,
        max_rounds: Some(2),
        seed,
        time_limit: Duration::from_secs(120),
        ..Default::default()
    }
}

fn collect(
    run: impl FnOnce(&mut dyn Observer) -> Result<Report, SampleError>,
) -> (Vec<Assignment>, Report) {
    let mut tests = Vec::new();
    let mut observer = |t: &Assignment| {
        tests.push(t.clone());
        Ok(())
    };
    let report = run(&mut observer).unwrap();
    (tests, report)
}

#[test]
fn ranks_give_the_same_verified_suite_as_one_process() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let stop = AtomicBool::new(false);
    let (alone, _) = collect(|o| sampler::sample(&checker, &Splr, &config(4), o, &stop));
    for (ranks, threads) in [(1, 1), (3, 1), (2, 2)] {
        let (spread, report) = spread(&checker, &config(4), ranks, threads);
        assert_eq!(spread, alone, "{ranks} ranks x {threads} threads");
        assert!(spread.iter().all(|t| checker.satisfies(t)));
        assert_eq!(report.ranks.len(), ranks);
        let tasks: u64 = report.ranks.iter().map(|r| r.tasks).sum();
        assert_eq!(tasks, 30 + report.candidates);
        assert!(report
            .ranks
            .iter()
            .all(|r| r.messages > 0 && r.bytes_from_rank > 0));
        assert!(report.latency.contains_key("round_trip"));
        assert!(report.latency.contains_key("repair"));
        // The relay decoded the ranks' messages, not the coordinator.
        assert!(report.decoding_seconds > 0.0);
    }
}

/// Through the relay, the ranks' messages come decoded and the coordinator's go out;
/// once every rank has ended, the coordinator's wait for them ends (it does not hang).
#[test]
fn the_relay_decodes_for_the_coordinator_and_ends_its_wait_with_the_ranks() {
    let (hub, mut lines) = links(2);
    let mut line = lines.remove(1);
    drop(lines);
    let ready = protocol::encode(&ToCoordinator::Ready {
        threads: 3,
        host: "node-1".into(),
    });
    relayed(hub, 2, relay, |mut side| {
        line.send(0, ready.clone()).unwrap();
        let received = side.next_message().unwrap();
        assert_eq!((received.rank, received.size), (1, ready.len()));
        assert!(matches!(
            received.message,
            Ok(ToCoordinator::Ready { threads: 3, ref host }) if host == "node-1"
        ));
        side.send_to(1, protocol::encode(&ToRank::Finish { places: Vec::new() }))
            .unwrap();
        let (_, bytes) = line.receive().unwrap();
        assert!(matches!(
            protocol::decode(&bytes),
            Ok(ToRank::Finish { .. })
        ));
        drop(line);
        assert!(matches!(
            side.next_message(),
            Err(TransportError::Disconnected)
        ));
        // Sending to a rank that has ended fails, as it did with no relay.
        assert!(side
            .send_to(0, protocol::encode(&ToRank::Finish { places: Vec::new() }))
            .is_err());
        Ok(())
    })
    .unwrap();
}

fn sharded(seed: u64) -> SnapConfig {
    SnapConfig {
        sharded: true,
        ..config(seed)
    }
}

/// The suite of `ranks` in-process ranks of `threads` threads each under `config`.
fn spread(
    checker: &Checker,
    config: &SnapConfig,
    ranks: usize,
    threads: usize,
) -> (Vec<Assignment>, Report) {
    spread_on(Solvers::splr(), checker, config, ranks, threads)
}

/// [`spread`] with `solvers`.
fn spread_on(
    solvers: Solvers,
    checker: &Checker,
    config: &SnapConfig,
    ranks: usize,
    threads: usize,
) -> (Vec<Assignment>, Report) {
    let stop = AtomicBool::new(false);
    collect(|o| {
        sample(
            ranks,
            threads,
            &Sampling {
                checker,
                solvers,
                config,
                resumed: &[],
                interrupt: &stop,
            },
            o,
        )
    })
}

/// Rank 0's stream is the run's own: one sharded rank, coordinated or alone in the
/// process, gives the unsharded run's suite.
#[test]
fn one_sharded_rank_gives_the_unsharded_suite() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let stop = AtomicBool::new(false);
    let (alone, _) = collect(|o| sampler::sample(&checker, &Splr, &config(4), o, &stop));
    let (in_process, report) = collect(|o| sampler::sample(&checker, &Splr, &sharded(4), o, &stop));
    assert_eq!(in_process, alone);
    assert!(report.rounds[1].distinct_deltas > 0 && report.rounds[1].centroids > 0);
    let (coordinated, report) = spread(&checker, &sharded(4), 1, 1);
    assert_eq!(coordinated, alone);
    assert!(report.rounds[1].distinct_deltas > 0 && report.rounds[1].centroids > 0);
}

/// Native sessions, one lane a rank.
fn native_sessions() -> Solvers<'static> {
    Solvers {
        sessions: Some(&crate::solver::native::Native),
        lanes: 1,
        ..Solvers::splr()
    }
}

/// A session answers by what it solved before, so with native sessions sharded ranks give
/// the same suite every time only if the same rank solves the same initial solutions
/// every time: they go in fixed shares, not to whichever rank is free.
#[test]
fn sharded_ranks_with_sessions_give_the_same_suite_every_time() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let native = native_sessions();
    let config = SnapConfig {
        samples: 60,
        ..sharded(8)
    };
    let (first, report) = spread_on(native, &checker, &config, 3, 1);
    assert!(first.iter().all(|t| checker.satisfies(t)));
    // The first ten (the first solution alone, then the rest of the list the rounds may
    // start early from) rank 0's, in one session; then shares by rank order: 17, 17 and 16
    // of the other 50.
    let solved: Vec<u64> = report
        .ranks
        .iter()
        .map(|r| r.latency["initial_solve"].count)
        .collect();
    assert_eq!(solved, [27, 17, 16]);
    for _ in 0..4 {
        assert_eq!(spread_on(native, &checker, &config, 3, 1).0, first);
    }
}

/// A covering sharded run (`--small`'s cover step after the rounds) settles each round
/// before it starts the next, so it never starts a round the stop rule then cuts short: the
/// ranks' solvers, in which the cover step's tasks run, and so the suite, do not depend on
/// how far the ranks got into such a round.
#[test]
fn a_covering_sharded_run_starts_no_round_the_stop_rule_cuts_short() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let native = native_sessions();
    let config = SnapConfig {
        samples: 60,
        max_rounds: None,
        cover: true,
        ..sharded(8)
    };
    let (first, report) = spread_on(native, &checker, &config, 3, 1);
    assert_eq!(report.stop, sampler::StopReason::Converged);
    assert_eq!(
        report.dropped_candidates, 0,
        "a round was started and cut short"
    );
    assert!(first.iter().all(|t| checker.satisfies(t)));
    for _ in 0..2 {
        assert_eq!(spread_on(native, &checker, &config, 3, 1).0, first);
    }
}

/// Tasks handed to each of `ranks` one-thread ranks while `drive` runs their coordinator
/// (time limit 60 s). Rank `r` answers a batch of `n` tasks, all skipped, after
/// `answer(r, n).0` and reports `answer(r, n).1` nanoseconds of work on it.
fn handed_to_scripted_ranks(
    ranks: usize,
    answer: fn(usize, usize) -> (Duration, u64),
    drive: impl FnOnce(&mut Coordinator<'_, Hub>),
) -> Vec<usize> {
    use crate::sampler::task::Verdict;
    let stop = AtomicBool::new(false);
    let (hub, lines) = links(ranks);
    std::thread::scope(|scope| {
        let ranks: Vec<_> = lines
            .into_iter()
            .map(|mut line| {
                scope.spawn(move || {
                    let mut handed = 0;
                    while let Ok((_, bytes)) = line.receive() {
                        match protocol::decode::<ToRank>(&bytes).unwrap() {
                            ToRank::Start { .. } => {
                                let ready = ToCoordinator::Ready {
                                    threads: 1,
                                    host: String::new(),
                                };
                                line.send(0, protocol::encode(&ready)).unwrap();
                            }
                            ToRank::Tasks { batch, tasks } => {
                                handed += tasks.len();
                                let (after, busy_nanos) = answer(line.rank, tasks.len());
                                std::thread::sleep(after);
                                let results = ToCoordinator::Results {
                                    batch,
                                    verdicts: vec![Verdict::Skipped; tasks.len()],
                                    busy_nanos,
                                };
                                line.send(0, protocol::encode(&results)).unwrap();
                            }
                            ToRank::Finish { .. } => break,
                            _ => {}
                        }
                    }
                    handed
                })
            })
            .collect();
        let budget = Budget::new(Duration::from_secs(60), &stop);
        let mut coordinator = Coordinator::connect(hub, 7, budget).unwrap();
        drive(&mut coordinator);
        drop(coordinator);
        ranks.into_iter().map(|r| r.join().unwrap()).collect()
    })
}

/// A fixed share goes out half of what is left at a time (two batches in flight), so a
/// sampler that has enough at the first verdict stops the ranks short of their shares:
/// rank 0 answers at once, the others after 100 ms, by when nothing more is sent.
#[test]
fn fixed_shares_go_out_in_batches_that_a_sampler_with_enough_stops() {
    use crate::sampler::task::Demand;
    use crate::sampler::work::Workforce;
    let answer = |rank, _| (Duration::from_millis(if rank > 0 { 100 } else { 0 }), 1);
    let handed = handed_to_scripted_ranks(3, answer, |coordinator| {
        coordinator.fix_shares();
        let tasks = (0..60).map(|seed| Task::Solve { seed }).collect();
        coordinator
            .run(&[], tasks, &mut |_| Ok(Demand::Enough))
            .unwrap();
    });
    // Shares of 20: the first two batches of each, 10 and 5; whole shares were 20 each.
    assert_eq!(handed, [15, 15, 15]);
}

/// Tasks run on one rank go to rank 0 however free the others are, with fixed shares or
/// without.
#[test]
fn tasks_run_on_one_rank_all_go_to_rank_zero() {
    use crate::sampler::task::Demand;
    use crate::sampler::work::Workforce;
    let answer = |rank, _| (Duration::from_millis(if rank == 0 { 20 } else { 0 }), 1);
    for fixed in [false, true] {
        let handed = handed_to_scripted_ranks(3, answer, |coordinator| {
            if fixed {
                coordinator.fix_shares();
            }
            let tasks = (0..9).map(|seed| Task::Solve { seed }).collect();
            coordinator
                .run_on_one_rank(tasks, &mut |_| Ok(Demand::More))
                .unwrap();
        });
        assert_eq!(handed, [9, 0, 0]);
    }
}

/// Long tasks go out one a thread and a batch a rank at a time: a rank held up by a slow
/// task holds no other, and the ranks that are free take them. Rank 0's tasks take 1 s,
/// rank 1's 5 ms; after a first lone task on rank 0 (as a run's first solution), rank 0
/// takes one more of the next 9 and rank 1 the other 8. With batches sized for short tasks,
/// rank 0 took 5 of them at once.
#[test]
fn long_tasks_go_to_the_ranks_free_to_take_them() {
    use crate::sampler::task::Demand;
    use crate::sampler::work::Workforce;
    let answer = |rank: usize, tasks: usize| {
        let time = Duration::from_millis([1000, 5][rank]) * tasks as u32;
        (time, time.as_nanos() as u64)
    };
    let handed = handed_to_scripted_ranks(2, answer, |coordinator| {
        for (first, count) in [(0, 1), (1, 9)] {
            let tasks = (first..first + count)
                .map(|seed| Task::Solve { seed })
                .collect();
            coordinator
                .run(&[], tasks, &mut |_| Ok(Demand::More))
                .unwrap();
        }
    });
    assert_eq!(handed, [2, 8]);
}

/// Sharded ranks each draw rounds of their own: a round is one of every rank, its
/// figures summed; every test is a distinct model, and the suite is a function of the
/// seed and the number of ranks, whatever their threads.
#[test]
fn sharded_ranks_give_a_verified_suite_of_the_seed_and_ranks() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let (one, one_report) = spread(&checker, &sharded(6), 1, 1);
    let (three, report) = spread(&checker, &sharded(6), 3, 1);
    assert!(three.iter().all(|t| checker.satisfies(t)));
    let distinct: std::collections::HashSet<_> = three.iter().collect();
    assert_eq!(distinct.len(), three.len());
    assert_eq!(report.distinct_tests, three.len());
    // Each round: three ranks' N·k candidates (N = 30, k = 3), and their centroids.
    for round in &report.rounds[1..] {
        assert_eq!(round.candidates, 3 * 30 * 3, "{round:?}");
        assert_eq!(round.centroids, 3 * one_report.rounds[1].centroids);
    }
    assert!(three.len() > one.len());
    assert_eq!(three[..30], one[..30], "the same initial solutions");
    // Every rank did its round after the last ahead, none of which counts as candidates.
    let tasks: u64 = report.ranks.iter().map(|r| r.tasks).sum();
    let ahead = tasks - (30 + report.candidates);
    assert!((3..=3 * 90).contains(&ahead), "{ahead} tasks done ahead");
    assert!(report.ranks.iter().all(|r| r.tasks > 10));
    // Decoding the ranks' verdicts is the coordinator's own time, not theirs: in every
    // round's.
    assert!(report.messaging_seconds > 0.0);
    for r in &report.rounds {
        let own = r.merge_seconds + r.messaging_seconds;
        assert!(r.coordinator_seconds >= own, "{r:?}");
    }
    let (again, _) = spread(&checker, &sharded(6), 3, 2);
    assert_eq!(again, three);
    let (other_seed, _) = spread(&checker, &sharded(7), 3, 1);
    assert_ne!(other_seed, three);
}

/// A scripted rank: ready on `Start`, then for each sharded round its `tasks` verdicts
/// (test `rank * 100 + i` as bits) in chunks of the sizes given, the last marked; true if
/// it was told to end round 1.
fn scripted_rank(mut line: Line, tasks: usize, chunks: Vec<usize>) -> bool {
    use super::super::protocol::{decode, encode, ToCoordinator, ToRank};
    use crate::sampler::task::Drawn;
    use crate::sampler::task::Verdict;
    let rank = line.rank;
    let test = |i: usize| Assignment::from_words(vec![(rank * 100 + i) as u64], 16);
    let mut ended = false;
    while let Ok((_, bytes)) = line.receive() {
        match decode::<ToRank>(&bytes).unwrap() {
            ToRank::Start { .. } => {
                let ready = ToCoordinator::Ready {
                    threads: 1,
                    host: String::new(),
                };
                line.send(0, encode(&ready)).unwrap();
            }
            ToRank::ShardRound { round } => {
                let mut sent = 0;
                for (k, &size) in chunks.iter().enumerate() {
                    let size = size.min(tasks - sent);
                    let last = k + 1 == chunks.len();
                    let size = if last { tasks - sent } else { size };
                    let verdicts = (sent..sent + size)
                        .map(|i| {
                            let test = test(i);
                            let fingerprint = test.fingerprint();
                            Verdict::Valid { test, fingerprint }
                        })
                        .collect();
                    sent += size;
                    std::thread::sleep(Duration::from_millis(((rank + k) % 3) as u64));
                    let message = ToCoordinator::ShardResults {
                        round,
                        drawn: Drawn::default(),
                        verdicts,
                        busy_nanos: 1,
                        last,
                        share: last.then(RankMeasures::default),
                    };
                    line.send(0, encode(&message)).unwrap();
                }
            }
            ToRank::EndRound { round } => ended |= round == 1,
            ToRank::Finish { .. } => break,
            _ => {}
        }
    }
    ended
}

/// However the ranks chunk their verdicts and whichever is faster, the coordinator hands
/// them over interleaved in task order, rank 0 first, passing over a rank with fewer.
/// Once the sampler has enough, every rank is told to end the round (those already done
/// ignore it); what they sent is still handed over.
#[test]
fn sharded_verdicts_come_interleaved_however_they_were_chunked() {
    use crate::sampler::task::ShardPlan;
    use crate::sampler::task::{Demand, Verdict};
    use crate::sampler::work::Workforce;
    let expected: Vec<u64> = vec![0, 100, 200, 1, 101, 201, 2, 202, 3, 203];
    let chunkings = [vec![1, 1, 1, 1], vec![4], vec![2, 3], vec![3, 1]];
    for (chunks, enough_after) in chunkings.into_iter().zip([None, Some(3), None, Some(1)]) {
        let stop = AtomicBool::new(false);
        let (hub, lines) = links(3);
        let tasks = [4, 2, 4];
        let (order, ended) = std::thread::scope(|scope| {
            let ranks: Vec<_> = lines
                .into_iter()
                .zip(tasks)
                .map(|(line, tasks)| {
                    let chunks = chunks.clone();
                    scope.spawn(move || scripted_rank(line, tasks, chunks))
                })
                .collect();
            let budget = Budget::new(Duration::from_secs(9), &stop);
            let mut coordinator = Coordinator::connect(hub, 7, budget).unwrap();
            let plan = ShardPlan {
                seed: 0,
                samples: 2,
                clusters: 1,
                ncd_removals: 8,
                ahead: true,
            };
            coordinator.shard(&plan, &[]).unwrap();
            let mut order = Vec::new();
            coordinator
                .run_shards(1, &mut |verdicts| {
                    for verdict in verdicts {
                        let Verdict::Valid { test, .. } = verdict else {
                            panic!("scripted ranks send tests");
                        };
                        order.push(test.words()[0]);
                    }
                    Ok(match enough_after {
                        Some(n) if order.len() >= n => Demand::Enough,
                        _ => Demand::More,
                    })
                })
                .unwrap();
            drop(coordinator);
            let ended: Vec<bool> = ranks.into_iter().map(|r| r.join().unwrap()).collect();
            (order, ended)
        });
        assert_eq!(order, expected, "chunks {chunks:?}");
        assert_eq!(ended, vec![enough_after.is_some(); 3], "chunks {chunks:?}");
    }
}

/// One rank (one thread, splr) of a sharded run that lets ranks go `ahead` or not: its first
/// round of 90 tasks asked for, and ended at once if `end_round`; once its last chunk is in,
/// `Finish`. The verdicts it sent and the tasks its report says it did.
fn first_round_alone(end_round: bool, ahead: bool) -> (usize, u64) {
    use super::super::protocol::{decode, encode, ToCoordinator, ToRank};
    use crate::sampler::task::ShardPlan;
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let stop = AtomicBool::new(false);
    let initial = SnapConfig {
        max_tests: Some(30),
        ..config(3)
    };
    let (samples, _) = collect(|o| sampler::sample(&checker, &Splr, &initial, o, &stop));
    assert_eq!(samples.len(), 30);
    let (mut hub, mut lines) = links(1);
    let line = lines.pop().unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| run_rank(line, 1, &checker, Solvers::splr(), &stop));
        let tell = |hub: &mut Hub, message: &ToRank| hub.send(0, encode(message)).unwrap();
        tell(
            &mut hub,
            &ToRank::Start {
                fingerprint: cnf.fingerprint(),
                seconds_left: 60.0,
            },
        );
        let plan = ShardPlan {
            seed: 3,
            samples: 30,
            clusters: 3,
            ncd_removals: 8,
            ahead,
        };
        tell(
            &mut hub,
            &ToRank::Shard {
                plan,
                samples,
                measures_share: true,
                parts: None,
            },
        );
        tell(&mut hub, &ToRank::ShardRound { round: 1 });
        if end_round {
            tell(&mut hub, &ToRank::EndRound { round: 1 });
        }
        let mut verdicts = 0;
        loop {
            let (_, bytes) = hub.receive().unwrap();
            match decode::<ToCoordinator>(&bytes).unwrap() {
                ToCoordinator::Ready { .. } => {}
                ToCoordinator::ShardResults {
                    round,
                    verdicts: chunk,
                    last,
                    ..
                } => {
                    assert_eq!(round, 1, "a round nobody asked for was sent");
                    verdicts += chunk.len();
                    if last {
                        break;
                    }
                }
                other => panic!("unexpected {}", other.kind()),
            }
        }
        tell(&mut hub, &ToRank::Finish { places: Vec::new() });
        let (_, bytes) = hub.receive().unwrap();
        let ToCoordinator::Finished { tasks, .. } = decode(&bytes).unwrap() else {
            panic!("the rank's report was due");
        };
        (verdicts, tasks)
    })
}

/// A rank told to end a sharded round starts none of its tasks after that: from the
/// start of a 90-task round, with one thread, it does and sends one, not 90, and its
/// report counts one task done (it had counted those it was handed); nor does it start the
/// next round ahead, since the run is ending.
#[test]
fn a_rank_told_to_end_its_round_starts_no_more_tasks() {
    assert_eq!(
        first_round_alone(true, true),
        (1, 1),
        "verdicts and tasks done, of 90 tasks"
    );
}

/// A rank that has sent its round does the next one ahead while the coordinator merges: by
/// the time it reads `Finish` it has done a task of round 2, which nobody asked for and it
/// sent nothing of.
#[test]
fn a_rank_does_its_next_round_ahead_and_sends_it_only_when_asked() {
    let (verdicts, tasks) = first_round_alone(false, true);
    assert_eq!(verdicts, 90);
    assert!(tasks > 90, "{tasks} tasks: none of round 2 done ahead");
}

/// Where the run does not let ranks go ahead (tasks follow its rounds), a rank does only the
/// rounds asked for.
#[test]
fn a_rank_of_a_run_with_tasks_after_its_rounds_does_no_round_ahead() {
    assert_eq!(first_round_alone(false, false), (90, 90));
}

#[test]
fn resumed_tests_count_as_found_and_are_not_repeated() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let stop = AtomicBool::new(false);
    let (first, _) = collect(|o| sampler::sample(&checker, &Splr, &config(8), o, &stop));
    let resumed = &first[..20];
    let (more, report) = collect(|o| {
        sample(
            2,
            1,
            &Sampling {
                checker: &checker,
                solvers: Solvers::splr(),
                config: &config(8),
                resumed,
                interrupt: &stop,
            },
            o,
        )
    });
    assert_eq!(report.resumed, 20);
    assert_eq!(report.distinct_tests, 20 + more.len());
    assert!(more
        .iter()
        .all(|t| !resumed.contains(t) && checker.satisfies(t)));
}

#[test]
fn an_interrupted_run_skips_its_tasks_and_stops_every_rank() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let stop = AtomicBool::new(true);
    let err = collect_err(|o| {
        sample(
            3,
            1,
            &Sampling {
                checker: &checker,
                solvers: Solvers::splr(),
                config: &config(1),
                resumed: &[],
                interrupt: &stop,
            },
            o,
        )
    });
    assert!(matches!(err, SampleError::Interrupted), "{err}");
}

fn collect_err(run: impl FnOnce(&mut dyn Observer) -> Result<Report, SampleError>) -> SampleError {
    let mut observer = |_: &Assignment| Ok(());
    run(&mut observer).unwrap_err()
}

#[test]
fn a_rank_with_another_formula_is_refused() {
    let cnf = formula();
    let other = Cnf::from_clauses(2, &[vec![1, 2]]);
    let (checker, wrong) = (Checker::new(&cnf), Checker::new(&other));
    let stop = AtomicBool::new(false);
    let (hub, mut lines) = links(2);
    let second = lines.pop().unwrap();
    let first = lines.pop().unwrap();
    let result = std::thread::scope(|scope| {
        scope.spawn(|| run_rank(first, 1, &checker, Solvers::splr(), &stop));
        scope.spawn(|| run_rank(second, 1, &wrong, Solvers::splr(), &stop));
        Coordinator::connect(
            hub,
            cnf.fingerprint(),
            Budget::new(Duration::from_secs(9), &stop),
        )
        .map(|_| ())
    });
    let err = result.unwrap_err().to_string();
    assert!(err.contains("rank 1 read another formula"), "{err}");
}

/// A rank that cannot take part for its input (a formula its node lacks) is named in a
/// refusal of the run, and let go.
#[test]
fn a_rank_refusing_its_input_refuses_the_run_and_is_let_go() {
    use super::super::protocol::{decode, encode, ToCoordinator, ToRank};
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let stop = AtomicBool::new(false);
    let (hub, mut lines) = links(2);
    let mut refusing = lines.pop().unwrap();
    let first = lines.pop().unwrap();
    let (result, let_go) = std::thread::scope(|scope| {
        scope.spawn(|| run_rank(first, 1, &checker, Solvers::splr(), &stop));
        let refused = scope.spawn(move || {
            let why = ToCoordinator::Refused("f.cnf: No such file".into());
            refusing.send(0, encode(&why)).unwrap();
            std::iter::from_fn(|| refusing.receive().ok())
                .any(|(_, bytes)| matches!(decode(&bytes), Ok(ToRank::Finish { .. })))
        });
        let budget = Budget::new(Duration::from_secs(9), &stop);
        let result = Coordinator::connect(hub, cnf.fingerprint(), budget).map(|_| ());
        (result, refused.join().unwrap())
    });
    let err = result.unwrap_err();
    assert!(
        matches!(&err, SampleError::Refused(why) if why == "rank 1: f.cnf: No such file"),
        "{err}"
    );
    assert!(let_go);
}

#[test]
fn a_panicking_rank_fails_the_run_instead_of_hanging_it() {
    let cnf = formula();
    let checker = Checker::new(&cnf);
    let stop = AtomicBool::new(false);
    let (hub, lines) = links(2);
    let result = std::thread::scope(|scope| {
        for line in lines {
            scope.spawn(|| run_rank(line, 1, &checker, Solvers::splr(), &stop));
        }
        let mut coordinator = Coordinator::connect(
            hub,
            cnf.fingerprint(),
            Budget::new(Duration::from_secs(9), &stop),
        )?;
        // A check against a centroid that was never sent indexes out of bounds.
        let bad = Task::Check {
            centroid: 5,
            delta: Assignment::zeros(cnf.num_vars()),
            seed: 0,
        };
        use crate::sampler::task::Demand;
        use crate::sampler::work::Workforce;
        coordinator.run(&[], vec![bad.clone(), bad], &mut |_| Ok(Demand::More))
    });
    let err = result.unwrap_err().to_string();
    assert!(err.contains("panicked"), "{err}");
}
