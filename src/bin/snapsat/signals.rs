//! SIGINT and SIGTERM: a flag that the work watches from the command's start, and a guard for
//! the time before the work can watch it (reading the input, which may block on a FIFO or
//! take seconds on a large formula), when ending the process loses nothing.

use crate::failure::{say, status, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How often the guard looks at the flag and the clock.
const GUARD_POLL: Duration = Duration::from_millis(10);

/// The flag that SIGINT and SIGTERM set, installed on the first call: work stops keeping what
/// it found.
pub fn interrupt_on_signals() -> Result<Arc<AtomicBool>> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    if let Some(flag) = FLAG.get() {
        return Ok(flag.clone());
    }
    let interrupt = Arc::new(AtomicBool::new(false));
    let flag = interrupt.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| anyhow::anyhow!("cannot install the interrupt handler: {e}"))?;
    Ok(FLAG.get_or_init(|| interrupt).clone())
}

/// While it lives, ends the process with status 130 on SIGINT or SIGTERM, or 30 once
/// `deadline` passes: nothing is written yet, so nothing is lost. Dropped once the work
/// watches the flag and the deadline itself.
pub struct InputGuard {
    /// Set when dropped; the guard's thread holds the lock while it ends the process, so no
    /// output is begun meanwhile.
    done: Arc<Mutex<bool>>,
}

impl InputGuard {
    /// A guard over reading `what`, until `deadline` (none: no time limit).
    pub fn watch(
        interrupt: Arc<AtomicBool>,
        deadline: Option<Instant>,
        what: &'static str,
    ) -> Self {
        let done = Arc::new(Mutex::new(false));
        let watched = done.clone();
        let spawned = std::thread::Builder::new()
            .name("snapsat-input-guard".into())
            .spawn(move || loop {
                std::thread::sleep(GUARD_POLL);
                let Ok(done) = watched.lock() else { return };
                if *done {
                    return;
                }
                if interrupt.load(Ordering::Relaxed) {
                    say!("snapsat: interrupted while reading {what}: nothing was written");
                    std::process::exit(status::INTERRUPTED.into());
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    say!(
                        "snapsat: no solution found (the time limit passed while reading {what}); \
                         try a longer --time-limit"
                    );
                    std::process::exit(status::UNKNOWN.into());
                }
            });
        // Without the thread, the run still stops once it watches the flag itself.
        drop(spawned);
        InputGuard { done }
    }
}

impl Drop for InputGuard {
    fn drop(&mut self) {
        if let Ok(mut done) = self.done.lock() {
            *done = true;
        }
    }
}
