//! krm-merge: a KRM function that merges and patches the resources of a package.

pub mod align;
pub mod apply;
pub mod cli;
pub mod config;
pub mod engine;
pub mod json6902;
pub mod jsonmerge;
pub mod krm;
pub mod merge2;
pub mod merge3;
pub mod path;
pub mod resource;
pub mod schema;
pub mod selector;
pub mod target;
pub mod yaml;
