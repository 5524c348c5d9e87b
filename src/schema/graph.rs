//! An owned type graph: the shape of the layers loaded at run time (CRDs, OpenAPI documents,
//! `mergeKeys`). The built-in layer has the same shape in static tables (`builtin.rs`).
//!
//! Nodes are types; a node's fields are slots holding the field's metadata, its [`Shape`] and the
//! node of its value (for a list: of its elements). Types referenced from several places, or
//! from themselves, are one node, so recursion costs nothing. Merging reads the metadata and
//! the nodes; checking patches reads the shapes, `required` and the nodes' `open`/`resource`.

use std::collections::BTreeMap;

use super::shape::Shape;
use super::FieldMeta;

#[derive(Clone, Debug, Default)]
pub(super) struct Graph {
    nodes: Vec<Node>,
    /// (group, version, kind) → root node, sorted for binary search.
    roots: Vec<((String, String, String), u32)>,
    /// Definition name → node, for `$ref`s in field comments.
    names: BTreeMap<String, u32>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Node {
    pub fields: BTreeMap<String, Slot>,
    /// The value of any key not in `fields` (`additionalProperties`, or `*` in a `mergeKeys` path).
    pub additional: Option<Slot>,
    /// The type is `x-kubernetes-map-type: atomic`: as a list element it is replaced whole.
    pub atomic: bool,
    /// Keys not in `fields` are kept, not pruned (`x-kubernetes-preserve-unknown-fields`, or a
    /// v1beta1 CRD that preserves unknown fields): a patch may add any.
    pub open: bool,
    /// The type is a whole Kubernetes object (a CRD version's root,
    /// `x-kubernetes-embedded-resource`): `apiVersion`, `kind` and `metadata` (an ObjectMeta)
    /// are implied.
    pub resource: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Slot {
    pub meta: FieldMeta,
    pub target: Option<u32>,
    /// What the values must be. The default, any value, is what a `mergeKeys` slot says.
    pub shape: Shape,
    /// The field is listed in its object's `required`.
    pub required: bool,
}

impl Graph {
    pub(super) fn add_node(&mut self, node: Node) -> u32 {
        // More than u32::MAX nodes cannot be built from an input that fits in memory; saturate
        // rather than wrap so a lookup can only ever miss.
        let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.nodes.push(node);
        id
    }

    /// Adds the nodes of `other` after these, its kinds bound and its names named unless they
    /// are already (the first wins), as if `other` had been built here.
    pub(super) fn append(&mut self, other: Graph) {
        let offset = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        let moved = |id: u32| id.saturating_add(offset);
        for mut node in other.nodes {
            for slot in node.fields.values_mut().chain(node.additional.as_mut()) {
                slot.target = slot.target.map(moved);
            }
            self.nodes.push(node);
        }
        for ((group, version, kind), node) in other.roots {
            self.bind_root(&group, &version, &kind, moved(node));
        }
        for (name, node) in other.names {
            self.name(&name, moved(node));
        }
    }

    /// How many nodes there are: a mark to [`Graph::truncate`] back to.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Drops the nodes made after `mark` (those of an input that failed to load; nothing
    /// reachable refers to them).
    pub(super) fn truncate(&mut self, mark: usize) {
        self.nodes.truncate(mark);
    }

    pub(super) fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(usize::try_from(id).ok()?)
    }

    pub(super) fn node_mut(&mut self, id: u32) -> Option<&mut Node> {
        self.nodes.get_mut(usize::try_from(id).ok()?)
    }

    /// The field `name` of node `at`, or its map value when it has no such field.
    pub(super) fn field(&self, at: u32, name: &str) -> Option<&Slot> {
        let node = self.node(at)?;
        node.fields.get(name).or(node.additional.as_ref())
    }

    pub(super) fn atomic(&self, at: u32) -> bool {
        self.node(at).is_some_and(|n| n.atomic)
    }

    pub(super) fn root(&self, group: &str, version: &str, kind: &str) -> Option<u32> {
        let i = self.find_root(group, version, kind).ok()?;
        self.roots.get(i).map(|r| r.1)
    }

    /// Binds a kind to a node unless it is bound already (the first binding wins); says whether
    /// it bound.
    pub(super) fn bind_root(&mut self, group: &str, version: &str, kind: &str, node: u32) -> bool {
        match self.find_root(group, version, kind) {
            Ok(_) => false,
            Err(i) => {
                let key = (group.to_string(), version.to_string(), kind.to_string());
                self.roots.insert(i, (key, node));
                true
            }
        }
    }

    fn find_root(&self, group: &str, version: &str, kind: &str) -> Result<usize, usize> {
        self.roots.binary_search_by(|((g, v, k), _)| {
            (g.as_str(), v.as_str(), k.as_str()).cmp(&(group, version, kind))
        })
    }

    /// Names a node unless the name is taken (the first wins).
    pub(super) fn name(&mut self, name: &str, node: u32) {
        self.names.entry(name.to_string()).or_insert(node);
    }

    pub(super) fn by_name(&self, name: &str) -> Option<u32> {
        self.names.get(name).copied()
    }
}
