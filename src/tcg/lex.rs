//! The lexer of the `tcg` language: numbers, names, keywords and symbols, with positions.

use super::ast::{Pos, SyntaxError};
use std::fmt;

/// An error at `pos`, for the lexer and the parser.
pub(super) fn error<T>(pos: Pos, message: impl Into<String>) -> Result<T, SyntaxError> {
    Err(SyntaxError {
        pos,
        message: message.into(),
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Number(i64),
    Name(String),
    /// Punctuation and operators, and the keywords.
    Symbol(&'static str),
    End,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Number(n) => write!(f, "number {n}"),
            Token::Name(n) => write!(f, "name `{n}`"),
            Token::Symbol(s) => write!(f, "`{s}`"),
            Token::End => write!(f, "end of input"),
        }
    }
}

const KEYWORDS: [&str; 7] = ["int", "if", "else", "while", "return", "try", "catch"];
const SYMBOLS: [&str; 24] = [
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!", "=", "(", ")", "{",
    "}", "[", "]", ";", ",", ".",
];

pub(super) fn lex(source: &str) -> Result<Vec<(Token, Pos)>, SyntaxError> {
    let mut tokens = Vec::new();
    let bytes = source.as_bytes();
    let (mut i, mut line, mut line_start) = (0, 1, 0);
    while i < bytes.len() {
        let pos = Pos {
            line,
            column: i - line_start + 1,
        };
        let c = bytes[i];
        if c == b'\n' {
            i += 1;
            line += 1;
            line_start = i;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if source[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if source[i..].starts_with("/*") {
            let Some(end) = source[i + 2..].find("*/") else {
                return error(pos, "comment not closed: expected `*/`");
            };
            for &b in &bytes[i..i + 2 + end + 2] {
                if b == b'\n' {
                    line += 1;
                }
            }
            let stop = i + 2 + end + 2;
            if let Some(nl) = source[i..stop].rfind('\n') {
                line_start = i + nl + 1;
            }
            i = stop;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            match source[start..i].parse::<i64>() {
                Ok(n) if n <= u32::MAX as i64 => tokens.push((Token::Number(n), pos)),
                _ => return error(pos, "number too large: at most 32 bits"),
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &source[start..i];
            let token = match KEYWORDS.iter().find(|&&k| k == word) {
                Some(k) => Token::Symbol(k),
                None => Token::Name(word.to_string()),
            };
            tokens.push((token, pos));
        } else if let Some(s) = SYMBOLS.iter().find(|s| source[i..].starts_with(**s)) {
            tokens.push((Token::Symbol(s), pos));
            i += s.len();
        } else {
            let ch = source[i..].chars().next().unwrap_or('?');
            return error(pos, format!("unexpected character `{ch}`"));
        }
    }
    let end = Pos {
        line,
        column: bytes.len() - line_start + 1,
    };
    tokens.push((Token::End, end));
    Ok(tokens)
}
