//! The YAML layer against the YAML test suite (tests/data/yaml-test-suite, MIT, see its README):
//! every valid case parses to its `in.json` data, its documents' source slices partition the
//! input exactly (the verbatim path), and writing its trees back gives the input byte for byte
//! — except for the cases listed in `KNOWN_LIMITS`, each with the documented limit it hits, which
//! must still read back as the same data. Every invalid case is rejected with a location, but
//! for the ones Go's YAML libraries read (`GO_READS`), which are read as Go reads them.

use std::fs;
use std::path::{Path, PathBuf};

use krm_merge::yaml::{self, Document, EmitOptions, Entry, Node};
use serde_json::Value;

/// Cases whose tree emission differs from the source, by the limit (see `src/yaml/mod.rs`).
const KNOWN_LIMITS: &[(&str, &str)] = &[
    // Whitespace at the end of a line, or on a line with nothing else, is dropped.
    ("26DV", "trailing whitespace"),
    ("4RWC", "trailing whitespace"),
    ("6HB6", "trailing whitespace"),
    ("8G76", "trailing whitespace"),
    ("DC7X", "trailing whitespace"),
    ("F8F9", "trailing whitespace"),
    ("H2RW", "trailing whitespace"),
    ("JEF9/02", "trailing whitespace"),
    ("L24T/01", "trailing whitespace"),
    // Tabs used as separation become spaces.
    ("6BCT", "tab separation"),
    ("6CA3", "tab separation"),
    ("A2M4", "tab separation"),
    ("DK95/00", "tab separation"),
    ("DK95/03", "tab separation"),
    ("DK95/04", "tab separation"),
    ("DK95/05", "tab separation"),
    ("DK95/07", "tab separation"),
    ("J3BT", "tab separation"),
    ("K54U", "tab separation"),
    ("Q5MG", "tab separation"),
    ("Y79Y/010", "tab separation"),
    // A tag whose handle a `%TAG` directive declares is written in verbatim form, so that it
    // means the same in any document the node moves to.
    ("5TYM", "tag handle"),
    ("6CK3", "tag handle"),
    ("6WLZ", "tag handle"),
    ("9WXW", "tag handle"),
    ("C4HZ", "tag handle"),
    ("CC74", "tag handle"),
    ("P76L", "tag handle"),
    ("U3C3", "tag handle"),
    ("Z9M4", "tag handle"),
    // A stream that does not end with a line break gets one.
    ("2G84/02", "no final line break"),
    ("2G84/03", "no final line break"),
    ("96NN/01", "no final line break"),
    ("SM9W/00", "no final line break"),
    ("SM9W/01", "no final line break"),
    // `!tag &anchor` is written `&anchor !tag`.
    ("CUP7", "tag before anchor"),
    ("F2C7", "tag before anchor"),
    ("HMQ5", "tag before anchor"),
    // Explicit keys (`? key`) holding collections, block scalars or several lines.
    ("5WE3", "complex key"),
    ("6PBE", "complex key"),
    ("JTV5", "complex key"),
    ("KK5P", "complex key"),
    ("M2N8/00", "complex key"),
    ("M2N8/01", "complex key"),
    ("M5DY", "complex key"),
    ("RZP5", "complex key"),
    ("V9D5", "complex key"),
    ("X8DW", "complex key"),
    ("XW4D", "complex key"),
    // An anchor or tag alone on its line before a block collection or another property.
    ("9KAX", "properties on their own line"),
    ("BU8L", "properties on their own line"),
    ("M5C3", "properties on their own line"),
    ("SKE5", "properties on their own line"),
    ("U3XV", "properties on their own line"),
    // Document markers without documents, and comments after `...` on its line.
    ("HWV9", "markers without a document"),
    ("M7A3", "markers without a document"),
    ("QT73", "markers without a document"),
    ("RTP8", "comment on a document end marker"),
];

/// Invalid YAML 1.2 that go-yaml (and so kubectl, kustomize and kpt) reads, with the data it
/// reads (as `kpt fn source` gives it for the case under a resource's fields) and the form
/// (see `src/yaml/granit.rs`). krm-merge reads them as Go does.
const GO_READS: &[(&str, &str, &str)] = &[
    (
        "9C9N",
        r#"[{"flow": ["a", "b", "c"]}]"#,
        "flow lines at the key's indentation",
    ),
    (
        "DK95/01",
        r#"[{"foo": "bar baz"}]"#,
        "a tab leading a quoted scalar's line",
    ),
    (
        "HRE5",
        r#"[{"double": "quoted ' scalar"}]"#,
        "\\' in a double-quoted scalar",
    ),
    (
        "QB6E",
        r#"[{"quoted": "a b c"}]"#,
        "quoted scalar lines at the key's indentation",
    ),
    (
        "Y79Y/003",
        r#"[[["foo", "foo"]]]"#,
        "a tab leading a flow collection's line",
    ),
    (
        "SU5Z",
        r#"[{"key": "value"}]"#,
        "a comment glued to a quoted scalar",
    ),
    (
        "9JBA",
        r#"[["a", "b", "c"]]"#,
        "a comment glued to a flow collection's end",
    ),
    ("CVW2", r#"[["a", "b", "c"]]"#, "a comment glued to a comma"),
    (
        "X4QW",
        r#"[{"block": "scalar\n"}]"#,
        "a comment glued to a block scalar's header",
    ),
    ("MUS6/00", r#"[null]"#, "a comment glued to a directive"),
];

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/yaml-test-suite");
    let mut out = Vec::new();
    for e in fs::read_dir(&root).expect("yaml-test-suite data") {
        let p = e.expect("dir entry").path();
        if !p.is_dir() {
            continue;
        }
        if p.join("in.yaml").exists() {
            out.push(p.clone());
        }
        for s in fs::read_dir(&p).expect("case dir") {
            let s = s.expect("dir entry").path();
            if s.is_dir() && s.join("in.yaml").exists() {
                out.push(s);
            }
        }
    }
    out.sort();
    assert!(
        out.len() > 350,
        "the suite data is missing: {} cases",
        out.len()
    );
    out
}

fn case_name(p: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/yaml-test-suite");
    p.strip_prefix(&root)
        .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
}

/// The data of the documents that have content, with numbers normalised to f64 (the suite
/// writes `450.00` as `450`).
fn data(docs: &[Document<'_>]) -> Vec<Value> {
    docs.iter()
        .filter(|d| d.root.is_some())
        .map(|d| {
            let mut root = d.root.clone().expect("filtered");
            root.expand_aliases(1_000_000).expect("aliases resolve");
            normalise(yaml::to_json(&root).expect("JSON-compatible"))
        })
        .collect()
}

/// Same documents with the same data (works where JSON cannot: complex keys).
fn same_trees(a: &[Document<'_>], b: &[Document<'_>]) -> bool {
    let a: Vec<_> = a.iter().filter_map(|d| d.root.as_ref()).collect();
    let b: Vec<_> = b.iter().filter_map(|d| d.root.as_ref()).collect();
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.same_data(y))
}

fn normalise(v: Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Number(n), Value::Number),
        Value::Array(a) => Value::Array(a.into_iter().map(normalise).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, normalise(v))).collect()),
        v => v,
    }
}

#[test]
fn yaml_test_suite() {
    let mut failures = Vec::new();
    let mut limits_hit = Vec::new();
    for case in cases() {
        let name = case_name(&case);
        let src = fs::read_to_string(case.join("in.yaml")).expect("in.yaml");
        let parsed = yaml::parse_stream(&src);
        if let Some((_, want, form)) = GO_READS.iter().find(|(n, _, _)| *n == name) {
            let want: Vec<Value> = serde_json::from_str(want).expect("GO_READS data");
            let want: Vec<Value> = want.into_iter().map(normalise).collect();
            match &parsed {
                Ok(docs) if data(docs) == want => {}
                Ok(docs) => failures.push(format!("{name} ({form}): read as {:?}", data(docs))),
                Err(e) => failures.push(format!("{name} ({form}): not read as Go reads: {e}")),
            }
            continue;
        }
        if case.join("error").exists() {
            match parsed {
                Ok(_) => failures.push(format!("{name}: invalid YAML accepted")),
                Err(e) if e.line == 0 || e.column == 0 => {
                    failures.push(format!("{name}: error without a place: {e}"))
                }
                Err(_) => {}
            }
            continue;
        }
        let docs = match parsed {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{name}: valid YAML rejected: {e}"));
                continue;
            }
        };
        // The verbatim path: the documents' source slices are the whole input, in order.
        let joined: String = docs.iter().map(|d| d.text).collect();
        if joined != src {
            failures.push(format!("{name}: document texts do not partition the input"));
        }
        if let Ok(j) = fs::read_to_string(case.join("in.json")) {
            let want: Vec<Value> = serde_json::Deserializer::from_str(&j)
                .into_iter()
                .map(|v| normalise(v.expect("in.json")))
                .collect();
            if data(&docs) != want {
                failures.push(format!("{name}: data differs from in.json"));
            }
        }
        let mut out = String::new();
        yaml::emit_stream(&docs, &mut out);
        let limit = KNOWN_LIMITS.iter().find(|(n, _)| *n == name);
        match (out == src, limit) {
            (true, None) => {}
            (true, Some(_)) => failures.push(format!(
                "{name}: round-trips now; remove it from KNOWN_LIMITS"
            )),
            (false, None) => failures.push(format!(
                "{name}: tree emission differs from the source:\n{out}"
            )),
            (false, Some((_, why))) => {
                limits_hit.push(*why);
                match yaml::parse_stream(&out) {
                    Ok(again) if same_trees(&again, &docs) => {}
                    Ok(_) => failures.push(format!(
                        "{name} ({why}): re-emitted text reads back as other data"
                    )),
                    Err(e) => failures.push(format!(
                        "{name} ({why}): re-emitted text does not parse: {e}"
                    )),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(limits_hit.len(), KNOWN_LIMITS.len());
}

/// Streams with little or nothing in them: their documents' texts still make up the whole
/// input, and writing the trees back gives it again. A byte order mark alone had no document
/// to carry it and was lost (found by the yaml_roundtrip fuzz target).
#[test]
fn almost_empty_streams_are_partitioned() {
    for src in [
        "",
        "\n",
        "\u{feff}",
        "\u{feff}\n",
        "# c\n",
        "\u{feff}# c\n",
        "---\n",
        "...\n",
    ] {
        let docs = yaml::parse_stream(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        let joined: String = docs.iter().map(|d| d.text).collect();
        assert_eq!(joined, src, "{src:?}: the documents' texts");
        let mut out = String::new();
        yaml::emit_stream(&docs, &mut out);
        let back = yaml::parse_stream(&out).unwrap_or_else(|e| panic!("{src:?} -> {out:?}: {e}"));
        assert!(same_trees(&docs, &back), "{src:?} -> {out:?}");
        if src.starts_with('\u{feff}') {
            assert!(out.starts_with('\u{feff}'), "{src:?} -> {out:?}: the mark");
        }
    }
}

/// A string that ends in empty lines is rewritten in block style as a `|+` block, whose text
/// runs to the next line with content: blank lines of layout after it (before the next key or
/// item, a comment, the end of the document) would become its text, so none are written there.
/// Found by the yaml_roundtrip fuzz target (the end of a document).
#[test]
fn blank_lines_after_a_keep_block_written_anew_are_not_its_text() {
    for src in [
        "'#\n\n\n\t'\n\n\n",
        "a: '#\n\n\n'\n\n\nb: 1\n",
        "a: '#\n\n\n'\n\n# c\nb: 1\n",
        "- '#\n\n\n'\n\n- 1\n",
        "a: '#\n\n\n'\n\n\n---\nb\n",
    ] {
        let docs = yaml::parse_stream(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        let mut block = docs.clone();
        for d in &mut block {
            if let Some(r) = d.root.as_mut() {
                r.make_block();
            }
        }
        let mut out = String::new();
        yaml::emit_stream(&block, &mut out);
        let back = yaml::parse_stream(&out).unwrap_or_else(|e| panic!("{src:?} -> {out:?}: {e}"));
        assert!(same_trees(&docs, &back), "{src:?} -> {out:?}");
    }
}

/// Every node of every suite document, moved whole into another document (as its root, as a
/// value under a key at two depths, as a list item), writes out as YAML that reads back as the
/// same node. Source text kept for a node (multi-line scalars, flow collections) is shifted to
/// its new column; text that stood at a root's left edge, where nothing encloses it, moves
/// right of the key that now holds it (found by the merges fuzz target).
#[test]
fn subtrees_moved_between_documents_keep_their_data() {
    fn each_node<'a>(n: &Node<'a>, out: &mut Vec<Node<'a>>) {
        out.push(n.clone());
        for e in n.entries() {
            each_node(&e.value, out);
        }
        for i in n.items() {
            each_node(i, out);
        }
    }
    let mut failures = Vec::new();
    let mut moved = 0;
    for case in cases() {
        if case.join("error").exists() {
            continue;
        }
        let name = case_name(&case);
        let src = fs::read_to_string(case.join("in.yaml")).expect("in.yaml");
        let Ok(docs) = yaml::parse_stream(&src) else {
            continue;
        };
        let mut nodes = Vec::new();
        for root in docs.iter().filter_map(|d| d.root.as_ref()) {
            each_node(root, &mut nodes);
        }
        for node in nodes {
            // An alias needs its anchor, which may be outside the moved node.
            let mut node = node;
            if node.has_alias() && node.expand_aliases(10_000).is_err() {
                continue;
            }
            let places = [
                node.clone(),
                Node::map_of(vec![Entry::new("k", node.clone())]),
                Node::map_of(vec![Entry::new(
                    "a",
                    Node::map_of(vec![
                        Entry::new("b", Node::plain("1")),
                        Entry::new("k", node.clone()),
                    ]),
                )]),
                Node::seq_of(vec![node.clone(), Node::plain("x")]),
                Node::map_of(vec![Entry::new(
                    "s",
                    Node::seq_of(vec![Node::seq_of(vec![node.clone()])]),
                )]),
            ];
            for (i, tree) in places.iter().enumerate() {
                moved += 1;
                let text = yaml::emit_node(tree, EmitOptions::default());
                match yaml::parse_stream(&text) {
                    Ok(back) => {
                        let back = back
                            .into_iter()
                            .find_map(|d| d.root)
                            .unwrap_or_else(Node::null);
                        if !back.same_data(tree) {
                            failures.push(format!(
                                "{name} (place {i}): reads back as other data:\n{text}"
                            ));
                        }
                    }
                    Err(e) => {
                        failures.push(format!("{name} (place {i}): does not parse: {e}\n{text}"))
                    }
                }
            }
        }
    }
    assert!(moved > 1000, "only {moved} nodes moved");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every YAML text of the repository: the suite's cases (valid and invalid), the fixtures, the
/// examples, the functions' packages and the fast reader's fuzz regressions.
fn repository_yaml() -> Vec<(String, String)> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        if p.is_dir() {
            for e in fs::read_dir(p).expect("readable directory") {
                walk(&e.expect("dir entry").path(), out);
            }
        } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(p.to_path_buf());
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/data", "tests/fixtures", "examples", "functions"] {
        walk(&root.join(dir), &mut files);
    }
    // The inputs the fast_reader fuzz target found differences on (named, without extension).
    if let Ok(found) = fs::read_dir(root.join("fuzz/regressions/fast_reader")) {
        files.extend(found.map(|e| e.expect("dir entry").path()));
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|f| {
            let text = fs::read_to_string(&f).ok()?;
            Some((
                f.strip_prefix(root).unwrap_or(&f).display().to_string(),
                text,
            ))
        })
        .collect()
}

/// The fast reader (`src/yaml/fast.rs`) against granit-parser alone: the events it hands over
/// are granit's first ones, and the documents (trees, layout, source texts) or the error are
/// the same. `check_fast_reader` compares the events, which the debug build's check in the
/// reader does only where the fast reader stops.
fn fast_reader_agrees(name: &str, src: &str) -> Result<bool, String> {
    let whole = yaml::check_fast_reader(src).map_err(|e| format!("{name}: {e}"))?;
    let fast = yaml::parse_stream(src).map(|d| format!("{d:?}"));
    let granit = yaml::parse_stream_granit(src).map(|d| format!("{d:?}"));
    if fast != granit {
        return Err(format!("{name}: the trees or errors differ"));
    }
    Ok(whole)
}

#[test]
fn the_fast_reader_gives_what_granit_gives() {
    let mut failures = Vec::new();
    let (mut packages, mut whole) = (0, 0);
    for (name, src) in &repository_yaml() {
        match fast_reader_agrees(name, src) {
            Ok(w) if !name.contains("yaml-test-suite") => {
                packages += 1;
                whole += usize::from(w);
            }
            Ok(_) => {}
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Most of the YAML outside the suite is what real packages are made of: read by the fast
    // reader to its end (if it stopped early everywhere, the comparison above would hold
    // trivially).
    assert!(
        whole * 4 > packages * 3,
        "the fast reader read only {whole} of {packages} texts whole"
    );
}

/// The same for every text made from a generated resource and a ResourceList (the bench's
/// YAML: comments, quoting, flow values, block scalars, `- # comment` items) by deleting a byte,
/// or by inserting one of the characters that change how YAML reads, at each line's start and
/// after each `-` or `:`: where the fast reader stops, granit-parser goes on from the same
/// place and reports the same error.
#[test]
fn the_fast_reader_gives_what_granit_gives_on_near_misses() {
    let resource = "# Deployment 0\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-0   # the name\n  labels:\n    part-of: \"system-0\"\n    esc: \"a\\tb\\u00e9\"\n    q: 'it''s'\n  annotations:\n    description: |\n      Two\n\n      lines.\n    folded: >-\n      one\n      two\nspec:\n  strategy: {maxSurge: 25%, maxUnavailable: 0}\n  containers:\n  # container 0\n  - name: c0\n    args: [\"--port\", '8080', x]\n    env:\n    - name: A\n      value: \"1\"   # one\n    empty:\n---\n";
    let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- # Deployment 0\n  kind: Deployment\n  spec:\n    x:\n    - a\n    -\n      b: 1\n- kind: Service\n...\n";
    let inserts = [
        " ", "\n", "#", ":", "-", "'", "\"", "|", ">", "[", "{", "\t", "&a ", "*a", "!t ", "? ",
        "- ", " #", "---\n", "é",
    ];
    let mut failures = Vec::new();
    for base in [resource, list] {
        let cuts: Vec<usize> = (0..=base.len())
            .filter(|&i| base.is_char_boundary(i))
            .collect();
        for w in cuts.windows(2) {
            let text = format!("{}{}", &base[..w[0]], &base[w[1]..]);
            if let Err(e) = fast_reader_agrees(&format!("without byte {}", w[0]), &text) {
                failures.push(format!("{e}\n  {text:?}"));
            }
        }
        let b = base.as_bytes();
        let places = cuts
            .iter()
            .copied()
            .filter(|&i| i == 0 || matches!(b[i - 1], b'\n' | b'-' | b':' | b' '));
        for i in places {
            for ins in inserts {
                let text = format!("{}{ins}{}", &base[..i], &base[i..]);
                if let Err(e) = fast_reader_agrees(&format!("{ins:?} at {i}"), &text) {
                    failures.push(format!("{e}\n  {text:?}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// granit-parser's own bounds, past which it reads a text otherwise or refuses it, are left to
/// it: an implicit key of more than 1,024 characters in a flow mapping (it is read as a key
/// without a value), and a run of more than 2^20 comments while a key's value is open (refused,
/// with the line). The fast reader read both on before; found by checking the two on long keys
/// and long comment runs.
#[test]
fn the_fast_reader_leaves_granits_bounds_to_granit() {
    let mut texts = Vec::new();
    for n in [1000, 1024, 1025, 1100] {
        let key = "a".repeat(n);
        texts.push(format!("k: {{{key}: b}}\n"));
        texts.push(format!("k: {{\"{key}\": b, c: d}}\n"));
        texts.push(format!("{key}: b\n"));
        texts.push(format!("- \"{key}\": b\n"));
    }
    let comments = "#\n".repeat((1 << 20) + 8);
    texts.push(format!("k:\n{comments}- 2\n"));
    texts.push(format!("k:\n  a: 1\n{comments}j: 2\n"));
    for (i, text) in texts.iter().enumerate() {
        if let Err(e) = fast_reader_agrees(&format!("text {i}"), text) {
            panic!("{e}");
        }
    }
    let refused = yaml::parse_stream(&texts[texts.len() - 2]).expect_err("too many comments");
    assert!(refused.line > 1 << 20, "{refused}");
}

/// What the fast reader does not read costs that document, not the rest of the stream: the
/// parser reads from the end of the last document the fast reader handed over to the next
/// `---`, and the fast reader takes over again there; the trees are the same as the parser's.
#[test]
fn the_fast_reader_leaves_only_the_documents_it_does_not_read() {
    let plain = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: 'x\n    y'\n";
    // An explicit key: not read by the fast reader.
    let odd = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  ? k\n  : v\n";
    let odd_doc = format!("---\n{odd}");
    for n in [1, 3, 40] {
        let mut stream = String::new();
        for i in 0..n {
            stream.push_str("---\n");
            stream.push_str(&plain.replace("name: a", &format!("name: a{i}")));
        }
        let before = stream.len();
        stream.push_str(&odd_doc);
        for i in 0..n {
            stream.push_str("---\n");
            stream.push_str(&plain.replace("name: a", &format!("name: c{i}")));
        }
        let fast = yaml::fast_reader_coverage(&stream).expect("YAML");
        assert_eq!(fast, stream.len() - odd_doc.len(), "{n}: {before}");
        if let Err(e) = fast_reader_agrees(&format!("{n} documents around"), &stream) {
            panic!("{e}");
        }
    }
    // Where it stops late in a document, the parser goes back to that document's start only.
    let late = format!("{plain}---\n{plain}  z: [a,\n b]\n  ? kk\n  : v\n---\n{plain}");
    let fast = yaml::fast_reader_coverage(&late).expect("YAML");
    let second = late.find("---\n").expect("---");
    let third = late.rfind("---\n").expect("---");
    assert_eq!(fast, late.len() - (third - second));
    fast_reader_agrees("late", &late).unwrap_or_else(|e| panic!("{e}"));
}

/// Two shapes of real files the fast reader reads to their end (found by measuring the corpus):
/// a document whose root mapping or sequence stands indented (velero's CRDs, `---` then every
/// line two spaces in), and JSON indented with tabs, where a tab leads the line that closes a
/// collection after a plain value (`false\n\t}`), and such flows inside block collections. Each
/// is read whole, and every text made from
/// it by deleting a byte or inserting a tab, a space or a line break reads as granit-parser
/// reads it.
#[test]
fn the_fast_reader_reads_indented_roots_and_tab_indented_json() {
    let indented = "---\n  apiVersion: v1\n  kind: ConfigMap\n  data:\n    k: v\n    l:\n    - a\n    - 'b\n  c'\n---\n  - a\n  - b: c\n    d: e\n";
    let json = "{\n\t\"kind\": \"Policy\",\n\t\"extenders\": [\n\t\t{\n\t\t\t\"weight\": 5,\n\t\t\t\"on\": false\n\t\t}\n\t],\n\t\"x\": [1,\n\t2\n\t, 3]\n}\n";
    // The same flows inside block collections, where a tab left of the block's indentation
    // is refused even before the collection's end (`- [f\n\t]`, found by the fuzz target).
    let nested = "items:\n- {\"on\": false\n  }\n- [f,\n  g\n  ]\n- k: [a\n\n   ]\n";
    let mut failures = Vec::new();
    for base in [indented, json, nested] {
        let fast = yaml::fast_reader_coverage(base).expect("YAML");
        assert_eq!(fast, base.len(), "not read whole: {base:?}");
        for i in 0..base.len() {
            let mut texts = vec![format!("{}{}", &base[..i], &base[i + 1..])];
            for ins in ["\t", " ", "\n", "\n\t"] {
                texts.push(format!("{}{ins}{}", &base[..i], &base[i..]));
            }
            for text in texts {
                if let Err(e) = fast_reader_agrees(&format!("at {i}"), &text) {
                    failures.push(format!("{e}\n  {text:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
