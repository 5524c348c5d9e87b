//! The binary's surface, as the guide's (doc/GUIDE.md) "Hosts" and "Input and output" sections describe
//! it: modes, wire forms, exit codes, results, errors for bad input, and what the output keeps.

use std::fs;
use std::path::PathBuf;

use assert_cmd::assert::OutputAssertExt;
use serde_json::Value;

use crate::support::*;

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("krm-merge-cli-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).expect("temp dir");
    d
}

const DEPLOY: &str = "\
# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web   # keep me
  labels:
    app: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: app
        image: \"nginx:1.0\"
";

const SERVICE: &str = "\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
";

fn config(patches: &str) -> String {
    format!("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: t\nspec:\n  patches:\n{patches}")
}

fn rl(items: &[&str], fn_config: &str) -> String {
    let mut s = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    for i in items {
        for (n, line) in i.lines().enumerate() {
            s.push_str(if n == 0 { "- " } else { "  " });
            s.push_str(line);
            s.push('\n');
        }
    }
    s.push_str("functionConfig:\n");
    for line in fn_config.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

const REPLICAS: &str = "  - patch: |\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: web\n      spec:\n        replicas: 3\n";

#[test]
fn help_and_version_never_read_stdin() {
    // No stdin is attached at all (kpt fn doc runs `docker run IMAGE --help` without -i).
    for arg in ["--help", "-h", "--version"] {
        let done = std::process::Command::new(bin())
            .arg(arg)
            .stdin(std::process::Stdio::null())
            .assert()
            .success();
        assert!(!done.get_output().stdout.is_empty(), "{arg}");
    }
    cmd()
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("krm-merge {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["--bogus"][..],
        &["merge2", "only-one"],
        &["--config"],
        &["merge3", "a", "b"],
        &["no-such-file.yaml", "x"],
    ] {
        let done = cmd().args(args).write_stdin("").assert().code(2);
        let out = out_of(done.get_output());
        assert!(
            out.stderr.contains("krm-merge: "),
            "{args:?}: {}",
            out.stderr
        );
    }
    let done = cmd()
        .args(["--config", "no-such-config.yaml"])
        .write_stdin("")
        .assert()
        .code(2);
    let out = out_of(done.get_output());
    assert!(out.stderr.contains("no-such-config.yaml"), "{}", out.stderr);
}

#[test]
fn schema_is_json_schema_of_the_merge_kind() {
    let out = krm(&["schema"], "");
    assert_eq!(out.code, 0);
    let v: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert!(
        v.pointer("/properties/spec/properties/patches").is_some(),
        "{v}"
    );
}

#[test]
fn resource_list_round_trip_with_results() {
    let input = rl(&[DEPLOY, SERVICE], &config(REPLICAS));
    let out = krm(&[], &input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Only the replicas line changes; the results are appended.
    let (before, after) = out
        .stdout
        .split_once("functionConfig:")
        .expect("functionConfig kept");
    assert_eq!(
        before,
        input
            .split_once("functionConfig:")
            .unwrap()
            .0
            .replace("replicas: 1", "replicas: 3")
    );
    assert!(after.contains("results:\n- message: \"patch[0] (merge2): applied to 1 resource(s)\"\n  severity: info\n"), "{after}");
}

#[test]
fn every_resource_list_version_and_list_and_json_are_accepted() {
    for api in [
        "config.kubernetes.io/v1",
        "config.kubernetes.io/v1beta1",
        "config.kubernetes.io/v1alpha1",
    ] {
        let input = rl(&[DEPLOY], &config(REPLICAS)).replace("config.kubernetes.io/v1", api);
        let out = krm(&[], &input);
        assert_eq!(out.code, 0, "{api}: {}", out.stderr);
        assert!(
            out.stdout
                .starts_with(&format!("apiVersion: {api}\nkind: ResourceList\n")),
            "{}",
            out.stdout
        );
    }
    // JSON in, block YAML out.
    let json = serde_json::json!({
        "apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
        "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1", "on": "yes"}}],
        "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"},
            "data": {"kind": "ConfigMap", "patch": "data:\n  b: \"2\"\n"}}
    });
    let out = krm(&[], &json.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm\n  data:\n    a: \"1\"\n    \"on\": \"yes\"\n    b: \"2\"\n"), "{}", out.stdout);
    // A List with --config.
    let dir = tmp_dir("list");
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, config(REPLICAS)).unwrap();
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n- {}",
        DEPLOY.replace('\n', "\n  ").trim_end()
    );
    let out = krm(&["--config", cfg.to_str().unwrap()], &format!("{list}\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("apiVersion: v1\nkind: List\nitems:\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("replicas: 3"));
}

#[test]
fn standalone_filter_keeps_untouched_documents_byte_for_byte() {
    let dir = tmp_dir("standalone");
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, config(REPLICAS)).unwrap();
    let odd = "# odd but valid\nkind:   ConfigMap\napiVersion: v1\nmetadata: {name: x}   # flow\ndata:\n  k: 'v'\n";
    let stream = format!("{DEPLOY}---\n{odd}---\n{SERVICE}");
    let out = krm(&["--config", cfg.to_str().unwrap()], &stream);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, stream.replace("replicas: 1", "replicas: 3"));
    // The same from files and directories (sorted, recursively).
    fs::create_dir_all(dir.join("pkg/sub")).unwrap();
    fs::write(dir.join("pkg/a.yaml"), DEPLOY).unwrap();
    fs::write(dir.join("pkg/sub/b.yaml"), SERVICE).unwrap();
    fs::write(dir.join("pkg/notes.txt"), "not yaml").unwrap();
    let out = krm(
        &[
            "--config",
            cfg.to_str().unwrap(),
            dir.join("pkg").to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "{}---\n{SERVICE}",
            DEPLOY.replace("replicas: 1", "replicas: 3")
        )
    );
}

#[test]
fn legacy_kustomize_plugin_mode() {
    let dir = tmp_dir("plugin");
    let cfg = dir.join("kust-plugin-config-123");
    fs::write(&cfg, config(REPLICAS)).unwrap();
    let out = krm(&[cfg.to_str().unwrap()], &format!("{DEPLOY}---\n{SERVICE}"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("replicas: 3") && out.stdout.contains("kind: Service"),
        "{}",
        out.stdout
    );
}

#[test]
fn merge_subcommands() {
    let dir = tmp_dir("subcommands");
    let (src, dest) = (dir.join("src.yaml"), dir.join("dest.yaml"));
    fs::write(&src, "spec:\n  replicas: 5\n").unwrap();
    fs::write(&dest, DEPLOY).unwrap();
    let out = krm(
        &["merge2", src.to_str().unwrap(), dest.to_str().unwrap()],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, DEPLOY.replace("replicas: 1", "replicas: 5"));
    let (orig, upd) = (dir.join("o.yaml"), dir.join("u.yaml"));
    fs::write(&orig, DEPLOY).unwrap();
    fs::write(&upd, DEPLOY.replace("nginx:1.0", "nginx:2.0")).unwrap();
    let local = DEPLOY.replace("replicas: 1", "replicas: 4");
    fs::write(&dest, &local).unwrap();
    let out = krm(
        &[
            "merge3",
            orig.to_str().unwrap(),
            upd.to_str().unwrap(),
            dest.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, local.replace("nginx:1.0", "nginx:2.0"));
}

#[test]
fn malformed_input_is_an_error_with_line_and_column() {
    let bad = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- a: b\n c: d\n";
    let out = krm(&[], bad);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("line 5, column"), "{}", out.stderr);
    let results = rl_results(&out.stdout);
    assert_eq!(results.len(), 1, "{}", out.stdout);
    assert_eq!(results[0]["severity"], "error");
    let cases = [
        (
            "duplicate key",
            "apiVersion: v1\nkind: ResourceList\nitems:\n- kind: A\n  kind: B\n",
            "line 5",
        ),
        (
            "tab indentation",
            "apiVersion: v1\nkind: ResourceList\nitems:\n- kind: A\n\tx: 1\n",
            "tab",
        ),
        (
            "not a resource",
            "apiVersion: v1\nkind: ResourceList\nitems:\n- just text\n",
            "items[0]",
        ),
    ];
    for (what, input, want) in cases {
        let out = krm(&[], input);
        assert_eq!(out.code, 1, "{what}");
        assert!(out.stderr.contains(want), "{what}: {}", out.stderr);
    }
    let out = krm_bytes(&[0x61, 0x3a, 0x20, 0xff, 0x0a]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("invalid UTF-8 at line 1, column 4"),
        "{}",
        out.stderr
    );
}

fn krm_bytes(stdin: &[u8]) -> Out {
    use std::io::Write;
    let mut child = std::process::Command::new(bin())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[test]
fn invalid_function_config_names_the_field() {
    let cases = [
        (
            "  - patch: 'kind: A'\n    target:\n      name: '*web'\n",
            "spec.patches[0].target.name",
        ),
        (
            "  - patch: 'kind: A'\n    options:\n      inferMergeKeys: maybe\n",
            "spec.patches[0].options.inferMergeKeys",
        ),
        ("  - patch: 'kind: A'\n    bogus: 1\n", "bogus"),
    ];
    for (patches, field) in cases {
        let input = rl(&[DEPLOY], &config(patches));
        let out = krm(&[], &input);
        assert_eq!(out.code, 1, "{field}");
        assert!(out.stderr.contains(field), "{field}: {}", out.stderr);
        // The items are written back as they came.
        assert_eq!(rl_items(&out.stdout), rl_items(&input));
    }
}

#[test]
fn selection_rules() {
    // A target selecting nothing is a warning; a patch without target matching nothing is an error.
    let input = rl(
        &[DEPLOY],
        &config("  - target: {kind: Nope}\n    patch: 'metadata: {labels: {x: y}}'\n"),
    );
    let out = krm(&[], &input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        rl_results(&out.stdout)
            .iter()
            .any(|r| r["severity"] == "warning"),
        "{}",
        out.stdout
    );
    let input = rl(&[DEPLOY], &config("  - patch: 'apiVersion: apps/v1\n\n      kind: Deployment\n\n      metadata: {name: nope}'\n"));
    let out = krm(&[], &input);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("matches no resource"), "{}", out.stderr);
    // `target: {}` selects everything but bookkeeping items.
    let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n";
    let kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n";
    let input = rl(
        &[DEPLOY, SERVICE, local, kptfile],
        &config("  - target: {}\n    patch: 'metadata: {labels: {team: a}}'\n"),
    );
    let out = krm(&[], &input);
    let items = rl_items(&out.stdout);
    let labelled: Vec<bool> = items
        .iter()
        .map(|i| i.pointer("/metadata/labels/team").is_some())
        .collect();
    assert_eq!(labelled, [true, true, false, false]);
    // A target that names the kind reaches them.
    let input = rl(
        &[kptfile],
        &config("  - target: {kind: Kptfile}\n    patch: 'metadata: {labels: {team: a}}'\n"),
    );
    assert!(rl_items(&krm(&[], &input).stdout)[0]
        .pointer("/metadata/labels/team")
        .is_some());
}

#[test]
fn bookkeeping_annotations_are_out_of_reach() {
    let item = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations:\n    config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/path: cm.yaml\n";
    let patch = "  - target: {kind: ConfigMap}\n    patch: |\n      metadata:\n        annotations:\n          config.kubernetes.io/index: '7'\n          internal.config.kubernetes.io/path: null\n          mine: x\n";
    let out = krm(&[], &rl(&[item], &config(patch)));
    let items = rl_items(&out.stdout);
    let ann = &items[0]["metadata"]["annotations"];
    assert_eq!(ann["config.kubernetes.io/index"], "0");
    assert_eq!(ann["internal.config.kubernetes.io/path"], "cm.yaml");
    assert_eq!(ann["mine"], "x");
}

#[test]
fn all_or_nothing_when_a_patch_fails_on_the_last_target() {
    let items: Vec<String> = (0..20)
        .map(|i| DEPLOY.replace("name: web", &format!("name: web-{i}")))
        .collect();
    let mut refs: Vec<&str> = items.iter().map(String::as_str).collect();
    // The last one has no containers list to address.
    let last = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-last\n";
    refs.push(last);
    let patch = "  - target: {kind: Deployment}\n    patch: 'spec: {replicas: 9}'\n  - type: json6902\n    target: {kind: Deployment}\n    patch: |\n      - op: replace\n        path: /spec/template/spec/containers/[name=app]/image\n        value: x\n";
    let input = rl(&refs, &config(patch));
    let out = krm(&[], &input);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("Deployment web-last"), "{}", out.stderr);
    assert_eq!(
        rl_items(&out.stdout),
        rl_items(&input),
        "items must come back as they came in"
    );
}

#[test]
fn merge2_is_idempotent_through_the_binary() {
    let input = rl(&[DEPLOY, SERVICE], &config("  - target: {kind: Deployment}\n    patch: |\n      spec:\n        template:\n          spec:\n            containers:\n            - name: sidecar\n              image: s:1\n"));
    let once = krm(&[], &input);
    let items_once = rl_items(&once.stdout);
    let again_input = once
        .stdout
        .split_once("results:")
        .map_or(once.stdout.clone(), |(a, _)| a.to_owned());
    let twice = krm(&[], &again_input);
    assert_eq!(rl_items(&twice.stdout), items_once);
    assert_eq!(twice.stdout.split_once("results:").unwrap().0, again_input);
}

/// kpt's `function-input` ConfigMap without data (`kpt fn eval --exec krm-merge` with no
/// `--fn-config` and no `key=value`) says nothing of what to patch: an error saying how to give
/// a config, and the items as they came.
#[test]
fn empty_configmap_config_is_an_error_saying_what_is_missing() {
    let fc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: {}\n";
    let input = rl(&[DEPLOY], fc);
    let out = krm(&[], &input);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("error: no functionConfig") && out.stderr.contains("--fn-config"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout.split_once("results:").unwrap().0, input);
}

#[test]
fn relative_patch_paths_resolve_from_the_config_file() {
    let dir = tmp_dir("paths");
    fs::create_dir_all(dir.join("patches")).unwrap();
    fs::write(
        dir.join("patches/replicas.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 7\n",
    )
    .unwrap();
    fs::write(
        dir.join("fn.yaml"),
        config("  - path: patches/replicas.yaml\n"),
    )
    .unwrap();
    let other = tmp_dir("paths-cwd");
    let out = krm_in(
        &["--config", dir.join("fn.yaml").to_str().unwrap()],
        DEPLOY,
        Some(&other),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("replicas: 7"));
}

// ----- the front door: arguments, results on stderr, nothing down a pipe on error ----------

/// A config file in a directory of its own.
fn config_file(name: &str, patches: &str) -> (PathBuf, String) {
    let dir = tmp_dir(name);
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, config(patches)).unwrap();
    let s = cfg.to_str().unwrap().to_owned();
    (dir, s)
}

#[test]
fn flags_and_paths_in_any_order() {
    let (dir, cfg) = config_file("any-order", REPLICAS);
    fs::write(dir.join("d.yaml"), DEPLOY).unwrap();
    let d = dir.join("d.yaml").to_str().unwrap().to_owned();
    let want = DEPLOY.replace("replicas: 1", "replicas: 3");
    for args in [
        vec!["--config", &cfg, &d],
        vec![&d, "--config", &cfg],
        vec![&d, "-c", &cfg, "-q"],
        vec!["-q", &d, &format!("--config={cfg}")],
    ] {
        let out = krm(&args, "");
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (0, want.as_str()),
            "{args:?}: {}",
            out.stderr
        );
    }
    // `-` is stdin, among files; `--` ends the options.
    let out = krm(&["--config", &cfg, "-"], DEPLOY);
    assert_eq!(out.stdout, want, "{}", out.stderr);
    let out = krm_in(&["--config", &cfg, "--", "--odd.yaml"], "", Some(&dir));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("error: input --odd.yaml: no such file"),
        "{}",
        out.stderr
    );
    fs::write(dir.join("--odd.yaml"), SERVICE).unwrap();
    let out = krm_in(&["--", "--odd.yaml", "-", "-c", &cfg], DEPLOY, Some(&dir));
    // `-c` after `--` is a path.
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = krm_in(&["-c", &cfg, "--", "--odd.yaml", "-"], DEPLOY, Some(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{SERVICE}---\n{want}"));
    // merge2's options after its files.
    let (src, dest) = (dir.join("src.yaml"), dir.join("dest.yaml"));
    fs::write(
        &src,
        "spec:\n  template:\n    spec:\n      containers:\n      - name: side\n        image: s\n",
    )
    .unwrap();
    fs::write(&dest, DEPLOY).unwrap();
    let out = krm(
        &[
            "merge2",
            src.to_str().unwrap(),
            dest.to_str().unwrap(),
            "--new-list-items",
            "prepend",
        ],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.find("name: side").unwrap() < out.stdout.find("name: app").unwrap(),
        "{}",
        out.stdout
    );
}

#[test]
fn usage_errors_name_the_argument_and_suggest() {
    let out = krm(&["--confg", "fn.yaml"], "");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("krm-merge: error: unexpected argument '--confg'"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("a similar argument exists: '--config'"),
        "{}",
        out.stderr
    );
    let out = krm(&["mrege2", "a", "b"], "");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("unrecognized subcommand 'mrege2'")
            && out.stderr.contains("a similar subcommand exists: 'merge2'"),
        "{}",
        out.stderr
    );
    let out = krm(&["merge3", "--conflicts", "maybe", "o", "u", "d"], "");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("'maybe'") && out.stderr.contains("warn, error"),
        "{}",
        out.stderr
    );
    let out = krm(&["--in-place", "pkg"], "");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--config"), "{}", out.stderr);
}

#[test]
fn each_command_has_its_own_help() {
    let help = |args: &[&str]| {
        let done = cmd().args(args).assert().success();
        out_of(done.get_output()).stdout
    };
    let merge2 = help(&["merge2", "--help"]);
    assert!(
        merge2.contains("Usage: krm-merge merge2 [OPTIONS] <SRC> <DEST>"),
        "{merge2}"
    );
    assert!(
        merge2.contains("--new-list-items <WHERE>") && merge2.contains("--no-infer-merge-keys"),
        "{merge2}"
    );
    assert!(!merge2.contains("--conflicts"), "{merge2}");
    let merge3 = help(&["merge3", "-h"]);
    assert!(merge3.contains("--conflicts <WHAT>"), "{merge3}");
    assert!(help(&["completions", "--help"]).contains("bash"));
    let top = help(&["--help"]);
    assert!(top.starts_with("krm-merge: merge and patch"), "{top}");
    assert!(
        top.contains("--in-place") && top.contains("functionConfig (apiVersion"),
        "{top}"
    );
    assert!(top.lines().all(|l| l.len() <= 100), "{top}");
}

#[test]
fn a_terminal_with_no_input_says_what_is_expected() {
    // `script` gives the binary a terminal for stdin; with nothing typed it must not wait.
    for args in ["", " --config /nonexistent-dir-x/fn.yaml"] {
        let out = std::process::Command::new("script")
            .args(["-qec", &format!("{}{args}", bin().display()), "/dev/null"])
            .stdin(std::process::Stdio::null())
            .timeout_after(10);
        let out = out_of(&out);
        if args.is_empty() {
            assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
            assert!(out.stdout.contains("stdin is a terminal"), "{}", out.stdout);
        } else {
            // A missing config is said first.
            assert!(out.stdout.contains("fn.yaml"), "{}", out.stdout);
        }
    }
}

trait TimeoutAfter {
    fn timeout_after(&mut self, secs: u64) -> std::process::Output;
}

impl TimeoutAfter for std::process::Command {
    /// Runs the command, killing it after `secs`: a test of "never waits" must not hang.
    fn timeout_after(&mut self, secs: u64) -> std::process::Output {
        let mut c = assert_cmd::Command::from_std(std::mem::replace(
            self,
            std::process::Command::new("true"),
        ));
        c.timeout(std::time::Duration::from_secs(secs));
        c.output().expect("run")
    }
}

#[test]
fn results_reach_stderr_in_config_mode() {
    // A target that selects nothing: a warning, exit 0, the output written.
    let (_, cfg) = config_file(
        "warn",
        "  - target: {kind: Nope}\n    patch: 'metadata: {labels: {x: y}}'\n",
    );
    let out = krm(&["--config", &cfg], DEPLOY);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, DEPLOY);
    assert_eq!(
        out.stderr,
        "krm-merge: warning: patch[0] (merge2): target {kind: Nope} selects no resource\n"
    );
    // -q silences it; -v adds the info lines.
    assert_eq!(krm(&["--config", &cfg, "-q"], DEPLOY).stderr, "");
    let (_, cfg2) = config_file("info", REPLICAS);
    let out = krm(&["-v", "--config", &cfg2], DEPLOY);
    assert_eq!(
        out.stderr,
        "krm-merge: info: patch[0] (merge2): applied to 1 resource(s)\n"
    );
    // --results FILE: the KRM results list.
    let (dir, _) = config_file("results-file", "");
    let results = dir.join("results.yaml");
    let out = krm(
        &["--config", &cfg, "--results", results.to_str().unwrap()],
        DEPLOY,
    );
    assert_eq!(out.code, 0);
    let written = docs(&fs::read_to_string(&results).unwrap());
    assert_eq!(written[0]["results"][0]["severity"], "warning");
    assert_eq!(written[0]["results"][0]["tags"]["patch"], "0");
}

#[test]
fn an_error_in_config_mode_writes_nothing_to_stdout() {
    let (dir, cfg) = config_file("error", "  - type: json6902\n    target: {kind: Deployment}\n    patch: '[{op: remove, path: /spec/paused}]'\n");
    fs::write(dir.join("d.yaml"), DEPLOY).unwrap();
    let results = dir.join("results.yaml");
    let out = krm(
        &[
            "--config",
            &cfg,
            dir.join("d.yaml").to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "", "an error sends nothing down the pipe");
    assert_eq!(
        out.stderr,
        "krm-merge: error: Deployment web: patch[0] (json6902): op 0 (remove /spec/paused): path does not exist\n"
    );
    let written = docs(&fs::read_to_string(&results).unwrap());
    assert_eq!(written[0]["results"][0]["severity"], "error");
    assert_eq!(
        written[0]["results"][0]["file"]["path"],
        dir.join("d.yaml").to_str().unwrap()
    );
    // The same in a pipe: the consumer sees no resource at all.
    let script = format!(
        "{} --config {cfg} < {} | wc -c",
        bin().display(),
        dir.join("d.yaml").display()
    );
    let piped = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&piped.stdout).trim(), "0");
    // An invalid config: exit 1, nothing on stdout, the field named.
    let (_, bad) = config_file(
        "invalid",
        "  - patch: 'kind: A'\n    options: {newListItems: sideways}\n",
    );
    let out = krm(&["--config", &bad], DEPLOY);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(
        out.stderr.contains("spec.patches[0].options.newListItems"),
        "{}",
        out.stderr
    );
}

#[test]
fn plugin_and_merge_commands_report_and_write_nothing_on_error() {
    let (dir, cfg) = config_file(
        "plugin-results",
        "  - target: {kind: Nope}\n    patch: 'metadata: {labels: {x: y}}'\n",
    );
    // The exec plugin as kustomize runs it: its warnings on stderr (kustomize shows them).
    let mut c = cmd();
    c.arg(&cfg)
        .env("KUSTOMIZE_PLUGIN_CONFIG_ROOT", &dir)
        .write_stdin(DEPLOY);
    let out = out_of(&c.output().unwrap());
    assert_eq!((out.code, out.stdout.as_str()), (0, DEPLOY));
    assert!(
        out.stderr
            .contains("warning: patch[0] (merge2): target {kind: Nope} selects no resource"),
        "{}",
        out.stderr
    );
    let (_, bad) = config_file(
        "plugin-error",
        "  - patch: 'apiVersion: v1\n\n      kind: Nope\n\n      metadata: {name: x}'\n",
    );
    let out = krm(&[&bad], DEPLOY);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(out.stderr.contains("matches no resource"), "{}", out.stderr);
    // merge3: a conflict is a warning on stderr; with --conflicts error nothing is written.
    let (o, u, d) = (dir.join("o.yaml"), dir.join("u.yaml"), dir.join("d.yaml"));
    fs::write(&o, DEPLOY).unwrap();
    fs::write(&u, DEPLOY.replace("replicas: 1", "replicas: 2")).unwrap();
    fs::write(&d, DEPLOY.replace("replicas: 1", "replicas: 5")).unwrap();
    let files = [
        o.to_str().unwrap(),
        u.to_str().unwrap(),
        d.to_str().unwrap(),
    ];
    let out = krm(&["merge3", files[0], files[1], files[2]], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("replicas: 2"));
    assert!(
        out.stderr.starts_with(
            "krm-merge: warning: Deployment web: spec.replicas: patch[0] (merge3): conflict"
        ),
        "{}",
        out.stderr
    );
    let out = krm(
        &[
            "merge3",
            "--conflicts",
            "error",
            files[0],
            files[1],
            files[2],
        ],
        "",
    );
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(
        out.stderr.contains("error: Deployment web"),
        "{}",
        out.stderr
    );
}

#[test]
fn messages_are_one_line_whatever_the_names_hold() {
    // A resource name with a line break and an escape sequence.
    let evil = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"evil\\nkrm-merge: all good\\e[2J\"\ndata: {a: '1'}\n";
    let (_, cfg) = config_file("escape", "  - type: json6902\n    target: {kind: ConfigMap}\n    patch: '[{op: remove, path: /data/zzz}]'\n");
    let out = krm(&["--config", &cfg], evil);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("ConfigMap evil\\nkrm-merge: all good\\x1b[2J: patch[0]"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains('\x1b'));
    // In KRM mode too; the results keep the exact name.
    let out = krm(&[], &rl(&[evil], &config("  - type: json6902\n    target: {kind: ConfigMap}\n    patch: '[{op: remove, path: /data/zzz}]'\n")));
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    let results = rl_results(&out.stdout);
    assert_eq!(
        results[0]["resourceRef"]["name"],
        "evil\nkrm-merge: all good\x1b[2J"
    );
}

#[test]
fn write_errors_are_reported() {
    let (dir, cfg) = config_file("dev-full", REPLICAS);
    fs::write(dir.join("d.yaml"), DEPLOY).unwrap();
    for args in [
        vec![
            "--config",
            cfg.as_str(),
            dir.join("d.yaml").to_str().unwrap(),
        ],
        vec!["schema"],
        vec!["--help"],
    ] {
        let full = fs::File::options().write(true).open("/dev/full").unwrap();
        let out = std::process::Command::new(bin())
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot write to stdout"),
            "{args:?}"
        );
    }
    // KRM mode too.
    let full = fs::File::options().write(true).open("/dev/full").unwrap();
    let input = dir.join("rl.yaml");
    fs::write(&input, rl(&[DEPLOY], &config(REPLICAS))).unwrap();
    let out = std::process::Command::new(bin())
        .stdin(fs::File::open(&input).unwrap())
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn completions_parse() {
    let out = krm(&["completions", "bash"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("krm-merge") && out.stdout.contains("--in-place"));
    let dir = tmp_dir("completions");
    let script = dir.join("krm-merge.bash");
    fs::write(&script, &out.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    for shell in ["zsh", "fish", "powershell"] {
        let out = krm(&["completions", shell], "");
        assert_eq!(out.code, 0, "{shell}");
        assert!(out.stdout.contains("merge3"), "{shell}");
    }
    assert_eq!(krm(&["completions", "tcsh"], "").code, 2);
}

#[test]
fn the_man_page_is_committed() {
    let page = fs::read_to_string(root().join("doc/krm-merge.1")).expect("doc/krm-merge.1");
    assert!(page.contains(".TH krm-merge 1"), "{page}");
    for flag in ["in\\-place", "\\-\\-config", "merge2", "completions"] {
        assert!(page.contains(flag), "{flag}");
    }
}

/// Through the command line: a `path:` outside the config's directory is
/// refused by default (kustomize's `LoadRestrictionsRootOnly`), and `--load-restrictor none`
/// (or kustomize's `LoadRestrictionsNone`) lifts it, in `--config` mode and in KRM mode.
#[test]
fn load_restrictor_none_lifts_the_root_rule() {
    let d = tmp_dir("load-restrictor");
    let pkg = d.join("pkg");
    fs::create_dir_all(&pkg).expect("dir");
    fs::write(d.join("outside.yaml"), "data: {secret: token}\n").expect("patch");
    let config = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: m}\nspec:\n  patches:\n  - type: jsonmerge\n    target: {kind: ConfigMap}\n    path: ../outside.yaml\n";
    fs::write(pkg.join("fn.yaml"), config).expect("config");
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
    let fn_path = pkg.join("fn.yaml").display().to_string();
    let refused = krm(&["--config", &fn_path, "-"], cm);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("load restrictor") && refused.stdout.is_empty(),
        "{}",
        refused.stderr
    );
    for rule in ["none", "LoadRestrictionsNone"] {
        let lifted = krm(&["--load-restrictor", rule, "--config", &fn_path, "-"], cm);
        assert_eq!(lifted.code, 0, "{rule}: {}", lifted.stderr);
        assert!(lifted.stdout.contains("secret: token"), "{}", lifted.stdout);
    }
    let bad = krm(
        &["--load-restrictor", "sometimes", "--config", &fn_path],
        cm,
    );
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("sometimes"), "{}", bad.stderr);
    // KRM mode: the config's path annotation is relative to the package root, the current
    // directory, and files must stay in its tree.
    let rl = String::from(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\nfunctionConfig:\n  apiVersion: fn.krm-merge.dev/v1alpha1\n  kind: Merge\n  metadata:\n    name: m\n    annotations: {internal.config.kubernetes.io/path: fn.yaml}\n  spec:\n    patches:\n    - type: jsonmerge\n      target: {kind: ConfigMap}\n      path: ../outside.yaml\n",
    );
    let refused = krm_in(&[], &rl, Some(&pkg));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    let lifted = krm_in(&["--load-restrictor", "none"], &rl, Some(&pkg));
    assert_eq!(lifted.code, 0, "{}", lifted.stderr);
    assert!(lifted.stdout.contains("secret: token"));
}

/// A second document in a functionConfig file was silently ignored.
#[test]
fn a_config_file_holds_one_document() {
    let d = tmp_dir("two-configs");
    let one = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: m}\nspec:\n  patches:\n  - target: {kind: ConfigMap}\n    patch: 'data: {a: \"1\"}'\n";
    fs::write(d.join("fn.yaml"), format!("{one}---\n{one}")).expect("config");
    let fn_path = d.join("fn.yaml").display().to_string();
    let out = krm(
        &["--config", &fn_path],
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("more than one document"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
}
