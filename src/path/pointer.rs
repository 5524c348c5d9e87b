//! JSON Pointers (RFC 6901), extended with key selectors (`[name=app]`) and wildcards (`[*]`):
//! where a JSON patch operation reads or writes, and what a reader of a patch (the schema check,
//! the patch itself) needs to know about each of its pointers.
//!
//! What it is: plain data — the text of a pointer read into [`Token`]s and written back
//! ([`Pointer::parse`], [`Display`](fmt::Display)), a selector's fields, and what an operation
//! does at a pointer ([`PointerUse`]). What it must not do: walk or change a tree (JSON patch
//! resolves pointers on documents, `crate::patch::json6902`), or know a schema.

use std::fmt;
use std::str::FromStr;

/// A JSON Pointer (RFC 6901): `""` is the whole document, `/a/b~1c/0/-` is a path of reference
/// tokens, where `~1` stands for `/` and `~0` for `~` inside a token.
///
/// Tokens are unescaped when the pointer is parsed; [`Display`](fmt::Display) escapes them again,
/// so `Pointer::parse(s)?.to_string() == s` for every valid `s`.
///
/// ```
/// use krm_merge::path::pointer::{Pointer, Token};
/// let p: Pointer = "/metadata/annotations/example.com~1owner".parse().unwrap();
/// assert_eq!(p.tokens()[2], Token::Name("example.com/owner".into()));
/// assert_eq!(p.to_string(), "/metadata/annotations/example.com~1owner");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pointer(Vec<Token>);

/// One reference token of a [`Pointer`].
///
/// How a token is read depends on what it is applied to: on a mapping every token is a member
/// name (its text: `0`, `-` and `[name=app]` are names there too); on a sequence it must be an
/// index, `-` (for `add`), or a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// Any other text. On a sequence it is an error (an index has no leading zeros, no sign).
    Name(String),
    /// Decimal digits without a leading zero: a sequence index.
    Index(usize),
    /// `-`: the position after the last element of a sequence, where `add` appends.
    End,
    /// `[key=value,...]`: the element of a sequence selected by its fields.
    Select(Selector),
    /// `[*]`: every element of a sequence (our extension; see "Wildcards" in the module
    /// documentation). On a mapping it is the member named `[*]`, as RFC 6901 reads it.
    Every,
}

/// A key selector: `[name=app]`, `[containerPort=80,protocol=TCP]`.
///
/// Syntax, applied to the token's text after RFC 6901 unescaping (so a `/` in a value is written
/// `~1`, a `~` is `~0`): `[`, then one or more `key=value` pairs separated by `,`, then `]`.
/// Inside keys and values a backslash escapes the four characters that have a meaning here:
/// `\\`, `\]`, `\,`, `\=`; any other character stands for itself, spaces included, and a backslash
/// before any other character is an error. Keys are not empty and not repeated; values may be
/// empty. `=` in a value must be escaped.
///
/// A selector matches a sequence element that is a mapping where each key names a scalar field
/// whose text equals the value (`80` matches `port: 80` and `port: "80"`). Applied to a sequence
/// it must match exactly one element: none is a missing path, several are an error.
///
/// ```
/// use krm_merge::path::pointer::Selector;
/// let s: Selector = r"[name=a\,b,zone=eu]".parse().unwrap();
/// assert_eq!(s.fields(), [("name".to_owned(), "a,b".to_owned()), ("zone".to_owned(), "eu".to_owned())]);
/// assert_eq!(s.to_string(), r"[name=a\,b,zone=eu]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    fields: Vec<(String, String)>,
}

/// A pointer that is not valid RFC 6901 text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    #[error("a JSON pointer must be empty or start with '/'")]
    NoLeadingSlash,
    #[error("'~' at byte {0} must be followed by 0 or 1")]
    BadEscape(usize),
}

/// A token that looks like a selector (it starts with `[`) but is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (at byte {at})")]
pub struct SelectorError {
    pub at: usize,
    pub reason: &'static str,
}

impl Pointer {
    /// The pointer to the whole document (`""`).
    pub fn root() -> Pointer {
        Pointer(Vec::new())
    }

    /// Reads RFC 6901 text.
    pub fn parse(s: &str) -> Result<Pointer, PointerError> {
        if s.is_empty() {
            return Ok(Pointer::root());
        }
        let Some(rest) = s.strip_prefix('/') else {
            return Err(PointerError::NoLeadingSlash);
        };
        let mut tokens = Vec::new();
        let mut offset = 1;
        for raw in rest.split('/') {
            tokens.push(Token::read(&unescape(raw, offset)?));
            offset += raw.len() + 1;
        }
        Ok(Pointer(tokens))
    }

    /// The reference tokens, outermost first.
    pub fn tokens(&self) -> &[Token] {
        &self.0
    }

    /// True for `""`, the whole document.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// A pointer of these tokens.
    pub fn from_tokens(tokens: Vec<Token>) -> Pointer {
        Pointer(tokens)
    }

    /// The pointer made of the first `n` tokens, as text (for messages).
    pub fn prefix(&self, n: usize) -> String {
        Pointer(self.0[..n.min(self.0.len())].to_vec()).to_string()
    }
}

impl FromStr for Pointer {
    type Err = PointerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pointer::parse(s)
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for t in &self.0 {
            write!(f, "/{t}")?;
        }
        Ok(())
    }
}

fn unescape(raw: &str, offset: usize) -> Result<String, PointerError> {
    if !raw.contains('~') {
        return Ok(raw.to_owned());
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, '0')) => out.push('~'),
            Some((_, '1')) => out.push('/'),
            _ => return Err(PointerError::BadEscape(offset + i)),
        }
    }
    Ok(out)
}

impl Token {
    /// Classifies an unescaped reference token.
    pub fn read(text: &str) -> Token {
        if text == "-" {
            return Token::End;
        }
        if text == EVERY {
            return Token::Every;
        }
        if let Some(i) = canonical_index(text) {
            return Token::Index(i);
        }
        if text.starts_with('[') {
            if let Ok(s) = text.parse() {
                return Token::Select(s);
            }
        }
        Token::Name(text.to_owned())
    }

    /// The token's text: what it means as a member name.
    pub fn text(&self) -> String {
        match self {
            Token::Name(s) => s.clone(),
            Token::Index(i) => i.to_string(),
            Token::End => "-".to_owned(),
            Token::Select(s) => s.to_string(),
            Token::Every => EVERY.to_owned(),
        }
    }
}

/// The text of [`Token::Every`].
pub const EVERY: &str = "[*]";

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text().replace('~', "~0").replace('/', "~1"))
    }
}

/// RFC 6901 array indices: `0`, or digits without a leading zero (and small enough).
fn canonical_index(text: &str) -> Option<usize> {
    let ok = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if ok {
        text.parse().ok()
    } else {
        None
    }
}

impl Selector {
    /// The `(key, value)` pairs, in the order written.
    pub fn fields(&self) -> &[(String, String)] {
        &self.fields
    }
}

impl FromStr for Selector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |at, reason| SelectorError { at, reason };
        let Some(body) = s.strip_prefix('[') else {
            return Err(err(0, "a selector starts with '['"));
        };
        let mut fields: Vec<(String, String)> = Vec::new();
        let (mut key, mut value) = (String::new(), String::new());
        let mut in_value = false;
        let mut closed = false;
        let mut chars = body.char_indices().map(|(i, c)| (i + 1, c));
        while let Some((i, c)) = chars.next() {
            if closed {
                return Err(err(i, "text after the closing ']'"));
            }
            let cur = if in_value { &mut value } else { &mut key };
            match c {
                '\\' => match chars.next() {
                    Some((_, e @ ('\\' | ']' | ',' | '='))) => cur.push(e),
                    _ => return Err(err(i, r"'\' must be followed by \, ], ',' or '='")),
                },
                '=' if !in_value => in_value = true,
                '=' => return Err(err(i, r"'=' in a value must be escaped as '\='")),
                ',' | ']' => {
                    if !in_value {
                        return Err(err(i, "expected key=value"));
                    }
                    if key.is_empty() {
                        return Err(err(i, "empty key"));
                    }
                    if fields.iter().any(|(k, _)| *k == key) {
                        return Err(err(i, "key given twice"));
                    }
                    fields.push((std::mem::take(&mut key), std::mem::take(&mut value)));
                    in_value = false;
                    closed = c == ']';
                }
                _ => cur.push(c),
            }
        }
        if !closed {
            return Err(err(s.len(), "missing the closing ']'"));
        }
        Ok(Selector { fields })
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn esc(s: &str) -> String {
            let mut o = String::with_capacity(s.len());
            for c in s.chars() {
                if matches!(c, '\\' | ']' | ',' | '=') {
                    o.push('\\');
                }
                o.push(c);
            }
            o
        }
        f.write_str("[")?;
        for (i, (k, v)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}={}", esc(k), esc(v))?;
        }
        f.write_str("]")
    }
}

// ----- wildcards -----

impl Pointer {
    /// Whether a token is `[*]` (see [`Token::Every`]).
    pub fn has_wildcard(&self) -> bool {
        self.0.iter().any(is_every)
    }

    /// The position of the last `[*]` token.
    pub fn last_wildcard(&self) -> Option<usize> {
        self.0.iter().rposition(is_every)
    }

    /// The first `n` tokens of this pointer followed by the tokens of `rest` from `from` on.
    pub fn joined(&self, n: usize, rest: &Pointer, from: usize) -> Pointer {
        let head = self.0.get(..n).unwrap_or(&self.0);
        let tail = rest.0.get(from..).unwrap_or_default();
        Pointer(head.iter().chain(tail).cloned().collect())
    }
}

/// `[*]`, parsed, or a token built by hand with that text.
pub fn is_every(t: &Token) -> bool {
    match t {
        Token::Every => true,
        Token::Name(s) => s == EVERY,
        _ => false,
    }
}

/// What a JSON patch operation does at one of its pointers: how a reader of the patch that is
/// not the patch itself (the schema check) should take it. `V` is the value's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerUse<V> {
    /// `add`, `replace`: this value is put there.
    Put(V),
    /// `move` and `copy` to `path`: a value from elsewhere in the document is put there.
    Receive,
    /// `remove`, and `move` from `from`: what is there is taken away.
    Remove,
    /// `copy` from `from`: what is there is read.
    Read,
    /// `test`: what is there is compared with a value.
    Compare,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_parse_and_print() {
        use Token::*;
        let sel = |k: &str, v: &str| {
            Select(Selector {
                fields: vec![(k.to_owned(), v.to_owned())],
            })
        };
        let name = |s: &str| Name(s.to_owned());
        let ok: &[(&str, Vec<Token>)] = &[
            ("", vec![]),
            ("/", vec![name("")]),
            ("//", vec![name(""), name("")]),
            ("/a/b", vec![name("a"), name("b")]),
            ("/a~1b", vec![name("a/b")]),
            ("/m~0n", vec![name("m~n")]),
            ("/~01", vec![name("~1")]),
            ("/~10", vec![name("/0")]),
            ("/0", vec![Index(0)]),
            ("/10", vec![Index(10)]),
            ("/01", vec![name("01")]),
            ("/-1", vec![name("-1")]),
            ("/+1", vec![name("+1")]),
            ("/1e0", vec![name("1e0")]),
            (
                "/99999999999999999999999",
                vec![name("99999999999999999999999")],
            ),
            ("/-", vec![End]),
            ("/--", vec![name("--")]),
            ("/ ", vec![name(" ")]),
            ("/[name=app]", vec![sel("name", "app")]),
            ("/[name=a~1b]", vec![sel("name", "a/b")]),
            ("/[name=app", vec![name("[name=app")]),
            ("/[]", vec![name("[]")]),
        ];
        for (text, tokens) in ok {
            let p = Pointer::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(p.tokens(), &tokens[..], "{text}");
            assert_eq!(p.to_string(), *text, "round trip");
        }
        let bad: &[(&str, PointerError)] = &[
            ("a", PointerError::NoLeadingSlash),
            ("a/b", PointerError::NoLeadingSlash),
            ("/~2", PointerError::BadEscape(1)),
            ("/ab/c~", PointerError::BadEscape(5)),
            ("/~", PointerError::BadEscape(1)),
        ];
        for (text, err) in bad {
            assert_eq!(Pointer::parse(text).as_ref(), Err(err), "{text}");
        }
    }

    #[test]
    fn selectors_parse_and_print() {
        let ok: &[(&str, &[(&str, &str)])] = &[
            ("[name=app]", &[("name", "app")]),
            (
                "[containerPort=80,protocol=TCP]",
                &[("containerPort", "80"), ("protocol", "TCP")],
            ),
            ("[name=]", &[("name", "")]),
            (r"[name=a\,b]", &[("name", "a,b")]),
            (r"[name=a\]b]", &[("name", "a]b")]),
            (r"[name=a\=b]", &[("name", "a=b")]),
            (r"[name=a\\b]", &[("name", r"a\b")]),
            (r"[a\=b=c]", &[("a=b", "c")]),
            ("[name=with space]", &[("name", "with space")]),
            ("[name=a[0]", &[("name", "a[0")]),
        ];
        for (text, fields) in ok {
            let s: Selector = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            let want: Vec<(String, String)> = fields
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            assert_eq!(s.fields(), &want[..], "{text}");
            assert_eq!(s.to_string(), *text, "round trip");
        }
        let bad: &[(&str, &str)] = &[
            ("name=app]", "a selector starts with '[' (at byte 0)"),
            ("[]", "expected key=value (at byte 1)"),
            ("[name]", "expected key=value (at byte 5)"),
            ("[=app]", "empty key (at byte 5)"),
            ("[a=1,a=2]", "key given twice (at byte 8)"),
            (
                "[a=b=c]",
                r"'=' in a value must be escaped as '\=' (at byte 4)",
            ),
            ("[a=b]c", "text after the closing ']' (at byte 5)"),
            (
                r"[a=\b]",
                r"'\' must be followed by \, ], ',' or '=' (at byte 3)",
            ),
            ("[a=b", "missing the closing ']' (at byte 4)"),
            ("[a=b,]", "expected key=value (at byte 5)"),
        ];
        for (text, msg) in bad {
            let e = text.parse::<Selector>().unwrap_err();
            assert_eq!(e.to_string(), *msg, "{text}");
        }
    }

    #[test]
    fn wildcard_tokens_parse_and_print() {
        let p = Pointer::parse("/spec/[*]/env/[*]/name").unwrap();
        assert_eq!(p.tokens()[1], Token::Every);
        assert_eq!(p.tokens()[3], Token::Every);
        assert!(p.has_wildcard());
        assert_eq!(p.to_string(), "/spec/[*]/env/[*]/name");
        assert!(!Pointer::parse("/spec/[name=a]/[x]").unwrap().has_wildcard());
        // `[*]` escaped or with more text is a name.
        assert_eq!(
            Pointer::parse("/[*]x").unwrap().tokens()[0],
            Token::Name("[*]x".into())
        );
    }
}
