//! The integration tests: one test binary (`cargo test --test it`), one module per area.
//! `cargo test --test it cli::` runs one module; `support` is what they share.

mod catalog;
mod cli;
mod conformance;
mod container;
mod corpus;
mod diff_cli;
mod diff_conformance;
mod diff_properties;
mod diff_roundtrip;
mod docs;
mod fixtures;
mod gen;
mod go_yaml;
mod hostile;
mod hosts;
mod integrations;
mod json6902_suite;
mod kustomize_diff;
mod lists;
mod no_data_loss;
mod package;
mod package_roundtrip;
mod pieces;
mod properties;
mod regressions;
mod support;
mod upgrade;
mod upgrade_properties;
mod users;
mod walkers_corpus;
mod wildcards;
mod write_back;
mod yaml11_quoting;
mod yaml_roundtrip;
