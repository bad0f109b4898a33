//! The suite's diversity measures, kept up to date on a thread of their own while the sampler
//! goes on merging tests.

use super::{NcdShare, NcdTerms, PairwiseCoverage, RankMeasures, RunningNcd};
use crate::assignment::Assignment;
use crate::budget::Budget;
use crate::handoff::{Dozing, Handoff, Napping, LONGEST_DOZE};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A [`RunningNcd`] and a [`PairwiseCoverage`] on a thread of their own: the coordinator
/// hands each merged test over (a share of the suite's own copy) and reads the measures when
/// a round ends. Compression was most of its merging on s38417_3_2 (1,664 support bytes a
/// test through the streams), time in which no further verdict was merged; the projection
/// and the coverage (its 512 tracked variables' pairs) were a third of what was left. Here
/// they overlap the ranks' work, and a round's end waits only for what is left. The thread
/// takes the same tests in the same order, so the measures are the same.
pub struct MeasuringThread {
    /// Tests go over without waking the thread ([`crate::handoff`]); a request for the
    /// measures wakes it.
    requests: Handoff<Request>,
    replies: crossbeam_channel::Receiver<Measures>,
    len: usize,
    /// The measures are asked for and not yet read.
    asked: bool,
}

/// The measures of the tests handed over so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Measures {
    /// Eq. 2's terms; `None` once the budget ran out before every test was compressed.
    pub ncd: Option<NcdTerms>,
    /// The same tests as one share of a suite measured in parts ([`super::combined_terms`]).
    pub share: Option<NcdShare>,
    /// Pairwise literal coverage, in [0, 1].
    pub coverage: f64,
    /// A rank's thread ([`MeasuringThread::spawn_share`]): the words of its coverage that
    /// changed since the measures were last read ([`PairwiseCoverage::changes_since`]).
    pub coverage_changes: Vec<(u32, u64)>,
    /// The thread's CPU time so far (its time at work where the system does not tell it).
    pub busy: Duration,
}

impl Measures {
    /// What a rank reports of its tests' measures.
    pub fn of_rank(self) -> RankMeasures {
        RankMeasures {
            ncd: self.share.unwrap_or_default(),
            coverage: self.coverage_changes,
        }
    }
}

enum Request {
    Extend(Vec<Arc<Assignment>>),
    Freeze,
    MergeCoverage(Vec<(u32, u64)>),
    Measures,
}

/// Requests waiting that wake the thread before its nap is over: never, in practice. The
/// queue is unbounded: a bounded one's slots are allocated and written when it is made, and
/// 4,096 of them took 55-70 µs of a sharded coordinator's start on 70.sk_3_40 (65,536 had
/// cleared 2.6 MB at every run's start). What waits is bounded by the rounds all the same:
/// the next round's tests are held back until a round is measured, so at most a round's
/// tests wait, and those are the suite's own, shared.
const WAKE_AT_REQUESTS: usize = 1024;

/// How often the thread looks for tests while none waits. A round's end waits for it to have
/// measured the round: napping a millisecond, it was up to a millisecond of tests behind there,
/// and blasted_case47's 1000-test run took 1 ms longer (medians 13.7 → 14.6 ms); woken by the
/// sampler every 64 tests instead, 70.sk_3_40's sharded coordinator paid ~10 µs a wake-up
/// (work/coordinator 45 → 28 in one process, 17 → 7 as an MPI job). Looking every 200 µs
/// costs this thread, not the coordinator, while the run lasts.
const NAP: Duration = Duration::from_micros(200);

impl MeasuringThread {
    /// Starts the thread in `scope`, measuring NCD as `RunningNcd::new(vars, max_removals)`
    /// does and pairwise coverage over `vars`. It takes tests in under `budget` as
    /// [`RunningNcd::extend`] does, and ends when the `MeasuringThread` is dropped. The NCD's
    /// stream is set up on the thread: zlib's state took the caller ~190 µs, most of a
    /// sharded coordinator's time before its initial solutions on 70.sk_3_40.
    pub fn spawn<'scope, 'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        vars: Vec<usize>,
        max_removals: usize,
        budget: Budget<'env>,
    ) -> Self {
        let (requests, inbox) = crossbeam_channel::unbounded();
        let (outbox, replies) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new().name("snapsat-measures".into());
        let dozing = Dozing::default();
        let doze = dozing.clone();
        let body = move || {
            let naps = Napping::every(inbox, NAP).dozing(&doze, LONGEST_DOZE);
            measure(naps, &outbox, &vars, max_removals, &budget, true);
        };
        // As `std::thread::scope`'s own `spawn`, a thread that cannot start is a panic.
        let thread = thread
            .spawn_scoped(scope, body)
            .expect("cannot start the measuring thread")
            .thread()
            .clone();
        // Woken by its own short nap, not by the sampler (see `NAP`), but when it dozes.
        let requests = Handoff::new(requests, thread, WAKE_AT_REQUESTS).waking(&dozing);
        Self::handle(requests, replies)
    }

    /// A thread measuring as [`MeasuringThread::spawn`]'s does, with no budget (what it is
    /// handed is already found), whose measures also give its coverage's changes: a rank's
    /// share of a sharded suite. It ends when the `MeasuringThread` is dropped.
    pub fn spawn_share(vars: Vec<usize>, max_removals: usize) -> Self {
        let (requests, inbox) = crossbeam_channel::unbounded();
        let (outbox, replies) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new().name("snapsat-share".into());
        let body = move || {
            let budget = Budget::unlimited();
            let naps = Napping::every(inbox, Duration::from_secs(1));
            measure(naps, &outbox, &vars, max_removals, &budget, false);
        };
        let thread = thread
            .spawn(body)
            .expect("cannot start the measuring thread")
            .thread()
            .clone();
        // A rank hands its tests over a burst at a time: each wakes the thread, which
        // otherwise sleeps (a thousand ranks in one process napping would take the cores).
        Self::handle(Handoff::new(requests, thread, 1), replies)
    }

    fn handle(requests: Handoff<Request>, replies: crossbeam_channel::Receiver<Measures>) -> Self {
        MeasuringThread {
            requests,
            replies,
            len: 0,
            asked: false,
        }
    }

    /// Tests handed over so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first test.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tests join the suite (in suite order); once the measures are asked for, tests count
    /// in them only when asked for again.
    pub fn extend(&mut self, tests: Vec<Arc<Assignment>>) {
        if tests.is_empty() {
            return;
        }
        self.len += tests.len();
        // The thread ends only once this handle is dropped: the send cannot fail before.
        let _ = self.requests.send(Request::Extend(tests));
    }

    /// The measures stay those of the tests handed over so far: those after count in
    /// neither. A sharded run's ranks measure their own tests, and the coordinator combines
    /// their NCD shares with this one's ([`super::combined_terms`]) and merges their coverage
    /// into it ([`MeasuringThread::merge_coverage`]).
    pub fn freeze(&mut self) {
        let _ = self.requests.send(Request::Freeze);
    }

    /// Pairs a rank's coverage gained ([`Measures::coverage_changes`]) count in this one's.
    pub fn merge_coverage(&mut self, changes: Vec<(u32, u64)>) {
        if !changes.is_empty() {
            let _ = self.requests.send(Request::MergeCoverage(changes));
        }
    }

    /// Asks for the measures of the tests handed over so far, to be read by
    /// [`MeasuringThread::measures`] once the caller has done other work meanwhile.
    pub fn ask(&mut self) {
        if !self.asked {
            self.asked = true;
            let _ = self.requests.send(Request::Measures);
            self.requests.wake();
        }
    }

    /// Whether the measures asked for have come back: [`MeasuringThread::measures`] would
    /// not wait.
    pub fn ready(&self) -> bool {
        self.asked && !self.replies.is_empty()
    }

    /// The measures once every test handed over before they were asked for (now, unless
    /// [`MeasuringThread::ask`] did) is taken in.
    pub fn measures(&mut self) -> Measures {
        self.ask();
        self.asked = false;
        self.replies.recv().unwrap_or(Measures {
            ncd: None,
            share: None,
            coverage: 0.0,
            coverage_changes: Vec::new(),
            busy: Duration::ZERO,
        })
    }
}

/// The measuring thread's loop: `requests` in, measures out when asked, until the handle is
/// gone. A rank's thread (not `coordinators`) reports its coverage's changes with each
/// measures.
fn measure(
    mut requests: Napping<Request>,
    outbox: &crossbeam_channel::Sender<Measures>,
    vars: &[usize],
    max_removals: usize,
    budget: &Budget,
    coordinators: bool,
) {
    crate::handoff::work_beside_the_coordinator();
    let mut ncd = RunningNcd::new(vars, max_removals);
    let mut coverage = PairwiseCoverage::new(vars);
    let mut reported = Vec::new();
    let mut busy = Duration::ZERO;
    let mut frozen = false;
    // The NCD share once frozen: it changes no more, and each reading copies the streams.
    let mut frozen_share = None;
    while let Some(request) = requests.next() {
        let started = Instant::now();
        match request {
            Request::Freeze => {
                // No more tests to look for: requests for the measures wake the thread.
                frozen = true;
                requests.nap_for(Duration::from_secs(1));
            }
            Request::Extend(_) if frozen => {}
            Request::Extend(tests) => {
                ncd.extend(&tests, budget);
                tests.iter().for_each(|test| coverage.add(test));
            }
            Request::MergeCoverage(changes) => coverage.merge(&changes),
            Request::Measures => {
                let share = match frozen_share {
                    Some(share) => share,
                    None => ncd.share(),
                };
                if frozen {
                    frozen_share = Some(share);
                }
                let measures = Measures {
                    ncd: share.map(NcdShare::suite_terms),
                    share,
                    coverage: coverage.fraction(),
                    coverage_changes: match coordinators {
                        false => coverage.changes_since(&mut reported),
                        true => Vec::new(),
                    },
                    busy: crate::metrics::thread_cpu_time().unwrap_or(busy),
                };
                if outbox.send(measures).is_err() {
                    return;
                }
            }
        }
        busy += started.elapsed();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::wide_tests;
    use super::*;

    /// The thread takes the same tests in the same order as a `RunningNcd` and a
    /// `PairwiseCoverage` on the caller's thread would, so it reads the same measures
    /// whenever asked (of the tests handed over until asked), and a spent budget stops its
    /// NCD as it does the other.
    #[test]
    fn measures_on_their_own_thread_read_what_they_would_on_the_callers() {
        let tests: Vec<Arc<Assignment>> = wide_tests(40).into_iter().map(Arc::new).collect();
        let vars: Vec<usize> = (0..2000).step_by(2).collect();
        let mut here = RunningNcd::new(&vars, 8);
        let mut coverage_here = PairwiseCoverage::new(&vars);
        std::thread::scope(|scope| {
            let mut there = MeasuringThread::spawn(scope, vars.clone(), 8, Budget::unlimited());
            let mut at = 0;
            for batch in [1, 1, 3, 1, 7, 1, 1, 25] {
                for test in &tests[at..at + batch] {
                    there.extend(vec![Arc::clone(test)]);
                    coverage_here.add(test);
                }
                assert!(here.extend(&tests[at..at + batch], &Budget::unlimited()));
                at += batch;
                assert_eq!(there.len(), at);
                let measures = there.measures();
                assert_eq!(measures.ncd, here.terms(), "at {at} tests");
                assert_eq!(measures.coverage, coverage_here.fraction(), "at {at} tests");
            }
            assert!(coverage_here.fraction() > 0.0);
        });
        // Measures asked for are those of the tests handed over until then.
        std::thread::scope(|scope| {
            let mut there = MeasuringThread::spawn(scope, vars.clone(), 8, Budget::unlimited());
            there.extend(tests[..10].to_vec());
            there.ask();
            there.ask();
            there.extend(tests[10..].to_vec());
            let mut first_ten = RunningNcd::new(&vars, 8);
            first_ten.extend(&tests[..10], &Budget::unlimited());
            assert_eq!(there.measures().ncd, first_ten.terms());
            assert_eq!(
                there.measures().ncd,
                here.terms(),
                "all of them, asked again"
            );
        });
        let stop = std::sync::atomic::AtomicBool::new(true);
        std::thread::scope(|scope| {
            let spent = Budget::new(std::time::Duration::from_secs(60), &stop);
            let mut there = MeasuringThread::spawn(scope, vars.clone(), 8, spent);
            there.extend(tests.clone());
            assert_eq!(there.measures().ncd, None);
        });
    }
}
