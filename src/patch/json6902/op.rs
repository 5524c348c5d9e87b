//! The operations of a JSON patch, and reading them from a YAML or JSON document.
//!
//! What it is: [`Op`], one operation with what it needs (no invalid combination: a `move` has a
//! `from`, a `test` a value), and [`parse_ops`], which reads a patch once so that it applies to
//! any number of documents. What it must not do: look at a document.

use super::error::{PatchError, PatchErrorKind};
use super::wildcard;
use crate::path::pointer::{Pointer, PointerUse};
use crate::yaml::anchors::detached;
use crate::yaml::Node;
use std::fmt;

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

impl<'p> Op<'p> {
    /// What the operation does at each of its pointers, `from` first: how a reader of the patch
    /// that is not the patch itself (the schema check) takes it.
    pub fn pointers(&self) -> impl Iterator<Item = (&Pointer, PointerUse<&Node<'p>>)> {
        let (first, then) = match self {
            Op::Add { path, value } | Op::Replace { path, value } => {
                ((path, PointerUse::Put(value)), None)
            }
            Op::Remove { path } => ((path, PointerUse::Remove), None),
            Op::Move { from, path } => (
                (from, PointerUse::Remove),
                Some((path, PointerUse::Receive)),
            ),
            Op::Copy { from, path } => {
                ((from, PointerUse::Read), Some((path, PointerUse::Receive)))
            }
            Op::Test { path, .. } => ((path, PointerUse::Compare), None),
        };
        std::iter::once(first).chain(then)
    }
}

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
            wildcard::check_pairing(verb, &from, &path).map_err(|k| fail(err.clone(), k))?;
            Op::Move { from, path }
        }
        Verb::Copy => {
            let from = from()?;
            wildcard::check_pairing(verb, &from, &path).map_err(|k| fail(err.clone(), k))?;
            Op::Copy { from, path }
        }
        Verb::Test => Op::Test {
            path,
            value: value()?,
        },
    })
}
