//! The hosts' bookkeeping on resources: the annotations kpt and kustomize keep their files and
//! build state in, and the items (the Kptfile, `local-config` resources) they pass along without
//! meaning them to be patched.
//!
//! What it must not do: change a node beyond putting back what a patch may not change
//! ([`protect_bookkeeping`], [`drop_emptied_annotations`]), or know what a patch is.

use super::identity::{str_with, Follow, Id};
use crate::yaml::{Entry, Node};

/// Annotation marking a resource that is not applied to a cluster (kpt, kustomize).
pub const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";
/// Where kpt keeps a resource's file, relative to the package.
pub const PATH: &str = "internal.config.kubernetes.io/path";
pub const LEGACY_PATH: &str = "config.kubernetes.io/path";
/// The resource's position in its file.
pub const INDEX: &str = "internal.config.kubernetes.io/index";
pub const LEGACY_INDEX: &str = "config.kubernetes.io/index";

/// Prefixes (and whole keys) of the annotations hosts use for bookkeeping, which no patch may
/// add, change or remove (doc/GUIDE.md "Selecting resources").
const BOOKKEEPING: &[&str] = &[
    "config.kubernetes.io/",
    "internal.config.kubernetes.io/",
    "config.k8s.io/id",
    "kustomize.config.k8s.io/",
    "internal.config.k8s.io/",
];

/// True for annotation keys that belong to the hosts.
pub fn is_bookkeeping_annotation(key: &str) -> bool {
    BOOKKEEPING.iter().any(|p| {
        if p.ends_with('/') {
            key.starts_with(p)
        } else {
            key == *p
        }
    })
}

/// Items the hosts pass along for bookkeeping, which a patch touches only when its target names
/// their kind: `local-config` resources, the `Kptfile`.
pub fn is_bookkeeping_item(node: &Node<'_>) -> bool {
    is_bookkeeping_item_with(node, &|n| n)
}

/// [`is_bookkeeping_item`], reading through aliases with `follow`.
pub fn is_bookkeeping_item_with<'n, 'a>(node: &'n Node<'a>, follow: Follow<'_, 'n, 'a>) -> bool {
    let id = Id::of_with(node, follow);
    if id.kind == "Kptfile" && id.api_version.starts_with("kpt.dev/") {
        return true;
    }
    str_with(node, &["metadata", "annotations", LOCAL_CONFIG], follow).is_some_and(|v| v == "true")
}

/// `(path, index)` of the file a resource came from, from kpt's annotations.
pub fn file_of<'n>(node: &'n Node<'_>) -> Option<(&'n str, u64)> {
    let ann = |k: &str| node.str_at(&["metadata", "annotations", k]);
    let path = ann(PATH).or_else(|| ann(LEGACY_PATH))?;
    let index = ann(INDEX)
        .or_else(|| ann(LEGACY_INDEX))
        .and_then(|i| i.parse().ok())
        .unwrap_or(0);
    Some((path, index))
}

/// The bookkeeping annotations of a resource, to put back after a patch with
/// [`protect_bookkeeping`].
pub fn bookkeeping<'a>(node: &Node<'a>) -> Vec<Entry<'a>> {
    node.get_path(&["metadata", "annotations"])
        .map(|m| {
            m.entries()
                .iter()
                .filter(|e| e.key.as_str().is_some_and(is_bookkeeping_annotation))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `metadata.annotations` holds entries, for [`drop_emptied_annotations`].
pub fn has_annotations(node: &Node<'_>) -> bool {
    node.get_path(&["metadata", "annotations"])
        .is_some_and(|m| !m.entries().is_empty())
}

/// Removes `metadata.annotations` when a patch took its last entry, as kustomize does (it
/// never writes an empty annotations map). With `had` false (the map had no entries before
/// the patch) an empty map is the user's or the patch's own `{}` and stays; emptied labels
/// always stay, as kustomize keeps them as `{}`.
pub fn drop_emptied_annotations(node: &mut Node<'_>, had: bool) {
    let Some(meta) = node.get_mut("metadata") else {
        return;
    };
    let emptied = |m: &Node<'_>| m.is_map() && m.entries().is_empty();
    if had && meta.get("annotations").is_some_and(emptied) {
        meta.remove("annotations");
    }
}

/// Makes the bookkeeping annotations of `node` exactly `saved` again: a patch may not add,
/// change or remove them. Entries keep their place when the patch left them there.
pub fn protect_bookkeeping<'a>(node: &mut Node<'a>, saved: Vec<Entry<'a>>) {
    let current = bookkeeping(node);
    let unchanged = current.len() == saved.len()
        && current
            .iter()
            .zip(&saved)
            .all(|(a, b)| a.key.as_str() == b.key.as_str() && a.value.same_data(&b.value));
    if unchanged {
        return;
    }
    if saved.is_empty() {
        if let Some(ann) = node
            .get_mut("metadata")
            .and_then(|m| m.get_mut("annotations"))
        {
            if let Some(es) = ann.entries_mut() {
                es.retain(|e| !e.key.as_str().is_some_and(is_bookkeeping_annotation));
            }
        }
        return;
    }
    if !node.is_map() {
        return;
    }
    let Some(meta) = node.map_at("metadata") else {
        return;
    };
    let Some(ann) = meta.map_at("annotations") else {
        return;
    };
    if let Some(es) = ann.entries_mut() {
        es.retain(|e| {
            e.key.as_str().is_some_and(|k| {
                !is_bookkeeping_annotation(k) || saved.iter().any(|s| s.key.as_str() == Some(k))
            })
        });
        for s in saved {
            let key = s.key.as_str().unwrap_or_default().to_owned();
            match es.iter_mut().find(|e| e.key.as_str() == Some(&key)) {
                Some(e) => e.value = s.value,
                None => es.push(s),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::identity::string_map;
    use crate::yaml::parse_stream;

    fn node(src: &str) -> Node<'_> {
        parse_stream(src).unwrap().remove(0).root.unwrap()
    }

    #[test]
    fn bookkeeping_annotations_survive_any_patch() {
        let mut n = node("metadata:\n  annotations:\n    a: b\n    config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/path: x.yaml\n");
        let saved = bookkeeping(&n);
        let ann = n
            .get_mut("metadata")
            .unwrap()
            .get_mut("annotations")
            .unwrap();
        ann.set("config.kubernetes.io/index", Node::string("9"));
        ann.remove("internal.config.kubernetes.io/path");
        ann.set("config.k8s.io/id", Node::string("7"));
        protect_bookkeeping(&mut n, saved);
        let ann = string_map(&n, &["metadata", "annotations"]);
        assert_eq!(
            ann,
            [
                ("a", "b"),
                ("config.kubernetes.io/index", "0"),
                ("internal.config.kubernetes.io/path", "x.yaml")
            ]
        );
    }
}
