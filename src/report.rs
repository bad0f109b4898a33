//! Writing tests and reading them back: DIMACS literal lines (as CMSGen writes) or 0/1 strings.

use crate::assignment::Assignment;
use crate::formula::Lit;
use std::io::{self, BufRead, Write};

/// How tests are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TestFormat {
    /// `1 -2 3 0`: every variable as a signed literal, ended by 0.
    #[default]
    Dimacs,
    /// `101`: one 0/1 character a variable.
    Bits,
}

/// Streams tests to a writer, flushing each so that an interrupted run loses none.
pub struct TestWriter<W: Write> {
    out: W,
    format: TestFormat,
    written: usize,
}

impl<W: Write> TestWriter<W> {
    pub fn new(out: W, format: TestFormat) -> Self {
        TestWriter {
            out,
            format,
            written: 0,
        }
    }

    pub fn write(&mut self, test: &Assignment) -> io::Result<()> {
        let line = match self.format {
            TestFormat::Dimacs => test.to_dimacs_line(),
            TestFormat::Bits => test.to_bit_string(),
        };
        writeln!(self.out, "{line}")?;
        self.out.flush()?;
        self.written += 1;
        Ok(())
    }

    pub fn written(&self) -> usize {
        self.written
    }
}

/// A line of a test file that is not a test over `num_vars` variables.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TestParseError {
    pub line: usize,
    pub message: String,
}

/// Reads tests, one a line, in either format (detected per line); blank lines and lines
/// starting with `c` are skipped. A DIMACS line may name variables in any order and leave some
/// out (those are false), as CMSGen's projected samples do.
pub fn read_tests(input: impl BufRead, num_vars: usize) -> Result<Vec<Assignment>, TestParseError> {
    let mut tests = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let fail = |message: String| TestParseError {
            line: i + 1,
            message,
        };
        let line = line.map_err(|e| fail(e.to_string()))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('c') {
            continue;
        }
        if !line.contains(' ') && line.bytes().all(|b| b == b'0' || b == b'1') && line != "0" {
            if line.len() != num_vars {
                return Err(fail(format!(
                    "expected {num_vars} 0/1 characters, found {}",
                    line.len()
                )));
            }
            tests.push(Assignment::from_bit_string(line).expect("checked characters"));
            continue;
        }
        let mut lits = Vec::new();
        let mut ended = false;
        for token in line.split_ascii_whitespace() {
            if ended {
                return Err(fail(format!(
                    "expected the end of the line after 0, found `{token}`"
                )));
            }
            let lit: Lit = token
                .parse()
                .map_err(|_| fail(format!("expected a literal or 0, found `{token}`")))?;
            if lit == 0 {
                ended = true;
            } else if lit.unsigned_abs() as usize > num_vars {
                return Err(fail(format!(
                    "literal {lit} is beyond the {num_vars} variables"
                )));
            } else {
                lits.push(lit);
            }
        }
        if !ended {
            return Err(fail("expected 0 to end the test".into()));
        }
        tests.push(Assignment::from_literals(num_vars, &lits));
    }
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_round_trip() {
        let tests = vec![
            Assignment::from_bit_string("1010").unwrap(),
            Assignment::from_bit_string("0111").unwrap(),
        ];
        for format in [TestFormat::Dimacs, TestFormat::Bits] {
            let mut w = TestWriter::new(Vec::new(), format);
            for t in &tests {
                w.write(t).unwrap();
            }
            assert_eq!(w.written(), 2);
            assert_eq!(read_tests(&w.out[..], 4).unwrap(), tests);
        }
    }

    #[test]
    fn malformed_test_lines_are_named() {
        let err = |text: &str| read_tests(text.as_bytes(), 3).unwrap_err().to_string();
        assert_eq!(
            err("1 -2 3 0\n1 x 0\n"),
            "line 2: expected a literal or 0, found `x`"
        );
        assert_eq!(
            err("1 4 0\n"),
            "line 1: literal 4 is beyond the 3 variables"
        );
        assert_eq!(err("1 2\n"), "line 1: expected 0 to end the test");
        assert_eq!(err("0101\n"), "line 1: expected 3 0/1 characters, found 4");
    }
}
