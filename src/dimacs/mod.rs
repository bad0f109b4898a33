//! DIMACS CNF input and output: strict by default, every error naming line, column and what was
//! expected; gzip and xz recognised by their magic bytes.

mod parser;

pub use parser::parse;

use crate::formula::Cnf;
use std::fmt;
use std::io::Read;
use std::path::Path;

/// The largest variable count accepted. A run holds about [`BYTES_PER_VAR`] bytes a
/// variable before its first clause (checker, propagators, samples), so 2^25 variables
/// already take ~4 GB; past that a declared count is more likely a typo than a formula.
pub const MAX_VARS: usize = 1 << 25;

/// Memory a run needs per declared variable, measured on `p cnf N 1` formulas; the parser
/// reserves it once so that a machine that cannot give it gets an error, not an abort.
pub const BYTES_PER_VAR: usize = 128;

/// Why a DIMACS text was rejected, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line, 0 when the error concerns the whole input.
    pub line: usize,
    /// 1-based column (in bytes), 0 when the error concerns the whole line or input.
    pub column: usize,
    /// What was expected there.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}", self.message),
            (l, 0) => write!(f, "line {l}: {}", self.message),
            (l, c) => write!(f, "line {l}, column {c}: {}", self.message),
        }
    }
}

impl std::error::Error for ParseError {}

/// How forgiving the parser is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strictness {
    /// Every deviation from the header is an error.
    #[default]
    Strict,
    /// A clause count that differs from the header is a warning.
    Relaxed,
}

/// A parsed formula and the warnings met on the way.
#[derive(Debug)]
pub struct Parsed {
    /// The formula.
    pub cnf: Cnf,
    /// What a relaxed parse let pass, one message each.
    pub warnings: Vec<String>,
}

/// An error reading a formula file: I/O, decompression or syntax. The message says it all
/// (the cause is not chained again, or it would be printed twice).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read.
    #[error("{path}: {cause}")]
    Io {
        /// The file, as given.
        path: String,
        /// What the system said.
        cause: std::io::Error,
    },
    /// The file looks compressed but does not decompress.
    #[error("{path}: cannot decompress ({format}): {message}")]
    Decompress {
        /// The file, as given.
        path: String,
        /// `gzip` or `xz`.
        format: &'static str,
        /// What the decompressor said.
        message: String,
    },
    /// The text is not DIMACS CNF.
    #[error("{path}: {cause}")]
    Parse {
        /// The file, as given.
        path: String,
        /// Where and why.
        cause: ParseError,
    },
}

/// Reads a formula from a file, or from standard input when the path is `-`.
pub fn read_file(path: &Path, strictness: Strictness) -> Result<Parsed, ReadError> {
    let name = path.display().to_string();
    let io_err = |cause| ReadError::Io {
        path: name.clone(),
        cause,
    };
    let mut raw = Vec::new();
    if name == "-" {
        std::io::stdin().read_to_end(&mut raw).map_err(io_err)?;
    } else {
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut raw))
            .map_err(io_err)?;
    }
    let text = decompress(&raw).map_err(|(format, message)| ReadError::Decompress {
        path: name.clone(),
        format,
        message,
    })?;
    parse(&text, strictness).map_err(|cause| ReadError::Parse { path: name, cause })
}

/// Undoes gzip or xz compression, recognised by magic bytes; other input is returned as is.
pub fn decompress(raw: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, (&'static str, String)> {
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw)
            .read_to_end(&mut out)
            .map_err(|e| ("gzip", e.to_string()))?;
        Ok(out.into())
    } else if raw.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        let mut out = Vec::new();
        lzma_rs::xz_decompress(&mut std::io::BufReader::new(raw), &mut out)
            .map_err(|e| ("xz", e.to_string()))?;
        Ok(out.into())
    } else {
        Ok(raw.into())
    }
}

/// Writes a formula as DIMACS text, with its independent support as `c ind` lines.
pub fn write(cnf: &Cnf, out: &mut impl std::io::Write) -> std::io::Result<()> {
    writeln!(out, "p cnf {} {}", cnf.num_vars(), cnf.num_clauses())?;
    for chunk in cnf.independent_support().chunks(10) {
        write!(out, "c ind")?;
        for v in chunk {
            write!(out, " {v}")?;
        }
        writeln!(out, " 0")?;
    }
    for clause in cnf.clauses() {
        for lit in clause {
            write!(out, "{lit} ")?;
        }
        writeln!(out, "0")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::Lit;
    use proptest::prelude::*;

    fn strict(text: &str) -> Result<Cnf, ParseError> {
        parse(text.as_bytes(), Strictness::Strict).map(|p| p.cnf)
    }

    fn message(text: &str) -> String {
        strict(text).unwrap_err().to_string()
    }

    #[test]
    fn clauses_may_span_lines_and_comments_appear_anywhere() {
        let cnf = strict("c hello\np cnf 3 2\n1 -2\nc middle\n 3 0 -1\n\t2 0\n").unwrap();
        assert_eq!(
            cnf.clauses().collect::<Vec<_>>(),
            vec![&[1, -2, 3][..], &[-1, 2]]
        );
    }

    #[test]
    fn percent_ends_the_formula() {
        let cnf = strict("p cnf 2 1\n1 2 0\n%\n0\n").unwrap();
        assert_eq!(cnf.num_clauses(), 1);
    }

    #[test]
    fn crlf_line_ends_are_accepted() {
        assert_eq!(strict("p cnf 2 1\r\n1 -2 0\r\n").unwrap().num_clauses(), 1);
    }

    #[test]
    fn ind_lines_are_unioned_in_order_without_duplicates() {
        let cnf = strict("p cnf 5 1\nc ind 3 1 0\nc ind 1 5 0\n1 0\n").unwrap();
        assert_eq!(cnf.independent_support(), &[3, 1, 5]);
        let cnf = strict("p cnf 5 1\nc p show 2 4 0\n1 0\n").unwrap();
        assert_eq!(cnf.independent_support(), &[2, 4]);
    }

    #[test]
    fn sampling_set_may_precede_the_header_and_the_header_may_repeat() {
        let cnf = strict("c ind 2 0\np cnf 2 1\np cnf 2 1\nc ind 1 0\n1 0\n").unwrap();
        assert_eq!(cnf.independent_support(), &[2, 1]);
    }

    #[test]
    fn empty_clause_is_kept() {
        let cnf = strict("p cnf 1 2\n1 0\n0\n").unwrap();
        assert!(cnf.clauses().any(<[Lit]>::is_empty));
    }

    #[test]
    fn each_malformed_input_gets_its_message() {
        let cases = [
            ("", "line 1: expected the `p cnf VARS CLAUSES` header; the input has none"),
            ("1 2 0\n", "line 1, column 1: expected the `p cnf VARS CLAUSES` header before clauses, found `1`"),
            ("p dnf 2 1\n", "line 1, column 3: expected `p cnf VARS CLAUSES`: format `dnf` is not `cnf`"),
            ("p cnf x 1\n", "line 1, column 7: expected the variable count (a number ≥ 0), found `x`"),
            ("p cnf 2\n", "line 1, column 8: expected `p cnf VARS CLAUSES`: missing the clause count"),
            ("p cnf 2 1 7\n", "line 1, column 11: expected the end of the header, found `7`"),
            ("p cnf 2 1\np cnf 3 1\n", "line 2, column 1: a second, different `p` header line"),
            ("p cnf 2 1\n1 0\np cnf 2 1\n", "line 3, column 1: a second, different `p` header line"),
            ("p cnf 2 1\n1 a 0\n", "line 2, column 3: expected a literal (a non-zero integer) or 0, found `a`"),
            ("p cnf 2 1\n1 -3 0\n", "line 2, column 3: literal -3 is beyond the 2 variables of the header"),
            ("p cnf 2 2\n1 0\n", "line 2: the header declares 2 clauses but 1 were found (--relaxed accepts this)"),
            ("p cnf 2 1\n1 0\n2\n", "line 3, column 1: the last clause is not ended by 0 (truncated file?)"),
            ("p cnf 2 1\nc ind 3 0\n1 0\n", "line 2, column 7: sampling-set variable 3 is not in 1..=2"),
            ("p cnf 2 1\nc ind 1 2\n1 0\n", "line 2, column 10: expected 0 to end the sampling-set line"),
            ("p cnf 2 1\nc ind 1 0\nc p show 2 0\n1 0\n", "line 3, column 1: `c ind` and `c p show` lines may not be mixed in one file"),
            ("c ind 1 5 0\np cnf 2 1\n1 0\n", "line 1, column 9: sampling-set variable 5 is not in 1..=2"),
            ("p cnf 2 1\n99999999999999 0\n", "line 2, column 1: expected a literal (a non-zero integer) or 0, found `99999999999999`"),
            ("p cnf 999999999 1\n", "line 1, column 7: 999999999 variables is more than the 33554432 supported"),
        ];
        for (input, expected) in cases {
            assert_eq!(message(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn relaxed_mode_warns_on_a_count_mismatch() {
        let parsed = parse(b"p cnf 2 3\n1 0\n", Strictness::Relaxed).unwrap();
        assert_eq!(parsed.cnf.num_clauses(), 1);
        assert_eq!(
            parsed.warnings,
            vec!["the header declares 3 clauses but 1 were found"]
        );
    }

    #[test]
    fn gzip_and_xz_are_recognised() {
        use std::io::Write;
        let text = b"p cnf 1 1\n1 0\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(&*decompress(&gz).unwrap(), text);
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut &text[..], &mut xz).unwrap();
        assert_eq!(&*decompress(&xz).unwrap(), text);
        assert!(decompress(&gz[..8]).is_err());
    }

    fn arbitrary_cnf() -> impl Strategy<Value = Cnf> {
        (1usize..20).prop_flat_map(|n| {
            let lit = (1..=n as i32, any::<bool>()).prop_map(|(v, neg)| if neg { -v } else { v });
            (
                proptest::collection::vec(proptest::collection::vec(lit, 0..6), 0..30),
                proptest::collection::vec(1..=n as u32, 0..5),
            )
                .prop_map(move |(clauses, ind)| {
                    let mut cnf = Cnf::from_clauses(n, &clauses);
                    let mut seen = std::collections::HashSet::new();
                    cnf.set_independent_support(
                        ind.into_iter().filter(|v| seen.insert(*v)).collect(),
                    );
                    cnf
                })
        })
    }

    proptest! {
        #[test]
        fn write_then_parse_round_trips(cnf in arbitrary_cnf()) {
            let mut text = Vec::new();
            write(&cnf, &mut text).unwrap();
            prop_assert_eq!(strict(std::str::from_utf8(&text).unwrap()).unwrap(), cnf);
        }

        #[test]
        fn no_input_makes_the_parser_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes, Strictness::Strict);
            let _ = parse(&bytes, Strictness::Relaxed);
            let _ = decompress(&bytes);
        }

        #[test]
        fn dimacs_like_noise_never_panics(text in "(p cnf [0-9]{1,3} [0-9]{1,3}\n)?([-0-9 c%ind]{0,12}\n){0,8}") {
            let _ = parse(text.as_bytes(), Strictness::Strict);
        }
    }
}
