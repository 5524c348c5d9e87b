//! Hostile patches, merges and packages, through the binary (see the parent module for the
//! rules every case keeps): what a patch may not take, resources a patch adds, the merge
//! commands, selection and identities through aliases, output that reads back, loading files,
//! growth and depth, and wildcards reaching places through aliases.

use super::*;

// ----- what a patch may not take ----------------------------------------

/// A resource with the hosts' bookkeeping, as kpt passes it.
const KEPT: &str = "\
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
    annotations:
      config.kubernetes.io/path: a.yaml
      internal.config.kubernetes.io/path: a.yaml
      team: x
  data: {k: v}
";

#[test]
fn a_patch_that_changes_a_mappings_kind_cannot_take_bookkeeping_or_identity() {
    // Bug: each of these removed every bookkeeping annotation or the name, exit 0, or (the last
    // two) wrote a resource list the binary then refused to read.
    let cases = [
        ("merge2", "    patch: 'metadata: {annotations: []}'\n", "metadata.annotations would become a list"),
        ("merge2", "    patch: 'metadata: {annotations: [a]}'\n", "metadata.annotations would become a list"),
        ("jsonmerge", "    type: jsonmerge\n    patch: 'metadata: {annotations: 5}'\n", "metadata.annotations would become a number"),
        ("json6902", "    type: json6902\n    patch: '[{op: replace, path: /metadata/annotations, value: \"\"}]'\n", "metadata.annotations would become a string"),
        ("json6902", "    type: json6902\n    patch: '[{op: replace, path: /metadata/annotations, value: []}]'\n", "metadata.annotations would become a list"),
        ("merge2", "    patch: 'metadata: x'\n", "metadata would become a string, and with it the resource's name"),
        ("jsonmerge", "    type: jsonmerge\n    patch: 'metadata: [x]'\n", "metadata would become a list"),
        ("json6902", "    type: json6902\n    patch: '[{op: replace, path: \"\", value: 5}]'\n", "the result would be a number, not a resource"),
        ("json6902", "    type: json6902\n    patch: '[{op: replace, path: \"\", value: [a]}]'\n", "the result would be a list, not a resource"),
        ("json6902", "    type: json6902\n    patch: '[{op: remove, path: /metadata/name}]'\n", "the result would have no metadata.name"),
        ("json6902", "    type: json6902\n    patch: '[{op: remove, path: /kind}]'\n", "the result would have no kind"),
        ("json6902", "    type: json6902\n    patch: '[{op: replace, path: /metadata, value: {}}]'\n", "the result would have no metadata.name"),
        ("apply", "    type: apply\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n  - target: {kind: ConfigMap}\n    type: apply\n    patch: |\n      kind: ConfigMap\n      metadata: {name: a}\n", "the result would have no apiVersion"),
    ];
    for (kind, p, want) in cases {
        let config = merge_fn(&format!("  - target: {{kind: ConfigMap}}\n{p}"));
        let out = run(&[], rl(KEPT, &config).as_bytes());
        let items = krm_error(&out, &[want, &format!("({kind})")]);
        assert_eq!(
            items,
            docs(&KEPT.replace("- ", "").replace("\n  ", "\n")),
            "{p}"
        );
    }
}

#[test]
fn an_edit_of_a_bookkeeping_annotation_is_dropped_with_a_warning() {
    let cases = [
        "    patch: 'metadata: {annotations: {config.kubernetes.io/path: ../../x.yaml}}'\n",
        "    patch: 'metadata: {annotations: null}'\n",
        "    type: json6902\n    patch: '[{op: replace, path: /metadata/annotations, value: null}]'\n",
        "    type: json6902\n    patch: '[{op: remove, path: /metadata/annotations}]'\n",
        "    type: jsonmerge\n    patch: 'metadata: {annotations: {internal.config.kubernetes.io/path: null}}'\n",
        "    type: json6902\n    patch: '[{op: add, path: /metadata/annotations/config.k8s.io~1id, value: \"9\"}]'\n",
    ];
    for p in cases {
        let config = merge_fn(&format!("  - target: {{kind: ConfigMap}}\n{p}"));
        let out = run(&[], rl(KEPT, &config).as_bytes());
        assert_eq!(out.code, 0, "{p}: {}", out.stderr);
        let items = items_of(&out.stdout);
        let ann = &items[0]["metadata"]["annotations"];
        assert_eq!(ann["config.kubernetes.io/path"], "a.yaml", "{p}");
        assert_eq!(ann["internal.config.kubernetes.io/path"], "a.yaml", "{p}");
        assert!(ann.get("config.k8s.io/id").is_none(), "{p}");
        let results = results_of(&out.stdout);
        assert!(
            results.iter().any(|r| r["severity"] == "warning"
                && r["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("bookkeeping annotation") && m.contains("dropped"))
                && r["field"]["path"]
                    .as_str()
                    .is_some_and(|f| f.starts_with("metadata.annotations["))),
            "{p}: {results:#?}"
        );
    }
}

// ----- resources a patch adds -------------------------------------------

#[test]
fn resources_a_patch_adds_bring_no_host_bookkeeping() {
    // Bug: a resource merge3 added kept a planted path, where `kpt fn sink` or `kpt fn render`
    // would write it: outside the package.
    let p = "  - type: merge3\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n      ---\n      apiVersion: v1\n      kind: Secret\n      metadata:\n        name: planted\n        annotations:\n          config.kubernetes.io/path: ../../../../tmp/planted.yaml\n          internal.config.kubernetes.io/path: ../../../../tmp/planted.yaml\n          config.kubernetes.io/index: '7'\n          config.kubernetes.io/local-config: \"true\"\n          owner: me\n";
    let out = run(&[], rl(KEPT, &merge_fn(p)).as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let items = items_of(&out.stdout);
    let ann = &items[1]["metadata"]["annotations"];
    assert_eq!(
        ann,
        &serde_json::json!({
            "config.kubernetes.io/local-config": "true",
            "owner": "me",
            "internal.config.kubernetes.io/path": "secret_planted.yaml",
            "internal.config.kubernetes.io/index": "0",
        })
    );
    let results = results_of(&out.stdout);
    for key in [
        "config.kubernetes.io/path",
        "internal.config.kubernetes.io/path",
        "config.kubernetes.io/index",
    ] {
        assert!(
            results.iter().any(|r| r["severity"] == "warning"
                && r["message"].as_str().is_some_and(|m| m
                    .contains(&format!("{key} is a host's bookkeeping annotation"))
                    && m.contains("dropped"))),
            "{key}: {results:#?}"
        );
    }
    // A name that reads as a path gives a file in the package's directory all the same.
    let p2 = "  - type: merge3\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n      ---\n      apiVersion: v1\n      kind: Secret\n      metadata: {name: ../../../../tmp/x}\n";
    let out = run(&[], rl(KEPT, &merge_fn(p2)).as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let items = items_of(&out.stdout);
    assert_eq!(
        items[1]["metadata"]["annotations"]["internal.config.kubernetes.io/path"],
        "secret_____________tmp_x.yaml"
    );
    // A stream (no files): the same annotations go, none are given.
    let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n";
    let (code, stdout, stderr) = standalone("planted", &merge_fn(p), stream.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert!(!out.contains("tmp/planted"), "{out}");
}

// ----- the merge commands -----------------------------------------------

#[test]
fn the_merge_commands_refuse_what_would_replace_or_remove_dest() {
    // Bug: a SRC that was `null` made DEST vanish (empty output, exit 0); a scalar or a list
    // replaced it; a malformed DEST was exit 2 with nothing written.
    let d = dir("merge-commands");
    let dest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a} # keep\ndata: {k: v}\n";
    let path = |name: &str, text: &str| {
        let p = d.join(name);
        std::fs::write(&p, text).expect("file");
        p.display().to_string()
    };
    let dest_file = path("dest.yaml", dest);
    for (src, want) in [
        ("null\n", "src.yaml: document 1 (from line 1) is null"),
        ("~\n", "src.yaml: document 1 (from line 1) is null"),
        ("[a, b]\n", "src.yaml: document 1 (from line 1) is a list"),
        (
            "just text\n",
            "src.yaml: document 1 (from line 1) is a scalar",
        ),
        (
            "data: {j: 1}\n---\n# two\n5\n",
            "src.yaml: document 2 (from line 2) is a scalar",
        ),
        ("", "src.yaml: no document"),
        (
            "data: {j: [\n",
            "src.yaml: malformed YAML: line 1, column 11",
        ),
    ] {
        let src_file = path("src.yaml", src);
        let (code, stdout, stderr) = run_raw(&["merge2", &src_file, &dest_file], b"");
        assert_eq!(code, 1, "{src:?}: {stderr}");
        assert!(stderr.contains(want), "{src:?}: {stderr}");
        // As in every mode but KRM mode, an error writes nothing (doc/GUIDE.md, "Input and output").
        assert_eq!(
            String::from_utf8_lossy(&stdout),
            "",
            "{src:?}: output written"
        );
        // merge3's UPDATED alike (read as a package's documents are: what is not a mapping is
        // "not a resource").
        let (code, stdout, stderr) = run_raw(&["merge3", &dest_file, &src_file, &dest_file], b"");
        if !src.is_empty() {
            let mut want = want.to_owned();
            for what in [" is null", " is a list", " is a scalar"] {
                want = want.replace(what, " is not a resource (a mapping)");
            }
            assert_eq!(code, 1, "merge3 {src:?}: {stderr}");
            assert!(stderr.contains(&want), "{want}: {stderr}");
            assert_eq!(String::from_utf8_lossy(&stdout), "");
        }
    }
    // A malformed DEST, and one that is not resources: located, exit 1, nothing written.
    let src_file = path("src.yaml", "data: {j: 1}\n");
    for (bad, want) in [
        ("a: [\n", "bad.yaml: malformed YAML: line 1, column 4"),
        (
            "- a\n- b\n",
            "bad.yaml: document 1 (from line 1) is not a resource",
        ),
    ] {
        let bad_file = path("bad.yaml", bad);
        let (code, stdout, stderr) = run_raw(&["merge2", &src_file, &bad_file], b"");
        assert_eq!(code, 1, "{bad:?}: {stderr}");
        assert!(stderr.contains(want), "{bad:?}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&stdout), "");
    }
    // A SRC alias bomb is the config's error too.
    let bomb = format!("data:\n{}", laughs("  "));
    let bomb_file = path("bomb.yaml", &bomb);
    let (code, stdout, stderr) = run_raw(&["merge2", &bomb_file, &dest_file], b"");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("alias bomb"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&stdout), "");
    // What does merge still merges.
    let (code, stdout, stderr) = run_raw(&["merge2", &src_file, &dest_file], b"");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&stdout),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a} # keep\ndata: {k: v, j: 1}\n"
    );
}

// ----- selection through aliases ----------------------------------------

#[test]
fn identity_and_labels_are_read_through_aliases() {
    // Bug: `kind: *k` read as no kind: the target passed the resource by, silently.
    let items = "\
- apiVersion: &v v1
  kind: &k ConfigMap
  metadata:
    name: a
    labels: &l {app: web}
- apiVersion: *v
  kind: *k
  metadata:
    name: b
    labels: *l
";
    let cases = [
        "  - target: {kind: ConfigMap, name: b}\n    patch: |\n      data: {x: y}\n",
        "  - target: {version: v1, labelSelector: app=web, name: b}\n    patch: |\n      data: {x: y}\n",
        "  - patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: b}\n      data: {x: y}\n",
        "  - target: {kind: ConfigMap, name: b}\n    type: json6902\n    patch: |\n      - {op: add, path: /data, value: {x: y}}\n",
    ];
    for (n, p) in cases.iter().enumerate() {
        for w in every_way("alias-identity", items, &merge_fn(p)) {
            assert_eq!(w.code, 0, "{}: {p}: {}", w.way, w.stderr);
            let got = w.items();
            assert_eq!(
                got[1]["data"],
                serde_json::json!({"x": "y"}),
                "{}: {p}",
                w.way
            );
            assert_eq!(got[1]["kind"], "ConfigMap");
            assert!(got[0].get("data").is_none(), "{}: {p}", w.way);
        }
        // The item keeps its aliases, but where the patch writes the field itself (the third
        // patch writes apiVersion and kind).
        if n == 2 {
            continue;
        }
        let out = run(&[], rl(items, &merge_fn(p)).as_bytes());
        assert!(
            out.stdout.contains(
                "- apiVersion: *v\n  kind: *k\n  metadata:\n    name: b\n    labels: *l\n"
            ),
            "{p}: {}",
            out.stdout
        );
    }
}

// ----- identities ------------------------------------------------------

#[test]
fn a_rename_onto_another_resource_is_an_error_naming_both() {
    let items = "\
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
";
    let cases = [
        "  - target: {kind: ConfigMap, name: b}\n    type: json6902\n    patch: |\n      - {op: replace, path: /metadata/name, value: a}\n",
        "  - target: {kind: ConfigMap, name: a}\n    options: {allowNameChange: true}\n    patch: |\n      metadata: {name: b}\n",
    ];
    for p in cases {
        let out = run(&[], rl(items, &merge_fn(p)).as_bytes());
        let got = krm_error(
            &out,
            &[
                "two resources would have the same identity",
                "renamed from ConfigMap",
                "named so in the input",
            ],
        );
        let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n";
        assert_eq!(got, docs(stream), "{p}");
        let (code, stdout, stderr) = standalone("rename", &merge_fn(p), stream.as_bytes());
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("two resources would have the same identity"),
            "{stderr}"
        );
        assert!(stdout.is_empty(), "an error writes nothing");
    }
    // Duplicates in the input are not a patch's doing; a rename elsewhere is fine.
    let p = "  - target: {kind: ConfigMap, name: b}\n    type: json6902\n    patch: |\n      - {op: replace, path: /metadata/name, value: c}\n";
    let dup = format!("{items}- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: a}}}}\n");
    let out = run(&[], rl(&dup, &merge_fn(p)).as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn an_alias_inside_the_node_it_names_is_left_alone_or_refused() {
    // `&a {x: *a}` is recursive data, which no resource can hold: carried as it came when no
    // patch selects it, an error naming the alias when one does.
    let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &a {x: *a}\n";
    let (code, stdout, stderr) = standalone(
        "recursive",
        &merge_fn(&label_patch("Secret")),
        doc.as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, doc.as_bytes());
    let (code, stdout, stderr) = standalone(
        "recursive-patched",
        &merge_fn(&label_patch("ConfigMap")),
        doc.as_bytes(),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("ConfigMap a: patch[0] (merge2): alias *a refers to no anchor defined before it (or to the node it is in)"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing");
}

#[test]
fn a_last_item_ending_in_an_explicit_key_loses_nothing() {
    // Found by the function fuzz target's new check that every way of reading agrees: the item
    // by item path took the text of the last item to run into the next key (`extra:`), so the
    // output dropped that key and gave its value to the item, exit 0. The text around the items
    // is now checked against the parse, and such input read whole.
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: a}}\n  data:\n    ?  spec:\n        c:\nextra:\n  x: 1\nfunctionConfig:\n{}",
        merge_fn(&label_patch("ConfigMap"))
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    );
    let out = run(&[], input.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let docs = yaml::parse_stream(&out.stdout).expect("YAML");
    let root = docs.into_iter().find_map(|d| d.root).expect("a document");
    assert_eq!(root.str_at(&["extra", "x"]), Some("1"), "{}", out.stdout);
    let item = &root.get("items").expect("items").items()[0];
    assert!(item.get("x").is_none(), "{}", out.stdout);
    assert_eq!(item.str_at(&["metadata", "labels", "touched"]), Some("yes"));
}

#[test]
fn an_item_ending_in_an_explicit_keys_colon_line_is_read_whole() {
    // Found by the function fuzz target (an expanded input, written in block style): the `:`
    // line that ends an explicit key went with the next item's text, so deleting the first item
    // left that line behind: output no YAML reader accepts, exit 0. An item's text that does
    // not start at its `-` sends the input to the whole-input path.
    let items = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data:\n    ? [1, 2]\n    :\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n";
    let p = "  - target: {kind: ConfigMap, name: a}\n    patch: |\n      $patch: delete\n";
    for w in every_way("colon-line", items, &merge_fn(p)) {
        assert_eq!(w.code, 0, "{}: {}", w.way, w.stderr);
        assert_eq!(
            w.items(),
            vec![
                serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}})
            ],
            "{}",
            w.way
        );
    }
}

#[test]
fn a_walker_reads_an_alias_as_the_data_it_stands_for() {
    // Found by the merges fuzz target's oracle: merge3 deleted an alias whole (upstream deleted
    // the field) where, written out, the same data kept the field only the resource had.
    // Before its first patch a resource's aliases become copies: every walker reads data.
    let aliased = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  c: &c {n: a, image: x}\n  extra: *c\n";
    let expanded = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  c: {n: a, image: x}\n  extra: {n: a, image: x}\n";
    // A ConfigMap's data holds strings: the schema check's findings stay warnings.
    let p = "  - type: merge3\n    options: {validation: warn}\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n      data:\n        c: {n: a, image: x}\n        extra: {n: a, hmage: x}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a}\n      data:\n        c: {n: a, image: x}\n";
    let (code, a, stderr) = standalone("walker-alias", &merge_fn(p), aliased.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let (code, e, stderr) = standalone("walker-expanded", &merge_fn(p), expanded.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let (a, e) = (
        String::from_utf8(a).expect("UTF-8"),
        String::from_utf8(e).expect("UTF-8"),
    );
    assert_eq!(docs(&a), docs(&e), "aliased:\n{a}\nexpanded:\n{e}");
}

// ----- output that reads back, empty documents, keys alike ------------------------

/// A string holding U+FFFE or U+FFFF (or another character YAML forbids raw)
/// from JSON input or a JSON patch value was written raw, and no YAML reader read the output
/// back. Every such character is now escaped in a double-quoted scalar, in values and keys.
#[test]
fn characters_yaml_forbids_raw_are_escaped_in_the_output() {
    let odd = "a\u{fffe}b\u{ffff}c\u{7f}d\u{9f}";
    let item = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
        "data": {"x": odd, format!("k{odd}"): "v", "nel": "\u{85}"}
    });
    // JSON text with those characters escaped, as JSON writers give them (raw, YAML refuses them).
    let escaped = |v: &serde_json::Value| -> String {
        v.to_string()
            .chars()
            .map(|c| {
                if krm_merge::yaml::scalar::printable(c) {
                    c.to_string()
                } else {
                    format!("\\u{:04x}", c as u32)
                }
            })
            .collect()
    };
    let ops = escaped(&serde_json::json!([{"op": "add", "path": "/data/z", "value": odd}]));
    let config = serde_json::json!({
        "apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "Merge", "metadata": {"name": "x"},
        "spec": {"patches": [{"target": {"kind": "ConfigMap"}, "type": "json6902", "patch": ops}]}
    });
    let input = escaped(&serde_json::json!({
        "apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
        "items": [item], "functionConfig": config,
    }));
    let out = run(&[], input.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let back = items_of(&out.stdout);
    assert_eq!(back.len(), 1, "{}", out.stdout);
    assert_eq!(back[0]["data"]["x"], odd, "{}", out.stdout);
    assert_eq!(back[0]["data"]["z"], odd, "{}", out.stdout);
    assert_eq!(back[0]["data"][format!("k{odd}")], "v", "{}", out.stdout);
    assert_eq!(back[0]["data"]["nel"], "\u{85}", "{}", out.stdout);
    // And our own output is input we read: a second run over it succeeds.
    let again = run(&[], out.stdout.as_bytes());
    assert_eq!(again.code, 0, "{}", again.stderr);
}

/// A stream ending with `---` (an empty last document) was refused with
/// "document 2 is not a resource (a mapping)". An empty document is legal YAML and holds
/// nothing; its text is kept.
#[test]
fn empty_documents_in_a_stream_are_nothing() {
    let one = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    for stream in [
        format!("{one}---\n"),
        format!("{one}---\n---\n{one}"),
        format!("---\n{one}---\n# only a comment\n"),
        format!("---\n---\n{one}"),
    ] {
        let (code, stdout, stderr) = standalone(
            "empty-doc",
            &merge_fn(&label_patch("ConfigMap")),
            stream.as_bytes(),
        );
        assert_eq!(code, 0, "{stream:?}: {stderr}");
        let out = String::from_utf8(stdout).expect("UTF-8");
        assert!(out.contains("touched: \"yes\""), "{stream:?}: {out}");
        let resources = |t: &str| docs(t).into_iter().filter(|d| !d.is_null()).count();
        assert_eq!(resources(&out), resources(&stream), "{out}");
    }
    // A ResourceList followed by an empty document.
    let input = format!(
        "{}---\n",
        rl(&as_item(one), &merge_fn(&label_patch("ConfigMap")))
    );
    let out = run(&[], input.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        items_of(&out.stdout)[0]["metadata"]["labels"]["touched"],
        "yes"
    );
    // A document that says null is content, and not a resource: still an error.
    let (code, _, stderr) = standalone(
        "null-doc",
        &merge_fn(&label_patch("ConfigMap")),
        format!("{one}--- ~\n").as_bytes(),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("not a resource"), "{stderr}");
}

/// Keys that are the same value written differently (`1`/`0x1`,
/// `~`/`null`) in one mapping are duplicate keys, located like any other.
#[test]
fn keys_with_the_same_value_written_differently_are_duplicates() {
    for (a, b) in [("1", "0x1"), ("~", "null"), ("true", "True"), ("1", "1.0")] {
        let item = format!("{FOO}data:\n  {a}: x\n  {b}: y\n");
        let (code, stdout, stderr) =
            standalone("dup-value", &merge_fn(&label_patch("Foo")), item.as_bytes());
        assert_eq!(code, 1, "{item}: {stderr}");
        assert!(
            stderr.contains("line 7, column 3") && stderr.contains("duplicate key"),
            "{item}: {stderr}"
        );
        assert!(stdout.is_empty(), "an error writes nothing");
        // In a patch's text too.
        let p = format!("  - target: {{kind: Foo}}\n    patch: |\n      data:\n        {a}: 1\n        {b}: 2\n");
        let out = run(&[], rl(&as_item(FOO), &merge_fn(&p)).as_bytes());
        let items = krm_error(&out, &["spec.patches[0].patch", "line 3", "duplicate"]);
        assert_eq!(items, docs(FOO));
    }
}

// ----- loading files ----------------------------------------------------

/// `path:` read any file the process could read: `path: ../outside/kubeconfig` with
/// `type: jsonmerge` copied a token into the output, and `/proc/self/status` was merged too.
/// Files must resolve, symlinks followed, inside the functionConfig's directory tree (the
/// package root in KRM mode); the error says which rule refused which file.
#[test]
fn files_outside_the_config_directory_are_not_loaded() {
    let d = dir("load-restrictor");
    let pkg = d.join("pkg");
    std::fs::create_dir_all(pkg.join("sub")).expect("dirs");
    std::fs::create_dir_all(d.join("outside")).expect("dirs");
    let token = "kind: Config\ndata:\n  token: s3cr3t-t0ken\n";
    std::fs::write(d.join("outside/kubeconfig"), token).expect("secret");
    std::fs::write(pkg.join("sub/patch.yaml"), "data:\n  inside: \"yes\"\n").expect("patch");
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n";
    std::fs::write(pkg.join("resources.yaml"), cm).expect("resources");
    let patch_at = |path: &str| {
        merge_fn(&format!(
            "  - type: jsonmerge\n    target: {{kind: ConfigMap}}\n    path: {path:?}\n"
        ))
    };
    let mut escapes = vec!["../outside/kubeconfig".to_owned()];
    if std::path::Path::new("/proc/self/status").exists() {
        escapes.push("/proc/self/status".to_owned());
    }
    #[cfg(unix)]
    {
        let _ = std::fs::remove_file(pkg.join("innocent.yaml"));
        std::os::unix::fs::symlink(d.join("outside/kubeconfig"), pkg.join("innocent.yaml"))
            .expect("symlink");
        escapes.push("innocent.yaml".to_owned());
    }
    for written in &escapes {
        // Standalone: relative to the config file, confined to its directory.
        std::fs::write(pkg.join("fn.yaml"), patch_at(written)).expect("config");
        let (code, stdout, stderr) = run_raw(
            &[
                "--config",
                &pkg.join("fn.yaml").display().to_string(),
                &pkg.join("resources.yaml").display().to_string(),
            ],
            b"",
        );
        assert_eq!(code, 1, "{written}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "spec.patches[0].path: {written}: refused by the load restrictor rootOnly"
            )) && stderr.contains("--load-restrictor none"),
            "{written}: {stderr}"
        );
        assert!(!String::from_utf8_lossy(&stdout).contains("s3cr3t"));
        assert!(!stderr.contains("s3cr3t"));
        // KRM mode, no file known for the config: confined to the current directory.
        let input = rl(&as_item(cm), &patch_at(written));
        let out = out_of(&crate::pieces::run_in(&[], input.as_bytes(), Some(&pkg)));
        krm_error(&out, &["refused by the load restrictor rootOnly", written]);
        assert!(!out.stdout.contains("s3cr3t"));
    }
    // Inside the tree, files load: in KRM mode from the config's own directory as kpt names it
    // (relative to the package root, the current directory), and `..` up to the package root.
    let mut config = patch_at("../patch.yaml");
    config = config.replace(
        "  name: hostile\n",
        "  name: hostile\n  annotations:\n    config.kubernetes.io/path: sub/deeper/fn.yaml\n",
    );
    std::fs::create_dir_all(pkg.join("sub/deeper")).expect("dirs");
    let input = rl(&as_item(cm), &config);
    let out = out_of(&crate::pieces::run_in(&[], input.as_bytes(), Some(&pkg)));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(items_of(&out.stdout)[0]["data"]["inside"], "yes");
}

// ----- growth, depth, quadratic merges -----------------------

/// Point 8: `copy /data/d -> /data/d/cN` doubles the resource each time; 40 of them in a 2 KB
/// config aborted the process (allocation failure). A patch's copies may add at most the
/// resource's own size (64 KiB for a smaller one): past it, an error naming the operation.
#[test]
fn json_patch_copies_cannot_grow_a_resource_without_bound() {
    let item = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  d:\n    k: value\n";
    let ops: String = (0..40)
        .map(|i| format!("      - {{op: copy, from: /data/d, path: /data/d/c{i}}}\n"))
        .collect();
    let p = format!("  - type: json6902\n    target: {{kind: ConfigMap}}\n    patch: |\n{ops}");
    assert!(merge_fn(&p).len() < 3000);
    let (code, stdout, stderr) = standalone("copy-bomb", &merge_fn(&p), item.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("(copy from /data/d)") && stderr.contains("copies would grow the resource"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing");
    let out = run(&[], rl(&as_item(item), &merge_fn(&p)).as_bytes());
    let items = krm_error(&out, &["copies would grow the resource"]);
    assert_eq!(items, docs(item));
    // A few copies, as patches make them, pass.
    let p = "  - type: json6902\n    target: {kind: ConfigMap}\n    patch: |\n      - {op: copy, from: /data/d, path: /data/e}\n      - {op: copy, from: /data/d, path: /data/f}\n";
    let (code, stdout, stderr) = standalone("copy-ok", &merge_fn(p), item.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = docs(&String::from_utf8(stdout).expect("UTF-8"));
    assert_eq!(out[0]["data"]["f"]["k"], "value");
}

/// Inserts and removes before the end of a collection shift what follows: a patch's shifting
/// is bounded (json6902::SHIFT_BUDGET), past it an error rather than minutes of copying.
#[test]
fn json_patch_shifting_is_bounded() {
    let n = 100_000;
    let mut item = String::from("apiVersion: v1\nkind: Foo\nmetadata:\n  name: a\nlist:\n");
    for i in 0..n {
        item.push_str(&format!("- {i}\n"));
    }
    let ops = "      - {op: remove, path: /list/0}\n".repeat(1400);
    let p = format!("  - type: json6902\n    target: {{kind: Foo}}\n    patch: |\n{ops}");
    let (code, _, stderr) = standalone("shifts", &merge_fn(&p), item.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("(remove /list/0)") && stderr.contains("shift more than"),
        "{stderr}"
    );
    // Removing from the end shifts nothing.
    let ops: String = (0..1400)
        .map(|i| format!("      - {{op: remove, path: /list/{}}}\n", n - 1 - i))
        .collect();
    let p = format!("  - type: json6902\n    target: {{kind: Foo}}\n    patch: |\n{ops}");
    let (code, stdout, stderr) = standalone("shifts-ok", &merge_fn(&p), item.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = docs(&String::from_utf8(stdout).expect("UTF-8"));
    assert_eq!(out[0]["list"].as_array().map(Vec::len), Some(n - 1400));
}

/// Point 5: merging into an alias copies its anchored node there; an anchor 250 levels deep
/// copied under an alias 300 levels deep would nest the output past the 512 levels any reader
/// takes. Every walker refuses it, naming the place.
#[test]
fn merging_into_an_alias_cannot_nest_past_the_limit() {
    let (anchor, alias) = (250, 300);
    let item = format!(
        "{FOO}a: &x {}v{}\nc: {}*x{}\n",
        "{b: ".repeat(anchor),
        "}".repeat(anchor),
        "{c: ".repeat(alias),
        "}".repeat(alias)
    );
    // The alias is at c.c. … (alias + 1 keys).
    let deep_patch = format!(
        "{}{{new: 1}}{}",
        "{c: ".repeat(alias + 1),
        "}".repeat(alias + 1)
    );
    for (kind, patch) in [
        ("merge2", format!("'{deep_patch}'")),
        ("jsonmerge", format!("'{deep_patch}'")),
        ("apply", format!("'{deep_patch}'")),
        (
            "json6902",
            format!(
                "'[{{op: add, path: {}/new, value: 1}}]'",
                "/c".repeat(alias + 1)
            ),
        ),
    ] {
        let p = format!("  - type: {kind}\n    target: {{kind: Foo}}\n    patch: {patch}\n");
        let (code, stdout, stderr) = standalone("alias-depth", &merge_fn(&p), item.as_bytes());
        assert_eq!(code, 1, "{kind}: {stderr}");
        // A resource's aliases become copies before its first patch (every walker reads data),
        // so the check that catches it is the one on the item as it will be written: located
        // at its deepest place.
        assert!(
            stderr.contains("nest") && stderr.contains("512") && stderr.contains("Foo a: c.c.c."),
            "{kind}: {stderr}"
        );
        assert!(stdout.is_empty(), "{kind}: an error writes nothing");
    }
    // merge3 too: the change from original to updated merged into the alias.
    let original = format!(
        "{FOO}c: {}{{}}{}\n",
        "{c: ".repeat(alias),
        "}".repeat(alias)
    );
    let updated = format!("{FOO}{}", deep_patch.replacen("{c: ", "c: {c: ", 1));
    let p = format!(
        "  - type: merge3\n    target: {{kind: Foo}}\n    original: '{}'\n    patch: '{}'\n",
        original.replace('\n', "\n\n      ").trim_end(),
        updated.replace('\n', "\n\n      ").trim_end()
    );
    let (code, _, stderr) = standalone("alias-depth-3", &merge_fn(&p), item.as_bytes());
    assert_eq!(code, 1, "merge3: {stderr}");
    assert!(
        stderr.contains("nest") && stderr.contains("512"),
        "merge3: {stderr}"
    );
    // Shallower, the same merges go through.
    let shallow = format!(
        "{FOO}a: &x {}v{}\nc: {}*x{}\n",
        "{b: ".repeat(100),
        "}".repeat(100),
        "{c: ".repeat(alias),
        "}".repeat(alias)
    );
    let p = format!("  - target: {{kind: Foo}}\n    patch: '{deep_patch}'\n");
    let (code, stdout, stderr) = standalone("alias-depth-ok", &merge_fn(&p), shallow.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    yaml::parse_stream(&out).expect("the output reads back");
}

/// Point 9: merges paired by scanning were quadratic (a finalizers union with
/// `$deleteFromPrimitiveList` of 40,000 took 104 s, a keyed `env` merge of 160,000 took 44 s, a
/// map merge of 80,000 keys 8 s). They pair by hash now; these run 100,000 elements through the
/// debug binary, which at the old cost would not finish for hours. No timing is asserted: a test
/// that does not finish is the failure. Figures are in doc/PERFORMANCE.md.
#[test]
fn merges_and_patches_of_100000_elements_finish() {
    let n = 100_000;
    // Finalizers: a union of n new, deleting half the old ones.
    let mut item =
        String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  finalizers:\n");
    for i in 0..n {
        item.push_str(&format!("  - example.com/f{i}\n"));
    }
    let mut patch = String::from("metadata:\n  $deleteFromPrimitiveList/finalizers:\n");
    for i in (0..n).step_by(2) {
        patch.push_str(&format!("  - example.com/f{i}\n"));
    }
    patch.push_str("  finalizers:\n");
    for i in n..2 * n {
        patch.push_str(&format!("  - example.com/f{i}\n"));
    }
    let d = dir("big-merges");
    std::fs::write(d.join("finalizers.yaml"), &patch).expect("patch");
    let p = "  - target: {kind: ConfigMap}\n    path: finalizers.yaml\n";
    let out = standalone_in(&d, &merge_fn(p), &item);
    assert_eq!(
        out[0]["metadata"]["finalizers"].as_array().map(Vec::len),
        Some(n / 2 + n)
    );
    // A keyed env merge: half changed, half new; and a map merge of n keys, as merge2,
    // jsonmerge and json6902.
    let mut item = String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n");
    for i in 0..n {
        item.push_str(&format!("        - name: E{i}\n          value: v{i}\n"));
    }
    let mut patch = String::from(
        "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n",
    );
    for i in n / 2..n + n / 2 {
        patch.push_str(&format!("        - name: E{i}\n          value: new{i}\n"));
    }
    std::fs::write(d.join("env.yaml"), &patch).expect("patch");
    for options in [
        "",
        "    options: {newListItems: prepend, inferMergeKeys: false}\n",
    ] {
        let p = format!("  - target: {{kind: Deployment}}\n    path: env.yaml\n{options}");
        let out = standalone_in(&d, &merge_fn(&p), &item);
        let env = &out[0]["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(env.as_array().map(Vec::len), Some(n + n / 2), "{options}");
    }
    let mut item = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n");
    let mut patch = String::from("data:\n");
    let mut ops = String::new();
    for i in 0..n {
        item.push_str(&format!("  k{i}: v{i}\n"));
        patch.push_str(&format!("  k{}: new\n", i + n / 2));
        ops.push_str(&format!(
            "- {{op: add, path: /data/k{}, value: new}}\n",
            i + n / 2
        ));
    }
    std::fs::write(d.join("map.yaml"), &patch).expect("patch");
    std::fs::write(d.join("ops.yaml"), &ops).expect("patch");
    for (kind, file) in [
        ("merge2", "map.yaml"),
        ("jsonmerge", "map.yaml"),
        ("json6902", "ops.yaml"),
    ] {
        let p = format!("  - type: {kind}\n    target: {{kind: ConfigMap}}\n    path: {file}\n");
        let out = standalone_in(&d, &merge_fn(&p), &item);
        let data = out[0]["data"].as_object().expect("data");
        assert_eq!(data.len(), n + n / 2, "{kind}");
        assert_eq!(data["k0"], "v0");
        assert_eq!(data[&format!("k{}", n - 1)], "new", "{kind}");
    }
}

/// `krm-merge --config fn.yaml resources.yaml` in `d`, which must succeed: the output's
/// documents.
fn standalone_in(d: &std::path::Path, config: &str, resources: &str) -> Vec<serde_json::Value> {
    std::fs::write(d.join("fn.yaml"), config).expect("config");
    std::fs::write(d.join("resources.yaml"), resources).expect("resources");
    let (code, stdout, stderr) = run_raw(
        &[
            "--config",
            &d.join("fn.yaml").display().to_string(),
            &d.join("resources.yaml").display().to_string(),
        ],
        b"",
    );
    assert_eq!(code, 0, "{stderr}");
    docs(&String::from_utf8(stdout).expect("UTF-8"))
}

/// With kustomize's options, a keyed list whose elements all carry their keys is paired by
/// hash like any other; one where some element lacks its key takes kyaml's step-by-step walk,
/// which compares every element with every other: past 4,000 elements in all it is refused
/// with a clear error rather than left to run for minutes.
#[test]
fn kustomizes_pairing_of_elements_without_keys_is_bounded() {
    let n = 5_000;
    let mut item = String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n");
    for i in 0..n {
        item.push_str(&format!("        - name: E{i}\n          value: v{i}\n"));
    }
    item.push_str("        - value: no-name\n");
    let p = "  - target: {kind: Deployment}\n    options: {newListItems: prepend, inferMergeKeys: false}\n    patch: |\n      spec:\n        template:\n          spec:\n            containers:\n            - name: app\n              env:\n              - name: E1\n                value: changed\n";
    let (code, stdout, stderr) = standalone("kyaml-scan", &merge_fn(p), item.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("env") && stderr.contains("without their merge key (name)"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "an error writes nothing");
    // With every element keyed, the same merge goes through.
    let keyed = item.replace("        - value: no-name\n", "");
    let (code, stdout, stderr) = standalone("kyaml-hash", &merge_fn(p), keyed.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = docs(&String::from_utf8(stdout).expect("UTF-8"));
    let env = &out[0]["spec"]["template"]["spec"]["containers"][0]["env"];
    assert_eq!(env[0]["value"], "changed");
    assert_eq!(env.as_array().map(Vec::len), Some(n));
}

/// The same 10 MB `path:` file listed 100 times took 1 GB and aborted under
/// a 1 GB limit. Each file is read once however many entries name it, and the file text a
/// config gives its patches (each use parsed into a tree of its own) is bounded in all: past
/// 256 MiB, an error naming the field.
#[test]
fn a_patch_file_named_many_times_is_read_once_and_bounded_in_all() {
    let d = dir("path-many-times");
    std::fs::write(d.join("p.yaml"), "data: {k: v}\n").expect("small patch");
    let entry = "  - type: jsonmerge\n    target: {kind: ConfigMap}\n    path: p.yaml\n";
    let (code, stdout, stderr) = standalone(
        "path-many-times",
        &merge_fn(&entry.repeat(100)),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(String::from_utf8_lossy(&stdout).contains("k: v"));
    // A 60 MB patch (one long string) named five times: 300 MB of patches.
    let big = format!("data: {{k: \"{}\"}}\n", "x".repeat(60 << 20));
    std::fs::write(d.join("big.yaml"), big).expect("big patch");
    let entry = "  - type: jsonmerge\n    target: {kind: ConfigMap}\n    path: big.yaml\n";
    let (code, stdout, stderr) = standalone(
        "path-many-times",
        &merge_fn(&entry.repeat(5)),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("spec.patches[4].path") && stderr.contains("268435456 bytes together"),
        "{stderr}"
    );
    assert!(stdout.is_empty());
}

// ----- wildcards: places reached through aliases ----------------------------------------

/// A ConfigMap whose aliases nest `levels` lists of ten under `top`: 10^levels places for
/// `top` followed by `levels` `[*]`, from a few hundred bytes. From six levels on it holds more
/// than the million nodes past which a resource's aliases stay aliases (an alias bomb), so a
/// patch follows them.
fn alias_grid(name: &str, levels: usize) -> String {
    let mut s = format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n");
    s.push_str("l0: &l0 [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}]\n");
    for i in 1..levels - 1 {
        let list = vec![format!("*l{}", i - 1); 10].join(", ");
        s.push_str(&format!("l{i}: &l{i} [{list}]\n"));
    }
    let list = vec![format!("*l{}", levels - 2); 10].join(", ");
    s.push_str(&format!("top: [{list}]\n"));
    s
}

/// `path` followed by `n` `[*]`.
fn stars(path: &str, n: usize) -> String {
    format!("{path}{}", "/[*]".repeat(n))
}

/// [`standalone`] with at most 2 GiB of address space (`ulimit -v`): an allocation that fails
/// under it aborts the process, which the promise of these tests rules out.
fn standalone_in_2gib(test: &str, config: &str, resources: &[u8]) -> (i32, Vec<u8>, String) {
    let d = dir(test);
    let (c, r) = (d.join("fn.yaml"), d.join("resources.yaml"));
    std::fs::write(&c, config).expect("config file");
    std::fs::write(&r, resources).expect("resources file");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 2097152 && exec "$0" --config "$1" "$2""#)
        .arg(bin())
        .arg(&c)
        .arg(&r)
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING")
        .output()
        .expect("run krm-merge under sh");
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A 4 KB value added at a million places that a 400-byte resource's aliases reach would
/// need 4 GB: the process aborted on a failed allocation, losing the run. What a patch adds at
/// its places counts against the resource's growth budget (its own size and 16 MiB): past
/// it, an error naming the resource, the patch, the operation, its pointer and the place,
/// exit 1, under a 2 GiB address space.
#[test]
fn a_value_added_at_a_million_places_through_aliases_is_refused_not_an_abort() {
    let grid = alias_grid("grid", 6);
    assert!(grid.len() < 500);
    let path = format!("{}/k", stars("/top", 6));
    let p = format!(
        "  - type: json6902\n    target: {{kind: ConfigMap}}\n    patch: '[{{op: add, path: \"{path}\", value: {}}}]'\n",
        "x".repeat(4096)
    );
    let (code, stdout, stderr) = standalone_in_2gib("million-adds", &merge_fn(&p), grid.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    for want in [
        "ConfigMap grid",
        &format!("patch[0] (json6902): op 0 (add {path}): at /top/"),
        "would grow the resource by more than",
    ] {
        assert!(stderr.contains(want), "{want:?} not in {stderr}");
    }
    assert!(stdout.is_empty(), "an error writes nothing");
    // In KRM mode: an error result, and the item as it came.
    let out = run(&[], rl(&as_item(&grid), &merge_fn(&p)).as_bytes());
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("would grow the resource"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("top: [*l4, *l4, *l4"),
        "{}",
        head(&out.stdout)
    );
}

/// The same through a strategic merge at `at: "grid[*][*]"`, a thousand rows that are aliases
/// of one row of a thousand: each place is spent, with what the patch adds there, when the
/// places are found, so the run stops before a million places or their copies take memory.
#[test]
fn a_merge_at_a_million_places_through_aliases_is_refused_not_an_abort() {
    let row = vec!["{}"; 1000].join(", ");
    let rows = vec!["*row"; 1000].join(", ");
    let grid = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: grid}}\nrow: &row [{row}]\ngrid: [{rows}]\n"
    );
    let p = format!(
        "  - target: {{kind: ConfigMap}}\n    at: \"grid[*][*]\"\n    patch: '{{k: {}}}'\n",
        "x".repeat(4096)
    );
    let (code, stdout, stderr) =
        standalone_in_2gib("million-merges", &merge_fn(&p), grid.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    for want in [
        "ConfigMap grid",
        "patch[0] (merge2",
        "at grid[",
        "would grow the resource by more than",
    ] {
        assert!(stderr.contains(want), "{want:?} not in {stderr}");
    }
    assert!(stdout.is_empty(), "an error writes nothing");
    // A small patch at a few places of the same resource passes.
    let p = "  - target: {kind: ConfigMap}\n    at: \"grid[0][*]\"\n    patch: '{k: v}'\n";
    let (code, stdout, stderr) =
        standalone_in_2gib("million-merges-ok", &merge_fn(p), grid.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert_eq!(out.matches("k: v").count(), 1000, "{}", head(&out));
}

/// One `add` at the 100,000 places a 400-byte resource's aliases reach, among a million it
/// holds, walked every place from the root with the document's anchors read again each time:
/// more than ten minutes. The anchors are read once for the run (again only after a change to
/// an anchored node), so it finishes in a moment, every place given its member and the other
/// aliases left as they were.
#[test]
fn a_wildcard_through_aliases_to_100000_places_finishes() {
    let grid = alias_grid("grid", 6);
    let path = format!("{}/k", stars("/top/0", 5));
    let p = format!(
        // `top` is no ConfigMap field: the schema check's finding stays a warning.
        "  - type: json6902\n    target: {{kind: ConfigMap}}\n    options: {{validation: warn}}\n    patch: '[{{op: add, path: \"{path}\", value: v}}]'\n"
    );
    let (code, stdout, stderr) = standalone_in_2gib("100000-adds", &merge_fn(&p), grid.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let out = String::from_utf8(stdout).expect("UTF-8");
    assert_eq!(out.matches("{k: v}").count(), 100_000);
    assert!(
        out.contains("*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]"),
        "{}",
        head(&out)
    );
    let root = yaml::parse_stream(&out)
        .expect("YAML")
        .remove(0)
        .root
        .expect("a root");
    let top = root.get("top").expect("top");
    assert_eq!(top.items().len(), 10);
    assert_eq!(top.items()[1].alias_name(), Some("l4"));
}

/// Places cost time and memory even where a patch adds nothing: a patch reaches at most
/// 1,048,576 of them on a resource (its `at:` and all its operations' `[*]` together); past
/// that, an error naming the place, before any is tested.
#[test]
fn a_wildcard_past_a_million_places_is_refused() {
    let grid = alias_grid("grid", 7);
    let path = format!("{}/k", stars("/top", 7));
    let p = format!(
        "  - type: json6902\n    target: {{kind: ConfigMap}}\n    patch: '[{{op: test, path: \"{path}\", value: v}}]'\n"
    );
    let (code, stdout, stderr) = standalone_in_2gib("places", &merge_fn(&p), grid.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "op 0 (test {path}): the patch reaches more than 1048576 places"
        )),
        "{stderr}"
    );
    assert!(stdout.is_empty());
}
