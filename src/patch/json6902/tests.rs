//! The unit tests of JSON patch: the RFC's rules on YAML trees, our extensions, the budget.

use super::*;
use crate::budget::{BudgetError, GROWTH_SLACK, SCAN_BUDGET, SHIFT_BUDGET};
use crate::yaml::{emit_document, parse_stream, to_json, Document, Entry, MAX_DEPTH};

/// `doc` (YAML) patched with `patch` (YAML or JSON text), written back; or the error text.
fn patched(doc: &str, patch: &str) -> Result<String, String> {
    patched_with(doc, patch, &Options::default())
}

fn patched_with(doc: &str, patch: &str, opts: &Options) -> Result<String, String> {
    let docs = parse_stream(doc).map_err(|e| e.to_string())?;
    let pdocs = parse_stream(patch).map_err(|e| e.to_string())?;
    let ops = parse_ops(pdocs[0].root.as_ref().ok_or("empty patch")?).map_err(|e| e.to_string())?;
    let mut d = docs[0].clone();
    let before = emit(&d);
    if let Some(root) = d.root.as_mut() {
        if let Err(e) = patch_with(root, &ops, opts, &mut Budget::new()) {
            // All or nothing: the document is as it was, byte for byte.
            assert_eq!(emit(&d), before, "changed on error");
            return Err(e.to_string());
        }
    }
    Ok(emit(&d))
}

fn emit(d: &Document<'_>) -> String {
    let mut out = String::new();
    emit_document(d, &mut out);
    out
}

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
      # the application
      - name: app # main
        image: app:1 # pinned
        ports:
        - containerPort: 80
          protocol: TCP
        - containerPort: 80
          protocol: UDP
      - name: sidecar
        image: proxy:2
";

#[test]
fn selectors_address_list_elements() {
    let c = "/spec/template/spec/containers";
    let out = patched(
        DEPLOY,
        &format!("- {{op: replace, path: '{c}/[name=app]/image', value: app:2}}\n"),
    )
    .unwrap();
    assert_eq!(out, DEPLOY.replace("app:1 # pinned", "app:2 # pinned"));

    let out = patched(
            DEPLOY,
            &format!("- {{op: replace, path: '{c}/[name=app]/ports/[containerPort=80,protocol=UDP]/containerPort', value: 53}}\n"),
        )
        .unwrap();
    assert!(
        out.contains("- containerPort: 53\n          protocol: UDP"),
        "{out}"
    );

    let out = patched(
        DEPLOY,
        &format!("- {{op: remove, path: '{c}/[name=sidecar]'}}\n"),
    )
    .unwrap();
    assert!(
        !out.contains("sidecar") && out.ends_with("protocol: UDP\n"),
        "{out}"
    );

    // `add` at a selector inserts before the selected element.
    let out = patched(
        DEPLOY,
        &format!("- {{op: add, path: '{c}/[name=sidecar]', value: {{name: init}}}}\n"),
    )
    .unwrap();
    assert!(
        out.contains("      - name: init\n      - name: sidecar"),
        "{out}"
    );

    let out = patched(
        DEPLOY,
        &format!(
            "- {{op: test, path: '{c}/[name=sidecar]/image', value: proxy:2}}\n\
                 - {{op: copy, from: '{c}/[name=app]/image', path: '{c}/[name=sidecar]/image'}}\n\
                 - {{op: move, from: '{c}/[name=sidecar]', path: '{c}/0'}}\n"
        ),
    )
    .unwrap();
    assert!(
            out.contains("      - name: sidecar\n        image: app:1 # pinned\n      # the application\n      - name: app # main"),
            "{out}"
        );
}

#[test]
fn selector_failures() {
    let c = "/spec/template/spec/containers";
    let err = |patch: String| patched(DEPLOY, &patch).unwrap_err();
    assert_eq!(
        err(format!(
            "- {{op: replace, path: '{c}/[name=nope]/image', value: x}}\n"
        )),
        "op 0 (replace /spec/template/spec/containers/[name=nope]/image): path does not exist \
             (no element of /spec/template/spec/containers matches [name=nope])"
    );
    assert_eq!(
            err(format!("- {{op: remove, path: '{c}/[name=app]/ports/[containerPort=80]'}}\n")),
            "op 0 (remove /spec/template/spec/containers/[name=app]/ports/[containerPort=80]): \
             2 elements of /spec/template/spec/containers/[name=app]/ports match [containerPort=80]; \
             a selector must match one"
        );
    assert_eq!(
        err(format!("- {{op: remove, path: '{c}/[name=app'}}\n")),
        "op 0 (remove /spec/template/spec/containers/[name=app): malformed key selector \
             \"[name=app\" at /spec/template/spec/containers: missing the closing ']' (at byte 9)"
    );
    assert_eq!(
            err(format!("- {{op: remove, path: '{c}/[name=a=b]'}}\n")),
            "op 0 (remove /spec/template/spec/containers/[name=a=b]): malformed key selector \
             \"[name=a=b]\" at /spec/template/spec/containers: '=' in a value must be escaped as '\\=' (at byte 7)"
        );
    // Elements that are not mappings, or lack the field, never match.
    assert_eq!(
        patched("l: [1, {x: 2}]\n", "- {op: remove, path: '/l/[name=1]'}\n").unwrap_err(),
        "op 0 (remove /l/[name=1]): path does not exist (no element of /l matches [name=1])"
    );
    // On a mapping the token is a member name, as RFC 6901 says.
    assert_eq!(
        patched(
            "m:\n  '[name=app]': 1\n",
            "- {op: replace, path: '/m/[name=app]', value: 2}\n"
        )
        .unwrap(),
        "m:\n  '[name=app]': 2\n"
    );
    // Scalar text comparison: `80` and `"80"` are both the text 80.
    assert_eq!(
        patched(
            "l:\n- p: \"80\"\n  v: a\n",
            "- {op: replace, path: '/l/[p=80]/v', value: b}\n"
        )
        .unwrap(),
        "l:\n- p: \"80\"\n  v: b\n"
    );
}

#[test]
fn comments_survive_replace_move_and_copy() {
    let doc = "\
# head
spec:
  # replicas comment
  replicas: 2 # line
  selector: # sel
    app: web
  other: {}
";
    // replace: the place keeps its comments when the value brings none; the value's own win.
    assert_eq!(
        patched(doc, "- op: replace\n  path: /spec/replicas\n  value: 3\n").unwrap(),
        doc.replace("replicas: 2", "replicas: 3")
    );
    assert_eq!(
        patched(
            doc,
            "- op: replace\n  path: /spec/replicas\n  value: 3 # new\n"
        )
        .unwrap(),
        doc.replace("replicas: 2 # line", "replicas: 3 # new")
    );
    // move: the entry's comments go with it.
    assert_eq!(
        patched(
            doc,
            "- {op: move, from: /spec/replicas, path: /spec/other/count}\n"
        )
        .unwrap(),
        "\
# head
spec:
  selector: # sel
    app: web
  other:
    # replicas comment
    count: 2 # line
"
    );
    // copy: both places have them.
    assert_eq!(
        patched(
            doc,
            "- {op: copy, from: /spec/selector, path: /spec/sel2}\n"
        )
        .unwrap(),
        format!("{doc}  sel2: # sel\n    app: web\n")
    );
    // from a list to a mapping and back
    let list = "l:\n# first\n- a: 1 # one\n- b\nm: {}\n";
    assert_eq!(
        patched(list, "- {op: move, from: /l/0, path: /m/x}\n").unwrap(),
        "l:\n- b\nm:\n  # first\n  x:\n    a: 1 # one\n"
    );
    assert_eq!(
            patched(doc, "- {op: move, from: /spec/replicas, path: /l}\n- {op: add, path: /m, value: [0]}\n- {op: move, from: /l, path: /m/0}\n").unwrap(),
            "# head\nspec:\n  selector: # sel\n    app: web\n  other: {}\nm:\n# replicas comment\n- 2 # line\n- 0\n"
        );
}

#[test]
fn all_or_nothing() {
    let doc = "a: 1 # c\nb: [1, 2]\n";
    let patch = "\
- {op: replace, path: /a, value: 2}
- {op: add, path: /b/-, value: 3}
- {op: remove, path: /zzz}
- {op: add, path: /c, value: 4}
";
    // `patched` asserts the document is byte-identical after the error.
    assert_eq!(
        patched(doc, patch).unwrap_err(),
        "op 2 (remove /zzz): path does not exist"
    );
    let failing_test = "- {op: add, path: /x, value: 1}\n- {op: test, path: /a, value: 2}\n";
    assert_eq!(
        patched(doc, failing_test).unwrap_err(),
        "op 1 (test /a): value does not match"
    );
}

#[test]
fn the_whole_document() {
    assert_eq!(
        patched("foo\n", "- {op: replace, path: '', value: bar}\n").unwrap(),
        "bar\n"
    );
    assert_eq!(
        patched("a: 1\n", "- {op: test, path: '', value: {a: 1.0}}\n").unwrap(),
        "a: 1\n"
    );
    assert_eq!(
        patched("a: 1\n", "- {op: remove, path: ''}\n").unwrap_err(),
        "op 0 (remove \"\"): the whole document cannot be removed"
    );
    assert_eq!(
        patched("a:\n  b: 1\n", "- {op: move, from: /a, path: ''}\n").unwrap(),
        "b: 1\n"
    );
    assert_eq!(
        patched("a: 1\n", "- {op: move, from: '', path: /a}\n").unwrap_err(),
        "op 0 (move /a): a value cannot be moved into one of its own children"
    );
}

#[test]
fn move_rules() {
    let doc = "a:\n  b: 1\nc: 2\n";
    assert_eq!(
        patched(doc, "- {op: move, from: /a, path: /a/b/c}\n").unwrap_err(),
        "op 0 (move /a/b/c): a value cannot be moved into one of its own children"
    );
    // Onto itself: nothing changes, not even the key order.
    assert_eq!(
        patched(doc, "- {op: move, from: /a, path: /a}\n").unwrap(),
        doc
    );
    assert_eq!(
        patched("l: [x, y]\n", "- {op: move, from: /l/0, path: /l/-}\n").unwrap(),
        "l: [y, x]\n"
    );
    // Through a selector, the same element: still an error.
    assert_eq!(
        patched(
            "l:\n- name: a\n  k: {}\n",
            "- {op: move, from: /l/0, path: '/l/[name=a]/k/x'}\n"
        )
        .unwrap_err(),
        "op 0 (move /l/[name=a]/k/x): a value cannot be moved into one of its own children"
    );
}

#[test]
fn test_compares_json_values() {
    let doc = "n: 1\nf: 1.5\ns: \"1\"\nm: {a: 1, b: [1, {c: null}]}\nt: true\n";
    let ok = [
        "{op: test, path: /n, value: 1.0}",
        "{op: test, path: /n, value: 0x1}",
        "{op: test, path: /f, value: 1.50}",
        "{op: test, path: /s, value: '1'}",
        "{op: test, path: /m, value: {b: [1, {c: ~}], a: 1}}",
        "{op: test, path: /t, value: true}",
    ];
    for op in ok {
        assert!(patched(doc, &format!("- {op}\n")).is_ok(), "{op}");
    }
    let bad = [
        "{op: test, path: /n, value: '1'}",
        "{op: test, path: /s, value: 1}",
        "{op: test, path: /m, value: {a: 1}}",
        "{op: test, path: /m/b, value: [{c: null}, 1]}",
        "{op: test, path: /t, value: 'true'}",
        "{op: test, path: /n, value: null}",
    ];
    for op in bad {
        assert!(patched(doc, &format!("- {op}\n")).is_err(), "{op}");
    }
}

#[test]
fn parse_errors_name_the_op() {
    let cases = [
            ("{op: add, path: /a, value: 1}", "a JSON patch must be a list of operations"),
            ("[1]", "op 0: an operation must be a mapping"),
            ("[{path: /a}]", "op 0: missing \"op\""),
            ("[{op: 1, path: /a}]", "op 0: \"op\" must be a string"),
            ("[{op: remove, path: /a}, {op: spam, path: /a}]", "op 1: unknown op \"spam\" (expected add, remove, replace, move, copy or test)"),
            ("[{op: add, value: 1}]", "op 0 (add): missing \"path\""),
            ("[{op: add, path: ~, value: 1}]", "op 0 (add): \"path\" must be a string"),
            ("[{op: add, path: a, value: 1}]", "op 0 (add a): invalid JSON pointer: a JSON pointer must be empty or start with '/'"),
            ("[{op: replace, path: /a}]", "op 0 (replace /a): missing \"value\""),
            ("[{op: move, path: /a}]", "op 0 (move /a): missing \"from\""),
            ("[{op: copy, path: /a, from: b}]", "op 0 (copy from b): invalid JSON pointer: a JSON pointer must be empty or start with '/'"),
            ("[{op: test, path: '/~x', value: 1}]", "op 0 (test /~x): invalid JSON pointer: '~' at byte 1 must be followed by 0 or 1"),
        ];
    for (patch, msg) in cases {
        let docs = parse_stream(patch).unwrap();
        let err = parse_ops(docs[0].root.as_ref().unwrap()).unwrap_err();
        assert_eq!(err.to_string(), msg, "{patch}");
    }
    // Members an operation does not define are ignored (RFC 6902 §4).
    let docs = parse_stream("[{op: remove, path: /a, value: 1, extra: x}]").unwrap();
    assert!(parse_ops(docs[0].root.as_ref().unwrap()).is_ok());
    // A mapping built by hand can repeat a member; parsed YAML cannot.
    let op = Node::map_of(vec![
        Entry::new("op", Node::plain("remove")),
        Entry::new("path", Node::plain("/a")),
        Entry::new("path", Node::plain("/b")),
    ]);
    let err = parse_ops(&Node::seq_of(vec![op])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "op 0 (remove): \"path\" appears more than once"
    );
}

#[test]
fn apply_errors() {
    let doc = "a: 1\nl: [x]\n";
    let cases = [
            ("{op: add, path: /a/b, value: 1}", "op 0 (add /a/b): /a is a scalar, it has no members"),
            ("{op: add, path: /l/2, value: 1}", "op 0 (add /l/2): index 2 is out of range: the list at /l has 1 elements"),
            ("{op: replace, path: /l/-, value: 1}", "op 0 (replace /l/-): \"-\" names no element of the list at /l (only add may use it, to append)"),
            ("{op: remove, path: /l/01}", "op 0 (remove /l/01): \"01\" is not an index of the list at /l (digits without leading zeros)"),
            ("{op: add, path: /l/99999999999999999999999, value: 1}", "op 0 (add /l/99999999999999999999999): index 99999999999999999999999 is out of range: the list at /l has 1 elements"),
            ("{op: add, path: /x/y/z, value: 1}", "op 0 (add /x/y/z): path does not exist (nothing at /x)"),
            ("{op: copy, from: /nope, path: /b}", "op 0 (copy from /nope): path does not exist"),
            ("{op: add, path: /0, value: 1}", ""),
        ];
    for (op, msg) in cases {
        match patched(doc, &format!("- {op}\n")) {
            Err(e) => assert_eq!(e, msg, "{op}"),
            Ok(out) => assert!(msg.is_empty(), "{op}: {out}"),
        }
    }
}

#[test]
fn json_values_become_block_yaml() {
    let doc = "metadata:\n  name: web # the name\n";
    let patch = r#"[{"op": "add", "path": "/metadata/labels", "value": {"app": "web", "tier": ["a", "b"]}},
                       {"op": "add", "path": "/metadata/name", "value": "web2"}]"#;
    assert_eq!(
            patched(doc, patch).unwrap(),
            "metadata:\n  name: web2 # the name\n  labels:\n    app: web\n    tier:\n    - a\n    - b\n"
        );
    // A YAML patch keeps the styles it was written in.
    assert_eq!(
        patched(doc, "- op: add\n  path: /metadata/tier\n  value: [a, b]\n").unwrap(),
        "metadata:\n  name: web # the name\n  tier: [a, b]\n"
    );
    // An empty flow mapping that receives its first member becomes block.
    assert_eq!(
        patched(
            "metadata:\n  annotations: {}\n",
            r#"[{"op": "add", "path": "/metadata/annotations/a~1b", "value": "x"}]"#
        )
        .unwrap(),
        "metadata:\n  annotations:\n    a/b: x\n"
    );
}

#[test]
fn new_keys_are_appended_and_add_replaces_in_place() {
    assert_eq!(
        patched(
            "b: 1\na: 2\n",
            "- {op: add, path: /c, value: 3}\n- {op: add, path: /b, value: 0}\n"
        )
        .unwrap(),
        "b: 0\na: 2\nc: 3\n"
    );
}

#[test]
fn kustomize_replace_adds_a_missing_member() {
    let patch = "- {op: replace, path: /metadata/namespace, value: ns}\n";
    assert_eq!(
        patched_with("metadata:\n  name: a\n", patch, &Options::kustomize()).unwrap(),
        "metadata:\n  name: a\n  namespace: ns\n"
    );
    assert!(patched_with("kind: X\n", patch, &Options::kustomize()).is_err());
    assert!(patched_with(
        "l: [a]\n",
        "- {op: replace, path: /l/1, value: b}\n",
        &Options::kustomize()
    )
    .is_err());
}

#[test]
fn kustomize_moves_a_value_into_its_own_children() {
    let k = Options::kustomize();
    let rules = "rules:\n- verbs: [get]\n- verbs: [list]\n";
    let into = "- {op: move, from: /rules/0, path: /rules/0/moved}\n";
    // The first rule goes, and lands in the rule that takes its index.
    assert_eq!(
        patched_with(rules, into, &k).unwrap(),
        "rules:\n- verbs: [list]\n  moved:\n    verbs: [get]\n"
    );
    assert!(patched(rules, into)
        .unwrap_err()
        .ends_with("a value cannot be moved into one of its own children"));
    // Through a selector too; and into a list of the next element.
    assert_eq!(
        patched_with(
            rules,
            "- {op: move, from: '/rules/[verbs=x]', path: /rules/0}\n",
            &k
        )
        .unwrap_err(),
        "op 0 (move from /rules/[verbs=x]): path does not exist (no element of /rules \
             matches [verbs=x])"
    );
    assert_eq!(
        patched_with(
            rules,
            "- {op: move, from: /rules/0, path: /rules/0/verbs/0}\n",
            &k
        )
        .unwrap(),
        "rules:\n- verbs: [{verbs: [get]}, list]\n"
    );
    // Nothing takes the value's place: the destination is missing, as in kustomize.
    assert_eq!(
        patched_with("a:\n  b: 1\n", "- {op: move, from: /a, path: /a/b/c}\n", &k).unwrap_err(),
        "op 0 (move /a/b/c): path does not exist (nothing at /a)"
    );
    assert!(patched_with("l: [x]\n", "- {op: move, from: /l/0, path: /l/0/y}\n", &k).is_err());
}

#[test]
fn kustomize_reads_a_missing_member_as_null() {
    let doc = "data:\n  k: v\n";
    let k = Options::kustomize();
    let copy = "- {op: copy, from: /data/gone, path: /data/c}\n";
    assert_eq!(
        patched_with(doc, copy, &k).unwrap(),
        "data:\n  k: v\n  c: null\n"
    );
    assert!(patched_with(doc, copy, &Options::default()).is_err());
    let test_null = "- {op: test, path: /data/gone, value: null}\n";
    assert_eq!(patched_with(doc, test_null, &k).unwrap(), doc);
    assert!(patched_with(doc, test_null, &Options::default()).is_err());
    // Only a missing member of an existing mapping: a missing parent, a value other than
    // null, and a sequence index stay errors.
    assert!(patched_with(doc, "- {op: test, path: /data/gone, value: 1}\n", &k).is_err());
    assert!(patched_with(doc, "- {op: copy, from: /no/x, path: /data/c}\n", &k).is_err());
    assert!(patched_with("l: [a]\n", "- {op: copy, from: /l/3, path: /m}\n", &k).is_err());
}

#[test]
fn aliases() {
    let doc = "base: &b\n  x: 1\nuse: *b\nlater: *b\n";
    // Changing something below an alias changes only that place.
    assert_eq!(
        patched(doc, "- {op: add, path: /use/z, value: 2}\n").unwrap(),
        "base: &b\n  x: 1\nuse:\n  x: 1\n  z: 2\nlater: *b\n"
    );
    // Reading looks through aliases.
    assert!(patched(doc, "- {op: test, path: /later, value: {x: 1}}\n").is_ok());
    assert!(patched(doc, "- {op: test, path: /later/x, value: 1}\n").is_ok());
    // An alias before its anchor is refused.
    assert_eq!(
        patched(doc, "- {op: move, from: /base, path: /zzz}\n").unwrap_err(),
        "op 0 (move /zzz): the result would use alias *b before (or without) its anchor"
    );
    // Copies carry no anchors; replacing an alias keeps the anchor intact.
    assert_eq!(
        patched(
            doc,
            "- {op: copy, from: /base, path: /c}\n- {op: replace, path: /later, value: 3}\n"
        )
        .unwrap(),
        "base: &b\n  x: 1\nuse: *b\nlater: 3\nc:\n  x: 1\n"
    );
    // Aliases in the patch are expanded.
    assert_eq!(
        patched(
            "a: 1\n",
            "- {op: add, path: /b, value: &v {k: v}}\n- {op: add, path: /c, value: *v}\n"
        )
        .unwrap(),
        "a: 1\nb:\n  k: v\nc:\n  k: v\n"
    );
}

/// The anchored nodes are read once for a run; a change to one of them makes the next alias
/// followed read it again, so what an alias becomes, or reads, is its anchored node as it is
/// now — across operations, and between the places of one operation.
#[test]
fn aliases_read_their_anchored_node_as_it_is_after_a_change_to_it() {
    let doc = "base: &b\n  x: 1\nuse: *b\nlater: *b\n";
    assert_eq!(
        patched(
            doc,
            "- {op: test, path: /use/x, value: 1}\n- {op: replace, path: /base/x, value: 2}\n- {op: test, path: /later/x, value: 2}\n- {op: add, path: /use/more, value: 3}\n"
        )
        .unwrap(),
        "base: &b\n  x: 2\nuse:\n  x: 2\n  more: 3\nlater: *b\n"
    );
    // One operation at places the first of which is the anchored node: in document order for
    // a list's elements (each list rebuilt at once), last first for members.
    assert_eq!(
        patched(
            "top:\n- &e {x: 1}\n- *e\n",
            "- {op: add, path: '/top/[*]/more', value: 2}\n"
        )
        .unwrap(),
        "top:\n- &e {x: 1, more: 2}\n- {x: 1, more: 2}\n"
    );
    // A nested anchor inside a changed anchored node is read again too.
    assert_eq!(
        patched(
            "a: &a {in: &i {k: 1}}\nb: *i\n",
            "- {op: replace, path: /a/in/k, value: 2}\n- {op: add, path: /b/z, value: 0}\n"
        )
        .unwrap(),
        "a: &a {in: &i {k: 2}}\nb: {k: 2, z: 0}\n"
    );
}

#[test]
fn results_stay_within_the_nesting_limit() {
    let deep = "[".repeat(MAX_DEPTH - 1) + &"]".repeat(MAX_DEPTH - 1);
    let doc = format!("a: {deep}\n");
    assert!(patched(&doc, "- {op: copy, from: /a, path: /b}\n").is_ok());
    assert_eq!(
        patched(
            &doc,
            "- {op: add, path: /b, value: {c: 1}}\n- {op: copy, from: /a, path: /b/c}\n"
        )
        .unwrap_err(),
        format!("op 1 (copy /b/c): the result would nest deeper than {MAX_DEPTH} levels")
    );
}

#[test]
fn spacing_of_the_place_is_kept() {
    assert_eq!(
        patched("a:   1 # c\n", "- {op: replace, path: /a, value: 2}\n").unwrap(),
        "a:   2 # c\n"
    );
}

#[test]
fn tokens_built_by_hand_mean_what_their_text_says() {
    let mut doc = Node::seq_of(vec![Node::plain("x"), Node::plain("y")]);
    let ops = [
        Op::Remove {
            path: Pointer::from_tokens(vec![Token::Name("1".into())]),
        },
        Op::Add {
            path: Pointer::from_tokens(vec![Token::Name("-".into())]),
            value: Node::plain("z"),
        },
    ];
    patch(&mut doc, &ops).unwrap();
    assert_eq!(to_json(&doc).unwrap(), serde_json::json!(["x", "z"]));
}

#[test]
fn errors_display_like_the_contract() {
    let e = PatchError {
        op: 2,
        verb: Some(Verb::Replace),
        path: "/spec/x".into(),
        from: false,
        kind: PatchErrorKind::NotFound { at: None },
    };
    assert_eq!(e.to_string(), "op 2 (replace /spec/x): path does not exist");
    assert!(e.kind.is_missing());
}

#[test]
fn to_json_of_results_matches_the_data() {
    let out = patched(
        "a: [1]\n",
        r#"[{"op": "add", "path": "/a/0", "value": {"b": null}}]"#,
    )
    .unwrap();
    let docs = parse_stream(&out).unwrap();
    assert_eq!(
        to_json(docs[0].root.as_ref().unwrap()).unwrap(),
        serde_json::json!({"a": [{"b": null}, 1]})
    );
}

// ----- wildcards -----

/// `doc` patched with `patch`, and the places each operation reached.
fn counted(doc: &str, patch: &str) -> Result<(String, Vec<usize>), String> {
    let docs = parse_stream(doc).map_err(|e| e.to_string())?;
    let pdocs = parse_stream(patch).map_err(|e| e.to_string())?;
    let ops = parse_ops(pdocs[0].root.as_ref().unwrap()).map_err(|e| e.to_string())?;
    let mut d = docs[0].clone();
    let before = emit(&d);
    match patch_with(
        d.root.as_mut().unwrap(),
        &ops,
        &Options::default(),
        &mut Budget::new(),
    ) {
        Ok(n) => Ok((emit(&d), n)),
        Err(e) => {
            assert_eq!(emit(&d), before, "changed on error");
            Err(e.to_string())
        }
    }
}

const PODS: &str = "\
c:
- name: a # first
  image: x
- name: b
  image: y
  env:
  - name: K
    value: v
";

#[test]
fn add_at_every_element_makes_the_list_it_appends_to() {
    let (out, n) = counted(
        PODS,
        "- {op: add, path: '/c/[*]/env/-', value: {name: CA, value: /etc/ca}}\n",
    )
    .unwrap();
    assert_eq!(n, [2]);
    assert_eq!(
            out,
            "c:\n- name: a # first\n  image: x\n  env:\n  - name: CA\n    value: /etc/ca\n- name: b\n  image: y\n  env:\n  - name: K\n    value: v\n  - name: CA\n    value: /etc/ca\n"
        );
    // A member under a missing mapping: the mappings are made.
    let (out, _) = counted(
        "c:\n- name: a\n",
        "- {op: add, path: '/c/[*]/resources/limits/cpu', value: 1}\n",
    )
    .unwrap();
    assert_eq!(
        out,
        "c:\n- name: a\n  resources:\n    limits:\n      cpu: 1\n"
    );
    // Nothing is made for a selector, or before a name that reads as a selector.
    assert_eq!(
        counted(
            PODS,
            "- {op: add, path: '/c/[*]/env/[name=K]/value', value: w}\n"
        )
        .unwrap_err(),
        "op 0 (add /c/[*]/env/[name=K]/value): at /c/0/env/[name=K]/value: path does not \
             exist (nothing at /c/0/env)"
    );
    assert!(counted(
        "c:\n- {}\n",
        "- {op: add, path: '/c/[*]/x/[a=b]', value: 1}\n"
    )
    .is_err());
    // Without a wildcard, add keeps RFC 6902's rule: the parent must exist.
    assert!(counted(PODS, "- {op: add, path: /c/0/env/-, value: 1}\n").is_err());
}

#[test]
fn a_wildcard_that_selects_nothing_does_nothing() {
    for doc in ["c: []\n", "d: 1\n", "c:\n- name: a\n  env: []\n"] {
        for op in [
            "{op: add, path: '/c/[*]/x', value: 1}",
            "{op: remove, path: '/c/[*]'}",
            "{op: replace, path: '/c/[*]/name', value: 1}",
            "{op: test, path: '/c/[*]/env/[*]/name', value: 1}",
            "{op: copy, from: '/c/[*]/env/[*]', path: /d}",
            "{op: move, from: '/c/[*]/env/[*]', path: /d}",
            "{op: copy, from: /d, path: '/c/[*]/env/[*]/k'}",
        ] {
            if doc.contains("name: a") && !op.contains("env") {
                continue;
            }
            assert_eq!(
                counted(doc, &format!("- {op}\n")),
                Ok((doc.to_owned(), vec![0])),
                "{doc} {op}"
            );
        }
    }
    // A scalar where a list or mapping must be is an error, before a wildcard as after.
    assert_eq!(
        counted("c: 1\n", "- {op: remove, path: '/c/[*]/x'}\n").unwrap_err(),
        "op 0 (remove /c/[*]/x): /c is a scalar, it has no members"
    );
}

#[test]
fn remove_and_replace_skip_the_places_that_lack_their_target() {
    let (out, n) = counted(PODS, "- {op: remove, path: '/c/[*]/env/[name=K]'}\n").unwrap();
    assert_eq!(n, [1]);
    assert_eq!(
        out,
        "c:\n- name: a # first\n  image: x\n- name: b\n  image: y\n  env: []\n"
    );
    let (out, n) = counted(
        PODS,
        "- {op: replace, path: '/c/[*]/env/0/value', value: w}\n",
    )
    .unwrap();
    assert_eq!(n, [1]);
    assert!(out.contains("value: w"));
    let (out, n) = counted(PODS, "- {op: replace, path: '/c/[*]/image', value: z}\n").unwrap();
    assert_eq!((out.matches("image: z").count(), n), (2, vec![2]));
    // Every element of the list itself, whatever its position.
    let (out, n) = counted("l: [a, b, c]\n", "- {op: remove, path: '/l/[*]'}\n").unwrap();
    assert_eq!((out.as_str(), n), ("l: []\n", vec![3]));
}

#[test]
fn test_holds_when_it_holds_at_every_place() {
    assert_eq!(
        counted(PODS, "- {op: test, path: '/c/[*]/name', value: a}\n").unwrap_err(),
        "op 0 (test /c/[*]/name): at /c/1/name: value does not match"
    );
    let doc = "c:\n- {n: 1}\n- {n: 1.0}\n";
    assert_eq!(
        counted(doc, "- {op: test, path: '/c/[*]/n', value: 1}\n")
            .unwrap()
            .1,
        [2]
    );
    // A place below the wildcard that is missing fails the test.
    assert_eq!(
        counted(PODS, "- {op: test, path: '/c/[*]/env/0/value', value: v}\n").unwrap_err(),
        "op 0 (test /c/[*]/env/0/value): at /c/0/env/0/value: path does not exist (nothing \
             at /c/0/env)"
    );
    // Nested: every env var of every container.
    let (_, n) = counted(
        PODS,
        "- {op: test, path: '/c/[*]/env/[*]/name', value: K}\n",
    )
    .unwrap();
    assert_eq!(n, [1]);
}

#[test]
fn add_before_every_element_and_the_first_failure_in_document_order() {
    let (out, n) = counted("l: [a, b]\n", "- {op: add, path: '/l/[*]', value: v}\n").unwrap();
    assert_eq!((out.as_str(), n), ("l: [v, a, v, b]\n", vec![2]));
    // Both elements fail; the error names the first.
    assert_eq!(
        counted("l: [1, 2]\n", "- {op: add, path: '/l/[*]/x', value: v}\n").unwrap_err(),
        "op 0 (add /l/[*]/x): at /l/0/x: /l/0 is a scalar, it has no members"
    );
    // All or nothing: a later operation that fails undoes the wildcard's changes.
    assert!(counted(
        PODS,
        "- {op: add, path: '/c/[*]/p', value: 1}\n- {op: remove, path: /zzz}\n"
    )
    .is_err());
}

#[test]
fn move_and_copy_with_wildcards() {
    // Every value of from, in document order, to one place.
    let (out, n) = counted(
        "a: [x, y, z]\nb: [w]\n",
        "- {op: move, from: '/a/[*]', path: /b/-}\n",
    )
    .unwrap();
    assert_eq!((out.as_str(), n), ("a: []\nb: [w, x, y, z]\n", vec![3]));
    // All are taken out first, then added in document order (the emptied flow list that
    // receives them becomes block, as any does).
    let (out, _) = counted("a: [x, y]\n", "- {op: move, from: '/a/[*]', path: /a/0}\n").unwrap();
    assert_eq!(out, "a:\n- y\n- x\n");
    let (out, _) = counted("a: [x, y]\n", "- {op: copy, from: '/a/[*]', path: /a/-}\n").unwrap();
    assert_eq!(out, "a: [x, y, x, y]\n");
    // One value to every place.
    let (out, n) = counted(PODS, "- {op: copy, from: /c/0/image, path: '/c/[*]/old'}\n").unwrap();
    assert_eq!((out.matches("old: x").count(), n), (2, vec![2]));
    // Paired: each element's value to a place in the same element; missing ones skipped.
    let (out, n) = counted(
        PODS,
        "- {op: copy, from: '/c/[*]/env/0/value', path: '/c/[*]/first'}\n",
    )
    .unwrap();
    assert_eq!(n, [1]);
    assert!(out.ends_with("    value: v\n  first: v\n"), "{out}");
    let (out, n) = counted(
        PODS,
        "- {op: move, from: '/c/[*]/image', path: '/c/[*]/spec/image'}\n",
    )
    .unwrap();
    assert_eq!(n, [2]);
    assert!(
        out.contains("- name: a # first\n  spec:\n    image: x\n"),
        "{out}"
    );
    // Each element's list values, nested below the pairing.
    let (out, _) = counted(
        "c:\n- p: [1, 2]\n- p: [3]\n",
        "- {op: copy, from: '/c/[*]/p/[*]', path: '/c/[*]/q/-'}\n",
    )
    .unwrap();
    assert_eq!(
        out,
        "c:\n- p: [1, 2]\n  q:\n  - 1\n  - 2\n- p: [3]\n  q:\n  - 3\n"
    );
    assert_eq!(
        counted(
            "a: [{b: 1}]\n",
            "- {op: move, from: '/a/[*]', path: /a/0/b/c}\n"
        )
        .unwrap_err(),
        "op 0 (move from /a/[*]): at /a/0: a value cannot be moved into one of its own children"
    );
}

#[test]
fn unpaired_wildcards_are_refused_when_the_patch_is_read() {
    let cases = [
        (
            "{op: move, from: /a, path: '/b/[*]/c'}",
            "a move takes each value",
        ),
        (
            "{op: copy, from: '/a/[*]/x', path: '/b/[*]/x'}",
            "must be the same up to",
        ),
        (
            "{op: copy, from: '/a/[*]', path: '/a/[*]/x'}",
            "both go on below",
        ),
        (
            "{op: move, from: '/a/[*]/x', path: '/a/[*]'}",
            "both go on below",
        ),
    ];
    for (op, msg) in cases {
        let text = format!("- {op}\n");
        let docs = parse_stream(&text).unwrap();
        let err = parse_ops(docs[0].root.as_ref().unwrap()).unwrap_err();
        assert!(err.to_string().contains(msg), "{op}: {err}");
    }
}

#[test]
fn a_wildcard_on_a_mapping_is_a_member_name() {
    let (out, n) = counted(
        "m:\n  '[*]': 1\n",
        "- {op: replace, path: '/m/[*]', value: 2}\n",
    )
    .unwrap();
    assert_eq!((out.as_str(), n), ("m:\n  '[*]': 2\n", vec![1]));
}

#[test]
fn wildcards_keep_comments_and_follow_aliases() {
    let doc = "base: &b\n  x: 1\nl:\n- *b # alias\n- y: 2 # kept\n";
    let (out, n) = counted(doc, "- {op: add, path: '/l/[*]/z', value: 3}\n").unwrap();
    assert_eq!(n, [2]);
    // The same as one operation per element.
    let (each, _) = counted(
        doc,
        "- {op: add, path: /l/0/z, value: 3}\n- {op: add, path: /l/1/z, value: 3}\n",
    )
    .unwrap();
    assert_eq!(out, each);
    assert!(out.starts_with("base: &b\n  x: 1\n") && out.ends_with("- y: 2 # kept\n  z: 3\n"));
}

#[test]
fn at_a_place_every_pointer_is_below_a_wildcard() {
    let at_place = |doc: &str, patch: &str| -> Result<(String, Vec<usize>), String> {
        let mut d = parse_stream(doc).unwrap()[0].clone();
        let pdocs = parse_stream(patch).unwrap();
        let ops = parse_ops(pdocs[0].root.as_ref().unwrap()).unwrap();
        patch_at_place(
            d.root.as_mut().unwrap(),
            &ops,
            &Options::default(),
            &mut Budget::new(),
        )
        .map(|n| (emit(&d), n))
        .map_err(|e| e.to_string())
    };
    let container = "name: a\n";
    let (out, n) = at_place(
            container,
            "- {op: add, path: /env/-, value: {name: X}}\n- {op: remove, path: '/env/[name=Y]'}\n- {op: replace, path: /image, value: i}\n- {op: copy, from: /nope, path: /x}\n- {op: move, from: /name, path: /meta/name}\n",
        )
        .unwrap();
    assert_eq!(out, "env:\n- name: X\nmeta:\n  name: a\n");
    assert_eq!(n, [1, 0, 0, 0, 1]);
    // test still fails where the value is not there, without naming the place twice.
    assert_eq!(
        at_place(container, "- {op: test, path: /image, value: i}\n").unwrap_err(),
        "op 0 (test /image): path does not exist"
    );
    // Without wildcards or a place, RFC 6902's rules.
    assert!(counted(container, "- {op: add, path: /env/-, value: 1}\n").is_err());
}

/// Many operations on wide mappings, where members are found through the session's index:
/// the result is the json-patch crate's, operation after operation, with members appended,
/// removed, replaced, moved and copied in between.
#[test]
fn wide_mappings_patched_through_the_member_index_agree_with_json_patch() {
    use serde_json::{json, Value};
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..200 {
        let mut data = serde_json::Map::new();
        for i in 0..40 {
            let v = if i % 7 == 0 {
                let sub: serde_json::Map<String, Value> =
                    (0..20).map(|j| (format!("j{j}"), json!(j))).collect();
                Value::Object(sub)
            } else {
                json!(format!("v{i}"))
            };
            data.insert(format!("k{i}"), v);
        }
        let mut model = json!({"data": data, "list": [{"a": 1}, {"a": 2}]});
        let start = model.clone();
        let mut ops: Vec<Value> = Vec::new();
        for _ in 0..60 {
            let keys: Vec<String> = model["data"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let existing = |rng: &mut Rng| {
                if keys.is_empty() {
                    "/data/none".to_owned()
                } else {
                    let k = &keys[rng.below(keys.len())];
                    match &model["data"][k] {
                        Value::Object(sub) if !sub.is_empty() && rng.below(2) == 0 => {
                            let sk: Vec<&String> = sub.keys().collect();
                            format!("/data/{k}/{}", sk[rng.below(sk.len())])
                        }
                        _ => format!("/data/{k}"),
                    }
                }
            };
            let fresh = format!("/data/n{}", rng.below(80));
            let op = match rng.below(7) {
                0 | 1 => {
                    json!({"op": "add", "path": fresh, "value": format!("x{}", rng.below(9))})
                }
                2 => json!({"op": "remove", "path": existing(&mut rng)}),
                3 => json!({"op": "replace", "path": existing(&mut rng), "value": {"r": 1}}),
                4 => json!({"op": "move", "from": existing(&mut rng), "path": fresh}),
                5 => json!({"op": "copy", "from": existing(&mut rng), "path": fresh}),
                _ => {
                    let path = existing(&mut rng);
                    let value = model.pointer(&path).cloned().unwrap_or(Value::Null);
                    json!({"op": "test", "path": path, "value": value})
                }
            };
            let patch: json_patch::Patch = serde_json::from_value(json!([op.clone()])).unwrap();
            let mut next = model.clone();
            if json_patch::patch_unsafe(&mut next, &patch).is_ok() {
                model = next;
                ops.push(op);
            }
        }
        let text = Value::Array(ops.clone()).to_string();
        let pdocs = parse_stream(&text).unwrap();
        let parsed = parse_ops(pdocs[0].root.as_ref().unwrap()).unwrap();
        let mut node = crate::yaml::from_json(&start);
        let stale = stale_rebuilds(&mut node, &parsed)
            .unwrap_or_else(|e| panic!("round {round}: {e}\n{text}"));
        assert_eq!(to_json(&node).unwrap(), model, "round {round}: {text}");
        // The index was kept up to date, not found out of date and rebuilt.
        assert_eq!(stale, 0, "round {round}: {text}");
    }
}

/// The caller's budget is spent by what the operations do, and refuses past its bound: key
/// selectors' scans, shifting, copies (the first two are too slow to reach in a test through
/// real operations alone in a debug build, so the budget comes in nearly spent).
#[test]
fn the_budget_refuses_past_its_bounds() {
    let ops = |text: &str| -> Vec<Op<'static>> {
        let d = parse_stream(text).unwrap();
        parse_ops(&d[0].root.clone().unwrap().into_owned()).unwrap()
    };
    let mut doc = parse_stream("l: [{name: a}, {name: b}]\n").unwrap()[0]
        .root
        .clone()
        .unwrap();
    let before = doc.clone();
    let opts = Options::default();
    let mut budget = Budget::new();
    budget.scan(SCAN_BUDGET - 2).unwrap();
    let select = ops("- {op: test, path: '/l/[name=b]/name', value: b}\n");
    assert!(patch_with(&mut doc, &select, &opts, &mut budget).is_ok());
    assert_eq!(
        patch_with(&mut doc, &select, &opts, &mut budget)
            .unwrap_err()
            .kind,
        PatchErrorKind::Budget(BudgetError::Scans(SCAN_BUDGET))
    );
    let mut budget = Budget::new();
    budget.shift(SHIFT_BUDGET).unwrap();
    let front = ops("- {op: remove, path: /l/0}\n");
    assert_eq!(
        patch_with(&mut doc, &front, &opts, &mut budget)
            .unwrap_err()
            .kind,
        PatchErrorKind::Budget(BudgetError::Shifts(SHIFT_BUDGET))
    );
    assert!(doc.same_data(&before), "all or nothing");
    // Through aliases, a member of a wide mapping is found by a scan, spent as a selector's.
    let wide: String = (0..20).map(|i| format!("k{i}: {i}, ")).collect();
    let text = format!("w: &w {{{wide}}}\nu: *w\n");
    let mut doc = parse_stream(&text).unwrap()[0].root.clone().unwrap();
    let mut budget = Budget::new();
    budget.scan(SCAN_BUDGET - 20).unwrap();
    let lookup = ops("- {op: test, path: /u/k19, value: 19}\n");
    assert!(patch_with(&mut doc, &lookup, &opts, &mut budget).is_ok());
    assert_eq!(
        patch_with(&mut doc, &lookup, &opts, &mut budget)
            .unwrap_err()
            .kind,
        PatchErrorKind::Budget(BudgetError::Scans(SCAN_BUDGET))
    );
    // Copies: the resource's own size and the slack.
    let big = format!("a: {}\n", "x".repeat(GROWTH_SLACK / 2));
    let mut doc = parse_stream(&big).unwrap()[0].root.clone().unwrap();
    let copies = |n: usize| {
        let text: String = (0..n)
            .map(|i| format!("- {{op: copy, from: /a, path: /c{i}}}\n"))
            .collect();
        ops(&text)
    };
    let err = patch_with(&mut doc, &copies(4), &opts, &mut Budget::new()).unwrap_err();
    assert!(
        matches!(
            err.kind,
            PatchErrorKind::Budget(BudgetError::Grows {
                added: crate::budget::Added::Copy,
                ..
            })
        ),
        "{err}"
    );
    assert_eq!(err.op, 3);
    assert!(patch_with(&mut doc, &copies(2), &opts, &mut Budget::new()).is_ok());
}
