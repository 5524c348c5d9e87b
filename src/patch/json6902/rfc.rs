//! The six operations of RFC 6902 at one pointer: `add`, `remove`, `replace`, `move`, `copy`,
//! `test`, each a small function over the document, as the RFC describes them (§4.1–§4.6).
//!
//! What it is: [`run`], one operation whose pointers hold no `[*]` (the `wildcard` module
//! resolves those first), and the operations it is made of. Each finds its way first
//! (`walk`), then changes the document in one step, so a failure changes nothing that the
//! caller's copy does not already discard. What it must not do: read `[*]`, or decide what
//! happens where a place is missing below one (the `wildcard` module does).

use super::aliases::{follow_for_change, Follow};
use super::equal::json_equal;
use super::error::{at_from, at_path, lost, Fail, PatchErrorKind};
use super::members::Change;
use super::op::Op;
use super::walk::{add_slot, child, reach, walk, Slot};
use super::Cx;
use crate::budget::Added;
use crate::path::pointer::{Pointer, Token};
use crate::yaml::anchors::{self, strip_anchors};
use crate::yaml::place::{self, replace as put_new, same_value, Keep};
use crate::yaml::{Comment, Entry, Layout, Node, MAX_DEPTH};

/// An operation's `value`, ready to go into the document: its block sequences are written as
/// the document writes its own ([`place::from_patch`]).
pub(super) fn from_patch<'p>(value: &Node<'p>) -> Node<'p> {
    let mut n = value.clone();
    place::from_patch(&mut n);
    n
}

/// One operation, its pointers without `[*]`.
pub(super) fn run<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    op: &Op<'p>,
    cx: &mut Cx<'_, 'a>,
) -> Result<(), Fail> {
    match op {
        Op::Add { path, value } => {
            add(doc, path, Lifted::bare(from_patch(value)), false, cx).map_err(at_path)
        }
        Op::Remove { path } => remove(doc, path, cx).map(drop).map_err(at_path),
        Op::Replace { path, value } => replace(doc, path, from_patch(value), cx).map_err(at_path),
        Op::Test { path, value } => test(doc, path, value, cx).map_err(at_path),
        Op::Copy { from, path } => {
            let lifted = lift_copy(doc, from, cx)?;
            add(doc, path, lifted, false, cx).map_err(at_path)
        }
        Op::Move { from, path } => mov(doc, from, path, cx),
    }
}

/// `move`: the value at `from` is removed, then added at `path`.
fn mov<'a>(
    doc: &mut Node<'a>,
    from: &Pointer,
    path: &Pointer,
    cx: &mut Cx<'_, 'a>,
) -> Result<(), Fail> {
    let into_child_ok = cx.opts.move_into_child;
    if !into_child_ok && is_proper_prefix(from.tokens(), path.tokens()) {
        return Err(at_path(PatchErrorKind::MoveIntoChild));
    }
    // Read first: a move onto itself changes nothing, one into its own children is refused.
    let read = cx.read(doc, |anchors, cx| {
        let (src, _) = match walk(doc, anchors, from, from.tokens().len(), cx) {
            Ok(found) => found,
            Err(k) => return Ok(Err(at_from(k))),
        };
        let Some(n) = path.tokens().len().checked_sub(1) else {
            return Ok(Ok(!src.steps.is_empty()));
        };
        if let Ok((dst, parent)) = walk(doc, anchors, path, n, cx) {
            if src.steps.starts_with(&dst.steps) && src.steps.len() == n + 1 {
                // Same parent: moving a member onto itself changes nothing (and must not move
                // the key to the end of its mapping).
                let parent = anchors.follow(parent);
                let last = &path.tokens()[n];
                let same = match child(parent, last, path, n, anchors, cx) {
                    Ok(i) => src.steps.last() == Some(&i),
                    Err(_) => false,
                };
                if same {
                    return Ok(Ok(false));
                }
            }
            if !into_child_ok && dst.steps.starts_with(&src.steps) {
                return Ok(Err(at_path(PatchErrorKind::MoveIntoChild)));
            }
        }
        Ok(Ok(true))
    });
    if !read.map_err(at_from)?? {
        return Ok(());
    }
    // Remove, then add: `path` is read in the document without the value, which is what
    // gives a move into the value's own children (when allowed) its meaning.
    let lifted = remove(doc, from, cx).map_err(at_from)?;
    add(doc, path, lifted, false, cx).map_err(at_path)
}

/// `test`: the value at `path` equals `value` as JSON.
pub(super) fn test<'a>(
    doc: &Node<'a>,
    path: &Pointer,
    value: &Node<'_>,
    cx: &mut Cx<'_, 'a>,
) -> Result<(), PatchErrorKind> {
    cx.read(doc, |anchors, cx| {
        let found = match walk(doc, anchors, path, path.tokens().len(), cx) {
            Ok((_, found)) => found,
            Err(PatchErrorKind::NotFound { at: None })
                if cx.opts.missing_member_reads_null && value.is_null() =>
            {
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let value_anchors = if cx.aliased {
            anchors::Anchors::view(value)
        } else {
            anchors::Anchors::default()
        };
        let mut visits = anchors::BUDGET;
        if json_equal(found, anchors, value, &value_anchors, &mut visits)? {
            Ok(())
        } else {
            Err(PatchErrorKind::TestFailed)
        }
    })
}

/// The value at `from` as `copy` carries it: a copy without anchors, with the comments before
/// its entry, which describe the value. A member missing from an existing mapping reads as
/// `null` with [`Options::missing_member_reads_null`](super::Options::missing_member_reads_null).
/// The copy is charged to the budget's growth.
pub(super) fn lift_copy<'a>(
    doc: &Node<'a>,
    from: &Pointer,
    cx: &mut Cx<'_, 'a>,
) -> Result<Lifted<'a>, Fail> {
    let n = from.tokens().len();
    let lifted = cx.read(doc, |anchors, cx| {
        let (route, found) = match walk(doc, anchors, from, n, cx) {
            Ok(found) => found,
            Err(PatchErrorKind::NotFound { at: None }) if cx.opts.missing_member_reads_null => {
                return Ok(Lifted::bare(Node::null()));
            }
            Err(e) => return Err(e),
        };
        cx.budget.grow(found.weight(), Added::Copy)?;
        let mut lifted = Lifted::bare(found.clone());
        if n > 0 {
            // The comments before the copied entry describe the value: they go with it.
            let (_, parent) = walk(doc, anchors, from, n - 1, cx)?;
            let parent = anchors.follow(parent);
            if let Some(&i) = route.steps.last() {
                if let Some(e) = parent.entries().get(i) {
                    lifted = Lifted::from_entry(e.clone());
                } else if let Some(item) = parent.items().get(i) {
                    lifted = Lifted::from_item(item.clone());
                }
            }
        }
        Ok(lifted)
    });
    let mut lifted = lifted.map_err(at_from)?;
    strip_anchors(&mut lifted.node);
    Ok(lifted)
}

/// Whether the tokens `a` name a proper ancestor of those of `b`, as text.
pub(super) fn is_proper_prefix(a: &[Token], b: &[Token]) -> bool {
    a.len() < b.len() && a.iter().zip(b).all(|(x, y)| x.text() == y.text())
}

/// A value taken from (or destined for) a place, with what belonged to the place: the comments
/// and blank lines before its entry, and the line comment of its key.
#[derive(Clone)]
pub(super) struct Lifted<'a> {
    pub(super) node: Node<'a>,
    head: Vec<Comment<'a>>,
    line: Option<Comment<'a>>,
    blank: u8,
}

impl<'a> Lifted<'a> {
    pub(super) fn bare(node: Node<'a>) -> Self {
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
    pub(super) fn into_item(self) -> Node<'a> {
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

/// `add` (RFC 6902 §4.1): `new` at `ptr`, replacing an existing member, inserted into a
/// sequence. `only_members`: only a member the mapping lacks may be added (kustomize's
/// `replace` of a missing member).
pub(super) fn add<'a>(
    doc: &mut Node<'a>,
    ptr: &Pointer,
    new: Lifted<'a>,
    only_members: bool,
    cx: &mut Cx<'_, 'a>,
) -> Result<(), PatchErrorKind> {
    let Some((tok, depth)) = ptr.tokens().last().map(|t| (t, ptr.tokens().len() - 1)) else {
        put_root(doc, new.node, cx);
        return Ok(());
    };
    if depth + 1 + new.node.depth() > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    let (route, slot) = cx.read(doc, |anchors, cx| {
        let (mut route, parent) = walk(doc, anchors, ptr, depth, cx)?;
        let parent = follow_for_change(anchors, parent, depth, &mut route.expand);
        let slot = add_slot(parent, tok, ptr, depth, anchors, cx)?;
        Ok((route, slot))
    })?;
    if only_members && !matches!(slot, Slot::NewKey(_)) {
        return Err(PatchErrorKind::NotFound { at: None });
    }
    cx.changed_anchors(None, Some(&new.node), false);
    let (parent, in_flow) = reach(doc, &route, depth, cx)?;
    let flow_was_empty =
        parent.is_flow() && parent.entries().is_empty() && parent.items().is_empty();
    if flow_was_empty && !in_flow && !new.node.is_flow() {
        // `annotations: {}` that receives its first member becomes a block mapping, at the
        // column of a `{}` written on its own line.
        place::open_empty_flow(parent);
    }
    match slot {
        Slot::Entry(i) => {
            let e = parent
                .entries_mut()
                .and_then(|es| es.get_mut(i))
                .ok_or_else(lost)?;
            // A value the member already holds stays as it is written, comments included.
            if !same_value(&e.value, &new.node) {
                if e.value.has_anchor() {
                    cx.changed_anchors(Some(&e.value), None, false);
                }
                take_place_comments(&mut e.key, new.head, new.line);
                put_new(&mut e.value, new.node, Keep::COMMENTS);
            }
            cx.members.changed(ptr, depth, Change::Replaced);
        }
        Slot::NewKey(key) => {
            let es = parent.entries_mut().ok_or_else(lost)?;
            let index = es.len();
            es.push(new.into_entry(key));
            cx.members.changed(ptr, depth, Change::Pushed(index));
        }
        Slot::Insert(i) => {
            let items = parent.items_mut().ok_or_else(lost)?;
            if i > items.len() {
                return Err(lost());
            }
            cx.budget.shift(items.len() - i)?;
            items.insert(i, new.into_item());
            cx.members.changed(ptr, depth, Change::Shifted);
        }
    }
    Ok(())
}

/// `remove` (RFC 6902 §4.2): the value at `ptr` taken out, and given back with what belonged
/// to its place.
pub(super) fn remove<'a>(
    doc: &mut Node<'a>,
    ptr: &Pointer,
    cx: &mut Cx<'_, 'a>,
) -> Result<Lifted<'a>, PatchErrorKind> {
    let Some((tok, depth)) = ptr.tokens().last().map(|t| (t, ptr.tokens().len() - 1)) else {
        return Err(PatchErrorKind::RemoveRoot);
    };
    let (route, i) = cx.read(doc, |anchors, cx| {
        let (mut route, parent) = walk(doc, anchors, ptr, depth, cx)?;
        let parent = follow_for_change(anchors, parent, depth, &mut route.expand);
        let i = child(parent, tok, ptr, depth, anchors, cx)?;
        Ok((route, i))
    })?;
    let (parent, _) = reach(doc, &route, depth, cx)?;
    let lifted = if parent.is_map() {
        let es = parent.entries_mut().ok_or_else(lost)?;
        if i >= es.len() {
            return Err(lost());
        }
        cx.budget.shift(es.len() - i - 1)?;
        let lifted = Lifted::from_entry(es.remove(i));
        cx.members.changed(ptr, depth, Change::Removed);
        cx.changed_anchors(Some(&lifted.node), None, false);
        lifted
    } else {
        let items = parent.items_mut().ok_or_else(lost)?;
        if i >= items.len() {
            return Err(lost());
        }
        cx.budget.shift(items.len() - i - 1)?;
        let lifted = Lifted::from_item(items.remove(i));
        cx.members.changed(ptr, depth, Change::Shifted);
        cx.changed_anchors(Some(&lifted.node), None, false);
        lifted
    };
    Ok(lifted)
}

/// `replace` (RFC 6902 §4.3): the value at `ptr`, which must exist, becomes `value`.
pub(super) fn replace<'a>(
    doc: &mut Node<'a>,
    ptr: &Pointer,
    value: Node<'a>,
    cx: &mut Cx<'_, 'a>,
) -> Result<(), PatchErrorKind> {
    let n = ptr.tokens().len();
    let found = cx.read(doc, |anchors, cx| {
        Ok(walk(doc, anchors, ptr, n, cx).map(|(route, _)| route))
    })?;
    match found {
        Ok(_) if n + value.depth() > MAX_DEPTH => Err(PatchErrorKind::TooDeep(MAX_DEPTH)),
        Ok(_) if n == 0 => {
            put_root(doc, value, cx);
            Ok(())
        }
        Ok(route) => {
            cx.changed_anchors(None, Some(&value), false);
            let (node, _) = reach(doc, &route, n, cx)?;
            if node.has_anchor() {
                cx.changed_anchors(Some(node), None, false);
            }
            put_new(node, value, Keep::COMMENTS);
            cx.members.changed(ptr, n - 1, Change::Replaced);
            Ok(())
        }
        Err(PatchErrorKind::NotFound { at: None }) if cx.opts.replace_adds_missing => {
            add(doc, ptr, Lifted::bare(value), true, cx)
                .map_err(|_| PatchErrorKind::NotFound { at: None })
        }
        Err(e) => Err(e),
    }
}

/// A value put at the root, where the node's layout (relative to the place it came from) must
/// give way to the root's.
fn put_root<'a>(doc: &mut Node<'a>, mut new: Node<'a>, cx: &mut Cx<'_, 'a>) {
    cx.members.changed(&Pointer::root(), 0, Change::Everything);
    cx.changed_anchors(Some(doc), Some(&new), true);
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
