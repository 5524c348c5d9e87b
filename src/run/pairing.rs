//! Which local resource is which upstream document, for a merge3 update (a `merge3` without a
//! target, and the command line's `merge3` of packages): resources pair by **group, kind,
//! namespace and name** — not by version, so that a resource upstream moved from `v1beta1` to
//! `v1` is merged, not deleted and added again (kpt's `resource-merge` pairs the same way).
//!
//! * The namespace is the effective one (`Id::effective_namespace`'s rule, with the scope of
//!   a kind read across its versions): a namespaced resource without one is in `default`; a
//!   cluster-scoped kind has none whatever it says.
//! * A resource kpt fetched carries the identity it had upstream in its
//!   `internal.kpt.dev/upstream-identifier` annotation (`group|Kind|namespace|name`): where a
//!   resource has it, it pairs by it, so that a resource renamed or moved to another namespace
//!   locally still finds its upstream (as `kpt pkg update` finds it).
//! * The documents of each side are looked up by hash ([`Index`]): pairing n local resources
//!   with m documents costs O(n + m), not O(n × m).
//!
//! What it must not do: decide what becomes of a pair (the update step does), or change a node.

use std::borrow::Cow;

use crate::hash::HashMap;
use crate::select::identity::{self, Follow, Id, Meta, DEFAULT_NAMESPACE};
use crate::yaml::Node;

/// The annotation in which kpt records a resource's upstream identity when it fetches a
/// package: `group|Kind|namespace|name`, `default` for a resource without namespace.
pub const UPSTREAM_IDENTIFIER: &str = "internal.kpt.dev/upstream-identifier";

/// What a merge3 update pairs resources by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key<'a> {
    /// The API group (empty for the core group), without the version: a resource keeps its
    /// identity across versions of its kind.
    pub group: Cow<'a, str>,
    /// The kind.
    pub kind: Cow<'a, str>,
    /// The effective namespace: empty for a cluster-scoped kind, `default` for a namespaced
    /// resource without one.
    pub namespace: Cow<'a, str>,
    /// `metadata.name`.
    pub name: Cow<'a, str>,
}

impl<'a> Key<'a> {
    /// The key of `group`, `kind`, a namespace as written (empty when absent) and a name.
    pub fn new(
        group: impl Into<Cow<'a, str>>,
        kind: impl Into<Cow<'a, str>>,
        namespace: impl Into<Cow<'a, str>>,
        name: impl Into<Cow<'a, str>>,
    ) -> Key<'a> {
        let (group, kind) = (group.into(), kind.into());
        let namespace = if identity::is_cluster_scoped_kind(&group, &kind) {
            Cow::Borrowed("")
        } else {
            match namespace.into() {
                ns if ns.is_empty() => Cow::Borrowed(DEFAULT_NAMESPACE),
                ns => ns,
            }
        };
        Key {
            group,
            kind,
            namespace,
            name: name.into(),
        }
    }

    /// The key of an identity.
    pub fn of_id(id: &Id<'a>) -> Key<'a> {
        let group = match id.api_version.split_once('/') {
            Some((g, _)) => Cow::Owned(g.to_owned()),
            None => Cow::Borrowed(""),
        };
        Key::new(
            group,
            id.kind.clone(),
            id.namespace.clone(),
            id.name.clone(),
        )
    }

    /// The key a resource pairs by: its upstream identifier when it has one, else its own
    /// identity. Each node on the way is read through `follow` (an alias's anchored node).
    pub fn of<'n, 'x>(node: &'n Node<'x>, follow: Follow<'_, 'n, 'x>) -> Key<'n> {
        let meta = Meta::of_with(node, follow);
        match meta
            .annotation(UPSTREAM_IDENTIFIER)
            .and_then(parse_identifier)
        {
            Some(key) => key,
            None => Key::of_id(&meta.id),
        }
    }

    /// [`Key::of`] for a node without aliases to follow.
    pub fn of_plain<'n>(node: &'n Node<'_>) -> Key<'n> {
        Key::of(node, &|n| n)
    }
}

/// `group|Kind|namespace|name`, as kpt writes it; `None` for anything else. kpt writes
/// `default` for a resource without namespace, a cluster-scoped one included (and `~C` in some
/// versions): both read as no namespace.
fn parse_identifier(s: &str) -> Option<Key<'_>> {
    let mut parts = s.split('|');
    let (group, kind, namespace, name) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || kind.is_empty() || name.is_empty() {
        return None;
    }
    let namespace = if matches!(namespace, "~C" | DEFAULT_NAMESPACE) {
        ""
    } else {
        namespace
    };
    Some(Key::new(group, kind, namespace, name))
}

/// The documents of one side of an update by key: the first of each key.
#[derive(Debug, Default)]
pub struct Index<'p> {
    by_key: HashMap<Key<'p>, usize>,
    /// Documents whose key an earlier document has: (the earlier, the later).
    pub duplicates: Vec<(usize, usize)>,
}

impl<'p> Index<'p> {
    /// Indexes `docs` by their keys.
    pub fn new(docs: &'p [Node<'static>]) -> Index<'p> {
        let mut index = Index::default();
        for (d, doc) in docs.iter().enumerate() {
            let key = Key::of_plain(doc);
            if let Some(&first) = index.by_key.get(&key) {
                index.duplicates.push((first, d));
            } else {
                index.by_key.insert(key, d);
            }
        }
        index
    }

    /// The document with `key`.
    pub fn get<'k>(&'k self, key: &Key<'k>) -> Option<usize>
    where
        'p: 'k,
    {
        let by_key: &HashMap<Key<'k>, usize> = &self.by_key;
        by_key.get(key).copied()
    }

    /// The first document any of `keys` finds.
    pub fn find<'k>(&'k self, keys: &[Key<'k>]) -> Option<usize>
    where
        'p: 'k,
    {
        keys.iter().find_map(|k| self.get(k))
    }
}

/// Both sides of an update, indexed.
#[derive(Debug, Default)]
pub struct Sides<'p> {
    /// The package as it was upstream.
    pub original: Index<'p>,
    /// The package as upstream has it now.
    pub updated: Index<'p>,
}

/// The documents from which indexing the two sides on two threads is worth starting one.
const TWO_THREADS: usize = 2048;

impl<'p> Sides<'p> {
    /// Both sides indexed by key (what each side holds twice is noted in its index).
    /// A large update's two sides are indexed on two threads.
    pub fn new(original: &'p [Node<'static>], updated: &'p [Node<'static>]) -> Sides<'p> {
        let (original, updated) = if original.len() + updated.len() >= TWO_THREADS {
            rayon::join(|| Index::new(original), || Index::new(updated))
        } else {
            (Index::new(original), Index::new(updated))
        };
        Sides { original, updated }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::test_node as node;

    #[test]
    fn keys_leave_out_the_version_and_read_effective_namespaces() {
        let a =
            node("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n");
        let b = node("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p, namespace: default}\n");
        assert_eq!(Key::of_plain(&a), Key::of_plain(&b));
        let c = node(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p, namespace: x}\n",
        );
        assert_ne!(Key::of_plain(&a), Key::of_plain(&c));
        // A cluster-scoped kind has no namespace, in a version the scope table lacks too.
        let r1 = node("apiVersion: rbac.authorization.k8s.io/v1alpha1\nkind: ClusterRole\nmetadata: {name: r, namespace: x}\n");
        let r2 = node(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n",
        );
        assert_eq!(Key::of_plain(&r1), Key::of_plain(&r2));
        assert_eq!(Key::of_plain(&r2).namespace, "");
        // Another group is another resource.
        let e = node("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: p}\n");
        let f = node("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: p}\n");
        assert_ne!(Key::of_plain(&e), Key::of_plain(&f));
    }

    #[test]
    fn kpts_upstream_identifier_pairs_a_renamed_resource() {
        let local = node("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: prod-c\n  namespace: prod\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|c'\n");
        let upstream = node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
        assert_eq!(Key::of_plain(&local), Key::of_plain(&upstream));
        let cluster = node("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: x\n  annotations: {internal.kpt.dev/upstream-identifier: 'rbac.authorization.k8s.io|ClusterRole|default|r'}\n");
        let r = node(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n",
        );
        assert_eq!(Key::of_plain(&cluster), Key::of_plain(&r));
        // Anything else in the annotation is not an identifier: the resource's own counts.
        for bad in ["", "a|b|c", "a|b|c|d|e", "g||ns|n", "g|K|ns|"] {
            let n = node(&format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {{internal.kpt.dev/upstream-identifier: '{bad}'}}\n"));
            assert_eq!(Key::of_plain(&n), Key::of_plain(&upstream), "{bad}");
        }
    }

    #[test]
    fn an_index_finds_the_first_of_a_key_and_names_the_others() {
        let docs = vec![
            node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"),
            node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"),
            node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"),
        ];
        let index = Index::new(&docs);
        assert_eq!(index.duplicates, [(0, 2)]);
        let probe = node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n");
        assert_eq!(index.get(&Key::of_plain(&probe)), Some(1));
        let none = node("apiVersion: v1\nkind: Secret\nmetadata: {name: b}\n");
        assert_eq!(
            index.find(&[Key::of_plain(&none), Key::of_plain(&probe)]),
            Some(1)
        );
    }
}
