//! Alignment: how the elements of two lists (or the fields of two maps) correspond, shared by
//! every merge walker (merge2, merge3, apply).
//!
//! It answers questions and never decides an outcome: what a list's kind is (keyed, set, atomic)
//! from the schema, a kyaml schema comment or the associative-key heuristic; what key an element
//! has; which field metadata applies at a key. It also holds the steps every walker takes the same
//! way once it has decided: an alias merged into becomes a copy first ([`materialize`]). Putting a
//! node in another's place is the YAML tree's business ([`crate::yaml::place::put`]).

use std::borrow::Cow;

use crate::hash::HashMap;

use crate::merge::{MergeError, MergeErrorKind};
use crate::path::Seg;
use crate::schema::{Cursor, FieldMeta, ListMerge, MapKey, Schema};
use crate::yaml::anchors::Anchors;
pub(crate) use crate::yaml::index::{data_hash, key_text, Pairing, ScalarKey};
use crate::yaml::place;
use crate::yaml::{Entry, Kind, Node, MAX_DEPTH};

/// How the elements of a list correspond.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// Replaced as a whole.
    Atomic,
    /// Scalars, merged as an ordered set.
    Set,
    /// Maps, paired by the values of all these key fields.
    Keyed(Vec<MapKey>),
}

/// kyaml's associative keys (its merge2 and merge3 documentation lists them), in its order:
/// the first that every element carries pairs the elements of a list no schema describes.
pub(crate) const ASSOCIATIVE_KEYS: &[&str] = &[
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
pub(crate) fn field(
    schema: &Schema,
    at: Cursor,
    key: &str,
    sources: &[&Node<'_>],
) -> (FieldMeta, Cursor) {
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
pub(crate) fn list_kind(
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
pub(crate) fn key_values(item: &Node<'_>, keys: &[MapKey]) -> Option<Vec<String>> {
    keys.iter()
        .map(|k| match item.get(&k.name) {
            Some(v) if v.is_scalar() && !v.is_null() => v.as_str().map(str::to_owned),
            _ => k.default.clone(),
        })
        .collect()
}

/// The key of a list element, as [`key_values`] gives it; when it has none, the error naming the
/// key field it lacks (the first without a default that it does not have, or else the first).
pub(crate) fn key_of(item: &Node<'_>, keys: &[MapKey]) -> Result<Vec<String>, MergeError> {
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
pub(crate) fn keys_of(list: &Node<'_>, keys: &[MapKey]) -> Result<Vec<Vec<String>>, MergeError> {
    list.items()
        .iter()
        .enumerate()
        .map(|(i, item)| key_of(item, keys).map_err(|e| e.within(Seg::Index(i))))
        .collect()
}

/// The path step naming an element by its key: `[name=app]`.
pub(crate) fn key_seg(keys: &[MapKey], values: &[String]) -> Seg {
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
///
/// `depth` is the number of collections that enclose `dest`. A copy that would nest the
/// resource deeper than [`MAX_DEPTH`] levels is an error: written out, no YAML reader (ours
/// included) would read it back.
pub(crate) fn materialize<'a>(
    dest: &mut Node<'a>,
    incoming: &Node<'_>,
    anchors: &Anchors<Node<'a>>,
    depth: usize,
) -> Result<(), MergeError> {
    if dest.kind() != Kind::Alias || !matches!(incoming.kind(), Kind::Map | Kind::Seq) {
        return Ok(());
    }
    let name = dest.alias_name().unwrap_or_default().to_owned();
    if !anchors.materialize(dest) {
        return Err(MergeError::new(MergeErrorKind::UnknownAlias(name)));
    }
    let total = depth.saturating_add(dest.depth());
    if total > MAX_DEPTH {
        return Err(MergeError::new(MergeErrorKind::TooDeep {
            alias: name,
            depth: total,
            max: MAX_DEPTH,
        }));
    }
    Ok(())
}

/// How deep a walker is in the resource, for [`materialize`]: the walker's one recursive step
/// takes a [`Depth::enter`] guard, and the number of guards alive is the number of collections
/// around the node being merged.
#[derive(Default)]
pub(crate) struct Depth(std::cell::Cell<usize>);

impl Depth {
    /// The depth now.
    pub(crate) fn get(&self) -> usize {
        self.0.get()
    }

    /// One level deeper until the guard goes.
    pub(crate) fn enter(&self) -> DepthGuard<'_> {
        self.0.set(self.0.get() + 1);
        DepthGuard(&self.0)
    }
}

/// See [`Depth::enter`].
pub(crate) struct DepthGuard<'d>(&'d std::cell::Cell<usize>);

impl Drop for DepthGuard<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// An empty flow collection (`[]`, `{}`) about to receive entries from a block collection
/// becomes a block collection, so that what it receives is not squeezed onto one line (kyaml
/// does the same); one that stood on its own line (`resources:` then `  {}`, as Helm writes
/// empty values) opens at that column ([`place::open_empty_flow`]).
pub(crate) fn block_if_empty(dest: &mut Node<'_>, source: &Node<'_>) {
    let empty = dest.entries().is_empty() && dest.items().is_empty();
    if dest.is_flow() && empty && !source.is_flow() && dest.kind() == source.kind() {
        place::open_empty_flow(dest);
    }
}

/// The entries of a map by key, so that pairing the fields of two or three maps costs one
/// lookup per field instead of a scan. Scalar keys match as data ([`key_text`]: `"6443"`,
/// `6443` and `0x192B` are one field, as Kubernetes reads them), or as text where the caller
/// asks ([`Pairing::Text`], kustomize's options); other keys by data. The first of duplicate
/// keys wins.
pub(crate) struct FieldIndex<'n, 'x> {
    pairing: Pairing,
    /// The scalar keys of a small map, in order: scanned, which costs less than hashing them.
    few: Vec<(Cow<'n, str>, &'n Entry<'x>)>,
    /// The scalar keys of a larger one.
    by_text: HashMap<Cow<'n, str>, &'n Entry<'x>>,
    /// Keys that are not scalars, by [`data_hash`].
    others: HashMap<u64, Vec<&'n Entry<'x>>>,
}

/// Up to this many entries a map's keys are scanned, not hashed: a lookup then compares at most
/// this many keys, whatever the input.
const FEW: usize = 8;

impl<'n, 'x> FieldIndex<'n, 'x> {
    /// Indexes `map`'s entries, keys as data; an absent map or a non-map has none.
    pub(crate) fn new(map: Option<&'n Node<'x>>) -> Self {
        Self::with(map, Pairing::Data)
    }

    /// Indexes `map`'s entries, keys paired as `pairing` says.
    pub(crate) fn with(map: Option<&'n Node<'x>>, pairing: Pairing) -> Self {
        let entries = map.map_or(&[][..], Node::entries);
        let mut idx = FieldIndex {
            pairing,
            few: Vec::new(),
            by_text: HashMap::default(),
            others: HashMap::default(),
        };
        let few = entries.len() <= FEW;
        if few {
            idx.few.reserve_exact(entries.len());
        }
        for e in entries {
            match pairing.ident(&e.key) {
                // The first of duplicate keys wins: a scan finds it first.
                Some(t) if few => idx.few.push((t, e)),
                Some(t) => {
                    idx.by_text.entry(t).or_insert(e);
                }
                None => idx.others.entry(data_hash(&e.key)).or_default().push(e),
            }
        }
        idx
    }

    /// The entry whose key is `key`.
    pub(crate) fn get(&self, key: &Node<'_>) -> Option<&'n Entry<'x>> {
        match self.pairing.ident(key) {
            Some(t) => self.get_str(&t),
            None => self
                .others
                .get(&data_hash(key))?
                .iter()
                .copied()
                .find(|e| e.key.same_data(key)),
        }
    }

    /// The entry whose key has this identity (a string key's text, [`key_text`]).
    pub(crate) fn get_str(&self, key: &str) -> Option<&'n Entry<'x>> {
        if self.by_text.is_empty() {
            return self.few.iter().find(|(k, _)| k == key).map(|(_, e)| *e);
        }
        self.by_text.get(key).copied()
    }
}

/// Where each key occurs in a list of element keys (as [`key_values`] gives them), in order.
pub(crate) fn positions(keys: &[Vec<String>]) -> HashMap<&[String], Vec<usize>> {
    let mut m: HashMap<&[String], Vec<usize>> = HashMap::default();
    for (i, k) in keys.iter().enumerate() {
        m.entry(k.as_slice()).or_default().push(i);
    }
    m
}

/// Identifies the values of lists merged as sets: equal data, equal id. Scalars are found by
/// their [`ScalarKey`]; collections (rare in such lists) by [`data_hash`], confirmed by
/// comparison with a kept copy, so a list of n maps costs n hashes rather than n² comparisons.
#[derive(Default)]
pub(crate) struct ValueIds {
    scalars: HashMap<ScalarKey, usize>,
    others: HashMap<u64, Vec<(Node<'static>, usize)>>,
    next: usize,
}

impl ValueIds {
    /// The id of `n`: that of an equal value seen before, or a new one.
    pub(crate) fn id(&mut self, n: &Node<'_>) -> usize {
        let next = self.next;
        let id = match ScalarKey::of(n) {
            Some(k) => *self.scalars.entry(k).or_insert(next),
            None => {
                let bucket = self.others.entry(data_hash(n)).or_default();
                match bucket.iter().find(|(o, _)| o.same_data(n)) {
                    Some((_, id)) => *id,
                    None => {
                        bucket.push((n.clone().into_owned(), next));
                        next
                    }
                }
            }
        };
        if id == next {
            self.next += 1;
        }
        id
    }

    /// The id of `n` if an equal value was seen before.
    pub(crate) fn known(&self, n: &Node<'_>) -> Option<usize> {
        match ScalarKey::of(n) {
            Some(k) => self.scalars.get(&k).copied(),
            None => self
                .others
                .get(&data_hash(n))?
                .iter()
                .find(|(o, _)| o.same_data(n))
                .map(|(_, id)| *id),
        }
    }
}
