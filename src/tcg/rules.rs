//! Methods translated into rules with traces, as the CLP translation of the guided-TCG paper
//! does for bytecode: each method and each branching construct inside it (if, loop, try, and
//! every division, remainder and array access, which may throw) becomes a *block* whose
//! alternative *rules* each carry a guard and a body. Running rule `r` of block `b` leaves the
//! trace term `b(r, [traces of the blocks its body called, in order])`.
//!
//! Conditions are split by short-circuit evaluation: `if (p && q)` has one rule where both
//! hold and two where it fails (`!p`; `p, !q`), as the bytecode's branches are. Calls,
//! divisions and array reads inside expressions are hoisted into temporaries (`$1`, `$2`, …)
//! ahead of the statement that uses them.

use super::lang::{BinOp, Expr, Method, Pos, Program, Stmt, SyntaxError};
use std::collections::HashMap;

/// Index of a block in [`Rules::blocks`].
pub type BlockId = usize;

/// What construct a block comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// A method's body.
    Method,
    /// An `if`: rule 1 the then-branch, rule 2 the else-branch.
    If,
    /// A `while`: rule 1 runs the body and loops, rule 2 leaves.
    Loop,
    /// A `try`/`catch`.
    Try,
    /// A division or remainder: rule 1 divides, rule 2 throws on a zero divisor.
    Div,
    /// An array access: rule 1 reads or writes, rules 2-3 throw below and above the bounds.
    Index,
}

/// A block: a construct of the program, as alternative rules.
#[derive(Debug, Clone)]
pub struct Block {
    /// Local name, unique within its method (`if1`, `loop1`, `div2`, …); a method's own block
    /// is named after the method.
    pub name: String,
    /// The method it belongs to.
    pub method: String,
    /// What construct it comes from.
    pub kind: BlockKind,
    /// Its rules, numbered from 1 in traces.
    pub rules: Vec<Rule>,
    /// Where the construct starts.
    pub pos: Pos,
}

/// One alternative of a block: a guard and what runs under it.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its instructions, the guards first.
    pub body: Vec<Instr>,
}

/// One step of a rule. Expressions in instructions are pure: no calls, and divisions and
/// array reads only where a guard has made them safe.
#[derive(Debug, Clone)]
pub enum Instr {
    /// The guard: the rule applies only where this condition holds.
    Assume(Expr),
    /// `x = e`.
    Assign(String, Expr),
    /// `a[i] = e`, the index already checked by a guard.
    Store(String, Expr, Expr),
    /// Runs a block of the same method, in the same frame.
    Call(BlockId),
    /// Runs a block; a run-time exception inside it runs `handler` instead.
    Catching(BlockId, Vec<Instr>),
    /// Calls a method; its result goes to `result`. Array arguments are passed by name.
    Invoke {
        /// The callee's block.
        method: BlockId,
        /// The arguments, in order.
        args: Vec<Expr>,
        /// The local that takes the result.
        result: String,
    },
    /// Returns from the method.
    Return(Expr),
    /// Raises a run-time exception.
    Throw(&'static str),
}

/// Exceptions the programs can raise.
pub const DIVISION_BY_ZERO: &str = "ArithmeticException: / by zero";
/// Raised by an array access out of bounds.
pub const INDEX_OUT_OF_BOUNDS: &str = "ArrayIndexOutOfBoundsException";
/// Raised when a method's end is reached without `return`.
pub const MISSING_RETURN: &str = "method ended without return";

/// A parameter: its name, and its length if it is an array.
pub type ParamShape = (String, Option<usize>);

/// Alternative sequences of instructions (guards and the code they need).
type Alternatives = Vec<Vec<Instr>>;

/// A program's rules.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Every block of every method.
    pub blocks: Vec<Block>,
    /// Method name → its block, and its parameters.
    pub methods: HashMap<String, (BlockId, Vec<ParamShape>)>,
}

impl Rules {
    /// The block of method `name`.
    pub fn method_block(&self, name: &str) -> Option<BlockId> {
        self.methods.get(name).map(|m| m.0)
    }

    /// Blocks of `method` (its own first).
    pub fn blocks_of<'a>(&'a self, method: &'a str) -> impl Iterator<Item = BlockId> + 'a {
        (0..self.blocks.len()).filter(move |&b| self.blocks[b].method == method)
    }

    /// The rules as text, one a line, for reports.
    pub fn listing(&self, method: &str) -> Vec<String> {
        let mut lines = Vec::new();
        for b in self.blocks_of(method) {
            let block = &self.blocks[b];
            for (r, rule) in block.rules.iter().enumerate() {
                let guards: Vec<String> = rule
                    .body
                    .iter()
                    .filter_map(|i| match i {
                        Instr::Assume(c) => Some(c.to_string()),
                        _ => None,
                    })
                    .collect();
                let calls: Vec<String> = rule
                    .body
                    .iter()
                    .filter_map(|i| match i {
                        Instr::Call(c) | Instr::Catching(c, _) => {
                            Some(self.blocks[*c].name.clone())
                        }
                        Instr::Invoke { method, .. } => Some(self.blocks[*method].name.clone()),
                        _ => None,
                    })
                    .collect();
                lines.push(format!(
                    "{}({}) :- [{}] calls [{}]",
                    block.name,
                    r + 1,
                    guards.join(", "),
                    calls.join(", ")
                ));
            }
        }
        lines
    }
}

/// Translates every method of `program`; errors name the place of an unknown method or
/// variable, a wrong argument count, or an int used as an array (or the reverse).
pub fn translate(program: &Program) -> Result<Rules, SyntaxError> {
    let mut rules = Rules {
        blocks: Vec::new(),
        methods: HashMap::new(),
    };
    for m in &program.methods {
        let id = rules.blocks.len();
        rules.blocks.push(Block {
            name: m.name.clone(),
            method: m.name.clone(),
            kind: BlockKind::Method,
            rules: Vec::new(),
            pos: m.pos,
        });
        let params = m.params.iter().map(|p| (p.name.clone(), p.array)).collect();
        rules.methods.insert(m.name.clone(), (id, params));
    }
    for m in &program.methods {
        let mut t = Translator::new(&mut rules, m);
        let mut body = t.stmts(&m.body)?;
        body.push(Instr::Throw(MISSING_RETURN));
        let id = t.rules.methods[&m.name].0;
        t.rules.blocks[id].rules.push(Rule { body });
    }
    Ok(rules)
}

struct Translator<'a> {
    rules: &'a mut Rules,
    method: &'a Method,
    /// Variables in scope: name → array length (None for ints).
    vars: HashMap<String, Option<usize>>,
    counters: HashMap<&'static str, usize>,
    temps: usize,
    /// Conditions' atoms already lowered, by place.
    atoms: HashMap<Pos, (Vec<Instr>, Expr)>,
}

fn fail<T>(pos: Pos, message: String) -> Result<T, SyntaxError> {
    Err(SyntaxError { pos, message })
}

impl<'a> Translator<'a> {
    fn new(rules: &'a mut Rules, method: &'a Method) -> Self {
        let mut vars: HashMap<String, Option<usize>> = method
            .params
            .iter()
            .map(|p| (p.name.clone(), p.array))
            .collect();
        collect_locals(&method.body, &mut vars);
        Translator {
            rules,
            method,
            vars,
            counters: HashMap::new(),
            temps: 0,
            atoms: HashMap::new(),
        }
    }

    fn new_block(&mut self, prefix: &'static str, kind: BlockKind, pos: Pos) -> BlockId {
        let n = self.counters.entry(prefix).or_insert(0);
        *n += 1;
        let name = format!("{prefix}{n}");
        self.rules.blocks.push(Block {
            name,
            method: self.method.name.clone(),
            kind,
            rules: Vec::new(),
            pos,
        });
        self.rules.blocks.len() - 1
    }

    fn temp(&mut self) -> String {
        self.temps += 1;
        format!("${}", self.temps)
    }

    fn int_var(&self, name: &str, pos: Pos) -> Result<(), SyntaxError> {
        match self.vars.get(name) {
            Some(None) => Ok(()),
            Some(Some(_)) => fail(pos, format!("`{name}` is an array, not an int")),
            None => fail(pos, format!("unknown variable `{name}`")),
        }
    }

    fn array_var(&self, name: &str, pos: Pos) -> Result<usize, SyntaxError> {
        match self.vars.get(name) {
            Some(Some(length)) => Ok(*length),
            Some(None) => fail(pos, format!("`{name}` is an int, not an array")),
            None => fail(pos, format!("unknown array `{name}`")),
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) -> Result<Vec<Instr>, SyntaxError> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&mut self, stmt: &Stmt, out: &mut Vec<Instr>) -> Result<(), SyntaxError> {
        match stmt {
            Stmt::Local(name, init, pos) => {
                let value = match init {
                    Some(e) => self.int_expr(e, out)?,
                    None => Expr::Int(0, *pos),
                };
                out.push(Instr::Assign(name.clone(), value));
            }
            Stmt::Assign(name, None, value, pos) => {
                self.int_var(name, *pos)?;
                let value = self.int_expr(value, out)?;
                out.push(Instr::Assign(name.clone(), value));
            }
            Stmt::Assign(name, Some(index), value, pos) => {
                let length = self.array_var(name, *pos)?;
                let index = self.int_expr(index, out)?;
                let value = self.int_expr(value, out)?;
                let store = Instr::Store(name.clone(), index.clone(), value);
                let block = self.bounds_block(index, length, store, *pos);
                out.push(Instr::Call(block));
            }
            Stmt::Expr(e, _) => {
                self.int_expr(e, out)?;
            }
            Stmt::Return(e, _) => {
                let value = self.int_expr(e, out)?;
                out.push(Instr::Return(value));
            }
            Stmt::If(cond, then, otherwise, pos) => {
                let block = self.new_block("if", BlockKind::If, *pos);
                let (taken, not_taken) = self.condition(cond)?;
                let then = self.stmts(then)?;
                let otherwise = self.stmts(otherwise)?;
                let mut rules = Vec::new();
                for (guards, body) in [(taken, then), (not_taken, otherwise)] {
                    for mut g in guards {
                        g.extend(body.iter().cloned());
                        rules.push(Rule { body: g });
                    }
                }
                self.rules.blocks[block].rules = rules;
                out.push(Instr::Call(block));
            }
            Stmt::While(cond, body, pos) => {
                let block = self.new_block("loop", BlockKind::Loop, *pos);
                let (enter, exit) = self.condition(cond)?;
                let body = self.stmts(body)?;
                // Exits first, as the paper's traces number them: loop(1, …) leaves the loop.
                let mut rules: Vec<Rule> = exit.into_iter().map(|g| Rule { body: g }).collect();
                for mut g in enter {
                    g.extend(body.iter().cloned());
                    g.push(Instr::Call(block));
                    rules.push(Rule { body: g });
                }
                self.rules.blocks[block].rules = rules;
                out.push(Instr::Call(block));
            }
            Stmt::Try(body, handler, pos) => {
                let block = self.new_block("try", BlockKind::Try, *pos);
                let body = self.stmts(body)?;
                self.rules.blocks[block].rules = vec![Rule { body }];
                let handler = self.stmts(handler)?;
                out.push(Instr::Catching(block, handler));
            }
            Stmt::Block(stmts) => {
                for s in stmts {
                    self.stmt(s, out)?;
                }
            }
        }
        Ok(())
    }

    /// Guard sequences under which `cond` is true, and those under which it is false.
    fn condition(&mut self, cond: &Expr) -> Result<(Alternatives, Alternatives), SyntaxError> {
        Ok((self.paths(cond, true)?, self.paths(cond, false)?))
    }

    fn paths(&mut self, cond: &Expr, want: bool) -> Result<Alternatives, SyntaxError> {
        let concat = |xs: Vec<Vec<Instr>>, ys: &Vec<Vec<Instr>>| {
            xs.into_iter()
                .flat_map(|x| {
                    ys.iter().map(move |y| {
                        let mut z = x.clone();
                        z.extend(y.iter().cloned());
                        z
                    })
                })
                .collect::<Vec<_>>()
        };
        match cond {
            Expr::Not(inner, _) => self.paths(inner, !want),
            Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b, _) => {
                let and = *op == BinOp::And;
                // `a` alone decides `&&` when false and `||` when true.
                let a_decides = self.paths(a, !and)?;
                let a_continues = self.paths(a, and)?;
                let b_paths = self.paths(b, want)?;
                let mut result = concat(a_continues, &b_paths);
                if want != and {
                    let mut alone = a_decides;
                    alone.append(&mut result);
                    result = alone;
                }
                Ok(result)
            }
            atom => {
                // An atom is lowered once, however many guard sequences it appears in, so
                // that a call or division in it is one block.
                let (mut hoisted, test) = match self.atoms.get(&atom.pos()) {
                    Some(lowered) => lowered.clone(),
                    None => {
                        let mut hoisted = Vec::new();
                        let test = self.bool_atom(atom, &mut hoisted)?;
                        self.atoms
                            .insert(atom.pos(), (hoisted.clone(), test.clone()));
                        (hoisted, test)
                    }
                };
                let test = if want {
                    test
                } else {
                    Expr::Not(Box::new(test), atom.pos())
                };
                hoisted.push(Instr::Assume(test));
                Ok(vec![hoisted])
            }
        }
    }
    /// A comparison, its operands made pure.
    fn bool_atom(&mut self, e: &Expr, out: &mut Vec<Instr>) -> Result<Expr, SyntaxError> {
        match e {
            Expr::Binary(op, a, b, pos)
                if op.is_boolean() && !matches!(op, BinOp::And | BinOp::Or) =>
            {
                let a = self.int_expr(a, out)?;
                let b = self.int_expr(b, out)?;
                Ok(Expr::Binary(*op, Box::new(a), Box::new(b), *pos))
            }
            other => fail(
                other.pos(),
                format!("expected a condition (a comparison), found `{other}`"),
            ),
        }
    }

    /// A pure int expression equal to `e`, with calls, divisions and array reads hoisted
    /// into `out`.
    fn int_expr(&mut self, e: &Expr, out: &mut Vec<Instr>) -> Result<Expr, SyntaxError> {
        Ok(match e {
            Expr::Int(..) => e.clone(),
            Expr::Var(name, pos) => {
                self.int_var(name, *pos)?;
                e.clone()
            }
            Expr::Length(name, pos) => Expr::Int(self.array_var(name, *pos)? as i64, *pos),
            Expr::Neg(inner, pos) => Expr::Neg(Box::new(self.int_expr(inner, out)?), *pos),
            Expr::Binary(op @ (BinOp::Div | BinOp::Rem), a, b, pos) => {
                let a = self.int_expr(a, out)?;
                let b = self.int_expr(b, out)?;
                let block = self.new_block("div", BlockKind::Div, *pos);
                let t = self.temp();
                let zero = Expr::Int(0, *pos);
                let nonzero =
                    Expr::Binary(BinOp::Ne, Box::new(b.clone()), Box::new(zero.clone()), *pos);
                let is_zero = Expr::Binary(BinOp::Eq, Box::new(b.clone()), Box::new(zero), *pos);
                let quotient = Expr::Binary(*op, Box::new(a), Box::new(b), *pos);
                self.rules.blocks[block].rules = vec![
                    Rule {
                        body: vec![Instr::Assume(nonzero), Instr::Assign(t.clone(), quotient)],
                    },
                    Rule {
                        body: vec![Instr::Assume(is_zero), Instr::Throw(DIVISION_BY_ZERO)],
                    },
                ];
                out.push(Instr::Call(block));
                Expr::Var(t, *pos)
            }
            Expr::Binary(op, a, b, pos) if !op.is_boolean() => {
                let a = self.int_expr(a, out)?;
                let b = self.int_expr(b, out)?;
                Expr::Binary(*op, Box::new(a), Box::new(b), *pos)
            }
            Expr::Index(name, index, pos) => {
                let length = self.array_var(name, *pos)?;
                let index = self.int_expr(index, out)?;
                let t = self.temp();
                let read = Instr::Assign(
                    t.clone(),
                    Expr::Index(name.clone(), Box::new(index.clone()), *pos),
                );
                let block = self.bounds_block(index, length, read, *pos);
                out.push(Instr::Call(block));
                Expr::Var(t, *pos)
            }
            Expr::Call(name, args, pos) => {
                let Some((method, params)) = self.rules.methods.get(name).cloned() else {
                    return fail(*pos, format!("unknown method `{name}`"));
                };
                if params.len() != args.len() {
                    return fail(
                        *pos,
                        format!(
                            "`{name}` takes {} arguments, given {}",
                            params.len(),
                            args.len()
                        ),
                    );
                }
                let mut lowered = Vec::new();
                for ((pname, array), arg) in params.iter().zip(args) {
                    match (array, arg) {
                        (Some(length), Expr::Var(aname, apos)) => {
                            if self.array_var(aname, *apos)? != *length {
                                return fail(*apos, format!("`{aname}` must be an array of {length} to pass as `{pname}`"));
                            }
                            lowered.push(arg.clone());
                        }
                        (Some(_), other) => {
                            return fail(
                                other.pos(),
                                format!("`{pname}` of `{name}` needs an array variable"),
                            )
                        }
                        (None, arg) => lowered.push(self.int_expr(arg, out)?),
                    }
                }
                let t = self.temp();
                out.push(Instr::Invoke {
                    method,
                    args: lowered,
                    result: t.clone(),
                });
                Expr::Var(t, *pos)
            }
            other => {
                return fail(
                    other.pos(),
                    format!("expected an int expression, found the condition `{other}`"),
                )
            }
        })
    }

    /// A block that runs `access` when `0 <= index < length` and throws otherwise.
    fn bounds_block(&mut self, index: Expr, length: usize, access: Instr, pos: Pos) -> BlockId {
        let block = self.new_block("index", BlockKind::Index, pos);
        let cmp = |op, bound: i64| {
            Expr::Binary(
                op,
                Box::new(index.clone()),
                Box::new(Expr::Int(bound, pos)),
                pos,
            )
        };
        self.rules.blocks[block].rules = vec![
            Rule {
                body: vec![
                    Instr::Assume(cmp(BinOp::Ge, 0)),
                    Instr::Assume(cmp(BinOp::Lt, length as i64)),
                    access,
                ],
            },
            Rule {
                body: vec![
                    Instr::Assume(cmp(BinOp::Lt, 0)),
                    Instr::Throw(INDEX_OUT_OF_BOUNDS),
                ],
            },
            Rule {
                body: vec![
                    Instr::Assume(cmp(BinOp::Ge, length as i64)),
                    Instr::Throw(INDEX_OUT_OF_BOUNDS),
                ],
            },
        ];
        block
    }
}

/// Locals are method-wide (Java's block scoping is not needed by the analysis).
fn collect_locals(stmts: &[Stmt], vars: &mut HashMap<String, Option<usize>>) {
    for s in stmts {
        match s {
            Stmt::Local(name, _, _) => {
                vars.insert(name.clone(), None);
            }
            Stmt::If(_, a, b, _) | Stmt::Try(a, b, _) => {
                collect_locals(a, vars);
                collect_locals(b, vars);
            }
            Stmt::While(_, a, _) | Stmt::Block(a) => collect_locals(a, vars),
            _ => {}
        }
    }
}
