//! Conversion between [`Node`] trees and `serde_json` values: the bridge for typed reading
//! (the functionConfig, schemas) and for values built from JSON. Lossy by nature (comments,
//! styles); never used for items, which stay trees.

use serde_json::{Map, Number, Value};

use super::scalar::Resolved;
use super::{Entry, Node, Repr};
use crate::path::{Path, Seg};

/// A node that JSON cannot hold, with the path to it (`spec.patches[0]`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ToJsonError {
    /// Where the node is.
    pub path: Path,
    /// Why JSON cannot hold it.
    pub message: String,
}

/// The JSON value of a node, as YAML's core schema reads it. Aliases must be expanded first
/// ([`Node::expand_aliases`]); a mapping key must be a scalar. Infinities and NaN, which JSON
/// lacks, become the strings `.inf`, `-.inf`, `.nan`.
pub fn to_json(node: &Node<'_>) -> Result<Value, ToJsonError> {
    let err = |message: String| ToJsonError {
        path: Path::root(),
        message,
    };
    match &node.repr {
        Repr::Scalar { .. } => Ok(match node.resolved() {
            Some(Resolved::Null) | None => Value::Null,
            Some(Resolved::Bool(b)) => Value::Bool(b),
            Some(Resolved::Int(i)) => {
                if let Ok(v) = i64::try_from(i) {
                    Value::Number(v.into())
                } else if let Ok(v) = u64::try_from(i) {
                    Value::Number(v.into())
                } else {
                    float(i as f64)
                }
            }
            Some(Resolved::Float(f)) => float(f),
            Some(Resolved::Str(s)) => Value::String(s.to_owned()),
        }),
        Repr::Alias { name, .. } => Err(err(format!("alias *{name} is not supported here"))),
        Repr::Seq { items, .. } => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(to_json(item).map_err(|e| e.within(Seg::Index(i)))?);
            }
            Ok(Value::Array(out))
        }
        Repr::Map { entries, .. } => {
            let mut out = Map::new();
            for e in entries {
                let Some(k) = e.key.as_str() else {
                    return Err(err("a mapping key must be a scalar".to_owned()));
                };
                let v = to_json(&e.value).map_err(|err| err.within(Seg::field(k)))?;
                out.insert(k.to_owned(), v);
            }
            Ok(Value::Object(out))
        }
    }
}

impl ToJsonError {
    /// The error one step further from the root: how it learns its path while unwinding.
    fn within(mut self, seg: Seg) -> Self {
        self.path = self.path.within(seg);
        self
    }
}

fn float(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String(".nan".into()),
        None if f > 0.0 => Value::String(".inf".into()),
        None => Value::String("-.inf".into()),
    }
}

/// A node tree holding a JSON value: strings are written so that they read back as strings,
/// numbers, booleans and null plain, collections in block style.
pub fn from_json(v: &Value) -> Node<'static> {
    match v {
        Value::Null => Node::null(),
        Value::Bool(b) => Node::plain(if *b { "true" } else { "false" }),
        Value::Number(n) => Node::plain(n.to_string()),
        Value::String(s) => Node::string(s.clone()),
        Value::Array(a) => Node::seq_of(a.iter().map(from_json).collect()),
        Value::Object(o) => Node::map_of(
            o.iter()
                .map(|(k, v)| Entry {
                    key: Node::string(k.clone()),
                    value: from_json(v),
                })
                .collect(),
        ),
    }
}
