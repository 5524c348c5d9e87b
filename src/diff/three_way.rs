//! Three-way strategic merge patch creation: the patch `kubectl apply` sends
//! (apimachinery's `CreateThreeWayMergePatch`), from the last-applied configuration (ORIGINAL),
//! the live object (CURRENT) and the new configuration (MODIFIED).
//!
//! The patch is two two-way differences put together: the changes and additions that turn
//! CURRENT into MODIFIED (nothing CURRENT has beyond MODIFIED is removed: the server and other
//! writers own it), and the deletions from ORIGINAL to MODIFIED (what the configuration used to
//! set and no longer does). Where both speak of the same map or keyed list, their entries are
//! merged, element by element, in apimachinery's order.
//!
//! A conflict is a field the patch changes that CURRENT also changed since ORIGINAL, to
//! something else (apimachinery's `MergingMapsHaveConflicts` between the patch and the
//! ORIGINAL-to-CURRENT difference). The patch is the same either way (kubectl's `overwrite`);
//! conflicts are returned for the caller to report or refuse.
//!
//! What it must not do: apply the patch, read the last-applied annotation (the caller passes
//! ORIGINAL), or look at anything but the three nodes, the schema and the options.

use std::fmt;

use crate::hash::HashMap;
use crate::merge::align::{self, key_values, ListKind};
use crate::path::{Path, Seg};
use crate::schema::{Cursor, FieldMeta, MapKey, Schema};
use crate::yaml::{Entry, Kind, Node};

use super::identity::with_identity;
use super::nodes::{expanded, go_text, same};
use super::two_way::{Differ, Mode, PATCH, RETAIN_KEYS, SET_ORDER};
use super::{verify, written, DiffError, DiffErrorKind, Options, Warning};
use crate::yaml::one_line;

/// A three-way patch and what it overwrites.
#[derive(Clone, Debug)]
pub struct ThreeWay<'n> {
    /// The patch, for `merge2` to apply to CURRENT (with [`Options::merge2_options`]).
    pub patch: Node<'n>,
    /// The patch changes something.
    pub changed: bool,
    /// Where the patched object will not hold MODIFIED's value, and why.
    pub warnings: Vec<Warning>,
    /// Fields CURRENT changed since ORIGINAL that the patch changes too.
    pub conflicts: Vec<Conflict>,
}

/// A field changed both in the live object (since the last apply) and by the new configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// Where, from the resource's root: `spec.template.spec.containers[name=app].image`.
    pub path: Path,
    /// What the live object's change did here, as one line of YAML; `None`: it removed it.
    pub current: Option<String>,
    /// What the patch does here, as one line of YAML; `None`: it removes it.
    pub patch: Option<String>,
}

impl Conflict {
    /// What happened here, without the path: `changed in the live object (5) and by the new
    /// configuration (3); the patch overwrites the live change`.
    pub fn message(&self) -> String {
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(removed)".to_owned());
        format!(
            "changed in the live object ({}) and by the new configuration ({}); the patch \
             overwrites the live change",
            show(&self.current),
            show(&self.patch)
        )
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message())
    }
}

/// The patch that `kubectl apply` sends to turn CURRENT into MODIFIED, given the configuration
/// applied last (`original`; `None` when there is none, which deletes nothing).
pub fn diff<'n>(
    original: Option<&Node<'_>>,
    current: &Node<'_>,
    modified: &Node<'n>,
    schema: &Schema,
    root: Cursor,
    opts: &Options,
) -> Result<ThreeWay<'n>, DiffError> {
    let empty = Node::map();
    let original = expanded(original.unwrap_or(&empty))?;
    let (current, modified) = (expanded(current)?, expanded(modified)?);
    for (node, which) in [
        (&*original, "original"),
        (&*current, "current"),
        (&*modified, "modified"),
    ] {
        if !node.is_map() {
            return Err(DiffError::new(DiffErrorKind::NotAMap(which)));
        }
    }
    let deletions_only = Mode {
        changes: false,
        deletions: true,
    };
    let changes_only = Mode {
        changes: true,
        deletions: false,
    };
    let deletions =
        Differ::new(schema, opts, deletions_only).map(&original, &modified, root, false)?;
    let mut delta = Differ::new(schema, opts, changes_only);
    let changes = delta.map(&current, &modified, root, false)?;
    let mut warnings = delta.warnings;
    let joiner = Joiner {
        schema,
        infer: opts.infer_keys,
    };
    let body = joiner.maps(deletions, changes, root);
    let changed_live =
        Differ::new(schema, opts, Mode::ALL).map(&original, &current, root, false)?;
    let mut finder = Finder {
        schema,
        infer: opts.infer_keys,
        path: Vec::new(),
        found: Vec::new(),
    };
    finder.maps(&body, &changed_live, root, false);
    let changed = !body.entries().is_empty();
    let patch = written(if opts.identity {
        with_identity(&current, body, &mut warnings)
    } else {
        body
    });
    let text = verify::text_of(&patch);
    verify::three_way(&original, &current, &modified, &text, schema, root, opts)?;
    Ok(ThreeWay {
        patch,
        changed,
        warnings,
        conflicts: finder.found,
    })
}

/// Puts the deletions patch and the changes patch together.
struct Joiner<'s> {
    schema: &'s Schema,
    infer: bool,
}

fn is_marker(n: &Node<'_>) -> bool {
    n.get(PATCH).is_some()
}

impl Joiner<'_> {
    /// Both patches' fields; where both have a field, their values joined. The changes come
    /// first, in their order, then what only the deletions have.
    fn maps<'n>(&self, mut dels: Node<'n>, mut changes: Node<'n>, at: Cursor) -> Node<'n> {
        let mut d: Vec<Option<Entry<'n>>> = dels
            .entries_mut()
            .map(std::mem::take)
            .unwrap_or_default()
            .into_iter()
            .map(Some)
            .collect();
        let c: Vec<Entry<'n>> = changes
            .entries_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        let index: HashMap<String, usize> = d
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((e.as_ref()?.key.as_str()?.to_owned(), i)))
            .collect();
        // The order `$setElementOrder/<list>` gives a list both patches hold (the same in
        // both: MODIFIED's).
        let order_of = |list: &str| -> Option<Node<'n>> {
            let key = format!("{SET_ORDER}{list}");
            c.iter()
                .find(|e| e.key.as_str() == Some(key.as_str()))
                .map(|e| e.value.clone())
                .or_else(|| {
                    index
                        .get(&key)
                        .and_then(|&i| d.get(i))
                        .and_then(Option::as_ref)
                        .map(|e| e.value.clone())
                })
        };
        let orders: HashMap<String, Node<'n>> = c
            .iter()
            .filter_map(|e| e.key.as_str())
            .filter(|k| !k.starts_with('$') && index.contains_key(*k))
            .filter_map(|k| Some((k.to_owned(), order_of(k)?)))
            .collect();
        let mut out: Vec<Entry<'n>> = Vec::new();
        for e in c {
            let key = e.key.as_str().unwrap_or_default().to_owned();
            let other = index
                .get(&key)
                .and_then(|&i| d.get_mut(i))
                .and_then(Option::take);
            match other {
                // Directive lists (`$setElementOrder/...`, `$retainKeys`) both made from
                // MODIFIED: the same.
                Some(_) if key.starts_with('$') => out.push(e),
                Some(de) => {
                    let (meta, child) = align::field(self.schema, at, &key, &[&e.key]);
                    let value = self.values(de.value, e.value, &meta, child, orders.get(&key));
                    out.push(Entry { key: e.key, value });
                }
                None => out.push(e),
            }
        }
        out.extend(d.into_iter().flatten());
        // `$retainKeys` first, where people look for it.
        if let Some(i) = out.iter().position(|e| e.key.as_str() == Some(RETAIN_KEYS)) {
            let e = out.remove(i);
            out.insert(0, e);
        }
        if let Some(es) = changes.entries_mut() {
            *es = out;
        }
        changes
    }

    fn values<'n>(
        &self,
        dels: Node<'n>,
        changes: Node<'n>,
        meta: &FieldMeta,
        at: Cursor,
        order: Option<&Node<'n>>,
    ) -> Node<'n> {
        match (dels.kind(), changes.kind()) {
            (Kind::Map, Kind::Map) if !meta.replace => self.maps(dels, changes, at),
            (Kind::Seq, Kind::Seq) => {
                match align::list_kind(meta, self.infer, &[&dels, &changes], |_| false) {
                    ListKind::Keyed(keys)
                        if dels.items().iter().chain(changes.items()).all(Node::is_map) =>
                    {
                        self.keyed(dels, changes, &keys, at, order)
                    }
                    ListKind::Set => {
                        let mut changes = changes;
                        let extra: Vec<Node<'n>> = dels
                            .items()
                            .iter()
                            .filter(|d| !changes.items().iter().any(|c| same(c, d)))
                            .cloned()
                            .collect();
                        if let Some(items) = changes.items_mut() {
                            items.extend(extra);
                        }
                        changes
                    }
                    _ => changes,
                }
            }
            _ => changes,
        }
    }

    /// Elements of both lists, paired by key and joined. Those `order` names
    /// (`$setElementOrder`) come in its order; the others (or, without an order, the deletions'
    /// elements the changes do not have) in the deletions' order with `$patch: delete` markers
    /// last, each placed before the first of the former that comes after it in the deletions'
    /// list (apimachinery's merge of a patch item list with server-only items).
    fn keyed<'n>(
        &self,
        mut dels: Node<'n>,
        mut changes: Node<'n>,
        keys: &[MapKey],
        at: Cursor,
        order: Option<&Node<'n>>,
    ) -> Node<'n> {
        let d_items: Vec<Node<'n>> = dels.items_mut().map(std::mem::take).unwrap_or_default();
        let mut d_pos: HashMap<Vec<String>, usize> = HashMap::default();
        for (i, item) in d_items.iter().enumerate() {
            if let Some(k) = key_values(item, keys) {
                d_pos.entry(k).or_insert(i);
            }
        }
        let mut d_slots: Vec<Option<Node<'n>>> = d_items.into_iter().map(Some).collect();
        // The changes' elements joined with the deletions' of the same key, in the changes'
        // order; then the deletions' others, in their order.
        let mut joined: Vec<(Option<usize>, bool, Node<'n>)> = Vec::new();
        for c in changes.items_mut().map(std::mem::take).unwrap_or_default() {
            let pos = key_values(&c, keys).and_then(|k| d_pos.get(&k).copied());
            let node = match pos.and_then(|p| d_slots.get_mut(p)).and_then(Option::take) {
                Some(d) => self.maps(d, c, at),
                None => c,
            };
            joined.push((pos, true, node));
        }
        joined.extend(
            d_slots
                .into_iter()
                .enumerate()
                .filter_map(|(i, n)| Some((Some(i), false, n?))),
        );
        let named: Option<HashMap<Vec<String>, usize>> = order.map(|o| {
            let mut m = HashMap::default();
            for (i, item) in o.items().iter().enumerate() {
                if let Some(k) = key_values(item, keys) {
                    m.entry(k).or_insert(i);
                }
            }
            m
        });
        // Right: the patch items, in order; left: the others.
        let (mut right, mut left): (Vec<_>, Vec<_>) = match &named {
            Some(named) => joined
                .into_iter()
                .partition(|(_, _, n)| key_values(n, keys).is_some_and(|k| named.contains_key(&k))),
            None => joined
                .into_iter()
                .partition(|(_, from_changes, _)| *from_changes),
        };
        if let Some(named) = &named {
            right.sort_by_key(|(_, _, n)| key_values(n, keys).and_then(|k| named.get(&k).copied()));
        }
        left.sort_by_key(|(pos, _, n)| (is_marker(n), *pos));
        let mut out: Vec<Node<'n>> = Vec::with_capacity(left.len() + right.len());
        let (mut l, mut r) = (left.into_iter().peekable(), right.into_iter().peekable());
        loop {
            let take_left = match (l.peek(), r.peek()) {
                (Some((Some(lp), _, _)), Some((Some(rp), _, _))) => lp < rp,
                (Some(_), None) => true,
                (None, None) => break,
                _ => false,
            };
            let next = if take_left { l.next() } else { r.next() };
            out.extend(next.map(|(_, _, n)| n));
        }
        if let Some(items) = changes.items_mut() {
            *items = out;
        }
        changes
    }
}

/// Finds the fields the patch changes that the live object changed differently.
struct Finder<'s> {
    schema: &'s Schema,
    infer: bool,
    path: Vec<Seg>,
    found: Vec<Conflict>,
}

impl Finder<'_> {
    fn conflict(&mut self, patch: &Node<'_>, live: &Node<'_>) {
        let text = |n: &Node<'_>| (!n.is_null()).then(|| one_line(n));
        self.found.push(Conflict {
            path: Path(self.path.clone()),
            current: text(live),
            patch: text(patch),
        });
    }

    /// Two patch maps: a `$patch` directive on one side only, or different ones, is a conflict
    /// (one replaces or deletes the map, the other edits it); otherwise the fields both set.
    fn maps(&mut self, patch: &Node<'_>, live: &Node<'_>, at: Cursor, replaced: bool) {
        let (pd, ld) = (patch.get(PATCH), live.get(PATCH));
        if pd.is_some() || ld.is_some() {
            let differ = match (pd, ld) {
                (Some(a), Some(b)) => !same(a, b),
                _ => true,
            };
            if differ {
                self.conflict(patch, live);
                return;
            }
        }
        if replaced {
            return;
        }
        let index = align::FieldIndex::new(Some(live));
        for e in patch.entries() {
            let Some(key) = e.key.as_str() else { continue };
            if key.starts_with('$') {
                continue;
            }
            let Some(le) = index.get(&e.key) else {
                continue;
            };
            let (meta, child) = align::field(self.schema, at, key, &[&e.key]);
            self.path.push(Seg::field(key));
            self.values(&e.value, &le.value, &meta, child);
            self.path.pop();
        }
    }

    fn values(&mut self, patch: &Node<'_>, live: &Node<'_>, meta: &FieldMeta, at: Cursor) {
        match (patch.kind(), live.kind()) {
            (Kind::Map, Kind::Map) => self.maps(patch, live, at, meta.replace),
            (Kind::Seq, Kind::Seq) => {
                let all_maps = patch.items().iter().chain(live.items()).all(Node::is_map);
                match align::list_kind(meta, self.infer, &[patch, live], |_| false) {
                    ListKind::Set => {}
                    ListKind::Keyed(keys) if all_maps => self.keyed(patch, live, &keys, at),
                    _ => self.atomic(patch, live, at),
                }
            }
            (Kind::Scalar, Kind::Scalar) => {
                if !same(patch, live) {
                    self.conflict(patch, live);
                }
            }
            _ => self.conflict(patch, live),
        }
    }

    fn keyed(&mut self, patch: &Node<'_>, live: &Node<'_>, keys: &[MapKey], at: Cursor) {
        let mut by_key: HashMap<Vec<String>, &Node<'_>> = HashMap::default();
        for l in live.items() {
            if let Some(k) = key_values(l, keys) {
                by_key.insert(k, l);
            }
        }
        for p in patch.items() {
            let Some(k) = key_values(p, keys) else {
                continue;
            };
            if let Some(l) = by_key.get(&k) {
                self.path.push(align::key_seg(keys, &k));
                self.maps(p, l, at, false);
                self.path.pop();
            }
        }
    }

    /// Lists replaced whole: of different lengths they conflict; else lists of scalars are compared
    /// as sorted sets, others element by element.
    fn atomic(&mut self, patch: &Node<'_>, live: &Node<'_>, at: Cursor) {
        if patch.items().len() != live.items().len() {
            self.conflict(patch, live);
            return;
        }
        if patch
            .items()
            .iter()
            .chain(live.items())
            .all(Node::is_scalar)
        {
            let set = |n: &Node<'_>| {
                let mut v: Vec<String> = n.items().iter().map(go_text).collect();
                v.sort();
                v.dedup();
                v
            };
            if set(patch) != set(live) {
                self.conflict(patch, live);
            }
            return;
        }
        for (i, (p, l)) in patch.items().iter().zip(live.items()).enumerate() {
            self.path.push(Seg::Index(i));
            self.values(p, l, &FieldMeta::default(), at);
            self.path.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::emit_node;

    use crate::diff::test_node as n;

    fn run(original: &str, current: &str, modified: &str) -> (String, Vec<String>) {
        let schema = Schema::builtin();
        let root = schema.root("apps", "v1", "Deployment");
        let opts = Options {
            infer_keys: false,
            identity: false,
            kustomize: false,
        };
        let d = diff(
            Some(&n(original)),
            &n(current),
            &n(modified),
            &schema,
            root,
            &opts,
        )
        .unwrap();
        (
            emit_node(&d.patch, Default::default()),
            d.conflicts.iter().map(ToString::to_string).collect(),
        )
    }

    #[test]
    fn deletes_only_what_the_last_configuration_set() {
        let (p, c) = run(
            "spec:\n  replicas: 2\n  paused: true\n",
            "spec:\n  replicas: 2\n  paused: true\n  minReadySeconds: 5\n",
            "spec:\n  replicas: 3\n",
        );
        assert_eq!(p, "spec:\n  replicas: 3\n  paused: null\n");
        assert!(c.is_empty());
    }

    #[test]
    fn a_live_change_the_patch_overwrites_is_a_conflict() {
        let (p, c) = run(
            "spec:\n  replicas: 2\n",
            "spec:\n  replicas: 5\n",
            "spec:\n  replicas: 3\n",
        );
        assert_eq!(p, "spec:\n  replicas: 3\n");
        assert_eq!(
            c,
            [
                "spec.replicas: changed in the live object (5) and by the new configuration (3); \
              the patch overwrites the live change"
            ]
        );
        // The same change on both sides is no conflict.
        let (_, c) = run(
            "spec:\n  replicas: 2\n",
            "spec:\n  replicas: 3\n",
            "spec:\n  replicas: 3\n",
        );
        assert!(c.is_empty());
    }

    #[test]
    fn keyed_deletions_and_changes_join() {
        let pod = "spec:\n  template:\n    spec:\n      containers:\n";
        let (p, c) = run(
            &format!("{pod}      - name: a\n        image: a:1\n      - name: b\n"),
            &format!(
                "{pod}      - name: a\n        image: a:1\n      - name: b\n      - name: live\n"
            ),
            &format!("{pod}      - name: a\n        image: a:2\n"),
        );
        assert_eq!(
            p,
            "spec:\n  template:\n    spec:\n      $setElementOrder/containers:\n      - name: a\n      containers:\n      - name: a\n        image: a:2\n      - name: b\n        $patch: delete\n"
        );
        assert!(c.is_empty());
    }
}
