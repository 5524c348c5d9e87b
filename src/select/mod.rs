//! Selection: which resources a patch applies to.
//!
//! * [`resource`] — a resource's identity and bookkeeping, read from its node;
//! * [`target`] — kustomize-style targets (anchored regular expressions and selectors);
//! * [`labels`] — Kubernetes label and annotation selectors.
//!
//! What it must not do: change a resource (except putting back the bookkeeping a patch may not
//! change), merge, or read or write text.

pub mod labels;
pub mod resource;
pub mod target;
