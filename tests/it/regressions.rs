//! Regression tests that stay in Rust because what they assert is computed from their input;
//! the other regressions are fixture cases (tests/fixtures/regressions, run by
//! tests/it/fixtures.rs). Each is named for what it guards and says in a comment where the bug
//! comes from (ripgrep style): an upstream issue krm-merge exists to fix, or one of our own bugs
//! and the test suite or fuzz target that found it.
//!
//! A test marked `#[ignore = "bug: ..."]` reproduces a product bug that is not fixed yet
//! (`cargo test --test it regressions:: -- --ignored` runs them); the conformance cases it
//! explains, if any, are listed in `KNOWN_BUGS` in tests/it/conformance.rs. Fixing the bug means
//! removing the `#[ignore]` and those entries.

use std::fs;
use std::path::PathBuf;

use serde_json::json;

use crate::support::*;

/// A directory of this test's own for input files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("krm-merge-reg-{}-{test}", std::process::id()));
    fs::create_dir_all(&d).expect("temp dir");
    d
}

/// `krm-merge --config FN RESOURCES`: the standalone filter on a plain YAML stream.
fn filter(test: &str, config: &str, resources: &str) -> Out {
    let d = dir(test);
    fs::write(d.join("fn.yaml"), config).expect("config file");
    fs::write(d.join("resources.yaml"), resources).expect("resources file");
    krm(
        &[
            "--config",
            &d.join("fn.yaml").display().to_string(),
            &d.join("resources.yaml").display().to_string(),
        ],
        "",
    )
}

/// `text` with every non-empty line indented: the first by `first`, the others by `rest`.
fn indent_under(text: &str, first: &str, rest: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| match (i, l.is_empty()) {
            (_, true) => "\n".to_owned(),
            (0, false) => format!("{first}{l}\n"),
            _ => format!("{rest}{l}\n"),
        })
        .collect()
}

/// A `Merge` functionConfig with one patch entry written as YAML (indented under `patches:`).
fn merge_fn(patch_entry: &str) -> String {
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: test\nspec:\n  patches:\n{}",
        indent_under(patch_entry, "  - ", "    ")
    )
}

// ----- kustomize issues ------------------------------------------------------------------------

// https://github.com/kubernetes-sigs/kustomize/issues/2767
// A patch that only adds a label rewrote a container's ports (two ports on 8080 became one
// twice). A patch touches what it mentions and nothing else: the output is the input, byte for
// byte, plus the patched lines. The PatchTransformer form takes kustomize's options, and so
// kustomize's output (as `kubectl kustomize` gives it): one of the two ports is left.
#[test]
fn kustomize_2767_a_patch_does_not_touch_fields_it_does_not_mention() {
    let before = r#"# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test-deployment
spec:
  template:
    spec:
      containers:
      - image: "test-image"   # pinned elsewhere
        name: test-deployment
        args: [--port, '8080', --verbose]
        ports:
        - containerPort: 8080
          name: take-over-the-world
          protocol: TCP
        - containerPort: 8080
          name: disappearing-act
          protocol: TCP

        env:
        - {name: MODE, value: "on"}
---
apiVersion: v1
kind: Service
metadata:
  name: untouched # no patch selects this
spec:
  ports: [{port: 80}]
"#;
    let patch = "patch: |-\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: test-transformer\n    labels:\n      test-transformer: did-my-job\ntarget:\n  kind: Deployment\n  name: test-deployment\n";
    let out = filter("2767", &merge_fn(patch), before);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = before.replace(
        "  name: test-deployment\nspec:",
        "  name: test-deployment\n  labels:\n    test-transformer: did-my-job\nspec:",
    );
    assert_eq!(out.stdout, after);
    let transformer = format!(
        "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: test-transformer\n{patch}"
    );
    let out = filter("2767-kustomize", &transformer, before);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let one_port = after.replace(
        "        - containerPort: 8080\n          name: take-over-the-world\n          protocol: TCP\n",
        "",
    );
    assert_eq!(out.stdout, one_port);
}

// ----- our bugs, found by the upstream conformance suites ---------------------------------------

// k8s-strategicpatch unknown_field.yaml "not filter nulls from non-associative slice" (two-way):
// a `null` element of a list is a value, not a deletion (apimachinery and apply keep it), but
// merge2 drops it, from a list it adds and from a list it replaces.
#[test]
fn merge2_keeps_null_elements_of_a_list() {
    let d = dir("bug-null-elements");
    fs::write(
        d.join("dest.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nold: [x]\n",
    )
    .expect("dest");
    fs::write(
        d.join("src.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nold: [key1, null, key2]\nnew:\n- x\n- ~\n",
    )
    .expect("src");
    let out = krm(
        &[
            "merge2",
            &d.join("src.yaml").display().to_string(),
            &d.join("dest.yaml").display().to_string(),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = &docs(&out.stdout)[0];
    assert_eq!(doc["old"], json!(["key1", null, "key2"]), "{}", out.stdout);
    assert_eq!(doc["new"], json!(["x", null]), "{}", out.stdout);
}
