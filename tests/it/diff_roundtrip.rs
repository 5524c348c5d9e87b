//! `krm-merge diff` holds every patch it makes to one rule: applied to OLD by the engine it is
//! made for, the patch as written gives NEW as data, or the diff fails naming the resource and
//! writes nothing. Through the binary, in every output type (strategic merge, JSON patch, JSON
//! merge patch, three-way, a package's `Merge` config, a kustomization's `patches:`): keys that
//! are one key as data but spelled otherwise (`1` and `0x1`, `true` and `True`, `null` and `~`,
//! `1` and `1.0`), which the strategic merge and JSON merge patches also give as NEW spells them;
//! a reorder of 20,000 containers; and a change no strategic merge or merge patch can say,
//! refused.
//!
//! "As data" is as Kubernetes reads a resource: its mapping keys are JSON object keys, a number
//! or a boolean key the text of its value ([`as_kubernetes`], written here from that rule, not
//! from the library's).

use std::path::Path;

use krm_merge::yaml::scalar::Resolved;
use krm_merge::yaml::{self, Node};
use serde_json::Value;

use crate::support::{krm, tmp_dir, Out};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("dir");
    }
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf8").to_owned()
}

/// A document as Kubernetes reads it: JSON, each mapping key the text of its value (an
/// integral float as an integer).
pub fn as_kubernetes(n: &Node<'_>) -> Value {
    if n.is_map() {
        let mut m = serde_json::Map::new();
        for e in n.entries() {
            let key = match e.key.resolved() {
                Some(Resolved::Str(s)) => s.to_owned(),
                Some(Resolved::Null) => "null".to_owned(),
                Some(Resolved::Bool(b)) => b.to_string(),
                Some(Resolved::Int(i)) => i.to_string(),
                Some(Resolved::Float(f)) if f.fract() == 0.0 && f.abs() < 1e15 => {
                    (f as i64).to_string()
                }
                Some(Resolved::Float(f)) => f.to_string(),
                None => panic!("a key that is not a scalar"),
            };
            assert!(
                m.insert(key.clone(), as_kubernetes(&e.value)).is_none(),
                "two keys {key:?} in one mapping"
            );
        }
        return Value::Object(m);
    }
    if n.is_seq() {
        return Value::Array(n.items().iter().map(as_kubernetes).collect());
    }
    yaml::to_json(n).expect("a scalar")
}

/// The documents of a stream as Kubernetes reads them.
pub fn docs(text: &str) -> Vec<Value> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .filter_map(|d| d.root)
        .map(|n| as_kubernetes(&n))
        .collect()
}

fn run_diff(args: &[&str]) -> Out {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    krm(&all, "")
}

/// A `Merge` config holding `patch` (YAML text) as the patch of one entry of type `ty`.
fn config(ty: &str, patch: &str) -> String {
    let block: String = patch.lines().map(|l| format!("      {l}\n")).collect();
    let target = if ty == "json6902" {
        "    target: {name: c}\n"
    } else {
        ""
    };
    let options = if ty == "merge2" {
        "    options: {inferMergeKeys: false}\n"
    } else {
        ""
    };
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {{name: m}}\nspec:\n  patches:\n  - type: {ty}\n{target}{options}    patch: |\n{block}"
    )
}

/// Runs a functionConfig file on `input` files: the output's documents as Kubernetes reads them.
fn run_config(dir: &Path, config: &str, input: &str) -> Vec<Value> {
    docs(&run_config_text(dir, config, input))
}

/// Runs a functionConfig file on `input` files: the output as written.
fn run_config_text(dir: &Path, config: &str, input: &str) -> String {
    let fn_file = write(dir, "fn.yaml", config);
    let out = krm(&["--config", &fn_file, input], "");
    assert_eq!(out.code, 0, "{}\n{config}", out.stderr);
    out.stdout
}

/// The keys of `spec.values` in the first document of `text`, as written (`0x1`, not `1`).
fn spellings(text: &str) -> Vec<String> {
    let docs = yaml::parse_stream(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"));
    let root = docs.into_iter().find_map(|d| d.root).expect("a document");
    let mut keys: Vec<String> = root
        .get_path(&["spec", "values"])
        .map(|v| v.entries().iter())
        .into_iter()
        .flatten()
        .map(|e| e.key.as_str().expect("a scalar key").to_owned())
        .collect();
    keys.sort();
    keys
}

/// OLD and NEW (files holding one resource each) through every output type: each patch, run
/// by `krm-merge --config` on OLD (the kustomization's as kustomize would, with kustomize's
/// options), gives NEW as data.
fn round_trips(d: &Path, old_text: &str, new_text: &str) {
    let old = write(d, "old/r.yaml", old_text);
    let new = write(d, "new/r.yaml", new_text);
    let want = docs(new_text);
    let spelled = spellings(new_text);
    for ty in ["merge2", "jsonmerge", "json6902"] {
        let out = run_diff(&["--type", ty, &old, &new]);
        assert_eq!(out.code, 0, "{ty}: {}", out.stderr);
        let got = run_config_text(d, &config(ty, &out.stdout), &old);
        assert_eq!(docs(&got), want, "{ty}\n{}", out.stdout);
        // The patch types whose engines pair keys as data give NEW's spelling; a JSON patch
        // names members by their text, so a key both versions hold keeps OLD's there.
        if ty != "json6902" {
            assert_eq!(spellings(&got), spelled, "{ty}\n{}", out.stdout);
        }
    }
    // The patch `kubectl apply` would send to a live object that is still OLD.
    let out = run_diff(&["--original", &old, &old, &new]);
    assert_eq!(out.code, 0, "three-way: {}", out.stderr);
    assert_eq!(
        run_config(d, &config("merge2", &out.stdout), &old),
        want,
        "three-way\n{}",
        out.stdout
    );
    // Packages: the `Merge` config, and the kustomization's patches.
    let (base, variant) = (d.join("old"), d.join("new"));
    let (base, variant) = (
        base.to_str().expect("utf8"),
        variant.to_str().expect("utf8"),
    );
    for ty in ["merge2", "jsonmerge", "json6902"] {
        let out = run_diff(&["--type", ty, base, variant]);
        assert_eq!(out.code, 0, "package, {ty}: {}", out.stderr);
        let got = run_config_text(d, &out.stdout, &old);
        assert_eq!(docs(&got), want, "package, {ty}\n{}", out.stdout);
        if ty != "json6902" {
            assert_eq!(spellings(&got), spelled, "package, {ty}\n{}", out.stdout);
        }
    }
    for ty in ["merge2", "json6902"] {
        let out = run_diff(&["--format", "kustomization", "--type", ty, base, variant]);
        assert_eq!(out.code, 0, "kustomization, {ty}: {}", out.stderr);
        let patches = yaml::parse_stream(&out.stdout)
            .expect("YAML")
            .remove(0)
            .root
            .expect("root");
        let config = crate::support::yaml_text(&crate::diff_properties::kustomize_config(&patches));
        assert_eq!(
            run_config(d, &config, &old),
            want,
            "kustomization, {ty}\n{}",
            out.stdout
        );
    }
}

/// The pairs of spellings of one key.
const RESPELLED: &[(&str, &str)] = &[
    ("1", "0x1"),
    ("true", "True"),
    ("null", "~"),
    ("1", "1.0"),
    ("0o17", "15"),
    ("FALSE", "false"),
];

fn settings(fields: &str) -> String {
    format!("apiVersion: example.com/v1\nkind: Settings\nmetadata:\n  name: c\nspec:\n  values:\n{fields}")
}

#[test]
fn respelled_keys_round_trip_in_every_output_type() {
    let d = tmp_dir("diff-roundtrip", "respelled");
    for (a, b) in RESPELLED {
        // The value of the respelled key changes; beside it, one that stays, one that goes and
        // one that comes, each spelled its own way.
        let old = settings(&format!("    {a}: one\n    {b}{b}: gone\n    z: same\n"));
        let new = settings(&format!("    {b}: two\n    z: same\n    {a}{a}: new\n"));
        round_trips(&d, &old, &new);
        // Respelled only: the same data. A strategic merge or JSON merge patch names the key
        // as NEW spells it, and the result takes that spelling; a JSON patch cannot rename a
        // member without changing it, so there is no patch.
        let same = settings(&format!("    {b}: one\n    {b}{b}: gone\n    z: same\n"));
        let (o, n) = (write(&d, "a.yaml", &old), write(&d, "b.yaml", &same));
        for ty in ["merge2", "jsonmerge"] {
            let out = run_diff(&["--type", ty, &o, &n]);
            assert_eq!(out.code, 0, "{a} -> {b}, {ty}: {}", out.stderr);
            let got = run_config_text(&d, &config(ty, &out.stdout), &o);
            assert_eq!(docs(&got), docs(&same), "{a} -> {b}, {ty}\n{}", out.stdout);
            assert_eq!(
                spellings(&got),
                spellings(&same),
                "{a} -> {b}, {ty}\n{}",
                out.stdout
            );
        }
        let out = run_diff(&["--type", "json6902", &o, &n, "-v"]);
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (0, ""),
            "{a} -> {b}, json6902: {}",
            out.stderr
        );
        assert!(out.stderr.contains("the same data"), "{}", out.stderr);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A key that goes from the string `"0x1"` to the number `0x1` (two keys to Kubernetes, `0x1`
/// and `1`): a strategic merge or merge patch would have to name both in one mapping, where
/// their text is the same, which no YAML reader takes. The diff says so and writes nothing; a
/// JSON patch says it.
#[test]
fn a_patch_that_would_not_give_new_is_refused_naming_the_resource() {
    let d = tmp_dir("diff-roundtrip", "refused");
    let old = settings("    \"0x1\": a\n");
    let new = settings("    0x1: a\n");
    let (o, n) = (write(&d, "old.yaml", &old), write(&d, "new.yaml", &new));
    for ty in ["merge2", "jsonmerge"] {
        let out = run_diff(&["--type", ty, &o, &n]);
        assert_eq!(out.code, 1, "{ty}: {}", out.stdout);
        assert!(out.stdout.is_empty(), "{ty}: {}", out.stdout);
        assert!(
            out.stderr
                .contains("Settings c: the patch made does not read back")
                && out.stderr.contains("duplicate key \"0x1\""),
            "{ty}: {}",
            out.stderr
        );
    }
    let out = run_diff(&["--original", &o, &o, &n]);
    assert_eq!(out.code, 1, "three-way: {}", out.stdout);
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("Settings c: "), "{}", out.stderr);
    // In a package, nothing is written either: not the config, not `--added`.
    let (base, variant) = (d.join("base"), d.join("variant"));
    write(&d, "base/r.yaml", &old);
    write(&d, "variant/r.yaml", &new);
    write(
        &d,
        "variant/extra.yaml",
        &settings("    a: b\n").replace("name: c", "name: extra"),
    );
    let added = d.join("added.yaml");
    let out = run_diff(&[
        base.to_str().expect("utf8"),
        variant.to_str().expect("utf8"),
        "--added",
        added.to_str().expect("utf8"),
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.is_empty() && !added.exists(), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("Settings c: the patch made does not read back"),
        "{}",
        out.stderr
    );
    let out = run_diff(&["--type", "json6902", &o, &n]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got = run_config(&d, &config("json6902", &out.stdout), &o);
    assert_eq!(got, docs(&new));
    let _ = std::fs::remove_dir_all(&d);
}

/// A Pod of `n` containers in `order`.
fn pod(order: impl Iterator<Item = usize>) -> String {
    let mut s =
        String::from("apiVersion: v1\nkind: Pod\nmetadata:\n  name: c\nspec:\n  containers:\n");
    for i in order {
        s.push_str(&format!("  - name: c{i}\n    image: img:{i}\n"));
    }
    s
}

/// 20,000 containers, the odd ones moved first: the JSON patch must not spend 10,000 moves
/// through key selectors (each reads the whole list: 200 million elements, past the engine's
/// budget), and every output type must round trip.
#[test]
fn a_reorder_of_twenty_thousand_containers_round_trips() {
    let n = 20_000;
    let d = tmp_dir("diff-roundtrip", "reorder");
    let old = pod(0..n);
    let new = pod((1..n).step_by(2).chain((0..n).step_by(2)));
    round_trips(&d, &old, &new);
    let _ = std::fs::remove_dir_all(&d);
}
