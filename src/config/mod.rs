//! The functionConfig, read into a typed, validated [`Plan`].
//!
//! What it is: [`plan`] reads the functionConfig in any of the forms krm-merge accepts, checks
//! every field, parses every patch, compiles every target and loads the declared merge metadata,
//! and returns the patch steps to run, in order. A config that does not validate is a
//! [`ConfigError`] naming the field (`spec.patches[2].target.name: invalid regex ...`).
//! [`json_schema`] describes the `Merge` form (what `krm-merge schema` prints). [`config_file`]
//! reads a functionConfig file's text into its one document; [`patch_file`] reads the patch
//! file of `krm-merge merge2 SRC DEST` into the documents its step applies, and
//! [`command_line`] makes that command's plan.
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
//!   step. Its other options take kustomize's behaviour (`PatchOptions::kustomize`), so a
//!   PatchTransformer config gives the output kustomize gives for it.
//! * **A `v1` `ConfigMap`** (what `kpt fn eval IMAGE -- key=value` makes): string `data` with the
//!   keys in `CONFIGMAP_KEYS`; one step. Booleans are `"true"` or `"false"`. Empty or absent
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
//! functionConfig and every patch document may add at most `ALIAS_BUDGET` nodes between them,
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
//! They must name regular files of UTF-8 text of at most `MAX_FILE_BYTES`, and, unless
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

mod draft;
mod file;
mod goyaml;
mod kustomization;
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
use crate::path::{Path, Pattern};
use crate::schema::{PodHolder, Schema};
use crate::select::target::{Target, TargetSpec};
use crate::yaml::Node;

use draft::{parse_pattern, Draft};
pub use file::{
    config_file, config_form_of_file, patch_file, ConfigFileError, Found, PatchFileError,
};
pub use source::{BadLoadRestrictor, BaseDir, Load, LoadRestrictor};
use source::{Content, Ctx, Source};

/// The `apiVersion` of the `Merge` form.
pub const API_VERSION: &str = "fn.krm-merge.dev/v1alpha1";

/// The `kind` of the `Merge` form.
pub const KIND: &str = "Merge";

/// The nodes that expanding aliases may add, over the whole functionConfig and all its patch
/// documents together. Past it the config is rejected as an alias bomb.
pub(crate) const ALIAS_BUDGET: usize = crate::yaml::anchors::BUDGET;

/// The largest file `path`, `originalPath` or `spec.schema.openAPI.path` may name, in bytes.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// The most file text (`path`, `originalPath`, `spec.schema.openAPI.path`) one functionConfig
/// may give its patches, a file counting once per field that names it: each use is parsed into
/// a tree of its own. Each file is read once however many fields name it.
pub(crate) const MAX_LOADED_BYTES: u64 = 256 << 20;

/// The `data` keys a ConfigMap functionConfig may hold.
pub(crate) const CONFIGMAP_KEYS: &[&str] = &[
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
    "validation",
    "strict",
    "failOn",
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
    pub(crate) const ALL: [PatchKind; 5] = [
        PatchKind::Merge2,
        PatchKind::Json6902,
        PatchKind::JsonMerge,
        PatchKind::Merge3,
        PatchKind::Apply,
    ];

    /// The canonical name (`merge2`), as `type` takes it and messages print it.
    pub(crate) fn as_str(self) -> &'static str {
        self.names()[0]
    }

    /// Every name `type` accepts for this kind: the canonical one first, then the aliases.
    pub(crate) fn names(self) -> &'static [&'static str] {
        match self {
            PatchKind::Merge2 => &["merge2", "StrategicMerge", "StrategicMergePatch"],
            PatchKind::Json6902 => &["json6902", "JsonPatch", "JSON6902"],
            PatchKind::JsonMerge => &["jsonmerge", "MergePatch", "JsonMergePatch"],
            PatchKind::Merge3 => &["merge3"],
            PatchKind::Apply => &["apply", "ClientSideApply"],
        }
    }

    /// Every name of every kind, canonical names first in each group.
    pub(crate) fn all_names() -> impl Iterator<Item = &'static str> {
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

/// A name that is not one of `PatchKind::all_names` (names are case-sensitive).
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

/// What a `merge3` conflict is (a field changed differently upstream and in the item, or a
/// resource upstream deleted that the item changed): who wins, and how loudly.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Conflicts {
    /// Upstream's value is taken, and each conflict is a warning result.
    #[default]
    Warn,
    /// Each conflict is an error result: the run fails and changes nothing.
    Error,
    /// The local value is kept, and each conflict is a warning result.
    Local,
    /// Upstream's value is taken, silently: each conflict is an info result.
    Upstream,
}

impl Conflicts {
    /// Which side a conflict settles for.
    pub fn winner(self) -> merge3::Winner {
        match self {
            Conflicts::Local => merge3::Winner::Local,
            Conflicts::Warn | Conflicts::Error | Conflicts::Upstream => merge3::Winner::Upstream,
        }
    }
}

/// What the schema check of a patch finds is (`validation`): an unknown field of a kind whose
/// schema is known, a value of the wrong type, a required field removed, and a target pattern
/// that reads as a glob.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Validation {
    /// Errors: the run fails and changes nothing (the default).
    #[default]
    Error,
    /// Warnings: reported, and the patch is applied as written (kustomize's options' default).
    Warn,
}

impl Validation {
    /// The default under a step's compatibility: kustomize says nothing of what the check finds,
    /// so its options keep the findings warnings.
    pub fn default_for(compat: Compat) -> Validation {
        match compat {
            Compat::Native => Validation::Error,
            Compat::Kustomize => Validation::Warn,
        }
    }

    /// As the config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Validation::Error => "error",
            Validation::Warn => "warn",
        }
    }
}

/// What fails a run (`spec.failOn`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Error results (the default).
    #[default]
    Error,
    /// Warnings too: every warning result becomes an error, and the run changes nothing.
    Warning,
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
    /// What schema findings in the patch (unknown fields, wrong types, required fields
    /// removed) and glob-like target patterns are.
    pub validation: Validation,
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
            validation: Validation::Error,
        }
    }
}

impl PatchOptions {
    /// kustomize's behaviour: `prepend`, no inferred merge keys; the defaults of the
    /// PatchTransformer form.
    pub(crate) fn kustomize() -> Self {
        PatchOptions {
            new_list_items: NewItems::Prepend,
            infer_merge_keys: false,
            compat: Compat::Kustomize,
            crd_merge_keys: false,
            validation: Validation::Warn,
            ..PatchOptions::default()
        }
    }

    /// The options with [`compat`](Self::compat) decided from what the user wrote: with
    /// `prepend` and no inferred merge keys, `merge2` and `json6902` give kustomize's output
    /// (and keep its silence: schema findings are warnings).
    pub(crate) fn decided(mut self) -> Self {
        self.compat = if self.new_list_items == NewItems::Prepend && !self.infer_merge_keys {
            Compat::Kustomize
        } else {
            Compat::Native
        };
        self.crd_merge_keys = self.compat == Compat::Native;
        self.validation = Validation::default_for(self.compat);
        self
    }

    /// What the strategic merge walker is told.
    pub(crate) fn merge2(&self) -> merge2::Options {
        merge2::Options {
            new_items: self.new_list_items,
            infer_keys: self.infer_merge_keys,
            kustomize: self.compat == Compat::Kustomize,
        }
    }

    /// What the JSON patch walker is told: RFC 6902, or kustomize's library's leniencies.
    pub(crate) fn json6902(&self) -> json6902::Options {
        match self.compat {
            Compat::Native => json6902::Options::default(),
            Compat::Kustomize => json6902::Options::kustomize(),
        }
    }

    /// What the 3-way merge walker is told.
    pub(crate) fn merge3(&self) -> merge3::Options {
        merge3::Options {
            infer_keys: self.infer_merge_keys,
            winner: self.conflicts.winner(),
        }
    }
}

/// One patch operation of the plan: what it does and to which resources.
#[derive(Clone, Debug)]
pub struct Step {
    /// Position in the plan (in `spec.patches`; 0 in the single-step forms), for results
    /// (`tags.patch`).
    pub index: usize,
    /// How messages name the step: `patch[2]`, the name the config gave it, or the
    /// kustomization field it came from.
    pub name: StepName,
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
    /// What is probably wrong.
    pub message: String,
    /// What was probably meant (`did you mean "web-.*"?`).
    pub hint: Option<String>,
    /// About the step's target (a pattern that reads as a glob): said when the run ends, with
    /// what the target selected, as an error or a warning as the step's `validation` says.
    pub about_target: bool,
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
    /// The resources the patch applies to.
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
        /// Which resources each document patches.
        select: Select<TargetAt>,
        /// The patches, in order.
        docs: Vec<Node<'static>>,
    },
    /// `jsonmerge`: RFC 7386 merge patches.
    JsonMerge {
        /// Which resources each document patches.
        select: Select<TargetAt>,
        /// The patches, in order.
        docs: Vec<Node<'static>>,
    },
    /// `apply`: local configurations applied as `kubectl apply` would.
    Apply {
        /// Which resources each document patches.
        select: Select,
        /// The patches, in order.
        docs: Vec<Node<'static>>,
    },
    /// `json6902`: RFC 6902 operations. A list of operations names no resource, so it always has
    /// a target.
    Json6902 {
        /// The resources the patch applies to.
        target: Target,
        /// The places inside each resource the pointers start from; `None`, its root.
        at: Option<Pattern>,
        /// The operations, in order.
        ops: Vec<json6902::Op<'static>>,
    },
    /// `merge3` with a target: the change from `original` to `updated` merged into every
    /// resource the target selects.
    Merge3 {
        /// The resources the patch applies to.
        target: Target,
        /// The places inside each resource the change is merged into; `None`, its root.
        at: Option<Pattern>,
        /// The upstream version before the change.
        original: Node<'static>,
        /// The upstream version after the change.
        updated: Node<'static>,
    },
    /// `merge3` without a target, like `kpt pkg update`: resources pair with the documents of
    /// the same identity; those `original` has and `updated` lacks are deleted, those only
    /// `updated` has are added, the others merged.
    Update {
        /// The upstream versions of the package's resources before the change.
        original: Vec<Node<'static>>,
        /// The upstream versions of the package's resources after the change.
        updated: Vec<Node<'static>>,
    },
}

impl Action {
    /// The patch type, as `type` names it.
    pub(crate) fn kind(&self) -> PatchKind {
        match self {
            Action::Merge2 { .. } => PatchKind::Merge2,
            Action::JsonMerge { .. } => PatchKind::JsonMerge,
            Action::Apply { .. } => PatchKind::Apply,
            Action::Json6902 { .. } => PatchKind::Json6902,
            Action::Merge3 { .. } | Action::Update { .. } => PatchKind::Merge3,
        }
    }

    /// The target, when the step has one.
    pub(crate) fn target(&self) -> Option<&Target> {
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
    pub(crate) fn at(&self) -> Option<&Pattern> {
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
    pub(crate) fn kind(&self) -> PatchKind {
        self.action.kind()
    }

    /// `patch[2] (merge2)`, or with `at:` `patch[2] (merge2 at @containers)`, or for a named
    /// patch `patch "scale" (merge2)`: how messages name the step.
    pub(crate) fn label(&self) -> String {
        match self.action.at() {
            Some(at) => format!("{} ({} at {at})", self.name, self.kind()),
            None => format!("{} ({})", self.name, self.kind()),
        }
    }

    /// The step's results' tags: its index, and its name when it has one.
    pub fn tags(&self) -> Vec<(String, String)> {
        let mut tags = vec![("patch".to_owned(), self.index.to_string())];
        if let StepName::Named(n) = &self.name {
            tags.push(("patchName".to_owned(), n.clone()));
        }
        tags
    }
}

/// How messages name a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepName {
    /// By its place: `patch[2]`.
    Index(usize),
    /// By the `name:` its entry gave it: `patch "scale"`.
    Named(String),
    /// By the kustomization field it came from: `patchesStrategicMerge[0]`.
    Field(Path),
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepName::Index(i) => write!(f, "patch[{i}]"),
            StepName::Named(n) => write!(f, "patch {n:?}"),
            StepName::Field(p) => p.fmt(f),
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
    /// A kustomization's patch fields (`patches`, `patchesStrategicMerge`,
    /// `patchesJson6902`), as kustomize applies them.
    Kustomization,
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
    /// What fails the run (`spec.failOn`).
    pub fail_on: FailOn,
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

/// Everything wrong with a functionConfig, each with its field, in the config's order: one
/// reading says it all (at most [`MAX_CONFIG_ERRORS`]), rather than one error per run.
/// Displays each error, separated by `; `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

/// The most errors one reading of a functionConfig reports.
pub const MAX_CONFIG_ERRORS: usize = wire::MAX_ERRORS;

impl ConfigErrors {
    /// The errors, in the config's order.
    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.0.iter()
    }

    /// The first error (a reading that fails has at least one).
    pub fn first(&self) -> Option<&ConfigError> {
        self.0.first()
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            e.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl From<ConfigError> for ConfigErrors {
    fn from(e: ConfigError) -> Self {
        ConfigErrors(vec![e])
    }
}

impl From<Vec<ConfigError>> for ConfigErrors {
    fn from(mut errors: Vec<ConfigError>) -> Self {
        errors.truncate(MAX_CONFIG_ERRORS);
        ConfigErrors(errors)
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
) -> Result<Plan, ConfigErrors> {
    plan_with(function_config, &Load::new(base_dir))
}

/// [`plan`], with the files the config names read and confined as `load` says (see [`Load`]
/// and [`LoadRestrictor`]; [`plan`] is `Load::new(base_dir)`: confined to `base_dir`'s tree).
pub(crate) fn plan_with(function_config: &Node<'_>, load: &Load) -> Result<Plan, ConfigErrors> {
    plan_reading(function_config, load).map(|(plan, _)| plan)
}

/// `plan_with`, and the files the config named and were read (where they resolve), so that a
/// caller that writes files can make sure it never writes over one of them.
pub fn plan_reading(
    function_config: &Node<'_>,
    load: &Load,
) -> Result<(Plan, Vec<std::path::PathBuf>), ConfigErrors> {
    let mut ctx = Ctx::new(load);
    let mut root = function_config.clone().into_owned();
    ctx.expand(&mut root, &Path::root())?;
    let plan = match form_of(&root)? {
        ConfigForm::Merge => merge_form(&root, &mut ctx),
        ConfigForm::PatchTransformer => patch_transformer_form(&root, &mut ctx),
        ConfigForm::ConfigMap => configmap_form(&root, &mut ctx),
        ConfigForm::Kustomization => kustomization::form(&root, &mut ctx),
        ConfigForm::Empty | ConfigForm::CommandLine => Ok(empty_plan()),
    }?;
    Ok((plan, ctx.files_read()))
}

/// The plan of `krm-merge merge2 SRC DEST` and `krm-merge merge3 ORIGINAL UPDATED DEST`: one
/// step of `kind` (merge2 or merge3) with the documents of SRC (or UPDATED and ORIGINAL).
/// `single`: SRC and DEST are one document each, which merge whatever their names (like
/// `kustomize cfg merge` on one file each); otherwise documents pair by identity. Schema
/// findings are warnings: the commands have no config to say otherwise, as `kustomize cfg
/// merge` has none.
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
    let options = PatchOptions {
        validation: Validation::Warn,
        ..options.decided()
    };
    Plan {
        steps: vec![Step {
            index: 0,
            name: StepName::Index(0),
            source: "command line".into(),
            options,
            action,
            warnings: Vec::new(),
        }],
        schema: Schema::builtin(),
        form: ConfigForm::CommandLine,
        fail_on: FailOn::Error,
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
        fail_on: FailOn::Error,
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
        _ if kustomization::is_one(root) => Ok(ConfigForm::Kustomization),
        _ => Err(ConfigError::new(
            Path::fields(&["kind"]),
            format!(
                "apiVersion {}, kind {} is not a functionConfig krm-merge reads; \
                 use kind {KIND} (apiVersion {API_VERSION}), kustomize's PatchTransformer, \
                 a kustomization's patches, or a v1 ConfigMap with data keys {}",
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

/// Whether any of `errors` is about `field` or something inside it.
fn any_within(errors: &[ConfigError], field: &Path) -> bool {
    errors.iter().any(|e| e.field.0.starts_with(&field.0))
}

/// The steps of a form's patch entries, built each on its own; every error of every entry.
/// An entry with an error in its structure already (`structural`, about its fields) is not
/// built: what it means is unknown.
fn build_all<'n>(
    drafts: Vec<Draft<'n>>,
    structural: &[ConfigError],
    ctx: &mut Ctx<'_>,
    errors: &mut Vec<ConfigError>,
) -> Vec<Step> {
    let mut steps = Vec::new();
    for draft in drafts {
        if any_within(structural, &draft.at) {
            continue;
        }
        match draft.build(ctx) {
            Ok(step) => steps.push(step),
            Err(es) => errors.extend(es),
        }
        if errors.len() >= MAX_CONFIG_ERRORS {
            break;
        }
    }
    steps
}

// ----- the Merge form ---------------------------------------------------------------------

fn merge_form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigErrors> {
    let (config, mut errors) = wire::read_all::<wire::MergeConfig>(root);
    let Some(config) = config else {
        return Err(errors.into());
    };
    let structural = errors.clone();
    let mut schema = Schema::builtin();
    let mut steps = Vec::new();
    let mut fail_on = FailOn::default();
    if let Some(spec) = config.spec {
        fail_on = spec.fail_on.unwrap_or_default();
        if let Some(declared) = &spec.schema {
            if !any_within(&structural, &Path::fields(&["spec", "schema"])) {
                if let Err(e) = source::load_schema(declared, &mut schema, ctx) {
                    errors.push(e);
                }
                let workloads = declared.workloads.as_deref().unwrap_or_default();
                if let Err(e) = load_workloads(workloads, &mut schema) {
                    errors.push(e);
                }
            }
        }
        let entries = root.get_path(&["spec", "patches"]);
        let list = spec.patches.unwrap_or_default();
        let names = step_names(&list, &mut errors);
        let mut drafts = Vec::new();
        for ((index, entry), name) in list.into_iter().enumerate().zip(names) {
            let node = entries.and_then(|n| n.items().get(index));
            match merge_draft(index, name, entry, node) {
                Ok(d) => drafts.push(d),
                Err(e) => errors.push(e),
            }
        }
        steps = build_all(drafts, &structural, ctx, &mut errors);
    }
    if !errors.is_empty() {
        return Err(errors.into());
    }
    Ok(Plan {
        steps,
        schema,
        form: ConfigForm::Merge,
        fail_on,
    })
}

/// How each entry of `spec.patches` is named: by its `name:`, which must be unique and
/// printable, or by its place.
fn step_names(list: &[wire::PatchSpec], errors: &mut Vec<ConfigError>) -> Vec<StepName> {
    let mut seen: crate::hash::HashMap<&str, usize> = crate::hash::HashMap::default();
    let mut names = Vec::with_capacity(list.len());
    for (index, entry) in list.iter().enumerate() {
        let field = Path::fields(&["spec", "patches"])
            .index(index)
            .field("name");
        let name = match entry.name.as_deref() {
            None => StepName::Index(index),
            Some(n) if n.trim().is_empty() || n.chars().any(char::is_control) => {
                errors.push(ConfigError::new(
                    field,
                    "a patch's name is printable text, not empty",
                ));
                StepName::Index(index)
            }
            Some(n) => {
                if let Some(first) = seen.insert(n, index) {
                    errors.push(ConfigError::new(
                        field,
                        format!("{n:?} names spec.patches[{first}] already: names are unique"),
                    ));
                }
                StepName::Named(n.to_owned())
            }
        };
        names.push(name);
    }
    names
}

fn merge_draft<'n>(
    index: usize,
    name: StepName,
    entry: wire::PatchSpec,
    node: Option<&'n Node<'static>>,
) -> Result<Draft<'n>, ConfigError> {
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
    Ok(Draft {
        index,
        name,
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
        untrimmed: false,
    })
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

fn patch_transformer_form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigErrors> {
    // Every error at once, as the Merge form says them: the fields' own, then what the fields
    // that read make of the patch (unless a field it reads is wrong already).
    let (config, mut errors) = wire::read_all::<wire::PatchTransformerConfig>(root);
    let Some(config) = config else {
        return Err(errors.into());
    };
    let structural = errors.clone();
    let top = Path::root();
    let patch = match one_of(&top, ("patch", Some(root)), ("path", config.path)) {
        Ok(Some(patch)) => Some(patch),
        Ok(None) => {
            errors.push(ConfigError::new(
                Path::root(),
                "give the patch: inline (patch) or in a file (path)",
            ));
            None
        }
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let mut options = PatchOptions::kustomize();
    if let Some(o) = config.options {
        options.allow_name_change = o.allow_name_change;
        options.allow_kind_change = o.allow_kind_change;
    }
    let Some(patch) = patch else {
        return Err(errors.into());
    };
    let draft = Draft {
        index: 0,
        name: StepName::Index(0),
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
        untrimmed: false,
    };
    // The step is built unless a field it reads is wrong (a wrong field elsewhere, such as a
    // misspelt key, does not stop the patch's own errors from being said).
    let reads = ["patch", "path", "target", "options"];
    let broken = reads
        .iter()
        .any(|f| any_within(&structural, &Path::fields(&[f])));
    let steps = if broken {
        Vec::new()
    } else {
        build_all(vec![draft], &[], ctx, &mut errors)
    };
    if !errors.is_empty() {
        return Err(errors.into());
    }
    Ok(Plan {
        steps,
        schema: Schema::builtin(),
        form: ConfigForm::PatchTransformer,
        fail_on: FailOn::Error,
    })
}

// ----- the ConfigMap form -----------------------------------------------------------------

fn configmap_form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigErrors> {
    let (_, mut errors) = wire::read_all::<wire::ConfigMapConfig>(root);
    if !errors.is_empty() {
        return Err(errors.into());
    }
    let data = match root.get("data") {
        Some(d) if !d.entries().is_empty() => d,
        _ => return Ok(empty_plan()),
    };
    let data_field = |key: &str| Path::fields(&["data", key]);
    let mut values: Vec<(&str, &Node<'static>)> = Vec::new();
    for e in data.entries() {
        let key = e.key_str().unwrap_or_default();
        if !CONFIGMAP_KEYS.contains(&key) {
            let hint = crate::schema::suggest::closest(key, CONFIGMAP_KEYS.iter().copied())
                .map(|k| format!("; did you mean {k}?"))
                .unwrap_or_default();
            errors.push(ConfigError::new(
                data_field(key),
                format!(
                    "unknown key; known keys are {}{hint}",
                    CONFIGMAP_KEYS.join(", ")
                ),
            ));
            continue;
        }
        if !e.value.is_scalar() {
            errors.push(ConfigError::new(
                data_field(key),
                format!("expected a string, found {}", e.value.describe()),
            ));
            continue;
        }
        values.push((key, &e.value));
    }
    let get = |key: &str| values.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let text = |key: &str| get(key).and_then(Node::as_str);
    let before_type = errors.len();
    let kind = keep(
        &mut errors,
        text("type")
            .map(|t| {
                t.parse().map_err(|e: UnknownPatchKind| {
                    ConfigError::new(data_field("type"), e.to_string())
                })
            })
            .transpose(),
    )
    .flatten();
    let source_of = |key: &str| {
        get(key).map(|n| Source {
            field: data_field(key),
            content: Content::Inline(n),
        })
    };
    let given = |key: &str| data.get(key).is_some();
    let patch = match source_of("patch") {
        Some(p) => Some(p),
        None if given("patch") => None, // said above: not a string
        None => keep(
            &mut errors,
            Err(ConfigError::new(
                data_field("patch"),
                "missing: a ConfigMap functionConfig needs a patch",
            )),
        ),
    };
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
    let written = (|| {
        Ok::<_, ConfigError>(wire::Options {
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
            validation: text("validation")
                .map(|v| wire::from_string(data_field("validation"), v))
                .transpose()?,
            strict: flag("strict")?,
        })
    })();
    let options = keep(
        &mut errors,
        written.and_then(|w| w.into_options(&Path::fields(&["data"]))),
    );
    let fail_on: Option<FailOn> = keep(
        &mut errors,
        text("failOn")
            .map(|v| wire::from_string(data_field("failOn"), v))
            .transpose(),
    )
    .flatten();
    // A type that is not one leaves the patch's meaning unknown: it is not read.
    let type_failed = errors.len() > before_type && text("type").is_some() && kind.is_none();
    let (Some(patch), Some(options), false) = (patch, options, type_failed) else {
        return Err(errors.into());
    };
    let draft = Draft {
        index: 0,
        name: StepName::Index(0),
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
        untrimmed: false,
    };
    let steps = build_all(vec![draft], &[], ctx, &mut errors);
    if !errors.is_empty() {
        return Err(errors.into());
    }
    Ok(Plan {
        steps,
        schema: Schema::builtin(),
        form: ConfigForm::ConfigMap,
        fail_on: fail_on.unwrap_or_default(),
    })
}

/// The value, or `None` with its error kept.
fn keep<T>(errors: &mut Vec<ConfigError>, r: Result<T, ConfigError>) -> Option<T> {
    r.map_err(|e| errors.push(e)).ok()
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
