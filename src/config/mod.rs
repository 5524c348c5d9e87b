//! The functionConfig, read into a typed, validated [`Plan`].
//!
//! What it is: [`plan`] reads the functionConfig in any of the forms krm-merge accepts, checks
//! every field, parses every patch, compiles every target and loads the declared merge metadata,
//! and returns the patch steps to run, in order. A config that does not validate is a
//! [`ConfigError`] naming the field (`spec.patches[2].target.name: invalid regex ...`).
//! [`json_schema`] describes the `Merge` form (what `krm-merge schema` prints).
//!
//! What it must not do: execute anything (no patch is applied, no item is looked at), or do I/O
//! beyond reading the files that `path`, `originalPath` and `spec.schema.openAPI.path` name.
//!
//! # Forms
//!
//! * **`kind: Merge`** (`apiVersion: fn.krm-merge.dev/v1alpha1`): `spec.patches` and
//!   `spec.schema`, as the README's functionConfig section describes them.
//! * **kustomize's builtin `PatchTransformer`** (any apiVersion, usually `builtin`): `patch` or
//!   `path`, `target`, `options` (`allowNameChange`, `allowKindChange`) at the top level; one
//!   step. Its other options take kustomize's behaviour ([`PatchOptions::kustomize`]), so a
//!   PatchTransformer config gives the output kustomize gives for it.
//! * **A `v1` `ConfigMap`** (what `kpt fn eval IMAGE -- key=value` makes): string `data` with the
//!   keys in [`CONFIGMAP_KEYS`]; one step. Booleans are `"true"` or `"false"`. Empty or absent
//!   `data` is [`ConfigForm::Empty`]: nothing to do.
//! * **No config**: a null node or an empty mapping is [`ConfigForm::Empty`] too.
//!
//! `metadata` is free-form in every form (only checked to be a mapping): hosts put their
//! bookkeeping annotations there. Unknown fields anywhere else are errors.
//!
//! # Patches
//!
//! A patch is inline (`patch:`, a string holding one or more YAML or JSON documents, or a YAML
//! mapping or list written directly under the key, whose comments are kept) or in a file
//! (`path:`). Exactly one of the two. Empty documents in a stream are skipped; a patch with no
//! document at all is an error. Aliases are expanded: the whole functionConfig and every patch
//! document may add at most [`ALIAS_BUDGET`] nodes between them.
//!
//! Without `type`, the patch decides, as in kustomize: one document that is a list of mappings
//! each holding `op` is `json6902` (so is an empty list: no operations); mappings are `merge2`;
//! anything else is an error. With a `type`, the patch must have the shape that type reads:
//! `json6902` one list of operations (each a mapping with a known `op`, a `path`, and `from` or
//! `value` where the operation needs it), every other type mappings.
//!
//! A step's target decides what it selects:
//! * `json6902` needs a target (an operation list has no identity of its own);
//! * without a target, every document of `patch` (and, for `merge3`, of `original`) must carry
//!   `kind` and `metadata.name`: it selects the item with its own identity;
//! * `merge3` with a target takes exactly one document in `patch` and one in `original`;
//! * `merge2`, `jsonmerge` and `apply` with a target apply each document in turn to each
//!   targeted item — except in the PatchTransformer form, which keeps kustomize's rule that a
//!   strategic merge patch with a target is one document.
//!
//! Options that do not concern a step's type (`conflicts` on a `merge2` step, `newListItems` on
//! a `json6902` step) are accepted and have no effect. `original`/`originalPath` on a step that
//! is not `merge3` is an error, since its content would be ignored.
//!
//! # Files
//!
//! `path`, `originalPath` and `spec.schema.openAPI.path` are resolved against `base_dir` (the
//! directory of the functionConfig file, in standalone and exec-plugin modes) or, when there is
//! none (plain KRM mode), against the current directory; absolute paths are taken as they are.
//! They must name regular files of UTF-8 text of at most [`MAX_FILE_BYTES`].
//!
//! # Error locations
//!
//! A field is written as in the config: `spec.patches[2].options.inferMergeKeys`, `data.name`,
//! `target.kind` (PatchTransformer). Malformed patch text is located by line and column counted
//! from the first line of the patch text itself (for `patch: |`, the line after `patch: |`);
//! malformed files by line and column in the file.

mod goyaml;
mod kustomize;
mod source;
#[cfg(test)]
mod tests;
mod wire;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::schema::Schema;
use crate::select::target::{Target, TargetSpec};
use crate::yaml::Node;

use source::{Content, Ctx, Source};

/// The `apiVersion` of the `Merge` form.
pub const API_VERSION: &str = "fn.krm-merge.dev/v1alpha1";

/// The `kind` of the `Merge` form.
pub const KIND: &str = "Merge";

/// The nodes that expanding aliases may add, over the whole functionConfig and all its patch
/// documents together. Past it the config is rejected as an alias bomb.
pub const ALIAS_BUDGET: usize = 1_000_000;

/// The largest file `path`, `originalPath` or `spec.schema.openAPI.path` may name, in bytes.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The `data` keys a ConfigMap functionConfig may hold.
pub const CONFIGMAP_KEYS: &[&str] = &[
    "type",
    "patch",
    "original",
    "group",
    "version",
    "kind",
    "name",
    "namespace",
    "labelSelector",
    "annotationSelector",
    "allowNameChange",
    "allowKindChange",
    "newListItems",
    "inferMergeKeys",
    "conflicts",
];

/// What one patch operation does (the README's table of patch types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatchKind {
    /// `merge2`: a 2-way strategic merge of a partial resource.
    Merge2,
    /// `json6902`: a list of RFC 6902 operations.
    Json6902,
    /// `jsonmerge`: an RFC 7386 JSON merge patch.
    JsonMerge,
    /// `merge3`: a 3-way merge of `original` (the common ancestor) and `patch` (the update).
    Merge3,
    /// `apply`: kubectl client-side apply of the local config.
    Apply,
}

impl PatchKind {
    /// Every kind, in the README's order.
    pub const ALL: [PatchKind; 5] = [
        PatchKind::Merge2,
        PatchKind::Json6902,
        PatchKind::JsonMerge,
        PatchKind::Merge3,
        PatchKind::Apply,
    ];

    /// The canonical name (`merge2`), as `type` takes it and messages print it.
    pub fn as_str(self) -> &'static str {
        self.names()[0]
    }

    /// Every name `type` accepts for this kind: the canonical one first, then the aliases.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            PatchKind::Merge2 => &["merge2", "StrategicMerge", "StrategicMergePatch"],
            PatchKind::Json6902 => &["json6902", "JsonPatch", "JSON6902"],
            PatchKind::JsonMerge => &["jsonmerge", "MergePatch", "JsonMergePatch"],
            PatchKind::Merge3 => &["merge3"],
            PatchKind::Apply => &["apply", "ClientSideApply"],
        }
    }

    /// Every name of every kind, canonical names first in each group.
    pub fn all_names() -> impl Iterator<Item = &'static str> {
        PatchKind::ALL
            .iter()
            .flat_map(|k| k.names().iter().copied())
    }
}

impl fmt::Display for PatchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of [`PatchKind::all_names`] (names are case-sensitive).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown type {0:?}; expected one of {names}", names = PatchKind::all_names().collect::<Vec<_>>().join(", "))]
pub struct UnknownPatchKind(pub String);

impl FromStr for PatchKind {
    type Err = UnknownPatchKind;

    fn from_str(s: &str) -> Result<PatchKind, UnknownPatchKind> {
        PatchKind::ALL
            .into_iter()
            .find(|k| k.names().contains(&s))
            .ok_or_else(|| UnknownPatchKind(s.to_owned()))
    }
}

/// Where merged lists put the elements that only the patch has.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum NewListItems {
    /// After the destination's elements, whose order is kept.
    #[default]
    Append,
    /// Before the destination's elements (kustomize's order).
    Prepend,
}

/// How `merge3` reports conflicts (a field changed differently in the patch and in the item).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Conflicts {
    /// As warning results; upstream's value is taken.
    #[default]
    Warn,
    /// As error results: the run fails.
    Error,
}

/// The options of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchOptions {
    /// The patch may change `metadata.name` of the items it selects by target.
    pub allow_name_change: bool,
    /// The patch may change `kind` of the items it selects by target.
    pub allow_kind_change: bool,
    /// Where merged lists put the elements only the patch has.
    pub new_list_items: NewListItems,
    /// Pair list elements by kyaml's associative keys (`mountPath`, `devicePath`, `ip`, `type`,
    /// `topologyKey`, `name`, `containerPort`) when no schema says how;
    /// `false` replaces such lists, as kustomize does.
    pub infer_merge_keys: bool,
    /// How `merge3` conflicts are reported.
    pub conflicts: Conflicts,
}

impl Default for PatchOptions {
    /// No name or kind change, `append`, inferred merge keys, conflicts as warnings.
    fn default() -> Self {
        PatchOptions {
            allow_name_change: false,
            allow_kind_change: false,
            new_list_items: NewListItems::Append,
            infer_merge_keys: true,
            conflicts: Conflicts::Warn,
        }
    }
}

impl PatchOptions {
    /// kustomize's behaviour: `prepend`, no inferred merge keys (the compatibility setting
    /// of README "Differences from kustomize"); the defaults of the PatchTransformer form.
    pub fn kustomize() -> Self {
        PatchOptions {
            new_list_items: NewListItems::Prepend,
            infer_merge_keys: false,
            ..PatchOptions::default()
        }
    }

    /// The compatibility setting (README "Differences from kustomize"): with `prepend` and no inferred merge keys, `merge2`
    /// and `json6902` give kustomize's output, quirks included.
    pub fn kustomize_compatible(&self) -> bool {
        self.new_list_items == NewListItems::Prepend && !self.infer_merge_keys
    }
}

/// One patch operation of the plan.
#[derive(Clone, Debug)]
pub struct PatchStep {
    /// Position in `spec.patches` (0 in the single-step forms), for messages (`patch[2]`).
    pub index: usize,
    /// What the step does.
    pub kind: PatchKind,
    /// The documents of `patch` or `path`, aliases expanded, empty documents dropped; never
    /// empty. For [`PatchKind::Json6902`] exactly one: the list of operations. Inline mappings
    /// and lists keep their comments.
    pub patch: Vec<Node<'static>>,
    /// For [`PatchKind::Merge3`], the documents of `original` or `originalPath` (never empty);
    /// empty for every other kind.
    pub original: Vec<Node<'static>>,
    /// The items the step selects; `None`: each patch document selects the item with its own
    /// identity (apiVersion, kind, namespace, name). Always set for [`PatchKind::Json6902`].
    pub target: Option<Target>,
    /// The step's options.
    pub options: PatchOptions,
    /// Where the patch came from, for messages: `inline`, or the `path` as written.
    pub source: String,
}

/// Which form the functionConfig had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigForm {
    /// `apiVersion: fn.krm-merge.dev/v1alpha1`, `kind: Merge`.
    Merge,
    /// kustomize's builtin `PatchTransformer` config.
    PatchTransformer,
    /// A `v1` ConfigMap with `data` (`kpt fn eval IMAGE -- key=value`).
    ConfigMap,
    /// No configuration: no functionConfig node (null), an empty mapping, or a ConfigMap without
    /// data. The plan has no steps.
    Empty,
}

/// A validated functionConfig: what to run, in order, and with which merge metadata.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The steps, in the order they run; each sees the output of the previous one.
    pub steps: Vec<PatchStep>,
    /// The built-in schema plus what `spec.schema` declares. CRDs found among the items are
    /// the caller's to add.
    pub schema: Schema,
    /// The form the config was written in.
    pub form: ConfigForm,
}

/// A functionConfig that does not validate: the field at fault and what is wrong with it.
///
/// Displays as `{field}: {message}`, e.g.
/// `spec.patches[2].options.inferMergeKeys: invalid type: string "yes", expected a boolean`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The field, as a path from the top of the config (`spec.patches[2].target.name`), or
    /// `functionConfig` for the config as a whole.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl ConfigError {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The field name of the config as a whole.
const ROOT: &str = "functionConfig";

/// Reads and validates a functionConfig. `base_dir` is where relative `path`s are read from;
/// `None` (plain KRM mode, no directory known) reads them from the current directory.
///
/// Nothing is executed; the only I/O is reading the files the config names. See the
/// [module documentation](self) for the forms and rules.
pub fn plan(function_config: &Node<'_>, base_dir: Option<&Path>) -> Result<Plan, ConfigError> {
    let mut ctx = Ctx::new(base_dir);
    let mut root = function_config.clone().into_owned();
    ctx.expand(&mut root, ROOT)?;
    match form_of(&root)? {
        ConfigForm::Merge => merge_form(&root, &mut ctx),
        ConfigForm::PatchTransformer => patch_transformer_form(&root, &mut ctx),
        ConfigForm::ConfigMap => configmap_form(&root, &mut ctx),
        ConfigForm::Empty => Ok(empty_plan()),
    }
}

/// The JSON Schema (draft 2020-12) of the `Merge` functionConfig, subschemas inlined so that a
/// validator names the precise field at fault.
pub fn json_schema() -> serde_json::Value {
    wire::json_schema()
}

fn empty_plan() -> Plan {
    Plan {
        steps: Vec::new(),
        schema: Schema::builtin(),
        form: ConfigForm::Empty,
    }
}

/// Tells the forms apart by `apiVersion` and `kind`.
fn form_of(root: &Node<'_>) -> Result<ConfigForm, ConfigError> {
    if root.is_null() || (root.is_map() && root.entries().is_empty()) {
        return Ok(ConfigForm::Empty);
    }
    if !root.is_map() {
        return Err(ConfigError::new(
            ROOT,
            format!(
                "expected a mapping (a KRM object), found {}",
                source::describe(root)
            ),
        ));
    }
    let api_version = root.get("apiVersion").and_then(Node::as_str);
    let kind = root.get("kind").and_then(Node::as_str);
    match (api_version, kind) {
        (Some(API_VERSION), Some(KIND)) => Ok(ConfigForm::Merge),
        (_, Some(KIND)) => Err(ConfigError::new(
            "apiVersion",
            format!(
                "kind {KIND} needs apiVersion {API_VERSION}, found {}",
                quoted_or_missing(api_version)
            ),
        )),
        (_, Some("PatchTransformer")) => Ok(ConfigForm::PatchTransformer),
        (Some("v1"), Some("ConfigMap")) => Ok(ConfigForm::ConfigMap),
        _ => Err(ConfigError::new(
            "kind",
            format!(
                "apiVersion {}, kind {} is not a functionConfig krm-merge reads; \
                 use kind {KIND} (apiVersion {API_VERSION}), kustomize's PatchTransformer, \
                 or a v1 ConfigMap with data keys {}",
                quoted_or_missing(api_version),
                quoted_or_missing(kind),
                CONFIGMAP_KEYS.join(", ")
            ),
        )),
    }
}

fn quoted_or_missing(s: Option<&str>) -> String {
    match s {
        Some(s) => format!("{s:?}"),
        None => "missing".to_owned(),
    }
}

// ----- the Merge form ---------------------------------------------------------------------

fn merge_form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigError> {
    let config: wire::MergeConfig = wire::deserialize(root)?;
    let mut schema = Schema::builtin();
    let mut steps = Vec::new();
    if let Some(spec) = config.spec {
        if let Some(declared) = &spec.schema {
            source::load_schema(declared, &mut schema, ctx)?;
        }
        let entries = root.get_path(&["spec", "patches"]);
        for (index, entry) in spec.patches.unwrap_or_default().into_iter().enumerate() {
            let node = entries.and_then(|n| n.items().get(index));
            steps.push(merge_step(index, entry, node, ctx)?);
        }
    }
    Ok(Plan {
        steps,
        schema,
        form: ConfigForm::Merge,
    })
}

fn merge_step(
    index: usize,
    entry: wire::PatchSpec,
    node: Option<&Node<'static>>,
    ctx: &mut Ctx<'_>,
) -> Result<PatchStep, ConfigError> {
    let at = format!("spec.patches[{index}]");
    let patch = one_of(&at, ("patch", node), ("path", entry.path))?.ok_or_else(|| {
        ConfigError::new(&at, "give the patch: inline (patch) or in a file (path)")
    })?;
    let original = one_of(
        &at,
        ("original", node),
        ("originalPath", entry.original_path),
    )?;
    let options = entry
        .options
        .map(wire::Options::into_options)
        .unwrap_or_default();
    let draft = Draft {
        index,
        at: at.clone(),
        kind: entry.kind.map(|k| k.0),
        patch,
        original,
        target: entry.target,
        target_field: format!("{at}.target"),
        target_prefix: format!("{at}.target."),
        options,
        form: ConfigForm::Merge,
    };
    draft.build(ctx)
}

/// Picks the inline value `key` or the file `path_key` of the entry at `prefix` (empty: the
/// top level): exactly one, or neither (`None`). An inline key with a null value counts as
/// given (and is then reported empty).
fn one_of<'n>(
    prefix: &str,
    (key, node): (&str, Option<&'n Node<'static>>),
    (path_key, path): (&str, Option<String>),
) -> Result<Option<Source<'n>>, ConfigError> {
    match (node.and_then(|n| n.get(key)), path) {
        (Some(_), Some(_)) => Err(ConfigError::new(
            entry_field(prefix),
            format!("give either {key} or {path_key}, not both"),
        )),
        (Some(n), None) => Ok(Some(Source {
            field: join(prefix, key),
            content: Content::Inline(n),
        })),
        (None, Some(p)) => Ok(Some(Source {
            field: join(prefix, path_key),
            content: Content::File(p),
        })),
        (None, None) => Ok(None),
    }
}

/// The field of a patch entry, for errors about it as a whole.
fn entry_field(prefix: &str) -> &str {
    if prefix.is_empty() {
        ROOT
    } else {
        prefix
    }
}

/// `prefix.key`, or `key` at the top level.
fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

// ----- the PatchTransformer form ----------------------------------------------------------

fn patch_transformer_form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigError> {
    let config: wire::PatchTransformerConfig = wire::deserialize(root)?;
    let patch = one_of("", ("patch", Some(root)), ("path", config.path))?.ok_or_else(|| {
        ConfigError::new(ROOT, "give the patch: inline (patch) or in a file (path)")
    })?;
    let mut options = PatchOptions::kustomize();
    if let Some(o) = config.options {
        options.allow_name_change = o.allow_name_change;
        options.allow_kind_change = o.allow_kind_change;
    }
    let draft = Draft {
        index: 0,
        at: ROOT.to_owned(),
        kind: None,
        patch,
        original: None,
        target: config.target,
        target_field: "target".to_owned(),
        target_prefix: "target.".to_owned(),
        options,
        form: ConfigForm::PatchTransformer,
    };
    Ok(Plan {
        steps: vec![draft.build(ctx)?],
        schema: Schema::builtin(),
        form: ConfigForm::PatchTransformer,
    })
}

// ----- the ConfigMap form -----------------------------------------------------------------

fn configmap_form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigError> {
    let _: wire::ConfigMapConfig = wire::deserialize(root)?;
    let data = match root.get("data") {
        Some(d) if !d.entries().is_empty() => d,
        _ => return Ok(empty_plan()),
    };
    let mut values: Vec<(&str, &Node<'static>)> = Vec::new();
    for e in data.entries() {
        let key = e.key_str().unwrap_or_default();
        let field = format!("data.{key}");
        if !CONFIGMAP_KEYS.contains(&key) {
            return Err(ConfigError::new(
                field,
                format!("unknown key; known keys are {}", CONFIGMAP_KEYS.join(", ")),
            ));
        }
        if !e.value.is_scalar() {
            return Err(ConfigError::new(
                field,
                format!("expected a string, found {}", source::describe(&e.value)),
            ));
        }
        values.push((key, &e.value));
    }
    let get = |key: &str| values.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let text = |key: &str| get(key).and_then(Node::as_str);

    let kind = match text("type") {
        Some(t) => Some(
            t.parse()
                .map_err(|e: UnknownPatchKind| ConfigError::new("data.type", e.to_string()))?,
        ),
        None => None,
    };
    let source_of = |key: &str| {
        get(key).map(|n| Source {
            field: format!("data.{key}"),
            content: Content::Inline(n),
        })
    };
    let patch = source_of("patch").ok_or_else(|| {
        ConfigError::new(
            "data.patch",
            "missing: a ConfigMap functionConfig needs a patch",
        )
    })?;
    let target_keys = [
        "group",
        "version",
        "kind",
        "name",
        "namespace",
        "labelSelector",
        "annotationSelector",
    ];
    let target = target_keys
        .iter()
        .any(|k| get(k).is_some())
        .then(|| TargetSpec {
            group: text("group").map(str::to_owned),
            version: text("version").map(str::to_owned),
            kind: text("kind").map(str::to_owned),
            name: text("name").map(str::to_owned),
            namespace: text("namespace").map(str::to_owned),
            label_selector: text("labelSelector").map(str::to_owned),
            annotation_selector: text("annotationSelector").map(str::to_owned),
        });
    let mut options = PatchOptions::default();
    if let Some(v) = text("allowNameChange") {
        options.allow_name_change = parse_bool("data.allowNameChange", v)?;
    }
    if let Some(v) = text("allowKindChange") {
        options.allow_kind_change = parse_bool("data.allowKindChange", v)?;
    }
    if let Some(v) = text("inferMergeKeys") {
        options.infer_merge_keys = parse_bool("data.inferMergeKeys", v)?;
    }
    if let Some(v) = text("newListItems") {
        options.new_list_items = wire::from_string("data.newListItems", v)?;
    }
    if let Some(v) = text("conflicts") {
        options.conflicts = wire::from_string("data.conflicts", v)?;
    }
    let draft = Draft {
        index: 0,
        at: "data".to_owned(),
        kind,
        patch,
        original: source_of("original"),
        target,
        target_field: "data".to_owned(),
        target_prefix: "data.".to_owned(),
        options,
        form: ConfigForm::ConfigMap,
    };
    Ok(Plan {
        steps: vec![draft.build(ctx)?],
        schema: Schema::builtin(),
        form: ConfigForm::ConfigMap,
    })
}

fn parse_bool(field: &str, v: &str) -> Result<bool, ConfigError> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError::new(
            field,
            format!("expected \"true\" or \"false\", found {v:?}"),
        )),
    }
}

// ----- one step, whatever the form --------------------------------------------------------

/// Plain strings of a patch that YAML 1.1 reads as another type are quoted where they land (see
/// [`Node::quote_yaml11_lookalikes`]).
fn quote_yaml11_lookalikes(docs: &mut [Node<'static>]) {
    for doc in docs {
        doc.quote_yaml11_lookalikes();
    }
}

/// A step as the form gave it, before its patch is read and checked.
struct Draft<'n> {
    index: usize,
    /// The entry's own field, for errors about the entry as a whole.
    at: String,
    kind: Option<PatchKind>,
    patch: Source<'n>,
    original: Option<Source<'n>>,
    target: Option<TargetSpec>,
    /// Where a missing target is reported.
    target_field: String,
    /// Prepended to a target field's name in errors (`spec.patches[0].target.`, `data.`).
    target_prefix: String,
    options: PatchOptions,
    form: ConfigForm,
}

impl Draft<'_> {
    fn build(self, ctx: &mut Ctx<'_>) -> Result<PatchStep, ConfigError> {
        let compatible = kustomize::Reading::of(self.kind, &self.options);
        let loaded = ctx.load(&self.patch, compatible.trims_inline_text())?;
        let (mut patch, source) = (loaded.docs, loaded.name);
        let kind = match self.kind {
            Some(k) => k,
            None => source::detect(&patch, &self.patch.field)?,
        };
        source::check_shape(kind, &patch, &self.patch.field)?;
        compatible.read(
            kind,
            self.target.is_some(),
            loaded.bracket,
            &mut patch,
            &self.patch.field,
        )?;
        quote_yaml11_lookalikes(&mut patch);
        let original = match (kind, &self.original) {
            (PatchKind::Merge3, Some(src)) => {
                let mut original = ctx.load(src, false)?.docs;
                source::check_shape(kind, &original, &src.field)?;
                quote_yaml11_lookalikes(&mut original);
                original
            }
            (PatchKind::Merge3, None) => {
                return Err(ConfigError::new(
                    &self.at,
                    "a merge3 patch needs the common ancestor: original or originalPath",
                ))
            }
            (_, Some(src)) => {
                let hint = if self.kind.is_none() {
                    " (set type: merge3 for a 3-way merge)"
                } else {
                    ""
                };
                return Err(ConfigError::new(
                    &src.field,
                    format!("only merge3 patches take an original; this patch is {kind}{hint}"),
                ));
            }
            (_, None) => Vec::new(),
        };
        let target = match &self.target {
            Some(spec) => Some(Target::compile(spec).map_err(|e| {
                ConfigError::new(
                    format!("{}{}", self.target_prefix, e.field),
                    e.kind.to_string(),
                )
            })?),
            None => None,
        };
        self.check_selection(kind, &patch, &original, target.is_some())?;
        Ok(PatchStep {
            index: self.index,
            kind,
            patch,
            original,
            target,
            options: self.options,
            source,
        })
    }

    /// The rules that tie a step's documents to its target (see the module documentation).
    fn check_selection(
        &self,
        kind: PatchKind,
        patch: &[Node<'static>],
        original: &[Node<'static>],
        has_target: bool,
    ) -> Result<(), ConfigError> {
        let field = &self.patch.field;
        match (kind, has_target) {
            (PatchKind::Json6902, false) => Err(ConfigError::new(
                &self.target_field,
                "a json6902 patch needs a target: a list of operations does not name the \
                 resource it patches",
            )),
            (PatchKind::Json6902, true) => Ok(()),
            (PatchKind::Merge3, true) if patch.len() != 1 || original.len() != 1 => {
                Err(ConfigError::new(
                    &self.at,
                    format!(
                        "a merge3 patch with a target takes one document in patch and one in \
                         original; found {} and {}",
                        patch.len(),
                        original.len()
                    ),
                ))
            }
            (PatchKind::Merge2, true)
                if self.form == ConfigForm::PatchTransformer && patch.len() > 1 =>
            {
                Err(ConfigError::new(
                    field,
                    format!(
                        "{} documents and a target: a PatchTransformer's strategic merge patch \
                         with a target is one document (as in kustomize); use one \
                         PatchTransformer per document, or kind {KIND}",
                        patch.len()
                    ),
                ))
            }
            (_, true) => Ok(()),
            (_, false) => {
                source::check_identity(patch, field)?;
                match &self.original {
                    Some(src) => source::check_identity(original, &src.field),
                    None => Ok(()),
                }
            }
        }
    }
}
