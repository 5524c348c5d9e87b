//! One patch for many places: `[*]` in JSON pointers, `at:` on every patch type, and
//! the named starts `@podTemplate`, `@podSpec`, `@containers` — through the binary, with what
//! each run must give computed from its input. The byte-for-byte cases are fixtures
//! (`tests/fixtures/wildcards`); the guide's "Patching inside resources" section is the
//! contract these tests hold.
//!
//! The rules for places that are not there (doc/GUIDE.md, json6902 "Wildcards") each have a test
//! named for the rule, and a property test holds `at: "@containers"` to what one patch per
//! container, addressed by name, gives.

use std::fmt::Write as _;

use krm_merge::config;
use krm_merge::path::{Part, Pattern};
use krm_merge::schema::Schema;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Value};

use crate::support::*;

/// A `Merge` functionConfig with these patch entries (YAML, indented under `patches:`).
fn merge_fn(patches: &str) -> String {
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: test\nspec:\n  patches:\n{patches}"
    )
}

/// Runs `config` on `items` in KRM mode: (exit code, items, results as `severity: message`).
fn run(config: &str, items: &str) -> (i32, Vec<Value>, Vec<String>) {
    let out = krm(&[], &resource_list(items, node(config)));
    let results = rl_results(&out.stdout)
        .iter()
        .map(|r| {
            format!(
                "{}: {}",
                r["severity"].as_str().unwrap_or_default(),
                r["message"].as_str().unwrap_or_default()
            )
        })
        .collect();
    (out.code, rl_items(&out.stdout), results)
}

/// The containers and init containers of a resource's pod spec at `spec` (a JSON pointer).
fn containers<'v>(item: &'v Value, spec: &str) -> Vec<&'v Value> {
    let pod = item.pointer(spec).unwrap_or(&Value::Null);
    ["initContainers", "containers"]
        .iter()
        .flat_map(|l| pod[l].as_array().into_iter().flatten())
        .collect()
}

/// The pod spec of each workload kind, written by hand: the oracle the schema-derived places
/// are checked against.
fn pod_spec_of(kind: &str) -> &'static str {
    match kind {
        "Pod" => "/spec",
        "CronJob" => "/spec/jobTemplate/spec/template/spec",
        _ => "/spec/template/spec",
    }
}

const WORKLOADS: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      initContainers:
      - name: migrate
        image: m:1
      containers:
      - name: app # the web server
        image: web:2
        env:
        - name: LOG_LEVEL
          value: info
        - name: CA
          value: /old.pem
          # a comment below the var
      - name: proxy
        image: envoy:1
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      containers:
      - {name: postgres, image: postgres:16}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  template:
    spec:
      containers:
      - name: agent
        image: agent:3
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      containers:
      - name: once
        image: tools:1
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
          - name: wait
            image: busybox
          containers:
          - name: report
            image: tools:1
---
apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  containers:
  - name: shell
    image: busybox
---
apiVersion: v1
kind: Service
metadata: {name: web} # the front door
spec:
  ports:
  - {port: 80, targetPort: 8080}
";

const EVERY_KIND: &str = "Deployment|StatefulSet|DaemonSet|Job|CronJob|Pod|Service";

#[test]
fn one_merge2_patch_at_containers_reaches_every_container_of_every_workload() {
    let config = merge_fn(&format!(
        "  - target: {{kind: \"{EVERY_KIND}\"}}
    at: \"@containers\"
    patch:
      env:
      - name: CA
        value: /etc/ssl/ca.pem
"
    ));
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 0, "{results:?}");
    let before = docs(WORKLOADS);
    let mut total = 0;
    for (item, was) in items.iter().zip(&before) {
        let kind = item["kind"].as_str().unwrap();
        if kind == "Service" {
            assert_eq!(item, was, "the Service has no pod and is left alone");
            continue;
        }
        let now = containers(item, pod_spec_of(kind));
        let then = containers(was, pod_spec_of(kind));
        assert_eq!(now.len(), then.len());
        for (c, old) in now.iter().zip(&then) {
            total += 1;
            let env = c["env"].as_array().expect("every container has env");
            let ca: Vec<&Value> = env.iter().filter(|v| v["name"] == "CA").collect();
            assert_eq!(
                ca,
                [&json!({"name": "CA", "value": "/etc/ssl/ca.pem"})],
                "{c}"
            );
            // What the container had stays: the other variables, in their order, first.
            let others: Vec<&Value> = env.iter().filter(|v| v["name"] != "CA").collect();
            let had: Vec<&Value> = old["env"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|v| v["name"] != "CA")
                .collect();
            assert_eq!(others, had);
            assert_eq!(c["image"], old["image"]);
        }
    }
    assert_eq!(total, 9);
    assert_eq!(
        results,
        ["info: patch[0] (merge2 at @containers): 9 containers in 6 resources"]
    );
}

#[test]
fn comments_and_untouched_bytes_are_kept() {
    let dir = std::env::temp_dir().join(format!("krm-merge-wild-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = merge_fn(&format!(
        "  - target: {{kind: \"{EVERY_KIND}\"}}
    at: \"@containers\"
    patch: {{imagePullPolicy: Always}}
"
    ));
    std::fs::write(dir.join("fn.yaml"), config).unwrap();
    std::fs::write(dir.join("in.yaml"), WORKLOADS).unwrap();
    let out = krm(
        &[
            "--config",
            &dir.join("fn.yaml").display().to_string(),
            &dir.join("in.yaml").display().to_string(),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Every line of the input is in the output, in order: the patch only adds. (A flow
    // mapping the patch changes is written again on one line, as everywhere.)
    let mut lines = out.stdout.lines();
    for want in WORKLOADS.lines().filter(|l| !l.contains("{name: postgres")) {
        assert!(
            lines.any(|l| l == want),
            "lost or changed: {want:?}\n{}",
            out.stdout
        );
    }
    assert_eq!(out.stdout.matches("imagePullPolicy: Always").count(), 9);
    // The untouched Service is the input's text.
    assert!(out
        .stdout
        .ends_with(WORKLOADS.split("---\n").last().unwrap()));
    assert!(out
        .stdout
        .contains("      - {name: postgres, image: postgres:16, imagePullPolicy: Always}\n"));
}

#[test]
fn one_json6902_op_with_a_wildcard_sets_image_pull_policy_on_every_container() {
    let config = merge_fn(
        "  - target: {kind: Deployment|StatefulSet|DaemonSet|Job}
    type: json6902
    patch:
    - op: add
      path: /spec/template/spec/containers/[*]/imagePullPolicy
      value: Always
",
    );
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 0, "{results:?}");
    let mut set = 0;
    for item in &items {
        for c in item
            .pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            assert_eq!(c["imagePullPolicy"], "Always", "{c}");
            set += 1;
        }
    }
    assert_eq!(set, 5);
    // The init container is not in containers: untouched.
    assert!(items[0]
        .pointer("/spec/template/spec/initContainers/0/imagePullPolicy")
        .is_none());
    assert_eq!(
        results,
        ["info: patch[0] (json6902): applied to 4 resource(s)"]
    );
}

#[test]
fn at_with_a_key_and_wildcards_at_two_levels() {
    let config = merge_fn(
        "  - target: {kind: Deployment}
    at: spec.template.spec.containers[name=app].env[*]
    patch: {valueFrom: null, value: set}
  - target: {kind: Deployment}
    at: spec.template.spec.containers[*].env[name=CA]
    type: json6902
    patch: [{op: add, path: /value, value: /ca.pem}]
",
    );
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 0, "{results:?}");
    assert_eq!(
        items[0]
            .pointer("/spec/template/spec/containers/0/env")
            .unwrap(),
        &json!([{"name": "LOG_LEVEL", "value": "set"}, {"name": "CA", "value": "/ca.pem"}])
    );
    assert_eq!(
        results,
        [
            "info: patch[0] (merge2 at spec.template.spec.containers[name=app].env[*]): 2 places in 1 resource",
            "info: patch[1] (json6902 at spec.template.spec.containers[*].env[name=CA]): 1 place in 1 resource",
        ]
    );
}

#[test]
fn named_starts_reach_the_pod_template_and_the_pod_spec() {
    let config = merge_fn(&format!(
        "  - target: {{kind: \"{EVERY_KIND}\"}}
    at: \"@podTemplate\"
    type: jsonmerge
    patch: {{metadata: {{annotations: {{example.com/rev: \"2\"}}}}}}
  - target: {{kind: \"{EVERY_KIND}\"}}
    at: \"@podSpec\"
    patch: {{serviceAccountName: runner}}
"
    ));
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 0, "{results:?}");
    for item in &items {
        let kind = item["kind"].as_str().unwrap();
        if kind == "Service" {
            continue;
        }
        let spec = pod_spec_of(kind);
        assert_eq!(
            item.pointer(&format!("{spec}/serviceAccountName")),
            Some(&json!("runner")),
            "{kind}"
        );
        let template = spec.strip_suffix("/spec").unwrap();
        let annotated = item.pointer(&format!("{template}/metadata/annotations/example.com~1rev"));
        // A Pod is a pod spec without a template.
        assert_eq!(annotated.is_some(), kind != "Pod", "{kind}");
    }
    assert_eq!(
        results,
        [
            "info: patch[0] (jsonmerge at @podTemplate): 5 pod templates in 5 resources",
            "info: patch[1] (merge2 at @podSpec): 6 pod specs in 6 resources",
        ]
    );
}

#[test]
fn env_under_a_container_still_merges_by_name_and_ports_by_port_and_protocol() {
    let items = "\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    ports:
    - {containerPort: 53, protocol: UDP}
    - {containerPort: 53}
";
    let config = merge_fn(
        "  - target: {kind: Pod}
    at: \"@containers\"
    patch:
      ports:
      - {containerPort: 53, protocol: TCP, name: dns-tcp}
",
    );
    let (code, out, _) = run(&config, items);
    assert_eq!(code, 0);
    assert_eq!(
        out[0].pointer("/spec/containers/0/ports").unwrap(),
        &json!([{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"}])
    );
}

// ----- the rules for places that are not there ------------------------------------------------

const TWO_CONTAINERS: &str = "\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: with-env
    env:
    - {name: DEBUG, value: '1'}
    - {name: KEEP, value: '2'}
  - name: without-env
";

const NO_CONTAINERS: &str = "\
apiVersion: v1
kind: Pod
metadata: {name: empty}
spec:
  containers: []
---
apiVersion: v1
kind: Pod
metadata: {name: none}
spec: {}
";

/// A json6902 patch of one operation for the Pod. The operations write fields a Pod does not
/// have (`saved`, `names`): the schema check's findings stay warnings.
fn json_patch(op: &str) -> String {
    merge_fn(&format!(
        "  - target: {{kind: Pod}}\n    type: json6902\n    options: {{validation: warn}}\n    patch: [{op}]\n"
    ))
}

#[test]
fn rule_a_wildcard_that_selects_nothing_does_nothing_for_every_op() {
    let ops = [
        "{op: add, path: '/spec/containers/[*]/env/-', value: {name: X}}",
        "{op: remove, path: '/spec/containers/[*]/env'}",
        "{op: replace, path: '/spec/containers/[*]/image', value: x}",
        "{op: test, path: '/spec/containers/[*]/image', value: x}",
        "{op: copy, from: /metadata/name, path: '/spec/containers/[*]/name'}",
        // (To a field Pods have: the schema check would otherwise warn of an unknown one.)
        "{op: move, from: '/spec/containers/[*]', path: /spec/hostname}",
    ];
    for op in ops {
        let (code, items, results) = run(&json_patch(op), NO_CONTAINERS);
        assert_eq!(code, 0, "{op}: {results:?}");
        assert_eq!(items, docs(NO_CONTAINERS), "{op}");
        // Nothing reached anywhere: a warning, as for a target that selects nothing.
        assert_eq!(results.len(), 1, "{op}: {results:?}");
        assert!(
            results[0].starts_with("warning: patch[0] (json6902): op 0 (")
                && results[0].ends_with(") reaches no place in the 2 resources the target selects"),
            "{op}: {results:?}"
        );
    }
}

#[test]
fn rule_add_below_a_wildcard_makes_the_missing_list() {
    let (code, items, results) = run(
        &json_patch("{op: add, path: '/spec/containers/[*]/env/-', value: {name: CA, value: x}}"),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 0, "{results:?}");
    assert_eq!(
        items[0].pointer("/spec/containers/0/env/2"),
        Some(&json!({"name": "CA", "value": "x"}))
    );
    assert_eq!(
        items[0].pointer("/spec/containers/1/env"),
        Some(&json!([{"name": "CA", "value": "x"}]))
    );
    // A selector below the wildcard must find its element: it names what is there.
    let (code, _, results) = run(
        &json_patch("{op: add, path: '/spec/containers/[*]/env/[name=KEEP]/value', value: x}"),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 1);
    assert_eq!(
        results,
        ["error: patch[0] (json6902): op 0 (add /spec/containers/[*]/env/[name=KEEP]/value): at /spec/containers/1/env/[name=KEEP]/value: path does not exist (nothing at /spec/containers/1/env)"]
    );
}

#[test]
fn rule_remove_and_replace_skip_the_places_that_lack_their_target() {
    let (code, items, results) = run(
        &json_patch("{op: remove, path: '/spec/containers/[*]/env/[name=DEBUG]'}"),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 0, "{results:?}");
    assert_eq!(
        items[0].pointer("/spec/containers/0/env"),
        Some(&json!([{"name": "KEEP", "value": "2"}]))
    );
    assert_eq!(
        items[0].pointer("/spec/containers/1"),
        Some(&json!({"name": "without-env"}))
    );
    let (code, items, _) = run(
        &json_patch("{op: replace, path: '/spec/containers/[*]/env/0/value', value: '9'}"),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 0);
    assert_eq!(
        items[0].pointer("/spec/containers/0/env/0/value"),
        Some(&json!("9"))
    );
    assert_eq!(
        items[0].pointer("/spec/containers/1"),
        Some(&json!({"name": "without-env"}))
    );
}

#[test]
fn rule_test_holds_when_it_holds_at_every_place_and_fails_at_a_missing_one() {
    let (code, _, _) = run(
        &json_patch("{op: test, path: '/spec/containers/[*]/name', value: with-env}"),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 1);
    let (code, _, results) = run(
        &json_patch("{op: test, path: '/spec/containers/[*]/env/0/name', value: DEBUG}"),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 1);
    assert_eq!(
        results,
        ["error: patch[0] (json6902): op 0 (test /spec/containers/[*]/env/0/name): at /spec/containers/1/env/0/name: path does not exist (nothing at /spec/containers/1/env)"]
    );
    let (code, _, _) = run(
        &merge_fn("  - target: {kind: Pod}\n    type: json6902\n    patch:\n    - {op: test, path: '/spec/containers/[*]/env/[*]/value', value: x}\n    - {op: test, path: '/spec/containers/[*]/env/[name=KEEP]', value: {name: KEEP, value: '2'}}\n"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: a, env: [{name: KEEP, value: '2'}]}\n  - {name: b, env: []}\n",
    );
    assert_eq!(code, 1, "the first test fails at KEEP's value");
}

#[test]
fn rule_move_and_copy_skip_a_missing_from_and_make_the_destination() {
    // Each container's env moves under a new key of the same container; the one without env
    // is skipped.
    // `saved` is no field of a container: the schema check's finding stays a warning.
    let (code, items, results) = run(
        &merge_fn(
            "  - target: {kind: Pod}\n    type: json6902\n    options: {validation: warn}\n    \
             patch: [{op: move, from: '/spec/containers/[*]/env', path: '/spec/containers/[*]/saved/env'}]\n",
        ),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 0, "{results:?}");
    assert_eq!(
        items[0].pointer("/spec/containers/0"),
        Some(
            &json!({"name": "with-env", "saved": {"env": [{"name": "DEBUG", "value": "1"}, {"name": "KEEP", "value": "2"}]}})
        )
    );
    assert_eq!(
        items[0].pointer("/spec/containers/1"),
        Some(&json!({"name": "without-env"}))
    );
    // Every env var of every container, in document order, to one list.
    let (_, items, _) = run(
        &json_patch("{op: copy, from: '/spec/containers/[*]/env/[*]/name', path: /spec/names}"),
        TWO_CONTAINERS,
    );
    assert_eq!(
        items[0].pointer("/spec/names"),
        Some(&json!("KEEP")),
        "each replaces the one before"
    );
    let (_, items, _) = run(
        &merge_fn("  - target: {kind: Pod}\n    type: json6902\n    options: {validation: warn}\n    patch:\n    - {op: add, path: /spec/names, value: []}\n    - {op: copy, from: '/spec/containers/[*]/env/[*]/name', path: /spec/names/-}\n"),
        TWO_CONTAINERS,
    );
    assert_eq!(
        items[0].pointer("/spec/names"),
        Some(&json!(["DEBUG", "KEEP"]))
    );
    // A [*] in path that from does not pair is refused when the config is read.
    let (code, _, results) = run(
        &json_patch("{op: move, from: /spec/containers/0, path: '/spec/containers/[*]/x'}"),
        TWO_CONTAINERS,
    );
    assert_eq!(code, 1);
    assert_eq!(
        results,
        ["error: invalid functionConfig: a move takes each value from one place: its path may hold [*] only where its from holds the same [*]"]
    );
}

#[test]
fn rule_json6902_pointers_at_places_are_below_a_wildcard() {
    // At each container, add /env/- makes the list where a container has none, and remove of a
    // variable skips the containers without it.
    let config = merge_fn(
        "  - target: {kind: Pod}
    at: \"@containers\"
    type: json6902
    patch:
    - {op: add, path: /env/-, value: {name: CA, value: x}}
    - {op: remove, path: '/env/[name=DEBUG]'}
",
    );
    let (code, items, results) = run(&config, TWO_CONTAINERS);
    assert_eq!(code, 0, "{results:?}");
    assert_eq!(
        items[0].pointer("/spec/containers"),
        Some(&json!([
            {"name": "with-env", "env": [{"name": "KEEP", "value": "2"}, {"name": "CA", "value": "x"}]},
            {"name": "without-env", "env": [{"name": "CA", "value": "x"}]},
        ]))
    );
    assert_eq!(
        results,
        ["info: patch[0] (json6902 at @containers): 2 containers in 1 resource"]
    );
    // An operation that acts at no place anywhere is a warning.
    let config = merge_fn(
        "  - target: {kind: Pod}
    at: \"@containers\"
    type: json6902
    patch: [{op: remove, path: '/env/[name=NONE]'}]
",
    );
    let (code, items, results) = run(&config, TWO_CONTAINERS);
    assert_eq!(code, 0);
    assert_eq!(items, docs(TWO_CONTAINERS));
    assert_eq!(
        results,
        ["warning: patch[0] (json6902 at @containers): op 0 (remove /env/[name=NONE]) reaches no place in the 1 resource the target selects"]
    );
}

// ----- at: finding nothing, and failing ------------------------------------------------------

#[test]
fn an_at_that_finds_nothing_in_any_resource_is_a_warning() {
    let config = merge_fn(
        "  - target: {kind: Service|ConfigMap}
    at: \"@containers\"
    patch: {imagePullPolicy: Always}
",
    );
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 0);
    assert_eq!(items, docs(WORKLOADS));
    assert_eq!(
        results,
        ["warning: patch[0] (merge2 at @containers): at @containers finds nothing in the 1 resource the target selects"]
    );
}

#[test]
fn a_failure_at_a_place_names_it_and_changes_nothing() {
    let config = merge_fn(
        "  - target: {kind: Deployment}
    at: \"@containers\"
    type: json6902
    patch: [{op: test, path: /image, value: web:2}]
",
    );
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 1);
    assert_eq!(items, docs(WORKLOADS));
    assert_eq!(
        results,
        ["error: patch[0] (json6902): at spec.template.spec.initContainers[name=migrate]: op 0 (test /image): value does not match"]
    );
    // A resource that does not have the shape the at: describes.
    let config = merge_fn(
        "  - target: {kind: Deployment}
    at: metadata.name[*]
    patch: {a: 1}
",
    );
    let (code, _, results) = run(&config, WORKLOADS);
    assert_eq!(code, 1);
    assert_eq!(
        results,
        ["error: patch[0] (merge2): at metadata.name: a scalar where the pattern needs a list"]
    );
    // A merge error at a place carries the whole path.
    let config = merge_fn(
        "  - target: {kind: Deployment}
    at: \"@containers\"
    patch: {env: [{value: no-name}]}
",
    );
    let out = krm(&[], &resource_list(WORKLOADS, node(&config)));
    assert_eq!(out.code, 1);
    let r = &rl_results(&out.stdout)[0];
    assert_eq!(
        r["field"]["path"], "spec.template.spec.initContainers[name=migrate].env[0]",
        "{r}"
    );
}

// ----- what a patch adds at its places: one budget per resource ------------------------------

/// A Deployment with `n` containers.
fn deployment_with(n: usize) -> String {
    let mut s = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: wide}\nspec:\n  template:\n    spec:\n      containers:\n",
    );
    for i in 0..n {
        writeln!(s, "      - {{name: c{i}, image: img}}").unwrap();
    }
    s
}

/// What a patch adds at its places (each copy of its value, or of the whole merge patch)
/// counts against one budget for the resource: its own size and 16 MiB. Every place of an
/// `at:` spends from it, and so does every place a `[*]` selects — not a fresh budget at each
/// place. A megabyte at 10 containers passes; at 40 it is refused, naming the place where the
/// budget ran out, and the resource is left as it came.
#[test]
fn what_a_patch_adds_at_its_places_counts_against_one_budget_per_resource() {
    let big = "x".repeat(1 << 20);
    let forms = [
        format!(
            "  - target: {{kind: Deployment}}\n    at: \"@containers\"\n    type: json6902\n    patch: '[{{op: add, path: /args, value: [{big}]}}]'\n"
        ),
        format!(
            "  - target: {{kind: Deployment}}\n    type: json6902\n    patch: '[{{op: add, path: \"/spec/template/spec/containers/[*]/args\", value: [{big}]}}]'\n"
        ),
        format!(
            "  - target: {{kind: Deployment}}\n    at: \"@containers\"\n    patch: '{{args: [{big}]}}'\n"
        ),
    ];
    for patch in &forms {
        let config = merge_fn(patch);
        let (code, items, results) = run(&config, &deployment_with(10));
        assert_eq!(code, 0, "{results:?}");
        let all = containers(&items[0], "/spec/template/spec");
        assert!(all.iter().all(|c| c["args"][0] == big.as_str()));
        let many = deployment_with(40);
        let (code, items, results) = run(&config, &many);
        assert_eq!(code, 1);
        assert_eq!(items, docs(&many), "all or nothing");
        let [error] = &results[..] else {
            panic!("{results:?}")
        };
        assert!(
            error.starts_with("error: patch[0] (")
                && error.contains("would grow the resource by more than"),
            "{error}"
        );
        assert!(
            error.contains(" at ") && error.contains("containers"),
            "{error}"
        );
    }
}

#[test]
fn patch_delete_at_a_place_removes_it() {
    let config = merge_fn(
        "  - target: {kind: Deployment|CronJob}
    at: \"@containers[name=proxy]\"
    patch: {$patch: delete}
",
    );
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 0, "{results:?}");
    let names: Vec<&str> = containers(&items[0], "/spec/template/spec")
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["migrate", "app"]);
    assert_eq!(
        results,
        ["info: patch[0] (merge2 at @containers[name=proxy]): 1 container in 1 resource"]
    );
}

#[test]
fn merge3_at_each_container_reports_conflicts_from_the_root() {
    let config = merge_fn(
        "  - target: {kind: Deployment}
    type: merge3
    at: \"@containers[name=app]\"
    original: {image: web:1}
    patch: {image: web:3}
",
    );
    let (code, items, results) = run(&config, WORKLOADS);
    assert_eq!(code, 0);
    assert_eq!(
        items[0].pointer("/spec/template/spec/containers/0/image"),
        Some(&json!("web:3"))
    );
    assert_eq!(
        results,
        [
            "warning: patch[0] (merge3 at @containers[name=app]): conflict: changed locally to web:2 and upstream to web:3; took upstream",
            "info: patch[0] (merge3 at @containers[name=app]): 1 container in 1 resource",
        ]
    );
    let out = krm(&[], &resource_list(WORKLOADS, node(&config)));
    assert_eq!(
        rl_results(&out.stdout)[0]["field"]["path"],
        "spec.template.spec.containers[name=app].image"
    );
}

#[test]
fn custom_resources_declare_where_they_keep_their_pods() {
    let config = format!(
        "{}  schema:
    workloads:
    - {{group: ci.example.com, kind: Pipeline, podTemplate: 'spec.steps[*].template'}}
",
        merge_fn(
            "  - target: {kind: Pipeline}
    at: \"@containers\"
    patch: {resources: {limits: {memory: 1Gi}}}
",
        )
    );
    let items = "\
apiVersion: ci.example.com/v1
kind: Pipeline
metadata: {name: build}
spec:
  steps:
  - template:
      spec:
        containers: [{name: compile}, {name: test}]
  - template:
      spec:
        initContainers: [{name: fetch}]
        containers: [{name: publish}]
";
    let (code, out, results) = run(&config, items);
    assert_eq!(code, 0, "{results:?}");
    let limits: Vec<&Value> = [
        "/spec/steps/0/template/spec/containers/0",
        "/spec/steps/0/template/spec/containers/1",
        "/spec/steps/1/template/spec/initContainers/0",
        "/spec/steps/1/template/spec/containers/0",
    ]
    .iter()
    .map(|p| {
        out[0]
            .pointer(&format!("{p}/resources/limits/memory"))
            .unwrap()
    })
    .collect();
    assert_eq!(limits, [&json!("1Gi"); 4]);
    assert_eq!(
        results,
        ["info: patch[0] (merge2 at @containers): 4 containers in 1 resource"]
    );
}

#[test]
fn the_configmap_form_takes_at() {
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fn}\ndata:\n  kind: Job\n  at: '@containers'\n  patch: '{imagePullPolicy: Never}'\n";
    let (code, items, results) = run(config, WORKLOADS);
    assert_eq!(code, 0, "{results:?}");
    assert_eq!(
        items[3].pointer("/spec/template/spec/containers/0/imagePullPolicy"),
        Some(&json!("Never"))
    );
}

#[test]
fn a_wildcard_over_a_long_list_stays_linear() {
    // 100,000 elements, each given a sibling before it, then every element removed: one
    // insertion or removal at a time would move the list's tail 10^10 times.
    let mut items = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\nlist:\n");
    for i in 0..100_000 {
        writeln!(items, "- {i}").unwrap();
    }
    let config = merge_fn(
        "  - target: {kind: ConfigMap}
    type: json6902
    options: {validation: warn} # list is no ConfigMap field
    patch:
    - {op: add, path: '/list/[*]', value: x}
    - {op: test, path: /list/1, value: 0}
    - {op: remove, path: '/list/[*]'}
",
    );
    let started = std::time::Instant::now();
    let (code, out, results) = run(&config, &items);
    assert_eq!(code, 0, "{results:?}");
    assert_eq!(out[0]["list"], json!([]));
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}

/// The guide's table of named starts is what the schema derives: the code and the table
/// cannot drift.
#[test]
fn the_guide_table_of_named_starts_is_what_the_schema_derives() {
    let readme = std::fs::read_to_string(root().join("doc/GUIDE.md")).expect("doc/GUIDE.md");
    let table = readme
        .split("<!-- pod places: begin -->\n")
        .nth(1)
        .and_then(|t| t.split("<!-- pod places: end -->").next())
        .expect("the guide marks its table of named starts");
    let shown = |parts: &[Vec<Part>]| {
        parts
            .iter()
            .map(|p| {
                format!(
                    "`{}`",
                    Pattern {
                        start: None,
                        parts: p.clone()
                    }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut want =
        String::from("| apiVersion | kind | `@podTemplate` | `@podSpec` |\n|---|---|---|---|\n");
    for k in Schema::builtin().builtin_pod_kinds() {
        if k.kind.ends_with("List") {
            continue; // the guide says: the same under items[*] (src/schema/pods.rs checks it)
        }
        let api = if k.group.is_empty() {
            k.version.to_owned()
        } else {
            format!("{}/{}", k.group, k.version)
        };
        let specs: Vec<Vec<Part>> = k
            .templates
            .iter()
            .map(|t| [t.clone(), vec![Part::Field("spec".into())]].concat())
            .chain(k.specs.iter().cloned())
            .collect();
        writeln!(
            want,
            "| `{api}` | {} | {} | {} |",
            k.kind,
            shown(&k.templates),
            shown(&specs)
        )
        .unwrap();
    }
    // An empty cell is written `| |`.
    assert_eq!(table, want.replace("|  |", "| |"));
}

// ----- the property: @containers is one patch per container, addressed by name ---------------

#[derive(Clone, Debug)]
struct Container {
    name: String,
    /// (name, value), names distinct.
    env: Vec<(String, String)>,
    /// It sets an image pull policy of its own.
    policy: bool,
}

#[derive(Clone, Debug)]
struct Workload {
    kind: &'static str,
    init: Vec<Container>,
    containers: Vec<Container>,
}

const KINDS: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "Pod",
];

fn container(prefix: &'static str) -> impl Strategy<Value = Container> {
    (
        0..4u8,
        prop::collection::vec(
            (prop::sample::select(vec!["A", "B", "CA"]), "[a-z]{1,3}"),
            0..3,
        ),
        any::<bool>(),
    )
        .prop_map(move |(n, env, policy)| {
            let mut seen = Vec::new();
            let env = env
                .into_iter()
                .filter(|(k, _)| {
                    let fresh = !seen.contains(k);
                    seen.push(*k);
                    fresh
                })
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            Container {
                name: format!("{prefix}{n}"),
                env,
                policy,
            }
        })
}

fn unique(mut cs: Vec<Container>) -> Vec<Container> {
    let mut seen = Vec::new();
    cs.retain(|c| {
        let fresh = !seen.contains(&c.name);
        seen.push(c.name.clone());
        fresh
    });
    cs
}

fn workload() -> impl Strategy<Value = Workload> {
    (
        prop::sample::select(KINDS.to_vec()),
        prop::collection::vec(container("init"), 0..3),
        prop::collection::vec(container("c"), 1..4),
    )
        .prop_map(|(kind, init, containers)| Workload {
            kind,
            init: unique(init),
            containers: unique(containers),
        })
}

fn api_version(kind: &str) -> &'static str {
    match kind {
        "Pod" => "v1",
        "Job" | "CronJob" => "batch/v1",
        _ => "apps/v1",
    }
}

/// The pod spec's field path, and how deep it is indented.
fn spec_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pod" => &["spec"],
        "CronJob" => &["spec", "jobTemplate", "spec", "template", "spec"],
        _ => &["spec", "template", "spec"],
    }
}

fn write_workload(i: usize, w: &Workload) -> String {
    let mut out = format!(
        "apiVersion: {}\nkind: {}\nmetadata:\n  name: w{i}\n",
        api_version(w.kind),
        w.kind
    );
    let fields = spec_fields(w.kind);
    for (d, f) in fields.iter().enumerate() {
        writeln!(out, "{}{f}:", "  ".repeat(d)).unwrap();
    }
    let pad = "  ".repeat(fields.len());
    for (list, cs) in [("initContainers", &w.init), ("containers", &w.containers)] {
        if cs.is_empty() {
            continue;
        }
        writeln!(out, "{pad}{list}:").unwrap();
        for c in cs {
            writeln!(out, "{pad}- name: {} # {}'s comment", c.name, c.name).unwrap();
            writeln!(out, "{pad}  image: img").unwrap();
            if c.policy {
                writeln!(out, "{pad}  imagePullPolicy: IfNotPresent").unwrap();
            }
            if !c.env.is_empty() {
                writeln!(out, "{pad}  env:").unwrap();
                for (k, v) in &c.env {
                    writeln!(out, "{pad}  - name: {k}\n{pad}    value: {v}").unwrap();
                }
            }
        }
    }
    out
}

const CONTAINER_PATCH: &str = "env:\n- name: CA\n  value: /ca.pem\nimagePullPolicy: Always\n";

/// The same patch as one strategic merge per container, each a partial resource that names the
/// container in its list: what users write today.
fn per_container_config(ws: &[Workload]) -> String {
    let mut patches = String::new();
    for (i, w) in ws.iter().enumerate() {
        for (list, cs) in [("initContainers", &w.init), ("containers", &w.containers)] {
            for Container { name, .. } in cs {
                let fields = spec_fields(w.kind);
                let mut doc = String::new();
                for (d, f) in fields.iter().enumerate() {
                    writeln!(doc, "{}{f}:", "  ".repeat(d)).unwrap();
                }
                let pad = "  ".repeat(fields.len());
                writeln!(doc, "{pad}{list}:\n{pad}- name: {name}").unwrap();
                for line in CONTAINER_PATCH.lines() {
                    writeln!(doc, "{pad}  {line}").unwrap();
                }
                write!(
                    patches,
                    "  - target: {{kind: {}, name: w{i}}}\n    patch: |\n{}",
                    w.kind,
                    doc.lines()
                        .map(|l| format!("      {l}\n"))
                        .collect::<String>()
                )
                .unwrap();
            }
        }
    }
    merge_fn(&patches)
}

fn plan_of(config: &str) -> config::Plan {
    config::plan(&node(config), None).unwrap_or_else(|e| panic!("{e}\n{config}"))
}

proptest! {
    #![proptest_config(Config { cases: 96, ..Config::default() })]

    #[test]
    fn at_containers_is_one_patch_per_container_addressed_by_name(
        ws in prop::collection::vec(workload(), 1..5)
    ) {
        let input: String = ws
            .iter()
            .enumerate()
            .map(|(i, w)| write_workload(i, w))
            .collect::<Vec<_>>()
            .join("---\n");
        let at = plan_of(&merge_fn(&format!(
            "  - target: {{kind: \"{}\"}}\n    at: \"@containers\"\n    patch: |\n{}",
            KINDS.join("|"),
            CONTAINER_PATCH.lines().map(|l| format!("      {l}\n")).collect::<String>()
        )));
        let each = plan_of(&per_container_config(&ws));
        let a = krm_merge::run_stream(&input, &at, None);
        let b = krm_merge::run_stream(&input, &each, None);
        prop_assert!(!a.failed() && !b.failed());
        prop_assert_eq!(&a.text, &b.text, "input:\n{}", input);
        prop_assert_eq!(a.text.matches("value: /ca.pem").count(), ws.iter().map(|w| w.init.len() + w.containers.len()).sum::<usize>());
    }
}
