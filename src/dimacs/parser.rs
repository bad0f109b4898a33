//! The DIMACS parser proper: header, clauses and the `c ind`/`c p show` sampling set, one
//! line at a time, every error with its line and column.

use super::{ParseError, Parsed, Strictness, BYTES_PER_VAR, MAX_VARS};
use crate::formula::{Cnf, Lit};

/// Which comment line names the sampling set; the two conventions may not be mixed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SupportSyntax {
    Ind,
    Show,
}

struct Parser<'a> {
    text: &'a [u8],
    strictness: Strictness,
    warnings: Vec<String>,
    header: Option<(usize, usize)>,
    cnf: Cnf,
    clause: Vec<Lit>,
    /// Where the clause under construction began, for the trailing-clause error.
    clause_start: (usize, usize),
    support: Vec<u32>,
    support_seen: Vec<bool>,
    /// Sampling-set variables met before the header (sketch files put them first), with their
    /// positions, checked against the variable count once the header is read.
    early_support: Vec<(usize, usize, i64)>,
    support_syntax: Option<SupportSyntax>,
}

/// Parses DIMACS CNF text.
pub fn parse(text: &[u8], strictness: Strictness) -> Result<Parsed, ParseError> {
    let mut parser = Parser {
        text,
        strictness,
        warnings: Vec::new(),
        header: None,
        cnf: Cnf::new(0),
        clause: Vec::new(),
        clause_start: (0, 0),
        support: Vec::new(),
        support_seen: Vec::new(),
        early_support: Vec::new(),
        support_syntax: None,
    };
    parser.run()?;
    Ok(Parsed {
        cnf: parser.cnf,
        warnings: parser.warnings,
    })
}

fn error(line: usize, column: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        column,
        message: message.into(),
    }
}

/// Splits a line into whitespace-separated tokens with their 1-based columns.
fn tokens(line: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        while pos < line.len() && line[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos == line.len() {
            return None;
        }
        let start = pos;
        while pos < line.len() && !line[pos].is_ascii_whitespace() {
            pos += 1;
        }
        Some((start + 1, &line[start..pos]))
    })
}

/// A number as DIMACS writes it: digits with an optional `-`, no `+`, no leading zeros, and
/// 0 without a sign (`1 2 -0` ends no clause a DIMACS tool would agree on).
fn canonical(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" && digits.len() == text.len() || !digits.starts_with('0'))
}

impl Parser<'_> {
    /// `token` as a number: in strict mode only as DIMACS writes it ([`canonical`]).
    fn int(&self, token: &[u8]) -> Option<i64> {
        let text = std::str::from_utf8(token).ok()?;
        if text.len() > 12 || self.strictness == Strictness::Strict && !canonical(text) {
            return None;
        }
        text.parse::<i64>().ok()
    }

    /// `token` as a number, or the error at `line`:`column` saying it was `expected` (and,
    /// where only strict mode refuses it, that `--relaxed` takes it).
    fn number(
        &self,
        token: &[u8],
        line: usize,
        column: usize,
        expected: &str,
    ) -> Result<i64, ParseError> {
        self.int(token).ok_or_else(|| {
            error(
                line,
                column,
                format!(
                    "expected {expected}, found `{}`{}",
                    show(token),
                    self.relaxed_hint(token)
                ),
            )
        })
    }

    /// What an error on `token` adds when only strict mode refuses it.
    fn relaxed_hint(&self, token: &[u8]) -> &'static str {
        let text = std::str::from_utf8(token).unwrap_or("");
        if self.strictness == Strictness::Strict && text.len() <= 12 && text.parse::<i64>().is_ok()
        {
            " (DIMACS writes numbers without `+`, leading zeros or `-0`; --relaxed accepts it)"
        } else {
            ""
        }
    }
}

fn show(token: &[u8]) -> String {
    let text = String::from_utf8_lossy(token);
    if text.chars().count() > 20 {
        format!("{}…", text.chars().take(20).collect::<String>())
    } else {
        text.into_owned()
    }
}

impl Parser<'_> {
    fn run(&mut self) -> Result<(), ParseError> {
        let text = self.text;
        let mut line_no = 0;
        let mut ended_by_marker = false;
        for line in text.split(|&b| b == b'\n') {
            line_no += 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let first = line.iter().position(|b| !b.is_ascii_whitespace());
            let Some(first) = first else { continue };
            match line[first] {
                b'c' => self.comment(line_no, line)?,
                b'p' => self.header_line(line_no, line)?,
                b'%' => {
                    ended_by_marker = true;
                    break;
                }
                _ => self.clause_line(line_no, line)?,
            }
        }
        // A final newline ends the last line; it does not start another.
        if !ended_by_marker && text.ends_with(b"\n") {
            line_no -= 1;
        }
        self.finish(line_no)
    }

    fn comment(&mut self, line_no: usize, line: &[u8]) -> Result<(), ParseError> {
        let mut toks = tokens(line);
        let first = toks.next().map(|t| t.1);
        let (syntax, rest): (SupportSyntax, Vec<(usize, &[u8])>) = match first {
            Some(b"c") => match toks.next() {
                Some((_, b"ind")) => (SupportSyntax::Ind, toks.collect()),
                Some((_, b"p")) => match toks.next() {
                    Some((_, b"show")) => (SupportSyntax::Show, toks.collect()),
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            },
            _ => return Ok(()),
        };
        if self.support_syntax.is_some_and(|s| s != syntax) {
            return Err(error(
                line_no,
                1,
                "`c ind` and `c p show` lines may not be mixed in one file",
            ));
        }
        self.support_syntax = Some(syntax);
        let mut closed = false;
        for (column, token) in rest {
            if closed {
                return Err(error(
                    line_no,
                    column,
                    format!(
                        "expected the end of the line after 0, found `{}`",
                        show(token)
                    ),
                ));
            }
            let value = self.number(token, line_no, column, "a variable number")?;
            if value == 0 {
                closed = true;
            } else if self.header.is_some() {
                self.add_support(line_no, column, value)?;
            } else {
                self.early_support.push((line_no, column, value));
            }
        }
        if !closed {
            return Err(error(
                line_no,
                line.len() + 1,
                "expected 0 to end the sampling-set line",
            ));
        }
        Ok(())
    }

    fn add_support(&mut self, line_no: usize, column: usize, value: i64) -> Result<(), ParseError> {
        let num_vars = self.cnf.num_vars();
        if value < 0 || value as usize > num_vars {
            return Err(error(
                line_no,
                column,
                format!("sampling-set variable {value} is not in 1..={num_vars}"),
            ));
        }
        let v = value as usize;
        if !self.support_seen[v] {
            self.support_seen[v] = true;
            self.support.push(v as u32);
        }
        Ok(())
    }

    fn header_line(&mut self, line_no: usize, line: &[u8]) -> Result<(), ParseError> {
        let previous = self.header;
        let toks: Vec<_> = tokens(line).collect();
        let expect = "expected `p cnf VARS CLAUSES`";
        if toks.first().map(|t| t.1) != Some(b"p") {
            return Err(error(line_no, toks[0].0, expect));
        }
        match toks.get(1) {
            Some((_, b"cnf")) => {}
            Some((col, tok)) => {
                return Err(error(
                    line_no,
                    *col,
                    format!("{expect}: format `{}` is not `cnf`", show(tok)),
                ))
            }
            None => return Err(error(line_no, line.len() + 1, expect)),
        }
        let mut numbers = [0usize; 2];
        for (i, what) in ["variable count", "clause count"].iter().enumerate() {
            let Some(&(col, tok)) = toks.get(2 + i) else {
                return Err(error(
                    line_no,
                    line.len() + 1,
                    format!("{expect}: missing the {what}"),
                ));
            };
            let expected = format!("the {what} (a number ≥ 0)");
            numbers[i] = match self.number(tok, line_no, col, &expected)? {
                n if n >= 0 => n as usize,
                _ => {
                    return Err(error(
                        line_no,
                        col,
                        format!("expected {expected}, found `{}`", show(tok)),
                    ))
                }
            };
        }
        if let Some(&(col, tok)) = toks.get(4) {
            return Err(error(
                line_no,
                col,
                format!("expected the end of the header, found `{}`", show(tok)),
            ));
        }
        if numbers[0] > MAX_VARS {
            return Err(error(
                line_no,
                toks[2].0,
                format!(
                    "{} variables is more than the {MAX_VARS} supported",
                    numbers[0]
                ),
            ));
        }
        if let Some(previous) = previous {
            // Some circuit files repeat their header verbatim; anything else is ambiguous.
            if previous != (numbers[0], numbers[1])
                || self.cnf.num_clauses() > 0
                || !self.clause.is_empty()
            {
                return Err(error(line_no, 1, "a second, different `p` header line"));
            }
            return Ok(());
        }
        let mut probe: Vec<u8> = Vec::new();
        if probe.try_reserve_exact(numbers[0] * BYTES_PER_VAR).is_err() {
            return Err(error(
                line_no,
                toks[2].0,
                format!(
                    "cannot allocate memory for {} variables (about {} MB)",
                    numbers[0],
                    (numbers[0] * BYTES_PER_VAR) >> 20
                ),
            ));
        }
        drop(probe);
        self.header = Some((numbers[0], numbers[1]));
        self.cnf = Cnf::new(numbers[0]);
        self.support_seen = vec![false; numbers[0] + 1];
        for (line, column, value) in std::mem::take(&mut self.early_support) {
            self.add_support(line, column, value)?;
        }
        Ok(())
    }

    fn clause_line(&mut self, line_no: usize, line: &[u8]) -> Result<(), ParseError> {
        for (column, token) in tokens(line) {
            let Some((num_vars, _)) = self.header else {
                return Err(error(
                    line_no,
                    column,
                    format!(
                        "expected the `p cnf VARS CLAUSES` header before clauses, found `{}`",
                        show(token)
                    ),
                ));
            };
            let value = self.number(
                token,
                line_no,
                column,
                "a literal (a non-zero integer) or 0",
            )?;
            if value == 0 {
                self.cnf.add_clause(&self.clause);
                self.clause.clear();
                continue;
            }
            if value.unsigned_abs() as usize > num_vars {
                return Err(error(
                    line_no,
                    column,
                    format!("literal {value} is beyond the {num_vars} variables of the header"),
                ));
            }
            if self.clause.is_empty() {
                self.clause_start = (line_no, column);
            }
            self.clause.push(value as Lit);
        }
        Ok(())
    }

    fn finish(&mut self, last_line: usize) -> Result<(), ParseError> {
        let Some((_, declared)) = self.header else {
            return Err(error(
                last_line.max(1),
                0,
                "expected the `p cnf VARS CLAUSES` header; the input has none",
            ));
        };
        if !self.clause.is_empty() {
            let (line, column) = self.clause_start;
            return Err(error(
                line,
                column,
                "the last clause is not ended by 0 (truncated file?)",
            ));
        }
        let found = self.cnf.num_clauses();
        if found != declared {
            let message = format!("the header declares {declared} clauses but {found} were found");
            match self.strictness {
                Strictness::Strict => {
                    return Err(error(
                        last_line.max(1),
                        0,
                        format!("{message} (--relaxed accepts this)"),
                    ))
                }
                Strictness::Relaxed => self.warnings.push(message),
            }
        }
        self.cnf
            .set_independent_support(std::mem::take(&mut self.support));
        Ok(())
    }
}
