//! A resource's identity, read from its node: apiVersion, kind, name and namespace ([`Id`]),
//! with the labels and annotations selection looks at ([`Meta`]).
//!
//! **One identity type.** [`Id`] borrows from the node it was read from, or owns its strings
//! (`Id<'static>`, after [`Id::into_owned`]) when it must outlive it: a resource's identity
//! before a patch renamed it, the functionConfig's identity, the resource a result is about.
//!
//! **One effective-namespace rule** (`Id::effective_namespace`, kustomize's
//! `ResId.EffectiveNamespace`): a cluster-scoped kind has `CLUSTER_SCOPED_NAMESPACE` whatever
//! its `metadata.namespace`; a namespaced kind without a namespace has `DEFAULT_NAMESPACE`;
//! otherwise the namespace. Every comparison of identities (targets, patches found by identity,
//! merge3's pairing) goes through it.
//!
//! **Original identities.** kustomize records a resource's earlier names, namespaces and kinds
//! in build annotations (`PREVIOUS_NAMES`, `PREVIOUS_NAMESPACES`, `PREVIOUS_KINDS`);
//! `Meta::original_id` reads the first (oldest) of each. kustomize builds that identity
//! without an apiVersion, so its scope is unknown: it counts as namespaced, and a cluster-scoped
//! resource matches by the `CLUSTER_SCOPED_NAMESPACE` recorded for it.
//!
//! What it must not do: change a node, or know what a patch or a target is.

use std::borrow::Cow;
use std::fmt;

use crate::yaml::Node;

/// The effective namespace of a namespaced resource that has no namespace.
pub(crate) const DEFAULT_NAMESPACE: &str = "default";

/// The effective namespace of a cluster-scoped resource: kustomize's placeholder, which a
/// namespace pattern can match like any other string (`.*` does, `default` does not).
pub(crate) const CLUSTER_SCOPED_NAMESPACE: &str = "_non_namespaceable_";

/// kustomize's build annotation listing a resource's earlier names, oldest first, joined by `,`.
pub(crate) const PREVIOUS_NAMES: &str = "internal.config.kubernetes.io/previousNames";

/// kustomize's build annotation listing a resource's earlier namespaces (effective ones), in the
/// same order as [`PREVIOUS_NAMES`].
pub(crate) const PREVIOUS_NAMESPACES: &str = "internal.config.kubernetes.io/previousNamespaces";

/// kustomize's build annotation listing a resource's earlier kinds, in the same order as
/// [`PREVIOUS_NAMES`].
pub(crate) const PREVIOUS_KINDS: &str = "internal.config.kubernetes.io/previousKinds";

/// The identity of a resource: missing fields are empty strings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Id<'n> {
    /// `apiVersion`, e.g. `apps/v1`.
    pub api_version: Cow<'n, str>,
    /// `kind`.
    pub kind: Cow<'n, str>,
    /// `metadata.name`.
    pub name: Cow<'n, str>,
    /// `metadata.namespace` as written (empty when absent); compare
    /// `effective_namespace`s, not this.
    pub namespace: Cow<'n, str>,
}

impl<'n> Id<'n> {
    /// Reads the identity of a resource node, borrowing its strings. Aliases are not followed
    /// (see `Id::of_with`).
    pub fn of(node: &'n Node<'_>) -> Id<'n> {
        Id::of_with(node, &|n| n)
    }

    /// Reads the identity of a resource node, reading each node on the way through `follow`
    /// (what an alias stands for: `kind: *k` is the kind its anchor holds).
    pub(crate) fn of_with<'a>(node: &'n Node<'a>, follow: Follow<'_, 'n, 'a>) -> Id<'n> {
        // One pass over the root's entries and one over `metadata`'s (every step asks, of
        // every resource), each field the first of its key, as a lookup by path finds it.
        let [api_version, kind, meta] =
            first_of(follow(node), ["apiVersion", "kind", "metadata"], follow);
        let [name, namespace] =
            meta.map_or([None; 2], |m| first_of(m, ["name", "namespace"], follow));
        let text = |n: Option<&'n Node<'a>>| Cow::Borrowed(n.and_then(Node::as_str).unwrap_or(""));
        Id {
            api_version: text(api_version),
            kind: text(kind),
            name: text(name),
            namespace: text(namespace),
        }
    }

    /// An identity from its four parts.
    pub(crate) fn new(
        api_version: impl Into<Cow<'n, str>>,
        kind: impl Into<Cow<'n, str>>,
        name: impl Into<Cow<'n, str>>,
        namespace: impl Into<Cow<'n, str>>,
    ) -> Id<'n> {
        Id {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    /// The same identity, owning its strings.
    pub fn into_owned(self) -> Id<'static> {
        Id {
            api_version: Cow::Owned(self.api_version.into_owned()),
            kind: Cow::Owned(self.kind.into_owned()),
            name: Cow::Owned(self.name.into_owned()),
            namespace: Cow::Owned(self.namespace.into_owned()),
        }
    }

    /// `(group, version)` of the apiVersion (see `split_api_version`).
    pub fn group_version(&self) -> (&str, &str) {
        split_api_version(&self.api_version)
    }

    /// Whether kustomize treats this kind as cluster-scoped (see [`is_cluster_scoped`]).
    pub(crate) fn is_cluster_scoped(&self) -> bool {
        let (g, v) = self.group_version();
        is_cluster_scoped(g, v, &self.kind)
    }

    /// The namespace identities are compared by (see the module documentation).
    pub(crate) fn effective_namespace(&self) -> &str {
        if self.is_cluster_scoped() {
            CLUSTER_SCOPED_NAMESPACE
        } else if self.namespace.is_empty() {
            DEFAULT_NAMESPACE
        } else {
            &self.namespace
        }
    }

    /// Same apiVersion, kind, name and effective namespace.
    pub(crate) fn same(&self, other: &Id<'_>) -> bool {
        self.api_version == other.api_version
            && self.kind == other.kind
            && self.name == other.name
            && self.effective_namespace() == other.effective_namespace()
    }
}

/// `Kind name`, or `Kind namespace/name`: how messages name a resource.
impl fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            // A resource without a name (a `List`): its kind alone, no dangling space.
            f.write_str(&self.kind)
        } else if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// A resource as selection sees it: its identity, labels and annotations, borrowed from its node.
/// Labels and annotations are the string-valued entries, in order; when a key repeats, the first
/// counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta<'n> {
    /// The resource's identity.
    pub id: Id<'n>,
    /// `metadata.labels`.
    pub labels: Vec<(&'n str, &'n str)>,
    /// `metadata.annotations`.
    pub annotations: Vec<(&'n str, &'n str)>,
}

impl<'n> Meta<'n> {
    /// Reads a resource node (aliases not followed; see `Meta::of_with`).
    pub fn of(node: &'n Node<'_>) -> Meta<'n> {
        Meta::of_with(node, &|n| n)
    }

    /// Reads a resource node, reading each node on the way through `follow`.
    pub(crate) fn of_with<'a>(node: &'n Node<'a>, follow: Follow<'_, 'n, 'a>) -> Meta<'n> {
        Meta::of_id(Id::of_with(node, follow), node, follow)
    }

    /// [`Meta::of_with`] for a node whose identity `id` was read already.
    pub(crate) fn of_id<'a>(
        id: Id<'n>,
        node: &'n Node<'a>,
        follow: Follow<'_, 'n, 'a>,
    ) -> Meta<'n> {
        Meta {
            id,
            labels: string_map_with(node, &["metadata", "labels"], follow),
            annotations: string_map_with(node, &["metadata", "annotations"], follow),
        }
    }

    /// The value of a label.
    pub(crate) fn label(&self, key: &str) -> Option<&'n str> {
        lookup(&self.labels, key)
    }

    /// The value of an annotation.
    pub(crate) fn annotation(&self, key: &str) -> Option<&'n str> {
        lookup(&self.annotations, key)
    }

    /// The resource's original identity: the first entry of each build annotation, or `None`
    /// when [`PREVIOUS_NAMES`] is absent. An absent [`PREVIOUS_NAMESPACES`] or [`PREVIOUS_KINDS`]
    /// counts as one empty entry, as in kustomize; differing entry counts are an error. The
    /// identity has no apiVersion (see the module documentation).
    pub(crate) fn original_id(&self) -> Result<Option<Id<'n>>, PreviousIdsError> {
        let Some(names) = self.annotation(PREVIOUS_NAMES) else {
            return Ok(None);
        };
        let namespaces = self.annotation(PREVIOUS_NAMESPACES).unwrap_or("");
        let kinds = self.annotation(PREVIOUS_KINDS).unwrap_or("");
        let count = |s: &str| s.split(',').count();
        let (n, ns, k) = (count(names), count(namespaces), count(kinds));
        if n != ns || n != k {
            return Err(PreviousIdsError {
                names: n,
                namespaces: ns,
                kinds: k,
            });
        }
        let first = |s: &'n str| s.split(',').next().unwrap_or("");
        Ok(Some(Id::new(
            "",
            first(kinds),
            first(names),
            first(namespaces),
        )))
    }
}

/// kustomize's build annotations disagree on how many earlier identities there were. kustomize
/// itself panics on such a resource; here it is an error the caller can report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "annotations {PREVIOUS_NAMES}, {PREVIOUS_NAMESPACES} and {PREVIOUS_KINDS} list {names}, \
     {namespaces} and {kinds} entries; they must list as many"
)]
pub struct PreviousIdsError {
    /// Entries in `PREVIOUS_NAMES`.
    pub names: usize,
    /// Entries in `PREVIOUS_NAMESPACES` (1 when absent, as in kustomize).
    pub namespaces: usize,
    /// Entries in `PREVIOUS_KINDS` (1 when absent, as in kustomize).
    pub kinds: usize,
}

/// The string-valued entries of a map at `path` (labels, annotations).
#[cfg(test)]
pub(crate) fn string_map<'n>(node: &'n Node<'_>, path: &[&str]) -> Vec<(&'n str, &'n str)> {
    string_map_with(node, path, &|n| n)
}

/// How a reader reaches what a node stands for: an alias's data (a [`crate::yaml::anchors::Scope`]
/// knows it), any other node itself.
pub(crate) type Follow<'f, 'n, 'a> = &'f dyn Fn(&'n Node<'a>) -> &'n Node<'a>;

/// The node at a path of mapping keys, each node on the way (keys included) read through
/// `follow`.
pub(crate) fn get_with<'n, 'a>(
    node: &'n Node<'a>,
    path: &[&str],
    follow: Follow<'_, 'n, 'a>,
) -> Option<&'n Node<'a>> {
    let mut at = follow(node);
    for k in path {
        let e = at
            .entries()
            .iter()
            .find(|e| follow(&e.key).as_str() == Some(k))?;
        at = follow(&e.value);
    }
    Some(at)
}

/// The values (read through `follow`) of the first entries of `map` with these keys.
fn first_of<'n, 'a, const N: usize>(
    map: &'n Node<'a>,
    keys: [&str; N],
    follow: Follow<'_, 'n, 'a>,
) -> [Option<&'n Node<'a>>; N] {
    let mut found = [None; N];
    for e in map.entries() {
        let Some(k) = follow(&e.key).as_str() else {
            continue;
        };
        if let Some(i) = keys.iter().position(|w| *w == k) {
            if let Some(slot) = found.get_mut(i).filter(|s| s.is_none()) {
                *slot = Some(follow(&e.value));
            }
        }
    }
    found
}

/// The text of the scalar at a path of mapping keys, read through `follow`.
pub(crate) fn str_with<'n, 'a>(
    node: &'n Node<'a>,
    path: &[&str],
    follow: Follow<'_, 'n, 'a>,
) -> Option<&'n str> {
    get_with(node, path, follow).and_then(Node::as_str)
}

/// [`string_map`], each key and value read through `follow`.
pub(crate) fn string_map_with<'n, 'a>(
    node: &'n Node<'a>,
    path: &[&str],
    follow: Follow<'_, 'n, 'a>,
) -> Vec<(&'n str, &'n str)> {
    get_with(node, path, follow)
        .map(|m| {
            m.entries()
                .iter()
                .filter_map(|e| Some((follow(&e.key).as_str()?, follow(&e.value).as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

fn lookup<'a>(pairs: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
}

/// Kinds that kustomize treats as cluster-scoped, by `(group, version, kind)`: the entries marked
/// not namespaced in kyaml's `openapi.precomputedIsNamespaceScoped`, which follows its built-in
/// Kubernetes v1.21.2 schema. kustomize looks kinds up by full apiVersion, so a version missing
/// here (`rbac.authorization.k8s.io/v1alpha1` ClusterRole) counts as namespaced.
const CLUSTER_SCOPED: &[(&str, &str, &str)] = &[
    (
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "v1beta1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "v1beta1",
        "ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicy",
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    (
        "apiextensions.k8s.io",
        "v1beta1",
        "CustomResourceDefinition",
    ),
    ("apiregistration.k8s.io", "v1", "APIService"),
    ("apiregistration.k8s.io", "v1beta1", "APIService"),
    ("certificates.k8s.io", "v1", "CertificateSigningRequest"),
    (
        "certificates.k8s.io",
        "v1beta1",
        "CertificateSigningRequest",
    ),
    ("flowcontrol.apiserver.k8s.io", "v1beta1", "FlowSchema"),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        "PriorityLevelConfiguration",
    ),
    ("networking.k8s.io", "v1", "IngressClass"),
    ("networking.k8s.io", "v1beta1", "IngressClass"),
    ("node.k8s.io", "v1", "RuntimeClass"),
    ("node.k8s.io", "v1beta1", "RuntimeClass"),
    ("policy", "v1beta1", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io", "v1beta1", "ClusterRole"),
    ("rbac.authorization.k8s.io", "v1beta1", "ClusterRoleBinding"),
    ("scheduling.k8s.io", "v1", "PriorityClass"),
    ("scheduling.k8s.io", "v1beta1", "PriorityClass"),
    ("storage.k8s.io", "v1", "CSIDriver"),
    ("storage.k8s.io", "v1", "CSINode"),
    ("storage.k8s.io", "v1", "StorageClass"),
    ("storage.k8s.io", "v1", "VolumeAttachment"),
    ("storage.k8s.io", "v1beta1", "CSIDriver"),
    ("storage.k8s.io", "v1beta1", "CSINode"),
    ("storage.k8s.io", "v1beta1", "StorageClass"),
    ("storage.k8s.io", "v1beta1", "VolumeAttachment"),
    ("", "v1", "ComponentStatus"),
    ("", "v1", "Namespace"),
    ("", "v1", "Node"),
    ("", "v1", "NodeProxyOptions"),
    ("", "v1", "PersistentVolume"),
];

/// Whether kustomize treats this kind as cluster-scoped (its effective namespace is then
/// [`CLUSTER_SCOPED_NAMESPACE`]). The version matters, as in kustomize; kinds it does not know,
/// custom resources included, are namespaced.
pub(crate) fn is_cluster_scoped(group: &str, version: &str, kind: &str) -> bool {
    // The kind first: it tells most resources apart at once.
    CLUSTER_SCOPED
        .iter()
        .any(|&(g, v, k)| k == kind && g == group && v == version)
}

/// Whether some version of `kind` in `group` is cluster-scoped (see `is_cluster_scoped`):
/// how a pairing across versions (a `v1beta1` resource upgraded to `v1`) reads its scope.
pub fn is_cluster_scoped_kind(group: &str, kind: &str) -> bool {
    CLUSTER_SCOPED
        .iter()
        .any(|&(g, _, k)| k == kind && g == group)
}

/// Splits an `apiVersion` into group and version at its first `/`, as kustomize does: `v1` is
/// `("", "v1")`, `apps/v1` is `("apps", "v1")`.
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_stream;

    fn node(src: &str) -> Node<'_> {
        parse_stream(src).unwrap().remove(0).root.unwrap()
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

    #[test]
    fn one_effective_namespace_rule() {
        let cr = Id::new(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "admin",
            "ignored",
        );
        assert_eq!(cr.effective_namespace(), CLUSTER_SCOPED_NAMESPACE);
        let d = Id::new("apps/v1", "Deployment", "web", "");
        assert_eq!(d.effective_namespace(), DEFAULT_NAMESPACE);
        let w = Id::new("example.com/v1", "Widget", "w", "prod");
        assert_eq!(w.effective_namespace(), "prod");
        // An original identity has no apiVersion: namespaced, whatever its kind.
        let orig = Id::new("", "ClusterRole", "admin", "");
        assert_eq!(orig.effective_namespace(), DEFAULT_NAMESPACE);
    }

    #[test]
    fn owned_and_borrowed_identities_compare_equal() {
        let n = node("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n");
        let id = Id::of(&n);
        let owned = id.clone().into_owned();
        assert_eq!(id, owned);
        assert_eq!(owned.to_string(), "ConfigMap x/c");
    }

    #[test]
    fn effective_namespaces() {
        let cases: &[(&str, &str, &str, &str)] = &[
            ("apps/v1", "Deployment", "", "default"),
            ("apps/v1", "Deployment", "prod", "prod"),
            ("example.com/v1", "Widget", "", "default"),
            ("v1", "Node", "", "_non_namespaceable_"),
            ("v1", "Node", "prod", "_non_namespaceable_"),
        ];
        for &(api_version, kind, namespace, want) in cases {
            assert_eq!(
                Id::new(api_version, kind, "x", namespace).effective_namespace(),
                want,
                "{kind}"
            );
        }
    }

    #[test]
    fn api_versions_split_at_the_first_slash() {
        let cases = [
            ("v1", ("", "v1")),
            ("apps/v1", ("apps", "v1")),
            ("a/b/c", ("a", "b/c")),
            ("", ("", "")),
            ("/v1", ("", "v1")),
        ];
        for (api_version, want) in cases {
            assert_eq!(split_api_version(api_version), want, "{api_version:?}");
        }
    }

    #[test]
    fn cluster_scoped_kinds() {
        let cases: &[(&str, &str, &str, bool)] = &[
            ("rbac.authorization.k8s.io", "v1", "ClusterRole", true),
            (
                "rbac.authorization.k8s.io",
                "v1",
                "ClusterRoleBinding",
                true,
            ),
            ("rbac.authorization.k8s.io", "v1", "Role", false),
            (
                "rbac.authorization.k8s.io",
                "v1alpha1",
                "ClusterRole",
                false,
            ),
            ("", "v1", "Namespace", true),
            ("", "v1", "PersistentVolume", true),
            ("", "v1", "PersistentVolumeClaim", false),
            ("", "v1", "ConfigMap", false),
            ("", "", "Namespace", false),
            (
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                true,
            ),
            (
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingAdmissionPolicy",
                true,
            ),
            ("storage.k8s.io", "v1", "StorageClass", true),
            ("apps", "v1", "Deployment", false),
            ("example.com", "v1", "Widget", false),
            ("", "v1", "namespace", false),
        ];
        for &(group, version, kind, want) in cases {
            assert_eq!(
                is_cluster_scoped(group, version, kind),
                want,
                "{group}/{version} {kind}"
            );
        }
        assert_eq!(CLUSTER_SCOPED.len(), 38);
    }
}
