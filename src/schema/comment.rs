//! kyaml's per-field schema comments.
//!
//! kyaml reads the line comment of a field, then its head comment, strips leading `#`s, and
//! parses the rest as an OpenAPI schema object in JSON; a comment that does not parse is just a
//! comment. The merge2/merge3 conformance cases use two forms:
//!
//! ```yaml
//! containers: # {"items":{"$ref": "#/definitions/io.k8s.api.core.v1.Container"},"type":"array","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy": "merge"}
//! items: # {"type":"array", "x-kubernetes-patch-strategy": "merge"}
//! # {"$ref":"#/definitions/io.k8s.api.core.v1.PodSpec"}
//! spec:
//! ```
//!
//! A top-level `$ref` makes the field that definition: kyaml replaces the comment's schema with
//! the referenced one, so extensions next to a resolved `$ref` are ignored (kept when the `$ref`
//! does not resolve). An `items.$ref` gives the elements' type. Definitions are looked up by name
//! in the built-in layer and in the declared OpenAPI documents. kyaml's setter shorthand
//! (`{"$openapi": ...}`) carries no merge metadata and is not read.
//!
//! Which comment to read, and where comments rank against the other sources, is the merge code's
//! business (doc/GUIDE.md "Merge keys": after the declared schema, before the heuristic).

use serde_json::{Map, Value};

use super::ext::{self, derive, Ext, Shape, ValueKind};
use super::{Cursor, FieldMeta, Schema};

const REF_PREFIX: &str = "#/definitions/";

/// The merge metadata in a kyaml schema comment (`# {"x-kubernetes-patch-merge-key": "name",
/// "x-kubernetes-patch-strategy": "merge"}`), with or without its `#`.
///
/// `None` when the comment is not a JSON object holding a schema (`$ref`, `type`, `items`,
/// `properties`, `additionalProperties` or a merge extension), or when its extensions are
/// malformed (comments are free text: they never cause errors). A comment with a top-level
/// `$ref` gives an empty `FieldMeta` here, since the reference needs a schema to resolve: see
/// [`Schema::comment`].
pub fn field_meta_from_comment(comment: &str) -> Option<FieldMeta> {
    let obj = parse(comment)?;
    if obj.contains_key("$ref") {
        return Some(FieldMeta::default());
    }
    meta_of(&obj, None)
}

impl Schema {
    /// The merge metadata and the position a kyaml schema comment gives a field, resolving
    /// `$ref` and `items.$ref` (`#/definitions/NAME`) against the built-in definitions and the
    /// declared OpenAPI documents. `None` as for [`field_meta_from_comment`].
    ///
    /// The cursor is the referenced type (for `items.$ref`, the element type), or
    /// [`Cursor::default`] when the comment references nothing known.
    pub fn comment(&self, comment: &str) -> Option<(FieldMeta, Cursor)> {
        let obj = parse(comment)?;
        if let Some(at) = obj
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.definition(r))
        {
            let meta = FieldMeta {
                atomic_map: self.is_atomic(at),
                replace: self.is_replaced(at),
                ..FieldMeta::default()
            };
            return Some((meta, at));
        }
        let elem = obj
            .get("items")
            .and_then(|i| i.get("$ref"))
            .and_then(Value::as_str)
            .and_then(|r| self.definition(r));
        let meta = meta_of(&obj, elem.map(|_| ValueKind::Object))?;
        Some((meta, elem.unwrap_or_default()))
    }

    /// The position of the definition a `$ref` names, in every layer that has it.
    fn definition(&self, reference: &str) -> Option<Cursor> {
        let name = reference.strip_prefix(REF_PREFIX)?;
        let at = Cursor {
            builtin: super::builtin::by_name(name),
            openapi: self.openapi.by_name(name),
            ..Cursor::default()
        };
        (!at.is_unknown()).then_some(at)
    }
}

fn parse(comment: &str) -> Option<Map<String, Value>> {
    let text = comment.trim().trim_start_matches('#').trim_start();
    if !text.starts_with('{') {
        return None;
    }
    let Ok(Value::Object(obj)) = serde_json::from_str(text) else {
        return None;
    };
    const SCHEMA_KEYS: [&str; 10] = [
        "$ref",
        "type",
        "items",
        "properties",
        "additionalProperties",
        ext::MERGE_KEY,
        ext::STRATEGY,
        ext::LIST_TYPE,
        ext::MAP_KEYS,
        ext::MAP_TYPE,
    ];
    SCHEMA_KEYS
        .iter()
        .any(|k| obj.contains_key(*k))
        .then_some(obj)
}

/// The metadata of a comment's own extensions. `elem`: the element kind when `items.$ref`
/// resolved.
fn meta_of(obj: &Map<String, Value>, elem: Option<ValueKind>) -> Option<FieldMeta> {
    let ext = Ext::read(obj).ok()?;
    let items = obj.get("items").and_then(Value::as_object);
    let elem = elem.unwrap_or_else(|| match items {
        Some(i) if !i.contains_key("$ref") => ValueKind::of(i),
        _ => ValueKind::Unknown,
    });
    let key_default = |key: &str| {
        items
            .and_then(|i| i.get("properties"))
            .and_then(|p| p.get(key))
            .and_then(|p| p.get("default"))
            .and_then(ext::scalar_text)
    };
    let shape = Shape {
        kind: ValueKind::of(obj),
        elem,
        ref_atomic: false,
        key_default: &key_default,
    };
    derive(&ext, &shape).ok()
}
