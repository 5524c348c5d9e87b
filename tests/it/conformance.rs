//! The upstream conformance suites (tests/data/conformance, see its README for origin and
//! licences), every case run through the `krm-merge` binary by one data-driven runner
//! ([`run_cases`]) with one function per operation: kyaml's merge2 (`krm-merge merge2`) and
//! merge3 (`krm-merge merge3`), kustomize's strategic-merge and JSON 6902 filters and `patches:`
//! builds (ResourceLists on stdin), the RFC 6902 suite, and apimachinery's strategic merge patch
//! tests (two-way as `merge2` patches, three-way as `apply` patches, with the suite's test schema
//! given as an OpenAPI document).
//!
//! Outputs are compared as data: documents in order, maps without key order, lists with order
//! (the README's compare modes allow this; kustomize's own output is key-sorted, and new keys
//! follow the patch's order here where kyaml sorts them). For kyaml's `kyaml-format` mode the
//! workload containers are sorted by name first, as Go's harness does; for apimachinery's
//! `json-deepequal-sorted` merge lists are sorted as its harness does. kyaml's merge3 cases are
//! compared as text, as upstream does (`MERGE3_INEXACT` lists how far the others agree).
//!
//! Every case passes unless it is listed, with the reason, in one of three tables: `DISPUTED`
//! (upstream's expectation deliberately not reproduced; the case must fail), `NOT_RUN` (nothing
//! in it that a patch can express), `KNOWN_BUGS` (a product bug, reproduced by an ignored test
//! in tests/it/regressions.rs; the case must fail until it is fixed). Listed cases must exist.
//! Run with `--nocapture` for the counts per file.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use krm_merge::yaml::{Entry, Node};
use serde_json::Value;

use crate::support::*;

/// `config.kubernetes.io/merge-source` is one of kpt's bookkeeping annotations.
const HOST_ANNOTATION: &str =
    "the case changes `config.kubernetes.io/merge-source`, a host bookkeeping annotation \
     (`config.kubernetes.io/*`) that a patch never adds, changes or removes (README \"Selecting \
     resources\"); the rest of the output, the comment the case is about included, is upstream's text \
     exactly (tests/it/walkers_corpus.rs passes it at the function level, where there is no host)";

/// Cases whose upstream expectation we deliberately do not reproduce: (file, case, why).
const DISPUTED: &[(&str, &str, &str)] = &[
    (
        "k8s-strategicpatch/custom.yaml",
        "delete map from nested map",
        "apimachinery's `$patch: delete` inside a map leaves it empty (`simpleMap: {}`); merge2 follows \
         kyaml, where the directive removes the map (kyaml-merge2 and kustomize-smp expect the field gone, \
         README \"merge2\"), so the field is removed",
    ),
    (
        "kyaml-merge3/scalar.yaml",
        "Ensure comments are added",
        HOST_ANNOTATION,
    ),
    (
        "kyaml-merge3/scalar.yaml",
        "Ensure comments are updated",
        HOST_ANNOTATION,
    ),
    (
        "kyaml-merge3/scalar.yaml",
        "Ensure deleted comments are not updated",
        HOST_ANNOTATION,
    ),
    (
        "kyaml-merge2/smpdirective.yaml",
        "scalar",
        "upstream unit-tests kyaml's internal determineSmpDirective on a bare scalar; in a patch a scalar \
         replaces the value and carries no directive, so there is nothing to reject",
    ),
    (
        "kustomize-patch-targets/gvknpatch.yaml",
        "TestNameReferenceAfterGvknChange",
        "the expected output comes from kustomize's name-reference transformer, which rewrites references \
         (configMapKeyRef) to a renamed ConfigMap; krm-merge applies patches and does not track references",
    ),
    (
        "kustomize-patch-targets/multiplepatch.yaml",
        "TestEmptyPatchFilesShouldBeIgnored",
        "kustomize ignores an empty patch; here it is a functionConfig error naming the patch, because an \
         empty patch is almost always a mistake (a missing file, a failed template) that would otherwise go unseen",
    ),
];

/// apimachinery's `k8s-sort` cases test `sortMergeListsByName`, a normalisation of its test harness.
const K8S_SORT: &str =
    "sort-only: tests apimachinery's test normalisation sortMergeListsByName, not \
     a patch; there is no operation to run through the binary (k8s_sort_normalisation checks the \
     runner's own copy of it against these cases)";
/// unknown_field.yaml's `diff` cases have neither a patch nor a result.
const K8S_CREATION_ERROR: &str = "Go-only: upstream expects patch creation to fail because `complex` \
     is not a field of its Go test struct (`unable to find api field`), so there is no patch to apply \
     and no result; krm-merge creates no patches, and needs no schema for a field (tests/it/walkers_corpus.rs \
     lists the three-way case for the same reason: apply sets complex.nested to false)";

/// Cases that fail because of a product bug, each with the `#[ignore]`d test in
/// tests/it/regressions.rs that reproduces it in a few lines: (file, case, regression test). They
/// are not disputed — upstream is right — and are listed only so that the suites stay green
/// until the bug is fixed; a listed case that passes fails the run, so the entry goes with the
/// fix (and the `#[ignore]` with it).
const KNOWN_BUGS: &[(&str, &str, &str)] = &[];

/// Cases that are not run through the binary, because there is nothing in them a patch can
/// express: (file, case, why). The runner counts them and checks that they exist.
const NOT_RUN: &[(&str, &str, &str)] = &[
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "sort one list of maps",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "sort lists of maps but not nested lists of maps",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "sort lists of maps and nested lists of maps",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "merging list should NOT sort when nested in non merging list",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "sort very nested list of maps",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "sort nested lists of ints",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "sort nested pointers of ints",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/sort_merge_lists.yaml",
        "sort merging list by pointer",
        K8S_SORT,
    ),
    (
        "k8s-strategicpatch/unknown_field.yaml",
        "diff/TwoWay",
        K8S_CREATION_ERROR,
    ),
    (
        "k8s-strategicpatch/unknown_field.yaml",
        "diff/ThreeWay",
        K8S_CREATION_ERROR,
    ),
    // json-patch-tests marks these `disabled: true` ("should be skipped") without saying why;
    // the two with duplicate `op` members are run (rfc6902_case): the patch is a config error.
    (
        "rfc6902/tests.yaml",
        "Toplevel scalar values OK?",
        "disabled upstream: a scalar document (JSON texts had to be objects or arrays before RFC 7159); \
         here it is wrapped like every other document and works, but upstream asks not to run it",
    ),
    (
        "rfc6902/tests.yaml",
        "Whole document",
        "disabled upstream, and has no expectation (neither `expected` nor `error`): a `test` at \"\"",
    ),
];

struct Case {
    file: String,
    /// The upstream name; a name repeated in one file gets ` (#2)`, ` (#3)`... from its second
    /// occurrence on, so every case has a name of its own to be listed by.
    name: String,
    v: Value,
    /// The file header's `schema` (k8s-strategicpatch), `Null` when there is none.
    schema: Value,
}

fn load(suite: &str) -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conformance")
        .join(suite);
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("suite dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).expect("suite file");
        let doc = docs(&text).remove(0);
        let file = format!(
            "{suite}/{}",
            f.file_name().and_then(|n| n.to_str()).unwrap_or("")
        );
        let schema = doc.get("schema").cloned().unwrap_or(Value::Null);
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        if let Some(Value::Array(cases)) = doc.get("cases") {
            for c in cases {
                let name = c.get("name").and_then(Value::as_str).unwrap_or("");
                let n = seen.entry(name.to_owned()).or_default();
                *n += 1;
                let name = if *n == 1 {
                    name.to_owned()
                } else {
                    format!("{name} (#{n})")
                };
                out.push(Case {
                    file: file.clone(),
                    name,
                    v: c.clone(),
                    schema: schema.clone(),
                });
            }
        }
    }
    out
}

fn s<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
}

fn flag(v: &Value, path: &[&str]) -> bool {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// kyaml's FormatInput sorts the containers of workloads by name; Go's comparison sees them so.
fn kyaml_normalise(mut v: Value) -> Value {
    let workload = matches!(
        (
            v.get("apiVersion").and_then(Value::as_str),
            v.get("kind").and_then(Value::as_str)
        ),
        (
            Some(
                "apps/v1"
                    | "apps/v1beta1"
                    | "apps/v1beta2"
                    | "batch/v1"
                    | "batch/v1beta1"
                    | "extensions/v1beta1"
                    | "v1"
            ),
            Some("CronJob" | "DaemonSet" | "Deployment" | "Job" | "ReplicaSet" | "StatefulSet")
        )
    );
    if workload {
        if let Some(Value::Array(cs)) = v.pointer_mut("/spec/template/spec/containers") {
            cs.sort_by(|a, b| {
                a.get("name")
                    .and_then(Value::as_str)
                    .cmp(&b.get("name").and_then(Value::as_str))
            });
        }
    }
    v
}

/// Runs every case of a suite through `run`, which returns `Err(why)` on a mismatch.
fn run_suite(suite: &str, run: impl Fn(&Case) -> Result<(), String>) {
    run_cases(suite, suite, |_| true, run);
}

/// Runs the cases of a suite that `pick` selects: a case listed in `NOT_RUN` is not run, one
/// listed in `DISPUTED` must fail, any other must pass. Prints the counts per file, and fails
/// when a listed case does not exist (the lists stay true).
fn run_cases(
    suite: &str,
    label: &str,
    pick: impl Fn(&Case) -> bool,
    run: impl Fn(&Case) -> Result<(), String>,
) {
    let all = load(suite);
    let cases: Vec<&Case> = all.iter().filter(|c| pick(c)).collect();
    assert!(!cases.is_empty(), "no cases in {suite}");
    let mut failures = Vec::new();
    for (f, n, _) in DISPUTED.iter().chain(NOT_RUN).chain(KNOWN_BUGS) {
        if f.starts_with(&format!("{suite}/")) && !all.iter().any(|c| c.file == *f && c.name == *n)
        {
            failures.push(format!("{f} / {n}: listed, but there is no such case"));
        }
    }
    // file -> [cases, passed, disputed, not run, known bugs]
    let mut counts: BTreeMap<&str, [usize; 5]> = BTreeMap::new();
    for c in &cases {
        let listed = |table: &[(&str, &str, &str)]| {
            table.iter().any(|(f, n, _)| *f == c.file && *n == c.name)
        };
        let (disputed, not_run) = (listed(DISPUTED), listed(NOT_RUN));
        let bug = KNOWN_BUGS
            .iter()
            .find(|(f, n, _)| *f == c.file && *n == c.name)
            .map(|(_, _, t)| *t);
        let count = counts.entry(&c.file).or_default();
        count[0] += 1;
        if [disputed, not_run, bug.is_some()]
            .iter()
            .filter(|x| **x)
            .count()
            > 1
        {
            failures.push(format!(
                "{} / {}: listed in more than one table",
                c.file, c.name
            ));
            continue;
        }
        if let Some(test) = bug {
            match run(c) {
                Ok(()) => failures.push(format!(
                    "{} / {}: passes now; remove it from KNOWN_BUGS and the #[ignore] of \
                     regressions::{test}",
                    c.file, c.name
                )),
                Err(_) => count[4] += 1,
            }
            continue;
        }
        if not_run {
            count[3] += 1;
            if disputed {
                failures.push(format!(
                    "{} / {}: in both DISPUTED and NOT_RUN",
                    c.file, c.name
                ));
            }
            continue;
        }
        match (run(c), disputed) {
            (Ok(()), false) => count[1] += 1,
            (Ok(()), true) => failures.push(format!(
                "{} / {}: passes now; remove it from DISPUTED",
                c.file, c.name
            )),
            (Err(e), false) => failures.push(format!("{} / {}: {e}", c.file, c.name)),
            (Err(_), true) => count[2] += 1,
        }
    }
    let total = counts.values().fold([0; 5], |a, b| {
        [
            a[0] + b[0],
            a[1] + b[1],
            a[2] + b[2],
            a[3] + b[3],
            a[4] + b[4],
        ]
    });
    let line = |what: &str, n: &[usize; 5]| {
        format!(
            "{what}: {} of {} cases pass through the binary, {} disputed, {} not run (listed), \
             {} known bugs",
            n[1], n[0], n[2], n[3], n[4]
        )
    };
    eprintln!("{}", line(label, &total));
    for (file, n) in &counts {
        eprintln!("  {}", line(file, n));
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

fn compare(got: Vec<Value>, want: Vec<Value>, normalise: bool, stdout: &str) -> Result<(), String> {
    let norm = |v: Vec<Value>| -> Vec<Value> {
        if normalise {
            v.into_iter().map(kyaml_normalise).collect()
        } else {
            v
        }
    };
    let (got, want) = (norm(got), norm(want));
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "got:\n{}\nwant:\n{}\n(output was:\n{stdout})",
            serde_json::to_string_pretty(&got).unwrap_or_default(),
            serde_json::to_string_pretty(&want).unwrap_or_default()
        ))
    }
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    // One directory per test thread: the suites run in parallel and reuse file names.
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_alphanumeric).collect();
    let dir = std::env::temp_dir().join(format!("krm-merge-conf-{}-{thread}", std::process::id()));
    fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    fs::write(&p, text).expect("temp file");
    p
}

/// kyaml merge2: `krm-merge merge2 SRC DEST` with the case's options.
fn merge2_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    let op = s(v, &["op"]).unwrap_or("");
    if op == "smp-directive" {
        return smp_directive_case(c);
    }
    let src = temp_file("src.yaml", s(v, &["inputs", "src"]).unwrap_or(""));
    let dest = temp_file("dest.yaml", s(v, &["inputs", "dest"]).unwrap_or(""));
    let mut args = vec![
        "merge2".to_owned(),
        src.display().to_string(),
        dest.display().to_string(),
    ];
    if s(v, &["options", "listIncreaseDirection"]) == Some("prepend") {
        args.extend(["--new-list-items".into(), "prepend".into()]);
    }
    if !flag(v, &["options", "inferAssociativeLists"]) {
        args.push("--no-infer-merge-keys".into());
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = krm(&argv, "");
    if let Some(err) = s(v, &["expectedError"]) {
        return if out.code == 1 && out.stderr.contains(err) {
            Ok(())
        } else {
            Err(format!(
                "expected error {err:?}, got code {} stderr {}",
                out.code, out.stderr
            ))
        };
    }
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr));
    }
    let normalise = s(v, &["compare"]) == Some("kyaml-format");
    compare(
        docs(&out.stdout),
        docs(s(v, &["expected"]).unwrap_or("")),
        normalise,
        &out.stdout,
    )
}

/// kyaml's unit test of directive parsing, seen through its effect: a map patch with
/// `$patch: X` merged into a map, a list patch with a `$patch: X` element merged into a list of
/// scalars that merges as a set (`metadata.finalizers`), so merge and replace differ.
fn smp_directive_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    let patch = s(v, &["inputs", "patch"]).unwrap_or("");
    let directive = s(v, &["expectedDirective"]).unwrap_or("");
    let is_list = patch.trim_start().starts_with('-');
    let (dest, wrap) = if is_list {
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  finalizers:\n  - zero\n",
            "metadata:\n  finalizers:\n",
        )
    } else {
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  keep: me\n",
            "data:\n",
        )
    };
    let src = temp_file(
        "src.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\n{wrap}{}",
            indent(&indent(patch))
        ),
    );
    let dest_f = temp_file("dest.yaml", dest);
    let out = krm(
        &[
            "merge2",
            &src.display().to_string(),
            &dest_f.display().to_string(),
        ],
        "",
    );
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr));
    }
    let got = docs(&out.stdout);
    let doc = got.first().cloned().unwrap_or(Value::Null);
    let value = if is_list {
        doc.pointer("/metadata/finalizers").cloned()
    } else {
        doc.get("data").cloned()
    };
    let kept = match &value {
        Some(Value::Array(a)) => a.iter().any(|x| x == "zero"),
        Some(Value::Object(o)) => o.contains_key("keep"),
        _ => false,
    };
    let ok = match directive {
        "delete" => value.is_none(),
        "replace" => value.is_some() && !kept,
        "merge" => value.is_some() && kept,
        other => return Err(format!("unknown expected directive {other:?}")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("directive {directive}: got {}", out.stdout))
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

#[test]
fn kyaml_merge2() {
    run_suite("kyaml-merge2", merge2_case);
}

/// kustomize's strategic merge filter: the patch merged into every document, kustomize's
/// options (prepend, no inference), names and kinds free to change.
fn smp_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    let mut opts = Node::map();
    opts.set("newListItems", Node::string("prepend"));
    opts.set("inferMergeKeys", Node::plain("false"));
    opts.set("allowNameChange", Node::plain("true"));
    opts.set("allowKindChange", Node::plain("true"));
    let mut p = Node::map();
    p.set("type", Node::string("merge2"));
    p.set(
        "patch",
        Node::string(s(v, &["inputs", "patch"]).unwrap_or("").to_owned()),
    );
    p.set("target", Node::map());
    p.set("options", opts);
    let rl = resource_list(
        s(v, &["inputs", "resources"]).unwrap_or(""),
        merge_config(vec![p]),
    );
    let out = krm(&[], &rl);
    if let Some(err) = s(v, &["expectedError"]) {
        return if out.code == 1 && (err.is_empty() || out.stderr.contains(err)) {
            Ok(())
        } else {
            Err(format!(
                "expected error {err:?}, got code {} stderr {}",
                out.code, out.stderr
            ))
        };
    }
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr));
    }
    compare(
        rl_items(&out.stdout),
        docs(s(v, &["expected"]).unwrap_or("")),
        false,
        &out.stdout,
    )
}

#[test]
fn kustomize_smp() {
    run_suite("kustomize-smp", smp_case);
}

/// `kustomize build` with `patches:`: the same patches, in order, with kustomize's options.
fn patch_targets_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    let mut patches = Vec::new();
    for p in v
        .pointer("/inputs/patches")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut n = Node::map();
        let ty = match s(p, &["type"]) {
            Some("json6902") => "json6902",
            _ => "merge2",
        };
        n.set("type", Node::string(ty));
        n.set(
            "patch",
            Node::string(s(p, &["patch"]).unwrap_or("").to_owned()),
        );
        if let Some(t) = p.get("target") {
            n.set("target", krm_merge::yaml::from_json(t));
        }
        let mut opts = match p.get("options") {
            Some(o) => krm_merge::yaml::from_json(o),
            None => Node::map(),
        };
        if ty == "merge2" {
            opts.set("newListItems", Node::string("prepend"));
            opts.set("inferMergeKeys", Node::plain("false"));
        }
        if !opts.entries().is_empty() {
            n.set("options", opts);
        }
        patches.push(n);
    }
    let rl = resource_list(
        s(v, &["inputs", "resources"]).unwrap_or(""),
        merge_config(patches),
    );
    let out = krm(&[], &rl);
    if let Some(err) = s(v, &["expectedError"]) {
        return if out.code == 1 {
            let _ = err;
            Ok(())
        } else {
            Err(format!(
                "expected an error ({err:?}), got code {} stderr {}",
                out.code, out.stderr
            ))
        };
    }
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr));
    }
    compare(
        rl_items(&out.stdout),
        docs(s(v, &["expected"]).unwrap_or("")),
        false,
        &out.stdout,
    )
}

#[test]
fn kustomize_patch_targets() {
    run_suite("kustomize-patch-targets", patch_targets_case);
}

// ----- RFC 6902 (json-patch-tests) -------------------------------------------------------------

/// `/doc` in front of a JSON Pointer, for a document wrapped as the `doc` field of an item: ""
/// (the whole document) becomes "/doc" and "/a/b" becomes "/doc/a/b", so every valid pointer
/// addresses the same value as before and RFC 6901's rules (`~0`, `~1`, `-`, array indices) apply
/// to the same tokens. Anything else — not a string, or without the leading "/" — is an invalid
/// pointer and stays exactly as it is, so it stays invalid.
fn under_doc(pointer: &Value) -> Value {
    match pointer.as_str() {
        Some("") => Value::String("/doc".into()),
        Some(p) if p.starts_with('/') => Value::String(format!("/doc{p}")),
        _ => pointer.clone(),
    }
}

/// An RFC 6902 case through the binary. Items must be mappings, so the case's document (any
/// JSON value) is the `doc` field of `{apiVersion: v1, kind: Doc, metadata: {name: t}}`, every
/// op's `path` and `from` get `/doc` in front ([`under_doc`]), and a `json6902` patch with
/// `target: {kind: Doc}` runs; `.doc` must be `expected`. An `expectedError` case must exit 1 and
/// leave the item as it was. A patch kept as raw JSON text with a duplicate `op` member goes
/// into the functionConfig as that text: our parser rejects duplicate keys, so the config is an
/// error (exit 1) before any operation runs, which is what RFC 6902 §4 allows for it.
fn rfc6902_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    let raw = flag(v, &["options", "patchIsJsonText"]);
    if flag(v, &["disabled"]) && !raw {
        return Err("disabled upstream: list it in NOT_RUN".into());
    }
    let doc = v.pointer("/inputs/doc").cloned().unwrap_or(Value::Null);
    let item = serde_json::json!({
        "apiVersion": "v1", "kind": "Doc", "metadata": {"name": "t"}, "doc": doc
    });
    let patch = if raw {
        Node::string(s(v, &["inputs", "patch"]).unwrap_or("").to_owned())
    } else {
        let mut ops = v.pointer("/inputs/patch").cloned().unwrap_or(Value::Null);
        for op in ops.as_array_mut().into_iter().flatten() {
            if let Some(op) = op.as_object_mut() {
                for k in ["path", "from"] {
                    if let Some(p) = op.get_mut(k) {
                        *p = under_doc(p);
                    }
                }
            }
        }
        krm_merge::yaml::from_json(&ops)
    };
    let mut p = Node::map();
    p.set("type", Node::string("json6902"));
    p.set("patch", patch);
    let mut target = Node::map();
    target.set("kind", Node::string("Doc"));
    p.set("target", target);
    let rl = resource_list_of(
        vec![krm_merge::yaml::from_json(&item)],
        merge_config(vec![p]),
    );
    let out = krm(&[], &rl);
    if raw {
        return if out.code == 1 && out.stderr.contains("duplicate") {
            Ok(())
        } else {
            Err(format!(
                "want a config error for the duplicate member, got code {} stderr {}",
                out.code, out.stderr
            ))
        };
    }
    let items = rl_items(&out.stdout);
    match (v.get("expected"), s(v, &["expectedError"])) {
        (Some(want), _) => {
            if out.code != 0 {
                return Err(format!("exit {}: {}", out.code, out.stderr));
            }
            let got = items.first().and_then(|i| i.get("doc"));
            if got == Some(want) && items.len() == 1 {
                Ok(())
            } else {
                Err(format!(
                    "got {got:?}, want {want}\n(output was:\n{})",
                    out.stdout
                ))
            }
        }
        (None, Some(err)) => {
            if out.code != 1 {
                Err(format!("want an error ({err}), got code {}", out.code))
            } else if items != [item] {
                Err(format!("failed, but changed the item:\n{}", out.stdout))
            } else {
                Ok(())
            }
        }
        (None, None) => Err("no expectation: list it in NOT_RUN".into()),
    }
}

#[test]
fn rfc6902() {
    run_suite("rfc6902", rfc6902_case);
}

// ----- kustomize's JSON 6902 filter ------------------------------------------------------------

/// kustomize's `patchjson6902` filter: the patch (YAML, or JSON text) applied to every document
/// (`target: {}`), with kustomize's options, which also make `replace` of a missing member add
/// it as kustomize's JSON patch library does. Compared as data: kustomize's output goes through
/// JSON, so its key order is sorted.
fn json6902_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    let mut opts = Node::map();
    opts.set("newListItems", Node::string("prepend"));
    opts.set("inferMergeKeys", Node::plain("false"));
    let mut p = Node::map();
    p.set("type", Node::string("json6902"));
    p.set(
        "patch",
        Node::string(s(v, &["inputs", "patch"]).unwrap_or("").to_owned()),
    );
    p.set("target", Node::map());
    p.set("options", opts);
    let rl = resource_list(
        s(v, &["inputs", "resources"]).unwrap_or(""),
        merge_config(vec![p]),
    );
    let out = krm(&[], &rl);
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr));
    }
    compare(
        rl_items(&out.stdout),
        docs(s(v, &["expected"]).unwrap_or("")),
        false,
        &out.stdout,
    )
}

#[test]
fn kustomize_json6902() {
    run_suite("kustomize-json6902", json6902_case);
}

// ----- kyaml merge3 ----------------------------------------------------------------------------

/// kyaml writes comments one space after the value and re-indents; we keep the source's spacing.
const SPACING: &str =
    "kyaml rewrites comment spacing (`e  # c` becomes `e # c`); we keep the input's";
/// kyaml adds the fields of a map or element it creates in lexicographic order (its walker visits
/// field names sorted); we keep `updated`'s order, as merge2 keeps the patch's.
const NEW_KEY_ORDER: &str = "new fields in `updated`'s order, not kyaml's lexicographic order";

/// merge3 cases whose output is not upstream's text but agrees with it this far, and why (the
/// same cases and reasons as tests/it/walkers_corpus.rs, which runs them at the function level).
/// A listed case that agrees better, or less, fails.
const MERGE3_INEXACT: &[(&str, &str, Agreement, &str)] = &[
    (
        "kyaml-merge3/map.yaml",
        "Add an annotation to the field",
        Agreement::Layout,
        SPACING,
    ),
    (
        "kyaml-merge3/map.yaml",
        "Update an annotation on the field, field messing rom the dest",
        Agreement::Layout,
        SPACING,
    ),
    (
        "kyaml-merge3/element.yaml",
        "Add an element to an existing list",
        Agreement::Unordered,
        NEW_KEY_ORDER,
    ),
    (
        "kyaml-merge3/element.yaml",
        "Add an element to a non-existing list",
        Agreement::Unordered,
        NEW_KEY_ORDER,
    ),
    (
        "kyaml-merge3/element.yaml",
        "Add an element to a non-existing list, existing in dest",
        Agreement::Unordered,
        NEW_KEY_ORDER,
    ),
    (
        "kyaml-merge3/element.yaml",
        "Add a field to the element, element missing from dest",
        Agreement::Unordered,
        NEW_KEY_ORDER,
    ),
    (
        "kyaml-merge3/element.yaml",
        "Update a field on the elem, element missing from the dest",
        Agreement::Unordered,
        NEW_KEY_ORDER,
    ),
    (
        "kyaml-merge3/element.yaml",
        "Merge with name for same container-port",
        Agreement::Unordered,
        NEW_KEY_ORDER,
    ),
];

/// One merge3 run through the binary: `krm-merge merge3 ORIGINAL UPDATED DEST`, or, for
/// kustomize's Kustomization files, `--config` with their two merge keys declared in
/// `spec.schema.mergeKeys` as a user would (kyaml's built-in schema knows the Kustomization type,
/// ours is Kubernetes only, and the merge3 subcommand takes no schema).
fn merge3_run(c: &Case, original: &str, updated: &str, dest: &str) -> Out {
    let infer = flag(&c.v, &["options", "inferAssociativeLists"]);
    let dest_f = temp_file("dest.yaml", dest);
    if c.file.ends_with("/kustomization.yaml") {
        let mut opts = Node::map();
        opts.set(
            "inferMergeKeys",
            Node::plain(if infer { "true" } else { "false" }),
        );
        let mut target = Node::map();
        target.set("kind", Node::string("Kustomization"));
        let mut p = Node::map();
        p.set("type", Node::string("merge3"));
        p.set("original", Node::string(original.to_owned()));
        p.set("patch", Node::string(updated.to_owned()));
        p.set("target", target);
        p.set("options", opts);
        let mut config = merge_config(vec![p]);
        let keys = ["configMapGenerator", "secretGenerator"]
            .iter()
            .map(|list| {
                let mut k = Node::map();
                k.set("group", Node::string("kustomize.config.k8s.io"));
                k.set("kind", Node::string("Kustomization"));
                k.set("path", Node::string(*list));
                k.set("keys", Node::seq_of(vec![Node::string("name")]));
                k.set("strategy", Node::string("merge"));
                k
            })
            .collect();
        let mut schema = Node::map();
        schema.set("mergeKeys", Node::seq_of(keys));
        if let Some(spec) = config.get_mut("spec") {
            spec.set("schema", schema);
        }
        let fn_f = temp_file("fn.yaml", &yaml_text(&config));
        return krm(
            &[
                "--config",
                &fn_f.display().to_string(),
                &dest_f.display().to_string(),
            ],
            "",
        );
    }
    let orig_f = temp_file("original.yaml", original);
    let upd_f = temp_file("updated.yaml", updated);
    let (o, u, d) = (
        orig_f.display().to_string(),
        upd_f.display().to_string(),
        dest_f.display().to_string(),
    );
    let mut args = vec!["merge3", &o, &u, &d];
    if !infer {
        args.push("--no-infer-merge-keys");
    }
    krm(&args, "")
}

/// kyaml merge3 through the binary. Upstream compares text (`exact-trimspace`); a case that does
/// not give upstream's text must be listed in `MERGE3_INEXACT` with how far it agrees and why.
/// Merged again into its own output, nothing may change (idempotence, as kpt checks it).
fn merge3_case(c: &Case) -> Result<(), String> {
    let input = |k: &str| s(&c.v, &["inputs", k]).unwrap_or("");
    let expected = s(&c.v, &["expected"]).unwrap_or("");
    let out = merge3_run(c, input("original"), input("updated"), input("dest"));
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr));
    }
    let again = merge3_run(c, input("original"), input("updated"), &out.stdout);
    if again.code != 0 || again.stdout != out.stdout {
        return Err(format!(
            "not idempotent (exit {}):\n{}\n---\n{}",
            again.code, out.stdout, again.stdout
        ));
    }
    let got = agreement(&out.stdout, expected);
    let want = MERGE3_INEXACT
        .iter()
        .find(|(f, n, _, _)| *f == c.file && *n == c.name)
        .map_or(Agreement::Exact, |(_, _, a, _)| *a);
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "{got:?}, listed as {want:?}\n--- expected\n{expected}\n--- got\n{}",
            out.stdout
        ))
    }
}

#[test]
fn kyaml_merge3() {
    for (f, n, a, why) in MERGE3_INEXACT {
        eprintln!("  {f} / {n}: {a:?}: {why}");
    }
    run_suite("kyaml-merge3", merge3_case);
}

// ----- apimachinery's strategic merge patch tests ----------------------------------------------

/// The wrapped documents' apiVersion; the kind is the test schema's root type, capitalised.
const K8S_API_VERSION: &str = "strategicpatch.test/v1";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn k8s_types(schema: &Value) -> &serde_json::Map<String, Value> {
    static EMPTY: std::sync::OnceLock<serde_json::Map<String, Value>> = std::sync::OnceLock::new();
    schema
        .get("types")
        .and_then(Value::as_object)
        .unwrap_or_else(|| EMPTY.get_or_init(serde_json::Map::new))
}

fn k8s_root(schema: &Value) -> &str {
    s(schema, &["root"]).unwrap_or("mergeItem")
}

/// `mergeItem` -> `MergeItem`.
fn k8s_kind(schema: &Value) -> String {
    let root = k8s_root(schema);
    let mut cs = root.chars();
    cs.next()
        .map(|c| c.to_uppercase().chain(cs).collect())
        .unwrap_or_default()
}

/// The suite's test schema (each file's header `schema.types`, from the Go test structs and their
/// `patchStrategy`/`patchMergeKey` tags) as the OpenAPI v2 document a user would write for it:
/// one definition per type, `$ref`s between them, the extensions on the fields, and the root type
/// bound by `x-kubernetes-group-version-kind` to the kind the wrapped documents carry.
fn k8s_openapi(schema: &Value) -> Value {
    use serde_json::json;
    let types = k8s_types(schema);
    let reference = |t: &str| json!({ "$ref": format!("#/definitions/{t}") });
    let mut defs = serde_json::Map::new();
    for (name, fields) in types {
        let mut props = serde_json::Map::new();
        for (field, f) in fields.as_object().into_iter().flatten() {
            let get = |k: &str| f.get(k).and_then(Value::as_str);
            let named = |t: Option<&str>| t.filter(|t| types.contains_key(*t)).map(str::to_owned);
            let mut p = match get("type") {
                Some("list") => match named(get("items")) {
                    Some(t) => json!({ "type": "array", "items": reference(&t) }),
                    None => json!({ "type": "array", "items": { "type": get("items") } }),
                },
                Some("map") => {
                    json!({ "type": "object", "additionalProperties": { "type": get("values") } })
                }
                // `mergeItemPtr` is declared as a *MergeItem, but the cases give it a list of
                // mergeItem merged by `name` (see its `note`), which is what its tags describe.
                Some("object") if get("patchMergeKey").is_some() => match named(get("ref")) {
                    Some(t) => json!({ "type": "array", "items": reference(&t) }),
                    None => json!({ "type": "object" }),
                },
                Some("object") => match named(get("ref")) {
                    Some(t) => reference(&t),
                    None => json!({ "type": "object" }),
                },
                Some(other) => json!({ "type": other }),
                None => json!({}),
            };
            if let Some(st) = get("patchStrategy") {
                p["x-kubernetes-patch-strategy"] = json!(st);
            }
            if let Some(k) = get("patchMergeKey") {
                p["x-kubernetes-patch-merge-key"] = json!(k);
            }
            props.insert(field.clone(), p);
        }
        let mut def = json!({ "type": "object", "properties": props });
        if name == k8s_root(schema) {
            let (group, version) = K8S_API_VERSION.split_once('/').unwrap_or(("", ""));
            def["x-kubernetes-group-version-kind"] =
                json!([{ "group": group, "version": version, "kind": k8s_kind(schema) }]);
        }
        defs.insert(name.clone(), def);
    }
    json!({ "swagger": "2.0", "info": { "title": "strategicpatch tests", "version": "v1" },
            "paths": {}, "definitions": defs })
}

/// One of a case's documents (YAML or JSON text; absent = `{}`, as upstream reads a nil
/// document), with `apiVersion`, `kind` and `metadata.name` put in front, so that it is a
/// resource of the kind the schema is bound to. Every document of a case — item, patch,
/// last-applied configuration — gets the same three fields, so none of them is a change, and
/// `$patch: replace` at the top keeps them. A document that is not a mapping (apimachinery's
/// bad-argument cases) is left as it is.
fn k8s_doc(text: Option<&str>, kind: &str) -> Result<Node<'static>, String> {
    let root = match text {
        None => None,
        Some(t) => krm_merge::yaml::parse_stream(t)
            .map_err(|e| format!("{t:?}: {e}"))?
            .into_iter()
            .find_map(|d| d.root)
            .map(Node::into_owned),
    };
    let root = root.filter(|r| !r.is_null()).unwrap_or_else(Node::map);
    if !root.is_map() {
        return Ok(root);
    }
    let mut meta = Node::map();
    meta.set("name", Node::string("t"));
    let mut entries = vec![
        Entry::new("apiVersion", Node::string(K8S_API_VERSION)),
        Entry::new("kind", Node::string(kind.to_owned())),
        Entry::new("metadata", meta),
    ];
    entries.extend(root.entries().iter().cloned());
    Ok(Node::map_of(entries))
}

/// The data of a result without the three fields [`k8s_doc`] added (the test types have no
/// `metadata`).
fn k8s_strip(mut item: Value) -> Value {
    if let Some(o) = item.as_object_mut() {
        for k in ["apiVersion", "kind", "metadata"] {
            o.remove(k);
        }
    }
    item
}

/// The expected document of a case as data (`{}` when it is empty).
fn k8s_expected(text: &str) -> Value {
    docs(text)
        .into_iter()
        .next()
        .filter(|v| !v.is_null())
        .unwrap_or_else(|| Value::Object(Default::default()))
}

/// Go's `fmt.Sprint` of a JSON value decoded into `interface{}` (numbers are float64), for the
/// small values merge keys hold here.
fn go_v(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "<nil>".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e6 => format!("{}", f as i64),
            Some(f) => format!("{f}"),
            None => n.to_string(),
        },
        Some(other) => other.to_string(),
    }
}

/// apimachinery's test normalisation `sortMergeListsByName`, from the test types: in every list
/// whose patch strategy includes `merge`, maps are sorted by the `%v` of their merge key (after
/// their own merge lists), scalars de-duplicated and sorted by their `%v`; other lists are left
/// alone and not entered. Checked against upstream's own cases in `k8s_sort_normalisation`.
fn go_sort_merge_lists(v: &mut Value, ty: &str, types: &serde_json::Map<String, Value>) {
    let Some(o) = v.as_object_mut() else {
        return;
    };
    for (k, x) in o.iter_mut() {
        let Some(f) = types.get(ty).and_then(|t| t.get(k)) else {
            continue;
        };
        let sub = ["items", "ref"]
            .iter()
            .filter_map(|k| f.get(*k).and_then(Value::as_str))
            .find(|t| types.contains_key(*t));
        let merge = s(f, &["patchStrategy"]).is_some_and(|st| st.split(',').any(|p| p == "merge"));
        match x {
            Value::Object(_) => {
                if let Some(t) = sub {
                    go_sort_merge_lists(x, t, types);
                }
            }
            Value::Array(items) if merge => {
                if items.iter().all(Value::is_object) {
                    let key = s(f, &["patchMergeKey"]).unwrap_or("");
                    for i in items.iter_mut() {
                        if let Some(t) = sub {
                            go_sort_merge_lists(i, t, types);
                        }
                    }
                    items.sort_by_key(|i| go_v(i.get(key)));
                } else {
                    let mut seen: Vec<Value> = Vec::new();
                    for i in items.drain(..) {
                        if !seen.contains(&i) {
                            seen.push(i);
                        }
                    }
                    seen.sort_by_key(|i| go_v(Some(i)));
                    *items = seen;
                }
            }
            _ => {}
        }
    }
}

/// Compares a result with the expected one, both sorted first when the case says
/// `sortMergeLists` (upstream's `json-deepequal-sorted`); `exact-json` and `json-deepequal`
/// compare JSON values.
fn k8s_compare(c: &Case, got: Value, want: Value, stdout: &str) -> Result<(), String> {
    let (mut got, mut want) = (got, want);
    if flag(&c.v, &["options", "sortMergeLists"]) {
        let types = k8s_types(&c.schema);
        go_sort_merge_lists(&mut got, k8s_root(&c.schema), types);
        go_sort_merge_lists(&mut want, k8s_root(&c.schema), types);
    }
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "got  {got}\nwant {want}\ninputs {}\n(output was:\n{stdout})",
            c.v.get("inputs").unwrap_or(&Value::Null)
        ))
    }
}

/// A Merge functionConfig with one patch of `ty` for the case's kind, and the case's test schema
/// in `spec.schema.openAPI.inline`.
fn k8s_config(
    c: &Case,
    ty: &str,
    patch: Node<'static>,
    opts: Option<Node<'static>>,
) -> Node<'static> {
    let mut target = Node::map();
    target.set("kind", Node::string(k8s_kind(&c.schema)));
    let mut p = Node::map();
    p.set("type", Node::string(ty.to_owned()));
    p.set("patch", patch);
    p.set("target", target);
    // Upstream's cases give values of other types than their test schema says (they test the
    // merge, not the schema): the check's findings stay warnings.
    let mut o = opts.unwrap_or_else(Node::map);
    o.set("validation", Node::string("warn".to_owned()));
    p.set("options", o);
    let mut config = merge_config(vec![p]);
    let mut open_api = Node::map();
    open_api.set(
        "inline",
        krm_merge::yaml::from_json(&k8s_openapi(&c.schema)),
    );
    let mut schema = Node::map();
    schema.set("openAPI", open_api);
    if let Some(spec) = config.get_mut("spec") {
        spec.set("schema", schema);
    }
    config
}

/// A two-way case: the `twoWay` patch applied to `original` by a `merge2` patch (no inferred
/// keys: the schema is all apimachinery knows), expecting `expected` (`modified`, or the recorded
/// `twoWayResult`). An `expectedError` case without a result must fail and change nothing.
fn k8s_twoway_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    if s(v, &["op"]) == Some("k8s-sort") {
        return Err("a k8s-sort case: list it in NOT_RUN".into());
    }
    let kind = k8s_kind(&c.schema);
    let expected = s(v, &["expected"]);
    let patch_text = s(v, &["inputs", "twoWay"]);
    if patch_text.is_none() && expected.is_none() {
        return Err("no patch to apply and no result: list it in NOT_RUN".into());
    }
    let item = k8s_doc(s(v, &["inputs", "original"]), &kind)?;
    let patch = k8s_doc(patch_text, &kind)?;
    let mut opts = Node::map();
    opts.set("inferMergeKeys", Node::plain("false"));
    let item_json = krm_merge::yaml::to_json(&item).ok();
    let rl = resource_list_of(vec![item], k8s_config(c, "merge2", patch, Some(opts)));
    let out = krm(&[], &rl);
    let items = rl_items(&out.stdout);
    match expected {
        Some(want) => {
            if out.code != 0 {
                return Err(format!("exit {}: {}", out.code, out.stderr));
            }
            let got = items
                .into_iter()
                .next()
                .map(k8s_strip)
                .unwrap_or(Value::Null);
            k8s_compare(c, got, k8s_expected(want), &out.stdout)
        }
        None => {
            let err = s(v, &["expectedError"]).unwrap_or("");
            if out.code != 1 {
                Err(format!("want an error ({err}), got code {}", out.code))
            } else if item_json.is_some_and(|i| i.is_object() && items != [i]) {
                Err(format!("failed, but changed the item:\n{}", out.stdout))
            } else {
                Ok(())
            }
        }
    }
}

/// A three-way case as `kubectl apply` sees it, through a `type: apply` patch: the item is
/// `current` with `original` as its last-applied annotation (JSON, as kubectl writes it), the
/// patch is `modified`, the result must be upstream's `result`. The annotation must come back
/// as `modified`, and is removed before comparing. kubectl apply always overwrites
/// (CreateThreeWayMergePatch with overwrite=true), so a case upstream expects to conflict gives
/// its overwrite=true result here, as in tests/it/walkers_corpus.rs.
fn k8s_threeway_case(c: &Case) -> Result<(), String> {
    let v = &c.v;
    let kind = k8s_kind(&c.schema);
    let Some(want) = s(v, &["expected"]) else {
        return Err("no result to compare: list it in NOT_RUN".into());
    };
    let mut item = k8s_doc(s(v, &["inputs", "current"]), &kind)?;
    let modified = k8s_doc(s(v, &["inputs", "modified"]), &kind)?;
    if let Some(o) = s(v, &["inputs", "original"]) {
        let original =
            krm_merge::yaml::to_json(&k8s_doc(Some(o), &kind)?).map_err(|e| e.to_string())?;
        let mut ann = Node::map();
        ann.set(LAST_APPLIED, Node::string(original.to_string()));
        if let Some(m) = item.get_mut("metadata") {
            m.set("annotations", ann);
        }
    }
    // kubectl writes the local configuration with its annotations minus this one, which leaves
    // `annotations: {}` when there were no others.
    let mut modified_json = krm_merge::yaml::to_json(&modified).map_err(|e| e.to_string())?;
    if let Some(Value::Object(m)) = modified_json.pointer_mut("/metadata") {
        m.entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    let rl = resource_list_of(vec![item], k8s_config(c, "apply", modified, None));
    let out = krm(&[], &rl);
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr));
    }
    let got = rl_items(&out.stdout)
        .into_iter()
        .next()
        .unwrap_or(Value::Null);
    let ann = got
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .map(serde_json::from_str::<Value>);
    match ann {
        Some(Ok(a)) if a == modified_json => {}
        other => {
            return Err(format!(
                "last-applied annotation {other:?}, want {modified_json}\n(output was:\n{})",
                out.stdout
            ))
        }
    }
    k8s_compare(c, k8s_strip(got), k8s_expected(want), &out.stdout)
}

#[test]
fn k8s_strategicpatch_two_way() {
    run_cases(
        "k8s-strategicpatch",
        "k8s-strategicpatch (two-way, merge2)",
        |c| matches!(s(&c.v, &["op"]), Some("k8s-twoway" | "k8s-sort")),
        k8s_twoway_case,
    );
}

#[test]
fn k8s_strategicpatch_three_way() {
    run_cases(
        "k8s-strategicpatch",
        "k8s-strategicpatch (three-way, apply)",
        |c| s(&c.v, &["op"]) == Some("k8s-threeway"),
        k8s_threeway_case,
    );
}

/// Not the product: the runner's own copy of apimachinery's `sortMergeListsByName`, checked
/// against upstream's `k8s-sort` cases (which have nothing to run through the binary).
#[test]
fn k8s_sort_normalisation() {
    let cases: Vec<Case> = load("k8s-strategicpatch")
        .into_iter()
        .filter(|c| s(&c.v, &["op"]) == Some("k8s-sort"))
        .collect();
    assert!(!cases.is_empty());
    for c in &cases {
        let mut got = k8s_expected(s(&c.v, &["inputs", "original"]).unwrap_or(""));
        go_sort_merge_lists(&mut got, k8s_root(&c.schema), k8s_types(&c.schema));
        let want = k8s_expected(s(&c.v, &["expected"]).unwrap_or(""));
        assert_eq!(got, want, "{} / {}", c.file, c.name);
    }
}

/// Every `KNOWN_BUGS` entry names a test in tests/it/regressions.rs that is ignored as a bug, so
/// the bug stays visible (`cargo test --test it -- --ignored` runs the reproductions).
#[test]
fn known_bugs_have_an_ignored_regression_test() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/regressions.rs");
    let text = fs::read_to_string(&path).expect("tests/it/regressions.rs");
    for (file, case, test) in KNOWN_BUGS {
        let at = text
            .find(&format!("fn {test}()"))
            .unwrap_or_else(|| panic!("{file} / {case}: no test regressions::{test}"));
        let attributes = text[..at].rsplit("\n\n").next().unwrap_or("");
        assert!(
            attributes.contains("#[ignore = \"bug: "),
            "{file} / {case}: regressions::{test} is not #[ignore = \"bug: ...\"]"
        );
    }
}
