//! Kubernetes label selectors in their string form (`env in (prod),tier!=cache`): parsing,
//! printing and matching.
//!
//! The grammar and the meaning are those of apimachinery's `labels.Parse`
//! (`k8s.io/apimachinery/pkg/labels/selector.go`), which kustomize (through kyaml) uses for
//! both `labelSelector` and `annotationSelector` of a patch target:
//!
//! - requirements are separated by `,` and all must hold; the empty string (or only blanks)
//!   selects everything;
//! - `key` (exists), `!key` (does not exist), `key=value`, `key==value`, `key!=value`,
//!   `key in (a,b)`, `key notin (a,b)`, `key>5`, `key<5` (integers);
//! - blanks are space, tab, CR and LF, and are allowed between any two tokens;
//! - `in` and `notin` are operators only right after a key: `in in (notin)` is a valid
//!   selector;
//! - a missing value is the empty string: `key=` means "equals the empty string", and
//!   `key in ()`, `key in (,)`, `key in (a,,b)` all put `""` into the value set;
//! - keys must be qualified names (an optional lowercase DNS-1123 subdomain prefix of at most
//!   253 characters and `/`, then a name of at most 63 characters of `[-A-Za-z0-9_.]` that starts
//!   and ends with an alphanumeric), values must be valid label values (the same, without a prefix,
//!   and possibly empty). For annotation selectors this means that annotation *values* are
//!   validated as label values too, exactly as kustomize does: `team=payments` is fine, but
//!   `owner=a@b.com` is a parse error;
//! - `!=` and `notin` also hold when the key is absent; `=`, `in`, `>` and `<` need the key;
//!   `>` and `<` never hold for a value that is not a decimal 64-bit integer;
//! - requirements are sorted by key (stably) after parsing.
//!
//! Deliberate differences from Go (none changes what a selector that both accept selects):
//! - a NUL character anywhere is an error; Go's lexer takes it for the end of the input and
//!   silently ignores what follows, so `a=b \0 anything` selects like `a=b` there;
//! - `==` is printed back as `=` (they mean the same, and the model has one variant for both);
//! - kustomize vendors apimachinery v0.19.8, whose parser rejects a value list that ends in an
//!   even number of commas (`x in (a,,)`); current apimachinery, and this module, accept it.
//!
//! This module only knows strings: it does no YAML and no I/O. The caller supplies label (or
//! annotation) lookup as a closure.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// Longest label value, and longest name part of a key (`IsQualifiedName`, `IsValidLabelValue`).
const MAX_NAME_LEN: usize = 63;
/// Longest key prefix: a DNS-1123 subdomain.
const MAX_PREFIX_LEN: usize = 253;

/// A parsed label selector: the conjunction of its requirements.
///
/// A `Selector` only ever holds requirements that passed validation, sorted by key; the only
/// ways to get one are parsing ([`FromStr`]) and [`Selector::default`], the empty selector that
/// matches everything. Printing it ([`fmt::Display`]) gives a string that parses back to an
/// equal selector.
///
/// ```
/// use krm_merge::select::labels::Selector;
///
/// let s: Selector = "tier!=cache, env in (prod,staging)".parse().unwrap();
/// assert_eq!(s.to_string(), "env in (prod,staging),tier!=cache");
/// let labels = [("env", "prod")];
/// assert!(s.matches(|k| labels.iter().find(|(l, _)| *l == k).map(|(_, v)| *v)));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

/// One condition on one key.
///
/// Value lists of [`Requirement::In`] and [`Requirement::NotIn`] are, in a parsed selector,
/// non-empty, sorted and free of duplicates (they may hold the empty string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Requirement {
    /// `key`: the key is present, with any value.
    Exists(String),
    /// `!key`: the key is absent.
    DoesNotExist(String),
    /// `key=value` or `key==value`: the key is present with this value.
    Equals(String, String),
    /// `key!=value`: the key is absent, or present with another value.
    NotEquals(String, String),
    /// `key in (a,b)`: the key is present with one of these values.
    In(String, Vec<String>),
    /// `key notin (a,b)`: the key is absent, or present with none of these values.
    NotIn(String, Vec<String>),
    /// `key>n`: the key is present and its value is a decimal integer greater than `n`.
    GreaterThan(String, i64),
    /// `key<n`: the key is present and its value is a decimal integer less than `n`.
    LessThan(String, i64),
}

/// Why a selector string was rejected, and where.
///
/// `offset` is the 0-based byte offset in the input of the token at fault (the input's length
/// when the input ended too early).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} (at offset {offset})")]
pub struct ParseError {
    /// Byte offset of the offending token.
    pub offset: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

/// What is wrong with a selector string. See [`ParseError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A token that the grammar does not allow here. `found` is the token as written, or
    /// `None` for the end of the input.
    #[error("found {}, expected {expected}", Found(.found))]
    Unexpected {
        /// The token as written; `None` is the end of the input.
        found: Option<String>,
        /// What the grammar allows here, in words.
        expected: &'static str,
    },
    /// A key that is not a qualified name.
    #[error("invalid key {key:?}: {reason}")]
    InvalidKey {
        /// The key as written.
        key: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// A value that is not a valid label value.
    #[error("invalid value {value:?} for key {key:?}: {reason}")]
    InvalidValue {
        /// The key the value belongs to.
        key: String,
        /// The value as written.
        value: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The value of `>` or `<` is not a decimal 64-bit integer.
    #[error("value {value:?} for key {key:?} must be an integer for '>' and '<'")]
    NotAnInteger {
        /// The key the value belongs to.
        key: String,
        /// The value as written.
        value: String,
    },
    /// A NUL character, which Go's parser silently takes for the end of the input.
    #[error("NUL character in selector")]
    Nul,
}

/// Prints a found token for [`ParseErrorKind::Unexpected`].
struct Found<'a>(&'a Option<String>);

impl fmt::Display for Found<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(token) => write!(f, "'{token}'"),
            None => f.write_str("end of string"),
        }
    }
}

impl Selector {
    /// True for the selector that matches everything (parsed from an empty or blank string).
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The requirements, sorted by key.
    #[cfg(test)]
    pub(crate) fn requirements(&self) -> &[Requirement] {
        &self.0
    }

    /// Whether every requirement holds for the labels that `get` looks up (`get(key)` is the
    /// value of `key`, or `None` when the key is absent).
    pub fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| r.matches(&get))
    }
}

impl Requirement {
    /// The key this requirement is about.
    pub(crate) fn key(&self) -> &str {
        match self {
            Requirement::Exists(k)
            | Requirement::DoesNotExist(k)
            | Requirement::Equals(k, _)
            | Requirement::NotEquals(k, _)
            | Requirement::In(k, _)
            | Requirement::NotIn(k, _)
            | Requirement::GreaterThan(k, _)
            | Requirement::LessThan(k, _) => k,
        }
    }

    /// Whether this requirement holds for the labels that `get` looks up.
    pub(crate) fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        let value = get(self.key());
        match self {
            Requirement::Exists(_) => value.is_some(),
            Requirement::DoesNotExist(_) => value.is_none(),
            Requirement::Equals(_, want) => value == Some(want.as_str()),
            Requirement::NotEquals(_, want) => value != Some(want.as_str()),
            Requirement::In(_, set) => value.is_some_and(|v| set.iter().any(|s| s == v)),
            Requirement::NotIn(_, set) => !value.is_some_and(|v| set.iter().any(|s| s == v)),
            // Go's strconv.ParseInt(v, 10, 64) and i64::from_str accept the same strings.
            Requirement::GreaterThan(_, n) => value
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *n),
            Requirement::LessThan(_, n) => value
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *n),
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Exists(k) => write!(f, "{k}"),
            Requirement::DoesNotExist(k) => write!(f, "!{k}"),
            Requirement::Equals(k, v) => write!(f, "{k}={v}"),
            Requirement::NotEquals(k, v) => write!(f, "{k}!={v}"),
            Requirement::In(k, vs) => write!(f, "{k} in ({})", vs.join(",")),
            Requirement::NotIn(k, vs) => write!(f, "{k} notin ({})", vs.join(",")),
            Requirement::GreaterThan(k, n) => write!(f, "{k}>{n}"),
            Requirement::LessThan(k, n) => write!(f, "{k}<{n}"),
        }
    }
}

impl FromStr for Selector {
    type Err = ParseError;

    fn from_str(input: &str) -> Result<Selector, ParseError> {
        if let Some(offset) = input.find('\0') {
            return Err(ParseError {
                offset,
                kind: ParseErrorKind::Nul,
            });
        }
        let mut parser = Parser {
            tokens: lex(input),
            pos: 0,
            end: input.len(),
        };
        let mut requirements = parser.selector()?;
        // Go sorts with sort.Sort (not stable); for fewer than 13 requirements that is an
        // insertion sort, which is stable, so a stable sort agrees with it in practice.
        requirements.sort_by(|a, b| a.key().cmp(b.key()));
        Ok(Selector(requirements))
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer

/// A token. `in` and `notin` are lexed as identifiers: the parser treats them as operators in
/// the one place where Go does (right after a key), and as plain words everywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'s> {
    End,
    Ident(&'s str),
    /// `!`
    Not,
    /// `=`
    Eq,
    /// `==`
    DoubleEq,
    /// `!=`
    NotEq,
    /// `>`
    Gt,
    /// `<`
    Lt,
    /// `(`
    Open,
    /// `)`
    Close,
    /// `,`
    Comma,
}

#[derive(Debug, Clone, Copy)]
struct Token<'s> {
    tok: Tok<'s>,
    offset: usize,
    /// The token as written (empty for the end).
    text: &'s str,
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits the input into tokens (the parser adds [`Tok::End`]). Lexing cannot fail: every byte
/// is a blank, starts an operator, or belongs to an identifier.
fn lex(s: &str) -> Vec<Token<'_>> {
    let at = |i: usize| s.as_bytes().get(i).copied();
    // Blanks and operators are ASCII, so every token boundary is a char boundary.
    let text = |start: usize, end: usize| s.get(start..end).unwrap_or_default();
    let mut tokens = Vec::new();
    let mut i = 0;
    loop {
        while at(i).is_some_and(is_blank) {
            i += 1;
        }
        let start = i;
        let Some(b) = at(i) else {
            return tokens;
        };
        // Go takes the longest operator: only `!=` and `==` have two characters.
        let (tok, len) = match (b, at(i + 1)) {
            (b'!', Some(b'=')) => (Tok::NotEq, 2),
            (b'=', Some(b'=')) => (Tok::DoubleEq, 2),
            (b'!', _) => (Tok::Not, 1),
            (b'=', _) => (Tok::Eq, 1),
            (b'>', _) => (Tok::Gt, 1),
            (b'<', _) => (Tok::Lt, 1),
            (b'(', _) => (Tok::Open, 1),
            (b')', _) => (Tok::Close, 1),
            (b',', _) => (Tok::Comma, 1),
            _ => {
                let mut end = i;
                while at(end).is_some_and(|c| !is_blank(c) && !is_special(c)) {
                    end += 1;
                }
                (Tok::Ident(text(start, end)), end - start)
            }
        };
        i += len;
        tokens.push(Token {
            tok,
            offset: start,
            text: text(start, i),
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Parser: a recursive descent over the token list that follows Go's `Parser` step by step, so
// that the same inputs are accepted and rejected.

struct Parser<'s> {
    tokens: Vec<Token<'s>>,
    pos: usize,
    /// The input's length: the offset of the end.
    end: usize,
}

/// The operator of a requirement that has values.
#[derive(Clone, Copy)]
enum Op {
    Equals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

/// A value and where it was written (for error offsets).
struct Value<'s> {
    text: &'s str,
    offset: usize,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Token<'s> {
        let end = Token {
            tok: Tok::End,
            offset: self.end,
            text: "",
        };
        self.tokens.get(self.pos).copied().unwrap_or(end)
    }

    fn next(&mut self) -> Token<'s> {
        let t = self.peek();
        if t.tok != Tok::End {
            self.pos += 1;
        }
        t
    }

    fn unexpected(t: Token<'_>, expected: &'static str) -> ParseError {
        let found = (t.tok != Tok::End).then(|| t.text.to_string());
        ParseError {
            offset: t.offset,
            kind: ParseErrorKind::Unexpected { found, expected },
        }
    }

    /// `<selector> ::= "" | <requirement> ("," <requirement>)*`
    fn selector(&mut self) -> Result<Vec<Requirement>, ParseError> {
        let mut requirements = Vec::new();
        let first = self.peek();
        match first.tok {
            Tok::End => return Ok(requirements),
            Tok::Ident(_) | Tok::Not => {}
            _ => return Err(Self::unexpected(first, "'!', a key or end of string")),
        }
        loop {
            requirements.push(self.requirement()?);
            let t = self.next();
            match t.tok {
                Tok::End => return Ok(requirements),
                Tok::Comma => {
                    let after = self.peek();
                    if !matches!(after.tok, Tok::Ident(_) | Tok::Not) {
                        return Err(Self::unexpected(after, "'!' or a key after ','"));
                    }
                }
                _ => return Err(Self::unexpected(t, "',' or end of string")),
            }
        }
    }

    /// `<requirement> ::= ["!"] KEY | KEY <op> <values>`
    fn requirement(&mut self) -> Result<Requirement, ParseError> {
        let mut t = self.next();
        let negated = t.tok == Tok::Not;
        if negated {
            t = self.next();
        }
        let Tok::Ident(key) = t.tok else {
            return Err(Self::unexpected(t, "a key"));
        };
        if let Err(reason) = check_key(key) {
            let kind = ParseErrorKind::InvalidKey {
                key: key.to_string(),
                reason,
            };
            return Err(ParseError {
                offset: t.offset,
                kind,
            });
        }
        // `!key` is complete whatever follows (anything but `,` or the end is then an error
        // of the caller); `key` alone means "exists".
        if negated {
            return Ok(Requirement::DoesNotExist(key.to_string()));
        }
        if matches!(self.peek().tok, Tok::End | Tok::Comma) {
            return Ok(Requirement::Exists(key.to_string()));
        }
        let t = self.next();
        let op = match t.tok {
            Tok::Ident("in") => Op::In,
            Tok::Ident("notin") => Op::NotIn,
            Tok::Eq | Tok::DoubleEq => Op::Equals,
            Tok::NotEq => Op::NotEquals,
            Tok::Gt => Op::GreaterThan,
            Tok::Lt => Op::LessThan,
            _ => {
                return Err(Self::unexpected(
                    t,
                    "an operator: in, notin, =, ==, !=, >, <",
                ))
            }
        };
        match op {
            Op::In | Op::NotIn => {
                let values = self.value_set()?;
                let mut set = BTreeSet::new();
                for v in &values {
                    check_value(key, v)?;
                    set.insert(v.text.to_string());
                }
                // `()` and a list made only of commas both stand for {""}; never empty.
                if set.is_empty() {
                    set.insert(String::new());
                }
                let set = set.into_iter().collect();
                Ok(match op {
                    Op::In => Requirement::In(key.to_string(), set),
                    _ => Requirement::NotIn(key.to_string(), set),
                })
            }
            Op::Equals | Op::NotEquals => {
                let v = self.exact_value()?;
                check_value(key, &v)?;
                Ok(match op {
                    Op::Equals => Requirement::Equals(key.to_string(), v.text.to_string()),
                    _ => Requirement::NotEquals(key.to_string(), v.text.to_string()),
                })
            }
            Op::GreaterThan | Op::LessThan => {
                let v = self.exact_value()?;
                let Ok(n) = v.text.parse::<i64>() else {
                    let kind = ParseErrorKind::NotAnInteger {
                        key: key.to_string(),
                        value: v.text.to_string(),
                    };
                    return Err(ParseError {
                        offset: v.offset,
                        kind,
                    });
                };
                // Go checks the integer first, then the label-value syntax (no sign allowed).
                check_value(key, &v)?;
                Ok(match op {
                    Op::GreaterThan => Requirement::GreaterThan(key.to_string(), n),
                    _ => Requirement::LessThan(key.to_string(), n),
                })
            }
        }
    }

    /// The value after `=`, `==`, `!=`, `>`, `<`: a word, or nothing (the empty string) when
    /// the requirement ends right there.
    fn exact_value(&mut self) -> Result<Value<'s>, ParseError> {
        let t = self.peek();
        if matches!(t.tok, Tok::End | Tok::Comma) {
            return Ok(Value {
                text: "",
                offset: t.offset,
            });
        }
        let t = self.next();
        match t.tok {
            Tok::Ident(text) => Ok(Value {
                text,
                offset: t.offset,
            }),
            _ => Err(Self::unexpected(t, "a value")),
        }
    }

    /// `"(" [value] ("," [value])* ")"`. Returns the values written; empty places between commas
    /// come back as empty values, as in Go (`(a,,b)` holds `""`).
    fn value_set(&mut self) -> Result<Vec<Value<'s>>, ParseError> {
        let t = self.next();
        if t.tok != Tok::Open {
            return Err(Self::unexpected(t, "'('"));
        }
        let mut values = Vec::new();
        let t = self.peek();
        match t.tok {
            Tok::Close => {
                self.next();
                return Ok(values);
            }
            Tok::Ident(_) | Tok::Comma => {}
            _ => return Err(Self::unexpected(t, "',', ')' or a value")),
        }
        loop {
            let t = self.next();
            match t.tok {
                Tok::Ident(text) => {
                    values.push(Value {
                        text,
                        offset: t.offset,
                    });
                    let after = self.peek();
                    match after.tok {
                        Tok::Comma => {}
                        Tok::Close => {
                            self.next();
                            return Ok(values);
                        }
                        _ => return Err(Self::unexpected(after, "',' or ')'")),
                    }
                }
                Tok::Comma => {
                    // A comma with nothing before it, or nothing after it, stands for "".
                    let after = self.peek();
                    if values.is_empty() || matches!(after.tok, Tok::Comma | Tok::Close) {
                        values.push(Value {
                            text: "",
                            offset: t.offset,
                        });
                    }
                    if after.tok == Tok::Close {
                        self.next();
                        return Ok(values);
                    }
                }
                _ => return Err(Self::unexpected(t, "',', ')' or a value")),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation: IsQualifiedName for keys, IsValidLabelValue for values.

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of a key, and a non-empty value.
fn is_label_word(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`
fn is_dns1123_subdomain(s: &str) -> bool {
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.split('.').all(|label| {
        let b = label.as_bytes();
        match (b.first(), b.last()) {
            (Some(first), Some(last)) => {
                alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
            }
            _ => false,
        }
    })
}

/// Checks a key like apimachinery's `IsQualifiedName`; the error is the first rule broken.
fn check_key(key: &str) -> Result<(), &'static str> {
    let mut parts = key.split('/');
    let (prefix, name) = match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, _) => (None, name),
        (Some(prefix), Some(name), None) => (Some(prefix), name),
        _ => return Err(
            "a key holds at most one '/', between an optional DNS subdomain prefix and the name",
        ),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("the prefix before '/' must not be empty");
        }
        if prefix.len() > MAX_PREFIX_LEN {
            return Err("the prefix before '/' must be at most 253 characters");
        }
        if !is_dns1123_subdomain(prefix) {
            return Err(
                "the prefix before '/' must be a lowercase RFC 1123 subdomain: lowercase \
                        letters, digits, '-' and '.', starting and ending with a letter or digit",
            );
        }
    }
    if name.is_empty() {
        return Err("the name must not be empty");
    }
    if name.len() > MAX_NAME_LEN {
        return Err("the name must be at most 63 characters");
    }
    if !is_label_word(name) {
        return Err(
            "the name must consist of letters, digits, '-', '_' and '.', \
                    and start and end with a letter or digit",
        );
    }
    Ok(())
}

/// Checks a value like apimachinery's `IsValidLabelValue`.
fn check_value(key: &str, v: &Value<'_>) -> Result<(), ParseError> {
    let reason = if v.text.len() > MAX_NAME_LEN {
        "a value must be at most 63 characters"
    } else if !v.text.is_empty() && !is_label_word(v.text) {
        "a value must be empty or consist of letters, digits, '-', '_' and '.', \
         and start and end with a letter or digit"
    } else {
        return Ok(());
    };
    let kind = ParseErrorKind::InvalidValue {
        key: key.to_string(),
        value: v.text.to_string(),
        reason,
    };
    Err(ParseError {
        offset: v.offset,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Requirement::*;

    fn s(x: &str) -> String {
        x.to_string()
    }

    fn parse(input: &str) -> Result<Selector, ParseError> {
        input.parse()
    }

    /// Matches `selector` against a label set written as pairs.
    fn matches(selector: &Selector, labels: &[(&str, &str)]) -> bool {
        selector.matches(|k| labels.iter().find(|(l, _)| *l == k).map(|(_, v)| *v))
    }

    #[test]
    fn parses_every_operator() {
        let cases: &[(&str, Vec<Requirement>)] = &[
            ("", vec![]),
            (" \t\r\n ", vec![]),
            ("x", vec![Exists(s("x"))]),
            ("!x", vec![DoesNotExist(s("x"))]),
            ("! x", vec![DoesNotExist(s("x"))]),
            ("x=a", vec![Equals(s("x"), s("a"))]),
            ("x==a", vec![Equals(s("x"), s("a"))]),
            ("x!=a", vec![NotEquals(s("x"), s("a"))]),
            ("x in (a)", vec![In(s("x"), vec![s("a")])]),
            ("x notin (a)", vec![NotIn(s("x"), vec![s("a")])]),
            ("x>1", vec![GreaterThan(s("x"), 1)]),
            ("x<7", vec![LessThan(s("x"), 7)]),
            ("x>007", vec![GreaterThan(s("x"), 7)]),
            ("x<9223372036854775807", vec![LessThan(s("x"), i64::MAX)]),
            (
                "x=a,y!=b",
                vec![Equals(s("x"), s("a")), NotEquals(s("y"), s("b"))],
            ),
            (
                "x=a,y!=b,z in (h,i,j)",
                vec![
                    Equals(s("x"), s("a")),
                    NotEquals(s("y"), s("b")),
                    In(s("z"), vec![s("h"), s("i"), s("j")]),
                ],
            ),
            ("x>1,z<5", vec![GreaterThan(s("x"), 1), LessThan(s("z"), 5)]),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse(input).as_ref().map(Selector::requirements),
                Ok(&want[..]),
                "{input:?}"
            );
        }
    }

    #[test]
    fn missing_values_are_the_empty_string() {
        let cases: &[(&str, Vec<Requirement>)] = &[
            ("x=", vec![Equals(s("x"), s(""))]),
            ("x= ", vec![Equals(s("x"), s(""))]),
            ("x==", vec![Equals(s("x"), s(""))]),
            ("x!=", vec![NotEquals(s("x"), s(""))]),
            ("x=,z= ", vec![Equals(s("x"), s("")), Equals(s("z"), s(""))]),
            ("x in ()", vec![In(s("x"), vec![s("")])]),
            ("x notin ( )", vec![NotIn(s("x"), vec![s("")])]),
            ("x in (,)", vec![In(s("x"), vec![s("")])]),
            ("x in (,,)", vec![In(s("x"), vec![s("")])]),
            ("x in (abc,)", vec![In(s("x"), vec![s(""), s("abc")])]),
            ("x notin (, a)", vec![NotIn(s("x"), vec![s(""), s("a")])]),
            ("x in (a,,b)", vec![In(s("x"), vec![s(""), s("a"), s("b")])]),
            // Accepted by current apimachinery, rejected by kustomize's vendored v0.19.8.
            ("x in (a,,)", vec![In(s("x"), vec![s(""), s("a")])]),
            ("x in (a,,,)", vec![In(s("x"), vec![s(""), s("a")])]),
            ("x in (a,,,,,,)", vec![In(s("x"), vec![s(""), s("a")])]),
            ("x in (a,,a,,a,,a,,)", vec![In(s("x"), vec![s(""), s("a")])]),
            ("x in (abc,abc)", vec![In(s("x"), vec![s("abc")])]),
            (
                "x in (b, a ,c)",
                vec![In(s("x"), vec![s("a"), s("b"), s("c")])],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse(input).as_ref().map(Selector::requirements),
                Ok(&want[..]),
                "{input:?}"
            );
        }
    }

    #[test]
    fn keywords_are_words_outside_operator_position() {
        let cases: &[(&str, Vec<Requirement>)] = &[
            ("in", vec![Exists(s("in"))]),
            ("!notin", vec![DoesNotExist(s("notin"))]),
            ("notin=in", vec![Equals(s("notin"), s("in"))]),
            ("in in (in)", vec![In(s("in"), vec![s("in")])]),
            (
                "a in (x,y,notin, z,in)",
                vec![In(
                    s("a"),
                    vec![s("in"), s("notin"), s("x"), s("y"), s("z")],
                )],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse(input).as_ref().map(Selector::requirements),
                Ok(&want[..]),
                "{input:?}"
            );
        }
    }

    #[test]
    fn blanks_and_sorting() {
        let cases: &[(&str, &str)] = &[
            ("\rx", "x"),
            ("a ", "a"),
            ("foo  in\t (abc)", "foo in (abc)"),
            ("x notin\n (abc)", "x notin (abc)"),
            ("x  notin\t\t\t(abc,def)", "x notin (abc,def)"),
            (" x = a , y != b ", "x=a,y!=b"),
            ("x,y in (a)", "x,y in (a)"),
            ("z,y,x", "x,y,z"),
            ("x=a,a=x", "a=x,x=a"),
            (
                "x notin (abc,,def),bar,z in (),w",
                "bar,w,x notin (,abc,def),z in ()",
            ),
            // Sorting is by key only, and stable: equal keys keep their order.
            ("b,a!=2,a=1,!a", "a!=2,a=1,!a,b"),
            // Byte order: uppercase before lowercase, '.' and '/' before letters.
            ("b,B,a.b/c,a", "B,a,a.b/c,b"),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse(input).map(|s| s.to_string()),
                Ok(s(want)),
                "{input:?}"
            );
        }
    }

    #[test]
    fn keys_and_values_are_validated() {
        let long_prefix = format!("{}.io/x", "a".repeat(250));
        let too_long_prefix = format!("{}.io/x", "a".repeat(251));
        let good = [
            "this-is-a-dns.domain.com/key-with-dash".to_string(),
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)".to_string(),
            "app.kubernetes.io/name=web".to_string(),
            "A_b.C-9".to_string(),
            "x".repeat(63),
            format!("k={}", "v".repeat(63)),
            long_prefix,
        ];
        for input in &good {
            assert!(parse(input).is_ok(), "{input:?}: {:?}", parse(input));
        }
        let bad: &[(String, usize)] = &[
            ("x".repeat(64), 0),
            (format!("k={}", "v".repeat(64)), 2),
            (too_long_prefix, 0),
            (s("-a"), 0),
            (s("a-"), 0),
            (s("a b"), 2), // two words: "b" is not an operator
            (s("Example.com/a"), 0),
            (s("/a"), 0),
            (s("a/"), 0),
            (s("a/b/c"), 0),
            (s("ex_ample.com/a"), 0),
            (s("a..b/c"), 0),
            (s("x=a b"), 4),
            (s("x=-a"), 2),
            (s("x=a_"), 2),
            (s("x in (a,b-)"), 8),
            (s("x=é"), 2),
            (s("é"), 0),
            // Only space, tab, CR and LF are blanks: a vertical tab belongs to the word.
            (s("\u{b}x"), 0),
            (s("x=\u{a0}"), 2),
        ];
        for (input, offset) in bad {
            let err = parse(input).expect_err(input);
            assert_eq!(err.offset, *offset, "{input:?}: {err}");
        }
    }

    const VALUE_RULE: &str = "a value must be empty or consist of letters, digits, '-', '_' and \
                              '.', and start and end with a letter or digit";
    const TOO_LONG: &str = "a value must be at most 63 characters";
    const NAME_RULE: &str =
        "the name must consist of letters, digits, '-', '_' and '.', and start \
                             and end with a letter or digit";
    const PREFIX_RULE: &str = "the prefix before '/' must be a lowercase RFC 1123 subdomain: \
                               lowercase letters, digits, '-' and '.', starting and ending with a \
                               letter or digit";
    const PREFIX_TOO_LONG: &str = "the prefix before '/' must be at most 253 characters";

    #[test]
    fn error_messages() {
        let cases: &[(&str, &str)] = &[
            (
                ",x",
                "found ',', expected '!', a key or end of string (at offset 0)",
            ),
            (
                "=",
                "found '=', expected '!', a key or end of string (at offset 0)",
            ),
            (
                "x,,y",
                "found ',', expected '!' or a key after ',' (at offset 2)",
            ),
            (
                "x,",
                "found end of string, expected '!' or a key after ',' (at offset 2)",
            ),
            (
                "a in (xyz),",
                "found end of string, expected '!' or a key after ',' (at offset 11)",
            ),
            ("!", "found end of string, expected a key (at offset 1)"),
            (
                "!=a",
                "found '!=', expected '!', a key or end of string (at offset 0)",
            ),
            ("!!x", "found '!', expected a key (at offset 1)"),
            (
                "!x=a",
                "found '=', expected ',' or end of string (at offset 2)",
            ),
            (
                "x==a==b",
                "found '==', expected ',' or end of string (at offset 4)",
            ),
            (
                "x=a b",
                "found 'b', expected ',' or end of string (at offset 4)",
            ),
            (
                "a in (xyz)b notin ()",
                "found 'b', expected ',' or end of string (at offset 10)",
            ),
            (
                "x nott in (y)",
                "found 'nott', expected an operator: in, notin, =, ==, !=, >, < \
                               (at offset 2)",
            ),
            (
                "x (a)",
                "found '(', expected an operator: in, notin, =, ==, !=, >, < (at offset 2)",
            ),
            ("x in", "found end of string, expected '(' (at offset 4)"),
            ("x in a", "found 'a', expected '(' (at offset 5)"),
            (
                "x in (",
                "found end of string, expected ',', ')' or a value (at offset 6)",
            ),
            (
                "x in (=)",
                "found '=', expected ',', ')' or a value (at offset 6)",
            ),
            (
                "x in (a",
                "found end of string, expected ',' or ')' (at offset 7)",
            ),
            ("x in (a b)", "found 'b', expected ',' or ')' (at offset 8)"),
            (
                "x in (a,",
                "found end of string, expected ',', ')' or a value (at offset 8)",
            ),
            (
                "x in (a,(",
                "found '(', expected ',', ')' or a value (at offset 8)",
            ),
            ("x=(", "found '(', expected a value (at offset 2)"),
            ("x>=1", "found '=', expected a value (at offset 2)"),
            (
                "x<a",
                "value \"a\" for key \"x\" must be an integer for '>' and '<' (at offset 2)",
            ),
            (
                "x>",
                "value \"\" for key \"x\" must be an integer for '>' and '<' (at offset 2)",
            ),
            (
                "x>1.5",
                "value \"1.5\" for key \"x\" must be an integer for '>' and '<' (at offset 2)",
            ),
            (
                "x>9223372036854775808",
                "value \"9223372036854775808\" for key \"x\" must be an integer for '>' and '<' \
                 (at offset 2)",
            ),
            (
                "a/b/c",
                "invalid key \"a/b/c\": a key holds at most one '/', between an optional \
                       DNS subdomain prefix and the name (at offset 0)",
            ),
            (
                "/a",
                "invalid key \"/a\": the prefix before '/' must not be empty (at offset 0)",
            ),
            (
                "a/",
                "invalid key \"a/\": the name must not be empty (at offset 0)",
            ),
            ("a=b \0 c", "NUL character in selector (at offset 4)"),
            ("\0", "NUL character in selector (at offset 0)"),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse(input).map_err(|e| e.to_string()),
                Err(s(want)),
                "{input:?}"
            );
        }
    }

    #[test]
    fn validation_messages() {
        let long = "v".repeat(64);
        let prefix = "p".repeat(254);
        let cases: &[(String, String)] = &[
            // Integers, but not label values: the sign is not alphanumeric.
            (
                s("x>-1"),
                format!("invalid value \"-1\" for key \"x\": {VALUE_RULE} (at offset 2)"),
            ),
            (
                s("x>+1"),
                format!("invalid value \"+1\" for key \"x\": {VALUE_RULE} (at offset 2)"),
            ),
            (
                s("x=a."),
                format!("invalid value \"a.\" for key \"x\": {VALUE_RULE} (at offset 2)"),
            ),
            // `a||y` is one word, and Go checks it as a value before reading on.
            (
                s("x=a||y=b"),
                format!("invalid value \"a||y\" for key \"x\": {VALUE_RULE} (at offset 2)"),
            ),
            (
                format!("x={long}"),
                format!("invalid value \"{long}\" for key \"x\": {TOO_LONG} (at offset 2)"),
            ),
            (
                s("a,-b"),
                format!("invalid key \"-b\": {NAME_RULE} (at offset 2)"),
            ),
            (
                format!("x,{long}"),
                format!(
                    "invalid key \"{long}\": the name must be at most 63 characters (at offset 2)"
                ),
            ),
            (
                s("A.com/b"),
                format!("invalid key \"A.com/b\": {PREFIX_RULE} (at offset 0)"),
            ),
            (
                format!("{prefix}/b"),
                format!("invalid key \"{prefix}/b\": {PREFIX_TOO_LONG} (at offset 0)"),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse(input).map_err(|e| e.to_string()),
                Err(want.clone()),
                "{input:?}"
            );
        }
    }

    #[test]
    fn key_errors_come_before_syntax_errors() {
        // Go validates the key as soon as it has read it.
        let err = parse("-a in").unwrap_err();
        assert!(
            matches!(err.kind, ParseErrorKind::InvalidKey { .. }),
            "{err}"
        );
        // Value checks come after the whole requirement has been read.
        let err = parse("a in (-b,").unwrap_err();
        assert!(
            matches!(err.kind, ParseErrorKind::Unexpected { .. }),
            "{err}"
        );
    }

    #[test]
    fn matching() {
        let labels: &[(&str, &str)] = &[("foo", "bar"), ("baz", "blah"), ("n", "5"), ("e", "")];
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("foo=bar", true),
            ("foo==bar", true),
            ("baz=blah", true),
            ("foo=bar,baz=blah", true),
            ("foo=blah", false),
            ("baz=bar", false),
            ("foo=bar,foobar=bar,baz=blah", false),
            ("foo", true),
            ("nope", false),
            ("!nope", true),
            ("!foo", false),
            ("foo!=blah", true),
            ("foo!=bar", false),
            ("nope!=bar", true), // an absent key is "not equal"
            ("foo in (bar,x)", true),
            ("foo in (x,y)", false),
            ("nope in (x)", false),
            ("nope in ()", false),
            ("foo notin (x,y)", true),
            ("foo notin (bar)", false),
            ("nope notin (x)", true), // an absent key is "not in"
            ("e=", true),
            ("e in ()", true),
            ("e notin ()", false),
            ("nope=", false),
            ("e!=", false),
            ("n>4", true),
            ("n>5", false),
            ("n<6", true),
            ("n<5", false),
            ("nope>0", false),
            ("nope<0", false),
            ("foo>0", false), // not an integer
            ("foo<0", false),
            ("e>0", false), // the empty string is not an integer
            ("e<0", false),
        ];
        for (input, want) in cases {
            let sel = parse(input).unwrap();
            assert_eq!(matches(&sel, labels), *want, "{input:?}");
        }
    }

    #[test]
    fn integer_comparisons_read_label_values_like_go() {
        // strconv.ParseInt(v, 10, 64): optional sign, decimal digits, in range.
        let cases: &[(&str, bool)] = &[
            ("2", true),
            ("+2", true),
            ("-2", false),
            ("02", true),
            ("", false),
            (" 2", false),
            ("2 ", false),
            ("1_000", false),
            ("0x10", false),
            ("9223372036854775807", true),
            ("9223372036854775808", false),
            ("v2", false),
        ];
        let sel = parse("x>1").unwrap();
        for (value, want) in cases {
            assert_eq!(matches(&sel, &[("x", value)]), *want, "x={value:?}");
        }
    }

    #[test]
    fn display_round_trips() {
        let inputs = [
            "",
            "x",
            "!x",
            "x=a",
            "x==a",
            "x!=",
            "x in ()",
            "x in (,a)",
            "x notin (b,a,,)",
            "x>1,x<10",
            "in in (in,notin)",
            "a.b/c=d,!e,f notin (g),h>0",
            "b,a!=2,a=1,!a",
        ];
        for input in inputs {
            let first = parse(input).unwrap();
            let printed = first.to_string();
            assert_eq!(
                parse(&printed),
                Ok(first),
                "{input:?} printed as {printed:?}"
            );
        }
        let printed = parse("x==a,y in (c,b)").map(|s| s.to_string());
        assert_eq!(printed, Ok(s("x=a,y in (b,c)")));
    }

    #[test]
    fn random_token_soups_round_trip() {
        // A fixed xorshift generator: deterministic, and no test dependency needed.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let pieces = [
            "a", "b", "x.y/z", "in", "notin", "=", "==", "!=", "!", "(", ")", ",", ",", ">", "<",
            " ", "\t", "1", "-", "_", "é", "A", "0",
        ];
        let mut parsed = 0;
        for _ in 0..20_000 {
            let input: String = (0..next(12)).map(|_| pieces[next(pieces.len())]).collect();
            match parse(&input) {
                Ok(sel) => {
                    parsed += 1;
                    let printed = sel.to_string();
                    assert_eq!(
                        parse(&printed).as_ref(),
                        Ok(&sel),
                        "{input:?} -> {printed:?}"
                    );
                    let keys: Vec<&str> = sel.requirements().iter().map(Requirement::key).collect();
                    assert!(keys.is_sorted(), "{input:?}");
                }
                Err(e) => assert!(e.offset <= input.len(), "{input:?}: {e}"),
            }
        }
        // The soup must exercise both outcomes.
        assert!(parsed > 1_000, "only {parsed} inputs parsed");
    }

    #[test]
    fn default_is_everything() {
        let sel = Selector::default();
        assert!(sel.is_empty());
        assert!(matches(&sel, &[]));
        assert_eq!(sel.to_string(), "");
        assert_eq!(parse("  "), Ok(sel));
    }

    #[test]
    fn lexer_takes_the_longest_operator() {
        fn kinds(input: &str) -> Vec<Tok<'_>> {
            lex(input).into_iter().map(|t| t.tok).collect()
        }
        assert_eq!(
            kinds("== != (), = notin"),
            [
                Tok::DoubleEq,
                Tok::NotEq,
                Tok::Open,
                Tok::Close,
                Tok::Comma,
                Tok::Eq,
                Tok::Ident("notin"),
            ]
        );
        assert_eq!(kinds("!==="), [Tok::NotEq, Tok::DoubleEq]);
        assert_eq!(
            kinds("a>b<c"),
            [
                Tok::Ident("a"),
                Tok::Gt,
                Tok::Ident("b"),
                Tok::Lt,
                Tok::Ident("c")
            ]
        );
        assert_eq!(kinds("~ ||"), [Tok::Ident("~"), Tok::Ident("||")]);
        assert_eq!(kinds(" \t"), []);
    }
}
