//! Terms to CNF (Tseitin encoding of a bit-level circuit), and solving path constraints.
//!
//! Adders are ripple-carry, multiplication shift-and-add, division restoring (on magnitudes,
//! then signs fixed as Java does). Gates whose inputs are constants simplify away, so the
//! concrete parts of a path add no clauses.

use super::term::{Term, TermId, Terms};
use crate::formula::Lit;
use crate::solver::{Oracle, Outcome, Query};
use std::collections::HashMap;

/// A circuit under construction: clauses over variables `1..=num_vars`.
pub struct Blaster<'t> {
    terms: &'t Terms,
    clauses: Vec<Vec<Lit>>,
    num_vars: i32,
    truth: Lit,
    words: HashMap<TermId, Vec<Lit>>,
    bits: HashMap<TermId, Lit>,
    inputs: HashMap<u32, Vec<Lit>>,
}

impl<'t> Blaster<'t> {
    /// An empty CNF for terms of `terms`.
    pub fn new(terms: &'t Terms) -> Self {
        let mut b = Blaster {
            terms,
            clauses: Vec::new(),
            num_vars: 0,
            truth: 0,
            words: HashMap::new(),
            bits: HashMap::new(),
            inputs: HashMap::new(),
        };
        b.truth = b.fresh();
        b.clauses.push(vec![b.truth]);
        b
    }

    /// Variables used so far.
    pub fn num_vars(&self) -> usize {
        self.num_vars as usize
    }

    /// The clauses so far.
    pub fn clauses(&self) -> &[Vec<Lit>] {
        &self.clauses
    }

    /// The literals of input word `i`, least significant first (created on first use).
    pub fn input_bits(&mut self, i: u32) -> Vec<Lit> {
        if let Some(bits) = self.inputs.get(&i) {
            return bits.clone();
        }
        let bits: Vec<Lit> = (0..self.terms.width()).map(|_| self.fresh()).collect();
        self.inputs.insert(i, bits.clone());
        bits
    }

    /// A new variable.
    pub fn fresh(&mut self) -> Lit {
        self.num_vars += 1;
        self.num_vars
    }

    /// A clause, as is.
    pub fn add_clause(&mut self, clause: Vec<Lit>) {
        self.clauses.push(clause);
    }

    fn constant(&self, v: bool) -> Lit {
        if v {
            self.truth
        } else {
            -self.truth
        }
    }

    fn value_of(&self, l: Lit) -> Option<bool> {
        if l == self.truth {
            Some(true)
        } else if l == -self.truth {
            Some(false)
        } else {
            None
        }
    }

    /// A literal equal to `a ∧ b` (Tseitin).
    pub fn and(&mut self, a: Lit, b: Lit) -> Lit {
        match (self.value_of(a), self.value_of(b)) {
            (Some(false), _) | (_, Some(false)) => return self.constant(false),
            (Some(true), _) => return b,
            (_, Some(true)) => return a,
            _ if a == b => return a,
            _ if a == -b => return self.constant(false),
            _ => {}
        }
        let o = self.fresh();
        self.clauses
            .extend([vec![-o, a], vec![-o, b], vec![o, -a, -b]]);
        o
    }

    /// A literal equal to `a ∨ b` (Tseitin).
    pub fn or(&mut self, a: Lit, b: Lit) -> Lit {
        -self.and(-a, -b)
    }

    fn xor(&mut self, a: Lit, b: Lit) -> Lit {
        match (self.value_of(a), self.value_of(b)) {
            (Some(x), _) => return if x { -b } else { b },
            (_, Some(y)) => return if y { -a } else { a },
            _ if a == b => return self.constant(false),
            _ if a == -b => return self.constant(true),
            _ => {}
        }
        let o = self.fresh();
        self.clauses.extend([
            vec![-o, a, b],
            vec![-o, -a, -b],
            vec![o, -a, b],
            vec![o, a, -b],
        ]);
        o
    }

    /// `if s then a else b`.
    fn mux(&mut self, s: Lit, a: Lit, b: Lit) -> Lit {
        match self.value_of(s) {
            Some(true) => return a,
            Some(false) => return b,
            None if a == b => return a,
            None => {}
        }
        let x = self.and(s, a);
        let y = self.and(-s, b);
        self.or(x, y)
    }

    fn full_adder(&mut self, a: Lit, b: Lit, c: Lit) -> (Lit, Lit) {
        let ab = self.xor(a, b);
        let sum = self.xor(ab, c);
        let both = self.and(a, b);
        let carry_on = self.and(ab, c);
        (sum, self.or(both, carry_on))
    }

    fn add(&mut self, a: &[Lit], b: &[Lit], carry_in: Lit) -> (Vec<Lit>, Lit) {
        let mut carry = carry_in;
        let mut sum = Vec::with_capacity(a.len());
        for (&x, &y) in a.iter().zip(b) {
            let (s, c) = self.full_adder(x, y, carry);
            sum.push(s);
            carry = c;
        }
        (sum, carry)
    }

    fn sub(&mut self, a: &[Lit], b: &[Lit]) -> (Vec<Lit>, Lit) {
        let not_b: Vec<Lit> = b.iter().map(|&l| -l).collect();
        let one = self.constant(true);
        // The carry out is 1 exactly when a >= b (unsigned).
        self.add(a, &not_b, one)
    }

    fn neg(&mut self, a: &[Lit]) -> Vec<Lit> {
        let zero = vec![self.constant(false); a.len()];
        self.sub(&zero, a).0
    }

    fn mul(&mut self, a: &[Lit], b: &[Lit]) -> Vec<Lit> {
        let w = a.len();
        let mut acc = vec![self.constant(false); w];
        for (i, &bit) in b.iter().enumerate() {
            if self.value_of(bit) == Some(false) {
                continue;
            }
            let mut partial = vec![self.constant(false); w];
            for j in 0..w - i {
                partial[i + j] = self.and(a[j], bit);
            }
            let zero = self.constant(false);
            acc = self.add(&acc, &partial, zero).0;
        }
        acc
    }

    /// Unsigned quotient and remainder (restoring division); b = 0 gives garbage, which the
    /// guards exclude.
    fn udivrem(&mut self, a: &[Lit], b: &[Lit]) -> (Vec<Lit>, Vec<Lit>) {
        let w = a.len();
        let mut rem = vec![self.constant(false); w];
        let mut quotient = vec![self.constant(false); w];
        for i in (0..w).rev() {
            // rem = rem << 1 | a[i], kept at w + 1 bits so the shift loses nothing.
            let mut shifted = vec![a[i]];
            shifted.extend_from_slice(&rem);
            let mut wide_b = b.to_vec();
            wide_b.push(self.constant(false));
            let (diff, fits) = self.sub(&shifted, &wide_b);
            quotient[i] = fits;
            rem = (0..w)
                .map(|k| self.mux(fits, diff[k], shifted[k]))
                .collect();
        }
        (quotient, rem)
    }

    fn mux_word(&mut self, s: Lit, a: &[Lit], b: &[Lit]) -> Vec<Lit> {
        a.iter().zip(b).map(|(&x, &y)| self.mux(s, x, y)).collect()
    }

    fn abs(&mut self, a: &[Lit]) -> Vec<Lit> {
        let negated = self.neg(a);
        let sign = *a.last().expect("width ≥ 2");
        self.mux_word(sign, &negated, a)
    }

    fn equal(&mut self, a: &[Lit], b: &[Lit]) -> Lit {
        let mut all = self.constant(true);
        for (&x, &y) in a.iter().zip(b) {
            let same = -self.xor(x, y);
            all = self.and(all, same);
        }
        all
    }

    fn signed_less(&mut self, a: &[Lit], b: &[Lit]) -> Lit {
        // Flipping the sign bits turns signed order into unsigned order.
        let w = a.len();
        let mut a = a.to_vec();
        let mut b = b.to_vec();
        a[w - 1] = -a[w - 1];
        b[w - 1] = -b[w - 1];
        let (_, a_ge_b) = self.sub(&a, &b);
        -a_ge_b
    }

    /// The literal of boolean term `t`.
    pub fn bit(&mut self, t: TermId) -> Lit {
        if let Some(&l) = self.bits.get(&t) {
            return l;
        }
        let l = match self.terms.node(t) {
            Term::Bool(b) => self.constant(b),
            Term::Eq(a, b) => {
                let (x, y) = (self.word(a), self.word(b));
                self.equal(&x, &y)
            }
            Term::Slt(a, b) => {
                let (x, y) = (self.word(a), self.word(b));
                self.signed_less(&x, &y)
            }
            Term::Not(a) => -self.bit(a),
            Term::And(a, b) => {
                let (x, y) = (self.bit(a), self.bit(b));
                self.and(x, y)
            }
            Term::Or(a, b) => {
                let (x, y) = (self.bit(a), self.bit(b));
                self.or(x, y)
            }
            Term::Ite(c, a, b) => {
                let (s, x, y) = (self.bit(c), self.bit(a), self.bit(b));
                self.mux(s, x, y)
            }
            other => panic!("not a boolean term: {other:?}"),
        };
        self.bits.insert(t, l);
        l
    }

    /// The literals of int term `t`, least significant first.
    pub fn word(&mut self, t: TermId) -> Vec<Lit> {
        if let Some(w) = self.words.get(&t) {
            return w.clone();
        }
        let width = self.terms.width() as usize;
        let word = match self.terms.node(t) {
            Term::Const(v) => (0..width).map(|i| self.constant(v >> i & 1 == 1)).collect(),
            Term::Input(i) => self.input_bits(i),
            Term::Neg(a) => {
                let x = self.word(a);
                self.neg(&x)
            }
            Term::Add(a, b) => {
                let (x, y) = (self.word(a), self.word(b));
                let zero = self.constant(false);
                self.add(&x, &y, zero).0
            }
            Term::Sub(a, b) => {
                let (x, y) = (self.word(a), self.word(b));
                self.sub(&x, &y).0
            }
            Term::Mul(a, b) => {
                let (x, y) = (self.word(a), self.word(b));
                self.mul(&x, &y)
            }
            Term::Div(a, b) | Term::Rem(a, b) => {
                let (x, y) = (self.word(a), self.word(b));
                let (ux, uy) = (self.abs(&x), self.abs(&y));
                let (q, r) = self.udivrem(&ux, &uy);
                let (sx, sy) = (x[width - 1], y[width - 1]);
                if matches!(self.terms.node(t), Term::Div(..)) {
                    let negative = self.xor(sx, sy);
                    let nq = self.neg(&q);
                    self.mux_word(negative, &nq, &q)
                } else {
                    let nr = self.neg(&r);
                    self.mux_word(sx, &nr, &r)
                }
            }
            Term::Ite(c, a, b) => {
                let s = self.bit(c);
                let (x, y) = (self.word(a), self.word(b));
                self.mux_word(s, &x, &y)
            }
            other => panic!("not an int term: {other:?}"),
        };
        self.words.insert(t, word.clone());
        word
    }
}

/// Input values satisfying every constraint, or `None` when they cannot all hold; an error
/// when the solver gives up (after `timeout`, if given). Inputs the constraints leave free
/// are 0 (the solver prefers 0 bits).
pub fn solve(
    terms: &Terms,
    constraints: &[TermId],
    oracle: &dyn Oracle,
    timeout: Option<std::time::Duration>,
) -> Result<Option<Vec<u64>>, String> {
    let mut b = Blaster::new(terms);
    for &c in constraints {
        let l = b.bit(c);
        b.add_clause(vec![l]);
    }
    let inputs: Vec<Option<Vec<Lit>>> = (0..terms.inputs().len() as u32)
        .map(|i| b.inputs.get(&i).cloned())
        .collect();
    let preferred = vec![false; b.num_vars()];
    let query = Query {
        preferred: Some(&preferred),
        timeout,
        ..Query::new(b.num_vars(), b.clauses(), 0)
    };
    match oracle.solve(&query) {
        Outcome::Sat(model) => Ok(Some(
            inputs
                .iter()
                .map(|bits| {
                    bits.as_ref().map_or(0, |bits| {
                        bits.iter()
                            .enumerate()
                            .map(|(k, &l)| (model[l as usize - 1] as u64) << k)
                            .sum()
                    })
                })
                .collect(),
        )),
        Outcome::Unsat => Ok(None),
        Outcome::Unknown(why) => Err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Splr;
    use crate::tcg::lang::BinOp;
    use proptest::prelude::*;

    const OPS: [BinOp; 11] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Eq,
        BinOp::Ne,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The circuit computes what the evaluator computes: fix the inputs, solve for the
        /// output, compare.
        #[test]
        fn circuits_agree_with_evaluation(x in any::<u8>(), y in any::<u8>(), op in 0usize..11, neg in any::<bool>()) {
            let mut t = Terms::new(8);
            let ia = t.input("a".into());
            let ib = t.input("b".into());
            let a = if neg { t.neg(ia) } else { ia };
            let e = t.binary(OPS[op], a, ib);
            let expected = t.eval(e, &[x as u64, y as u64]);
            if matches!(OPS[op], BinOp::Div | BinOp::Rem) && y == 0 {
                return Ok(()); // guarded by the rules, undefined in circuits
            }
            // Pin the inputs, then require the evaluated output: satisfiable; require any
            // other output: unsatisfiable.
            let va = t.constant(x as i8 as i64);
            let vb = t.constant(y as i8 as i64);
            let pins = [t.binary(BinOp::Eq, ia, va), t.binary(BinOp::Eq, ib, vb)];
            let out = if t.is_boolean(e) {
                if expected == 1 { e } else { t.not(e) }
            } else {
                let v = t.constant(t.signed(expected));
                t.binary(BinOp::Eq, e, v)
            };
            let wrong = t.not(out);
            let solved = solve(&t, &[pins[0], pins[1], out], &Splr, None).unwrap();
            prop_assert_eq!(solved, Some(vec![x as u64, y as u64]));
            prop_assert!(solve(&t, &[pins[0], pins[1], wrong], &Splr, None).unwrap().is_none());
        }
    }

    #[test]
    fn unsatisfiable_constraints_are_reported() {
        let mut t = Terms::new(16);
        let a = t.input("a".into());
        let zero = t.constant(0);
        let lt = t.binary(BinOp::Lt, a, zero);
        let sq = t.binary(BinOp::Mul, a, a);
        let ten = t.constant(10);
        let big = t.binary(BinOp::Gt, a, ten);
        let both = t.and(lt, big);
        assert_eq!(solve(&t, &[both], &Splr, None).unwrap(), None);
        // a * a wraps around at 16 bits, so a = 256 is a solution as much as a = 3.
        let small = t.binary(BinOp::Lt, sq, ten);
        let pos = t.binary(BinOp::Gt, a, zero);
        let v = solve(&t, &[small, pos], &Splr, None).unwrap().unwrap();
        assert_eq!((t.eval(small, &v), t.eval(pos, &v)), (1, 1));
    }
}
