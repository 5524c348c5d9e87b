//! Block YAML for the generated documents (a JSON value), written the way people write
//! manifests: plain scalars where they read back as the same string, double quotes otherwise,
//! `|` blocks for multi-line strings, and optionally flow style for small collections of
//! scalars. Two marker strings stand for the other spellings of null in patches.

use serde_json::Value;

/// A string value written as `~`.
pub const NULL_TILDE: &str = "\u{1}null:tilde";
/// A string value written as nothing at all (`key:`).
pub const NULL_EMPTY: &str = "\u{1}null:empty";
/// A string value starting with this is written plain, as what follows it (`on`, `0777`): text
/// that YAML 1.1 reads as another value than YAML 1.2 does.
pub const PLAIN_MARK: char = '\u{2}';

#[derive(Clone, Copy)]
pub struct Style {
    /// Collections of scalars written in flow style (`{a: b}`, `[x, y]`).
    pub flow_leaves: bool,
    /// List items indented under their key (`key:\n  - a`) instead of level with it.
    pub indent_lists: bool,
    /// String values quoted even where plain would read back the same (`name: "web"`,
    /// `tier: 'fe'`), as Helm charts write them; patches written plain then repeat a value in
    /// other quoting.
    pub quote_strings: bool,
}

pub const PLAIN: Style = Style {
    flow_leaves: false,
    indent_lists: false,
    quote_strings: false,
};

/// One document (no `---`), ending with a newline.
pub fn doc(v: &Value, style: &Style) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => map(&mut out, v, 0, style),
        Value::Array(a) if !a.is_empty() => list(&mut out, v, 0, style),
        _ => {
            out.push_str(&inline(v, false, style.quote_strings));
            out.push('\n');
        }
    }
    out
}

/// A stream of documents separated by `---`.
pub fn stream(docs: &[Value], style: &Style) -> String {
    docs.iter()
        .map(|d| doc(d, style))
        .collect::<Vec<_>>()
        .join("---\n")
}

fn is_leaf_collection(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty() && m.values().all(is_scalar),
        Value::Array(a) => !a.is_empty() && a.iter().all(is_scalar),
        _ => false,
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
        && !matches!(v, Value::String(s) if s == NULL_EMPTY || s.contains('\n'))
}

fn map(out: &mut String, v: &Value, indent: usize, style: &Style) {
    let Value::Object(m) = v else { unreachable!() };
    for (k, val) in m {
        out.push_str(&" ".repeat(indent));
        out.push_str(&key(k));
        out.push(':');
        value_after_key(out, k, val, indent, style);
    }
}

/// Keys whose values are an int or a string (IntOrString), which strategic merge patches set
/// to a number over a name: their strings are never quoted by `quote_strings`, because kustomize
/// gives a new value the old one's quotes and so writes `targetPort: 9999` over
/// `targetPort: "http"` as the string `"9999"` (doc/KUSTOMIZE.md).
pub const INT_OR_STRING: &[&str] = &["targetPort", "port", "containerPort"];

/// What follows `key:` for a value of an entry at `indent`.
fn value_after_key(out: &mut String, k: &str, val: &Value, indent: usize, style: &Style) {
    let unquoted = Style {
        quote_strings: false,
        ..*style
    };
    let style = if INT_OR_STRING.contains(&k) {
        &unquoted
    } else {
        style
    };
    let flow = style.flow_leaves && is_leaf_collection(val);
    match val {
        Value::String(s) if s == NULL_EMPTY => out.push('\n'),
        Value::String(s) if literal_ok(s) => {
            out.push_str(if s.ends_with('\n') { " |\n" } else { " |-\n" });
            for line in s.trim_end_matches('\n').split('\n') {
                if !line.is_empty() {
                    out.push_str(&" ".repeat(indent + 2));
                    out.push_str(line);
                }
                out.push('\n');
            }
        }
        Value::Object(m) if !m.is_empty() && !flow => {
            out.push('\n');
            map(out, val, indent + 2, style);
        }
        Value::Array(a) if !a.is_empty() && !flow => {
            out.push('\n');
            list(
                out,
                val,
                indent + if style.indent_lists { 2 } else { 0 },
                style,
            );
        }
        _ => {
            out.push(' ');
            out.push_str(&inline(val, false, style.quote_strings));
            out.push('\n');
        }
    }
}

fn list(out: &mut String, v: &Value, indent: usize, style: &Style) {
    let Value::Array(items) = v else {
        unreachable!()
    };
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        match item {
            Value::Object(m) if !m.is_empty() => {
                // The first entry on the dash's line, the others under it.
                let mut first = true;
                for (k, val) in m {
                    if first {
                        out.push(' ');
                        first = false;
                    } else {
                        out.push_str(&" ".repeat(indent + 2));
                    }
                    out.push_str(&key(k));
                    out.push(':');
                    value_after_key(out, k, val, indent + 2, style);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                list(out, item, indent + 2, style);
            }
            Value::String(s) if s == NULL_EMPTY => out.push('\n'),
            _ => {
                out.push(' ');
                out.push_str(&inline(item, false, style.quote_strings));
                out.push('\n');
            }
        }
    }
}

/// A multi-line string that a `|` block holds exactly.
fn literal_ok(s: &str) -> bool {
    s.contains('\n')
        && !s.ends_with("\n\n")
        && !s.starts_with([' ', '\n'])
        && !s.contains('\t')
        && !s.contains('\u{1}')
        && s.split('\n').all(|l| !l.ends_with(' '))
}

const KEYWORDS: &[&str] = &[
    "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
];

fn plain_ok(s: &str, is_key: bool) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let first_ok = first.is_ascii_alphabetic() || (is_key && first == '$') || first == '/';
    first_ok
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-~$:".contains(c))
        && !s.ends_with(':')
        && !s.contains(": ")
        && !KEYWORDS.contains(&s.to_ascii_lowercase().as_str())
}

fn key(k: &str) -> String {
    if plain_ok(k, true) {
        k.to_owned()
    } else {
        serde_json::to_string(k).unwrap()
    }
}

/// A value on one line: a scalar, or a collection in flow style (`flow`: inside one); with
/// `quote`, strings quoted (single quotes when they start with a vowel, double otherwise).
fn inline(v: &Value, flow: bool, quote: bool) -> String {
    match v {
        Value::String(s)
            if quote
                && plain_ok(s, false)
                && !s.starts_with(PLAIN_MARK)
                && s != NULL_TILDE
                && s != NULL_EMPTY =>
        {
            if s.starts_with(['a', 'e', 'i', 'o', 'u']) {
                format!("'{s}'")
            } else {
                serde_json::to_string(s).unwrap()
            }
        }
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s == NULL_TILDE => "~".to_owned(),
        Value::String(s) if s == NULL_EMPTY => "null".to_owned(),
        Value::String(s) if s.starts_with(PLAIN_MARK) => s[PLAIN_MARK.len_utf8()..].to_owned(),
        Value::String(s) if plain_ok(s, false) && !(flow && s.contains(':')) => s.clone(),
        Value::String(s) => serde_json::to_string(s).unwrap(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter()
                .map(|x| inline(x, true, quote))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, x)| format!("{}: {}", key(k), inline(x, true, quote)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Plain text as YAML 1.2 (and so krm-merge's parser) reads it.
fn plain_1_2(text: &str) -> Value {
    use krm_merge::yaml::scalar::{resolve_plain, Resolved};
    match resolve_plain(text) {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => serde_json::json!(i64::try_from(i).expect("a small integer")),
        Resolved::Float(f) => serde_json::json!(f),
        Resolved::Str(s) => Value::String(s.to_owned()),
    }
}

/// The value with the markers resolved: nulls, and plain strings as YAML 1.2 reads them
/// (what the patch means to krm-merge).
pub fn resolve_nulls(v: &Value) -> Value {
    match v {
        Value::String(s) if s == NULL_TILDE || s == NULL_EMPTY => Value::Null,
        Value::String(s) if s.starts_with(PLAIN_MARK) => plain_1_2(&s[PLAIN_MARK.len_utf8()..]),
        Value::Array(a) => Value::Array(a.iter().map(resolve_nulls).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), resolve_nulls(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}
