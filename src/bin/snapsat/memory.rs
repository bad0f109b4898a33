//! The process's memory: transparent huge pages off from its load, and back on for formulas
//! large enough that they pay for their clearing.

use snapsat::formula::Cnf;

/// Formulas from this many literal occurrences (and variables) on get transparent huge pages.
/// mimalloc asks the kernel for them, and the kernel clears all 2 MiB of one at its first
/// touch: a small formula's run touches little of each, and on blasted_case47 (1,000 tests in
/// 17 ms) clearing them was 23% of the process's CPU; without them six small case studies'
/// 1000-test runs took 2-13% less. Where a solver's clauses outgrow what the TLB reaches with
/// 4 KiB pages (a few MiB), huge pages pay for themselves again.
pub const HUGE_PAGES_FROM: usize = 1 << 20;

/// True for formulas large enough that huge pages pay for their clearing.
pub fn huge_pages_pay(cnf: &Cnf) -> bool {
    cnf.num_literals() + cnf.num_vars() >= HUGE_PAGES_FROM
}

/// Lets the kernel back this process's memory with transparent huge pages, or not, from now on
/// (`PR_SET_THP_DISABLE` is checked at each page fault; pages already mapped stay as they are).
/// Best effort: a kernel without the call leaves things as they were.
pub fn allow_huge_pages(allow: bool) {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and three zero arguments, and only
    // changes how later page faults of this process are served; no memory is passed.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            libc::c_ulong::from(!allow),
            0,
            0,
            0,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = allow;
}

/// Huge pages off from the start, before Rust's runtime and the first allocation: glibc reads
/// `/proc/self/maps` for the main thread's stack as the runtime starts, mimalloc reserves its
/// first arena for that, and with huge pages on, its first touches were served 2 MiB pages the
/// kernel cleared. In a third of blasted_case47's 1000-test runs that was 9 ms of the process's
/// 22 of CPU (31 against 22 ms, 14 ms of wall against 23-29), before `main` could say no.
/// A function in `.init_array` runs before `main`, as C constructors do.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static HUGE_PAGES_OFF_AT_LOAD: extern "C" fn() = {
    extern "C" fn huge_pages_off() {
        allow_huge_pages(false);
    }
    huge_pages_off
};

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn huge_pages_disabled() -> bool {
        // SAFETY: PR_GET_THP_DISABLE takes no memory and only reads this process's flag.
        unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 }
    }

    /// Off from the process's start (this test binary's too: the constructor is in this
    /// file), then as the formula says.
    #[test]
    fn huge_pages_are_off_for_small_formulas_and_back_for_large_ones() {
        assert!(huge_pages_disabled(), "huge pages on at the start");
        let small = Cnf::from_clauses(3, &[vec![1, -2], vec![2, 3]]);
        let large = Cnf::new(HUGE_PAGES_FROM);
        assert!(!huge_pages_pay(&small));
        assert!(huge_pages_pay(&large));
        allow_huge_pages(huge_pages_pay(&small));
        assert!(huge_pages_disabled());
        allow_huge_pages(huge_pages_pay(&large));
        assert!(!huge_pages_disabled());
    }
}
