//! Anchors and aliases: the one home of the alias plumbing that the walkers share.
//!
//! What it is:
//! * questions about a whole tree: [`Node::has_alias`], [`Node::has_anchor`], and
//!   [`first_dangling`] (an alias that names no anchor before it);
//! * expansion, which makes a tree of data out of a patch or a config ([`Node::expand_aliases`],
//!   [`detached`]): every alias becomes a copy of its anchored node, written canonically where
//!   the alias stood;
//! * [`Anchors`], the anchored nodes of a resource by name ([`anchors_of`] keeps copies,
//!   [`Anchors::view`] borrows), which the walkers follow to read through an alias and
//!   materialise to change one ([`Anchors::materialize`]): merging into an alias first makes it
//!   a copy of its anchored node, so that only that place changes and the anchor, with every
//!   other alias of it, keeps its value. A materialised copy keeps the anchored node's layout
//!   and the alias's comments ([`put_copy`]);
//! * [`strip_anchors`]: a copy carried into another tree drops its anchors, which there could
//!   capture the tree's later aliases;
//! * [`BUDGET`], the one bound on the nodes any of this may copy or visit.
//!
//! # Patches and aliases
//!
//! The contract between whoever reads patches and the walkers: **a patch reaches a walker with
//! its aliases expanded.** The functionConfig reader ([`crate::config::plan`]) expands every
//! patch document once, as it reads it, under one budget for the whole config; no walker
//! expands a patch node by node, nor again for every resource it patches. A library caller whose
//! patch may hold aliases expands it once, before patching any number of resources with it
//! (`patch.expand_aliases(BUDGET)`, or [`detached`], which also drops its anchors), or hands it
//! as it is to an entry point that copies its patch anyway: `jsonmerge::merge` and
//! `json6902::parse_ops` (through [`detached`]) and `apply::apply` (which copies its local
//! configuration to write the annotation) expand aliases in that one copy, and a patch without
//! aliases costs them a scan and no copy. merge2 and merge3 take a patch as it is: an alias in
//! it goes into the resource as written, with its anchor when that comes along too.
//!
//! A patch's anchors: `config` drops them once it has expanded the aliases, so a planned patch
//! carries none; for a library caller's patch, jsonmerge and json6902 drop them from what they
//! carry into a resource, and merge2, merge3 and apply carry them.
//!
//! What it must not do: decide when a walker reads through an alias or changes one (the walkers
//! do), expand a resource's aliases (resources keep their aliases; only the place a patch
//! changes becomes a copy), or know about Kubernetes.

use std::borrow::{Borrow, Cow};

use super::place::{put, Keep};
use super::{flags, Comments, Layout, Node, Repr};
use crate::hash::HashMap;

/// The one bound on alias handling: the most nodes that the copies [`anchors_of`] keeps may hold
/// together, that expanding a patch's aliases may make ([`detached`], apply's local
/// configuration), and that json6902 may visit when it compares values through aliases.
///
/// Why a million: it is the number the functionConfig's own budget has for all its patches
/// together, so no walker refuses for its size a patch the config accepted; it is far above what
/// real resources hold, and a million nodes is some 40 MB of tree (a node is at most 40 bytes,
/// before its text), which a function run can afford; and an alias bomb, a few hundred bytes
/// that ask for billions of nodes, fails at once rather than after filling memory.
pub const BUDGET: usize = 1_000_000;

/// Aliases that cannot be expanded, or anchored nodes too large to copy.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AliasError {
    #[error("alias *{0} refers to no anchor defined before it")]
    Unknown(String),
    #[error("expanding aliases would make more than {0} nodes (an alias bomb?)")]
    TooLarge(usize),
    /// The copies of a resource's anchored nodes that merging into its aliases needs would
    /// hold too many nodes (anchors nested in anchors).
    #[error(
        "its anchored nodes, nested in one another, hold more than {0} nodes (an alias bomb?)"
    )]
    AnchorsTooLarge(usize),
}

impl<'a> Node<'a> {
    /// Whether an alias is anywhere in this tree.
    pub fn has_alias(&self) -> bool {
        match &self.repr {
            Repr::Alias { .. } => true,
            Repr::Seq { items, .. } => items.iter().any(Node::has_alias),
            Repr::Map { entries, .. } => entries
                .iter()
                .any(|e| e.key.has_alias() || e.value.has_alias()),
            Repr::Scalar { .. } => false,
        }
    }

    /// Whether an anchor is anywhere in this tree.
    pub fn has_anchor(&self) -> bool {
        self.anchor().is_some() || children(self).any(Node::has_anchor)
    }

    /// Replaces every alias with a copy of the node its anchor names (the closest anchor of that
    /// name before it, in document order). Fails, changing nothing, when an alias names no
    /// anchor or when the result would exceed `budget` nodes (the walkers' budget is
    /// [`BUDGET`]; the functionConfig reader shares one among all its documents).
    ///
    /// Each copy is written canonically where the alias stood, with the alias's comments when it
    /// has some: the expanded tree is data to be carried elsewhere, not a resource whose layout
    /// is kept (compare [`put_copy`]).
    pub fn expand_aliases(&mut self, budget: usize) -> Result<(), AliasError> {
        if !self.has_alias() {
            return Ok(());
        }
        let mut copy = self.clone();
        let mut anchors = Anchors::default();
        let mut count = 0usize;
        copy.expand_in(&mut anchors, &mut count, budget)?;
        *self = copy;
        Ok(())
    }

    /// Expands the aliases below this node, in document order: `anchors` holds the expanded
    /// anchored nodes met so far, so the last of a name is the closest before the alias.
    fn expand_in(
        &mut self,
        anchors: &mut Anchors<Node<'a>>,
        count: &mut usize,
        budget: usize,
    ) -> Result<(), AliasError> {
        if let Repr::Alias { name, .. } = &self.repr {
            let target = anchors
                .get(name)
                .cloned()
                .ok_or_else(|| AliasError::Unknown(name.to_string()))?;
            *count += target.node_count();
            if *count > budget {
                return Err(AliasError::TooLarge(budget));
            }
            let lay = self.layout();
            let comments = self.ext.take().map(|e| e.comments);
            *self = target;
            self.set_anchor(None);
            *self.layout_mut() = Layout {
                flags: lay.flags & !flags::SOURCE,
                ..lay
            };
            if let Some(c) = comments {
                *self.comments_mut() = c;
            }
            return Ok(());
        }
        *count += 1;
        if *count > budget {
            return Err(AliasError::TooLarge(budget));
        }
        self.touch();
        match &mut self.repr {
            Repr::Seq { items, .. } => {
                for i in items {
                    i.expand_in(anchors, count, budget)?;
                }
            }
            Repr::Map { entries, .. } => {
                for e in entries {
                    e.key.expand_in(anchors, count, budget)?;
                    e.value.expand_in(anchors, count, budget)?;
                }
            }
            Repr::Scalar { .. } | Repr::Alias { .. } => {}
        }
        if self.anchor().is_some() {
            // The copy kept for later aliases counts too: anchors nested in anchors copy the
            // inner nodes once per level, which a small input can make quadratic.
            *count = count.saturating_add(self.node_count());
            if *count > budget {
                return Err(AliasError::TooLarge(budget));
            }
            anchors.push(self.clone());
        }
        Ok(())
    }
}

/// The children of a node in document order: each entry's key then its value, or the items.
fn children<'n, 'a>(node: &'n Node<'a>) -> impl Iterator<Item = &'n Node<'a>> {
    node.entries()
        .iter()
        .flat_map(|e| [&e.key, &e.value])
        .chain(node.items())
}

/// The anchored nodes of a tree, found by name: what its aliases stand for.
///
/// `N` is `Node<'a>` for copies ([`anchors_of`]), which a walker needs when it changes the tree
/// while it follows its aliases (merge2, merge3, apply, jsonmerge), or `&Node<'a>` for a view
/// ([`Anchors::view`]) of a tree that is only read meanwhile (json6902 finds its way through a
/// document before it changes anything).
///
/// A name anchored more than once stands for its last node in document order. YAML's rule is
/// the closest anchor before the alias; the two differ only where a resource reuses a name, and
/// there an alias before the last anchor of its name is read as that last one.
pub struct Anchors<N> {
    /// The anchored nodes, in document order.
    nodes: Vec<N>,
    /// Each name's last anchored node, by its index in `nodes`.
    by_name: HashMap<String, usize>,
}

impl<N> Default for Anchors<N> {
    /// No anchored nodes: for a tree without aliases, where there is nothing to follow.
    fn default() -> Self {
        Anchors {
            nodes: Vec::new(),
            by_name: HashMap::default(),
        }
    }
}

impl<'a, N: Borrow<Node<'a>>> Anchors<N> {
    /// Adds an anchored node after those already held; not anchored, it is left out.
    fn push(&mut self, node: N) {
        if let Some(name) = node.borrow().anchor() {
            self.by_name.insert(name.to_owned(), self.nodes.len());
            self.nodes.push(node);
        }
    }

    /// The node anchored as `name`.
    pub fn get(&self, name: &str) -> Option<&Node<'a>> {
        let i = *self.by_name.get(name)?;
        self.nodes.get(i).map(Borrow::borrow)
    }

    /// What `node` stands for: an alias's anchored node, any other node (or an alias whose
    /// anchor is not among these) itself.
    pub fn follow<'s>(&'s self, node: &'s Node<'a>) -> &'s Node<'a> {
        node.alias_name()
            .and_then(|name| self.get(name))
            .unwrap_or(node)
    }

    /// The copy of its anchored node that the alias `alias` becomes before something below it
    /// changes, without anchors (the originals keep theirs); `None` when `alias` is no alias or
    /// names no anchor among these.
    pub fn copy_for(&self, alias: &Node<'_>) -> Option<Node<'a>> {
        let mut copy = self.get(alias.alias_name()?)?.clone();
        strip_anchors(&mut copy);
        Some(copy)
    }

    /// Replaces the alias `node` with a copy of its anchored node ([`copy_for`](Self::copy_for),
    /// placed by [`put_copy`]), so that a change to it changes this place only. False, changing
    /// nothing, when `node` is no alias or names no anchor among these.
    pub fn materialize(&self, node: &mut Node<'a>) -> bool {
        match self.copy_for(node) {
            Some(copy) => {
                put_copy(node, copy);
                true
            }
            None => false,
        }
    }
}

impl<'n, 'a> Anchors<&'n Node<'a>> {
    /// The anchored nodes of `root`, borrowed from it.
    pub fn view(root: &'n Node<'a>) -> Self {
        let mut out = Anchors::default();
        out.collect(root);
        out
    }

    fn collect(&mut self, node: &'n Node<'a>) {
        self.push(node);
        for child in children(node) {
            self.collect(child);
        }
    }
}

/// Copies of the anchored nodes of `node`, which merging into its aliases copies from; none
/// when the tree has no alias (nothing would follow them). Copies, so that the walker may change
/// the tree while it holds them. Fails when they would hold more than [`BUDGET`] nodes together:
/// each anchored node is copied whole, so anchors nested in anchors copy the inner nodes once per
/// level, and a resource of a few hundred kilobytes could ask for gigabytes.
pub fn anchors_of<'a>(node: &Node<'a>) -> Result<Anchors<Node<'a>>, AliasError> {
    if !node.has_alias() {
        return Ok(Anchors::default());
    }
    let view = Anchors::view(node);
    let mut left = BUDGET;
    for n in &view.nodes {
        left = left
            .checked_sub(n.node_count())
            .ok_or(AliasError::AnchorsTooLarge(BUDGET))?;
    }
    Ok(Anchors {
        nodes: view.nodes.into_iter().cloned().collect(),
        by_name: view.by_name,
    })
}

/// Puts `copy`, what [`Anchors::copy_for`] made for the alias `alias`, in the alias's place.
/// The copy keeps the anchored node's layout (a resource keeps its shape); the place keeps its
/// blank lines and its comments, and the copy brings none of the anchored node's comments, which
/// describe the anchored node's own place (a comment above `- &x` is about that item, not about
/// each alias of it).
pub fn put_copy<'a>(alias: &mut Node<'a>, mut copy: Node<'a>) {
    if !copy.comments().is_empty() {
        *copy.comments_mut() = Comments::default();
    }
    put(alias, copy, Keep::COMMENTS);
}

/// `patch` ready to be carried into another tree: its aliases expanded (within [`BUDGET`]) and
/// its anchors dropped, so that nothing in it refers to, or can be referred to from, the tree it
/// goes into. Borrowed, without a copy, when it has neither.
pub fn detached<'n, 'p>(patch: &'n Node<'p>) -> Result<Cow<'n, Node<'p>>, AliasError> {
    if !patch.has_alias() && !patch.has_anchor() {
        return Ok(Cow::Borrowed(patch));
    }
    let mut copy = patch.clone();
    copy.expand_aliases(BUDGET)?;
    strip_anchors(&mut copy);
    Ok(Cow::Owned(copy))
}

/// Removes every anchor from `node`'s tree, so that aliases elsewhere keep naming the
/// originals. Only the collections on the way to an anchor are changed: taking a collection's
/// children to change them forgets its source text, and an untouched flow collection stays as
/// it was written. One survey of the tree first, so the work is linear in its size.
pub fn strip_anchors(node: &mut Node<'_>) {
    let mut marks = Vec::new();
    if survey(node, &mut marks) {
        strip(node, &marks, 0);
    }
}

/// What [`strip_anchors`] knows of a node before it changes anything.
struct Mark {
    /// The nodes of its tree, itself included.
    size: usize,
    /// An anchor is somewhere below it.
    below: bool,
}

/// Marks `node`'s tree, in pre-order from `marks.len()`; true when an anchor is in it.
fn survey(node: &Node<'_>, marks: &mut Vec<Mark>) -> bool {
    let at = marks.len();
    marks.push(Mark {
        size: 1,
        below: false,
    });
    let mut below = false;
    for child in children(node) {
        below |= survey(child, marks);
    }
    let size = marks.len() - at;
    if let Some(m) = marks.get_mut(at) {
        *m = Mark { size, below };
    }
    below || node.anchor().is_some()
}

/// Drops the anchors of the tree that `marks[at]` describes, descending only where one is.
fn strip(node: &mut Node<'_>, marks: &[Mark], at: usize) {
    if node.anchor().is_some() {
        node.set_anchor(None);
    }
    if !marks.get(at).is_some_and(|m| m.below) {
        return;
    }
    let mut next = at + 1;
    let mut visit = |child: &mut Node<'_>| {
        strip(child, marks, next);
        next += marks.get(next).map_or(1, |m| m.size);
    };
    if let Some(es) = node.entries_mut() {
        for e in es {
            visit(&mut e.key);
            visit(&mut e.value);
        }
    } else if let Some(items) = node.items_mut() {
        items.iter_mut().for_each(visit);
    }
}

/// The name of the first alias, in document order, that names no anchor before it: such a tree
/// does not write as YAML that reads back. `None` when every alias has its anchor.
pub fn first_dangling<'n>(root: &'n Node<'_>) -> Option<&'n str> {
    fn visit<'n>(n: &'n Node<'_>, seen: &mut crate::hash::HashSet<&'n str>) -> Option<&'n str> {
        if let Some(name) = n.alias_name() {
            if !seen.contains(name) {
                return Some(name);
            }
        }
        if let Some(a) = n.anchor() {
            seen.insert(a);
        }
        children(n).find_map(|c| visit(c, seen))
    }
    visit(root, &mut Default::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{emit_node, parse_stream, Kind};

    fn tree(text: &str) -> Node<'_> {
        parse_stream(text).unwrap().remove(0).root.unwrap()
    }

    #[test]
    fn expand_aliases_has_a_budget() {
        let mut m = Node::map();
        let mut v = Node::seq_of(vec![Node::plain("x"); 10]);
        v.set_anchor(Some("a".into()));
        m.set("a", v);
        for i in 0..5 {
            m.set(&format!("b{i}"), Node::alias("a"));
        }
        let mut small = m.clone();
        assert_eq!(small.expand_aliases(20), Err(AliasError::TooLarge(20)));
        assert!(
            small.get("b0").is_some_and(|n| n.kind() == Kind::Alias),
            "unchanged on error"
        );
        m.expand_aliases(1000).unwrap();
        assert_eq!(m.get("b4").map(|n| n.items().len()), Some(10));
        let mut bad = Node::seq_of(vec![Node::alias("nope")]);
        assert_eq!(
            bad.expand_aliases(10),
            Err(AliasError::Unknown("nope".into()))
        );
    }

    #[test]
    fn expansion_takes_the_closest_anchor_before_the_alias() {
        let mut t = tree("a: &x 1\nb: *x\nc: &x 2\nd: *x\n");
        t.expand_aliases(BUDGET).unwrap();
        assert_eq!(t.str_at(&["b"]), Some("1"));
        assert_eq!(t.str_at(&["d"]), Some("2"));
    }

    #[test]
    fn anchors_of_keeps_copies_within_the_budget() {
        let none = tree("a: &x {k: 1}\n");
        assert!(anchors_of(&none).unwrap().get("x").is_none(), "no alias");
        let t = tree("a: &x {k: 1}\nb: *x\nc: &x {k: 2}\n");
        let anchors = anchors_of(&t).unwrap();
        assert_eq!(anchors.get("x").and_then(|n| n.str_at(&["k"])), Some("2"));
        // Anchors nested in anchors: each level is copied with the levels inside it.
        let nested = {
            let mut n = Node::plain("x");
            for i in 0..60 {
                let mut s = Node::seq_of(vec![n, Node::seq_of(vec![Node::plain("y"); 1000])]);
                s.set_anchor(Some(format!("n{i}").into()));
                n = s;
            }
            Node::seq_of(vec![n, Node::alias("n0")])
        };
        assert_eq!(
            anchors_of(&nested).err(),
            Some(AliasError::AnchorsTooLarge(BUDGET))
        );
    }

    #[test]
    fn materialize_copies_the_anchored_node_without_anchors_and_keeps_the_place() {
        let t = tree("a: &x\n  b: &y\n    c: 1\nd: *x # here\ne: *y\n");
        let anchors = anchors_of(&t).unwrap();
        let mut d = t.get("d").unwrap().clone();
        assert!(anchors.materialize(&mut d));
        assert!(!d.has_anchor(), "no anchor comes along");
        assert_eq!(d.get_path(&["b", "c"]).and_then(Node::as_str), Some("1"));
        let line = d.comments().line.as_ref().map(|c| c.text.as_ref());
        assert_eq!(line, Some(" here"));
        let mut scalar = Node::plain("s");
        assert!(!anchors.materialize(&mut scalar));
        let mut unknown = Node::alias("z");
        assert!(!anchors.materialize(&mut unknown));
        assert_eq!(unknown.kind(), Kind::Alias);
    }

    #[test]
    fn strip_anchors_changes_only_the_way_to_an_anchor() {
        let mut t = tree("a: {k: [1,  2]}\nb:\n  c: &x {z:   1}\n  d: [3,  4]\n");
        strip_anchors(&mut t);
        assert!(!t.has_anchor());
        let text = emit_node(&t, Default::default());
        assert_eq!(text, "a: {k: [1,  2]}\nb:\n  c: {z:   1}\n  d: [3,  4]\n");
    }

    #[test]
    fn detached_copies_only_when_there_is_something_to_drop() {
        let plain = tree("a: [1, 2]\n");
        assert!(matches!(detached(&plain), Ok(Cow::Borrowed(_))));
        let aliased = tree("a: &v [1, 2]\nb: *v\n");
        let d = detached(&aliased).unwrap();
        assert!(!d.has_alias() && !d.has_anchor());
        assert_eq!(d.get("b").map(|b| b.items().len()), Some(2));
    }

    #[test]
    fn first_dangling_finds_an_alias_before_its_anchor() {
        assert_eq!(first_dangling(&tree("a: &x 1\nb: *x\n")), None);
        let mut t = tree("a: &x 1\nb: *x\n");
        if let Some(es) = t.entries_mut() {
            es.swap(0, 1);
        }
        assert_eq!(first_dangling(&t), Some("x"));
    }
}
