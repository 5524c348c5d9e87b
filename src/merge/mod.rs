//! Merges: one walker per operation over the same alignment rules.
//!
//! * [`merge2`] — the two-way strategic merge (kyaml's merge2 rules with Kubernetes'
//!   strategic-merge directives), with kyaml's own walk as an option;
//! * [`merge3`] — the three-way merge (kyaml's merge3 rules) with conflicts reported;
//! * [`apply`] — `kubectl apply`'s client-side merge, driven by the last-applied annotation;
//! * `align` — how two lists or maps correspond (list kinds, element keys), shared by all three;
//! * [`Context`] — what every walker is given besides the nodes: the schema and the node's place
//!   in it, the resource's anchored nodes, the walker's options;
//! * `MergeError` — the one error type of all three, with the path where the merge failed.
//!
//! What it must not do: select resources, read or write text, or know the wire format. Every
//! walker takes the nodes and one [`Context`], and nothing else.

pub(crate) mod align;
pub mod apply;
mod context;
mod error;
pub mod merge2;
pub mod merge3;

pub use context::Context;
pub(crate) use context::Shape;
pub(crate) use error::{MergeError, MergeErrorKind};
