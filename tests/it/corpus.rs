//! The corpus of real Kubernetes YAML (tests/data/corpus: manifests of public projects, see its
//! README.md and SOURCES.md) against kpt, which reads YAML as kubectl and kustomize do (kyaml,
//! over go-yaml v3):
//!
//! * `corpus_reads_as_kpt_reads`: every file kpt reads as resources, krm-merge reads as the same
//!   resources (the same data, document by document); every file kpt refuses, or reads into
//!   something that is not data (a mapping with a key twice), krm-merge refuses with an error
//!   naming the file and the line (through the binary). A file whose data kpt's output does
//!   not show (see `View::Unreadable`, `KPT_OUTPUT_MISSTATES`) is held to what can be said.
//! * `corpus_round_trips`: every file krm-merge reads is written back byte for byte by the binary
//!   when no patch touches it (`--output`, one run per project).
//! * `corpus_record_is_kpts` (where kpt is on PATH): kpt, run again on the corpus, makes of each
//!   file what the record says, so the record cannot go stale.
//!
//! What kpt makes of each file is recorded in tests/data/corpus/kpt.tsv, so that the first two
//! run without kpt. A resource is recorded as a hash of its data as krm-merge's reader sees
//! kpt's output, written as canonical JSON (keys sorted), with the annotations kpt adds
//! dropped. `KRM_MERGE_UPDATE_EXPECTED=1 cargo test --test it corpus::corpus_record_is_kpts`
//! writes the record anew from kpt.
//!
//! Each test reports every file that fails, with the reason, in one message.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use krm_merge::yaml::{self, Node};
use serde_json::Value;

use crate::support::{bin, host, is_empty_document, root, tmp_dir, updating};

/// What a reader made of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum View {
    /// Its resources, in order: each one's hash (see [`hash_resource`]).
    Read(Vec<String>),
    /// The reader refused it: its message.
    Refused(String),
    /// kpt read it, but what it wrote back is not data krm-merge reads (a mapping holding a key
    /// twice, whose value depends on the reader): the message of krm-merge's reader on kpt's
    /// output. krm-merge must refuse such a file as it refuses one kpt refuses.
    NoData(String),
    /// kpt read it, and what it wrote back holds a form krm-merge's reader refuses (kyaml
    /// writes a flow collection back as it read it): what kpt read is not known here, and
    /// krm-merge refuses the file. Re-recorded once krm-merge reads such forms.
    Unreadable(String),
}

fn corpus_dir() -> PathBuf {
    root().join("tests/data/corpus")
}

fn record_path() -> PathBuf {
    corpus_dir().join("kpt.tsv")
}

/// The corpus's files (`*.yaml`, `*.yml`, `*.json` under a project's directory; names starting
/// with `.` skipped), as paths relative to the corpus, in name order.
fn corpus_files() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("dir entry"))
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().expect("file type").is_dir() {
                walk(&e.path(), &path, out);
            } else if !rel.is_empty()
                && [".yaml", ".yml", ".json"].iter().any(|x| name.ends_with(x))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&corpus_dir(), "", &mut out);
    out.sort();
    out
}

/// The projects of the corpus: its directories.
fn projects(files: &[String]) -> Vec<String> {
    let mut p: Vec<String> = files
        .iter()
        .filter_map(|f| f.split_once('/').map(|(p, _)| p.to_owned()))
        .collect();
    p.dedup();
    p
}

// ----- resources as data ------------------------------------------------------------------------

/// Whether an annotation is one kpt adds when it reads a package (its bookkeeping).
fn kpt_annotation(key: &str) -> bool {
    matches!(
        key,
        "config.kubernetes.io/index" | "config.kubernetes.io/path" | "config.k8s.io/id"
    ) || key.starts_with("internal.config.kubernetes.io/")
}

/// A resource without what kpt adds to it: its bookkeeping annotations, and the `annotations`
/// and `metadata` it creates to hold them (an empty or null one is dropped on both sides).
fn drop_bookkeeping(v: &mut Value) {
    let Some(object) = v.as_object_mut() else {
        return;
    };
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
            annotations.retain(|k, _| !kpt_annotation(k));
        }
        if meta
            .get("annotations")
            .is_some_and(|a| a.is_null() || a.as_object().is_some_and(|a| a.is_empty()))
        {
            meta.remove("annotations");
        }
    }
    if object
        .get("metadata")
        .is_some_and(|m| m.is_null() || m.as_object().is_some_and(|m| m.is_empty()))
    {
        object.remove("metadata");
    }
}

/// JSON with every object's keys sorted: the same text for the same data.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A resource's hash: FNV-1a (64 bits) of its canonical JSON, kpt's annotations dropped. A
/// record of equality, not a defence: the corpus is no adversary.
fn hash_resource(mut v: Value) -> String {
    drop_bookkeeping(&mut v);
    let mut text = String::new();
    canonical(&v, &mut text);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A YAML node as JSON data, its aliases read.
fn data(mut node: Node<'_>) -> Result<Value, String> {
    node.expand_aliases(1_000_000).map_err(|e| e.to_string())?;
    yaml::to_json(&node).map_err(|e| e.to_string())
}

/// What krm-merge's reader makes of a file's text: its documents as data, empty ones skipped.
fn krm_view(text: &str) -> View {
    let docs = match yaml::parse_stream(text) {
        Ok(d) => d,
        Err(e) => return View::Refused(e.to_string()),
    };
    let mut hashes = Vec::new();
    for root in docs.into_iter().filter_map(|d| d.root) {
        if is_empty_document(&root) {
            continue;
        }
        match data(root) {
            Ok(v) => hashes.push(hash_resource(v)),
            Err(e) => return View::Refused(e),
        }
    }
    View::Read(hashes)
}

// ----- kpt ---------------------------------------------------------------------------------------

/// The items of a ResourceList kpt wrote, as data; or why krm-merge's reader takes them for no
/// data.
fn kpt_items(stdout: &str) -> Result<Vec<Value>, String> {
    let docs = yaml::parse_stream(stdout).map_err(|e| format!("kpt's output: {e}"))?;
    let root = docs
        .into_iter()
        .find_map(|d| d.root)
        .ok_or("kpt wrote nothing")?;
    match data(root)?.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => Ok(items),
        Some(Value::Null) | None => Ok(Vec::new()),
        Some(other) => Err(format!("kpt's items are not a list: {other}")),
    }
}

/// An item's annotation kpt added, as text.
fn annotation<'v>(item: &'v Value, key: &str) -> Option<&'v str> {
    item.pointer(&format!("/metadata/annotations/{}", key.replace('/', "~1")))?
        .as_str()
}

/// `kpt fn source DIR`: the ResourceList's items, or kpt's message.
fn kpt_source(kpt: &Path, dir: &Path) -> Result<Result<Vec<Value>, String>, String> {
    let out = Command::new(kpt)
        .args(["fn", "source"])
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("run kpt: {e}"));
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.trim().lines().next().unwrap_or("").to_owned());
    }
    Ok(kpt_items(&String::from_utf8_lossy(&out.stdout)))
}

/// What kpt makes of each of `files` (paths relative to the corpus, all under `dir`'s
/// project), read together: `kpt fn source` on `dir`, each item saying which file it came from.
/// None when kpt refuses them together, when what it writes does not read (a mapping with a
/// key twice), or when an item does not say where it came from (kpt puts its annotations in
/// the first of two `annotations`).
fn kpt_read_together(kpt: &Path, dir: &Path, files: &[String]) -> Option<BTreeMap<String, View>> {
    let project = files.first()?.split('/').next()?;
    let items = kpt_source(kpt, dir).ok()?.ok()?;
    let mut by_file: BTreeMap<String, Vec<(usize, Value)>> = BTreeMap::new();
    for item in items {
        let path = annotation(&item, "internal.config.kubernetes.io/path")
            .or_else(|| annotation(&item, "config.kubernetes.io/path"))?;
        let index = annotation(&item, "internal.config.kubernetes.io/index")
            .or_else(|| annotation(&item, "config.kubernetes.io/index"))
            .and_then(|i| i.parse().ok())?;
        by_file
            .entry(format!("{project}/{path}"))
            .or_default()
            .push((index, item));
    }
    let views = files
        .iter()
        .map(|f| {
            let mut items = by_file.remove(f).unwrap_or_default();
            items.sort_by_key(|(i, _)| *i);
            let hashes = items.into_iter().map(|(_, v)| hash_resource(v)).collect();
            (f.clone(), View::Read(hashes))
        })
        .collect();
    // An item from a file not asked about: not this reading.
    by_file.is_empty().then_some(views)
}

/// What kpt makes of each of `files`: read together (the project's directory, or a copy of
/// these files in `scratch`); where that does not give each file's resources, each eighth on
/// its own, down to one file, whose refusal, or items that are no data, are its own. A few bad
/// files among many cost a few runs of kpt each, not one run a file.
fn kpt_views(kpt: &Path, dir: &Path, files: &[String], scratch: &Path) -> BTreeMap<String, View> {
    if let Some(views) = kpt_read_together(kpt, dir, files) {
        return views;
    }
    if let [one] = files {
        let file = corpus_dir().join(one);
        let alone = scratch.join("one");
        let _ = fs::remove_dir_all(&alone);
        fs::create_dir_all(&alone).expect("scratch dir");
        fs::copy(&file, alone.join(file.file_name().expect("file name"))).expect("copy");
        let view = match kpt_source(kpt, &alone) {
            Err(message) => View::Refused(message),
            Ok(Err(message)) if message.contains("duplicate key") => View::NoData(message),
            Ok(Err(message)) => View::Unreadable(message),
            Ok(Ok(items)) => View::Read(items.into_iter().map(hash_resource).collect()),
        };
        let _ = fs::remove_dir_all(&alone);
        return BTreeMap::from([(one.clone(), view)]);
    }
    let mut views = BTreeMap::new();
    for (n, part) in files.chunks(files.len().div_ceil(8)).enumerate() {
        let copy = scratch.join(format!("{}-{n}", files.len()));
        for f in part {
            let rel = f.split_once('/').map_or(f.as_str(), |(_, r)| r);
            let to = copy.join(rel);
            fs::create_dir_all(to.parent().expect("parent")).expect("scratch dir");
            fs::copy(corpus_dir().join(f), &to).expect("copy");
        }
        views.extend(kpt_views(kpt, &copy, part, scratch));
        let _ = fs::remove_dir_all(&copy);
    }
    views
}

/// What kpt makes of each file of a project.
fn kpt_view_of_project(kpt: &Path, project: &str, files: &[String]) -> BTreeMap<String, View> {
    let scratch = tmp_dir("corpus", &format!("kpt-{project}"));
    let views = kpt_views(kpt, &corpus_dir().join(project), files, &scratch);
    let _ = fs::remove_dir_all(&scratch);
    views
}

// ----- the record --------------------------------------------------------------------------------

const RECORD_HEAD: &str = "\
# What `kpt fn source` makes of each file of the corpus (see README.md): one line a file,
# PATH <tab> read <tab> N <tab> the hash of each resource's data (tests/it/corpus.rs), or
# PATH <tab> refused|no-data|unreadable <tab> - <tab> why.
# Written by `KRM_MERGE_UPDATE_EXPECTED=1 cargo test --test it corpus::corpus_record_is_kpts`.
";

fn one_line(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn write_record(views: &BTreeMap<String, View>, kpt_version: &str) -> String {
    let mut out = String::from(RECORD_HEAD);
    let _ = writeln!(out, "# {}", one_line(kpt_version));
    for (path, view) in views {
        let _ = match view {
            View::Read(h) => writeln!(out, "{path}\tread\t{}\t{}", h.len(), h.join(" ")),
            View::Refused(m) => writeln!(out, "{path}\trefused\t-\t{}", one_line(m)),
            View::NoData(m) => writeln!(out, "{path}\tno-data\t-\t{}", one_line(m)),
            View::Unreadable(m) => writeln!(out, "{path}\tunreadable\t-\t{}", one_line(m)),
        };
    }
    out
}

fn read_record() -> BTreeMap<String, View> {
    let path = record_path();
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut views = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        let [file, what, count, rest] = f[..] else {
            panic!("{}:{}: not 4 fields", path.display(), n + 1);
        };
        let view = match what {
            "read" => {
                let h: Vec<String> = rest.split_whitespace().map(str::to_owned).collect();
                assert_eq!(count.parse(), Ok(h.len()), "{}:{}", path.display(), n + 1);
                View::Read(h)
            }
            "refused" => View::Refused(rest.to_owned()),
            "no-data" => View::NoData(rest.to_owned()),
            "unreadable" => View::Unreadable(rest.to_owned()),
            other => panic!("{}:{}: {other}?", path.display(), n + 1),
        };
        views.insert(file.to_owned(), view);
    }
    views
}

/// Whether two views agree: the same resources, or both not data (messages may differ).
fn agree(a: &View, b: &View) -> bool {
    match (a, b) {
        (View::Read(x), View::Read(y)) => x == y,
        (View::Refused(_), View::Refused(_))
        | (View::NoData(_), View::NoData(_))
        | (View::Unreadable(_), View::Unreadable(_)) => true,
        _ => false,
    }
}

fn describe(v: &View) -> String {
    match v {
        View::Read(h) => format!("reads {} resources", h.len()),
        View::Refused(m) => format!("refuses it ({m})"),
        View::NoData(m) => format!("reads it into no data ({m})"),
        View::Unreadable(m) => {
            format!("reads it, and writes it back in a form krm-merge refuses ({m})")
        }
    }
}

fn fail_with(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} corpus files {what}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ----- the tests ---------------------------------------------------------------------------------

/// A functionConfig whose one patch selects nothing: a run that touches no resource.
fn noop_config(dir: &Path) -> PathBuf {
    let path = dir.join("noop.yaml");
    fs::write(
        &path,
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: noop\nspec:\n  \
         patches:\n  - target: {kind: NothingInTheCorpus}\n    patch: 'metadata: {labels: {a: b}}'\n",
    )
    .expect("write config");
    path
}

/// The warnings a run with [`noop_config`] gives that do not concern reading: its patch
/// selects nothing, and a CRD that is not whole (a kustomize patch of one, a test's stub) is
/// not used for merge keys.
fn expected_warning(line: &str) -> bool {
    line.contains("patch[0] (merge2): target {kind: NothingInTheCorpus} selects no resource")
        || line.contains(": CRD not used for merge keys: ")
}

/// Files whose data kpt's output misstates: go-yaml v3 writes a folded scalar (`>`) holding a
/// line break before a more-indented line with a blank line there, which reads back as one
/// more line break than it read (its emitter looks for the next non-break from the start of
/// the value, not from where it is). krm-merge must read these as the same number of
/// resources, and some of them as other data than kpt's output says; a listed file that
/// agrees with kpt fails, so the list stays true.
const KPT_OUTPUT_MISSTATES: &[&str] = &[
    "argo-cd/resource_customizations/promoter.argoproj.io/GitCommitStatus/testdata/expression-compile-error.yaml",
    "argo-workflows/examples/conditionals-complex.yaml",
    "argo-workflows/examples/expression-reusing-verbose-snippets.yaml",
];

/// Every file kpt (as recorded) reads, krm-merge reads as the same data; every file kpt
/// refuses, or reads into no data, krm-merge refuses naming the file and the line.
#[test]
fn corpus_reads_as_kpt_reads() {
    let files = corpus_files();
    let record = read_record();
    let mut failures = Vec::new();
    for f in record.keys().filter(|f| !files.contains(f)) {
        failures.push(format!("{f}: recorded, but not in the corpus (re-record)"));
    }
    for f in KPT_OUTPUT_MISSTATES
        .iter()
        .filter(|f| !record.contains_key(**f))
    {
        failures.push(format!(
            "{f}: listed in KPT_OUTPUT_MISSTATES, but not recorded"
        ));
    }
    let scratch = tmp_dir("corpus", "reads");
    let config = noop_config(&scratch);
    for f in &files {
        let path = corpus_dir().join(f);
        let Some(kpt) = record.get(f) else {
            failures.push(format!("{f}: not recorded (re-record)"));
            continue;
        };
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{f}: {e}"));
        let krm = krm_view(&text);
        let misstated = KPT_OUTPUT_MISSTATES.contains(&f.as_str());
        match (kpt, &krm) {
            (View::Read(k), View::Read(m)) if misstated && k.len() == m.len() && k != m => {}
            (View::Read(k), View::Read(m)) if misstated && k == m => failures.push(format!(
                "{f}: listed in KPT_OUTPUT_MISSTATES, but reads as kpt's output says: unlist it"
            )),
            (View::Read(k), View::Read(m)) if k == m => {}
            (View::Read(k), View::Read(m)) if k.len() != m.len() => failures.push(format!(
                "{f}: kpt reads {} resources, krm-merge {}",
                k.len(),
                m.len()
            )),
            (View::Read(k), View::Read(m)) => {
                let differ: Vec<String> = (0..k.len())
                    .filter(|&i| k[i] != m[i])
                    .map(|i| i.to_string())
                    .collect();
                failures.push(format!(
                    "{f}: resources {} are other data than kpt reads",
                    differ.join(", ")
                ));
            }
            (View::Read(_) | View::Unreadable(_), View::Refused(e)) => {
                failures.push(format!("{f}: kpt reads it, krm-merge refuses it: {e}"));
            }
            (View::Unreadable(_), View::Read(_)) => failures.push(format!(
                "{f}: kpt {}; krm-merge reads it now: re-record",
                describe(kpt)
            )),
            (_, View::Read(_)) => {
                failures.push(format!("{f}: kpt {}, krm-merge reads it", describe(kpt)));
            }
            (_, _) => {
                // Refused by both: the binary's error names the file and the line.
                let out = Command::new(bin())
                    .arg("--config")
                    .arg(&config)
                    .arg(&path)
                    .output()
                    .expect("run krm-merge");
                let stderr = String::from_utf8_lossy(&out.stderr);
                let located = stderr
                    .lines()
                    .any(|l| l.contains(&*path.to_string_lossy()) && l.contains("line "));
                if out.status.code() != Some(1) || !out.stdout.is_empty() || !located {
                    failures.push(format!(
                        "{f}: kpt {}; krm-merge's error does not name the file and the line \
                         (exit {:?}): {}",
                        describe(kpt),
                        out.status.code(),
                        stderr.trim()
                    ));
                }
            }
        }
    }
    let _ = fs::remove_dir_all(&scratch);
    fail_with("are not read as kpt reads them", &failures);
}

/// Every file krm-merge reads comes back byte for byte from a run that touches nothing: one
/// run of the binary per project, `--output` writing each file at its path.
#[test]
fn corpus_round_trips() {
    let files = corpus_files();
    let scratch = tmp_dir("corpus", "round-trip");
    let config = noop_config(&scratch);
    let mut failures = Vec::new();
    for project in projects(&files) {
        let input = scratch.join("in").join(&project);
        let output = scratch.join("out").join(&project);
        let mut copied = Vec::new();
        for f in files
            .iter()
            .filter(|f| f.starts_with(&format!("{project}/")))
        {
            let text = fs::read_to_string(corpus_dir().join(f)).expect("read");
            if !matches!(krm_view(&text), View::Read(_)) {
                continue; // corpus_reads_as_kpt_reads reports it
            }
            let to = scratch.join("in").join(f);
            fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            fs::write(&to, &text).expect("copy");
            copied.push((f, text));
        }
        let out = Command::new(bin())
            .arg("--config")
            .arg(&config)
            .arg("--output")
            .arg(&output)
            .arg(&input)
            .output()
            .expect("run krm-merge");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let input_prefix = format!("{}/", input.display());
        for line in stderr.lines().filter(|l| !expected_warning(l)) {
            // A file named in a message is that file's failure; any other line, the project's.
            match line.split_once(&input_prefix) {
                Some((_, rest)) => failures.push(format!("{project}/{rest}")),
                None => failures.push(format!("{project}/: {line}")),
            }
        }
        if !out.status.success() {
            failures.push(format!("{project}/: exit {:?}", out.status.code()));
            continue;
        }
        for (f, text) in copied {
            let rel = f.strip_prefix(&format!("{project}/")).expect("in project");
            match fs::read(output.join(rel)) {
                Ok(bytes) if bytes == text.as_bytes() => {}
                Ok(bytes) => {
                    let at = bytes
                        .iter()
                        .zip(text.as_bytes())
                        .position(|(a, b)| a != b)
                        .unwrap_or(bytes.len().min(text.len()));
                    failures.push(format!(
                        "{f}: written back otherwise, from byte {at} ({} bytes, not {})",
                        bytes.len(),
                        text.len()
                    ));
                }
                Err(e) => failures.push(format!("{f}: not written back: {e}")),
            }
        }
    }
    let _ = fs::remove_dir_all(&scratch);
    fail_with(
        "(or runs) are not read and written back byte for byte",
        &failures,
    );
}

/// kpt, run on the corpus now, makes of every file what the record says. With
/// `KRM_MERGE_UPDATE_EXPECTED=1`, writes the record instead.
#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn corpus_record_is_kpts() {
    let kpt = host("kpt");
    let version = Command::new(&kpt)
        .arg("version")
        .output()
        .map(|o| format!("kpt {}", String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_default();
    let files = corpus_files();
    let mut live = BTreeMap::new();
    for project in projects(&files) {
        let mine: Vec<String> = files
            .iter()
            .filter(|f| f.starts_with(&format!("{project}/")))
            .cloned()
            .collect();
        live.extend(kpt_view_of_project(&kpt, &project, &mine));
    }
    if updating() {
        fs::write(record_path(), write_record(&live, &version)).expect("write the record");
        return;
    }
    let record = read_record();
    let mut failures = Vec::new();
    for (f, now) in &live {
        match record.get(f) {
            Some(was) if agree(was, now) => {}
            Some(was) => failures.push(format!(
                "{f}: recorded, kpt {}; now kpt {}",
                describe(was),
                describe(now)
            )),
            None => failures.push(format!("{f}: not recorded")),
        }
    }
    for f in record.keys().filter(|f| !live.contains_key(*f)) {
        failures.push(format!("{f}: recorded, but not in the corpus"));
    }
    fail_with(
        &format!(
            "disagree with the record ({version}; re-record with KRM_MERGE_UPDATE_EXPECTED=1)"
        ),
        &failures,
    );
}
