//! krm-merge: a KRM function that merges and patches the resources of a Kubernetes package —
//! strategic merge (2-way), 3-way merge, JSON 6902, JSON merge patch and `kubectl apply`'s merge
//! — on a lossless YAML tree that keeps comments, quoting, key order and list order.
//!
//! The crate is the pipeline the `krm-merge` binary runs, one module per stage:
//!
//! | stage | module | what it is |
//! |---|---|---|
//! | parse | [`yaml`] | the lossless YAML tree: parse, build, write back |
//! | plan | [`config`] | a functionConfig read into a typed [`Plan`] |
//! | select | [`select`] | resource identity, kustomize-style targets, label selectors |
//! | merge / patch | [`merge`], [`patch`] | one walker per operation, over the merge [`schema`] |
//! | run | [`run`] | the engine that applies a plan's steps to the items, and the ways of reading input it runs over |
//! | diff | [`diff`] | the reverse: the patch that turns one version of a resource (or package) into another |
//! | emit | [`krm`] | the wire format: ResourceList, `List`, stream, read and written, and results |
//!
//! [`path`] names places in a resource for errors and results; [`error`] holds the error type of
//! each layer.
//!
//! # Running a plan over resources
//!
//! ```
//! use krm_merge::{config, run, yaml};
//!
//! let fn_config = yaml::parse_stream(
//!     "apiVersion: fn.krm-merge.dev/v1alpha1
//! kind: Merge
//! spec:
//!   patches:
//!   - target: {kind: Deployment}
//!     patch: |
//!       spec:
//!         replicas: 3
//! ",
//! )?
//! .remove(0)
//! .root
//! .expect("a document");
//! let plan = config::plan(&fn_config, None)?;
//!
//! let resources = "\
//! apiVersion: apps/v1
//! kind: Deployment
//! metadata:
//!   name: web # the front end
//! spec:
//!   replicas: 1
//! ";
//! let out = run::run_stream(resources, &plan, None);
//! assert!(!out.failed());
//! assert_eq!(
//!     out.text,
//!     "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the front end\nspec:\n  replicas: 3\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`run::run_resource_list`] does the same for a KRM `ResourceList` whose `functionConfig` says
//! what to do, as kpt and kustomize call the function.
//!
//! # Merging two trees
//!
//! The walkers work on [`yaml::Node`] trees directly, with the schema that says how lists merge:
//!
//! ```
//! use krm_merge::merge::{merge2, Context};
//! use krm_merge::schema::Schema;
//! use krm_merge::yaml;
//!
//! let mut dest = yaml::parse_stream(
//!     "spec:\n  containers:\n  - name: app # main\n    image: nginx:1\n  - name: log\n    image: busybox\n",
//! )?
//! .remove(0)
//! .root
//! .expect("a document");
//! let patch = yaml::parse_stream("spec:\n  containers:\n  - name: app\n    image: nginx:2\n")?
//!     .remove(0)
//!     .root
//!     .expect("a document");
//! let schema = Schema::builtin();
//! let root = schema.root("", "v1", "Pod");
//! let anchors = Default::default(); // dest has no aliases
//! let cx = Context::new(&schema, root, &anchors).with(merge2::Options::default());
//! merge2::merge(&mut dest, &patch, &cx)?;
//! let mut out = String::new();
//! yaml::emit_document(&yaml::Document::new(dest), &mut out);
//! assert_eq!(
//!     out,
//!     "spec:\n  containers:\n  - name: app # main\n    image: nginx:2\n  - name: log\n    image: busybox\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! No panics on input: the library returns errors rather than unwrapping (enforced below, tests
//! aside); indexing and slicing were reviewed with `clippy::indexing_slicing` (each index is
//! bounded by construction: positions found in the same collection, tallies sized from the
//! plan, byte offsets from the parser's spans), and the fuzz targets in `fuzz/` run with
//! overflow checks and debug assertions on.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![warn(missing_docs)]

pub mod budget;
pub mod config;
pub mod diff;
pub mod error;
mod hash;
pub mod krm;
pub mod merge;
pub mod patch;
pub mod path;
pub mod run;
pub mod schema;
pub mod select;
pub mod yaml;

pub use config::{plan, Plan};
pub use run::{run_resource_list, run_stream, Output};
