//! Queues from the coordinator to the threads beside it (the suite's writer, the measuring
//! thread): handing an item over never wakes the thread. A thread blocked on its queue has to
//! be woken by each send, and that wake-up (a futex call and an interrupt to the other core)
//! was most of what merging a verdict cost the coordinator: two-thirds of it on
//! LoginService2.sk_23_36, where the writer had gone to sleep between tests. The thread naps
//! instead while its queue is empty, and is woken when it is wanted at once (a request it must
//! answer, the end) or when items pile up: then the wake-up is paid once for many items.

use crossbeam_channel::{Receiver, Sender, TryRecvError};
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
}

impl<T> Napping<T> {
    /// The items of `queue`, looked for every millisecond while none waits.
    pub fn new(queue: Receiver<T>) -> Self {
        Self::every(queue, NAP)
    }

    /// The items of `queue`, looked for every `nap` while none waits.
    pub fn every(queue: Receiver<T>, nap: Duration) -> Self {
        Napping { queue, nap }
    }

    /// From now on, naps last `nap`.
    pub fn nap_for(&mut self, nap: Duration) {
        self.nap = nap;
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
                Ok(item) => return Some(item),
                Err(TryRecvError::Empty) => std::thread::park_timeout(self.nap),
                Err(TryRecvError::Disconnected) => return None,
            }
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
        }
    }

    /// Queues `item` (waiting while the queue is full), waking the thread only once
    /// `wake_at` items wait or the queue is full (a queue of a few very wide tests: the next
    /// send would wait out the thread's nap); the item back if the thread has ended.
    pub fn send(&self, item: T) -> Result<(), T> {
        let sender = self.sender.as_ref().expect("open until dropped");
        sender.send(item).map_err(|e| e.into_inner())?;
        if sender.len() >= self.wake_at || sender.is_full() {
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

    #[test]
    fn a_send_after_the_thread_ended_gives_the_item_back() {
        let (sender, receiver) = crossbeam_channel::bounded(1);
        let handoff = Handoff::new(sender, std::thread::current(), 16);
        drop(receiver);
        assert_eq!(handoff.send(7), Err(7));
    }
}
