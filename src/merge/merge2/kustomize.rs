//! kustomize's strategic merge where it is not ours, for [`Options::kustomize`]: doc/KUSTOMIZE.md promises
//! kustomize's output under kustomize's options, quirks included. kustomize (v5.5, kyaml v0.18)
//! walks the resource and the patch together; what follows reproduces the steps of that walk
//! whose outcome differs from our merge, each checked against `kubectl kustomize`:
//!
//! * **Kinds** ([`Merger::same_kind`]): the resource decides a value's kind; a patch of another
//!   kind (`size: 2` patched with `size: {min: 1}`) is an error.
//! * **Lists without merge metadata** take the patch's list exactly as written, `$patch` elements
//!   and nulls included: kyaml does not look inside them.
//! * **Lists merged by key** ([`Merger::kyaml_keyed`]) pair their elements kyaml's way, by the
//!   text of the key fields some element gives a value, with no defaults (a port without
//!   `protocol` is not TCP), and put them together kyaml's way (the patch's new elements first).
//!   Where an element lacks a key the outcome is kyaml's, however odd: a UDP port patched onto a
//!   port without protocol is lost, a keyless element wipes the elements before it.
//! * **List directives** are kyaml's: the first element that has `$patch` decides, and only when
//!   it has nothing else; a list the resource does not have is walked against itself with its
//!   directive elements as data (`[{$patch: replace}, {name: D}]` leaves `[{$patch: replace}]`),
//!   while a list in a map the patch builds has its directive applied. An element's
//!   `$patch: replace` changes nothing (kyaml puts the resource's element back).
//! * **What the patch does not mention** is walked too ([`Merger::settle`]): in every map the walk
//!   reaches (all but the inside of lists without merge metadata), an entry with no value at all
//!   (`key:`) is dropped, and lists merged by key are put together again.
//!
//! Sets (lists of scalars merged as sets) merge as ours do, and stay with the parent module.
//!
//! Cost: a keyed list whose elements all carry their keys is merged by hash, in time linear in
//! the lists; kyaml's step-by-step walk (quadratic) is kept for lists where an element lacks a
//! key or is not a map, and bounded there ([`SCAN_WORK`]).

use super::{strategy_of, Fate, Merger, Strategy, PATCH};
use crate::hash::{HashMap, HashSet};
use crate::merge::align::{self, key_seg, ListKind};
use crate::merge::{MergeError, MergeErrorKind};
use crate::path::Seg;
use crate::schema::{Cursor, FieldMeta, Schema};
use crate::yaml::place;
use crate::yaml::{Entry, Kind, Node};

/// The most element comparisons kyaml's step-by-step list walk may cost (the square of the
/// elements of both lists), for lists where an element lacks its key: past it the merge is
/// refused rather than left to run for minutes (4,000 elements in all pass).
pub(crate) const SCAN_WORK: usize = 16_000_000;

/// Whether kyaml's list walk reduces to pairing by hash: every element of both lists is a
/// non-empty map whose key fields are all scalars with some text (not null, not empty).
fn clean(sides: &Sides<'_>, keys: &[String]) -> bool {
    match sides {
        Sides::Pair { dest, patch } => clean_lists(&[dest, patch], keys),
        Sides::Shared(list) => clean_lists(&[list], keys),
    }
}

/// [`clean`] for these lists.
fn clean_lists(lists: &[&[Node<'_>]], keys: &[String]) -> bool {
    !keys.is_empty()
        && keys.iter().all(|k| !k.is_empty())
        && lists.iter().flat_map(|l| l.iter()).all(|e| {
            e.is_map()
                && !e.entries().is_empty()
                && keys.iter().all(|k| {
                    e.get(k)
                        .is_some_and(|v| v.is_scalar() && !v.is_null() && !text(v).is_empty())
                })
        })
}

/// How kyaml merges a list, when its way is not ours: `Some` for lists merged by key and lists
/// without merge metadata, `None` for sets. Merge keys are never inferred under kustomize's
/// options.
pub(super) fn list_kind(meta: &FieldMeta, patch: &Node<'_>) -> Option<ListKind> {
    if !patch.is_seq() {
        return None;
    }
    match align::list_kind(meta, false, &[patch], |_| false) {
        ListKind::Set => None,
        kind => Some(kind),
    }
}

/// An element of a list [`Merger::kyaml_keyed_by_hash`] puts together: built from the patch, or
/// the resource's element at this index, walked in place.
enum Slot<'a> {
    Node(Node<'a>),
    Dest(usize),
}

/// The two lists kyaml walks together.
enum Sides<'a> {
    /// The resource's elements and the patch's.
    Pair {
        dest: Vec<Node<'a>>,
        patch: Vec<Node<'a>>,
    },
    /// One list standing for both: the patch's, where kyaml takes it as the resource's (the
    /// resource has none, the list belongs to a map built from the patch, or the patch says
    /// `$patch: replace`). A change on one side is a change on the other.
    Shared(Vec<Node<'a>>),
}

impl<'a> Sides<'a> {
    fn dest(&self) -> &[Node<'a>] {
        match self {
            Sides::Pair { dest, .. } => dest,
            Sides::Shared(list) => list,
        }
    }

    fn dest_mut(&mut self) -> &mut Vec<Node<'a>> {
        match self {
            Sides::Pair { dest, .. } => dest,
            Sides::Shared(list) => list,
        }
    }

    fn patch(&self) -> &[Node<'a>] {
        match self {
            Sides::Pair { patch, .. } => patch,
            Sides::Shared(list) => list,
        }
    }

    fn into_dest(self) -> Vec<Node<'a>> {
        match self {
            Sides::Pair { dest, .. } => dest,
            Sides::Shared(list) => list,
        }
    }
}

impl<'a> Merger<'_, '_, 'a> {
    /// The resource decides the kind of a value; a patch value of another kind is an error
    /// (kyaml checks every value it walks against the first non-null one, the resource's first).
    pub(super) fn same_kind(&self, dest: &Node<'a>, patch: &Node<'_>) -> Result<(), MergeError> {
        // An alias of the resource has its anchored node's kind: kustomize reads resources
        // with their aliases expanded.
        let dest = self.anchors.follow(dest);
        if dest.is_null() || patch.is_null() || patch.kind() == Kind::Alias {
            return Ok(());
        }
        if dest.kind() == patch.kind() {
            return Ok(());
        }
        Err(MergeError::new(MergeErrorKind::KindChange {
            resource: kind_name(dest),
            patch: kind_name(patch),
        }))
    }

    /// A list field walked kyaml's way. `dest`: the resource's list, `None` when the resource
    /// has none (absent or null); `built`: the list belongs to a map built from the patch.
    /// `None` when the list goes.
    pub(super) fn kyaml_list<'p: 'a>(
        &self,
        dest: Option<&Node<'a>>,
        patch: &Node<'p>,
        at: Cursor,
        kind: ListKind,
        built: bool,
    ) -> Result<Option<Node<'a>>, MergeError> {
        // A list without merge metadata (`list_kind` gives no sets): kyaml does not look
        // inside it, the patch's is the value, as written.
        let ListKind::Keyed(keys) = kind else {
            let mut list = patch.clone();
            place::from_patch(&mut list);
            return Ok(Some(list));
        };
        let names: Vec<String> = keys.iter().map(|k| k.name.clone()).collect();
        let mut items: Vec<Node<'a>> = patch.items().to_vec();
        // A list the resource does not have is the patch's, directive elements and all, walked
        // against itself; in a map built from the patch it is walked against itself too, but its
        // directive is read first.
        let sides = match (dest, built) {
            (None, false) => Sides::Shared(items),
            (None, true) => match list_directive(&mut items)? {
                Strategy::Delete => return Ok(None),
                _ => Sides::Shared(items),
            },
            (Some(d), _) => match list_directive(&mut items)? {
                Strategy::Delete => return Ok(None),
                Strategy::Replace => Sides::Shared(items),
                Strategy::Merge => Sides::Pair {
                    dest: d.items().to_vec(),
                    patch: items,
                },
            },
        };
        let pair = matches!(sides, Sides::Pair { .. });
        let merged = self.kyaml_keyed(sides, &names, at)?;
        let mut out: Node<'a> = match dest {
            Some(d) if pair => {
                let mut n = d.clone();
                n.take_comments_of(patch.comments());
                align::block_if_empty(&mut n, patch);
                n
            }
            _ => {
                let mut n = patch.shell();
                place::shell_from_patch(&mut n);
                n
            }
        };
        if let Some(is) = out.items_mut() {
            *is = merged;
        }
        Ok(Some(out))
    }

    /// kyaml's merge of a list by `keys`, prepending: the lists' elements paired by the text of
    /// their key fields, each pair walked, the results put together with the resource's
    /// elements.
    fn kyaml_keyed(
        &self,
        sides: Sides<'a>,
        keys: &[String],
        at: Cursor,
    ) -> Result<Vec<Node<'a>>, MergeError> {
        if clean(&sides, keys) {
            return self.kyaml_keyed_by_hash(sides, keys, at);
        }
        self.kyaml_keyed_by_scan(sides, keys, at)
    }

    /// [`Merger::kyaml_keyed`] where every element of both lists is a map with every key field a
    /// scalar of some text ([`clean`]): the same outcome as [`Merger::kyaml_keyed_by_scan`],
    /// found by hash. There kyaml's quirks reduce to this: each key tuple is walked once, the
    /// patch's first; the resource's elements of a tuple whose walk leaves nothing go; what
    /// was walked is put together with the resource's elements as kyaml's `appendListNode`
    /// does (with one key an element replaces the walked one of its key in place, with several
    /// it goes last), so of elements sharing a key the resource's last one stays.
    fn kyaml_keyed_by_hash(
        &self,
        sides: Sides<'a>,
        keys: &[String],
        at: Cursor,
    ) -> Result<Vec<Node<'a>>, MergeError> {
        let (mut dest, mut patch) = match sides {
            Sides::Pair { dest, patch } => (dest, Some(patch)),
            Sides::Shared(list) => (list, None),
        };
        let tuple = |e: &Node<'_>| key_tuple(e, keys);
        // The walk of a list the patch does not mention (the most common by far), when no two
        // elements share their keys: what follows comes down to walking each element in place
        // and dropping those left empty, without tuples to hash and keep.
        if patch.as_ref().is_some_and(Vec::is_empty) && distinct_keys(&dest, keys) {
            let meta = FieldMeta::default();
            for e in dest.iter_mut() {
                self.settle(e, at, &meta)
                    .map_err(|er| er.within(key_seg_of(keys, &tuple(e))))?;
            }
            dest.retain(|e| !(e.is_map() && e.entries().is_empty()));
            return Ok(dest);
        }
        // Where each tuple is, in the resource's list (all of them) and the patch's (the first).
        let mut in_dest: HashMap<Vec<String>, Vec<usize>> = HashMap::default();
        for (i, e) in dest.iter().enumerate() {
            in_dest.entry(tuple(e)).or_default().push(i);
        }
        let mut in_patch: HashMap<Vec<String>, usize> = HashMap::default();
        let mut tuples: Vec<Vec<String>> = Vec::new();
        let mut seen: HashSet<Vec<String>> = HashSet::default();
        for (j, e) in patch.iter().flatten().enumerate() {
            let t = tuple(e);
            in_patch.entry(t.clone()).or_insert(j);
            if seen.insert(t.clone()) {
                tuples.push(t);
            }
        }
        for e in &dest {
            let t = tuple(e);
            if seen.insert(t.clone()) {
                tuples.push(t);
            }
        }
        let mut alive = vec![true; dest.len()];
        // What was walked, in order: the patch's elements built, or the resource's elements,
        // walked in place and named by index, so that none is copied (each is put back once).
        let mut added: Vec<Option<Slot<'a>>> = Vec::with_capacity(tuples.len());
        let mut added_at: HashMap<Vec<String>, usize> = HashMap::default();
        let meta = FieldMeta::default();
        for t in tuples {
            let seg = || key_seg_of(keys, &t);
            let d = in_dest.get(&t).and_then(|v| v.first()).copied();
            let walked = match patch.as_mut() {
                Some(patch) => match in_patch.get(&t).and_then(|&j| patch.get_mut(j)) {
                    // Only the resource has it: walked alone.
                    None => match d.and_then(|i| dest.get_mut(i)) {
                        Some(e) => {
                            self.settle(e, at, &meta).map_err(|er| er.within(seg()))?;
                            d.map(Slot::Dest)
                        }
                        None => None,
                    },
                    Some(pe) => {
                        let strategy = take_directive(pe).map_err(|er| er.within(seg()))?;
                        match (d.and_then(|i| dest.get_mut(i)), strategy) {
                            (_, Strategy::Delete) => None,
                            (Some(de), Strategy::Merge) => {
                                match self
                                    .value(de, pe, at, &meta)
                                    .map_err(|er| er.within(seg()))?
                                {
                                    Fate::Keep => d.map(Slot::Dest),
                                    Fate::Delete => None,
                                }
                            }
                            // New, or replacing: the patch's element, built.
                            _ => self
                                .rebuild(pe, at)
                                .map_err(|er| er.within(seg()))?
                                .map(Slot::Node),
                        }
                    }
                },
                // One list for both sides.
                None => match d.and_then(|i| dest.get_mut(i)) {
                    None => None,
                    Some(e) => match take_directive(e).map_err(|er| er.within(seg()))? {
                        Strategy::Delete => None,
                        _ => self
                            .rebuild(e, at)
                            .map_err(|er| er.within(seg()))?
                            .map(Slot::Node),
                    },
                },
            };
            let empty = |v: &Node<'_>| v.is_map() && v.entries().is_empty();
            let walked = walked.filter(|s| match s {
                Slot::Node(v) => !empty(v),
                Slot::Dest(i) => dest.get(*i).is_some_and(|v| !empty(v)),
            });
            match walked {
                None => {
                    for &i in in_dest.get(&t).into_iter().flatten() {
                        if let Some(a) = alive.get_mut(i) {
                            *a = false;
                        }
                    }
                }
                Some(v) => {
                    added_at.insert(t, added.len());
                    added.push(Some(v));
                }
            }
        }
        // kyaml's appendListNode: the resource's remaining elements one by one.
        for (i, (e, live)) in dest.iter().zip(alive).enumerate() {
            if !live || e.is_null() || (e.is_map() && e.entries().is_empty()) {
                continue;
            }
            let t = tuple(e);
            match added_at.get(&t).copied() {
                Some(k) if keys.len() == 1 => {
                    if let Some(slot) = added.get_mut(k) {
                        *slot = Some(Slot::Dest(i));
                    }
                }
                found => {
                    if let Some(slot) = found.and_then(|k| added.get_mut(k)) {
                        *slot = None;
                    }
                    added_at.insert(t, added.len());
                    added.push(Some(Slot::Dest(i)));
                }
            }
        }
        // Each of the resource's elements is named at most once: the walk names the first of a
        // tuple, and the loop above puts each element in that tuple's slot or a new one.
        let mut dest: Vec<Option<Node<'a>>> = dest.into_iter().map(Some).collect();
        Ok(added
            .into_iter()
            .flatten()
            .filter_map(|s| match s {
                Slot::Node(n) => Some(n),
                Slot::Dest(i) => dest.get_mut(i).and_then(Option::take),
            })
            .collect())
    }

    /// [`Merger::kyaml_keyed`] step by step as kyaml takes it, for lists with elements that lack
    /// a key field or are not maps, where its tuple unification and element matching decide.
    /// Its cost grows with the product of the lists' lengths, so it is bounded ([`SCAN_WORK`]).
    fn kyaml_keyed_by_scan(
        &self,
        mut sides: Sides<'a>,
        keys: &[String],
        at: Cursor,
    ) -> Result<Vec<Node<'a>>, MergeError> {
        let elements = sides.dest().len().saturating_add(sides.patch().len());
        if elements.saturating_mul(elements) > SCAN_WORK {
            return Err(MergeError::new(MergeErrorKind::TooMuchWork(format!(
                "kustomize's pairing of {elements} list elements, some without their merge key \
                 ({}), compares each with every other: past {SCAN_WORK} comparisons it is \
                 refused; give every element its key, or drop kustomize's options \
                 (newListItems: prepend with inferMergeKeys: false)",
                keys.join(", ")
            ))));
        }
        // The key tuples of the elements, the patch's first, each once.
        let mut tuples: Vec<Vec<String>> = Vec::new();
        for e in sides.patch().iter().chain(sides.dest()) {
            let t = key_tuple(e, keys);
            if !tuples.contains(&t) {
                tuples.push(t);
            }
        }
        if keys.len() > 1 {
            unify_tuples(&mut tuples);
        }
        if tuples.is_empty() {
            return Ok(sides.into_dest());
        }
        let mut added: Vec<Node<'a>> = Vec::new();
        let mut last_keys: Vec<String> = keys.to_vec();
        for t in &tuples {
            let (tkeys, tvalues) = usable_keys(&tuples, t, keys);
            // An element is found by the keys this tuple gives a value.
            let (fkeys, fvalues) = usable_keys(std::slice::from_ref(&tvalues), &tvalues, &tkeys);
            let seg = key_seg_of(&fkeys, &fvalues);
            let walked = self
                .kyaml_element(&mut sides, &fkeys, &fvalues, at)
                .map_err(|e| e.within(seg))?;
            match walked.filter(|v| !(v.is_map() && v.entries().is_empty())) {
                None => element_setter(sides.dest_mut(), None, &tkeys, &tvalues)?,
                Some(mut v) => {
                    for (k, value) in tkeys.iter().zip(&tvalues) {
                        if !value.is_empty() && v.is_map() && v.get(k).is_none() {
                            v.set(k, Node::plain(value.clone()));
                        }
                    }
                    element_setter(&mut added, Some(v), &tkeys, &tvalues)?;
                }
            }
            last_keys = tkeys;
        }
        let dest = sides.into_dest();
        append_list_node(&mut added, &dest, &last_keys)?;
        Ok(added)
    }

    /// Walks the elements of both sides that have these key values: the resource's element
    /// merged with the patch's (in place), or one of them alone. `None` when the element goes.
    fn kyaml_element(
        &self,
        sides: &mut Sides<'a>,
        keys: &[String],
        values: &[String],
        at: Cursor,
    ) -> Result<Option<Node<'a>>, MergeError> {
        let meta = FieldMeta::default();
        match sides {
            Sides::Pair { dest, patch } => {
                let d = find_element(dest, keys, values);
                let p = find_element(patch, keys, values);
                let Some(j) = p else {
                    return match d {
                        Some(i) => {
                            self.settle(&mut dest[i], at, &meta)?;
                            Ok(Some(dest[i].clone()))
                        }
                        None => Ok(None),
                    };
                };
                match (d, take_directive(&mut patch[j])?) {
                    (_, Strategy::Delete) => Ok(None),
                    (Some(i), Strategy::Merge) => {
                        match self.value(&mut dest[i], &patch[j], at, &meta)? {
                            Fate::Keep => Ok(Some(dest[i].clone())),
                            Fate::Delete => Ok(None),
                        }
                    }
                    // A new element, or one replacing the resource's: the patch's element,
                    // built. The resource's element stays as it was, and is put back when
                    // the lists are joined, so a `$patch: replace` element changes nothing.
                    _ => self.rebuild(&mut patch[j], at),
                }
            }
            Sides::Shared(list) => match find_element(list, keys, values) {
                None => Ok(None),
                Some(i) => match take_directive(&mut list[i])? {
                    Strategy::Delete => Ok(None),
                    _ => self.rebuild(&mut list[i], at),
                },
            },
        }
    }

    /// The element built from the patch's, which it becomes (kyaml builds it in place).
    fn rebuild(&self, element: &mut Node<'a>, at: Cursor) -> Result<Option<Node<'a>>, MergeError> {
        let built = self.build(element, at, &FieldMeta::default())?;
        if let Some(b) = &built {
            *element = b.clone();
        }
        Ok(built)
    }

    /// kyaml's walk of a resource value the patch does not mention: entries with no value
    /// (`key:`) go from its maps, and its lists merged by key are put together again, down to
    /// the lists without merge metadata, which kyaml does not enter.
    pub(super) fn settle(
        &self,
        node: &mut Node<'a>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<(), MergeError> {
        if self.settled {
            return Ok(());
        }
        match node.kind() {
            Kind::Map => {
                if let Some(es) = node.entries_mut() {
                    es.retain(|e| !is_bare_null(&e.value));
                    for e in es.iter_mut() {
                        self.settle_entry(e, at)?;
                    }
                }
            }
            Kind::Seq => {
                if let ListKind::Keyed(keys) = align::list_kind(meta, false, &[node], |_| false) {
                    let names: Vec<String> = keys.iter().map(|k| k.name.clone()).collect();
                    // Taken, not copied: the list is put together again from its own
                    // elements.
                    let sides = Sides::Pair {
                        dest: node.items_mut().map(std::mem::take).unwrap_or_default(),
                        patch: Vec::new(),
                    };
                    let merged = self.kyaml_keyed(sides, &names, at)?;
                    if let Some(is) = node.items_mut() {
                        *is = merged;
                    }
                }
            }
            Kind::Scalar | Kind::Alias => {}
        }
        Ok(())
    }

    /// [`Merger::settle`] for the entries of the resource's map `dest` that the patch map does
    /// not mention.
    pub(super) fn settle_untouched(
        &self,
        dest: &mut Node<'a>,
        patch: &Node<'_>,
        at: Cursor,
    ) -> Result<(), MergeError> {
        let Some(es) = dest.entries_mut().filter(|_| !self.settled) else {
            return Ok(());
        };
        let fields = align::FieldIndex::with(Some(patch), align::Pairing::Text);
        let mentioned = |k: Option<&str>| k.is_some_and(|k| fields.get_str(k).is_some());
        es.retain(|e| mentioned(e.key.as_str()) || !is_bare_null(&e.value));
        for e in es.iter_mut() {
            if !mentioned(e.key.as_str()) {
                self.settle_entry(e, at)?;
            }
        }
        Ok(())
    }

    /// [`Merger::settle`] for a map entry's value. A scalar has nothing to settle, so the
    /// schema is only asked about collections (most entries are scalars).
    fn settle_entry(&self, e: &mut Entry<'a>, at: Cursor) -> Result<(), MergeError> {
        let Entry { key, value } = e;
        if !(value.is_map() || value.is_seq()) {
            return Ok(());
        }
        let name = key.as_str().unwrap_or_default();
        let (m, child) = align::field(self.schema, at, name, &[key]);
        self.settle(value, child, &m)
            .map_err(|er| er.within(Seg::Field(name.to_owned())))
    }
}

/// Whether [`Merger::settle`] would leave `node` (of the type at `at`, with `meta`) exactly as
/// it is: no entry of its maps written as nothing, and each list merged by key one whose walk
/// comes down to walking each element in place ([`clean`], no two elements with the same keys)
/// with every element so too. Any other keyed list is put together by a walk this does not
/// foresee: false, and the caller walks. Lists without merge metadata are not entered, as the
/// walk does not enter them.
pub(super) fn settles_as_is(
    schema: &Schema,
    node: &Node<'_>,
    at: Cursor,
    meta: &FieldMeta,
) -> bool {
    match node.kind() {
        Kind::Map => node.entries().iter().all(|e| {
            if is_bare_null(&e.value) {
                return false;
            }
            if !(e.value.is_map() || e.value.is_seq()) {
                return true;
            }
            let name = e.key.as_str().unwrap_or_default();
            let (m, child) = align::field(schema, at, name, &[&e.key]);
            settles_as_is(schema, &e.value, child, &m)
        }),
        Kind::Seq => match align::list_kind(meta, false, &[node], |_| false) {
            ListKind::Keyed(keys) => {
                let names: Vec<String> = keys.iter().map(|k| k.name.clone()).collect();
                let items = node.items();
                let each = FieldMeta::default();
                clean_lists(&[items], &names)
                    && distinct_keys(items, &names)
                    && items.iter().all(|e| settles_as_is(schema, e, at, &each))
            }
            _ => true,
        },
        Kind::Scalar | Kind::Alias => true,
    }
}

fn kind_name(n: &Node<'_>) -> &'static str {
    match n.kind() {
        Kind::Scalar => "scalar",
        Kind::Seq => "list",
        Kind::Map => "map",
        Kind::Alias => "alias",
    }
}

/// Whether no two elements of a [`clean`] list have the same key values (the texts of their key
/// fields, as [`key_tuple`] reads them there).
fn distinct_keys(list: &[Node<'_>], keys: &[String]) -> bool {
    let mut seen: HashSet<Vec<&str>> = HashSet::default();
    list.iter()
        .all(|e| seen.insert(keys.iter().map(|k| e.get(k).map_or("", text)).collect()))
}

/// An entry value written as nothing (`key:`): kyaml drops it from every map it walks, where
/// `key: null` and `key: ~` stay.
fn is_bare_null(v: &Node<'_>) -> bool {
    v.is_null() && v.as_str() == Some("")
}

/// The text kyaml compares a field by: a scalar's, nothing for anything else.
fn text<'n>(v: &'n Node<'_>) -> &'n str {
    v.as_str().unwrap_or("")
}

/// The values of an element's key fields, as kyaml collects them to pair elements: the field's
/// text, or nothing when the field is absent, null or an empty collection.
fn key_tuple(element: &Node<'_>, keys: &[String]) -> Vec<String> {
    keys.iter()
        .map(|k| match element.get(k) {
            Some(v) if !(v.is_null() || empty_collection(v)) => text(v).to_owned(),
            _ => String::new(),
        })
        .collect()
}

fn empty_collection(v: &Node<'_>) -> bool {
    (v.is_map() && v.entries().is_empty()) || (v.is_seq() && v.items().is_empty())
}

/// kyaml merges key tuples that agree somewhere and differ only where one of them has no value
/// (`[80, ""]` and `[80, UDP]` both become `[80, UDP]`), every tuple against every other, in
/// order, each merge seen by the later comparisons.
fn unify_tuples(tuples: &mut [Vec<String>]) {
    for i in 0..tuples.len() {
        for j in 0..tuples.len() {
            if let Some(u) = unify(&tuples[i], &tuples[j]) {
                tuples[i] = u.clone();
                tuples[j] = u;
            }
        }
    }
}

fn unify(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b) {
        if x == y {
            common = true;
            out.push(x.clone());
        } else if !x.is_empty() && !y.is_empty() {
            return None;
        } else {
            out.push(if x.is_empty() { y.clone() } else { x.clone() });
        }
    }
    common.then_some(out)
}

/// The keys kyaml pairs by, and `values` for them: the keys some tuple of `all` gives a value,
/// or all of them when none does.
fn usable_keys(
    all: &[Vec<String>],
    values: &[String],
    keys: &[String],
) -> (Vec<String>, Vec<String>) {
    let used: Vec<bool> = (0..keys.len())
        .map(|i| all.iter().any(|t| t.get(i).is_some_and(|v| !v.is_empty())))
        .collect();
    if !used.contains(&true) {
        return (keys.to_vec(), values.to_vec());
    }
    let pick = |xs: &[String]| -> Vec<String> {
        xs.iter()
            .zip(&used)
            .filter(|(_, u)| **u)
            .map(|(x, _)| x.clone())
            .collect()
    };
    (pick(keys), pick(values))
}

/// The path step for an element found by these keys.
fn key_seg_of(keys: &[String], values: &[String]) -> Seg {
    key_seg(
        &keys
            .iter()
            .map(|k| crate::schema::MapKey {
                name: k.clone(),
                default: None,
            })
            .collect::<Vec<_>>(),
        values,
    )
}

/// The first map element whose key fields have exactly these texts.
fn find_element(list: &[Node<'_>], keys: &[String], values: &[String]) -> Option<usize> {
    list.iter().position(|e| {
        e.is_map()
            && keys
                .iter()
                .zip(values)
                .all(|(k, v)| e.get(k).is_some_and(|f| text(f) == v))
    })
}

/// kyaml's reading of a list's directive: the first map element with a `$patch` field decides,
/// when it has no other field (otherwise the list merges, and that element is an element). The
/// elements saying the same directive go; so do empty and null elements, as every change kyaml
/// makes to a list drops them.
fn list_directive(items: &mut Vec<Node<'_>>) -> Result<Strategy, MergeError> {
    let Some(i) = items
        .iter()
        .position(|e| e.is_map() && e.get(PATCH).is_some())
    else {
        return Ok(Strategy::Merge);
    };
    if items[i].entries().len() > 1 {
        return Ok(Strategy::Merge);
    }
    let value = items[i].get(PATCH).map(text).unwrap_or_default().to_owned();
    let strategy = items[i]
        .get(PATCH)
        .map_or(Ok(Strategy::Merge), strategy_of)
        .map_err(|e| e.within(Seg::field(PATCH)).within(Seg::Index(i)))?;
    element_setter(items, None, &[PATCH.to_owned()], &[value])?;
    Ok(strategy)
}

/// An element's `$patch`, taken out of it whatever it says (kyaml removes it as it reads it).
fn take_directive(element: &mut Node<'_>) -> Result<Strategy, MergeError> {
    let Some(v) = element.get(PATCH) else {
        return Ok(Strategy::Merge);
    };
    let strategy = strategy_of(v).map_err(|e| e.within(Seg::field(PATCH)))?;
    element.remove(PATCH);
    Ok(strategy)
}

/// kyaml's one tool for changing a list: every element whose key fields match `values` is
/// replaced by `element` (or removed, with `None`), and `element` is appended when none
/// matched. Its quirks are kustomize's output: null and empty elements are dropped on the way;
/// a value of nothing matches any element that has the field; with fewer values than keys the
/// last match stands for the rest; with no values no element matches and every element goes.
/// An element that is not a map cannot be matched on fields: an error, unless the first value
/// is a real one, which leaves such elements alone.
fn element_setter<'a>(
    list: &mut Vec<Node<'a>>,
    element: Option<Node<'a>>,
    keys: &[String],
    values: &[String],
) -> Result<(), MergeError> {
    let matches_maps_only =
        !keys.is_empty() && !keys[0].is_empty() && values.first().is_some_and(|v| !v.is_empty());
    let mut found = false;
    let mut kept = Vec::with_capacity(list.len() + 1);
    for e in list.drain(..) {
        if e.is_null() || (e.is_map() && e.entries().is_empty()) {
            continue;
        }
        if !e.is_map() && matches_maps_only {
            kept.push(e);
            continue;
        }
        let mut hit = false;
        let mut all = true;
        for (j, k) in keys.iter().enumerate() {
            if let Some(v) = values.get(j) {
                hit = field_matches(&e, k, v)?;
            }
            if !hit {
                all = false;
                break;
            }
        }
        if !all {
            if !values.is_empty() {
                kept.push(e);
            }
            continue;
        }
        found = true;
        if let Some(new) = &element {
            kept.push(new.clone());
        }
    }
    *list = kept;
    if let Some(new) = element {
        if !found && !new.is_null() {
            list.push(new);
        }
    }
    Ok(())
}

/// Whether `element` has the field `key` with the text `value` (any value, when `value` is
/// empty).
fn field_matches(element: &Node<'_>, key: &str, value: &str) -> Result<bool, MergeError> {
    if !element.is_map() {
        return Err(MergeError::new(MergeErrorKind::NotAMap(kind_name(element))));
    }
    Ok(element
        .get(key)
        .is_some_and(|f| value.is_empty() || text(f) == value))
}

/// kyaml joins the resource's (merged) elements to the list of what the patch brought, one by
/// one: an element without a key field is appended once for each missing field; then the
/// elements matching it (with several keys) are removed, and it replaces those matching it or
/// is appended.
fn append_list_node<'a>(
    dst: &mut Vec<Node<'a>>,
    src: &[Node<'a>],
    keys: &[String],
) -> Result<(), MergeError> {
    for e in src {
        let mut values = Vec::with_capacity(keys.len());
        for k in keys {
            let field = if e.is_null() {
                None
            } else if e.is_map() {
                e.get(k)
            } else {
                return Err(MergeError::new(MergeErrorKind::NotAMap(kind_name(e))));
            };
            match field {
                Some(f) => values.push(text(f).to_owned()),
                None => dst.push(e.clone()),
            }
        }
        if keys.len() > 1 {
            element_setter(dst, None, keys, &values)?;
        }
        element_setter(dst, Some(e.clone()), keys, &values)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::merge2::Options;
    use crate::schema::Schema;
    use crate::yaml::anchors::Anchors;
    use crate::yaml::{emit_node, parse_stream, EmitOptions};

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A list of `n` elements keyed by `keys`, with few distinct key values (so duplicates and
    /// shared keys happen), sometimes a `$patch` directive, as YAML text.
    fn list(rng: &mut Rng, n: u64, keys: &[&str], directives: bool) -> String {
        let mut s = String::new();
        for i in 0..n {
            s.push_str("- ");
            for k in keys {
                s.push_str(&format!("{k}: v{}\n  ", rng.below(4)));
            }
            s.push_str(&format!("x: {i}\n"));
            if rng.below(3) == 0 {
                s.push_str(&format!("  sub: {{a: {}}}\n", rng.below(3)));
            }
            if directives && rng.below(5) == 0 {
                let d = ["delete", "replace", "merge"][rng.below(3) as usize];
                s.push_str(&format!("  $patch: {d}\n"));
            }
        }
        if s.is_empty() {
            s.push_str("[]\n");
        }
        s
    }

    fn nodes(text: &str) -> Vec<Node<'static>> {
        let d = parse_stream(text).unwrap();
        d[0].root.clone().unwrap().into_owned().items().to_vec()
    }

    fn shown(r: &Result<Vec<Node<'static>>, MergeError>) -> String {
        match r {
            Ok(list) => emit_node(&Node::seq_of(list.clone()), EmitOptions::default()),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Pairing by hash gives exactly what kyaml's step-by-step walk gives, on lists whose
    /// elements carry their keys: duplicates, directives, one key and several, both sides and
    /// one shared list.
    #[test]
    fn pairing_by_hash_is_kyamls_walk() {
        let schema = Schema::builtin();
        let anchors = Anchors::default();
        let m = Merger {
            schema: &schema,
            opts: Options {
                new_items: super::super::NewItems::Prepend,
                infer_keys: false,
                kustomize: true,
            },
            anchors: &anchors,
            depth: Default::default(),
            settled: false,
        };
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..3000 {
            let keys: &[&str] = if case % 2 == 0 {
                &["name"]
            } else {
                &["name", "port"]
            };
            let names: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
            let (nd, np) = (rng.below(6), rng.below(6));
            let dest = nodes(&list(&mut rng, nd, keys, false));
            let patch = nodes(&list(&mut rng, np, keys, true));
            for shared in [false, true] {
                let sides = || {
                    if shared {
                        Sides::Shared(patch.clone())
                    } else {
                        Sides::Pair {
                            dest: dest.clone(),
                            patch: patch.clone(),
                        }
                    }
                };
                assert!(clean(&sides(), &names));
                let by_hash = m.kyaml_keyed_by_hash(sides(), &names, Cursor::default());
                let by_scan = m.kyaml_keyed_by_scan(sides(), &names, Cursor::default());
                assert_eq!(
                    shown(&by_hash),
                    shown(&by_scan),
                    "case {case}, shared {shared}\ndest:\n{}\npatch:\n{}",
                    shown(&Ok(dest.clone())),
                    shown(&Ok(patch.clone()))
                );
            }
        }
    }
}
