//! Two-way strategic merge: a partial resource (the patch) merged into a resource, in place.
//!
//! The rules are kyaml's merge2 with Kubernetes strategic-merge behaviour:
//!
//! * **scalars** — the patch's value replaces the resource's; `null` removes the field;
//! * **maps** — paired by key and merged recursively; keys only in the patch are added after the
//!   resource's keys, in the patch's order; keys only in the resource keep their value and place.
//!   Keys pair as data, as Kubernetes reads them (`yaml::index::key_text`: `0x1` is the
//!   resource's `1`, `True` its `true`): the result holds one key, spelled as the patch spells
//!   it (the newer statement), with the resource's place;
//! * **lists** — how they merge comes from, in this order: the schema (built-in kinds, CRDs,
//!   declarations: see [`crate::schema`]), a kyaml per-field schema comment on the field, and, with
//!   [`Options::infer_keys`], the associative-key heuristic (a list whose elements all carry one of
//!   `mountPath`, `devicePath`, `ip`, `type`, `topologyKey`, `name`, `containerPort`). Keyed lists
//!   pair elements on all their keys (with key defaults, so `{containerPort: 80}` is the element
//!   `{containerPort: 80, protocol: TCP}`); sets merge as ordered unions; other lists are
//!   replaced. An empty patch list leaves a keyed list alone.
//! * **directives** — `$patch: delete | replace | merge` on maps and list elements (an element
//!   that holds only `$patch` applies to the whole list), `$retainKeys`,
//!   `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`, with apimachinery's meaning.
//!   Any other key starting with `$` is an error rather than a field written into the resource.
//!
//! With [`Options::kustomize`] the walk is kyaml's where kyaml's differs (see the `kustomize` submodule): lists
//! merged by key pair as kyaml pairs them, lists without merge metadata are the patch's as written,
//! a patch cannot change a value's kind, and values the patch does not mention are walked too.
//! Keys pair by their text there, as kyaml's walk looks fields up by name: a patch key that is a
//! resource key spelled otherwise would be the same key twice, an error
//! (`MergeErrorKind::KeySpelling`).
//!
//! Presentation: the resource keeps its key order, comments and layout; a node taken from the
//! patch keeps the patch's comments and style, except that a string replacing a string keeps
//! the resource's quoting and a block sequence follows the document's indentation (see
//! `yaml::place`); where both have a comment for the same place, the patch's wins (kyaml's
//! rule).
//!
//! What it must not do: select resources, parse or write text, or look at anything but the two
//! nodes, the schema and the options.

use crate::hash::{HashMap, HashSet};
use crate::merge::align::{self, key_seg, key_values, ListKind, ValueIds};
use crate::merge::{Context, MergeError, MergeErrorKind, Shape};
use crate::path::Seg;
use crate::schema::{Cursor, FieldMeta, ListMerge, MapKey, Schema};
use crate::yaml::anchors::Anchors;
use crate::yaml::index::{KeyPositions, Pairing};
use crate::yaml::place::{self, replace, Keep};
use crate::yaml::{Entry, Kind, Node};

mod kustomize;

/// Where merged lists put elements that only the patch has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NewItems {
    /// The resource's order is kept and new elements follow (the default).
    #[default]
    Append,
    /// Elements the patch mentions come first, in the patch's order, then the others
    /// (kustomize's order).
    Prepend,
}

/// How to merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Where merged lists put elements only the patch has.
    pub new_items: NewItems,
    /// Pair list elements by the associative-key heuristic when nothing else says how.
    pub infer_keys: bool,
    /// Reproduce kustomize (kyaml) where its merge differs from ours, for the promise of doc/KUSTOMIZE.md
    /// ("Differences from kustomize") that kustomize's options give kustomize's output. Set with `prepend` and no inferred
    /// keys; never on its own.
    pub kustomize: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            new_items: NewItems::Append,
            infer_keys: true,
            kustomize: false,
        }
    }
}

/// What became of the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The patch was merged into the resource.
    Merged,
    /// The patch said `$patch: delete` at its top level.
    Deleted,
}

/// Merges `patch` into the resource `dest`, whose kind is at `cx.root` in `cx.schema`.
///
/// `cx.anchors` are the anchored nodes of `dest` ([`crate::yaml::anchors::anchors_of`]): merging
/// into an alias replaces that alias with a copy of its anchored node, so the patch changes only
/// this place. The patch is taken as it is (see "Patches and aliases" in
/// [`crate::yaml::anchors`]).
///
/// With kustomize's options, a resource the context knows to be as kyaml's walk leaves it (a
/// merge with those options and the same schema at its root was the last change made to it) is
/// not walked where the patch says nothing: dropping entries written as nothing and putting
/// keyed lists together again would change nothing there.
pub fn merge<'a, 'p: 'a>(
    dest: &mut Node<'a>,
    patch: &Node<'p>,
    cx: &Context<'_, 'a, Options>,
) -> Result<Outcome, MergeError> {
    let m = Merger {
        schema: cx.schema,
        opts: cx.opts,
        anchors: cx.anchors,
        depth: align::Depth::default(),
        settled: cx.shape == Shape::KyamlSettled,
    };
    match m.value(dest, patch, cx.root, &FieldMeta::default())? {
        Fate::Keep => Ok(Outcome::Merged),
        Fate::Delete => Ok(Outcome::Deleted),
    }
}

/// Whether a resource, whose kind is at `root` in `schema`, is as kyaml's walk with kustomize's
/// options would leave it, so that a merge may take it as settled ([`Shape::KyamlSettled`]):
/// the walk would drop no entry and put no keyed list together otherwise (see
/// `kustomize::settles_as_is`, which says no where it cannot tell). A resource with aliases
/// is not asked about. Tests (debug builds) walk it to check.
pub(crate) fn settles_as_is(dest: &Node<'_>, schema: &Schema, root: Cursor) -> bool {
    let as_is = kustomize::settles_as_is(schema, dest, root, &FieldMeta::default());
    #[cfg(debug_assertions)]
    if as_is {
        let anchors = Anchors::default();
        let m = Merger {
            schema,
            opts: Options::default(),
            anchors: &anchors,
            depth: align::Depth::default(),
            settled: false,
        };
        let mut walked = dest.clone();
        let settled = m.settle(&mut walked, root, &FieldMeta::default());
        debug_assert!(
            settled.is_ok() && walked.keep_unchanged_source(dest),
            "kyaml's walk changes a resource said to be as it leaves it"
        );
    }
    as_is
}

enum Fate {
    Keep,
    Delete,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Merge,
    Replace,
    Delete,
}

/// The directives of a patch map.
struct Directives<'n, 'p> {
    strategy: Strategy,
    retain_keys: Option<Vec<&'n str>>,
    set_order: Vec<(&'n str, &'n Node<'p>)>,
    delete_from: Vec<(&'n str, &'n Node<'p>)>,
}

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ORDER: &str = "$setElementOrder/";
const DELETE_FROM: &str = "$deleteFromPrimitiveList/";

fn is_directive(key: &str) -> bool {
    key.starts_with('$')
}

fn strategy_of(value: &Node<'_>) -> Result<Strategy, MergeError> {
    match value.as_str() {
        Some("delete") => Ok(Strategy::Delete),
        Some("replace") => Ok(Strategy::Replace),
        Some("merge") => Ok(Strategy::Merge),
        Some(other) => Err(MergeError::new(MergeErrorKind::UnknownStrategy(
            other.to_owned(),
        ))),
        None => Err(MergeError::new(MergeErrorKind::BadDirective {
            directive: PATCH.into(),
            expected: "one of delete, replace, merge",
        })),
    }
}

fn directives<'n, 'p>(patch: &'n Node<'p>) -> Result<Directives<'n, 'p>, MergeError> {
    let mut d = Directives {
        strategy: Strategy::Merge,
        retain_keys: None,
        set_order: Vec::new(),
        delete_from: Vec::new(),
    };
    for e in patch.entries() {
        let Some(k) = e.key.as_str().filter(|k| is_directive(k)) else {
            continue;
        };
        let err = |expected| {
            MergeError::new(MergeErrorKind::BadDirective {
                directive: k.to_owned(),
                expected,
            })
        };
        if k == PATCH {
            d.strategy = strategy_of(&e.value).map_err(|er| er.within(Seg::field(k)))?;
        } else if k == RETAIN_KEYS {
            if !e.value.is_seq() {
                return Err(err("a list of field names"));
            }
            let keys: Option<Vec<&str>> = e.value.items().iter().map(Node::as_str).collect();
            d.retain_keys = Some(keys.ok_or_else(|| err("a list of field names"))?);
        } else if let Some(list) = k.strip_prefix(SET_ORDER) {
            if !e.value.is_seq() {
                return Err(err("a list"));
            }
            d.set_order.push((list, &e.value));
        } else if let Some(list) = k.strip_prefix(DELETE_FROM) {
            if !e.value.is_seq() {
                return Err(err("a list"));
            }
            d.delete_from.push((list, &e.value));
        } else {
            return Err(MergeError::new(MergeErrorKind::UnknownDirective(
                k.to_owned(),
            )));
        }
    }
    Ok(d)
}

struct Merger<'s, 'x, 'a> {
    schema: &'s Schema,
    opts: Options,
    anchors: &'x Anchors<Node<'a>>,
    /// How many collections enclose the value being merged ([`Merger::value`] counts).
    depth: align::Depth,
    /// The resource is as kyaml's walk leaves it ([`Shape::KyamlSettled`]): what the patch does
    /// not mention is not walked.
    settled: bool,
}

/// The element `{$patch: X}` alone: a directive for the whole list.
fn list_directive<'n>(item: &'n Node<'_>) -> Option<&'n Node<'n>> {
    let es = item.entries();
    (es.len() == 1 && es[0].key.as_str() == Some(PATCH)).then(|| &es[0].value)
}

impl<'a> Merger<'_, '_, 'a> {
    /// Merges `patch` into `dest`; `Delete` asks the caller to remove `dest`.
    fn value<'p: 'a>(
        &self,
        dest: &mut Node<'a>,
        patch: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<Fate, MergeError> {
        if patch.is_null() {
            return Ok(Fate::Delete);
        }
        align::materialize(dest, patch, self.anchors, self.depth.get())?;
        let _inside = self.depth.enter();
        if self.opts.kustomize {
            self.same_kind(dest, patch)?;
        }
        match patch.kind() {
            Kind::Map => self.map(dest, patch, at, meta.replace),
            Kind::Seq => self.list(dest, patch, at, meta),
            Kind::Scalar | Kind::Alias => {
                replace(dest, patch.clone(), Keep::COMMENTS);
                Ok(Fate::Keep)
            }
        }
    }

    /// A new node made from the patch (its directives applied to nothing); `None` when it
    /// deletes itself.
    fn build<'p: 'a>(
        &self,
        patch: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<Option<Node<'a>>, MergeError> {
        match patch.kind() {
            // A map built from the patch: its fields are all new, and its directives apply to
            // nothing (`replace` and `merge` build the same map).
            Kind::Map => {
                let d = directives(patch)?;
                if d.strategy == Strategy::Delete {
                    return Ok(None);
                }
                let mut n: Node<'a> = patch.shell();
                self.fields(&mut n, patch, at, &d, true)?;
                Ok(Some(n))
            }
            Kind::Seq => {
                let mut n: Node<'a> = patch.shell();
                place::shell_from_patch(&mut n);
                match self.value(&mut n, patch, at, meta)? {
                    Fate::Keep => Ok(Some(n)),
                    Fate::Delete => Ok(None),
                }
            }
            _ if patch.is_null() => Ok(None),
            _ => Ok(Some(patch.clone())),
        }
    }

    /// `replaced`: the schema says a strategic merge replaces this map whole (patch strategy
    /// `replace`, or a CRD's atomic map-type), as `$patch: replace` would.
    fn map<'p: 'a>(
        &self,
        dest: &mut Node<'a>,
        patch: &Node<'p>,
        at: Cursor,
        replaced: bool,
    ) -> Result<Fate, MergeError> {
        let d = directives(patch)?;
        let strategy = match d.strategy {
            Strategy::Merge if replaced => Strategy::Replace,
            s => s,
        };
        match strategy {
            Strategy::Delete => return Ok(Fate::Delete),
            Strategy::Replace => {
                let mut fresh: Node<'a> = patch.shell();
                self.fields(&mut fresh, patch, at, &d, true)?;
                replace(dest, fresh, Keep::COMMENTS);
                return Ok(Fate::Keep);
            }
            Strategy::Merge => {}
        }
        if !dest.is_map() {
            let mut fresh: Node<'a> = patch.shell();
            self.fields(&mut fresh, patch, at, &d, true)?;
            replace(dest, fresh, Keep::COMMENTS);
            return Ok(Fate::Keep);
        }
        dest.take_comments_of(patch.comments());
        align::block_if_empty(dest, patch);
        self.fields(dest, patch, at, &d, false)?;
        Ok(Fate::Keep)
    }

    /// Merges the fields of the patch map into the map `dest`, then applies the directives.
    /// `built`: `dest` is a map being built from the patch (new, or replacing the resource's),
    /// rather than the resource's own; kyaml walks such a map against itself (kustomize's
    /// options only care).
    fn fields<'p: 'a>(
        &self,
        dest: &mut Node<'a>,
        patch: &Node<'p>,
        at: Cursor,
        d: &Directives<'_, 'p>,
        built: bool,
    ) -> Result<(), MergeError> {
        // Keys are found by hash in wide maps, and removals wait for one pass at the end. Keys
        // pair as data (`0x1` names the resource's `1`), except with kustomize's options: kyaml
        // walks fields by their names as strings, so there `0x1` is another key.
        let pairing = if self.opts.kustomize {
            Pairing::Text
        } else {
            Pairing::Data
        };
        if pairing == Pairing::Text && !built {
            same_key_spelled_otherwise(dest, patch)?;
        }
        let mut positions = KeyPositions::with(dest, pairing);
        let merged = self.each_field(dest, patch, at, built, &mut positions);
        positions.compact(dest);
        merged?;
        if self.opts.kustomize && !built {
            self.settle_untouched(dest, patch, at)?;
        }
        for (list, values) in &d.delete_from {
            if let Some(target) = dest.get_mut(list) {
                let mut ids = ValueIds::default();
                for v in values.items() {
                    ids.id(v);
                }
                if let Some(items) = target.items_mut() {
                    items.retain(|i| ids.known(i).is_none());
                }
            }
        }
        for (list, order) in &d.set_order {
            let (meta, _) = align::field(self.schema, at, list, &[patch]);
            let keys = match &meta.list {
                Some(ListMerge::Map { keys }) => Some(keys.clone()),
                _ => None,
            };
            if let Some(target) = dest.get_mut(list) {
                set_element_order(target, order, keys.as_deref(), patch.get(list))
                    .map_err(|e| e.within(Seg::field(list)))?;
            }
        }
        if let Some(keep) = &d.retain_keys {
            let keep: HashSet<&str> = keep.iter().copied().collect();
            // A key stays when the directive names it by its text or as data (`"1"` keeps `0x1`).
            let kept = |k: &Node<'_>| {
                k.as_str().is_some_and(|t| keep.contains(t))
                    || align::key_text(k).is_some_and(|t| keep.contains(t.as_ref()))
            };
            if let Some(es) = dest.entries_mut() {
                es.retain(|e| kept(&e.key));
            }
        }
        Ok(())
    }

    /// The patch's fields merged into `dest`, one by one (see [`Merger::fields`]).
    fn each_field<'p: 'a>(
        &self,
        dest: &mut Node<'a>,
        patch: &Node<'p>,
        at: Cursor,
        built: bool,
        positions: &mut KeyPositions,
    ) -> Result<(), MergeError> {
        for pe in patch.entries() {
            let key_text = pe.key.as_str();
            if key_text.is_some_and(is_directive) {
                continue;
            }
            let key = key_text.unwrap_or_default();
            let pos = positions.find_node(dest, &pe.key);
            let seg = || Seg::field(key);
            match pos {
                Some(i) => {
                    if pe.value.is_null() {
                        positions.remove(dest, i);
                        continue;
                    }
                    let Some(de) = dest.entries_mut().and_then(|es| es.get_mut(i)) else {
                        continue;
                    };
                    let (meta, child) = align::field(self.schema, at, key, &[&de.key, &pe.key]);
                    // The same key spelled otherwise takes the patch's spelling: one key.
                    place::respell_key(&mut de.key, &pe.key);
                    de.key.take_comments_of(pe.key.comments());
                    let fate = self
                        .value(&mut de.value, &pe.value, child, &meta)
                        .map_err(|e| e.within(seg()))?;
                    if let Fate::Delete = fate {
                        positions.remove(dest, i);
                    }
                }
                None => {
                    let (meta, child) = align::field(self.schema, at, key, &[&pe.key]);
                    let kyaml_kind = self
                        .opts
                        .kustomize
                        .then(|| kustomize::list_kind(&meta, &pe.value))
                        .flatten();
                    let new = match kyaml_kind {
                        Some(kind) => self.kyaml_list(None, &pe.value, child, kind, built),
                        None => self.build(&pe.value, child, &meta),
                    };
                    if let Some(v) = new.map_err(|e| e.within(seg()))? {
                        if let Some(es) = dest.entries_mut() {
                            es.push(Entry {
                                key: pe.key.clone(),
                                value: v,
                            });
                            positions.pushed(dest);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn list<'p: 'a>(
        &self,
        dest: &mut Node<'a>,
        patch: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<Fate, MergeError> {
        // kustomize's options: kyaml's list walk, where it is not ours.
        if self.opts.kustomize {
            if let Some(kind) = kustomize::list_kind(meta, patch) {
                let existing = (!dest.is_null()).then_some(&*dest);
                return match self.kyaml_list(existing, patch, at, kind, false)? {
                    Some(list) => {
                        replace(dest, list, Keep::COMMENTS);
                        Ok(Fate::Keep)
                    }
                    None => Ok(Fate::Delete),
                };
            }
        }
        // An element holding only `$patch` speaks for the whole list.
        let mut strategy = Strategy::Merge;
        for (i, item) in patch.items().iter().enumerate() {
            if let Some(v) = list_directive(item) {
                strategy = strategy_of(v)
                    .map_err(|e| e.within(Seg::field(PATCH)).within(Seg::Index(i)))?;
            }
        }
        let elements: Vec<&Node<'p>> = patch
            .items()
            .iter()
            .filter(|i| list_directive(i).is_none())
            .collect();
        match strategy {
            Strategy::Delete => return Ok(Fate::Delete),
            Strategy::Replace => {
                let fresh = self.fresh_list(patch, &elements, at, &ListKind::Atomic)?;
                replace(dest, fresh, Keep::COMMENTS);
                return Ok(Fate::Keep);
            }
            Strategy::Merge => {}
        }
        let kind = align::list_kind(meta, self.opts.infer_keys, &[dest, patch], |i| {
            list_directive(i).is_some()
        });
        // A keyed list of anything but maps cannot be paired: it is replaced.
        let kind = match kind {
            ListKind::Keyed(_)
                if !elements.iter().all(|i| i.is_map())
                    || !dest.items().iter().all(Node::is_map) =>
            {
                ListKind::Atomic
            }
            k => k,
        };
        if !dest.is_seq() || matches!(kind, ListKind::Atomic) {
            if matches!(kind, ListKind::Keyed(_)) && elements.is_empty() && dest.is_seq() {
                return Ok(Fate::Keep);
            }
            let fresh = self.fresh_list(patch, &elements, at, &kind)?;
            replace(dest, fresh, Keep::COMMENTS);
            return Ok(Fate::Keep);
        }
        dest.take_comments_of(patch.comments());
        align::block_if_empty(dest, patch);
        match kind {
            ListKind::Set => self.merge_set(dest, &elements),
            ListKind::Keyed(keys) => self.merge_keyed(dest, &elements, at, &keys)?,
            ListKind::Atomic => {}
        }
        Ok(Fate::Keep)
    }

    /// A list built from the patch's elements alone.
    fn fresh_list<'p: 'a>(
        &self,
        patch: &Node<'p>,
        elements: &[&Node<'p>],
        at: Cursor,
        kind: &ListKind,
    ) -> Result<Node<'a>, MergeError> {
        let mut fresh: Node<'a> = patch.shell();
        place::shell_from_patch(&mut fresh);
        let mut out = Vec::with_capacity(elements.len());
        for (i, e) in elements.iter().enumerate() {
            let seg = || match kind {
                ListKind::Keyed(keys) => {
                    key_values(e, keys).map_or(Seg::Index(i), |v| key_seg(keys, &v))
                }
                _ => Seg::Index(i),
            };
            // `$patch: delete` on an element of a list that does not exist yet: nothing to delete.
            if matches!(kind, ListKind::Keyed(_))
                && e.get(PATCH).is_some_and(|v| v.as_str() == Some("delete"))
            {
                continue;
            }
            // `null` is an element like any other (only a field set to null is removed).
            if e.is_null() {
                out.push((*e).clone());
                continue;
            }
            if let Some(n) = self
                .build(e, at, &FieldMeta::default())
                .map_err(|er| er.within(seg()))?
            {
                out.push(strip_element_directive(n));
            }
        }
        if let Some(items) = fresh.items_mut() {
            *items = out;
        }
        Ok(fresh)
    }

    /// A set merged as an ordered union: elements are identified by their data, by hash
    /// ([`ValueIds`]), so the cost is linear in the two lists.
    fn merge_set<'p: 'a>(&self, dest: &mut Node<'a>, elements: &[&Node<'p>]) {
        let Some(items) = dest.items_mut() else {
            return;
        };
        let mut ids = ValueIds::default();
        let item_ids: Vec<usize> = items.iter().map(|i| ids.id(i)).collect();
        let in_dest: HashSet<usize> = item_ids.iter().copied().collect();
        let patch_ids: Vec<usize> = elements.iter().map(|p| ids.id(p)).collect();
        // The patch's elements the resource lacks, each once.
        let mut is_new: HashSet<usize> = HashSet::default();
        let new: Vec<Node<'a>> = elements
            .iter()
            .zip(&patch_ids)
            .filter(|(_, id)| !in_dest.contains(id) && is_new.insert(**id))
            .map(|(p, _)| {
                let mut n = (*p).clone();
                place::from_patch(&mut n);
                n
            })
            .collect();
        match self.opts.new_items {
            NewItems::Append => items.extend(new),
            NewItems::Prepend => {
                // The patch's elements first, in its order, then the rest. An element the
                // resource has comes forward (its next copy, for each time the patch names it).
                let mut copies: HashMap<usize, std::collections::VecDeque<usize>> =
                    HashMap::default();
                for (i, id) in item_ids.iter().enumerate() {
                    copies.entry(*id).or_default().push_back(i);
                }
                let mut old: Vec<Option<Node<'a>>> = items.drain(..).map(Some).collect();
                let mut new_by_id: HashMap<usize, Node<'a>> = HashMap::default();
                for (n, id) in new.into_iter().zip(is_new_order(&patch_ids, &in_dest)) {
                    new_by_id.insert(id, n);
                }
                let mut front: Vec<Node<'a>> = Vec::with_capacity(old.len() + new_by_id.len());
                for id in &patch_ids {
                    match copies
                        .get_mut(id)
                        .and_then(std::collections::VecDeque::pop_front)
                    {
                        Some(i) => front.extend(old.get_mut(i).and_then(Option::take)),
                        None => front.extend(new_by_id.remove(id)),
                    }
                }
                front.extend(old.into_iter().flatten());
                *items = front;
            }
        }
    }

    fn merge_keyed<'p: 'a>(
        &self,
        dest: &mut Node<'a>,
        elements: &[&Node<'p>],
        at: Cursor,
        keys: &[MapKey],
    ) -> Result<(), MergeError> {
        // For a list field the schema's cursor is already its element type.
        let elem_at = at;
        let Some(items) = dest.items_mut() else {
            return Ok(());
        };
        let dest_keys: Vec<Option<Vec<String>>> =
            items.iter().map(|i| key_values(i, keys)).collect();
        // Elements are paired by hash: where each key occurs in the resource's list.
        let mut at_key: HashMap<&[String], Vec<usize>> = HashMap::default();
        for (i, k) in dest_keys.iter().enumerate() {
            if let Some(k) = k {
                at_key.entry(k.as_slice()).or_default().push(i);
            }
        }
        let first = |k: &[String]| at_key.get(k).and_then(|v| v.first()).copied();
        let mut added: Vec<Node<'a>> = Vec::new();
        let mut added_keys: HashSet<Vec<String>> = HashSet::default();
        let mut deleted: Vec<bool> = vec![false; items.len()];
        for (pi, p) in elements.iter().enumerate() {
            let pk = align::key_of(p, keys).map_err(|e| e.within(Seg::Index(pi)))?;
            let seg = key_seg(keys, &pk);
            let pos = first(&pk);
            let elem_strategy = match p.get(PATCH) {
                Some(v) => {
                    strategy_of(v).map_err(|e| e.within(Seg::field(PATCH)).within(seg.clone()))?
                }
                // Elements of a type the schema replaces whole are not merged.
                None if self.schema.is_replaced(elem_at) => Strategy::Replace,
                None => Strategy::Merge,
            };
            match (pos, elem_strategy) {
                (Some(_), Strategy::Delete) => {
                    // Every element with that key goes, as apimachinery deletes them.
                    for &i in at_key.get(pk.as_slice()).into_iter().flatten() {
                        if let Some(d) = deleted.get_mut(i) {
                            *d = true;
                        }
                    }
                }
                (None, Strategy::Delete) => {}
                (Some(i), Strategy::Replace) => {
                    let fresh = self
                        .build(&without_patch_key(p), elem_at, &FieldMeta::default())
                        .map_err(|e| e.within(seg))?;
                    if let Some(n) = fresh {
                        replace(&mut items[i], n, Keep::COMMENTS);
                    }
                }
                (Some(i), Strategy::Merge) => {
                    if let Fate::Delete = self
                        .value(&mut items[i], p, elem_at, &FieldMeta::default())
                        .map_err(|e| e.within(seg))?
                    {
                        if let Some(d) = deleted.get_mut(i) {
                            *d = true;
                        }
                    }
                }
                (None, _) => {
                    if added_keys.contains(&pk) {
                        continue;
                    }
                    if let Some(n) = self
                        .build(&without_patch_key(p), elem_at, &FieldMeta::default())
                        .map_err(|e| e.within(seg))?
                    {
                        added.push(n);
                        added_keys.insert(pk);
                    }
                }
            }
        }
        match self.opts.new_items {
            NewItems::Append => {
                let mut kept: Vec<Node<'a>> = Vec::with_capacity(items.len() + added.len());
                for (n, gone) in items.drain(..).zip(&deleted) {
                    if !gone {
                        kept.push(n);
                    }
                }
                kept.extend(added);
                *items = kept;
            }
            NewItems::Prepend => {
                // Elements the patch mentions, in the patch's order (new ones included), then
                // the rest in their order. When elements use more than one of the keys
                // (`containerPort` and `protocol`), kustomize only brings the new elements
                // forward: the ones it merged stay where they were.
                let in_use = |k: &MapKey| {
                    items.iter().chain(elements.iter().copied()).any(|e| {
                        e.get(&k.name)
                            .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
                    })
                };
                let move_existing = keys.iter().filter(|k| in_use(k)).count() <= 1;
                let mut old: Vec<Option<Node<'a>>> = items.drain(..).map(Some).collect();
                let mut front: Vec<Node<'a>> = Vec::new();
                let mut added = added.into_iter().peekable();
                for p in elements {
                    let Some(pk) = key_values(p, keys) else {
                        continue;
                    };
                    match first(&pk) {
                        Some(i) if move_existing && !deleted.get(i).copied().unwrap_or(true) => {
                            if let Some(n) = old[i].take() {
                                front.push(n);
                            }
                        }
                        Some(_) => {}
                        None => {
                            // The next added element is this one unless the patch named its
                            // key before (added once) or deletes it.
                            if added
                                .peek()
                                .is_some_and(|a| key_values(a, keys).as_ref() == Some(&pk))
                            {
                                front.extend(added.next());
                            }
                        }
                    }
                }
                front.extend(added);
                for (n, gone) in old.into_iter().zip(&deleted) {
                    if let Some(n) = n {
                        if !gone {
                            front.push(n);
                        }
                    }
                }
                *items = front;
            }
        }
        Ok(())
    }
}

/// The ids of the patch's new set elements in the order [`Merger::merge_set`] collects them:
/// each id the resource lacks, at its first occurrence.
fn is_new_order(patch_ids: &[usize], in_dest: &HashSet<usize>) -> Vec<usize> {
    let mut seen: HashSet<usize> = HashSet::default();
    patch_ids
        .iter()
        .copied()
        .filter(|id| !in_dest.contains(id) && seen.insert(*id))
        .collect()
}

/// A patch element without its `$patch` entry.
fn without_patch_key<'p>(p: &Node<'p>) -> Node<'p> {
    let mut n = p.clone();
    if n.get(PATCH).is_some() {
        n.remove(PATCH);
    }
    n
}

fn strip_element_directive(n: Node<'_>) -> Node<'_> {
    if n.get(PATCH).is_some() {
        without_patch_key(&n)
    } else {
        n
    }
}

/// `$setElementOrder/<list>`: the elements the order names come in its order (all the elements
/// with a named key, together), and the others keep their place relative to them as far as the
/// original order allows (apimachinery's rule: an element the order names goes before an
/// unnamed one only when it was before it already). The patch's own list must follow the order
/// (each of its elements named, in the same sequence), as apimachinery checks.
fn set_element_order(
    list: &mut Node<'_>,
    order: &Node<'_>,
    keys: Option<&[MapKey]>,
    patch_list: Option<&Node<'_>>,
) -> Result<(), MergeError> {
    // Elements are identified by their key fields, or (scalars) by their text.
    let ident = |n: &Node<'_>| -> Option<Vec<String>> {
        match keys {
            Some(keys) => key_values(n, keys),
            None => n.as_str().map(|s| vec![s.to_owned()]),
        }
    };
    let order_ids: Vec<Option<Vec<String>>> = order.items().iter().map(&ident).collect();
    if let Some(p) = patch_list {
        let mut rest = order_ids.iter();
        let follows = p
            .items()
            .iter()
            .filter(|i| !(i.is_map() && i.get(PATCH).is_some()))
            .all(|i| {
                let id = ident(i);
                rest.any(|o| *o == id)
            });
        if !follows {
            return Err(MergeError::new(MergeErrorKind::OrderMismatch(format!(
                "the patch's list and {SET_ORDER}"
            ))));
        }
    }
    let Some(items) = list.items_mut() else {
        return Ok(());
    };
    let original: Vec<Node<'_>> = std::mem::take(items);
    let ids: Vec<Option<Vec<String>>> = original.iter().map(&ident).collect();
    // Named elements, in the order's order; elements with the same key stay together.
    let mut at_id: HashMap<&Vec<String>, Vec<usize>> = HashMap::default();
    for (i, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            at_id.entry(id).or_default().push(i);
        }
    }
    let mut named: Vec<usize> = Vec::new();
    let mut is_named = vec![false; original.len()];
    for oid in order_ids.iter().flatten() {
        // Each key once: its elements are all named the first time.
        for i in at_id.remove(oid).into_iter().flatten() {
            if let Some(n) = is_named.get_mut(i) {
                *n = true;
            }
            named.push(i);
        }
    }
    let others: Vec<usize> = (0..original.len())
        .filter(|&i| !is_named.get(i).copied().unwrap_or(false))
        .collect();
    let (mut a, mut b) = (0, 0);
    let mut result: Vec<usize> = Vec::with_capacity(original.len());
    while a < named.len() || b < others.len() {
        let take_named = match (named.get(a), others.get(b)) {
            (Some(&n), Some(&o)) => n < o,
            (Some(_), None) => true,
            _ => false,
        };
        if take_named {
            result.push(named[a]);
            a += 1;
        } else {
            result.push(others[b]);
            b += 1;
        }
    }
    let mut slots: Vec<Option<Node<'_>>> = original.into_iter().map(Some).collect();
    for i in result {
        if let Some(n) = slots.get_mut(i).and_then(Option::take) {
            items.push(n);
        }
    }
    Ok(())
}

/// With keys paired as text (kustomize's options), a patch key that is one of `dest`'s keys as
/// data but spelled otherwise (`0x1` for `1`, `True` for `true`) would be added beside it: the
/// same key twice. That is an error at the key, before anything changes. One lookup per key.
fn same_key_spelled_otherwise(dest: &Node<'_>, patch: &Node<'_>) -> Result<(), MergeError> {
    if !dest.is_map() {
        return Ok(());
    }
    let index = align::FieldIndex::new(Some(dest));
    for pe in patch.entries() {
        let (Some(text), Some(de)) = (pe.key.as_str(), index.get(&pe.key)) else {
            continue;
        };
        if de.key.as_str() != Some(text) && !is_directive(text) {
            let kind = MergeErrorKind::KeySpelling {
                patch: text.to_owned(),
                resource: de.key.as_str().unwrap_or_default().to_owned(),
            };
            return Err(MergeError::new(kind).within(Seg::field(text)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::anchors::anchors_of;
    use crate::yaml::{emit_document, parse_stream};

    /// merge2 of `patch` into `dest` (a Deployment unless the documents say otherwise), written back.
    fn run(dest: &str, patch: &str, opts: Options) -> String {
        let mut d = parse_stream(dest).unwrap();
        let p = parse_stream(patch).unwrap();
        let schema = Schema::builtin();
        let root = d[0].root.as_ref().map_or(Cursor::default(), |r| {
            let (g, v) =
                crate::select::identity::split_api_version(r.str_at(&["apiVersion"]).unwrap_or(""));
            schema.root(g, v, r.str_at(&["kind"]).unwrap_or(""))
        });
        let node = d[0].root.as_mut().unwrap();
        let anchors = anchors_of(node).expect("anchors within budget");
        match merge(
            node,
            p[0].root.as_ref().unwrap(),
            &Context::new(&schema, root, &anchors).with(opts),
        )
        .unwrap()
        {
            Outcome::Deleted => "DELETED".into(),
            Outcome::Merged => {
                let mut out = String::new();
                emit_document(&d[0], &mut out);
                out
            }
        }
    }

    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the name\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: app\n        image: a:1\n        ports:\n        - containerPort: 80\n        - containerPort: 53\n          protocol: UDP\n      - name: sidecar\n        image: s:1\n";

    /// A resource kyaml's walk would leave as it is is told apart from one it would change (an
    /// entry written as nothing, two containers of one name, an element without its key), and
    /// a merge that takes the first as settled gives what the walk gives.
    #[test]
    fn a_resource_the_walk_leaves_as_it_is_merges_as_a_settled_one() {
        let schema = Schema::builtin();
        let root = schema.root("apps", "v1", "Deployment");
        let as_is = |text: &str| {
            let d = parse_stream(text).unwrap();
            settles_as_is(d[0].root.as_ref().unwrap(), &schema, root)
        };
        // A port without its protocol (ports are keyed by port and protocol): a list whose
        // walk this does not foresee.
        let plain = DEPLOY.replace("        - containerPort: 80\n", "");
        assert!(!as_is(DEPLOY));
        assert!(as_is(&plain));
        for changed in [
            plain.replace("  replicas: 1\n", "  replicas:\n"),
            plain.replace("- name: sidecar", "- name: app"),
            plain.replace("- name: sidecar\n", "- nom: sidecar\n"),
        ] {
            assert!(!as_is(&changed), "{changed}");
        }
        let patch = "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: a:2 # new\n";
        let opts = Options {
            kustomize: true,
            ..Options::default()
        };
        let walked = run(&plain, patch, opts);
        let d = parse_stream(&plain).unwrap();
        let mut node = d[0].root.clone().unwrap();
        let p = parse_stream(patch).unwrap();
        let anchors = Anchors::default();
        let cx = Context::new(&schema, root, &anchors)
            .with(opts)
            .kyaml_settled();
        assert!(matches!(
            merge(&mut node, p[0].root.as_ref().unwrap(), &cx),
            Ok(Outcome::Merged)
        ));
        let mut settled = String::new();
        emit_document(
            &crate::yaml::Document {
                root: Some(node),
                ..d[0].clone()
            },
            &mut settled,
        );
        assert_eq!(settled, walked);
        assert!(walked.contains("image: a:2 # new"), "{walked}");
    }

    /// Found by tests/it/properties.rs: a scalar with a line comment replaced by a list whose key
    /// has a comment in the patch kept the resource's comment, and a second run then took the
    /// patch's: the merge was not idempotent.
    #[test]
    fn a_scalar_replaced_by_a_list_takes_the_patchs_comment() {
        let dest = "kind: T\nspec:\n  a: a # one\n";
        for (patch, want) in [
            (
                "spec:\n  a: # two\n  - name: n0\n",
                "  a: # two\n  - name: n0\n",
            ),
            // Without a comment in the patch, the resource's stays.
            ("spec:\n  a:\n  - name: n0\n", "  a: # one\n  - name: n0\n"),
        ] {
            let once = run(dest, patch, Options::default());
            assert!(once.ends_with(want), "{once}");
            assert_eq!(run(&once, patch, Options::default()), once);
        }
    }

    /// Found by the merges fuzz target: a key read in block context with `{` in it, merged
    /// into a flow map, was written there as it was, which ends the key (\`{re{x: 1}\`).
    #[test]
    fn a_block_key_merged_into_a_flow_map_is_quoted_if_need_be() {
        let out = run(
            "a: {b: 1}\n",
            "a:\n  re{x: 2\n  c,d: 3\n",
            Options::default(),
        );
        let back = crate::yaml::parse_stream(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let a = back[0].root.as_ref().and_then(|r| r.get("a")).expect("a");
        assert_eq!(a.get("re{x").and_then(Node::as_str), Some("2"), "{out}");
        assert_eq!(a.get("c,d").and_then(Node::as_str), Some("3"), "{out}");
    }

    #[test]
    fn scalars_replace_and_comments_stay() {
        let out = run(
            DEPLOY,
            "spec:\n  replicas: 3\nmetadata:\n  labels:\n    app: web\n",
            Options::default(),
        );
        assert!(
            out.contains("  name: web # the name\n  labels:\n    app: web\n"),
            "{out}"
        );
        assert!(out.contains("replicas: 3\n"), "{out}");
    }

    #[test]
    fn keyed_lists_merge_in_place_and_append() {
        let patch = "spec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: s:2\n      - name: new\n        image: n:1\n";
        let out = run(DEPLOY, patch, Options::default());
        let names: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- name: "))
            .collect();
        assert_eq!(names, ["app", "sidecar", "new"]);
        assert!(out.contains("image: s:2"));
        let out = run(
            DEPLOY,
            patch,
            Options {
                new_items: NewItems::Prepend,
                infer_keys: false,
                kustomize: false,
            },
        );
        let names: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- name: "))
            .collect();
        assert_eq!(names, ["sidecar", "new", "app"]);
    }

    #[test]
    fn ports_pair_on_port_and_protocol_with_tcp_default() {
        // kustomize #3513: port 80/UDP next to 80/TCP must not collapse them.
        let patch = "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        ports:\n        - containerPort: 80\n          protocol: UDP\n        - containerPort: 80\n          name: http\n";
        let out = run(DEPLOY, patch, Options::default());
        assert!(out.contains("- containerPort: 80\n          name: http\n        - containerPort: 53\n          protocol: UDP\n        - containerPort: 80\n          protocol: UDP\n"), "{out}");
    }

    #[test]
    fn directives() {
        let del = "spec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        $patch: delete\n";
        assert!(!run(DEPLOY, del, Options::default()).contains("sidecar"));
        let replace = "spec:\n  template:\n    spec:\n      containers:\n      - $patch: replace\n      - name: only\n        image: o:1\n";
        let out = run(DEPLOY, replace, Options::default());
        assert!(
            out.contains("- name: only")
                && !out.contains("sidecar")
                && !out.contains("- name: app"),
            "{out}"
        );
        assert_eq!(
            run(DEPLOY, "$patch: delete\n", Options::default()),
            "DELETED"
        );
        let order = "spec:\n  template:\n    spec:\n      $setElementOrder/containers:\n      - name: sidecar\n      - name: app\n      containers:\n      - name: app\n        image: a:2\n";
        let out = run(DEPLOY, order, Options::default());
        let names: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- name: "))
            .collect();
        assert_eq!(names, ["sidecar", "app"], "{out}");
        let retain = "spec:\n  strategy:\n    $retainKeys: [type]\n    type: Recreate\n";
        let dest = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n    type: RollingUpdate\n    rollingUpdate:\n      maxSurge: 1\n";
        assert_eq!(
            run(dest, retain, Options::default()),
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n    type: Recreate\n"
        );
        let fin = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [a, b, c]\n";
        assert_eq!(
            run(
                fin,
                "metadata:\n  $deleteFromPrimitiveList/finalizers: [b]\n  finalizers: [d]\n",
                Options::default()
            ),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [a, c, d]\n"
        );
        let bad = parse_stream("spec:\n  $patch: nope\n").unwrap();
        let mut d = parse_stream(DEPLOY).unwrap();
        let err = merge(
            d[0].root.as_mut().unwrap(),
            bad[0].root.as_ref().unwrap(),
            &Context::new(&Schema::builtin(), Cursor::default(), &Anchors::default())
                .with(Options::default()),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "spec.$patch: unknown patch strategy \"nope\" (expected delete, replace or merge)"
        );
    }

    #[test]
    fn null_removes_and_lists_without_keys_are_replaced_or_inferred() {
        let dest = "kind: Foo\nspec:\n  items:\n  - name: a\n    v: 1\n  - name: b\n  args: [x, y]\n  drop: me\n";
        let patch = "spec:\n  items:\n  - name: b\n    v: 2\n  args: [z]\n  drop: null\n";
        assert_eq!(
            run(dest, patch, Options::default()),
            "kind: Foo\nspec:\n  items:\n  - name: a\n    v: 1\n  - name: b\n    v: 2\n  args: [z]\n"
        );
        assert_eq!(
            run(
                dest,
                patch,
                Options {
                    infer_keys: false,
                    ..Options::default()
                }
            ),
            "kind: Foo\nspec:\n  items:\n  - name: b\n    v: 2\n  args: [z]\n"
        );
    }

    /// The copy an alias becomes carries no anchor: one nested in it would capture the later
    /// aliases of its name, which would then read the merged value.
    #[test]
    fn the_copy_an_alias_becomes_carries_no_anchor() {
        let dest = "kind: Foo\na: &x\n  b: &y\n    c: 1\nd: *x\ne: *y\n";
        assert_eq!(
            run(dest, "d:\n  b:\n    c: 2\n", Options::default()),
            "kind: Foo\na: &x\n  b: &y\n    c: 1\nd:\n  b:\n    c: 2\ne: *y\n"
        );
    }

    #[test]
    fn merging_into_an_alias_changes_only_that_place() {
        let dest = "kind: Foo\na: &x\n  k: 1\nb: *x\n";
        assert_eq!(
            run(dest, "b:\n  j: 2\n", Options::default()),
            "kind: Foo\na: &x\n  k: 1\nb:\n  k: 1\n  j: 2\n"
        );
    }

    /// Keys that are collections pair by data in wide maps too (found by hash there): the
    /// patch's `[k, 3]` merges into the resource's `[k, 3]`, a new one is appended, a null one
    /// removes.
    #[test]
    fn collection_keys_pair_by_data_in_wide_maps() {
        let mut dest = String::from("kind: Foo\nm:\n");
        for i in 0..30 {
            dest.push_str(&format!("  [k, {i}]: {{v: {i}}}\n"));
        }
        let patch = "m:\n  [k, 3]: {w: x}\n  [k, 99]: new\n  [k, 7]: null\n  plain: 1\n";
        let out = run(&dest, patch, Options::default());
        assert!(out.contains("  [k, 3]: {v: 3, w: x}\n"), "{out}");
        assert!(!out.contains("[k, 7]"), "{out}");
        assert!(
            out.ends_with("  [k, 29]: {v: 29}\n  [k, 99]: new\n  plain: 1\n"),
            "{out}"
        );
        assert_eq!(out.matches("[k, ").count(), 30, "{out}");
    }
}
