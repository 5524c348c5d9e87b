//! The functionConfig forms as serde reads them, and the JSON Schema of the `Merge` form.
//!
//! These structs check types and reject unknown fields, with the path to the field at fault
//! (`serde_path_to_error`). Their doc comments are the `description`s of the published schema,
//! so they speak to users. Patch contents are only checked for their type here: `mod.rs` takes
//! them from the node tree, where their comments are.
//!
//! What it must not do: hold rules the schema cannot say (those are `mod.rs`'s), or read
//! patch contents.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Compat, ConfigError, Conflicts, FailOn, PatchKind, PatchOptions, Validation};
use crate::merge::merge2::NewItems;
use crate::path::{Path, Seg};
use crate::select::target::TargetSpec;
use crate::yaml::{to_json, Node};

/// The most errors one reading of a config reports: past them, the rest are left unsaid.
pub(super) const MAX_ERRORS: usize = 64;

/// Reads a config node into `T`, and every field at fault, not only the first: each error's
/// field is taken out (or, for an element of a list or a required field, the nearest field of
/// an object around it) and the rest read again, up to [`MAX_ERRORS`]. The value is what was
/// read once the faulty fields were taken out (`None` when nothing could be), so that the
/// caller can check the rest. An unknown field gets the known one closest to it (`tagret` →
/// `target`).
pub(super) fn read_all<T: DeserializeOwned>(node: &Node<'_>) -> (Option<T>, Vec<ConfigError>) {
    let mut json = match to_json(node) {
        Ok(j) => j,
        Err(e) => return (None, vec![ConfigError::new(e.path, e.message)]),
    };
    let mut errors: Vec<ConfigError> = Vec::new();
    // Fields taken out, by the object that held them: a "missing field" about one of them
    // is no error of the user's.
    let mut removed: Vec<(Path, String)> = Vec::new();
    loop {
        let e = match serde_path_to_error::deserialize::<_, T>(Strict(json.clone())) {
            Ok(v) => return (Some(v), errors),
            Err(e) => e,
        };
        let field = field_path(e.path());
        let message = e.into_inner().to_string();
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|m| m.split('`').next())
            .map(str::to_owned);
        let ours = missing
            .as_deref()
            .is_some_and(|m| removed.iter().any(|(at, key)| *at == field && key == m));
        if !ours {
            errors.push(ConfigError::new(field.clone(), with_suggestion(message)));
        }
        if errors.len() >= MAX_ERRORS {
            return (None, errors);
        }
        // What to take out: the field itself, or where that cannot be read past (a list's
        // element, a field that must be there), the nearest field around it.
        let mut at = field.clone();
        if missing.is_some() {
            // The error is about the object that lacks the field: take the object out.
        } else if let Some(Seg::Field(key)) = at.0.last() {
            let parent = Path(at.0[..at.0.len() - 1].to_vec());
            if take_out(&mut json, &at) {
                removed.push((parent, key.clone()));
                continue;
            }
            return (None, errors);
        }
        // Climb to the nearest field of an object, and take that out.
        while !matches!(at.0.last(), Some(Seg::Field(_))) {
            if at.0.pop().is_none() {
                return (None, errors);
            }
        }
        let Some(Seg::Field(key)) = at.0.last().cloned() else {
            return (None, errors);
        };
        let parent = Path(at.0[..at.0.len() - 1].to_vec());
        if !take_out(&mut json, &at) {
            return (None, errors);
        }
        removed.push((parent, key));
    }
}

/// Removes the member `at` (a path ending in a field) from `json`; false when it is not there.
fn take_out(json: &mut Value, at: &Path) -> bool {
    let Some((Seg::Field(key), parents)) = at.0.split_last() else {
        return false;
    };
    let mut v = json;
    for seg in parents {
        v = match (seg, v) {
            (Seg::Field(k), Value::Object(m)) => match m.get_mut(k) {
                Some(v) => v,
                None => return false,
            },
            (Seg::Index(i), Value::Array(a)) => match a.get_mut(*i) {
                Some(v) => v,
                None => return false,
            },
            _ => return false,
        };
    }
    match v {
        Value::Object(m) => m.shift_remove(key).is_some(),
        _ => false,
    }
}

/// serde's "unknown field `tagret`, expected one of `type`, ..., `target`": with the known
/// field closest to the one written, when one is close (`; did you mean `target`?`).
fn with_suggestion(message: String) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message;
    };
    let Some((written, expected)) = rest.split_once("`, expected ") else {
        return message;
    };
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match crate::schema::suggest::closest(written, known.iter().copied()) {
        Some(meant) => format!("{message}; did you mean `{meant}`?"),
        None => message,
    }
}

/// serde's path to a field, as ours.
fn field_path(path: &serde_path_to_error::Path) -> Path {
    use serde_path_to_error::Segment;
    Path(
        path.iter()
            .map(|seg| match seg {
                Segment::Seq { index } => Seg::Index(*index),
                Segment::Map { key } => Seg::Field(key.clone()),
                Segment::Enum { variant } => Seg::Field(variant.clone()),
                Segment::Unknown => Seg::field("?"),
            })
            .collect(),
    )
}

/// A JSON value read as `serde_json::Value` reads itself, except that a struct must be a
/// mapping: serde's derived structs also accept a sequence of their fields in order, which
/// turned `spec: [1, 2]` into an error about `spec[0]`.
struct Strict(Value);

impl<'de> de::IntoDeserializer<'de, serde_json::Error> for Strict {
    type Deserializer = Strict;

    fn into_deserializer(self) -> Strict {
        self
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

impl<'de> Deserializer<'de> for Strict {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut seq = de::value::SeqDeserializer::new(items.into_iter().map(Strict));
                let v = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(v)
            }
            Value::Object(entries) => {
                let mut map = de::value::MapDeserializer::new(
                    entries.into_iter().map(|(k, v)| (k, Strict(v))),
                );
                let v = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(v)
            }
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Object(_) => self.deserialize_any(visitor),
            other => Err(de::Error::invalid_type(unexpected(&other), &"a mapping")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// Reads a string as the value of an enum option (`append`, `warn`), for the ConfigMap form.
pub(super) fn from_string<T: DeserializeOwned>(field: Path, s: &str) -> Result<T, ConfigError> {
    serde_json::from_value(Value::String(s.to_owned()))
        .map_err(|e| ConfigError::new(field, e.to_string()))
}

/// The JSON Schema of [`MergeConfig`], subschemas inlined.
pub(super) fn json_schema() -> Value {
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<MergeConfig>()
        .to_value();
    unwrap_descriptions(&mut schema);
    schema
}

/// Joins the lines that doc comments are wrapped into, keeping paragraph breaks: tools show a
/// description as text that they wrap themselves.
fn unwrap_descriptions(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(s) if key == "description" => {
                        *s = s
                            .split("\n\n")
                            .map(|para| para.split('\n').collect::<Vec<_>>().join(" "))
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    _ => unwrap_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

// ----- the Merge form ---------------------------------------------------------------------

/// The functionConfig of krm-merge: patch operations applied in order to the items of a
/// package, and merge metadata for the kinds the built-in schema lacks.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "Merge")]
pub(super) struct MergeConfig {
    /// The version of this config's schema: fn.krm-merge.dev/v1alpha1.
    #[serde(rename = "apiVersion")]
    pub _api_version: MergeApiVersion,
    /// The kind of this config: Merge.
    #[serde(rename = "kind")]
    pub _kind: MergeKind,
    /// Free-form object metadata (name, annotations); krm-merge does not read it.
    #[serde(rename = "metadata")]
    pub _metadata: Option<Map<String, Value>>,
    /// The patch operations, and the merge metadata they need.
    pub spec: Option<MergeSpec>,
}

/// The only `apiVersion` of the Merge form.
#[derive(Deserialize, JsonSchema)]
pub(super) enum MergeApiVersion {
    #[serde(rename = "fn.krm-merge.dev/v1alpha1")]
    V1alpha1,
}

/// The only `kind` of the Merge form.
#[derive(Deserialize, JsonSchema)]
pub(super) enum MergeKind {
    Merge,
}

/// The patch operations and the merge metadata.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct MergeSpec {
    /// Patch operations, applied in order: each one sees the output of the previous one.
    pub patches: Option<Vec<PatchSpec>>,
    /// What fails the run: `error` (the default: error results only) or `warning` (every
    /// warning is an error too: a target that selects nothing, a schema finding kept as a
    /// warning, a merge3 conflict, a CRD that cannot be read). For hosts that show nothing of a
    /// function that succeeds, as kustomize does with an exec plugin's messages.
    #[schemars(extend("default" = "error"))]
    pub fail_on: Option<FailOn>,
    /// Merge metadata (how lists are merged) for kinds the built-in Kubernetes schema lacks.
    /// CustomResourceDefinitions among the items are read without being declared here.
    pub schema: Option<SchemaSpec>,
}

/// One patch operation: what to merge (`patch` or `path`), how (`type`), into which items
/// (`target`).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{"required": ["patch"]}, {"required": ["path"]}]))]
pub(super) struct PatchSpec {
    /// A name for the patch, which results and messages use instead of its place
    /// (`patch "scale-web" (merge2)` for `patch[3] (merge2)`); unique among the patches.
    pub name: Option<String>,
    /// How the patch is applied: `merge2` (strategic merge; aliases `StrategicMerge`,
    /// `StrategicMergePatch`), `json6902` (RFC 6902 operations; `JsonPatch`, `JSON6902`),
    /// `jsonmerge` (RFC 7386; `MergePatch`, `JsonMergePatch`), `merge3` (3-way merge with
    /// `original`), `apply` (kubectl client-side apply; `ClientSideApply`). Default: `json6902`
    /// when the patch is a list of operations, `merge2` when it is a mapping.
    #[serde(rename = "type")]
    pub kind: Option<TypeName>,
    /// The patch, inline: a string holding one or more YAML or JSON documents (separated by
    /// `---`), or a YAML mapping or list written directly here. Give `patch` or `path`.
    #[serde(rename = "patch")]
    pub _patch: Option<PatchValue>,
    /// The patch, in a file: a path relative to the functionConfig's directory (in KRM mode,
    /// where that is unknown, to the current directory). Give `patch` or `path`.
    pub path: Option<String>,
    /// merge3 only: the common ancestor of the patch and the items, inline (like `patch`).
    #[serde(rename = "original")]
    pub _original: Option<PatchValue>,
    /// merge3 only: the common ancestor, in a file (like `path`).
    pub original_path: Option<String>,
    /// The items to patch. Without it, each patch document patches the item with its own
    /// apiVersion, kind, namespace and name. `{}` selects every item.
    #[schemars(with = "Option<TargetDoc>")]
    pub target: Option<TargetSpec>,
    /// Where inside each item the target selects the patch applies: a field path as results
    /// write them (`spec.template.spec.containers[name=app]`), with `[*]` for every element of
    /// a list (`spec.volumes[*]`), from the item's top or from a named start: `@podTemplate`,
    /// `@podSpec` or `@containers` (every element of `containers` and `initContainers` of the
    /// pod spec, wherever the kind keeps it: Deployment, StatefulSet, DaemonSet, ReplicaSet,
    /// ReplicationController, Job, CronJob, Pod, PodTemplate, and the kinds declared in
    /// `spec.schema.workloads`). A merge2, jsonmerge or merge3 patch is merged into each place
    /// with that place's schema (a container's `env` still merges by name); a json6902 patch's
    /// pointers start at each place. Needs a target; apply patches take none. Default: the
    /// item's top.
    pub at: Option<String>,
    /// Options of this operation.
    pub options: Option<Options>,
}

/// The `type` of a patch, under any of its names.
pub(super) struct TypeName(pub PatchKind);

impl<'de> Deserialize<'de> for TypeName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TypeName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a patch type name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TypeName, E> {
                s.parse()
                    .map(TypeName)
                    .map_err(|e: super::UnknownPatchKind| E::custom(e))
            }
        }
        d.deserialize_str(V)
    }
}

impl JsonSchema for TypeName {
    fn schema_name() -> Cow<'static, str> {
        "PatchType".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = PatchKind::all_names().collect();
        json_schema!({ "type": "string", "enum": names })
    }
}

/// An inline patch: a string, a mapping or a list. Only the type is checked here.
pub(super) struct PatchValue;

impl<'de> Deserialize<'de> for PatchValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PatchValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string of YAML or JSON documents, a mapping or a list")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<PatchValue, E> {
                Ok(PatchValue)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PatchValue, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(PatchValue)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PatchValue, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(PatchValue)
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for PatchValue {
    fn schema_name() -> Cow<'static, str> {
        "Patch".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["string", "object", "array"] })
    }
}

/// Which items a patch selects. Every field is optional and an absent one places no condition;
/// the items must meet all the given ones.
// The schema of `crate::select::target::TargetSpec`, which is what deserializes; a test keeps the two
// in step.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct TargetDoc {
    /// API group, an anchored regular expression (`apps`, `.*\.example\.com`); the core group
    /// is the empty string.
    group: Option<String>,
    /// API version, an anchored regular expression (`v1`, `v1beta.*`).
    version: Option<String>,
    /// Kind, an anchored regular expression (`Deployment`, `Deployment|StatefulSet`).
    kind: Option<String>,
    /// metadata.name, an anchored regular expression (`web-.*`); matched against the current
    /// name and the name before kustomize's renames.
    name: Option<String>,
    /// Namespace, an anchored regular expression (`prod|staging`); resources without one are in
    /// `default`, cluster-scoped ones in none (`.*` selects them).
    namespace: Option<String>,
    /// A Kubernetes label selector over metadata.labels (`env in (prod),tier!=cache`).
    label_selector: Option<String>,
    /// A Kubernetes label selector over metadata.annotations (`team=payments`).
    annotation_selector: Option<String>,
}

/// Options of one patch operation.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Options {
    /// Let the patch change metadata.name of the items it selects by target (as in kustomize).
    #[serde(default)]
    pub allow_name_change: bool,
    /// Let the patch change the kind of the items it selects by target (as in kustomize).
    #[serde(default)]
    pub allow_kind_change: bool,
    /// Where merged lists put the elements only the patch has: `append` (after the item's
    /// elements, whose order is kept; the default) or `prepend` (before them, kustomize's
    /// order).
    #[schemars(extend("default" = "append"))]
    pub new_list_items: Option<NewListItems>,
    /// Pair the elements of lists no schema describes by well-known key fields (name,
    /// mountPath, containerPort, ...) when every element has the key (the default); `false`
    /// replaces such lists whole, as kustomize does.
    #[schemars(extend("default" = true))]
    pub infer_merge_keys: Option<bool>,
    /// merge3 only: report conflicts (a field changed differently upstream and in the item) as
    /// warnings (`warn`: upstream's value is taken, as the 3-way rules say) or as errors
    /// (`error`: the run fails and changes nothing).
    #[serde(default)]
    pub conflicts: Conflicts,
    /// Whose behaviour merge2 and json6902 patches reproduce where tools differ: `native`
    /// (krm-merge's rules) or `kustomize` (kustomize v5's `patches:`, quirks included: list
    /// order `prepend`, no inferred merge keys, no merge keys from CRDs in the input, and its
    /// readings of patch text). `newListItems: prepend` with `inferMergeKeys: false` also asks
    /// for kustomize's behaviour.
    pub compatibility: Option<Compatibility>,
    /// Pair the list elements of custom resources by the keys their CustomResourceDefinition in
    /// the input declares. Default `true`; `false` with kustomize compatibility, as kustomize
    /// reads no CRDs for merge keys.
    pub crd_merge_keys: Option<bool>,
    /// What the schema check of the patch finds is: an unknown field of a kind whose schema is
    /// known, a value of the wrong type, a field the kind requires removed, a target pattern
    /// that reads as a glob. `error` (the default; `warn` with kustomize compatibility, as
    /// kustomize says nothing of them) fails the run; `warn` reports them and patches anyway.
    #[schemars(extend("default" = "error"))]
    pub validation: Option<Validation>,
    /// The older spelling of `validation`: `true` is `validation: error`, `false` is
    /// `validation: warn`.
    pub strict: Option<bool>,
}

/// `compatibility`, as the config writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Compatibility {
    /// krm-merge's own rules.
    Native,
    /// kustomize v5's `patches:`.
    Kustomize,
}

impl Options {
    /// The options with defaults filled in; `at` is where they were written, for errors.
    pub(super) fn into_options(self, at: &Path) -> Result<PatchOptions, ConfigError> {
        let mut o = PatchOptions {
            allow_name_change: self.allow_name_change,
            allow_kind_change: self.allow_kind_change,
            conflicts: self.conflicts,
            ..PatchOptions::default()
        };
        let strict = self.strict.map(|s| {
            if s {
                Validation::Error
            } else {
                Validation::Warn
            }
        });
        let validation = match (self.validation, strict) {
            (Some(v), Some(s)) if v != s => {
                return Err(ConfigError::new(
                    at.field("strict"),
                    format!(
                        "strict: {} contradicts validation: {}; give one of them",
                        self.strict == Some(true),
                        v.as_str()
                    ),
                ))
            }
            (v, s) => v.or(s),
        };
        match self.compatibility {
            Some(Compatibility::Kustomize) => {
                let contradicts = |field: &str, written: String| {
                    ConfigError::new(
                        at.field(field),
                        format!(
                            "{written} contradicts compatibility: kustomize (which means \
                             newListItems: prepend and inferMergeKeys: false)"
                        ),
                    )
                };
                if self.new_list_items == Some(NewListItems::Append) {
                    return Err(contradicts("newListItems", "append".into()));
                }
                if self.infer_merge_keys == Some(true) {
                    return Err(contradicts("inferMergeKeys", "true".into()));
                }
                o.new_list_items = NewItems::Prepend;
                o.infer_merge_keys = false;
                o.compat = Compat::Kustomize;
            }
            Some(Compatibility::Native) => {
                o.new_list_items = self.new_list_items.unwrap_or_default().into();
                o.infer_merge_keys = self.infer_merge_keys.unwrap_or(true);
                o.compat = Compat::Native;
            }
            None => {
                o.new_list_items = self.new_list_items.unwrap_or_default().into();
                o.infer_merge_keys = self.infer_merge_keys.unwrap_or(true);
                o = o.decided();
            }
        }
        o.crd_merge_keys = self.crd_merge_keys.unwrap_or(o.compat == Compat::Native);
        o.validation = validation.unwrap_or(Validation::default_for(o.compat));
        Ok(o)
    }
}

/// `newListItems`, as the config writes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum NewListItems {
    /// After the destination's elements, whose order is kept.
    #[default]
    Append,
    /// Before the destination's elements (kustomize's order).
    Prepend,
}

impl From<NewListItems> for NewItems {
    fn from(n: NewListItems) -> NewItems {
        match n {
            NewListItems::Append => NewItems::Append,
            NewListItems::Prepend => NewItems::Prepend,
        }
    }
}

/// Merge metadata declared for kinds the built-in schema lacks. It fills what the built-in
/// schema and the CRDs among the items leave unsaid; it never overrides them.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct SchemaSpec {
    /// An OpenAPI v2 document (as kustomize's `openapi:` field takes it): definitions bound to
    /// kinds by x-kubernetes-group-version-kind, with x-kubernetes-patch-merge-key,
    /// x-kubernetes-patch-strategy, x-kubernetes-list-type and x-kubernetes-list-map-keys;
    /// `$ref` allowed.
    #[serde(rename = "openAPI")]
    pub open_api: Option<OpenApiSpec>,
    /// Merge metadata of single fields.
    pub merge_keys: Option<Vec<MergeKeySpec>>,
    /// Where kinds the built-in schema lacks keep a pod template or a pod spec, for the named
    /// starts of `at` (`@podTemplate`, `@podSpec`, `@containers`).
    pub workloads: Option<Vec<WorkloadSpec>>,
}

/// A kind whose items hold a pod: give `podTemplate` or `podSpec`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{"required": ["podTemplate"]}, {"required": ["podSpec"]}]))]
pub(super) struct WorkloadSpec {
    /// API group of the kind; empty or absent for the core group.
    #[serde(default)]
    pub group: String,
    /// The kind (every version of it).
    pub kind: String,
    /// Where its pod template is (an object with `metadata` and `spec`, the spec a PodSpec): a
    /// field path from the top of the item, with `[*]` where it crosses a list
    /// (`spec.template`, `spec.tasks[*].template`).
    pub pod_template: Option<String>,
    /// Where its pod spec is (an object with `containers`), as `podTemplate`.
    pub pod_spec: Option<String>,
}

/// Where the OpenAPI document is: give `path` or `inline`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{"required": ["path"]}, {"required": ["inline"]}]))]
pub(super) struct OpenApiSpec {
    /// A JSON or YAML file, relative to the functionConfig's directory.
    pub path: Option<String>,
    /// The document itself, or a string holding it as JSON or YAML.
    #[schemars(with = "Option<InlineDoc>")]
    pub inline: Option<Value>,
}

/// An inline document: an object, or a string of JSON or YAML.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum InlineDoc {
    Text(String),
    Object(Map<String, Value>),
}

/// The merge metadata of one field of one kind.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct MergeKeySpec {
    /// API group of the kind; empty or absent for the core group.
    #[serde(default)]
    pub group: String,
    /// The kind (every version of it).
    pub kind: String,
    /// The field: names separated by dots from the top of the resource (`spec.items`); a list
    /// is descended implicitly (`spec.items.ports`, or `spec.items[].ports`); `*` stands for
    /// any key of a map.
    pub path: String,
    /// The fields that identify an element of the list (like x-kubernetes-list-map-keys).
    #[serde(default)]
    pub keys: Vec<String>,
    /// A patch strategy: `merge`, `replace` or `retainKeys`, or several separated by commas.
    pub strategy: Option<String>,
}

// ----- the other forms --------------------------------------------------------------------

/// kustomize's builtin PatchTransformer config.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct PatchTransformerConfig {
    #[serde(rename = "apiVersion")]
    pub _api_version: Option<String>,
    #[serde(rename = "kind")]
    pub _kind: String,
    #[serde(rename = "metadata")]
    pub _metadata: Option<Map<String, Value>>,
    #[serde(rename = "patch")]
    pub _patch: Option<PatchValue>,
    pub path: Option<String>,
    pub target: Option<TargetSpec>,
    pub options: Option<KustomizeOptions>,
}

/// The patch fields of a kustomization (its other fields are checked one by one, by name).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct KustomizationPatches {
    pub patches: Option<Vec<KustomizationPatch>>,
    pub patches_strategic_merge: Option<Vec<String>>,
    #[serde(rename = "patchesJson6902")]
    pub patches_json6902: Option<Vec<KustomizationPatch>>,
}

/// An entry of a kustomization's `patches` (or `patchesJson6902`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct KustomizationPatch {
    pub path: Option<String>,
    #[serde(rename = "patch")]
    pub _patch: Option<PatchValue>,
    pub target: Option<TargetSpec>,
    pub options: Option<KustomizeOptions>,
}

/// The options kustomize's PatchTransformer knows.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct KustomizeOptions {
    #[serde(default)]
    pub allow_name_change: bool,
    #[serde(default)]
    pub allow_kind_change: bool,
}

/// A v1 ConfigMap; `data` is read from the node tree.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ConfigMapConfig {
    #[serde(rename = "apiVersion")]
    pub _api_version: String,
    #[serde(rename = "kind")]
    pub _kind: String,
    #[serde(rename = "metadata")]
    pub _metadata: Option<Map<String, Value>>,
    #[serde(rename = "data")]
    pub _data: Option<Map<String, Value>>,
    #[serde(rename = "immutable")]
    pub _immutable: Option<bool>,
}
