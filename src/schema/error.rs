//! Errors from loading merge metadata: what is wrong ([`SchemaErrorKind`]), where, and in what.

use thiserror::Error;

/// Merge metadata that cannot be loaded: a CRD, an OpenAPI document or a `mergeKeys` entry.
///
/// Displayed as `ORIGIN: PATH: KIND`, e.g.
/// `OpenAPI document: definitions["v1.Foo"].properties.spec: $ref "#/definitions/v1.Bar" does not resolve`.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{origin}: {path}: {kind}")]
pub struct SchemaError {
    /// What was being loaded: `CustomResourceDefinition foos.example.com`, `OpenAPI document`,
    /// `mergeKeys example.com/Foo spec.items`.
    pub origin: String,
    /// Where inside it, as a dotted path with `[i]` for list indexes and `["name"]` for
    /// definition names; empty for the whole thing.
    pub path: String,
    pub kind: SchemaErrorKind,
}

/// What is wrong with some merge metadata.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaErrorKind {
    #[error("expected {expected}")]
    WrongType { expected: &'static str },
    #[error("missing {0}")]
    Missing(&'static str),
    #[error("unknown {what} {value:?}")]
    UnknownValue { what: &'static str, value: String },
    #[error("$ref {0:?} does not resolve")]
    UnresolvedRef(String),
    #[error(
        "$ref {0:?} is not supported here (only \"#/definitions/NAME\" in an OpenAPI document)"
    )]
    UnsupportedRef(String),
    #[error("$ref {0:?} does not reach a schema within {1} definitions that are only references (a cycle?)")]
    RefLoop(String, usize),
    #[error("x-kubernetes-list-type map needs x-kubernetes-list-map-keys")]
    MapListWithoutKeys,
    #[error("schema nested deeper than {0} levels")]
    TooDeep(usize),
    #[error("not a CustomResourceDefinition (apiVersion {api_version:?}, kind {kind:?})")]
    NotACrd { api_version: String, kind: String },
    #[error("invalid path {0:?}: {1}")]
    InvalidPath(String, &'static str),
    #[error("nothing declared: give keys, a strategy, or both")]
    NothingDeclared,
    #[error("strategy replace takes no keys")]
    KeysWithReplace,
    #[error("declared twice with different metadata")]
    Conflict,
}

/// An error that knows where it is but not yet in what; the public entry points add the origin.
#[derive(Debug)]
pub(super) struct Located {
    pub path: String,
    pub kind: SchemaErrorKind,
}

impl Located {
    pub(super) fn new(path: &str, kind: SchemaErrorKind) -> Located {
        Located {
            path: path.to_string(),
            kind,
        }
    }

    pub(super) fn origin(self, origin: &str) -> SchemaError {
        SchemaError {
            origin: origin.to_string(),
            path: self.path,
            kind: self.kind,
        }
    }
}
