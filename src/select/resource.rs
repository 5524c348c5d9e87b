//! A resource's identity, read from its node: apiVersion, kind, name, namespace, labels,
//! annotations, and the bookkeeping the hosts put on it.
//!
//! Reading only: this module never changes a node (except [`protect_bookkeeping`], which puts
//! back what a patch must not change) and knows nothing of merging.

use crate::select::target::{self, ResourceView};
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
/// add, change or remove (README "Selecting resources").
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

/// The identity of a resource, borrowed from its node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Id<'n> {
    pub api_version: &'n str,
    pub kind: &'n str,
    pub name: &'n str,
    pub namespace: &'n str,
}

impl<'n> Id<'n> {
    /// Reads the identity of a resource node (missing fields are empty).
    pub fn of(node: &'n Node<'_>) -> Id<'n> {
        Id {
            api_version: node.str_at(&["apiVersion"]).unwrap_or(""),
            kind: node.str_at(&["kind"]).unwrap_or(""),
            name: node.str_at(&["metadata", "name"]).unwrap_or(""),
            namespace: node.str_at(&["metadata", "namespace"]).unwrap_or(""),
        }
    }

    /// `(group, version)` of the apiVersion.
    pub fn group_version(&self) -> (&'n str, &'n str) {
        target::split_api_version(self.api_version)
    }

    /// The namespace as kustomize compares it: `default` when empty on a namespaced kind.
    pub fn effective_namespace(&self) -> &'n str {
        let (g, v) = self.group_version();
        if target::is_cluster_scoped(g, v, self.kind) {
            ""
        } else if self.namespace.is_empty() {
            target::DEFAULT_NAMESPACE
        } else {
            self.namespace
        }
    }

    /// Same apiVersion, kind, name and (effective) namespace.
    pub fn same(&self, other: &Id<'_>) -> bool {
        self.api_version == other.api_version
            && self.kind == other.kind
            && self.name == other.name
            && self.effective_namespace() == other.effective_namespace()
    }
}

impl std::fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.namespace.is_empty() {
            write!(f, " {}/{}", self.namespace, self.name)
        } else {
            write!(f, " {}", self.name)
        }
    }
}

/// An [`Id`] that owns its strings: a resource's identity at an earlier moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedId {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

impl OwnedId {
    pub fn of(node: &Node<'_>) -> OwnedId {
        let id = Id::of(node);
        OwnedId {
            api_version: id.api_version.to_owned(),
            kind: id.kind.to_owned(),
            name: id.name.to_owned(),
            namespace: id.namespace.to_owned(),
        }
    }

    pub fn as_id(&self) -> Id<'_> {
        Id {
            api_version: &self.api_version,
            kind: &self.kind,
            name: &self.name,
            namespace: &self.namespace,
        }
    }
}

/// The string-valued entries of a map at `path` (labels, annotations).
pub fn string_map<'n>(node: &'n Node<'_>, path: &[&str]) -> Vec<(&'n str, &'n str)> {
    node.get_path(path)
        .map(|m| {
            m.entries()
                .iter()
                .filter_map(|e| Some((e.key.as_str()?, e.value.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Labels and annotations of a resource, to build a [`ResourceView`] from.
pub struct Meta<'n> {
    pub id: Id<'n>,
    pub labels: Vec<(&'n str, &'n str)>,
    pub annotations: Vec<(&'n str, &'n str)>,
}

impl<'n> Meta<'n> {
    pub fn of(node: &'n Node<'_>) -> Meta<'n> {
        Meta {
            id: Id::of(node),
            labels: string_map(node, &["metadata", "labels"]),
            annotations: string_map(node, &["metadata", "annotations"]),
        }
    }

    /// The view a [`target::Target`] matches against.
    pub fn view(&self) -> ResourceView<'_> {
        let (group, version) = self.id.group_version();
        ResourceView {
            group,
            version,
            kind: self.id.kind,
            name: self.id.name,
            namespace: self.id.namespace,
            labels: &self.labels,
            annotations: &self.annotations,
        }
    }

    pub fn annotation(&self, key: &str) -> Option<&'n str> {
        self.annotations
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }
}

/// Items the hosts pass along for bookkeeping, which a patch touches only when its target names
/// their kind: `local-config` resources, the `Kptfile`.
pub fn is_bookkeeping_item(node: &Node<'_>) -> bool {
    let id = Id::of(node);
    if id.kind == "Kptfile" && id.api_version.starts_with("kpt.dev/") {
        return true;
    }
    node.str_at(&["metadata", "annotations", LOCAL_CONFIG])
        .is_some_and(|v| v == "true")
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

    #[test]
    fn identity_compares_effective_namespaces() {
        let a = node("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n");
        let b = node(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\n",
        );
        assert!(Id::of(&a).same(&Id::of(&b)));
        let c = node(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n",
        );
        assert!(!Id::of(&a).same(&Id::of(&c)));
    }
}
