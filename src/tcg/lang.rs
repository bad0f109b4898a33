//! The input language of `snapsat tcg`: small Java-like integer programs.
//!
//! ```text
//! program  := method*
//! method   := "int" NAME "(" [param ("," param)*] ")" block
//! param    := "int" NAME | "int" "[" NUMBER "]" NAME        (arrays have a fixed length)
//! block    := "{" stmt* "}"
//! stmt     := "int" NAME ["=" expr] ";" | lvalue "=" expr ";" | expr ";"
//!           | "if" "(" expr ")" body ["else" body] | "while" "(" expr ")" body
//!           | "return" expr ";" | "try" block "catch" block | block
//! body     := stmt
//! lvalue   := NAME | NAME "[" expr "]"
//! expr     := the usual precedence: || && (== !=) (< <= > >=) (+ -) (* / %) unary(- !) primary
//! primary  := NUMBER | NAME | NAME "(" args ")" | NAME "[" expr "]" | NAME ".length" | "(" expr ")"
//! ```
//! `catch` catches the run-time exceptions: division or remainder by zero, and an array index
//! out of bounds. Comments are `//` to the end of the line and `/* … */`.

pub use super::ast::{BinOp, Expr, Method, Param, Pos, Program, Stmt, SyntaxError};
use super::lex::{error, lex, Token};

/// How deeply expressions and statements may nest (parentheses, unary operators, chains of
/// binary operators, blocks): every later pass walks the tree recursively, so a deeper one
/// is refused with its position rather than overflowing the stack. 256 keeps the parser
/// within a 2 MiB thread stack (about ten frames a level of parentheses).
pub const MAX_NESTING: usize = 256;

struct Parser {
    tokens: Vec<(Token, Pos)>,
    at: usize,
    /// Nesting of the construct being parsed.
    depth: usize,
}

/// Parses a program; errors name line, column and what was expected.
pub fn parse(source: &str) -> Result<Program, SyntaxError> {
    let mut p = Parser {
        tokens: lex(source)?,
        at: 0,
        depth: 0,
    };
    let mut methods: Vec<Method> = Vec::new();
    while p.peek() != &Token::End {
        let method = p.method()?;
        if methods.iter().any(|m| m.name == method.name) {
            return error(
                method.pos,
                format!("method `{}` defined twice", method.name),
            );
        }
        methods.push(method);
    }
    Ok(Program { methods })
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at].0
    }

    fn pos(&self) -> Pos {
        self.tokens[self.at].1
    }

    /// The token `ahead` places on; past the end, the end token.
    fn peek_at(&self, ahead: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.at + ahead).min(last)].0
    }

    fn next(&mut self) -> (Token, Pos) {
        let t = self.tokens[self.at].clone();
        if self.at + 1 < self.tokens.len() {
            self.at += 1;
        }
        t
    }

    fn is(&self, symbol: &str) -> bool {
        matches!(self.peek(), Token::Symbol(s) if *s == symbol)
    }

    fn eat(&mut self, symbol: &str) -> bool {
        let found = self.is(symbol);
        if found {
            self.next();
        }
        found
    }

    fn expect(&mut self, symbol: &str) -> Result<Pos, SyntaxError> {
        if self.is(symbol) {
            Ok(self.next().1)
        } else {
            error(
                self.pos(),
                format!("expected `{symbol}`, found {}", self.peek()),
            )
        }
    }

    fn name(&mut self, what: &str) -> Result<(String, Pos), SyntaxError> {
        match self.next() {
            (Token::Name(n), pos) => Ok((n, pos)),
            (other, pos) => error(pos, format!("expected {what}, found {other}")),
        }
    }

    fn method(&mut self) -> Result<Method, SyntaxError> {
        let pos = self.expect("int")?;
        let (name, _) = self.name("a method name")?;
        self.expect("(")?;
        let mut params = Vec::new();
        if !self.is(")") {
            loop {
                self.expect("int")?;
                let array = if self.eat("[") {
                    let length = match self.next() {
                        (Token::Number(n), _) if (1..=64).contains(&n) => n as usize,
                        (other, pos) => {
                            return error(
                                pos,
                                format!("expected an array length 1-64, found {other}"),
                            )
                        }
                    };
                    self.expect("]")?;
                    Some(length)
                } else {
                    None
                };
                let (pname, ppos) = self.name("a parameter name")?;
                if params.iter().any(|p: &Param| p.name == pname) {
                    return error(ppos, format!("parameter `{pname}` declared twice"));
                }
                params.push(Param { name: pname, array });
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect(")")?;
        let body = self.block()?;
        Ok(Method {
            name,
            params,
            body,
            pos,
        })
    }

    /// Runs `parse` `1 + extra` levels deeper, refusing to go past [`MAX_NESTING`].
    fn nested<T>(
        &mut self,
        extra: usize,
        parse: impl FnOnce(&mut Self) -> Result<T, SyntaxError>,
    ) -> Result<T, SyntaxError> {
        if self.depth + extra >= MAX_NESTING {
            return error(
                self.pos(),
                format!("the program nests deeper than {MAX_NESTING} levels (parentheses, operators, blocks)"),
            );
        }
        self.depth += 1 + extra;
        let parsed = parse(self);
        self.depth -= 1 + extra;
        parsed
    }

    fn block(&mut self) -> Result<Vec<Stmt>, SyntaxError> {
        self.nested(0, Self::block_inside)
    }

    fn block_inside(&mut self) -> Result<Vec<Stmt>, SyntaxError> {
        self.expect("{")?;
        let mut stmts = Vec::new();
        while !self.eat("}") {
            if self.peek() == &Token::End {
                return error(self.pos(), "expected `}`, found end of input");
            }
            stmts.push(self.stmt()?);
        }
        Ok(stmts)
    }

    /// A statement used as a branch or loop body: a block or a single statement.
    fn body(&mut self) -> Result<Vec<Stmt>, SyntaxError> {
        if self.is("{") {
            self.block()
        } else {
            Ok(vec![self.nested(0, Self::stmt)?])
        }
    }

    fn stmt(&mut self) -> Result<Stmt, SyntaxError> {
        let pos = self.pos();
        if self.eat("int") {
            let (name, _) = self.name("a variable name")?;
            let init = if self.eat("=") {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect(";")?;
            return Ok(Stmt::Local(name, init, pos));
        }
        if self.eat("if") {
            self.expect("(")?;
            let cond = self.expr()?;
            self.expect(")")?;
            let then = self.body()?;
            let otherwise = if self.eat("else") {
                self.body()?
            } else {
                Vec::new()
            };
            return Ok(Stmt::If(cond, then, otherwise, pos));
        }
        if self.eat("while") {
            self.expect("(")?;
            let cond = self.expr()?;
            self.expect(")")?;
            return Ok(Stmt::While(cond, self.body()?, pos));
        }
        if self.eat("return") {
            let value = self.expr()?;
            self.expect(";")?;
            return Ok(Stmt::Return(value, pos));
        }
        if self.eat("try") {
            let body = self.block()?;
            self.expect("catch")?;
            return Ok(Stmt::Try(body, self.block()?, pos));
        }
        if self.is("{") {
            return Ok(Stmt::Block(self.block()?));
        }
        if let (Token::Name(name), Token::Symbol(s)) = (self.peek().clone(), self.peek_at(1)) {
            if *s == "=" || *s == "[" && self.assignment_to_index() {
                self.next();
                let index = if self.eat("[") {
                    let i = self.expr()?;
                    self.expect("]")?;
                    Some(i)
                } else {
                    None
                };
                self.expect("=")?;
                let value = self.expr()?;
                self.expect(";")?;
                return Ok(Stmt::Assign(name, index, value, pos));
            }
        }
        let e = self.expr()?;
        if !matches!(e, Expr::Call(..)) {
            return error(
                pos,
                "expected a statement; an expression alone must be a call",
            );
        }
        self.expect(";")?;
        Ok(Stmt::Expr(e, pos))
    }

    /// After `NAME [`: true when the matching `]` is followed by `=` (an element assignment).
    fn assignment_to_index(&self) -> bool {
        let mut depth = 0;
        for (t, _) in &self.tokens[self.at + 1..] {
            match t {
                Token::Symbol("[") => depth += 1,
                Token::Symbol("]") => {
                    depth -= 1;
                    if depth == 0 {
                        continue;
                    }
                }
                Token::Symbol("=") if depth == 0 => return true,
                Token::End => return false,
                _ if depth == 0 => return false,
                _ => {}
            }
        }
        false
    }

    fn expr(&mut self) -> Result<Expr, SyntaxError> {
        self.nested(0, |p| p.binary(0))
    }

    fn binary(&mut self, level: usize) -> Result<Expr, SyntaxError> {
        const LEVELS: [&[(&str, BinOp)]; 6] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        // Each operator of a chain nests the tree one level deeper on the left.
        let mut chain = 0;
        'more: loop {
            for &(symbol, op) in LEVELS[level] {
                if self.is(symbol) {
                    chain += 1;
                    let (pos, right) = self.nested(chain, |p| {
                        let pos = p.next().1;
                        Ok((pos, p.binary(level + 1)?))
                    })?;
                    left = Expr::Binary(op, Box::new(left), Box::new(right), pos);
                    continue 'more;
                }
            }
            return Ok(left);
        }
    }

    fn unary(&mut self) -> Result<Expr, SyntaxError> {
        let pos = self.pos();
        if self.eat("-") {
            return Ok(match self.nested(0, Self::unary)? {
                Expr::Int(v, _) => Expr::Int(-v, pos),
                e => Expr::Neg(Box::new(e), pos),
            });
        }
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.nested(0, Self::unary)?), pos));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, SyntaxError> {
        match self.next() {
            (Token::Number(n), pos) => Ok(Expr::Int(n, pos)),
            (Token::Symbol("("), _) => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            (Token::Name(name), pos) => {
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.is(")") {
                        loop {
                            args.push(self.expr()?);
                            if !self.eat(",") {
                                break;
                            }
                        }
                    }
                    self.expect(")")?;
                    Ok(Expr::Call(name, args, pos))
                } else if self.eat("[") {
                    let index = self.expr()?;
                    self.expect("]")?;
                    Ok(Expr::Index(name, Box::new(index), pos))
                } else if self.eat(".") {
                    match self.next() {
                        (Token::Name(n), _) if n == "length" => Ok(Expr::Length(name, pos)),
                        (other, p) => error(p, format!("expected `length`, found {other}")),
                    }
                } else {
                    Ok(Expr::Var(name, pos))
                }
            }
            (other, pos) => error(pos, format!("expected an expression, found {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_seed_examples() {
        let p = parse(super::super::examples::LCM).unwrap();
        let names: Vec<&str> = p.methods.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["lcm", "gcd", "abs"]);
        assert!(matches!(p.methods[0].body[2], Stmt::Try(..)));
        assert!(matches!(p.methods[1].body[0], Stmt::While(..)));
    }

    /// Found by `scripts/fuzz`: a name as the very last token was looked past.
    #[test]
    fn a_program_ending_in_a_name_is_an_error_not_a_panic() {
        let err = parse("int f(int x) { if (x < 1) x").unwrap_err();
        assert_eq!((err.pos.line, err.pos.column), (1, 27), "{err}");
    }

    #[test]
    fn deep_nesting_is_an_error_with_its_position() {
        let deep = |open: &str, inner: &str, close: &str, n: usize| {
            format!(
                "int f(int a) {{ return {}{inner}{}; }}",
                open.repeat(n),
                close.repeat(n)
            )
        };
        for program in [
            deep("(", "a", ")", 5000),
            deep("-", "a", "", 100_000),
            deep("!", "a", "", 100_000),
            format!(
                "int f(int a) {{ return {}; }}",
                vec!["a"; 20_000].join(" + ")
            ),
            format!(
                "int f(int a) {{ {}a = 1;{} return a; }}",
                "{".repeat(20_000),
                "}".repeat(20_000)
            ),
            format!(
                "int f(int a) {{ {}a = 1;{} return a; }}",
                "if (a > 0) ".repeat(5000),
                ""
            ),
        ] {
            let err = parse(&program).unwrap_err();
            assert!(err.message.contains("nests deeper than"), "{err}");
            assert_eq!(err.pos.line, 1);
        }
        // Just inside the limit still parses.
        assert!(parse(&deep("(", "a", ")", MAX_NESTING / 2)).is_ok());
    }

    #[test]
    fn precedence_is_the_usual_one() {
        let p = parse("int f(int a, int b) { return a + b * 2 < 7 && !(a == b) || a % 3 != 0; }")
            .unwrap();
        let Stmt::Return(e, _) = &p.methods[0].body[0] else {
            panic!()
        };
        assert_eq!(
            e.to_string(),
            "((((a + (b * 2)) < 7) && !(a == b)) || ((a % 3) != 0))"
        );
    }

    #[test]
    fn errors_name_line_column_and_what_was_expected() {
        let cases = [
            (
                "int f(int a) {\n  return a\n}",
                3,
                1,
                "expected `;`, found `}`",
            ),
            (
                "int f(int a) { a = ; }",
                1,
                20,
                "expected an expression, found `;`",
            ),
            (
                "int f(int a) {\n  int x = a # 2;\n}",
                2,
                13,
                "unexpected character `#`",
            ),
            (
                "int f(int a) { return a; }\nint f() { return 1; }",
                2,
                1,
                "defined twice",
            ),
            ("int f(int[0] a) { return 1; }", 1, 11, "array length"),
            ("int f() { return 1; /* open", 1, 21, "comment not closed"),
            ("int f() { a + 1; }", 1, 11, "must be a call"),
            (
                "int f() { return 1;",
                1,
                20,
                "expected `}`, found end of input",
            ),
        ];
        for (source, line, column, message) in cases {
            let e = parse(source).unwrap_err();
            assert_eq!((e.pos.line, e.pos.column), (line, column), "{source}: {e}");
            assert!(e.message.contains(message), "{source}: {e}");
        }
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "[ -~\n]{0,200}") {
            let _ = parse(&text);
        }

        #[test]
        fn printed_expressions_parse_back_to_themselves(
            a in -50i64..50, b in 1i64..50, op in 0usize..5
        ) {
            let ops = ["+", "-", "*", "/", "%"];
            let source = format!("int f(int x) {{ return (x {} {a}) {} {b}; }}", ops[op], ops[(op + 1) % 5]);
            let first = parse(&source).unwrap();
            let Stmt::Return(e, _) = &first.methods[0].body[0] else { panic!() };
            let again = parse(&format!("int f(int x) {{ return {e}; }}")).unwrap();
            let Stmt::Return(e2, _) = &again.methods[0].body[0] else { panic!() };
            prop_assert_eq!(e.to_string(), e2.to_string());
        }
    }
}
