//! The standalone filter on packages, through the binary, as the guide's (doc/GUIDE.md) "Reading a directory"
//! and "Writing back" sections describe it: a directory read as kpt reads a package
//! (`.krmignore`, subpackages, the Kptfile, kustomize's build file, files that are not
//! resources, the functionConfig file itself), each file parsed on its own, symbolic links and
//! special files, and the results written back: `--in-place`, `--output DIR`, `--diff`,
//! `--check`; and a Helm post-renderer's stream.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::support::*;

/// A package of three resource files and a functionConfig beside it (outside the package).
fn package(name: &str) -> (PathBuf, PathBuf) {
    let dir = tmp_dir("package", name);
    let pkg = dir.join("pkg");
    fs::create_dir_all(pkg.join("sub")).expect("pkg");
    fs::write(pkg.join("deploy.yaml"), DEPLOY).expect("write");
    fs::write(pkg.join("config.yaml"), CM).expect("write");
    fs::write(pkg.join("sub/service.yaml"), SERVICE).expect("write");
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, config(SCALE)).expect("write");
    (pkg, cfg)
}

const DEPLOY: &str = "\
# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # keep me
spec:
  replicas: 1
";

const CM: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: '1'
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

const SCALE: &str = "  - target: {kind: Deployment}\n    patch: 'spec: {replicas: 3}'\n";

fn config(patches: &str) -> String {
    format!("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: t\nspec:\n  patches:\n{patches}")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn mtime(p: &Path) -> SystemTime {
    fs::metadata(p).and_then(|m| m.modified()).expect("mtime")
}

/// Sets a file's mtime an hour back, so that any rewrite would show.
fn age(p: &Path) {
    let f = fs::File::options().write(true).open(p).expect("open");
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .expect("set mtime");
}

#[test]
fn in_place_rewrites_the_one_file_that_changed() {
    let (pkg, cfg) = package("in-place");
    let files = ["deploy.yaml", "config.yaml", "sub/service.yaml"].map(|f| pkg.join(f));
    for f in &files {
        age(f);
    }
    let before: Vec<SystemTime> = files.iter().map(|f| mtime(f)).collect();
    let out = krm(&["--in-place", s(&pkg), "--config", s(&cfg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "", "--in-place writes nothing to stdout");
    assert_eq!(
        fs::read_to_string(&files[0]).expect("read"),
        DEPLOY.replace("replicas: 1", "replicas: 3")
    );
    assert_ne!(mtime(&files[0]), before[0]);
    // The other two: the same bytes and the same mtime.
    assert_eq!(fs::read_to_string(&files[1]).expect("read"), CM);
    assert_eq!(fs::read_to_string(&files[2]).expect("read"), SERVICE);
    assert_eq!(mtime(&files[1]), before[1]);
    assert_eq!(mtime(&files[2]), before[2]);
    // No temporary file is left behind, and a second run changes nothing.
    let names: Vec<String> = fs::read_dir(&pkg)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains("krm-merge")), "{names:?}");
    let again = mtime(&files[0]);
    let out = krm(&["--config", s(&cfg), "-i", s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(mtime(&files[0]), again);
}

#[test]
fn in_place_writes_through_a_link_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (pkg, cfg) = package("in-place-link");
    let real = pkg.parent().expect("dir").join("real-deploy.yaml");
    fs::rename(pkg.join("deploy.yaml"), &real).expect("move");
    fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).expect("chmod");
    std::os::unix::fs::symlink(&real, pkg.join("deploy.yaml")).expect("link");
    let out = krm(&["--config", s(&cfg), "--in-place", s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fs::symlink_metadata(pkg.join("deploy.yaml"))
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(&real)
        .expect("read")
        .contains("replicas: 3"));
    let mode = fs::metadata(&real).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn check_and_diff_write_nothing() {
    let (pkg, cfg) = package("check");
    // Something would change: exit 1, the file named on stderr.
    let out = krm(&["--config", s(&cfg), s(&pkg), "--check"], "");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("deploy.yaml: would be changed"),
        "{}",
        out.stderr
    );
    // The diff, file by file, git's headers.
    let out = krm(&["--diff", "--config", s(&cfg), s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let name = pkg.join("deploy.yaml").display().to_string();
    let name = name.trim_start_matches('/');
    assert_eq!(
        out.stdout,
        format!("--- a/{name}\n+++ b/{name}\n@@ -4,4 +4,4 @@\n metadata:\n   name: web # keep me\n spec:\n-  replicas: 1\n+  replicas: 3\n")
    );
    let out = krm(&["--diff", "--check", "--config", s(&cfg), s(&pkg)], "");
    assert_eq!(out.code, 1);
    assert!(out.stdout.starts_with("--- a/"));
    assert_eq!(
        fs::read_to_string(pkg.join("deploy.yaml")).expect("read"),
        DEPLOY
    );
    // Nothing would change: exit 0, no diff.
    fs::write(
        &cfg,
        config("  - target: {kind: Deployment}\n    patch: 'spec: {replicas: 1}'\n"),
    )
    .expect("write");
    let out = krm(&["--config", s(&cfg), s(&pkg), "--check"], "");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    let out = krm(&["--config", s(&cfg), s(&pkg), "--diff"], "");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
}

#[test]
fn a_directory_is_read_as_kpt_reads_a_package() {
    let (pkg, cfg) = package("kpt-rules");
    // The functionConfig inside the package, a kustomization, a file that is not resources, a
    // Kptfile, an ignored file and directory, a subpackage with its own .krmignore, a dot
    // directory.
    fs::copy(&cfg, pkg.join("fn.yaml")).expect("copy");
    fs::write(
        pkg.join("kustomization.yaml"),
        "resources:\n- deploy.yaml\n",
    )
    .expect("write");
    fs::write(pkg.join("values.yaml"), "replicas: 3\n").expect("write");
    fs::write(pkg.join("Kptfile"), "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n").expect("write");
    fs::write(pkg.join(".krmignore"), "# generated\nignored.yaml\ngen/\n").expect("write");
    fs::write(pkg.join("ignored.yaml"), CM.replace("settings", "ignored")).expect("write");
    fs::create_dir_all(pkg.join("gen")).expect("dir");
    fs::write(pkg.join("gen/x.yaml"), CM.replace("settings", "gen")).expect("write");
    fs::create_dir_all(pkg.join("child")).expect("dir");
    fs::write(
        pkg.join("child/Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: child\n",
    )
    .expect("write");
    // The parent's pattern does not reach into the subpackage; its own does.
    fs::write(
        pkg.join("child/ignored.yaml"),
        CM.replace("settings", "child-kept"),
    )
    .expect("write");
    fs::write(pkg.join("child/.krmignore"), "drop.yaml\n").expect("write");
    fs::write(
        pkg.join("child/drop.yaml"),
        CM.replace("settings", "child-dropped"),
    )
    .expect("write");
    fs::create_dir_all(pkg.join(".git")).expect("dir");
    fs::write(pkg.join(".git/x.yaml"), CM.replace("settings", "git")).expect("write");
    fs::create_dir_all(pkg.join(".github")).expect("dir");
    fs::write(pkg.join(".github/ci.yaml"), CM.replace("settings", "ci")).expect("write");
    fs::write(pkg.join("README.md"), "# pkg\n").expect("write");

    let out = krm(&["--config", s(&pkg.join("fn.yaml")), s(&pkg), "-v"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let names: Vec<String> = docs(&out.stdout)
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["kind"].as_str().unwrap_or("?"),
                d["metadata"]["name"].as_str().unwrap_or("?")
            )
        })
        .collect();
    // Name order: child/ (its Kptfile is not on stdout), config, deploy, sub/service.
    assert_eq!(
        names,
        [
            "ConfigMap/child-kept",
            "ConfigMap/settings",
            "Deployment/web",
            "Service/web"
        ]
    );
    assert!(out.stderr.contains("values.yaml: not a KRM resource file (document 1 has no apiVersion and no kind); left out"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("fn.yaml: the functionConfig file; skipped"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("kustomization"), "{}", out.stderr);
    // --output: the whole package after the change, laid out as it was: every file of the
    // directory (the functionConfig, the Kptfiles, .krmignore, the build file, what is not
    // resources, what .krmignore leaves out, dot directories), but for .git.
    let dest = pkg.parent().expect("dir").join("out");
    let out = krm(
        &["--config", s(&pkg.join("fn.yaml")), s(&pkg), "-o", s(&dest)],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut written: Vec<String> = Vec::new();
    collect(&dest, &dest, &mut written);
    written.sort();
    assert_eq!(
        written,
        [
            ".github/ci.yaml",
            ".krmignore",
            "Kptfile",
            "README.md",
            "child/.krmignore",
            "child/Kptfile",
            "child/drop.yaml",
            "child/ignored.yaml",
            "config.yaml",
            "deploy.yaml",
            "fn.yaml",
            "gen/x.yaml",
            "ignored.yaml",
            "kustomization.yaml",
            "sub/service.yaml",
            "values.yaml"
        ]
    );
    assert!(fs::read_to_string(dest.join("deploy.yaml"))
        .expect("read")
        .contains("replicas: 3"));
    assert_eq!(
        fs::read_to_string(dest.join("config.yaml")).expect("read"),
        CM
    );
    for copied in ["fn.yaml", ".krmignore", "gen/x.yaml", ".github/ci.yaml"] {
        assert_eq!(
            fs::read(dest.join(copied)).expect("read"),
            fs::read(pkg.join(copied)).expect("read"),
            "{copied}"
        );
    }
    // A directory that is not empty is refused before anything runs.
    let out = krm(&["--config", s(&cfg), s(&pkg), "--output", s(&dest)], "");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not empty"), "{}", out.stderr);
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for e in fs::read_dir(dir).expect("dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            collect(root, &p, out);
        } else {
            out.push(p.strip_prefix(root).expect("under").display().to_string());
        }
    }
}

#[test]
fn deletions_and_additions_reach_the_files() {
    let (pkg, cfg) = package("delete-add");
    fs::write(
        pkg.join("config.yaml"),
        format!("{CM}---\n{}", CM.replace("settings", "old")),
    )
    .expect("write");
    let patches = "  - target: {kind: ConfigMap, name: old}\n    patch: '$patch: delete'\n  - target: {kind: Service}\n    patch: '$patch: delete'\n  - type: merge3\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: settings}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: settings}\n      ---\n      apiVersion: v1\n      kind: Secret\n      metadata: {name: token}\n";
    fs::write(&cfg, config(patches)).expect("write");
    let out = krm(&["--config", s(&cfg), "--in-place", s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The deleted resource is gone from its file, the emptied file is removed, the new resource
    // is a file of its own.
    assert_eq!(
        fs::read_to_string(pkg.join("config.yaml")).expect("read"),
        CM
    );
    assert!(!pkg.join("sub/service.yaml").exists());
    let added = fs::read_to_string(pkg.join("secret_token.yaml")).expect("new file");
    assert_eq!(
        added,
        "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\n"
    );
}

#[test]
fn a_deleted_resource_leaves_the_comments_above_its_marker() {
    // A file's licence header above its first `---` is outside every document: deleting the
    // first resource leaves it, on stdout and in place (and so in every mode, merge3 included).
    let (pkg, cfg) = package("delete-header");
    let header = "# Copyright the authors\n# vendored from upstream\n";
    let old = CM.replace("settings", "old");
    fs::write(
        pkg.join("config.yaml"),
        format!("{header}---\n{old}---\n{CM}"),
    )
    .expect("write");
    let patches = "  - target: {kind: ConfigMap, name: old}\n    patch: '$patch: delete'\n";
    fs::write(&cfg, config(patches)).expect("write");
    let want = format!("{header}---\n{CM}");
    let out = krm(&["--config", s(&cfg), s(&pkg.join("config.yaml"))], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, want);
    let out = krm(&["--config", s(&cfg), "--in-place", s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(pkg.join("config.yaml")).expect("read"),
        want
    );
}

#[test]
fn links_loops_and_special_files() {
    let (pkg, cfg) = package("links");
    std::os::unix::fs::symlink(".", pkg.join("loop")).expect("link");
    std::os::unix::fs::symlink("..", pkg.join("sub/up")).expect("link");
    std::os::unix::fs::symlink("config.yaml", pkg.join("again.yaml")).expect("link");
    std::os::unix::fs::symlink("nowhere.yaml", pkg.join("broken.yaml")).expect("link");
    let fifo = pkg.join("b.yaml");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let mut c = cmd();
    c.args(["--config", s(&cfg), s(&pkg)])
        .timeout(Duration::from_secs(30));
    let out = out_of(&c.output().expect("run"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Each resource once.
    assert_eq!(docs(&out.stdout).len(), 3, "{}", out.stdout);
    for said in [
        "b.yaml: a FIFO (named pipe), not a regular file; skipped",
        "pkg/loop: a link to the directory",
        "pkg/sub/up: a link to the directory",
        "pkg/config.yaml: the same file as ",
        "broken.yaml: a broken symbolic link; skipped",
    ] {
        assert!(out.stderr.contains(said), "{said}\n{}", out.stderr);
    }
    // The same file twice on the command line is read once.
    let f = pkg.join("deploy.yaml");
    let out = krm(&["--config", s(&cfg), s(&f), s(&f)], "");
    assert_eq!(docs(&out.stdout).len(), 1, "{}", out.stderr);
    // A pipe named on the command line is read (`<(command)`); a device is refused, named.
    let out = krm(&["--config", s(&cfg), "/dev/stdin"], DEPLOY);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("replicas: 3"));
    let out = krm(&["--config", s(&cfg), "/dev/zero"], "");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("/dev/zero: a character device"),
        "{}",
        out.stderr
    );
    let out = krm(&["--config", s(&cfg), s(&pkg.join("missing.yaml"))], "");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("input ") && out.stderr.contains("missing.yaml: no such file"),
        "{}",
        out.stderr
    );
}

#[test]
fn each_file_is_parsed_on_its_own() {
    let (pkg, cfg) = package("each-file");
    // Valid alone, not when joined to what comes before: a BOM, a directive.
    fs::write(
        pkg.join("sub/service.yaml"),
        format!("\u{feff}%YAML 1.2\n---\n{SERVICE}"),
    )
    .expect("write");
    let out = krm(&["--config", s(&cfg), s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(docs(&out.stdout).len(), 3, "{}", out.stdout);
    // A syntax error names its file and its own line.
    fs::write(
        pkg.join("sub/service.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata: {name: [\n",
    )
    .expect("write");
    let out = krm(&["--config", s(&cfg), s(&pkg)], "");
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    let name = pkg.join("sub/service.yaml").display().to_string();
    assert!(
        out.stderr
            .contains(&format!("{name}: malformed YAML: line 3, column")),
        "{}",
        out.stderr
    );
}

#[test]
fn helm_post_renderer_stream_keeps_its_source_comments() {
    // What `helm template` writes, and what Helm gives a post-renderer on stdin.
    let rendered = "\
---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: release-web
  labels:
    helm.sh/chart: web-0.1.0
spec:
  ports:
    - port: 80
---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-web
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: web
          image: \"nginx:1.25\"
";
    let dir = tmp_dir("package", "helm");
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, config("  - target: {kind: Deployment}\n    patch: |\n      spec:\n        template:\n          spec:\n            containers:\n            - name: web\n              image: nginx:1.26\n")).expect("write");
    // A post-renderer script of two lines, as Helm 3 runs one (integrations/helm has the one users get).
    let script = dir.join("post-render.sh");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {} --config {} -\n",
            bin().display(),
            cfg.display()
        ),
    )
    .expect("write");
    let out = run(std::process::Command::new("sh").arg(&script).stdin(
        fs::File::open({
            let f = dir.join("rendered.yaml");
            fs::write(&f, rendered).expect("write");
            f
        })
        .expect("open"),
    ));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        // The changed string keeps the quotes Helm's template gave it.
        rendered.replace("nginx:1.25", "nginx:1.26")
    );
}

// A package with kube-prometheus's list files (the fixture
// `real_packages/kube_prometheus_list_kinds_are_patched_item_by_item`, one file each here).
// Their items are patched where they are, each file keeps its list form, untouched files keep
// their bytes, an error about an item names the list's file, and a list whose every item a
// patch deletes goes with its file.
#[test]
fn list_files_are_patched_item_by_item_and_keep_their_form() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real_packages/kube_prometheus_list_kinds_are_patched_item_by_item");
    let input = fs::read_to_string(fixture.join("input.yaml")).expect("fixture");
    let texts: Vec<&str> = input.split("---\n").filter(|d| !d.is_empty()).collect();
    let dir = tmp_dir("package", "lists");
    let pkg = dir.join("pkg");
    fs::create_dir_all(&pkg).expect("pkg");
    let names = ["roles.yaml", "role-bindings.yaml", "dashboards.yaml"];
    for (n, t) in names.iter().zip(&texts) {
        fs::write(pkg.join(n), t).expect("write");
    }
    let cfg = dir.join("fn.yaml");
    let add_rule = "  - target: {kind: Role, namespace: monitoring}\n    type: json6902\n    patch: '[{op: add, path: /rules/-, value: {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}}]'\n";
    fs::write(&cfg, config(add_rule)).expect("write");
    let out = krm(&["--config", s(&cfg), "--in-place", s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let roles = fs::read_to_string(pkg.join("roles.yaml")).expect("read");
    assert!(roles.starts_with("apiVersion: rbac.authorization.k8s.io/v1\nitems:\n"));
    assert!(roles.ends_with("kind: RoleList\n"), "{roles}");
    let added =
        "  - apiGroups:\n    - \"\"\n    resources:\n    - configmaps\n    verbs:\n    - get\n";
    assert_eq!(roles.matches(added).count(), 1, "{roles}");
    let rest = roles.replace(added, "");
    assert_eq!(rest, texts[0], "the other Roles keep their bytes");
    assert_eq!(
        fs::read_to_string(pkg.join("role-bindings.yaml")).expect("read"),
        texts[1]
    );
    assert_eq!(
        fs::read_to_string(pkg.join("dashboards.yaml")).expect("read"),
        texts[2]
    );
    // A failing patch on an item: the error names the list's file; nothing is written.
    let failing = "  - target: {kind: ConfigMap, name: grafana-dashboard-apiserver}\n    type: json6902\n    patch: '[{op: remove, path: /data/nope}]'\n";
    fs::write(&cfg, config(failing)).expect("write");
    let results = dir.join("results.yaml");
    let out = krm(
        &[
            "--config",
            s(&cfg),
            "--in-place",
            s(&pkg),
            "--results",
            s(&results),
        ],
        "",
    );
    assert_eq!(out.code, 1);
    let r = &docs(&fs::read_to_string(&results).expect("results"))[0]["results"][0];
    assert_eq!(
        r["resourceRef"]["name"], "grafana-dashboard-apiserver",
        "{r}"
    );
    assert!(
        r["file"]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("dashboards.yaml")),
        "{r}"
    );
    assert_eq!(r["file"]["index"].as_u64().unwrap_or(0), 0, "{r}");
    assert_eq!(
        fs::read_to_string(pkg.join("dashboards.yaml")).expect("read"),
        texts[2]
    );
    // Every RoleBinding deleted: the list and its file go.
    let delete = "  - target: {kind: RoleBinding}\n    patch: '$patch: delete'\n";
    fs::write(&cfg, config(delete)).expect("write");
    let out = krm(&["--config", s(&cfg), "--diff", s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("+++ /dev/null"), "{}", out.stdout);
    let out = krm(&["--config", s(&cfg), "-i", s(&pkg)], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!pkg.join("role-bindings.yaml").exists());
}

/// A Deployment and a Service as a chart renders them, with empty documents spelled each way
/// release files spell them.
const EMPTY_SPELLINGS: &[(&str, &str)] = &[
    ("a trailing marker", "{D}---\n{S}---\n"),
    ("a marker with a comment", "{D}--- # end\n{S}"),
    (
        "Helm's source comments",
        "---\n# Source: chart/templates/empty.yaml\n---\n# Source: chart/templates/deploy.yaml\n{D}---\n# Source: chart/templates/none.yaml\n---\n# Source: chart/templates/svc.yaml\n{S}",
    ),
    ("two markers at the start", "---\n---\n{D}---\n{S}"),
    ("two markers between", "{D}---\n---\n{S}"),
    ("comments alone between", "{D}---\n# nothing rendered here\n\n---\n{S}"),
];

fn spelled(spelling: &str, deploy: &str) -> String {
    spelling.replace("{D}", deploy).replace("{S}", SERVICE)
}

/// A package file of resources and empty documents is read: its resources reach stdout and are
/// patched, `--in-place` rewrites it with its empty documents where they were, and nothing
/// warns that it is not a resource file.
#[test]
fn empty_documents_in_a_package_file_hold_nothing_and_lose_nothing() {
    for (n, (what, spelling)) in EMPTY_SPELLINGS.iter().enumerate() {
        let dir = tmp_dir("package", &format!("empty-docs-{n}"));
        let pkg = dir.join("pkg");
        fs::create_dir_all(&pkg).expect("pkg");
        let file = pkg.join("release.yaml");
        let text = spelled(spelling, DEPLOY);
        fs::write(&file, &text).expect("write");
        let cfg = dir.join("fn.yaml");
        fs::write(
            &cfg,
            config(&format!(
                "{SCALE}  - target: {{kind: Service}}\n    patch: |\n      metadata:\n        labels:\n          a: b\n"
            )),
        )
        .expect("write");
        let out = krm(&["--config", s(&cfg), s(&pkg)], "");
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        assert!(
            !out.stderr.contains("not a KRM resource file"),
            "{what}: {}",
            out.stderr
        );
        let got = docs(&out.stdout);
        assert_eq!(got.len(), 2, "{what}: {}", out.stdout);
        assert_eq!(got[0]["spec"]["replicas"], 3, "{what}");
        assert_eq!(got[1]["metadata"]["labels"]["a"], "b", "{what}");
        let out = krm(&["--config", s(&cfg), "--in-place", s(&pkg)], "");
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        let want = spelled(spelling, &DEPLOY.replace("replicas: 1", "replicas: 3")).replace(
            "  name: web\nspec:\n  ports:",
            "  name: web\n  labels:\n    a: b\nspec:\n  ports:",
        );
        assert_eq!(fs::read_to_string(&file).expect("read"), want, "{what}");
    }
}

/// `krm-merge diff BASE/ VARIANT/` reads a variant's release file with empty documents: its
/// resources are there, so none is deleted, and the change is the patch.
#[test]
fn diff_of_packages_reads_files_with_empty_documents() {
    for (n, (what, spelling)) in EMPTY_SPELLINGS.iter().enumerate() {
        let dir = tmp_dir("package", &format!("empty-docs-diff-{n}"));
        let (base, variant) = (dir.join("base"), dir.join("variant"));
        fs::create_dir_all(&base).expect("base");
        fs::create_dir_all(&variant).expect("variant");
        fs::write(base.join("release.yaml"), spelled(spelling, DEPLOY)).expect("write");
        fs::write(
            variant.join("release.yaml"),
            spelled(spelling, &DEPLOY.replace("replicas: 1", "replicas: 5")),
        )
        .expect("write");
        let out = krm(&["diff", s(&base), s(&variant)], "");
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        assert!(
            !out.stdout.contains("$patch: delete"),
            "{what}: {}",
            out.stdout
        );
        assert!(
            !out.stderr.contains("not a KRM resource file"),
            "{what}: {}",
            out.stderr
        );
        let config = docs(&out.stdout).remove(0);
        let patches = config["spec"]["patches"].as_array().expect("patches");
        assert_eq!(patches.len(), 1, "{what}: {}", out.stdout);
        assert_eq!(patches[0]["target"]["kind"], "Deployment", "{what}");
        // Run back on BASE, it gives the variant.
        let fn_yaml = dir.join("fn.yaml");
        fs::write(&fn_yaml, &out.stdout).expect("write");
        let run = krm(&["--config", s(&fn_yaml), s(&base)], "");
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert_eq!(docs(&run.stdout)[0]["spec"]["replicas"], 5, "{what}");
    }
}

/// A file holding a `ResourceList`, named as input, comes back as it was when nothing changes
/// (no `results:` written into it; one without `items` is not emptied, so `--in-place` leaves
/// it), and with its items patched otherwise.
#[test]
fn resource_list_files_come_back_as_they_were() {
    let dir = tmp_dir("package", "resource-list-files");
    let without = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: fc}\n";
    let with = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {{name: s}}\n{}",
        "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n  spec:\n    replicas: 1\n"
    );
    let json = "{\"apiVersion\": \"config.kubernetes.io/v1\", \"kind\": \"ResourceList\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"j\"}}]}\n";
    let files = [
        ("without.yaml", without),
        ("with.yaml", with.as_str()),
        ("json.yaml", json),
    ];
    for (name, text) in files {
        fs::write(dir.join(name), text).expect("write");
        age(&dir.join(name));
    }
    let paths: Vec<String> = files
        .iter()
        .map(|(n, _)| s(&dir.join(n)).to_owned())
        .collect();
    let cfg = dir.join("fn.yaml");
    fs::write(
        &cfg,
        config("  - target: {kind: Service}\n    patch: 'spec: {x: 1}'\n"),
    )
    .expect("write");
    let mut args = vec!["--config", s(&cfg)];
    args.extend(paths.iter().map(String::as_str));
    let out = krm(&args, "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{without}---\n{with}---\n{json}"));
    let before: Vec<SystemTime> = files.iter().map(|(n, _)| mtime(&dir.join(n))).collect();
    args.push("--in-place");
    let out = krm(&args, "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    for ((name, text), then) in files.iter().zip(before) {
        let p = dir.join(name);
        assert_eq!(fs::read_to_string(&p).expect("kept"), *text, "{name}");
        assert_eq!(mtime(&p), then, "{name} was rewritten");
    }
    // A patch to an item: the file is its ResourceList with that item patched, no results.
    fs::write(&cfg, config(SCALE)).expect("write");
    let out = krm(&["--config", s(&cfg), "--in-place", &paths[1]], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(dir.join("with.yaml")).expect("read"),
        with.replace("replicas: 1", "replicas: 3")
    );
}
