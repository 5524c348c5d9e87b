//! The [`Node`] API: constructors, reading, editing, and the rules that keep presentation honest.
//!
//! Editing rule: any access that can change a collection's children (`entries_mut`,
//! `items_mut`, `get_mut`, ...) forgets the collection's verbatim source text, so a flow
//! collection that was edited is rewritten from its tree. Read first, and take `&mut` only to
//! change something; that keeps untouched flow collections byte-identical.

use std::borrow::Cow;

use super::scalar::{self, Resolved};
use super::{Comment, Comments, Ext, Layout, Node, Repr, ScalarStyle};

/// A key and its value in a mapping.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    /// The key (a scalar in Kubernetes YAML, though YAML allows any node).
    pub key: Node<'a>,
    /// The value.
    pub value: Node<'a>,
}

impl<'a> Entry<'a> {
    /// An entry with a plain string key.
    pub fn new(key: impl Into<Cow<'a, str>>, value: Node<'a>) -> Self {
        Entry {
            key: Node::string(key),
            value,
        }
    }

    /// The key's text when the key is a scalar.
    pub(crate) fn key_str(&self) -> Option<&str> {
        self.key.as_str()
    }

    /// A copy that borrows nothing.
    pub(crate) fn into_owned(self) -> Entry<'static> {
        Entry {
            key: self.key.into_owned(),
            value: self.value.into_owned(),
        }
    }
}

/// The four kinds of node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string, number, boolean or null.
    Scalar,
    /// A sequence.
    Seq,
    /// A mapping.
    Map,
    /// An alias (`*name`) to an anchored node.
    Alias,
}

impl<'a> Node<'a> {
    // ----- construction -------------------------------------------------------------------

    fn with(repr: Repr<'a>) -> Self {
        Node { repr, ext: None }
    }

    /// A scalar with this text and style.
    pub(crate) fn scalar(text: impl Into<Cow<'a, str>>, style: ScalarStyle) -> Self {
        Node::with(Repr::Scalar {
            text: text.into(),
            style,
            lay: Layout::default(),
        })
    }

    /// A string; the emitter quotes it if it would otherwise read back as another type.
    pub fn string(text: impl Into<Cow<'a, str>>) -> Self {
        Node::scalar(text, ScalarStyle::Any)
    }

    /// A plain scalar whose type comes from its text (`3`, `true`, `null`, `web`).
    pub fn plain(text: impl Into<Cow<'a, str>>) -> Self {
        Node::scalar(text, ScalarStyle::Plain)
    }

    /// `null`.
    pub fn null() -> Self {
        Node::plain("null")
    }

    /// An empty block mapping.
    pub fn map() -> Self {
        Node::with(Repr::Map {
            entries: Vec::new(),
            flow: false,
            lay: Layout::default(),
        })
    }

    /// A block mapping of these entries.
    pub fn map_of(entries: Vec<Entry<'a>>) -> Self {
        Node::with(Repr::Map {
            entries,
            flow: false,
            lay: Layout::default(),
        })
    }

    /// An empty block sequence.
    pub fn seq() -> Self {
        Node::with(Repr::Seq {
            items: Vec::new(),
            flow: false,
            lay: Layout::default(),
        })
    }

    /// A block sequence of these items.
    pub fn seq_of(items: Vec<Node<'a>>) -> Self {
        Node::with(Repr::Seq {
            items,
            flow: false,
            lay: Layout::default(),
        })
    }

    /// `*name`.
    #[cfg(test)]
    pub(crate) fn alias(name: impl Into<Cow<'a, str>>) -> Self {
        Node::with(Repr::Alias {
            name: name.into(),
            lay: Layout::default(),
        })
    }

    /// A copy of this node without its children: its style, tag, anchor, comments and layout,
    /// and no entries or items. The start of a collection built from this one (a walker fills
    /// it with what survives of the children); a scalar or an alias as it is.
    pub(crate) fn shell(&self) -> Node<'a> {
        // Built rather than cloned and cleared: a walker makes a shell at every level of what
        // it builds, and copying each level's children only to drop them cost the size of the
        // tree times its depth.
        let repr = match &self.repr {
            Repr::Seq { flow, lay, .. } => Repr::Seq {
                items: Vec::new(),
                flow: *flow,
                lay: *lay,
            },
            Repr::Map { flow, lay, .. } => Repr::Map {
                entries: Vec::new(),
                flow: *flow,
                lay: *lay,
            },
            Repr::Scalar { .. } | Repr::Alias { .. } => return self.clone(),
        };
        let mut n = Node {
            repr,
            ext: self.ext.clone(),
        };
        // Verbatim text of the collection would write the children it no longer has.
        n.touch();
        n
    }

    // ----- reading ------------------------------------------------------------------------

    /// Which kind of node this is.
    pub fn kind(&self) -> Kind {
        match self.repr {
            Repr::Scalar { .. } => Kind::Scalar,
            Repr::Seq { .. } => Kind::Seq,
            Repr::Map { .. } => Kind::Map,
            Repr::Alias { .. } => Kind::Alias,
        }
    }

    /// Whether the node is a mapping.
    pub fn is_map(&self) -> bool {
        matches!(self.repr, Repr::Map { .. })
    }

    /// Whether the node is a sequence.
    pub fn is_seq(&self) -> bool {
        matches!(self.repr, Repr::Seq { .. })
    }

    /// Whether the node is a scalar.
    pub fn is_scalar(&self) -> bool {
        matches!(self.repr, Repr::Scalar { .. })
    }

    /// The text of a scalar (after escape processing), or `None` for other kinds.
    pub fn as_str(&self) -> Option<&str> {
        match &self.repr {
            Repr::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The name an alias refers to.
    pub fn alias_name(&self) -> Option<&str> {
        match &self.repr {
            Repr::Alias { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The style of a scalar.
    pub fn style(&self) -> Option<ScalarStyle> {
        match &self.repr {
            Repr::Scalar { style, .. } => Some(*style),
            _ => None,
        }
    }

    /// Whether a collection is written in flow style (`{}` / `[]`).
    pub fn is_flow(&self) -> bool {
        matches!(
            self.repr,
            Repr::Seq { flow: true, .. } | Repr::Map { flow: true, .. }
        )
    }

    /// The node's tag as written (`!!str`, `!custom`), if any.
    pub fn tag(&self) -> Option<&str> {
        self.ext.as_ref().and_then(|e| e.tag.as_deref())
    }

    /// The node's anchor name, if any.
    pub fn anchor(&self) -> Option<&str> {
        self.ext.as_ref().and_then(|e| e.anchor.as_deref())
    }

    /// The scalar's value as YAML resolves it (tag first, then style, then the core schema).
    /// `None` for collections and aliases.
    pub fn resolved(&self) -> Option<Resolved<'_>> {
        match &self.repr {
            Repr::Scalar { text, style, .. } => Some(scalar::resolve(text, *style, self.tag())),
            _ => None,
        }
    }

    /// What the node is, for messages: `a mapping`, `a list`, `an alias`, `a string`, `a number`,
    /// `a boolean`, `null`.
    pub(crate) fn describe(&self) -> &'static str {
        match self.kind() {
            Kind::Map => "a mapping",
            Kind::Seq => "a list",
            Kind::Alias => "an alias",
            Kind::Scalar => match self.resolved() {
                Some(Resolved::Null) | None => "null",
                Some(Resolved::Bool(_)) => "a boolean",
                Some(Resolved::Int(_) | Resolved::Float(_)) => "a number",
                Some(Resolved::Str(_)) => "a string",
            },
        }
    }

    /// `null`, `~`, an empty plain value, or `!!null`.
    pub fn is_null(&self) -> bool {
        matches!(self.resolved(), Some(Resolved::Null))
    }

    /// The scalar's text when YAML reads it as a string (so `"3"` but not `3`).
    pub(crate) fn as_string(&self) -> Option<&str> {
        match self.resolved() {
            Some(Resolved::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The entries of a mapping; empty for other kinds.
    pub fn entries(&self) -> &[Entry<'a>] {
        match &self.repr {
            Repr::Map { entries, .. } => entries,
            _ => &[],
        }
    }

    /// The items of a sequence; empty for other kinds.
    pub fn items(&self) -> &[Node<'a>] {
        match &self.repr {
            Repr::Seq { items, .. } => items,
            _ => &[],
        }
    }

    /// The value under `key` in a mapping (compared with the keys' text).
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.entries()
            .iter()
            .find(|e| e.key.as_str() == Some(key))
            .map(|e| &e.value)
    }

    /// The node at a path of mapping keys.
    pub fn get_path(&self, path: &[&str]) -> Option<&Node<'a>> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }

    /// The string at a path of mapping keys, when it is a scalar.
    pub fn str_at(&self, path: &[&str]) -> Option<&str> {
        self.get_path(path).and_then(Node::as_str)
    }

    /// Position of `key` among the entries of a mapping.
    pub(crate) fn position(&self, key: &str) -> Option<usize> {
        self.entries()
            .iter()
            .position(|e| e.key.as_str() == Some(key))
    }

    /// The comments attached to this node.
    pub fn comments(&self) -> &Comments<'a> {
        static EMPTY: Comments<'static> = Comments {
            head: Vec::new(),
            line: None,
            foot: Vec::new(),
        };
        match &self.ext {
            Some(e) => &e.comments,
            None => &EMPTY,
        }
    }

    // ----- editing ------------------------------------------------------------------------

    fn ext_mut(&mut self) -> &mut Ext<'a> {
        self.ext.get_or_insert_with(Box::default)
    }

    /// Forget verbatim source text: the node's content is about to change.
    pub(super) fn touch(&mut self) {
        if let Some(e) = &mut self.ext {
            e.raw = None;
        }
    }

    /// The entries of a mapping, for editing.
    pub(crate) fn entries_mut(&mut self) -> Option<&mut Vec<Entry<'a>>> {
        self.touch();
        match &mut self.repr {
            Repr::Map { entries, .. } => Some(entries),
            _ => None,
        }
    }

    /// The items of a sequence, for editing.
    pub fn items_mut(&mut self) -> Option<&mut Vec<Node<'a>>> {
        self.touch();
        match &mut self.repr {
            Repr::Seq { items, .. } => Some(items),
            _ => None,
        }
    }

    /// The value under `key`, for editing.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node<'a>> {
        let i = self.position(key)?;
        self.entries_mut()
            .and_then(|es| es.get_mut(i))
            .map(|e| &mut e.value)
    }

    /// Sets `key` to `value`: replaces the value in place (keeping the entry's position and the
    /// key's comments) or appends a new entry. Returns false when this is not a mapping.
    pub fn set(&mut self, key: &str, value: Node<'a>) -> bool {
        match self.position(key) {
            Some(i) => match self.entries_mut().and_then(|es| es.get_mut(i)) {
                Some(e) => {
                    e.value = value;
                    true
                }
                None => false,
            },
            None => match self.entries_mut() {
                Some(es) => {
                    es.push(Entry {
                        key: Node::string(key.to_owned()),
                        value,
                    });
                    true
                }
                None => false,
            },
        }
    }

    /// Removes `key` from a mapping, returning its entry.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Entry<'a>> {
        let i = self.position(key)?;
        self.entries_mut().map(|es| es.remove(i))
    }

    /// The mapping under `key`, created (empty, block style) when absent. `None` when this is
    /// not a mapping or the existing value is not one.
    pub(crate) fn map_at(&mut self, key: &str) -> Option<&mut Node<'a>> {
        if self.get(key).is_none() {
            if !self.is_map() {
                return None;
            }
            self.set(key, Node::map());
        }
        self.get_mut(key).filter(|n| n.is_map())
    }

    /// Replaces a scalar's text, keeping its comments and layout. The style stays unless it
    /// can no longer represent the text faithfully, in which case the emitter picks one.
    pub(crate) fn set_text(&mut self, new: impl Into<Cow<'a, str>>, style: ScalarStyle) {
        self.touch();
        match &mut self.repr {
            Repr::Scalar { text, style: s, .. } => {
                *text = new.into();
                *s = style;
            }
            _ => {
                let lay = self.layout();
                self.repr = Repr::Scalar {
                    text: new.into(),
                    style,
                    lay,
                };
            }
        }
    }

    /// Gives [`ScalarStyle::Any`] to the plain strings in this tree (keys and values) that
    /// YAML 1.1 reads as something else — `on`, `yes`, `1:30`, `1_000`, `2024-01-31` — so the emitter
    /// quotes them where they land. Kubernetes reads YAML as 1.1: a patch's `on` is the string
    /// it wrote, as YAML 1.2 (and this crate) read it, only once it is quoted.
    pub(crate) fn quote_yaml11_lookalikes(&mut self) {
        match &mut self.repr {
            Repr::Scalar { text, style, .. } => {
                if *style == ScalarStyle::Plain
                    && self.ext.as_ref().is_none_or(|e| e.tag.is_none())
                    && scalar::yaml11_lookalike(text)
                {
                    *style = ScalarStyle::Any;
                    self.touch();
                }
            }
            Repr::Map { .. } => {
                for e in self.entries_mut().into_iter().flatten() {
                    e.key.quote_yaml11_lookalikes();
                    e.value.quote_yaml11_lookalikes();
                }
            }
            Repr::Seq { .. } => {
                for i in self.items_mut().into_iter().flatten() {
                    i.quote_yaml11_lookalikes();
                }
            }
            Repr::Alias { .. } => {}
        }
    }

    /// The comments attached to this node, for editing.
    pub(crate) fn comments_mut(&mut self) -> &mut Comments<'a> {
        &mut self.ext_mut().comments
    }

    /// Sets or removes the tag.
    pub(crate) fn set_tag(&mut self, tag: Option<Cow<'a, str>>) {
        if tag.is_some() || self.ext.is_some() {
            self.ext_mut().tag = tag;
        }
    }

    /// Sets or removes the anchor.
    pub(crate) fn set_anchor(&mut self, anchor: Option<Cow<'a, str>>) {
        if anchor.is_some() || self.ext.is_some() {
            self.ext_mut().anchor = anchor;
        }
    }

    pub(crate) fn layout(&self) -> Layout {
        match &self.repr {
            Repr::Scalar { lay, .. }
            | Repr::Seq { lay, .. }
            | Repr::Map { lay, .. }
            | Repr::Alias { lay, .. } => *lay,
        }
    }

    pub(crate) fn layout_mut(&mut self) -> &mut Layout {
        match &mut self.repr {
            Repr::Scalar { lay, .. }
            | Repr::Seq { lay, .. }
            | Repr::Map { lay, .. }
            | Repr::Alias { lay, .. } => lay,
        }
    }

    /// Number of empty lines written before this node's entry.
    pub(crate) fn blank_lines(&self) -> u8 {
        self.layout().blank
    }

    /// Sets the number of empty lines written before this node's entry.
    pub(crate) fn set_blank_lines(&mut self, n: u8) {
        self.layout_mut().blank = n;
    }

    /// Rewrites this node and everything below it in canonical block style: flow collections
    /// become block collections, source layout and verbatim text are dropped, and quoted strings
    /// are written plain where that reads back the same. Used for output that must be block
    /// YAML whatever the input was (JSON in, YAML out).
    pub fn make_block(&mut self) {
        self.touch();
        match &mut self.repr {
            Repr::Seq { items, flow, lay } => {
                *flow = false;
                *lay = Layout::default();
                items.iter_mut().for_each(Node::make_block);
            }
            Repr::Map { entries, flow, lay } => {
                *flow = false;
                *lay = Layout::default();
                for e in entries {
                    e.key.make_block();
                    e.value.make_block();
                }
            }
            Repr::Scalar { style, lay, .. } => {
                if matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted)
                    && self.ext.as_ref().is_none_or(|e| e.tag.is_none())
                {
                    *style = ScalarStyle::Any;
                }
                *lay = Layout::default();
            }
            Repr::Alias { lay, .. } => *lay = Layout::default(),
        }
    }

    /// A copy that borrows nothing, so it can be put into a tree of any lifetime.
    pub fn into_owned(self) -> Node<'static> {
        let repr = match self.repr {
            Repr::Scalar { text, style, lay } => Repr::Scalar {
                text: own(text),
                style,
                lay,
            },
            Repr::Seq { items, flow, lay } => Repr::Seq {
                items: items.into_iter().map(Node::into_owned).collect(),
                flow,
                lay,
            },
            Repr::Map { entries, flow, lay } => Repr::Map {
                entries: entries.into_iter().map(Entry::into_owned).collect(),
                flow,
                lay,
            },
            Repr::Alias { name, lay } => Repr::Alias {
                name: own(name),
                lay,
            },
        };
        let ext = self.ext.map(|e| {
            Box::new(Ext {
                tag: e.tag.map(own),
                anchor: e.anchor.map(own),
                comments: Comments {
                    head: e
                        .comments
                        .head
                        .into_iter()
                        .map(Comment::into_owned)
                        .collect(),
                    line: e.comments.line.map(Comment::into_owned),
                    foot: e
                        .comments
                        .foot
                        .into_iter()
                        .map(Comment::into_owned)
                        .collect(),
                },
                raw: e.raw.map(|r| super::Raw {
                    text: own(r.text),
                    base: r.base,
                }),
                mark: e.mark,
            })
        });
        Node { repr, ext }
    }

    /// True when both nodes hold the same data: same kinds, scalars that resolve to the same
    /// value (`3` and `3`, `"a"` and `a`, but not `3` and `"3"`), entries with the same keys and
    /// equal values in the same order, equal items. Comments and styles do not count.
    pub fn same_data(&self, other: &Node<'_>) -> bool {
        match (&self.repr, &other.repr) {
            (Repr::Scalar { .. }, Repr::Scalar { .. }) => match (self.resolved(), other.resolved())
            {
                // `.nan` is the same data as `.nan`, though NaN is not equal to itself.
                (Some(Resolved::Float(a)), Some(Resolved::Float(b))) => {
                    a == b || (a.is_nan() && b.is_nan())
                }
                (a, b) => a == b,
            },
            (Repr::Seq { items: a, .. }, Repr::Seq { items: b, .. }) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_data(y))
            }
            (Repr::Map { entries: a, .. }, Repr::Map { entries: b, .. }) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.key.same_data(&y.key) && x.value.same_data(&y.value))
            }
            (Repr::Alias { name: a, .. }, Repr::Alias { name: b, .. }) => a == b,
            _ => false,
        }
    }

    /// Compares this tree, after an edit, with `before`, a copy of it taken before the edit,
    /// and gives back the verbatim source text of every node that the edit left as it was
    /// (reaching into a collection to change something forgets its source text, so a flow
    /// collection a patch only walked would be written anew). True when nothing differs at
    /// all: data, styles, layout, comments, tags, anchors. Children are paired by position, and
    /// a mapping's entries by key where the edit added or removed some. Linear in the trees.
    pub(crate) fn keep_unchanged_source(&mut self, before: &Node<'a>) -> bool {
        let same = match (&mut self.repr, &before.repr) {
            (
                Repr::Scalar { text, style, lay },
                Repr::Scalar {
                    text: t,
                    style: s,
                    lay: l,
                },
            ) => text == t && style == s && lay == l,
            (
                Repr::Alias { name, lay },
                Repr::Alias {
                    name: n, lay: l, ..
                },
            ) => name == n && lay == l,
            (
                Repr::Seq { items, flow, lay },
                Repr::Seq {
                    items: i,
                    flow: f,
                    lay: l,
                },
            ) => {
                let mut same = flow == f && lay == l && items.len() == i.len();
                if items.len() == i.len() {
                    for (a, b) in items.iter_mut().zip(i) {
                        same &= a.keep_unchanged_source(b);
                    }
                }
                same
            }
            (
                Repr::Map { entries, flow, lay },
                Repr::Map {
                    entries: e,
                    flow: f,
                    lay: l,
                },
            ) => {
                let mut same = flow == f && lay == l && entries.len() == e.len();
                if entries.len() == e.len() {
                    for (a, b) in entries.iter_mut().zip(e) {
                        same &= a.key.keep_unchanged_source(&b.key);
                        same &= a.value.keep_unchanged_source(&b.value);
                    }
                } else {
                    let was: crate::hash::HashMap<&str, &Entry<'a>> = e
                        .iter()
                        .filter_map(|b| Some((b.key.as_str()?, b)))
                        .collect();
                    for a in entries.iter_mut() {
                        if let Some(b) = a.key.as_str().and_then(|k| was.get(k)) {
                            a.key.keep_unchanged_source(&b.key);
                            a.value.keep_unchanged_source(&b.value);
                        }
                    }
                }
                same
            }
            _ => false,
        };
        self.keep_unchanged_extras(before, same)
    }

    /// The end of [`Node::keep_unchanged_source`] for one node whose content compared `same`
    /// with `before`'s: its tag, anchor, comments and anchor mark compared too, and, when
    /// nothing differs, the verbatim source text `before` had given back.
    pub(super) fn keep_unchanged_extras(&mut self, before: &Node<'a>, mut same: bool) -> bool {
        let (mine, theirs) = (self.ext.as_deref(), before.ext.as_deref());
        let ext_same = match (mine, theirs) {
            (None, None) => true,
            (Some(x), Some(y)) => {
                x.tag == y.tag
                    && x.anchor == y.anchor
                    && x.comments == y.comments
                    && x.mark == y.mark
            }
            (Some(x), None) | (None, Some(x)) => {
                x.tag.is_none()
                    && x.anchor.is_none()
                    && x.comments.is_empty()
                    && x.mark == super::anchors::Mark::default()
            }
        };
        same &= ext_same;
        if !same {
            return false;
        }
        // Everything the node writes is as it was: so is the text it was read from.
        let raw = theirs.and_then(|y| y.raw.clone());
        let had = mine.is_some_and(|x| x.raw.is_some());
        match raw {
            Some(r) => self.ext_mut().raw = Some(r),
            None if had => return false,
            None => {}
        }
        true
    }

    /// Counts the nodes of this tree (aliases count as one).
    pub(crate) fn node_count(&self) -> usize {
        1 + match &self.repr {
            Repr::Seq { items, .. } => items.iter().map(Node::node_count).sum(),
            Repr::Map { entries, .. } => entries
                .iter()
                .map(|e| e.key.node_count() + e.value.node_count())
                .sum(),
            _ => 0,
        }
    }

    /// Levels of collections in this tree, as a YAML reader counts them against
    /// [`MAX_DEPTH`](super::MAX_DEPTH): 0 for a scalar or an alias, 1 for a collection of
    /// scalars, one more for each collection inside another — in a key (`? [a, b]: v`) as in a
    /// value, since a reader nests a key's collections in the mapping too. Aliases count as
    /// written (0), not as the nodes they stand for.
    ///
    /// This is the one measure of nesting the walkers check a result against (an alias that
    /// becomes a copy of its anchored node, a value put at a depth); JSON patch used to count
    /// values only, which let a patch value with a collection key nest one reader level past
    /// the bound.
    pub(crate) fn depth(&self) -> usize {
        let below = match &self.repr {
            Repr::Seq { items, .. } => items.iter().map(Node::depth).max(),
            Repr::Map { entries, .. } => entries
                .iter()
                .map(|e| e.key.depth().max(e.value.depth()))
                .max(),
            Repr::Scalar { .. } | Repr::Alias { .. } => return 0,
        };
        1 + below.unwrap_or(0)
    }

    /// This tree's size in memory, roughly, in bytes: [`NODE_WEIGHT`] a node plus the text of
    /// its scalars, alias names, tags, anchors and comments. Aliases count as written (an
    /// alias node and its name), not as the nodes they stand for.
    ///
    /// What budgets on growth count (a JSON patch's copies, a value a patch adds at many
    /// places): cheap to compute, and within a small factor of what the tree really holds.
    pub(crate) fn weight(&self) -> usize {
        let text = |s: Option<&str>| s.map_or(0, str::len);
        let c = self.comments();
        let comments: usize = c
            .head
            .iter()
            .chain(c.line.iter())
            .chain(c.foot.iter())
            .map(|c| c.text.len())
            .sum();
        let own = NODE_WEIGHT
            + text(self.as_str())
            + text(self.alias_name())
            + text(self.tag())
            + text(self.anchor())
            + comments;
        own + match &self.repr {
            Repr::Seq { items, .. } => items.iter().map(Node::weight).sum(),
            Repr::Map { entries, .. } => entries
                .iter()
                .map(|e| e.key.weight() + e.value.weight())
                .sum(),
            _ => 0,
        }
    }
}

/// Bytes a node counts for in `Node::weight`, besides its text: its size in the tree, with
/// room for what it owns.
pub const NODE_WEIGHT: usize = 48;

fn own(c: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(c.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_stays_small() {
        // Memory use of a parsed tree is dominated by node size; see the module doc of `yaml`.
        assert!(
            std::mem::size_of::<Node<'_>>() <= 40,
            "{}",
            std::mem::size_of::<Node<'_>>()
        );
    }

    #[test]
    fn same_data_compares_resolved_scalars() {
        assert!(Node::plain("3").same_data(&Node::plain("3")));
        assert!(Node::plain("a").same_data(&Node::scalar("a", ScalarStyle::DoubleQuoted)));
        assert!(!Node::plain("3").same_data(&Node::scalar("3", ScalarStyle::SingleQuoted)));
        assert!(Node::plain("~").same_data(&Node::plain("null")));
    }

    #[test]
    fn set_appends_or_replaces_in_place() {
        let mut m = Node::map();
        m.set("a", Node::plain("1"));
        m.set("b", Node::plain("2"));
        m.set("a", Node::plain("3"));
        let keys: Vec<_> = m.entries().iter().filter_map(Entry::key_str).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(m.str_at(&["a"]), Some("3"));
    }

    /// Reaching into a flow collection forgets its source text; comparing with the tree before
    /// gives it back where nothing in it changed, and says whether anything changed at all.
    #[test]
    fn keep_unchanged_source_gives_back_what_an_edit_left_as_it_was() {
        let src = "a: {x: 1,   y: [2,  3]}   # flow\nb: 1\n";
        let doc = crate::yaml::parse_stream(src).unwrap().remove(0);
        let before = doc.root.clone().unwrap();
        let write = |n: &Node<'_>| {
            let mut out = String::new();
            crate::yaml::emit_document(&crate::yaml::Document::new(n.clone()), &mut out);
            out
        };
        let mut after = before.clone();
        after
            .get_mut("a")
            .and_then(|a| a.get_mut("y"))
            .and_then(Node::items_mut);
        assert_ne!(
            write(&after),
            src,
            "an edit forgets the flow collection's text"
        );
        assert!(after.keep_unchanged_source(&before));
        assert_eq!(write(&after), src);
        // A change elsewhere: still not the same, and the untouched flow map is as written.
        after.get_mut("a").and_then(Node::entries_mut);
        after.set("b", Node::plain("2"));
        assert!(!after.keep_unchanged_source(&before));
        assert_eq!(write(&after), src.replace("b: 1", "b: 2"));
        // An added key: the others pair by key.
        let mut after = before.clone();
        after.get_mut("a").and_then(Node::entries_mut);
        after.set("c", Node::plain("3"));
        assert!(!after.keep_unchanged_source(&before));
        assert_eq!(write(&after), format!("{src}c: 3\n"));
    }
}
