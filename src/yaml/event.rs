//! The events the tree builder reads (`builder.rs`): what a YAML reader reports, reduced to what
//! the builder uses. Two readers make them: the adapter over `granit-parser` (`granit.rs`,
//! the only code that knows that crate) and the fast reader (`fast.rs`). For any text the fast
//! reader accepts, both give the same events, field for field; that is what makes the trees,
//! and the errors, the same whichever reader ran (see `fast.rs`).
//!
//! What it must not do: carry anything a reader knows that the builder does not use (each
//! field is compared between the readers, so an unused one only makes them differ).

use std::borrow::Cow;

/// No byte offset was given: the builder uses where the previous event ended.
pub(crate) const NO_OFFSET: usize = usize::MAX;

/// One event, with where it lies in the text: a byte range and the 1-based lines of its start
/// and end.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Ev<'a> {
    pub(crate) kind: EvKind<'a>,
    pub(crate) sb: usize,
    pub(crate) eb: usize,
    pub(crate) line: usize,
    pub(crate) end_line: usize,
    /// The byte range of the node's tag token, when it has one.
    pub(crate) tag: Option<(usize, usize)>,
}

impl<'a> Ev<'a> {
    /// An event over `sb..eb`, on one line.
    pub(crate) fn at(kind: EvKind<'a>, sb: usize, eb: usize, line: usize) -> Ev<'a> {
        Ev {
            kind,
            sb,
            eb,
            line,
            end_line: line,
            tag: None,
        }
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum EvKind<'a> {
    StreamStart,
    StreamEnd,
    /// `---` was written (or the document started implicitly).
    DocStart(bool),
    DocEnd,
    /// The text after `#`; whether the comment follows something on its line (a "right"
    /// comment), which is all the builder asks of the reader's placement.
    Comment(Cow<'a, str>, bool),
    /// An anchor's id and name, after the node it is on.
    Anchor(usize, Cow<'a, str>),
    /// An alias of the anchor with this id.
    Alias(usize),
    /// A scalar's value after escape processing, and its style.
    Scalar(Cow<'a, str>, Style),
    /// A mapping or sequence starts; `true`: in flow style.
    MapStart(bool),
    SeqStart(bool),
    MapEnd,
    SeqEnd,
    /// Anything else a reader reports, which the builder ignores (it is counted all the same,
    /// so that the two readers' events line up one to one).
    Other,
}

/// How a scalar was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}
