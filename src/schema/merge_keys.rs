//! The `mergeKeys` shorthand of `spec.schema`: merge metadata for one field of one kind, by path.
//!
//! # Path syntax
//!
//! Field names separated by dots, from the resource's top level: `spec.items`,
//! `spec.template.spec.containers.ports`. A segment names a field of an object; when that field
//! is a list, the next segment names a field of its elements, so lists are descended implicitly
//! (as [`Schema::field`](super::Schema::field) does). A `[]` after a segment may be written to
//! make that visible and means nothing more (`spec.items[].ports`). `*` stands for any key of a
//! map (`spec.groups.*.rules`). Field names holding `.`, `[`, `]` or `*` cannot be written.
//!
//! # What a declaration means
//!
//! | keys | strategy | metadata |
//! |---|---|---|
//! | `[a, b]` | none or `merge` | list paired by `a` and `b` ([`ListMerge::Map`](super::ListMerge::Map)) |
//! | `[]` | `merge` | list of scalars merged as a set ([`ListMerge::Set`](super::ListMerge::Set)) |
//! | `[]` | `replace` | list or map replaced whole ([`ListMerge::Atomic`](super::ListMerge::Atomic), `atomic_map`) |
//! | any | `…,retainKeys` | also `retain_keys` |
//!
//! Keys have no defaults here. Declarations hold for every version of the kind. Declaring the
//! same field twice with different metadata is an error.

use super::error::{Located, SchemaError, SchemaErrorKind};
use super::ext::{derive, Ext, ListType, Shape, Strategies, ValueKind};
use super::graph::{Graph, Node, Slot};
use super::FieldMeta;

/// The version this layer binds its roots under: declarations hold for every version.
pub(super) const ANY_VERSION: &str = "";

pub(super) fn add(
    graph: &mut Graph,
    group: &str,
    kind: &str,
    path: &str,
    keys: Vec<String>,
    strategy: Option<&str>,
) -> Result<(), SchemaError> {
    let origin = if group.is_empty() {
        format!("mergeKeys {kind} {path}")
    } else {
        format!("mergeKeys {group}/{kind} {path}")
    };
    add_located(graph, group, kind, path, keys, strategy).map_err(|e| e.origin(&origin))
}

fn add_located(
    graph: &mut Graph,
    group: &str,
    kind: &str,
    path: &str,
    keys: Vec<String>,
    strategy: Option<&str>,
) -> Result<(), Located> {
    if kind.is_empty() {
        return Err(Located::new("", SchemaErrorKind::Missing("kind")));
    }
    let segments = parse_path(path)?;
    let Some((last, parents)) = segments.split_last() else {
        return Err(Located::new(
            "path",
            SchemaErrorKind::InvalidPath(path.into(), "empty"),
        ));
    };
    let meta = meta(keys, strategy)?;

    let root = match graph.root(group, ANY_VERSION, kind) {
        Some(root) => root,
        None => {
            let root = graph.add_node(Node::default());
            graph.bind_root(group, ANY_VERSION, kind, root);
            root
        }
    };
    let mut at = root;
    for segment in parents {
        let existing = slot_mut(graph, at, segment).and_then(|s| s.target);
        at = match existing {
            Some(next) => next,
            None => {
                let next = graph.add_node(Node::default());
                if let Some(slot) = slot_mut(graph, at, segment) {
                    slot.target = Some(next);
                }
                next
            }
        };
    }
    // `at` is always a node of this graph; `slot_mut` only fails for a foreign id.
    if let Some(slot) = slot_mut(graph, at, last) {
        if !slot.meta.is_empty() && slot.meta != meta {
            return Err(Located::new("", SchemaErrorKind::Conflict));
        }
        slot.meta = meta;
    }
    Ok(())
}

/// The slot for `segment` in node `at`, made empty if missing.
fn slot_mut<'g>(graph: &'g mut Graph, at: u32, segment: &str) -> Option<&'g mut Slot> {
    let node = graph.node_mut(at)?;
    Some(if segment == "*" {
        node.additional.get_or_insert_with(Slot::default)
    } else {
        node.fields.entry(segment.to_string()).or_default()
    })
}

fn parse_path(path: &str) -> Result<Vec<&str>, Located> {
    let invalid = |why| Located::new("path", SchemaErrorKind::InvalidPath(path.to_string(), why));
    if path.is_empty() {
        return Err(invalid("empty"));
    }
    path.split('.')
        .map(|s| {
            let s = s.strip_suffix("[]").unwrap_or(s);
            if s.is_empty() {
                Err(invalid("empty segment"))
            } else if s != "*" && s.contains(['[', ']', '*']) {
                Err(invalid(
                    "a segment is a field name, `*`, or a field name followed by `[]`",
                ))
            } else {
                Ok(s)
            }
        })
        .collect()
}

fn meta(keys: Vec<String>, strategy: Option<&str>) -> Result<FieldMeta, Located> {
    let strategies = match strategy {
        None => Strategies::default(),
        Some(s) => Strategies::parse(s).map_err(|k| Located::new("strategy", k))?,
    };
    if strategies.replace && !keys.is_empty() {
        return Err(Located::new("", SchemaErrorKind::KeysWithReplace));
    }
    let distinct = keys
        .iter()
        .enumerate()
        .all(|(i, k)| !k.is_empty() && !keys.iter().take(i).any(|earlier| earlier == k));
    if !distinct {
        return Err(Located::new(
            "keys",
            SchemaErrorKind::WrongType {
                expected: "distinct, non-empty field names",
            },
        ));
    }
    let list_type = (!keys.is_empty() && !strategies.merge).then_some(ListType::Map);
    let ext = Ext {
        map_keys: (!keys.is_empty()).then_some(keys),
        list_type,
        strategies,
        ..Ext::default()
    };
    let shape = Shape {
        kind: ValueKind::Unknown,
        elem: ValueKind::Unknown,
        ref_atomic: false,
        key_default: &|_| None,
    };
    let meta = derive(&ext, &shape).map_err(|k| Located::new("", k))?;
    if meta.is_empty() {
        return Err(Located::new("", SchemaErrorKind::NothingDeclared));
    }
    Ok(meta)
}
