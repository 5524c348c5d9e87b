//! JSON Patch (RFC 6902) on the lossless YAML tree, with JSON Pointers (RFC 6901) extended by
//! key selectors.
//!
//! What it is: [`parse_ops`] reads a patch — a sequence of operation maps, written in YAML or in
//! JSON — into [`Op`]s, and [`apply`] runs them in order on a [`Node`]. Everything the RFC says
//! holds: `add` to a mapping replaces an existing member, `add` into a sequence inserts before the
//! index (`-`, or an index equal to the length, appends), `remove` and `replace` need an existing
//! target, `move` removes then adds and may not move a value into one of its own children, `copy`
//! copies deeply, `test` compares JSON values (numbers by value, mappings without regard to key
//! order). Members an operation does not define are ignored, as RFC 6902 §4 requires.
//!
//! Because it works on [`Node`]s rather than JSON values, what the patch does not change stays as
//! written: comments, key order, scalar styles. Values keep their own comments when they are
//! added, replaced, moved or copied, and a value that takes the place of another keeps the
//! comments of that place where it brings none. New keys are appended to their mapping. Values
//! from operations written in flow style (a JSON patch) are made block style, so a YAML resource
//! stays block YAML.
//!
//! **Key selectors** (our extension, not in RFC 6901): a reference token `[name=app]` applied to a
//! sequence selects the one element that is a mapping whose `name` field is a scalar with the
//! text `app`: `/spec/template/spec/containers/[name=app]/image`. See [`Selector`] for the exact
//! syntax. A selector resolves to the position of the element it selects, and the operation then
//! proceeds as if that index had been written (so `add` at a selector inserts before the
//! element). Applied to a mapping, the same token is the member of that name, as in RFC 6901, so
//! every pointer the RFC accepts means what the RFC says.
//!
//! **Wildcards** (our extension too): a token `[*]` applied to a sequence selects every element,
//! in `path` and in `from`, at any depth, several per pointer: `/spec/containers/[*]/env/-`. An
//! operation applies at each place its `[*]` select, in document order, as if each `[*]` were
//! that element's index ([`apply_counted`] says at how many places each acted). The rules for
//! places that are not there, which let a patch say "every container gets X":
//!
//! * **Nothing selected.** A `[*]` whose list is empty or missing, or anything missing on the way
//!   to a `[*]` (a member, a selector's element, an index), selects no place there: the
//!   operation does nothing (`test` holds). A scalar on the way is an error.
//! * **A place below the last `[*]` lacks what the operation names:**
//!   - `add` makes the members missing on its way: a list when the next token is `-` or `0`, a
//!     mapping when it is a name (so `add .../[*]/env/-` gives a container without `env` one);
//!     a selector or another index must find its element, as without wildcards;
//!   - `remove` and `replace` skip that place (a missing member, a selector matching nothing,
//!     an index past the end), so `remove .../[*]/env/[name=DEBUG]` removes it where it is;
//!   - `test` fails: with `[*]` it holds when the value is at every place and equal there;
//!   - `move` and `copy` skip a `from` that is missing there, and make `path`'s missing members
//!     as `add` does.
//! * **`move` and `copy` pair their `[*]`.** With `[*]` in `from` only, the values of all its
//!   places are taken first (copied, or removed), then added at `path` in document order
//!   (`move /a/[*]` to `/b/-` appends them in order). With `[*]` in both, `path`'s must be
//!   `from`'s — the same tokens up to `path`'s last `[*]`, both going on below it — and each
//!   element's value goes to a place in the same element. `copy` with `[*]` in `path` only
//!   copies its one value to every place. Other `[*]` in `path` are refused when the patch is
//!   read ([`PatchErrorKind::Unpaired`]).
//! * A failure names the place: `op 0 (test /c/[*]/image): at /c/1/image: value does not
//!   match`; with several, the first in document order.
//! * [`apply_at_place`] runs a patch on one of the places a patch's `at:` selected (the engine's
//!   `@containers`): all of each pointer is below that place, so the rules for places below a
//!   `[*]` apply to every operation (`add /env/-` makes `env` where a container has none).
//!
//! Applied to a mapping, `[*]` is the member of that name, as in RFC 6901.
//!
//! **All or nothing**: [`apply`] runs the operations on a copy of the document and puts the copy
//! in place only when every operation succeeded, so on error the document is exactly as it was
//! (one clone per call: simpler than an undo log, and documents are small).
//!
//! **Aliases**: an operation that changes something below an alias first replaces that alias
//! with a copy of its anchored node (without anchors), so the change stays at this place; reading
//! (`test`, `copy`'s `from`, selectors) looks through aliases. A result that would use an alias
//! before its anchor (`move`/`copy` can do that) is an error. A patch's aliases are expanded, and
//! its anchors dropped, once, when [`parse_ops`] reads it (see "Patches and aliases" in
//! [`crate::yaml::anchors`]); applying the operations to any number of documents expands nothing.
//!
//! What it must not do: consult a schema (RFC 6902 is schema-free), select resources, or parse
//! or write text.

use crate::hash::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::yaml::anchors::{self, detached, first_dangling, put_copy, strip_anchors, Anchors};
use crate::yaml::place::{replace as put_new, same_value, Keep};
use crate::yaml::scalar::Resolved;
use crate::yaml::{AliasError, Comment, Entry, Kind, Layout, Node, ScalarStyle, MAX_DEPTH};

// ----- pointers ----------------------------------------------------------------------------

/// A JSON Pointer (RFC 6901): `""` is the whole document, `/a/b~1c/0/-` is a path of reference
/// tokens, where `~1` stands for `/` and `~0` for `~` inside a token.
///
/// Tokens are unescaped when the pointer is parsed; [`Display`](fmt::Display) escapes them again,
/// so `Pointer::parse(s)?.to_string() == s` for every valid `s`.
///
/// ```
/// use krm_merge::patch::json6902::{Pointer, Token};
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
/// use krm_merge::patch::json6902::Selector;
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

    /// The pointer made of the first `n` tokens, as text (for messages).
    fn prefix(&self, n: usize) -> String {
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
    fn read(text: &str) -> Token {
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
    fn text(&self) -> String {
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
const EVERY: &str = "[*]";

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

    /// True when `item` (with aliases followed through `anchors`) is a mapping whose fields have
    /// these values.
    fn matches(&self, item: &Node<'_>, anchors: &View<'_, '_>) -> bool {
        let item = anchors.follow(item);
        item.is_map()
            && self.fields.iter().all(|(k, v)| {
                item.get(k)
                    .map(|n| anchors.follow(n))
                    .and_then(Node::as_str)
                    .is_some_and(|text| text == v)
            })
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

// ----- operations ----------------------------------------------------------------------------

/// One operation of a patch. Values borrow from the patch text (`'p`).
#[derive(Clone, Debug)]
pub enum Op<'p> {
    Add { path: Pointer, value: Node<'p> },
    Remove { path: Pointer },
    Replace { path: Pointer, value: Node<'p> },
    Move { from: Pointer, path: Pointer },
    Copy { from: Pointer, path: Pointer },
    Test { path: Pointer, value: Node<'p> },
}

/// The name of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
}

impl Verb {
    fn from_name(s: &str) -> Option<Verb> {
        Some(match s {
            "add" => Verb::Add,
            "remove" => Verb::Remove,
            "replace" => Verb::Replace,
            "move" => Verb::Move,
            "copy" => Verb::Copy,
            "test" => Verb::Test,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Add => "add",
            Verb::Remove => "remove",
            Verb::Replace => "replace",
            Verb::Move => "move",
            Verb::Copy => "copy",
            Verb::Test => "test",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Op<'_> {
    pub fn verb(&self) -> Verb {
        match self {
            Op::Add { .. } => Verb::Add,
            Op::Remove { .. } => Verb::Remove,
            Op::Replace { .. } => Verb::Replace,
            Op::Move { .. } => Verb::Move,
            Op::Copy { .. } => Verb::Copy,
            Op::Test { .. } => Verb::Test,
        }
    }

    /// The operation's `path`.
    pub fn path(&self) -> &Pointer {
        match self {
            Op::Add { path, .. }
            | Op::Remove { path }
            | Op::Replace { path, .. }
            | Op::Move { path, .. }
            | Op::Copy { path, .. }
            | Op::Test { path, .. } => path,
        }
    }
}

// ----- errors --------------------------------------------------------------------------------

/// A patch that cannot be read or applied: which operation, at which pointer, and why.
///
/// Displayed as `op 2 (replace /spec/x): path does not exist`; operations count from 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError {
    /// Position of the operation in the patch, from 0.
    pub op: usize,
    /// The operation's name, when it has a known one.
    pub verb: Option<Verb>,
    /// The pointer the failure is about, as written: the operation's `path`, or its `from` when
    /// [`from`](Self::from) is set. Empty when the operation has no readable pointer (and for the
    /// whole document, `""`).
    pub path: String,
    /// The failure is about the `from` location of a `move` or `copy`.
    pub from: bool,
    pub kind: PatchErrorKind,
}

/// Why a patch failed. Parse-time kinds come from [`parse_ops`], the others from [`apply`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchErrorKind {
    #[error("a JSON patch must be a list of operations")]
    NotAList,
    #[error("an operation must be a mapping")]
    NotAMapping,
    #[error("missing {0:?}")]
    MissingMember(&'static str),
    #[error("{0:?} must be a string")]
    NotAString(&'static str),
    #[error("{0:?} appears more than once")]
    DuplicateMember(&'static str),
    #[error("unknown op {0:?} (expected add, remove, replace, move, copy or test)")]
    UnknownOp(String),
    #[error("invalid JSON pointer: {0}")]
    BadPointer(PointerError),
    #[error("{0}")]
    Alias(AliasError),

    /// Nothing is at the pointer. `at` is the shortest prefix that is missing when it is not the
    /// whole pointer (a missing parent).
    #[error("path does not exist{}", .at.as_ref().map(|a| format!(" (nothing at {})", place(a))).unwrap_or_default())]
    NotFound { at: Option<String> },
    /// A selector matched no element: a missing path, like [`NotFound`](Self::NotFound).
    #[error("path does not exist (no element of {} matches {selector})", place(.list))]
    NoMatch { list: String, selector: String },
    #[error("{} elements of {} match {selector}; a selector must match one", .count, place(.list))]
    SeveralMatches {
        list: String,
        selector: String,
        count: usize,
    },
    #[error("malformed key selector {token:?} at {}: {error}", place(.list))]
    BadSelector {
        list: String,
        token: String,
        error: SelectorError,
    },
    #[error("{} is a scalar, it has no members", place(.at))]
    NotAContainer { at: String },
    #[error("{token:?} is not an index of the list at {} (digits without leading zeros)", place(.list))]
    BadIndex { list: String, token: String },
    #[error("\"-\" names no element of the list at {} (only add may use it, to append)", place(.list))]
    EndNotAllowed { list: String },
    #[error("index {index} is out of range: the list at {} has {len} elements", place(.list))]
    OutOfRange {
        list: String,
        index: String,
        len: usize,
    },
    #[error("the whole document cannot be removed")]
    RemoveRoot,
    #[error("a value cannot be moved into one of its own children")]
    MoveIntoChild,
    #[error("value does not match")]
    TestFailed,
    #[error("the result would use alias *{0} before (or without) its anchor")]
    DanglingAlias(String),
    #[error("comparing values through aliases visits too many nodes (more than {0})")]
    TooLarge(usize),
    #[error("the result would nest deeper than {0} levels")]
    TooDeep(usize),
    /// A `move` or `copy` whose `[*]` do not pair (see "Wildcards" in the module documentation).
    #[error("{0}")]
    Unpaired(&'static str),
    /// The failure at one of the places a pointer with `[*]` selects: `place` is that place's
    /// pointer (`pointer`), each `[*]` written as the index it stood for.
    #[error("at {}: {kind}", place(.pointer))]
    At {
        pointer: String,
        kind: Box<PatchErrorKind>,
    },
    /// `copy` operations would add more than the patch may grow the resource by (see
    /// [`COPY_SLACK`]).
    #[error(
        "copies would grow the resource by more than {limit} bytes (a JSON patch may copy at \
         most the resource's own size, or {} bytes into a smaller one)",
        COPY_SLACK
    )]
    GrowsTooLarge { limit: usize },
    /// Key selectors would examine more list elements than [`SCAN_BUDGET`] allows.
    #[error(
        "key selectors examine more than {0} list elements (each one reads the whole list): \
         address elements by index, or split the patch"
    )]
    TooManyScans(usize),
    /// The operations would shift more elements than [`SHIFT_BUDGET`] allows.
    #[error(
        "the operations shift more than {0} list elements and mapping entries (each insert or \
         remove before the end of a collection of n moves up to n): split the patch, or \
         address elements from the end"
    )]
    TooManyShifts(usize),
}

/// How a pointer is shown in a message: `""` for the whole document.
fn shown(p: &str) -> &str {
    if p.is_empty() {
        "\"\""
    } else {
        p
    }
}

/// How a place is named in a message: its pointer, or "the root".
fn place(p: &str) -> &str {
    if p.is_empty() {
        "the root"
    } else {
        p
    }
}

impl PatchErrorKind {
    /// True when the failure means "the path is not there" (a missing member or element, or a
    /// selector that matches nothing): what a caller may choose to skip.
    pub fn is_missing(&self) -> bool {
        match self {
            PatchErrorKind::NotFound { .. } | PatchErrorKind::NoMatch { .. } => true,
            PatchErrorKind::At { kind, .. } => kind.is_missing(),
            _ => false,
        }
    }

    /// What the rules of "Wildcards" count as a place that is not there: a missing member, a
    /// selector that matches nothing, an index past the end of its list.
    fn is_absent(&self) -> bool {
        matches!(
            self,
            PatchErrorKind::NotFound { .. }
                | PatchErrorKind::NoMatch { .. }
                | PatchErrorKind::OutOfRange { .. }
        )
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == PatchErrorKind::NotAList {
            return write!(f, "{}", self.kind);
        }
        write!(f, "op {}", self.op)?;
        if let Some(verb) = self.verb {
            let from = if self.from { "from " } else { "" };
            let unread = self.path.is_empty()
                && matches!(
                    self.kind,
                    PatchErrorKind::MissingMember(_)
                        | PatchErrorKind::NotAString(_)
                        | PatchErrorKind::DuplicateMember(_)
                );
            if unread {
                write!(f, " ({verb})")?;
            } else {
                write!(f, " ({verb} {from}{})", shown(&self.path))?;
            }
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for PatchError {}

// ----- reading a patch -----------------------------------------------------------------------

/// Reads a patch: a sequence of operation maps (`op`, `path`, and `value` or `from` as the
/// operation needs), from YAML or JSON text already parsed into a [`Node`].
///
/// Errors name the operation: a missing or repeated member, a member that is not a string, an
/// unknown `op`, an invalid pointer. Members an operation does not define are ignored (RFC 6902
/// §4). Values of operations written in flow style are made block style (see the module doc).
/// Aliases in the patch are expanded and its anchors dropped ([`detached`], within the one
/// budget), in the one copy of the patch this makes when it has any.
pub fn parse_ops<'p>(ops: &Node<'p>) -> Result<Vec<Op<'p>>, PatchError> {
    let whole = |kind| PatchError {
        op: 0,
        verb: None,
        path: String::new(),
        from: false,
        kind,
    };
    // The patch's anchors stay in the patch: carried into a document they could capture its
    // later aliases.
    let ops = detached(ops).map_err(|e| whole(PatchErrorKind::Alias(e)))?;
    if !ops.is_seq() {
        return Err(whole(PatchErrorKind::NotAList));
    }
    let flow = ops.is_flow();
    ops.items()
        .iter()
        .enumerate()
        .map(|(i, item)| parse_op(i, item, flow || item.is_flow()))
        .collect()
}

fn parse_op<'p>(index: usize, item: &Node<'p>, flow: bool) -> Result<Op<'p>, PatchError> {
    let mut err = PatchError {
        op: index,
        verb: None,
        path: String::new(),
        from: false,
        kind: PatchErrorKind::NotAMapping,
    };
    if !item.is_map() {
        return Err(err);
    }
    let member = |name: &'static str| -> Result<Option<&Node<'p>>, PatchErrorKind> {
        let mut found = item
            .entries()
            .iter()
            .filter(|e| e.key.as_str() == Some(name));
        let first = found.next();
        if found.next().is_some() {
            return Err(PatchErrorKind::DuplicateMember(name));
        }
        Ok(first.map(|e| &e.value))
    };
    let string = |name: &'static str| -> Result<Option<&str>, PatchErrorKind> {
        match member(name)? {
            None => Ok(None),
            Some(n) => n
                .as_string()
                .map(Some)
                .ok_or(PatchErrorKind::NotAString(name)),
        }
    };
    let fail = |mut err: PatchError, kind| {
        err.kind = kind;
        err
    };

    let verb = match string("op") {
        Ok(Some(name)) => {
            Verb::from_name(name).ok_or_else(|| PatchErrorKind::UnknownOp(name.to_owned()))
        }
        Ok(None) => Err(PatchErrorKind::MissingMember("op")),
        Err(k) => Err(k),
    }
    .map_err(|k| fail(err.clone(), k))?;
    err.verb = Some(verb);

    let path_text = string("path")
        .and_then(|p| p.ok_or(PatchErrorKind::MissingMember("path")))
        .map_err(|k| fail(err.clone(), k))?;
    err.path = path_text.to_owned();
    let path =
        Pointer::parse(path_text).map_err(|e| fail(err.clone(), PatchErrorKind::BadPointer(e)))?;

    let value = || -> Result<Node<'p>, PatchError> {
        let v = member("value")
            .and_then(|v| v.ok_or(PatchErrorKind::MissingMember("value")))
            .map_err(|k| fail(err.clone(), k))?;
        let mut v = v.clone();
        if flow {
            v.make_block();
        }
        Ok(v)
    };
    let from = || -> Result<Pointer, PatchError> {
        let text = string("from")
            .and_then(|p| p.ok_or(PatchErrorKind::MissingMember("from")))
            .map_err(|k| fail(err.clone(), k))?;
        Pointer::parse(text).map_err(|e| PatchError {
            path: text.to_owned(),
            from: true,
            ..fail(err.clone(), PatchErrorKind::BadPointer(e))
        })
    };
    Ok(match verb {
        Verb::Add => Op::Add {
            path,
            value: value()?,
        },
        Verb::Remove => Op::Remove { path },
        Verb::Replace => Op::Replace {
            path,
            value: value()?,
        },
        Verb::Move => {
            let from = from()?;
            check_pairing(verb, &from, &path).map_err(|k| fail(err.clone(), k))?;
            Op::Move { from, path }
        }
        Verb::Copy => {
            let from = from()?;
            check_pairing(verb, &from, &path).map_err(|k| fail(err.clone(), k))?;
            Op::Copy { from, path }
        }
        Verb::Test => Op::Test {
            path,
            value: value()?,
        },
    })
}

// ----- applying a patch ----------------------------------------------------------------------

/// Choices that depart from RFC 6902, for compatibility with other tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `replace` of a member that an existing mapping lacks adds it, as kustomize's JSON patch
    /// library (evanphx/json-patch v4) does. RFC 6902 §4.3 requires the target to exist, which
    /// is the default (`false`). Sequences and missing parents are errors either way.
    pub replace_adds_missing: bool,
    /// A member that an existing mapping lacks reads as `null` to `copy` and `test`, as in
    /// evanphx/json-patch v4: `copy` from it adds `null`, `test` of it against `null` passes.
    /// RFC 6902 makes both errors, the default (`false`).
    pub missing_member_reads_null: bool,
    /// `move` into one of the moved value's own children is allowed, as evanphx/json-patch v4
    /// does it: the value is removed, then added at `path` as that pointer reads in the document
    /// without it (so `move /rules/0 → /rules/0/moved` puts the rule under the next one).
    /// RFC 6902 §4.4 forbids such a move, the default (`false`).
    pub move_into_child: bool,
    /// Every null in the patched document is written `null`, as kustomize leaves it: it
    /// applies a JSON patch to the resource's JSON and reads the result back, so an empty
    /// `key:` (or `- ` item) comes back as `key: null`. The data is the same, but kyaml's
    /// strategic merge drops an untouched empty `key:` from a map it merges into and keeps an
    /// explicit `null`, so the spelling decides what a later patch leaves. By default
    /// (`false`) the document keeps its text.
    pub nulls_written_as_null: bool,
    /// A resource whose `metadata` has no `annotations` has an empty `annotations` mapping
    /// while the operations run (and none after, unless they put something in it), as in
    /// kustomize, where its own build annotations (`internal.config.kubernetes.io/previousNames`
    /// and others) fill that mapping while a JSON patch runs: there, `add` and `replace` of
    /// `/metadata/annotations/x` succeed on a resource without annotations, and `test` of a
    /// member of it against `null` passes. Only at a document's root. By default (`false`) a
    /// missing parent is missing, as RFC 6902 says.
    pub annotations_present: bool,
}

impl Options {
    /// What `kustomize build` does with a JSON 6902 patch.
    pub fn kustomize() -> Options {
        Options {
            replace_adds_missing: true,
            missing_member_reads_null: true,
            move_into_child: true,
            nulls_written_as_null: true,
            annotations_present: true,
        }
    }
}

/// Applies `ops` to `doc` in order, as RFC 6902 says. All or nothing: on error `doc` is
/// unchanged, and the error names the failing operation.
pub fn apply<'a, 'p: 'a>(doc: &mut Node<'a>, ops: &[Op<'p>]) -> Result<(), PatchError> {
    apply_with(doc, ops, &Options::default())
}

/// [`apply`], with [`Options`].
pub fn apply_with<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    opts: &Options,
) -> Result<(), PatchError> {
    apply_counted(doc, ops, opts).map(drop)
}

/// [`apply_with`], also saying how many places each operation acted on, in the order of `ops`:
/// 1 for an operation without `[*]`; for one with `[*]`, the places it changed, tested, moved
/// or copied, without those the rules of "Wildcards" skip (so 0 when its `[*]` select nothing).
pub fn apply_counted<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    opts: &Options,
) -> Result<Vec<usize>, PatchError> {
    apply_ops(doc, ops, opts, false)
}

/// [`apply_counted`] on one of the places a `[*]` (or a patch's `at:`) selected: every pointer
/// is below a `[*]`, so the rules of "Wildcards" for places below one apply to all of it —
/// `add` makes missing members, `remove` and `replace` skip what is not there, `move` and
/// `copy` skip a missing `from` — and an operation counts 1 where it acted, 0 where it was
/// skipped.
pub fn apply_at_place<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    opts: &Options,
) -> Result<Vec<usize>, PatchError> {
    apply_ops(doc, ops, opts, true)
}

fn apply_ops<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    opts: &Options,
    place: bool,
) -> Result<Vec<usize>, PatchError> {
    if ops.is_empty() {
        if opts.nulls_written_as_null {
            write_nulls_as_null(doc);
        }
        return Ok(Vec::new());
    }
    let aliased = doc.has_alias()
        || ops.iter().any(|op| match op {
            Op::Add { value, .. } | Op::Replace { value, .. } | Op::Test { value, .. } => {
                value.has_alias()
            }
            _ => false,
        });
    let mut work = doc.clone();
    let planted = opts.annotations_present && !place && plant_annotations(&mut work);
    let _session = Session::begin(&work, ops, aliased);
    let mut reached = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let done = run_counted(&mut work, op, opts, aliased, place).and_then(|n| {
            reached.push(n);
            if aliased {
                check_aliases(&work).map_err(|k| (Which::Path, k))?;
                // An alias a change went through became a copy of its anchored node.
                check_depth(&work).map_err(|k| (Which::Path, k))
            } else {
                Ok(())
            }
        });
        if let Err((which, kind)) = done {
            let (path, from) = match (which, op) {
                (Which::From, Op::Move { from, .. } | Op::Copy { from, .. }) => {
                    (from.to_string(), true)
                }
                _ => (op.path().to_string(), false),
            };
            return Err(PatchError {
                op: i,
                verb: Some(op.verb()),
                path,
                from,
                kind,
            });
        }
    }
    if planted {
        unplant_annotations(&mut work);
    }
    if opts.nulls_written_as_null {
        write_nulls_as_null(&mut work);
    }
    *doc = work;
    Ok(reached)
}

/// Gives a resource's `metadata` mapping an empty `annotations` mapping where it has none (see
/// [`Options::annotations_present`]). True when it did.
fn plant_annotations(doc: &mut Node<'_>) -> bool {
    let has_meta = doc.get("metadata").is_some_and(Node::is_map);
    if !has_meta || doc.get_path(&["metadata", "annotations"]).is_some() {
        return false;
    }
    doc.get_mut("metadata")
        .is_some_and(|m| m.set("annotations", Node::map()))
}

/// Takes away the `annotations` mapping [`plant_annotations`] gave, where the operations left
/// it empty.
fn unplant_annotations(doc: &mut Node<'_>) {
    let empty = doc
        .get_path(&["metadata", "annotations"])
        .is_some_and(|a| a.is_map() && a.entries().is_empty());
    if empty {
        if let Some(m) = doc.get_mut("metadata") {
            m.remove("annotations");
        }
    }
}

/// Empty nulls (`key:`, `key: !!null`) become a plain `null` (see
/// [`Options::nulls_written_as_null`]); `~` and `Null` already say null in words and stay.
fn write_nulls_as_null(node: &mut Node<'_>) {
    match node.kind() {
        Kind::Scalar => {
            if node.is_null() && node.as_str() == Some("") {
                node.set_text("null", ScalarStyle::Plain);
                node.set_tag(None);
            }
        }
        Kind::Map => {
            for e in node.entries_mut().into_iter().flatten() {
                write_nulls_as_null(&mut e.value);
            }
        }
        Kind::Seq => {
            for item in node.items_mut().into_iter().flatten() {
                write_nulls_as_null(item);
            }
        }
        Kind::Alias => {}
    }
}

/// Which pointer of an operation a failure is about.
#[derive(Clone, Copy)]
enum Which {
    Path,
    From,
}

type Fail = (Which, PatchErrorKind);

fn at_path(kind: PatchErrorKind) -> Fail {
    (Which::Path, kind)
}

fn at_from(kind: PatchErrorKind) -> Fail {
    (Which::From, kind)
}

fn run<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    op: &Op<'p>,
    opts: &Options,
    aliased: bool,
) -> Result<(), Fail> {
    match op {
        Op::Add { path, value } => {
            add(doc, path, Lifted::bare(value.clone()), aliased, false).map_err(at_path)
        }
        Op::Remove { path } => remove(doc, path, aliased).map(drop).map_err(at_path),
        Op::Replace { path, value } => {
            replace(doc, path, value.clone(), opts, aliased).map_err(at_path)
        }
        Op::Test { path, value } => test(doc, path, value, opts, aliased).map_err(at_path),
        Op::Copy { from, path } => {
            let lifted = lift_copy(doc, from, opts, aliased)?;
            add(doc, path, lifted, aliased, false).map_err(at_path)
        }
        Op::Move { from, path } => {
            let into_child_ok = opts.move_into_child;
            if !into_child_ok && is_proper_prefix(from.tokens(), path.tokens()) {
                return Err(at_path(PatchErrorKind::MoveIntoChild));
            }
            {
                let anchors = view(doc, aliased);
                let (src, _) = walk(doc, &anchors, from, from.tokens().len()).map_err(at_from)?;
                if let Some(n) = path.tokens().len().checked_sub(1) {
                    if let Ok((dst, parent)) = walk(doc, &anchors, path, n) {
                        if src.steps.starts_with(&dst.steps) && src.steps.len() == n + 1 {
                            // Same parent: moving a member onto itself changes nothing (and must
                            // not move the key to the end of its mapping).
                            let parent = anchors.follow(parent);
                            let last = &path.tokens()[n];
                            let same = match child(parent, last, path, n, &anchors) {
                                Ok(i) => src.steps.last() == Some(&i),
                                Err(_) => false,
                            };
                            if same {
                                return Ok(());
                            }
                        }
                        if !into_child_ok && dst.steps.starts_with(&src.steps) {
                            return Err(at_path(PatchErrorKind::MoveIntoChild));
                        }
                    }
                } else if src.steps.is_empty() {
                    return Ok(());
                }
            }
            // Remove, then add: `path` is read in the document without the value, which is
            // what gives a move into the value's own children (when allowed) its meaning.
            let lifted = remove(doc, from, aliased).map_err(at_from)?;
            add(doc, path, lifted, aliased, false).map_err(at_path)
        }
    }
}

/// `test`: the value at `path` equals `value` as JSON.
fn test(
    doc: &Node<'_>,
    path: &Pointer,
    value: &Node<'_>,
    opts: &Options,
    aliased: bool,
) -> Result<(), PatchErrorKind> {
    let anchors = view(doc, aliased);
    let found = match walk(doc, &anchors, path, path.tokens().len()) {
        Ok((_, found)) => found,
        Err(PatchErrorKind::NotFound { at: None })
            if opts.missing_member_reads_null && value.is_null() =>
        {
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let value_anchors = view(value, aliased);
    let mut budget = anchors::BUDGET;
    if json_equal(found, &anchors, value, &value_anchors, &mut budget)? {
        Ok(())
    } else {
        Err(PatchErrorKind::TestFailed)
    }
}

/// The value at `from` as `copy` carries it: a copy without anchors, with the comments before
/// its entry, which describe the value. A member missing from an existing mapping reads as
/// `null` with [`Options::missing_member_reads_null`].
fn lift_copy<'a>(
    doc: &Node<'a>,
    from: &Pointer,
    opts: &Options,
    aliased: bool,
) -> Result<Lifted<'a>, Fail> {
    let anchors = view(doc, aliased);
    let n = from.tokens().len();
    let (route, found) = match walk(doc, &anchors, from, n) {
        Ok(found) => found,
        Err(PatchErrorKind::NotFound { at: None }) if opts.missing_member_reads_null => {
            return Ok(Lifted::bare(Node::null()));
        }
        Err(e) => return Err(at_from(e)),
    };
    charge_copy(found).map_err(at_from)?;
    let mut lifted = Lifted::bare(found.clone());
    if n > 0 {
        // The comments before the copied entry describe the value: they go with it.
        let (_, parent) = walk(doc, &anchors, from, n - 1).map_err(at_from)?;
        let parent = anchors.follow(parent);
        if let Some(&i) = route.steps.last() {
            if let Some(e) = parent.entries().get(i) {
                lifted = Lifted::from_entry(e.clone());
            } else if let Some(item) = parent.items().get(i) {
                lifted = Lifted::from_item(item.clone());
            }
        }
    }
    strip_anchors(&mut lifted.node);
    Ok(lifted)
}

fn is_proper_prefix(a: &[Token], b: &[Token]) -> bool {
    a.len() < b.len() && a.iter().zip(b).all(|(x, y)| x.text() == y.text())
}

/// A value taken from (or destined for) a place, with what belonged to the place: the comments
/// and blank lines before its entry, and the line comment of its key.
#[derive(Clone)]
struct Lifted<'a> {
    node: Node<'a>,
    head: Vec<Comment<'a>>,
    line: Option<Comment<'a>>,
    blank: u8,
}

impl<'a> Lifted<'a> {
    fn bare(node: Node<'a>) -> Self {
        Lifted {
            node,
            head: Vec::new(),
            line: None,
            blank: 0,
        }
    }

    fn from_entry(e: Entry<'a>) -> Self {
        let kc = e.key.comments();
        Lifted {
            head: kc.head.clone(),
            line: kc.line.clone(),
            blank: e.key.blank_lines(),
            node: e.value,
        }
    }

    fn from_item(mut node: Node<'a>) -> Self {
        let head = std::mem::take(&mut node.comments_mut().head);
        let blank = node.blank_lines();
        node.set_blank_lines(0);
        Lifted {
            node,
            head,
            line: None,
            blank,
        }
    }

    /// A new mapping entry holding the value.
    fn into_entry(self, key: String) -> Entry<'a> {
        let mut k = Node::string(key);
        if !self.head.is_empty() || self.line.is_some() {
            let c = k.comments_mut();
            c.head = self.head;
            c.line = self.line;
        }
        k.set_blank_lines(self.blank);
        Entry {
            key: k,
            value: self.node,
        }
    }

    /// A new sequence item.
    fn into_item(self) -> Node<'a> {
        let mut n = self.node;
        if !self.head.is_empty() && n.comments().head.is_empty() {
            n.comments_mut().head = self.head;
        }
        if self.line.is_some() && n.comments().line.is_none() {
            n.comments_mut().line = self.line;
        }
        n.set_blank_lines(self.blank);
        n
    }
}

/// The route to a node: the child taken at each step (an entry index in a mapping, an item
/// index in a sequence), found without changing anything.
#[derive(Default)]
struct Route<'a> {
    steps: Vec<usize>,
    /// Aliases on the way, by the number of steps that reach them, with the copy that must
    /// replace each before anything below it changes.
    expand: Vec<(usize, Node<'a>)>,
}

/// Follows the first `upto` tokens of `ptr` from `root`; every one must name an existing child.
fn walk<'n, 'a>(
    root: &'n Node<'a>,
    anchors: &'n View<'n, 'a>,
    ptr: &Pointer,
    upto: usize,
) -> Result<(Route<'a>, &'n Node<'a>), PatchErrorKind> {
    let mut route = Route::default();
    let mut cur = root;
    for (depth, tok) in ptr.tokens().iter().take(upto).enumerate() {
        cur = follow_for_change(anchors, cur, depth, &mut route.expand);
        let i = child(cur, tok, ptr, depth, anchors)?;
        route.steps.push(i);
        cur = match cur.kind() {
            Kind::Map => cur.entries().get(i).map(|e| &e.value),
            _ => cur.items().get(i),
        }
        .ok_or(PatchErrorKind::NotFound { at: None })?;
    }
    Ok((route, cur))
}

/// The position of the existing child that `tok` (the token after `depth` tokens of `ptr`)
/// names in `node`.
fn child(
    node: &Node<'_>,
    tok: &Token,
    ptr: &Pointer,
    depth: usize,
    anchors: &View<'_, '_>,
) -> Result<usize, PatchErrorKind> {
    let missing = || PatchErrorKind::NotFound {
        at: (depth + 1 < ptr.tokens().len()).then(|| ptr.prefix(depth + 1)),
    };
    match node.kind() {
        Kind::Map => member_position(node, ptr, depth, &tok.text()).ok_or_else(missing),
        Kind::Seq => match seq_position(node, tok, ptr, depth, anchors)? {
            Some(i) if i < node.items().len() => Ok(i),
            Some(i) => Err(PatchErrorKind::OutOfRange {
                list: ptr.prefix(depth),
                index: i.to_string(),
                len: node.items().len(),
            }),
            None => Err(PatchErrorKind::EndNotAllowed {
                list: ptr.prefix(depth),
            }),
        },
        Kind::Scalar | Kind::Alias => Err(PatchErrorKind::NotAContainer {
            at: ptr.prefix(depth),
        }),
    }
}

/// What a token means in a sequence: `Some(index)` (maybe out of range), `None` for `-`.
fn seq_position(
    seq: &Node<'_>,
    tok: &Token,
    ptr: &Pointer,
    depth: usize,
    anchors: &View<'_, '_>,
) -> Result<Option<usize>, PatchErrorKind> {
    let list = || ptr.prefix(depth);
    match tok {
        Token::Index(i) => Ok(Some(*i)),
        Token::End => Ok(None),
        // Operations resolve their `[*]` to indexes before they walk (`expand`): one left here
        // stands for no one element.
        Token::Every => Err(PatchErrorKind::BadIndex {
            list: list(),
            token: EVERY.to_owned(),
        }),
        Token::Select(sel) => {
            charge_scan(seq.items().len())?;
            let mut hits = seq
                .items()
                .iter()
                .enumerate()
                .filter(|(_, item)| sel.matches(item, anchors))
                .map(|(i, _)| i);
            match (hits.next(), hits.count()) {
                (Some(i), 0) => Ok(Some(i)),
                (Some(_), more) => Err(PatchErrorKind::SeveralMatches {
                    list: list(),
                    selector: sel.to_string(),
                    count: more + 1,
                }),
                (None, _) => Err(PatchErrorKind::NoMatch {
                    list: list(),
                    selector: sel.to_string(),
                }),
            }
        }
        Token::Name(s) => {
            let read = Token::read(s);
            if !matches!(read, Token::Name(_)) {
                // A token built by hand as a name that reads as an index, `-` or a selector.
                return seq_position(seq, &read, ptr, depth, anchors);
            }
            if s.starts_with('[') {
                if let Err(error) = s.parse::<Selector>() {
                    return Err(PatchErrorKind::BadSelector {
                        list: list(),
                        token: s.clone(),
                        error,
                    });
                }
            }
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0') {
                // Digits too many for an index: out of range, whatever the length.
                return Err(PatchErrorKind::OutOfRange {
                    list: list(),
                    index: s.clone(),
                    len: seq.items().len(),
                });
            }
            Err(PatchErrorKind::BadIndex {
                list: list(),
                token: s.clone(),
            })
        }
    }
}

/// The node at `route`'s first `depth` steps, for changing; aliases on the way (and the node
/// itself, if it is one the route expands) become copies of their anchored nodes. Also tells
/// whether the node sits inside a flow collection.
fn reach<'d, 'a>(
    root: &'d mut Node<'a>,
    route: &Route<'a>,
    depth: usize,
) -> Option<(&'d mut Node<'a>, bool)> {
    let mut cur = root;
    let mut in_flow = false;
    for d in 0..=depth {
        if let Some((_, copy)) = route.expand.iter().find(|(at, _)| *at == d) {
            put_copy(cur, copy.clone());
        }
        if d == depth {
            break;
        }
        in_flow |= cur.is_flow();
        let i = *route.steps.get(d)?;
        cur = if cur.is_map() {
            cur.entries_mut()?.get_mut(i).map(|e| &mut e.value)?
        } else {
            cur.items_mut()?.get_mut(i)?
        };
    }
    Some((cur, in_flow))
}

/// Where `add` puts a value in a container.
enum Slot {
    /// The existing member at this entry index: its value is replaced.
    Entry(usize),
    /// A new member, appended.
    NewKey(String),
    /// Inserted at this index of a sequence.
    Insert(usize),
}

/// Where `add` puts the value that the token after `depth` tokens of `ptr` names in `parent`.
fn add_slot(
    parent: &Node<'_>,
    tok: &Token,
    ptr: &Pointer,
    depth: usize,
    anchors: &View<'_, '_>,
) -> Result<Slot, PatchErrorKind> {
    match parent.kind() {
        Kind::Map => {
            let key = tok.text();
            Ok(match member_position(parent, ptr, depth, &key) {
                Some(i) => Slot::Entry(i),
                None => Slot::NewKey(key),
            })
        }
        Kind::Seq => {
            let len = parent.items().len();
            match seq_position(parent, tok, ptr, depth, anchors)? {
                Some(i) if i <= len => Ok(Slot::Insert(i)),
                Some(i) => Err(PatchErrorKind::OutOfRange {
                    list: ptr.prefix(depth),
                    index: i.to_string(),
                    len,
                }),
                None => Ok(Slot::Insert(len)),
            }
        }
        Kind::Scalar | Kind::Alias => Err(PatchErrorKind::NotAContainer {
            at: ptr.prefix(depth),
        }),
    }
}

/// Cannot happen: a route found on a tree always leads somewhere in that same tree.
fn lost() -> PatchErrorKind {
    PatchErrorKind::NotFound { at: None }
}

fn add<'a>(
    doc: &mut Node<'a>,
    ptr: &Pointer,
    new: Lifted<'a>,
    aliased: bool,
    only_members: bool,
) -> Result<(), PatchErrorKind> {
    let Some((tok, depth)) = ptr.tokens().last().map(|t| (t, ptr.tokens().len() - 1)) else {
        put_root(doc, new.node);
        return Ok(());
    };
    if depth + 1 + nesting(&new.node) > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    let (route, slot) = {
        let anchors = view(doc, aliased);
        let (mut route, parent) = walk(doc, &anchors, ptr, depth)?;
        let parent = follow_for_change(&anchors, parent, depth, &mut route.expand);
        let slot = add_slot(parent, tok, ptr, depth, &anchors)?;
        (route, slot)
    };
    if only_members && !matches!(slot, Slot::NewKey(_)) {
        return Err(PatchErrorKind::NotFound { at: None });
    }
    let (parent, in_flow) = reach(doc, &route, depth).ok_or_else(lost)?;
    let flow_was_empty =
        parent.is_flow() && parent.entries().is_empty() && parent.items().is_empty();
    if flow_was_empty && !in_flow && !new.node.is_flow() {
        // `annotations: {}` that receives its first member becomes a block mapping.
        parent.make_block();
    }
    match slot {
        Slot::Entry(i) => {
            let e = parent
                .entries_mut()
                .and_then(|es| es.get_mut(i))
                .ok_or_else(lost)?;
            // A value the member already holds stays as it is written, comments included.
            if !same_value(&e.value, &new.node) {
                take_place_comments(&mut e.key, new.head, new.line);
                put_new(&mut e.value, new.node, Keep::COMMENTS);
            }
            changed(ptr, depth, Change::Replaced);
        }
        Slot::NewKey(key) => {
            let es = parent.entries_mut().ok_or_else(lost)?;
            let index = es.len();
            es.push(new.into_entry(key));
            changed(ptr, depth, Change::Pushed(index));
        }
        Slot::Insert(i) => {
            let items = parent.items_mut().ok_or_else(lost)?;
            if i > items.len() {
                return Err(lost());
            }
            charge_shift(items.len() - i)?;
            items.insert(i, new.into_item());
            changed(ptr, depth, Change::Shifted);
        }
    }
    Ok(())
}

fn remove<'a>(
    doc: &mut Node<'a>,
    ptr: &Pointer,
    aliased: bool,
) -> Result<Lifted<'a>, PatchErrorKind> {
    let Some((tok, depth)) = ptr.tokens().last().map(|t| (t, ptr.tokens().len() - 1)) else {
        return Err(PatchErrorKind::RemoveRoot);
    };
    let (route, i) = {
        let anchors = view(doc, aliased);
        let (mut route, parent) = walk(doc, &anchors, ptr, depth)?;
        let parent = follow_for_change(&anchors, parent, depth, &mut route.expand);
        let i = child(parent, tok, ptr, depth, &anchors)?;
        (route, i)
    };
    let (parent, _) = reach(doc, &route, depth).ok_or_else(lost)?;
    let lifted = if parent.is_map() {
        let es = parent.entries_mut().ok_or_else(lost)?;
        if i >= es.len() {
            return Err(lost());
        }
        charge_shift(es.len() - i - 1)?;
        let lifted = Lifted::from_entry(es.remove(i));
        changed(ptr, depth, Change::Removed);
        lifted
    } else {
        let items = parent.items_mut().ok_or_else(lost)?;
        if i >= items.len() {
            return Err(lost());
        }
        charge_shift(items.len() - i - 1)?;
        let lifted = Lifted::from_item(items.remove(i));
        changed(ptr, depth, Change::Shifted);
        lifted
    };
    Ok(lifted)
}

fn replace<'a>(
    doc: &mut Node<'a>,
    ptr: &Pointer,
    value: Node<'a>,
    opts: &Options,
    aliased: bool,
) -> Result<(), PatchErrorKind> {
    let n = ptr.tokens().len();
    let found = {
        let anchors = view(doc, aliased);
        walk(doc, &anchors, ptr, n).map(|(route, _)| route)
    };
    match found {
        Ok(_) if n + nesting(&value) > MAX_DEPTH => Err(PatchErrorKind::TooDeep(MAX_DEPTH)),
        Ok(_) if n == 0 => {
            put_root(doc, value);
            Ok(())
        }
        Ok(route) => {
            let (node, _) = reach(doc, &route, n).ok_or_else(lost)?;
            put_new(node, value, Keep::COMMENTS);
            changed(ptr, n - 1, Change::Replaced);
            Ok(())
        }
        Err(PatchErrorKind::NotFound { at: None }) if opts.replace_adds_missing => {
            add(doc, ptr, Lifted::bare(value), aliased, true)
                .map_err(|_| PatchErrorKind::NotFound { at: None })
        }
        Err(e) => Err(e),
    }
}

/// Levels of collections in a tree (0 for a scalar).
fn nesting(node: &Node<'_>) -> usize {
    let below = node
        .entries()
        .iter()
        .map(|e| nesting(&e.value))
        .chain(node.items().iter().map(nesting))
        .max();
    match node.kind() {
        Kind::Map | Kind::Seq => 1 + below.unwrap_or(0),
        Kind::Scalar | Kind::Alias => 0,
    }
}

/// [`put`] at the root, where the node's layout (relative to the place it came from) must give
/// way to the root's.
fn put_root<'a>(doc: &mut Node<'a>, mut new: Node<'a>) {
    changed(&Pointer::root(), 0, Change::Everything);
    *new.layout_mut() = Layout::default();
    put_new(doc, new, Keep::COMMENTS);
}

/// A key takes the comments of the entry that is put at its place, where that entry has them.
fn take_place_comments<'a>(key: &mut Node<'a>, head: Vec<Comment<'a>>, line: Option<Comment<'a>>) {
    if !head.is_empty() {
        key.comments_mut().head = head;
    }
    if line.is_some() {
        key.comments_mut().line = line;
    }
}

// ----- wildcards -----------------------------------------------------------------------------

impl Pointer {
    /// Whether a token is `[*]`: the operation applies at every place the pointer selects.
    pub fn has_wildcard(&self) -> bool {
        self.0.iter().any(is_every)
    }

    /// The position of the last `[*]` token.
    fn last_wildcard(&self) -> Option<usize> {
        self.0.iter().rposition(is_every)
    }

    /// The first `n` tokens of this pointer followed by the tokens of `rest` from `from` on.
    fn joined(&self, n: usize, rest: &Pointer, from: usize) -> Pointer {
        let head = self.0.get(..n).unwrap_or(&self.0);
        let tail = rest.0.get(from..).unwrap_or_default();
        Pointer(head.iter().chain(tail).cloned().collect())
    }
}

/// `[*]`, parsed, or a token built by hand with that text.
fn is_every(t: &Token) -> bool {
    match t {
        Token::Every => true,
        Token::Name(s) => s == EVERY,
        _ => false,
    }
}

/// The `[*]` of a `move` or `copy` must say which value goes where (see "Wildcards"): `path`
/// may hold `[*]` only where `from` holds the same one — the two equal up to `path`'s last
/// `[*]` and both going on below it, so that each element's value goes to a place in the same
/// element — except that a `copy` whose `from` has none copies its one value to every place.
fn check_pairing(verb: Verb, from: &Pointer, path: &Pointer) -> Result<(), PatchErrorKind> {
    let Some(last) = path.last_wildcard() else {
        return Ok(());
    };
    if !from.has_wildcard() {
        return match verb {
            Verb::Copy => Ok(()),
            _ => Err(PatchErrorKind::Unpaired(
                "a move takes each value from one place: its path may hold [*] only where its \
                 from holds the same [*]",
            )),
        };
    }
    let shared = from
        .0
        .iter()
        .zip(&path.0)
        .take_while(|(a, b)| a.text() == b.text())
        .count();
    if last >= shared {
        Err(PatchErrorKind::Unpaired(
            "the [*] of path must be those of from: from and path must be the same up to the \
             last [*] of path",
        ))
    } else if from.0.len() == last + 1 || path.0.len() == last + 1 {
        Err(PatchErrorKind::Unpaired(
            "from and path must both go on below the [*] they share",
        ))
    } else {
        Ok(())
    }
}

/// A failure at one of the places a pointer with `[*]` selects, saying which.
fn located(place: &Pointer, kind: PatchErrorKind) -> PatchErrorKind {
    PatchErrorKind::At {
        pointer: place.to_string(),
        kind: Box::new(kind),
    }
}

/// The places `ptr` selects, in document order: `ptr` with each `[*]` replaced by the index of
/// an element and every token before its last `[*]` resolved (a sequence's by index), the
/// tokens after it as written. A list, or anything on the way to a `[*]`, that is not there
/// gives no place; a scalar on the way is an error. A `[*]` applied to a mapping is the
/// member of that name, as RFC 6901 reads it.
fn places(doc: &Node<'_>, ptr: &Pointer, aliased: bool) -> Result<Vec<Pointer>, PatchErrorKind> {
    let Some(last) = ptr.last_wildcard() else {
        return Ok(vec![ptr.clone()]);
    };
    let anchors = view(doc, aliased);
    let mut out = Vec::new();
    let mut prefix = Vec::with_capacity(ptr.0.len());
    expand(doc, &anchors, ptr, 0, last, &mut prefix, &mut out)?;
    Ok(out)
}

/// [`places`] below `node`, reached by the `depth` tokens in `prefix`. Recursion is as deep as
/// the document's nesting: each level descends one level of it.
fn expand(
    node: &Node<'_>,
    anchors: &View<'_, '_>,
    ptr: &Pointer,
    depth: usize,
    last: usize,
    prefix: &mut Vec<Token>,
    out: &mut Vec<Pointer>,
) -> Result<(), PatchErrorKind> {
    let Some(tok) = ptr.0.get(depth).filter(|_| depth <= last) else {
        out.push(Pointer(prefix.clone()).joined(depth, ptr, depth));
        return Ok(());
    };
    let node = anchors.follow(node);
    if is_every(tok) && node.is_seq() {
        for (i, item) in node.items().iter().enumerate() {
            prefix.push(Token::Index(i));
            expand(item, anchors, ptr, depth + 1, last, prefix, out)?;
            prefix.pop();
        }
        return Ok(());
    }
    let i = match child(node, tok, ptr, depth, anchors) {
        Ok(i) => i,
        Err(k) if k.is_absent() => return Ok(()),
        Err(k) => return Err(k),
    };
    let (next, token) = if node.is_seq() {
        (node.items().get(i), Token::Index(i))
    } else {
        (node.entries().get(i).map(|e| &e.value), tok.clone())
    };
    let next = next.ok_or_else(lost)?;
    prefix.push(token);
    expand(next, anchors, ptr, depth + 1, last, prefix, out)?;
    prefix.pop();
    Ok(())
}

/// Runs one operation at every place it selects, and says at how many it acted (see
/// "Wildcards"). An operation without `[*]` is [`run`] as it is, unless all of it is below one
/// (`place`: [`apply_at_place`]).
fn run_counted<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    op: &Op<'p>,
    opts: &Options,
    aliased: bool,
    place: bool,
) -> Result<usize, Fail> {
    let from = match op {
        Op::Move { from, .. } | Op::Copy { from, .. } => Some(from),
        _ => None,
    };
    if !place && !from.is_some_and(Pointer::has_wildcard) && !op.path().has_wildcard() {
        return run(doc, op, opts, aliased).map(|()| 1);
    }
    // A failure at the place the operation names as written needs no "at".
    run_places(doc, op, opts, aliased, place).map_err(|(which, kind)| match kind {
        PatchErrorKind::At { pointer, kind } => {
            let written = match (which, from) {
                (Which::From, Some(from)) => from,
                _ => op.path(),
            };
            if pointer == written.to_string() {
                (which, *kind)
            } else {
                (which, PatchErrorKind::At { pointer, kind })
            }
        }
        kind => (which, kind),
    })
}

/// [`run_counted`] for an operation with `[*]`, or at a place.
fn run_places<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    op: &Op<'p>,
    opts: &Options,
    aliased: bool,
    place: bool,
) -> Result<usize, Fail> {
    // Where `add` starts making missing members: below the last `[*]`, or the whole pointer at
    // a place.
    let below = |p: &Pointer| p.last_wildcard().map_or(0, |w| w + 1);
    match op {
        Op::Test { path, value } => {
            let places = places(doc, path, aliased).map_err(at_path)?;
            for p in &places {
                test(doc, p, value, opts, aliased).map_err(|k| at_path(located(p, k)))?;
            }
            Ok(places.len())
        }
        Op::Add { path, value } => spread(
            doc,
            path,
            &Lifted::bare(value.clone()),
            below(path),
            aliased,
        ),
        Op::Remove { path } => backwards(doc, path, aliased, |doc, p| {
            unless_absent(remove(doc, p, aliased).map(drop))
        }),
        Op::Replace { path, value } => backwards(doc, path, aliased, |doc, p| {
            unless_absent(replace(doc, p, value.clone(), opts, aliased))
        }),
        Op::Copy { from, path } if !from.has_wildcard() && path.has_wildcard() => {
            // No place, nothing to copy: `from` is read only when there is somewhere to put it.
            if places(doc, path, aliased).map_err(at_path)?.is_empty() {
                return Ok(0);
            }
            if place {
                let anchors = view(doc, aliased);
                if let Err(k) = walk(doc, &anchors, from, from.0.len()) {
                    return if k.is_absent() {
                        Ok(0)
                    } else {
                        Err(at_from(k))
                    };
                }
            }
            let lifted = lift_copy(doc, from, opts, aliased)?;
            spread(doc, path, &lifted, below(path), aliased)
        }
        Op::Move { from, path } | Op::Copy { from, path } => {
            let moves = matches!(op, Op::Move { .. });
            let Some(last) = path.last_wildcard() else {
                return carry(doc, moves, from, path, place.then_some(0), opts, aliased);
            };
            // The `[*]` that `from` and `path` share (`check_pairing`) bind one element for
            // both: each binding is an operation within that element.
            let shared = path.joined(last + 1, path, path.0.len());
            let bindings = places(doc, &shared, aliased).map_err(at_path)?;
            let mut n = 0;
            for b in &bindings {
                let (f, p) = (
                    b.joined(last + 1, from, last + 1),
                    b.joined(last + 1, path, last + 1),
                );
                n += carry(doc, moves, &f, &p, Some(last + 1), opts, aliased)?;
            }
            Ok(n)
        }
    }
}

/// `f` at every place `path` selects, last place first, so that adding or removing an element
/// of a list the places share leaves the positions of the places still to come as they were;
/// `f` says whether it acted. The failure reported is the first in document order.
fn backwards<'a>(
    doc: &mut Node<'a>,
    path: &Pointer,
    aliased: bool,
    mut f: impl FnMut(&mut Node<'a>, &Pointer) -> Result<bool, PatchErrorKind>,
) -> Result<usize, Fail> {
    let places = places(doc, path, aliased).map_err(at_path)?;
    let mut acted = 0;
    let mut failed = None;
    for p in places.iter().rev() {
        match f(doc, p) {
            Ok(true) => acted += 1,
            Ok(false) => {}
            // The document is dropped on failure; going on finds the earlier failures.
            Err(k) => failed = Some(at_path(located(p, k))),
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(acted),
    }
}

/// Adds `value` at every place `path` selects (`add`, and `copy` from one place), making the
/// missing members from token `below` on. When that `[*]` is the last token, the places are the
/// elements of lists, and each list is rebuilt once with a copy of the value before each of its
/// elements (one insertion at a time would move the list's tail once per element).
fn spread<'a>(
    doc: &mut Node<'a>,
    path: &Pointer,
    value: &Lifted<'a>,
    below: usize,
    aliased: bool,
) -> Result<usize, Fail> {
    let last = match path.last_wildcard() {
        Some(last) if last + 1 == path.0.len() => last,
        _ => {
            return backwards(doc, path, aliased, |doc, p| {
                make_parents(doc, p, below, aliased)?;
                add(doc, p, value.clone(), aliased, false).map(|()| true)
            })
        }
    };
    let places = places(doc, path, aliased).map_err(at_path)?;
    let lists = places.chunk_by(|a, b| a.0.get(..last) == b.0.get(..last));
    for group in lists {
        let Some(first) = group.first() else { continue };
        let parent = first.joined(last, path, path.0.len());
        before_each(doc, &parent, value, aliased).map_err(|k| at_path(located(first, k)))?;
    }
    Ok(places.len())
}

/// Puts a copy of `value` before each element of the list at `list`.
fn before_each<'a>(
    doc: &mut Node<'a>,
    list: &Pointer,
    value: &Lifted<'a>,
    aliased: bool,
) -> Result<(), PatchErrorKind> {
    let depth = list.0.len();
    if depth + 1 + nesting(&value.node) > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    let route = {
        let anchors = view(doc, aliased);
        let (mut route, node) = walk(doc, &anchors, list, depth)?;
        follow_for_change(&anchors, node, depth, &mut route.expand);
        route
    };
    let (node, _) = reach(doc, &route, depth).ok_or_else(lost)?;
    let items = node.items_mut().ok_or_else(lost)?;
    let old = std::mem::take(items);
    items.reserve(2 * old.len());
    for item in old {
        items.push(value.clone().into_item());
        items.push(item);
    }
    Ok(())
}

/// Adds `values` at `path` one after another, as that many `add`s would: appended in order at
/// `-`, each before the one before it at an index, and at a mapping's member each replacing the
/// one before, so the last stays. A list takes them in one splice.
fn add_all<'a>(
    doc: &mut Node<'a>,
    path: &Pointer,
    mut values: Vec<Lifted<'a>>,
    aliased: bool,
) -> Result<(), PatchErrorKind> {
    let Some((tok, depth)) = path.0.last().map(|t| (t, path.0.len() - 1)) else {
        return match values.pop() {
            Some(v) => add(doc, path, v, aliased, false),
            None => Ok(()),
        };
    };
    let deepest = values.iter().map(|v| nesting(&v.node)).max().unwrap_or(0);
    if depth + 1 + deepest > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    let (route, slot) = {
        let anchors = view(doc, aliased);
        let (mut route, parent) = walk(doc, &anchors, path, depth)?;
        let parent = follow_for_change(&anchors, parent, depth, &mut route.expand);
        (route, add_slot(parent, tok, path, depth, &anchors)?)
    };
    let Slot::Insert(i) = slot else {
        return match values.pop() {
            Some(v) => add(doc, path, v, aliased, false),
            None => Ok(()),
        };
    };
    if !matches!(tok, Token::End) {
        values.reverse();
    }
    let (parent, in_flow) = reach(doc, &route, depth).ok_or_else(lost)?;
    let was_empty = parent.is_flow() && parent.items().is_empty();
    if was_empty && !in_flow && values.first().is_some_and(|v| !v.node.is_flow()) {
        parent.make_block();
    }
    let items = parent.items_mut().ok_or_else(lost)?;
    if i > items.len() {
        return Err(lost());
    }
    items.splice(i..i, values.into_iter().map(Lifted::into_item));
    Ok(())
}

/// A place below a `[*]` that is not there is skipped (`remove`, `replace`).
fn unless_absent(done: Result<(), PatchErrorKind>) -> Result<bool, PatchErrorKind> {
    match done {
        Ok(()) => Ok(true),
        Err(k) if k.is_absent() => Ok(false),
        Err(k) => Err(k),
    }
}

/// Below a `[*]` (from token `below` on), `add` makes the members missing on its way to
/// `ptr`'s parent: a list when the token after the member is `-` or `0`, a mapping when it is
/// a name. Nothing is made for a member named like a selector or `[*]`, or followed by one,
/// or by another index: the operation then fails as RFC 6902 says.
fn make_parents(
    doc: &mut Node<'_>,
    ptr: &Pointer,
    below: usize,
    aliased: bool,
) -> Result<(), PatchErrorKind> {
    let parent = ptr.0.len().saturating_sub(1);
    if parent <= below || walk(doc, &view(doc, aliased), ptr, parent).is_ok() {
        return Ok(());
    }
    for d in below..parent {
        let (Some(tok), Some(next)) = (ptr.0.get(d), ptr.0.get(d + 1)) else {
            return Ok(());
        };
        let here = ptr.joined(d + 1, ptr, ptr.0.len());
        match walk(doc, &view(doc, aliased), &here, d + 1) {
            Ok(_) => continue,
            Err(PatchErrorKind::NotFound { at: None }) => {}
            Err(_) => return Ok(()),
        }
        if matches!(tok, Token::Select(_)) || is_every(tok) {
            return Ok(());
        }
        let made = match next {
            Token::End | Token::Index(0) => Node::seq(),
            Token::Name(_) if !is_every(next) => Node::map(),
            _ => return Ok(()),
        };
        add(doc, &here, Lifted::bare(made), aliased, false)?;
    }
    Ok(())
}

/// `move` or `copy` (`moves`) from `from`, which may hold `[*]` of its own, to `path`, which
/// holds none left. `below`: both are below a `[*]` they share from that token on, so a
/// `from` that is not there is skipped and `path`'s missing parents are made. With `[*]` in
/// `from`, the values of all its places are taken first (copied, or removed: last first), then
/// added at `path` in document order.
fn carry<'a>(
    doc: &mut Node<'a>,
    moves: bool,
    from: &Pointer,
    path: &Pointer,
    below: Option<usize>,
    opts: &Options,
    aliased: bool,
) -> Result<usize, Fail> {
    let at = |which: Which, p: &Pointer, k| match below {
        Some(_) => (which, located(p, k)),
        None => (which, k),
    };
    if !from.has_wildcard() {
        if let Some(b) = below {
            let anchors = view(doc, aliased);
            if let Err(k) = walk(doc, &anchors, from, from.0.len()) {
                return if k.is_absent() {
                    Ok(0)
                } else {
                    Err(at(Which::From, from, k))
                };
            }
            drop(anchors);
            make_parents(doc, path, b, aliased).map_err(|k| at(Which::Path, path, k))?;
        }
        let op = if moves {
            Op::Move {
                from: from.clone(),
                path: path.clone(),
            }
        } else {
            Op::Copy {
                from: from.clone(),
                path: path.clone(),
            }
        };
        return run(doc, &op, opts, aliased)
            .map(|()| 1)
            .map_err(|(which, k)| match which {
                Which::From => at(which, from, k),
                Which::Path => at(which, path, k),
            });
    }
    let sources = places(doc, from, aliased).map_err(at_from)?;
    let mut values = Vec::with_capacity(sources.len());
    if moves {
        if !opts.move_into_child {
            if let Some(p) = sources
                .iter()
                .find(|s| moves_into_itself(doc, s, path, aliased))
            {
                return Err(at_from(located(p, PatchErrorKind::MoveIntoChild)));
            }
        }
        for p in sources.iter().rev() {
            match remove(doc, p, aliased) {
                Ok(v) => values.push(v),
                Err(k) if k.is_absent() => {}
                Err(k) => return Err(at_from(located(p, k))),
            }
        }
        values.reverse();
    } else {
        for p in &sources {
            match lift_copy(doc, p, opts, aliased) {
                Ok(v) => values.push(v),
                Err((_, k)) if k.is_absent() => {}
                Err((which, k)) => return Err((which, located(p, k))),
            }
        }
    }
    if values.is_empty() {
        return Ok(0);
    }
    if let Some(b) = below {
        make_parents(doc, path, b, aliased).map_err(|k| at(Which::Path, path, k))?;
    }
    let n = values.len();
    add_all(doc, path, values, aliased).map_err(|k| at(Which::Path, path, k))?;
    Ok(n)
}

/// Whether `path` lies inside the value at `from`, as written or as the two resolve.
fn moves_into_itself(doc: &Node<'_>, from: &Pointer, path: &Pointer, aliased: bool) -> bool {
    if is_proper_prefix(from.tokens(), path.tokens()) {
        return true;
    }
    let anchors = view(doc, aliased);
    let Ok((src, _)) = walk(doc, &anchors, from, from.0.len()) else {
        return false;
    };
    let parent = path.0.len().saturating_sub(1);
    matches!(walk(doc, &anchors, path, parent), Ok((dst, _)) if dst.steps.starts_with(&src.steps))
}

// ----- aliases -------------------------------------------------------------------------------

/// The anchored nodes of a document, borrowed: json6902 finds its way through the document
/// before it changes anything, so it needs no copies.
type View<'n, 'a> = Anchors<&'n Node<'a>>;

/// The anchored nodes of `root` when aliases are in play (`aliased`), none otherwise.
fn view<'n, 'a>(root: &'n Node<'a>, aliased: bool) -> View<'n, 'a> {
    if aliased {
        Anchors::view(root)
    } else {
        Anchors::default()
    }
}

/// [`Anchors::follow`], noting in `expand` that the alias (reached after `depth` steps) must
/// become a copy of its anchored node before anything below it changes.
fn follow_for_change<'n, 'a>(
    anchors: &'n View<'n, 'a>,
    node: &'n Node<'a>,
    depth: usize,
    expand: &mut Vec<(usize, Node<'a>)>,
) -> &'n Node<'a> {
    match anchors.copy_for(node) {
        Some(copy) => {
            expand.push((depth, copy));
            anchors.follow(node)
        }
        None => node,
    }
}

/// Every alias must name an anchor that comes before it in document order.
fn check_aliases(root: &Node<'_>) -> Result<(), PatchErrorKind> {
    match first_dangling(root) {
        Some(name) => Err(PatchErrorKind::DanglingAlias(name.to_owned())),
        None => Ok(()),
    }
}

// ----- bounds and bookkeeping of one application -------------------
//
// `apply_with` opens a `Session` for the operations it runs (a thread-local, so that the walk
// above needs no extra parameter): what `copy` may still add to the resource, what shifting and
// key selectors' scans may still cost, and the positions of the members of wide mappings by
// key, kept up to date by the
// changes above (`changed`), so that m operations on a mapping of n members cost O(n + m)
// rather than O(n·m).

/// What a JSON patch's `copy` operations may add to a resource smaller than this: a resource
/// may grow by its own size before the patch (so at most double), or by this much (in
/// [`weight`]'s bytes), whichever is more. `copy /data/d -> /data/d/cN` doubles the resource
/// each time: forty of them in a 2 KB config asked for a terabyte.
pub const COPY_SLACK: usize = 64 << 10;

/// How many elements (list items, mapping entries) a patch's inserts and removes may shift,
/// in all, on one resource. Each insert or remove before the end of a collection of n moves up
/// to n elements in memory; m of them on a large collection cost m·n. At this bound (134
/// million) that is about a second of copying; past it the patch is refused. A thousand removes
/// at the front of a list of 100,000 pass.
pub const SHIFT_BUDGET: usize = 1 << 27;

/// How many list elements a patch's key selectors (`[name=app]`) may examine, in all, on one
/// resource. A selector reads the whole list to find the one element it names, so m of them on
/// a list of n cost m·n; at this bound (67 million) that is a few seconds. A thousand selectors
/// on a list of 50,000 pass.
pub const SCAN_BUDGET: usize = 1 << 26;

/// Bytes a node counts for in [`weight`], besides its text (its size in the tree, with room
/// for what it owns).
const NODE_WEIGHT: usize = 48;

/// A tree's size in memory, roughly: 48 bytes a node plus the text of its
/// scalars, alias names, tags, anchors and comments.
pub fn weight(node: &Node<'_>) -> usize {
    let own = NODE_WEIGHT
        + node.as_str().map_or(0, str::len)
        + node.alias_name().map_or(0, str::len)
        + node.tag().map_or(0, str::len)
        + node.anchor().map_or(0, str::len)
        + {
            let c = node.comments();
            c.head
                .iter()
                .chain(c.line.iter())
                .chain(c.foot.iter())
                .map(|c| c.text.len())
                .sum::<usize>()
        };
    own + node
        .entries()
        .iter()
        .map(|e| weight(&e.key) + weight(&e.value))
        .chain(node.items().iter().map(weight))
        .sum::<usize>()
}

/// A wide mapping's members by key, kept up to date as members are appended and removed.
/// Each member has a slot, numbered in the order members were indexed or appended; a removed
/// member's slot stays counted in `gone`, so a member's position is its slot less the removed
/// slots before it (a Fenwick tree: O(log n) to update and to read).
struct MemberIndex {
    len: usize,
    slot: HashMap<String, usize>,
    /// Fenwick tree over slots (1-based inside): how many of them are removed.
    gone: Vec<u32>,
    slots: usize,
}

impl MemberIndex {
    /// The index of `map`; `None` when two of its keys have the same text (only a scan finds
    /// the second once the first is removed).
    fn of(map: &Node<'_>) -> Option<MemberIndex> {
        let entries = map.entries();
        let mut slot: HashMap<String, usize> = HashMap::default();
        slot.reserve(entries.len());
        for (i, e) in entries.iter().enumerate() {
            if let Some(k) = e.key.as_str() {
                if slot.insert(k.to_owned(), i).is_some() {
                    return None;
                }
            }
        }
        Some(MemberIndex {
            len: entries.len(),
            slot,
            gone: vec![0; 2 * entries.len() + 2],
            slots: entries.len(),
        })
    }

    /// Removed slots before `slot`.
    fn gone_before(&self, slot: usize) -> usize {
        let mut i = slot;
        let mut n = 0;
        while i > 0 {
            n += self.gone.get(i).copied().unwrap_or(0) as usize;
            i &= i - 1;
        }
        n
    }

    fn position(&self, key: &str) -> Option<usize> {
        let slot = *self.slot.get(key)?;
        Some(slot - self.gone_before(slot))
    }

    /// Appends `key`; false when the tree is full (the caller rebuilds).
    fn push(&mut self, key: String) -> bool {
        if self.slots + 1 >= self.gone.len() {
            return false;
        }
        self.slot.entry(key).or_insert(self.slots);
        self.slots += 1;
        self.len += 1;
        true
    }

    fn remove(&mut self, key: &str) {
        if let Some(slot) = self.slot.remove(key) {
            let mut i = slot + 1;
            while let Some(g) = self.gone.get_mut(i) {
                *g += 1;
                i += i & i.wrapping_neg();
            }
            self.len = self.len.saturating_sub(1);
        }
    }
}

/// The bookkeeping of one [`apply_with`].
struct Session {
    /// What `copy` may still add ([`weight`]), and what it could add in all.
    copy_left: usize,
    copy_limit: usize,
    /// Elements inserts and removes may still shift.
    shift_left: usize,
    /// Elements key selectors may still examine.
    scan_left: usize,
    /// Member positions of the wide mappings found so far, by the pointer that reached them
    /// (a pointer without selectors or `-`); `None` when the document has aliases, where one
    /// mapping is reached by several pointers.
    members: Option<HashMap<String, MemberIndex>>,
    /// Index entries found out of date (by their length, or a key not where they said): each
    /// costs a rebuild. The changes above keep it at 0; the tests check that.
    stale: usize,
}

std::thread_local! {
    static SESSION: std::cell::RefCell<Option<Session>> = const { std::cell::RefCell::new(None) };
}

/// Mappings wider than this are indexed; narrower ones are scanned.
const INDEX_FROM: usize = 16;

/// Wide mappings indexed at once, at most (a patch touching more starts over).
const INDEXED_MAX: usize = 256;

/// Ends the session [`Session::begin`] opened, putting back the one it interrupted.
struct SessionGuard(Option<Session>);

impl Drop for SessionGuard {
    fn drop(&mut self) {
        let outer = self.0.take();
        let _ = SESSION.try_with(|s| {
            let _done = std::mem::replace(&mut *s.borrow_mut(), outer);
            #[cfg(test)]
            if let Some(done) = _done {
                STALE_SEEN.with(|c| c.set(c.get() + done.stale));
            }
        });
    }
}

#[cfg(test)]
std::thread_local! {
    /// The stale index entries the sessions of this thread met, in all (for the tests).
    static STALE_SEEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Session {
    /// Opens the session for `ops` on `doc`.
    fn begin(doc: &Node<'_>, ops: &[Op<'_>], aliased: bool) -> SessionGuard {
        let copies = ops.iter().any(|op| matches!(op, Op::Copy { .. }));
        let copy_limit = if copies {
            weight(doc).max(COPY_SLACK)
        } else {
            0
        };
        let session = Session {
            copy_left: copy_limit,
            copy_limit,
            shift_left: SHIFT_BUDGET,
            scan_left: SCAN_BUDGET,
            members: (!aliased).then(HashMap::default),
            stale: 0,
        };
        let outer = SESSION
            .try_with(|s| s.borrow_mut().replace(session))
            .ok()
            .flatten();
        SessionGuard(outer)
    }

    /// Runs `f` on the open session, if there is one.
    fn with<T>(f: impl FnOnce(&mut Session) -> T) -> Option<T> {
        SESSION
            .try_with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.as_mut().map(f)))
            .ok()
            .flatten()
    }
}

/// Spends `n` of the session's budget that `left` names, or fails with what `over` says when
/// less is left. Outside a session nothing is counted.
fn charge(
    n: usize,
    left: fn(&mut Session) -> &mut usize,
    over: impl FnOnce(&Session) -> PatchErrorKind,
) -> Result<(), PatchErrorKind> {
    Session::with(|s| {
        if n > *left(s) {
            return Err(over(s));
        }
        *left(s) -= n;
        Ok(())
    })
    .unwrap_or(Ok(()))
}

/// Charges a copy of `value` to the session's budget.
fn charge_copy(value: &Node<'_>) -> Result<(), PatchErrorKind> {
    charge(
        weight(value),
        |s| &mut s.copy_left,
        |s| PatchErrorKind::GrowsTooLarge {
            limit: s.copy_limit,
        },
    )
}

/// Charges `n` elements shifted by an insert or a remove.
fn charge_shift(n: usize) -> Result<(), PatchErrorKind> {
    charge(
        n,
        |s| &mut s.shift_left,
        |_| PatchErrorKind::TooManyShifts(SHIFT_BUDGET),
    )
}

/// Charges `n` list elements a key selector examines.
fn charge_scan(n: usize) -> Result<(), PatchErrorKind> {
    charge(
        n,
        |s| &mut s.scan_left,
        |_| PatchErrorKind::TooManyScans(SCAN_BUDGET),
    )
}

/// The text of the pointer made of `ptr`'s first `n` tokens, when it names one mapping for
/// the whole session: no selector (which picks by content that may change) and no `-`.
fn stable_prefix(ptr: &Pointer, n: usize) -> Option<String> {
    let tokens = ptr.tokens().get(..n)?;
    if tokens
        .iter()
        .any(|t| matches!(t, Token::Select(_) | Token::End))
    {
        return None;
    }
    Some(ptr.prefix(n))
}

/// The position of `key` among the members of `map`, which the first `depth` tokens of `ptr`
/// reached: scanned in a narrow mapping, found by hash in a wide one (the index is built once
/// and kept up to date). Checked against the mapping itself, so an index that is out of date
/// is rebuilt, never believed.
fn member_position(map: &Node<'_>, ptr: &Pointer, depth: usize, key: &str) -> Option<usize> {
    let entries = map.entries();
    if entries.len() <= INDEX_FROM {
        return map.position(key);
    }
    let Some(prefix) = stable_prefix(ptr, depth) else {
        return map.position(key);
    };
    let found = Session::with(|s| {
        let members = s.members.as_mut()?;
        if members.get(&prefix).is_none_or(|i| i.len != entries.len()) {
            if members.contains_key(&prefix) {
                s.stale += 1;
            }
            if members.len() >= INDEXED_MAX {
                members.clear();
            }
            match MemberIndex::of(map) {
                Some(index) => members.insert(prefix.clone(), index),
                None => members.remove(&prefix),
            };
        }
        let index = members.get(&prefix)?;
        Some(match index.position(key) {
            Some(i) if entries.get(i).and_then(|e| e.key.as_str()) == Some(key) => Some(i),
            Some(_) => {
                // Out of date after all: forget it and scan.
                members.remove(&prefix);
                s.stale += 1;
                map.position(key)
            }
            None => None,
        })
    })
    .flatten();
    match found {
        Some(answer) => answer,
        None => map.position(key),
    }
}

/// What an operation did to the document, for the member index.
enum Change {
    /// A member was appended, at this index, to the mapping at the first `depth` tokens.
    Pushed(usize),
    /// The value at the first `depth + 1` tokens was replaced.
    Replaced,
    /// The sequence at the first `depth` tokens had an element inserted or removed: the
    /// positions after it moved.
    Shifted,
    /// The member at the first `depth + 1` tokens was removed from its mapping.
    Removed,
    /// The whole document was replaced.
    Everything,
}

/// Keeps the member index true to what an operation at `ptr` did (see [`Change`]).
fn changed(ptr: &Pointer, depth: usize, change: Change) {
    Session::with(|s| {
        let Some(members) = s.members.as_mut() else {
            return;
        };
        // The mapping at `upto` tokens and everything below it are forgotten; a selector or
        // `-` on the way stands for any element of its list.
        let forget = |members: &mut HashMap<String, MemberIndex>, upto: usize| {
            let cut = ptr
                .tokens()
                .iter()
                .take(upto)
                .position(|t| matches!(t, Token::Select(_) | Token::End))
                .unwrap_or(upto);
            let prefix = ptr.prefix(cut);
            members.retain(|k, _| {
                !(k == &prefix
                    || k.strip_prefix(prefix.as_str())
                        .is_some_and(|r| r.starts_with('/')))
            });
        };
        match change {
            Change::Everything => members.clear(),
            Change::Replaced => forget(members, depth + 1),
            Change::Shifted => forget(members, depth),
            Change::Pushed(index) => {
                let key = ptr.tokens().get(depth).map(Token::text);
                let entry = stable_prefix(ptr, depth).and_then(|p| members.get_mut(&p));
                let kept = match (entry, key) {
                    (Some(m), Some(key)) if m.len == index => m.push(key),
                    (None, _) => true,
                    _ => false,
                };
                if !kept {
                    forget(members, depth);
                }
            }
            Change::Removed => {
                // Members are found by name, so only what was below the removed one goes.
                forget(members, depth + 1);
                let key = ptr.tokens().get(depth).map(Token::text);
                let entry = stable_prefix(ptr, depth).and_then(|p| members.get_mut(&p));
                match (entry, key) {
                    (Some(m), Some(key)) => m.remove(&key),
                    (None, _) => {}
                    (Some(_), None) => forget(members, depth),
                }
            }
        }
    });
}

/// Levels of collections in a tree of the document, after a change that went through an alias
/// (it became a copy of its anchored node): deeper than [`MAX_DEPTH`] is an error, as no YAML
/// reader would read the result back.
fn check_depth(root: &Node<'_>) -> Result<(), PatchErrorKind> {
    if nesting(root) > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    Ok(())
}

// ----- equality ------------------------------------------------------------------------------

/// JSON equality (RFC 6902 §4.6): same type; numbers equal by value (`1` and `1.0`), strings by
/// their text, mappings with the same members whatever their order, sequences item by item.
/// Comments and styles do not count. Aliases are followed, within `budget` node visits.
fn json_equal(
    a: &Node<'_>,
    aa: &View<'_, '_>,
    b: &Node<'_>,
    ba: &View<'_, '_>,
    budget: &mut usize,
) -> Result<bool, PatchErrorKind> {
    *budget = budget
        .checked_sub(1)
        .ok_or(PatchErrorKind::TooLarge(anchors::BUDGET))?;
    let (a, b) = (aa.follow(a), ba.follow(b));
    Ok(match (a.kind(), b.kind()) {
        (Kind::Scalar, Kind::Scalar) => match (a.resolved(), b.resolved()) {
            (Some(x), Some(y)) => scalar_equal(x, y),
            _ => false,
        },
        (Kind::Seq, Kind::Seq) => {
            if a.items().len() != b.items().len() {
                return Ok(false);
            }
            for (x, y) in a.items().iter().zip(b.items()) {
                if !json_equal(x, aa, y, ba, budget)? {
                    return Ok(false);
                }
            }
            true
        }
        (Kind::Map, Kind::Map) => {
            let (ea, eb) = (a.entries(), b.entries());
            if ea.len() != eb.len() {
                return Ok(false);
            }
            let index: HashMap<&str, &Node<'_>> = eb
                .iter()
                .filter_map(|e| e.key.as_str().map(|k| (k, &e.value)))
                .collect();
            for e in ea {
                let Some(other) = e.key.as_str().and_then(|k| index.get(k)) else {
                    return Ok(false);
                };
                if !json_equal(&e.value, aa, other, ba, budget)? {
                    return Ok(false);
                }
            }
            true
        }
        (Kind::Alias, Kind::Alias) => a.alias_name() == b.alias_name(),
        _ => false,
    })
}

fn scalar_equal(a: Resolved<'_>, b: Resolved<'_>) -> bool {
    match (a, b) {
        (Resolved::Int(x), Resolved::Float(y)) | (Resolved::Float(y), Resolved::Int(x)) => {
            int_equals_float(x, y)
        }
        (x, y) => x == y,
    }
}

fn int_equals_float(i: i128, f: f64) -> bool {
    // Exact: f must be integral and in range, then compare as integers.
    f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && f as i128 == i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{emit_document, parse_stream, to_json, Document};

    /// `doc` (YAML) patched with `patch` (YAML or JSON text), written back; or the error text.
    fn patched(doc: &str, patch: &str) -> Result<String, String> {
        patched_with(doc, patch, &Options::default())
    }

    fn patched_with(doc: &str, patch: &str, opts: &Options) -> Result<String, String> {
        let docs = parse_stream(doc).map_err(|e| e.to_string())?;
        let pdocs = parse_stream(patch).map_err(|e| e.to_string())?;
        let ops =
            parse_ops(pdocs[0].root.as_ref().ok_or("empty patch")?).map_err(|e| e.to_string())?;
        let mut d = docs[0].clone();
        let before = emit(&d);
        if let Some(root) = d.root.as_mut() {
            if let Err(e) = apply_with(root, &ops, opts) {
                // All or nothing: the document is as it was, byte for byte.
                assert_eq!(emit(&d), before, "changed on error");
                return Err(e.to_string());
            }
        }
        Ok(emit(&d))
    }

    fn emit(d: &Document<'_>) -> String {
        let mut out = String::new();
        emit_document(d, &mut out);
        out
    }

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

    const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
      # the application
      - name: app # main
        image: app:1 # pinned
        ports:
        - containerPort: 80
          protocol: TCP
        - containerPort: 80
          protocol: UDP
      - name: sidecar
        image: proxy:2
";

    #[test]
    fn selectors_address_list_elements() {
        let c = "/spec/template/spec/containers";
        let out = patched(
            DEPLOY,
            &format!("- {{op: replace, path: '{c}/[name=app]/image', value: app:2}}\n"),
        )
        .unwrap();
        assert_eq!(out, DEPLOY.replace("app:1 # pinned", "app:2 # pinned"));

        let out = patched(
            DEPLOY,
            &format!("- {{op: replace, path: '{c}/[name=app]/ports/[containerPort=80,protocol=UDP]/containerPort', value: 53}}\n"),
        )
        .unwrap();
        assert!(
            out.contains("- containerPort: 53\n          protocol: UDP"),
            "{out}"
        );

        let out = patched(
            DEPLOY,
            &format!("- {{op: remove, path: '{c}/[name=sidecar]'}}\n"),
        )
        .unwrap();
        assert!(
            !out.contains("sidecar") && out.ends_with("protocol: UDP\n"),
            "{out}"
        );

        // `add` at a selector inserts before the selected element.
        let out = patched(
            DEPLOY,
            &format!("- {{op: add, path: '{c}/[name=sidecar]', value: {{name: init}}}}\n"),
        )
        .unwrap();
        assert!(
            out.contains("      - name: init\n      - name: sidecar"),
            "{out}"
        );

        let out = patched(
            DEPLOY,
            &format!(
                "- {{op: test, path: '{c}/[name=sidecar]/image', value: proxy:2}}\n\
                 - {{op: copy, from: '{c}/[name=app]/image', path: '{c}/[name=sidecar]/image'}}\n\
                 - {{op: move, from: '{c}/[name=sidecar]', path: '{c}/0'}}\n"
            ),
        )
        .unwrap();
        assert!(
            out.contains("      - name: sidecar\n        image: app:1 # pinned\n      # the application\n      - name: app # main"),
            "{out}"
        );
    }

    #[test]
    fn selector_failures() {
        let c = "/spec/template/spec/containers";
        let err = |patch: String| patched(DEPLOY, &patch).unwrap_err();
        assert_eq!(
            err(format!(
                "- {{op: replace, path: '{c}/[name=nope]/image', value: x}}\n"
            )),
            "op 0 (replace /spec/template/spec/containers/[name=nope]/image): path does not exist \
             (no element of /spec/template/spec/containers matches [name=nope])"
        );
        assert_eq!(
            err(format!("- {{op: remove, path: '{c}/[name=app]/ports/[containerPort=80]'}}\n")),
            "op 0 (remove /spec/template/spec/containers/[name=app]/ports/[containerPort=80]): \
             2 elements of /spec/template/spec/containers/[name=app]/ports match [containerPort=80]; \
             a selector must match one"
        );
        assert_eq!(
            err(format!("- {{op: remove, path: '{c}/[name=app'}}\n")),
            "op 0 (remove /spec/template/spec/containers/[name=app): malformed key selector \
             \"[name=app\" at /spec/template/spec/containers: missing the closing ']' (at byte 9)"
        );
        assert_eq!(
            err(format!("- {{op: remove, path: '{c}/[name=a=b]'}}\n")),
            "op 0 (remove /spec/template/spec/containers/[name=a=b]): malformed key selector \
             \"[name=a=b]\" at /spec/template/spec/containers: '=' in a value must be escaped as '\\=' (at byte 7)"
        );
        // Elements that are not mappings, or lack the field, never match.
        assert_eq!(
            patched("l: [1, {x: 2}]\n", "- {op: remove, path: '/l/[name=1]'}\n").unwrap_err(),
            "op 0 (remove /l/[name=1]): path does not exist (no element of /l matches [name=1])"
        );
        // On a mapping the token is a member name, as RFC 6901 says.
        assert_eq!(
            patched(
                "m:\n  '[name=app]': 1\n",
                "- {op: replace, path: '/m/[name=app]', value: 2}\n"
            )
            .unwrap(),
            "m:\n  '[name=app]': 2\n"
        );
        // Scalar text comparison: `80` and `"80"` are both the text 80.
        assert_eq!(
            patched(
                "l:\n- p: \"80\"\n  v: a\n",
                "- {op: replace, path: '/l/[p=80]/v', value: b}\n"
            )
            .unwrap(),
            "l:\n- p: \"80\"\n  v: b\n"
        );
    }

    #[test]
    fn comments_survive_replace_move_and_copy() {
        let doc = "\
# head
spec:
  # replicas comment
  replicas: 2 # line
  selector: # sel
    app: web
  other: {}
";
        // replace: the place keeps its comments when the value brings none; the value's own win.
        assert_eq!(
            patched(doc, "- op: replace\n  path: /spec/replicas\n  value: 3\n").unwrap(),
            doc.replace("replicas: 2", "replicas: 3")
        );
        assert_eq!(
            patched(
                doc,
                "- op: replace\n  path: /spec/replicas\n  value: 3 # new\n"
            )
            .unwrap(),
            doc.replace("replicas: 2 # line", "replicas: 3 # new")
        );
        // move: the entry's comments go with it.
        assert_eq!(
            patched(
                doc,
                "- {op: move, from: /spec/replicas, path: /spec/other/count}\n"
            )
            .unwrap(),
            "\
# head
spec:
  selector: # sel
    app: web
  other:
    # replicas comment
    count: 2 # line
"
        );
        // copy: both places have them.
        assert_eq!(
            patched(
                doc,
                "- {op: copy, from: /spec/selector, path: /spec/sel2}\n"
            )
            .unwrap(),
            format!("{doc}  sel2: # sel\n    app: web\n")
        );
        // from a list to a mapping and back
        let list = "l:\n# first\n- a: 1 # one\n- b\nm: {}\n";
        assert_eq!(
            patched(list, "- {op: move, from: /l/0, path: /m/x}\n").unwrap(),
            "l:\n- b\nm:\n  # first\n  x:\n    a: 1 # one\n"
        );
        assert_eq!(
            patched(doc, "- {op: move, from: /spec/replicas, path: /l}\n- {op: add, path: /m, value: [0]}\n- {op: move, from: /l, path: /m/0}\n").unwrap(),
            "# head\nspec:\n  selector: # sel\n    app: web\n  other: {}\nm:\n# replicas comment\n- 2 # line\n- 0\n"
        );
    }

    #[test]
    fn all_or_nothing() {
        let doc = "a: 1 # c\nb: [1, 2]\n";
        let patch = "\
- {op: replace, path: /a, value: 2}
- {op: add, path: /b/-, value: 3}
- {op: remove, path: /zzz}
- {op: add, path: /c, value: 4}
";
        // `patched` asserts the document is byte-identical after the error.
        assert_eq!(
            patched(doc, patch).unwrap_err(),
            "op 2 (remove /zzz): path does not exist"
        );
        let failing_test = "- {op: add, path: /x, value: 1}\n- {op: test, path: /a, value: 2}\n";
        assert_eq!(
            patched(doc, failing_test).unwrap_err(),
            "op 1 (test /a): value does not match"
        );
    }

    #[test]
    fn the_whole_document() {
        assert_eq!(
            patched("foo\n", "- {op: replace, path: '', value: bar}\n").unwrap(),
            "bar\n"
        );
        assert_eq!(
            patched("a: 1\n", "- {op: test, path: '', value: {a: 1.0}}\n").unwrap(),
            "a: 1\n"
        );
        assert_eq!(
            patched("a: 1\n", "- {op: remove, path: ''}\n").unwrap_err(),
            "op 0 (remove \"\"): the whole document cannot be removed"
        );
        assert_eq!(
            patched("a:\n  b: 1\n", "- {op: move, from: /a, path: ''}\n").unwrap(),
            "b: 1\n"
        );
        assert_eq!(
            patched("a: 1\n", "- {op: move, from: '', path: /a}\n").unwrap_err(),
            "op 0 (move /a): a value cannot be moved into one of its own children"
        );
    }

    #[test]
    fn move_rules() {
        let doc = "a:\n  b: 1\nc: 2\n";
        assert_eq!(
            patched(doc, "- {op: move, from: /a, path: /a/b/c}\n").unwrap_err(),
            "op 0 (move /a/b/c): a value cannot be moved into one of its own children"
        );
        // Onto itself: nothing changes, not even the key order.
        assert_eq!(
            patched(doc, "- {op: move, from: /a, path: /a}\n").unwrap(),
            doc
        );
        assert_eq!(
            patched("l: [x, y]\n", "- {op: move, from: /l/0, path: /l/-}\n").unwrap(),
            "l: [y, x]\n"
        );
        // Through a selector, the same element: still an error.
        assert_eq!(
            patched(
                "l:\n- name: a\n  k: {}\n",
                "- {op: move, from: /l/0, path: '/l/[name=a]/k/x'}\n"
            )
            .unwrap_err(),
            "op 0 (move /l/[name=a]/k/x): a value cannot be moved into one of its own children"
        );
    }

    #[test]
    fn test_compares_json_values() {
        let doc = "n: 1\nf: 1.5\ns: \"1\"\nm: {a: 1, b: [1, {c: null}]}\nt: true\n";
        let ok = [
            "{op: test, path: /n, value: 1.0}",
            "{op: test, path: /n, value: 0x1}",
            "{op: test, path: /f, value: 1.50}",
            "{op: test, path: /s, value: '1'}",
            "{op: test, path: /m, value: {b: [1, {c: ~}], a: 1}}",
            "{op: test, path: /t, value: true}",
        ];
        for op in ok {
            assert!(patched(doc, &format!("- {op}\n")).is_ok(), "{op}");
        }
        let bad = [
            "{op: test, path: /n, value: '1'}",
            "{op: test, path: /s, value: 1}",
            "{op: test, path: /m, value: {a: 1}}",
            "{op: test, path: /m/b, value: [{c: null}, 1]}",
            "{op: test, path: /t, value: 'true'}",
            "{op: test, path: /n, value: null}",
        ];
        for op in bad {
            assert!(patched(doc, &format!("- {op}\n")).is_err(), "{op}");
        }
    }

    #[test]
    fn parse_errors_name_the_op() {
        let cases = [
            ("{op: add, path: /a, value: 1}", "a JSON patch must be a list of operations"),
            ("[1]", "op 0: an operation must be a mapping"),
            ("[{path: /a}]", "op 0: missing \"op\""),
            ("[{op: 1, path: /a}]", "op 0: \"op\" must be a string"),
            ("[{op: remove, path: /a}, {op: spam, path: /a}]", "op 1: unknown op \"spam\" (expected add, remove, replace, move, copy or test)"),
            ("[{op: add, value: 1}]", "op 0 (add): missing \"path\""),
            ("[{op: add, path: ~, value: 1}]", "op 0 (add): \"path\" must be a string"),
            ("[{op: add, path: a, value: 1}]", "op 0 (add a): invalid JSON pointer: a JSON pointer must be empty or start with '/'"),
            ("[{op: replace, path: /a}]", "op 0 (replace /a): missing \"value\""),
            ("[{op: move, path: /a}]", "op 0 (move /a): missing \"from\""),
            ("[{op: copy, path: /a, from: b}]", "op 0 (copy from b): invalid JSON pointer: a JSON pointer must be empty or start with '/'"),
            ("[{op: test, path: '/~x', value: 1}]", "op 0 (test /~x): invalid JSON pointer: '~' at byte 1 must be followed by 0 or 1"),
        ];
        for (patch, msg) in cases {
            let docs = parse_stream(patch).unwrap();
            let err = parse_ops(docs[0].root.as_ref().unwrap()).unwrap_err();
            assert_eq!(err.to_string(), msg, "{patch}");
        }
        // Members an operation does not define are ignored (RFC 6902 §4).
        let docs = parse_stream("[{op: remove, path: /a, value: 1, extra: x}]").unwrap();
        assert!(parse_ops(docs[0].root.as_ref().unwrap()).is_ok());
        // A mapping built by hand can repeat a member; parsed YAML cannot.
        let op = Node::map_of(vec![
            Entry::new("op", Node::plain("remove")),
            Entry::new("path", Node::plain("/a")),
            Entry::new("path", Node::plain("/b")),
        ]);
        let err = parse_ops(&Node::seq_of(vec![op])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "op 0 (remove): \"path\" appears more than once"
        );
    }

    #[test]
    fn apply_errors() {
        let doc = "a: 1\nl: [x]\n";
        let cases = [
            ("{op: add, path: /a/b, value: 1}", "op 0 (add /a/b): /a is a scalar, it has no members"),
            ("{op: add, path: /l/2, value: 1}", "op 0 (add /l/2): index 2 is out of range: the list at /l has 1 elements"),
            ("{op: replace, path: /l/-, value: 1}", "op 0 (replace /l/-): \"-\" names no element of the list at /l (only add may use it, to append)"),
            ("{op: remove, path: /l/01}", "op 0 (remove /l/01): \"01\" is not an index of the list at /l (digits without leading zeros)"),
            ("{op: add, path: /l/99999999999999999999999, value: 1}", "op 0 (add /l/99999999999999999999999): index 99999999999999999999999 is out of range: the list at /l has 1 elements"),
            ("{op: add, path: /x/y/z, value: 1}", "op 0 (add /x/y/z): path does not exist (nothing at /x)"),
            ("{op: copy, from: /nope, path: /b}", "op 0 (copy from /nope): path does not exist"),
            ("{op: add, path: /0, value: 1}", ""),
        ];
        for (op, msg) in cases {
            match patched(doc, &format!("- {op}\n")) {
                Err(e) => assert_eq!(e, msg, "{op}"),
                Ok(out) => assert!(msg.is_empty(), "{op}: {out}"),
            }
        }
    }

    #[test]
    fn json_values_become_block_yaml() {
        let doc = "metadata:\n  name: web # the name\n";
        let patch = r#"[{"op": "add", "path": "/metadata/labels", "value": {"app": "web", "tier": ["a", "b"]}},
                       {"op": "add", "path": "/metadata/name", "value": "web2"}]"#;
        assert_eq!(
            patched(doc, patch).unwrap(),
            "metadata:\n  name: web2 # the name\n  labels:\n    app: web\n    tier:\n    - a\n    - b\n"
        );
        // A YAML patch keeps the styles it was written in.
        assert_eq!(
            patched(doc, "- op: add\n  path: /metadata/tier\n  value: [a, b]\n").unwrap(),
            "metadata:\n  name: web # the name\n  tier: [a, b]\n"
        );
        // An empty flow mapping that receives its first member becomes block.
        assert_eq!(
            patched(
                "metadata:\n  annotations: {}\n",
                r#"[{"op": "add", "path": "/metadata/annotations/a~1b", "value": "x"}]"#
            )
            .unwrap(),
            "metadata:\n  annotations:\n    a/b: x\n"
        );
    }

    #[test]
    fn new_keys_are_appended_and_add_replaces_in_place() {
        assert_eq!(
            patched(
                "b: 1\na: 2\n",
                "- {op: add, path: /c, value: 3}\n- {op: add, path: /b, value: 0}\n"
            )
            .unwrap(),
            "b: 0\na: 2\nc: 3\n"
        );
    }

    #[test]
    fn kustomize_replace_adds_a_missing_member() {
        let patch = "- {op: replace, path: /metadata/namespace, value: ns}\n";
        assert_eq!(
            patched_with("metadata:\n  name: a\n", patch, &Options::kustomize()).unwrap(),
            "metadata:\n  name: a\n  namespace: ns\n"
        );
        assert!(patched_with("kind: X\n", patch, &Options::kustomize()).is_err());
        assert!(patched_with(
            "l: [a]\n",
            "- {op: replace, path: /l/1, value: b}\n",
            &Options::kustomize()
        )
        .is_err());
    }

    #[test]
    fn kustomize_moves_a_value_into_its_own_children() {
        let k = Options::kustomize();
        let rules = "rules:\n- verbs: [get]\n- verbs: [list]\n";
        let into = "- {op: move, from: /rules/0, path: /rules/0/moved}\n";
        // The first rule goes, and lands in the rule that takes its index.
        assert_eq!(
            patched_with(rules, into, &k).unwrap(),
            "rules:\n- verbs: [list]\n  moved:\n    verbs: [get]\n"
        );
        assert!(patched(rules, into)
            .unwrap_err()
            .ends_with("a value cannot be moved into one of its own children"));
        // Through a selector too; and into a list of the next element.
        assert_eq!(
            patched_with(
                rules,
                "- {op: move, from: '/rules/[verbs=x]', path: /rules/0}\n",
                &k
            )
            .unwrap_err(),
            "op 0 (move from /rules/[verbs=x]): path does not exist (no element of /rules \
             matches [verbs=x])"
        );
        assert_eq!(
            patched_with(
                rules,
                "- {op: move, from: /rules/0, path: /rules/0/verbs/0}\n",
                &k
            )
            .unwrap(),
            "rules:\n- verbs: [{verbs: [get]}, list]\n"
        );
        // Nothing takes the value's place: the destination is missing, as in kustomize.
        assert_eq!(
            patched_with("a:\n  b: 1\n", "- {op: move, from: /a, path: /a/b/c}\n", &k).unwrap_err(),
            "op 0 (move /a/b/c): path does not exist (nothing at /a)"
        );
        assert!(patched_with("l: [x]\n", "- {op: move, from: /l/0, path: /l/0/y}\n", &k).is_err());
    }

    #[test]
    fn kustomize_reads_a_missing_member_as_null() {
        let doc = "data:\n  k: v\n";
        let k = Options::kustomize();
        let copy = "- {op: copy, from: /data/gone, path: /data/c}\n";
        assert_eq!(
            patched_with(doc, copy, &k).unwrap(),
            "data:\n  k: v\n  c: null\n"
        );
        assert!(patched_with(doc, copy, &Options::default()).is_err());
        let test_null = "- {op: test, path: /data/gone, value: null}\n";
        assert_eq!(patched_with(doc, test_null, &k).unwrap(), doc);
        assert!(patched_with(doc, test_null, &Options::default()).is_err());
        // Only a missing member of an existing mapping: a missing parent, a value other than
        // null, and a sequence index stay errors.
        assert!(patched_with(doc, "- {op: test, path: /data/gone, value: 1}\n", &k).is_err());
        assert!(patched_with(doc, "- {op: copy, from: /no/x, path: /data/c}\n", &k).is_err());
        assert!(patched_with("l: [a]\n", "- {op: copy, from: /l/3, path: /m}\n", &k).is_err());
    }

    #[test]
    fn aliases() {
        let doc = "base: &b\n  x: 1\nuse: *b\nlater: *b\n";
        // Changing something below an alias changes only that place.
        assert_eq!(
            patched(doc, "- {op: add, path: /use/z, value: 2}\n").unwrap(),
            "base: &b\n  x: 1\nuse:\n  x: 1\n  z: 2\nlater: *b\n"
        );
        // Reading looks through aliases.
        assert!(patched(doc, "- {op: test, path: /later, value: {x: 1}}\n").is_ok());
        assert!(patched(doc, "- {op: test, path: /later/x, value: 1}\n").is_ok());
        // An alias before its anchor is refused.
        assert_eq!(
            patched(doc, "- {op: move, from: /base, path: /zzz}\n").unwrap_err(),
            "op 0 (move /zzz): the result would use alias *b before (or without) its anchor"
        );
        // Copies carry no anchors; replacing an alias keeps the anchor intact.
        assert_eq!(
            patched(
                doc,
                "- {op: copy, from: /base, path: /c}\n- {op: replace, path: /later, value: 3}\n"
            )
            .unwrap(),
            "base: &b\n  x: 1\nuse: *b\nlater: 3\nc:\n  x: 1\n"
        );
        // Aliases in the patch are expanded.
        assert_eq!(
            patched(
                "a: 1\n",
                "- {op: add, path: /b, value: &v {k: v}}\n- {op: add, path: /c, value: *v}\n"
            )
            .unwrap(),
            "a: 1\nb:\n  k: v\nc:\n  k: v\n"
        );
    }

    #[test]
    fn results_stay_within_the_nesting_limit() {
        let deep = "[".repeat(MAX_DEPTH - 1) + &"]".repeat(MAX_DEPTH - 1);
        let doc = format!("a: {deep}\n");
        assert!(patched(&doc, "- {op: copy, from: /a, path: /b}\n").is_ok());
        assert_eq!(
            patched(
                &doc,
                "- {op: add, path: /b, value: {c: 1}}\n- {op: copy, from: /a, path: /b/c}\n"
            )
            .unwrap_err(),
            format!("op 1 (copy /b/c): the result would nest deeper than {MAX_DEPTH} levels")
        );
    }

    #[test]
    fn spacing_of_the_place_is_kept() {
        assert_eq!(
            patched("a:   1 # c\n", "- {op: replace, path: /a, value: 2}\n").unwrap(),
            "a:   2 # c\n"
        );
    }

    #[test]
    fn tokens_built_by_hand_mean_what_their_text_says() {
        let mut doc = Node::seq_of(vec![Node::plain("x"), Node::plain("y")]);
        let ops = [
            Op::Remove {
                path: Pointer(vec![Token::Name("1".into())]),
            },
            Op::Add {
                path: Pointer(vec![Token::Name("-".into())]),
                value: Node::plain("z"),
            },
        ];
        apply(&mut doc, &ops).unwrap();
        assert_eq!(to_json(&doc).unwrap(), serde_json::json!(["x", "z"]));
    }

    #[test]
    fn errors_display_like_the_contract() {
        let e = PatchError {
            op: 2,
            verb: Some(Verb::Replace),
            path: "/spec/x".into(),
            from: false,
            kind: PatchErrorKind::NotFound { at: None },
        };
        assert_eq!(e.to_string(), "op 2 (replace /spec/x): path does not exist");
        assert!(e.kind.is_missing());
    }

    #[test]
    fn to_json_of_results_matches_the_data() {
        let out = patched(
            "a: [1]\n",
            r#"[{"op": "add", "path": "/a/0", "value": {"b": null}}]"#,
        )
        .unwrap();
        let docs = parse_stream(&out).unwrap();
        assert_eq!(
            to_json(docs[0].root.as_ref().unwrap()).unwrap(),
            serde_json::json!({"a": [{"b": null}, 1]})
        );
    }

    // ----- wildcards -----

    /// `doc` patched with `patch`, and the places each operation reached.
    fn counted(doc: &str, patch: &str) -> Result<(String, Vec<usize>), String> {
        let docs = parse_stream(doc).map_err(|e| e.to_string())?;
        let pdocs = parse_stream(patch).map_err(|e| e.to_string())?;
        let ops = parse_ops(pdocs[0].root.as_ref().unwrap()).map_err(|e| e.to_string())?;
        let mut d = docs[0].clone();
        let before = emit(&d);
        match apply_counted(d.root.as_mut().unwrap(), &ops, &Options::default()) {
            Ok(n) => Ok((emit(&d), n)),
            Err(e) => {
                assert_eq!(emit(&d), before, "changed on error");
                Err(e.to_string())
            }
        }
    }

    const PODS: &str = "\
c:
- name: a # first
  image: x
- name: b
  image: y
  env:
  - name: K
    value: v
";

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

    #[test]
    fn add_at_every_element_makes_the_list_it_appends_to() {
        let (out, n) = counted(
            PODS,
            "- {op: add, path: '/c/[*]/env/-', value: {name: CA, value: /etc/ca}}\n",
        )
        .unwrap();
        assert_eq!(n, [2]);
        assert_eq!(
            out,
            "c:\n- name: a # first\n  image: x\n  env:\n  - name: CA\n    value: /etc/ca\n- name: b\n  image: y\n  env:\n  - name: K\n    value: v\n  - name: CA\n    value: /etc/ca\n"
        );
        // A member under a missing mapping: the mappings are made.
        let (out, _) = counted(
            "c:\n- name: a\n",
            "- {op: add, path: '/c/[*]/resources/limits/cpu', value: 1}\n",
        )
        .unwrap();
        assert_eq!(
            out,
            "c:\n- name: a\n  resources:\n    limits:\n      cpu: 1\n"
        );
        // Nothing is made for a selector, or before a name that reads as a selector.
        assert_eq!(
            counted(
                PODS,
                "- {op: add, path: '/c/[*]/env/[name=K]/value', value: w}\n"
            )
            .unwrap_err(),
            "op 0 (add /c/[*]/env/[name=K]/value): at /c/0/env/[name=K]/value: path does not \
             exist (nothing at /c/0/env)"
        );
        assert!(counted(
            "c:\n- {}\n",
            "- {op: add, path: '/c/[*]/x/[a=b]', value: 1}\n"
        )
        .is_err());
        // Without a wildcard, add keeps RFC 6902's rule: the parent must exist.
        assert!(counted(PODS, "- {op: add, path: /c/0/env/-, value: 1}\n").is_err());
    }

    #[test]
    fn a_wildcard_that_selects_nothing_does_nothing() {
        for doc in ["c: []\n", "d: 1\n", "c:\n- name: a\n  env: []\n"] {
            for op in [
                "{op: add, path: '/c/[*]/x', value: 1}",
                "{op: remove, path: '/c/[*]'}",
                "{op: replace, path: '/c/[*]/name', value: 1}",
                "{op: test, path: '/c/[*]/env/[*]/name', value: 1}",
                "{op: copy, from: '/c/[*]/env/[*]', path: /d}",
                "{op: move, from: '/c/[*]/env/[*]', path: /d}",
                "{op: copy, from: /d, path: '/c/[*]/env/[*]/k'}",
            ] {
                if doc.contains("name: a") && !op.contains("env") {
                    continue;
                }
                assert_eq!(
                    counted(doc, &format!("- {op}\n")),
                    Ok((doc.to_owned(), vec![0])),
                    "{doc} {op}"
                );
            }
        }
        // A scalar where a list or mapping must be is an error, before a wildcard as after.
        assert_eq!(
            counted("c: 1\n", "- {op: remove, path: '/c/[*]/x'}\n").unwrap_err(),
            "op 0 (remove /c/[*]/x): /c is a scalar, it has no members"
        );
    }

    #[test]
    fn remove_and_replace_skip_the_places_that_lack_their_target() {
        let (out, n) = counted(PODS, "- {op: remove, path: '/c/[*]/env/[name=K]'}\n").unwrap();
        assert_eq!(n, [1]);
        assert_eq!(
            out,
            "c:\n- name: a # first\n  image: x\n- name: b\n  image: y\n  env: []\n"
        );
        let (out, n) = counted(
            PODS,
            "- {op: replace, path: '/c/[*]/env/0/value', value: w}\n",
        )
        .unwrap();
        assert_eq!(n, [1]);
        assert!(out.contains("value: w"));
        let (out, n) = counted(PODS, "- {op: replace, path: '/c/[*]/image', value: z}\n").unwrap();
        assert_eq!((out.matches("image: z").count(), n), (2, vec![2]));
        // Every element of the list itself, whatever its position.
        let (out, n) = counted("l: [a, b, c]\n", "- {op: remove, path: '/l/[*]'}\n").unwrap();
        assert_eq!((out.as_str(), n), ("l: []\n", vec![3]));
    }

    #[test]
    fn test_holds_when_it_holds_at_every_place() {
        assert_eq!(
            counted(PODS, "- {op: test, path: '/c/[*]/name', value: a}\n").unwrap_err(),
            "op 0 (test /c/[*]/name): at /c/1/name: value does not match"
        );
        let doc = "c:\n- {n: 1}\n- {n: 1.0}\n";
        assert_eq!(
            counted(doc, "- {op: test, path: '/c/[*]/n', value: 1}\n")
                .unwrap()
                .1,
            [2]
        );
        // A place below the wildcard that is missing fails the test.
        assert_eq!(
            counted(PODS, "- {op: test, path: '/c/[*]/env/0/value', value: v}\n").unwrap_err(),
            "op 0 (test /c/[*]/env/0/value): at /c/0/env/0/value: path does not exist (nothing \
             at /c/0/env)"
        );
        // Nested: every env var of every container.
        let (_, n) = counted(
            PODS,
            "- {op: test, path: '/c/[*]/env/[*]/name', value: K}\n",
        )
        .unwrap();
        assert_eq!(n, [1]);
    }

    #[test]
    fn add_before_every_element_and_the_first_failure_in_document_order() {
        let (out, n) = counted("l: [a, b]\n", "- {op: add, path: '/l/[*]', value: v}\n").unwrap();
        assert_eq!((out.as_str(), n), ("l: [v, a, v, b]\n", vec![2]));
        // Both elements fail; the error names the first.
        assert_eq!(
            counted("l: [1, 2]\n", "- {op: add, path: '/l/[*]/x', value: v}\n").unwrap_err(),
            "op 0 (add /l/[*]/x): at /l/0/x: /l/0 is a scalar, it has no members"
        );
        // All or nothing: a later operation that fails undoes the wildcard's changes.
        assert!(counted(
            PODS,
            "- {op: add, path: '/c/[*]/p', value: 1}\n- {op: remove, path: /zzz}\n"
        )
        .is_err());
    }

    #[test]
    fn move_and_copy_with_wildcards() {
        // Every value of from, in document order, to one place.
        let (out, n) = counted(
            "a: [x, y, z]\nb: [w]\n",
            "- {op: move, from: '/a/[*]', path: /b/-}\n",
        )
        .unwrap();
        assert_eq!((out.as_str(), n), ("a: []\nb: [w, x, y, z]\n", vec![3]));
        // All are taken out first, then added in document order (the emptied flow list that
        // receives them becomes block, as any does).
        let (out, _) =
            counted("a: [x, y]\n", "- {op: move, from: '/a/[*]', path: /a/0}\n").unwrap();
        assert_eq!(out, "a:\n- y\n- x\n");
        let (out, _) =
            counted("a: [x, y]\n", "- {op: copy, from: '/a/[*]', path: /a/-}\n").unwrap();
        assert_eq!(out, "a: [x, y, x, y]\n");
        // One value to every place.
        let (out, n) =
            counted(PODS, "- {op: copy, from: /c/0/image, path: '/c/[*]/old'}\n").unwrap();
        assert_eq!((out.matches("old: x").count(), n), (2, vec![2]));
        // Paired: each element's value to a place in the same element; missing ones skipped.
        let (out, n) = counted(
            PODS,
            "- {op: copy, from: '/c/[*]/env/0/value', path: '/c/[*]/first'}\n",
        )
        .unwrap();
        assert_eq!(n, [1]);
        assert!(out.ends_with("    value: v\n  first: v\n"), "{out}");
        let (out, n) = counted(
            PODS,
            "- {op: move, from: '/c/[*]/image', path: '/c/[*]/spec/image'}\n",
        )
        .unwrap();
        assert_eq!(n, [2]);
        assert!(
            out.contains("- name: a # first\n  spec:\n    image: x\n"),
            "{out}"
        );
        // Each element's list values, nested below the pairing.
        let (out, _) = counted(
            "c:\n- p: [1, 2]\n- p: [3]\n",
            "- {op: copy, from: '/c/[*]/p/[*]', path: '/c/[*]/q/-'}\n",
        )
        .unwrap();
        assert_eq!(
            out,
            "c:\n- p: [1, 2]\n  q:\n  - 1\n  - 2\n- p: [3]\n  q:\n  - 3\n"
        );
        assert_eq!(
            counted("a: [{b: 1}]\n", "- {op: move, from: '/a/[*]', path: /a/0/b/c}\n")
                .unwrap_err(),
            "op 0 (move from /a/[*]): at /a/0: a value cannot be moved into one of its own children"
        );
    }

    #[test]
    fn unpaired_wildcards_are_refused_when_the_patch_is_read() {
        let cases = [
            (
                "{op: move, from: /a, path: '/b/[*]/c'}",
                "a move takes each value",
            ),
            (
                "{op: copy, from: '/a/[*]/x', path: '/b/[*]/x'}",
                "must be the same up to",
            ),
            (
                "{op: copy, from: '/a/[*]', path: '/a/[*]/x'}",
                "both go on below",
            ),
            (
                "{op: move, from: '/a/[*]/x', path: '/a/[*]'}",
                "both go on below",
            ),
        ];
        for (op, msg) in cases {
            let text = format!("- {op}\n");
            let docs = parse_stream(&text).unwrap();
            let err = parse_ops(docs[0].root.as_ref().unwrap()).unwrap_err();
            assert!(err.to_string().contains(msg), "{op}: {err}");
        }
    }

    #[test]
    fn a_wildcard_on_a_mapping_is_a_member_name() {
        let (out, n) = counted(
            "m:\n  '[*]': 1\n",
            "- {op: replace, path: '/m/[*]', value: 2}\n",
        )
        .unwrap();
        assert_eq!((out.as_str(), n), ("m:\n  '[*]': 2\n", vec![1]));
    }

    #[test]
    fn wildcards_keep_comments_and_follow_aliases() {
        let doc = "base: &b\n  x: 1\nl:\n- *b # alias\n- y: 2 # kept\n";
        let (out, n) = counted(doc, "- {op: add, path: '/l/[*]/z', value: 3}\n").unwrap();
        assert_eq!(n, [2]);
        // The same as one operation per element.
        let (each, _) = counted(
            doc,
            "- {op: add, path: /l/0/z, value: 3}\n- {op: add, path: /l/1/z, value: 3}\n",
        )
        .unwrap();
        assert_eq!(out, each);
        assert!(out.starts_with("base: &b\n  x: 1\n") && out.ends_with("- y: 2 # kept\n  z: 3\n"));
    }

    #[test]
    fn at_a_place_every_pointer_is_below_a_wildcard() {
        let at_place = |doc: &str, patch: &str| -> Result<(String, Vec<usize>), String> {
            let mut d = parse_stream(doc).unwrap()[0].clone();
            let pdocs = parse_stream(patch).unwrap();
            let ops = parse_ops(pdocs[0].root.as_ref().unwrap()).unwrap();
            apply_at_place(d.root.as_mut().unwrap(), &ops, &Options::default())
                .map(|n| (emit(&d), n))
                .map_err(|e| e.to_string())
        };
        let container = "name: a\n";
        let (out, n) = at_place(
            container,
            "- {op: add, path: /env/-, value: {name: X}}\n- {op: remove, path: '/env/[name=Y]'}\n- {op: replace, path: /image, value: i}\n- {op: copy, from: /nope, path: /x}\n- {op: move, from: /name, path: /meta/name}\n",
        )
        .unwrap();
        assert_eq!(out, "env:\n- name: X\nmeta:\n  name: a\n");
        assert_eq!(n, [1, 0, 0, 0, 1]);
        // test still fails where the value is not there, without naming the place twice.
        assert_eq!(
            at_place(container, "- {op: test, path: /image, value: i}\n").unwrap_err(),
            "op 0 (test /image): path does not exist"
        );
        // Without wildcards or a place, RFC 6902's rules.
        assert!(counted(container, "- {op: add, path: /env/-, value: 1}\n").is_err());
    }

    /// Many operations on wide mappings, where members are found through the session's index:
    /// the result is the json-patch crate's, operation after operation, with members appended,
    /// removed, replaced, moved and copied in between.
    #[test]
    fn wide_mappings_patched_through_the_member_index_agree_with_json_patch() {
        use serde_json::{json, Value};
        struct Rng(u64);
        impl Rng {
            fn below(&mut self, n: usize) -> usize {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                (self.0 % n as u64) as usize
            }
        }
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for round in 0..200 {
            let mut data = serde_json::Map::new();
            for i in 0..40 {
                let v = if i % 7 == 0 {
                    let sub: serde_json::Map<String, Value> =
                        (0..20).map(|j| (format!("j{j}"), json!(j))).collect();
                    Value::Object(sub)
                } else {
                    json!(format!("v{i}"))
                };
                data.insert(format!("k{i}"), v);
            }
            let mut model = json!({"data": data, "list": [{"a": 1}, {"a": 2}]});
            let start = model.clone();
            let mut ops: Vec<Value> = Vec::new();
            for _ in 0..60 {
                let keys: Vec<String> = model["data"]
                    .as_object()
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default();
                let existing = |rng: &mut Rng| {
                    if keys.is_empty() {
                        "/data/none".to_owned()
                    } else {
                        let k = &keys[rng.below(keys.len())];
                        match &model["data"][k] {
                            Value::Object(sub) if !sub.is_empty() && rng.below(2) == 0 => {
                                let sk: Vec<&String> = sub.keys().collect();
                                format!("/data/{k}/{}", sk[rng.below(sk.len())])
                            }
                            _ => format!("/data/{k}"),
                        }
                    }
                };
                let fresh = format!("/data/n{}", rng.below(80));
                let op = match rng.below(7) {
                    0 | 1 => {
                        json!({"op": "add", "path": fresh, "value": format!("x{}", rng.below(9))})
                    }
                    2 => json!({"op": "remove", "path": existing(&mut rng)}),
                    3 => json!({"op": "replace", "path": existing(&mut rng), "value": {"r": 1}}),
                    4 => json!({"op": "move", "from": existing(&mut rng), "path": fresh}),
                    5 => json!({"op": "copy", "from": existing(&mut rng), "path": fresh}),
                    _ => {
                        let path = existing(&mut rng);
                        let value = model.pointer(&path).cloned().unwrap_or(Value::Null);
                        json!({"op": "test", "path": path, "value": value})
                    }
                };
                let patch: json_patch::Patch = serde_json::from_value(json!([op.clone()])).unwrap();
                let mut next = model.clone();
                if json_patch::patch_unsafe(&mut next, &patch).is_ok() {
                    model = next;
                    ops.push(op);
                }
            }
            let text = Value::Array(ops.clone()).to_string();
            let pdocs = parse_stream(&text).unwrap();
            let parsed = parse_ops(pdocs[0].root.as_ref().unwrap()).unwrap();
            let mut node = crate::yaml::from_json(&start);
            STALE_SEEN.with(|c| c.set(0));
            apply(&mut node, &parsed).unwrap_or_else(|e| panic!("round {round}: {e}\n{text}"));
            assert_eq!(to_json(&node).unwrap(), model, "round {round}: {text}");
            // The index was kept up to date, not found out of date and rebuilt.
            assert_eq!(STALE_SEEN.with(|c| c.get()), 0, "round {round}: {text}");
        }
    }

    /// The session's budgets are spent by what the operations do and refuse past their bound:
    /// key selectors' scans, shifting, copies (the first two are too slow to reach in a test
    /// through real operations in a debug build).
    #[test]
    fn the_sessions_budgets_refuse_past_their_bound() {
        let doc = crate::yaml::Node::map();
        let ops = vec![Op::Copy {
            from: Pointer::root(),
            path: Pointer::root(),
        }];
        let _session = Session::begin(&doc, &ops, false);
        assert_eq!(charge_scan(SCAN_BUDGET - 1), Ok(()));
        assert_eq!(charge_scan(1), Ok(()));
        assert_eq!(
            charge_scan(1),
            Err(PatchErrorKind::TooManyScans(SCAN_BUDGET))
        );
        assert_eq!(charge_shift(SHIFT_BUDGET), Ok(()));
        assert_eq!(
            charge_shift(1),
            Err(PatchErrorKind::TooManyShifts(SHIFT_BUDGET))
        );
        let big = crate::yaml::Node::string("x".repeat(COPY_SLACK));
        assert_eq!(
            charge_copy(&big),
            Err(PatchErrorKind::GrowsTooLarge { limit: COPY_SLACK })
        );
        drop(_session);
        // Outside a session nothing is charged.
        assert_eq!(charge_scan(usize::MAX), Ok(()));
    }
}
