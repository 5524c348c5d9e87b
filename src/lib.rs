//! krm-merge: a KRM function that merges and patches the resources of a package.
//!
//! No panics on input: the library returns errors rather than unwrapping (enforced below, tests
//! aside); indexing and slicing were reviewed with `clippy::indexing_slicing` (each index is
//! bounded by construction: positions found in the same collection, tallies sized from the
//! plan, byte offsets from the parser's spans), and the fuzz targets in `fuzz/` run with
//! overflow checks and debug assertions on.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod cli;
pub mod config;
pub mod diff;
mod hash;
pub mod krm;
pub mod merge;
pub mod patch;
pub mod path;
pub mod schema;
pub mod select;
pub mod yaml;
