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
//!   `spec.schema`, as the guide's "The functionConfig" section (doc/GUIDE.md) describes them.
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
//! document at all is an error. Aliases are expanded and anchors dropped, once, here: the whole
//! functionConfig and every patch document may add at most [`ALIAS_BUDGET`] nodes between them,
//! and the walkers receive patches without aliases or anchors.
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
//! `at` (doc/GUIDE.md "Patching inside resources") says where inside each selected resource a step
//! applies: a [`Pattern`], read once here. It needs a target (the documents of a patch applied
//! at places are not resources, so they cannot select by identity), and `apply` takes none
//! (kubectl's last-applied configuration is the whole resource's). `spec.schema.workloads`
//! declares where kinds the built-in schema lacks keep their pods, for `at`'s named starts.
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
//! They must name regular files of UTF-8 text of at most [`MAX_FILE_BYTES`], and, unless
//! [`LoadRestrictor::None`] says otherwise, resolve (`..` and symlinks followed) inside the
//! root's tree: `base_dir`, the current directory without one, or the [`Load::root`] the caller
//! gives (kpt's package root), as kustomize confines loads to the kustomization's directory.
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

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::merge::merge2::{self, NewItems};
use crate::merge::merge3;
use crate::patch::json6902;
use crate::path::{Path, Pattern, PatternError};
use crate::schema::{PodHolder, Schema};
use crate::select::target::{Target, TargetSpec};
use crate::yaml::Node;

pub use source::{BadLoadRestrictor, Load, LoadRestrictor};
use source::{Content, Ctx, Source};

/// The `apiVersion` of the `Merge` form.
pub const API_VERSION: &str = "fn.krm-merge.dev/v1alpha1";

/// The `kind` of the `Merge` form.
pub const KIND: &str = "Merge";

/// The nodes that expanding aliases may add, over the whole functionConfig and all its patch
/// documents together. Past it the config is rejected as an alias bomb.
pub const ALIAS_BUDGET: usize = crate::yaml::anchors::BUDGET;

/// The largest file `path`, `originalPath` or `spec.schema.openAPI.path` may name, in bytes.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The most file text (`path`, `originalPath`, `spec.schema.openAPI.path`) one functionConfig
/// may give its patches, a file counting once per field that names it: each use is parsed into
/// a tree of its own. Each file is read once however many fields name it.
pub const MAX_LOADED_BYTES: u64 = 256 << 20;

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
    "at",
    "allowNameChange",
    "allowKindChange",
    "newListItems",
    "inferMergeKeys",
    "conflicts",
    "compatibility",
    "crdMergeKeys",
    "strict",
];

/// What one patch operation does (the guide's table of patch types).
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
    /// Every kind, in the guide's order.
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

/// Whose behaviour a step reproduces where tools differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compat {
    /// krm-merge's own rules (doc/GUIDE.md "Patch types").
    #[default]
    Native,
    /// kustomize v5's `patches:` field, quirks included (doc/KUSTOMIZE.md):
    /// how the patch text is read, kyaml's strategic-merge walk, the JSON patch library's
    /// leniencies, no empty `annotations` map left behind.
    Kustomize,
}

/// The options of one step, as the user gave them (defaults filled in), and the walker options
/// they mean. Options that do not concern a step's type are kept and have no effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchOptions {
    /// The patch may change `metadata.name` (and namespace) of what it patches.
    pub allow_name_change: bool,
    /// The patch may change `apiVersion` and `kind` of what it patches.
    pub allow_kind_change: bool,
    /// Where merged lists put the elements only the patch has.
    pub new_list_items: NewItems,
    /// Pair list elements by kyaml's associative keys (`mountPath`, `devicePath`, `ip`, `type`,
    /// `topologyKey`, `name`, `containerPort`) when no schema says how; `false` replaces such
    /// lists, as kustomize does.
    pub infer_merge_keys: bool,
    /// How `merge3` conflicts are reported.
    pub conflicts: Conflicts,
    /// Whose behaviour the step reproduces: `compatibility`, or else kustomize's when the user
    /// wrote `newListItems: prepend` with `inferMergeKeys: false` (the PatchTransformer form's
    /// defaults).
    pub compat: Compat,
    /// Merge keys declared by CRDs in the input are used (kustomize reads none).
    pub crd_merge_keys: bool,
    /// Schema findings in the patch (unknown fields, wrong types) are errors, not warnings.
    pub strict: bool,
}

impl Default for PatchOptions {
    /// No name or kind change, `append`, inferred merge keys, conflicts as warnings.
    fn default() -> Self {
        PatchOptions {
            allow_name_change: false,
            allow_kind_change: false,
            new_list_items: NewItems::Append,
            infer_merge_keys: true,
            conflicts: Conflicts::Warn,
            compat: Compat::Native,
            crd_merge_keys: true,
            strict: false,
        }
    }
}

impl PatchOptions {
    /// kustomize's behaviour: `prepend`, no inferred merge keys; the defaults of the
    /// PatchTransformer form.
    pub fn kustomize() -> Self {
        PatchOptions {
            new_list_items: NewItems::Prepend,
            infer_merge_keys: false,
            compat: Compat::Kustomize,
            crd_merge_keys: false,
            ..PatchOptions::default()
        }
    }

    /// The options with [`compat`](Self::compat) decided from what the user wrote: with
    /// `prepend` and no inferred merge keys, `merge2` and `json6902` give kustomize's output.
    pub fn decided(mut self) -> Self {
        self.compat = if self.new_list_items == NewItems::Prepend && !self.infer_merge_keys {
            Compat::Kustomize
        } else {
            Compat::Native
        };
        self.crd_merge_keys = self.compat == Compat::Native;
        self
    }

    /// What the strategic merge walker is told.
    pub fn merge2(&self) -> merge2::Options {
        merge2::Options {
            new_items: self.new_list_items,
            infer_keys: self.infer_merge_keys,
            kustomize: self.compat == Compat::Kustomize,
        }
    }

    /// What the JSON patch walker is told: RFC 6902, or kustomize's library's leniencies.
    pub fn json6902(&self) -> json6902::Options {
        match self.compat {
            Compat::Native => json6902::Options::default(),
            Compat::Kustomize => json6902::Options::kustomize(),
        }
    }

    /// What the 3-way merge walker is told.
    pub fn merge3(&self) -> merge3::Options {
        merge3::Options {
            infer_keys: self.infer_merge_keys,
        }
    }
}

/// One patch operation of the plan: what it does and to which resources.
#[derive(Clone, Debug)]
pub struct Step {
    /// Position in `spec.patches` (0 in the single-step forms), for messages (`patch[2]`).
    pub index: usize,
    /// Where the patch came from, for messages: `inline`, or the `path` as written.
    pub source: String,
    /// The step's options.
    pub options: PatchOptions,
    /// What the step does.
    pub action: Action,
    /// What in the step's config is valid but probably not what the user meant.
    pub warnings: Vec<ConfigWarning>,
}

/// A field of the config that is valid but probably not meant (a target pattern that reads as
/// a glob): a warning result, not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The field, as a path from the top of the config.
    pub field: Path,
    /// What is probably wrong, and what was probably meant.
    pub message: String,
}

/// Which resources a merge step patches: `T` is a [`Target`], or a [`TargetAt`] for the patch
/// types that take `at:` (so that `apply`, which does not, cannot hold one).
#[derive(Clone, Debug)]
pub enum Select<T = Target> {
    /// Every resource the target selects gets every document, in turn. (Boxed: a compiled
    /// target is large, and most steps of a plan are not merges.)
    Target(Box<T>),
    /// Each document patches the resource with its own apiVersion, kind, name and namespace
    /// (current, or original as kustomize records it); every document has a kind and a name.
    OwnIdentity,
}

/// A target, and where inside each resource it selects the patch applies.
#[derive(Clone, Debug, Default)]
pub struct TargetAt {
    pub target: Target,
    /// `at:`: the places inside each selected resource; `None`, the resource's root.
    pub at: Option<Pattern>,
}

impl AsRef<Target> for TargetAt {
    fn as_ref(&self) -> &Target {
        &self.target
    }
}

/// What [`Select`] holds for `apply`: the target alone.
impl AsRef<Target> for Target {
    fn as_ref(&self) -> &Target {
        self
    }
}

/// What a step does. Each variant holds exactly what its operation needs: documents are never
/// empty and have no aliases (expanded once, when the plan is made); JSON patch operations are
/// parsed once.
#[derive(Clone, Debug)]
pub enum Action {
    /// `merge2`: partial resources merged by the strategic merge rules.
    Merge2 {
        select: Select<TargetAt>,
        docs: Vec<Node<'static>>,
    },
    /// `jsonmerge`: RFC 7386 merge patches.
    JsonMerge {
        select: Select<TargetAt>,
        docs: Vec<Node<'static>>,
    },
    /// `apply`: local configurations applied as `kubectl apply` would.
    Apply {
        select: Select,
        docs: Vec<Node<'static>>,
    },
    /// `json6902`: RFC 6902 operations. A list of operations names no resource, so it always has
    /// a target.
    Json6902 {
        target: Target,
        /// The places inside each resource the pointers start from; `None`, its root.
        at: Option<Pattern>,
        ops: Vec<json6902::Op<'static>>,
    },
    /// `merge3` with a target: the change from `original` to `updated` merged into every
    /// resource the target selects.
    Merge3 {
        target: Target,
        /// The places inside each resource the change is merged into; `None`, its root.
        at: Option<Pattern>,
        original: Node<'static>,
        updated: Node<'static>,
    },
    /// `merge3` without a target, like `kpt pkg update`: resources pair with the documents of
    /// the same identity; those `original` has and `updated` lacks are deleted, those only
    /// `updated` has are added, the others merged.
    Update {
        original: Vec<Node<'static>>,
        updated: Vec<Node<'static>>,
    },
}

impl Action {
    /// The patch type, as `type` names it.
    pub fn kind(&self) -> PatchKind {
        match self {
            Action::Merge2 { .. } => PatchKind::Merge2,
            Action::JsonMerge { .. } => PatchKind::JsonMerge,
            Action::Apply { .. } => PatchKind::Apply,
            Action::Json6902 { .. } => PatchKind::Json6902,
            Action::Merge3 { .. } | Action::Update { .. } => PatchKind::Merge3,
        }
    }

    /// The target, when the step has one.
    pub fn target(&self) -> Option<&Target> {
        match self {
            Action::Merge2 { select, .. } | Action::JsonMerge { select, .. } => match select {
                Select::Target(t) => Some(&t.target),
                Select::OwnIdentity => None,
            },
            Action::Apply { select, .. } => match select {
                Select::Target(t) => Some(t),
                Select::OwnIdentity => None,
            },
            Action::Json6902 { target, .. } | Action::Merge3 { target, .. } => Some(target),
            Action::Update { .. } => None,
        }
    }

    /// Where inside each resource the step applies (`at:`), when it says.
    pub fn at(&self) -> Option<&Pattern> {
        match self {
            Action::Merge2 { select, .. } | Action::JsonMerge { select, .. } => match select {
                Select::Target(t) => t.at.as_ref(),
                Select::OwnIdentity => None,
            },
            Action::Json6902 { at, .. } | Action::Merge3 { at, .. } => at.as_ref(),
            Action::Apply { .. } | Action::Update { .. } => None,
        }
    }
}

impl Step {
    /// The patch type.
    pub fn kind(&self) -> PatchKind {
        self.action.kind()
    }

    /// `patch[2] (merge2)`, or with `at:` `patch[2] (merge2 at @containers)`: how messages
    /// name the step.
    pub fn label(&self) -> String {
        match self.action.at() {
            Some(at) => format!("patch[{}] ({} at {at})", self.index, self.kind()),
            None => format!("patch[{}] ({})", self.index, self.kind()),
        }
    }
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
    /// Built from the command line (`krm-merge merge2`, `merge3`), not from a config.
    CommandLine,
}

/// A validated functionConfig: what to run, in order, and with which merge metadata.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The steps, in the order they run; each sees the output of the previous one.
    pub steps: Vec<Step>,
    /// The built-in schema plus what `spec.schema` declares. CRDs found among the items are
    /// the caller's to add.
    pub schema: Schema,
    /// The form the config was written in.
    pub form: ConfigForm,
}

/// A functionConfig that does not validate: the field at fault and what is wrong with it.
///
/// Displays as `{field}: {message}`, e.g.
/// `spec.patches[2].options.inferMergeKeys: invalid type: string "yes", expected a boolean`;
/// the config as a whole is `functionConfig`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", FieldName(.field))]
pub struct ConfigError {
    /// The field, as a path from the top of the config (`spec.patches[2].target.name`); the
    /// root for the config as a whole.
    pub field: Path,
    /// What is wrong with it.
    pub message: String,
}

/// A config field as messages name it: the root is `functionConfig`.
struct FieldName<'p>(&'p Path);

impl fmt::Display for FieldName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_root() {
            f.write_str(ROOT)
        } else {
            self.0.fmt(f)
        }
    }
}

impl ConfigError {
    fn new(field: impl Into<Path>, message: impl Into<String>) -> Self {
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
pub fn plan(
    function_config: &Node<'_>,
    base_dir: Option<&std::path::Path>,
) -> Result<Plan, ConfigError> {
    plan_with(function_config, &Load::new(base_dir))
}

/// [`plan`], with the files the config names read and confined as `load` says (see [`Load`]
/// and [`LoadRestrictor`]; [`plan`] is `Load::new(base_dir)`: confined to `base_dir`'s tree).
pub fn plan_with(function_config: &Node<'_>, load: &Load) -> Result<Plan, ConfigError> {
    plan_reading(function_config, load).map(|(plan, _)| plan)
}

/// [`plan_with`], and the files the config named and were read (where they resolve), so that a
/// caller that writes files can make sure it never writes over one of them.
pub fn plan_reading(
    function_config: &Node<'_>,
    load: &Load,
) -> Result<(Plan, Vec<std::path::PathBuf>), ConfigError> {
    let mut ctx = Ctx::new(load);
    let mut root = function_config.clone().into_owned();
    ctx.expand(&mut root, &Path::root())?;
    let plan = match form_of(&root)? {
        ConfigForm::Merge => merge_form(&root, &mut ctx),
        ConfigForm::PatchTransformer => patch_transformer_form(&root, &mut ctx),
        ConfigForm::ConfigMap => configmap_form(&root, &mut ctx),
        ConfigForm::Empty | ConfigForm::CommandLine => Ok(empty_plan()),
    }?;
    Ok((plan, ctx.files_read()))
}

/// The plan of `krm-merge merge2 SRC DEST` and `krm-merge merge3 ORIGINAL UPDATED DEST`: one
/// step of `kind` (merge2 or merge3) with the documents of SRC (or UPDATED and ORIGINAL).
/// `single`: SRC and DEST are one document each, which merge whatever their names (like
/// `kustomize cfg merge` on one file each); otherwise documents pair by identity.
pub fn command_line(
    kind: PatchKind,
    patch: Vec<Node<'static>>,
    original: Vec<Node<'static>>,
    options: PatchOptions,
    single: bool,
) -> Plan {
    fn select<T: Default>(single: bool) -> Select<T> {
        if single {
            Select::Target(Box::default())
        } else {
            Select::OwnIdentity
        }
    }
    let action = match kind {
        PatchKind::Merge3 if single => Action::Merge3 {
            target: Target::default(),
            at: None,
            original: original.into_iter().next().unwrap_or_else(Node::map),
            updated: patch.into_iter().next().unwrap_or_else(Node::map),
        },
        PatchKind::Merge3 => Action::Update {
            original,
            updated: patch,
        },
        PatchKind::JsonMerge => Action::JsonMerge {
            select: select(single),
            docs: patch,
        },
        PatchKind::Apply => Action::Apply {
            select: select(single),
            docs: patch,
        },
        PatchKind::Merge2 | PatchKind::Json6902 => Action::Merge2 {
            select: select(single),
            docs: patch,
        },
    };
    Plan {
        steps: vec![Step {
            index: 0,
            source: "command line".into(),
            options: options.decided(),
            action,
            warnings: Vec::new(),
        }],
        schema: Schema::builtin(),
        form: ConfigForm::CommandLine,
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
            Path::root(),
            format!(
                "expected a mapping (a KRM object), found {}",
                root.describe()
            ),
        ));
    }
    let api_version = root.get("apiVersion").and_then(Node::as_str);
    let kind = root.get("kind").and_then(Node::as_str);
    match (api_version, kind) {
        (Some(API_VERSION), Some(KIND)) => Ok(ConfigForm::Merge),
        (_, Some(KIND)) => Err(ConfigError::new(
            Path::fields(&["apiVersion"]),
            format!(
                "kind {KIND} needs apiVersion {API_VERSION}, found {}",
                quoted_or_missing(api_version)
            ),
        )),
        (_, Some("PatchTransformer")) => Ok(ConfigForm::PatchTransformer),
        (Some("v1"), Some("ConfigMap")) => Ok(ConfigForm::ConfigMap),
        _ => Err(ConfigError::new(
            Path::fields(&["kind"]),
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
            load_workloads(
                declared.workloads.as_deref().unwrap_or_default(),
                &mut schema,
            )?;
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
) -> Result<Step, ConfigError> {
    let at = Path::fields(&["spec", "patches"]).index(index);
    let patch = one_of(&at, ("patch", node), ("path", entry.path))?.ok_or_else(|| {
        ConfigError::new(
            at.clone(),
            "give the patch: inline (patch) or in a file (path)",
        )
    })?;
    let original = one_of(
        &at,
        ("original", node),
        ("originalPath", entry.original_path),
    )?;
    let options = match entry.options {
        Some(o) => o.into_options(&at.field("options"))?,
        None => PatchOptions::default(),
    };
    let draft = Draft {
        index,
        target_field: at.field("target"),
        target_prefix: at.field("target"),
        places: entry.at.map(|text| (at.field("at"), text)),
        at,
        kind: entry.kind.map(|k| k.0),
        patch,
        original,
        target: entry.target,
        options,
        form: ConfigForm::Merge,
    };
    draft.build(ctx)
}

/// Declares where the kinds of `spec.schema.workloads` keep their pod templates and pod specs.
fn load_workloads(
    workloads: &[wire::WorkloadSpec],
    schema: &mut Schema,
) -> Result<(), ConfigError> {
    let list = Path::fields(&["spec", "schema", "workloads"]);
    for (i, w) in workloads.iter().enumerate() {
        let at = list.index(i);
        let (key, holder, text) = match (&w.pod_template, &w.pod_spec) {
            (Some(t), None) => ("podTemplate", PodHolder::Template, t),
            (None, Some(s)) => ("podSpec", PodHolder::Spec, s),
            (Some(_), Some(_)) => {
                return Err(ConfigError::new(
                    at,
                    "give either podTemplate or podSpec, not both",
                ))
            }
            (None, None) => {
                return Err(ConfigError::new(
                    at,
                    "give the field that holds the pod: podTemplate or podSpec",
                ))
            }
        };
        let pattern = parse_pattern(&at.field(key), text)?;
        if pattern.start.is_some() {
            return Err(ConfigError::new(
                at.field(key),
                format!("{text:?}: a field path from the top of the resource, without a start"),
            ));
        }
        schema.add_pod_holder(&w.group, &w.kind, holder, pattern.parts);
    }
    Ok(())
}

/// An `at:` (or a workload's field path) read into a pattern, errors on `field`.
fn parse_pattern(field: &Path, text: &str) -> Result<Pattern, ConfigError> {
    text.parse().map_err(|e: PatternError| {
        ConfigError::new(field.clone(), format!("invalid path {text:?}: {e}"))
    })
}

/// Picks the inline value `key` or the file `path_key` of the entry at `prefix` (the root: the
/// top level): exactly one, or neither (`None`). An inline key with a null value counts as
/// given (and is then reported empty).
fn one_of<'n>(
    prefix: &Path,
    (key, node): (&str, Option<&'n Node<'static>>),
    (path_key, path): (&str, Option<String>),
) -> Result<Option<Source<'n>>, ConfigError> {
    match (node.and_then(|n| n.get(key)), path) {
        (Some(_), Some(_)) => Err(ConfigError::new(
            prefix.clone(),
            format!("give either {key} or {path_key}, not both"),
        )),
        (Some(n), None) => Ok(Some(Source {
            field: prefix.field(key),
            content: Content::Inline(n),
        })),
        (None, Some(p)) => Ok(Some(Source {
            field: prefix.field(path_key),
            content: Content::File(p),
        })),
        (None, None) => Ok(None),
    }
}

// ----- the PatchTransformer form ----------------------------------------------------------

fn patch_transformer_form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigError> {
    let config: wire::PatchTransformerConfig = wire::deserialize(root)?;
    let top = Path::root();
    let patch = one_of(&top, ("patch", Some(root)), ("path", config.path))?.ok_or_else(|| {
        ConfigError::new(
            Path::root(),
            "give the patch: inline (patch) or in a file (path)",
        )
    })?;
    let mut options = PatchOptions::kustomize();
    if let Some(o) = config.options {
        options.allow_name_change = o.allow_name_change;
        options.allow_kind_change = o.allow_kind_change;
    }
    let draft = Draft {
        index: 0,
        at: top,
        kind: None,
        patch,
        original: None,
        target: config.target,
        target_field: Path::fields(&["target"]),
        target_prefix: Path::fields(&["target"]),
        places: None,
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
    let data_field = |key: &str| Path::fields(&["data", key]);
    let mut values: Vec<(&str, &Node<'static>)> = Vec::new();
    for e in data.entries() {
        let key = e.key_str().unwrap_or_default();
        if !CONFIGMAP_KEYS.contains(&key) {
            return Err(ConfigError::new(
                data_field(key),
                format!("unknown key; known keys are {}", CONFIGMAP_KEYS.join(", ")),
            ));
        }
        if !e.value.is_scalar() {
            return Err(ConfigError::new(
                data_field(key),
                format!("expected a string, found {}", e.value.describe()),
            ));
        }
        values.push((key, &e.value));
    }
    let get = |key: &str| values.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let text = |key: &str| get(key).and_then(Node::as_str);

    let kind =
        match text("type") {
            Some(t) => Some(t.parse().map_err(|e: UnknownPatchKind| {
                ConfigError::new(data_field("type"), e.to_string())
            })?),
            None => None,
        };
    let source_of = |key: &str| {
        get(key).map(|n| Source {
            field: data_field(key),
            content: Content::Inline(n),
        })
    };
    let patch = source_of("patch").ok_or_else(|| {
        ConfigError::new(
            data_field("patch"),
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
    let flag = |key: &str| {
        text(key)
            .map(|v| parse_bool(data_field(key), v))
            .transpose()
    };
    let written = wire::Options {
        allow_name_change: flag("allowNameChange")?.unwrap_or(false),
        allow_kind_change: flag("allowKindChange")?.unwrap_or(false),
        new_list_items: text("newListItems")
            .map(|v| wire::from_string(data_field("newListItems"), v))
            .transpose()?,
        infer_merge_keys: flag("inferMergeKeys")?,
        conflicts: text("conflicts")
            .map(|v| wire::from_string(data_field("conflicts"), v))
            .transpose()?
            .unwrap_or_default(),
        compatibility: text("compatibility")
            .map(|v| wire::from_string(data_field("compatibility"), v))
            .transpose()?,
        crd_merge_keys: flag("crdMergeKeys")?,
        strict: flag("strict")?.unwrap_or(false),
    };
    let options = written.into_options(&Path::fields(&["data"]))?;
    let draft = Draft {
        index: 0,
        at: Path::fields(&["data"]),
        kind,
        patch,
        original: source_of("original"),
        target,
        target_field: Path::fields(&["data"]),
        target_prefix: Path::fields(&["data"]),
        places: text("at").map(|t| (data_field("at"), t.to_owned())),
        options,
        form: ConfigForm::ConfigMap,
    };
    Ok(Plan {
        steps: vec![draft.build(ctx)?],
        schema: Schema::builtin(),
        form: ConfigForm::ConfigMap,
    })
}

fn parse_bool(field: Path, v: &str) -> Result<bool, ConfigError> {
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
    at: Path,
    kind: Option<PatchKind>,
    patch: Source<'n>,
    original: Option<Source<'n>>,
    target: Option<TargetSpec>,
    /// Where a missing target is reported.
    target_field: Path,
    /// Where the target's fields are (`spec.patches[0].target`, `data`).
    target_prefix: Path,
    /// `at:` as written, and its field.
    places: Option<(Path, String)>,
    options: PatchOptions,
    form: ConfigForm,
}

impl Draft<'_> {
    fn build(self, ctx: &mut Ctx<'_>) -> Result<Step, ConfigError> {
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
                    self.at.clone(),
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
                    src.field.clone(),
                    format!("only merge3 patches take an original; this patch is {kind}{hint}"),
                ));
            }
            (_, None) => Vec::new(),
        };
        let globs = self
            .target
            .as_ref()
            .map(TargetSpec::glob_lookalikes)
            .unwrap_or_default();
        let target = match &self.target {
            Some(spec) => Some(Target::compile(spec).map_err(|e| {
                let hint = globs
                    .iter()
                    .find(|(f, _, _)| *f == e.field)
                    .map(|(_, _, meant)| format!(" (a glob? target patterns are regular expressions: did you mean {meant:?}?)"))
                    .unwrap_or_default();
                ConfigError::new(
                    self.target_prefix.field(e.field.as_str()),
                    format!("{}{hint}", e.kind),
                )
            })?),
            None => None,
        };
        let warnings = globs
            .iter()
            .map(|(field, written, meant)| ConfigWarning {
                field: self.target_prefix.field(field.as_str()),
                message: format!(
                    "{written:?} looks like a glob, but target patterns are anchored regular \
                     expressions, where `*` repeats the character before it; did you mean \
                     {meant:?}?"
                ),
            })
            .collect();
        let at = match &self.places {
            Some((field, text)) => Some((field, parse_pattern(field, text)?)),
            None => None,
        };
        let action = self.action(kind, patch, original, target, at)?;
        Ok(Step {
            index: self.index,
            source,
            options: self.options,
            action,
            warnings,
        })
    }

    /// The action of a step whose documents are read, with the rules that tie them to its
    /// target (see the module documentation).
    fn action(
        &self,
        kind: PatchKind,
        patch: Vec<Node<'static>>,
        original: Vec<Node<'static>>,
        target: Option<Target>,
        at: Option<(&Path, Pattern)>,
    ) -> Result<Action, ConfigError> {
        let field = &self.patch.field;
        let at = match (at, kind, &target) {
            (None, _, _) => None,
            (Some((field, _)), PatchKind::Apply, _) => {
                return Err(ConfigError::new(
                    field.clone(),
                    "an apply patch takes no at: kubectl's last-applied configuration is the \
                     whole resource's; use merge2 to merge at a place",
                ))
            }
            (Some((field, _)), _, None) => {
                return Err(ConfigError::new(
                    field.clone(),
                    "at needs a target: a patch that applies at places inside resources does \
                     not name the resources it patches",
                ))
            }
            (Some((_, pattern)), _, Some(_)) => Some(pattern),
        };
        let Some(target) = target else {
            if kind == PatchKind::Json6902 {
                return Err(ConfigError::new(
                    self.target_field.clone(),
                    "a json6902 patch needs a target: a list of operations does not name the \
                     resource it patches",
                ));
            }
            source::check_identity(&patch, field)?;
            if let Some(src) = &self.original {
                source::check_identity(&original, &src.field)?;
            }
            return match kind {
                PatchKind::Merge3 => Ok(Action::Update {
                    original,
                    updated: patch,
                }),
                PatchKind::Merge2 | PatchKind::Json6902 => Ok(Action::Merge2 {
                    select: Select::OwnIdentity,
                    docs: patch,
                }),
                PatchKind::JsonMerge => Ok(Action::JsonMerge {
                    select: Select::OwnIdentity,
                    docs: patch,
                }),
                PatchKind::Apply => Ok(Action::Apply {
                    select: Select::OwnIdentity,
                    docs: patch,
                }),
            };
        };
        match kind {
            PatchKind::Json6902 => {
                let [ops] = &patch[..] else {
                    // check_shape allows one list of operations only.
                    return Err(ConfigError::new(
                        field.clone(),
                        "a json6902 patch is one list of operations",
                    ));
                };
                Ok(Action::Json6902 {
                    target,
                    at,
                    ops: source::operations(ops, field)?,
                })
            }
            PatchKind::Merge3 => {
                let (n, m) = (patch.len(), original.len());
                match (<[_; 1]>::try_from(patch), <[_; 1]>::try_from(original)) {
                    (Ok([updated]), Ok([original])) => Ok(Action::Merge3 {
                        target,
                        at,
                        original,
                        updated,
                    }),
                    _ => Err(ConfigError::new(
                        self.at.clone(),
                        format!(
                            "a merge3 patch with a target takes one document in patch and one \
                             in original; found {n} and {m}"
                        ),
                    )),
                }
            }
            PatchKind::Merge2 if self.form == ConfigForm::PatchTransformer && patch.len() > 1 => {
                Err(ConfigError::new(
                    field.clone(),
                    format!(
                        "{} documents and a target: a PatchTransformer's strategic merge patch \
                         with a target is one document (as in kustomize); use one \
                         PatchTransformer per document, or kind {KIND}",
                        patch.len()
                    ),
                ))
            }
            PatchKind::Merge2 => Ok(Action::Merge2 {
                select: Select::Target(Box::new(TargetAt { target, at })),
                docs: patch,
            }),
            PatchKind::JsonMerge => Ok(Action::JsonMerge {
                select: Select::Target(Box::new(TargetAt { target, at })),
                docs: patch,
            }),
            PatchKind::Apply => Ok(Action::Apply {
                select: Select::Target(Box::new(target)),
                docs: patch,
            }),
        }
    }
}
