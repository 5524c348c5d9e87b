//! `json6902` against the conformance corpus (tests/data/conformance, see its README):
//!
//! * the RFC 6902 suite (json-patch/json-patch-tests `tests.json` and `spec_tests.json`): every
//!   enabled case gives its `expected` JSON value, or fails when it has `expectedError`, and a
//!   failing patch leaves the document byte-identical;
//! * kustomize's `patchjson6902` filter cases: the patch (YAML, or JSON text) applied to every
//!   document of `resources`, compared as JSON values with `expected` (kustomize's output goes
//!   through JSON, so its key order is not ours to match).
//!
//! Run with `--nocapture` to see the counts.

use std::fs;

use krm_merge::patch::json6902::{self, Options};
use krm_merge::yaml::{self, Document, Node};
use serde_json::Value;

const RFC_FILES: &[&str] = &["tests.yaml", "spec_tests.yaml"];

/// The cases upstream marks `disabled`, which the suite says not to run, each with why. The two
/// whose patch is raw JSON text with a duplicate `op` member are run anyway below
/// (`json_text_with_duplicate_members_is_rejected`): our YAML parser rejects duplicate keys, so
/// such a patch is refused before any operation runs, which is what RFC 6902 §4 asks for.
const DISABLED: &[(&str, &str)] = &[
    (
        "Toplevel scalar values OK?",
        "a scalar document; we support it, see the unit tests",
    ),
    (
        "Whole document",
        "no expectation upstream; `test` at \"\" is covered by the unit tests",
    ),
    ("duplicate ops", "raw JSON text with two \"op\" members"),
    (
        "A.13 Invalid JSON Patch Document",
        "raw JSON text with two \"op\" members",
    ),
];

fn corpus(path: &str) -> String {
    let full = format!(
        "{}/tests/data/conformance/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn root<'a>(docs: &'a [Document<'a>]) -> &'a Node<'a> {
    docs[0].root.as_ref().expect("a document")
}

fn json(node: &Node<'_>) -> Value {
    yaml::to_json(node).expect("JSON data")
}

fn emit(node: &Node<'_>) -> String {
    let mut out = String::new();
    yaml::emit_document(&Document::new(node.clone()), &mut out);
    out
}

#[test]
fn rfc6902_suite() {
    let (mut passed, mut failed, mut skipped) = (0, Vec::new(), Vec::new());
    for file in RFC_FILES {
        let text = corpus(&format!("rfc6902/{file}"));
        let docs = yaml::parse_stream(&text).expect("corpus parses");
        let cases = root(&docs).get("cases").expect("cases");
        for case in cases.items() {
            let name = case.str_at(&["name"]).unwrap_or("?").to_owned();
            let label = format!("{file}: {name}");
            if case
                .get("disabled")
                .is_some_and(|d| d.as_str() == Some("true"))
            {
                assert!(
                    DISABLED.iter().any(|(n, _)| *n == name),
                    "disabled case not listed: {label}"
                );
                skipped.push(label);
                continue;
            }
            match run_rfc_case(case) {
                Ok(()) => passed += 1,
                Err(why) => failed.push(format!("{label}: {why}")),
            }
        }
    }
    println!(
        "rfc6902: {passed} passed, {} failed, {} disabled upstream (skipped)",
        failed.len(),
        skipped.len()
    );
    for s in &skipped {
        println!("  skipped: {s}");
    }
    assert!(failed.is_empty(), "failing cases:\n{}", failed.join("\n"));
    assert_eq!(skipped.len(), DISABLED.len());
}

fn run_rfc_case(case: &Node<'_>) -> Result<(), String> {
    let inputs = case.get("inputs").ok_or("no inputs")?;
    let mut doc = inputs.get("doc").ok_or("no doc")?.clone();
    let patch = inputs.get("patch").ok_or("no patch")?;
    let before = emit(&doc);
    let result = json6902::parse_ops(patch).and_then(|ops| json6902::patch(&mut doc, &ops));
    match (case.get("expected"), case.get("expectedError"), result) {
        (Some(want), _, Ok(())) => {
            let (got, want) = (json(&doc), json(want));
            if got == want {
                Ok(())
            } else {
                Err(format!("got {got}, want {want}"))
            }
        }
        (Some(_), _, Err(e)) => Err(format!("unexpected error: {e}")),
        (None, Some(_), Err(_)) if emit(&doc) != before => {
            Err("failed, but changed the document".into())
        }
        (None, Some(_), Err(_)) => Ok(()),
        (None, Some(msg), Ok(())) => Err(format!(
            "succeeded, want an error ({})",
            msg.as_str().unwrap_or("")
        )),
        (None, None, _) => Err("case has no expectation".into()),
    }
}

#[test]
fn json_text_with_duplicate_members_is_rejected() {
    let mut seen = 0;
    for file in RFC_FILES {
        let text = corpus(&format!("rfc6902/{file}"));
        let docs = yaml::parse_stream(&text).expect("corpus parses");
        for case in root(&docs).get("cases").expect("cases").items() {
            if case.str_at(&["options", "patchIsJsonText"]) != Some("true") {
                continue;
            }
            seen += 1;
            let raw = case.str_at(&["inputs", "patch"]).expect("patch text");
            let err = yaml::parse_stream(raw).expect_err("duplicate keys are malformed YAML");
            assert!(err.message.contains("duplicate"), "{err}");
        }
    }
    assert_eq!(seen, 2);
}

#[test]
fn kustomize_json6902_cases() {
    let (mut passed, mut failed) = (0, Vec::new());
    for file in ["example.yaml", "patchjson6902.yaml"] {
        let text = corpus(&format!("kustomize-json6902/{file}"));
        let docs = yaml::parse_stream(&text).expect("corpus parses");
        for case in root(&docs).get("cases").expect("cases").items() {
            let name = case.str_at(&["name"]).unwrap_or("?");
            match run_kustomize_case(case) {
                Ok(()) => passed += 1,
                Err(why) => failed.push(format!("{file}: {name}: {why}")),
            }
        }
    }
    println!(
        "kustomize-json6902: {passed} passed, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "failing cases:\n{}", failed.join("\n"));
}

fn run_kustomize_case(case: &Node<'_>) -> Result<(), String> {
    let resources = case
        .str_at(&["inputs", "resources"])
        .ok_or("no resources")?;
    let patch_text = case.str_at(&["inputs", "patch"]).ok_or("no patch")?;
    let expected = case.str_at(&["expected"]).ok_or("no expected")?;

    let patch_docs = yaml::parse_stream(patch_text).map_err(|e| e.to_string())?;
    let ops = json6902::parse_ops(root(&patch_docs)).map_err(|e| e.to_string())?;
    let mut docs = yaml::parse_stream(resources).map_err(|e| e.to_string())?;
    for d in &mut docs {
        if let Some(r) = d.root.as_mut() {
            json6902::patch_with(r, &ops, &Options::kustomize(), &mut json6902::Budget::new())
                .map_err(|e| e.to_string())?;
        }
    }
    let want_docs = yaml::parse_stream(expected).map_err(|e| e.to_string())?;
    let got: Vec<Value> = docs
        .iter()
        .filter_map(|d| d.root.as_ref())
        .map(json)
        .collect();
    let want: Vec<Value> = want_docs
        .iter()
        .filter_map(|d| d.root.as_ref())
        .map(json)
        .collect();
    if got != want {
        return Err(format!("got {got:?}, want {want:?}"));
    }
    // The output stays block YAML, also where the patch was JSON.
    for d in &docs {
        if let Some(r) = &d.root {
            let text = emit(r);
            if text.contains('{') || text.contains('[') {
                return Err(format!("flow style in the output:\n{text}"));
            }
        }
    }
    Ok(())
}

#[test]
fn kustomize_example_needs_replace_to_add() {
    // kustomize's `ExampleFilter` replaces /metadata/namespace in a resource that has none,
    // which RFC 6902 forbids: by default that is an error.
    let text = corpus("kustomize-json6902/example.yaml");
    let docs = yaml::parse_stream(&text).expect("corpus parses");
    let case = &root(&docs).get("cases").expect("cases").items()[0];
    let patch = yaml::parse_stream(case.str_at(&["inputs", "patch"]).unwrap()).unwrap();
    let ops = json6902::parse_ops(root(&patch)).unwrap();
    let resources = yaml::parse_stream(case.str_at(&["inputs", "resources"]).unwrap()).unwrap();
    let mut first = root(&resources).clone();
    let err = json6902::patch(&mut first, &ops).unwrap_err();
    assert_eq!(
        err.to_string(),
        "op 0 (replace /metadata/namespace): path does not exist"
    );
}

/// Differential test against the `json-patch` crate, an independent RFC 6902 implementation:
/// random small documents and random, mostly plausible operation lists (tokens drawn from the
/// same few names the documents use) must give the same JSON value, or both fail. Our side reads
/// the patch from JSON text through the YAML parser, so that path is exercised too, and must
/// leave the document unchanged when it fails.
mod differential {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const NAMES: &[&str] = &["a", "b", "0", "1", ""];
    const TOKENS: &[&str] = &["a", "b", "0", "1", "2", "", "-", "01", "~0", "~1", "x"];

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..4).prop_map(|n| json!(n)),
            prop::sample::select(vec!["a", "0", "~", "/", "", "true", "x y"])
                .prop_map(|s| json!(s)),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(NAMES), inner), 0..4).prop_map(|kvs| {
                    Value::Object(kvs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    /// Every pointer that exists in `doc`, the root included.
    fn pointers_of(doc: &Value, at: String, out: &mut Vec<String>) {
        match doc {
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    pointers_of(v, format!("{at}/{i}"), out);
                }
            }
            Value::Object(m) => {
                for (k, v) in m {
                    pointers_of(
                        v,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            _ => {}
        }
        out.push(at);
    }

    /// Mostly pointers that exist, or one token past them (where `add` goes); some random ones.
    fn pointer(existing: Vec<String>) -> impl Strategy<Value = String> {
        let random = prop::collection::vec(prop::sample::select(TOKENS), 0..4)
            .prop_map(|ts| ts.iter().map(|t| format!("/{t}")).collect::<String>());
        prop_oneof![
            3 => prop::sample::select(existing.clone()),
            2 => (prop::sample::select(existing), prop::sample::select(TOKENS))
                .prop_map(|(p, t)| format!("{p}/{t}")),
            1 => random,
        ]
    }

    fn op(doc: &Value) -> impl Strategy<Value = Value> {
        let mut existing = Vec::new();
        pointers_of(doc, String::new(), &mut existing);
        let doc = doc.clone();
        (
            0..6u8,
            pointer(existing.clone()),
            pointer(existing),
            value(),
            any::<bool>(),
        )
            .prop_map(move |(kind, path, from, value, same)| match kind {
                0 => json!({"op": "add", "path": path, "value": value}),
                1 => json!({"op": "remove", "path": path}),
                2 => json!({"op": "replace", "path": path, "value": value}),
                3 => json!({"op": "move", "from": from, "path": path}),
                4 => json!({"op": "copy", "from": from, "path": path}),
                _ => {
                    // Half the tests ask for what is there (before any other op ran).
                    let value = match doc.pointer(&path) {
                        Some(v) if same => v.clone(),
                        _ => value,
                    };
                    json!({"op": "test", "path": path, "value": value})
                }
            })
    }

    fn case() -> impl Strategy<Value = (Value, Value)> {
        value().prop_flat_map(|doc| {
            let ops = prop::collection::vec(op(&doc), 1..5).prop_map(Value::Array);
            (Just(doc), ops)
        })
    }

    /// Ours: the result as JSON, or None on error.
    fn ours(doc: &Value, ops: &Value) -> Option<Value> {
        let text = ops.to_string();
        let pdocs = yaml::parse_stream(&text).expect("JSON is YAML");
        let parsed = json6902::parse_ops(pdocs[0].root.as_ref().expect("a patch"))
            .expect("generated ops are well formed");
        let mut node = yaml::from_json(doc);
        match json6902::patch(&mut node, &parsed) {
            Ok(()) => Some(yaml::to_json(&node).expect("JSON data")),
            Err(_) => {
                assert_eq!(
                    yaml::to_json(&node).ok().as_ref(),
                    Some(doc),
                    "changed on error"
                );
                None
            }
        }
    }

    fn theirs(doc: &Value, ops: &Value) -> Option<Value> {
        let patch: json_patch::Patch = serde_json::from_value(ops.clone()).ok()?;
        // On a copy, without its transaction: json-patch 5.0's undo can panic ("unable to undo
        // applied patches") on some failing move sequences.
        let mut d = doc.clone();
        json_patch::patch_unsafe(&mut d, &patch).ok().map(|()| d)
    }

    /// Where json-patch 5 departs from RFC 6902 and we do not.
    fn known_divergence(ops: &Value) -> bool {
        ops.as_array().into_iter().flatten().any(|op| {
            let (from, path) = (op.get("from"), op.get("path"));
            // `move` from "" to "": a move to the same location changes nothing (json-patch-tests
            // "Move to same location has no effect"); json-patch fails removing the root.
            op["op"] == "move" && from == path && from == Some(&json!(""))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
        #[test]
        fn same_as_json_patch((doc, ops) in case()) {
            prop_assume!(!known_divergence(&ops));
            prop_assert_eq!(ours(&doc, &ops), theirs(&doc, &ops), "doc {} ops {}", doc, ops);
        }
    }
}
