//! No data loss: for every class of error, nothing half done is written. A stream (standalone
//! mode, the exec plugin) writes nothing to stdout, so that a pipe never carries unpatched
//! resources; a ResourceList (KRM mode) comes back with the same items, both through the
//! item-by-item path (a block ResourceList, whose text comes back unchanged with the results
//! after it) and through the whole-input path (a ResourceList that already has `results:`, and
//! a JSON one). Through the binary.

use krm_merge::yaml::{self, Node};
use serde_json::Value;

use crate::support::*;

/// Runs the binary with `args` and `stdin`, stdout kept as bytes.
fn run(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let out = run_bytes(args, stdin);
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The documents of a stream as data (aliases stay aliases: an alias bomb stays small).
fn data(text: &str) -> Vec<Node<'static>> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .filter_map(|d| d.root)
        .map(Node::into_owned)
        .collect()
}

/// Equal data, item by item.
fn same(a: &[Node<'_>], b: &[Node<'_>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_data(y))
}

/// The items and the results of a ResourceList.
fn items_and_results(stdout: &str) -> (Vec<Node<'static>>, Vec<Value>) {
    let docs = yaml::parse_stream(stdout).unwrap_or_else(|e| panic!("not YAML: {e}\n{stdout}"));
    let root = docs.into_iter().find_map(|d| d.root).expect("a document");
    assert_eq!(root.str_at(&["kind"]), Some("ResourceList"), "{stdout}");
    let items = root
        .get("items")
        .map(|n| n.items().iter().cloned().map(Node::into_owned).collect())
        .unwrap_or_default();
    let results = root
        .get("results")
        .map(|n| {
            n.items()
                .iter()
                .map(|r| yaml::to_json(r).expect("JSON"))
                .collect()
        })
        .unwrap_or_default();
    (items, results)
}

fn expanded(mut nodes: Vec<Node<'static>>) -> Vec<Node<'static>> {
    for n in &mut nodes {
        n.expand_aliases(2_000_000).expect("aliases");
    }
    nodes
}

/// A ResourceList as JSON (only its items may have aliases: they are expanded).
fn to_json_text(rl: &str) -> String {
    let mut root = data(rl).remove(0);
    if let Some(items) = root.get_mut("items").and_then(Node::items_mut) {
        for i in items {
            i.expand_aliases(2_000_000).expect("aliases");
        }
    }
    yaml::to_json(&root).expect("JSON").to_string()
}

/// `text` indented by `by` (empty lines kept empty).
fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_owned()
            } else {
                format!("{by}{l}\n")
            }
        })
        .collect()
}

/// The documents of a stream as the items of a block sequence at column 0, each keeping its
/// text (comments, styles).
fn as_items(stream: &str) -> String {
    stream
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| {
            d.lines()
                .enumerate()
                .map(|(i, l)| match (i, l.is_empty()) {
                    (_, true) => "\n".to_owned(),
                    (0, false) => format!("- {l}\n"),
                    _ => format!("  {l}\n"),
                })
                .collect::<String>()
        })
        .collect()
}

fn rl(items: &str, config: &str, results: bool) -> String {
    let mut s = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}functionConfig:\n{}",
        indent(config, "  ")
    );
    if results {
        s.push_str("results:\n- message: from an earlier function\n  severity: info\n");
    }
    s
}

/// The resources most cases use: comments, quoting, a block scalar, a flow map, an anchor.
const ITEMS: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # the front end
  labels: {app: web}
spec:
  replicas: 5
  paused: true
  template:
    spec:
      containers:
      - name: app
        image: 'nginx:1.25'
        args: [--port, \"8080\"]
---
# a config map
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  script: |
    echo hello
  args: &args [--port, \"8080\"]
  copy: *args
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  replicas: 1
";

fn merge_config(patches: &str) -> String {
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: no-loss\nspec:\n  patches:\n{}",
        indent(patches, "  ")
    )
}

/// Runs one error class through every path and checks that nothing was lost.
///
/// `stream`: the resources as a YAML stream; `config`: the functionConfig; `want`: a piece of
/// the error message; `json`: also as a JSON ResourceList (which has no aliases).
fn nothing_lost(class: &str, stream: &str, config: &str, want: &str, json: bool) {
    // 1. A stream (standalone): nothing on stdout, exit 1, the error on stderr.
    let d = std::env::temp_dir().join(format!(
        "krm-merge-noloss-{}-{}",
        std::process::id(),
        class.replace(' ', "-")
    ));
    std::fs::create_dir_all(&d).expect("temp dir");
    std::fs::write(d.join("fn.yaml"), config).expect("config");
    std::fs::write(d.join("r.yaml"), stream).expect("resources");
    let cfg = d.join("fn.yaml").display().to_string();
    let (code, stdout, stderr) = run(
        &["--config", &cfg, &d.join("r.yaml").display().to_string()],
        b"",
    );
    assert_eq!(code, 1, "{class}, file: {stderr}");
    assert!(stderr.contains(want), "{class}, file: {stderr}");
    assert!(stdout.is_empty(), "{class}: an error wrote to stdout");
    // The same on stdin, and as kustomize's exec plugin.
    let (code, stdout, stderr) = run(&["--config", &cfg], stream.as_bytes());
    assert_eq!(
        (code, stdout.as_slice()),
        (1, &b""[..]),
        "{class}, stdin: {stderr}"
    );
    assert!(stderr.contains(want), "{class}, stdin: {stderr}");
    let (code, stdout, stderr) = run(&[&cfg], stream.as_bytes());
    assert_eq!(
        (code, stdout.as_slice()),
        (1, &b""[..]),
        "{class}, plugin: {stderr}"
    );
    assert!(stderr.contains(want), "{class}, plugin: {stderr}");

    let want_items = data(stream);
    // 2. A block ResourceList: read item by item; its text comes back, the results after it.
    let input = rl(&as_items(stream), config, false);
    let (code, stdout, stderr) = run(&[], input.as_bytes());
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert_eq!(code, 1, "{class}, ResourceList: {stderr}");
    assert!(
        out.starts_with(&input),
        "{class}: the ResourceList's text changed\n{out}"
    );
    let (items, results) = items_and_results(&out);
    assert!(same(&items, &want_items), "{class}, ResourceList");
    assert!(
        results
            .iter()
            .any(|r| r["severity"] == "error" && r.to_string().contains(want)),
        "{class}: {results:#?}"
    );
    // 3. The whole-input path: a ResourceList with results already, and a JSON one.
    let input = rl(&as_items(stream), config, true);
    let (code, stdout, stderr) = run(&[], input.as_bytes());
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert_eq!(code, 1, "{class}, with results: {stderr}");
    let (items, results) = items_and_results(&out);
    assert!(same(&items, &want_items), "{class}, with results");
    assert_eq!(results[0]["message"], "from an earlier function", "{class}");
    assert!(results.iter().any(|r| r["severity"] == "error"), "{class}");
    if !json {
        return;
    }
    let (code, stdout, stderr) = run(&[], to_json_text(&input).as_bytes());
    assert_eq!(code, 1, "{class}, JSON: {stderr}");
    let (items, _) = items_and_results(&String::from_utf8(stdout).expect("UTF-8"));
    assert!(same(&items, &expanded(want_items)), "{class}, JSON");
}

#[test]
fn a_patch_error_on_one_item() {
    // The first patch applies to `web`, the second fails on `worker` (no spec.paused).
    let config = merge_config(
        "- target: {kind: Deployment}\n  patch: |\n    spec: {replicas: 2}\n- target: {kind: Deployment}\n  type: json6902\n  patch: |\n    - {op: remove, path: /spec/paused}\n",
    );
    nothing_lost(
        "patch error",
        ITEMS,
        &config,
        "op 0 (remove /spec/paused): path does not exist",
        true,
    );
}

#[test]
fn a_json6902_test_that_fails() {
    let config = merge_config(
        "- target: {kind: Deployment, name: web}\n  type: json6902\n  patch: |\n    - {op: replace, path: /spec/replicas, value: 9}\n    - {op: test, path: /spec/template/spec/containers/0/image, value: 'nginx:1.26'}\n",
    );
    nothing_lost(
        "json6902 test",
        ITEMS,
        &config,
        "op 1 (test /spec/template/spec/containers/0/image): value does not match",
        true,
    );
}

#[test]
fn a_merge3_conflict_with_conflicts_error() {
    // Local replicas 5, upstream changed 1 -> 3: a conflict, an error by the option.
    let config = merge_config(
        "- type: merge3\n  options: {conflicts: error}\n  original: |\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: web}\n    spec: {replicas: 1}\n  patch: |\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: web}\n    spec: {replicas: 3}\n",
    );
    nothing_lost("merge3 conflict", ITEMS, &config, "conflict", true);
}

#[test]
fn an_invalid_config() {
    let config = merge_config("- target: {kind: Deployment}\n  patch: 'spec: {replicas: 2}'\n  options: {newListItems: sideways}\n");
    nothing_lost(
        "invalid config",
        ITEMS,
        &config,
        "spec.patches[0].options.newListItems",
        true,
    );
    // A patch that selects nothing without a target is an error too.
    let config = merge_config("- patch: |\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: nope}\n    data: {a: b}\n");
    nothing_lost(
        "patch selects nothing",
        ITEMS,
        &config,
        "matches no resource",
        true,
    );
}

#[test]
fn an_alias_error() {
    // Anchors nested 20 deep around 60,000 scalars: copying them for a merge into the alias
    // would make 1.2 million nodes, over the budget (the alias itself is not made a copy
    // first, as an alias bomb is beside it).
    let mut s = format!("[{}]", vec!["1"; 60_000].join(","));
    for k in (0..20).rev() {
        s = format!("&a{k} [{s}]");
    }
    // Nine levels of nine aliases beside them (387 million strings expanded): the aliases stay.
    let mut bomb = "  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n".to_owned();
    for w in ["a", "b", "c", "d", "e", "f", "g", "h", "i"].windows(2) {
        bomb.push_str(&format!(
            "  {}: &{} [{}]\n",
            w[1],
            w[1],
            vec![format!("*{}", w[0]); 9].join(", ")
        ));
    }
    let stream = format!("{ITEMS}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: {s}\n  y: *a19\n{bomb}");
    let config =
        merge_config("- target: {kind: ConfigMap}\n  patch: |\n    metadata: {labels: {a: b}}\n");
    nothing_lost("alias error", &stream, &config, "alias bomb", false);
}

#[test]
fn an_item_that_is_not_a_resource() {
    let stream = format!("{ITEMS}---\n- just\n- a list # not a resource\n");
    let config = merge_config("- target: {kind: Deployment}\n  patch: 'spec: {replicas: 2}'\n");
    // In a ResourceList the item is named by its index.
    let input = rl(
        &format!("{}- just text # c\n", as_items(ITEMS)),
        &config,
        false,
    );
    let (code, stdout, stderr) = run(&[], input.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("items[3] is not a resource"), "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(out.starts_with(&input), "{out}");
    let (items, _) = items_and_results(&out);
    let mut want = data(ITEMS);
    want.push(Node::plain("just text"));
    assert!(same(&items, &want));
    let (code, stdout, _) = run(&[], to_json_text(&input).as_bytes());
    assert_eq!(code, 1);
    let (items, _) = items_and_results(&String::from_utf8(stdout).expect("UTF-8"));
    assert!(same(&items, &expanded(want)));
    // In a stream, by its document number.
    let d = std::env::temp_dir().join(format!("krm-merge-noloss-{}-nar", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    std::fs::write(d.join("fn.yaml"), &config).expect("config");
    let (code, stdout, stderr) = run(
        &["--config", &d.join("fn.yaml").display().to_string()],
        stream.as_bytes(),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("document 4") && stderr.contains("not a resource"),
        "{stderr}"
    );
    assert!(stdout.is_empty());
}

#[test]
fn malformed_input() {
    let config = merge_config("- target: {kind: Deployment}\n  patch: 'spec: {replicas: 2}'\n");
    let d = std::env::temp_dir().join(format!("krm-merge-noloss-{}-malformed", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    std::fs::write(d.join("fn.yaml"), &config).expect("config");
    let cfg = d.join("fn.yaml").display().to_string();
    for (what, bad) in [
        ("an unclosed flow map", "data: {a: 1\n"),
        ("a duplicate key", "data:\n  a: 1\n  a: 2\n"),
        ("a tab as indentation", "data:\n\ta: 1\n"),
        ("an undefined alias", "data: *nope\n"),
    ] {
        // A stream: nothing on stdout, the error located (the good documents before the bad
        // one are not written either).
        let stream =
            format!("{ITEMS}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n{bad}");
        let (code, stdout, stderr) = run(&["--config", &cfg], stream.as_bytes());
        assert_eq!(code, 1, "{what}: {stderr}");
        assert!(
            stderr.contains("line ") && stderr.contains("column "),
            "{what}: {stderr}"
        );
        assert!(stdout.is_empty(), "{what}");
        // A malformed ResourceList is not YAML: there are no items to give back, only the
        // error, in a ResourceList.
        let input = rl(&as_items(&stream), &config, false);
        let (code, stdout, stderr) = run(&[], input.as_bytes());
        assert_eq!(code, 1, "{what}: {stderr}");
        let (items, results) = items_and_results(&String::from_utf8(stdout).expect("UTF-8"));
        assert!(items.is_empty());
        assert!(
            results[0]["message"]
                .as_str()
                .is_some_and(|m| m.contains("line ")),
            "{what}: {results:?}"
        );
    }
}

#[test]
fn a_patch_that_would_break_a_resource() {
    // Checked on the result of each patch on each resource: the run fails whole.
    let config = merge_config(
        "- target: {kind: Deployment}\n  patch: 'spec: {replicas: 2}'\n- target: {kind: Deployment, name: worker}\n  type: json6902\n  patch: |\n    - {op: replace, path: '', value: [1]}\n",
    );
    nothing_lost(
        "broken resource",
        ITEMS,
        &config,
        "the result would be a list, not a resource (a mapping)",
        true,
    );
    let config =
        merge_config("- target: {kind: ConfigMap}\n  type: jsonmerge\n  patch: 'metadata: [x]'\n");
    nothing_lost(
        "destroyed metadata",
        ITEMS,
        &config,
        "metadata would become a list",
        true,
    );
}

#[test]
fn a_rename_onto_another_resource() {
    let config = merge_config(
        "- target: {kind: Deployment, name: worker}\n  type: json6902\n  patch: |\n    - {op: replace, path: /metadata/name, value: web}\n",
    );
    nothing_lost(
        "rename onto another",
        ITEMS,
        &config,
        "two resources would have the same identity",
        true,
    );
}

#[test]
fn a_failed_run_keeps_anchors_shared_between_items() {
    // The first patch deletes the item holding the anchor, the second fails: the items come
    // back as they came, aliases and all.
    let items = "\
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data: &d {k: v} # shared
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
  data: *d
";
    let config = merge_config(
        "- target: {kind: ConfigMap, name: a}\n  patch: '$patch: delete'\n- target: {kind: ConfigMap, name: b}\n  type: json6902\n  patch: '[{op: remove, path: /spec}]'\n",
    );
    for with_results in [false, true] {
        let input = rl(items, &config, with_results);
        let (code, stdout, stderr) = run(&[], input.as_bytes());
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("remove /spec"), "{stderr}");
        let out = String::from_utf8(stdout).expect("UTF-8");
        if !with_results {
            assert!(out.starts_with(&input), "{out}");
        }
        assert!(
            out.contains("  data: &d {k: v} # shared\n") && out.contains("  data: *d\n"),
            "{out}"
        );
    }
}
