//! CustomResourceDefinition objects: every version's `openAPIV3Schema`, bound to
//! (`spec.group`, the version's name, `spec.names.kind`).
//!
//! `apiextensions.k8s.io/v1`: `spec.versions[*].schema.openAPIV3Schema`.
//! `apiextensions.k8s.io/v1beta1`: the same, or the CRD-wide `spec.validation.openAPIV3Schema`
//! for versions without their own, with the versions from `spec.versions[*].name` or the older
//! single `spec.version`.
//!
//! Structural schemas have no `$ref`; one is an error. A version without a schema, or whose
//! schema declares no fields, binds nothing. A kind already bound by an earlier CRD keeps its
//! first schema.
//!
//! For checking patches, a version's root is a whole object (`apiVersion`, `kind` and an
//! ObjectMeta `metadata` are implied), and a CRD that preserves unknown fields
//! (`spec.preserveUnknownFields`, by default in v1beta1) makes every object of its schemas open.

use serde_json::Value;

use super::error::{Located, SchemaError, SchemaErrorKind};
use super::graph::Graph;
use super::openapi::Builder;

const GROUP: &str = "apiextensions.k8s.io/";

pub(super) fn load(graph: &mut Graph, crd: &Value) -> Result<(), SchemaError> {
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("(unnamed)");
    load_located(graph, crd).map_err(|e| e.origin(&format!("CustomResourceDefinition {name}")))
}

fn load_located(graph: &mut Graph, crd: &Value) -> Result<(), Located> {
    let api_version = crd.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = crd.get("kind").and_then(Value::as_str).unwrap_or("");
    let v1beta1 = match (api_version.strip_prefix(GROUP), kind) {
        (Some("v1"), "CustomResourceDefinition") => false,
        (Some("v1beta1"), "CustomResourceDefinition") => true,
        _ => {
            return Err(Located::new(
                "",
                SchemaErrorKind::NotACrd {
                    api_version: api_version.to_string(),
                    kind: kind.to_string(),
                },
            ))
        }
    };
    let spec = crd
        .get("spec")
        .ok_or_else(|| Located::new("", SchemaErrorKind::Missing("spec")))?;
    let group = string(spec, "group", "spec")?;
    let names = spec
        .get("names")
        .ok_or_else(|| Located::new("spec", SchemaErrorKind::Missing("names")))?;
    let kind = string(names, "kind", "spec.names")?;

    let mut builder = Builder::new(graph, None);
    // v1beta1 CRDs keep unknown fields unless they say otherwise; v1 ones prune them (v1 allows
    // only `false` here, but a `true` left from a conversion still means it).
    let preserve = match spec.get("preserveUnknownFields") {
        Some(Value::Bool(b)) => *b,
        _ => v1beta1,
    };
    if preserve {
        builder = builder.preserving_unknown_fields();
    }
    let common = match spec.pointer("/validation/openAPIV3Schema") {
        Some(schema) if v1beta1 => builder.root(schema, "spec.validation.openAPIV3Schema")?,
        _ => None,
    };
    let mut bindings = Vec::new();
    match spec.get("versions") {
        Some(Value::Array(versions)) => {
            for (i, v) in versions.iter().enumerate() {
                let path = format!("spec.versions[{i}]");
                let version = string(v, "name", &path)?;
                let node = match v.pointer("/schema/openAPIV3Schema") {
                    Some(schema) => {
                        builder.root(schema, &format!("{path}.schema.openAPIV3Schema"))?
                    }
                    None => common,
                };
                bindings.push((version, node));
            }
        }
        Some(_) => return Err(wrong("spec.versions", "a list")),
        None if v1beta1 => bindings.push((string(spec, "version", "spec")?, common)),
        None => return Err(Located::new("spec", SchemaErrorKind::Missing("versions"))),
    }
    for (version, node) in bindings {
        if let Some(node) = node {
            graph.bind_root(group, version, kind, node);
        }
    }
    Ok(())
}

fn string<'v>(v: &'v Value, key: &'static str, path: &str) -> Result<&'v str, Located> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(wrong(&format!("{path}.{key}"), "a string")),
        None => Err(Located::new(path, SchemaErrorKind::Missing(key))),
    }
}

fn wrong(path: &str, expected: &'static str) -> Located {
    Located::new(path, SchemaErrorKind::WrongType { expected })
}
