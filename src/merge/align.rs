//! Alignment: how the elements of two lists (or the fields of two maps) correspond, shared by
//! every merge walker (merge2, merge3, apply).
//!
//! It answers questions and never decides an outcome: what a list's kind is (keyed, set, atomic)
//! from the schema, a kyaml schema comment or the associative-key heuristic; what key an element
//! has; which field metadata applies at a key. It also holds the steps every walker takes the same
//! way once it has decided: an alias merged into becomes a copy first ([`materialize`]). Putting a
//! node in another's place is the YAML tree's business ([`crate::yaml::place::put`]).

use crate::hash::HashMap;

use crate::merge::{MergeError, MergeErrorKind};
use crate::path::Seg;
use crate::schema::{Cursor, FieldMeta, ListMerge, MapKey, Schema};
use crate::yaml::anchors::Anchors;
use crate::yaml::scalar::Resolved;
use crate::yaml::{Entry, Kind, Node};

/// How the elements of a list correspond.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced as a whole.
    Atomic,
    /// Scalars, merged as an ordered set.
    Set,
    /// Maps, paired by the values of all these key fields.
    Keyed(Vec<MapKey>),
}

/// kyaml's associative keys (its merge2 and merge3 documentation lists them), in its order:
/// the first that every element carries pairs the elements of a list no schema describes.
pub const ASSOCIATIVE_KEYS: &[&str] = &[
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
];

/// What the schema, or a kyaml schema comment (`# {"x-kubernetes-patch-merge-key": "name"}`)
/// on the field in one of `sources`, says about `key` at `at`. The schema speaks first.
pub fn field(schema: &Schema, at: Cursor, key: &str, sources: &[&Node<'_>]) -> (FieldMeta, Cursor) {
    let (meta, cur) = schema.field(at, key);
    if !meta.is_empty() && !cur.is_unknown() {
        return (meta, cur);
    }
    for n in sources {
        let c = n.comments();
        let texts = c.line.iter().chain(c.head.iter()).map(|c| c.text.trim());
        for t in texts.filter(|t| t.starts_with('{')) {
            if let Some((m, cc)) = schema.comment(t) {
                let meta = if meta.is_empty() { m } else { meta };
                return (meta, cur.or(cc));
            }
        }
    }
    (meta, cur)
}

/// How lists at a field merge: the schema's (or a comment's) metadata first; then, when `infer`
/// is on, the associative-key heuristic over all the `lists`' elements (each must be a map with
/// the same key field, scalar-valued); otherwise atomic. `ignore` skips elements that are not
/// data (merge2's `{$patch: ...}` list directives).
pub fn list_kind(
    meta: &FieldMeta,
    infer: bool,
    lists: &[&Node<'_>],
    ignore: impl Fn(&Node<'_>) -> bool,
) -> ListKind {
    match &meta.list {
        Some(ListMerge::Atomic) => return ListKind::Atomic,
        Some(ListMerge::Set) => return ListKind::Set,
        Some(ListMerge::Map { keys }) => return ListKind::Keyed(keys.clone()),
        None => {}
    }
    if !infer {
        return ListKind::Atomic;
    }
    let elements = || lists.iter().flat_map(|l| l.items()).filter(|i| !ignore(i));
    if elements().next().is_none() || !elements().all(Node::is_map) {
        return ListKind::Atomic;
    }
    for k in ASSOCIATIVE_KEYS {
        if elements().all(|i| i.get(k).is_some_and(Node::is_scalar)) {
            return ListKind::Keyed(vec![MapKey {
                name: (*k).to_owned(),
                default: None,
            }]);
        }
    }
    ListKind::Atomic
}

/// The key of a list element: the text of each key field, or its default when the element
/// lacks it; `None` when a key field without default is missing.
pub fn key_values(item: &Node<'_>, keys: &[MapKey]) -> Option<Vec<String>> {
    keys.iter()
        .map(|k| match item.get(&k.name) {
            Some(v) if v.is_scalar() && !v.is_null() => v.as_str().map(str::to_owned),
            _ => k.default.clone(),
        })
        .collect()
}

/// The key of a list element, as [`key_values`] gives it; when it has none, the error naming the
/// key field it lacks (the first without a default that it does not have, or else the first).
pub fn key_of(item: &Node<'_>, keys: &[MapKey]) -> Result<Vec<String>, MergeError> {
    key_values(item, keys).ok_or_else(|| {
        let missing = keys
            .iter()
            .find(|k| item.get(&k.name).is_none() && k.default.is_none())
            .or(keys.first())
            .map(|k| k.name.clone())
            .unwrap_or_default();
        MergeError::new(MergeErrorKind::MissingKey(missing))
    })
}

/// The keys of a list's elements ([`key_of`]); an element without its key is an error at its
/// index.
pub fn keys_of(list: &Node<'_>, keys: &[MapKey]) -> Result<Vec<Vec<String>>, MergeError> {
    list.items()
        .iter()
        .enumerate()
        .map(|(i, item)| key_of(item, keys).map_err(|e| e.within(Seg::Index(i))))
        .collect()
}

/// The path step naming an element by its key: `[name=app]`.
pub fn key_seg(keys: &[MapKey], values: &[String]) -> Seg {
    Seg::Key(
        keys.iter()
            .zip(values)
            .map(|(k, v)| (k.name.clone(), v.clone()))
            .collect(),
    )
}

/// Before a collection merges into an alias of the resource, the alias becomes a copy of its
/// anchored node ([`Anchors::materialize`]), so that the merge changes this place only and the
/// anchor, with every other alias of it, keeps its value. A scalar simply takes the alias's
/// place. An alias whose anchor the resource lacks is an error.
pub fn materialize<'a>(
    dest: &mut Node<'a>,
    incoming: &Node<'_>,
    anchors: &Anchors<Node<'a>>,
) -> Result<(), MergeError> {
    if dest.kind() != Kind::Alias || !matches!(incoming.kind(), Kind::Map | Kind::Seq) {
        return Ok(());
    }
    if anchors.materialize(dest) {
        return Ok(());
    }
    let name = dest.alias_name().unwrap_or_default().to_owned();
    Err(MergeError::new(MergeErrorKind::UnknownAlias(name)))
}

/// An empty flow collection (`[]`, `{}`) about to receive entries from a block collection
/// becomes a block collection, so that what it receives is not squeezed onto one line (kyaml
/// does the same).
pub fn block_if_empty(dest: &mut Node<'_>, source: &Node<'_>) {
    let empty = dest.entries().is_empty() && dest.items().is_empty();
    if dest.is_flow() && empty && !source.is_flow() && dest.kind() == source.kind() {
        let blank = dest.blank_lines();
        dest.make_block();
        dest.set_blank_lines(blank);
    }
}

/// The entries of a map by key, so that pairing the fields of two or three maps costs one
/// lookup per field instead of a scan. Scalar keys match by text (as everywhere: `"6443"` and
/// `6443` are the same field); other keys by data. The first of duplicate keys wins.
pub struct FieldIndex<'n, 'x> {
    by_text: HashMap<&'n str, &'n Entry<'x>>,
    others: Vec<&'n Entry<'x>>,
}

impl<'n, 'x> FieldIndex<'n, 'x> {
    /// Indexes `map`'s entries; an absent map or a non-map has none.
    pub fn new(map: Option<&'n Node<'x>>) -> Self {
        let mut idx = FieldIndex {
            by_text: HashMap::default(),
            others: Vec::new(),
        };
        for e in map.map_or(&[][..], Node::entries) {
            match e.key.as_str() {
                Some(t) => {
                    idx.by_text.entry(t).or_insert(e);
                }
                None => idx.others.push(e),
            }
        }
        idx
    }

    /// The entry whose key is `key`.
    pub fn get(&self, key: &Node<'_>) -> Option<&'n Entry<'x>> {
        match key.as_str() {
            Some(t) => self.by_text.get(t).copied(),
            None => self.others.iter().copied().find(|e| e.key.same_data(key)),
        }
    }

    /// The entry whose key has this text.
    pub fn get_str(&self, key: &str) -> Option<&'n Entry<'x>> {
        self.by_text.get(key).copied()
    }
}

/// Where each key occurs in a list of element keys (as [`key_values`] gives them), in order.
pub fn positions(keys: &[Vec<String>]) -> HashMap<&[String], Vec<usize>> {
    let mut m: HashMap<&[String], Vec<usize>> = HashMap::default();
    for (i, k) in keys.iter().enumerate() {
        m.entry(k.as_slice()).or_default().push(i);
    }
    m
}

/// A scalar's value in a form that can be hashed: two scalars have the same `ScalarKey` exactly
/// when [`Node::same_data`] holds for them (`3` and `3`, `"a"` and `a`, not `3` and `"3"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKey {
    Null,
    Bool(bool),
    Int(i128),
    /// The bits of the value, `-0.0` counted as `0.0`.
    Float(u64),
    Str(String),
}

impl ScalarKey {
    /// The key of a scalar; `None` for collections and aliases.
    pub fn of(n: &Node<'_>) -> Option<ScalarKey> {
        Some(match n.resolved()? {
            Resolved::Null => ScalarKey::Null,
            Resolved::Bool(b) => ScalarKey::Bool(b),
            Resolved::Int(i) => ScalarKey::Int(i),
            Resolved::Float(f) => ScalarKey::Float(if f == 0.0 { 0 } else { f.to_bits() }),
            Resolved::Str(s) => ScalarKey::Str(s.to_owned()),
        })
    }
}

/// Identifies the values of lists merged as sets: equal data, equal id. Scalars are found by
/// hashing; the rare collections in such lists by comparison (kept as copies).
#[derive(Default)]
pub struct ValueIds {
    scalars: HashMap<ScalarKey, usize>,
    others: Vec<(Node<'static>, usize)>,
    next: usize,
}

impl ValueIds {
    /// The id of `n`: that of an equal value seen before, or a new one.
    pub fn id(&mut self, n: &Node<'_>) -> usize {
        let next = self.next;
        let id = match ScalarKey::of(n) {
            Some(k) => *self.scalars.entry(k).or_insert(next),
            None => match self.others.iter().find(|(o, _)| o.same_data(n)) {
                Some((_, id)) => *id,
                None => {
                    self.others.push((n.clone().into_owned(), next));
                    next
                }
            },
        };
        if id == next {
            self.next += 1;
        }
        id
    }
}
