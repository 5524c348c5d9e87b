//! Finding a pointer's target on a document: which child each token names, read-only, then
//! reaching the place found to change it.
//!
//! What it is: [`walk`] follows a pointer's tokens from the root and gives the [`Route`] it
//! took (the child taken at each step, and the aliases on the way that must become copies
//! before anything below them changes); [`reach`] follows a route for changing; [`add_slot`]
//! says where `add` puts a value. How a token reads depends on what it is applied to: on a
//! mapping every token is a member name, on a sequence an index, `-` or a key selector. What it
//! must not do: change anything while it finds its way ([`reach`] changes only the aliases a
//! route says become copies), or know what the operation is.

use super::aliases::{follow_for_change, Follow, View};
use super::error::{lost, PatchErrorKind};
use super::members::Members;
use super::Cx;
use crate::budget::Added;
use crate::path::pointer::{Pointer, Selector, Token, EVERY};
use crate::yaml::anchors::put_copy;
use crate::yaml::{Kind, Node, MAX_DEPTH};

/// The route to a node: the child taken at each step (an entry index in a mapping, an item
/// index in a sequence), found without changing anything.
#[derive(Default)]
pub(super) struct Route {
    pub(super) steps: Vec<usize>,
    /// Aliases on the way, by the number of steps that reach them: each must become a copy of
    /// its anchored node before anything below it changes.
    pub(super) expand: Vec<usize>,
}

/// Follows the first `upto` tokens of `ptr` from `root`; every one must name an existing child.
pub(super) fn walk<'n, 'a>(
    root: &'n Node<'a>,
    anchors: &'n View<'_, 'a>,
    ptr: &Pointer,
    upto: usize,
    cx: &mut Cx<'_, 'a>,
) -> Result<(Route, &'n Node<'a>), PatchErrorKind> {
    let mut route = Route::default();
    let mut cur = root;
    for (depth, tok) in ptr.tokens().iter().take(upto).enumerate() {
        cur = follow_for_change(anchors, cur, depth, &mut route.expand);
        let i = child(cur, tok, ptr, depth, anchors, cx)?;
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
pub(super) fn child<'a>(
    node: &Node<'a>,
    tok: &Token,
    ptr: &Pointer,
    depth: usize,
    anchors: &View<'_, 'a>,
    cx: &mut Cx<'_, 'a>,
) -> Result<usize, PatchErrorKind> {
    let missing = || PatchErrorKind::NotFound {
        at: (depth + 1 < ptr.tokens().len()).then(|| ptr.prefix(depth + 1)),
    };
    match node.kind() {
        Kind::Map => {
            wide_lookup(node, cx)?;
            cx.members
                .position(node, ptr, depth, &tok.text())
                .ok_or_else(missing)
        }
        Kind::Seq => match seq_position(node, tok, ptr, depth, anchors, cx)? {
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

/// A member looked up in a wide mapping of a document with aliases, where the run keeps no
/// index of members (one mapping is reached by several pointers): the scan is spent from the
/// budget, as a key selector's is, so that many places reached through aliases that each cross
/// a wide mapping cannot take minutes.
fn wide_lookup(map: &Node<'_>, cx: &mut Cx<'_, '_>) -> Result<(), PatchErrorKind> {
    let width = map.entries().len();
    if cx.aliased && width > Members::INDEX_FROM {
        cx.budget.scan(width)?;
    }
    Ok(())
}

/// What a token means in a sequence: `Some(index)` (maybe out of range), `None` for `-`.
fn seq_position<'a>(
    seq: &Node<'a>,
    tok: &Token,
    ptr: &Pointer,
    depth: usize,
    anchors: &View<'_, 'a>,
    cx: &mut Cx<'_, 'a>,
) -> Result<Option<usize>, PatchErrorKind> {
    let list = || ptr.prefix(depth);
    match tok {
        Token::Index(i) => Ok(Some(*i)),
        Token::End => Ok(None),
        // Operations resolve their `[*]` to indexes before they walk (`wildcard`): one left
        // here stands for no one element.
        Token::Every => Err(PatchErrorKind::BadIndex {
            list: list(),
            token: EVERY.to_owned(),
        }),
        Token::Select(sel) => {
            cx.budget.scan(seq.items().len())?;
            let mut hits = seq
                .items()
                .iter()
                .enumerate()
                .filter(|(_, item)| selects(sel, item, anchors))
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
                return seq_position(seq, &read, ptr, depth, anchors, cx);
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

/// True when `item` (with aliases followed through `anchors`) is a mapping whose fields have
/// the selector's values.
fn selects<'a>(sel: &Selector, item: &Node<'a>, anchors: &View<'_, 'a>) -> bool {
    let item = anchors.follow(item);
    item.is_map()
        && sel.fields().iter().all(|(k, v)| {
            item.get(k)
                .map(|n| anchors.follow(n))
                .and_then(Node::as_str)
                .is_some_and(|text| text == v)
        })
}

/// The node at `route`'s first `depth` steps, for changing; aliases on the way (and the node
/// itself, if it is one the route expands) become copies of their anchored nodes, charged to
/// the budget's growth and bounded in nesting. Also tells whether the node sits inside a flow
/// collection, and notes a change inside an anchored node (the run's copies of the anchored
/// nodes are then out of date).
pub(super) fn reach<'d, 'a>(
    root: &'d mut Node<'a>,
    route: &Route,
    depth: usize,
    cx: &mut Cx<'_, 'a>,
) -> Result<(&'d mut Node<'a>, bool), PatchErrorKind> {
    let mut cur = root;
    let mut in_flow = false;
    let mut through_anchor = false;
    for d in 0..=depth {
        if route.expand.contains(&d) && cur.kind() == Kind::Alias {
            let copy = cx
                .aliases
                .as_ref()
                .and_then(|t| t.copy_for(cur))
                .ok_or_else(lost)?;
            if d + copy.depth() > MAX_DEPTH {
                return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
            }
            cx.budget.grow(copy.weight(), Added::AliasCopy)?;
            put_copy(cur, copy);
        }
        through_anchor |= cx.aliased && cur.anchor().is_some();
        if d == depth {
            break;
        }
        in_flow |= cur.is_flow();
        let i = *route.steps.get(d).ok_or_else(lost)?;
        cur = if cur.is_map() {
            cur.entries_mut()
                .and_then(|es| es.get_mut(i))
                .map(|e| &mut e.value)
        } else {
            cur.items_mut().and_then(|items| items.get_mut(i))
        }
        .ok_or_else(lost)?;
    }
    if through_anchor {
        cx.changed_anchors(None, None, true);
    }
    Ok((cur, in_flow))
}

/// Where `add` puts a value in a container.
pub(super) enum Slot {
    /// The existing member at this entry index: its value is replaced.
    Entry(usize),
    /// A new member, appended.
    NewKey(String),
    /// Inserted at this index of a sequence.
    Insert(usize),
}

/// Where `add` puts the value that the token after `depth` tokens of `ptr` names in `parent`.
pub(super) fn add_slot<'a>(
    parent: &Node<'a>,
    tok: &Token,
    ptr: &Pointer,
    depth: usize,
    anchors: &View<'_, 'a>,
    cx: &mut Cx<'_, 'a>,
) -> Result<Slot, PatchErrorKind> {
    match parent.kind() {
        Kind::Map => {
            wide_lookup(parent, cx)?;
            let key = tok.text();
            Ok(match cx.members.position(parent, ptr, depth, &key) {
                Some(i) => Slot::Entry(i),
                None => Slot::NewKey(key),
            })
        }
        Kind::Seq => {
            let len = parent.items().len();
            match seq_position(parent, tok, ptr, depth, anchors, cx)? {
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
