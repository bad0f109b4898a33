//! Queues from the coordinator to the threads beside it (the suite's writer, the measuring
//! thread): handing an item over never wakes the thread. A thread blocked on its queue has to
//! be woken by each send, and that wake-up (a futex call and an interrupt to the other core)
//! was most of what merging a verdict cost the coordinator: two-thirds of it on
//! LoginService2.sk_23_36, where the writer had gone to sleep between tests. The thread naps
//! instead while its queue is empty, and is woken when it is wanted at once (a request it must
//! answer, the end) or when items pile up: then the wake-up is paid once for many items.

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::Duration;

/// How long a thread with nothing to take naps before it looks again: how late a handed-over
/// test may reach the suite's file at most, for a thousand wake-ups a second of an idle thread.
const NAP: Duration = Duration::from_millis(1);

/// Makes the calling thread one that works beside the coordinator, not in its way: on Linux
/// it is scheduled as a batch thread (`SCHED_BATCH`), whose wake-ups do not preempt the thread
/// running on its core. Woken by the coordinator for a round's measures, the measuring
/// thread took the coordinator's core from it for 0.5–0.8 ms, in half the rounds of
/// 70.sk_3_40 as a one-rank MPI job: with the writer and the measuring thread as batch
/// threads, the coordinator's time there fell from 18.4 to 8.1 ms (medians of 6). They still
/// get their fair share of the cores. Elsewhere, nothing.
pub fn work_beside_the_coordinator() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread. A refusal
        // leaves the thread as it was.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    }
}

/// A queue's receiving end: the items in order, napping while none waits; it ends once the
/// [`Handoff`] is gone.
pub struct Napping<T> {
    queue: Receiver<T>,
    nap: Duration,
    /// Where the thread dozes once idle ([`Napping::dozing`]) and for how long at most, and
    /// the nap it takes next.
    dozing: Option<(Dozing, Duration)>,
    next_nap: Duration,
}

/// The longest a thread that dozes ([`Napping::dozing`]) sleeps between looks at its queue.
pub const LONGEST_DOZE: Duration = Duration::from_millis(100);

/// Shared by a [`Napping`] thread and the [`Handoff`] that feeds it: set while the thread
/// dozes (its queue stayed empty, so it naps longer and longer), so that the next item wakes
/// it at once. A thread napping a millisecond while it had nothing to do took 30 ms of CPU
/// in an 8 s run (the writer of a sharded run whose ranks keep their tests).
#[derive(Clone, Default)]
pub struct Dozing(Arc<AtomicBool>);

impl<T> Napping<T> {
    /// The items of `queue`, looked for every millisecond while none waits.
    pub fn new(queue: Receiver<T>) -> Self {
        Self::every(queue, NAP)
    }

    /// The items of `queue`, looked for every `nap` while none waits.
    pub fn every(queue: Receiver<T>, nap: Duration) -> Self {
        Napping {
            queue,
            nap,
            dozing: None,
            next_nap: nap,
        }
    }

    /// While its queue stays empty, the thread naps twice as long each time, up to `longest`
    /// ([`LONGEST_DOZE`]), and the [`Handoff`] sharing `dozing` wakes it at the next item.
    pub fn dozing(mut self, dozing: &Dozing, longest: Duration) -> Self {
        self.dozing = Some((dozing.clone(), longest));
        self
    }

    /// From now on, naps last `nap`.
    pub fn nap_for(&mut self, nap: Duration) {
        self.nap = nap;
        self.next_nap = nap;
    }

    /// The items waiting now, without a nap.
    pub fn waiting(&self) -> crossbeam_channel::TryIter<'_, T> {
        self.queue.try_iter()
    }
}

impl<T> Iterator for Napping<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            match self.queue.try_recv() {
                Ok(item) => {
                    self.next_nap = self.nap;
                    return Some(item);
                }
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => return None,
            }
            let Some((Dozing(dozing), longest)) = &self.dozing else {
                std::thread::park_timeout(self.nap);
                continue;
            };
            if self.next_nap > self.nap {
                // Said before the last look: an item sent after that look finds it said, and
                // wakes the thread (or the look finds the item).
                dozing.store(true, Ordering::SeqCst);
                if !self.queue.is_empty() {
                    dozing.store(false, Ordering::SeqCst);
                    continue;
                }
            }
            std::thread::park_timeout(self.next_nap);
            dozing.store(false, Ordering::SeqCst);
            self.next_nap = (self.next_nap * 2).min((*longest).max(self.nap));
        }
    }
}

/// A queue's sending end, to the thread that takes from it as [`Napping`]. Dropping it closes
/// the queue and wakes the thread, which then takes what is left and ends.
pub struct Handoff<T> {
    /// `None` only while it is dropped: the queue closes before the thread is woken.
    sender: Option<Sender<T>>,
    receiver: Thread,
    wake_at: usize,
    dozing: Option<Dozing>,
}

impl<T> Handoff<T> {
    /// Hands items over through `sender` to the `receiver` thread, waking it before its nap
    /// is over once `wake_at` items wait. Waking a thread that is not asleep costs an atomic
    /// swap, no system call; one asleep, a futex call (~9 µs on these machines): the fewer
    /// wake-ups the better, as long as the thread keeps up where the caller waits for it.
    pub fn new(sender: Sender<T>, receiver: Thread, wake_at: usize) -> Self {
        Handoff {
            sender: Some(sender),
            receiver,
            wake_at: wake_at.max(1),
            dozing: None,
        }
    }

    /// Wakes the thread at the first item it is sent while it dozes ([`Napping::dozing`]).
    pub fn waking(mut self, dozing: &Dozing) -> Self {
        self.dozing = Some(dozing.clone());
        self
    }

    /// Queues `item` (waiting while the queue is full), waking the thread only once
    /// `wake_at` items wait or the queue is full (a queue of a few very wide tests: the next
    /// send would wait out the thread's nap); the item back if the thread has ended.
    pub fn send(&self, item: T) -> Result<(), T> {
        let sender = self.sender.as_ref().expect("open until dropped");
        sender.send(item).map_err(|e| e.into_inner())?;
        let dozes = self
            .dozing
            .as_ref()
            .is_some_and(|Dozing(dozing)| dozing.swap(false, Ordering::SeqCst));
        if dozes || sender.len() >= self.wake_at || sender.is_full() {
            self.wake();
        }
        Ok(())
    }

    /// Makes the thread look at its queue now.
    pub fn wake(&self) {
        self.receiver.unpark();
    }
}

impl<T> Drop for Handoff<T> {
    fn drop(&mut self) {
        self.sender = None;
        self.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items arrive in order without a wake-up, and dropping the sending end ends the thread
    /// with every item taken.
    #[test]
    fn items_arrive_in_order_and_the_end_wakes_the_thread() {
        let (sender, receiver) = crossbeam_channel::bounded(4);
        let thread = std::thread::spawn(move || Napping::new(receiver).collect::<Vec<u32>>());
        let handoff = Handoff::new(sender, thread.thread().clone(), 16);
        for i in 0..100 {
            handoff.send(i).unwrap();
        }
        // Long enough for the thread to be napping, many naps over.
        std::thread::sleep(Duration::from_millis(20));
        drop(handoff);
        assert_eq!(thread.join().unwrap(), (0..100).collect::<Vec<_>>());
    }

    /// A napping thread is woken once `wake_at` items wait, or its queue is full (whichever
    /// comes first), and not before: each time, however many it took in between.
    #[test]
    fn the_thread_is_woken_once_wake_at_items_wait_or_the_queue_is_full() {
        for (capacity, wake_at) in [(64, 4), (3, 16)] {
            let woken_at = wake_at.min(capacity);
            let (sender, receiver) = crossbeam_channel::bounded(capacity);
            let (taken, took) = crossbeam_channel::unbounded();
            let thread = std::thread::spawn(move || {
                // Naps far longer than the test: only a wake-up has it look again.
                for item in Napping::every(receiver, Duration::from_secs(600)) {
                    taken.send(item).unwrap();
                }
            });
            // The thread's first look, at an empty queue, starts its nap.
            std::thread::sleep(Duration::from_millis(50));
            let handoff = Handoff::new(sender, thread.thread().clone(), wake_at);
            for batch in 0..3 {
                for i in 0..woken_at - 1 {
                    handoff.send(batch * 100 + i).unwrap();
                }
                std::thread::sleep(Duration::from_millis(50));
                assert!(took.is_empty(), "woken before {woken_at} items waited");
                handoff.send(batch * 100 + woken_at - 1).unwrap();
                for i in 0..woken_at {
                    let item = took.recv_timeout(Duration::from_secs(10));
                    assert_eq!(item, Ok(batch * 100 + i), "not woken at {woken_at} items");
                }
                // Taken, it naps again.
                std::thread::sleep(Duration::from_millis(50));
            }
            drop(handoff);
            thread.join().unwrap();
        }
    }

    /// The thread that asks becomes a batch thread; the others stay as they were.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_beside_the_coordinator_is_a_batch_thread() {
        // SAFETY: reads the calling thread's policy.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let before = policy();
        let beside = std::thread::spawn(move || {
            work_beside_the_coordinator();
            policy()
        });
        assert_eq!(beside.join().unwrap(), libc::SCHED_BATCH);
        assert_eq!(policy(), before);
    }

    /// A thread that dozes, however long its naps have grown, takes the first item sent as
    /// soon as it comes: the send wakes it, though far fewer than `wake_at` items wait.
    #[test]
    fn a_dozing_thread_is_woken_by_the_next_item() {
        let (sender, receiver) = crossbeam_channel::bounded(64);
        let (taken, took) = crossbeam_channel::unbounded();
        let dozing = Dozing::default();
        let doze = dozing.clone();
        let thread = std::thread::spawn(move || {
            let naps = Napping::every(receiver, Duration::from_millis(1));
            for item in naps.dozing(&doze, Duration::from_secs(600)) {
                taken.send(item).unwrap();
            }
        });
        let handoff = Handoff::new(sender, thread.thread().clone(), 1000).waking(&dozing);
        for round in 0..3 {
            // Idle long enough for its naps to have grown past this test's length.
            std::thread::sleep(Duration::from_millis(100));
            handoff.send(round).unwrap();
            assert_eq!(took.recv_timeout(Duration::from_secs(60)), Ok(round));
        }
        drop(handoff);
        thread.join().unwrap();
    }

    #[test]
    fn a_send_after_the_thread_ended_gives_the_item_back() {
        let (sender, receiver) = crossbeam_channel::bounded(1);
        let handoff = Handoff::new(sender, std::thread::current(), 16);
        drop(receiver);
        assert_eq!(handoff.send(7), Err(7));
    }
}
