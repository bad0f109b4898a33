//! Traces, the trace-abstraction (Definition 6), slicing for all-local-paths (Definition 7)
//! and the trace generator `generateTrace(M, loop-k)`.
//!
//! The trace-abstraction of a rule keeps only its calls (and where it returns or throws, which
//! ends the calls that follow). Slicing for a method M keeps the blocks of M and turns calls
//! to other methods into free trace variables. Generation enumerates every trace of the
//! (sliced) abstraction from M's block in which each loop iterates, and each method recurses,
//! at most k times.

use super::rules::{BlockId, BlockKind, Instr, Rules};
use crate::budget::Budget;
use std::collections::HashMap;

/// Which rules a run took: a tree of blocks, each with the rule taken and the blocks it called.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Trace {
    /// Rule `rule` (from 1) of `block` ran and called the blocks of `children`, in order.
    Node {
        /// The block.
        block: BlockId,
        /// The rule taken, from 1.
        rule: usize,
        /// The traces of the blocks it called, in order.
        children: Vec<Trace>,
    },
    /// A call to method block `method` whose trace is left open (a free variable).
    Free {
        /// The called method's block.
        method: BlockId,
    },
}

impl Trace {
    /// As the paper writes traces: `lcm(1,[if1(2,[]),Gcd,try1(1,[Abs,div1(1,[])])])`, free
    /// variables named after their method.
    pub fn show(&self, rules: &Rules) -> String {
        let mut names: HashMap<BlockId, usize> = HashMap::new();
        let mut out = String::new();
        self.write(rules, &mut names, &mut out);
        out
    }

    fn write(&self, rules: &Rules, names: &mut HashMap<BlockId, usize>, out: &mut String) {
        match self {
            Trace::Free { method } => {
                let n = names.entry(*method).or_insert(0);
                *n += 1;
                let name = &rules.blocks[*method].name;
                let mut chars = name.chars();
                let first = chars
                    .next()
                    .map_or(String::new(), |c| c.to_uppercase().collect());
                out.push_str(&first);
                out.push_str(chars.as_str());
                if *n > 1 {
                    out.push_str(&n.to_string());
                }
            }
            Trace::Node {
                block,
                rule,
                children,
            } => {
                out.push_str(&format!("{}({rule},[", rules.blocks[*block].name));
                for (i, c) in children.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    c.write(rules, names, out);
                }
                out.push_str("])");
            }
        }
    }

    /// This trace as the sliced program of `method` sees it: other methods' runs become free.
    pub fn sliced(&self, rules: &Rules, method: &str) -> Trace {
        match self {
            Trace::Node {
                block,
                rule,
                children,
            } => {
                if rules.blocks[*block].method != method {
                    return Trace::Free { method: *block };
                }
                Trace::Node {
                    block: *block,
                    rule: *rule,
                    children: children.iter().map(|c| c.sliced(rules, method)).collect(),
                }
            }
            free => free.clone(),
        }
    }

    /// Every (block, rule) this trace ran.
    pub fn rules_run(&self, out: &mut Vec<(BlockId, usize)>) {
        if let Trace::Node {
            block,
            rule,
            children,
        } = self
        {
            out.push((*block, *rule));
            children.iter().for_each(|c| c.rules_run(out));
        }
    }
}

/// How a rule's run ends, as far as the trace-abstraction can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ends {
    Normally,
    Returns,
    Throws,
}

/// `generateTrace`: every trace of the trace-abstraction from `method`'s block within
/// loop-`k`; `sliced` applies Definition 7 (all-local-paths), otherwise callees are
/// expanded too (all-paths). Stops at `limit` traces, or with those found so far once
/// `budget` runs out (a large loop-k gives more traces than any time limit allows).
pub fn generate(
    rules: &Rules,
    method: &str,
    k: usize,
    sliced: bool,
    limit: usize,
    budget: Budget,
) -> Vec<Trace> {
    let Some(entry) = rules.method_block(method) else {
        return Vec::new();
    };
    let mut g = Generator {
        rules,
        method,
        k,
        sliced,
        limit,
        budget,
        active: HashMap::new(),
        throws: HashMap::new(),
    };
    // A callee that may throw as its rule's last call gives the same trace either way: one
    // local path.
    let mut seen = std::collections::HashSet::new();
    let mut found = g.block(entry).into_iter();
    let traces = found
        .by_ref()
        .map(|(t, _)| t)
        .take_while(|_| !budget.exhausted())
        .filter(|t| seen.insert(t.clone()))
        .take(limit)
        .collect();
    // Freeing what was left (deep traces of a large loop-k: a gigabyte) took longer than the
    // time limit allowed; it is freed beside the run, which goes on to report.
    if found.len() > 0 {
        let aside = std::thread::Builder::new().spawn(move || drop(found));
        drop(aside);
    }
    traces
}

struct Generator<'a> {
    rules: &'a Rules,
    method: &'a str,
    k: usize,
    sliced: bool,
    limit: usize,
    budget: Budget<'a>,
    /// Blocks on the current call path and how often: loop iterations and recursion depth.
    active: HashMap<BlockId, usize>,
    /// Whether a method's run may end in an exception, by its block.
    throws: HashMap<BlockId, bool>,
}

impl Generator<'_> {
    fn block(&mut self, b: BlockId) -> Vec<(Trace, Ends)> {
        let block = &self.rules.blocks[b];
        let depth = self.active.entry(b).or_insert(0);
        *depth += 1;
        let bounded = matches!(block.kind, BlockKind::Loop | BlockKind::Method);
        let mut out = Vec::new();
        if (!bounded || *depth <= self.k + 1) && !self.budget.exhausted() {
            for (r, rule) in block.rules.iter().enumerate() {
                for (children, ends) in self.items(&rule.body) {
                    out.push((
                        Trace::Node {
                            block: b,
                            rule: r + 1,
                            children,
                        },
                        ends,
                    ));
                }
                if out.len() >= self.limit {
                    break;
                }
            }
        }
        *self.active.get_mut(&b).expect("entered") -= 1;
        out
    }

    /// True when some trace of method block `m` (callees expanded, within loop-k) ends in an
    /// exception: only then can a sliced-away call to it end the caller's rule.
    fn may_throw(&mut self, m: BlockId) -> bool {
        if let Some(&known) = self.throws.get(&m) {
            return known;
        }
        let mut expanded = Generator {
            rules: self.rules,
            method: &self.rules.blocks[m].method,
            // One iteration of each loop at least, so that a throw inside a loop body counts
            // whatever loop-k the traces are generated with.
            k: self.k.max(1),
            sliced: false,
            limit: self.limit,
            budget: self.budget,
            active: HashMap::new(),
            throws: HashMap::new(),
        };
        let throws = expanded.block(m).iter().any(|(_, e)| *e == Ends::Throws);
        self.throws.insert(m, throws);
        throws
    }

    /// The call sequences of a rule body and how each ends.
    fn items(&mut self, body: &[Instr]) -> Vec<(Vec<Trace>, Ends)> {
        let mut partial: Vec<(Vec<Trace>, Ends)> = vec![(Vec::new(), Ends::Normally)];
        for instr in body {
            if self.budget.exhausted() {
                return Vec::new();
            }
            let mut next = Vec::new();
            for (children, ends) in partial {
                if ends != Ends::Normally {
                    next.push((children, ends));
                    continue;
                }
                match instr {
                    Instr::Return(_) => next.push((children, Ends::Returns)),
                    Instr::Throw(_) => next.push((children, Ends::Throws)),
                    Instr::Call(b) => {
                        for (t, e) in self.block(*b) {
                            let mut c = children.clone();
                            c.push(t);
                            next.push((c, e));
                        }
                    }
                    Instr::Catching(b, handler) => {
                        for (t, e) in self.block(*b) {
                            let mut c = children.clone();
                            c.push(t);
                            if e == Ends::Throws {
                                for (h, he) in self.items(handler) {
                                    let mut ch = c.clone();
                                    ch.extend(h);
                                    next.push((ch, he));
                                }
                            } else {
                                next.push((c, e));
                            }
                        }
                    }
                    Instr::Invoke { method, .. } => {
                        let own = self.rules.blocks[*method].method == self.method;
                        if self.sliced && !own {
                            // The callee's run is left open; it ends the caller's rule
                            // too when it may throw.
                            let mut c = children.clone();
                            c.push(Trace::Free { method: *method });
                            if self.may_throw(*method) {
                                next.push((c.clone(), Ends::Throws));
                            }
                            next.push((c, Ends::Normally));
                        } else {
                            // A method's run ends the caller's rule only when it throws.
                            for (t, e) in self.block(*method) {
                                let mut c = children.clone();
                                c.push(t);
                                let e = if e == Ends::Throws { e } else { Ends::Normally };
                                next.push((c, e));
                            }
                        }
                    }
                    Instr::Assume(_) | Instr::Assign(..) | Instr::Store(..) => {
                        next.push((children, ends))
                    }
                }
                if next.len() > self.limit {
                    break;
                }
            }
            partial = next;
        }
        partial
    }
}
