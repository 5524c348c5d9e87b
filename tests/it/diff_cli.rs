//! `krm-merge diff` through the binary: the patch between two resources in each
//! type, applied back with the binary's own commands; the three-way patch and its conflicts;
//! package diffs from directories and streams, run back on BASE; where merge keys come from
//! (CRDs beside the inputs, `--schema`); what is printed when nothing changed; results, exit
//! codes and errors.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::*;

fn dir(name: &str) -> PathBuf {
    tmp_dir("diff-cli", name)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).expect("dir");
    }
    fs::write(&p, text).expect("write");
    p.to_str().expect("utf8").to_owned()
}

fn diff(args: &[&str]) -> Out {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    krm(&all, "")
}

const OLD: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 1
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1}
  template:
    metadata:
      finalizers: [a, b]
    spec:
      containers:
      - name: app
        image: app:1
      - name: log
        image: log:1
";

const NEW: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 3 # prod scale
  strategy:
    type: Recreate
  template:
    metadata:
      finalizers: [b, c]
    spec:
      containers:
      - name: sidecar
        image: 'envoy:1'
      - name: app
        image: app:2
        workingDir: |
          --mode
          fast
";

/// The resources of a stream as data.
fn data(text: &str) -> Vec<Value> {
    docs(text)
}

#[test]
fn a_strategic_merge_patch_as_kubectl_makes_it() {
    let d = dir("merge2");
    let (old, new) = (write(&d, "old.yaml", OLD), write(&d, "new.yaml", NEW));
    let out = diff(&[&old, &new]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    assert_eq!(
        out.stdout,
        "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 3 # prod scale
  strategy:
    $retainKeys:
    - type
    type: Recreate
    rollingUpdate: null
  template:
    metadata:
      $setElementOrder/finalizers: [b, c]
      finalizers: [c]
      $deleteFromPrimitiveList/finalizers:
      - a
    spec:
      $setElementOrder/containers:
      - name: sidecar
      - name: app
      containers:
      - name: sidecar
        image: 'envoy:1'
      - name: app
        image: app:2
        workingDir: |
          --mode
          fast
      - name: log
        $patch: delete
"
    );
    // Applied to OLD, without a target (the patch names its resource), it gives NEW.
    let patch = write(&d, "patch.yaml", &out.stdout);
    let applied = krm(&["merge2", "--no-infer-merge-keys", &patch, &old], "");
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    assert_eq!(data(&applied.stdout), data(NEW));
}

#[test]
fn json_and_merge_patches_apply_back() {
    let d = dir("json");
    let (old, new) = (write(&d, "old.yaml", OLD), write(&d, "new.yaml", NEW));
    let json6902 = diff(&["--type", "json6902", &old, &new]);
    assert_eq!(json6902.code, 0, "{}", json6902.stderr);
    assert!(
        json6902
            .stdout
            .contains("- op: replace\n  path: /spec/template/spec/containers/[name=app]/image\n  value: app:2\n"),
        "{}",
        json6902.stdout
    );
    assert!(json6902.stdout.contains("value: 3 # prod scale\n"));
    let jsonmerge = diff(&["--type", "jsonmerge", &old, &new]);
    assert_eq!(jsonmerge.code, 0, "{}", jsonmerge.stderr);
    assert!(jsonmerge
        .stdout
        .starts_with("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\nspec:\n  replicas: 3 # prod scale\n"));
    for (ty, patch) in [
        ("json6902", &json6902.stdout),
        ("jsonmerge", &jsonmerge.stdout),
    ] {
        let mut entry = serde_json::Map::new();
        entry.insert("type".into(), json!(ty));
        entry.insert("patch".into(), json!(patch));
        entry.insert(
            "target".into(),
            json!({"kind": "Deployment", "name": "web"}),
        );
        let config = json!({
            "apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "Merge",
            "metadata": {"name": "t"}, "spec": {"patches": [entry]},
        });
        let fn_yaml = write(
            &d,
            "fn.yaml",
            &yaml_text(&krm_merge::yaml::from_json(&config)),
        );
        let applied = krm(&["--config", &fn_yaml, &old], "");
        assert_eq!(applied.code, 0, "{ty}: {}", applied.stderr);
        assert_eq!(data(&applied.stdout), data(NEW), "{ty}");
    }
}

#[test]
fn nothing_changed_prints_nothing() {
    let d = dir("same");
    let old = write(&d, "old.yaml", OLD);
    // The same data, written otherwise.
    let same = write(
        &d,
        "same.json",
        &serde_json::to_string(&data(OLD)[0]).expect("json"),
    );
    for ty in ["merge2", "json6902", "jsonmerge"] {
        let out = diff(&["--type", ty, &old, &same]);
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (0, "", ""),
            "{ty}"
        );
    }
    let out = diff(&["-v", &old, &same]);
    assert_eq!(
        out.stderr,
        "krm-merge: info: Deployment prod/web: the two versions hold the same data: no patch\n"
    );
    // Packages too.
    let (a, b) = (d.join("a"), d.join("b"));
    write(&a, "web.yaml", OLD);
    write(&b, "web.yaml", OLD);
    let out = diff(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "", "")
    );
}

#[test]
fn stdin_is_one_side() {
    let d = dir("stdin");
    let old = write(&d, "old.yaml", OLD);
    let out = krm(&["diff", "--type", "jsonmerge", &old, "-"], NEW);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("replicas: 3"));
    // A ResourceList on stdin is unwrapped like a stream.
    let rl = resource_list(NEW, node("{}"));
    let out = krm(&["diff", "--type", "jsonmerge", "-", &old], &rl);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("replicas: 1"), "{}", out.stdout);
}

const LAST: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  paused: true
";

const LIVE: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 5
  paused: true
  minReadySeconds: 3
";

const MODIFIED: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
";

#[test]
fn the_patch_kubectl_apply_sends_and_its_conflicts() {
    let d = dir("three");
    let (last, live, modified) = (
        write(&d, "last.yaml", LAST),
        write(&d, "live.yaml", LIVE),
        write(&d, "new.yaml", MODIFIED),
    );
    let out = diff(&["--original", &last, &live, &modified]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // minReadySeconds is the server's: kept. paused was set by the last apply: removed.
    assert_eq!(
        out.stdout,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  paused: null\n"
    );
    assert_eq!(
        out.stderr,
        "krm-merge: warning: Deployment web: spec.replicas: changed in the live object (5) and by \
         the new configuration (3); the patch overwrites the live change\n"
    );
    // --conflicts error: nothing written, exit 1, the conflict in --results.
    let results = d.join("results.yaml");
    let out = diff(&[
        "--original",
        &last,
        "--conflicts",
        "error",
        &live,
        &modified,
        "--results",
        results.to_str().unwrap(),
    ]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    let r = docs(&fs::read_to_string(&results).expect("results"));
    assert_eq!(
        r[0]["results"],
        json!([{
            "message": "changed in the live object (5) and by the new configuration (3); the patch overwrites the live change",
            "severity": "error",
            "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "field": {"path": "spec.replicas", "currentValue": 5, "proposedValue": 3},
        }])
    );
    // LAST_APPLIED from stdin; -q silences the warning.
    let out = krm(&["diff", "-q", "--original", "-", &live, &modified], LAST);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(out.stdout.contains("paused: null"));
    // Three versions of one resource, nothing else.
    let two = write(&d, "two.yaml", &format!("{LIVE}---\n{MODIFIED}"));
    let out = diff(&["--original", &last, &two, &modified]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("CURRENT (") && out.stderr.contains("is not one resource"),
        "{}",
        out.stderr
    );
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n";

/// A base and a prod copy: one resource changed, one only in the base, one only in the copy,
/// one unchanged; each a kpt package with its own Kptfile.
fn packages(d: &Path) -> (String, String) {
    let (base, prod) = (d.join("base"), d.join("prod"));
    write(
        &base,
        "Kptfile",
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base\n",
    );
    write(
        &prod,
        "Kptfile",
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: prod\n",
    );
    write(&base, "web.yaml", OLD);
    write(&prod, "web.yaml", NEW);
    write(
        &base,
        "more.yaml",
        &format!("{CM}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: debug\n"),
    );
    write(
        &prod,
        "more.yaml",
        &format!("{CM}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: prod-only\n"),
    );
    (
        base.to_str().unwrap().to_owned(),
        prod.to_str().unwrap().to_owned(),
    )
}

#[test]
fn packages_give_a_merge_config_that_makes_the_variant() {
    let d = dir("packages");
    let (base, prod) = packages(&d);
    let added = d.join("added.yaml");
    for ty in ["merge2", "json6902", "jsonmerge"] {
        let out = diff(&[
            "--type",
            ty,
            &base,
            &prod,
            "--added",
            added.to_str().unwrap(),
        ]);
        assert_eq!(out.code, 0, "{ty}: {}", out.stderr);
        assert_eq!(
            out.stderr,
            format!(
                "krm-merge: warning: Secret prod-only: only in NEW ({prod}): a patch cannot create a resource; written to {}\n",
                added.display()
            )
        );
        let config = docs(&out.stdout).remove(0);
        assert_eq!(config["kind"], "Merge");
        assert_eq!(
            config["metadata"]["annotations"]["config.kubernetes.io/local-config"],
            "true"
        );
        let patches = config["spec"]["patches"].as_array().expect("patches");
        // The Service goes, the Deployment is patched, the ConfigMap is left alone.
        assert_eq!(patches.len(), 2, "{ty}: {}", out.stdout);
        assert_eq!(patches[0]["patch"]["$patch"], "delete");
        assert_eq!(patches[1]["type"], ty);
        assert_eq!(
            patches[1]["target"],
            json!({"group": "apps", "version": "v1", "kind": "Deployment", "name": "web", "namespace": "prod"})
        );
        assert_eq!(
            data(&fs::read_to_string(&added).expect("added")),
            data("apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod-only\n")
        );
        // The config run on the base gives the prod copy (but the resource only it has).
        let fn_yaml = write(&d, "fn.yaml", &out.stdout);
        let run = krm(&["--config", &fn_yaml, &base], "");
        assert_eq!(run.code, 0, "{ty}: {}", run.stderr);
        assert_eq!(data(&run.stdout), data(&format!("{CM}---\n{NEW}")), "{ty}");
    }
    // -v says what was left out and what was made.
    let out = diff(&["-v", &base, &prod]);
    assert!(
        out.stderr.contains(&format!(
            "info: Kptfile base: OLD ({base}): a Kptfile or local-config resource; not compared"
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(&format!(
        "info: 1 resource(s) patched, 1 deleted, 1 only in NEW ({prod})"
    )));
}

#[test]
fn streams_with_several_resources_are_packages() {
    let d = dir("streams");
    let base = write(&d, "base.yaml", &format!("{OLD}---\n{CM}"));
    let prod = write(&d, "prod.yaml", &format!("{CM}---\n{NEW}"));
    let out = diff(&[&base, &prod]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out
        .stdout
        .starts_with("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\n"));
    let fn_yaml = write(&d, "fn.yaml", &out.stdout);
    let run = krm(&["--config", &fn_yaml, &base], "");
    assert_eq!(data(&run.stdout), data(&format!("{NEW}---\n{CM}")));
    // --package makes two one-resource files a package.
    let (old, new) = (write(&d, "old.yaml", OLD), write(&d, "new.yaml", NEW));
    let out = diff(&["--package", &old, &new]);
    assert!(out.stdout.contains("kind: Merge\n"), "{}", out.stdout);
}

#[test]
fn the_kustomization_format_is_for_kustomize() {
    let d = dir("kustomization");
    let (base, prod) = packages(&d);
    let out = diff(&["--format", "kustomization", &base, &prod]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let k = docs(&out.stdout).remove(0);
    let patches = k["patches"].as_array().expect("patches");
    assert_eq!(patches.len(), 2);
    // Strategic merge patches name their resource; kustomize has no $setElementOrder.
    assert!(patches.iter().all(|p| p.get("target").is_none()));
    let text = patches[1]["patch"].as_str().expect("text");
    assert!(
        !text.contains("$setElementOrder") && !text.contains("$retainKeys"),
        "{text}"
    );
    let out = diff(&[
        "--format",
        "kustomization",
        "--type",
        "json6902",
        &base,
        &prod,
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let k = docs(&out.stdout).remove(0);
    let json = &k["patches"][1];
    assert_eq!(json["target"]["kind"], "Deployment");
    let ops = json["patch"].as_str().expect("text");
    assert!(!ops.contains("[name="), "{ops}");
}

const CRD: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gateways.example.com
spec:
  group: example.com
  names: {kind: Gateway, plural: gateways}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              routes:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [host]
                items:
                  type: object
                  properties:
                    host: {type: string}
                    backend: {type: string}
";

const GW_OLD: &str = "apiVersion: example.com/v1\nkind: Gateway\nmetadata:\n  name: gw\nspec:\n  routes:\n  - host: a\n    backend: a1\n  - host: b\n    backend: b1\n";
const GW_NEW: &str = "apiVersion: example.com/v1\nkind: Gateway\nmetadata:\n  name: gw\nspec:\n  routes:\n  - host: a\n    backend: a2\n  - host: b\n    backend: b1\n";

#[test]
fn merge_keys_from_crds_beside_the_inputs_and_from_schema() {
    let d = dir("crd");
    // Without the CRD the list is replaced whole.
    let (old, new) = (write(&d, "old.yaml", GW_OLD), write(&d, "new.yaml", GW_NEW));
    let out = diff(&[&old, &new]);
    assert!(
        out.stdout
            .contains("  routes:\n  - host: a\n    backend: a2\n  - host: b\n"),
        "{}",
        out.stdout
    );
    // The CRD beside either side gives the key.
    let keyed = "spec:\n  $setElementOrder/routes:\n  - host: a\n  - host: b\n  routes:\n  - host: a\n    backend: a2\n";
    let with_crd = write(&d, "old-crd.yaml", &format!("{CRD}---\n{GW_OLD}"));
    let out = diff(&[&with_crd, &new]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.ends_with(keyed), "{}", out.stdout);
    let new_crd = write(&d, "new-crd.yaml", &format!("{GW_NEW}---\n{CRD}"));
    let out = diff(&[&old, &new_crd]);
    assert!(out.stdout.ends_with(keyed), "{}", out.stdout);
    // ... and says so when the CRDs beside the two differ.
    assert!(
        out.stderr.contains("CustomResourceDefinitions beside"),
        "{}",
        out.stderr
    );
    // --schema: an OpenAPI v2 document, which a Merge config carries inline.
    let openapi = json!({"definitions": {"gw": {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Gateway"}],
        "properties": {"spec": {"type": "object", "properties": {"routes": {
            "type": "array", "x-kubernetes-patch-merge-key": "host",
            "x-kubernetes-patch-strategy": "merge",
            "items": {"type": "object"}}}}}}}});
    let schema = write(&d, "schema.json", &openapi.to_string());
    let out = diff(&["--schema", &schema, &old, &new]);
    assert!(out.stdout.ends_with(keyed), "{}", out.stdout);
    let out = diff(&["--schema", &schema, "--package", &old, &new]);
    let config = docs(&out.stdout).remove(0);
    assert_eq!(config["spec"]["schema"]["openAPI"]["inline"], openapi);
    let fn_yaml = write(&d, "fn.yaml", &out.stdout);
    let run = krm(&["--config", &fn_yaml, &old], "");
    assert_eq!(data(&run.stdout), data(GW_NEW));
    // A schema that is not one is an error naming the file.
    let bad = write(&d, "bad.json", "{\"definitions\": 3}");
    let out = diff(&["--schema", &bad, &old, &new]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(
        out.stderr.contains(&format!("--schema {bad}")),
        "{}",
        out.stderr
    );
    let out = diff(&["--schema", "nope.json", &old, &new]);
    assert_eq!(out.code, 2);
}

#[test]
fn what_cannot_be_made_is_an_error_and_nothing_is_written() {
    let d = dir("errors");
    let old = write(&d, "old.yaml", OLD);
    // An element without its merge key.
    let keyless = write(
        &d,
        "keyless.yaml",
        &NEW.replace("      - name: sidecar\n", "      - \n"),
    );
    let out = diff(&[&old, &keyless]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert_eq!(
        out.stderr,
        "krm-merge: error: Deployment prod/web: spec.template.spec.containers[0]: list element has no merge key \"name\"\n"
    );
    // Malformed input names the file, line and column.
    let bad = write(&d, "bad.yaml", "a: 1\nb: [\n");
    let out = diff(&[&old, &bad]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(
        out.stderr.contains(&format!("{bad}: malformed YAML"))
            && out.stderr.contains("line 2, column 4"),
        "{}",
        out.stderr
    );
    // A missing file is a usage error.
    let out = diff(&[&old, "missing.yaml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("missing.yaml: no such file") && !out.stderr.contains("os error"),
        "{}",
        out.stderr
    );
    // Two resources of a package with one identity.
    let twice = write(&d, "twice.yaml", &format!("{CM}---\n{CM}"));
    let out = diff(&[&twice, &old]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(
        out.stderr.contains("appears more than once"),
        "{}",
        out.stderr
    );
    // A null NEW holds cannot be said by a strategic merge patch: a warning, exit 0.
    let null = write(
        &d,
        "null.yaml",
        &OLD.replace("replicas: 1", "replicas: null"),
    );
    let out = diff(&[&old, &null]);
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains(
            "warning: Deployment prod/web: spec.replicas: the new version holds null here"
        ),
        "{}",
        out.stderr
    );
    // --added is not written when the run fails.
    let added = d.join("added.yaml");
    let out = diff(&["--added", added.to_str().unwrap(), &twice, &old]);
    assert_eq!(out.code, 1);
    assert!(!added.exists());
}

/// The catalog example's config is what `krm-merge diff` makes of the base (the example) and
/// the prod copy (the example rendered: its `.expected/diff.patch` applied), below its comment.
#[test]
fn the_make_overlay_example_is_the_diff_of_its_base_and_its_render() {
    let example = root().join("functions/examples/krm-merge-make-overlay");
    let d = dir("example");
    let prod = d.join("prod");
    copy_dir(&example, &prod);
    let applied = run(git(&prod)
        .args(["apply", "--whitespace=nowarn"])
        .arg(example.join(".expected/diff.patch")));
    assert!(applied.status.success());
    let out = diff(&[example.to_str().unwrap(), prod.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let config = fs::read_to_string(example.join("fn-config.yaml")).expect("fn-config.yaml");
    let generated: String = config
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(out.stdout, generated);
}
