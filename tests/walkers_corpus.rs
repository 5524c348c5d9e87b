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

use krm_merge::merge3;
use krm_merge::schema::{Cursor, Schema};
use krm_merge::yaml::{emit_document, parse_stream, Node, ScalarStyle};

fn corpus(dir: &str) -> Vec<(String, Vec<Node<'static>>)> {
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
            let root = docs
                .into_iter()
                .next()
                .and_then(|d| d.root)
                .map(Node::into_owned)
                .unwrap_or_else(|| panic!("{}: empty", p.display()));
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let cases = root
                .get("cases")
                .map(|c| c.items().to_vec())
                .unwrap_or_default();
            (name, cases)
        })
        .collect()
}

fn text<'n>(case: &'n Node<'_>, path: &[&str]) -> Option<&'n str> {
    case.str_at(path)
}

/// How far an actual output agrees with the expected one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Agreement {
    /// Nothing better than "different".
    Differs,
    /// Same data, comments and styles, but map keys in another order.
    Unordered,
    /// Same tree (data, key order, comments, styles), different whitespace.
    Layout,
    /// The same text, after trimming surrounding whitespace (the Go test's comparison).
    Exact,
}

fn agreement(actual: &str, expected: &str) -> Agreement {
    if actual.trim() == expected.trim() {
        return Agreement::Exact;
    }
    let (Ok(a), Ok(e)) = (parse_stream(actual), parse_stream(expected)) else {
        return Agreement::Differs;
    };
    let roots = |d: &[krm_merge::yaml::Document<'_>]| -> Vec<Option<Node<'static>>> {
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

/// Same data, comment texts and quoting; map keys in the same order when `ordered`.
fn same_tree(a: &Node<'_>, b: &Node<'_>, ordered: bool) -> bool {
    let texts = |n: &Node<'_>| {
        let c = n.comments();
        let t = |v: &[krm_merge::yaml::Comment<'_>]| -> Vec<String> {
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
            Some(ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted)
        )
        .then(|| n.style())
    };
    if a.kind() != b.kind() || texts(a) != texts(b) || a.is_flow() != b.is_flow() {
        return false;
    }
    if a.is_scalar() {
        return a.same_data(b) && quoted(a) == quoted(b);
    }
    let entry_eq = |x: &krm_merge::yaml::Entry<'_>, y: &krm_merge::yaml::Entry<'_>| {
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
    let (orig_t, upd_t, dest_t) = (input("original"), input("updated"), input("dest"));
    let orig = parse_stream(&orig_t).map_err(|e| e.to_string())?;
    let upd = parse_stream(&upd_t).map_err(|e| e.to_string())?;
    let mut dest = parse_stream(&dest_t).map_err(|e| e.to_string())?;
    let empty = Node::map();
    let o = orig.first().and_then(|d| d.root.as_ref()).unwrap_or(&empty);
    let u = upd.first().and_then(|d| d.root.as_ref()).unwrap_or(&empty);
    let infer = case.str_at(&["options", "inferAssociativeLists"]) == Some("true");
    let doc = dest.first_mut().ok_or("no dest document")?;
    let d = doc.root.get_or_insert_with(Node::map);
    let root = root_of(schema, &[&*d, o, u]);
    let anchors = krm_merge::merge2::anchors_of(d);
    merge3::merge(
        d,
        o,
        u,
        schema,
        root,
        &merge3::Options { infer_keys: infer },
        &anchors,
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
    for (file, cases) in corpus("kyaml-merge3") {
        let mut counts = [0usize; 4];
        for case in &cases {
            let name = text(case, &["name"]).unwrap_or_default();
            let expected = text(case, &["expected"]).unwrap_or_default();
            let got = match run_merge3(case, &schema) {
                Ok(out) => agreement(&out, expected),
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
