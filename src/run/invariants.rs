//! The promises every patch keeps on every resource, checked on the result of each patch
//! whatever route it took (merge2, jsonmerge, json6902, merge3, apply; a target or none): the
//! resource is still a mapping; the fields that identify it are still there (and unchanged,
//! for merges that may not rename); the hosts' bookkeeping annotations are exactly as before.
//!
//! A patch that would break one is an error about the resource and the field ([`Broken`]),
//! except an edit of a bookkeeping annotation itself, which is put back with a warning naming
//! the key (kustomize's patches do not see those annotations at all; ours may name them, and
//! the hosts need them as they were to write files back).
//!
//! What it must not do: choose resources, or decide what a failure means for the run.

use crate::config::{Compat, PatchKind, Step};
use crate::error::Broken;
use crate::krm::{FnResult, Severity};
use crate::path::Path;
use crate::select::bookkeeping;
use crate::select::identity::Id;
use crate::yaml::{Entry, Node};

/// What the guard keeps of a resource before a patch, to check the result against.
pub(crate) struct Before<'a> {
    /// Its identity.
    pub id: Id<'static>,
    /// Its bookkeeping annotations, in order.
    pub bookkeeping: Vec<Entry<'a>>,
    /// Whether an emptied `annotations` map goes (see [`bookkeeping::drop_emptied_annotations`]).
    pub annotated: bool,
}

impl<'a> Before<'a> {
    /// Reads a resource before a patch. Its identity fields and annotations must be plain data
    /// (the engine's scope makes them so first).
    pub fn of(step: &Step, node: &Node<'a>) -> Before<'a> {
        Before {
            id: Id::of(node).into_owned(),
            bookkeeping: bookkeeping::bookkeeping(node),
            // kustomize writes no empty annotations map at all (its last step sets every
            // resource's annotations, and an empty set removes the field): under its options an
            // empty map goes whoever emptied it; by default only one the patch emptied.
            annotated: step.options.compat == Compat::Kustomize
                || bookkeeping::has_annotations(node),
        }
    }
}

/// Whether the field holds a name: a scalar that is not null and not empty.
fn named(node: Option<&Node<'_>>) -> bool {
    node.is_some_and(|n| n.is_scalar() && !n.is_null() && n.as_str().is_some_and(|s| !s.is_empty()))
}

/// Checks and keeps the promises on the result of `step` on `node`, which was `before`.
/// `Ok` holds the warnings for bookkeeping edits that were put back.
pub(crate) fn enforce<'a>(
    step: &Step,
    node: &mut Node<'a>,
    before: Before<'a>,
) -> Result<Vec<FnResult>, Broken> {
    if !node.is_map() {
        return Err(Broken::NotAResource {
            found: node.describe(),
        });
    }
    let had_meta = !before.id.name.is_empty() || !before.bookkeeping.is_empty();
    if let Some(meta) = node.get("metadata") {
        if had_meta && !meta.is_map() && !meta.is_null() {
            return Err(Broken::Destroyed {
                field: Path::fields(&["metadata"]),
                found: meta.describe(),
                what: what_metadata_holds(&before),
            });
        }
    }
    if node.get("metadata").is_some_and(Node::is_null) {
        node.remove("metadata");
    }
    // A merge does not rename what it patches (kustomize's rule, with or without a target: a
    // patch found by the resource's original name carries that old name).
    if matches!(step.kind(), PatchKind::Merge2 | PatchKind::JsonMerge) {
        restore_identity(node, step, &before.id);
    }
    // A resource is a Kubernetes object once it has a kind and a name: then what identifies it
    // stays. (A fragment without them, which the merge commands also merge, is plain data.)
    let object = !before.id.kind.is_empty() && !before.id.name.is_empty();
    let fields: [(&[&str], bool, &'static str); 3] = [
        (
            &["apiVersion"],
            object && !before.id.api_version.is_empty(),
            RULE_KIND,
        ),
        (&["kind"], object, RULE_KIND),
        (&["metadata", "name"], object, RULE_NAME),
    ];
    for (path, had, rule) in fields {
        if had && !named(node.get_path(path)) {
            return Err(Broken::Removed {
                field: Path::fields(path),
                rule,
            });
        }
    }
    let mut warnings = Vec::new();
    if let Some(ann) = node.get_path(&["metadata", "annotations"]) {
        if !before.bookkeeping.is_empty() && !ann.is_map() && !ann.is_null() {
            return Err(Broken::Destroyed {
                field: Path::fields(&["metadata", "annotations"]),
                found: ann.describe(),
                what: format!(
                    "the hosts' bookkeeping annotations ({})",
                    keys(&before.bookkeeping).join(", ")
                ),
            });
        }
        if ann.is_null() {
            if let Some(meta) = node.get_mut("metadata") {
                meta.remove("annotations");
            }
        }
    }
    let edited = edited_keys(&before.bookkeeping, &bookkeeping::bookkeeping(node));
    if !edited.is_empty() {
        bookkeeping::protect_bookkeeping(node, before.bookkeeping);
        for key in edited {
            warnings.push(
                FnResult::new(
                    Severity::Warning,
                    format!(
                        "{}: {key} is a host's bookkeeping annotation, which no patch may add, \
                         change or remove: the patch's edit was dropped",
                        step.label()
                    ),
                )
                .about(node)
                .at_field(Path::fields(&["metadata", "annotations", &key]))
                .tags(step.tags()),
            );
        }
    }
    bookkeeping::drop_emptied_annotations(node, before.annotated);
    Ok(warnings)
}

const RULE_KIND: &str =
    "a patch may change a resource's apiVersion and kind (allowKindChange, or a JSON patch) but not remove them";
const RULE_NAME: &str =
    "a patch may rename a resource (allowNameChange, or a JSON patch) but not take its name away";

fn what_metadata_holds(before: &Before<'_>) -> String {
    let mut parts = Vec::new();
    if !before.id.name.is_empty() {
        parts.push("the resource's name".to_owned());
    }
    if !before.bookkeeping.is_empty() {
        parts.push(format!(
            "the hosts' bookkeeping annotations ({})",
            keys(&before.bookkeeping).join(", ")
        ));
    }
    parts.join(" and ")
}

fn keys(entries: &[Entry<'_>]) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| e.key.as_str().map(str::to_owned))
        .collect()
}

/// The bookkeeping keys whose entries differ between `saved` and `now` (added, changed or
/// removed), in the order they are first seen.
fn edited_keys(saved: &[Entry<'_>], now: &[Entry<'_>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let value = |list: &[Entry<'_>], k: &str| -> Option<usize> {
        list.iter().position(|e| e.key.as_str() == Some(k))
    };
    for e in saved.iter().chain(now) {
        let Some(k) = e.key.as_str() else { continue };
        if out.iter().any(|o| o == k) {
            continue;
        }
        let same = match (value(saved, k), value(now, k)) {
            (Some(a), Some(b)) => match (saved.get(a), now.get(b)) {
                (Some(x), Some(y)) => x.value.same_data(&y.value),
                _ => false,
            },
            _ => false,
        };
        if !same {
            out.push(k.to_owned());
        }
    }
    out
}

/// kustomize's rule for merge patches: the patch cannot rename the resource, change its kind,
/// or move it to another namespace, unless the options allow it.
fn restore_identity(node: &mut Node<'_>, step: &Step, was: &Id<'static>) {
    fn set(node: &mut Node<'_>, path: &[&str], value: &str) {
        if node.str_at(path).unwrap_or("") == value {
            return;
        }
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut at = &mut *node;
        for p in parents {
            match at.map_at(p) {
                Some(n) => at = n,
                None => return,
            }
        }
        if value.is_empty() {
            at.remove(last);
        } else {
            at.set(last, Node::string(value.to_owned()));
        }
    }
    if !step.options.allow_kind_change {
        set(node, &["apiVersion"], &was.api_version);
        set(node, &["kind"], &was.kind);
    }
    if !step.options.allow_name_change {
        set(node, &["metadata", "name"], &was.name);
        set(node, &["metadata", "namespace"], &was.namespace);
    }
}

/// Host bookkeeping annotations a resource a patch adds may not bring (a merge3 update's new
/// resources): every one but `config.kubernetes.io/local-config`, which says what the resource
/// is rather than where a host keeps it. Removes them and returns their keys.
pub(crate) fn strip_host_bookkeeping(node: &mut Node<'_>) -> Vec<String> {
    let Some(ann) = node
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .filter(|a| a.is_map())
    else {
        return Vec::new();
    };
    let planted: Vec<String> = ann
        .entries()
        .iter()
        .filter_map(|e| e.key.as_str())
        .filter(|k| bookkeeping::is_bookkeeping_annotation(k) && *k != bookkeeping::LOCAL_CONFIG)
        .map(str::to_owned)
        .collect();
    if !planted.is_empty() {
        if let Some(es) = ann.entries_mut() {
            es.retain(|e| {
                !e.key
                    .as_str()
                    .is_some_and(|k| planted.iter().any(|p| p == k))
            });
        }
    }
    planted
}
