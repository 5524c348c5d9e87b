//! Why a JSON patch cannot be read or applied, and where: the operation's index, its verb,
//! the pointer (`path`, or `from`) and the kind of failure, displayed as
//! `op 2 (replace /spec/x): path does not exist`.
//!
//! What it is: the error types and how failures deep in a walk become them. What it must not
//! do: decide what fails (the walks do) or name anything outside the patch (the caller adds the
//! resource and the patch's position in the config).

use std::fmt;

use super::op::{Op, Verb};
use crate::budget::BudgetError;
use crate::path::pointer::{PointerError, SelectorError};
use crate::yaml::AliasError;

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

/// Why a patch failed. Parse-time kinds come from [`parse_ops`](super::parse_ops), the others from [`patch`](super::patch).
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
    #[error("path does not exist{}", .at.as_ref().map(|a| format!(" (nothing at {})", named(a))).unwrap_or_default())]
    NotFound { at: Option<String> },
    /// A selector matched no element: a missing path, like [`NotFound`](Self::NotFound).
    #[error("path does not exist (no element of {} matches {selector})", named(.list))]
    NoMatch { list: String, selector: String },
    #[error("{} elements of {} match {selector}; a selector must match one", .count, named(.list))]
    SeveralMatches {
        list: String,
        selector: String,
        count: usize,
    },
    #[error("malformed key selector {token:?} at {}: {error}", named(.list))]
    BadSelector {
        list: String,
        token: String,
        error: SelectorError,
    },
    #[error("{} is a scalar, it has no members", named(.at))]
    NotAContainer { at: String },
    #[error("{token:?} is not an index of the list at {} (digits without leading zeros)", named(.list))]
    BadIndex { list: String, token: String },
    #[error("\"-\" names no element of the list at {} (only add may use it, to append)", named(.list))]
    EndNotAllowed { list: String },
    #[error("index {index} is out of range: the list at {} has {len} elements", named(.list))]
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
    #[error("at {}: {kind}", named(.pointer))]
    At {
        pointer: String,
        kind: Box<PatchErrorKind>,
    },
    /// The patch would pass a bound on what it may cost on the resource (places, growth,
    /// shifts, scans, rereads: see [`crate::budget`]).
    #[error("{0}")]
    Budget(BudgetError),
}

/// How a pointer is shown in a message: `""` for the whole document.
fn shown(p: &str) -> &str {
    if p.is_empty() {
        "\"\""
    } else {
        p
    }
}

/// How a pointer's target is named in a message: its pointer, or "the root".
fn named(p: &str) -> &str {
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
    pub(super) fn is_absent(&self) -> bool {
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

impl PatchError {
    /// The failure of operation `index` (`op`), about its `path` or its `from` (`which`).
    pub(super) fn of(index: usize, op: &Op<'_>, which: Which, kind: PatchErrorKind) -> PatchError {
        let (path, from) = match (which, op) {
            (Which::From, Op::Move { from, .. } | Op::Copy { from, .. }) => {
                (from.to_string(), true)
            }
            _ => (op.path().to_string(), false),
        };
        PatchError {
            op: index,
            verb: Some(op.verb()),
            path,
            from,
            kind,
        }
    }
}

impl From<BudgetError> for PatchErrorKind {
    fn from(e: BudgetError) -> Self {
        PatchErrorKind::Budget(e)
    }
}

/// Which pointer of an operation a failure is about.
#[derive(Clone, Copy)]
pub(super) enum Which {
    Path,
    From,
}

/// A failure inside an operation, before it is known which operation it is.
pub(super) type Fail = (Which, PatchErrorKind);

pub(super) fn at_path(kind: PatchErrorKind) -> Fail {
    (Which::Path, kind)
}

pub(super) fn at_from(kind: PatchErrorKind) -> Fail {
    (Which::From, kind)
}

/// A failure at one of the places a pointer with `[*]` selects, saying which.
pub(super) fn located(
    place: &crate::path::pointer::Pointer,
    kind: PatchErrorKind,
) -> PatchErrorKind {
    PatchErrorKind::At {
        pointer: place.to_string(),
        kind: Box::new(kind),
    }
}

/// Cannot happen: a route found on a tree always leads somewhere in that same tree.
pub(super) fn lost() -> PatchErrorKind {
    PatchErrorKind::NotFound { at: None }
}
