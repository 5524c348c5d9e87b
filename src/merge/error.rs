//! The one error type of the merge walkers (merge2, merge3, apply): what went wrong, and where
//! in the resource.
//!
//! An error is made where the walk finds the problem, with an empty path, and picks up one step
//! per level as the stack unwinds ([`MergeError::within`]), as structured-merge-diff's errors
//! do: no walker carries a path down, and the walk that succeeds never builds one.
//!
//! What it must not do: hold text meant for one host (the engine adds which patch and which
//! resource), or stand for failures that are not a merge's (reading the functionConfig, JSON
//! patches and merge patches have their own).

use crate::path::{Path, Seg};
use crate::yaml::AliasError;

/// A patch that cannot be merged, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {kind}")]
pub struct MergeError {
    /// Where, from the resource's root: `spec.template.spec.containers[0]`.
    pub path: Path,
    pub kind: MergeErrorKind,
}

/// What went wrong. Each variant says which walkers meet it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeErrorKind {
    /// merge2: `$patch` names no strategy it knows.
    #[error("unknown patch strategy {0:?} (expected delete, replace or merge)")]
    UnknownStrategy(String),
    /// merge2: a key starting with `$` that is no directive.
    #[error("unknown directive {0:?} (known: $patch, $retainKeys, $setElementOrder/<list>, $deleteFromPrimitiveList/<list>)")]
    UnknownDirective(String),
    /// merge2: a directive whose value has the wrong shape.
    #[error("{directive} must be {expected}")]
    BadDirective {
        directive: String,
        expected: &'static str,
    },
    /// All three: an element of a list merged by key lacks a key field (and it has no default).
    #[error("list element has no merge key {0:?}")]
    MissingKey(String),
    /// merge2: the patch's list does not follow its `$setElementOrder`.
    #[error("{0} do not match: every element of the list must be named, in the same order")]
    OrderMismatch(String),
    /// All three: a collection merges into an alias whose anchor the resource lacks.
    #[error("alias *{0} refers to no anchor in this resource")]
    UnknownAlias(String),
    /// merge2, with kustomize's options only: kyaml decides a value's kind from the resource and
    /// fails on a patch of another kind.
    #[error(
        "the patch has a {patch} where the resource has a {resource}: with kustomize's options a \
         strategic merge cannot change a value's kind (kustomize fails: wrong node kind)"
    )]
    KindChange {
        resource: &'static str,
        patch: &'static str,
    },
    /// merge2, with kustomize's options only: kyaml pairs a map's fields by their names as
    /// text, so a patch key that is a resource key spelled otherwise (`0x1` for `1`) is a second
    /// key beside it: the same key twice, which kustomize then fails to read and no YAML reader
    /// (ours included) takes.
    #[error(
        "the patch's key {patch:?} is the resource's key {resource:?} spelled otherwise: with \
         kustomize's options keys pair by their text, as in kyaml, and the result would hold \
         the key twice; spell it as the resource does"
    )]
    KeySpelling { patch: String, resource: String },
    /// merge2, with kustomize's options only: kyaml fails on an element that is not a map in a
    /// list it merges by key.
    #[error(
        "a {0} among the elements of a list merged by key: with kustomize's options this is an \
         error, as in kustomize (wrong node kind)"
    )]
    NotAMap(&'static str),
    /// apply: the last-applied annotation holds something that is not JSON.
    #[error("the last applied configuration is not valid JSON: {message} at line {line}, column {column}")]
    BadAnnotation {
        line: usize,
        column: usize,
        message: String,
    },
    /// apply: the last-applied annotation is JSON, but not an object (or not a string at all).
    #[error("the last applied configuration must be a JSON object, not {0}")]
    AnnotationNotObject(&'static str),
    /// apply: the local configuration has something JSON cannot hold (a non-scalar key, say).
    #[error("the local configuration cannot be written as JSON: {0}")]
    NotJson(String),
    /// apply: the aliases of the local configuration cannot be expanded.
    #[error("the local configuration: {0}")]
    PatchAliases(AliasError),
    /// merge2, with kustomize's options only: kyaml's step-by-step pairing of a list whose
    /// elements lack their keys would take too long (see the message).
    #[error("{0}")]
    TooMuchWork(String),
    /// All three: merging into an alias copies its anchored node there; the copy would nest
    /// the resource deeper than any YAML reader (ours included) reads back.
    #[error(
        "merging into the alias *{alias} here copies its anchored node, which would nest the \
         resource {depth} levels deep, deeper than the {max} levels a YAML reader takes"
    )]
    TooDeep {
        alias: String,
        depth: usize,
        max: usize,
    },
}

impl MergeError {
    /// The error `kind` where the walk found it; its path grows as the walk unwinds.
    pub(crate) fn new(kind: MergeErrorKind) -> Self {
        MergeError {
            path: Path::root(),
            kind,
        }
    }

    /// This error, one level up: `seg` is the step from there to where it was.
    pub(crate) fn within(mut self, seg: Seg) -> Self {
        self.path = self.path.within(seg);
        self
    }
}
