//! What the integration tests share: running the binary, building ResourceLists, reading YAML
//! as data, comparing YAML trees; and for the host tests, finding the hosts (kpt, kubectl,
//! podman) and the function's image, temporary directories, running commands.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use krm_merge::yaml::{self, Node};
use serde_json::Value;

/// What a run of `krm-merge` gave.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_krm-merge"))
}

/// The binary as an [`assert_cmd::Command`], without the plugin variable a surrounding
/// kustomize may have set.
pub fn cmd() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(bin());
    c.env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING");
    c
}

/// Runs the binary with `args`, feeding `stdin`.
pub fn krm(args: &[&str], stdin: &str) -> Out {
    krm_in(args, stdin, None)
}

pub fn krm_in(args: &[&str], stdin: &str, dir: Option<&std::path::Path>) -> Out {
    let mut c = cmd();
    c.args(args).write_stdin(stdin.as_bytes().to_vec());
    if let Some(d) = dir {
        c.current_dir(d);
    }
    out_of(&c.output().expect("run krm-merge"))
}

/// Runs the binary with `args`, feeding raw `stdin` bytes (which need not be UTF-8).
pub fn run_bytes(args: &[&str], stdin: &[u8]) -> std::process::Output {
    cmd()
        .args(args)
        .write_stdin(stdin.to_vec())
        .output()
        .expect("run krm-merge")
}

/// An [`Out`] from a finished process.
pub fn out_of(out: &std::process::Output) -> Out {
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The documents of a YAML stream as JSON values (aliases expanded).
pub fn docs(text: &str) -> Vec<Value> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .filter_map(|d| d.root)
        .filter(|r| !is_empty_document(r))
        .map(|mut r| {
            r.expand_aliases(1_000_000).expect("aliases");
            yaml::to_json(&r).expect("JSON-compatible")
        })
        .collect()
}

/// The resources of `values` with every list kind (`List`, `RoleList`: a `kind` ending in
/// `List` with `items`, not a `ResourceList`) replaced by its items, at any depth: the
/// resources as kustomize reads them.
pub fn flatten_lists(values: Vec<Value>) -> Vec<Value> {
    fn walk(v: Value, out: &mut Vec<Value>) {
        let kind = v["kind"].as_str().unwrap_or("");
        let list = kind.ends_with("List") && kind != "ResourceList";
        match v.get("items") {
            Some(Value::Array(items)) if list => {
                for i in items.clone() {
                    walk(i, out);
                }
            }
            Some(Value::Null) if list => {}
            _ => out.push(v),
        }
    }
    let mut out = Vec::new();
    for v in values {
        walk(v, &mut out);
    }
    out
}

/// One YAML document as a node with no borrowed text.
pub fn node(text: &str) -> Node<'static> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .find_map(|d| d.root)
        .map(Node::into_owned)
        .unwrap_or_else(Node::null)
}

/// The root of an empty document (`---` and nothing after it, as Helm's output can end), which
/// holds no resource.
pub fn is_empty_document(root: &Node<'_>) -> bool {
    root.as_str() == Some("")
        && root.style() == Some(yaml::ScalarStyle::Plain)
        && root.tag().is_none()
        && root.anchor().is_none()
}

/// A ResourceList holding the documents of `items` and the functionConfig `config`.
pub fn resource_list(items: &str, config: Node<'static>) -> String {
    let parsed = yaml::parse_stream(items).expect("items YAML");
    let nodes: Vec<Node<'_>> = parsed
        .into_iter()
        .filter_map(|d| d.root)
        .filter(|r| !is_empty_document(r))
        .collect();
    let mut rl = Node::map();
    rl.set("apiVersion", Node::string("config.kubernetes.io/v1"));
    rl.set("kind", Node::string("ResourceList"));
    rl.set("items", Node::seq_of(nodes));
    rl.set("functionConfig", config);
    let mut out = String::new();
    yaml::emit_document(&yaml::Document::new(rl), &mut out);
    out
}

/// The items of a ResourceList written by the binary.
pub fn rl_items(stdout: &str) -> Vec<Value> {
    let all = docs(stdout);
    match all.first().and_then(|rl| rl.get("items")) {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => panic!("items is not a list: {other}"),
    }
}

/// The results of a ResourceList written by the binary.
pub fn rl_results(stdout: &str) -> Vec<Value> {
    match docs(stdout).first().and_then(|rl| rl.get("results")) {
        Some(Value::Array(r)) => r.clone(),
        _ => Vec::new(),
    }
}

/// A functionConfig of kind Merge with these patch entries.
pub fn merge_config(patches: Vec<Node<'static>>) -> Node<'static> {
    let mut spec = Node::map();
    spec.set("patches", Node::seq_of(patches));
    let mut meta = Node::map();
    meta.set("name", Node::string("test"));
    let mut c = Node::map();
    c.set("apiVersion", Node::string("fn.krm-merge.dev/v1alpha1"));
    c.set("kind", Node::string("Merge"));
    c.set("metadata", meta);
    c.set("spec", spec);
    c
}

/// A ResourceList holding these items (built as nodes, any shape) and the functionConfig.
pub fn resource_list_of(items: Vec<Node<'static>>, config: Node<'static>) -> String {
    let mut rl = Node::map();
    rl.set("apiVersion", Node::string("config.kubernetes.io/v1"));
    rl.set("kind", Node::string("ResourceList"));
    rl.set("items", Node::seq_of(items));
    rl.set("functionConfig", config);
    let mut out = String::new();
    yaml::emit_document(&yaml::Document::new(rl), &mut out);
    out
}

/// A node written as a YAML document.
pub fn yaml_text(node: &Node<'_>) -> String {
    let mut out = String::new();
    yaml::emit_document(&yaml::Document::new(node.clone()), &mut out);
    out
}

/// How far an actual YAML output agrees with the expected text, from the weakest to the
/// strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Agreement {
    /// Not the same data, comments or quoting.
    Differs,
    /// Same data, comments and quoting, but map keys in another order.
    Unordered,
    /// Same tree (data, key order, comments, quoting), other whitespace.
    Layout,
    /// The same text once surrounding whitespace is trimmed (kyaml's tests compare so).
    Exact,
}

pub fn agreement(actual: &str, expected: &str) -> Agreement {
    if actual.trim() == expected.trim() {
        return Agreement::Exact;
    }
    let (Ok(a), Ok(e)) = (yaml::parse_stream(actual), yaml::parse_stream(expected)) else {
        return Agreement::Differs;
    };
    let roots = |d: &[yaml::Document<'_>]| -> Vec<Option<Node<'static>>> {
        d.iter()
            .map(|d| d.root.clone().map(Node::into_owned))
            .collect()
    };
    let (a, e) = (roots(&a), roots(&e));
    let all = |ordered| {
        a.len() == e.len()
            && a.iter().zip(&e).all(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => same_tree(x, y, ordered),
                (None, None) => true,
                _ => false,
            })
    };
    if all(true) {
        Agreement::Layout
    } else if all(false) {
        Agreement::Unordered
    } else {
        Agreement::Differs
    }
}

/// Same data, comment texts, quoting and flow/block form; map keys in the same order when
/// `ordered`.
pub fn same_tree(a: &Node<'_>, b: &Node<'_>, ordered: bool) -> bool {
    let texts = |n: &Node<'_>| {
        let c = n.comments();
        let t = |v: &[yaml::Comment<'_>]| -> Vec<String> {
            v.iter().map(|c| c.text.trim_end().to_owned()).collect()
        };
        (
            t(&c.head),
            c.line.as_ref().map(|c| c.text.trim_end().to_owned()),
            t(&c.foot),
        )
    };
    let quoted = |n: &Node<'_>| {
        matches!(
            n.style(),
            Some(yaml::ScalarStyle::SingleQuoted | yaml::ScalarStyle::DoubleQuoted)
        )
        .then(|| n.style())
    };
    if a.kind() != b.kind() || texts(a) != texts(b) || a.is_flow() != b.is_flow() {
        return false;
    }
    if a.is_scalar() {
        return a.same_data(b) && quoted(a) == quoted(b);
    }
    let entry_eq = |x: &yaml::Entry<'_>, y: &yaml::Entry<'_>| {
        same_tree(&x.key, &y.key, ordered) && same_tree(&x.value, &y.value, ordered)
    };
    let (ae, be) = (a.entries(), b.entries());
    if ae.len() != be.len() || a.items().len() != b.items().len() {
        return false;
    }
    let entries_ok = if ordered {
        ae.iter().zip(be).all(|(x, y)| entry_eq(x, y))
    } else {
        ae.iter().all(|x| {
            be.iter()
                .find(|y| y.key.same_data(&x.key))
                .is_some_and(|y| entry_eq(x, y))
        })
    };
    entries_ok
        && a.items()
            .iter()
            .zip(b.items())
            .all(|(x, y)| same_tree(x, y, ordered))
}

// ----- hosts ------------------------------------------------------------------------------
//
// A test that needs kpt, kubectl, or podman with the function's image says so with
// `#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]` (`host_kubectl`, `host_image`;
// `all(...)` for several). build.rs sets those flags when the tests are built: from PATH, and for
// the image from podman's store, so that where a host is missing its tests are reported as
// ignored, not as passed without having run. With `KRM_MERGE_REQUIRE_HOSTS` set (`.ci/run` sets
// it) build.rs sets them all: nothing is ignored, and a missing host fails its tests here.
// `cargo test --test it -- --ignored` runs them anyway, and they fail where a host is missing.

/// The image the container tests run: `KRM_MERGE_IMAGE`, or what `tools/build-image.sh` tags.
pub fn image_name() -> String {
    std::env::var("KRM_MERGE_IMAGE").unwrap_or_else(|_| "localhost/krm-merge:dev".to_owned())
}

/// Why a host the test needs may be missing although the test runs.
fn why_required() -> &'static str {
    if std::env::var_os("KRM_MERGE_REQUIRE_HOSTS").is_some() {
        "KRM_MERGE_REQUIRE_HOSTS is set"
    } else {
        "it was there when the tests were built"
    }
}

/// The host binary on PATH. Its absence fails the test: a test that needs it is ignored where it
/// was missing when the tests were built.
pub fn host(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH ({})", why_required()))
}

/// podman and the function's image in its local store. Their absence fails the test, as with
/// [`host`].
pub fn podman_image() -> (PathBuf, String) {
    let podman = host("podman");
    let image = image_name();
    let exists = Command::new(&podman)
        .args(["image", "exists", &image])
        .status()
        .expect("run podman")
        .success();
    assert!(
        exists,
        "the image {image} is missing: build it with tools/build-image.sh ({})",
        why_required()
    );
    (podman, image)
}

// ----- files and commands ---------------------------------------------------------------------

pub fn tmp_dir(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("krm-merge-{suite}-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Runs a command to its end; prints what it said when it failed.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    if !out.status.success() {
        eprintln!(
            "{cmd:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Copies a directory tree (files and directories; dot files included).
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create dir");
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// The repository's root (where Cargo.toml is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `KRM_MERGE_UPDATE_EXPECTED=1` asks the tests to rewrite their expected files.
pub fn updating() -> bool {
    std::env::var("KRM_MERGE_UPDATE_EXPECTED").is_ok_and(|v| v == "1" || v == "true")
}

/// A `git` command that reads no user or system configuration.
pub fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com");
    c
}

/// Every file under `root` by its path relative to `root` (a `.git` directory left out; nothing
/// when `root` does not exist).
pub fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for e in fs::read_dir(dir).expect("read dir") {
            let e = e.expect("entry");
            let p = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under root").to_path_buf();
                out.insert(rel, fs::read_to_string(&p).expect("text"));
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, &mut out);
    }
    out
}

/// Writes `files` as a directory tree at `dir`, replacing whatever was there.
pub fn write_tree(dir: &Path, files: &BTreeMap<PathBuf, String>) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).expect("mkdir");
    for (rel, text) in files {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(&p, text).expect("write");
    }
}

/// Each file's modification time, by its path relative to `root`.
pub fn mtimes(root: &Path) -> BTreeMap<PathBuf, SystemTime> {
    tree(root)
        .keys()
        .map(|rel| {
            let m = fs::metadata(root.join(rel)).expect("stat");
            (rel.clone(), m.modified().expect("mtime"))
        })
        .collect()
}
