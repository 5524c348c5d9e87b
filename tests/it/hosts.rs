//! End to end with the real hosts: `kpt fn eval --exec`, `kpt fn render` with an exec pipeline,
//! `kpt fn source | krm-merge | kpt fn sink`, and `kubectl kustomize` through kustomize's legacy
//! exec-plugin path (which needs no container runtime).
//!
//! These tests need `kpt` and `kubectl` on PATH. Where one is absent (a laptop) its tests are
//! ignored; with `KRM_MERGE_REQUIRE_HOSTS=1` (set by `.ci/run`) its absence is a failure (see
//! tests/it/support.rs, "hosts").

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::*;

const DEPLOY: &str = "\
# leading comment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # name comment
  labels:
    app: web
spec:
  replicas: 1 # replicas comment
  template:
    spec:
      containers:
        - name: app
          image: \"nginx:1.0\"
          args: [\"--port\", \"8080\"]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
    protocol: TCP
";

/// What DEPLOY becomes under PATCH: the changed lines only, comments and styles kept, the
/// file's wide sequence indentation followed by the new list.
const DEPLOY_PATCHED: &str = "\
# leading comment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # name comment
  labels:
    app: web
spec:
  replicas: 3 # replicas comment
  template:
    spec:
      containers:
        - name: app
          image: \"nginx:1.0\"
          args: [\"--port\", \"8080\"]
          env:
            - name: A
              value: \"1\"
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
    protocol: TCP
";

const CONFIG: &str = "\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: scale
  annotations:
    config.kubernetes.io/local-config: \"true\"
spec:
  patches:
  - target: {kind: Deployment}
    patch: |
      spec:
        replicas: 3
        template:
          spec:
            containers:
            - name: app
              env:
              - name: A
                value: \"1\"
";

/// A kpt package: Kptfile, the deployment file, and the function's config.
fn package(dir: &Path, kpt: &Path) {
    fs::create_dir_all(dir).expect("package dir");
    let out = run(Command::new(kpt)
        .args(["pkg", "init", "."])
        .current_dir(dir));
    assert!(out.status.success());
    fs::write(dir.join("deploy.yaml"), DEPLOY).expect("write");
}

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn kpt_fn_eval_exec_patches_files_in_place_and_is_idempotent() {
    let kpt = host("kpt");
    let dir = tmp_dir("hosts", "eval");
    let pkg = dir.join("pkg");
    package(&pkg, &kpt);
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, CONFIG).expect("write");
    for round in 0..2 {
        let out = run(Command::new(&kpt)
            .args(["fn", "eval", "."])
            .arg("--exec")
            .arg(bin())
            .arg("--fn-config")
            .arg(&cfg)
            .current_dir(&pkg));
        assert!(out.status.success(), "round {round}");
        assert_eq!(
            fs::read_to_string(pkg.join("deploy.yaml")).expect("read"),
            DEPLOY_PATCHED,
            "round {round}"
        );
    }
    // An error result fails the run and leaves the files alone.
    let bad = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: bad\nspec:\n  patches:\n  - type: json6902\n    target: {kind: Deployment}\n    patch: |\n      - {op: remove, path: /spec/nope}\n";
    fs::write(&cfg, bad).expect("write");
    let out = run(Command::new(&kpt)
        .args(["fn", "eval", "."])
        .arg("--exec")
        .arg(bin())
        .arg("--fn-config")
        .arg(&cfg)
        .current_dir(&pkg));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/spec/nope"), "{stderr}");
    assert_eq!(
        fs::read_to_string(pkg.join("deploy.yaml")).expect("read"),
        DEPLOY_PATCHED
    );
}

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn kpt_fn_render_with_an_exec_pipeline() {
    let kpt = host("kpt");
    let dir = tmp_dir("hosts", "render");
    let pkg = dir.join("pkg");
    package(&pkg, &kpt);
    // The config lives in the package, as render's configPath wants; kpt passes it among the
    // items too, and it must come out untouched.
    fs::write(pkg.join("fn.yaml"), CONFIG).expect("write");
    let kptfile = fs::read_to_string(pkg.join("Kptfile")).expect("Kptfile");
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - exec: {}\n      configPath: fn.yaml\n",
        bin().display()
    );
    fs::write(pkg.join("Kptfile"), format!("{kptfile}{pipeline}")).expect("write");
    for round in 0..2 {
        let out = run(Command::new(&kpt)
            .args(["fn", "render", "--allow-exec", "."])
            .current_dir(&pkg));
        assert!(out.status.success(), "round {round}");
        assert_eq!(
            fs::read_to_string(pkg.join("deploy.yaml")).expect("read"),
            DEPLOY_PATCHED,
            "round {round}"
        );
        assert_eq!(
            fs::read_to_string(pkg.join("fn.yaml")).expect("read"),
            CONFIG
        );
    }
}

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn kpt_source_pipe_sink() {
    let kpt = host("kpt");
    let dir = tmp_dir("hosts", "pipe");
    let pkg = dir.join("pkg");
    package(&pkg, &kpt);
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, CONFIG).expect("write");
    let source = run(Command::new(&kpt)
        .args(["fn", "source", "."])
        .current_dir(&pkg));
    assert!(source.status.success());
    let rl = String::from_utf8(source.stdout).expect("utf8");
    // Untouched, kpt's own ResourceList comes back byte for byte (results aside).
    let untouched = dir.join("none.yaml");
    fs::write(
        &untouched,
        CONFIG.replace("kind: Deployment}", "kind: Nothing}"),
    )
    .expect("write");
    let out = krm(&["--config", untouched.to_str().expect("utf8")], &rl);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.split_once("results:").map(|(a, _)| a),
        Some(rl.as_str())
    );
    let out = krm(&["--config", cfg.to_str().expect("utf8")], &rl);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sink_dir = dir.join("out");
    let mut sink = Command::new(&kpt)
        .args(["fn", "sink"])
        .arg(&sink_dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("kpt fn sink");
    {
        use std::io::Write;
        sink.stdin
            .take()
            .expect("stdin")
            .write_all(out.stdout.as_bytes())
            .expect("pipe");
    }
    assert!(sink.wait().expect("wait").success());
    assert_eq!(
        fs::read_to_string(sink_dir.join("deploy.yaml")).expect("read"),
        DEPLOY_PATCHED
    );
}

#[test]
#[cfg_attr(not(host_kubectl), ignore = "needs kubectl on PATH")]
fn kubectl_kustomize_through_the_legacy_exec_plugin() {
    let kubectl = host("kubectl");
    let dir = tmp_dir("hosts", "kustomize");
    let plugin_dir = dir.join("plugins/fn.krm-merge.dev/v1alpha1/merge");
    fs::create_dir_all(&plugin_dir).expect("plugin dir");
    std::os::unix::fs::symlink(bin(), plugin_dir.join("Merge")).expect("symlink");
    let kdir = dir.join("k");
    fs::create_dir_all(&kdir).expect("kustomization dir");
    fs::write(kdir.join("deploy.yaml"), DEPLOY).expect("write");
    fs::write(kdir.join("fn.yaml"), CONFIG).expect("write");
    fs::write(
        kdir.join("kustomization.yaml"),
        "resources:\n- deploy.yaml\ntransformers:\n- fn.yaml\n",
    )
    .expect("write");
    let build = |k: &Path| {
        run(Command::new(&kubectl)
            .args(["kustomize", "--enable-alpha-plugins", "."])
            .env("KUSTOMIZE_PLUGIN_HOME", dir.join("plugins"))
            .current_dir(k))
    };
    let out = build(&kdir);
    assert!(out.status.success());
    let got = docs(&String::from_utf8_lossy(&out.stdout));
    let deploy = got
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("deployment");
    assert_eq!(deploy["spec"]["replicas"], 3);
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["env"][0]["name"],
        "A"
    );
    // A failing patch fails the build with our message.
    let bad = CONFIG.replace("- target: {kind: Deployment}\n    patch: |\n      spec:", "- patch: |\n      apiVersion: v1\n      kind: Nope\n      metadata: {name: x}\n      spec:");
    fs::write(kdir.join("fn.yaml"), bad).expect("write");
    let out = build(&kdir);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("matches no resource"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `RoleList` file as kube-prometheus writes it (`kind:` after `items:`), with the name kpt
/// needs (`kpt fn render` and `kpt fn eval` refuse an item without `metadata.name`, and
/// kube-prometheus's lists have none; `kpt fn source | krm-merge | kpt fn sink` takes them).
const ROLE_LIST: &str = "\
apiVersion: rbac.authorization.k8s.io/v1
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata:
    name: prometheus-k8s
    namespace: default
  rules:
  - apiGroups:
    - \"\"
    resources:
    - pods
    verbs:
    - get
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata:
    name: prometheus-k8s
    namespace: monitoring
  rules: []
kind: RoleList
metadata:
  name: prometheus-roles
";

const ROLE_CONFIG: &str = "\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: roles
  annotations:
    config.kubernetes.io/local-config: \"true\"
spec:
  patches:
  - target: {kind: Role, namespace: monitoring}
    patch: |
      metadata:
        labels:
          team: monitoring
";

/// kpt passes a list kind to a function as one item (its path annotations on
/// the list, none on its items), and writes back what comes back: the Roles inside are
/// patched, the file keeps its list, and a second render changes nothing.
#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn kpt_fn_render_patches_the_items_of_a_list_file() {
    let kpt = host("kpt");
    let dir = tmp_dir("hosts", "render-list");
    let pkg = dir.join("pkg");
    package(&pkg, &kpt);
    fs::write(pkg.join("roles.yaml"), ROLE_LIST).expect("write");
    fs::write(pkg.join("fn.yaml"), ROLE_CONFIG).expect("write");
    let kptfile = fs::read_to_string(pkg.join("Kptfile")).expect("Kptfile");
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - exec: {}\n      configPath: fn.yaml\n",
        bin().display()
    );
    fs::write(pkg.join("Kptfile"), format!("{kptfile}{pipeline}")).expect("write");
    let want = ROLE_LIST.replace(
        "    name: prometheus-k8s\n    namespace: monitoring\n",
        "    name: prometheus-k8s\n    namespace: monitoring\n    labels:\n      team: monitoring\n",
    );
    for round in 0..2 {
        let out = run(Command::new(&kpt)
            .args(["fn", "render", "--allow-exec", "."])
            .current_dir(&pkg));
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            fs::read_to_string(pkg.join("roles.yaml")).expect("read"),
            want,
            "round {round}"
        );
        assert_eq!(
            fs::read_to_string(pkg.join("deploy.yaml")).expect("read"),
            DEPLOY
        );
    }
}

/// Kustomize flattens list kinds before any transformer runs, so the legacy
/// exec plugin is handed the Roles as documents of their own and patches them; the build holds
/// them flattened, as kustomize writes every list.
#[test]
#[cfg_attr(not(host_kubectl), ignore = "needs kubectl on PATH")]
fn kubectl_kustomize_hands_the_plugin_a_list_files_items() {
    let kubectl = host("kubectl");
    let dir = tmp_dir("hosts", "kustomize-list");
    let plugin_dir = dir.join("plugins/fn.krm-merge.dev/v1alpha1/merge");
    fs::create_dir_all(&plugin_dir).expect("plugin dir");
    std::os::unix::fs::symlink(bin(), plugin_dir.join("Merge")).expect("symlink");
    let kdir = dir.join("k");
    fs::create_dir_all(&kdir).expect("kustomization dir");
    fs::write(kdir.join("roles.yaml"), ROLE_LIST).expect("write");
    fs::write(kdir.join("fn.yaml"), ROLE_CONFIG).expect("write");
    fs::write(
        kdir.join("kustomization.yaml"),
        "resources:\n- roles.yaml\ntransformers:\n- fn.yaml\n",
    )
    .expect("write");
    let out = run(Command::new(&kubectl)
        .args(["kustomize", "--enable-alpha-plugins", "."])
        .env("KUSTOMIZE_PLUGIN_HOME", dir.join("plugins"))
        .current_dir(&kdir));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = docs(&String::from_utf8_lossy(&out.stdout));
    let kinds: Vec<&str> = got.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["Role", "Role"]);
    let labels: Vec<&serde_json::Value> = got.iter().map(|d| &d["metadata"]["labels"]).collect();
    assert_eq!(
        labels,
        [
            &serde_json::Value::Null,
            &serde_json::json!({"team": "monitoring"})
        ]
    );
}
