//! Package upgrades through the binary: `krm-merge merge3 ORIGINAL UPDATED LOCAL` with each side
//! a file, a stream, a `List`, a `ResourceList`, a directory or `-`; LOCAL written as `--config`
//! writes a package (stdout, `--in-place`, `--output`, `--diff`, `--check`); every conflict
//! strategy; where added resources go; what is refused; the recipes of the guide (a vendored
//! release file, `helm template` streams through process substitution, a directory between two
//! git tags); and the comparison with `kpt pkg update` on two real packages' releases.
//!
//! The package of most tests is `tests/data/upgrade/shop`: ORIGINAL and UPDATED are two versions
//! of a blueprint, LOCAL a copy of the first edited locally. UPDATED changes fields LOCAL changed
//! too (a conflict), deletes a resource LOCAL left alone (its file goes) and one LOCAL changed
//! (a conflict), adds a resource to a file ORIGINAL had and a file in a new directory, moves a
//! PodDisruptionBudget from `policy/v1beta1` to `policy/v1`, and changes a Service LOCAL
//! renamed (kpt's upstream identifier pairs it) and a Deployment LOCAL deleted; LOCAL has a
//! resource and a file of its own, and a Kptfile whose upstream lock is kpt's. Its
//! `expected-<strategy>/` directories are LOCAL after `--in-place --conflicts <strategy>`, its
//! `<strategy>.stderr` what was said; `KRM_MERGE_UPDATE_EXPECTED=1` rewrites them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::*;

fn data() -> PathBuf {
    root().join("tests/data/upgrade")
}

/// A copy of the shop's three sides in a new directory.
fn shop(name: &str) -> PathBuf {
    let dir = tmp_dir("upgrade", name);
    for side in ["original", "updated", "local"] {
        copy_dir(&data().join("shop").join(side), &dir.join(side));
    }
    dir
}

/// Compares `got` with the expected file `rel` of the data directory, or rewrites it.
fn expect_file(rel: &str, got: &str) {
    let path = data().join(rel);
    if updating() {
        fs::write(&path, got).expect("write expected");
        return;
    }
    let want = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(got, want, "{rel}");
}

/// Compares the tree at `dir` with the expected tree `rel`, or rewrites it.
fn expect_tree(rel: &str, dir: &Path) {
    let got = tree(dir);
    let path = data().join(rel);
    if updating() {
        write_tree(&path, &got);
        return;
    }
    let want = tree(&path);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{rel}: the files"
    );
    for (k, v) in &want {
        assert_eq!(&got[k], v, "{rel}: {}", k.display());
    }
}

/// `merge3 original updated local` in `dir` with more arguments.
fn merge3(dir: &Path, more: &[&str]) -> Out {
    let mut args = vec!["merge3", "original", "updated", "local"];
    args.extend_from_slice(more);
    krm_in(&args, "", Some(dir))
}

/// Every strategy on the shop, in place: the package it leaves, what it says (each conflict one
/// line naming the file, the resource, the field and both values; the counts at the end), the
/// files it does not change untouched (bytes and modification time), and a second run that
/// changes nothing. `error` writes nothing and exits 1.
#[test]
fn each_conflict_strategy_on_a_package_of_directories() {
    for strategy in ["warn", "local", "upstream", "error"] {
        let dir = shop(&format!("strategy-{strategy}"));
        let local = dir.join("local");
        let before = tree(&local);
        let times = mtimes(&local);
        let out = merge3(&dir, &["--in-place", "--summary", "--conflicts", strategy]);
        expect_file(&format!("shop/{strategy}.stderr"), &out.stderr);
        assert_eq!(out.stdout, "", "{strategy}");
        let after = tree(&local);
        if strategy == "error" {
            assert_eq!(out.code, 1, "{strategy}: {}", out.stderr);
            assert_eq!(after, before, "error: nothing is written");
            assert_eq!(mtimes(&local), times, "error: nothing is touched");
            continue;
        }
        assert_eq!(out.code, 0, "{strategy}: {}", out.stderr);
        expect_tree(&format!("shop/expected-{strategy}"), &local);
        // What the upgrade had no reason to change is as it was, to the byte and the mtime.
        let now = mtimes(&local);
        for rel in ["team.yaml", "README.md"] {
            let rel = Path::new(rel);
            assert_eq!(after[rel], before[rel], "{strategy}: {}", rel.display());
            assert_eq!(
                now[rel],
                times[rel],
                "{strategy}: {} touched",
                rel.display()
            );
        }
        // Merged again, nothing changes.
        let again = merge3(&dir, &["--check", "--conflicts", strategy]);
        assert_eq!(again.code, 0, "{strategy}: {}", again.stderr);
    }
}

/// The shop's upgrade on stdout is LOCAL's resources after it, as one stream (the Kptfile left
/// out, as `--config` leaves it out); `--output DIR` is the package `--in-place` makes, README
/// included; `--diff` shows it before it is made; `--check` says it would be made.
#[test]
fn every_write_mode_gives_the_same_upgrade() {
    let dir = shop("modes");
    let expected = data().join("shop/expected-warn");
    let stream = merge3(&dir, &[]);
    assert_eq!(stream.code, 0, "{}", stream.stderr);
    let mut want: Vec<Value> = Vec::new();
    for (rel, text) in tree(&expected) {
        if rel.extension().is_some_and(|e| e == "yaml") {
            want.extend(docs(&text));
        }
    }
    let mut got = docs(&stream.stdout);
    let key = |v: &Value| format!("{}/{}", v["kind"], v["metadata"]["name"]);
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got, want, "{}", stream.stdout);

    let out = merge3(&dir, &["--output", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(tree(&dir.join("out")), tree(&expected));

    let diff = merge3(&dir, &["--diff"]);
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    expect_file("shop/warn.diff", &diff.stdout);
    let check = merge3(&dir, &["--check", "--diff"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (1, diff.stdout.as_str())
    );
    let check = merge3(&dir, &["--check", "-q"]);
    assert_eq!((check.code, check.stdout.as_str()), (1, ""));
    let check = merge3(&dir, &["--check"]);
    for line in [
        "local/app.yaml: would be changed",
        "local/flags.yaml: would be removed",
        "local/monitoring/servicemonitor.yaml: would be created",
    ] {
        assert!(check.stderr.contains(line), "{line}: {}", check.stderr);
    }
    // Nothing of it was written.
    assert_eq!(tree(&dir.join("local")), tree(&data().join("shop/local")));
}

/// `--results` carries each conflict with its file, field and both values; `-v` says the counts
/// too, `-q` nothing but errors.
#[test]
fn results_and_levels() {
    let dir = shop("results");
    let out = merge3(&dir, &["--results", "results.yaml", "-q"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let results = fs::read_to_string(dir.join("results.yaml")).expect("results");
    let v = &docs(&results)[0]["results"];
    let conflict = v
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["field"]["path"] == "spec.replicas")
        .expect("the replicas conflict");
    assert_eq!(conflict["severity"], "warning");
    assert_eq!(conflict["field"]["currentValue"], 5);
    assert_eq!(conflict["field"]["proposedValue"], 3);
    assert_eq!(conflict["file"]["path"], "local/app.yaml");
    assert_eq!(conflict["resourceRef"]["name"], "shop");
    let summary = v
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["tags"]["summary"] == "merge3")
        .expect("the summary");
    assert!(
        summary["message"]
            .as_str()
            .is_some_and(|m| m.contains("4 updated, 0 unchanged, 2 added, 2 deleted")),
        "{summary}"
    );
    let verbose = merge3(&dir, &["-v"]);
    assert!(
        verbose
            .stderr
            .lines()
            .last()
            .is_some_and(|l| l.contains("2 conflicts: upstream's side taken, each warned")),
        "{}",
        verbose.stderr
    );
    let plain = merge3(&dir, &[]);
    assert!(!plain.stderr.contains("info:"), "{}", plain.stderr);
}

/// A resource upstream added goes to the path it has in UPDATED: a file there that only LOCAL
/// has is never written over — an error naming both, nothing written; a file there that is not
/// resources (here a README) likewise. Where LOCAL is not a directory, or UPDATED is a file,
/// each new resource is a file of its own, named after it.
#[test]
fn added_resources_never_overwrite_a_local_file() {
    let dir = shop("clash");
    fs::create_dir_all(dir.join("local/monitoring")).expect("mkdir");
    let mine = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n";
    fs::write(dir.join("local/monitoring/servicemonitor.yaml"), mine).expect("write");
    let before = tree(&dir.join("local"));
    let out = merge3(&dir, &["--in-place"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "monitoring/servicemonitor.yaml (ServiceMonitor shop, new upstream in \
             updated/monitoring/servicemonitor.yaml) would go to local/monitoring/servicemonitor.yaml, \
             which is a file only LOCAL has"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(tree(&dir.join("local")), before);
    fs::write(
        dir.join("local/monitoring/servicemonitor.yaml"),
        "notes: not a resource\n",
    )
    .expect("write");
    let out = merge3(&dir, &["--diff"]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{}", out.stderr);
    assert!(
        out.stderr.contains("not a file of its resources"),
        "{}",
        out.stderr
    );

    // UPDATED a stream: one file per new resource, named after it.
    let dir = shop("made-names");
    let stream = tree(&dir.join("updated"))
        .into_iter()
        .filter(|(rel, _)| rel.extension().is_some_and(|e| e == "yaml"))
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join("---\n");
    fs::write(dir.join("updated.yaml"), stream).expect("write");
    let out = krm_in(
        &["merge3", "original", "updated.yaml", "local", "--in-place"],
        "",
        Some(&dir),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let files = tree(&dir.join("local"));
    for new in ["configmap_shop-v2-flags.yaml", "servicemonitor_shop.yaml"] {
        assert!(
            files.contains_key(Path::new(new)),
            "{new}: {:?}",
            files.keys()
        );
    }
    assert!(!files[Path::new("app.yaml")].contains("shop-v2-flags"));
}

/// Each side in each form: a stream, a `List`, a `ResourceList`, stdin; three single resources
/// merge whatever their names; `-` twice, stdin written in place, a side inside LOCAL's
/// directory, or a side written over are refused before anything is read.
#[test]
fn every_form_of_input_and_what_is_refused() {
    let dir = tmp_dir("upgrade", "forms");
    let cm = |name: &str, v: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: \"{v}\"\n")
    };
    let list = |items: &[String]| {
        let mut t = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in items {
            for (n, line) in i.lines().enumerate() {
                t.push_str(if n == 0 { "- " } else { "  " });
                t.push_str(line);
                t.push('\n');
            }
        }
        t
    };
    fs::write(
        dir.join("o.yaml"),
        format!("{}---\n{}", cm("a", "1"), cm("b", "1")),
    )
    .expect("w");
    fs::write(dir.join("u.yaml"), list(&[cm("a", "2"), cm("c", "1")])).expect("w");
    let rl = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n{}",
        list(&[cm("a", "1"), cm("b", "1"), cm("d", "1")])
            .trim_start_matches("apiVersion: v1\nkind: List\n")
    );
    let out = krm_in(&["merge3", "o.yaml", "u.yaml", "-"], &rl, Some(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got: Vec<String> = rl_items(&out.stdout)
        .iter()
        .map(|v| format!("{}={}", v["metadata"]["name"], v["data"]["v"]))
        .collect();
    // a merged, b deleted upstream, d only here, c added upstream.
    assert_eq!(
        got,
        ["\"a\"=\"2\"", "\"d\"=\"1\"", "\"c\"=\"1\""],
        "{}",
        out.stdout
    );
    let out = krm_in(
        &["merge3", "-", "u.yaml", "o.yaml"],
        &cm("a", "1"),
        Some(&dir),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(docs(&out.stdout).len(), 3, "{}", out.stdout);

    // One resource each: merged whatever the names.
    fs::write(dir.join("one-o.yaml"), cm("x", "1")).expect("w");
    fs::write(dir.join("one-u.yaml"), cm("y", "2")).expect("w");
    fs::write(dir.join("one-l.yaml"), cm("z", "1")).expect("w");
    let out = krm_in(
        &["merge3", "one-o.yaml", "one-u.yaml", "one-l.yaml"],
        "",
        Some(&dir),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, cm("y", "2"));

    let refused = [
        (
            &["merge3", "-", "-", "o.yaml"][..],
            "'-' (stdin) can be given once",
        ),
        (
            &["merge3", "o.yaml", "u.yaml", "-", "--in-place"],
            "not stdin",
        ),
        (
            &[
                "merge3",
                "o.yaml",
                "u.yaml",
                "l.yaml",
                "--in-place",
                "--diff",
            ],
            "--diff",
        ),
        (
            &["merge3", "o.yaml", "u.yaml", "nope/"],
            "input nope/: no such file",
        ),
        (
            &["merge3", "o.yaml", "u.yaml", "o.yaml", "--in-place"],
            "--in-place would rewrite it",
        ),
        (
            &["merge3", "o.yaml", "u.yaml", "o.yaml", "--output", "."],
            "not empty",
        ),
        (
            &[
                "merge3",
                "o.yaml",
                "u.yaml",
                "o.yaml",
                "--results",
                "u.yaml",
            ],
            "--results u.yaml",
        ),
    ];
    for (args, says) in refused {
        let out = krm_in(args, "", Some(&dir));
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    // ORIGINAL in LOCAL's directory would be read as local resources too.
    fs::create_dir_all(dir.join("vendor")).expect("mkdir");
    fs::write(dir.join("vendor/install.yaml"), cm("a", "1")).expect("w");
    fs::write(dir.join("vendor/v1.yaml"), cm("a", "1")).expect("w");
    let out = krm_in(
        &["merge3", "vendor/v1.yaml", "u.yaml", "vendor"],
        "",
        Some(&dir),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("ORIGINAL vendor/v1.yaml is LOCAL's vendor/v1.yaml"),
        "{}",
        out.stderr
    );
    fs::write(dir.join("vendor/.krmignore"), "v1.yaml\n").expect("w");
    let out = krm_in(
        &["merge3", "vendor/v1.yaml", "u.yaml", "vendor"],
        "",
        Some(&dir),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Two resources of one side with one identity: an error naming both places.
    fs::write(
        dir.join("twice.yaml"),
        format!("{}---\n{}", cm("a", "2"), cm("a", "3")),
    )
    .expect("w");
    let out = krm_in(
        &["merge3", "o.yaml", "twice.yaml", "vendor"],
        "",
        Some(&dir),
    );
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(
        out.stderr.contains(
            "UPDATED: ConfigMap a is twice: twice.yaml document 1 and twice.yaml document 2"
        ),
        "{}",
        out.stderr
    );
}

/// The functionConfig's `options.conflicts` takes the same four strategies as the command line.
#[test]
fn the_function_config_takes_every_strategy() {
    let dir = tmp_dir("upgrade", "config");
    let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: mine\n";
    fs::write(dir.join("c.yaml"), local).expect("w");
    for (strategy, code, value, says) in [
        ("warn", 0, "upstream", "warning: ConfigMap c: data.a"),
        ("local", 0, "mine", "kept local"),
        ("upstream", 0, "upstream", ""),
        ("error", 1, "", "error: ConfigMap c: data.a"),
    ] {
        let config = format!(
            "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {{name: up}}\nspec:\n  patches:\n  - type: merge3\n    options: {{conflicts: {strategy}}}\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {{name: c}}\n      data: {{a: base}}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {{name: c}}\n      data: {{a: upstream}}\n"
        );
        fs::write(dir.join("fn.yaml"), config).expect("w");
        let out = krm_in(&["--config", "fn.yaml", "c.yaml"], "", Some(&dir));
        assert_eq!(out.code, code, "{strategy}: {}", out.stderr);
        if code == 0 {
            assert!(
                out.stdout.contains(&format!("a: {value}")),
                "{strategy}: {}",
                out.stdout
            );
        }
        if says.is_empty() {
            assert_eq!(out.stderr, "", "{strategy}");
        } else {
            assert!(out.stderr.contains(says), "{strategy}: {}", out.stderr);
        }
    }
}

// ----- recipes ---------------------------------------------------------------------------------

/// Local edits of the dashboard's `recommended.yaml` (v2.0.0), as a team makes them: more
/// replicas, its own registry for the image (which upstream changes too: a conflict), one more
/// argument, the seccomp annotation changed (upstream deletes it: a conflict), the settings
/// ConfigMap deleted.
fn edit_dashboard(text: &str) -> String {
    let mut s = edit(
        text,
        &[
            (
                "  replicas: 1\n  revisionHistoryLimit: 10\n  selector:\n    matchLabels:\n      k8s-app: kubernetes-dashboard\n",
                "  replicas: 3\n  revisionHistoryLimit: 10\n  selector:\n    matchLabels:\n      k8s-app: kubernetes-dashboard\n",
            ),
            (
                "image: kubernetesui/dashboard:v2.0.0",
                "image: registry.local/kubernetesui/dashboard:v2.0.0",
            ),
            (
                "            - --namespace=kubernetes-dashboard\n",
                "            - --namespace=kubernetes-dashboard\n            - --token-ttl=43200\n",
            ),
            (
                "seccomp.security.alpha.kubernetes.io/pod: 'runtime/default'",
                "seccomp.security.alpha.kubernetes.io/pod: 'docker/default'",
            ),
        ],
    );
    let start = s
        .find("kind: ConfigMap\napiVersion: v1\nmetadata:")
        .expect("the settings ConfigMap");
    let end = start + s[start..].find("---\n").expect("its end") + 4;
    s.replace_range(start..end, "");
    s
}

/// Local edits of Longhorn's `longhorn.yaml` (v1.7.2, `helm template` output): the UI scaled
/// down and pulled from a mirror (upstream changes its image: a conflict), one replica fewer
/// in the storage class, the recovery backend's Service deleted.
fn edit_longhorn(text: &str) -> String {
    let mut s = edit(
        text,
        &[
            ("  replicas: 2\n", "  replicas: 1\n"),
            (
                "image: longhornio/longhorn-ui:v1.7.2",
                "image: registry.local/longhornio/longhorn-ui:v1.7.2",
            ),
            ("numberOfReplicas: \"3\"", "numberOfReplicas: \"2\""),
        ],
    );
    let start = s
        .find("# Source: longhorn/templates/services.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    app.kubernetes.io/name: longhorn\n    app.kubernetes.io/instance: longhorn\n    app.kubernetes.io/version: v1.7.2\n    app: longhorn-recovery-backend")
        .or_else(|| s.find("# Source: longhorn/templates/services.yaml\napiVersion: v1\nkind: Service\nmetadata: # kpt-merge: longhorn-system/longhorn-recovery-backend"))
        .expect("the recovery backend");
    let end = start + s[start..].find("---\n").expect("its end") + 4;
    s.replace_range(start..end, "");
    s
}

/// `text` with each `from` (found exactly once) replaced.
fn edit(text: &str, edits: &[(&str, &str)]) -> String {
    let mut s = text.to_owned();
    for (from, to) in edits {
        assert_eq!(s.matches(from).count(), 1, "{from}");
        s = s.replacen(from, to, 1);
    }
    s
}

/// Recipe: a release file vendored and edited, upgraded from the two release files (as `curl`
/// fetches them) into the directory.
#[test]
fn recipe_a_vendored_release_file() {
    let dir = tmp_dir("upgrade", "vendored");
    let d = data().join("dashboard");
    let v1 = fs::read_to_string(d.join("v2.0.0/recommended.yaml")).expect("v1");
    fs::copy(
        d.join("v2.0.0/recommended.yaml"),
        dir.join("recommended-v2.0.0.yaml"),
    )
    .expect("cp");
    fs::copy(
        d.join("v2.7.0/recommended.yaml"),
        dir.join("recommended-v2.7.0.yaml"),
    )
    .expect("cp");
    fs::create_dir_all(dir.join("vendor/dashboard")).expect("mkdir");
    fs::write(
        dir.join("vendor/dashboard/recommended.yaml"),
        edit_dashboard(&v1),
    )
    .expect("w");
    let out = krm_in(
        &[
            "merge3",
            "recommended-v2.0.0.yaml",
            "recommended-v2.7.0.yaml",
            "vendor/dashboard/",
            "--in-place",
            "--summary",
        ],
        "",
        Some(&dir),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    expect_file("dashboard/vendored.stderr", &out.stderr);
    let after = fs::read_to_string(dir.join("vendor/dashboard/recommended.yaml")).expect("r");
    for line in [
        "  replicas: 3\n",
        "image: kubernetesui/dashboard:v2.7.0",
        "            - --token-ttl=43200\n",
        "image: kubernetesui/metrics-scraper:v1.0.8",
        "          type: RuntimeDefault\n",
    ] {
        assert!(after.contains(line), "{line}\n{after}");
    }
    assert!(!after.contains("seccomp.security.alpha"), "{after}");
    assert!(
        !after.contains("  name: kubernetes-dashboard-settings\n"),
        "{after}"
    );
    // The licence header and every comment upstream wrote stay.
    assert!(
        after.starts_with("# Copyright 2017 The Kubernetes Authors."),
        "{after}"
    );
}

/// Recipe: `helm template` output, version 1 to version 2, through process substitution
/// (`/dev/fd`): streams with `# Source:` comments and empty documents, as Helm writes them.
#[test]
fn recipe_helm_template_through_process_substitution() {
    let dir = tmp_dir("upgrade", "helm");
    let d = data().join("longhorn");
    // A template that renders nothing is an empty document with its `# Source:` line.
    let helm = |text: String| {
        format!("---\n# Source: longhorn/templates/psp.yaml\n{text}---\n# Source: longhorn/templates/optional.yaml\n")
    };
    let v1 = fs::read_to_string(d.join("v1.7.2/longhorn.yaml")).expect("v1");
    let v2 = fs::read_to_string(d.join("v1.8.0/longhorn.yaml")).expect("v2");
    fs::write(dir.join("chart-1.txt"), helm(v1.clone())).expect("w");
    fs::write(dir.join("chart-2.txt"), helm(v2)).expect("w");
    fs::create_dir_all(dir.join("vendor")).expect("mkdir");
    let local = helm(edit_longhorn(&v1));
    fs::write(dir.join("vendor/longhorn.yaml"), &local).expect("w");
    // `cat` stands for `helm template longhorn longhorn/longhorn --version ...`.
    let script = format!(
        "{} merge3 <(cat chart-1.txt) <(cat chart-2.txt) vendor/ --in-place --summary",
        bin().display()
    );
    let out = run(Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&dir));
    assert!(out.status.success(), "{}", text(&out.stderr));
    expect_file("longhorn/helm.stderr", &text(&out.stderr));
    let after = fs::read_to_string(dir.join("vendor/longhorn.yaml")).expect("r");
    for line in [
        "  replicas: 1\n",
        "numberOfReplicas: \"2\"",
        "image: longhornio/longhorn-ui:v1.8.x-head",
        "app.kubernetes.io/version: v1.8.0",
        // The empty documents and their comments stay where they were.
        "---\n# Source: longhorn/templates/psp.yaml\n---\n",
    ] {
        assert!(after.contains(line), "{line}\n{after}");
    }
    assert!(
        after.ends_with("---\n# Source: longhorn/templates/optional.yaml\n"),
        "{after}"
    );
    assert!(
        !after.contains("longhorn-recovery-backend\n  namespace"),
        "{after}"
    );
    // The resource version 2 added is a file of its own.
    let added = fs::read_to_string(dir.join("vendor/configmap_longhorn-default-resource.yaml"))
        .expect("the new ConfigMap");
    assert!(
        added.starts_with("# Source: longhorn/templates/default-resource.yaml\n"),
        "{added}"
    );
}

/// Recipe: a directory of a git repository between two tags, each side taken with
/// `git archive TAG DIR | tar -x -C ...`.
#[test]
fn recipe_a_directory_between_two_git_tags() {
    let dir = tmp_dir("upgrade", "git");
    let repo = dir.join("repo");
    fs::create_dir_all(&repo).expect("mkdir");
    let ok = |c: &mut Command| assert!(run(c).status.success());
    ok(git(&repo).args(["init", "-q"]));
    copy_dir(&data().join("shop/original"), &repo.join("deploy"));
    ok(git(&repo).args(["add", "."]));
    ok(git(&repo).args(["commit", "-qm", "v1"]));
    ok(git(&repo).args(["tag", "v1"]));
    fs::remove_dir_all(repo.join("deploy")).expect("rm");
    copy_dir(&data().join("shop/updated"), &repo.join("deploy"));
    ok(git(&repo).args(["add", "-A"]));
    ok(git(&repo).args(["commit", "-qm", "v2"]));
    ok(git(&repo).args(["tag", "v2"]));
    for (tag, to) in [("v1", "old"), ("v2", "new")] {
        fs::create_dir_all(dir.join(to)).expect("mkdir");
        let script = format!("git -C repo archive {tag} deploy | tar -x -C {to}");
        ok(Command::new("sh").arg("-c").arg(&script).current_dir(&dir));
    }
    copy_dir(&data().join("shop/local"), &dir.join("local"));
    let out = krm_in(
        &["merge3", "old/deploy", "new/deploy", "local", "--in-place"],
        "",
        Some(&dir),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        tree(&dir.join("local")),
        tree(&data().join("shop/expected-warn"))
    );
}

// ----- kpt pkg update --------------------------------------------------------------------------

/// A resource as compared with kpt's: its data, without what only kpt writes (its upstream
/// identifier annotation, which it puts on the resources it adds) and with what kyaml's walk
/// drops gone on both sides (`null`s, emptied maps): see [`differences`].
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "internal.kpt.dev/upstream-identifier")
                .map(|(k, v)| (k.clone(), normalized(v)))
                .filter(|(_, v)| !v.is_null() && v.as_object().is_none_or(|o| !o.is_empty()))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// Where two resources differ, field by field: `path: kpt's value / krm-merge's`.
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                let absent = |m: &serde_json::Map<String, Value>| !m.contains_key(k);
                if absent(x) || absent(y) {
                    let show = |m: &serde_json::Map<String, Value>, v: &Value| {
                        if absent(m) {
                            "(absent)".to_owned()
                        } else {
                            v.to_string()
                        }
                    };
                    out.push(format!("{path}.{k}: {} / {}", show(x, p), show(y, q)));
                } else {
                    differences(p, q, &format!("{path}.{k}"), out);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{path}[{i}]"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{path}: {a} / {b}")),
    }
}

/// The resources of a package's files (its Kptfile aside), by kind, namespace and name.
fn package_resources(dir: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for (rel, text) in tree(dir) {
        let yaml = rel.extension().is_some_and(|e| e == "yaml");
        if !yaml || rel.starts_with(".git") {
            continue;
        }
        for v in flatten_lists(docs(&text)) {
            let key = format!(
                "{} {}/{}",
                v["kind"].as_str().unwrap_or(""),
                v["metadata"]["namespace"].as_str().unwrap_or(""),
                v["metadata"]["name"].as_str().unwrap_or("")
            );
            out.insert(key, v);
        }
    }
    out
}

/// `kpt pkg update` and `krm-merge merge3` on the same locally edited package, fetched by kpt
/// from a git repository holding two releases under tags: the same resources, the same data,
/// but for the differences listed (`expected`, as `path: kpt's / krm-merge's`), each a rule
/// where krm-merge chose otherwise (doc/GUIDE.md, merge3).
fn same_as_kpt(
    name: &str,
    file: &str,
    releases: [&str; 2],
    local_edit: fn(&str) -> String,
    expected: &[&str],
) {
    let dir = tmp_dir("upgrade", &format!("kpt-{name}"));
    let home = dir.join("home");
    fs::create_dir_all(&home).expect("home");
    let ok = |c: &mut Command| {
        let out = run(c.env("HOME", &home));
        assert!(out.status.success(), "{c:?}");
    };
    let repo = dir.join("upstream");
    fs::create_dir_all(repo.join("pkg")).expect("mkdir");
    ok(git(&repo).args(["init", "-q"]));
    for (tag, release) in ["v1", "v2"].into_iter().zip(releases) {
        fs::copy(
            data().join(name).join(release).join(file),
            repo.join("pkg").join(file),
        )
        .expect("cp");
        ok(git(&repo).args(["add", "."]));
        ok(git(&repo).args(["commit", "-qm", tag]));
        ok(git(&repo).args(["tag", tag]));
    }
    // kpt fetches from a local repository: the path, `.git` marking where the directory starts.
    let source = format!("{}.git/pkg@v1", repo.display());
    ok(Command::new(host("kpt"))
        .args(["pkg", "get", &source, "by-kpt"])
        .current_dir(&dir));
    let by_kpt = dir.join("by-kpt");
    let local = by_kpt.join(file);
    let text = fs::read_to_string(&local).expect("fetched");
    fs::write(&local, local_edit(&text)).expect("edit");
    fs::write(
        by_kpt.join("local.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ours\ndata:\n  site: a\n",
    )
    .expect("w");
    ok(git(&by_kpt).args(["init", "-q"]));
    ok(git(&by_kpt).args(["add", "."]));
    ok(git(&by_kpt).args(["commit", "-qm", "local edits"]));
    copy_dir(&by_kpt, &dir.join("by-krm"));
    ok(Command::new(host("kpt"))
        .args(["pkg", "update", "by-kpt@v2"])
        .current_dir(&dir));
    for (tag, to) in [("v1", "old"), ("v2", "new")] {
        fs::create_dir_all(dir.join(to)).expect("mkdir");
        let script = format!("git -C upstream archive {tag} pkg | tar -x -C {to}");
        ok(Command::new("sh").arg("-c").arg(&script).current_dir(&dir));
    }
    let out = krm_in(
        &["merge3", "old/pkg", "new/pkg", "by-krm", "--in-place"],
        "",
        Some(&dir),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (kpt, krm) = (
        package_resources(&by_kpt),
        package_resources(&dir.join("by-krm")),
    );
    assert_eq!(
        kpt.keys().collect::<Vec<_>>(),
        krm.keys().collect::<Vec<_>>(),
        "{name}: the same resources"
    );
    let mut found = Vec::new();
    for (key, a) in &kpt {
        let b = &krm[key];
        assert_eq!(normalized(a), normalized(b), "{name}: {key}");
        let mut d = Vec::new();
        differences(a, b, "", &mut d);
        found.extend(
            d.into_iter()
                .map(|d| format!("{key}: {}", d.trim_start_matches('.'))),
        );
    }
    assert_eq!(found, expected, "{name}: the differences");
}

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn like_kpt_pkg_update_on_the_kubernetes_dashboard() {
    same_as_kpt(
        "dashboard",
        "recommended.yaml",
        ["v2.0.0", "v2.7.0"],
        edit_dashboard,
        &[
            // kpt marks the local package's own resources with an upstream identifier.
            "ConfigMap /ours: metadata.annotations: {\"internal.kpt.dev/upstream-identifier\":\"|ConfigMap|default|ours\"} / (absent)",
            // kpt leaves the map emptied by upstream's deletion of its only entry.
            "Deployment kubernetes-dashboard/dashboard-metrics-scraper: spec.template.metadata.annotations: {} / (absent)",
        ],
    );
}

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn like_kpt_pkg_update_on_longhorn() {
    same_as_kpt(
        "longhorn",
        "longhorn.yaml",
        ["v1.7.2", "v1.8.0"],
        edit_longhorn,
        &[
            "ConfigMap /ours: metadata.annotations: {\"internal.kpt.dev/upstream-identifier\":\"|ConfigMap|default|ours\"} / (absent)",
            // kpt marks the resource it adds with its upstream identifier.
            "ConfigMap longhorn-system/longhorn-default-resource: metadata.annotations: {\"internal.kpt.dev/upstream-identifier\":\"|ConfigMap|longhorn-system|longhorn-default-resource\"} / (absent)",
            // kyaml drops a `null` that neither side changed; krm-merge leaves it.
            "Service longhorn-system/longhorn-frontend: spec.ports[0].nodePort: (absent) / null",
        ],
    );
}

// ----- the catalog example ---------------------------------------------------------------------

/// The `krm-merge-upstream-update` example on the command line: its two upstream releases
/// (`upstream/v1.0`, `upstream/v1.1`, left out of the package by its `.krmignore`) merged into
/// the package give the documents its render pipeline gives (`.expected/diff.patch` applied),
/// the Service upstream added at the path it has upstream, the files the upgrade leaves alone
/// untouched, the conflict warned.
#[test]
fn the_catalog_example_as_a_package() {
    let example = root().join("functions/examples/krm-merge-upstream-update");
    let dir = tmp_dir("upgrade", "catalog");
    let (rendered, local) = (dir.join("rendered"), dir.join("local"));
    copy_dir(&example, &rendered);
    copy_dir(&example, &local);
    let apply = run(git(&rendered)
        .args(["apply", "--whitespace=nowarn"])
        .arg(example.join(".expected/diff.patch")));
    assert!(apply.status.success(), "{}", text(&apply.stderr));
    let before = tree(&local);
    let times = mtimes(&local);
    let out = krm_in(
        &[
            "merge3",
            "upstream/v1.0",
            "upstream/v1.1",
            ".",
            "--in-place",
        ],
        "",
        Some(&local),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "krm-merge: warning: ./shop.yaml: Deployment shop: spec.replicas: patch[0] (merge3): \
         conflict: changed locally to 5 and upstream to 4; took upstream\n"
    );
    // The package's resources, the functionConfig and the upstream releases aside.
    let resources = |d: &Path| -> Vec<Value> {
        let mut all: Vec<Value> = tree(d)
            .into_iter()
            .filter(|(rel, _)| {
                rel.extension().is_some_and(|e| e == "yaml")
                    && rel.parent() == Some(Path::new(""))
                    && rel != Path::new("fn-config.yaml")
            })
            .flat_map(|(_, text)| docs(&text))
            .collect();
        all.sort_by_key(|v| v.to_string());
        all
    };
    assert_eq!(resources(&local), resources(&rendered));
    let after = tree(&local);
    assert!(after.contains_key(Path::new("service.yaml")), "{after:?}");
    let now = mtimes(&local);
    for rel in [
        "Kptfile",
        "fn-config.yaml",
        "README.md",
        "upstream/v1.1/shop.yaml",
    ] {
        let rel = Path::new(rel);
        assert_eq!(
            (&after[rel], now[rel]),
            (&before[rel], times[rel]),
            "{}",
            rel.display()
        );
    }
}
