//! Anchors and aliases: the one home of the alias plumbing that the walkers share.
//!
//! What it is:
//! * questions about a whole tree: [`Node::has_alias`], `Node::has_anchor`, and
//!   [`first_dangling`] (an alias that names no anchor before it);
//! * expansion, which makes a tree of data out of a patch or a config ([`Node::expand_aliases`],
//!   [`detached`]): every alias becomes a copy of its anchored node, written canonically where
//!   the alias stood;
//! * [`Anchors`], the anchored nodes of a resource by name ([`anchors_of`] keeps copies,
//!   `Anchors::view` borrows), which the walkers follow to read through an alias and
//!   materialise to change one (`Anchors::materialize`): merging into an alias first makes it
//!   a copy of its anchored node, so that only that place changes and the anchor, with every
//!   other alias of it, keeps its value. A materialised copy keeps the anchored node's layout
//!   and the alias's comments (`put_copy`);
//! * [`strip_anchors`]: a copy carried into another tree drops its anchors, which there could
//!   capture the tree's later aliases;
//! * `BUDGET`, the one bound on the nodes any of this may copy or visit.
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
pub(crate) const BUDGET: usize = 1_000_000;

/// Aliases that cannot be expanded, or anchored nodes too large to copy.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AliasError {
    #[error("alias *{0} refers to no anchor defined before it (or to the node it is in)")]
    /// An alias naming no anchor before it; holds the name.
    Unknown(String),
    #[error("expanding aliases would make more than {0} nodes (an alias bomb?)")]
    /// Expansion would pass the node budget; holds the budget.
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
    pub(crate) fn has_anchor(&self) -> bool {
        self.anchor().is_some() || children(self).any(Node::has_anchor)
    }

    /// Replaces every alias with a copy of the node its anchor names (the closest anchor of that
    /// name before it, in document order). Fails, changing nothing, when an alias names no
    /// anchor or when the result would exceed `budget` nodes (the walkers' budget is
    /// `BUDGET`; the functionConfig reader shares one among all its documents).
    ///
    /// Each copy is written canonically where the alias stood, with the alias's comments when it
    /// has some: the expanded tree is data to be carried elsewhere, not a resource whose layout
    /// is kept (compare `put_copy`).
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
/// (`Anchors::view`) of a tree that is only read meanwhile (json6902 finds its way through a
/// document before it changes anything).
///
/// An alias stands for the anchored node of the occurrence its `Mark` names, when the tree
/// holds one (a [`Scope`] marks every alias of the resources the function patches, so there an
/// alias reads what it read in the input, whatever names repeat). An alias without a mark
/// stands for the last node of its name in document order: YAML's rule is the closest anchor
/// before the alias, and the two differ only where a tree nobody marked reuses a name.
pub struct Anchors<N> {
    /// The anchored nodes, in document order.
    nodes: Vec<N>,
    /// Each name's last anchored node, by its index in `nodes`.
    by_name: HashMap<String, usize>,
    /// The anchored node of each marked occurrence, by its index in `nodes`.
    by_occ: HashMap<u32, usize>,
}

impl<N> Default for Anchors<N> {
    /// No anchored nodes: for a tree without aliases, where there is nothing to follow.
    fn default() -> Self {
        Anchors {
            nodes: Vec::new(),
            by_name: HashMap::default(),
            by_occ: HashMap::default(),
        }
    }
}

impl<'a, N: Borrow<Node<'a>>> Anchors<N> {
    /// Adds an anchored node after those already held; not anchored, it is left out.
    fn push(&mut self, node: N) {
        let n = node.borrow();
        if let Some(name) = n.anchor() {
            self.by_name.insert(name.to_owned(), self.nodes.len());
            if let Some(k) = n.mark().occurrence() {
                self.by_occ.insert(k, self.nodes.len());
            }
            self.nodes.push(node);
        }
    }

    /// The node anchored as `name` (the last of that name).
    pub(crate) fn get(&self, name: &str) -> Option<&Node<'a>> {
        let i = *self.by_name.get(name)?;
        self.nodes.get(i).map(Borrow::borrow)
    }

    /// The anchored node an alias stands for: the occurrence it is marked with, else the last
    /// of its name.
    fn target(&self, alias: &Node<'_>) -> Option<&Node<'a>> {
        let name = alias.alias_name()?;
        let by_occ = match alias.mark() {
            Mark::Occ(k) => self.by_occ.get(&k),
            _ => None,
        };
        match by_occ {
            Some(&i) => self.nodes.get(i).map(Borrow::borrow),
            None => self.get(name),
        }
    }

    /// What `node` stands for: an alias's anchored node, any other node (or an alias whose
    /// anchor is not among these) itself.
    pub(crate) fn follow<'s>(&'s self, node: &'s Node<'a>) -> &'s Node<'a> {
        self.target(node).unwrap_or(node)
    }

    /// The copy of its anchored node that the alias `alias` becomes before something below it
    /// changes, without anchors (the originals keep theirs); `None` when `alias` is no alias or
    /// names no anchor among these.
    pub(crate) fn copy_for(&self, alias: &Node<'_>) -> Option<Node<'a>> {
        let mut copy = self.target(alias)?.clone();
        strip_anchors(&mut copy);
        Some(copy)
    }

    /// Replaces the alias `node` with a copy of its anchored node ([`copy_for`](Self::copy_for),
    /// placed by [`put_copy`]), so that a change to it changes this place only. False, changing
    /// nothing, when `node` is no alias or names no anchor among these.
    pub(crate) fn materialize(&self, node: &mut Node<'a>) -> bool {
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
    pub(crate) fn view(root: &'n Node<'a>) -> Self {
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
/// the tree while it holds them. Fails when they would hold more than `BUDGET` nodes together:
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
        by_occ: view.by_occ,
    })
}

/// Puts `copy`, what [`Anchors::copy_for`] made for the alias `alias`, in the alias's place.
/// The copy keeps the anchored node's layout (a resource keeps its shape); the place keeps its
/// blank lines and its comments, and the copy brings none of the anchored node's comments, which
/// describe the anchored node's own place (a comment above `- &x` is about that item, not about
/// each alias of it).
pub(crate) fn put_copy<'a>(alias: &mut Node<'a>, mut copy: Node<'a>) {
    if !copy.comments().is_empty() {
        *copy.comments_mut() = Comments::default();
    }
    put(alias, copy, Keep::COMMENTS);
}

/// `patch` ready to be carried into another tree: its aliases expanded (within `BUDGET`) and
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
struct Survey {
    /// The nodes of its tree, itself included.
    size: usize,
    /// An anchor is somewhere below it.
    below: bool,
}

/// Marks `node`'s tree, in pre-order from `marks.len()`; true when an anchor is in it.
fn survey(node: &Node<'_>, marks: &mut Vec<Survey>) -> bool {
    let at = marks.len();
    marks.push(Survey {
        size: 1,
        below: false,
    });
    let mut below = false;
    for child in children(node) {
        below |= survey(child, marks);
    }
    let size = marks.len() - at;
    if let Some(m) = marks.get_mut(at) {
        *m = Survey { size, below };
    }
    below || node.anchor().is_some()
}

/// Drops the anchors of the tree that `marks[at]` describes, descending only where one is.
fn strip(node: &mut Node<'_>, marks: &[Survey], at: usize) {
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

// ----- marks and document scopes ----------------------------------------------------------

/// What a node is to the anchors of its document, as a [`Scope`] recorded it when it read the
/// node; nothing of it is written out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Not recorded (a tree no scope read, a node a patch brought, an alias that names no
    /// anchor before it).
    #[default]
    None,
    /// On an anchored node: it is occurrence `k` of its document's anchors. On an alias: it
    /// stands for occurrence `k` (the closest anchor of its name before it, as read).
    Occ(u32),
    /// A copy of occurrence `occ` standing where an alias of it stood ([`Scope::localise`]),
    /// which becomes that alias again (the scope's saved alias `local`) when the output lets it.
    Local { occ: u32, local: u32 },
}

impl Mark {
    /// The occurrence the node is, or is a copy of.
    pub(crate) fn occurrence(self) -> Option<u32> {
        match self {
            Mark::None => None,
            Mark::Occ(k) | Mark::Local { occ: k, .. } => Some(k),
        }
    }
}

impl<'a> Node<'a> {
    /// What the node is to its document's anchors ([`Mark`]).
    pub(crate) fn mark(&self) -> Mark {
        self.ext.as_ref().map_or(Mark::None, |e| e.mark)
    }

    /// Records what the node is to its document's anchors. Invisible in the text, so the
    /// collection around it keeps its verbatim source.
    pub(crate) fn set_mark(&mut self, mark: Mark) {
        if mark != Mark::None || self.ext.is_some() {
            self.ext.get_or_insert_with(Box::default).mark = mark;
        }
    }
}

/// The number of children of a node: two per entry (key, value), one per item.
fn child_count(node: &Node<'_>) -> usize {
    match &node.repr {
        Repr::Map { entries, .. } => entries.len() * 2,
        Repr::Seq { items, .. } => items.len(),
        Repr::Scalar { .. } | Repr::Alias { .. } => 0,
    }
}

/// Child `i` of a node, in document order (each entry's key, then its value; the items).
fn child<'n, 'a>(node: &'n Node<'a>, i: usize) -> Option<&'n Node<'a>> {
    match &node.repr {
        Repr::Map { entries, .. } => {
            entries
                .get(i / 2)
                .map(|e| if i % 2 == 0 { &e.key } else { &e.value })
        }
        Repr::Seq { items, .. } => items.get(i),
        Repr::Scalar { .. } | Repr::Alias { .. } => None,
    }
}

/// Child `i` of a node, for a change that does not change what the collection's verbatim source
/// says (a mark; a copy that [`Scope::settle`] puts back as the alias it was, or keeps and then
/// forgets the source of every collection around it).
fn child_mut<'n, 'a>(node: &'n mut Node<'a>, i: usize) -> Option<&'n mut Node<'a>> {
    match &mut node.repr {
        Repr::Map { entries, .. } => {
            entries
                .get_mut(i / 2)
                .map(|e| if i % 2 == 0 { &mut e.key } else { &mut e.value })
        }
        Repr::Seq { items, .. } => items.get_mut(i),
        Repr::Scalar { .. } | Repr::Alias { .. } => None,
    }
}

/// The value of `key` in a mapping, for a change like [`child_mut`]'s.
fn value_mut<'n, 'a>(node: &'n mut Node<'a>, key: &str) -> Option<&'n mut Node<'a>> {
    let i = node.position(key)?;
    child_mut(node, 2 * i + 1)
}

/// Whether a tree holds an alias, and whether it holds an anchor, in one walk.
fn refs(node: &Node<'_>) -> (bool, bool) {
    let mut found = (false, false);
    refs_into(node, &mut found);
    found
}

/// [`refs`] adding to `found`; true once both are found. Every resource is walked so before
/// its first patch, so the walk matches on the nodes themselves rather than going through
/// [`children`]' iterators: a node without extras (most) has no anchor, a scalar no children.
fn refs_into(node: &Node<'_>, found: &mut (bool, bool)) -> bool {
    if node.ext.as_ref().is_some_and(|e| e.anchor.is_some()) {
        found.1 = true;
    }
    match &node.repr {
        Repr::Scalar { .. } => {}
        Repr::Alias { .. } => found.0 = true,
        Repr::Seq { items, .. } => {
            for i in items {
                if refs_into(i, found) {
                    return true;
                }
            }
        }
        Repr::Map { entries, .. } => {
            for e in entries {
                if refs_into(&e.key, found) || refs_into(&e.value, found) {
                    return true;
                }
            }
        }
    }
    found.0 && found.1
}

/// A copy of `node` of any lifetime: the originals a [`Scope`] keeps borrow nothing.
fn widen<'n, 'a>(node: &'n Node<'static>) -> &'n Node<'a> {
    node
}

/// Where a scope's occurrence is: a node inside one of the copies it keeps.
#[derive(Debug)]
struct Occ {
    /// The copy of the outermost anchored node around it (itself, when none is), in
    /// [`Scope::trees`]; `None` when no copy was kept.
    tree: Option<u32>,
    /// The path of child indices ([`child`]) from that copy's root to the node.
    path: Vec<u32>,
}

/// What [`Scope::admit`] found in a resource.
#[derive(Clone, Debug, Default)]
pub struct Admitted {
    /// It holds an alias.
    pub aliases: bool,
    /// It holds an anchor.
    pub anchors: bool,
    /// The name of an alias that names no anchor before it: one inside the very node it names
    /// (recursive data, which no resource can hold).
    pub unresolved: Option<String>,
}

/// How [`Scope::settle`] reads a tree.
#[derive(Clone, Copy, Debug)]
pub struct Settle {
    /// The tree is the next part of the document's output: its aliases are read after what the
    /// document's output defined so far, and its anchors define what later parts read. Else
    /// the tree is read alone (a resource after a patch, made whole by `Scope::localise`).
    pub document: bool,
    /// No patch changed the tree: its anchored nodes hold their data as read.
    pub untouched: bool,
    /// Copies that `Scope::localise` made become the aliases they were, where the output
    /// reads those aliases as they were read.
    pub revert: bool,
}

/// The anchors of one YAML document as the function read it, and as its output reads them.
///
/// **Why.** YAML anchors are scoped by document: in a `ResourceList` or a `List` every item is
/// in one document, so an item may alias an anchor of an earlier item; in any resource, an
/// alias reads the data of its anchored node. A patch that changes or deletes an anchored node,
/// or a whole item holding one, would silently change (or leave without an anchor) every alias
/// of it, in resources no patch selected too. The rule: **every alias reads back the data it
/// read in the input** (a place a patch changes is no alias any more: the walkers make it a copy
/// first).
///
/// **How.** [`Scope::admit`] reads each resource as the document gives it: every anchored node
/// becomes an occurrence (a `Mark` on the node, and a copy of it kept, so that what it read
/// is known later), every alias is marked with the occurrence it stands for. Before the first
/// patch on a resource, `Scope::localise` makes it whole: the first alias of each anchor of
/// another item becomes a copy that carries the anchor, and aliases on the fields that identify
/// a resource become copies, so that walkers and checks read plain data. After each patch, and
/// when a resource is written out, [`Scope::settle`] reads the tree as the output will: an
/// anchored node whose data changed loses its anchor; an alias that would read another
/// occurrence (or none) becomes a copy of its own, carrying its anchor on for the aliases after
/// it; a copy `localise` made becomes its alias again where the output reads that alias as
/// before. Resources without anchors and aliases cost one walk each.
///
/// What it must not do: expand aliases beyond one copy per alias it fixes (within `BUDGET`
/// nodes per resource), or change data.
#[derive(Debug, Default)]
pub struct Scope {
    /// Every occurrence read, in document order (by the end of its node, as expansion reads).
    occs: Vec<Occ>,
    /// Copies of the outermost anchored nodes read, marked, borrowing nothing.
    trees: Vec<Node<'static>>,
    /// Each name's latest occurrence as read.
    input: HashMap<String, u32>,
    /// Each name's latest occurrence as the output written so far reads it (a name whose
    /// latest anchored node in the output holds other data is absent).
    output: HashMap<String, u32>,
    /// The aliases that copies of the current resource replaced, by [`Mark::Local`] index.
    saved: Vec<Node<'static>>,
    /// The first occurrence of the current resource: those before it are other items'.
    item_start: u32,
}

/// The state of [`Scope::admit`]'s walk.
struct Admit {
    /// Child indices from the root to the node.
    path: Vec<u32>,
    /// The anchor names of the nodes around the node.
    around: Vec<String>,
    /// The outermost anchored node around the node: the length of its path, and the first
    /// occurrence inside it.
    outer: Option<(usize, usize)>,
    /// Keep copies of anchored nodes.
    keep: bool,
}

impl Scope {
    /// A scope for a new document.
    pub fn new() -> Scope {
        Scope::default()
    }

    /// Forgets everything: the next resource starts a new document (each document of a stream
    /// is its own scope).
    pub(crate) fn reset(&mut self) {
        if !self.occs.is_empty() || !self.output.is_empty() || !self.input.is_empty() {
            *self = Scope::default();
        }
        self.saved.clear();
    }

    /// Reads the next resource of the document (before any patch): marks its anchored nodes and
    /// aliases and keeps copies of its anchored nodes, which later resources may alias (`keep`:
    /// the document goes on after it) or its own aliases read. A tree without anchors and aliases
    /// costs one walk.
    pub fn admit(&mut self, node: &mut Node<'_>, keep: bool) -> Admitted {
        self.saved.clear();
        self.item_start = u32::try_from(self.occs.len()).unwrap_or(u32::MAX);
        let (aliases, anchors) = refs(node);
        let mut out = Admitted {
            aliases,
            anchors,
            unresolved: None,
        };
        if aliases || anchors {
            let mut walk = Admit {
                path: Vec::new(),
                around: Vec::new(),
                outer: None,
                keep: keep || aliases,
            };
            self.mark_walk(node, &mut walk, &mut out.unresolved);
        }
        out
    }

    fn mark_walk(
        &mut self,
        node: &mut Node<'_>,
        walk: &mut Admit,
        unresolved: &mut Option<String>,
    ) {
        if let Repr::Alias { name, .. } = &node.repr {
            let occ = if walk.around.iter().any(|a| a == name.as_ref()) {
                None
            } else {
                self.input.get(name.as_ref()).copied()
            };
            match occ {
                Some(k) => node.set_mark(Mark::Occ(k)),
                None => {
                    if unresolved.is_none() {
                        *unresolved = Some(name.to_string());
                    }
                    node.set_mark(Mark::None);
                }
            }
            return;
        }
        let anchor = node.anchor().map(str::to_owned);
        let outermost = anchor.is_some() && walk.outer.is_none();
        if outermost {
            walk.outer = Some((walk.path.len(), self.occs.len()));
        }
        if let Some(a) = &anchor {
            walk.around.push(a.clone());
        }
        for i in 0..child_count(node) {
            walk.path.push(u32::try_from(i).unwrap_or(u32::MAX));
            if let Some(c) = child_mut(node, i) {
                self.mark_walk(c, walk, unresolved);
            }
            walk.path.pop();
        }
        let Some(name) = anchor else {
            return;
        };
        walk.around.pop();
        let Ok(k) = u32::try_from(self.occs.len()) else {
            // More occurrences than a u32 counts: this one stays unmarked, and its aliases
            // are left as they are.
            return;
        };
        node.set_mark(Mark::Occ(k));
        let path = match walk.outer {
            Some((len, _)) => walk.path.get(len..).unwrap_or_default().to_vec(),
            None => Vec::new(),
        };
        self.occs.push(Occ { tree: None, path });
        self.input.insert(name, k);
        if outermost {
            if let Some((_, first)) = walk.outer.take() {
                if walk.keep {
                    let t = u32::try_from(self.trees.len()).ok();
                    self.trees.push(node.clone().into_owned());
                    for o in self.occs.iter_mut().skip(first) {
                        o.tree = t;
                    }
                }
            }
        }
    }

    /// The data occurrence `k` held as read.
    pub(crate) fn original(&self, k: u32) -> Option<&Node<'static>> {
        let occ = self.occs.get(usize::try_from(k).ok()?)?;
        let mut n = self.trees.get(usize::try_from(occ.tree?).ok()?)?;
        for &i in &occ.path {
            n = child(n, usize::try_from(i).ok()?)?;
        }
        Some(n)
    }

    /// What `node` reads: a marked alias's data as read, any other node itself.
    pub(crate) fn follow<'n, 'a>(&'n self, node: &'n Node<'a>) -> &'n Node<'a> {
        match (&node.repr, node.mark()) {
            (Repr::Alias { .. }, Mark::Occ(k)) => self.original(k).map_or(node, widen),
            _ => node,
        }
    }

    /// A copy of occurrence `k` to stand where an alias of it (named `name`) stood, without
    /// anchors, counted against `left`.
    fn copy_of<'a>(&self, k: u32, name: &str, left: &mut usize) -> Result<Node<'a>, AliasError> {
        let original = self
            .original(k)
            .ok_or_else(|| AliasError::Unknown(name.to_owned()))?;
        *left = left
            .checked_sub(original.node_count())
            .ok_or(AliasError::AnchorsTooLarge(BUDGET))?;
        let mut copy: Node<'a> = original.clone();
        strip_anchors(&mut copy);
        Ok(copy)
    }

    /// Replaces the alias `node` with a copy that can become it again ([`Mark::Local`]),
    /// carrying its anchor when `carry`. False when `node` is no marked alias.
    fn localise_alias(
        &mut self,
        node: &mut Node<'_>,
        carry: bool,
        left: &mut usize,
    ) -> Result<bool, AliasError> {
        let (Repr::Alias { name, .. }, Mark::Occ(occ)) = (&node.repr, node.mark()) else {
            return Ok(false);
        };
        let name = name.to_string();
        let mut copy = self.copy_of(occ, &name, left)?;
        let local =
            u32::try_from(self.saved.len()).map_err(|_| AliasError::AnchorsTooLarge(BUDGET))?;
        self.saved.push(node.clone().into_owned());
        copy.set_mark(Mark::Local { occ, local });
        if carry {
            copy.set_anchor(Some(Cow::Owned(name)));
        }
        put_copy(node, copy);
        Ok(true)
    }

    /// Makes the current resource whole before a patch: aliases on the fields that identify it
    /// and hold the hosts' bookkeeping (`apiVersion`, `kind`, `metadata` and its `name`,
    /// `namespace`, `labels`, `annotations` and their entries) become copies, and the first
    /// alias of each anchor of another item becomes a copy carrying the anchor, so that every
    /// walker and check reads plain data and every alias an anchor of the resource itself.
    /// [`Scope::settle`] turns the copies back into their aliases where nothing changed them.
    /// At most [`BUDGET`] nodes are copied. True when something was copied.
    pub(crate) fn localise(&mut self, node: &mut Node<'_>) -> Result<bool, AliasError> {
        let mut left = BUDGET;
        let mut changed =
            self.localise_fields(node, &["apiVersion", "kind", "metadata"], &mut left)?;
        if let Some(meta) = value_mut(node, "metadata") {
            changed |= self.localise_fields(
                meta,
                &["name", "namespace", "labels", "annotations"],
                &mut left,
            )?;
            for key in ["labels", "annotations"] {
                if let Some(map) = value_mut(meta, key) {
                    for i in 0..child_count(map) {
                        if let Some(c) = child_mut(map, i) {
                            changed |= self.localise_alias(c, false, &mut left)?;
                        }
                    }
                }
            }
        }
        let mut done = crate::hash::HashSet::default();
        changed |= self.localise_foreign(node, &mut done, &mut left)?;
        Ok(changed)
    }

    /// The keys of a mapping that are aliases, and the values of `fields`, become copies.
    fn localise_fields(
        &mut self,
        map: &mut Node<'_>,
        fields: &[&str],
        left: &mut usize,
    ) -> Result<bool, AliasError> {
        if !map.is_map() {
            return Ok(false);
        }
        let mut changed = false;
        for i in (0..child_count(map)).step_by(2) {
            if let Some(key) = child_mut(map, i) {
                changed |= self.localise_alias(key, false, left)?;
            }
        }
        for f in fields {
            if let Some(v) = value_mut(map, f) {
                changed |= self.localise_alias(v, false, left)?;
            }
        }
        Ok(changed)
    }

    fn localise_foreign(
        &mut self,
        node: &mut Node<'_>,
        done: &mut crate::hash::HashSet<u32>,
        left: &mut usize,
    ) -> Result<bool, AliasError> {
        let mut changed = false;
        if let (Repr::Alias { .. }, Mark::Occ(k)) = (&node.repr, node.mark()) {
            if k >= self.item_start || !done.insert(k) {
                return Ok(false);
            }
            changed = self.localise_alias(node, true, left)?;
        }
        for i in 0..child_count(node) {
            if let Some(c) = child_mut(node, i) {
                changed |= self.localise_foreign(c, done, left)?;
            }
        }
        Ok(changed)
    }

    /// Every alias of the current resource becomes a copy that can become it again, those inside
    /// the copies too: the resource reads as plain data, so that operations that read one place
    /// after changing another (a JSON patch's) read what each alias read. When that would copy
    /// more than `BUDGET` nodes (an alias bomb), nothing changes and the error says so.
    pub fn localise_all(&mut self, node: &mut Node<'_>) -> Result<bool, AliasError> {
        let mut left = BUDGET;
        let (before, saved) = (node.clone(), self.saved.len());
        let r = self.localise_every(node, &mut left);
        if r.is_err() {
            *node = before;
            self.saved.truncate(saved);
        }
        r
    }

    fn localise_every(
        &mut self,
        node: &mut Node<'_>,
        left: &mut usize,
    ) -> Result<bool, AliasError> {
        let mut changed = false;
        if node.kind() == super::Kind::Alias {
            changed = self.localise_alias(node, false, left)?;
        }
        for i in 0..child_count(node) {
            if let Some(c) = child_mut(node, i) {
                changed |= self.localise_every(c, left)?;
            }
        }
        Ok(changed)
    }

    /// Reads `node` as the output will and makes it read what was read: see [`Scope`] and
    /// [`Settle`]. True when its text must change (an alias became a copy, an anchor was
    /// dropped, a copy stays); the collections around such a change forget their verbatim
    /// source. Fails when the copies or the comparisons would take more than `BUDGET` nodes.
    pub fn settle(&mut self, node: &mut Node<'_>, how: Settle) -> Result<bool, AliasError> {
        let mut table = if how.document {
            std::mem::take(&mut self.output)
        } else {
            HashMap::default()
        };
        let mut left = BUDGET;
        let r = self.settle_walk(node, &mut table, how, false, &mut left);
        if how.document {
            self.output = table;
        }
        r
    }

    /// [`Scope::settle`] for the entries `range` of a mapping (a wrapper's keys around its
    /// items), which forgets its verbatim source when one changes.
    pub(crate) fn settle_entries(
        &mut self,
        map: &mut Node<'_>,
        range: std::ops::Range<usize>,
        how: Settle,
    ) -> Result<bool, AliasError> {
        let mut table = if how.document {
            std::mem::take(&mut self.output)
        } else {
            HashMap::default()
        };
        let mut left = BUDGET;
        let mut changed = false;
        let mut r = Ok(());
        for i in range.start * 2..range.end * 2 {
            if let Some(c) = child_mut(map, i) {
                match self.settle_walk(c, &mut table, how, false, &mut left) {
                    Ok(ch) => changed |= ch,
                    Err(e) => {
                        r = Err(e);
                        break;
                    }
                }
            }
        }
        if how.document {
            self.output = table;
        }
        if changed {
            map.touch();
        }
        r.map(|()| changed)
    }

    /// [`Scope::admit`] for the entries `range` of a mapping.
    pub(crate) fn admit_entries(&mut self, map: &mut Node<'_>, range: std::ops::Range<usize>) {
        for i in range.start * 2..range.end * 2 {
            if let Some(c) = child_mut(map, i) {
                let saved = std::mem::take(&mut self.saved);
                let _ = self.admit(c, true);
                self.saved = saved;
            }
        }
    }

    fn settle_walk(
        &mut self,
        node: &mut Node<'_>,
        table: &mut HashMap<String, u32>,
        how: Settle,
        same_above: bool,
        left: &mut usize,
    ) -> Result<bool, AliasError> {
        if let Repr::Alias { name, .. } = &node.repr {
            let Mark::Occ(k) = node.mark() else {
                return Ok(false);
            };
            if table.get(name.as_ref()) == Some(&k) {
                return Ok(false);
            }
            let name = name.to_string();
            let mut copy = self.copy_of(k, &name, left)?;
            copy.set_mark(Mark::Occ(k));
            copy.set_anchor(Some(Cow::Owned(name.clone())));
            put_copy(node, copy);
            if self.settle_children(node, table, how, true, left)? {
                node.touch();
            }
            table.insert(name, k);
            return Ok(true);
        }
        let mark = node.mark();
        let mut known = None;
        if let (true, Mark::Local { occ, local }) = (how.revert, mark) {
            let alias = self.saved.get(usize::try_from(local).unwrap_or(usize::MAX));
            let name = alias.and_then(Node::alias_name).map(str::to_owned);
            if let Some(name) = name {
                let same = self.same_as(node, occ, left)?;
                known = Some(same);
                if same && table.get(&name) == Some(&occ) {
                    if let Some(alias) = alias {
                        *node = alias.clone();
                    }
                    return Ok(false);
                }
                // The copy stays. Holding what its alias read, it carries the alias's anchor,
                // so that the aliases after it that read the same stay aliases.
                if same {
                    node.set_anchor(Some(Cow::Owned(name)));
                }
            }
        }
        let anchor = node.anchor().map(str::to_owned);
        // An anchored node is compared with what it read before its children are settled: when
        // it holds the same data, so does every anchored node inside it, which then need no
        // comparison of their own (nested anchors would make comparisons quadratic).
        let mut same = same_above || how.untouched;
        if let (Some(_), Some(k), false) = (&anchor, mark.occurrence(), same) {
            same = match known {
                Some(s) => s,
                None => self.same_as(node, k, left)?,
            };
        }
        let mut changed = self.settle_children(node, table, how, same, left)?;
        if changed {
            node.touch();
        }
        if let Some(name) = anchor {
            match mark.occurrence() {
                Some(k) if same => {
                    table.insert(name, k);
                }
                _ => {
                    // Changed data, or an anchor no resource had: no alias may read it.
                    node.set_anchor(None);
                    node.set_mark(Mark::None);
                    changed = true;
                }
            }
        }
        if how.revert && matches!(mark, Mark::Local { .. }) {
            changed = true;
        }
        Ok(changed)
    }

    fn settle_children(
        &mut self,
        node: &mut Node<'_>,
        table: &mut HashMap<String, u32>,
        how: Settle,
        same_above: bool,
        left: &mut usize,
    ) -> Result<bool, AliasError> {
        let mut changed = false;
        for i in 0..child_count(node) {
            if let Some(c) = child_mut(node, i) {
                changed |= self.settle_walk(c, table, how, same_above, left)?;
            }
        }
        Ok(changed)
    }

    /// Whether `node` holds the data occurrence `k` held as read.
    fn same_as(&self, node: &Node<'_>, k: u32, left: &mut usize) -> Result<bool, AliasError> {
        match self.original(k) {
            Some(o) => self.same_marked(node, o, left),
            None => Ok(false),
        }
    }

    /// Whether two trees hold the same data, reading marked aliases as what they stand for
    /// (two aliases of one occurrence are the same without reading it). Comments and styles do
    /// not count.
    fn same_marked(
        &self,
        a: &Node<'_>,
        b: &Node<'_>,
        left: &mut usize,
    ) -> Result<bool, AliasError> {
        *left = left
            .checked_sub(1)
            .ok_or(AliasError::AnchorsTooLarge(BUDGET))?;
        match (&a.repr, &b.repr) {
            (Repr::Alias { name: x, .. }, Repr::Alias { name: y, .. }) => {
                Ok(x == y && a.mark() == b.mark() && a.mark() != Mark::None)
            }
            (Repr::Alias { .. }, _) => match a.mark() {
                Mark::Occ(k) => match self.original(k) {
                    Some(o) => self.same_marked(o, b, left),
                    None => Ok(false),
                },
                _ => Ok(false),
            },
            (_, Repr::Alias { .. }) => match b.mark() {
                Mark::Occ(k) => match self.original(k) {
                    Some(o) => self.same_marked(a, o, left),
                    None => Ok(false),
                },
                _ => Ok(false),
            },
            (Repr::Scalar { .. }, Repr::Scalar { .. }) => Ok(a.same_data(b)),
            (Repr::Seq { items: x, .. }, Repr::Seq { items: y, .. }) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (p, q) in x.iter().zip(y) {
                    if !self.same_marked(p, q, left)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            (Repr::Map { entries: x, .. }, Repr::Map { entries: y, .. }) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (p, q) in x.iter().zip(y) {
                    if !self.same_marked(&p.key, &q.key, left)?
                        || !self.same_marked(&p.value, &q.value, left)?
                    {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            _ => Ok(false),
        }
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

    fn text_of(node: &Node<'_>) -> String {
        emit_node(node, Default::default()).trim().to_owned()
    }

    #[test]
    fn a_marked_alias_reads_its_own_anchor_when_a_name_repeats() {
        // Bug: an alias stood for the last anchor of its name, so materialising `b` copied
        // `{k: 2}`, an anchor after it, and a merge into `b` changed its data.
        let mut t = tree("a: &x {k: 1}\nb: *x\nc: &x {k: 2}\nd: *x\n");
        let mut scope = Scope::new();
        let admitted = scope.admit(&mut t, false);
        assert!(admitted.aliases && admitted.anchors && admitted.unresolved.is_none());
        let anchors = anchors_of(&t).unwrap();
        let mut b = t.get("b").unwrap().clone();
        assert!(anchors.materialize(&mut b));
        assert_eq!(b.str_at(&["k"]), Some("1"));
        let d = t.get("d").unwrap();
        assert_eq!(anchors.follow(d).str_at(&["k"]), Some("2"));
        assert_eq!(scope.follow(t.get("b").unwrap()).str_at(&["k"]), Some("1"));
    }

    #[test]
    fn an_alias_inside_the_node_it_names_is_unresolved() {
        let mut t = tree("a: &x {k: *x}\n");
        let admitted = Scope::new().admit(&mut t, false);
        assert_eq!(admitted.unresolved.as_deref(), Some("x"));
    }

    #[test]
    fn settle_keeps_what_every_alias_read() {
        let src = "m: &m {k: v}\nmm: *m\nn: [*m]\n";
        let mut t = tree(src);
        let mut scope = Scope::new();
        scope.admit(&mut t, false);
        // A patch changes the anchored node.
        t.get_mut("m").unwrap().set("k", Node::plain("new"));
        let how = Settle {
            document: false,
            untouched: false,
            revert: false,
        };
        assert!(scope.settle(&mut t, how).unwrap());
        assert_eq!(
            text_of(&t),
            "m: {k: new}\nmm: &m {k: v}\nn: [*m]",
            "the changed node loses its anchor, the first alias carries it on"
        );
        let mut expanded = t.clone();
        expanded.expand_aliases(BUDGET).unwrap();
        assert_eq!(
            expanded.get("n").unwrap().items()[0].str_at(&["k"]),
            Some("v")
        );
        // Nothing changed: nothing to do.
        let mut t = tree(src);
        let mut scope = Scope::new();
        scope.admit(&mut t, false);
        assert!(!scope.settle(&mut t, how).unwrap());
        assert_eq!(text_of(&t), src.trim());
    }

    #[test]
    fn items_of_one_document_read_each_others_anchors() {
        let rl = parse_stream(
            "- {name: a, data: &d {k: 1}}\n- {name: b, data: &d {k: 2}}\n- {name: c, data: *d}\n",
        )
        .unwrap()
        .remove(0)
        .root
        .unwrap();
        let mut items: Vec<Node<'_>> = rl.items().to_vec();
        // Item b is deleted; a and c are written as the document's output.
        let mut scope_out = Vec::new();
        let mut scope = Scope::new();
        for (n, i) in items.iter_mut().enumerate() {
            scope.admit(i, true);
            if n == 1 {
                continue;
            }
            let how = Settle {
                document: true,
                untouched: true,
                revert: true,
            };
            let changed = scope.settle(i, how).unwrap();
            scope_out.push((changed, text_of(i)));
        }
        assert_eq!(
            scope_out[0],
            (false, "{name: a, data: &d {k: 1}}".to_owned())
        );
        assert_eq!(
            scope_out[1],
            (true, "{name: c, data: &d {k: 2}}".to_owned()),
            "c read b's anchor: it holds a copy of it now"
        );
    }

    #[test]
    fn localised_copies_become_their_aliases_again() {
        let rl = parse_stream(
            "- {kind: &k ConfigMap, data: &d {k: 1}}\n- {kind: *k, data: *d, x: *d}\n",
        )
        .unwrap()
        .remove(0)
        .root
        .unwrap();
        let mut items: Vec<Node<'_>> = rl.items().to_vec();
        let mut scope = Scope::new();
        let how = Settle {
            document: true,
            untouched: true,
            revert: true,
        };
        scope.admit(&mut items[0], true);
        scope.settle(&mut items[0], how).unwrap();
        scope.admit(&mut items[1], true);
        assert!(scope.localise(&mut items[1]).unwrap());
        assert_eq!(items[1].str_at(&["kind"]), Some("ConfigMap"));
        assert_eq!(
            items[1].get_path(&["data", "k"]).and_then(Node::as_str),
            Some("1")
        );
        assert_eq!(items[1].get("x").and_then(Node::alias_name), Some("d"));
        let before = text_of(&items[1]);
        let changed = scope.settle(&mut items[1], how).unwrap();
        assert!(!changed, "{}", text_of(&items[1]));
        assert_eq!(
            text_of(&items[1]),
            "{kind: *k, data: *d, x: *d}",
            "{before}"
        );
    }
}
