//! Patch generation: the patch that turns one resource (OLD) into another (NEW), in each of the
//! patch types krm-merge applies, and the patches that turn one package into another.
//!
//! * [`two_way`] — a strategic merge patch as apimachinery's `CreateTwoWayMergePatch` makes it
//!   (schema-aware: `$setElementOrder`, `$patch: delete`, `$deleteFromPrimitiveList`,
//!   `$retainKeys`, `null` for removed fields);
//! * [`three_way`] — the patch `kubectl apply` sends (`CreateThreeWayMergePatch`), with conflicts;
//! * [`json6902`] — RFC 6902 operations, with keyed pointers (`containers/[name=app]/image`) where
//!   list elements have merge keys;
//! * [`jsonmerge`] — an RFC 7386 merge patch;
//! * [`package`] — resources of two streams paired by identity, one patch per changed resource,
//!   as a `Merge` functionConfig or a kustomization's `patches:` (made for kustomize:
//!   [`Options::kustomize`]).
//!
//! The rule, checked on every patch before it is handed out (`verify`): the patch, written
//! and read back, applied to OLD by the engine it is made for (`merge2::merge` with
//! [`Options::merge2_options`], `json6902::patch` — with kustomize's options for the kustomize
//! flavour —, `jsonmerge::merge`) gives NEW as data, except where a [`Warning`] says why it
//! cannot (a strategic merge patch or a JSON merge patch cannot write a `null` into a
//! mapping); a patch that does not is an error ([`DiffErrorKind::NotReproduced`]), never
//! output. "As data" is as Kubernetes reads it: mapping keys are compared by the text of their
//! value (`nodes.rs`: `1`, `0x1` and `1.0` are one key). A strategic merge or merge patch names
//! every key as NEW spells it, also a key NEW only respells: those engines pair keys as data
//! and give the result the patch's spelling, and the check holds the result to NEW's spelling
//! too. A JSON patch (pointers are text) and a patch made for kyaml (which pairs keys by text)
//! name a key both versions hold as OLD spells it. Values copied from NEW keep NEW's comments
//! and scalar styles.
//!
//! What it must not do: apply patches (the walkers in [`crate::merge`] and [`crate::patch`] do),
//! read or write text, select resources or know the wire format. Every function takes nodes, a
//! schema and options, and returns nodes.

mod identity;
pub mod json6902;
pub mod jsonmerge;
mod nodes;
pub mod package;
pub mod three_way;
pub mod two_way;
mod verify;

use std::fmt;

use crate::merge::merge2;
use crate::path::Path;
use crate::yaml::{AliasError, Node};

/// How patches are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Pair the elements of lists no schema describes by kyaml's associative keys (`name`,
    /// `containerPort`, ...), as `merge2`'s `infer_keys` does. The patch must be applied with
    /// the same setting ([`Options::merge2_options`]); `false` (the default) is what kubectl
    /// does: such lists are replaced whole.
    pub infer_keys: bool,
    /// Put OLD's `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` at the top of
    /// strategic merge and JSON merge patches, so that a patch selects its resource without a
    /// target (the default). Off, a patch holds only what changed, as apimachinery's does.
    pub identity: bool,
    /// Make patches for kustomize's `patches:` field rather than for apimachinery: strategic
    /// merge patches that kyaml's merge applies as written (no `$setElementOrder`,
    /// `$retainKeys` or `$deleteFromPrimitiveList`, which kyaml copies into the resource as
    /// fields; list order given by kyaml's "the patch's elements first"; see [`two_way`]), and
    /// JSON patches that address list elements by index (kustomize's JSON patch library knows
    /// no `[name=app]` selectors). Merge keys are never inferred (kustomize does not). The
    /// three-way patch ignores it.
    pub kustomize: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            infer_keys: false,
            identity: true,
            kustomize: false,
        }
    }
}

impl Options {
    /// The `merge2` options a strategic merge patch made with these options is applied with:
    /// new list items appended, keys inferred as here; with [`Options::kustomize`], kustomize's
    /// (the patch's elements first, no inferred keys, kyaml's walk).
    pub fn merge2_options(&self) -> merge2::Options {
        if self.kustomize {
            return merge2::Options {
                new_items: merge2::NewItems::Prepend,
                infer_keys: false,
                kustomize: true,
            };
        }
        merge2::Options {
            new_items: merge2::NewItems::Append,
            infer_keys: self.infer_keys,
            kustomize: false,
        }
    }

    /// Whether lists no schema describes are paired by kyaml's associative keys.
    pub(crate) fn infers(&self) -> bool {
        self.infer_keys && !self.kustomize
    }
}

/// A generated patch.
#[derive(Clone, Debug)]
pub struct Diff<'n> {
    /// The patch: a mapping for strategic merge and JSON merge patches (identity fields only,
    /// or empty, when nothing changed), a list of operations for JSON patches.
    pub patch: Node<'n>,
    /// OLD and NEW differ as data: the patch changes something.
    pub changed: bool,
    /// Where applying the patch will not give NEW exactly, and why.
    pub warnings: Vec<Warning>,
}

/// Something a patch cannot say, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where, from the resource's root.
    pub path: Path,
    /// What the patch cannot say there.
    pub kind: WarningKind,
}

/// Why a patch does not give NEW exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarningKind {
    /// NEW holds `null` in a mapping here. A strategic merge patch and a JSON merge patch read
    /// `null` as "remove the field", so the patched resource lacks the field (the same data for
    /// Kubernetes, which drops nulls, but not the same document).
    NullNotKept,
    /// NEW's `apiVersion`, `kind`, `metadata.name` or `metadata.namespace` differs from OLD's:
    /// the patch carries NEW's value, so it no longer names OLD and needs a target.
    IdentityChanged,
    /// With [`Options::kustomize`]: an element of a list merged by key lacks a key field (that
    /// another element has). kyaml pairs such elements by the key fields they show and puts the
    /// list together again wherever it merges, so kustomize loses or merges the element.
    KyamlRegroups,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.kind)
    }
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WarningKind::NullNotKept => {
                "the new version holds null here, which this patch type can only express as \
                 removing the field; the patched resource will not have it"
            }
            WarningKind::KyamlRegroups => {
                "this element lacks a merge key field; kustomize's strategic merge pairs \
                 elements by the key fields they have and will lose or merge it"
            }
            WarningKind::IdentityChanged => {
                "the identity changes; the patch carries the new value, so it must be applied \
                 with a target"
            }
        })
    }
}

/// A patch that cannot be made, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {kind}")]
pub struct DiffError {
    /// Where, from the resource's root.
    pub path: Path,
    /// Why the patch cannot be made.
    pub kind: DiffErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
/// Why a patch cannot be made: the kind of a [`DiffError`].
pub enum DiffErrorKind {
    /// A strategic merge or JSON merge patch is made between two mappings.
    #[error("the {0} resource is not a mapping")]
    NotAMap(&'static str),
    /// An element of a list the schema merges by key lacks the key (apimachinery fails too).
    #[error("list element has no merge key {0:?}")]
    MissingKey(String),
    /// A field whose name starts with `$` would be read as a directive by a strategic merge.
    #[error("the field {0:?} cannot be written in a strategic merge patch: names starting with '$' are directives there")]
    DirectiveKey(String),
    /// Aliases in an input name no anchor, or expand past the budget.
    #[error("{0}")]
    Alias(AliasError),
    /// The patch made, written and read back and applied to OLD by the engine it is made for,
    /// does not give NEW (see `verify`): it is not handed out. Says what went wrong: the patch
    /// does not read back or does not apply, or where the result differs from NEW.
    #[error("{0}")]
    NotReproduced(String),
    /// With [`Options::kustomize`]: kyaml's strategic merge cannot be made to give NEW here.
    #[error(
        "kustomize's strategic merge cannot give the new version here: {0}; a json6902 patch can"
    )]
    Kustomize(&'static str),
}

impl DiffError {
    fn new(kind: DiffErrorKind) -> Self {
        DiffError {
            path: Path::root(),
            kind,
        }
    }
}

/// A patch ready to be written: its plain strings that YAML 1.1 reads as another type (`on`,
/// `0777`, `1:30`) quoted ([`Node::quote_yaml11_lookalikes`]), since kubectl and kustomize read
/// patches as YAML 1.1 and this crate, like NEW's author, as YAML 1.2.
fn written(mut patch: Node<'_>) -> Node<'_> {
    patch.quote_yaml11_lookalikes();
    patch
}

/// `d`, the patch made between `old` and `new` for `engine`, once [`verify`] holds it to the
/// rule (as the text it is written as).
fn checked<'n>(
    old: &Node<'_>,
    new: &Node<'_>,
    d: Diff<'n>,
    engine: verify::Engine,
    schema: &crate::schema::Schema,
    root: crate::schema::Cursor,
) -> Result<Diff<'n>, DiffError> {
    let text = verify::text_of(&d.patch);
    verify::two_way(old, new, &text, engine, schema, root, &d.warnings)?;
    Ok(d)
}

/// A patch as the one YAML document `krm-merge diff` writes: the text the patch is checked as.
pub fn patch_text(patch: &Node<'_>) -> String {
    verify::text_of(patch)
}

/// One YAML document as a node, for the tests of this module's files.
#[cfg(test)]
pub(crate) fn test_node(text: &str) -> Node<'static> {
    crate::yaml::parse_stream(text).unwrap()[0]
        .root
        .clone()
        .unwrap()
        .into_owned()
}
