//! A merge3 update — `merge3` without a target, like `kpt pkg update`, and the command line's
//! `merge3` of packages: the change from one upstream version of a package (`original`) to
//! another (`updated`) carried into the local copy (the items), resource by resource. Resources
//! pair by key ([`pairing`]); for each local resource:
//!
//! * **paired with an updated document** — merged three-way with it and the original document
//!   of the same key (an empty one when the original lacked it: both sides added it);
//! * **paired with an original document only** (upstream deleted it) — deleted, when the local
//!   copy is the original's as data (the hosts' bookkeeping annotations and kpt's upstream
//!   identifier aside). When the local copy changed it, that is a conflict under every strategy
//!   but `upstream` (`options.conflicts`): `warn` deletes it with a warning, `local` keeps it
//!   with a warning, `error` fails the run; the result names the first field changed locally,
//!   with its local and original values;
//! * **paired with nothing** — a resource only the local copy has: left as it is.
//!
//! Then, at the end of the run ([`Engine::update_additions`]), each updated document no local
//! resource paired with is added, unless the original had it: a resource upstream still has
//! and the local copy deleted stays deleted.
//!
//! Unlike the other patch types, an update also pairs the package's bookkeeping resources (its
//! `Kptfile`, `local-config` resources) with the documents that name them: they are part of the
//! package upstream as much as the rest. The functionConfig itself is never paired. A
//! `Kptfile`'s `upstream` and `upstreamLock` are kpt's (where the package comes from, at which
//! commit): an update leaves the local ones as they are, whatever the documents say.
//!
//! What it must not do: merge fields (`merge::merge3` does), or name files (the caller places
//! what an update adds, from the document it came from: [`crate::krm::Origin::New`]).

use crate::budget::Budget;
use crate::config::{Conflicts, Step};
use crate::krm::{FnResult, Item, Origin, Severity};
use crate::path::{Path, Seg};
use crate::run::engine::{Effect, Engine};
use crate::run::guard::{conflict_severity, CheckedPatch};
use crate::run::invariants;
use crate::run::pairing::{Key, UPSTREAM_IDENTIFIER};
use crate::run::steps::Site;
use crate::select::bookkeeping;
use crate::select::identity::{Id, Meta};
use crate::yaml::{one_line, Node};

/// What became of the resources under an update step, counted over the run (the summary).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateCounts {
    /// Paired with an updated document, and changed by the merge.
    pub updated: usize,
    /// Paired with an updated document, and already as the merge would make them.
    pub unchanged: usize,
    /// Added from upstream.
    pub added: usize,
    /// Deleted upstream, and so here.
    pub deleted: usize,
    /// Only the local copy has them, or upstream deleted them and they were kept (a conflict
    /// settled for the local side).
    pub kept: usize,
    /// Upstream still has them; the local copy deleted them: not added back.
    pub deleted_locally: usize,
}

impl UpdateCounts {
    pub fn add(&mut self, o: UpdateCounts) {
        self.updated += o.updated;
        self.unchanged += o.unchanged;
        self.added += o.added;
        self.deleted += o.deleted;
        self.kept += o.kept;
        self.deleted_locally += o.deleted_locally;
    }
}

impl Engine<'_> {
    /// Step `k`, an update, for one item (see the module documentation).
    pub(super) fn update_step(
        &mut self,
        k: usize,
        step: &Step,
        original: &[Node<'static>],
        updated: &[Node<'static>],
        item: &mut Item<'_>,
    ) -> Effect {
        if self.is_function_config_item(item) {
            return Effect::Unchanged;
        }
        let Some(sides) = self.setup.updates.get(k).and_then(Option::as_ref) else {
            return Effect::Unchanged;
        };
        let (in_updated, in_original) = {
            let follow = |n| self.aliases.follow(n);
            let keys = item_keys(&item.node, &follow, item.first_id.as_ref());
            (sides.updated.find(&keys), sides.original.find(&keys))
        };
        let Some(d) = in_updated else {
            return match in_original {
                Some(o) => self.deleted_upstream(k, step, &original[o], item),
                None => {
                    self.report.counts[k].update.kept += 1;
                    Effect::Unchanged
                }
            };
        };
        self.report.counts[k].found[d] = true;
        let u = &updated[d];
        self.check(step, item, CheckedPatch::Document(d, u));
        let empty = Node::map();
        let o = in_original.map_or(&empty, |o| &original[o]);
        let (site, mut budget) = (Site::Root, Budget::new());
        let effect = if is_kptfile(u) {
            let (o, u) = (without_lock(o), without_lock(u));
            self.merge3(step, item, &site, &mut budget, &o, &u, Some(d + 1))
        } else {
            self.merge3(step, item, &site, &mut budget, o, u, Some(d + 1))
        };
        let counts = &mut self.report.counts[k].update;
        match effect {
            Effect::Changed => counts.updated += 1,
            Effect::Unchanged => counts.unchanged += 1,
            Effect::Deleted => counts.deleted += 1,
        }
        effect
    }

    /// A local resource whose original upstream deleted: deleted, unless the local copy changed
    /// it (a conflict).
    fn deleted_upstream(
        &mut self,
        k: usize,
        step: &Step,
        original: &Node<'static>,
        item: &mut Item<'_>,
    ) -> Effect {
        // Compared as plain data: its aliases copies first, as for any patch.
        if let Err(e) = self.aliases.localise(&mut item.node) {
            let cause = crate::error::Cause::Anchors(e);
            self.fail(crate::run::guard::failure(step, &item.node, None, cause));
            return Effect::Unchanged;
        }
        let unlocked =
            is_kptfile(original).then(|| (without_lock(&item.node), without_lock(original)));
        let change = match &unlocked {
            Some((local, original)) => first_change(local, original),
            None => first_change(&item.node, original),
        };
        let Some(change) = change else {
            self.report.counts[k].update.deleted += 1;
            return Effect::Deleted;
        };
        let conflicts = step.options.conflicts;
        self.report.counts[k].conflicts += 1;
        let severity = conflict_severity(conflicts);
        let outcome = match conflicts {
            Conflicts::Error => String::new(),
            Conflicts::Local => "; kept local".to_owned(),
            Conflicts::Warn | Conflicts::Upstream => "; deleted".to_owned(),
        };
        let mut r = FnResult::new(
            severity,
            format!(
                "{}: conflict: deleted upstream but changed locally (to {}, from {}){outcome}",
                step.label(),
                shown(&change.local),
                shown(&change.original),
            ),
        )
        .about(&item.node)
        .at_field(change.path)
        .tags(step.tags());
        r.current = change.local;
        r.proposed = None;
        self.report.push(r);
        if conflicts == Conflicts::Local {
            self.report.counts[k].update.kept += 1;
            return Effect::Unchanged;
        }
        self.report.counts[k].update.deleted += 1;
        Effect::Deleted
    }

    /// The resources update step `k` adds: each updated document no resource paired with and
    /// the original lacks, through the steps after `k`. The rest are counted (deleted locally).
    pub(super) fn update_additions(
        &mut self,
        k: usize,
        step: &Step,
        updated: &[Node<'static>],
    ) -> Vec<Item<'static>> {
        let mut added = Vec::new();
        for (d, doc) in updated.iter().enumerate() {
            if self.report.counts[k].found[d] {
                continue;
            }
            let in_original = self
                .setup
                .updates
                .get(k)
                .and_then(Option::as_ref)
                .is_some_and(|s| s.original.get(&Key::of_plain(doc)).is_some());
            if in_original {
                self.report.counts[k].update.deleted_locally += 1;
                continue;
            }
            let mut node: Node<'static> = without_lock(doc);
            // A resource a patch brings in says nothing about where a host keeps it: a planted
            // `config.kubernetes.io/path` would have `kpt fn sink` write it anywhere.
            for key in invariants::strip_host_bookkeeping(&mut node) {
                self.report.push(
                    FnResult::new(
                        Severity::Warning,
                        format!(
                            "{}: document {}: {key} is a host's bookkeeping annotation, which a \
                             resource a patch adds may not bring: dropped",
                            step.label(),
                            d + 1
                        ),
                    )
                    .about(&node)
                    .at_field(Path::fields(&["metadata", "annotations", &key]))
                    .tags(step.tags()),
                );
            }
            self.place_new(&mut node);
            self.aliases.admit_new();
            self.report.counts[k].changed += 1;
            self.report.counts[k].update.added += 1;
            let item = Item {
                node,
                origin: Origin::New {
                    step: k,
                    document: d,
                },
                touched: true,
                first_id: None,
            };
            if let Some(item) = self.process_from(item, k + 1) {
                self.note_identity(&item);
                added.push(item);
            }
        }
        added
    }
}

/// The keys an item may pair by: its own (or its upstream identifier), the identity it had
/// before an earlier step renamed it, and the original identity kustomize's build annotations
/// record (in the group of its apiVersion now: kustomize records none).
fn item_keys<'n, 'x>(
    node: &'n Node<'x>,
    follow: crate::select::identity::Follow<'_, 'n, 'x>,
    first: Option<&'n Id<'static>>,
) -> Vec<Key<'n>> {
    let mut keys = vec![Key::of(node, follow)];
    if let Some(first) = first {
        keys.push(Key::of_id(first));
    }
    let meta = Meta::of_with(node, follow);
    if let Ok(Some(orig)) = meta.original_id() {
        let group = meta.id.group_version().0.to_owned();
        keys.push(Key::new(group, orig.kind, orig.namespace, orig.name));
    }
    keys
}

/// Whether a document is a kpt package's `Kptfile`.
fn is_kptfile(node: &Node<'_>) -> bool {
    node.str_at(&["kind"]) == Some("Kptfile")
        && node
            .str_at(&["apiVersion"])
            .is_some_and(|v| v.starts_with("kpt.dev/"))
}

/// A copy of a document, without a `Kptfile`'s `upstream` and `upstreamLock` (kpt's).
fn without_lock(node: &Node<'_>) -> Node<'static> {
    let mut copy = node.clone().into_owned();
    if is_kptfile(node) {
        copy.remove("upstream");
        copy.remove("upstreamLock");
    }
    copy
}

/// The first field where the local copy differs from the original, as data.
#[derive(Debug, PartialEq, Eq)]
struct Change {
    path: Path,
    /// One line of YAML; `None` where it has none.
    local: Option<String>,
    original: Option<String>,
}

fn shown(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(absent)")
}

/// Where `local` differs from `original` as data, first in `local`'s order; `None` when it
/// does not. The hosts' bookkeeping annotations (but `local-config`) and kpt's upstream
/// identifier are not compared: the hosts write them, not the user.
fn first_change(local: &Node<'_>, original: &Node<'_>) -> Option<Change> {
    let mut path = Path::root();
    differ(Some(local), Some(original), &mut path)
}

/// Whether the entry `key` of the map at `path` is left out of the comparison.
fn ignored(path: &Path, key: &str) -> bool {
    let annotations = matches!(&path.0[..], [Seg::Field(m), Seg::Field(a)] if m == "metadata" && a == "annotations");
    annotations
        && (key == UPSTREAM_IDENTIFIER
            || (bookkeeping::is_bookkeeping_annotation(key) && key != bookkeeping::LOCAL_CONFIG))
}

/// A value that holds nothing compared: absent, `null`, or a map of ignored entries only
/// (`annotations` that hold nothing but bookkeeping).
fn nothing(n: Option<&Node<'_>>, path: &Path) -> bool {
    match n {
        None => true,
        Some(n) if n.is_null() => true,
        Some(n) if n.is_map() => n.entries().iter().all(|e| {
            e.key.as_str().is_some_and(|k| ignored(path, k))
                || nothing(
                    Some(&e.value),
                    &path.field(e.key.as_str().unwrap_or_default()),
                )
        }),
        Some(_) => false,
    }
}

fn differ(a: Option<&Node<'_>>, b: Option<&Node<'_>>, path: &mut Path) -> Option<Change> {
    let change = |path: &Path| Change {
        path: path.clone(),
        local: a.filter(|n| !n.is_null()).map(one_line),
        original: b.filter(|n| !n.is_null()).map(one_line),
    };
    match (a, b) {
        _ if nothing(a, path) && nothing(b, path) => None,
        (Some(x), Some(y)) if x.is_map() && y.is_map() => {
            for e in x.entries() {
                let Some(k) = e.key.as_str() else {
                    let found = y.entries().iter().find(|f| f.key.same_data(&e.key));
                    if !found.is_some_and(|f| f.value.same_data(&e.value)) {
                        return Some(change(path));
                    }
                    continue;
                };
                if ignored(path, k) {
                    continue;
                }
                path.0.push(Seg::field(k));
                let found = differ(Some(&e.value), y.get(k), path);
                path.0.pop();
                if found.is_some() {
                    return found;
                }
            }
            for e in y.entries() {
                let Some(k) = e.key.as_str() else { continue };
                if ignored(path, k) || x.get(k).is_some() {
                    continue;
                }
                path.0.push(Seg::field(k));
                let found = differ(None, Some(&e.value), path);
                path.0.pop();
                if found.is_some() {
                    return found;
                }
            }
            if y.entries().iter().any(|f| {
                f.key.as_str().is_none() && !x.entries().iter().any(|e| e.key.same_data(&f.key))
            }) {
                return Some(change(path));
            }
            None
        }
        (Some(x), Some(y)) if x.is_seq() && y.is_seq() && x.items().len() == y.items().len() => {
            for (i, (p, q)) in x.items().iter().zip(y.items()).enumerate() {
                path.0.push(Seg::Index(i));
                let found = differ(Some(p), Some(q), path);
                path.0.pop();
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Some(x), Some(y)) if x.same_data(y) => None,
        _ => Some(change(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::test_node as node;

    #[test]
    fn the_first_change_names_the_field_and_both_values() {
        let original =
            node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1', b: '2'}\n");
        let same = node("# a comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    config.kubernetes.io/index: '0'\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|c'\ndata: {a: \"1\", b: '2'}\n");
        assert_eq!(first_change(&same, &original), None);
        let changed =
            node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1', b: '3'}\n");
        let c = first_change(&changed, &original).unwrap();
        assert_eq!(c.path.to_string(), "data.b");
        assert_eq!(
            (c.local.as_deref(), c.original.as_deref()),
            (Some("'3'"), Some("'2'"))
        );
        let added = node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {x: y}}\ndata: {a: '1', b: '2'}\n");
        let c = first_change(&added, &original).unwrap();
        assert_eq!(
            (c.path.to_string().as_str(), c.original),
            ("metadata.labels", None)
        );
        let removed =
            node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n");
        let c = first_change(&removed, &original).unwrap();
        assert_eq!((c.path.to_string().as_str(), c.local), ("data.b", None));
        let local_config = node("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {config.kubernetes.io/local-config: 'true'}\ndata: {a: '1', b: '2'}\n");
        assert!(first_change(&local_config, &original).is_some());
        let list = node("apiVersion: v1\nkind: List\nitems: [1, 2]\n");
        let longer = node("apiVersion: v1\nkind: List\nitems: [1, 2, 3]\n");
        assert_eq!(
            first_change(&longer, &list).unwrap().path.to_string(),
            "items"
        );
        let other = node("apiVersion: v1\nkind: List\nitems: [1, 5]\n");
        assert_eq!(
            first_change(&other, &list).unwrap().path.to_string(),
            "items[1]"
        );
    }
}
