//! Files Go's YAML libraries read, read as they read them: each form that go-yaml (and so
//! kubectl, kustomize and kpt) reads and YAML 1.2 refuses, in a package file of its own
//! (tests/data/go_yaml/FORM/input.yaml), through the binary:
//!
//! * untouched, the file comes back byte for byte;
//! * the data krm-merge reads is the data kpt reads (`kpt.yaml`: what `kpt fn source` made of
//!   it, without kpt's bookkeeping annotations, one JSON document per resource): `krm-merge
//!   diff kpt.yaml input.yaml` finds nothing to change;
//! * copied by a patch deeper, shallower and into a list (so that its text is written again at
//!   other indentations), the node reads the same at each place, by krm-merge and by Go
//!   (`moved.yaml`: what kpt made of krm-merge's output).
//!
//! `kpt.yaml` and `moved.yaml` are recorded, so that the tests run without kpt;
//! `KRM_MERGE_UPDATE_EXPECTED=1` with kpt on PATH records them anew, and where kpt is on PATH
//! the tests check the records against it.
//!
//! Also: a key repeated through an alias is a duplicate key like any other, and what Go refuses
//! stays an error with its place.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::*;

/// A functionConfig that touches nothing.
const NOTHING: &str = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: nothing\nspec:\n  patches:\n  - target: {kind: Nope}\n    patch: 'metadata: {labels: {x: y}}'\n";

/// A functionConfig that copies `data.v` deeper, to the root and into a list.
const COPY: &str = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: copy\nspec:\n  patches:\n  - type: json6902\n    target: {kind: Example}\n    patch: |\n      - {op: add, path: /spec, value: {deep: {deeper: {}}, list: [first]}}\n      - {op: copy, from: /data/v, path: /spec/deep/deeper/v}\n      - {op: copy, from: /data/v, path: /top}\n      - {op: copy, from: /data/v, path: /spec/list/-}\n";

fn case_dir(name: &str) -> PathBuf {
    root().join("tests/data/go_yaml").join(name)
}

/// `text` written to a file of its own in a fresh directory of the test `name`.
fn write_file(name: &str, file: &str, text: &str) -> PathBuf {
    let dir = tmp_dir("go_yaml", name);
    let p = dir.join(file);
    fs::write(&p, text).expect("write");
    p
}

/// What kpt reads of the package file `text`: its resources' data without kpt's bookkeeping
/// annotations, one JSON document each.
fn kpt_reading(name: &str, text: &str) -> String {
    let file = write_file(&format!("{name}-kpt"), "input.yaml", text);
    let out = run(Command::new(host("kpt"))
        .args(["fn", "source"])
        .arg(file.parent().expect("dir")));
    assert!(
        out.status.success(),
        "kpt refuses {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut stream = String::new();
    for mut item in rl_items(&String::from_utf8_lossy(&out.stdout)) {
        if let Some(Value::Object(meta)) = item.get_mut("metadata") {
            if let Some(Value::Object(a)) = meta.get_mut("annotations") {
                a.retain(|k, _| {
                    !k.starts_with("config.kubernetes.io/")
                        && !k.starts_with("internal.config.kubernetes.io/")
                });
                if a.is_empty() {
                    meta.remove("annotations");
                }
            }
        }
        stream.push_str("---\n");
        stream.push_str(&serde_json::to_string(&item).expect("JSON"));
        stream.push('\n');
    }
    stream
}

/// The recorded reading `file` of the case, written anew from kpt when updating; checked
/// against kpt where it is on PATH.
fn recorded(name: &str, file: &str, text: &str) -> PathBuf {
    let path = case_dir(name).join(file);
    if updating() {
        fs::write(&path, kpt_reading(name, text)).expect("record");
    } else if cfg!(host_kpt) {
        let now = kpt_reading(name, text);
        let was = fs::read_to_string(&path).expect("the record");
        assert_eq!(
            docs(&now),
            docs(&was),
            "{name}/{file}: kpt reads otherwise now"
        );
    }
    path
}

/// `krm-merge diff WANT FILE` finds nothing to change: the same data.
fn same_data(name: &str, want: &Path, file: &Path) {
    let out = krm(
        &[
            "diff",
            &want.display().to_string(),
            &file.display().to_string(),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{name}: {}", out.stderr);
    assert!(
        out.stdout.trim().is_empty(),
        "{name}: krm-merge reads {} otherwise than {} says:\n{}",
        file.display(),
        want.display(),
        out.stdout
    );
}

fn check(name: &str) {
    let input = case_dir(name).join("input.yaml");
    let text = fs::read_to_string(&input).expect("input.yaml");
    let arg = input.display().to_string();
    // Untouched: byte for byte.
    let nothing = write_file(&format!("{name}-nothing"), "nothing.yaml", NOTHING);
    let out = krm(&["--config", &nothing.display().to_string(), &arg], "");
    assert_eq!(out.code, 0, "{name}: {}", out.stderr);
    assert!(out.stdout == text, "{name}: changed:\n{}", out.stdout);
    // Read as kpt reads it.
    let kpt = recorded(name, "kpt.yaml", &text);
    same_data(name, &kpt, &input);
    // Written again elsewhere, read the same by krm-merge and by Go.
    let copy = write_file(&format!("{name}-copy"), "copy.yaml", COPY);
    let out = krm(&["--config", &copy.display().to_string(), &arg], "");
    assert_eq!(out.code, 0, "{name}: {}", out.stderr);
    let copied = write_file(&format!("{name}-copied"), "copied.yaml", &out.stdout);
    let moved = recorded(name, "moved.yaml", &out.stdout);
    same_data(name, &moved, &copied);
    let before = docs(&fs::read_to_string(&kpt).expect("kpt.yaml"));
    let after = docs(&fs::read_to_string(&moved).expect("moved.yaml"));
    let v = &before[0]["data"]["v"];
    assert!(!v.is_null(), "{name}: no data.v");
    for at in ["/top", "/spec/deep/deeper/v", "/spec/list/1", "/data/v"] {
        assert_eq!(
            after[0].pointer(at),
            Some(v),
            "{name}: {at}\n{}",
            out.stdout
        );
    }
}

macro_rules! forms {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*
    };
}

forms!(
    quoted_lines_at_the_key_column,
    double_quoted_lines_at_the_key_column,
    quoted_lines_at_column_zero,
    quoted_item_lines_at_the_dash_column,
    quoted_closing_line_at_the_key_column,
    flow_closing_bracket_at_the_key_column,
    flow_lines_at_column_zero,
    flow_map_lines_at_the_key_column,
    tab_leading_a_quoted_line,
    tab_leading_a_flow_line,
    escaped_single_quote,
    comment_glued_to_a_quoted_scalar,
    comment_glued_to_a_flow_end,
    comment_glued_to_a_comma,
    comment_glued_to_a_block_header,
    block_header_at_the_key_column,
    read_by_the_parser,
);

/// Every form has its test above.
#[test]
fn every_form_is_tested() {
    let listed = include_str!("go_yaml.rs");
    for e in fs::read_dir(root().join("tests/data/go_yaml")).expect("forms") {
        let name = e.expect("entry").file_name().to_string_lossy().into_owned();
        assert!(
            listed.contains(&format!("    {name},\n")),
            "{name} has no test"
        );
    }
}

/// `&k key: v` then `*k : w` in one mapping repeats `key`: refused like any other repeated
/// key (kubectl apply refuses it too), with its place; an alias of another key's anchor, or of
/// a value, is a key like any other.
#[test]
fn a_key_repeated_through_an_alias_is_a_duplicate() {
    let head = "apiVersion: example.com/v1\nkind: Example\nmetadata:\n  name: &n dup\ndata:\n";
    for (body, at) in [
        ("  &k key: v\n  *k : w\n", "line 7, column 3"),
        ("  dup: 1\n  *n : 2\n", "line 7, column 3"),
        ("  x: &v y\n  y: 1\n  *v : 2\n", "line 8, column 3"),
    ] {
        let text = format!("{head}{body}");
        let file = write_file("dup", "input.yaml", &text);
        let nothing = write_file("dup-config", "nothing.yaml", NOTHING);
        let out = krm(
            &[
                "--config",
                &nothing.display().to_string(),
                &file.display().to_string(),
            ],
            "",
        );
        assert!(out.code != 0 && out.stdout.is_empty(), "{text}");
        assert!(
            out.stderr.contains(at) && out.stderr.contains("duplicate key"),
            "{text}: {}",
            out.stderr
        );
    }
    // Not repeated: read.
    let text = format!("{head}  &k key: v\n  other: *k\n  *n : w\n");
    let file = write_file("dup", "input.yaml", &text);
    let nothing = write_file("dup-config", "nothing.yaml", NOTHING);
    let out = krm(
        &[
            "--config",
            &nothing.display().to_string(),
            &file.display().to_string(),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{text}: {}", out.stderr);
    assert_eq!(out.stdout, text);
}

/// What Go refuses stays an error with its place: a document marker starting a quoted
/// scalar's line, an escape Go does not know, a tab indenting a block.
#[test]
fn what_go_refuses_stays_an_error() {
    let head = "apiVersion: example.com/v1\nkind: Example\nmetadata:\n  name: x\ndata:\n";
    for (body, line) in [
        ("  v: 'x\n---\n  y'\n", 7),
        ("  v: \"a\\qb\"\n", 6),
        ("  v:\n\t- x\n", 7),
    ] {
        let text = format!("{head}{body}");
        let file = write_file("refused", "input.yaml", &text);
        let nothing = write_file("refused-config", "nothing.yaml", NOTHING);
        let out = krm(
            &[
                "--config",
                &nothing.display().to_string(),
                &file.display().to_string(),
            ],
            "",
        );
        assert!(out.code != 0 && out.stdout.is_empty(), "{text}");
        assert!(
            out.stderr.contains(&format!("line {line}, column ")),
            "{text}: {}",
            out.stderr
        );
    }
}
