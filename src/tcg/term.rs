//! Fixed-width integer and boolean terms over the inputs of the method under test, shared
//! (hash-consed) and folded to constants where their operands are constants.
//!
//! Semantics are Java's `int` at `width` bits (default 32): two's complement, `+ - *` wrap
//! around; `/` truncates toward zero and `%` takes the dividend's sign; `MIN / -1` is `MIN`
//! (the overflow wraps, as in Java) and `MIN % -1` is 0. Division by zero never reaches a
//! term: the rules guard it (it throws), and the terms define it as 0 to stay total.

use super::lang::BinOp;
use std::collections::HashMap;

/// Index of a term in its [`Terms`].
pub type TermId = u32;

/// A node of a term DAG over fixed-width words (two's complement) and truth values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Term {
    /// A constant, masked to the width.
    Const(u64),
    /// Input word `i` (an int parameter or one array element of the method under test).
    Input(u32),
    /// Two's-complement negation.
    Neg(TermId),
    /// Addition, wrapping.
    Add(TermId, TermId),
    /// Subtraction, wrapping.
    Sub(TermId, TermId),
    /// Multiplication, wrapping.
    Mul(TermId, TermId),
    /// Signed division, truncating (the divisor is non-zero by a guard).
    Div(TermId, TermId),
    /// Signed remainder, with the dividend's sign.
    Rem(TermId, TermId),
    /// `if c then a else b`, c boolean.
    Ite(TermId, TermId, TermId),
    /// A truth value.
    Bool(bool),
    /// Equality of words.
    Eq(TermId, TermId),
    /// Signed less-than.
    Slt(TermId, TermId),
    /// Negation of a truth value.
    Not(TermId),
    /// Conjunction.
    And(TermId, TermId),
    /// Disjunction.
    Or(TermId, TermId),
}

/// All terms of one analysis.
#[derive(Debug, Clone)]
pub struct Terms {
    width: u32,
    nodes: Vec<Term>,
    index: HashMap<Term, TermId>,
    /// Names of the input words, by index.
    inputs: Vec<String>,
}

impl Terms {
    /// No terms yet, over words of `width` bits (2 to 64).
    pub fn new(width: u32) -> Self {
        assert!((2..=64).contains(&width), "width must be 2 to 64 bits");
        Terms {
            width,
            nodes: Vec::new(),
            index: HashMap::new(),
            inputs: Vec::new(),
        }
    }

    /// Bits of a word.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The node behind `t`.
    pub fn node(&self, t: TermId) -> Term {
        self.nodes[t as usize]
    }

    /// Names of the input words, by index.
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn mask(&self) -> u64 {
        if self.width == 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// `v` as a signed number of this width.
    pub fn signed(&self, v: u64) -> i64 {
        let shift = 64 - self.width;
        ((v << shift) as i64) >> shift
    }

    /// Interns `t`, folding it to a constant when its operands are constants.
    fn make(&mut self, t: Term) -> TermId {
        let constant = |id: TermId| match self.nodes[id as usize] {
            Term::Const(v) => Some(v),
            Term::Bool(b) => Some(b as u64),
            _ => None,
        };
        let operands_constant = match t {
            Term::Const(_) | Term::Bool(_) | Term::Input(_) => false,
            Term::Ite(c, a, b) => constant(c).is_some() || (a == b),
            other => operands_of(other).iter().all(|&o| constant(o).is_some()),
        };
        let t = match t {
            Term::Ite(c, a, b) if operands_constant => {
                return if a == b || constant(c) == Some(1) {
                    a
                } else {
                    b
                };
            }
            _ if operands_constant => {
                let v = self.apply(t, &|id| constant(id).expect("constant operand"));
                if self.is_boolean_node(&t) {
                    Term::Bool(v == 1)
                } else {
                    Term::Const(v)
                }
            }
            Term::Const(v) => Term::Const(v & self.mask()),
            other => other,
        };
        if let Some(&id) = self.index.get(&t) {
            return id;
        }
        let id = self.nodes.len() as TermId;
        self.nodes.push(t);
        self.index.insert(t, id);
        id
    }

    fn is_boolean_node(&self, t: &Term) -> bool {
        matches!(
            t,
            Term::Bool(_)
                | Term::Eq(..)
                | Term::Slt(..)
                | Term::Not(_)
                | Term::And(..)
                | Term::Or(..)
        )
    }

    /// True when `t` is a truth value, not a word.
    pub fn is_boolean(&self, t: TermId) -> bool {
        match self.node(t) {
            Term::Ite(_, a, _) => self.is_boolean(a),
            n => self.is_boolean_node(&n),
        }
    }

    /// The value of one node given the values of its operands (booleans as 0/1).
    fn apply(&self, t: Term, value: &dyn Fn(TermId) -> u64) -> u64 {
        let m = self.mask();
        let s = |v: u64| self.signed(v);
        match t {
            Term::Const(v) => v & m,
            Term::Bool(b) => b as u64,
            Term::Input(_) => unreachable!("inputs have no fixed value"),
            Term::Neg(a) => value(a).wrapping_neg() & m,
            Term::Add(a, b) => value(a).wrapping_add(value(b)) & m,
            Term::Sub(a, b) => value(a).wrapping_sub(value(b)) & m,
            Term::Mul(a, b) => value(a).wrapping_mul(value(b)) & m,
            Term::Div(a, b) => {
                let (x, y) = (s(value(a)), s(value(b)));
                if y == 0 {
                    0
                } else {
                    (x.wrapping_div(y) as u64) & m
                }
            }
            Term::Rem(a, b) => {
                let (x, y) = (s(value(a)), s(value(b)));
                if y == 0 {
                    0
                } else {
                    (x.wrapping_rem(y) as u64) & m
                }
            }
            Term::Ite(c, a, b) => {
                if value(c) == 1 {
                    value(a)
                } else {
                    value(b)
                }
            }
            Term::Eq(a, b) => (value(a) == value(b)) as u64,
            Term::Slt(a, b) => (s(value(a)) < s(value(b))) as u64,
            Term::Not(a) => 1 - value(a),
            Term::And(a, b) => value(a) & value(b),
            Term::Or(a, b) => value(a) | value(b),
        }
    }

    /// Evaluates `t` with input word `i` set to `inputs[i]`.
    pub fn eval(&self, t: TermId, inputs: &[u64]) -> u64 {
        let mut memo: HashMap<TermId, u64> = HashMap::new();
        self.eval_memo(t, inputs, &mut memo)
    }

    fn eval_memo(&self, t: TermId, inputs: &[u64], memo: &mut HashMap<TermId, u64>) -> u64 {
        if let Some(&v) = memo.get(&t) {
            return v;
        }
        let node = self.node(t);
        let v = match node {
            Term::Input(i) => inputs[i as usize] & self.mask(),
            _ => {
                let mut operands = HashMap::new();
                for op in operands_of(node) {
                    operands.insert(op, self.eval_memo(op, inputs, memo));
                }
                self.apply(node, &|id| operands[&id])
            }
        };
        memo.insert(t, v);
        v
    }

    /// The word `v` (wrapped to the width).
    pub fn constant(&mut self, v: i64) -> TermId {
        self.make(Term::Const(v as u64))
    }

    /// The truth value `b`.
    pub fn boolean(&mut self, b: bool) -> TermId {
        self.make(Term::Bool(b))
    }

    /// A new input word named `name`.
    pub fn input(&mut self, name: String) -> TermId {
        let i = self.inputs.len() as u32;
        self.inputs.push(name);
        self.make(Term::Input(i))
    }

    /// The term of input word `i`.
    pub fn input_word(&mut self, i: usize) -> TermId {
        self.make(Term::Input(i as u32))
    }

    /// `-a`.
    pub fn neg(&mut self, a: TermId) -> TermId {
        self.make(Term::Neg(a))
    }

    /// `!a`; `!!a` is `a`, and a constant is folded.
    pub fn not(&mut self, a: TermId) -> TermId {
        match self.node(a) {
            Term::Not(inner) => inner,
            _ => self.make(Term::Not(a)),
        }
    }

    /// `a && b`, folded when both are constant.
    pub fn and(&mut self, a: TermId, b: TermId) -> TermId {
        self.make(Term::And(a, b))
    }

    /// `c ? a : b`, folded where `c` is constant or `a` is `b`.
    pub fn ite(&mut self, c: TermId, a: TermId, b: TermId) -> TermId {
        self.make(Term::Ite(c, a, b))
    }

    /// `a op b` for an arithmetic or comparison operator (not `&&`, `||`).
    pub fn binary(&mut self, op: BinOp, a: TermId, b: TermId) -> TermId {
        match op {
            BinOp::Add => self.make(Term::Add(a, b)),
            BinOp::Sub => self.make(Term::Sub(a, b)),
            BinOp::Mul => self.make(Term::Mul(a, b)),
            BinOp::Div => self.make(Term::Div(a, b)),
            BinOp::Rem => self.make(Term::Rem(a, b)),
            BinOp::Eq => self.make(Term::Eq(a, b)),
            BinOp::Ne => {
                let eq = self.make(Term::Eq(a, b));
                self.not(eq)
            }
            BinOp::Lt => self.make(Term::Slt(a, b)),
            BinOp::Gt => self.make(Term::Slt(b, a)),
            BinOp::Le => {
                let gt = self.make(Term::Slt(b, a));
                self.not(gt)
            }
            BinOp::Ge => {
                let lt = self.make(Term::Slt(a, b));
                self.not(lt)
            }
            BinOp::And => self.make(Term::And(a, b)),
            BinOp::Or => self.make(Term::Or(a, b)),
        }
    }

    /// `t` as readable text over the input names.
    pub fn show(&self, t: TermId) -> String {
        let bin =
            |a: TermId, op: &str, b: TermId| format!("({} {op} {})", self.show(a), self.show(b));
        match self.node(t) {
            Term::Const(v) => self.signed(v).to_string(),
            Term::Bool(b) => b.to_string(),
            Term::Input(i) => self.inputs[i as usize].clone(),
            Term::Neg(a) => format!("-{}", self.show(a)),
            Term::Add(a, b) => bin(a, "+", b),
            Term::Sub(a, b) => bin(a, "-", b),
            Term::Mul(a, b) => bin(a, "*", b),
            Term::Div(a, b) => bin(a, "/", b),
            Term::Rem(a, b) => bin(a, "%", b),
            Term::Ite(c, a, b) => {
                format!("({} ? {} : {})", self.show(c), self.show(a), self.show(b))
            }
            Term::Eq(a, b) => bin(a, "==", b),
            Term::Slt(a, b) => bin(a, "<", b),
            Term::Not(a) => match self.node(a) {
                Term::Eq(x, y) => bin(x, "!=", y),
                Term::Slt(x, y) => bin(x, ">=", y),
                _ => format!("!{}", self.show(a)),
            },
            Term::And(a, b) => bin(a, "&&", b),
            Term::Or(a, b) => bin(a, "||", b),
        }
    }
}

/// The operands of a node.
pub fn operands_of(t: Term) -> Vec<TermId> {
    match t {
        Term::Const(_) | Term::Bool(_) | Term::Input(_) => vec![],
        Term::Neg(a) | Term::Not(a) => vec![a],
        Term::Ite(c, a, b) => vec![c, a, b],
        Term::Add(a, b)
        | Term::Sub(a, b)
        | Term::Mul(a, b)
        | Term::Div(a, b)
        | Term::Rem(a, b)
        | Term::Eq(a, b)
        | Term::Slt(a, b)
        | Term::And(a, b)
        | Term::Or(a, b) => vec![a, b],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_fold_with_java_semantics() {
        let mut t = Terms::new(32);
        let min = t.constant(i32::MIN as i64);
        let minus_one = t.constant(-1);
        let q = t.binary(BinOp::Div, min, minus_one);
        assert_eq!(t.node(q), Term::Const(i32::MIN as u32 as u64));
        let r = t.binary(BinOp::Rem, min, minus_one);
        assert_eq!(t.node(r), Term::Const(0));
        let seven = t.constant(-7);
        let two = t.constant(2);
        let q = t.binary(BinOp::Div, seven, two);
        let r = t.binary(BinOp::Rem, seven, two);
        assert_eq!(t.signed(t.eval(q, &[])), -3);
        assert_eq!(t.signed(t.eval(r, &[])), -1);
        let max = t.constant(i32::MAX as i64);
        let one = t.constant(1);
        let wrapped = t.binary(BinOp::Add, max, one);
        assert_eq!(t.signed(t.eval(wrapped, &[])), i32::MIN as i64);
        let lt = t.binary(BinOp::Lt, wrapped, max);
        assert_eq!(t.node(lt), Term::Bool(true));
    }

    #[test]
    fn terms_are_shared_and_shown_readably() {
        let mut t = Terms::new(8);
        let a = t.input("a".into());
        let b = t.input("b".into());
        let x = t.binary(BinOp::Mul, a, b);
        let y = t.binary(BinOp::Mul, a, b);
        assert_eq!(x, y);
        let ge = t.binary(BinOp::Ge, a, b);
        assert_eq!(t.show(ge), "(a >= b)");
        assert_eq!(t.eval(ge, &[5, 250]), 1, "250 is -6 at 8 bits");
    }
}
