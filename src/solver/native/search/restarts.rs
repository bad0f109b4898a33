//! Restarts on Luby's sequence.

/// Conflicts between restarts, times the Luby sequence's terms (MiniSat's unit).
pub(super) const RESTART_UNIT: u64 = 100;

/// When a search starts over from its assumptions, keeping what it learned and its saved
/// phases: after `RESTART_UNIT` times 1, 1, 2, 1, 1, 2, 4, … conflicts (Luby's sequence).
/// Without restarts a search stays under its first decisions however badly they chose, and
/// the long searches of a fresh solution on the hardest case studies are where its time
/// went.
#[derive(Debug, Default)]
pub(super) struct Restarts {
    /// Restarts so far.
    done: u64,
    /// Conflicts since the last.
    conflicts: u64,
}

impl Restarts {
    /// Counts a conflict; true when the search is to restart now.
    pub(super) fn due(&mut self) -> bool {
        self.conflicts += 1;
        if self.conflicts < RESTART_UNIT * luby(self.done) {
            return false;
        }
        self.done += 1;
        self.conflicts = 0;
        true
    }
}

/// Term `i` (from 0) of Luby's sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, ….
pub(super) fn luby(mut i: u64) -> u64 {
    // The smallest complete prefix 2^k − 1 holding term i, then down into the copy i is in.
    let (mut size, mut exponent) = (1u64, 0u32);
    while size < i + 1 {
        exponent += 1;
        size = 2 * size + 1;
    }
    while size - 1 != i {
        size = (size - 1) >> 1;
        exponent -= 1;
        i %= size;
    }
    1 << exponent
}
