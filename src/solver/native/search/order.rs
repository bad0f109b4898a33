//! The refuter's decision order: the unassigned variable of highest activity next (VSIDS).
//!
//! A binary max-heap, kept lazily. A search re-inserts every variable it unassigns, and a
//! query that ends in a model unassigns them all; of the variables that come back, most are
//! assigned again by propagation before any is decided: on doublyLinkedList.sk_8_37 a query
//! took 26 decisions and popped 5,263 variables, the rest assigned already, each pop a sift
//! down the heap (with the insertions' sifts up, 40% of a repair-bound run). So insertions
//! wait at the end until a variable is wanted, and when more than half of the heap is
//! assigned, it is rebuilt from the unassigned ones in one pass.

/// Activity above which every activity is scaled down.
const RESCALE: f64 = 1e100;
/// How much more each conflict's bumps weigh than the last one's.
const DECAY: f64 = 0.95;

/// A variable in the heap, with its activity beside it: a sift compares without looking its
/// variables up.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    activity: f64,
    var: u32,
}

/// Unassigned variables by activity.
#[derive(Debug, Clone)]
pub(super) struct DecisionOrder {
    activity: Vec<f64>,
    bump: f64,
    heap: Vec<Ranked>,
    /// Entries `heap[..heaped]` are a heap; those after it were inserted since.
    heaped: usize,
    /// Per variable: its index in `heap`, or `u32::MAX`.
    place: Vec<u32>,
    /// Per variable: in no clause, so never decided (its value is its phase).
    free: Vec<bool>,
}

impl DecisionOrder {
    /// Every one of `num_vars` variables but the `free` ones, all of activity 0.
    pub(super) fn new(num_vars: usize, free: &[u32]) -> Self {
        let mut is_free = vec![false; num_vars];
        for &v in free {
            is_free[v as usize] = true;
        }
        let mut order = DecisionOrder {
            activity: vec![0.0; num_vars],
            bump: 1.0,
            heap: Vec::with_capacity(num_vars),
            heaped: 0,
            place: vec![u32::MAX; num_vars],
            free: is_free,
        };
        for v in 0..num_vars {
            order.insert(v);
        }
        order
    }

    /// Makes `v` a candidate again (it was unassigned); nothing if it is one or is free.
    pub(super) fn insert(&mut self, v: usize) {
        if self.place[v] != u32::MAX || self.free[v] {
            return;
        }
        self.place[v] = self.heap.len() as u32;
        self.heap.push(Ranked {
            activity: self.activity[v],
            var: v as u32,
        });
    }

    /// Raises `v`'s activity by the current bump.
    pub(super) fn bump(&mut self, v: usize) {
        self.activity[v] += self.bump;
        if self.activity[v] > RESCALE {
            for a in &mut self.activity {
                *a /= RESCALE;
            }
            for entry in &mut self.heap {
                entry.activity /= RESCALE;
            }
            self.bump /= RESCALE;
        }
        let i = self.place[v] as usize;
        if i < self.heap.len() {
            self.heap[i].activity = self.activity[v];
            if i < self.heaped {
                self.sift_up(i);
            }
        }
    }

    /// Makes later bumps weigh more: called once a conflict.
    pub(super) fn decay(&mut self) {
        self.bump /= DECAY;
    }

    /// The variable to decide next: of those `is_open` (the unassigned ones, `open` of them,
    /// every one inserted since it was last assigned), one of highest activity; `None` when
    /// none is open.
    pub(super) fn next(&mut self, open: usize, is_open: impl Fn(usize) -> bool) -> Option<usize> {
        if self.heap.len() > 2 * open + 16 {
            self.keep_only(&is_open);
        } else if self.heaped < self.heap.len() {
            self.sift_in_the_inserted();
        }
        while let Some(v) = self.pop() {
            if is_open(v) {
                return Some(v);
            }
        }
        None
    }

    /// The heap rebuilt of the variables `is_open`, in one pass.
    fn keep_only(&mut self, is_open: &impl Fn(usize) -> bool) {
        let mut kept = 0;
        for i in 0..self.heap.len() {
            let entry = self.heap[i];
            if is_open(entry.var as usize) {
                self.heap[kept] = entry;
                self.place[entry.var as usize] = kept as u32;
                kept += 1;
            } else {
                self.place[entry.var as usize] = u32::MAX;
            }
        }
        self.heap.truncate(kept);
        self.rebuild();
    }

    /// The entries inserted since the last pop made part of the heap: one by one when they
    /// are few, else the heap rebuilt in one pass.
    fn sift_in_the_inserted(&mut self) {
        let len = self.heap.len();
        if 2 * (len - self.heaped) > len {
            self.rebuild();
        } else {
            for i in self.heaped..len {
                self.sift_up(i);
            }
            self.heaped = len;
        }
    }

    /// All of `heap` made a heap, in one pass (Floyd's).
    fn rebuild(&mut self) {
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
        self.heaped = self.heap.len();
    }

    fn pop(&mut self) -> Option<usize> {
        let top = self.heap.first()?.var as usize;
        let last = self.heap.pop().expect("not empty");
        self.place[top] = u32::MAX;
        if !self.heap.is_empty() {
            self.heap[0] = last;
            self.place[last.var as usize] = 0;
            self.sift_down(0);
        }
        self.heaped = self.heap.len();
        Some(top)
    }

    fn sift_up(&mut self, mut i: usize) {
        let entry = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].activity >= entry.activity {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.place[self.heap[i].var as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = entry;
        self.place[entry.var as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let entry = self.heap[i];
        let len = self.heap.len();
        loop {
            let left = 2 * i + 1;
            if left >= len {
                break;
            }
            // The larger child chosen without a branch: which one it is, is a coin flip the
            // branch predictor loses.
            let right = left + 1 < len && self.heap[left + 1].activity > self.heap[left].activity;
            let child = left + usize::from(right);
            if self.heap[child].activity <= entry.activity {
                break;
            }
            self.heap[i] = self.heap[child];
            self.place[self.heap[i].var as usize] = i as u32;
            i = child;
        }
        self.heap[i] = entry;
        self.place[entry.var as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever was bumped, assigned and unassigned in between, the variable decided next
        /// is an open one of highest activity, and every open variable comes out in turn.
        #[test]
        fn the_next_variable_is_an_open_one_of_highest_activity(
            steps in proptest::collection::vec((0usize..40, 0u8..4), 1..400)
        ) {
            let n = 40;
            let mut order = DecisionOrder::new(n, &[]);
            let mut open = vec![true; n];
            let mut activity = vec![0.0f64; n];
            let mut bump = 1.0;
            for (v, step) in steps {
                match step {
                    // A conflict's bump (heavier each time).
                    0 => {
                        order.bump(v);
                        activity[v] += bump;
                        order.decay();
                        bump /= DECAY;
                    }
                    // Assigned by propagation: left in the heap.
                    1 => open[v] = false,
                    // Unassigned by a backtrack.
                    2 => {
                        open[v] = true;
                        order.insert(v);
                    }
                    // A decision.
                    _ => {
                        let count = open.iter().filter(|&&o| o).count();
                        let decided = order.next(count, |u| open[u]);
                        let best = (0..n).filter(|&u| open[u]).map(|u| activity[u]).fold(None, |m: Option<f64>, a| Some(m.map_or(a, |m| m.max(a))));
                        match decided {
                            Some(u) => {
                                prop_assert!(open[u]);
                                prop_assert_eq!(Some(activity[u]), best);
                                open[u] = false;
                            }
                            None => prop_assert_eq!(best, None),
                        }
                    }
                }
            }
            // Every open variable still comes out, highest activity first.
            let mut last = f64::INFINITY;
            let mut count = open.iter().filter(|&&o| o).count();
            while let Some(u) = order.next(count, |u| open[u]) {
                prop_assert!(open[u] && activity[u] <= last);
                last = activity[u];
                open[u] = false;
                count -= 1;
            }
            prop_assert_eq!(count, 0);
        }
    }

    /// A heap mostly of assigned variables, rebuilt of the open ones, still gives the most
    /// active first.
    #[test]
    fn a_heap_rebuilt_of_the_open_variables_keeps_their_order() {
        let n = 200;
        let mut order = DecisionOrder::new(n, &[]);
        // Activities in a shuffled order of the variables: 37 is a unit mod 200.
        for k in 0..n {
            for _ in 0..k {
                order.bump(k * 37 % n);
            }
        }
        let open = |v: usize| v % 10 == 3;
        let mut decided = Vec::new();
        while let Some(v) = order.next(n / 10 - decided.len(), |u| open(u) && !decided.contains(&u))
        {
            decided.push(v);
        }
        let mut expected: Vec<usize> = (0..n).filter(|&v| open(v)).collect();
        expected.sort_by(|&a, &b| order.activity[b].total_cmp(&order.activity[a]));
        assert_eq!(decided, expected);
    }

    /// A variable in no clause never comes out, bumped or inserted again after a backtrack;
    /// the others do.
    #[test]
    fn free_variables_are_never_decided() {
        let mut order = DecisionOrder::new(4, &[1, 3]);
        order.bump(1);
        order.bump(3);
        order.insert(1);
        let mut decided = Vec::new();
        while let Some(v) = order.next(4 - decided.len(), |_| true) {
            decided.push(v);
        }
        decided.sort_unstable();
        assert_eq!(decided, [0, 2]);
    }

    /// Bumps past the rescaling threshold keep the order.
    #[test]
    fn rescaled_activities_keep_their_order() {
        let mut order = DecisionOrder::new(3, &[]);
        order.bump(1);
        for _ in 0..5000 {
            order.decay();
        }
        order.bump(2);
        order.bump(2);
        assert!(order.activity[2] < RESCALE);
        let open = |_: usize| true;
        assert_eq!(order.next(3, open), Some(2));
        assert_eq!(order.next(2, open), Some(1));
        assert_eq!(order.next(1, open), Some(0));
        assert_eq!(order.next(0, open), None);
    }
}
