//! The syntax tree of the small language `tcg` reads (see [`super::lang`] for its grammar),
//! with source positions for messages.

use std::fmt;

/// A place in the source, counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A program error with its place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {message}")]
pub struct SyntaxError {
    /// Where the program went wrong.
    pub pos: Pos,
    /// What was expected there.
    pub message: String,
}

/// A parsed program: its methods in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The methods, in source order.
    pub methods: Vec<Method>,
}

/// A method: `int name(params) { body }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    /// Its name, unique in the program.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// Its statements.
    pub body: Vec<Stmt>,
    /// Where it starts.
    pub pos: Pos,
}

/// A parameter: an int, or an array of ints of a fixed length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// `Some(n)`: an array of `n` ints.
    pub array: Option<usize>,
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    /// `int x;` or `int x = e;`
    Local(String, Option<Expr>, Pos),
    /// `x = e;` or, with an index, `a[i] = e;`
    Assign(String, Option<Expr>, Expr, Pos),
    /// An expression for its effects (a call): `e;`
    Expr(Expr, Pos),
    /// `if (c) { then } else { otherwise }`
    If(Expr, Vec<Stmt>, Vec<Stmt>, Pos),
    /// `while (c) { body }`
    While(Expr, Vec<Stmt>, Pos),
    /// `return e;`
    Return(Expr, Pos),
    /// `try { body } catch { handler }`
    Try(Vec<Stmt>, Vec<Stmt>, Pos),
    /// A nested `{ … }`; locals are method-wide, so it only groups.
    Block(Vec<Stmt>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`, truncating; throws on a zero divisor
    Div,
    /// `%`, with the dividend's sign; throws on a zero divisor
    Rem,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`, short-circuit
    And,
    /// `||`, short-circuit
    Or,
}

impl BinOp {
    /// How the operator is written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// True for operators whose value is a truth value.
    pub fn is_boolean(self) -> bool {
        !matches!(
            self,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem
        )
    }
}

/// An expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A literal.
    Int(i64, Pos),
    /// A local or parameter.
    Var(String, Pos),
    /// `a[i]`; throws when `i` is out of bounds.
    Index(String, Box<Expr>, Pos),
    /// `a.length`
    Length(String, Pos),
    /// `-e`
    Neg(Box<Expr>, Pos),
    /// `!e`
    Not(Box<Expr>, Pos),
    /// `a op b`
    Binary(BinOp, Box<Expr>, Box<Expr>, Pos),
    /// `m(args)`, a call of another method of the program.
    Call(String, Vec<Expr>, Pos),
}

impl Expr {
    /// Where the expression starts.
    pub fn pos(&self) -> Pos {
        match self {
            Expr::Int(_, p)
            | Expr::Var(_, p)
            | Expr::Index(_, _, p)
            | Expr::Length(_, p)
            | Expr::Neg(_, p)
            | Expr::Not(_, p)
            | Expr::Binary(_, _, _, p)
            | Expr::Call(_, _, p) => *p,
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Int(v, _) => write!(f, "{v}"),
            Expr::Var(n, _) => write!(f, "{n}"),
            Expr::Index(n, i, _) => write!(f, "{n}[{i}]"),
            Expr::Length(n, _) => write!(f, "{n}.length"),
            Expr::Neg(e, _) => write!(f, "-{e}"),
            Expr::Not(e, _) => write!(f, "!{e}"),
            Expr::Binary(op, a, b, _) => write!(f, "({a} {} {b})", op.symbol()),
            Expr::Call(n, args, _) => {
                write!(f, "{n}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ")")
            }
        }
    }
}
