//! krm-merge: a KRM function that merges and patches the resources of a package.

pub mod config;
pub mod schema;
pub mod selector;
pub mod target;
pub mod yaml;
