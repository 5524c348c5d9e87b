//! Selection: which resources a patch applies to.
//!
//! * [`identity`] — a resource's identity (one type, one effective-namespace rule), labels and
//!   annotations, read from its node;
//! * [`bookkeeping`] — the hosts' annotations and items a patch must leave alone;
//! * [`target`] — kustomize-style targets (anchored regular expressions and selectors);
//! * [`labels`] — Kubernetes label and annotation selectors;
//! * `places` — the places inside a resource where a patch's `at:` applies.
//!
//! What it must not do: change a resource (except putting back the bookkeeping a patch may not
//! change), merge, or read or write text.

pub mod bookkeeping;
pub mod identity;
pub mod labels;
pub(crate) mod places;
pub mod target;
