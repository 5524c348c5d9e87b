//! Wildcards: one operation at every place its `[*]` select.
//!
//! What it is: a token `[*]` applied to a sequence selects every element, in `path` and in
//! `from`, at any depth, several per pointer: `/spec/containers/[*]/env/-`. An operation
//! applies at each place its `[*]` select, in document order, as if each `[*]` were that
//! element's index: [`resolve`] gives those pointers, and [`run_counted`] runs the operation at
//! them with the rules for places that are not there, which let a patch say "every container
//! gets X":
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
//! * At one of the places a patch's `at:` selected ([`super::patch_at_place`]), all of each
//!   pointer is below that place, so the rules for places below a `[*]` apply to every
//!   operation (`add /env/-` makes `env` where a container has none).
//!
//! Applied to a mapping, `[*]` is the member of that name, as in RFC 6901.
//!
//! What it must not do: change how an operation acts at one place (`rfc` does that), or visit
//! a place twice.

use super::aliases::{follow_for_change, Follow, View};
use super::error::{at_from, at_path, located, lost, Fail, PatchErrorKind, Which};
use super::op::{Op, Verb};
use super::rfc::{
    add, from_patch, is_proper_prefix, lift_copy, remove, replace, run, test, Lifted,
};
use super::walk::{add_slot, child, reach, walk, Slot};
use super::{Base, Cx};
use crate::budget::Added;
use crate::path::pointer::{is_every, Pointer, Token};
use crate::yaml::{Node, MAX_DEPTH};

/// The `[*]` of a `move` or `copy` must say which value goes where (see "Wildcards"): `path`
/// may hold `[*]` only where `from` holds the same one — the two equal up to `path`'s last
/// `[*]` and both going on below it, so that each element's value goes to a place in the same
/// element — except that a `copy` whose `from` has none copies its one value to every place.
pub(super) fn check_pairing(
    verb: Verb,
    from: &Pointer,
    path: &Pointer,
) -> Result<(), PatchErrorKind> {
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
        .tokens()
        .iter()
        .zip(path.tokens())
        .take_while(|(a, b)| a.text() == b.text())
        .count();
    if last >= shared {
        Err(PatchErrorKind::Unpaired(
            "the [*] of path must be those of from: from and path must be the same up to the \
             last [*] of path",
        ))
    } else if from.tokens().len() == last + 1 || path.tokens().len() == last + 1 {
        Err(PatchErrorKind::Unpaired(
            "from and path must both go on below the [*] they share",
        ))
    } else {
        Ok(())
    }
}

/// The pointers `ptr` stands for, in document order: `ptr` with each `[*]` replaced by the
/// index of an element and every token before its last `[*]` resolved (a sequence's by index),
/// the tokens after it as written. A list, or anything on the way to a `[*]`, that is not there
/// gives none; a scalar on the way is an error. A `[*]` applied to a mapping is the member of
/// that name, as RFC 6901 reads it. Each pointer with `[*]` stands for is a place spent from the
/// budget.
fn resolve<'p, 'a>(
    doc: &Node<'a>,
    ptr: &'p Pointer,
    cx: &mut Cx<'_, 'a>,
) -> Result<Resolved<'p>, PatchErrorKind> {
    let Some(last) = ptr.last_wildcard() else {
        return Ok(Resolved {
            ptr,
            width: 0,
            picks: Vec::new(),
            count: 1,
        });
    };
    let width = last + 1;
    let picks = cx.read(doc, |anchors, cx| {
        let mut picks = Vec::new();
        let mut prefix = Vec::with_capacity(width);
        let mut walk = Expand {
            anchors,
            ptr,
            last,
            prefix: &mut prefix,
            out: &mut picks,
        };
        walk.expand(doc, 0, cx)?;
        Ok(picks)
    })?;
    Ok(Resolved {
        ptr,
        width,
        count: picks.len() / width,
        picks,
    })
}

/// The pointers a pointer with `[*]` stands for, kept small (a place costs a word for each
/// token up to the last `[*]`, not a pointer): for each, the position each of those tokens
/// took — a sequence's index, or [`NAMED`] where the token named a mapping's member as written.
struct Resolved<'p> {
    ptr: &'p Pointer,
    /// The tokens each place resolves: those up to the last `[*]`.
    width: usize,
    /// `width` positions for each place, in document order.
    picks: Vec<usize>,
    count: usize,
}

/// In [`Resolved::picks`]: the token named a mapping's member, as written.
const NAMED: usize = usize::MAX;

impl Resolved<'_> {
    fn len(&self) -> usize {
        self.count
    }

    fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The positions place `i` took for its first `n` tokens.
    fn picks(&self, i: usize, n: usize) -> &[usize] {
        let at = i * self.width;
        self.picks
            .get(at..at + n.min(self.width))
            .unwrap_or_default()
    }

    /// Place `i` as a pointer.
    fn pointer(&self, i: usize) -> Pointer {
        let tokens = self.ptr.tokens();
        let head = self
            .picks(i, self.width)
            .iter()
            .zip(tokens)
            .map(|(&pick, tok)| match pick {
                NAMED => tok.clone(),
                index => Token::Index(index),
            });
        let tail = tokens.get(self.width..).unwrap_or_default().iter().cloned();
        Pointer::from_tokens(head.chain(tail).collect())
    }
}

/// The walk [`resolve`] takes.
struct Expand<'w, 'v, 'a> {
    anchors: &'w View<'v, 'a>,
    ptr: &'w Pointer,
    last: usize,
    prefix: &'w mut Vec<usize>,
    out: &'w mut Vec<usize>,
}

impl<'a> Expand<'_, '_, 'a> {
    /// The places below `node`, reached by the `depth` tokens in `prefix`. Recursion is as deep
    /// as the document's nesting: each level descends one level of it.
    fn expand(
        &mut self,
        node: &Node<'a>,
        depth: usize,
        cx: &mut Cx<'_, 'a>,
    ) -> Result<(), PatchErrorKind> {
        let Some(tok) = self.ptr.tokens().get(depth).filter(|_| depth <= self.last) else {
            cx.budget.place()?;
            self.out.extend_from_slice(self.prefix);
            return Ok(());
        };
        let node = self.anchors.follow(node);
        if is_every(tok) && node.is_seq() {
            for (i, item) in node.items().iter().enumerate() {
                self.prefix.push(i);
                self.expand(item, depth + 1, cx)?;
                self.prefix.pop();
            }
            return Ok(());
        }
        let i = match child(node, tok, self.ptr, depth, self.anchors, cx) {
            Ok(i) => i,
            Err(k) if k.is_absent() => return Ok(()),
            Err(k) => return Err(k),
        };
        let (next, pick) = if node.is_seq() {
            (node.items().get(i), i)
        } else {
            (node.entries().get(i).map(|e| &e.value), NAMED)
        };
        let next = next.ok_or_else(lost)?;
        self.prefix.push(pick);
        self.expand(next, depth + 1, cx)?;
        self.prefix.pop();
        Ok(())
    }
}

/// Runs one operation at every place it selects, and says at how many it acted (see
/// "Wildcards"). An operation without `[*]` is [`run`] as it is, unless all of it is below one
/// (at an `at:` place).
pub(super) fn run_counted<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    op: &Op<'p>,
    cx: &mut Cx<'_, 'a>,
    base: Base,
) -> Result<usize, Fail> {
    let from = match op {
        Op::Move { from, .. } | Op::Copy { from, .. } => Some(from),
        _ => None,
    };
    let wild = from.is_some_and(Pointer::has_wildcard) || op.path().has_wildcard();
    if base == Base::Root && !wild {
        return run(doc, op, cx).map(|()| 1);
    }
    // A failure at the place the operation names as written needs no "at".
    run_places(doc, op, cx, base).map_err(|(which, kind)| match kind {
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
    cx: &mut Cx<'_, 'a>,
    base: Base,
) -> Result<usize, Fail> {
    // Where `add` starts making missing members: below the last `[*]`, or the whole pointer at
    // a place.
    let below = |p: &Pointer| p.last_wildcard().map_or(0, |w| w + 1);
    match op {
        Op::Test { path, value } => {
            let places = resolve(doc, path, cx).map_err(at_path)?;
            for i in 0..places.len() {
                let p = places.pointer(i);
                test(doc, &p, value, cx).map_err(|k| at_path(located(&p, k)))?;
            }
            Ok(places.len())
        }
        Op::Add { path, value } => {
            let value = Lifted::bare(from_patch(value));
            spread(doc, path, &value, below(path), cx)
        }
        Op::Remove { path } => backwards(doc, path, cx, |doc, p, cx| {
            unless_absent(remove(doc, p, cx).map(drop))
        }),
        Op::Replace { path, value } => {
            let weight = value.weight();
            let value = from_patch(value);
            backwards(doc, path, cx, |doc, p, cx| {
                let acted = unless_absent(replace(doc, p, value.clone(), cx))?;
                if acted {
                    cx.budget.grow(weight, Added::AtPlaces)?;
                }
                Ok(acted)
            })
        }
        Op::Copy { from, path } if !from.has_wildcard() && path.has_wildcard() => {
            // No place, nothing to copy: `from` is read only when there is somewhere to put it.
            if resolve(doc, path, cx).map_err(at_path)?.is_empty() {
                return Ok(0);
            }
            if base == Base::Place && !exists(doc, from, cx).map_err(at_from)? {
                return Ok(0);
            }
            let lifted = lift_copy(doc, from, cx)?;
            spread(doc, path, &lifted, below(path), cx)
        }
        Op::Move { from, path } | Op::Copy { from, path } => {
            let moves = matches!(op, Op::Move { .. });
            let Some(last) = path.last_wildcard() else {
                let below = (base == Base::Place).then_some(0);
                return carry(doc, moves, from, path, below, cx);
            };
            // The `[*]` that `from` and `path` share (`check_pairing`) bind one element for
            // both: each binding is an operation within that element.
            let shared = path.joined(last + 1, path, path.tokens().len());
            let bindings = resolve(doc, &shared, cx).map_err(at_path)?;
            let mut n = 0;
            for i in 0..bindings.len() {
                let b = bindings.pointer(i);
                let (f, p) = (
                    b.joined(last + 1, from, last + 1),
                    b.joined(last + 1, path, last + 1),
                );
                n += carry(doc, moves, &f, &p, Some(last + 1), cx)?;
            }
            Ok(n)
        }
    }
}

/// Whether `ptr` names something in `doc`: false when it is not there (a member, an element),
/// an error when the document has another shape than the pointer says.
fn exists<'a>(doc: &Node<'a>, ptr: &Pointer, cx: &mut Cx<'_, 'a>) -> Result<bool, PatchErrorKind> {
    cx.read(doc, |anchors, cx| {
        match walk(doc, anchors, ptr, ptr.tokens().len(), cx) {
            Ok(_) => Ok(true),
            Err(k) if k.is_absent() => Ok(false),
            Err(k) => Err(k),
        }
    })
}

/// `f` at every place `path` selects, last place first, so that adding or removing an element
/// of a list the places share leaves the positions of the places still to come as they were;
/// `f` says whether it acted. The failure reported is the first in document order.
fn backwards<'a>(
    doc: &mut Node<'a>,
    path: &Pointer,
    cx: &mut Cx<'_, 'a>,
    mut f: impl FnMut(&mut Node<'a>, &Pointer, &mut Cx<'_, 'a>) -> Result<bool, PatchErrorKind>,
) -> Result<usize, Fail> {
    let places = resolve(doc, path, cx).map_err(at_path)?;
    let mut acted = 0;
    let mut failed = None;
    for i in (0..places.len()).rev() {
        let p = places.pointer(i);
        match f(doc, &p, cx) {
            Ok(true) => acted += 1,
            Ok(false) => {}
            // Past a bound, nothing further can succeed: the first place that passed it is
            // named.
            Err(k @ PatchErrorKind::Budget(_)) => return Err(at_path(located(&p, k))),
            // The document is dropped on failure; going on finds the earlier failures.
            Err(k) => failed = Some(at_path(located(&p, k))),
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(acted),
    }
}

/// Adds `value` at every place `path` selects (`add`, and `copy` from one place), making the
/// missing members from token `below` on; each copy of the value is charged to the budget's
/// growth. When that `[*]` is the last token, the places are the elements of lists, and each
/// list is rebuilt once with a copy of the value before each of its elements (one insertion at
/// a time would move the list's tail once per element).
fn spread<'a>(
    doc: &mut Node<'a>,
    path: &Pointer,
    value: &Lifted<'a>,
    below: usize,
    cx: &mut Cx<'_, 'a>,
) -> Result<usize, Fail> {
    let weight = value.node.weight();
    let last = match path.last_wildcard() {
        Some(last) if last + 1 == path.tokens().len() => last,
        _ => {
            return backwards(doc, path, cx, |doc, p, cx| {
                cx.budget.grow(weight, Added::AtPlaces)?;
                make_parents(doc, p, below, cx)?;
                add(doc, p, value.clone(), false, cx).map(|()| true)
            })
        }
    };
    let places = resolve(doc, path, cx).map_err(at_path)?;
    let mut first = 0;
    while first < places.len() {
        // The places in one list: those that share every token before the last `[*]`.
        let list = places.picks(first, last);
        let end = (first..places.len())
            .find(|&i| places.picks(i, last) != list)
            .unwrap_or(places.len());
        let at = places.pointer(first);
        let parent = at.joined(last, path, path.tokens().len());
        cx.budget
            .grow(weight.saturating_mul(end - first), Added::AtPlaces)
            .map_err(|e| at_path(located(&at, e.into())))?;
        before_each(doc, &parent, value, cx).map_err(|k| at_path(located(&at, k)))?;
        first = end;
    }
    Ok(places.len())
}

/// Puts a copy of `value` before each element of the list at `list`.
fn before_each<'a>(
    doc: &mut Node<'a>,
    list: &Pointer,
    value: &Lifted<'a>,
    cx: &mut Cx<'_, 'a>,
) -> Result<(), PatchErrorKind> {
    let depth = list.tokens().len();
    if depth + 1 + value.node.depth() > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    let route = cx.read(doc, |anchors, cx| {
        let (mut route, node) = walk(doc, anchors, list, depth, cx)?;
        follow_for_change(anchors, node, depth, &mut route.expand);
        Ok(route)
    })?;
    cx.changed_anchors(None, Some(&value.node), false);
    let (node, _) = reach(doc, &route, depth, cx)?;
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
    cx: &mut Cx<'_, 'a>,
) -> Result<(), PatchErrorKind> {
    let Some((tok, depth)) = path.tokens().last().map(|t| (t, path.tokens().len() - 1)) else {
        return match values.pop() {
            Some(v) => add(doc, path, v, false, cx),
            None => Ok(()),
        };
    };
    let deepest = values.iter().map(|v| v.node.depth()).max().unwrap_or(0);
    if depth + 1 + deepest > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    let (route, slot) = cx.read(doc, |anchors, cx| {
        let (mut route, parent) = walk(doc, anchors, path, depth, cx)?;
        let parent = follow_for_change(anchors, parent, depth, &mut route.expand);
        Ok((route, add_slot(parent, tok, path, depth, anchors, cx)?))
    })?;
    let Slot::Insert(i) = slot else {
        return match values.pop() {
            Some(v) => add(doc, path, v, false, cx),
            None => Ok(()),
        };
    };
    if !matches!(tok, Token::End) {
        values.reverse();
    }
    for v in &values {
        cx.changed_anchors(None, Some(&v.node), false);
    }
    let (parent, in_flow) = reach(doc, &route, depth, cx)?;
    let was_empty = parent.is_flow() && parent.items().is_empty();
    if was_empty && !in_flow && values.first().is_some_and(|v| !v.node.is_flow()) {
        crate::yaml::place::open_empty_flow(parent);
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
fn make_parents<'a>(
    doc: &mut Node<'a>,
    ptr: &Pointer,
    below: usize,
    cx: &mut Cx<'_, 'a>,
) -> Result<(), PatchErrorKind> {
    let parent = ptr.tokens().len().saturating_sub(1);
    if parent <= below || reads(doc, ptr, parent, cx)?.is_ok() {
        return Ok(());
    }
    for d in below..parent {
        let (Some(tok), Some(next)) = (ptr.tokens().get(d), ptr.tokens().get(d + 1)) else {
            return Ok(());
        };
        let here = ptr.joined(d + 1, ptr, ptr.tokens().len());
        match reads(doc, &here, d + 1, cx)? {
            Ok(()) => continue,
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
        add(doc, &here, Lifted::bare(made), false, cx)?;
    }
    Ok(())
}

/// Whether the first `upto` tokens of `ptr` lead somewhere in `doc` (inside: why not); outside,
/// a failure to follow the document's aliases at all.
fn reads<'a>(
    doc: &Node<'a>,
    ptr: &Pointer,
    upto: usize,
    cx: &mut Cx<'_, 'a>,
) -> Result<Result<(), PatchErrorKind>, PatchErrorKind> {
    cx.read(doc, |anchors, cx| {
        Ok(walk(doc, anchors, ptr, upto, cx).map(drop))
    })
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
    cx: &mut Cx<'_, 'a>,
) -> Result<usize, Fail> {
    let at = |which: Which, p: &Pointer, k| match below {
        Some(_) => (which, located(p, k)),
        None => (which, k),
    };
    if !from.has_wildcard() {
        if let Some(b) = below {
            match exists(doc, from, cx) {
                Ok(true) => {}
                Ok(false) => return Ok(0),
                Err(k) => return Err(at(Which::From, from, k)),
            }
            make_parents(doc, path, b, cx).map_err(|k| at(Which::Path, path, k))?;
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
        return run(doc, &op, cx)
            .map(|()| 1)
            .map_err(|(which, k)| match which {
                Which::From => at(which, from, k),
                Which::Path => at(which, path, k),
            });
    }
    let sources = resolve(doc, from, cx).map_err(at_from)?;
    let mut values = Vec::with_capacity(sources.len());
    if moves {
        if !cx.opts.move_into_child {
            for i in 0..sources.len() {
                let s = sources.pointer(i);
                if moves_into_itself(doc, &s, path, cx).map_err(at_from)? {
                    return Err(at_from(located(&s, PatchErrorKind::MoveIntoChild)));
                }
            }
        }
        for i in (0..sources.len()).rev() {
            let p = sources.pointer(i);
            match remove(doc, &p, cx) {
                Ok(v) => values.push(v),
                Err(k) if k.is_absent() => {}
                Err(k) => return Err(at_from(located(&p, k))),
            }
        }
        values.reverse();
    } else {
        for i in 0..sources.len() {
            let p = sources.pointer(i);
            match lift_copy(doc, &p, cx) {
                Ok(v) => values.push(v),
                Err((_, k)) if k.is_absent() => {}
                Err((which, k)) => return Err((which, located(&p, k))),
            }
        }
    }
    if values.is_empty() {
        return Ok(0);
    }
    if let Some(b) = below {
        make_parents(doc, path, b, cx).map_err(|k| at(Which::Path, path, k))?;
    }
    let n = values.len();
    add_all(doc, path, values, cx).map_err(|k| at(Which::Path, path, k))?;
    Ok(n)
}

/// Whether `path` lies inside the value at `from`, as written or as the two resolve.
fn moves_into_itself<'a>(
    doc: &Node<'a>,
    from: &Pointer,
    path: &Pointer,
    cx: &mut Cx<'_, 'a>,
) -> Result<bool, PatchErrorKind> {
    if is_proper_prefix(from.tokens(), path.tokens()) {
        return Ok(true);
    }
    cx.read(doc, |anchors, cx| {
        let Ok((src, _)) = walk(doc, anchors, from, from.tokens().len(), cx) else {
            return Ok(false);
        };
        let parent = path.tokens().len().saturating_sub(1);
        Ok(matches!(walk(doc, anchors, path, parent, cx), Ok((dst, _)) if dst.steps.starts_with(&src.steps)))
    })
}
