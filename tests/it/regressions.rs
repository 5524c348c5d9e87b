//! Regression tests, one per issue they guard (ripgrep style): each runs the `krm-merge` binary
//! the way a user would and says in a comment which issue it is about. The issues are the
//! kustomize bugs users hit that krm-merge exists to fix (README "Why"), the built-in kinds users
//! patch most, and the behaviour of merge3 conflicts and apply.
//!
//! A test marked `#[ignore = "bug: ..."]` reproduces a product bug that is not fixed yet
//! (`cargo test --test it regressions:: -- --ignored` runs them); the conformance cases it explains,
//! if any, are listed in `KNOWN_BUGS` in tests/it/conformance.rs. Fixing the bug means removing the
//! `#[ignore]` and those entries.

use std::fs;
use std::path::PathBuf;

use serde_json::{json, Value};

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

/// The same, expecting success: the output documents as data.
fn filter_ok(test: &str, config: &str, resources: &str) -> Vec<Value> {
    let out = filter(test, config, resources);
    assert_eq!(
        out.code, 0,
        "stderr: {}\nstdout: {}",
        out.stderr, out.stdout
    );
    docs(&out.stdout)
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

/// A ResourceList holding one item and the functionConfig, both given as YAML text.
fn resource_list_text(item: &str, config: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}functionConfig:\n{}",
        indent_under(item, "- ", "  "),
        indent_under(config, "  ", "  ")
    )
}

/// A `Merge` functionConfig with one patch entry written as YAML (indented under `patches:`).
fn merge_fn(patch_entry: &str) -> String {
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: test\nspec:\n  patches:\n{}",
        indent_under(patch_entry, "  - ", "    ")
    )
}

/// The names of the elements of a list, in order.
fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|e| e["name"].as_str().unwrap_or("?"))
        .collect()
}

// ----- kustomize issues ------------------------------------------------------------------------

// https://github.com/kubernetes-sigs/kustomize/issues/2825
// A custom resource's list was replaced by a patch instead of merged: kustomize knew no merge keys
// for it. Here the CRD that travels with the resources is enough — no schema, no options.
#[test]
fn kustomize_2825_crd_lists_merge_by_key_from_a_crd_in_the_input() {
    let crd = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: services.example.com
spec:
  group: example.com
  names: {kind: MyService, plural: services}
  scope: Namespaced
  versions:
  - name: v1alpha1
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
                x-kubernetes-list-map-keys: [path]
                items:
                  type: object
                  properties:
                    path: {type: string}
                    backend: {type: string}
                    timeout: {type: string}
              template:
                type: object
                properties:
                  spec:
                    type: object
                    properties:
                      containers:
                        type: array
                        x-kubernetes-list-type: map
                        x-kubernetes-list-map-keys: [name]
                        items:
                          type: object
                          x-kubernetes-preserve-unknown-fields: true
"#;
    let cr = r#"apiVersion: example.com/v1alpha1
kind: MyService
metadata:
  name: service
spec:
  routes:
  - path: /api
    backend: api
    timeout: 5s
  - path: /web
    backend: web
  template:
    spec:
      terminationGracePeriodSeconds: 20
      containers:
      - name: server
        image: server
        command: [example]
        envFrom:
        - configMapRef: {name: configmap}
"#;
    // `path` is not one of the associative keys the heuristic knows, so only the CRD can say it.
    let config = merge_fn(
        r#"patch: |
  apiVersion: example.com/v1alpha1
  kind: MyService
  metadata:
    name: service
  spec:
    routes:
    - path: /api
      timeout: 30s
    template:
      spec:
        containers:
        - name: server
          image: nginx"#,
    );
    let out = filter_ok("2825", &config, &format!("{crd}---\n{cr}"));
    let spec = &out[1]["spec"];
    assert_eq!(
        spec["routes"],
        json!([
            {"path": "/api", "backend": "api", "timeout": "30s"},
            {"path": "/web", "backend": "web"},
        ])
    );
    assert_eq!(
        spec["template"]["spec"]["containers"],
        json!([{
            "name": "server", "image": "nginx", "command": ["example"],
            "envFrom": [{"configMapRef": {"name": "configmap"}}],
        }])
    );
    assert_eq!(
        spec["template"]["spec"]["terminationGracePeriodSeconds"],
        20
    );

    // Without the CRD nothing knows the key of `routes`: the patch's list replaces it.
    let without = filter_ok("2825-without-crd", &config, cr);
    assert_eq!(
        without[0]["spec"]["routes"],
        json!([{"path": "/api", "timeout": "30s"}])
    );
}

// https://github.com/kubernetes-sigs/kustomize/issues/3513
// One port number with two protocols (DNS: 53/TCP and 53/UDP): merged on containerPort alone, the
// two collapsed into one. Ports pair on containerPort + protocol, and a missing protocol is TCP.
// Under kustomize's options the output is kustomize's (as `kubectl kustomize` gives it): the patch
// element without a protocol pairs with neither port, and its hostPort is lost.
#[test]
fn kustomize_3513_ports_with_one_number_and_two_protocols() {
    let deployment = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: dns
spec:
  template:
    spec:
      containers:
      - name: dns
        image: dns:1
        ports:
        - containerPort: 53
          protocol: TCP
          name: dns-tcp
        - containerPort: 53
          protocol: UDP
          name: dns-udp
"#;
    let fixed = json!([
        {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp", "hostPort": 1053},
        {"containerPort": 53, "protocol": "UDP", "name": "dns-udp", "hostPort": 5353},
    ]);
    let kustomize = json!([
        {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"},
        {"containerPort": 53, "protocol": "UDP", "name": "dns-udp", "hostPort": 5353},
    ]);
    for (options, want) in [
        ("{}", fixed),
        ("{newListItems: prepend, inferMergeKeys: false}", kustomize),
    ] {
        let config = merge_fn(&format!(
            r#"patch: |
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: dns
  spec:
    template:
      spec:
        containers:
        - name: dns
          ports:
          - containerPort: 53
            protocol: UDP
            hostPort: 5353
          - containerPort: 53
            hostPort: 1053
options: {options}"#
        ));
        let out = filter_ok("3513", &config, deployment);
        let mut ports = out[0]["spec"]["template"]["spec"]["containers"][0]["ports"].clone();
        if let Some(p) = ports.as_array_mut() {
            p.sort_by_key(|p| p["name"].as_str().map(str::to_owned));
        }
        assert_eq!(ports, want, "options {options}");
    }
}

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

// https://github.com/kubernetes-sigs/kustomize/issues/3157
// After an upgrade, kustomize wrote merged env variables in another order. With the default
// `newListItems: append` the resource's order is kept and new variables come last.
#[test]
fn kustomize_3157_env_order_is_kept() {
    let deployment = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: test-deployment
spec:
  template:
    spec:
      containers:
      - name: app
        image: app
      initContainers:
      - {name: a, image: a}
      - name: b
        image: b
        env:
        - {name: FIRST, value: "1"}
        - {name: SECOND, value: "2"}
        - {name: THIRD, value: "3"}
      - {name: c, image: c}
"#;
    let config = merge_fn(
        r#"patch: |
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: test-deployment
  spec:
    template:
      spec:
        initContainers:
        - name: b
          env:
          - {name: NEW, value: "4"}
          - {name: THIRD, value: "three"}
          - {name: FIRST, value: "one"}
target: {kind: Deployment}"#,
    );
    let out = filter_ok("3157", &config, deployment);
    let spec = &out[0]["spec"]["template"]["spec"];
    assert_eq!(names(&spec["initContainers"]), ["a", "b", "c"]);
    assert_eq!(
        spec["initContainers"][1]["env"],
        json!([
            {"name": "FIRST", "value": "one"},
            {"name": "SECOND", "value": "2"},
            {"name": "THIRD", "value": "three"},
            {"name": "NEW", "value": "4"},
        ])
    );
}

/// A kustomize `PatchTransformer` config (kustomize's own options) patching `target: {kind}`.
fn patch_transformer(kind: &str, patch: &str) -> String {
    format!(
        "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: directives\npatch: |\n{}target:\n  kind: {kind}\n",
        indent_under(patch, "  ", "  ")
    )
}

// https://github.com/kubernetes-sigs/kustomize/issues/2037
// kustomize did not respect `$retainKeys` (users had to write `persistentVolumeClaim: null` to
// switch a volume's source) and wrote the directive out. The directive clears the union members
// the patch does not keep, on maps (Deployment strategy) and list elements (volumes), and is
// never written out.
#[test]
fn kustomize_2037_retain_keys() {
    let deployment = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
  template:
    spec:
      containers:
      - name: db
        image: db
      volumes:
      - name: data
        persistentVolumeClaim:
          claimName: data
      - name: config
        configMap:
          name: config
"#;
    let config = patch_transformer(
        "Deployment",
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  strategy:
    $retainKeys: [type]
    type: Recreate
  template:
    spec:
      volumes:
      - name: data
        $retainKeys: [name, emptyDir]
        emptyDir: {}"#,
    );
    let out = filter("2037-retain-keys", &config, deployment);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("$retainKeys"), "{}", out.stdout);
    let d = &docs(&out.stdout)[0];
    assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
    let mut volumes = d["spec"]["template"]["spec"]["volumes"].clone();
    if let Some(v) = volumes.as_array_mut() {
        v.sort_by_key(|v| v["name"].as_str().map(str::to_owned));
    }
    assert_eq!(
        volumes,
        json!([
            {"name": "config", "configMap": {"name": "config"}},
            {"name": "data", "emptyDir": {}},
        ])
    );
}

// https://github.com/kubernetes-sigs/kustomize/issues/2037 (and #2954: "unknown field
// $setElementOrder/containers"): kustomize wrote `$setElementOrder/<list>` into its output, which
// the API server rejects. The directive orders the list and is never written out.
#[test]
fn kustomize_2037_set_element_order() {
    let deployment = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: app
        image: app
        env:
        - {name: A, value: a}
        - {name: B, value: b}
        - {name: C, value: c}
      - name: proxy
        image: proxy
"#;
    let config = patch_transformer(
        "Deployment",
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      $setElementOrder/containers:
      - name: proxy
      - name: app
      containers:
      - name: app
        $setElementOrder/env:
        - name: C
        - name: A
        - name: B
        env:
        - {name: A, value: a2}"#,
    );
    let out = filter("2037-set-element-order", &config, deployment);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("$setElementOrder"), "{}", out.stdout);
    let containers = docs(&out.stdout)[0]["spec"]["template"]["spec"]["containers"].clone();
    assert_eq!(names(&containers), ["proxy", "app"]);
    assert_eq!(
        containers[1]["env"],
        json!([
            {"name": "C", "value": "c"},
            {"name": "A", "value": "a2"},
            {"name": "B", "value": "b"},
        ])
    );
}

// https://github.com/kubernetes-sigs/kustomize/issues/2037: `$deleteFromPrimitiveList/<list>`
// was written out as a field. It removes those values from a list of scalars (a set, like
// finalizers, or a plain list) and is never written out.
#[test]
fn kustomize_2037_delete_from_primitive_list() {
    let resources = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  finalizers: [example.com/a, example.com/b, example.com/c]
data:
  k: v
"#;
    let config = patch_transformer(
        "ConfigMap",
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  $deleteFromPrimitiveList/finalizers: [example.com/b, example.com/missing]"#,
    );
    let out = filter("2037-delete-from-primitive-list", &config, resources);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stdout.contains("$deleteFromPrimitiveList"),
        "{}",
        out.stdout
    );
    assert_eq!(
        docs(&out.stdout)[0]["metadata"]["finalizers"],
        json!(["example.com/a", "example.com/c"])
    );
}

// ----- built-in kinds --------------------------------------------------------------------------
//
// Run with `inferMergeKeys: false`, so that every list that merges by key does so because the
// built-in schema says so, not because of the associative-key heuristic.

fn no_infer(patch: &str) -> String {
    merge_fn(&format!(
        "patch: |\n{}options: {{inferMergeKeys: false}}",
        indent_under(patch, "  ", "  ")
    ))
}

/// The same with the default options (the heuristic on).
fn with_infer(patch: &str) -> String {
    merge_fn(&format!(
        "patch: |\n{}",
        indent_under(patch, "  ", "  ").trim_end()
    ))
}

#[test]
fn builtin_deployment_containers_env_and_volume_mounts_merge_by_key() {
    let deployment = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - {name: LOG, value: info}
        volumeMounts:
        - {name: data, mountPath: /data}
      - name: sidecar
        image: sidecar:1
"#;
    let config = no_infer(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: app
        image: app:2
        env:
        - {name: LOG, value: debug}
        - {name: NEW, value: "1"}
        volumeMounts:
        - {name: cache, mountPath: /cache}"#,
    );
    let d = &filter_ok("deployment", &config, deployment)[0];
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(
        d["spec"]["selector"],
        json!({"matchLabels": {"app": "web"}})
    );
    let containers = &d["spec"]["template"]["spec"]["containers"];
    assert_eq!(names(containers), ["app", "sidecar"]);
    assert_eq!(
        containers[0],
        json!({
            "name": "app", "image": "app:2",
            "env": [{"name": "LOG", "value": "debug"}, {"name": "NEW", "value": "1"}],
            "volumeMounts": [
                {"name": "data", "mountPath": "/data"},
                {"name": "cache", "mountPath": "/cache"},
            ],
        })
    );
    assert_eq!(
        containers[1],
        json!({"name": "sidecar", "image": "sidecar:1"})
    );
}

// The built-in schema gives StatefulSetSpec.volumeClaimTemplates `x-kubernetes-list-type: atomic`
// and no patch strategy, so a patch's list replaces it (as `kubectl patch` does), whatever the
// heuristic would say; the pod template's containers still merge by name.
#[test]
fn builtin_statefulset_volume_claim_templates_are_replaced_and_containers_merge() {
    let sts = r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  template:
    spec:
      containers:
      - name: db
        image: db:1
        volumeMounts:
        - {name: data, mountPath: /var/lib/db}
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
  - metadata:
      name: logs
    spec:
      resources:
        requests:
          storage: 1Gi
"#;
    let patch = r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: db
        image: db:2
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      resources:
        requests:
          storage: 10Gi"#;
    let replaced = json!([{
        "metadata": {"name": "data"},
        "spec": {"resources": {"requests": {"storage": "10Gi"}}},
    }]);
    for (test, config) in [("sts", no_infer(patch)), ("sts-infer", with_infer(patch))] {
        let d = &filter_ok(test, &config, sts)[0];
        assert_eq!(d["spec"]["volumeClaimTemplates"], replaced, "{test}");
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"],
            json!([{
                "name": "db", "image": "db:2",
                "volumeMounts": [{"name": "data", "mountPath": "/var/lib/db"}],
            }]),
            "{test}"
        );
        assert_eq!(d["spec"]["serviceName"], "db");
    }
}

// Pod: containers and initContainers merge by name, volumes by name; tolerations are atomic in
// the built-in schema (no patch strategy), so the patch's list replaces them.
#[test]
fn builtin_pod_containers_volumes_and_tolerations() {
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  initContainers:
  - {name: init, image: init:1}
  containers:
  - {name: app, image: app:1}
  - {name: log, image: log:1}
  volumes:
  - name: data
    emptyDir: {}
  tolerations:
  - {key: a, operator: Exists}
  - {key: b, operator: Exists}
"#;
    let config = no_infer(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  initContainers:
  - {name: init, image: init:2}
  containers:
  - {name: log, image: log:2}
  volumes:
  - name: config
    configMap: {name: cfg}
  tolerations:
  - {key: c, operator: Exists}"#,
    );
    let d = &filter_ok("pod", &config, pod)[0];
    let spec = &d["spec"];
    assert_eq!(
        spec["initContainers"],
        json!([{"name": "init", "image": "init:2"}])
    );
    assert_eq!(
        spec["containers"],
        json!([{"name": "app", "image": "app:1"}, {"name": "log", "image": "log:2"}])
    );
    assert_eq!(
        spec["volumes"],
        json!([
            {"name": "data", "emptyDir": {}},
            {"name": "config", "configMap": {"name": "cfg"}},
        ])
    );
    assert_eq!(
        spec["tolerations"],
        json!([{"key": "c", "operator": "Exists"}])
    );
}

// Service ports pair on port + protocol (list-map-keys), a missing protocol being TCP: 53/TCP and
// 53/UDP are two ports, and a patch can change either.
#[test]
fn builtin_service_ports_pair_on_port_and_protocol() {
    let svc = r#"apiVersion: v1
kind: Service
metadata:
  name: dns
spec:
  selector: {app: dns}
  ports:
  - {name: dns-tcp, port: 53, targetPort: 53}
  - {name: dns-udp, port: 53, protocol: UDP, targetPort: 53}
"#;
    let config = no_infer(
        r#"apiVersion: v1
kind: Service
metadata:
  name: dns
spec:
  ports:
  - {port: 53, protocol: UDP, targetPort: 5353}
  - {port: 53, protocol: TCP, targetPort: 1053}
  - {name: metrics, port: 9153}"#,
    );
    let d = &filter_ok("service", &config, svc)[0];
    assert_eq!(
        d["spec"]["ports"],
        json!([
            // the patch says TCP, the resource left it to the default: same port, now explicit
            {"name": "dns-tcp", "port": 53, "targetPort": 1053, "protocol": "TCP"},
            {"name": "dns-udp", "port": 53, "protocol": "UDP", "targetPort": 5353},
            {"name": "metrics", "port": 9153},
        ])
    );
    assert_eq!(d["spec"]["selector"], json!({"app": "dns"}));
}

// Job: spec.template.spec.containers; CronJob: spec.jobTemplate.spec.template.spec.containers —
// both merge by name.
#[test]
fn builtin_job_and_cronjob_containers_merge_by_name() {
    let resources = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: migrate, image: tool:1, args: [up]}
      - {name: proxy, image: proxy:1}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: report, image: tool:1, args: [report]}
          - {name: proxy, image: proxy:1}
"#;
    let config = no_infer(
        r#"apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      containers:
      - {name: migrate, image: tool:2}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: report, image: tool:2}"#,
    );
    let out = filter_ok("jobs", &config, resources);
    assert_eq!(
        out[0]["spec"]["template"]["spec"]["containers"],
        json!([
            {"name": "migrate", "image": "tool:2", "args": ["up"]},
            {"name": "proxy", "image": "proxy:1"},
        ])
    );
    assert_eq!(out[0]["spec"]["backoffLimit"], 2);
    assert_eq!(
        out[1]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"],
        json!([
            {"name": "report", "image": "tool:2", "args": ["report"]},
            {"name": "proxy", "image": "proxy:1"},
        ])
    );
    assert_eq!(out[1]["spec"]["schedule"], "0 * * * *");
}

// ClusterRole and Role `rules` (PolicyRule lists) are `x-kubernetes-list-type: atomic` with no
// patch strategy in the built-in schema: a patch's `rules` replace the resource's, as with
// `kubectl patch`, also when the heuristic is on (PolicyRules have no key field anyway). To add
// a rule without restating the others, use a JSON patch (`/rules/-`).
#[test]
fn builtin_cluster_role_and_role_rules_are_replaced() {
    let resources = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: editor
  namespace: team
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
"#;
    let config = r#"apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: rbac
spec:
  patches:
  - patch: |
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRole
      metadata:
        name: reader
      rules:
      - apiGroups: [""]
        resources: [pods]
        verbs: [get, list, watch]
      ---
      apiVersion: rbac.authorization.k8s.io/v1
      kind: Role
      metadata:
        name: editor
        namespace: team
      rules:
      - apiGroups: [""]
        resources: [secrets]
        verbs: [get]
  - type: json6902
    target: {kind: Role}
    patch:
    - op: add
      path: /rules/-
      value: {apiGroups: [""], resources: [configmaps], verbs: [update]}
"#;
    let out = filter_ok("rbac", config, resources);
    assert_eq!(
        out[0]["rules"],
        json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}])
    );
    assert_eq!(
        out[1]["rules"],
        json!([
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["update"]},
        ])
    );
}

// ----- merge3 conflicts ------------------------------------------------------------------------

const LOCAL: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 5 # scaled by hand
  template:
    spec:
      containers:
      - name: app
        image: app:3
        env:
        - {name: MODE, value: local}
      - name: side
        image: side:1
"#;

/// The upstream change: replicas 3 -> 4, app:1 -> app:2, side:1 -> side:2, env MODE removed.
fn upstream_merge3(options: &str) -> String {
    format!(
        r#"apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: update
spec:
  patches:
  - type: merge3
    target: {{kind: Deployment}}
    options: {options}
    original: |
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: web
        namespace: prod
      spec:
        replicas: 3
        template:
          spec:
            containers:
            - name: app
              image: app:1
              env:
              - {{name: MODE, value: upstream}}
            - name: side
              image: side:1
    patch: |
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: web
        namespace: prod
      spec:
        replicas: 4
        template:
          spec:
            containers:
            - name: app
              image: app:2
            - name: side
              image: side:2
"#
    )
}

/// The conflict results of a run: (severity, field path, currentValue, proposedValue).
fn conflicts(stdout: &str) -> Vec<(String, String, Value, Value)> {
    rl_results(stdout)
        .into_iter()
        .filter(|r| r.get("field").is_some())
        .map(|r| {
            (
                r["severity"].as_str().unwrap_or("").to_owned(),
                r["field"]["path"].as_str().unwrap_or("").to_owned(),
                r["field"]["currentValue"].clone(),
                r["field"]["proposedValue"].clone(),
            )
        })
        .collect()
}

// Where local and upstream both changed a field differently, or one deleted what the other
// changed, merge3 takes upstream and says so: one result per field, naming the resource, the
// field's path (list elements by key) and both values (what kpt pkg update never reported).
#[test]
fn merge3_conflicts_name_the_field_and_both_values() {
    let out = krm(&[], &resource_list_text(LOCAL, &upstream_merge3("{}")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warning = |path: &str, current: Value, proposed: Value| {
        ("warning".to_owned(), path.to_owned(), current, proposed)
    };
    assert_eq!(
        conflicts(&out.stdout),
        [
            warning("spec.replicas", json!(5), json!(4)),
            warning(
                "spec.template.spec.containers[name=app].image",
                json!("app:3"),
                json!("app:2")
            ),
            // Deleted upstream, changed locally: there is no proposed value.
            warning(
                "spec.template.spec.containers[name=app].env[name=MODE]",
                json!({"name": "MODE", "value": "local"}),
                Value::Null
            ),
        ],
        "{}",
        out.stdout
    );
    for r in rl_results(&out.stdout)
        .iter()
        .filter(|r| r.get("field").is_some())
    {
        assert_eq!(
            r["resourceRef"],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "prod"})
        );
    }
    let d = &rl_items(&out.stdout)[0];
    assert_eq!(d["spec"]["replicas"], 4);
    let containers = &d["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "app:2");
    assert_eq!(containers[1]["image"], "side:2");
    assert_eq!(containers[0].get("env"), None, "deleted upstream");
}

// `options.conflicts: error`: the conflicts are errors, the run exits 1 and every item comes back
// exactly as it came in (all or nothing), also the changes that did not conflict (side:2).
#[test]
fn merge3_conflicts_error_fails_the_run_and_changes_nothing() {
    let input = resource_list_text(LOCAL, &upstream_merge3("{conflicts: error}"));
    let out = krm(&[], &input);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let errors: Vec<_> = conflicts(&out.stdout)
        .into_iter()
        .filter(|c| c.0 == "error")
        .map(|c| c.1)
        .collect();
    assert!(errors.contains(&"spec.replicas".to_owned()), "{errors:?}");
    assert!(
        errors.contains(&"spec.template.spec.containers[name=app].image".to_owned()),
        "{errors:?}"
    );
    assert!(out.stderr.contains("spec.replicas"), "{}", out.stderr);
    // The ResourceList comes back as it came in, with the results after it.
    assert!(
        out.stdout.starts_with(&input),
        "input:\n{input}\noutput:\n{}",
        out.stdout
    );
    assert_eq!(rl_items(&out.stdout), docs(LOCAL));
}

// ----- apply ------------------------------------------------------------------------------------

// The "Merging Fields" seed's example of a list of objects merged by key: elements the local
// configuration still has are merged (fields only the live object has, `args`, stay), elements
// it dropped since the last apply are deleted (helper-a), new ones added (helper-c), and elements
// only the live object has are kept (helper-d). The seed promises the local configuration's order
// for its own elements and nothing about the others.
#[test]
fn apply_merging_fields_seed_containers_example() {
    let live = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  namespace: default
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"nginx-deployment","namespace":"default"},"spec":{"template":{"spec":{"containers":[{"image":"nginx:1.10","name":"nginx"},{"image":"helper:1.3","name":"nginx-helper-a"},{"image":"helper:1.3","name":"nginx-helper-b"}]}}}}
spec:
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.10
      - name: nginx-helper-a
        image: helper:1.3
      - name: nginx-helper-b
        image: helper:1.3
        args: ["run"]
      - name: nginx-helper-d
        image: helper:1.3
"#;
    let config = merge_fn(
        r#"type: apply
patch: |
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: nginx-deployment
  spec:
    template:
      spec:
        containers:
        - name: nginx
          image: nginx:1.10
        - name: nginx-helper-b
          image: helper:1.3
        - name: nginx-helper-c
          image: helper:1.3"#,
    );
    let d = &filter_ok("apply-seed", &config, live)[0];
    let containers = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let by_name = |n: &str| containers.iter().find(|c| c["name"] == n).cloned();
    assert_eq!(
        by_name("nginx-helper-a"),
        None,
        "deleted: dropped from the local configuration"
    );
    assert_eq!(
        by_name("nginx-helper-b"),
        Some(json!({"name": "nginx-helper-b", "image": "helper:1.3", "args": ["run"]}))
    );
    assert_eq!(
        by_name("nginx-helper-c"),
        Some(json!({"name": "nginx-helper-c", "image": "helper:1.3"}))
    );
    assert_eq!(
        by_name("nginx-helper-d"),
        Some(json!({"name": "nginx-helper-d", "image": "helper:1.3"}))
    );
    assert_eq!(containers.len(), 4);
    let order: Vec<&str> = containers
        .iter()
        .filter_map(|c| c["name"].as_str())
        .filter(|n| *n != "nginx-helper-d")
        .collect();
    assert_eq!(order, ["nginx", "nginx-helper-b", "nginx-helper-c"]);
}

// The seed's list of primitives merged as a set: last applied [a, b], local [a, c], live
// [a, b, d] gives [a, c, d] (finalizers are the merge-strategy list of scalars).
#[test]
fn apply_merging_fields_seed_primitive_list_example() {
    let live = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: default
  finalizers: [a, b, d]
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"finalizers":["a","b"],"name":"c","namespace":"default"}}
"#;
    let config = merge_fn(
        r#"type: apply
patch: |
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
    finalizers: [a, c]"#,
    );
    let d = &filter_ok("apply-seed-primitives", &config, live)[0];
    let mut f: Vec<&str> = d["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    f.sort_unstable();
    assert_eq!(f, ["a", "c", "d"]);
}

// The last-applied annotation is rewritten as kubectl writes it: the local configuration without
// the annotation, `annotations: {}` left in its place, the live namespace added, compact JSON with
// sorted keys and `<`, `>`, `&` escaped, a final newline. A second apply changes nothing.
#[test]
fn apply_rewrites_the_last_applied_annotation_as_kubectl_does() {
    let live = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: prod
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","data":{"old":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"settings","namespace":"prod"}}
data:
  old: "1"
  live-only: x
"#;
    let config = merge_fn(
        r#"type: apply
target: {kind: ConfigMap}
patch: |
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
  data:
    url: "https://example.com/?a=1&b=<2>"
    count: "3""#,
    );
    let out = filter("apply-annotation", &config, live);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = &docs(&out.stdout)[0];
    let want = "{\"apiVersion\":\"v1\",\"data\":{\"count\":\"3\",\"url\":\"https://example.com/?a=1\\u0026b=\\u003c2\\u003e\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"settings\",\"namespace\":\"prod\"}}\n";
    assert_eq!(
        d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        want
    );
    assert_eq!(
        d["data"],
        json!({"live-only": "x", "url": "https://example.com/?a=1&b=<2>", "count": "3"})
    );
    // Applied again to its own output: nothing changes.
    let again = filter("apply-annotation-again", &config, &out.stdout);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, out.stdout);
}

// ----- product bugs found by the conformance suites (not fixed yet) ---------------------------

/// A merge2 patch (no inferred keys) run through `--config` with `spec.schema` added.
fn merge2_with_schema(test: &str, schema: &str, patch: &str, resource: &str) -> Out {
    let mut config = merge_fn(&format!(
        "type: merge2\npatch: |\n{}options: {{inferMergeKeys: false}}",
        indent_under(patch, "  ", "  ")
    ));
    config.push_str(schema);
    filter(test, &config, resource)
}

// k8s-strategicpatch replace_raw_extension.yaml (two-way): `x-kubernetes-patch-strategy: replace`
// on a map-valued field is strategic-merge metadata (apimachinery replaces the map; `apply`
// does too), but merge2 merges the map key by key.
#[test]
fn merge2_patch_strategy_replace_on_a_map_replaces_it() {
    let schema = r#"  schema:
    openAPI:
      inline:
        definitions:
          com.example.v1.Foo:
            type: object
            x-kubernetes-group-version-kind: [{group: example.com, version: v1, kind: Foo}]
            properties:
              spec:
                type: object
                x-kubernetes-patch-strategy: replace
"#;
    let resource = "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: f\nspec:\n  a: 1\n";
    let patch = "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: f\nspec:\n  b: 2\n";
    let out = merge2_with_schema("bug-replace", schema, patch, resource);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(docs(&out.stdout)[0]["spec"], json!({"b": 2}));
}

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

// k8s-strategicpatch custom.yaml "delete all duplicate entries in a merging list": a list with
// duplicate keys (env variables often have them) loses all the elements a `$patch: delete` names
// in apimachinery; merge2 deletes only the first.
#[test]
fn merge2_delete_directive_removes_every_element_with_the_key() {
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: app
    env:
    - {name: A, value: "1"}
    - {name: B, value: "2"}
    - {name: A, value: "3"}
"#;
    let config = no_infer(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n    env:\n    - {name: A, $patch: delete}\n",
    );
    let d = &filter_ok("bug-delete-duplicates", &config, pod)[0];
    assert_eq!(
        d["spec"]["containers"][0]["env"],
        json!([{"name": "B", "value": "2"}])
    );
}

// k8s-strategicpatch raw.yaml "behavior of set element order for a merging (int) list with
// duplicate" (two-way): elements with the same key stay together at their key's first place in
// `$setElementOrder` (apimachinery: [2, 2, 1, 4, 3]); merge2 gives [2, 1, 2, 4, 3].
#[test]
fn merge2_set_element_order_keeps_duplicates_together() {
    let resource = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  finalizers: ["1", "2", "3", "2", "4"]
"#;
    let config = no_infer(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  $setElementOrder/finalizers: [\"2\", \"1\", \"4\", \"3\", \"2\"]\n",
    );
    let d = &filter_ok("bug-order-duplicates", &config, resource)[0];
    assert_eq!(
        d["metadata"]["finalizers"],
        json!(["2", "2", "1", "4", "3"])
    );
}

// k8s-strategicpatch custom.yaml "should check if order in $setElementOrder and patch list
// match" and the int-list case after it: a patch whose list has its elements in another order
// than its `$setElementOrder` is malformed, and apimachinery rejects it (`doesn't match`); merge2
// applies it.
#[test]
fn merge2_set_element_order_must_agree_with_the_patch_list() {
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: app
    env:
    - {name: A, value: "1"}
    - {name: B, value: "2"}
"#;
    let config = no_infer(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n    $setElementOrder/env: [{name: A}, {name: B}]\n    env:\n    - {name: B, value: \"5\"}\n    - {name: A, value: \"6\"}\n",
    );
    let out = filter("bug-order-mismatch", &config, pod);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(docs(&out.stdout), docs(pod), "nothing changes");
}

// Found while building ResourceLists for these tests: a document's root mapping placed as the
// value of a key keeps its indentation (none), and so does the one way the binary does that,
// json6902 `copy` from "" (the whole document, as RFC 6902 allows) to a member: the copied
// mapping is written at the member's own indentation. The output is malformed YAML (`snapshot:`
// then `apiVersion:` at column 0: a duplicate key when read back) or, one level down, YAML that
// reads back as other data (`inner: null`, the copied keys as siblings of `inner`) — with exit
// code 0.
#[test]
fn json6902_copy_of_the_whole_document_into_a_member() {
    let resource = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n";
    let config = merge_fn(
        "type: json6902\ntarget: {kind: ConfigMap}\npatch:\n- {op: add, path: /copied, value: {}}\n- {op: copy, from: \"\", path: /copied/inner}\n- {op: copy, from: \"\", path: /snapshot}",
    );
    let out = filter("bug-copy-root", &config, resource);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let parsed = krm_merge::yaml::parse_stream(&out.stdout);
    assert!(parsed.is_ok(), "malformed output:\n{}", out.stdout);
    let doc = &docs(&out.stdout)[0];
    let original = json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"},
    });
    let mut with_copied = original.clone();
    with_copied["copied"] = json!({});
    assert_eq!(doc["copied"]["inner"], with_copied, "{}", out.stdout);
    let mut snapshot = original.clone();
    snapshot["copied"] = json!({"inner": with_copied});
    assert_eq!(doc["snapshot"], snapshot, "{}", out.stdout);
}

// ----- kustomize parity (found by tests/it/kustomize_diff.rs) ----------------------------------

// A patch renames a resource; a later patch whose target names the old name still selects it,
// as kustomize's in-memory previous names make it do. Without this the second patch silently
// matched nothing.
#[test]
fn a_target_selects_a_resource_by_the_name_it_had_before_a_patch_renamed_it() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n";
    let config = format!(
        "{}\n{}",
        merge_fn(
            "type: json6902\ntarget: {kind: ConfigMap, name: a}\npatch:\n- {op: replace, path: /metadata/name, value: b}"
        ),
        indent_under(
            "type: json6902\ntarget: {kind: ConfigMap, name: ^a$}\npatch:\n- {op: add, path: /data/later, value: x}",
            "  - ",
            "    "
        )
    );
    let d = &filter_ok("renamed-target", &config, cm)[0];
    assert_eq!(d["metadata"]["name"], "b");
    assert_eq!(d["data"], json!({"k": "v", "later": "x"}));
}

// kustomize's order for `newListItems: prepend`: the patch's elements first. When the elements
// use two of a list's keys (Service ports with `port` and `protocol`), only the new ones come
// first and the merged ones stay in place; with one key in use the merged ones move too.
#[test]
fn prepend_moves_merged_elements_only_when_one_key_is_in_use() {
    let svc = |ports: &str| {
        format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n{ports}")
    };
    let patch = |ports: &str| {
        merge_fn(&format!(
            "options: {{newListItems: prepend}}\npatch: |\n{}",
            indent_under(&svc(ports), "  ", "  ")
        ))
    };
    let ports = |d: &Value| -> Vec<i64> {
        d["spec"]["ports"]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p["port"].as_i64()).collect())
            .unwrap_or_default()
    };
    let one_key = filter_ok(
        "prepend-one-key",
        &patch("  - {port: 90, name: b}\n  - {port: 70}\n"),
        &svc("  - {port: 80}\n  - {port: 90}\n"),
    );
    assert_eq!(ports(&one_key[0]), [90, 70, 80]);
    let two_keys = filter_ok(
        "prepend-two-keys",
        &patch("  - {port: 90, protocol: TCP, name: b}\n  - {port: 70, protocol: UDP}\n"),
        &svc("  - {port: 80, protocol: TCP}\n  - {port: 90, protocol: TCP}\n"),
    );
    assert_eq!(ports(&two_keys[0]), [70, 80, 90]);
    assert_eq!(two_keys[0]["spec"]["ports"][2]["name"], "b");
}

// kustomize never leaves an emptied `metadata.annotations` behind; an emptied `labels` stays
// `{}`. Either way a map the user wrote empty is left alone.
#[test]
fn a_patch_that_empties_annotations_removes_them_and_leaves_labels_empty() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: y}\n  annotations: {x: y}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {}\n";
    let config = with_infer(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: null}\n  annotations: {x: null}\n",
    );
    let out = filter_ok("emptied-annotations", &config, cm);
    assert_eq!(out[0]["metadata"], json!({"name": "a", "labels": {}}));
    assert_eq!(out[1]["metadata"], json!({"name": "b", "annotations": {}}));
    let json = merge_fn(
        "type: json6902\ntarget: {kind: ConfigMap, name: a}\npatch:\n- {op: remove, path: /metadata/annotations/x}",
    );
    let out = filter_ok("emptied-annotations-json", &json, cm);
    assert_eq!(
        out[0]["metadata"],
        json!({"name": "a", "labels": {"x": "y"}})
    );
}

// kustomize's JSON patch library reads a member missing from an existing mapping as null for
// `copy` and `test`. With kustomize's options krm-merge does the same; by default it follows
// the RFC, which makes both errors.
#[test]
fn json6902_copy_and_test_read_a_missing_member_as_null_with_kustomize_options() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n";
    let ops = "patch:\n- {op: test, path: /data/gone, value: null}\n- {op: copy, from: /data/gone, path: /data/copied}";
    let kustomize = "options: {newListItems: prepend, inferMergeKeys: false}";
    let config = merge_fn(&format!(
        "type: json6902\ntarget: {{kind: ConfigMap}}\n{kustomize}\n{ops}"
    ));
    let d = &filter_ok("missing-member-null", &config, cm)[0];
    assert_eq!(d["data"], json!({"k": "v", "copied": null}));
    let strict = merge_fn(&format!(
        "type: json6902\ntarget: {{kind: ConfigMap}}\n{ops}"
    ));
    let out = filter("missing-member-strict", &strict, cm);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("/data/gone"), "{}", out.stderr);
    let failing = merge_fn(&format!(
        "type: json6902\ntarget: {{kind: ConfigMap}}\n{kustomize}\npatch:\n- {{op: copy, from: /nothing/here, path: /data/copied}}"
    ));
    let out = filter("missing-parent", &failing, cm);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("/nothing"), "{}", out.stderr);
}

// Kubernetes reads YAML as 1.1, where a plain `on` or `yes` is a boolean, `1_000` a number and
// `2024-01-31` a timestamp. A patch read as YAML 1.2 means the string: krm-merge quotes what it
// brings in, and leaves the resource's own text alone (and an IP address plain: a string to
// every reader).
#[test]
fn patch_strings_that_yaml11_reads_as_another_type_are_quoted() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  mine: yes\n";
    let config = with_infer(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  on: off\n  list: [y, \"1:30\", 1:30, plain]\n  flag: true\n  n: 1_000\n  day: 2024-01-31\n  ip: 10.0.0.1\n",
    );
    let out = filter("yaml11-quoting", &config, cm);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for line in [
        "  mine: yes\n",
        "  \"on\": \"off\"\n",
        "  list: [\"y\", \"1:30\", \"1:30\", plain]\n",
        "  flag: true\n",
        "  \"n\": \"1_000\"\n",
        "  day: \"2024-01-31\"\n",
        "  ip: 10.0.0.1\n",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in\n{}", out.stdout);
    }
}

// kustomize's JSON patch library moves a value into one of its own children: it removes the
// value, then adds it where `path` points in what is left, so `move /rules/0 → /rules/0/moved`
// nests the first rule in the next one. With kustomize's options krm-merge does the same; by
// default the move is an error, as RFC 6902 §4.4 says.
#[test]
fn json6902_move_into_its_own_child_with_kustomize_options() {
    let role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- verbs: [get]\n- verbs: [list]\n";
    let ops = "patch:\n- {op: move, from: /rules/0, path: /rules/0/moved}";
    let kustomize = "options: {newListItems: prepend, inferMergeKeys: false}";
    let config = merge_fn(&format!(
        "type: json6902\ntarget: {{kind: ClusterRole}}\n{kustomize}\n{ops}"
    ));
    let d = &filter_ok("move-into-child", &config, role)[0];
    assert_eq!(
        d["rules"],
        json!([{"verbs": ["list"], "moved": {"verbs": ["get"]}}])
    );
    let strict = merge_fn(&format!(
        "type: json6902\ntarget: {{kind: ClusterRole}}\n{ops}"
    ));
    let out = filter("move-into-child-strict", &strict, role);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "op 0 (move /rules/0/moved): a value cannot be moved into one of its own children"
        ),
        "{}",
        out.stderr
    );
}

// kustomize trims the whitespace around an inline `patch:` before it reads it, so a `|` block
// that ends the patch loses its final line break (`x=1\ny=2`, not `x=1\ny=2\n`); a `path:`
// file is read as it is. With kustomize's options krm-merge reads the text the same way; by
// default the block keeps its line break, as YAML says.
#[test]
fn inline_patch_text_is_trimmed_with_kustomize_options() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n";
    let patch = "patch: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  data:\n    flag: |\n      x=1\n      y=2\n";
    let kustomize = "options: {newListItems: prepend, inferMergeKeys: false}";
    let d = &filter_ok(
        "trim-kustomize",
        &merge_fn(&format!("{kustomize}\n{patch}")),
        cm,
    )[0];
    assert_eq!(d["data"]["flag"], "x=1\ny=2");
    let d = &filter_ok("trim-default", &merge_fn(patch), cm)[0];
    assert_eq!(d["data"]["flag"], "x=1\ny=2\n");
    // A file is not trimmed.
    let dir = dir("trim-file");
    fs::write(
        dir.join("flag.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  flag: |\n    x=1\n",
    )
    .unwrap();
    fs::write(
        dir.join("fn.yaml"),
        merge_fn(&format!("{kustomize}\npath: flag.yaml")),
    )
    .unwrap();
    fs::write(dir.join("resources.yaml"), cm).unwrap();
    let out = krm_in(&["--config", "fn.yaml", "resources.yaml"], "", Some(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(docs(&out.stdout)[0]["data"]["flag"], "x=1\n");
}

// kustomize copies a strategic merge patch with a target and writes the copy's labels and
// annotations back through Go's map[string]string before it applies it: a null becomes the
// string of its text (`null` → "null", `~` → "~", empty → ""), and `annotations: null` (no
// entries) is dropped from the patch, so it removes nothing. With kustomize's options
// krm-merge reads such a patch the same way; by default, and without a target, null deletes.
#[test]
fn targeted_patch_metadata_nulls_are_strings_with_kustomize_options() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: a\n    tier: fe\n  annotations:\n    team: x\n";
    let patch = "patch: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    labels:\n      app: null\n      tier: ~\n      new:\n    annotations: null\n";
    let kustomize = "options: {newListItems: prepend, inferMergeKeys: false}";
    let targeted = format!("target: {{kind: ConfigMap}}\n{patch}");
    let d = &filter_ok(
        "metadata-null-kustomize",
        &merge_fn(&format!("{kustomize}\n{targeted}")),
        cm,
    )[0];
    assert_eq!(
        d["metadata"],
        json!({"name": "a", "labels": {"app": "null", "tier": "~", "new": ""}, "annotations": {"team": "x"}})
    );
    let d = &filter_ok("metadata-null-default", &merge_fn(&targeted), cm)[0];
    assert_eq!(d["metadata"], json!({"name": "a", "labels": {}}));
    // Without a target kustomize applies the patch as written: null deletes.
    let d = &filter_ok(
        "metadata-null-untargeted",
        &merge_fn(&format!("{kustomize}\n{patch}")),
        cm,
    )[0];
    assert_eq!(d["metadata"], json!({"name": "a", "labels": {}}));
}

// kustomize converts a JSON patch written in YAML to JSON with go-yaml v2, so its values are
// read as YAML 1.1: `on` is true, `0777` is 511, `1e3` is 1000, the key `on:` is "true". A patch
// written as JSON text is JSON. With kustomize's options krm-merge reads the patch the same
// way; by default it reads YAML 1.2, like the rest of its input, and quotes what it brings in.
#[test]
fn json6902_yaml_values_are_read_as_yaml11_with_kustomize_options() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n";
    let ops = "patch: |\n  - {op: add, path: /data/a, value: on}\n  - {op: add, path: /data/b, value: 0777}\n  - {op: add, path: /data/c, value: 1e3}\n  - {op: add, path: /data/d, value: {on: 1_000, n: \"on\"}}\n";
    let kustomize = "options: {newListItems: prepend, inferMergeKeys: false}";
    let entry = |options: &str| {
        merge_fn(&format!(
            "type: json6902\ntarget: {{kind: ConfigMap}}\n{options}\n{ops}"
        ))
    };
    let d = &filter_ok("json-yaml11", &entry(kustomize), cm)[0];
    assert_eq!(
        d["data"],
        json!({"k": "v", "a": true, "b": 511, "c": 1000, "d": {"true": 1000, "false": "on"}})
    );
    let d = &filter_ok("json-yaml12", &entry(""), cm)[0];
    assert_eq!(
        d["data"],
        json!({"k": "v", "a": "on", "b": 777, "c": 1000.0, "d": {"on": "1_000", "n": "on"}})
    );
    // JSON text is JSON to kustomize: the string stays, the number is written as kustomize
    // writes it (1.0 gives 1).
    let json_text = merge_fn(&format!(
        "type: json6902\ntarget: {{kind: ConfigMap}}\n{kustomize}\npatch: '[{{\"op\": \"add\", \"path\": \"/data/a\", \"value\": [\"on\", 1.0]}}]'"
    ));
    let d = &filter_ok("json-text", &json_text, cm)[0];
    assert_eq!(d["data"]["a"], json!(["on", 1]));
    // Infinity has no JSON form: kustomize cannot read the patch, and neither can krm-merge.
    let inf = merge_fn(&format!(
        "type: json6902\ntarget: {{kind: ConfigMap}}\n{kustomize}\npatch: |\n  - {{op: add, path: /data/a, value: [1, .inf]}}\n"
    ));
    let out = filter("json-inf", &inf, cm);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stdout, cm, "the input comes back as it came");
    assert!(
        out.stderr
            .contains("[0].value[1]: `.inf` is not a JSON number"),
        "{}",
        out.stderr
    );
}

// kustomize applies a JSON patch to the resource's JSON and reads the result back, so every
// empty `key:` in a resource a JSON patch touches comes back as `key: null` — which kyaml's
// strategic merge keeps where it drops an empty one. With kustomize's options krm-merge writes
// the nulls the same way; by default the resource keeps its text.
#[test]
fn json6902_writes_empty_nulls_as_null_with_kustomize_options() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  empty:\n  tilde: ~\n";
    let ops = "patch:\n- {op: add, path: /data/b, value: x}";
    let kustomize = "options: {newListItems: prepend, inferMergeKeys: false}";
    let entry = |options: &str| {
        merge_fn(&format!(
            "type: json6902\ntarget: {{kind: ConfigMap}}\n{options}\n{ops}"
        ))
    };
    let out = filter("json-nulls-kustomize", &entry(kustomize), cm);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("  empty: null\n  tilde: ~\n"),
        "{}",
        out.stdout
    );
    let out = filter("json-nulls-default", &entry(""), cm);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("  empty:\n  tilde: ~\n"),
        "{}",
        out.stdout
    );
}
/// The functionConfig of one strategic merge patch, with our default options and with
/// kustomize's: `[(label, config); 2]`.
fn default_and_kustomize(patch: &str) -> [(&'static str, String); 2] {
    let entry = |options: &str| {
        merge_fn(&format!(
            "{options}patch: |\n{}",
            indent_under(patch, "  ", "  ").trim_end()
        ))
    };
    [
        ("default", entry("")),
        (
            "kustomize",
            entry("options: {newListItems: prepend, inferMergeKeys: false}\n"),
        ),
    ]
}

// A list merged on two keys (ports: port + protocol) where some elements give no protocol.
// kyaml pairs elements on the text of the keys some element gives, with no default: a port
// without protocol is not the TCP port, a delete by number alone finds nothing. Under
// kustomize's options that is the output; by default a missing protocol is TCP.
#[test]
fn kustomize_options_pair_ports_without_a_default_protocol_as_kyaml_does() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata:\n  name: dns\nspec:\n  ports:\n  - port: 443\n  - port: 5353\n    protocol: UDP\n";
    let delete = "apiVersion: v1\nkind: Service\nmetadata:\n  name: dns\nspec:\n  ports:\n  - port: 443\n    $patch: delete\n";
    let [(_, default), (_, kustomize)] = default_and_kustomize(delete);
    let ports = |config: &str, test: &str| filter_ok(test, config, svc)[0]["spec"]["ports"].clone();
    assert_eq!(
        ports(&default, "ports-delete-default"),
        json!([{"port": 5353, "protocol": "UDP"}])
    );
    assert_eq!(
        ports(&kustomize, "ports-delete-kustomize"),
        json!([{"port": 443}, {"port": 5353, "protocol": "UDP"}])
    );

    let deploy = |ports: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        ports:\n{ports}")
    };
    let resource = deploy("        - containerPort: 80\n");
    let udp = deploy("        - containerPort: 80\n          protocol: UDP\n          name: x\n");
    let [(_, default), (_, kustomize)] = default_and_kustomize(&udp);
    let ports = |config: &str, test: &str| {
        filter_ok(test, config, &resource)[0]["spec"]["template"]["spec"]["containers"][0]["ports"]
            .clone()
    };
    assert_eq!(
        ports(&default, "ports-udp-default"),
        json!([{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP", "name": "x"}])
    );
    // kyaml pairs the UDP port with the port without protocol, then loses it.
    assert_eq!(
        ports(&kustomize, "ports-udp-kustomize"),
        json!([{"containerPort": 80}])
    );
}

// A patch that gives a map where the resource has a scalar (or any other change of kind):
// kustomize fails ("wrong node kind"), so under its options krm-merge fails too, naming the
// field; by default the patch's value replaces the resource's.
#[test]
fn kustomize_options_fail_a_patch_that_changes_a_value_kind() {
    let widget =
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 2\n";
    let patch = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size:\n    min: 1\n";
    let [(_, default), (_, kustomize)] = default_and_kustomize(patch);
    let d = &filter_ok("kind-change-default", &default, widget)[0];
    assert_eq!(d["spec"]["size"], json!({"min": 1}));
    let out = filter("kind-change-kustomize", &kustomize, widget);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("spec.size"), "{}", out.stderr);
    assert!(out.stderr.contains("wrong node kind"), "{}", out.stderr);
}

// A list no schema describes (a CRD's, or a patch written for another kind) is replaced whole by
// kustomize, `$patch` elements included as plain data. Under kustomize's options that is the
// output; by default the directive applies.
#[test]
fn kustomize_options_keep_patch_directives_in_unkeyed_lists_as_data() {
    let widget =
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - name: a\n";
    let patch = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - name: a\n    $patch: delete\n  - name: z\n";
    let [(_, default), (_, kustomize)] = default_and_kustomize(patch);
    let items =
        |config: &str, test: &str| filter_ok(test, config, widget)[0]["spec"]["items"].clone();
    assert_eq!(
        items(&default, "unkeyed-directive-default"),
        json!([{"name": "z"}])
    );
    assert_eq!(
        items(&kustomize, "unkeyed-directive-kustomize"),
        json!([{"name": "a", "$patch": "delete"}, {"name": "z"}])
    );
}

// `- $patch: replace` opening a list the resource does not have: kustomize takes the patch's
// list as the resource's and applies nothing, keeping only the directive element. Under
// kustomize's options that is the output; by default the list is the patch's elements.
#[test]
fn kustomize_options_keep_only_the_directive_of_a_replace_on_a_missing_list() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n";
    let patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - $patch: replace\n        - name: D\n          value: \"16\"\n";
    let [(_, default), (_, kustomize)] = default_and_kustomize(patch);
    let env = |config: &str, test: &str| {
        filter_ok(test, config, deployment)[0]["spec"]["template"]["spec"]["containers"][0]["env"]
            .clone()
    };
    assert_eq!(
        env(&default, "replace-missing-default"),
        json!([{"name": "D", "value": "16"}])
    );
    assert_eq!(
        env(&kustomize, "replace-missing-kustomize"),
        json!([{"$patch": "replace"}])
    );
}

// An entry with no value at all (`level:`) in a map the patch reaches: kyaml drops it, while
// `null` and `~` stay. Under kustomize's options that is the output; by default a field the
// patch does not mention stays as it is.
#[test]
fn kustomize_options_drop_entries_with_no_value_from_merged_maps() {
    let widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  extra:\n  kept: null\n  config:\n    mode: x\n    level:\n";
    let patch = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  config:\n    mode: y\n";
    let [(_, default), (_, kustomize)] = default_and_kustomize(patch);
    let d = &filter_ok("empty-value-default", &default, widget)[0];
    assert_eq!(
        d["spec"],
        json!({"extra": null, "kept": null, "config": {"mode": "y", "level": null}})
    );
    let out = filter("empty-value-kustomize", &kustomize, widget);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        docs(&out.stdout)[0]["spec"],
        json!({"kept": null, "config": {"mode": "y"}})
    );
    assert!(out.stdout.contains("  kept: null\n"), "{}", out.stdout);
}

// kustomize writes no empty `metadata.annotations`, whoever emptied it: a patch whose
// annotations are all deletions, on a resource without annotations, leaves none under
// kustomize's options; by default the patch's map stays, as written.
#[test]
fn kustomize_options_leave_no_empty_annotations_map() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n";
    let patch =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    gone: ~\n";
    let [(_, default), (_, kustomize)] = default_and_kustomize(patch);
    let d = &filter_ok("no-empty-annotations-default", &default, cm)[0];
    assert_eq!(d["metadata"], json!({"name": "a", "annotations": {}}));
    let d = &filter_ok("no-empty-annotations-kustomize", &kustomize, cm)[0];
    assert_eq!(d["metadata"], json!({"name": "a"}));
}

// ----- found by fuzzing ------------------------------------------------------------------------

// A patch written as JSON may break a string or a flow list over lines, starting the next line
// at the patch's own left edge: legal at a document's root, where nothing encloses it. Merged
// into a block mapping, those lines must stand right of its keys, or the output is not YAML
// (found by the merges fuzz target; krm-merge wrote `x: "one\ntwo"` with `two` under `x`).
#[test]
fn multi_line_json_strings_from_a_patch_are_reindented_under_their_key() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";
    let json = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"cm\"},\n\"data\": {\"x\": \"one\ntwo\", \"y\": plain\nwords, \"z\": \"[1,\n2]\"}}\n";
    let want = json!({"a": "b", "x": "one two", "y": "plain words", "z": "[1, 2]"});
    for (ty, extra) in [
        ("merge2", String::new()),
        ("jsonmerge", String::new()),
        (
            "merge3",
            // The original had no data: the update adds x, y and z.
            "original: |\n  {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}\n".to_owned(),
        ),
    ] {
        let entry = format!(
            "type: {ty}\ntarget: {{kind: ConfigMap}}\n{extra}patch: |\n{}",
            indent_under(json, "  ", "  ")
        );
        let out = krm(&[], &resource_list_text(cm, &merge_fn(&entry)));
        assert_eq!(out.code, 0, "{ty}: {}\n{}", out.stderr, out.stdout);
        // `docs` fails on output that is not YAML.
        assert_eq!(docs(&out.stdout)[0]["items"][0]["data"], want, "{ty}");
    }
}

// An item whose last entry is an explicit key without a value (`? key` alone): the parser
// places that missing value at the next token, the next item's dash, so the first item's text
// ran over the next item's first line, and rewriting the first item lost that line (found by
// the function fuzz target).
#[test]
fn an_item_ending_in_an_explicit_key_without_a_value_keeps_the_next_item_whole() {
    for key in ["?   - name: a\n      - name: b\n", "? lone\n"] {
        let first =
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\ndata:\n  {key}");
        let second = "apiVersion: v1\nkind: Service\nmetadata:\n  name: second\n";
        let input = format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}{}functionConfig:\n{}",
            indent_under(&first, "- ", "  "),
            indent_under(second, "- ", "  "),
            indent_under(
                &merge_fn("target: {kind: ConfigMap}\npatch: |\n  metadata:\n    labels: {a: b}\n"),
                "  ",
                "  "
            )
        );
        let out = krm(&[], &input);
        assert_eq!(out.code, 0, "{}", out.stderr);
        // The first item has a key that is a list: not JSON, so read as a tree.
        let list = node(&out.stdout);
        let items = list.get("items").expect("items").items();
        assert_eq!(items.len(), 2, "{}", out.stdout);
        assert_eq!(items[0].str_at(&["metadata", "labels", "a"]), Some("b"));
        assert_eq!(
            items[1].str_at(&["apiVersion"]),
            Some("v1"),
            "{}",
            out.stdout
        );
        assert_eq!(items[1].str_at(&["kind"]), Some("Service"));
    }
}
