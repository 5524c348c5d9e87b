//! Write-back's promises, through the binary, as an attacker and a user with real packages would
//! try them: nothing the run reads is ever overwritten; `--in-place` and `--output` are one
//! transaction each (every file old or every file new, no temporary left, `--results` written
//! last with the failure in it); a rewritten file keeps its mode, owner and group; names the
//! file system takes stay writable; a file the walk cannot look at is an error; `--output` is
//! the whole package, which kustomize and kpt build; a closed stdout is an error; diff headers
//! cannot name a file that was not changed. (The transaction under a failure injected at every
//! step is `src/cli/writeback/tests.rs`'s property test.)

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::*;

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
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
  type: ClusterIP
";

/// Changes all three of DEPLOY, CM and SERVICE.
const CHANGE_ALL: &str = "  - target: {kind: Deployment}\n    patch: 'spec: {replicas: 3}'\n  - target: {kind: ConfigMap}\n    patch: 'data: {b: \"2\"}'\n  - target: {kind: Service}\n    patch: 'spec: {type: NodePort}'\n";

fn config(patches: &str) -> String {
    format!("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: t\nspec:\n  patches:\n{patches}")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `root/pkg` with deploy.yaml, config.yaml and sub/service.yaml, and `root/fn.yaml`.
fn package(name: &str, patches: &str) -> (PathBuf, PathBuf, PathBuf) {
    let root = tmp_dir("write_back", name);
    let pkg = root.join("pkg");
    fs::create_dir_all(pkg.join("sub")).expect("pkg");
    fs::write(pkg.join("deploy.yaml"), DEPLOY).expect("write");
    fs::write(pkg.join("config.yaml"), CM).expect("write");
    fs::write(pkg.join("sub/service.yaml"), SERVICE).expect("write");
    let cfg = root.join("fn.yaml");
    fs::write(&cfg, config(patches)).expect("write");
    (root, pkg, cfg)
}

/// Every file under `dir` with its content; a temporary of write-back's fails the test.
fn contents(dir: &Path) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for e in fs::read_dir(dir).expect("dir") {
            let p = e.expect("entry").path();
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            assert!(
                !name.starts_with(".krm"),
                "a temporary is left: {}",
                p.display()
            );
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under").display().to_string();
                out.push((rel, fs::read_to_string(&p).expect("read")));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn run_cmd(c: &mut Command) -> Out {
    out_of(&c.stdin(Stdio::null()).output().expect("run"))
}

fn is_root() -> bool {
    let probe = std::env::temp_dir().join(format!("krm-merge-uid-probe-{}", std::process::id()));
    fs::write(&probe, "").expect("probe");
    let root = fs::metadata(&probe).expect("probe").uid() == 0;
    let _ = fs::remove_file(&probe);
    root
}

/// The binary run as a user whom permissions stop: as root, `nobody` through `setpriv` (the
/// tree `owned` is given to nobody first, so that only what the test makes read-only is);
/// otherwise the user itself.
fn unprivileged(owned: &Path) -> Command {
    if !is_root() {
        return Command::new(bin());
    }
    let out = run(Command::new("chown").args(["-R", "65534:65534"]).arg(owned));
    assert!(out.status.success());
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(bin());
    c
}

// ----- A. Nothing the run reads is ever overwritten ------------------------------------------

#[test]
fn results_naming_anything_the_run_reads_is_refused() {
    let (root, pkg, cfg) = package(
        "results-input",
        "  - target: {kind: Deployment}\n    path: patch.yaml\n",
    );
    fs::write(root.join("patch.yaml"), "spec: {replicas: 3}\n").expect("write");
    std::os::unix::fs::symlink(pkg.join("config.yaml"), root.join("link.yaml")).expect("link");
    fs::hard_link(pkg.join("sub/service.yaml"), root.join("hard.yaml")).expect("link");
    let before = contents(&root);
    for (target, names) in [
        (pkg.join("deploy.yaml"), "an input"),
        (cfg.clone(), "an input"),
        (root.join("link.yaml"), "the same file as"),
        (root.join("hard.yaml"), "the same file as"),
        (root.join("patch.yaml"), "patch.yaml"),
    ] {
        for mode in [vec![], vec!["--in-place"], vec!["--diff"]] {
            let mut args = vec!["--config", s(&cfg), s(&pkg), "--results", s(&target)];
            args.extend(mode.iter().copied());
            let out = krm(&args, "");
            assert_eq!(out.code, 2, "{target:?} {mode:?}: {}", out.stderr);
            assert!(
                out.stderr.contains("--results") && out.stderr.contains(names),
                "{}",
                out.stderr
            );
            assert!(
                out.stderr.contains("never writes over its input"),
                "{}",
                out.stderr
            );
            assert_eq!(out.stdout, "");
        }
    }
    assert_eq!(contents(&root), before, "nothing was written");
    // merge2's SRC and DEST too.
    let out = krm(
        &[
            "merge2",
            s(&root.join("patch.yaml")),
            s(&pkg.join("deploy.yaml")),
            "--results",
            s(&pkg.join("deploy.yaml")),
        ],
        "",
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(contents(&root), before);
}

#[test]
fn diff_added_naming_an_input_is_refused() {
    let root = tmp_dir("write_back", "diff-added");
    let (old, new) = (root.join("old"), root.join("new"));
    fs::create_dir_all(&old).expect("dir");
    fs::create_dir_all(&new).expect("dir");
    fs::write(old.join("a.yaml"), DEPLOY).expect("write");
    fs::write(
        new.join("a.yaml"),
        DEPLOY.replace("replicas: 1", "replicas: 2"),
    )
    .expect("write");
    fs::write(new.join("b.yaml"), CM).expect("write");
    let before = contents(&root);
    for target in [old.join("a.yaml"), new.join("b.yaml")] {
        let out = krm(&["diff", s(&old), s(&new), "--added", s(&target)], "");
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains("--added"), "{}", out.stderr);
    }
    assert_eq!(contents(&root), before);
    // Elsewhere, it is written.
    let out = krm(
        &[
            "diff",
            s(&old),
            s(&new),
            "--added",
            s(&root.join("added.yaml")),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(root.join("added.yaml")).expect("read"),
        CM
    );
}

/// `diff --added` is written before `--results`, so a failure to write it is in the results (as
/// every file the command line writes keeps results last).
#[test]
fn diff_results_are_written_after_added_and_hold_its_failure() {
    let root = tmp_dir("write_back", "diff-added-results");
    let (old, new) = (root.join("old"), root.join("new"));
    fs::create_dir_all(&old).expect("dir");
    fs::create_dir_all(&new).expect("dir");
    fs::write(old.join("a.yaml"), DEPLOY).expect("write");
    fs::write(new.join("a.yaml"), DEPLOY).expect("write");
    fs::write(new.join("b.yaml"), CM).expect("write");
    let results = root.join("results.yaml");
    // The directory --added names does not exist: the write fails.
    let added = root.join("missing/added.yaml");
    let out = krm(
        &[
            "diff",
            s(&old),
            s(&new),
            "--added",
            s(&added),
            "--results",
            s(&results),
        ],
        "",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    // Said as every file error is: the file's role, its path, the reason in plain words.
    assert!(
        out.stderr.contains(&format!(
            "error: --added {}: cannot create",
            added.display()
        )) && out.stderr.contains("no such file")
            && !out.stderr.contains("os error"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    let text = fs::read_to_string(&results).expect("results written");
    assert!(text.contains("--added "), "{text}");
    assert!(text.contains("severity: error"), "{text}");
    assert!(!added.exists());
}

#[test]
fn output_and_stdout_never_land_on_an_input() {
    let (_, pkg, cfg) = package("output-input", CHANGE_ALL);
    fs::create_dir_all(pkg.join("empty")).expect("dir");
    let out = krm(
        &["--config", s(&cfg), s(&pkg), "-o", s(&pkg.join("empty"))],
        "",
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--output"), "{}", out.stderr);
    assert!(fs::read_dir(pkg.join("empty"))
        .expect("dir")
        .next()
        .is_none());
    // Stdout appended to an input file (the shell's `>` would have emptied it already).
    let target = pkg.join("deploy.yaml");
    let stdout = fs::File::options()
        .append(true)
        .open(&target)
        .expect("open");
    let out = run_cmd(
        Command::new(bin())
            .args(["--config", s(&cfg), s(&pkg)])
            .stdout(stdout),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("stdout is"), "{}", out.stderr);
    assert_eq!(fs::read_to_string(&target).expect("read"), DEPLOY);
}

/// The shell's `>` makes an empty file before the run starts: in the package read, it holds
/// nothing, so writing the output there overwrites nothing the run read (`krm-merge diff base/
/// prod/ > base/fn-config.yaml`).
#[test]
fn stdout_to_a_new_file_inside_the_package_is_written() {
    let (_, pkg, cfg) = package("stdout-new-file", CHANGE_ALL);
    let target = pkg.join("out.yaml");
    let stdout = fs::File::create(&target).expect("create");
    let out = run_cmd(
        Command::new(bin())
            .args(["--config", s(&cfg), s(&pkg)])
            .stdout(stdout),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let written = fs::read_to_string(&target).expect("read");
    assert!(written.contains("kind: Deployment"), "{written}");
}

// ----- B. Write-back is one transaction ------------------------------------------------------

#[test]
fn a_write_failing_at_one_file_leaves_every_file_unchanged() {
    let (root, pkg, cfg) = package("read-only-dir", CHANGE_ALL);
    let results_dir = root.join("results");
    fs::create_dir_all(&results_dir).expect("dir");
    let results = results_dir.join("results.yaml");
    let mut c = unprivileged(&root);
    // The directory of one of the three files is read-only: its temporary cannot be made.
    fs::set_permissions(pkg.join("sub"), fs::Permissions::from_mode(0o555)).expect("chmod");
    let before = contents(&pkg);
    let out = run_cmd(c.args([
        "--config",
        s(&cfg),
        s(&pkg),
        "--in-place",
        "--results",
        s(&results),
    ]));
    fs::set_permissions(pkg.join("sub"), fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("sub/service.yaml") && out.stderr.contains("nothing was written"),
        "{}",
        out.stderr
    );
    assert_eq!(
        contents(&pkg),
        before,
        "all three unchanged, no temporary left"
    );
    // The results are written last, with the failure.
    let written = fs::read_to_string(&results).expect("results");
    assert!(written.contains("sub/service.yaml: cannot"), "{written}");
    // Once the directory is writable, all three change together.
    let out = run_cmd(Command::new(bin()).args(["--config", s(&cfg), s(&pkg), "-i"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = contents(&pkg);
    assert!(
        after
            .iter()
            .all(|(n, t)| before.iter().any(|(m, u)| m == n && u != t)),
        "{after:?}"
    );
}

#[test]
fn an_output_that_fails_leaves_no_directory() {
    // A path the system cannot take (longer than PATH_MAX once inside the output): the
    // package is read from a shorter path, relative to the test's directory.
    let root = tmp_dir("write_back", "output-fails");
    let seg = "d".repeat(200);
    let deep: PathBuf = std::iter::repeat_n(seg.as_str(), 14).collect();
    fs::create_dir_all(root.join("p").join(&deep)).expect("deep dir");
    fs::write(root.join("p").join(&deep).join("a.yaml"), DEPLOY).expect("write");
    fs::write(root.join("fn.yaml"), config(CHANGE_ALL)).expect("write");
    let out_dir: PathBuf = ["o"]
        .into_iter()
        .chain(std::iter::repeat_n(seg.as_str(), 8))
        .collect();
    let out = run_cmd(
        Command::new(bin())
            .current_dir(&root)
            .args(["--config", "fn.yaml", "p", "-o"])
            .arg(&out_dir),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("a.yaml: cannot"), "{}", out.stderr);
    assert!(!root.join("o").exists(), "nor the parents made for it");
    let names: Vec<_> = fs::read_dir(&root)
        .expect("dir")
        .map(|e| e.expect("e").file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // A directory that exists (empty) stays, empty.
    fs::create_dir_all(root.join(&out_dir)).expect("dir");
    let out = run_cmd(
        Command::new(bin())
            .current_dir(&root)
            .args(["--config", "fn.yaml", "p", "-o"])
            .arg(&out_dir),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(fs::read_dir(root.join(&out_dir))
        .expect("dir")
        .next()
        .is_none());
}

#[test]
fn a_rewritten_file_keeps_its_mode_owner_and_group() {
    let (_, pkg, cfg) = package("owner", CHANGE_ALL);
    let file = pkg.join("deploy.yaml");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).expect("chmod");
    if is_root() {
        std::os::unix::fs::chown(&file, Some(1234), Some(1234)).expect("chown");
    }
    let before = fs::metadata(&file).expect("meta");
    let out = krm(&["--config", s(&cfg), s(&pkg), "-i"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = fs::metadata(&file).expect("meta");
    assert!(fs::read_to_string(&file)
        .expect("read")
        .contains("replicas: 3"));
    assert_ne!(
        after.ino(),
        before.ino(),
        "replaced, not rewritten in place"
    );
    assert_eq!(
        (after.uid(), after.gid(), after.mode() & 0o7777),
        (before.uid(), before.gid(), 0o640)
    );
}

#[test]
fn a_hard_linked_file_is_refused_and_nothing_changes() {
    let (root, pkg, cfg) = package("hard-link", CHANGE_ALL);
    fs::hard_link(pkg.join("sub/service.yaml"), root.join("elsewhere.yaml")).expect("link");
    let before = contents(&root);
    let out = krm(&["--config", s(&cfg), s(&pkg), "-i"], "");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("2 hard links"), "{}", out.stderr);
    assert_eq!(contents(&root), before);
}

#[test]
fn names_the_file_system_takes_stay_writable() {
    // A 250-byte name is rewritten (the temporary's name is short).
    let (root, pkg, cfg) = package("long-names", CHANGE_ALL);
    let long = pkg.join(format!("{}.yaml", "x".repeat(245)));
    fs::rename(pkg.join("deploy.yaml"), &long).expect("rename");
    let out = krm(&["--config", s(&cfg), s(&pkg), "-i"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fs::read_to_string(&long)
        .expect("read")
        .contains("replicas: 3"));
    // A resource a merge3 update adds whose name gives a file name over 255 bytes: a shortened
    // name with a stable hash, the same in --check, --diff and the file written.
    let name = "n".repeat(300);
    let add = format!("  - type: merge3\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {{name: settings}}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {{name: settings}}\n      ---\n      apiVersion: v1\n      kind: Secret\n      metadata: {{name: {name}}}\n");
    fs::write(&cfg, config(&add)).expect("write");
    let check = krm(&["--config", s(&cfg), s(&pkg), "--check"], "");
    assert_eq!(check.code, 1, "{}", check.stderr);
    let created = check
        .stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("krm-merge: ")?
                .strip_suffix(": would be created")
        })
        .expect("a created file")
        .to_owned();
    let file_name = Path::new(&created)
        .file_name()
        .expect("name")
        .to_str()
        .expect("UTF-8");
    assert!(
        file_name.len() <= 255 && file_name.starts_with("secret_nnn"),
        "{file_name}"
    );
    assert!(file_name.ends_with(".yaml"), "{file_name}");
    let diff = krm(&["--config", s(&cfg), s(&pkg), "--diff"], "");
    assert!(
        diff.stdout
            .contains(&format!("+++ b/{}", created.trim_start_matches('/'))),
        "{}",
        diff.stdout
    );
    let out = krm(&["--config", s(&cfg), s(&pkg), "-i"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fs::read_to_string(&created)
        .expect("created")
        .contains(&name));
    let _ = root;
}

#[test]
fn in_place_on_what_cannot_be_written_back_is_a_usage_error() {
    let (_, pkg, cfg) = package("in-place-stdin", CHANGE_ALL);
    for args in [
        vec!["--config", s(&cfg), "-i"],
        vec!["--config", s(&cfg), "-i", "-"],
        vec!["--config", s(&cfg), "-i", "/dev/stdin"],
        vec!["--config", s(&cfg), "-i", s(&pkg), "/dev/stdin"],
    ] {
        let out = krm(&args, DEPLOY);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("cannot be written back") || out.stderr.contains("not stdin"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(
        fs::read_to_string(pkg.join("deploy.yaml")).expect("read"),
        DEPLOY
    );
}

// ----- C. A file that cannot be read is an error ---------------------------------------------

#[test]
fn a_file_the_walk_cannot_look_at_is_an_error() {
    // A file whose path is longer than the system takes, in a directory that can be listed:
    // made one directory at a time, each relative to the one before.
    use rustix::fs::{mkdirat, openat, Mode, OFlags};
    let root = tmp_dir("write_back", "path-max");
    fs::write(root.join("fn.yaml"), config(CHANGE_ALL)).expect("write");
    fs::create_dir(root.join("p")).expect("dir");
    fs::write(root.join("p/top.yaml"), CM).expect("write");
    let mut dir = fs::File::open(root.join("p")).expect("open");
    let mut len = "p".len();
    while len < 4090 {
        let name = "d".repeat((4090 - len - 1).min(250));
        mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).expect("mkdirat");
        let fd = openat(
            &dir,
            name.as_str(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .expect("openat");
        dir = fs::File::from(fd);
        len += 1 + name.len();
    }
    let fd = openat(
        &dir,
        "far.yaml",
        OFlags::CREATE | OFlags::WRONLY,
        Mode::from_raw_mode(0o644),
    )
    .expect("create");
    std::io::Write::write_all(&mut fs::File::from(fd), CM.as_bytes()).expect("write");
    let out = run_cmd(
        Command::new(bin())
            .current_dir(&root)
            .args(["--config", "fn.yaml", "p"]),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("far.yaml") && out.stderr.contains("too long"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "", "never a package with a file missing");
}

// ----- D. --output is the whole package ------------------------------------------------------

/// A package kustomize and kpt both build: a kustomization with a generator reading a file that
/// is not YAML, a Kptfile whose pipeline runs krm-merge on the functionConfig in the package.
fn buildable_package(root: &Path) -> PathBuf {
    let pkg = root.join("pkg");
    fs::create_dir_all(&pkg).expect("dir");
    fs::write(pkg.join("deploy.yaml"), DEPLOY).expect("write");
    fs::write(pkg.join("app.properties"), "mode=fast\n").expect("write");
    fs::write(
        pkg.join("kustomization.yaml"),
        "resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: app\n  files:\n  - app.properties\n",
    )
    .expect("write");
    fs::write(
        pkg.join("fn.yaml"),
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: t\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nspec:\n  patches:\n  - target: {kind: Deployment}\n    patch: 'spec: {replicas: 3}'\n",
    )
    .expect("write");
    fs::write(
        pkg.join("Kptfile"),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n    - exec: {}\n      configPath: fn.yaml\n",
            bin().display()
        ),
    )
    .expect("write");
    fs::write(pkg.join(".krmignore"), "kustomization.yaml\n").expect("write");
    pkg
}

#[test]
#[cfg_attr(
    not(all(host_kpt, host_kubectl)),
    ignore = "needs kpt and kubectl on PATH"
)]
fn output_is_the_whole_package_kustomize_and_kpt_build() {
    let (kpt, kubectl) = (host("kpt"), host("kubectl"));
    let root = tmp_dir("write_back", "output-builds");
    let pkg = buildable_package(&root);
    let dest = root.join("out");
    let out = krm(
        &["--config", s(&pkg.join("fn.yaml")), s(&pkg), "-o", s(&dest)],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fs::read_to_string(dest.join("deploy.yaml"))
        .expect("read")
        .contains("replicas: 3"));
    for same in [
        "app.properties",
        "kustomization.yaml",
        "fn.yaml",
        "Kptfile",
        ".krmignore",
    ] {
        assert_eq!(
            fs::read(dest.join(same)).expect("copied"),
            fs::read(pkg.join(same)).expect("source"),
            "{same}"
        );
    }
    let built = run(Command::new(&kubectl).arg("kustomize").arg(&dest));
    assert!(built.status.success());
    let text = String::from_utf8_lossy(&built.stdout);
    assert!(
        text.contains("replicas: 3") && text.contains("mode=fast"),
        "{text}"
    );
    let rendered = run(Command::new(&kpt)
        .args(["fn", "render", "--allow-exec"])
        .arg(&dest));
    assert!(rendered.status.success());
    assert!(fs::read_to_string(dest.join("deploy.yaml"))
        .expect("read")
        .contains("replicas: 3"));
}

// ----- E. The edges of the command line ------------------------------------------------------

#[test]
fn a_closed_stdout_is_an_error() {
    let (_, pkg, cfg) = package("closed-stdout", CHANGE_ALL);
    let script = format!("{} --config {} {} >&-", bin().display(), s(&cfg), s(&pkg));
    let out = run_cmd(Command::new("sh").arg("-c").arg(&script));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot write to stdout"),
        "{}",
        out.stderr
    );
    // Nothing to write is no error (--check says with its exit code); nor is /dev/null.
    let script = format!(
        "{} --config {} {} --check -q >&-",
        bin().display(),
        s(&cfg),
        s(&pkg)
    );
    let out = run_cmd(Command::new("sh").arg("-c").arg(&script));
    assert_eq!((out.code, out.stderr.as_str()), (1, ""));
    let script = format!(
        "{} --config {} {} > /dev/null",
        bin().display(),
        s(&cfg),
        s(&pkg)
    );
    assert_eq!(run_cmd(Command::new("sh").arg("-c").arg(&script)).code, 0);
    // /dev/null opened for reading and writing, as Python's subprocess.DEVNULL gives it (and as
    // the Rust runtime fills a closed stream), is a stdout like any other.
    let null = fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
        .expect("open");
    let out = run_cmd(
        Command::new(bin())
            .args(["--config", s(&cfg), s(&pkg)])
            .stdout(null),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn diff_of_dot_names_files_git_apply_takes() {
    // `krm-merge --config FN . --diff` (and `merge3 OLD NEW . --diff`) once named the package's
    // files `a/./deploy.yaml`, which `git apply` refuses as an invalid path.
    let (_, pkg, cfg) = package("diff-dot", CHANGE_ALL);
    let before = contents(&pkg);
    let out =
        run_cmd(
            Command::new(bin())
                .current_dir(&pkg)
                .args(["--config", s(&cfg), ".", "--diff"]),
        );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("--- a/deploy.yaml\n+++ b/deploy.yaml\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("/./"), "{}", out.stdout);
    // The diff applies as printed, from where it was made, and gives what --in-place writes.
    let patch = pkg.parent().expect("parent").join("dot.diff");
    fs::write(&patch, &out.stdout).expect("write");
    assert!(git(&pkg)
        .args(["init", "-q"])
        .status()
        .expect("git")
        .success());
    let applied = git(&pkg)
        .args(["apply", s(&patch)])
        .output()
        .expect("git apply");
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    fs::remove_dir_all(pkg.join(".git")).expect("rm .git");
    let via_diff = contents(&pkg);
    assert_ne!(via_diff, before, "the patch changed something");
    for (name, text) in &before {
        fs::write(pkg.join(name), text).expect("restore");
    }
    let out = krm(&["--config", s(&cfg), s(&pkg), "--in-place"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(contents(&pkg), via_diff);
}

#[test]
fn diff_headers_quote_names_as_git_does() {
    let (_, pkg, cfg) = package("quoted-names", CHANGE_ALL);
    let odd = pkg.join("a\n+++ evil.yaml");
    fs::rename(pkg.join("deploy.yaml"), &odd).expect("rename");
    let out = krm(&["--config", s(&cfg), s(&pkg), "--diff"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let quoted = format!(
        "--- \"a/{}/a\\n+++ evil.yaml\"\n",
        s(&pkg).trim_start_matches('/')
    );
    assert!(out.stdout.contains(&quoted), "{}", out.stdout);
    assert!(
        !out.stdout.lines().any(|l| l == "+++ evil.yaml"),
        "no header names a file that was not changed:\n{}",
        out.stdout
    );
}
