//! The `x-kubernetes-*` merge extensions of one schema, and the rule that turns them into a
//! [`FieldMeta`]. `tools/gen_builtin_schema.py` (`derive_meta`) applies the same rule to the
//! built-in definitions; keep the two in step.

use serde_json::{Map, Value};

use super::error::SchemaErrorKind;
use super::{FieldMeta, ListMerge, MapKey};

pub(super) const MERGE_KEY: &str = "x-kubernetes-patch-merge-key";
pub(super) const STRATEGY: &str = "x-kubernetes-patch-strategy";
pub(super) const LIST_TYPE: &str = "x-kubernetes-list-type";
pub(super) const MAP_KEYS: &str = "x-kubernetes-list-map-keys";
pub(super) const MAP_TYPE: &str = "x-kubernetes-map-type";

/// `x-kubernetes-patch-strategy`: a comma-separated set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Strategies {
    pub merge: bool,
    pub replace: bool,
    pub retain_keys: bool,
}

impl Strategies {
    pub(super) fn parse(s: &str) -> Result<Strategies, SchemaErrorKind> {
        let mut out = Strategies::default();
        for part in s.split(',').map(str::trim) {
            match part {
                "merge" => out.merge = true,
                "replace" => out.replace = true,
                "retainKeys" => out.retain_keys = true,
                _ => {
                    return Err(SchemaErrorKind::UnknownValue {
                        what: "patch strategy",
                        value: part.to_string(),
                    })
                }
            }
        }
        Ok(out)
    }

    fn is_empty(self) -> bool {
        self == Strategies::default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ListType {
    Atomic,
    Set,
    Map,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MapType {
    Atomic,
    Granular,
}

/// The merge extensions found on one schema object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Ext {
    pub merge_key: Option<String>,
    pub strategies: Strategies,
    pub list_type: Option<ListType>,
    pub map_keys: Option<Vec<String>>,
    pub map_type: Option<MapType>,
}

impl Ext {
    /// Reads the extensions of `obj`; a present extension with a value of the wrong shape is an
    /// error (the caller knows the place).
    pub(super) fn read(obj: &Map<String, Value>) -> Result<Ext, (&'static str, SchemaErrorKind)> {
        let string = |key: &'static str| -> Result<Option<&str>, (&'static str, SchemaErrorKind)> {
            match obj.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err((key, wrong("a string"))),
            }
        };
        let merge_key = string(MERGE_KEY)?.map(str::to_string);
        let strategies = match string(STRATEGY)? {
            None => Strategies::default(),
            Some(s) => Strategies::parse(s).map_err(|e| (STRATEGY, e))?,
        };
        let list_type = match string(LIST_TYPE)? {
            None => None,
            Some("atomic") => Some(ListType::Atomic),
            Some("set") => Some(ListType::Set),
            Some("map") => Some(ListType::Map),
            Some(other) => return Err((LIST_TYPE, unknown("list type", other))),
        };
        let map_type = match string(MAP_TYPE)? {
            None => None,
            Some("atomic") => Some(MapType::Atomic),
            Some("granular") => Some(MapType::Granular),
            Some(other) => return Err((MAP_TYPE, unknown("map type", other))),
        };
        let map_keys = match obj.get(MAP_KEYS) {
            None => None,
            Some(Value::Array(keys)) => Some(
                keys.iter()
                    .map(|k| k.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .filter(|keys| !keys.is_empty())
                    .ok_or((MAP_KEYS, wrong("a non-empty list of strings")))?,
            ),
            Some(_) => return Err((MAP_KEYS, wrong("a non-empty list of strings"))),
        };
        Ok(Ext {
            merge_key,
            strategies,
            list_type,
            map_keys,
            map_type,
        })
    }

    /// Fills what `self` does not say from `other` (a referenced definition's own extensions).
    pub(super) fn or(self, other: Ext) -> Ext {
        Ext {
            merge_key: self.merge_key.or(other.merge_key),
            strategies: if self.strategies.is_empty() {
                other.strategies
            } else {
                self.strategies
            },
            list_type: self.list_type.or(other.list_type),
            map_keys: self.map_keys.or(other.map_keys),
            map_type: self.map_type.or(other.map_type),
        }
    }
}

fn wrong(expected: &'static str) -> SchemaErrorKind {
    SchemaErrorKind::WrongType { expected }
}

fn unknown(what: &'static str, value: &str) -> SchemaErrorKind {
    SchemaErrorKind::UnknownValue {
        what,
        value: value.to_string(),
    }
}

/// What a schema says its values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ValueKind {
    Array,
    Object,
    Scalar,
    /// No `type`, `items`, `properties` or `additionalProperties`: could be anything.
    Unknown,
}

impl ValueKind {
    /// The kind of `obj`, a schema whose `$ref` (if any) is already followed.
    pub(super) fn of(obj: &Map<String, Value>) -> ValueKind {
        let mut types = Vec::new();
        match obj.get("type") {
            Some(Value::String(t)) => types.push(t.as_str()),
            Some(Value::Array(ts)) => types.extend(ts.iter().filter_map(Value::as_str)),
            _ => {}
        }
        types.retain(|t| *t != "null");
        let has = |t: &str| types.contains(&t);
        if has("array") || (types.is_empty() && obj.contains_key("items")) {
            ValueKind::Array
        } else if has("object")
            || obj.contains_key("properties")
            || obj
                .get("additionalProperties")
                .is_some_and(Value::is_object)
        {
            ValueKind::Object
        } else if !types.is_empty() {
            ValueKind::Scalar
        } else {
            ValueKind::Unknown
        }
    }

    fn may_be_array(self) -> bool {
        matches!(self, ValueKind::Array | ValueKind::Unknown)
    }

    fn may_be_object(self) -> bool {
        matches!(self, ValueKind::Object | ValueKind::Unknown)
    }
}

/// The facts about a field that [`derive`] needs besides its extensions.
pub(super) struct Shape<'a> {
    /// What the field's values are.
    pub kind: ValueKind,
    /// For a list, what its elements are.
    pub elem: ValueKind,
    /// The field is a `$ref` to a type that is `x-kubernetes-map-type: atomic`.
    pub ref_atomic: bool,
    /// The default of a list-map key field of the element type, as scalar text.
    pub key_default: &'a dyn Fn(&str) -> Option<String>,
}

/// The merge metadata of a field with extensions `ext` and shape `shape`.
///
/// Lists: `x-kubernetes-patch-strategy`, the strategic-merge metadata, decides when it speaks;
/// `x-kubernetes-list-type`, the server-side-apply metadata, decides otherwise. (The two disagree
/// in two built-in places, JobStatus.conditions and PodStatus.hostIPs: patch strategy `merge`,
/// list type `atomic`; they merge by key, as `kubectl patch` does.)
/// * strategy `merge` with keys (`x-kubernetes-list-map-keys`, else the patch merge key):
///   [`ListMerge::Map`]; without keys, a list of scalars (or of unknown elements) is a
///   [`ListMerge::Set`] (`finalizers`), a list of objects falls through to the list type;
/// * strategy `replace`: [`ListMerge::Atomic`];
/// * list type `map` (keys: `x-kubernetes-list-map-keys`, required), `set`, `atomic`.
///
/// Maps and objects are atomic for `x-kubernetes-map-type: atomic` (on the field, else on the
/// referenced type) or strategy `replace`; `x-kubernetes-map-type: granular` on the field wins
/// over the referenced type's `atomic`.
///
/// Metadata for the wrong kind of value is dropped (a list type on a string field says nothing).
pub(super) fn derive(ext: &Ext, shape: &Shape<'_>) -> Result<FieldMeta, SchemaErrorKind> {
    let s = ext.strategies;
    let mut list = None;
    if shape.kind.may_be_array() {
        if s.merge {
            if let Some(keys) = keys(ext) {
                list = Some(map(keys, shape));
            } else if shape.elem != ValueKind::Object {
                list = Some(ListMerge::Set);
            }
        } else if s.replace {
            list = Some(ListMerge::Atomic);
        }
        if list.is_none() {
            list = match ext.list_type {
                None => None,
                Some(ListType::Atomic) => Some(ListMerge::Atomic),
                Some(ListType::Set) => Some(ListMerge::Set),
                Some(ListType::Map) => {
                    let keys = ext
                        .map_keys
                        .as_deref()
                        .ok_or(SchemaErrorKind::MapListWithoutKeys)?;
                    Some(map(keys, shape))
                }
            };
        }
    }
    let atomic_map = shape.kind.may_be_object()
        && match ext.map_type {
            Some(MapType::Atomic) => true,
            Some(MapType::Granular) => false,
            None => s.replace || shape.ref_atomic,
        };
    Ok(FieldMeta {
        list,
        atomic_map,
        // Outside the built-in layer a map-type is all a schema has to say about maps.
        replace: atomic_map,
        retain_keys: s.retain_keys,
    })
}

fn keys(ext: &Ext) -> Option<&[String]> {
    ext.map_keys
        .as_deref()
        .or(ext.merge_key.as_ref().map(std::slice::from_ref))
}

fn map(keys: &[String], shape: &Shape<'_>) -> ListMerge {
    ListMerge::Map {
        keys: keys
            .iter()
            .map(|k| MapKey {
                name: k.clone(),
                default: (shape.key_default)(k),
            })
            .collect(),
    }
}

/// A schema `default` as scalar text (`"TCP"` → `TCP`, `80` → `80`); `None` for null, lists and
/// maps.
pub(super) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
