//! Strategic merge patch creation: the patch that turns OLD into NEW, as apimachinery's
//! `CreateTwoWayMergePatch` makes it, for `merge2` to apply.
//!
//! What goes into the patch, field by field (the schema decides how lists pair, as it does for
//! `merge2`: built-in kinds, CRDs, declarations, per-field comments, and, with
//! [`Options::infer_keys`], kyaml's associative keys):
//!
//! * fields pair by key as data (`1` and `0x1` are one field, named as NEW spells it, since
//!   `merge2` pairs keys as data and gives the result the patch's spelling; named even when
//!   only its spelling changed; named as OLD spells it for kyaml, which pairs keys by text); a
//!   field only NEW has: NEW's value; a field only OLD has: `null`;
//! * maps on both sides: the patch of their fields, or NEW's whole value where the schema
//!   replaces the map (patch strategy `replace`); with patch strategy `retainKeys`, a
//!   `$retainKeys` list of NEW's fields whenever something changed or a field went away;
//! * lists merged by key: the elements that changed (their merge keys and the patch of their
//!   fields), the new elements whole, `{<key>: <value>, $patch: delete}` for each removed one, and
//!   `$setElementOrder/<list>` (the keys of NEW's elements in order) when anything changed;
//! * lists merged as sets: the added values, `$deleteFromPrimitiveList/<list>` for the removed
//!   ones, `$setElementOrder/<list>` (NEW's list) when the list changed;
//! * anything else: NEW's value where it differs.
//!
//! Where apimachinery's patch would not give NEW when `merge2` applies it, the patch says more,
//! so that the promise of [`crate::diff`] holds: a list with duplicate keys or values, or one
//! whose elements lack their keys, is sent whole with a `{$patch: replace}` element; a list
//! paired by inferred keys, which `$setElementOrder` cannot reorder (`merge2` takes its keys from
//! the schema), is sent whole when its order changed. Nulls NEW holds in mappings are reported
//! ([`WarningKind::NullNotKept`]), fields named `$...` are errors.
//!
//! With [`Options::kustomize`] the patch is made for kustomize's merge (kyaml) instead, which
//! knows none of `$setElementOrder`, `$retainKeys` and `$deleteFromPrimitiveList`: see the
//! `impl` block of the kyaml functions below for what it does instead, and
//! [`WarningKind::KyamlRegroups`] and [`DiffErrorKind::Kustomize`] for what it cannot do.
//!
//! `Differ` also makes the two halves of a three-way patch (`three_way.rs`): changes and
//! additions only, or deletions only, as apimachinery's diff options do.
//!
//! What it must not do: apply the patch, or look at anything but the two nodes, the schema and
//! the options.

use crate::hash::{HashMap, HashSet};
use crate::merge::align::{self, key_values, ListKind, ScalarKey};
use crate::path::{Path, Seg};
use crate::schema::{Cursor, FieldMeta, MapKey, Schema};
use crate::yaml::{Comments, Entry, Kind, Node};

use super::identity::with_identity;
use super::nodes::{
    bare, expanded, go_text, has_duplicate_values, plain_copy, same, same_spelled, shell, KeyIndex,
};
use super::{
    checked, verify, written, Diff, DiffError, DiffErrorKind, Options, Warning, WarningKind,
};

pub(super) const PATCH: &str = "$patch";
pub(super) const RETAIN_KEYS: &str = "$retainKeys";
pub(super) const SET_ORDER: &str = "$setElementOrder/";
pub(super) const DELETE_FROM: &str = "$deleteFromPrimitiveList/";

/// The strategic merge patch that turns `old` into `new`, two resources (mappings) of the kind
/// at `root` in `schema`. Apply it with `merge2::merge` and [`Options::merge2_options`].
///
/// ```
/// use krm_merge::diff::{two_way, Options};
/// use krm_merge::schema::Schema;
/// use krm_merge::yaml::{emit_node, parse_stream};
/// let old = parse_stream("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: a:1\n  - name: b\n    image: b:1\n").unwrap();
/// let new = parse_stream("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: a:2 # bumped\n").unwrap();
/// let schema = Schema::builtin();
/// let root = schema.root("", "v1", "Pod");
/// let (old, new) = (old[0].root.as_ref().unwrap(), new[0].root.as_ref().unwrap());
/// let d = two_way::diff(old, new, &schema, root, &Options::default()).unwrap();
/// assert_eq!(emit_node(&d.patch, Default::default()), "\
/// apiVersion: v1
/// kind: Pod
/// metadata:
///   name: p
/// spec:
///   $setElementOrder/containers:
///   - name: a
///   containers:
///   - name: a
///     image: a:2 # bumped
///   - name: b
///     $patch: delete
/// ");
/// ```
pub fn diff<'n>(
    old: &Node<'_>,
    new: &Node<'n>,
    schema: &Schema,
    root: Cursor,
    opts: &Options,
) -> Result<Diff<'n>, DiffError> {
    let d = make(old, new, schema, root, opts)?;
    checked(old, new, d, verify::Engine::merge2(opts), schema, root)
}

/// [`diff`]'s patch, not yet checked (the package diff checks it as it writes it).
pub(super) fn make<'n>(
    old: &Node<'_>,
    new: &Node<'n>,
    schema: &Schema,
    root: Cursor,
    opts: &Options,
) -> Result<Diff<'n>, DiffError> {
    let (old, new) = (expanded(old)?, expanded(new)?);
    if !old.is_map() {
        return Err(DiffError::new(DiffErrorKind::NotAMap("old")));
    }
    if !new.is_map() {
        return Err(DiffError::new(DiffErrorKind::NotAMap("new")));
    }
    let mut d = Differ::new(schema, opts, Mode::ALL);
    if d.kustomize {
        d.kyaml_losses(Some(&old), &new, root, &FieldMeta::default())?;
    }
    let body = d.map(&old, &new, root, false)?;
    if d.kustomize && body.get(PATCH).is_some() {
        // kustomize ignores a patch that says `$patch: replace` at its top.
        return Err(DiffError::new(DiffErrorKind::Kustomize(
            "a top-level field changes between a mapping, a list and a scalar",
        )));
    }
    let changed = !body.entries().is_empty();
    if d.kustomize && !changed && !opts.identity {
        // No patch, no walk: kyaml loses nothing. (A patch of identity fields alone is still
        // applied, and kyaml walks the whole resource with it.)
        d.warnings.clear();
    }
    let mut warnings = d.warnings;
    let patch = if opts.identity {
        with_identity(&old, body, &mut warnings)
    } else {
        body
    };
    Ok(Diff {
        patch: written(patch),
        changed,
        warnings,
    })
}

/// Which parts of the difference a [`Differ`] writes (apimachinery's diff options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mode {
    /// Changed and added values.
    pub changes: bool,
    /// Removed fields, elements and values.
    pub deletions: bool,
}

impl Mode {
    pub(super) const ALL: Mode = Mode {
        changes: true,
        deletions: true,
    };
}

/// The walk that makes a strategic merge patch (or one half of a three-way patch).
pub(super) struct Differ<'s> {
    schema: &'s Schema,
    infer: bool,
    /// Patches for kyaml's strategic merge ([`Options::kustomize`]).
    kustomize: bool,
    mode: Mode,
    /// Where the walk is, for errors and warnings.
    path: Vec<Seg>,
    pub(super) warnings: Vec<Warning>,
}

impl<'s> Differ<'s> {
    pub(super) fn new(schema: &'s Schema, opts: &Options, mode: Mode) -> Self {
        Differ {
            schema,
            infer: opts.infers(),
            kustomize: opts.kustomize && mode == Mode::ALL,
            mode,
            path: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn err(&self, kind: DiffErrorKind) -> DiffError {
        DiffError {
            path: Path(self.path.clone()),
            kind,
        }
    }

    fn warn(&mut self, kind: WarningKind) {
        let w = Warning {
            path: Path(self.path.clone()),
            kind,
        };
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// A field name from the data, checked to be writable in a patch.
    fn field_key(&self, key: &Node<'_>) -> Result<(), DiffError> {
        match key.as_str() {
            Some(k) if k.starts_with('$') => Err(self.err(DiffErrorKind::DirectiveKey(k.into()))),
            _ => Ok(()),
        }
    }

    /// The patch of two mappings (empty when nothing changed). `retain`: the schema's patch
    /// strategy for this map is `retainKeys`.
    pub(super) fn map<'n>(
        &mut self,
        old: &Node<'_>,
        new: &Node<'n>,
        at: Cursor,
        retain: bool,
    ) -> Result<Node<'n>, DiffError> {
        let old_index = KeyIndex::new(old);
        if self.kustomize {
            // kyaml refuses a patch value of another kind than the resource's (a mapping for a
            // scalar, ...): the map is replaced whole instead.
            let changes_kind = new.entries().iter().find(|ne| {
                old_index.get(&ne.key).is_some_and(|oe| {
                    !oe.value.is_null() && !ne.value.is_null() && oe.value.kind() != ne.value.kind()
                })
            });
            if let Some(ne) = changes_kind {
                if self.path.is_empty() {
                    self.path
                        .push(Seg::field(ne.key.as_str().unwrap_or_default()));
                    let e = self.err(DiffErrorKind::Kustomize(
                        "a top-level field changes between a mapping, a list and a scalar",
                    ));
                    self.path.pop();
                    return Err(e);
                }
                return self.replaced_map(new, at);
            }
        }
        let mut out: Vec<Entry<'n>> = Vec::new();
        for ne in new.entries() {
            let key = ne.key.as_str().unwrap_or_default();
            self.path.push(Seg::field(key));
            let done = match old_index.get(&ne.key) {
                None if self.mode.changes => {
                    let (meta, child) = align::field(self.schema, at, key, &[&ne.key]);
                    self.push_copy(&mut out, ne, child, &meta, None)
                }
                None => Ok(()),
                Some(oe) => {
                    let (meta, child) = align::field(self.schema, at, key, &[&oe.key, &ne.key]);
                    if self.kustomize {
                        // kyaml pairs keys by text: a field both have is named as OLD spells it.
                        match respelled(oe, ne) {
                            Some(ne) => self.value(&oe.value, &ne, &meta, child, &mut out),
                            None => self.value(&oe.value, ne, &meta, child, &mut out),
                        }
                    } else {
                        self.respelled_value(oe, ne, &meta, child, &mut out)
                    }
                }
            };
            self.path.pop();
            done?;
        }
        let new_index = KeyIndex::new(new);
        let mut dropped = false;
        for oe in old.entries() {
            if new_index.get(&oe.key).is_some() {
                continue;
            }
            dropped |= !oe.value.is_null();
            if self.mode.deletions {
                self.path
                    .push(Seg::field(oe.key.as_str().unwrap_or_default()));
                let checked = self.field_key(&oe.key);
                self.path.pop();
                checked?;
                out.push(Entry {
                    key: bare(&oe.key),
                    value: Node::null(),
                });
            }
        }
        // kyaml knows no `$retainKeys`; the nulls for the fields that went do its work. The
        // fields are named as NEW spells them: the merge gives the result NEW's spelling.
        if retain && !self.kustomize && (!out.is_empty() || dropped) {
            let mut keep: Vec<&str> = new
                .entries()
                .iter()
                .filter(|e| !e.value.is_null())
                .filter_map(|e| e.key.as_str())
                .collect();
            if !keep.is_empty() {
                keep.sort_unstable();
                let list = keep.into_iter().map(|k| Node::string(k.to_owned()));
                out.insert(0, Entry::new(RETAIN_KEYS, Node::seq_of(list.collect())));
            }
        }
        let mut m = shell(new);
        if let Some(es) = m.entries_mut() {
            *es = out;
        }
        Ok(m)
    }

    /// Whether NEW's `new` says nothing OLD's `old` does not: the same data, and (unless the
    /// patch is for kyaml, which pairs keys by text) every key spelled alike, since the merge
    /// gives the result the patch's spelling.
    fn same(&self, old: &Node<'_>, new: &Node<'_>) -> bool {
        if self.kustomize {
            same(old, new)
        } else {
            same_spelled(old, new)
        }
    }

    /// [`Differ::value`] for a field both sides have, named as NEW spells it; when NEW spells
    /// its key otherwise than OLD (`0x1` for `1`) and the value did not change, the patch still
    /// names the field, so that the merge gives the result NEW's spelling: an empty patch for a
    /// mapping that merges, NEW's value otherwise. A null cannot say it (a null deletes).
    fn respelled_value<'n>(
        &mut self,
        oe: &Entry<'_>,
        ne: &Entry<'n>,
        meta: &FieldMeta,
        at: Cursor,
        out: &mut Vec<Entry<'n>>,
    ) -> Result<(), DiffError> {
        let before = out.len();
        self.value(&oe.value, ne, meta, at, out)?;
        let respelled = oe.key.as_str() != ne.key.as_str() || oe.key.tag() != ne.key.tag();
        if !respelled || out.len() != before || !self.mode.changes || ne.value.is_null() {
            return Ok(());
        }
        if oe.value.is_map() && ne.value.is_map() && !meta.replace {
            self.field_key(&ne.key)?;
            out.push(Entry {
                key: ne.key.clone(),
                value: shell(&ne.value),
            });
            return Ok(());
        }
        self.push_copy(out, ne, at, meta, None)
    }

    /// The patch entries for a field both sides have: none when it did not change.
    fn value<'n>(
        &mut self,
        old: &Node<'_>,
        ne: &Entry<'n>,
        meta: &FieldMeta,
        at: Cursor,
        out: &mut Vec<Entry<'n>>,
    ) -> Result<(), DiffError> {
        let new = &ne.value;
        match (old.kind(), new.kind()) {
            (Kind::Map, Kind::Map) if meta.replace => {
                if self.mode.changes && !self.same(old, new) {
                    if self.kustomize {
                        // kyaml merges maps whatever the schema says: say `$patch: replace`.
                        self.field_key(&ne.key)?;
                        let value = self.replaced_map(new, at)?;
                        out.push(Entry {
                            key: ne.key.clone(),
                            value,
                        });
                    } else {
                        self.push_copy(out, ne, at, meta, None)?;
                    }
                }
            }
            (Kind::Map, Kind::Map) => {
                let sub = self.map(old, new, at, meta.retain_keys)?;
                if !sub.entries().is_empty() {
                    self.field_key(&ne.key)?;
                    out.push(Entry {
                        key: ne.key.clone(),
                        value: sub,
                    });
                }
            }
            (Kind::Seq, Kind::Seq) => self.list(old, ne, meta, at, out)?,
            _ => {
                if self.mode.changes && !self.same(old, new) {
                    self.push_copy(out, ne, at, meta, None)?;
                }
            }
        }
        Ok(())
    }

    /// Puts NEW's field into the patch whole.
    fn push_copy<'n>(
        &mut self,
        out: &mut Vec<Entry<'n>>,
        ne: &Entry<'n>,
        at: Cursor,
        meta: &FieldMeta,
        kind: Option<ListKind>,
    ) -> Result<(), DiffError> {
        self.field_key(&ne.key)?;
        if ne.value.is_null() {
            self.warn(WarningKind::NullNotKept);
        }
        let value = self.copy(&ne.value, at, meta, kind)?;
        out.push(Entry {
            key: ne.key.clone(),
            value,
        });
        Ok(())
    }

    fn list<'n>(
        &mut self,
        old: &Node<'_>,
        ne: &Entry<'n>,
        meta: &FieldMeta,
        at: Cursor,
        out: &mut Vec<Entry<'n>>,
    ) -> Result<(), DiffError> {
        let new = &ne.value;
        let kind = match align::list_kind(meta, self.infer, &[old, new], |_| false) {
            ListKind::Keyed(_) if !old.items().iter().chain(new.items()).all(Node::is_map) => {
                ListKind::Atomic
            }
            k => k,
        };
        if old.items().is_empty() && !matches!(kind, ListKind::Atomic) {
            // Nothing to merge with: NEW's list, whole.
            if self.mode.changes && !new.items().is_empty() {
                self.push_copy(out, ne, at, meta, Some(kind))?;
            }
            return Ok(());
        }
        match kind {
            ListKind::Atomic => {
                if self.mode.changes && !self.same(old, new) {
                    self.push_copy(out, ne, at, meta, Some(ListKind::Atomic))?;
                }
                Ok(())
            }
            ListKind::Set if self.kustomize => self.kyaml_set(old, ne, at, out),
            ListKind::Set => self.set_list(old, ne, at, out),
            ListKind::Keyed(keys) if self.kustomize => self.kyaml_keyed(old, ne, at, &keys, out),
            ListKind::Keyed(keys) => {
                let inferred = meta.list.is_none();
                self.keyed_list(old, ne, meta, at, &keys, inferred, out)
            }
        }
    }

    /// A list merged as a set of scalars.
    fn set_list<'n>(
        &mut self,
        old: &Node<'_>,
        ne: &Entry<'n>,
        at: Cursor,
        out: &mut Vec<Entry<'n>>,
    ) -> Result<(), DiffError> {
        let (oi, ni) = (old.items(), ne.value.items());
        // `merge2` identifies values by value when merging and by text when ordering: a list
        // where either would mistake two values is sent whole.
        // Values OLD repeats are fine when NEW drops them (`$deleteFromPrimitiveList` removes
        // every copy); kept, `merge2` would keep the copies.
        let ids = |items: &[Node<'_>]| -> HashSet<ScalarKey> {
            items.iter().filter_map(ScalarKey::of).collect()
        };
        let mut texts = HashSet::default();
        let simple = oi.iter().chain(ni).all(Node::is_scalar)
            && !has_duplicate_values(ni)
            && ni
                .iter()
                .all(|n| texts.insert(n.as_str().unwrap_or_default()));
        let new_ids = ids(ni);
        let mut seen = HashSet::default();
        let old_repeats_kept = oi
            .iter()
            .filter_map(ScalarKey::of)
            .any(|k| !seen.insert(k.clone()) && new_ids.contains(&k));
        if !simple || old_repeats_kept {
            if self.mode.changes && !self.same(old, &ne.value) {
                self.push_replace(out, ne, at)?;
            }
            return Ok(());
        }
        let old_ids = ids(oi);
        let added: Vec<&Node<'n>> = ni
            .iter()
            .filter(|n| ScalarKey::of(n).is_some_and(|k| !old_ids.contains(&k)))
            .collect();
        let mut gone = HashSet::default();
        let mut removed: Vec<&Node<'_>> = oi
            .iter()
            .filter(|o| ScalarKey::of(o).is_some_and(|k| !new_ids.contains(&k) && gone.insert(k)))
            .collect();
        removed.sort_by_cached_key(|o| go_text(o));
        let key = ne.key.as_str().unwrap_or_default();
        let reorder = (self.mode.deletions && !removed.is_empty())
            || (self.mode.changes && !self.same(old, &ne.value));
        if reorder && !ni.is_empty() {
            let mut order = shell(&ne.value);
            if let Some(items) = order.items_mut() {
                *items = ni.iter().map(plain_copy).collect();
            }
            *order.comments_mut() = Comments::default();
            out.push(Entry::new(format!("{SET_ORDER}{key}"), order));
        }
        if self.mode.changes && !added.is_empty() {
            self.field_key(&ne.key)?;
            let mut list = shell(&ne.value);
            if let Some(items) = list.items_mut() {
                *items = added.into_iter().map(plain_copy).collect();
            }
            out.push(Entry {
                key: ne.key.clone(),
                value: list,
            });
        }
        if self.mode.deletions && !removed.is_empty() {
            self.field_key(&ne.key)?;
            let gone = removed.into_iter().map(bare).collect();
            out.push(Entry::new(
                format!("{DELETE_FROM}{key}"),
                Node::seq_of(gone),
            ));
        }
        Ok(())
    }

    /// A list whose elements are maps paired by `keys`. `inferred`: the keys are kyaml's
    /// associative keys, not the schema's.
    #[allow(clippy::too_many_arguments)]
    fn keyed_list<'n>(
        &mut self,
        old: &Node<'_>,
        ne: &Entry<'n>,
        meta: &FieldMeta,
        at: Cursor,
        keys: &[MapKey],
        inferred: bool,
        out: &mut Vec<Entry<'n>>,
    ) -> Result<(), DiffError> {
        let new = &ne.value;
        let (oi, ni) = (old.items(), new.items());
        let old_keys = self.element_keys(oi, keys)?;
        let new_keys = self.element_keys(ni, keys)?;
        // Keys OLD repeats are fine when NEW drops them (`$patch: delete` removes every element
        // with the key); NEW's keys must be unique: `merge2` folds elements with one key.
        let new_pos = unique_positions(&new_keys);
        let mut old_pos: HashMap<&[String], usize> = HashMap::default();
        let mut repeated_kept = false;
        for (i, k) in old_keys.iter().enumerate() {
            if old_pos.insert(k.as_slice(), i).is_some() {
                repeated_kept |= new_pos
                    .as_ref()
                    .is_none_or(|p| p.contains_key(k.as_slice()));
            }
        }
        let new_pos = match new_pos {
            Some(p) if !repeated_kept => p,
            _ => {
                if self.mode.changes && !self.same(old, new) {
                    self.push_replace(out, ne, at)?;
                }
                return Ok(());
            }
        };
        let replaced = self.schema.is_replaced(at);
        let mut items: Vec<Node<'n>> = Vec::new();
        for (n, nk) in ni.iter().zip(&new_keys) {
            self.path.push(align::key_seg(keys, nk));
            let done = self.element(
                n,
                nk,
                old_pos.get(nk.as_slice()).map(|&j| &oi[j]),
                keys,
                meta,
                at,
                replaced,
            );
            self.path.pop();
            if let Some(p) = done? {
                items.push(p);
            }
        }
        if self.mode.deletions {
            let mut gone: Vec<(String, Node<'n>)> = Vec::new();
            let mut marked = HashSet::default();
            for (o, ok) in oi.iter().zip(&old_keys) {
                if !new_pos.contains_key(ok.as_slice()) && marked.insert(ok.as_slice()) {
                    let mut marker = key_fields(o, keys);
                    marker.push(Entry::new(PATCH, Node::plain("delete")));
                    let order = ok.first().cloned().unwrap_or_default();
                    gone.push((order, Node::map_of(marker)));
                }
            }
            gone.sort_by(|a, b| a.0.cmp(&b.0));
            items.extend(gone.into_iter().map(|(_, m)| m));
        }
        let order_changed = old_keys != new_keys;
        let mut set_order = (self.mode.changes && (!items.is_empty() || order_changed))
            || (self.mode.deletions && !items.is_empty());
        if inferred && set_order {
            // `merge2` pairs this list by kyaml's keys but orders only lists the schema keys:
            // the patch must give NEW's order by appending, and must be paired the same way.
            let patch_list = Node::seq_of(items.clone());
            let pairs_the_same = align::list_kind(meta, true, &[old, &patch_list], |i| {
                i.entries().len() == 1 && i.get(PATCH).is_some()
            }) == ListKind::Keyed(keys.to_vec());
            let mut appended: Vec<&Vec<String>> = old_keys
                .iter()
                .filter(|k| new_pos.contains_key(k.as_slice()))
                .collect();
            appended.extend(
                new_keys
                    .iter()
                    .filter(|k| !old_pos.contains_key(k.as_slice())),
            );
            let in_order = appended.into_iter().eq(new_keys.iter());
            if !(pairs_the_same && in_order) {
                if self.mode.changes && !self.same(old, new) {
                    self.push_replace(out, ne, at)?;
                }
                return Ok(());
            }
            set_order = false;
        }
        let key = ne.key.as_str().unwrap_or_default();
        if set_order && !ni.is_empty() {
            let order = ni
                .iter()
                .map(|n| Node::map_of(key_fields(n, keys)))
                .collect();
            out.push(Entry::new(format!("{SET_ORDER}{key}"), Node::seq_of(order)));
        }
        if !items.is_empty() {
            self.field_key(&ne.key)?;
            let mut list = shell(new);
            if let Some(is) = list.items_mut() {
                *is = items;
            }
            out.push(Entry {
                key: ne.key.clone(),
                value: list,
            });
        }
        Ok(())
    }

    /// The patch element for NEW's element `n`, whose counterpart in OLD is `o` (if any).
    #[allow(clippy::too_many_arguments)]
    fn element<'n>(
        &mut self,
        n: &Node<'n>,
        _nk: &[String],
        o: Option<&Node<'_>>,
        keys: &[MapKey],
        meta: &FieldMeta,
        at: Cursor,
        replaced: bool,
    ) -> Result<Option<Node<'n>>, DiffError> {
        let Some(o) = o else {
            return if self.mode.changes {
                self.copy(n, at, &FieldMeta::default(), None).map(Some)
            } else {
                Ok(None)
            };
        };
        if replaced {
            return if self.mode.changes && !self.same(o, n) {
                self.copy(n, at, &FieldMeta::default(), None).map(Some)
            } else {
                Ok(None)
            };
        }
        let mut sub = self.map(o, n, at, meta.retain_keys)?;
        if sub.entries().is_empty() {
            return Ok(None);
        }
        let mut fields: Vec<Entry<'n>> = key_fields(n, keys)
            .into_iter()
            .filter(|k| k.key.as_str().is_some_and(|k| sub.get(k).is_none()))
            .collect();
        if let Some(es) = sub.entries_mut() {
            fields.append(es);
            *es = fields;
        }
        Ok(Some(sub))
    }

    /// The key of each element; an element without one is an error, as in apimachinery.
    fn element_keys(
        &self,
        items: &[Node<'_>],
        keys: &[MapKey],
    ) -> Result<Vec<Vec<String>>, DiffError> {
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                key_values(item, keys).ok_or_else(|| {
                    let missing = keys
                        .iter()
                        .find(|k| {
                            item.get(&k.name).is_none_or(Node::is_null) && k.default.is_none()
                        })
                        .or(keys.first())
                        .map(|k| k.name.clone())
                        .unwrap_or_default();
                    self.err(DiffErrorKind::MissingKey(missing)).within_index(i)
                })
            })
            .collect()
    }

    /// NEW's list sent whole, preceded by `{$patch: replace}` so that `merge2` takes it as it is.
    fn push_replace<'n>(
        &mut self,
        out: &mut Vec<Entry<'n>>,
        ne: &Entry<'n>,
        at: Cursor,
    ) -> Result<(), DiffError> {
        self.field_key(&ne.key)?;
        let mut list = self.copy(&ne.value, at, &FieldMeta::default(), Some(ListKind::Atomic))?;
        if let Some(items) = list.items_mut() {
            let mut marker = Node::map();
            marker.set(PATCH, Node::plain("replace"));
            items.insert(0, marker);
        }
        out.push(Entry {
            key: ne.key.clone(),
            value: list,
        });
        Ok(())
    }

    /// A copy of NEW's value `new` for the patch, made so that `merge2` builds exactly it:
    /// lists it would pair by key or as a set but could not (missing or duplicate keys,
    /// duplicate values) get a `{$patch: replace}` element, and nulls in mappings, which it
    /// drops, are reported. `kind`: how the list `new` merges, when the caller knows it.
    fn copy<'n>(
        &mut self,
        new: &Node<'n>,
        at: Cursor,
        meta: &FieldMeta,
        kind: Option<ListKind>,
    ) -> Result<Node<'n>, DiffError> {
        let mut fixes: Vec<Vec<usize>> = Vec::new();
        let mut steps: Vec<usize> = Vec::new();
        self.inspect(new, at, meta, kind, &mut steps, &mut fixes)?;
        if self.kustomize && !fixes.is_empty() {
            // kyaml reads a `$patch` element of a list the resource lacks as data, and folds
            // elements that share a key.
            return Err(self.err(DiffErrorKind::Kustomize(
                "a list holds two elements with one merge key, two equal values, or an element \
                 without its merge key",
            )));
        }
        let mut copy = plain_copy(new);
        for fix in fixes {
            if let Some(list) = descend(&mut copy, &fix).and_then(Node::items_mut) {
                let mut marker = Node::map();
                marker.set(PATCH, Node::plain("replace"));
                list.insert(0, marker);
            }
        }
        Ok(copy)
    }

    fn inspect(
        &mut self,
        node: &Node<'_>,
        at: Cursor,
        meta: &FieldMeta,
        kind: Option<ListKind>,
        steps: &mut Vec<usize>,
        fixes: &mut Vec<Vec<usize>>,
    ) -> Result<(), DiffError> {
        match node.kind() {
            Kind::Map => {
                for (i, e) in node.entries().iter().enumerate() {
                    let key = e.key.as_str().unwrap_or_default();
                    self.path.push(Seg::field(key));
                    steps.push(i);
                    let done = self.field_key(&e.key).and_then(|()| {
                        if e.value.is_null() {
                            self.warn(WarningKind::NullNotKept);
                        }
                        let (m, child) = align::field(self.schema, at, key, &[&e.key]);
                        self.inspect(&e.value, child, &m, None, steps, fixes)
                    });
                    steps.pop();
                    self.path.pop();
                    done?;
                }
                Ok(())
            }
            Kind::Seq => {
                let items = node.items();
                let kind = kind.unwrap_or_else(|| {
                    match align::list_kind(meta, self.infer, &[node], |_| false) {
                        ListKind::Keyed(_) if !items.iter().all(Node::is_map) => ListKind::Atomic,
                        k => k,
                    }
                });
                let whole = match &kind {
                    ListKind::Atomic => false,
                    ListKind::Set => has_duplicate_values(items),
                    ListKind::Keyed(keys) => {
                        let ks: Option<Vec<Vec<String>>> =
                            items.iter().map(|i| key_values(i, keys)).collect();
                        ks.is_none_or(|ks| unique_positions(&ks).is_none())
                    }
                };
                if whole {
                    fixes.push(steps.clone());
                }
                // `merge2` copies the values of a set as they are, and builds other elements.
                if matches!(kind, ListKind::Set) && !whole {
                    return Ok(());
                }
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    steps.push(i);
                    let done = self.inspect(item, at, &FieldMeta::default(), None, steps, fixes);
                    steps.pop();
                    self.path.pop();
                    done?;
                }
                Ok(())
            }
            Kind::Scalar | Kind::Alias => Ok(()),
        }
    }
}

/// What a list element of NEW is to kyaml's merge of a keyed list.
enum Element<'n> {
    /// Not in OLD: sent whole.
    New(Node<'n>),
    /// In OLD and changed: its key fields and the patch of its fields.
    Changed(Node<'n>),
    /// In OLD, the same.
    Same,
}

/// The patch of kustomize's flavour ([`Options::kustomize`]): what kyaml's merge applies as
/// written. kyaml puts a merged list together as the patch's elements, in the patch's order,
/// then the resource's others in the resource's order (where elements use more than one key
/// field, only the new elements come first: the others stay in place), and knows no `$setElementOrder`,
/// `$retainKeys` or `$deleteFromPrimitiveList`; it merges elements of keyed lists (an element's
/// `$patch: replace` does nothing), pairs them by the text of the key fields some element has
/// (no defaults), refuses a value of another kind, and takes a list's `{$patch: replace}`
/// element to replace the list.
impl Differ<'_> {
    /// NEW's map whole, after `$patch: replace`.
    fn replaced_map<'n>(&mut self, new: &Node<'n>, at: Cursor) -> Result<Node<'n>, DiffError> {
        let mut m = self.copy(new, at, &FieldMeta::default(), None)?;
        if let Some(es) = m.entries_mut() {
            es.insert(0, Entry::new(PATCH, Node::plain("replace")));
        }
        Ok(m)
    }

    /// A set of scalars: the fewest of NEW's values, from its start, that kyaml's order puts
    /// in NEW's order; NEW whole after `{$patch: replace}` when a value goes (kyaml cannot
    /// remove one) or a value repeats.
    fn kyaml_set<'n>(
        &mut self,
        old: &Node<'_>,
        ne: &Entry<'n>,
        at: Cursor,
        out: &mut Vec<Entry<'n>>,
    ) -> Result<(), DiffError> {
        let (oi, ni) = (old.items(), ne.value.items());
        if same(old, &ne.value) {
            return Ok(());
        }
        let keys = |items: &[Node<'_>]| -> Option<Vec<ScalarKey>> {
            items
                .iter()
                .map(|i| ScalarKey::of(i).filter(|_| i.is_scalar()))
                .collect()
        };
        let (Some(ok), Some(nk)) = (keys(oi), keys(ni)) else {
            return self.push_replace(out, ne, at);
        };
        let old_pos: HashMap<&ScalarKey, usize> =
            ok.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let new_set: HashSet<&ScalarKey> = nk.iter().collect();
        let removed = ok.iter().any(|k| !new_set.contains(k));
        if removed || old_pos.len() < ok.len() || new_set.len() < nk.len() {
            return self.push_replace(out, ne, at);
        }
        let cut = settled_tail(&nk, |k| old_pos.get(k).copied());
        if cut == 0 {
            return Ok(());
        }
        self.field_key(&ne.key)?;
        let mut list = shell(&ne.value);
        if let Some(items) = list.items_mut() {
            *items = ni.iter().take(cut).map(plain_copy).collect();
        }
        out.push(Entry {
            key: ne.key.clone(),
            value: list,
        });
        Ok(())
    }

    /// A list merged by key: NEW's elements from its start up to the last one that kyaml's
    /// order would not put in place by itself (new ones whole, changed ones as their patch,
    /// others as their key fields), then `$patch: delete` for those NEW dropped. NEW whole
    /// after `{$patch: replace}` where kyaml would pair the elements otherwise than by key (an
    /// element lacks a key field another has) or an element must be replaced whole.
    fn kyaml_keyed<'n>(
        &mut self,
        old: &Node<'_>,
        ne: &Entry<'n>,
        at: Cursor,
        keys: &[MapKey],
        out: &mut Vec<Entry<'n>>,
    ) -> Result<(), DiffError> {
        let new = &ne.value;
        let (oi, ni) = (old.items(), new.items());
        if same(old, new) {
            return Ok(());
        }
        let has = |e: &Node<'_>, k: &MapKey| {
            e.get(&k.name)
                .is_some_and(|v| v.is_scalar() && !v.is_null())
        };
        let used: Vec<&MapKey> = keys
            .iter()
            .filter(|k| oi.iter().chain(ni).any(|e| has(e, k)))
            .collect();
        let complete =
            !used.is_empty() && oi.iter().chain(ni).all(|e| used.iter().all(|k| has(e, k)));
        let ks = |items: &[Node<'_>]| -> Option<Vec<Vec<String>>> {
            items.iter().map(|i| key_values(i, keys)).collect()
        };
        let (Some(old_keys), Some(new_keys)) = (ks(oi), ks(ni)) else {
            return self.push_replace(out, ne, at);
        };
        let Some(new_pos) = unique_positions(&new_keys) else {
            return Err(self.err(DiffErrorKind::Kustomize(
                "two elements of the list have the same merge key",
            )));
        };
        let (Some(old_pos), true) = (unique_positions(&old_keys), complete) else {
            return self.push_replace(out, ne, at);
        };
        let replaced = self.schema.is_replaced(at);
        let mut elements: Vec<Element<'n>> = Vec::with_capacity(ni.len());
        for (n, nk) in ni.iter().zip(&new_keys) {
            let Some(&i) = old_pos.get(nk.as_slice()) else {
                elements.push(Element::New(self.copy(
                    n,
                    at,
                    &FieldMeta::default(),
                    None,
                )?));
                continue;
            };
            let o = &oi[i];
            if same(o, n) {
                elements.push(Element::Same);
                continue;
            }
            if replaced {
                return self.push_replace(out, ne, at);
            }
            self.path.push(align::key_seg(keys, nk));
            let sub = self.map(o, n, at, false);
            self.path.pop();
            let mut sub = sub?;
            if sub.get(PATCH).is_some() {
                // kyaml keeps the resource's element where an element says `$patch: replace`.
                return self.push_replace(out, ne, at);
            }
            let mut fields: Vec<Entry<'n>> = key_fields(n, keys)
                .into_iter()
                .filter(|k| k.key.as_str().is_some_and(|k| sub.get(k).is_none()))
                .collect();
            if let Some(es) = sub.entries_mut() {
                fields.append(es);
                *es = fields;
            }
            elements.push(if sub.entries().is_empty() {
                Element::Same
            } else {
                Element::Changed(sub)
            });
        }
        let mut items: Vec<Node<'n>> = Vec::new();
        if used.len() > 1 {
            // Elements that use more than one key field (ports: `containerPort` and
            // `protocol`): kyaml brings only the new elements forward and merges the others in
            // place. NEW must be its new elements, then OLD's others in OLD's order.
            let places: Vec<Option<usize>> = new_keys
                .iter()
                .map(|k| old_pos.get(k.as_slice()).copied())
                .collect();
            let first_kept = places
                .iter()
                .position(Option::is_some)
                .unwrap_or(places.len());
            let new_first = places.iter().skip(first_kept).all(Option::is_some);
            let in_order = places.iter().flatten().is_sorted();
            if !(new_first && in_order) {
                return self.push_replace(out, ne, at);
            }
            items.extend(elements.into_iter().filter_map(|e| match e {
                Element::New(c) | Element::Changed(c) => Some(c),
                Element::Same => None,
            }));
        } else {
            let settled: Vec<Option<usize>> = new_keys
                .iter()
                .zip(&elements)
                .map(|(k, e)| match e {
                    Element::Same => old_pos.get(k.as_slice()).copied(),
                    _ => None,
                })
                .collect();
            let cut = settled_tail(&settled, |p| *p);
            for ((n, e), _) in ni.iter().zip(elements).zip(0..cut) {
                items.push(match e {
                    Element::New(c) | Element::Changed(c) => c,
                    Element::Same => Node::map_of(key_fields(n, keys)),
                });
            }
        }
        for (o, ok) in oi.iter().zip(&old_keys) {
            if !new_pos.contains_key(ok.as_slice()) {
                let mut marker = key_fields(o, keys);
                marker.push(Entry::new(PATCH, Node::plain("delete")));
                items.push(Node::map_of(marker));
            }
        }
        if items.is_empty() {
            return Ok(());
        }
        self.field_key(&ne.key)?;
        let mut list = shell(new);
        if let Some(is) = list.items_mut() {
            *is = items;
        }
        out.push(Entry {
            key: ne.key.clone(),
            value: list,
        });
        Ok(())
    }

    /// What kyaml's walk does whatever the patch says (it walks every map of the resource, all
    /// but the inside of lists without merge metadata): it drops the entries without a value
    /// (`key:`), so a null NEW holds where NEW or OLD wrote it so is lost; it puts the elements
    /// of keyed lists together again, losing those without their key fields (both reported);
    /// and it fails on an element of a keyed list that is not a mapping (an error: kustomize
    /// cannot give such a resource). `old`: OLD's node at the same place, if any.
    fn kyaml_losses(
        &mut self,
        old: Option<&Node<'_>>,
        node: &Node<'_>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<(), DiffError> {
        let bare = |n: &Node<'_>| n.is_null() && n.as_str() == Some("");
        match node.kind() {
            Kind::Map => {
                for e in node.entries() {
                    let key = e.key.as_str().unwrap_or_default();
                    let was = old.filter(|o| o.is_map()).and_then(|o| o.get(key));
                    self.path.push(Seg::field(key));
                    if e.value.is_null() && (bare(&e.value) || was.is_some_and(bare)) {
                        self.warn(WarningKind::NullNotKept);
                    }
                    let (m, child) = align::field(self.schema, at, key, &[&e.key]);
                    let done = self.kyaml_losses(was, &e.value, child, &m);
                    self.path.pop();
                    done?;
                }
            }
            Kind::Seq => {
                let ListKind::Keyed(keys) = align::list_kind(meta, false, &[node], |_| false)
                else {
                    return Ok(());
                };
                let items = node.items();
                if items.iter().any(|i| !i.is_map()) {
                    return Err(self.err(DiffErrorKind::Kustomize(
                        "a list merged by key holds an element that is not a mapping",
                    )));
                }
                let mut olds: HashMap<Vec<String>, &Node<'_>> = HashMap::default();
                let mut keyless = false;
                for o in old.map(Node::items).unwrap_or_default() {
                    match key_values(o, &keys) {
                        Some(k) => {
                            olds.insert(k, o);
                        }
                        None => keyless = true,
                    }
                }
                // Elements of OLD without their key (a null one too) are regrouped by kyaml's
                // walk whatever the patch holds: the patch can then only apply.
                if keyless {
                    self.warn(WarningKind::KyamlRegroups);
                }
                let has = |e: &Node<'_>, k: &MapKey| {
                    e.get(&k.name)
                        .is_some_and(|v| v.is_scalar() && !v.is_null())
                };
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    let key = key_values(item, &keys);
                    let lacks = key.is_none()
                        || keys
                            .iter()
                            .any(|k| !has(item, k) && items.iter().any(|other| has(other, k)));
                    if lacks {
                        self.warn(WarningKind::KyamlRegroups);
                    }
                    let was = key.and_then(|k| olds.get(&k).copied());
                    let done = self.kyaml_losses(was, item, at, &FieldMeta::default());
                    self.path.pop();
                    done?;
                }
            }
            Kind::Scalar | Kind::Alias => {}
        }
        Ok(())
    }
}

/// Where the tail of a list that kyaml's order leaves in place starts: `place` gives an
/// element's position in OLD when it is an unchanged element of OLD (else `None`); the tail is
/// the longest run of such elements at the end, in OLD's order. kyaml puts the patch's
/// elements first, then OLD's others in OLD's order: a patch holding the elements before the
/// tail gives the list.
fn settled_tail<T>(items: &[T], place: impl Fn(&T) -> Option<usize>) -> usize {
    let mut cut = items.len();
    let mut next: Option<usize> = None;
    while let Some(p) = cut
        .checked_sub(1)
        .and_then(|i| items.get(i))
        .and_then(&place)
    {
        if next.is_some_and(|n| p >= n) {
            break;
        }
        next = Some(p);
        cut -= 1;
    }
    cut
}

impl DiffError {
    fn within_index(mut self, i: usize) -> Self {
        self.path.0.push(Seg::Index(i));
        self
    }
}

/// NEW's entry `ne` under the key of OLD's entry `oe` when the two spell one key (as data)
/// differently (`1` and `0x1`): the merges find a resource's field by its text, so a patch names
/// a field both versions have as the resource does. `None` when the spellings agree.
pub(super) fn respelled<'n>(oe: &Entry<'_>, ne: &Entry<'n>) -> Option<Entry<'n>> {
    if oe.key.as_str() == ne.key.as_str() {
        return None;
    }
    Some(Entry {
        key: bare(&oe.key),
        value: ne.value.clone(),
    })
}

/// The node at `steps` (entry or item positions) below `node`.
fn descend<'x, 'n>(node: &'x mut Node<'n>, steps: &[usize]) -> Option<&'x mut Node<'n>> {
    let Some((&first, rest)) = steps.split_first() else {
        return Some(node);
    };
    let next = if node.is_map() {
        node.entries_mut()?.get_mut(first).map(|e| &mut e.value)
    } else {
        node.items_mut()?.get_mut(first)
    }?;
    descend(next, rest)
}

/// Positions by key, or `None` when two elements share a key.
fn unique_positions(keys: &[Vec<String>]) -> Option<HashMap<&[String], usize>> {
    let mut m: HashMap<&[String], usize> = HashMap::default();
    for (i, k) in keys.iter().enumerate() {
        if m.insert(k.as_slice(), i).is_some() {
            return None;
        }
    }
    Some(m)
}

/// The key fields an element has, as patch entries (copies, comments dropped).
fn key_fields<'n>(item: &Node<'_>, keys: &[MapKey]) -> Vec<Entry<'n>> {
    keys.iter()
        .filter_map(|k| {
            item.entries()
                .iter()
                .find(|e| e.key.as_str() == Some(k.name.as_str()))
        })
        .map(|e| Entry {
            key: bare(&e.key),
            value: bare(&e.value),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::{merge2, Context};
    use crate::yaml::{emit_node, to_json};

    use crate::diff::test_node as n;

    fn root_of(schema: &Schema, node: &Node<'_>) -> Cursor {
        let id = crate::select::identity::Id::of(node);
        let (g, v) = id.group_version();
        schema.root(g, v, &id.kind)
    }

    /// The patch (without identity) and the result of applying it to `old`.
    fn run(old: &str, new: &str, opts: Options) -> (String, Diff<'static>) {
        let (old, new) = (n(old), n(new));
        let schema = Schema::builtin();
        let root = root_of(&schema, &old);
        let d = diff(&old, &new, &schema, root, &opts).unwrap();
        let mut applied = old.clone();
        merge2::merge(
            &mut applied,
            &d.patch,
            &Context::new(&schema, root, &Default::default()).with(opts.merge2_options()),
        )
        .unwrap();
        if d.warnings.is_empty() {
            assert_eq!(
                to_json(&applied).unwrap(),
                to_json(&new).unwrap(),
                "{}",
                emit_node(&d.patch, Default::default())
            );
        }
        (emit_node(&d.patch, Default::default()), d)
    }

    const NO_ID: Options = Options {
        infer_keys: false,
        identity: false,
        kustomize: false,
    };

    #[test]
    fn retain_keys_and_primitive_deletions() {
        let (p, _) = run(
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 1}\n",
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n    type: Recreate\n",
            NO_ID,
        );
        assert_eq!(p, "spec:\n  strategy:\n    $retainKeys:\n    - type\n    type: Recreate\n    rollingUpdate: null\n");
        let (p, _) = run(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [a, b, c]\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [c, d, a]\n",
            NO_ID,
        );
        assert_eq!(p, "metadata:\n  $setElementOrder/finalizers: [c, d, a]\n  finalizers: [d]\n  $deleteFromPrimitiveList/finalizers:\n  - b\n");
    }

    #[test]
    fn lists_merge2_cannot_reorder_are_sent_whole() {
        // Inferred keys: merge2 appends, so a new element in front needs the whole list.
        let opts = Options {
            infer_keys: true,
            identity: false,
            kustomize: false,
        };
        let (p, _) = run(
            "kind: Thing\nitems:\n- name: a\n  v: 1\n- name: b\n",
            "kind: Thing\nitems:\n- name: c\n- name: a\n  v: 2\n- name: b\n",
            opts,
        );
        assert_eq!(
            p,
            "items:\n- $patch: replace\n- name: c\n- name: a\n  v: 2\n- name: b\n"
        );
        // Appended at the end: a keyed patch will do.
        let (p, _) = run(
            "kind: Thing\nitems:\n- name: a\n  v: 1\n- name: b\n",
            "kind: Thing\nitems:\n- name: a\n  v: 2\n- name: c\n",
            opts,
        );
        assert_eq!(
            p,
            "items:\n- name: a\n  v: 2\n- name: c\n- name: b\n  $patch: delete\n"
        );
        // Without inference such a list is replaced by value.
        let (p, _) = run(
            "kind: Thing\nitems:\n- name: a\n",
            "kind: Thing\nitems:\n- name: b\n",
            NO_ID,
        );
        assert_eq!(p, "items:\n- name: b\n");
    }

    #[test]
    fn duplicate_keys_send_the_list_whole() {
        let pod = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n";
        let (p, _) = run(
            &format!("{pod}  - name: a\n"),
            &format!("{pod}  - name: a\n    image: x\n  - name: a\n    image: y\n"),
            NO_ID,
        );
        // (`y` is a boolean to YAML 1.1: quoted.)
        assert_eq!(p, "spec:\n  containers:\n  - $patch: replace\n  - name: a\n    image: x\n  - name: a\n    image: \"y\"\n");
        // Repeated in OLD and dropped in NEW: one marker deletes them all.
        let (p, _) = run(
            &format!("{pod}  - name: a\n  - name: b\n  - name: b\n"),
            &format!("{pod}  - name: a\n"),
            NO_ID,
        );
        assert_eq!(p, "spec:\n  $setElementOrder/containers:\n  - name: a\n  containers:\n  - name: b\n    $patch: delete\n");
    }

    #[test]
    fn nulls_are_reported_and_dollar_fields_refused() {
        let (p, d) = run(
            "kind: T\na: 1\n",
            "kind: T\na: 1\nb: null\nc: {d: null, e: [null]}\n",
            NO_ID,
        );
        assert_eq!(p, "b: null\nc: {d: null, e: [null]}\n");
        let paths: Vec<String> = d.warnings.iter().map(|w| w.path.to_string()).collect();
        assert_eq!(paths, ["b", "c.d"]);
        let schema = Schema::builtin();
        let err = diff(
            &n("kind: T\n"),
            &n("kind: T\nx: {$patch: delete}\n"),
            &schema,
            Cursor::default(),
            &NO_ID,
        )
        .unwrap_err();
        assert_eq!(err.path.to_string(), "x.$patch");
        assert!(matches!(err.kind, DiffErrorKind::DirectiveKey(_)));
    }

    #[test]
    fn elements_without_their_merge_key_are_errors() {
        let schema = Schema::builtin();
        let old = n("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n  - image: b\n");
        let new = n("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n");
        let err = diff(&old, &new, &schema, root_of(&schema, &old), &NO_ID).unwrap_err();
        assert_eq!(
            err.to_string(),
            "spec.containers[1]: list element has no merge key \"name\""
        );
    }

    const KUSTOMIZE: Options = Options {
        infer_keys: false,
        identity: false,
        kustomize: true,
    };

    /// Found by tests/it/diff_properties.rs: OLD's keyed list held an element without its key
    /// (and a null one), which kyaml's walk regroups whatever the patch says, and the patch
    /// made was refused by its own check instead of coming with the warning that says so.
    #[test]
    fn kustomize_patches_warn_of_olds_elements_kyaml_regroups() {
        let pod = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n";
        let (_, d) = run(
            &format!("{pod}  - image: a\n  - null\n"),
            &format!("{pod}  - name: n0\n"),
            KUSTOMIZE,
        );
        assert!(
            d.warnings
                .iter()
                .any(|w| w.kind == WarningKind::KyamlRegroups),
            "{:?}",
            d.warnings
        );
    }

    #[test]
    fn kustomize_patches_order_lists_by_their_start() {
        let pod = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n";
        // b changes, c goes, d comes before a: kyaml puts the patch's elements first.
        let (p, _) = run(
            &format!("{pod}  - name: a\n  - name: b\n    image: b:1\n  - name: c\n  - name: e\n"),
            &format!("{pod}  - name: d\n  - name: a\n  - name: b\n    image: b:2\n  - name: e\n"),
            KUSTOMIZE,
        );
        assert_eq!(p, "spec:\n  containers:\n  - name: d\n  - name: a\n  - name: b\n    image: b:2\n  - name: c\n    $patch: delete\n");
        // Only the last element changes: the others are named so that they stay first.
        let (p, _) = run(
            &format!("{pod}  - name: a\n  - name: b\n"),
            &format!("{pod}  - name: a\n  - name: b\n    image: b:2\n"),
            KUSTOMIZE,
        );
        assert_eq!(
            p,
            "spec:\n  containers:\n  - name: a\n  - name: b\n    image: b:2\n"
        );
        // The first changes: the rest follows by itself.
        let (p, _) = run(
            &format!("{pod}  - name: a\n  - name: b\n"),
            &format!("{pod}  - name: a\n    image: a:2\n  - name: b\n"),
            KUSTOMIZE,
        );
        assert_eq!(p, "spec:\n  containers:\n  - name: a\n    image: a:2\n");
    }

    #[test]
    fn kustomize_patches_avoid_the_directives_kyaml_lacks() {
        // No `$retainKeys`: the null does it.
        let (p, _) = run(
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 1}\n",
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n    type: Recreate\n",
            KUSTOMIZE,
        );
        assert_eq!(
            p,
            "spec:\n  strategy:\n    type: Recreate\n    rollingUpdate: null\n"
        );
        // A value added to a set goes first; one removed needs the whole list.
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: ";
        let (p, _) = run(
            &format!("{cm}[a, b]\n"),
            &format!("{cm}[c, a, b]\n"),
            KUSTOMIZE,
        );
        assert_eq!(p, "metadata:\n  finalizers: [c]\n");
        let (p, _) = run(&format!("{cm}[a, b]\n"), &format!("{cm}[b]\n"), KUSTOMIZE);
        assert_eq!(p, "metadata:\n  finalizers: [{$patch: replace}, b]\n");
        // A value of another kind: the map around it is replaced.
        let (p, _) = run(
            "kind: T\nspec:\n  a: 1\n  b: {c: d}\n",
            "kind: T\nspec:\n  a: [1]\n  b: {c: d}\n",
            KUSTOMIZE,
        );
        assert_eq!(p, "spec:\n  $patch: replace\n  a: [1]\n  b: {c: d}\n");
        let schema = Schema::builtin();
        let err = diff(
            &n("kind: T\nspec: 1\n"),
            &n("kind: T\nspec: {a: 1}\n"),
            &schema,
            Cursor::default(),
            &KUSTOMIZE,
        )
        .unwrap_err();
        assert_eq!(err.path.to_string(), "spec");
        assert!(matches!(err.kind, DiffErrorKind::Kustomize(_)));
    }

    #[test]
    fn kustomize_patches_replace_lists_kyaml_would_pair_otherwise() {
        // kyaml pairs ports by the text of the key fields some port has: no TCP default.
        let pod = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    ports:\n";
        let (p, _) = run(
            &format!("{pod}    - containerPort: 80\n    - containerPort: 53\n      protocol: UDP\n"),
            &format!("{pod}    - containerPort: 443\n    - containerPort: 80\n    - containerPort: 53\n      protocol: UDP\n"),
            KUSTOMIZE,
        );
        assert_eq!(p, "spec:\n  containers:\n  - name: a\n    ports:\n    - $patch: replace\n    - containerPort: 443\n    - containerPort: 80\n    - containerPort: 53\n      protocol: UDP\n");
        // With protocols in use kyaml brings only new elements forward.
        let (p, _) = run(
            &format!("{pod}    - containerPort: 80\n      protocol: TCP\n      name: a\n"),
            &format!("{pod}    - containerPort: 53\n      protocol: UDP\n    - containerPort: 80\n      protocol: TCP\n      name: b\n"),
            KUSTOMIZE,
        );
        assert_eq!(p, "spec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 53\n      protocol: UDP\n    - containerPort: 80\n      protocol: TCP\n      name: b\n");
        let (p, _) = run(
            &format!("{pod}    - containerPort: 80\n      protocol: TCP\n"),
            &format!("{pod}    - containerPort: 80\n      protocol: TCP\n    - containerPort: 53\n      protocol: UDP\n"),
            KUSTOMIZE,
        );
        assert_eq!(p, "spec:\n  containers:\n  - name: a\n    ports:\n    - $patch: replace\n    - containerPort: 80\n      protocol: TCP\n    - containerPort: 53\n      protocol: UDP\n");
        // Without protocols anywhere, ports pair on their numbers.
        let (p, _) = run(
            &format!("{pod}    - containerPort: 80\n"),
            &format!("{pod}    - containerPort: 443\n    - containerPort: 80\n"),
            KUSTOMIZE,
        );
        assert_eq!(
            p,
            "spec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 443\n"
        );
    }

    #[test]
    fn unchanged_resources_give_an_empty_patch() {
        let (p, d) = run(
            "kind: T\na: [1, 2]\nb: {c: d}\n",
            "b: {c: d}\nkind: T\na: [1, 2]\n",
            NO_ID,
        );
        assert_eq!(p, "{}\n");
        assert!(!d.changed);
    }
}
