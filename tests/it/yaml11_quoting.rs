//! Strings a YAML 1.1 reader would take for another type are quoted wherever krm-merge chooses
//! how a string is written (a JSON ResourceList written back as YAML, a value a patch sets, a
//! generated patch), and only those (and what YAML 1.2 or plain syntax needs).
//!
//! The reference here is written from the readers' own definitions, not from the emitter: the
//! regular expressions of the YAML 1.1 type repository (yaml.org/type: bool, null, int, float,
//! timestamp, merge, value), PyYAML's resolver (whose float takes `_` after the point and no
//! digit at all), and go-yaml v2's `resolve` (sigs.k8s.io/yaml's: a lookup table of words, Go's
//! `ParseFloat` for text starting with `.`, and for text starting with a digit or a sign its
//! time layouts, then Go's integer syntax or its float pattern once every `_` is deleted). A
//! table names each form of each type; a property compares the library's decision with the
//! reference on generated text that looks like numbers, words and times; through the binary, a
//! JSON ResourceList of such strings comes back as YAML that reads as the same strings, with
//! every plain one a string to the reference.

use std::sync::OnceLock;

use krm_merge::yaml::scalar::{needs_quotes, plain_ok, resolve_plain, yaml11_lookalike, Resolved};
use krm_merge::yaml::{self, Node, ScalarStyle};
use proptest::prelude::*;
use proptest::test_runner::Config;
use regex::Regex;

use crate::support::krm;

// ----- the reference ------------------------------------------------------------------------

struct Reference {
    /// The type repository's patterns, but its base-10 float.
    spec: Vec<Regex>,
    /// The repository's base-10 float as written: `[0-9.]*` after the point (`1.2.3`).
    letter_float: Regex,
    /// PyYAML's float and timestamp.
    pyyaml: Vec<Regex>,
    /// go-yaml v2: the words of its table, `ParseFloat` on `.`-text, its time layouts.
    go_words: Regex,
    go_dot_float: Regex,
    go_time: Regex,
    /// go-yaml v2 on text with its `_` deleted: Go's integers, its float pattern.
    go_int: Regex,
    go_float: Regex,
}

fn re(p: &str) -> Regex {
    Regex::new(&format!("^(?:{p})$")).expect("reference pattern")
}

fn reference() -> &'static Reference {
    static R: OnceLock<Reference> = OnceLock::new();
    R.get_or_init(|| Reference {
        spec: vec![
            // yaml.org/type/bool.html
            re("y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"),
            // yaml.org/type/null.html
            re("~|null|Null|NULL|"),
            // yaml.org/type/int.html
            re(r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+"),
            // yaml.org/type/float.html, but base 10
            re(r"[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"),
            // yaml.org/type/timestamp.html
            re(r"[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](\.[0-9]*)?(([ \t]*)Z|[-+][0-9][0-9]?(:[0-9][0-9])?)?"),
            // yaml.org/type/merge.html, value.html
            re("<<"),
            re("="),
        ],
        letter_float: re(r"[-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?"),
        pyyaml: vec![
            re(r"[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?"),
            re(r"[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](\.[0-9]*)?([ \t]*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?))?"),
        ],
        go_words: re(r"y|Y|yes|Yes|YES|true|True|TRUE|on|On|ON|n|N|no|No|NO|false|False|FALSE|off|Off|OFF||~|null|Null|NULL|\.nan|\.NaN|\.NAN|[-+]?\.(inf|Inf|INF)|<<"),
        go_dot_float: re(r"\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?"),
        go_time: re(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}([.,][0-9]+)?(Z|[-+][0-9]{2}:[0-9]{2})| [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}([.,][0-9]+)?)?"),
        go_int: re(r"[-+]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)"),
        go_float: re(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"),
    })
}

/// Whether some YAML 1.1 reader takes plain `t` for another type than a string; `letter`: the
/// type repository's base-10 float as written counts too.
fn yaml11_other(t: &str, letter: bool) -> bool {
    let r = reference();
    let go = r.go_words.is_match(t)
        || match t.as_bytes().first() {
            Some(b'.') => r.go_dot_float.is_match(t),
            Some(b'-' | b'+' | b'0'..=b'9') => {
                let plain = t.replace('_', "");
                r.go_time.is_match(t) || r.go_int.is_match(&plain) || r.go_float.is_match(&plain)
            }
            _ => false,
        };
    go || r.spec.iter().any(|x| x.is_match(t))
        || r.pyyaml.iter().any(|x| x.is_match(t))
        || (letter && r.letter_float.is_match(t))
}

fn core_string(t: &str) -> bool {
    matches!(resolve_plain(t), Resolved::Str(_))
}

/// What the library must decide for a string it writes anew.
fn must_quote(t: &str) -> bool {
    !plain_ok(t, false) || !core_string(t) || yaml11_other(t, true)
}

/// What the library must call a YAML 1.1 look-alike among plain text a user wrote.
fn lookalike(t: &str) -> bool {
    core_string(t) && yaml11_other(t, false) && t != "<<" && t != "="
}

// ----- the table ----------------------------------------------------------------------------

/// Each form of each 1.1 type, by reader; and what stays plain.
const OTHER: &[(&str, &[&str])] = &[
    (
        "bool",
        &[
            "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off",
            "Off", "OFF",
        ],
    ),
    ("null", &["~", "null", "Null", "NULL", ""]),
    (
        "int",
        &[
            "0b1010_0111",
            "-0b1",
            "0b_",
            "0755",
            "+0_7",
            "0_",
            "1_000",
            "-1_000",
            "0x_0A_74",
            "1:20",
            "-190:20:30",
            "1_0:05",
            "+1:0",
        ],
    ),
    (
        "float",
        &[
            "685.230_15e+03",
            "685_230.15",
            "1.",
            "-1_.e-1",
            "._",
            "._5",
            ".",
            "-.",
            "+._",
            "190:20:30.15",
            "1:20.",
            "0:30.5",
            ".e+1",
            ".inf",
            "-.Inf",
            "+.INF",
            ".NaN",
        ],
    ),
    (
        "float, by the letter",
        &["1.2.3", "203.0.113.10", "1..", "..", "1.5.", ".1.e+5"],
    ),
    (
        "timestamp",
        &[
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 -5",
            "2001-12-15T02:59:43.1Z",
            "2002-12-14 21:59:43.10 Z",
            "2001-1-2",
            "2001-1-2T3:4:5Z",
            "2001-1-2 3:4:5,25",
        ],
    ),
    ("merge, value", &["<<", "="]),
    (
        "go-yaml v2",
        &[
            "-_1", "+_0x1F", "0_x1", "0X1F", "0O17", "0B11", "08", "09.5", "1_e5", "1e5_", "1__0",
            "-0b_1", ".5_5", ".5e1_0", ".5E5",
        ],
    ),
];

/// Strings to every reader: plain.
const PLAIN: &[&str] = &[
    "web",
    "nginx:1.7",
    "--port",
    "-v",
    "1x",
    "v1",
    "1-2",
    "0:30",
    "1:60",
    "1:",
    ":1",
    "0x",
    "0b",
    "0o",
    "0b2",
    "_1",
    "1_x",
    "._e",
    "-_",
    "2001-1-2x",
    "2001-13",
    "20011-1-1",
    "25%",
    "true-ish",
    "1e",
    "e3",
    "a.5",
    "+",
    "y1",
    "yes!",
];

#[test]
fn the_yaml_1_1_forms_are_quoted_as_a_set() {
    for (ty, texts) in OTHER {
        for t in texts.iter() {
            let letter_only = *ty == "float, by the letter";
            assert!(yaml11_other(t, true), "the reference misses {ty} {t:?}");
            assert_eq!(
                yaml11_other(t, false),
                !letter_only,
                "the reference's readers on {ty} {t:?}"
            );
            assert!(needs_quotes(t, false), "{ty} {t:?} must be quoted");
            assert_eq!(
                yaml11_lookalike(t),
                lookalike(t),
                "{ty} {t:?}: a look-alike of user text"
            );
        }
    }
    for t in PLAIN {
        assert!(
            !yaml11_other(t, true),
            "the reference takes {t:?} for a string"
        );
        assert!(
            !needs_quotes(t, false) || !plain_ok(t, false) || !core_string(t),
            "{t:?} can be plain"
        );
        assert!(!yaml11_lookalike(t), "{t:?} is no look-alike");
    }
    // Plain text from a user: what the readers take, not the letter's `1.2.3`, nor what YAML
    // 1.2 already reads as another type (that is the user's), nor `<<` and `=`.
    for t in ["on", "._", "-_1", "0_x1", "2001-1-2", "1:20", "1_000"] {
        assert!(yaml11_lookalike(t), "{t:?}");
    }
    for t in ["1.2.3", "0755", "1e3", "true", "<<", "="] {
        assert!(!yaml11_lookalike(t), "{t:?}");
    }
}

/// The strings of the table and more, through the binary: a JSON ResourceList (its strings
/// written anew as YAML), then a patch that sets them as values and as keys.
#[test]
fn through_the_binary_the_forms_come_back_quoted() {
    let texts: Vec<&str> = OTHER
        .iter()
        .flat_map(|(_, ts)| ts.iter().copied())
        .chain(PLAIN.iter().copied())
        .collect();
    check_through_the_binary(&texts);
}

/// A JSON ResourceList holding `texts` as the values and keys of a ConfigMap's data, run
/// through the binary with a patch that changes nothing else: the output reads as the same
/// strings, each written plain only where the reference reads a string.
fn check_through_the_binary(texts: &[&str]) {
    let mut data = serde_json::Map::new();
    for (i, t) in texts.iter().enumerate() {
        data.insert(format!("k{i}"), serde_json::Value::String((*t).to_owned()));
        if !t.is_empty() {
            data.insert((*t).to_owned(), serde_json::Value::String(format!("v{i}")));
        }
    }
    let cm = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data,
    });
    let list = serde_json::json!({
        "apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [cm],
        "functionConfig": {
            "apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "Merge", "metadata": {"name": "m"},
            "spec": {"patches": [{"type": "merge2", "patch":
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {touched: 'yes'}}\n"}]},
        },
    });
    let out = krm(&[], &list.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let docs = yaml::parse_stream(&out.stdout).expect("the output reads");
    let root = docs[0].root.as_ref().expect("a document");
    let got = root
        .get("items")
        .and_then(|i| i.items().first())
        .and_then(|i| i.get("data"))
        .expect("the ConfigMap's data");
    assert_eq!(
        yaml::to_json(got).expect("JSON"),
        serde_json::Value::Object(data),
        "{}",
        out.stdout
    );
    for e in got.entries() {
        for n in [&e.key, &e.value] {
            let t = n.as_str().unwrap_or_default();
            if n.style() == Some(ScalarStyle::Plain) {
                assert!(!must_quote(t), "{t:?} is written plain:\n{}", out.stdout);
            }
        }
    }
}

// ----- properties ---------------------------------------------------------------------------

/// Text that looks like a number, a word of 1.1, a time, or like none of them by little.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[-+]?[0-9._:eExXbBoO]{0,8}",
        2 => "[-+]?[0-9]{0,3}[._][0-9_.]{0,4}([eE][-+]?[0-9_]{0,3})?",
        2 => "[-+]?[0-9_]{1,4}(:[0-9]{1,3}){1,3}(\\.[0-9_]{0,3})?",
        2 => "[0-9]{4}-[0-9]{1,3}-[0-9]{1,3}([Tt ]{1,2}[0-9]{1,3}:[0-9]{1,3}:[0-9]{1,3}([.,][0-9]{0,3})?( ?Z|[-+][0-9]{1,3}(:[0-9]{1,3})?)?)?",
        1 => "[-+_]{0,2}0[_]?[xXbBoO]?[_0-9a-fA-F]{0,5}",
        1 => "(y|Y|yes|Yes|YES|yEs|n|N|no|NO|nO|on|On|ON|oN|off|Off|OFF|oFF|true|TRUE|tRue|null|NULL|nUll|~|<<|=|\\.inf|\\.Inf|\\.nan|\\.NAN|\\.naN)[.!_]?",
    ]
}

proptest! {
    #![proptest_config(Config { cases: 4096, ..Config::default() })]

    /// The library quotes exactly what the reference (or YAML 1.2, or plain syntax) reads as
    /// something else, and calls look-alikes exactly what the readers take for another type.
    #[test]
    fn quoting_is_the_reference(t in text()) {
        prop_assert_eq!(needs_quotes(&t, false), must_quote(&t), "{:?}", t);
        prop_assert_eq!(yaml11_lookalike(&t), lookalike(&t), "{:?}", t);
    }
}

proptest! {
    #![proptest_config(Config { cases: 16, ..Config::default() })]

    /// Generated strings through the binary, as values and keys of a JSON ResourceList.
    #[test]
    fn through_the_binary_generated_strings_come_back_quoted(ts in prop::collection::vec(text(), 1..40)) {
        let texts: Vec<&str> = ts.iter().map(String::as_str).collect();
        check_through_the_binary(&texts);
    }
}

/// A value a patch sets from plain text a user wrote, which YAML 1.1 reads as another type,
/// is quoted where it lands; a generated patch quotes what it writes anew, and what NEW wrote
/// plain that YAML 1.1 reads otherwise.
#[test]
fn patches_quote_what_they_write() {
    let dir = crate::support::tmp_dir("yaml11", "patch");
    // Writes OLD and NEW (or a config and its input), runs the binary on them.
    let run = |first: &str, second: &str, args: &[&str]| {
        let (a, b) = (dir.join("a.yaml"), dir.join("b.yaml"));
        std::fs::write(&a, first).expect("write");
        std::fs::write(&b, second).expect("write");
        let (a, b) = (a.to_str().expect("utf8"), b.to_str().expect("utf8"));
        let mut all = args.to_vec();
        all.extend([a, b]);
        let out = krm(&all, "");
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let cm = |data: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n{data}")
    };
    let config = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: m}\nspec:\n  patches:\n  - type: merge2\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: c}\n      data: {a: ._, b: -_1, c: 0_x1, d: 2001-1-2, e: 1.2.3}\n";
    let out = run(config, &cm("  k: v\n"), &["--config"]);
    // A user's `1.2.3` is a string to every reader: it stays as written.
    assert!(
        out.ends_with(
            "data:\n  k: v\n  a: \"._\"\n  b: \"-_1\"\n  c: \"0_x1\"\n  d: \"2001-1-2\"\n  e: 1.2.3\n"
        ),
        "{out}"
    );
    // A strategic merge patch's `$retainKeys` lists field names anew.
    let strategy = |fields: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  strategy:\n{fields}")
    };
    let out = run(
        &strategy("    type: Recreate\n    \"._\": 1\n"),
        &strategy("    type: Recreate\n    \"-_1\": 2\n"),
        &["diff"],
    );
    assert!(
        out.contains("    $retainKeys:\n    - \"-_1\"\n    - type\n"),
        "{out}"
    );
    // A value NEW wrote plain that YAML 1.1 reads as another type is quoted in every patch
    // type (kubectl reads patches as YAML 1.1); one every reader takes for a string is not.
    for ty in ["merge2", "jsonmerge", "json6902"] {
        let out = run(
            &cm("  a: x\n"),
            &cm("  a: on\n  b: ._\n  c: 1.2.3\n"),
            &["diff", "--type", ty],
        );
        for quoted in ["\"on\"", "\"._\""] {
            assert!(out.contains(quoted), "{ty}: {out}");
        }
        assert!(out.contains(" 1.2.3\n"), "{ty}: {out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_reference_reads_its_own_examples() {
    // The repository's examples, each of its type (and none a string).
    for t in [
        "685230",
        "+685_230",
        "02472256",
        "0x_0A_74_AE",
        "0b1010_0111_0100_1010_1110",
        "190:20:30",
        "6.8523015e+5",
        "685.230_15e+03",
        "685_230.15",
        "190:20:30.15",
        "-.inf",
        ".NaN",
        "2001-12-15T02:59:43.1Z",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
        "2001-12-15 2:59:43.10",
        "2002-12-14",
    ] {
        assert!(yaml11_other(t, false), "{t:?}");
    }
    // A node parsed from plain text a 1.1 reader reads otherwise.
    let n: Node<'_> = crate::support::node("a: ._\n");
    assert!(yaml11_lookalike(
        n.get("a").and_then(Node::as_str).expect("a")
    ));
}
