//! The generators the property tests share (`properties.rs`, `diff_properties.rs`): small
//! random YAML trees — maps, lists of scalars, lists keyed by `name`, flow collections, scalars
//! of every style, comments — written as YAML text the way people write it, and the changes
//! that make an updated version of one.

use std::fmt::Write as _;

use krm_merge::yaml::{self, Node};
use proptest::prelude::*;

// ----- the generated trees ------------------------------------------------------------------

#[derive(Clone, Debug)]
pub(crate) enum Scalar {
    Word(String),
    Int(i64),
    Bool(bool),
    Null,
    Single(String),
    Double(String),
    Literal(Vec<String>),
}

#[derive(Clone, Debug)]
pub(crate) enum Val {
    S(Scalar),
    /// Fields with an optional line comment and an optional head comment.
    Map(Vec<Field>),
    Seq(Vec<Val>),
    /// A flow sequence of words.
    Flow(Vec<String>),
}

#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub(crate) key: String,
    pub(crate) val: Val,
    pub(crate) line: Option<String>,
    pub(crate) head: Option<String>,
}

/// Keys are drawn from a small pool, so that a patch and a resource share fields.
pub(crate) const KEYS: &[&str] = &["a", "b", "c", "image", "port", "value", "items", "x-y"];

pub(crate) fn word() -> impl Strategy<Value = String> {
    "[a-z]{1,7}".prop_filter("not a YAML keyword", |w| {
        !matches!(
            w.as_str(),
            "null" | "true" | "false" | "y" | "n" | "yes" | "no" | "on" | "off"
        )
    })
}

pub(crate) fn scalar(nulls: bool) -> BoxedStrategy<Scalar> {
    let mut options: Vec<(u32, BoxedStrategy<Scalar>)> = vec![
        (4, word().prop_map(Scalar::Word).boxed()),
        (2, (-1000i64..100_000).prop_map(Scalar::Int).boxed()),
        (1, any::<bool>().prop_map(Scalar::Bool).boxed()),
        (2, "[a-zA-Z0-9 :#'-]{0,10}".prop_map(Scalar::Single).boxed()),
        (
            2,
            "[a-zA-Z0-9 :#\"\\\\-]{0,10}"
                .prop_map(Scalar::Double)
                .boxed(),
        ),
        (
            1,
            prop::collection::vec("[a-z]([a-z ]{0,8}[a-z])?", 1..4)
                .prop_map(Scalar::Literal)
                .boxed(),
        ),
    ];
    if nulls {
        options.push((1, Just(Scalar::Null).boxed()));
    }
    prop::strategy::Union::new_weighted(options).boxed()
}

pub(crate) fn comment() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(0.2, "[a-z][a-z ]{0,10}")
}

pub(crate) fn fields(
    inner: BoxedStrategy<Val>,
    skip_name: bool,
) -> impl Strategy<Value = Vec<Field>> {
    prop::collection::vec((0..KEYS.len(), inner, comment(), comment()), 0..4).prop_map(move |fs| {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for (k, val, line, head) in fs {
            let key = KEYS[k].to_owned();
            if seen.contains(&key) || (skip_name && key == "name") {
                continue;
            }
            seen.push(key.clone());
            out.push(Field {
                key,
                val,
                line,
                head,
            });
        }
        out
    })
}

pub(crate) fn val(nulls: bool) -> BoxedStrategy<Val> {
    let leaf = prop_oneof![
        6 => scalar(nulls).prop_map(Val::S),
        1 => prop::collection::vec(word(), 0..3).prop_map(Val::Flow),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            3 => fields(inner.clone(), false).prop_map(Val::Map),
            1 => prop::collection::vec(inner.clone(), 0..3).prop_map(Val::Seq),
            // A list keyed by `name` (the associative-key heuristic pairs its elements).
            2 => prop::collection::vec(fields(inner, true), 1..4).prop_map(|els| {
                Val::Seq(
                    els.into_iter()
                        .enumerate()
                        .map(|(i, mut fs)| {
                            fs.insert(0, Field {
                                key: "name".into(),
                                val: Val::S(Scalar::Word(format!("n{i}"))),
                                line: None,
                                head: None,
                            });
                            Val::Map(fs)
                        })
                        .collect(),
                )
            }),
        ]
    })
    .boxed()
}

/// A resource's `spec`: a non-empty map.
pub(crate) fn spec(nulls: bool) -> impl Strategy<Value = Vec<Field>> {
    fields(val(nulls), false).prop_filter("non-empty", |f| !f.is_empty())
}

// ----- writing them as YAML -----------------------------------------------------------------

pub(crate) fn scalar_text(s: &Scalar, indent: usize) -> String {
    match s {
        Scalar::Word(w) => w.clone(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Null => "null".into(),
        Scalar::Single(t) => format!("'{}'", t.replace('\'', "''")),
        Scalar::Double(t) => format!("\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\"")),
        Scalar::Literal(lines) => {
            let pad = " ".repeat(indent + 2);
            let mut s = "|".to_owned();
            for l in lines {
                s.push('\n');
                s.push_str(&pad);
                s.push_str(l);
            }
            s
        }
    }
}

pub(crate) fn line_comment(c: &Option<String>) -> String {
    c.as_ref().map(|c| format!(" # {c}")).unwrap_or_default()
}

pub(crate) fn write_map(fs: &[Field], indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for f in fs {
        if let Some(h) = &f.head {
            let _ = writeln!(out, "{pad}# {h}");
        }
        let _ = write!(out, "{pad}{}:", f.key);
        write_value(&f.val, &f.line, indent, out);
    }
}

/// A value after `key:`, then its line end.
pub(crate) fn write_value(v: &Val, line: &Option<String>, indent: usize, out: &mut String) {
    match v {
        Val::S(Scalar::Literal(_)) => {
            // `key: | # comment` then the body.
            let text = scalar_text(
                match v {
                    Val::S(s) => s,
                    _ => unreachable!(),
                },
                indent,
            );
            let (header, body) = text.split_once('\n').unwrap_or((&text, ""));
            let _ = writeln!(out, " {header}{}\n{body}", line_comment(line));
        }
        Val::S(s) => {
            let _ = writeln!(out, " {}{}", scalar_text(s, indent), line_comment(line));
        }
        Val::Flow(ws) => {
            let _ = writeln!(out, " [{}]{}", ws.join(", "), line_comment(line));
        }
        Val::Map(fs) if fs.is_empty() => {
            let _ = writeln!(out, " {{}}{}", line_comment(line));
        }
        Val::Seq(items) if items.is_empty() => {
            let _ = writeln!(out, " []{}", line_comment(line));
        }
        Val::Map(fs) => {
            let _ = writeln!(out, "{}", line_comment(line));
            write_map(fs, indent + 2, out);
        }
        Val::Seq(items) => {
            let _ = writeln!(out, "{}", line_comment(line));
            write_seq(items, indent, out);
        }
    }
}

/// A block sequence whose dashes are at `indent` (kubectl's compact style).
pub(crate) fn write_seq(items: &[Val], indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for item in items {
        match item {
            Val::Map(fs) if !fs.is_empty() => {
                let mut inner = String::new();
                write_map(fs, indent + 2, &mut inner);
                // The first line of the map goes after the dash.
                let first = inner.trim_start_matches(' ');
                let _ = write!(out, "{pad}- {first}");
            }
            Val::Seq(inner) => {
                // A list in a list: written as a flow list of words, or `[]`.
                let words: Vec<String> = inner
                    .iter()
                    .filter_map(|v| match v {
                        Val::S(Scalar::Word(w)) => Some(w.clone()),
                        _ => None,
                    })
                    .collect();
                let _ = writeln!(out, "{pad}- [{}]", words.join(", "));
            }
            other => {
                let _ = write!(out, "{pad}-");
                write_value(other, &None, indent, out);
            }
        }
    }
}

/// A resource of kind `Thing` (no built-in schema: lists pair by the heuristic).
pub(crate) fn resource(name: &str, spec: &[Field], comment: &Option<String>) -> String {
    let mut s = String::new();
    if let Some(c) = comment {
        let _ = writeln!(s, "# {c}");
    }
    let _ = write!(
        s,
        "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: {name}\nspec:"
    );
    if spec.is_empty() {
        s.push_str(" {}\n");
    } else {
        s.push('\n');
        write_map(spec, 2, &mut s);
    }
    s
}

// ----- reading and writing --------------------------------------------------------------

pub(crate) fn parse(text: &str) -> Node<'static> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("generated YAML does not parse: {e}\n{text}"))
        .into_iter()
        .find_map(|d| d.root)
        .map(Node::into_owned)
        .unwrap_or_else(Node::null)
}

pub(crate) fn emit(node: &Node<'_>) -> String {
    yaml::emit_node(node, yaml::EmitOptions::default())
}

/// As JSON, aliases expanded: maps compare without order.
pub(crate) fn json(node: &Node<'_>) -> serde_json::Value {
    let mut n = node.clone();
    n.expand_aliases(1_000_000).expect("aliases");
    yaml::to_json(&n).expect("JSON")
}

// ----- changes: an updated version of a tree ------------------------------------------------

/// A small deterministic generator for the choices of [`mutate`].
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Changes some fields of a map: a value replaced by one from `pool`, a field removed, a field
/// added at the end, a keyed element removed or added at the end; recursively.
pub(crate) fn mutate_fields(fs: &mut Vec<Field>, rng: &mut Rng, pool: &[Val]) {
    let mut i = 0;
    while i < fs.len() {
        if fs[i].key == "name" {
            i += 1;
            continue;
        }
        match rng.below(6) {
            0 if !pool.is_empty() => fs[i].val = pool[rng.below(pool.len())].clone(),
            1 => {
                fs.remove(i);
                continue;
            }
            2 | 3 => mutate_val(&mut fs[i].val, rng, pool),
            _ => {}
        }
        i += 1;
    }
    if rng.below(3) == 0 && !pool.is_empty() {
        let key = KEYS[rng.below(KEYS.len())];
        if !fs.iter().any(|f| f.key == key) {
            fs.push(Field {
                key: key.into(),
                val: pool[rng.below(pool.len())].clone(),
                line: None,
                head: None,
            });
        }
    }
}

pub(crate) fn mutate_val(v: &mut Val, rng: &mut Rng, pool: &[Val]) {
    match v {
        Val::Map(fs) => mutate_fields(fs, rng, pool),
        Val::Seq(items) => {
            let keyed = !items.is_empty()
                && items.iter().all(
                    |i| matches!(i, Val::Map(fs) if fs.first().is_some_and(|f| f.key == "name")),
                );
            if keyed {
                if rng.below(3) == 0 {
                    let at = rng.below(items.len());
                    items.remove(at);
                }
                for i in items.iter_mut() {
                    if let Val::Map(fs) = i {
                        mutate_fields(fs, rng, pool);
                    }
                }
                if rng.below(3) == 0 {
                    items.push(Val::Map(vec![Field {
                        key: "name".into(),
                        val: Val::S(Scalar::Word("added".into())),
                        line: None,
                        head: None,
                    }]));
                }
            } else if rng.below(2) == 0 && !pool.is_empty() {
                *v = pool[rng.below(pool.len())].clone();
            }
        }
        _ => {
            if rng.below(2) == 0 && !pool.is_empty() {
                *v = pool[rng.below(pool.len())].clone();
            }
        }
    }
}
