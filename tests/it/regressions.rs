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

// ----- real packages --------------------------------------------------------------------

/// A Deployment as Helm charts write them: quoted names and labels, a flow list, a comment.
const HELM_DEPLOYMENT: &str = r#"---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: "web"
  namespace: "cert-manager" # the release's namespace
  labels:
    app.kubernetes.io/version: "v1.17.2"
    tier: 'front'
spec:
  replicas: 0x3
  template:
    spec:
      containers:
      - name: app
        image: "ghcr.io/web:1.0"
        args: ["--port", '8080']
        env:
        - {name: MODE, value: "on"}
        - name: PORT   # the listener
          value: "8080"
"#;

// A patch that set a scalar to the value it already had rewrote it in the
// patch's style (`namespace: "cert-manager"` became `namespace: cert-manager`), and every patch
// without a target repeats name and namespace, so every such patch on Helm output did. Through
// every walker, a patch that repeats the resource's values in other quoting (and `3` for
// `0x3`, a list written otherwise) changes no byte, and says so.
#[test]
fn a_patch_repeating_the_current_values_changes_no_byte() {
    let smp = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: cert-manager\n  labels:\n    app.kubernetes.io/version: v1.17.2\n    tier: \"front\"\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: ghcr.io/web:1.0\n        args:\n        - --port\n        - \"8080\"\n        env:\n        - name: MODE\n          value: on\n        - {name: PORT, value: '8080'}\n";
    let target = "target: {kind: Deployment, name: web}\n";
    let cases: Vec<(&str, String)> = vec![
        ("merge2", format!("patch: |\n{}", indent_under(smp, "  ", "  "))),
        (
            "merge2, kustomize's options",
            format!(
                "patch: |\n{}options: {{compatibility: kustomize}}\n",
                indent_under(smp, "  ", "  ")
            ),
        ),
        (
            "merge2 with a target",
            format!("{target}patch: |\n{}", indent_under(smp, "  ", "  ")),
        ),
        (
            "jsonmerge",
            format!("{target}type: jsonmerge\npatch: |\n  metadata: {{namespace: cert-manager, labels: {{tier: front}}}}\n  spec: {{replicas: 3}}\n"),
        ),
        (
            "json6902",
            format!(
                "{target}type: json6902\npatch: |\n  - {{op: replace, path: /metadata/namespace, value: cert-manager}}\n  - {{op: add, path: /metadata/labels/tier, value: front}}\n  - {{op: replace, path: /spec/replicas, value: 3}}\n  - {{op: replace, path: /spec/template/spec/containers/0/args, value: [--port, \"8080\"]}}\n  - {{op: replace, path: '/spec/template/spec/containers/[name=app]/env/[name=MODE]/value', value: on}}\n"
            ),
        ),
        (
            "json6902, kustomize's options",
            format!(
                "{target}type: json6902\noptions: {{compatibility: kustomize}}\npatch: |\n  - {{op: replace, path: /metadata/namespace, value: cert-manager}}\n  - {{op: replace, path: /spec/replicas, value: 3}}\n  - {{op: replace, path: /spec/template/spec/containers/0/image, value: 'ghcr.io/web:1.0'}}\n"
            ),
        ),
        (
            "merge3",
            format!("{target}type: merge3\noriginal: |\n  spec: {{replicas: 1}}\n  metadata: {{labels: {{tier: back}}}}\npatch: |\n  spec: {{replicas: 3}}\n  metadata: {{labels: {{tier: front}}}}\n"),
        ),
    ];
    for (what, entry) in cases {
        let out = filter("same-values", &merge_fn(&entry), HELM_DEPLOYMENT);
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        assert_eq!(out.stdout, HELM_DEPLOYMENT, "{what}: the output changed");
        let d = dir("same-values");
        let v = krm(
            &[
                "-v",
                "--config",
                &d.join("fn.yaml").display().to_string(),
                &d.join("resources.yaml").display().to_string(),
            ],
            "",
        );
        assert!(
            v.stderr.contains("changed nothing"),
            "{what}: the results say it changed something\n{}",
            v.stderr
        );
    }
    // A patch that changes one value leaves the values it repeats as they are written.
    let entry = format!(
        "patch: |\n{}",
        indent_under(&smp.replace("replicas: 3", "replicas: 4"), "  ", "  ")
    );
    let out = filter("same-values", &merge_fn(&entry), HELM_DEPLOYMENT);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        HELM_DEPLOYMENT.replace("replicas: 0x3", "replicas: 4")
    );
    // apply, run again on its own output: the last-applied annotation it wrote is what it
    // would write again, so nothing changes.
    let entry = format!("type: apply\npatch: |\n{}", indent_under(smp, "  ", "  "));
    let once = filter("apply-again", &merge_fn(&entry), HELM_DEPLOYMENT);
    assert_eq!(once.code, 0, "{}", once.stderr);
    let twice = filter("apply-again", &merge_fn(&entry), &once.stdout);
    assert_eq!(twice.code, 0, "{}", twice.stderr);
    assert_eq!(twice.stdout, once.stdout);
    assert!(
        once.stdout
            .contains("namespace: \"cert-manager\" # the release's namespace"),
        "{}",
        once.stdout
    );
}

// The rule's edges: the same data as YAML 1.2 reads it is not enough where
// YAML 1.1 (Kubernetes) reads the two texts differently, and `"1"` is not `1`.
#[test]
fn a_value_yaml11_reads_otherwise_is_rewritten() {
    let res = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: yes\n  b: 0777\n  c: \"1\"\n  d: 1e3\n";
    let entry =
        // Numbers in a ConfigMap's data: the schema check's findings stay warnings.
        "target: {kind: ConfigMap}\noptions: {validation: warn}\npatch: |\n  data: {a: \"yes\", b: 777, c: 1, d: 1000.0}\n";
    let out = filter("yaml11-edges", &merge_fn(entry), res);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"yes\"\n  b: 777\n  c: 1\n  d: 1000.0\n"
    );
}

/// A stream large enough to be read on several cores comes out as one core writes it: every
/// resource patched, in the stream's order, and a finding about the patch reported once, about
/// the first resource it selected. Our own bug: a stream read in two halves reported such a
/// finding once per half, about a different resource each time.
#[test]
fn a_stream_read_on_several_cores_comes_out_in_order_with_each_finding_once() {
    let n = 15_000;
    let resource = |i: usize, patched: bool| {
        // The patch's values keep their flow style.
        let labels = if patched { "  labels: {team: a}\n" } else { "" };
        let extra = if patched { "spec: {x: 1}\n" } else { "" };
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n{labels}data:\n  k: v{i}\n{extra}"
        )
    };
    let stream = |patched: bool| {
        (0..n)
            .map(|i| resource(i, patched))
            .collect::<Vec<_>>()
            .join("---\n")
    };
    let input = stream(false);
    assert!(input.len() > 1 << 20, "large enough to be cut into pieces");
    let config = merge_fn(
        "target: {kind: ConfigMap}\noptions: {validation: warn}\npatch: |\n  metadata: {labels: {team: a}}\n  spec: {x: 1}\n",
    );
    let by_file = filter("several-cores", &config, &input);
    let d = dir("several-cores");
    let fn_yaml = d.join("fn.yaml").display().to_string();
    let by_stdin = krm(&["--config", &fn_yaml, "-"], &input);
    for out in [by_file, by_stdin] {
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout == stream(true),
            "every resource patched, in order"
        );
        let findings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("spec")).collect();
        assert_eq!(findings.len(), 1, "{}", out.stderr);
        assert!(findings[0].contains("ConfigMap cm-0"), "{}", findings[0]);
    }
}
