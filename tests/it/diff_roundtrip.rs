//! `krm-merge diff` holds every patch it makes to one rule: applied to OLD by the engine it is
//! made for, the patch as written gives NEW as data, or the diff fails naming the resource and
//! writes nothing. Through the binary: keys that are one key as data but spelled otherwise
//! (`1` and `0x1`, `true` and `True`, `null` and `~`, `1` and `1.0`) in every output type.
//!
//! "As data" is as Kubernetes reads a resource: its mapping keys are JSON object keys, a number
//! or a boolean key the text of its value ([`as_kubernetes`], written here from that rule, not
//! from the library's).

use std::path::{Path, PathBuf};

use krm_merge::yaml::scalar::Resolved;
use krm_merge::yaml::{self, Node};
use serde_json::Value;

use crate::support::{krm, tmp_dir, Out};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf8").to_owned()
}

/// A document as Kubernetes reads it: JSON, each mapping key the text of its value.
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

fn docs(text: &str) -> Vec<Value> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .filter_map(|d| d.root)
        .map(|n| as_kubernetes(&n))
        .collect()
}

/// A `Merge` config holding `patch` as the patch of one entry of type `ty`.
fn config(ty: &str, patch: &str, target: bool) -> String {
    let block: String = patch.lines().map(|l| format!("      {l}\n")).collect();
    let target = if target {
        "    target: {kind: ConfigMap}\n"
    } else {
        ""
    };
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {{name: m}}\nspec:\n  patches:\n  - type: {ty}\n{target}    options: {{inferMergeKeys: false}}\n    patch: |\n{block}"
    )
}

/// The pairs of spellings of one key.
const RESPELLED: &[(&str, &str)] = &[("1", "0x1"), ("true", "True"), ("null", "~"), ("1", "1.0")];

fn configmap(key: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n  {key}: {value}\n  z: same\n")
}

fn dir(name: &str) -> PathBuf {
    tmp_dir("diff-roundtrip", name)
}

fn run_diff(args: &[&str]) -> Out {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    krm(&all, "")
}

/// A patch the generator gets wrong is not written: the diff fails, naming the resource and the
/// place, and stdout stays empty.
#[test]
fn respelled_keys_a_patch_that_would_not_give_new_is_refused() {
    let d = dir("refused");
    for (a, b) in RESPELLED {
        let old = write(&d, "old.yaml", &configmap(a, "one"));
        let new = write(&d, "new.yaml", &configmap(b, "two"));
        for ty in ["merge2", "jsonmerge", "json6902"] {
            let out = run_diff(&["--type", ty, &old, &new]);
            assert_eq!(out.code, 1, "{a} -> {b}, {ty}: {}", out.stdout);
            assert!(out.stdout.is_empty(), "{a} -> {b}, {ty}: {}", out.stdout);
            assert!(
                out.stderr.contains("ConfigMap c: ")
                    && out.stderr.contains("the patch made does not"),
                "{a} -> {b}, {ty}: {}",
                out.stderr
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
    let _ = config;
    let _ = docs;
}
