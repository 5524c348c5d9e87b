//! Hostile input, through the binary: each case ends in an error result that says where (or,
//! where the input is legal, is handled correctly), exits 1 for errors, finishes (no timing
//! assertions: a test that hangs is the failure), and in KRM mode still writes a ResourceList.
//! Sizes are moderate where the point is the bound; doc/GUIDE.md, "Limits", lists the bounds.
//!
//! Cases that found a bug say so; the fix is in the same commit.

use std::path::PathBuf;

use krm_merge::yaml;

use crate::support::*;

mod patches;

/// Runs the binary with `args` and raw `stdin` bytes.
fn run(args: &[&str], stdin: &[u8]) -> Out {
    out_of(&crate::pieces::run_in(args, stdin, None))
}

/// Like [`run`], keeping stdout as bytes.
fn run_raw(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let out = crate::pieces::run_in(args, stdin, None);
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A directory of this test's own.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("krm-merge-hostile-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// `krm-merge --config fn.yaml resources.yaml`, the files written first.
fn standalone(test: &str, config: &str, resources: &[u8]) -> (i32, Vec<u8>, String) {
    let d = dir(test);
    let (c, r) = (d.join("fn.yaml"), d.join("resources.yaml"));
    std::fs::write(&c, config).expect("config file");
    std::fs::write(&r, resources).expect("resources file");
    run_raw(
        &[
            "--config",
            &c.display().to_string(),
            &r.display().to_string(),
        ],
        b"",
    )
}

/// A Merge functionConfig with these patch entries (YAML, indented as list items under
/// `patches:`).
fn merge_fn(patches: &str) -> String {
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: hostile\nspec:\n  patches:\n{patches}"
    )
}

/// A patch entry that adds a label to every `kind` resource.
fn label_patch(kind: &str) -> String {
    format!("  - target: {{kind: {kind}}}\n    patch: |\n      metadata: {{labels: {{touched: \"yes\"}}}}\n")
}

/// A block ResourceList of `items` (a YAML sequence at column 0, or empty) and `config`.
fn rl(items: &str, config: &str) -> String {
    let config: String = config.lines().map(|l| format!("  {l}\n")).collect();
    let items = if items.is_empty() {
        "items: []\n".to_owned()
    } else {
        format!("items:\n{items}")
    };
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n{items}functionConfig:\n{config}"
    )
}

/// `text` as an item of a block sequence at column 0.
fn as_item(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("- {l}\n")
            } else {
                format!("  {l}\n")
            }
        })
        .collect()
}

/// Asserts exit 1 and a ResourceList on stdout whose results hold an error whose message
/// contains every one of `want`; returns that ResourceList's items.
fn krm_error(out: &Out, want: &[&str]) -> Vec<serde_json::Value> {
    assert_eq!(
        out.code,
        1,
        "stderr: {}\nstdout: {}",
        out.stderr,
        head(&out.stdout)
    );
    let docs = yaml::parse_stream(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not YAML: {e}\n{}", head(&out.stdout)));
    let root = docs
        .iter()
        .find_map(|d| d.root.as_ref())
        .expect("a document");
    assert_eq!(root.str_at(&["kind"]), Some("ResourceList"));
    let results = results_of(&out.stdout);
    let found = results.iter().any(|r| {
        r["severity"] == "error"
            && want.iter().all(|w| {
                r["message"].as_str().is_some_and(|m| m.contains(w))
                    || r["field"]["path"].as_str().is_some_and(|p| p.contains(w))
            })
    });
    assert!(found, "no error result with {want:?}: {results:#?}");
    for w in want {
        assert!(out.stderr.contains(w), "stderr lacks {w:?}: {}", out.stderr);
    }
    items_of(&out.stdout)
}

/// The items of a ResourceList on stdout, as data (its functionConfig, which may hold an alias
/// bomb, is not expanded).
fn items_of(stdout: &str) -> Vec<serde_json::Value> {
    let docs = yaml::parse_stream(stdout).unwrap_or_else(|e| panic!("not YAML: {e}"));
    let root = docs.into_iter().find_map(|d| d.root).expect("a document");
    root.get("items")
        .map(|i| i.items().to_vec())
        .unwrap_or_default()
        .into_iter()
        .map(|mut n| {
            n.expand_aliases(1_000_000).expect("aliases");
            yaml::to_json(&n).expect("JSON")
        })
        .collect()
}

/// The results of a ResourceList on stdout (without expanding anything else).
fn results_of(stdout: &str) -> Vec<serde_json::Value> {
    let docs = yaml::parse_stream(stdout).unwrap_or_else(|e| panic!("not YAML: {e}"));
    let root = docs.into_iter().find_map(|d| d.root).expect("a document");
    root.get("results")
        .map(|r| yaml::to_json(r).expect("JSON"))
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

/// The start of a long text, for messages.
fn head(s: &str) -> &str {
    let mut end = s.len().min(2000);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The parser's message (in block and flow sequences) or ours (elsewhere) for nesting past
/// the limit.
fn too_deep(msg: &str) -> bool {
    msg.contains("recursion limit exceeded") || msg.contains("nesting deeper than 512 levels")
}

fn located(msg: &str) -> bool {
    msg.contains("line ") && msg.contains("column ")
}

const FOO: &str = "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: a\n";

// ----- nesting ------------------------------------------------------------------------------

#[test]
fn nesting_100000_deep_is_a_located_error() {
    let n = 100_000;
    let flow = format!("{FOO}data: {}{}\n", "[".repeat(n), "]".repeat(n));
    let block = format!("{FOO}data:\n{}x\n", "- ".repeat(n));
    let flow_map = format!("{FOO}data: {}{}\n", "{a: ".repeat(n), "}".repeat(n));
    for (what, doc) in [("flow", &flow), ("block", &block), ("flow map", &flow_map)] {
        // A stream: nothing on stdout, the error located.
        let (code, stdout, stderr) =
            standalone("deep", &merge_fn(&label_patch("Foo")), doc.as_bytes());
        assert_eq!(code, 1, "{what}: {stderr}");
        assert!(too_deep(&stderr) && located(&stderr), "{what}: {stderr}");
        assert!(
            stdout.is_empty(),
            "{what}: an error writes nothing to stdout"
        );
        // A ResourceList (the item path and the whole-input path).
        let input = rl(&as_item(doc), &merge_fn(&label_patch("Foo")));
        let out = run(&[], input.as_bytes());
        krm_error(&out, &["line ", "column "]);
        assert!(too_deep(&out.stderr), "{what}: {}", out.stderr);
        // In the functionConfig's patch.
        let patch = format!(
            "  - target: {{kind: Foo}}\n    patch: |\n{}",
            doc.lines()
                .map(|l| format!("      {l}\n"))
                .collect::<String>()
        );
        let out = run(&[], rl(&as_item(FOO), &merge_fn(&patch)).as_bytes());
        let items = krm_error(&out, &["spec.patches[0].patch", "of the inline text"]);
        assert!(too_deep(&out.stderr), "{what}: {}", out.stderr);
        assert_eq!(items, docs(FOO), "{what}: the items changed");
    }
}

#[test]
fn nesting_up_to_the_limit_is_fine() {
    // 500 levels inside the resource's own two (the document and `data`).
    let n = 500;
    let doc = format!("{FOO}data: {}{}\n", "[".repeat(n), "]".repeat(n));
    let (code, stdout, stderr) =
        standalone("deep-ok", &merge_fn(&label_patch("Foo")), doc.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(out.contains("touched: \"yes\""), "{out}");
    assert!(out.contains(&"[".repeat(n)), "{}", head(&out));
}

/// Every patch type walks nesting as deep as the parser allows, in a stream cut into pieces
/// too (each document then read on a thread of the pool): the stacks the binary's threads get
/// cover the walkers' recursion at the limit, in the debug builds the tests run (frames there
/// are several times larger than in release).
#[test]
fn nesting_up_to_the_limit_is_patched_on_every_thread() {
    let n = 500;
    let nest = |leaf: u32| format!("{}{{leaf: {leaf}}}{}", "{a: ".repeat(n), "}".repeat(n));
    let doc = |name: &str| {
        format!(
            "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: {name}\ndata: {}\n",
            nest(1)
        )
    };
    let stream = format!("{}---\n{}", doc("a"), doc("b"));
    let path = format!("/data/{}leaf", "a/".repeat(n));
    let merge3_doc = |leaf: u32| {
        format!(
            "      apiVersion: example.com/v1\n      kind: Foo\n      metadata:\n        name: a\n      data: {}\n",
            nest(leaf)
        )
    };
    let patches = [
        (format!("  - target: {{kind: Foo}}\n    patch: |\n      data: {}\n", nest(2)), 2),
        (format!("  - target: {{kind: Foo}}\n    type: jsonmerge\n    patch: |\n      data: {}\n", nest(3)), 3),
        (format!("  - target: {{kind: Foo}}\n    type: apply\n    patch: |\n      data: {}\n", nest(4)), 4),
        (format!("  - target: {{kind: Foo}}\n    type: json6902\n    patch: |\n      - {{op: replace, path: {path}, value: 5}}\n"), 5),
        (format!("  - type: merge3\n    original: |\n{}    patch: |\n{}", merge3_doc(1), merge3_doc(6)), 6),
    ];
    for (patch, leaf) in &patches {
        let (code, stdout, stderr) =
            standalone("deep-threads", &merge_fn(patch), stream.as_bytes());
        assert_eq!(code, 0, "{patch}: {stderr}");
        let out = String::from_utf8(stdout).expect("UTF-8");
        assert!(
            out.contains(&format!("leaf: {leaf}}}")),
            "{patch}: {}",
            head(&out)
        );
    }
}

// ----- aliases ------------------------------------------------------------------------------

/// Nine levels of nine aliases: 9^9 (387 million) strings when expanded, 400 bytes as written.
fn laughs(indent: &str) -> String {
    let mut s = format!(
        "{indent}a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(",");
        s.push_str(&format!("{indent}{}: &{} [{refs}]\n", w[1], w[1]));
    }
    s
}

#[test]
fn an_alias_bomb_in_an_item_stays_aliases() {
    let bomb = format!("{FOO}data:\n{}", laughs("  "));
    let other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n";
    let stream = format!("{bomb}---\n{other}");
    // Untouched: byte for byte.
    let (code, stdout, stderr) = standalone(
        "bomb-untouched",
        &merge_fn(&label_patch("ConfigMap")),
        stream.as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(out.starts_with(&bomb), "{out}");
    // Touched by each patch type: patched, the aliases kept, nothing expanded.
    let patches = [
        label_patch("Foo"),
        "  - target: {kind: Foo}\n    type: jsonmerge\n    patch: |\n      metadata: {labels: {touched: \"yes\"}}\n".to_owned(),
        "  - target: {kind: Foo}\n    type: apply\n    patch: |\n      metadata: {labels: {touched: \"yes\"}}\n".to_owned(),
        "  - target: {kind: Foo}\n    type: json6902\n    patch: |\n      - {op: add, path: /metadata/labels, value: {touched: \"yes\"}}\n      - {op: replace, path: /data/b/0, value: new}\n      - {op: copy, from: /data/i, path: /data/j}\n".to_owned(),
        "  - type: merge3\n    original: |\n      apiVersion: example.com/v1\n      kind: Foo\n      metadata:\n        name: a\n    patch: |\n      apiVersion: example.com/v1\n      kind: Foo\n      metadata:\n        name: a\n        labels: {touched: \"yes\"}\n".to_owned(),
    ];
    for p in &patches {
        let (code, stdout, stderr) = standalone("bomb-touched", &merge_fn(p), stream.as_bytes());
        assert_eq!(code, 0, "{p}: {stderr}");
        let out = String::from_utf8(stdout).expect("UTF-8");
        assert!(out.contains("touched"), "{p}: {out}");
        assert!(
            out.contains("i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]"),
            "{p}: {out}"
        );
        assert!(
            out.len() < 2 * stream.len() + 400,
            "{p}: expanded?\n{}",
            head(&out)
        );
        // Through a ResourceList too.
        let out = run(&[], rl(&as_item(&bomb), &merge_fn(p)).as_bytes());
        assert_eq!(out.code, 0, "{p}: {}", out.stderr);
        assert!(out.stdout.contains("*h,*h"), "{p}: {}", out.stdout);
        assert!(
            out.stdout.len() < 4000,
            "{p}: expanded?\n{}",
            head(&out.stdout)
        );
    }
}

#[test]
fn a_json_patch_test_against_an_item_bomb_is_bounded() {
    // `test` follows aliases while it compares, within a budget of node visits: it stops at the
    // first difference, and a value equal to a bomb would be over the patch's own budget.
    let bomb = format!("{FOO}data:\n{}", laughs("  "));
    let p = "  - target: {kind: Foo}\n    type: json6902\n    patch: |\n      - {op: test, path: /data/i, value: [x]}\n";
    let (code, stdout, stderr) = standalone("bomb-test", &merge_fn(p), bomb.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("op 0 (test /data/i): value does not match"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    let lols = format!("[{}]", ["lol"; 9].join(","));
    let p = format!(
        "  - target: {{kind: Foo}}\n    type: json6902\n    patch: |\n      - {{op: test, path: /data/b, value: [{}]}}\n      - {{op: add, path: /spec, value: 1}}\n",
        vec![lols; 9].join(",")
    );
    let (code, stdout, stderr) = standalone("bomb-test-ok", &merge_fn(&p), bomb.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(out.ends_with("spec: 1\n") && out.contains("*h,*h"), "{out}");
}

#[test]
fn an_alias_bomb_in_a_patch_is_a_clear_error() {
    let inline = format!(
        "  - target: {{kind: Foo}}\n    patch: |\n      data:\n{}",
        laughs("        ")
    );
    let config = merge_fn(&inline);
    let out = run(&[], rl(&as_item(FOO), &config).as_bytes());
    let items = krm_error(&out, &["spec.patches[0].patch", "alias bomb"]);
    assert_eq!(items, docs(FOO));
    // In the config itself (aliases in YAML, not in a patch string).
    let config = format!(
        "{}    x:\n{}",
        merge_fn(&label_patch("Foo")),
        laughs("      ")
    )
    .replace(
        "metadata:\n  name: hostile\n",
        &format!(
            "metadata:\n  name: hostile\n  annotations:\n{}",
            laughs("    ")
        ),
    );
    let out = run(&[], rl(&as_item(FOO), &config).as_bytes());
    let items = krm_error(&out, &["alias bomb"]);
    assert_eq!(items, docs(FOO));
    // Standalone: nothing on stdout, exit 1 (not a usage error).
    let (code, stdout, stderr) = standalone("bomb-patch", &merge_fn(&inline), FOO.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("alias bomb"), "{stderr}");
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
}

/// `&a0 [&a1 [... &aD [N scalars] ...]]` and an alias to the innermost: anchors nested in
/// anchors.
fn nested_anchors(depth: usize, n: usize) -> String {
    let mut s = format!("[{}]", vec!["1"; n].join(","));
    for k in (0..depth).rev() {
        s = format!("&a{k} [{s}]");
    }
    format!("x: {s}\ny: *a{}\n", depth - 1)
}

#[test]
fn nested_anchors_in_an_item_are_bounded() {
    // Bug: merging into a resource copied every anchored node for its aliases, so anchors
    // nested 300 deep around 100,000 scalars (200 KB) made 30 million nodes (1.2 GB, 20 s).
    // Now the resource's one alias becomes a copy (100,000 nodes) before the patch, and back
    // into the alias when it is written: linear, and the patch applies.
    let data: String = nested_anchors(300, 100_000)
        .lines()
        .map(|l| format!("  {l}\n"))
        .collect();
    let doc = format!("{FOO}data:\n{data}");
    let (code, stdout, stderr) = standalone(
        "nested-item",
        &merge_fn(&label_patch("Foo")),
        doc.as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(
        out.contains("touched") && out.ends_with("  y: *a299\n"),
        "{}",
        head(&out)
    );
    assert!(out.len() < doc.len() + 100, "{}", head(&out));
    // With an alias bomb beside them, the aliases stay aliases (the copies would be over the
    // budget), and the walkers' copies of the nested anchored nodes are: an error.
    let bomb: String = laughs("  ");
    let doc = format!("{FOO}data:\n{data}{bomb}");
    let (code, stdout, stderr) = standalone(
        "nested-item-bomb",
        &merge_fn(&label_patch("Foo")),
        doc.as_bytes(),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("anchored nodes") && stderr.contains("alias bomb"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    // A few nested anchors are fine.
    let data: String = nested_anchors(3, 10)
        .lines()
        .map(|l| format!("  {l}\n"))
        .collect();
    let doc = format!("{FOO}data:\n{data}");
    let (code, stdout, stderr) = standalone(
        "nested-item-ok",
        &merge_fn(&label_patch("Foo")),
        doc.as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(out.contains("y: *a2") && out.contains("touched"), "{out}");
}

#[test]
fn nested_anchors_in_a_patch_are_bounded() {
    // Bug: expanding a config's aliases kept a copy of every anchored node, uncounted: anchors
    // nested 400 deep around 400,000 scalars (800 KB) ran out of 8 GB after 3.5 minutes. The
    // copies now count against the alias budget.
    let body: String = nested_anchors(400, 400_000)
        .lines()
        .map(|l| format!("        {l}\n"))
        .collect();
    let config = merge_fn(&format!(
        "  - target: {{kind: Foo}}\n    patch:\n      data:\n{body}"
    ));
    let out = run(&[], rl(&as_item(FOO), &config).as_bytes());
    let items = krm_error(&out, &["alias bomb"]);
    assert_eq!(items, docs(FOO));
}

// ----- size ---------------------------------------------------------------------------------

#[test]
fn a_long_flow_collection_on_one_line_is_read_in_linear_time() {
    // Bug: every node looked back to the start of its line, so 400,000 scalars in one flow
    // sequence took 37 s (debug build), 800,000 would have taken 2.5 minutes. Now about 2 s.
    let n = 400_000;
    let doc = format!("{FOO}data: [{}]\n", vec!["1"; n].join(","));
    let (code, stdout, stderr) =
        standalone("long-flow", &merge_fn(&label_patch("Foo")), doc.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(
        out.contains("touched") && out.ends_with(",1]\n"),
        "{}",
        head(&out)
    );
    // A JSON ResourceList written on one line, as `jq -c` writes it.
    let items: Vec<String> = (0..20_000)
        .map(|i| format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{i}"}},"data":{{"k":"v"}}}}"#))
        .collect();
    let json = format!(
        r#"{{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[{}],"functionConfig":{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"f"}},"data":{{"kind":"ConfigMap","name":"c7","patch":"data: {{k: w}}"}}}}}}"#,
        items.join(",")
    );
    let out = run(&[], json.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let items = rl_items(&out.stdout);
    assert_eq!(items.len(), 20_000);
    assert_eq!(items[7]["data"]["k"], "w");
}

#[test]
fn a_large_scalar_is_kept() {
    // 100 MB, in each style: in a debug build 4 s plain, 12 s double-quoted, 4 s literal, at
    // 210 to 320 MB of peak memory (the scalar is borrowed from the input, written once).
    let size = 100 << 20;
    let big = "x".repeat(size);
    for (what, value) in [
        ("plain", big.clone()),
        ("double-quoted", format!("\"{big}\"")),
        ("literal", format!("|\n    {big}")),
    ] {
        let doc = format!("{FOO}data:\n  big: {value}\n");
        let (code, stdout, stderr) =
            standalone("big", &merge_fn(&label_patch("Foo")), doc.as_bytes());
        assert_eq!(code, 0, "{what}: {stderr}");
        let out = String::from_utf8(stdout).expect("UTF-8");
        assert!(out.contains("touched"), "{what}");
        assert!(out.contains(&value), "{what}: the scalar changed");
        assert!(out.len() < doc.len() + 100, "{what}");
    }
}

#[test]
fn many_tiny_items() {
    // A million items in a stream, 200,000 in a ResourceList (which is read whole; a million
    // take over a minute there in a debug build, about 5 s with the release binary): every one
    // comes back, the one selected is patched.
    let n = 1_000_000;
    let mut stream = String::with_capacity(n * 48);
    for i in 0..n {
        stream.push_str(&format!("---\nkind: Foo\nmetadata: {{name: f{i}}}\n"));
    }
    let p = "  - target: {kind: Foo, name: f199999}\n    patch: |\n      spec: 1\n";
    let (code, stdout, stderr) = standalone("many", &merge_fn(p), stream.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    let at = stream.find("name: f200000}").expect("item 200000");
    let at = stream[..at].rfind("---").expect("its marker");
    let want = format!("{}spec: 1\n{}", &stream[..at], &stream[at..]);
    assert_eq!(out.len(), want.len());
    assert!(
        out == want,
        "the stream differs from the input with f199999 patched"
    );
    // As a ResourceList, item by item.
    let n = 200_000;
    let items: String = (0..n)
        .map(|i| format!("- {{kind: Foo, metadata: {{name: f{i}}}}}\n"))
        .collect();
    let out = run(&[], rl(&items, &merge_fn(p)).as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got = rl_items(&out.stdout);
    assert_eq!(got.len(), n);
    assert_eq!(got[n - 1]["spec"], 1);
    assert_eq!(
        got[0],
        serde_json::json!({"kind": "Foo", "metadata": {"name": "f0"}})
    );
}

// ----- malformed text -----------------------------------------------------------------------

#[test]
fn duplicate_keys_are_located_errors() {
    let item = format!("{FOO}data:\n  k: 1\n  k: 2\n");
    let out = run(
        &[],
        rl(&as_item(&item), &merge_fn(&label_patch("Foo"))).as_bytes(),
    );
    krm_error(&out, &["line 10, column 5", "duplicate"]);
    let (code, stdout, stderr) = standalone("dup", &merge_fn(&label_patch("Foo")), item.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("line 7, column 3") && stderr.contains("duplicate"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    // In the functionConfig, and in a patch's text (located within the text).
    let config = merge_fn(&label_patch("Foo"))
        .replace("  name: hostile\n", "  name: hostile\n  name: again\n");
    let out = run(&[], rl(&as_item(FOO), &config).as_bytes());
    // The ResourceList itself is malformed: there are no items to give back.
    let items = krm_error(&out, &["line 13, column 5", "duplicate"]);
    assert!(items.is_empty());
    let (code, stdout, stderr) = standalone("dup-config", &config, FOO.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("fn.yaml: line 5, column 3: duplicate"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    let p = "  - target: {kind: Foo}\n    patch: |\n      spec:\n        a: 1\n        a: 2\n";
    let out = run(&[], rl(&as_item(FOO), &merge_fn(p)).as_bytes());
    let items = krm_error(&out, &["spec.patches[0].patch", "line 3", "duplicate"]);
    assert_eq!(items, docs(FOO));
}

#[test]
fn invalid_utf8_is_a_located_error() {
    let mut bytes = FOO.as_bytes().to_vec();
    bytes.extend_from_slice(b"data:\n  k: caf\xe9\n");
    let out = run(&[], &bytes);
    krm_error(&out, &["invalid UTF-8 at line 6, column 9"]);
    // A stream (a file, or stdin): nothing on stdout, the error located.
    let (code, stdout, stderr) = standalone("utf8", &merge_fn(&label_patch("Foo")), &bytes);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("invalid UTF-8 at line 6, column 9"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    let d = dir("utf8-stdin");
    std::fs::write(d.join("fn.yaml"), merge_fn(&label_patch("Foo"))).expect("config");
    let (code, stdout, stderr) = run_raw(
        &["--config", &d.join("fn.yaml").display().to_string()],
        &bytes,
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("stdin: invalid UTF-8 at line 6, column 9"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    // Overlong encodings, surrogates and lone continuation bytes alike.
    for bad in [
        &b"\xc0\xaf"[..],
        b"\xed\xa0\x80",
        b"\x80",
        b"\xf4\x90\x80\x80",
    ] {
        let mut input = b"apiVersion: v1\nkind: ResourceList\nitems: []\n# ".to_vec();
        input.extend_from_slice(bad);
        let out = run(&[], &input);
        krm_error(&out, &["invalid UTF-8 at line 4, column 3"]);
    }
}

#[test]
fn a_byte_order_mark_is_accepted_and_kept() {
    // YAML allows a BOM at the start of a stream; the resources read as usual and an untouched
    // stream comes back with it, byte for byte.
    let doc = format!("\u{feff}{FOO}data:\n  k: v\n");
    let (code, stdout, stderr) = standalone("bom", &merge_fn(&label_patch("Bar")), doc.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, doc.as_bytes());
    // Touched, it is patched, and the mark is still first.
    let (code, stdout, stderr) = standalone(
        "bom-touched",
        &merge_fn(&label_patch("Foo")),
        doc.as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(out.starts_with('\u{feff}'), "{out:?}");
    assert_eq!(docs(&out)[0]["metadata"]["labels"]["touched"], "yes");
    // A ResourceList that starts with one.
    let input = format!(
        "\u{feff}{}",
        rl(&as_item(FOO), &merge_fn(&label_patch("Foo")))
    );
    let out = run(&[], input.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        rl_items(&out.stdout)[0]["metadata"]["labels"]["touched"],
        "yes"
    );
}

#[test]
fn nul_bytes_are_located_errors() {
    let doc = format!("{FOO}data:\n  k: a\0b\n");
    let (code, stdout, stderr) = standalone("nul", &merge_fn(&label_patch("Foo")), doc.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("line 6, column"), "{stderr}");
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    let out = run(
        &[],
        rl(&as_item(&doc), &merge_fn(&label_patch("Foo"))).as_bytes(),
    );
    krm_error(&out, &["line 9, column"]);
    // The escape `\0` in a double-quoted string is legal, and kept.
    let doc = format!("{FOO}data:\n  k: \"a\\0b\"\n");
    let (code, stdout, stderr) =
        standalone("nul-escape", &merge_fn(&label_patch("Foo")), doc.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(out.contains("k: \"a\\0b\""), "{out}");
}

#[test]
fn a_lone_carriage_return_is_a_located_error() {
    // YAML reads a carriage return alone as a line break; krm-merge refuses it (found by the
    // yaml_roundtrip fuzz target: trees of such text were written back wrong). CRLF is read.
    let doc = format!("{FOO}data:\r  k: v\n");
    let (code, stdout, stderr) = standalone("cr", &merge_fn(&label_patch("Foo")), doc.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("line 5, column 6: a carriage return that is not followed by a line feed"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    let out = run(
        &[],
        rl(&as_item(&doc), &merge_fn(&label_patch("Foo"))).as_bytes(),
    );
    krm_error(&out, &["line 8, column 8", "carriage return"]);
    let crlf = format!("{FOO}data:\r\n  k: v\r\n")
        .replace("\n", "\r\n")
        .replace("\r\r", "\r");
    let (code, stdout, stderr) =
        standalone("crlf", &merge_fn(&label_patch("Foo")), crlf.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(
        out.contains("touched: \"yes\"") && out.contains("k: v"),
        "{out}"
    );
}

#[test]
fn tabs_as_indentation_are_located_errors() {
    let doc = format!("{FOO}data:\n\tk: v\n");
    let (code, stdout, stderr) = standalone("tabs", &merge_fn(&label_patch("Foo")), doc.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("line 6, column") && stderr.contains("tab"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    let out = run(
        &[],
        rl(&as_item(&doc), &merge_fn(&label_patch("Foo"))).as_bytes(),
    );
    krm_error(&out, &["line ", "column", "tab"]);
    let p = "  - target: {kind: Foo}\n    patch: |\n      spec:\n      \ta: 1\n";
    let out = run(&[], rl(&as_item(FOO), &merge_fn(p)).as_bytes());
    let items = krm_error(&out, &["spec.patches[0].patch", "line 2", "tab"]);
    assert_eq!(items, docs(FOO));
}

// ----- the functionConfig -------------------------------------------------------------------

#[test]
fn wrong_types_in_the_function_config_name_the_field() {
    let head = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: t\n";
    let good = "  - target: {kind: Foo}\n    patch: |\n      spec: 1\n";
    let cases: Vec<(String, &str)> = vec![
        (format!("{head}spec: just text\n"), "spec"),
        (format!("{head}spec: [1, 2]\n"), "spec"),
        (format!("{head}spec:\n  patches: {{a: 1}}\n"), "spec.patches"),
        (format!("{head}spec:\n  patches: text\n"), "spec.patches"),
        (format!("{head}spec:\n  patches: [text]\n"), "spec.patches[0]"),
        (format!("{head}spec:\n  patches:\n{good}  - [1]\n"), "spec.patches[1]"),
        (format!("{head}spec:\n  patches:\n  - patch: 5\n    target: {{}}\n"), "spec.patches[0].patch"),
        (format!("{head}spec:\n  patches:\n  - path: [a]\n"), "spec.patches[0].path"),
        (format!("{head}spec:\n  patches:\n  - type: [merge2]\n    patch: 'a: 1'\n    target: {{}}\n"), "spec.patches[0].type"),
        (format!("{head}spec:\n  patches:\n  - type: merge9\n    patch: 'a: 1'\n    target: {{}}\n"), "spec.patches[0].type"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: Foo\n"), "spec.patches[0].target"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: [Foo]\n"), "spec.patches[0].target"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{kind: [Foo]}}\n"), "spec.patches[0].target.kind"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{name: {{a: 1}}}}\n"), "spec.patches[0].target.name"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{labelSelector: [a]}}\n"), "spec.patches[0].target.labelSelector"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{labelSelector: 'a in (b'}}\n"), "spec.patches[0].target.labelSelector"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{name: '(a'}}\n"), "spec.patches[0].target.name"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{}}\n    options: [a]\n"), "spec.patches[0].options"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{}}\n    options: text\n"), "spec.patches[0].options"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{}}\n    options: {{newListItems: 3}}\n"), "spec.patches[0].options.newListItems"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{}}\n    options: {{inferMergeKeys: maybe}}\n"), "spec.patches[0].options.inferMergeKeys"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{}}\n    options: {{conflicts: [warn]}}\n"), "spec.patches[0].options.conflicts"),
        (format!("{head}spec:\n  patches:\n  - patch: 'a: 1'\n    target: {{}}\n    options: {{allowNameChange: {{}}}}\n"), "spec.patches[0].options.allowNameChange"),
        (format!("{head}spec:\n  patches:\n  - type: merge3\n    patch: 'a: 1'\n    original: [1]\n    target: {{}}\n"), "spec.patches[0].original"),
        (format!("{head}spec:\n  patches:\n  - type: json6902\n    patch: '[{{op: add}}]'\n    target: {{}}\n"), "spec.patches[0].patch[0]"),
        (format!("{head}spec:\n  patches:\n  - type: json6902\n    patch: '[5]'\n    target: {{}}\n"), "spec.patches[0].patch[0]"),
        (format!("{head}spec:\n  patches:\n{good}  schema: text\n"), "spec.schema"),
        (format!("{head}spec:\n  patches:\n{good}  schema: {{openAPI: 5}}\n"), "spec.schema.openAPI"),
        (format!("{head}spec:\n  patches:\n{good}  schema: {{openAPI: {{inline: 5}}}}\n"), "spec.schema.openAPI.inline"),
        (format!("{head}spec:\n  patches:\n{good}  schema: {{mergeKeys: {{a: 1}}}}\n"), "spec.schema.mergeKeys"),
        (format!("{head}spec:\n  patches:\n{good}  schema: {{mergeKeys: [text]}}\n"), "spec.schema.mergeKeys[0]"),
        (format!("{head}spec:\n  patches:\n{good}  schema: {{mergeKeys: [{{kind: Foo, path: spec.items, keys: name}}]}}\n"), "spec.schema.mergeKeys[0].keys"),
        (format!("{head}spec:\n  patches:\n{good}  bogus: 1\n"), "spec.bogus"),
        ("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: [a]\nspec: {patches: []}\n".to_owned(), "metadata"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: [a]\n".to_owned(), "data"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {kind: Foo, patch: {a: 1}}\n".to_owned(), "data.patch"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {kind: Foo, patch: 'a: 1', inferMergeKeys: maybe}\n".to_owned(), "data.inferMergeKeys"),
        ("apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npatch: 'a: 1'\ntarget: text\n".to_owned(), "target"),
        ("apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npatch: 'a: 1'\noptions: {allowNameChange: yes please}\n".to_owned(), "options.allowNameChange"),
    ];
    let mut failures = Vec::new();
    for (config, field) in &cases {
        let out = run(&[], rl(&as_item(FOO), config).as_bytes());
        let results = results_of(&out.stdout);
        let named = results.iter().any(|r| {
            r["severity"] == "error"
                && (r["field"]["path"] == *field
                    || r["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(&format!("{field}:"))))
        });
        if out.code != 1 || !named || !out.stderr.contains(&format!("{field}: ")) {
            failures.push(format!(
                "{field}: exit {}: {}\n{config}",
                out.code, out.stderr
            ));
        }
        assert_eq!(rl_items(&out.stdout), docs(FOO), "{field}: items changed");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The functionConfig itself of the wrong kind of node.
    for config in ["just text\n", "[1, 2]\n"] {
        let out = run(&[], rl(&as_item(FOO), config).as_bytes());
        let items = krm_error(&out, &["functionConfig"]);
        assert_eq!(items, docs(FOO), "{config}");
    }
}

#[test]
fn a_regex_that_would_backtrack_runs_in_linear_time() {
    // `(a+)+$` against "aaa...a!" takes 2^n steps in a backtracking engine: at n = 40 about a
    // day. Rust's regex is linear; here n = 100,000, in 1,000 resources of 30 to 130 letters.
    let mut stream = String::new();
    for i in 0..1000 {
        stream.push_str(&format!(
            "---\nkind: Foo\nmetadata:\n  name: {}!\n",
            "a".repeat(30 + i % 100)
        ));
    }
    stream.push_str(&format!(
        "---\nkind: Foo\nmetadata:\n  name: {}\n",
        "a".repeat(100_000)
    ));
    let p = "  - target: {kind: Foo, name: '(a+)+$'}\n    patch: |\n      spec: 1\n";
    let (code, stdout, stderr) = standalone("regex", &merge_fn(p), stream.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    // Only the last one matches.
    assert_eq!(out.matches("spec: 1").count(), 1);
    assert!(out.ends_with("spec: 1\n"));
    // A pattern too large to compile is an error, not a hang.
    let p =
        "  - target: {kind: Foo, name: '((a{1000}){1000}){1000}'}\n    patch: |\n      spec: 1\n";
    let out = run(&[], rl(&as_item(FOO), &merge_fn(p)).as_bytes());
    let items = krm_error(&out, &["spec.patches[0].target.name", "too large"]);
    assert_eq!(items, docs(FOO));
}

#[test]
fn a_patch_failing_on_the_last_of_many_targets_changes_nothing() {
    let n = 2000;
    let mut stream = String::new();
    for i in 0..n {
        let paused = if i + 1 < n { "  paused: true\n" } else { "" };
        stream.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i} # keep\nspec:\n  replicas: 1\n{paused}"
        ));
    }
    let p = "  - target: {kind: Deployment}\n    type: json6902\n    patch: |\n      - {op: remove, path: /spec/paused}\n  - target: {kind: Deployment}\n    patch: |\n      spec: {replicas: 3}\n";
    let (code, stdout, stderr) = standalone("last-fails", &merge_fn(p), stream.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("d{}", n - 1)) && stderr.contains("/spec/paused"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing to stdout");
    // The same as a ResourceList: the streaming path and the whole-input path (JSON).
    let items: String = stream
        .split("---\n")
        .filter(|d| !d.is_empty())
        .map(as_item)
        .collect();
    let input = rl(&items, &merge_fn(p));
    let out = run(&[], input.as_bytes());
    let got = krm_error(&out, &["/spec/paused"]);
    assert_eq!(got, docs(&stream));
    assert!(
        out.stdout.starts_with(&input),
        "the ResourceList's text changed"
    );
    let json = serde_json::to_string(&docs(&input)[0]).expect("JSON");
    let out = run(&[], json.as_bytes());
    let got = krm_error(&out, &["/spec/paused"]);
    assert_eq!(got, docs(&stream));
}

// ----- anchors shared between items, and inside one --------------------

/// One way of reading a document of items, and what it gave.
struct Way {
    way: &'static str,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Way {
    /// The items as data, read in their document (an alias may name an anchor of an earlier
    /// item), and their text as written. Panics when the output does not read back as YAML (an
    /// alias left without its anchor).
    /// In standalone mode a resource a merge3 update adds is a document of its own after the
    /// wrapper (a file of its own with `--output`), so it counts as one of the items too. A
    /// ResourceList's items and a list kind's items are taken out of them; the resource
    /// `way-marker` beside a list is left out.
    fn items(&self) -> Vec<serde_json::Value> {
        fn flatten(v: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
            let kind = v["kind"].as_str().unwrap_or("");
            match v.get("items") {
                Some(serde_json::Value::Array(items)) if kind.ends_with("List") => {
                    for i in items {
                        flatten(i, out);
                    }
                }
                _ => out.push(v.clone()),
            }
        }
        let all = docs(&self.stdout);
        assert!(
            all.first().is_some_and(|d| d.get("items").is_some()),
            "{}: no items\n{}",
            self.way,
            self.stdout
        );
        let mut out = Vec::new();
        for d in &all {
            flatten(d, &mut out);
        }
        out.retain(|v| v["metadata"]["name"] != "way-marker");
        out
    }
}

/// `items` (a block sequence at column 0) in each form whose items are one YAML document, read
/// each way the function reads it: a block ResourceList item by item, the same with earlier
/// results (read whole), a `List` in standalone mode (read whole), and a `List` (a `RoleList`
/// would do the same) as an item of a ResourceList, both ways, and as a file of a package
/// beside another file. Each must give the same items.
fn every_way(test: &str, items: &str, config: &str) -> Vec<Way> {
    let mut ways = Vec::new();
    let input = rl(items, config);
    let out = run(&[], input.as_bytes());
    ways.push(Way {
        way: "ResourceList, item by item",
        code: out.code,
        stdout: out.stdout,
        stderr: out.stderr,
    });
    let results = "results:\n- message: from an earlier function\n  severity: info\n";
    let out = run(&[], format!("{input}{results}").as_bytes());
    ways.push(Way {
        way: "ResourceList, whole",
        code: out.code,
        stdout: out.stdout,
        stderr: out.stderr,
    });
    let list = format!("apiVersion: v1\nkind: List\nitems:\n{items}");
    let (code, stdout, stderr) = standalone(test, config, list.as_bytes());
    ways.push(Way {
        way: "List",
        code,
        stdout: String::from_utf8(stdout).expect("UTF-8"),
        stderr,
    });
    let nested: String = items.lines().map(|l| format!("    {l}\n")).collect();
    let in_rl = rl(
        &format!("- apiVersion: v1\n  kind: List\n  items:\n{nested}"),
        config,
    );
    for (way, text) in [
        ("List in a ResourceList, item by item", in_rl.clone()),
        ("List in a ResourceList, whole", format!("{in_rl}{results}")),
    ] {
        let out = run(&[], text.as_bytes());
        ways.push(Way {
            way,
            code: out.code,
            stdout: out.stdout,
            stderr: out.stderr,
        });
    }
    let d = dir(test).join("pkg");
    std::fs::create_dir_all(&d).expect("package dir");
    std::fs::write(d.join("a-list.yaml"), &list).expect("list file");
    std::fs::write(
        d.join("b-marker.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: way-marker\n",
    )
    .expect("marker file");
    let fn_yaml = dir(test).join("fn.yaml");
    std::fs::write(&fn_yaml, config).expect("config file");
    let (code, stdout, stderr) = run_raw(
        &[
            "--config",
            &fn_yaml.display().to_string(),
            &d.display().to_string(),
        ],
        b"",
    );
    ways.push(Way {
        way: "List in a package, beside another file",
        code,
        stdout: String::from_utf8(stdout).expect("UTF-8"),
        stderr,
    });
    let first = ways[0].items();
    for w in &ways {
        assert_eq!(w.code, ways[0].code, "{}: {}", w.way, w.stderr);
        assert_eq!(w.items(), first, "{} and {} differ", w.way, ways[0].way);
    }
    ways
}

const SHARED: &str = "\
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data: &d # the anchor
    k: v
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
  data: *d
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
  data: *d
";

#[test]
fn deleting_the_item_that_holds_an_anchor_keeps_what_its_aliases_read() {
    // Bug: the aliases of b and c were left without their anchor: output no YAML reader
    // accepts, exit 0.
    let deletions = [
        "  - target: {kind: ConfigMap, name: a}\n    patch: |\n      $patch: delete\n",
        "  - type: merge3\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n    patch: |\n      apiVersion: v1\n      kind: Secret\n      metadata: {name: s}\n",
    ];
    for p in deletions {
        let ways = every_way("delete-anchor", SHARED, &merge_fn(p));
        for w in &ways {
            assert_eq!(w.code, 0, "{}: {}", w.way, w.stderr);
            let items = w.items();
            let b = items
                .iter()
                .find(|i| i["metadata"]["name"] == "b")
                .expect("b");
            let c = items
                .iter()
                .find(|i| i["metadata"]["name"] == "c")
                .expect("c");
            assert_eq!(b["data"], serde_json::json!({"k": "v"}), "{}", w.way);
            assert_eq!(c["data"], serde_json::json!({"k": "v"}), "{}", w.way);
            assert!(!items.iter().any(|i| i["metadata"]["name"] == "a"));
        }
        // b holds the data now, and carries the anchor on: c stays as it was written.
        let out = &ways[0].stdout;
        assert!(
            out.contains("    name: b\n  data: &d\n    k: v\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  data: *d\n"),
            "{out}"
        );
    }
}

#[test]
fn deleting_one_of_two_items_that_define_a_name_keeps_what_later_aliases_read() {
    // Bug: c's alias read the anchor of a once b was gone: a silent change of value.
    let items = "\
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: &d {k: first}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}, data: &d {k: second}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: *d}
";
    let p = "  - target: {kind: ConfigMap, name: b}\n    patch: |\n      $patch: delete\n";
    for w in every_way("delete-second", items, &merge_fn(p)) {
        assert_eq!(w.code, 0, "{}: {}", w.way, w.stderr);
        let got = w.items();
        assert_eq!(got.len(), 2, "{}", w.way);
        assert_eq!(got[0]["data"]["k"], "first", "{}", w.way);
        assert_eq!(got[1]["data"]["k"], "second", "{}", w.way);
    }
}

#[test]
fn patching_an_anchored_node_changes_no_alias_of_it() {
    // Bug: every item aliasing the patched node changed with it, items no target selected
    // included.
    let patches = [
        "  - target: {kind: ConfigMap, name: a}\n    patch: |\n      data: {k: w}\n".to_owned(),
        "  - target: {kind: ConfigMap, name: a}\n    type: jsonmerge\n    patch: |\n      data: {k: w}\n".to_owned(),
        "  - target: {kind: ConfigMap, name: a}\n    type: json6902\n    patch: |\n      - {op: replace, path: /data/k, value: w}\n".to_owned(),
        "  - target: {kind: ConfigMap, name: a}\n    type: apply\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n      data: {k: w}\n".to_owned(),
        "  - type: merge3\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n      data: {k: v}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n      data: {k: w}\n".to_owned(),
    ];
    for p in &patches {
        for w in every_way("patch-anchor", SHARED, &merge_fn(p)) {
            assert_eq!(w.code, 0, "{}: {p}: {}", w.way, w.stderr);
            let got = w.items();
            assert_eq!(got[0]["data"]["k"], "w", "{}: {p}", w.way);
            assert_eq!(got[1]["data"]["k"], "v", "{}: {p}", w.way);
            assert_eq!(got[2]["data"]["k"], "v", "{}: {p}", w.way);
        }
    }
}

#[test]
fn patching_an_anchored_node_inside_one_resource_changes_no_alias_of_it() {
    // Bug: `replace /data/m/k` also changed /data/mm and /data/n/0 (`mm: *m`).
    let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  m: &m {k: v}\n  mm: *m # same\n  n: [*m]\n";
    let patches = [
        "  - target: {kind: ConfigMap}\n    options: {validation: warn}\n    type: json6902\n    patch: |\n      - {op: replace, path: /data/m/k, value: w}\n",
        "  - target: {kind: ConfigMap}\n    options: {validation: warn}\n    patch: |\n      data: {m: {k: w}}\n",
        "  - target: {kind: ConfigMap}\n    options: {validation: warn}\n    type: jsonmerge\n    patch: |\n      data: {m: {k: w}}\n",
        // Read after the change: the alias still reads what it read.
        "  - target: {kind: ConfigMap}\n    options: {validation: warn}\n    type: json6902\n    patch: |\n      - {op: replace, path: /data/m/k, value: w}\n      - {op: test, path: /data/mm/k, value: v}\n      - {op: copy, from: /data/n/0/k, path: /data/x}\n",
    ];
    for p in patches {
        let (code, stdout, stderr) = standalone("inside", &merge_fn(p), doc.as_bytes());
        assert_eq!(code, 0, "{p}: {stderr}");
        let out = String::from_utf8(stdout).expect("UTF-8");
        let got = &docs(&out)[0]["data"];
        assert_eq!(got["m"]["k"], "w", "{p}: {out}");
        assert_eq!(got["mm"]["k"], "v", "{p}: {out}");
        assert_eq!(got["n"][0]["k"], "v", "{p}: {out}");
        assert!(
            out.contains("  mm: &m {k: v} # same\n  n: [*m]\n"),
            "{p}: {out}"
        );
    }
    // Removing the anchored node: the first alias holds the data and the anchor.
    let p = "  - target: {kind: ConfigMap}\n    type: json6902\n    patch: |\n      - {op: remove, path: /data/m}\n";
    let (code, stdout, stderr) = standalone("inside-remove", &merge_fn(p), doc.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(
        out.ends_with("data:\n  mm: &m {k: v} # same\n  n: [*m]\n"),
        "{out}"
    );
}

#[test]
fn items_that_alias_an_unchanged_anchor_stay_byte_for_byte() {
    // Nothing b and c read changed: the ResourceList's items come back as they came, a
    // patched item keeps its alias.
    let p = "  - target: {kind: ConfigMap, name: b}\n    patch: |\n      metadata: {labels: {x: \"y\"}}\n";
    let ways = every_way("unchanged-anchor", SHARED, &merge_fn(p));
    assert_eq!(ways[0].code, 0, "{}", ways[0].stderr);
    let want = SHARED.replace(
        "    name: b\n  data: *d\n",
        "    name: b\n    labels: {x: \"y\"}\n  data: *d\n",
    );
    assert!(ways[0].stdout.contains(&want), "{}", ways[0].stdout);
    // A patch of nothing: the input's text.
    let p = "  - target: {kind: Secret}\n    patch: |\n      data: {k: w}\n";
    let input = rl(SHARED, &merge_fn(p));
    let out = run(&[], input.as_bytes());
    assert!(out.stdout.starts_with(&input), "{}", out.stdout);
}

#[test]
fn a_patch_into_an_alias_of_another_items_anchor_works() {
    // Bug: a JSON patch on b failed ("the result would use alias *d before its anchor") and a
    // merge into it failed ("alias *d refers to no anchor in this resource").
    let patches = [
        "  - target: {kind: ConfigMap, name: b}\n    type: json6902\n    patch: |\n      - {op: add, path: /data/j, value: x}\n",
        "  - target: {kind: ConfigMap, name: b}\n    patch: |\n      data: {j: x}\n",
        "  - target: {kind: ConfigMap, name: b}\n    type: jsonmerge\n    patch: |\n      data: {j: x}\n",
    ];
    for p in patches {
        for w in every_way("into-alias", SHARED, &merge_fn(p)) {
            assert_eq!(w.code, 0, "{}: {p}: {}", w.way, w.stderr);
            let got = w.items();
            assert_eq!(got[0]["data"], serde_json::json!({"k": "v"}), "{}", w.way);
            assert_eq!(
                got[1]["data"],
                serde_json::json!({"k": "v", "j": "x"}),
                "{}",
                w.way
            );
            assert_eq!(got[2]["data"], serde_json::json!({"k": "v"}), "{}", w.way);
        }
    }
}

#[test]
fn anchors_around_the_items_are_read_too() {
    // The wrapper's own keys are part of the document: before the items (an item aliases
    // them) and after (they alias an item).
    let config =
        merge_fn("  - target: {kind: ConfigMap, name: a}\n    patch: |\n      data: {k: w}\n");
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nmetadata:\n  annotations: {{x: &n b}}\nitems:\n{}functionConfig:\n{}extra: *d\n",
        SHARED.replace("    name: b\n", "    name: *n\n"),
        config.lines().map(|l| format!("  {l}\n")).collect::<String>()
    );
    let out = run(&[], input.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let all = docs(&out.stdout);
    assert_eq!(
        all[0]["extra"],
        serde_json::json!({"k": "v"}),
        "{}",
        out.stdout
    );
    assert_eq!(all[0]["items"][1]["metadata"]["name"], "b");
    assert_eq!(all[0]["items"][1]["data"]["k"], "v");
}
