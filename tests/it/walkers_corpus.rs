//! The three-way walkers against the conformance corpus (tests/data/conformance, see its README):
//!
//! * every case of `kyaml-merge3/*.yaml` through [`merge3::merge`];
//! * every `k8s-threeway` case of `k8s-strategicpatch/*.yaml` through [`apply::three_way`]
//!   (current = the live object, original = the last-applied configuration, modified = the local
//!   configuration), with the suite's test schema turned into an OpenAPI v2 document.
//!
//! A case that does not pass as upstream compares it is listed in `MERGE3_EXPECT` or
//! `THREEWAY_EXPECT` with the reason; the lists are checked both ways (a listed case that passes
//! better than listed fails the test, so the lists stay true).

use std::fs;
use std::path::PathBuf;

use krm_merge::merge::{merge3, Context};
use krm_merge::schema::{Cursor, Schema};
use krm_merge::yaml::{emit_document, parse_stream, Node};

use crate::support::{agreement, Agreement};

/// The files of one corpus directory, in name order: (file stem, top-level node).
fn corpus(dir: &str) -> Vec<(String, Node<'static>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conformance")
        .join(dir);
    let mut files: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let docs = parse_stream(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let top = docs
                .into_iter()
                .next()
                .and_then(|d| d.root)
                .map(Node::into_owned)
                .unwrap_or_else(|| panic!("{}: empty", p.display()));
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, top)
        })
        .collect()
}

fn cases(top: &Node<'static>) -> Vec<Node<'static>> {
    top.get("cases")
        .map(|c| c.items().to_vec())
        .unwrap_or_default()
}

fn text<'n>(case: &'n Node<'_>, path: &[&str]) -> Option<&'n str> {
    case.str_at(path)
}

/// What a case is expected to reach when it does not pass exactly, and why.
enum Expect {
    /// Same tree, other whitespace.
    Layout(&'static str),
    /// Same tree up to the order of map keys.
    Unordered(&'static str),
}

/// kyaml writes comments one space after the value and re-indents; we keep the source's spacing.
const SPACING: &str =
    "kyaml rewrites comment spacing (`e  # c` becomes `e # c`); we keep the input's";
/// kyaml adds the fields of a map or element it creates in lexicographic order (its walker visits
/// field names sorted); we keep `updated`'s order, as merge2 keeps the patch's.
const NEW_KEY_ORDER: &str = "new fields in `updated`'s order, not kyaml's lexicographic order";

const MERGE3_EXPECT: &[(&str, &str, Expect)] = &[
    (
        "map",
        "Add an annotation to the field",
        Expect::Layout(SPACING),
    ),
    (
        "map",
        "Update an annotation on the field, field messing rom the dest",
        Expect::Layout(SPACING),
    ),
    (
        "element",
        "Add an element to an existing list",
        Expect::Unordered(NEW_KEY_ORDER),
    ),
    (
        "element",
        "Add an element to a non-existing list",
        Expect::Unordered(NEW_KEY_ORDER),
    ),
    (
        "element",
        "Add an element to a non-existing list, existing in dest",
        Expect::Unordered(NEW_KEY_ORDER),
    ),
    (
        "element",
        "Add a field to the element, element missing from dest",
        Expect::Unordered(NEW_KEY_ORDER),
    ),
    (
        "element",
        "Update a field on the elem, element missing from the dest",
        Expect::Unordered(NEW_KEY_ORDER),
    ),
    (
        "element",
        "Merge with name for same container-port",
        Expect::Unordered(NEW_KEY_ORDER),
    ),
];

fn root_of(schema: &Schema, docs: &[&Node<'_>]) -> Cursor {
    for d in docs {
        if let (Some(av), Some(kind)) = (d.str_at(&["apiVersion"]), d.str_at(&["kind"])) {
            let (g, v) = av.split_once('/').unwrap_or(("", av));
            return schema.root(g, v, kind);
        }
    }
    Cursor::default()
}

/// kyaml's built-in schema includes kustomize's Kustomization type; ours is Kubernetes only, so
/// the harness declares its two merge keys as a user would (`spec.schema.mergeKeys`).
fn merge3_schema() -> Schema {
    let mut s = Schema::builtin();
    for list in ["configMapGenerator", "secretGenerator"] {
        s.add_merge_key(
            "kustomize.config.k8s.io",
            "Kustomization",
            list,
            vec!["name".into()],
            Some("merge"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    s
}

fn run_merge3(case: &Node<'_>, schema: &Schema) -> Result<String, String> {
    let input = |k: &str| text(case, &["inputs", k]).unwrap_or_default().to_owned();
    merge3_texts(
        case,
        schema,
        &input("original"),
        &input("updated"),
        &input("dest"),
    )
}

fn merge3_texts(
    case: &Node<'_>,
    schema: &Schema,
    orig_t: &str,
    upd_t: &str,
    dest_t: &str,
) -> Result<String, String> {
    let orig = parse_stream(orig_t).map_err(|e| e.to_string())?;
    let upd = parse_stream(upd_t).map_err(|e| e.to_string())?;
    let mut dest = parse_stream(dest_t).map_err(|e| e.to_string())?;
    let empty = Node::map();
    let o = orig.first().and_then(|d| d.root.as_ref()).unwrap_or(&empty);
    let u = upd.first().and_then(|d| d.root.as_ref()).unwrap_or(&empty);
    let infer = case.str_at(&["options", "inferAssociativeLists"]) == Some("true");
    let doc = dest.first_mut().ok_or("no dest document")?;
    let d = doc.root.get_or_insert_with(Node::map);
    let root = root_of(schema, &[&*d, o, u]);
    let anchors = krm_merge::yaml::anchors::anchors_of(d).expect("anchors within budget");
    merge3::merge(
        d,
        o,
        u,
        &Context::new(schema, root, &anchors).with(merge3::Options {
            infer_keys: infer,
            ..merge3::Options::default()
        }),
    )
    .map_err(|e| e.to_string())?;
    let mut out = String::new();
    emit_document(doc, &mut out);
    Ok(out)
}

#[test]
fn kyaml_merge3_corpus() {
    let schema = merge3_schema();
    let mut problems = Vec::new();
    let mut report = Vec::new();
    let mut notes = Vec::new();
    for (file, top) in corpus("kyaml-merge3") {
        let cases = cases(&top);
        let mut counts = [0usize; 4];
        for case in &cases {
            let name = text(case, &["name"]).unwrap_or_default();
            let expected = text(case, &["expected"]).unwrap_or_default();
            let got = match run_merge3(case, &schema) {
                Ok(out) => {
                    // Idempotent: merged again into its own output, nothing changes.
                    let input = |k: &str| text(case, &["inputs", k]).unwrap_or_default();
                    match merge3_texts(case, &schema, input("original"), input("updated"), &out) {
                        Ok(again) if again == out => {}
                        Ok(again) => problems.push(format!(
                            "{file}: {name}: not idempotent:\n{out}\n---\n{again}"
                        )),
                        Err(e) => problems.push(format!("{file}: {name}: second run: {e}")),
                    }
                    agreement(&out, expected)
                }
                Err(e) => {
                    problems.push(format!("{file}: {name}: error {e}"));
                    Agreement::Differs
                }
            };
            counts[got as usize] += 1;
            let listed = MERGE3_EXPECT
                .iter()
                .find(|(f, n, _)| *f == file && *n == name);
            let want = match listed.map(|(_, _, e)| e) {
                None => Agreement::Exact,
                Some(Expect::Layout(why)) => {
                    notes.push(format!(
                        "{file}: {name}: same tree, other whitespace: {why}"
                    ));
                    Agreement::Layout
                }
                Some(Expect::Unordered(why)) => {
                    notes.push(format!("{file}: {name}: same up to key order: {why}"));
                    Agreement::Unordered
                }
            };
            if got != want {
                let out = run_merge3(case, &schema).unwrap_or_default();
                problems.push(format!(
                    "{file}: {name}: {got:?}, listed as {want:?}\n--- expected\n{expected}\n--- got\n{out}"
                ));
            }
        }
        report.push(format!(
            "{file}: {} cases: {} exact, {} same tree (whitespace), {} same up to key order, {} differ",
            cases.len(),
            counts[3],
            counts[2],
            counts[1],
            counts[0]
        ));
    }
    println!("kyaml-merge3:\n  {}", report.join("\n  "));
    println!("not exact, as listed:\n  {}", notes.join("\n  "));
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ----- k8s-strategicpatch three-way cases through apply::three_way -------------------------

use krm_merge::merge::apply;
use serde_json::{json, Map, Value};

/// The suite's test types (`schema.types` in each file's header) as an OpenAPI v2 document whose
/// root type is bound to the kind `v1/MergeItem`.
fn k8s_schema(header: &Node<'_>) -> (Schema, Cursor) {
    let types = header
        .get("types")
        .map(|t| t.entries().to_vec())
        .unwrap_or_default();
    let names: Vec<String> = types
        .iter()
        .filter_map(|e| e.key.as_str().map(str::to_owned))
        .collect();
    let root_type = header.str_at(&["root"]).unwrap_or("mergeItem").to_owned();
    let mut defs = Map::new();
    for t in &types {
        let name = t.key.as_str().unwrap_or_default();
        let mut props = Map::new();
        for f in t.value.entries() {
            let field = f.key.as_str().unwrap_or_default();
            let get = |k: &str| f.value.str_at(&[k]).map(str::to_owned);
            let reference = |t: &str| json!({ "$ref": format!("#/definitions/{t}") });
            let mut s = match get("type").as_deref() {
                Some("list") => {
                    let items = get("items").unwrap_or_default();
                    let items = if names.contains(&items) {
                        reference(&items)
                    } else {
                        json!({ "type": items })
                    };
                    json!({ "type": "array", "items": items })
                }
                Some("map") => {
                    json!({ "type": "object", "additionalProperties": { "type": get("values") } })
                }
                // `mergeItemPtr` is declared as a *MergeItem but the raw cases also give it a list
                // of mergeItem merged by name; as a list the cursor reaches the same element type.
                Some("object") if get("patchMergeKey").is_some() => match get("ref") {
                    Some(r) if names.contains(&r) => {
                        json!({ "type": "array", "items": reference(&r) })
                    }
                    _ => json!({ "type": "object" }),
                },
                Some("object") => match get("ref") {
                    Some(r) if names.contains(&r) => reference(&r),
                    _ => json!({ "type": "object" }),
                },
                Some(other) => json!({ "type": other }),
                None => json!({}),
            };
            if let Some(obj) = s.as_object_mut() {
                if let Some(st) = get("patchStrategy") {
                    obj.insert("x-kubernetes-patch-strategy".into(), Value::String(st));
                }
                if let Some(k) = get("patchMergeKey") {
                    obj.insert("x-kubernetes-patch-merge-key".into(), Value::String(k));
                }
            }
            props.insert(field.to_owned(), s);
        }
        let mut def = json!({ "type": "object", "properties": props });
        if name == root_type {
            def["x-kubernetes-group-version-kind"] =
                json!([{ "group": "", "version": "v1", "kind": "MergeItem" }]);
        }
        defs.insert(name.to_owned(), def);
    }
    let mut schema = Schema::builtin();
    schema
        .add_openapi_v2(&json!({ "definitions": defs }))
        .unwrap_or_else(|e| panic!("test schema: {e}"));
    let root = schema.root("", "v1", "MergeItem");
    assert!(!root.is_unknown(), "the test schema binds its root type");
    (schema, root)
}

fn json_of(node: &Node<'_>) -> Value {
    krm_merge::yaml::to_json(node).unwrap_or_else(|e| panic!("{e}"))
}

/// Go's `fmt.Sprintf("%v", x)` for the JSON values these tests hold.
fn go_v(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "<nil>".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// apimachinery's `sortMergeListsByName`: merge lists of maps sorted by their merge key's `%v`,
/// merge lists of scalars de-duplicated and sorted; other lists left alone.
fn sort_merge_lists(v: &mut Value, schema: &Schema, at: Cursor) {
    let Value::Object(o) = v else {
        return;
    };
    for (k, x) in o.iter_mut() {
        let (meta, child) = schema.field(at, k);
        match x {
            Value::Object(_) => sort_merge_lists(x, schema, child),
            Value::Array(items) => match &meta.list {
                Some(krm_merge::schema::ListMerge::Map { keys })
                    if items.iter().all(Value::is_object) =>
                {
                    let key = keys.first().map(|k| k.name.clone()).unwrap_or_default();
                    for i in items.iter_mut() {
                        sort_merge_lists(i, schema, child);
                    }
                    items.sort_by_key(|i| go_v(i.get(&key)));
                }
                Some(krm_merge::schema::ListMerge::Set)
                | Some(krm_merge::schema::ListMerge::Map { .. }) => {
                    let mut seen: Vec<Value> = Vec::new();
                    for i in items.drain(..) {
                        if !seen.contains(&i) {
                            seen.push(i);
                        }
                    }
                    seen.sort_by_key(|i| go_v(Some(i)));
                    *items = seen;
                }
                _ => {}
            },
            _ => {}
        }
    }
}

/// Three-way cases that do not give upstream's result, and why.
const THREEWAY_EXPECT: &[(&str, &str, &str)] = &[(
    "unknown_field",
    "diff/ThreeWay",
    "Go-only: upstream expects patch creation to fail because `complex` is not a field of its Go \
     test struct (`unable to find api field`) and gives no result; we need no schema for a field \
     (unknown maps merge key by key, as kubectl does for them with an OpenAPI schema) and set \
     complex.nested to false",
)];

fn run_three_way(case: &Node<'_>, schema: &Schema, root: Cursor) -> Result<Value, String> {
    let input = |k: &str| -> Result<Option<Node<'static>>, String> {
        match case.str_at(&["inputs", k]) {
            None => Ok(None),
            Some(t) => {
                let docs = parse_stream(t).map_err(|e| format!("{k}: {e}"))?;
                Ok(docs
                    .into_iter()
                    .next()
                    .and_then(|d| d.root)
                    .map(Node::into_owned))
            }
        }
    };
    let original = input("original")?;
    let modified = input("modified")?.unwrap_or_else(Node::map);
    let mut live = input("current")?.unwrap_or_else(Node::map);
    let opts = apply::Options::default();
    apply::three_way(
        &mut live,
        original.as_ref(),
        &modified,
        &Context::new(schema, root, &Default::default()).with(opts),
    )
    .map_err(|e| e.to_string())?;
    // Idempotent: applied again, with what was just applied as the last applied configuration.
    let mut again = live.clone();
    apply::three_way(
        &mut again,
        Some(&modified),
        &modified,
        &Context::new(schema, root, &Default::default()).with(opts),
    )
    .map_err(|e| e.to_string())?;
    if json_of(&again) != json_of(&live) {
        return Err(format!(
            "not idempotent: {} then {}",
            json_of(&live),
            json_of(&again)
        ));
    }
    Ok(json_of(&live))
}

#[test]
fn k8s_strategicpatch_three_way_corpus() {
    let mut problems = Vec::new();
    let mut report = Vec::new();
    let mut notes = Vec::new();
    for (file, top) in corpus("k8s-strategicpatch") {
        let cases: Vec<Node<'static>> = cases(&top)
            .into_iter()
            .filter(|c| c.str_at(&["op"]) == Some("k8s-threeway"))
            .collect();
        if cases.is_empty() {
            continue;
        }
        let (schema, root) = k8s_schema(top.get("schema").unwrap_or(&Node::map()));
        let (mut pass, mut listed) = (0, 0);
        for case in &cases {
            let name = case.str_at(&["name"]).unwrap_or_default();
            let known = THREEWAY_EXPECT
                .iter()
                .find(|(f, n, _)| *f == file && *n == name);
            let Some(expected_text) = case.str_at(&["expected"]) else {
                match known {
                    Some((_, _, why)) => {
                        notes.push(format!("{file}: {name}: {why}"));
                        listed += 1;
                    }
                    None => problems.push(format!(
                        "{file}: {name}: no expected result, and not listed"
                    )),
                }
                continue;
            };
            let sorted = case.str_at(&["options", "sortMergeLists"]) == Some("true");
            let expected = parse_stream(expected_text)
                .ok()
                .and_then(|d| d.into_iter().next())
                .and_then(|d| d.root)
                .map(|n| json_of(&n))
                .unwrap_or(Value::Null);
            let outcome = run_three_way(case, &schema, root).map(|mut got| {
                let mut want = expected.clone();
                if sorted {
                    sort_merge_lists(&mut got, &schema, root);
                    sort_merge_lists(&mut want, &schema, root);
                }
                (got == want, got, want)
            });
            let ok = matches!(outcome, Ok((true, _, _)));
            match (ok, known) {
                (true, None) => pass += 1,
                (false, Some((_, _, why))) => {
                    listed += 1;
                    notes.push(format!("{file}: {name}: {why}"));
                }
                (true, Some(_)) => problems.push(format!("{file}: {name}: passes but is listed")),
                (false, None) => problems.push(match outcome {
                    Ok((_, got, want)) => format!(
                        "{file}: {name}\n  want {want}\n  got  {got}\n  inputs {}",
                        show_inputs(case)
                    ),
                    Err(e) => format!("{file}: {name}: error {e}"),
                }),
            }
        }
        report.push(format!(
            "{file}: {} three-way cases: {pass} pass, {listed} listed",
            cases.len()
        ));
    }
    println!(
        "k8s-strategicpatch (k8s-threeway):\n  {}",
        report.join("\n  ")
    );
    println!("listed:\n  {}", notes.join("\n  "));
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn show_inputs(case: &Node<'_>) -> String {
    ["original", "modified", "current"]
        .iter()
        .map(|k| {
            format!(
                "{k}: {}",
                case.str_at(&["inputs", k])
                    .unwrap_or("-")
                    .replace('\n', "\\n")
            )
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

// ----- hostile shapes: large and deep inputs ------------------------------------------------

fn parse_one(text: &str) -> Node<'static> {
    parse_stream(text)
        .ok()
        .and_then(|d| d.into_iter().next())
        .and_then(|d| d.root)
        .map(Node::into_owned)
        .unwrap_or_else(Node::map)
}

/// Tens of thousands of keys and list elements: pairing is by index, not by scanning, so this
/// takes a moment rather than minutes.
#[test]
fn large_maps_and_lists_stay_fast() {
    const N: usize = 20_000;
    let doc = |tag: &str| {
        let mut s = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers:\n");
        for i in 0..N {
            s.push_str(&format!("  - f{i}\n"));
        }
        s.push_str("data:\n");
        for i in 0..N {
            s.push_str(&format!(
                "  k{i}: v{i}{}\n",
                if i % 7 == 0 { tag } else { "" }
            ));
        }
        s.push_str("spec:\n  items:\n");
        for i in 0..N {
            s.push_str(&format!(
                "  - name: n{i}\n    v: {i}{}\n",
                if i % 5 == 0 { tag } else { "" }
            ));
        }
        s
    };
    let (o, u, d) = (
        parse_one(&doc("")),
        parse_one(&doc("u")),
        parse_one(&doc("d")),
    );
    let schema = Schema::builtin();
    let root = schema.root("", "v1", "ConfigMap");
    let mut dest = d.clone();
    let conflicts = merge3::merge(
        &mut dest,
        &o,
        &u,
        &Context::new(&schema, root, &Default::default()).with(merge3::Options::default()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let both_changed =
        (0..N).filter(|i| i % 7 == 0).count() + (0..N).filter(|i| i % 5 == 0).count();
    assert_eq!(
        conflicts.len(),
        both_changed,
        "every field both sides changed"
    );
    let mut live = d.clone();
    apply::three_way(
        &mut live,
        Some(&o),
        &u,
        &Context::new(&schema, root, &Default::default()).with(apply::Options { infer_keys: true }),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json_of(&live), json_of(&u));
}

/// Nesting as deep as the parser allows ([`krm_merge::yaml::MAX_DEPTH`]) merges without running
/// out of stack on a thread the size of a main thread (8 MiB), which is where the binary merges.
/// Debug builds need about 6.5 KB of stack per level for merge3 and 4.5 KB for apply (merge2:
/// 4.8 KB), so a default 2 MiB test thread would not do at this depth; release builds need far
/// less.
#[test]
fn deep_nesting() {
    let run = || {
        let depth = krm_merge::yaml::MAX_DEPTH - 2;
        let doc = |leaf: &str| {
            let mut s = String::new();
            for i in 0..depth {
                s.push_str(&" ".repeat(i));
                s.push_str("a:\n");
            }
            s.push_str(&" ".repeat(depth));
            s.push_str(&format!("leaf: {leaf}\n"));
            s
        };
        let (o, u) = (parse_one(&doc("1")), parse_one(&doc("2")));
        assert!(o.get("a").is_some(), "the document parses at this depth");
        let schema = Schema::builtin();
        let mut dest = parse_one(&doc("3"));
        let opts = merge3::Options::default();
        let conflicts = merge3::merge(
            &mut dest,
            &o,
            &u,
            &Context::new(&schema, Cursor::default(), &Default::default()).with(opts),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(conflicts.len(), 1);
        assert_eq!(json_of(&dest), json_of(&u));
        let mut live = parse_one(&doc("3"));
        let opts = apply::Options::default();
        apply::three_way(
            &mut live,
            Some(&o),
            &u,
            &Context::new(&schema, Cursor::default(), &Default::default()).with(opts),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(json_of(&live), json_of(&u));
    };
    let worker = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(run)
        .unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = worker.join() {
        std::panic::resume_unwind(e);
    }
}
