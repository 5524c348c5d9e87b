//! Where users meet krm-merge: defaults that protect (schema findings and glob-like targets are
//! errors, `failOn: warning` for hosts that hide warnings, no functionConfig is an error) and
//! messages that guide (near misses, every config error at once, file errors said one way,
//! named patches, a kustomization as `--config`, `path:` under `kpt fn eval --fn-config`,
//! colour), each through the binary and, where a host is involved, through kpt or kubectl.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 1
";

fn dir(name: &str) -> PathBuf {
    tmp_dir("users", name)
}

fn merge(spec: &str) -> String {
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: t\nspec:\n{spec}"
    )
}

/// Writes `files` under `d` and runs the binary there.
fn run_in(d: &Path, files: &[(&str, &str)], args: &[&str]) -> Out {
    for (name, text) in files {
        let path = d.join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        fs::write(path, text).expect("write");
    }
    krm_in(args, "", Some(d))
}

#[test]
fn schema_findings_are_errors_by_default_and_warnings_when_asked() {
    let d = dir("validation");
    let typo = |options: &str| {
        merge(&format!(
            "  patches:\n  - target: {{kind: Deployment}}\n{options}    patch: \"spec: {{replcas: 3}}\"\n"
        ))
    };
    // The default: an error naming the field meant and the way out; nothing written.
    let out = run_in(
        &d,
        &[("fn.yaml", &typo("")), ("d.yaml", DEPLOY)],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr
            .contains("error: Deployment prod/web: spec.replcas:")
            && out.stderr.contains("did you mean `replicas`?")
            && out.stderr.contains("options.validation: warn"),
        "{}",
        out.stderr
    );
    // validation: warn, and its older spelling strict: false: a warning, the patch applied.
    for options in [
        "    options: {validation: warn}\n",
        "    options: {strict: false}\n",
    ] {
        let out = run_in(
            &d,
            &[("fn.yaml", &typo(options))],
            &["--config", "fn.yaml", "d.yaml"],
        );
        assert_eq!(out.code, 0, "{options}: {}", out.stderr);
        assert!(out.stdout.contains("replcas: 3"), "{}", out.stdout);
        assert!(out.stderr.contains("warning: "), "{}", out.stderr);
    }
    // Both spellings at odds: an error naming them.
    let out = run_in(
        &d,
        &[(
            "fn.yaml",
            &typo("    options: {validation: warn, strict: true}\n"),
        )],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("contradicts validation"),
        "{}",
        out.stderr
    );
    // kustomize's PatchTransformer keeps kustomize's silence: a warning, the patch applied.
    let pt = "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\ntarget: {kind: Deployment}\npatch: 'spec: {replcas: 3}'\n";
    let out = run_in(&d, &[("pt.yaml", pt)], &["--config", "pt.yaml", "d.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("warning: "), "{}", out.stderr);
}

#[test]
fn fail_on_warning_makes_a_warning_fail_the_run() {
    let d = dir("fail-on");
    let config = |fail_on: &str| {
        merge(&format!(
            "{fail_on}  patches:\n  - target: {{kind: Nothing}}\n    patch: \"spec: {{replicas: 3}}\"\n  - target: {{kind: Deployment}}\n    patch: \"spec: {{replicas: 3}}\"\n"
        ))
    };
    let out = run_in(
        &d,
        &[("fn.yaml", &config("")), ("d.yaml", DEPLOY)],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("warning: patch[0]"), "{}", out.stderr);
    let out = run_in(
        &d,
        &[("fn.yaml", &config("  failOn: warning\n"))],
        &["--config", "fn.yaml", "d.yaml", "--in-place"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "error: patch[0] (merge2): target {kind: Nothing} selects no resource (a warning; \
             failOn: warning makes it an error)"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(fs::read_to_string(d.join("d.yaml")).expect("read"), DEPLOY);
    // A value that is not one is an error naming the field.
    let out = run_in(
        &d,
        &[("fn.yaml", &config("  failOn: sometimes\n"))],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("spec.failOn"), "{}", out.stderr);
}

/// kustomize shows a legacy exec plugin's stderr only when it fails: with `failOn: warning` the
/// target that selects nothing stops the build and is shown.
#[test]
#[cfg_attr(not(host_kubectl), ignore = "needs kubectl on PATH")]
fn fail_on_warning_shows_a_warning_under_kustomize() {
    let kubectl = host("kubectl");
    let d = dir("fail-on-kustomize");
    let plugin_dir = d.join("plugins/fn.krm-merge.dev/v1alpha1/merge");
    fs::create_dir_all(&plugin_dir).expect("plugin dir");
    std::os::unix::fs::symlink(bin(), plugin_dir.join("Merge")).expect("symlink");
    let k = d.join("k");
    fs::create_dir_all(&k).expect("dir");
    fs::write(k.join("d.yaml"), DEPLOY).expect("write");
    fs::write(
        k.join("kustomization.yaml"),
        "resources: [d.yaml]\ntransformers: [fn.yaml]\n",
    )
    .expect("write");
    let build = |fail_on: &str| {
        fs::write(
            k.join("fn.yaml"),
            merge(&format!(
                "{fail_on}  patches:\n  - target: {{kind: Deploymnet}}\n    patch: \"spec: {{replicas: 3}}\"\n"
            )),
        )
        .expect("write");
        run(Command::new(&kubectl)
            .args(["kustomize", "--enable-alpha-plugins", "."])
            .env("KUSTOMIZE_PLUGIN_HOME", d.join("plugins"))
            .current_dir(&k))
    };
    // Without it, the build passes and the warning is nowhere to be seen.
    let quiet = build("");
    assert!(quiet.status.success());
    assert!(!text(&quiet.stderr).contains("selects no resource"));
    let loud = build("  failOn: warning\n");
    assert!(!loud.status.success());
    let stderr = text(&loud.stderr);
    assert!(
        stderr.contains("selects no resource; did you mean kind: Deployment"),
        "{stderr}"
    );
}

#[test]
fn no_function_config_is_an_error_saying_what_is_missing() {
    let rl = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}",
        DEPLOY
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{}{l}\n", if i == 0 { "- " } else { "  " }))
            .collect::<String>()
    );
    let out = krm(&[], &rl);
    assert_eq!(out.code, 1);
    let results = rl_results(&out.stdout);
    assert_eq!(results.len(), 1, "{}", out.stdout);
    assert_eq!(results[0]["severity"], "error");
    let message = results[0]["message"].as_str().expect("message");
    assert!(
        message.starts_with("no functionConfig") && message.contains("--fn-config"),
        "{message}"
    );
    // The items come back as they were.
    assert_eq!(out.stdout.split_once("results:").expect("results").0, rl);
}

/// `kpt fn source pkg | krm-merge | kpt fn sink out`: the error reaches the user, and nothing
/// reaches the sink.
#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn no_function_config_through_a_kpt_pipe() {
    let kpt = host("kpt");
    let d = dir("kpt-pipe");
    let pkg = d.join("pkg");
    fs::create_dir_all(&pkg).expect("dir");
    assert!(run(Command::new(&kpt)
        .args(["pkg", "init", "."])
        .current_dir(&pkg))
    .status
    .success());
    fs::write(pkg.join("d.yaml"), DEPLOY).expect("write");
    let source = run(Command::new(&kpt)
        .args(["fn", "source", "."])
        .current_dir(&pkg));
    assert!(source.status.success());
    let out = krm(&[], &text(&source.stdout));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("error: no functionConfig: nothing says what to patch"),
        "{}",
        out.stderr
    );
}

#[test]
fn file_errors_are_said_one_way() {
    let d = dir("files");
    let out = run_in(
        &d,
        &[("d.yaml", DEPLOY)],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "krm-merge: error: config fn.yaml: no such file\n"
    );
    let out = run_in(
        &d,
        &[("fn.yaml", &merge("  patches: []\n"))],
        &["--config", "fn.yaml", "gone.yaml"],
    );
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "krm-merge: error: input gone.yaml: no such file\n"
    );
    // --config DIR: the config is a file, and the one in DIR that looks like it is named.
    let out = run_in(
        &d,
        &[
            ("cfg/fn.yaml", &merge("  patches: []\n")),
            ("cfg/other.txt", "x"),
        ],
        &["--config", "cfg", "d.yaml"],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with(
            "krm-merge: error: config cfg: a directory; --config takes the functionConfig's file"
        ) && out
            .stderr
            .contains("cfg/fn.yaml (kind Merge) looks like one"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("os error"), "{}", out.stderr);
    // A missing path: names where it was looked for, and why there.
    let out = run_in(
        &d,
        &[(
            "cfg/fn.yaml",
            &merge("  patches:\n  - target: {kind: Deployment}\n    path: patches/scale.yaml\n"),
        )],
        &["--config", "cfg/fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 1);
    let looked = d.join("cfg/patches/scale.yaml");
    assert!(
        out.stderr.contains(&format!(
            "spec.patches[0].path: patches/scale.yaml: no such file: looked for {} (relative to \
             the functionConfig's directory, cfg)",
            looked.display()
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn every_patch_transformer_error_in_one_run() {
    // kustomize's PatchTransformer form once stopped at its first error: a misspelt key hid
    // the patch's own error, and a missing patch.
    let d = dir("all-errors-pt");
    let pt = |rest: &str| {
        format!("apiVersion: builtin\nkind: PatchTransformer\nmetadata: {{name: p}}\ntagret: {{kind: Deployment}}\n{rest}")
    };
    let cases = [
        (
            pt("patch: \"spec: [x\"\n"),
            "patch: line 1, column 7 of the inline text: unclosed bracket",
        ),
        (pt(""), "give the patch: inline (patch) or in a file (path)"),
    ];
    for (config, second) in cases {
        let out = run_in(
            &d,
            &[("fn.yaml", &config), ("d.yaml", DEPLOY)],
            &["--config", "fn.yaml", "d.yaml"],
        );
        assert_eq!(out.code, 1, "{}", out.stderr);
        let errors: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(errors.len(), 2, "{}", out.stderr);
        assert!(
            errors[0].contains("fn.yaml: tagret: unknown field `tagret`"),
            "{}",
            out.stderr
        );
        assert!(errors[1].contains(second), "{}", out.stderr);
    }
    // A field the patch reads that is wrong stops the patch from being read: what it would
    // mean is unknown.
    let bad_target = "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\ntarget: {kind: 5}\npatch: \"spec: [x\"\n";
    let out = run_in(
        &d,
        &[("fn.yaml", bad_target), ("d.yaml", DEPLOY)],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("target.kind: invalid type"),
        "{}",
        out.stderr
    );
}

#[test]
fn every_config_error_in_one_run() {
    let d = dir("all-errors");
    let config = merge(
        "  patches:\n  - tagret: {kind: Deployment}\n    patch: \"spec: {replicas: 3}\"\n  - type: merge9\n    patch: \"spec: {replicas: 3}\"\n  - target: {kind: Deployment, name: \"*web\"}\n    patch: \"spec: {replicas: 3}\"\n  - name: scale\n    target: {kind: Deployment}\n    patch: \"spec: {replicas: 3}\"\n  - name: scale\n    target: {kind: Deployment}\n    patch: \"spec: {replicas: 4}\"\n",
    );
    let out = run_in(
        &d,
        &[("fn.yaml", &config), ("d.yaml", DEPLOY)],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 1);
    let errors: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(errors.len(), 4, "{}", out.stderr);
    let said = |what: &str| errors.iter().any(|e| e.contains(what));
    assert!(
        said("spec.patches[0].tagret: unknown field `tagret`"),
        "{}",
        out.stderr
    );
    assert!(said("did you mean `target`?"), "{}", out.stderr);
    assert!(
        said("spec.patches[1].type: unknown type \"merge9\""),
        "{}",
        out.stderr
    );
    assert!(
        said("spec.patches[2].target.name: invalid regex"),
        "{}",
        out.stderr
    );
    assert!(
        said("spec.patches[4].name: \"scale\" names spec.patches[3] already"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_selector_in_a_flow_mapping_gets_a_hint_to_quote_it() {
    let d = dir("flow");
    let config = merge(
        "  patches:\n  - {target: {kind: Deployment}, type: json6902, patch: [{op: replace, path: /spec/template/spec/containers/[name=app]/image, value: y}]}\n",
    );
    let out = run_in(
        &d,
        &[("fn.yaml", &config), ("d.yaml", DEPLOY)],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("[name=app] in a flow mapping")
            && out.stderr.contains("quote the value"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_target_that_selects_nothing_names_the_near_miss() {
    let d = dir("near");
    let config = merge(
        "  patches:\n  - name: scale-web\n    target: {kind: deployment}\n    patch: \"spec: {replicas: 3}\"\n  - target: {kind: Deployment, name: wbe}\n    patch: \"spec: {replicas: 3}\"\n  - target: {kind: Deployment, namespace: staging}\n    patch: \"spec: {replicas: 3}\"\n  - target: {kind: Service}\n    patch: \"spec: {replicas: 3}\"\n",
    );
    let out = run_in(
        &d,
        &[("fn.yaml", &config), ("d.yaml", DEPLOY)],
        &["--config", "fn.yaml", "d.yaml"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "krm-merge: warning: patch \"scale-web\" (merge2): target {kind: deployment} selects no resource; did you mean kind: Deployment (Deployment prod/web)?",
            "krm-merge: warning: patch[1] (merge2): target {kind: Deployment, name: wbe} selects no resource; did you mean name: web (Deployment prod/web)?",
            "krm-merge: warning: patch[2] (merge2): target {kind: Deployment, namespace: staging} selects no resource; did you mean namespace: prod (Deployment prod/web)?",
            "krm-merge: warning: patch[3] (merge2): target {kind: Service} selects no resource",
        ]
    );
    // A named patch is named in its results too.
    let out = run_in(
        &d,
        &[],
        &["--config", "fn.yaml", "d.yaml", "--results", "r.yaml"],
    );
    assert_eq!(out.code, 0);
    let results = fs::read_to_string(d.join("r.yaml")).expect("results");
    assert!(results.contains("patchName: scale-web"), "{results}");
    // Input that failed to be read: the target may have been meant for what was not read.
    let out = run_in(
        &d,
        &[("bad.yaml", "kind: [\n")],
        &["--config", "fn.yaml", "d.yaml", "bad.yaml"],
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("bad.yaml"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("selects no resource"),
        "{}",
        out.stderr
    );
}

/// A kustomization given as `--config` does what its patches do under `kubectl kustomize`.
#[test]
#[cfg_attr(not(host_kubectl), ignore = "needs kubectl on PATH")]
fn a_kustomization_as_config_does_what_its_patches_do() {
    let kubectl = host("kubectl");
    let d = dir("kustomization");
    let kustomization = "\
resources: [d.yaml]
patchesStrategicMerge:
- scale.yaml
patches:
- target: {kind: Deployment}
  patch: |
    - {op: add, path: /metadata/labels, value: {tier: web}}
patchesJson6902:
- target: {group: apps, version: v1, kind: Deployment, name: web}
  patch: |
    - {op: replace, path: /spec/replicas, value: 5}
";
    let files = [
        ("k/d.yaml", DEPLOY),
        ("k/kustomization.yaml", kustomization),
        (
            "k/scale.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\nspec: {replicas: 2, paused: true}\n",
        ),
    ];
    let out = run_in(
        &d,
        &files,
        &["--config", "k/kustomization.yaml", "k/d.yaml"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let built = run(Command::new(&kubectl)
        .args(["kustomize", "k"])
        .current_dir(&d));
    assert!(built.status.success(), "{}", text(&built.stderr));
    assert_eq!(docs(&out.stdout), docs(&text(&built.stdout)));
    // Its other fields are refused by name, all of them at once.
    let out = run_in(
        &d,
        &[(
            "k/kustomization.yaml",
            &format!("namePrefix: x-\nimages: [{{name: nginx}}]\n{kustomization}"),
        )],
        &["--config", "k/kustomization.yaml", "k/d.yaml"],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("namePrefix: a kustomization field krm-merge does not apply")
            && out
                .stderr
                .contains("images: a kustomization field krm-merge does not apply"),
        "{}",
        out.stderr
    );
}

/// `kpt fn eval --fn-config cfg/fn.yaml`: `path:` is relative to the config's file, as in the
/// standalone filter, and a missing one names the path looked for.
#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn path_under_kpt_fn_eval_is_relative_to_the_fn_config() {
    let kpt = host("kpt");
    let d = dir("kpt-fn-config");
    let pkg = d.join("pkg");
    fs::create_dir_all(&pkg).expect("dir");
    assert!(run(Command::new(&kpt)
        .args(["pkg", "init", "."])
        .current_dir(&pkg))
    .status
    .success());
    fs::write(pkg.join("d.yaml"), DEPLOY).expect("write");
    fs::create_dir_all(d.join("cfg/patches")).expect("dir");
    fs::write(d.join("cfg/patches/scale.yaml"), "spec:\n  replicas: 4\n").expect("write");
    let eval = |patch: &str| {
        fs::write(
            d.join("cfg/fn.yaml"),
            merge(&format!(
                "  patches:\n  - target: {{kind: Deployment}}\n    path: patches/{patch}\n"
            )),
        )
        .expect("write");
        run(Command::new(&kpt)
            .args(["fn", "eval", "pkg", "--exec"])
            .arg(bin())
            .args(["--fn-config", "cfg/fn.yaml"])
            .current_dir(&d))
    };
    let out = eval("scale.yaml");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(fs::read_to_string(pkg.join("d.yaml"))
        .expect("read")
        .contains("replicas: 4"));
    let out = eval("nope.yaml");
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "patches/nope.yaml: no such file: looked for {} (relative to the directory of kpt's \
             --fn-config",
            d.join("cfg/patches/nope.yaml").display()
        )),
        "{stderr}"
    );
}

#[test]
fn colour_on_a_terminal_or_when_asked_and_never_in_a_pipe() {
    let d = dir("colour");
    let config =
        merge("  patches:\n  - target: {kind: Deployment}\n    patch: \"spec: {replicas: 3}\"\n");
    let files = [("fn.yaml", config.as_str()), ("d.yaml", DEPLOY)];
    // A pipe: plain text, whatever NO_COLOR says.
    let out = run_in(&d, &files, &["--config", "fn.yaml", "d.yaml", "--diff"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("-  replicas: 1\n+  replicas: 3\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('\x1b'));
    // --color always: the diff as git colours it, and the severity of a message.
    let out = run_in(
        &d,
        &[],
        &[
            "--config", "fn.yaml", "d.yaml", "--diff", "--color", "always",
        ],
    );
    assert!(
        out.stdout
            .contains("\x1b[31m-  replicas: 1\x1b[m\n\x1b[32m+  replicas: 3\x1b[m\n"),
        "{:?}",
        out.stdout
    );
    let out = run_in(&d, &[], &["--config", "nope.yaml", "--color=always"]);
    assert!(
        out.stderr
            .starts_with("krm-merge: \x1b[1;31merror:\x1b[m config nope.yaml"),
        "{:?}",
        out.stderr
    );
    // A terminal (`script` gives one): coloured, unless NO_COLOR or --color never.
    let on_terminal = |extra: &str, no_color: bool| {
        let mut c = Command::new("script");
        c.args([
            "-qec",
            &format!("{} --config fn.yaml d.yaml --diff{extra}", bin().display()),
            "/dev/null",
        ])
        .current_dir(&d)
        .stdin(std::process::Stdio::null());
        if no_color {
            c.env("NO_COLOR", "1");
        } else {
            c.env_remove("NO_COLOR");
        }
        text(&run(&mut c).stdout)
    };
    assert!(on_terminal("", false).contains("\x1b[32m+  replicas: 3"));
    assert!(!on_terminal("", true).contains('\x1b'));
    assert!(!on_terminal(" --color never", false).contains('\x1b'));
    assert!(on_terminal(" --color always", true).contains("\x1b[32m"));
}
