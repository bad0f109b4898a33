//! Symbolic execution of the rules over fixed-width terms, guided by a trace or not.
//!
//! Execution is depth-first over the choices of rules: a run follows a list of decisions and
//! takes the first alternative past its end; the next run changes the last decision that has
//! alternatives left. Every guard is checked for feasibility as it is met (bit-blasted, solved
//! by splr, answers cached by path), so infeasible prefixes are cut at once. A guiding trace
//! fixes the rule of every block it names; its free variables (callees) are explored until
//! the first feasible completion.

use super::bitblast;
use super::lang::{BinOp, Expr};
use super::rules::{BlockId, BlockKind, Instr, Rules};
use super::term::{TermId, Terms};
use super::traces::Trace;
use crate::budget::Budget;
use crate::solver::Oracle;
use std::collections::HashMap;

/// Solver time for a try at small input values.
const SMALL_INPUT_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);

/// How a path ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathEnd {
    /// The method returned this value.
    Returned(TermId),
    /// The method threw this exception, uncaught.
    Threw(&'static str),
}

/// One feasible path of the method under test.
#[derive(Debug, Clone)]
pub struct Path {
    /// The rules it takes.
    pub trace: Trace,
    /// The path condition: guards met, in order (constant ones left out).
    pub constraints: Vec<TermId>,
    /// How the method ends on it.
    pub end: PathEnd,
}

/// Why a run stopped before the method ended.
enum Stop {
    Infeasible,
    /// A loop or recursion went past loop-k.
    Bounded,
    /// The guiding trace asks for something else than this run did.
    Mismatch,
    Solver(String),
}

enum Completion {
    Normal,
    Return(TermId),
    Throw(&'static str),
}

/// An int parameter's input word, or an array parameter's words.
#[derive(Debug, Clone)]
pub enum InputValue {
    /// An int parameter's word.
    Int(TermId),
    /// An array parameter's words, element by element.
    Array(Vec<TermId>),
}

/// Explores one method of a program.
pub struct Explorer<'a> {
    rules: &'a Rules,
    oracle: &'a dyn Oracle,
    budget: Budget<'a>,
    loop_k: usize,
    method: BlockId,
    /// The terms of every path explored.
    pub terms: Terms,
    /// The method's parameters, bound to input words.
    pub params: Vec<(String, InputValue)>,
    feasible: HashMap<Vec<TermId>, bool>,
    /// Feasibility queries asked of the solver (cached ones not counted).
    pub solver_calls: u64,
    /// Runs started (each follows one list of decisions).
    pub runs: u64,
    /// The budget ran out: what was found so far is all there is.
    pub out_of_time: bool,
}

impl<'a> Explorer<'a> {
    /// `None` when `method` is not in the program.
    pub fn new(
        rules: &'a Rules,
        method: &str,
        width: u32,
        loop_k: usize,
        oracle: &'a dyn Oracle,
        budget: Budget<'a>,
    ) -> Option<Self> {
        let (block, params) = rules.methods.get(method)?.clone();
        let mut terms = Terms::new(width);
        let params = params
            .into_iter()
            .map(|(name, array)| {
                let value = match array {
                    None => InputValue::Int(terms.input(name.clone())),
                    Some(n) => InputValue::Array(
                        (0..n)
                            .map(|i| terms.input(format!("{name}[{i}]")))
                            .collect(),
                    ),
                };
                (name, value)
            })
            .collect();
        Some(Explorer {
            rules,
            oracle,
            budget,
            loop_k,
            method: block,
            terms,
            params,
            feasible: HashMap::new(),
            solver_calls: 0,
            runs: 0,
            out_of_time: false,
        })
    }

    /// Feasible paths in depth-first order: all of them (up to `limit`), or the first only.
    /// With `guide`, only paths whose trace the guide matches (its free variables bound to
    /// whatever the callees did).
    pub fn explore(
        &mut self,
        guide: Option<&Trace>,
        first_only: bool,
        limit: usize,
    ) -> Result<(Vec<Path>, bool), String> {
        let mut decisions: Vec<usize> = Vec::new();
        let mut found = Vec::new();
        loop {
            if self.budget.exhausted() {
                self.out_of_time = true;
                return Ok((found, true));
            }
            self.runs += 1;
            let mut run = Run {
                ex: self,
                decisions: &decisions,
                taken: Vec::new(),
                path: Vec::new(),
                heap: Vec::new(),
                active: HashMap::new(),
            };
            let outcome = run.method(guide);
            let (taken, path) = (run.taken, run.path);
            match outcome {
                Ok((end, trace)) => {
                    found.push(Path {
                        trace,
                        constraints: path,
                        end,
                    });
                    if first_only {
                        return Ok((found, false));
                    }
                    if found.len() >= limit {
                        return Ok((found, true));
                    }
                }
                Err(Stop::Solver(_)) if self.budget.exhausted() => {
                    self.out_of_time = true;
                    return Ok((found, true));
                }
                Err(Stop::Solver(why)) => return Err(why),
                Err(Stop::Infeasible | Stop::Bounded | Stop::Mismatch) => {}
            }
            let mut next = taken;
            loop {
                match next.pop() {
                    Some((choice, alternatives)) if choice + 1 < alternatives => {
                        next.push((choice + 1, alternatives));
                        break;
                    }
                    Some(_) => {}
                    None => return Ok((found, false)),
                }
            }
            decisions = next.into_iter().map(|(c, _)| c).collect();
        }
    }

    /// Input values on `path` (solved, then checked by evaluating every guard), or an
    /// internal error.
    pub fn solve(&mut self, path: &Path) -> Result<Vec<u64>, String> {
        // Small inputs read best: try |input| <= 8, then 128 (each briefly: bounds can make
        // multiplication and division circuits hard), then any.
        let mut values = None;
        for bits in [4u32, 8, self.terms.width()] {
            let mut constraints = path.constraints.clone();
            if bits < self.terms.width() {
                for i in 0..self.terms.inputs().len() {
                    let input = self.terms.input_word(i);
                    let low = self.terms.constant(-(1i64 << (bits - 1)));
                    let high = self.terms.constant(1i64 << (bits - 1));
                    constraints.push(self.terms.binary(BinOp::Ge, input, low));
                    constraints.push(self.terms.binary(BinOp::Le, input, high));
                }
            }
            self.solver_calls += 1;
            let bounded = bits < self.terms.width();
            let timeout = self.budget.cap(bounded.then_some(SMALL_INPUT_TIMEOUT));
            match bitblast::solve(&self.terms, &constraints, self.oracle, timeout) {
                Ok(Some(found)) => {
                    values = Some(found);
                    break;
                }
                Ok(None) => {}
                Err(_) if bounded => {}
                Err(why) => return Err(why),
            }
        }
        let values = values.ok_or("internal error: a feasible path has no solution")?;
        if let Some(&c) = path
            .constraints
            .iter()
            .find(|&&c| self.terms.eval(c, &values) != 1)
        {
            return Err(format!(
                "internal error: the solution violates {}",
                self.terms.show(c)
            ));
        }
        Ok(values)
    }

    fn is_feasible(&mut self, path: &[TermId]) -> Result<bool, String> {
        if let Some(&known) = self.feasible.get(path) {
            return Ok(known);
        }
        self.solver_calls += 1;
        let timeout = self.budget.cap(None);
        let feasible = bitblast::solve(&self.terms, path, self.oracle, timeout)?.is_some();
        self.feasible.insert(path.to_vec(), feasible);
        Ok(feasible)
    }
}

/// A method's variables: ints and array references.
#[derive(Default)]
struct Frame {
    ints: HashMap<String, TermId>,
    arrays: HashMap<String, usize>,
}

struct Run<'r, 'a> {
    ex: &'r mut Explorer<'a>,
    decisions: &'r [usize],
    /// Choices made: (choice, alternatives).
    taken: Vec<(usize, usize)>,
    path: Vec<TermId>,
    heap: Vec<Vec<TermId>>,
    active: HashMap<BlockId, usize>,
}

impl Run<'_, '_> {
    fn method(&mut self, guide: Option<&Trace>) -> Result<(PathEnd, Trace), Stop> {
        let mut frame = Frame::default();
        for (name, value) in self.ex.params.clone() {
            match value {
                InputValue::Int(t) => {
                    frame.ints.insert(name, t);
                }
                InputValue::Array(words) => {
                    self.heap.push(words);
                    frame.arrays.insert(name, self.heap.len() - 1);
                }
            }
        }
        let entry = self.ex.method;
        let (completion, trace) = self.block(entry, &mut frame, guide)?;
        let end = match completion {
            Completion::Return(v) => PathEnd::Returned(v),
            Completion::Throw(e) => PathEnd::Threw(e),
            Completion::Normal => unreachable!("method rules end by returning or throwing"),
        };
        Ok((end, trace))
    }

    fn choose(&mut self, alternatives: usize) -> usize {
        let i = self.taken.len();
        let choice = self.decisions.get(i).copied().unwrap_or(0);
        self.taken.push((choice, alternatives));
        choice
    }

    fn block(
        &mut self,
        b: BlockId,
        frame: &mut Frame,
        guide: Option<&Trace>,
    ) -> Result<(Completion, Trace), Stop> {
        let rules = self.ex.rules;
        let block = &rules.blocks[b];
        let (rule, expected_children) = match guide {
            Some(Trace::Node {
                block: gb,
                rule,
                children,
            }) => {
                if *gb != b {
                    return Err(Stop::Mismatch);
                }
                (*rule - 1, Some(children.as_slice()))
            }
            // Unguided, or a free variable: any rule.
            _ => (self.choose(block.rules.len()), None),
        };
        let depth = self.active.entry(b).or_insert(0);
        *depth += 1;
        if matches!(block.kind, BlockKind::Loop | BlockKind::Method) && *depth > self.ex.loop_k + 1
        {
            return Err(Stop::Bounded);
        }
        let mut children = Vec::new();
        let result = self.instrs(
            &block.rules[rule].body,
            frame,
            expected_children,
            &mut children,
        );
        *self.active.get_mut(&b).expect("entered") -= 1;
        let completion = result?;
        if let Some(expected) = expected_children {
            if expected.len() != children.len() {
                return Err(Stop::Mismatch);
            }
        }
        Ok((
            completion,
            Trace::Node {
                block: b,
                rule: rule + 1,
                children,
            },
        ))
    }

    fn instrs(
        &mut self,
        body: &[Instr],
        frame: &mut Frame,
        expected: Option<&[Trace]>,
        children: &mut Vec<Trace>,
    ) -> Result<Completion, Stop> {
        for instr in body {
            let next_guide = |children: &Vec<Trace>| -> Result<Option<&Trace>, Stop> {
                match expected {
                    None => Ok(None),
                    Some(e) => e.get(children.len()).map(Some).ok_or(Stop::Mismatch),
                }
            };
            match instr {
                Instr::Assume(cond) => self.assume(cond, frame)?,
                Instr::Assign(var, e) => {
                    let v = self.eval(e, frame);
                    frame.ints.insert(var.clone(), v);
                }
                Instr::Store(array, index, value) => self.store(array, index, value, frame),
                Instr::Call(b) => {
                    let guide = next_guide(children)?;
                    let (completion, trace) = self.block(*b, frame, guide)?;
                    children.push(trace);
                    if !matches!(completion, Completion::Normal) {
                        return Ok(completion);
                    }
                }
                Instr::Catching(b, handler) => {
                    let guide = next_guide(children)?;
                    let (completion, trace) = self.block(*b, frame, guide)?;
                    children.push(trace);
                    match completion {
                        Completion::Normal => {}
                        Completion::Throw(_) => {
                            let handled = self.instrs(handler, frame, expected, children)?;
                            if !matches!(handled, Completion::Normal) {
                                return Ok(handled);
                            }
                        }
                        returned => return Ok(returned),
                    }
                }
                Instr::Invoke {
                    method,
                    args,
                    result,
                } => {
                    let guide = match next_guide(children)? {
                        Some(Trace::Free { method: m }) if m == method => None,
                        other => other,
                    };
                    let params = &self.ex.rules.methods[&self.ex.rules.blocks[*method].name].1;
                    let mut callee = Frame::default();
                    for ((name, array), arg) in params.iter().zip(args) {
                        match (array, arg) {
                            (Some(_), Expr::Var(a, _)) => {
                                callee.arrays.insert(name.clone(), frame.arrays[a]);
                            }
                            _ => {
                                let v = self.eval(arg, frame);
                                callee.ints.insert(name.clone(), v);
                            }
                        }
                    }
                    let (completion, trace) = self.block(*method, &mut callee, guide)?;
                    children.push(trace);
                    match completion {
                        Completion::Return(v) => {
                            frame.ints.insert(result.clone(), v);
                        }
                        thrown @ Completion::Throw(_) => return Ok(thrown),
                        Completion::Normal => unreachable!("methods return or throw"),
                    }
                }
                Instr::Return(e) => return Ok(Completion::Return(self.eval(e, frame))),
                Instr::Throw(e) => return Ok(Completion::Throw(e)),
            }
        }
        Ok(Completion::Normal)
    }

    /// The path takes guard `cond`; an infeasible path stops here.
    fn assume(&mut self, cond: &Expr, frame: &Frame) -> Result<(), Stop> {
        let c = self.eval(cond, frame);
        match self.ex.terms.node(c) {
            super::term::Term::Bool(true) => Ok(()),
            super::term::Term::Bool(false) => Err(Stop::Infeasible),
            // A guard the path already has adds nothing.
            _ if self.path.contains(&c) => Ok(()),
            _ => {
                self.path.push(c);
                match self.ex.is_feasible(&self.path) {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(Stop::Infeasible),
                    Err(why) => Err(Stop::Solver(why)),
                }
            }
        }
    }

    /// `array[index] = value`: every cell becomes `index == j ? value : old`, since the
    /// index is symbolic.
    fn store(&mut self, array: &str, index: &Expr, value: &Expr, frame: &Frame) {
        let id = frame.arrays[array];
        let i = self.eval(index, frame);
        let v = self.eval(value, frame);
        for j in 0..self.heap[id].len() {
            let at = self.ex.terms.constant(j as i64);
            let here = self.ex.terms.binary(BinOp::Eq, i, at);
            let old = self.heap[id][j];
            self.heap[id][j] = self.ex.terms.ite(here, v, old);
        }
    }

    /// The term of a pure expression (ints, comparisons, `!`, `&&`, `||`).
    fn eval(&mut self, e: &Expr, frame: &Frame) -> TermId {
        match e {
            Expr::Int(v, _) => self.ex.terms.constant(*v),
            Expr::Var(name, _) => match frame.ints.get(name) {
                Some(&t) => t,
                // A local read before any assignment on this path is 0.
                None => self.ex.terms.constant(0),
            },
            Expr::Neg(inner, _) => {
                let v = self.eval(inner, frame);
                self.ex.terms.neg(v)
            }
            Expr::Not(inner, _) => {
                let v = self.eval(inner, frame);
                self.ex.terms.not(v)
            }
            Expr::Binary(op, a, b, _) => {
                let (x, y) = (self.eval(a, frame), self.eval(b, frame));
                self.ex.terms.binary(*op, x, y)
            }
            Expr::Index(array, index, _) => {
                // In bounds (a guard made sure): the element the index selects.
                let i = self.eval(index, frame);
                let words = self.heap[frame.arrays[array]].clone();
                let mut value = words[0];
                for (j, &w) in words.iter().enumerate().skip(1) {
                    let at = self.ex.terms.constant(j as i64);
                    let here = self.ex.terms.binary(BinOp::Eq, i, at);
                    value = self.ex.terms.ite(here, w, value);
                }
                value
            }
            Expr::Length(..) | Expr::Call(..) => {
                unreachable!("lowered by the translation to rules")
            }
        }
    }
}
