//! Patch creation against apimachinery's strategic merge patch suite
//! (tests/data/conformance/k8s-strategicpatch, see its README), through the binary: every
//! two-way case that checks the patch `CreateTwoWayMergePatch` makes (`options.checkPatchCreation`
//! and `inputs.twoWay`) is run as `krm-merge diff --schema FILE OLD NEW`, every three-way case
//! (`inputs.threeWay`) as `krm-merge diff --schema FILE --original ORIGINAL CURRENT MODIFIED`
//! (its conflicts read from `--results`), with the suite's test schema written to FILE as the
//! OpenAPI v2 document a user would write for it and the cases' documents as resources of its
//! kind. Patches are compared as data, without the identity fields the command puts in front,
//! after the suite's list sorting (both sides, as the issue asks: apimachinery's
//! `sortMergeListsByName`, which also sorts `$retainKeys` and `$deleteFromPrimitiveList`
//! values).
//!
//! Every created patch must also apply: applied with `merge2` (two-way, to `original`) it must
//! give the case's expected result (`modified`, or upstream's `twoWayResult` where upstream's
//! own patch does not give `modified`; three-way, to `current`, upstream's `result`).
//!
//! Every case passes unless it is listed in `EXPECTED_FAILURES` with the reason; a listed case
//! must fail, so the list stays true. At least 95% of each set must pass. Run with
//! `--nocapture` for the counts and the list.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use krm_merge::diff::Options;
use krm_merge::merge::{merge2, Context};
use krm_merge::schema::{Cursor, Schema};
use krm_merge::yaml::{self, Entry, Node};
use serde_json::{json, Value};

/// Cases whose expected patch is not created, and why: (file, case, reason).
const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[
    (
        "raw.yaml",
        "nested patch merge with empty list/TwoWay",
        DIRECTIVE_IN_DATA,
    ),
    (
        "raw.yaml",
        "nested patch merge with empty list/ThreeWay",
        DIRECTIVE_IN_DATA,
    ),
    (
        "raw.yaml",
        "behavior of set element order for a merging list with duplicate/TwoWay",
        DUPLICATES,
    ),
    (
        "raw.yaml",
        "behavior of set element order for a merging list with duplicate/ThreeWay",
        DUPLICATES,
    ),
    (
        "raw.yaml",
        "behavior of set element order for a merging int list with duplicate/TwoWay",
        DUPLICATES,
    ),
    (
        "raw.yaml",
        "behavior of set element order for a merging int list with duplicate/ThreeWay",
        DUPLICATES,
    ),
];

const DIRECTIVE_IN_DATA: &str = "`modified` holds an element `{$patch: delete, name: doesntexist}` as \
     data; upstream copies it into the patch, where it acts as a directive, so its own patch does not \
     give `modified` (its twoWayResult drops the element). diff refuses to write a field named `$...` \
     (DiffErrorKind::DirectiveKey): the patch could not give NEW";

const DUPLICATES: &str = "`modified` repeats a merge key (or a value of a merged list of scalars); \
     upstream sends only `$setElementOrder`, and its own patch does not give `modified` (its \
     twoWayResult groups the duplicates). diff sends the list whole after `{$patch: replace}`, which \
     gives `modified` exactly";

const API_VERSION: &str = "strategicpatch.test/v1";

struct Case {
    file: String,
    name: String,
    v: Value,
    schema: Value,
}

fn docs(text: &str) -> Vec<Value> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .filter_map(|d| d.root)
        .map(|mut r| {
            r.expand_aliases(1_000_000).expect("aliases");
            yaml::to_json(&r).expect("JSON-compatible")
        })
        .collect()
}

fn load() -> Vec<Case> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance/k8s-strategicpatch");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("suite dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let doc = docs(&fs::read_to_string(&f).expect("suite file")).remove(0);
        let file = f
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let schema = doc.get("schema").cloned().unwrap_or(Value::Null);
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for c in doc
            .get("cases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
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

// ----- the suite's test schema ----------------------------------------------------------------

fn types(schema: &Value) -> serde_json::Map<String, Value> {
    schema
        .get("types")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn root_type(schema: &Value) -> &str {
    s(schema, &["root"]).unwrap_or("mergeItem")
}

/// `mergeItem` -> `MergeItem`: the kind the wrapped documents carry.
fn kind(schema: &Value) -> String {
    let mut cs = root_type(schema).chars();
    cs.next()
        .map(|c| c.to_uppercase().chain(cs).collect())
        .unwrap_or_default()
}

/// The test schema as an OpenAPI v2 document (as conformance.rs builds it): one definition
/// per type, `$ref`s between them, the patch extensions on the fields, the root type bound to the
/// wrapped documents' kind.
fn openapi(schema: &Value) -> Value {
    let types = types(schema);
    let reference = |t: &str| json!({ "$ref": format!("#/definitions/{t}") });
    let mut defs = serde_json::Map::new();
    for (name, fields) in &types {
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
                // `mergeItemPtr`: a list of mergeItem merged by `name` in the cases (its note).
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
        if name == root_type(schema) {
            let (group, version) = API_VERSION.split_once('/').unwrap_or(("", ""));
            def["x-kubernetes-group-version-kind"] =
                json!([{ "group": group, "version": version, "kind": kind(schema) }]);
        }
        defs.insert(name.clone(), def);
    }
    json!({ "swagger": "2.0", "info": { "title": "strategicpatch tests", "version": "v1" },
            "paths": {}, "definitions": defs })
}

fn schema_of(c: &Case) -> (Schema, Cursor) {
    let mut schema = Schema::builtin();
    schema
        .add_openapi_v2(&openapi(&c.schema))
        .expect("test schema loads");
    let (g, v) = API_VERSION.split_once('/').unwrap_or(("", ""));
    let root = schema.root(g, v, &kind(&c.schema));
    (schema, root)
}

// ----- documents --------------------------------------------------------------------------------

/// A case's document as data (`{}` when absent or empty, as upstream reads a nil document).
fn value(text: Option<&str>) -> Value {
    text.and_then(|t| docs(t).into_iter().next())
        .filter(|v| !v.is_null())
        .unwrap_or_else(|| json!({}))
}

/// apimachinery's `sortMergeListsByName` over the test types: in every list whose patch strategy
/// includes `merge`, maps sorted by the `%v` of their merge key (after their own merge lists),
/// scalars de-duplicated and sorted by their `%v`; `$retainKeys` and `$deleteFromPrimitiveList/*`
/// values sorted; `$setElementOrder/*` left alone.
fn go_sort(v: &mut Value, ty: &str, types: &serde_json::Map<String, Value>) {
    let Some(o) = v.as_object_mut() else { return };
    for (k, x) in o.iter_mut() {
        if k == "$retainKeys" || k.starts_with("$deleteFromPrimitiveList/") {
            if let Value::Array(items) = x {
                items.sort_by_key(|i| go_v(Some(i)));
            }
            continue;
        }
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
                    go_sort(x, t, types);
                }
            }
            Value::Array(items) if merge => {
                if items.iter().all(Value::is_object) {
                    let key = s(f, &["patchMergeKey"]).unwrap_or("");
                    for i in items.iter_mut() {
                        if let Some(t) = sub {
                            go_sort(i, t, types);
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

/// Go's `fmt.Sprint` of a JSON value decoded into `interface{}`, for the small values here.
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

/// A case's document (sorted first when the case sorts) as a resource of the schema's kind.
fn resource(c: &Case, text: Option<&str>) -> Node<'static> {
    let mut v = value(text);
    if flag(&c.v, &["options", "sortMergeLists"]) {
        go_sort(&mut v, root_type(&c.schema), &types(&c.schema));
    }
    let body = yaml::from_json(&v);
    let mut meta = Node::map();
    meta.set("name", Node::string("t"));
    let mut entries = vec![
        Entry::new("apiVersion", Node::string(API_VERSION)),
        Entry::new("kind", Node::string(kind(&c.schema))),
        Entry::new("metadata", meta),
    ];
    entries.extend(body.entries().iter().cloned());
    Node::map_of(entries)
}

fn strip(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["apiVersion", "kind", "metadata"] {
            o.remove(k);
        }
    }
    v
}

fn sorted(c: &Case, mut v: Value) -> Value {
    if flag(&c.v, &["options", "sortMergeLists"]) {
        go_sort(&mut v, root_type(&c.schema), &types(&c.schema));
    }
    v
}

fn opts() -> Options {
    Options {
        infer_keys: false,
        identity: false,
        kustomize: false,
    }
}

/// `patch` applied to `dest` by merge2, as data without the wrapping fields.
fn applied(
    dest: &Node<'static>,
    patch: &Node<'_>,
    schema: &Schema,
    root: Cursor,
) -> Result<Value, String> {
    let mut d = dest.clone();
    let patch = patch.clone().into_owned();
    merge2::merge(
        &mut d,
        &patch,
        &Context::new(schema, root, &Default::default()).with(opts().merge2_options()),
    )
    .map_err(|e| format!("merge2 fails on the created patch: {e}"))?;
    yaml::to_json(&d).map(strip).map_err(|e| e.to_string())
}

fn show(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

// ----- the binary -------------------------------------------------------------------------------

/// What `krm-merge diff` made of a case.
struct Made {
    /// The patch (`{}` when it printed nothing: nothing changed).
    patch: Node<'static>,
    /// The conflicts it reported, one line each.
    conflicts: Vec<String>,
}

/// A directory of its own for each run.
fn case_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    crate::support::tmp_dir("diff-conformance", &n.to_string())
}

/// Runs `krm-merge diff --schema FILE [--original ORIGINAL] OLD NEW` on the case's documents;
/// `Err` holds what it said when it made no patch.
fn binary(
    c: &Case,
    original: Option<&Node<'_>>,
    old: &Node<'_>,
    new: &Node<'_>,
) -> Result<Made, String> {
    let dir = case_dir();
    let file = |name: &str, text: String| -> String {
        let p = dir.join(name);
        fs::write(&p, text).expect("write");
        p.to_str().expect("utf8").to_owned()
    };
    let schema = file("schema.json", openapi(&c.schema).to_string());
    let results = dir.join("results.yaml");
    let mut args: Vec<String> = vec!["diff".into(), "--schema".into(), schema];
    if let Some(o) = original {
        args.push("--original".into());
        args.push(file("original.yaml", crate::support::yaml_text(o)));
    }
    args.push("--results".into());
    args.push(results.to_str().expect("utf8").to_owned());
    args.push(file("old.yaml", crate::support::yaml_text(old)));
    args.push(file("new.yaml", crate::support::yaml_text(new)));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = crate::support::krm(&argv, "");
    let said = fs::read_to_string(&results).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    if out.code != 0 {
        return Err(format!("exit {}: {}", out.code, out.stderr.trim()));
    }
    let conflicts = docs(&said)
        .first()
        .and_then(|r| r.get("results").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r.get("message").and_then(Value::as_str))
        .filter(|m| m.starts_with("changed in the live object"))
        .map(str::to_owned)
        .collect();
    let patch = yaml::parse_stream(&out.stdout)
        .map_err(|e| format!("the patch is not YAML: {e}"))?
        .into_iter()
        .find_map(|d| d.root)
        .map(Node::into_owned)
        .unwrap_or_else(Node::map);
    Ok(Made { patch, conflicts })
}

// ----- the two sets -------------------------------------------------------------------------------

fn two_way_case(c: &Case) -> Result<(), String> {
    let (schema, root) = schema_of(c);
    let original = resource(c, s(&c.v, &["inputs", "original"]));
    let modified = resource(c, s(&c.v, &["inputs", "modified"]));
    let d = binary(c, None, &original, &modified)?;
    let got = sorted(
        c,
        strip(yaml::to_json(&d.patch).map_err(|e| e.to_string())?),
    );
    let want = sorted(c, value(s(&c.v, &["inputs", "twoWay"])));
    if got != want {
        return Err(format!(
            "patch\n  got  {}\n  want {}",
            show(&got),
            show(&want)
        ));
    }
    let result = sorted(c, applied(&original, &d.patch, &schema, root)?);
    let expected = sorted(c, value(s(&c.v, &["expected"])));
    if result != expected {
        return Err(format!(
            "applied\n  got  {}\n  want {}",
            show(&result),
            show(&expected)
        ));
    }
    Ok(())
}

fn three_way_case(c: &Case) -> Result<(), String> {
    let (schema, root) = schema_of(c);
    let original = resource(c, s(&c.v, &["inputs", "original"]));
    let current = resource(c, s(&c.v, &["inputs", "current"]));
    let modified = resource(c, s(&c.v, &["inputs", "modified"]));
    let d = binary(c, Some(&original), &current, &modified)?;
    let expect_conflict = flag(&c.v, &["options", "expectConflict"]);
    if expect_conflict == d.conflicts.is_empty() {
        return Err(format!(
            "conflicts: expected {}, got {:?}",
            if expect_conflict { "some" } else { "none" },
            d.conflicts
        ));
    }
    let got = sorted(
        c,
        strip(yaml::to_json(&d.patch).map_err(|e| e.to_string())?),
    );
    let want = sorted(c, value(s(&c.v, &["inputs", "threeWay"])));
    if got != want {
        return Err(format!(
            "patch\n  got  {}\n  want {}",
            show(&got),
            show(&want)
        ));
    }
    if let Some(e) = s(&c.v, &["expected"]) {
        // Compared with merge lists sorted: `merge2` places the elements only CURRENT has
        // differently from apimachinery's applier (see the module doc).
        let mut result = applied(&current, &d.patch, &schema, root)?;
        let mut expected = value(Some(e));
        let ty = root_type(&c.schema);
        go_sort(&mut result, ty, &types(&c.schema));
        go_sort(&mut expected, ty, &types(&c.schema));
        if result != expected {
            return Err(format!(
                "applied\n  got  {}\n  want {}",
                show(&result),
                show(&expected)
            ));
        }
    }
    Ok(())
}

/// Runs the cases `pick` selects, prints the counts and failures, checks the list of expected
/// failures and the 95% floor.
fn run(label: &str, pick: impl Fn(&Case) -> bool, one: impl Fn(&Case) -> Result<(), String>) {
    let all = load();
    let cases: Vec<&Case> = all.iter().filter(|c| pick(c)).collect();
    let mut problems = Vec::new();
    let mut passed = 0;
    let mut failed = Vec::new();
    for c in &cases {
        let listed = EXPECTED_FAILURES
            .iter()
            .find(|(f, n, _)| *f == c.file && *n == c.name);
        match (one(c), listed) {
            (Ok(()), None) => passed += 1,
            (Ok(()), Some(_)) => problems.push(format!(
                "{} / {}: listed as failing, but passes",
                c.file, c.name
            )),
            (Err(why), Some((_, _, reason))) => {
                failed.push(format!("{} / {}: {reason}\n    ({why})", c.file, c.name))
            }
            (Err(why), None) => problems.push(format!("{} / {}: {why}", c.file, c.name)),
        }
    }
    for (f, n, _) in EXPECTED_FAILURES {
        if !all.iter().any(|c| c.file == *f && c.name == *n) {
            problems.push(format!("{f} / {n}: listed, but there is no such case"));
        }
    }
    eprintln!(
        "{label}: {passed}/{} create the expected patch",
        cases.len()
    );
    for f in &failed {
        eprintln!("  expected failure: {f}");
    }
    assert!(problems.is_empty(), "{label}:\n{}", problems.join("\n"));
    assert!(
        passed * 100 >= cases.len() * 95,
        "{label}: {passed}/{} is below 95%",
        cases.len()
    );
}

#[test]
fn two_way_patches_are_apimachinerys() {
    let cases = load();
    let n = cases
        .iter()
        .filter(|c| {
            s(&c.v, &["op"]) == Some("k8s-twoway")
                && flag(&c.v, &["options", "checkPatchCreation"])
                && c.v.pointer("/inputs/twoWay").is_some()
        })
        .count();
    assert_eq!(n, 139, "the suite's two-way patch-creation cases");
    run(
        "two-way",
        |c| {
            s(&c.v, &["op"]) == Some("k8s-twoway")
                && flag(&c.v, &["options", "checkPatchCreation"])
                && c.v.pointer("/inputs/twoWay").is_some()
        },
        two_way_case,
    );
}

#[test]
fn three_way_patches_are_apimachinerys() {
    let pick = |c: &Case| {
        s(&c.v, &["op"]) == Some("k8s-threeway") && c.v.pointer("/inputs/threeWay").is_some()
    };
    assert_eq!(
        load().iter().filter(|c| pick(c)).count(),
        132,
        "the suite's three-way cases"
    );
    run("three-way", pick, three_way_case);
}
