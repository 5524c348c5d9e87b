//! Scalars: what a scalar's text means (resolution), and how new text must be written so that
//! it reads back as the same string (quoting).
//!
//! Resolution follows the YAML 1.2 core schema, which is what kyaml and JSON conversion use.
//! Quoting is stricter: a string is written plain only when neither YAML 1.2 nor YAML 1.1 (which
//! the Kubernetes API machinery still speaks through go-yaml v2) would read it as anything but
//! that string — so `on`, `yes`, `0777`, `1e3`, `1_000`, `null`, `~`, `.inf`, `._`, `-_1` are
//! quoted. What YAML 1.1 readers take for another type is `scalar/yaml11.rs`'s, form by form.

use super::ScalarStyle;

pub(crate) mod yaml11;

/// The value of a scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Resolved<'t> {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'t str),
}

/// Resolves a scalar: an explicit core tag decides, then any style other than plain means a
/// string, then the YAML 1.2 core schema reads the plain text.
pub fn resolve<'t>(text: &'t str, style: ScalarStyle, tag: Option<&str>) -> Resolved<'t> {
    match tag {
        Some("!!str") | Some("!") => return Resolved::Str(text),
        Some("!!null") => return Resolved::Null,
        Some("!!bool") => return parse_bool(text).map_or(Resolved::Str(text), Resolved::Bool),
        Some("!!int") => return parse_int(text).map_or(Resolved::Str(text), Resolved::Int),
        Some("!!float") => {
            return parse_float(text)
                .or_else(|| parse_int(text).map(|i| i as f64))
                .map_or(Resolved::Str(text), Resolved::Float)
        }
        Some(_) => return Resolved::Str(text),
        None => {}
    }
    if style != ScalarStyle::Plain {
        return Resolved::Str(text);
    }
    resolve_plain(text)
}

/// Reads plain text by the YAML 1.2 core schema.
pub fn resolve_plain(text: &str) -> Resolved<'_> {
    // Most plain text is a word: one that starts with a letter no null, boolean or number
    // starts with is a string, whatever follows.
    if let Some(c) = text.bytes().next() {
        if c.is_ascii_alphabetic() && !matches!(c, b'n' | b'N' | b't' | b'T' | b'f' | b'F') {
            return Resolved::Str(text);
        }
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        _ => {}
    }
    if let Some(b) = parse_bool(text) {
        return Resolved::Bool(b);
    }
    if let Some(i) = parse_int(text) {
        return Resolved::Int(i);
    }
    if let Some(f) = parse_float(text) {
        return Resolved::Float(f);
    }
    Resolved::Str(text)
}

fn parse_bool(t: &str) -> Option<bool> {
    match t {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Core schema integers: `[-+]?[0-9]+`, `0o[0-7]+`, `0x[0-9a-fA-F]+`. Integers too large for
/// i128 read as floats.
fn parse_int(t: &str) -> Option<i128> {
    if let Some(h) = t.strip_prefix("0x") {
        return (!h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| i128::from_str_radix(h, 16).ok())?;
    }
    if let Some(o) = t.strip_prefix("0o") {
        return (!o.is_empty() && o.bytes().all(|b| (b'0'..=b'7').contains(&b)))
            .then(|| i128::from_str_radix(o, 8).ok())?;
    }
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.trim_start_matches('+').parse().ok()
}

/// Core schema floats: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `.inf`, `.nan`.
fn parse_float(t: &str) -> Option<f64> {
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    let neg = t.starts_with('-');
    match unsigned {
        ".inf" | ".Inf" | ".INF" => {
            return Some(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        ".nan" | ".NaN" | ".NAN" if unsigned.len() == t.len() => return Some(f64::NAN),
        _ => {}
    }
    let b = unsigned.as_bytes();
    let mut i = 0;
    let int_digits = count_digits(&b[i..]);
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = count_digits(&b[i..]);
        i += frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let e = count_digits(&b[i..]);
        if e == 0 {
            return None;
        }
        i += e;
    }
    if i != b.len() {
        return None;
    }
    t.parse().ok()
}

fn count_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// True when `text` written plain would be read as something other than this string by
/// YAML 1.2 or YAML 1.1, or is not valid as a plain scalar at all (`flow`: inside `[]`/`{}`).
pub fn needs_quotes(text: &str, flow: bool) -> bool {
    !resolves_as_string_everywhere(text) || !plain_ok(text, flow)
}

/// True when a string that YAML 1.2 reads from plain `t` is something else to a YAML 1.1 reader
/// such as Kubernetes' own: the 1.1 booleans (`yes`, `on`, `n`, ...), base-60 numbers (`1:30`),
/// numbers with underscores or a `0b` prefix, dates and timestamps (the set is
/// `scalar/yaml11.rs`'s).
/// Unlike [`needs_quotes`], which guards the strings krm-merge writes, this judges text a user
/// wrote plain, so it follows what 1.1 readers do rather than the letter of the 1.1 float
/// pattern: `1.2.3` and `203.0.113.10` are strings to all of them and stay plain. `<<` and `=`
/// (1.1's merge and value keys) are left to mean what the user meant by them.
pub fn yaml11_lookalike(t: &str) -> bool {
    matches!(resolve_plain(t), Resolved::Str(_))
        && yaml11::non_string(t, yaml11::Floats::Readers)
        && t != "<<"
        && t != "="
}

fn resolves_as_string_everywhere(t: &str) -> bool {
    matches!(resolve_plain(t), Resolved::Str(_)) && !yaml11::non_string(t, yaml11::Floats::Letter)
}

/// Whether YAML allows `c` written as itself in a stream (the `c-printable` set of YAML 1.2,
/// 5.1): tab, line feed, carriage return, the printable ASCII characters, NEL, and everything
/// from U+00A0 on except the surrogates (which a Rust string cannot hold) and the
/// noncharacters U+FFFE and U+FFFF. Any other character only a double-quoted scalar can
/// carry, as an escape: written raw, no YAML reader (ours included) reads the output back.
pub fn printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7e}' | '\u{85}')
        || ('\u{a0}'..='\u{d7ff}').contains(&c)
        || ('\u{e000}'..='\u{fffd}').contains(&c)
        || c >= '\u{10000}'
}

/// Whether `t` is valid as a single-line plain scalar (syntax only, not what it resolves to).
pub fn plain_ok(t: &str, flow: bool) -> bool {
    let Some(first) = t.chars().next() else {
        return false;
    };
    let last = t.chars().next_back().unwrap_or(first);
    if first.is_whitespace() || last.is_whitespace() || last == ':' {
        return false;
    }
    if t.starts_with("---") || t.starts_with("...") {
        return false;
    }
    let second = t.chars().nth(1);
    match first {
        ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
        | '@' | '`' => return false,
        '-' | '?' | ':' => match second {
            None => return false,
            Some(c) if c.is_whitespace() => return false,
            Some(c) if flow && matches!(c, ',' | '[' | ']' | '{' | '}') => return false,
            _ => {}
        },
        _ => {}
    }
    let mut prev = ' ';
    for c in t.chars() {
        if c.is_control() || !printable(c) || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}') {
            return false;
        }
        if c == '#' && prev.is_whitespace() {
            return false;
        }
        if prev == ':' && (c.is_whitespace() || (flow && matches!(c, ',' | '[' | ']' | '{' | '}')))
        {
            return false;
        }
        if flow && matches!(c, ',' | '[' | ']' | '{' | '}') {
            return false;
        }
        prev = c;
    }
    true
}

/// `text` as a double-quoted scalar, escaping what must be escaped and nothing else.
pub fn double_quoted(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 2);
    s.push('"');
    for c in text.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\r' => s.push_str("\\r"),
            '\0' => s.push_str("\\0"),
            '\u{7}' => s.push_str("\\a"),
            '\u{8}' => s.push_str("\\b"),
            '\u{b}' => s.push_str("\\v"),
            '\u{c}' => s.push_str("\\f"),
            '\u{1b}' => s.push_str("\\e"),
            '\u{85}' => s.push_str("\\N"),
            '\u{a0}' => s.push_str("\\_"),
            '\u{2028}' => s.push_str("\\L"),
            '\u{2029}' => s.push_str("\\P"),
            c if c.is_control() || !printable(c) || c == '\u{feff}' => {
                let n = c as u32;
                if n <= 0xff {
                    s.push_str(&format!("\\x{n:02x}"));
                } else {
                    s.push_str(&format!("\\u{n:04x}"));
                }
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// `text` as a single-quoted scalar, or `None` when it spans lines (line folding would change
/// it) or holds characters only double quotes can carry.
pub fn single_quoted(text: &str) -> Option<String> {
    if text.chars().any(|c| {
        c.is_control()
            || !printable(c)
            || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{85}')
    }) {
        return None;
    }
    Some(format!("'{}'", text.replace('\'', "''")))
}

/// Whether `text` can be written as a literal block scalar (`|`) and read back unchanged.
pub fn literal_ok(text: &str) -> bool {
    if !text.contains('\n') {
        return false;
    }
    // A first line that starts with a space would need an indentation indicator; leading empty
    // lines followed by spaces are ambiguous. Control characters cannot be written raw.
    if text.starts_with([' ', '\t']) || text.starts_with('\n') {
        return false;
    }
    !text.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t')
            || !printable(c)
            || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{85}')
    }) && !text
        .lines()
        .any(|l| l.ends_with([' ', '\t']) && l.trim().is_empty())
}

/// The body lines of a folded block scalar (`>`) that reads back as `content`: `content` is the
/// text without its final line breaks (the header's chomping indicator gives those), and
/// [`literal_ok`] holds for it. Folding joins two lines with a space where one line break
/// separates them, so each line break between two lines that do not start with white space
/// (more-indented lines keep their breaks) is written with an empty line after it; empty lines
/// between stay as they are.
pub fn folded_lines(content: &str) -> Vec<&str> {
    let lines: Vec<&str> = content.split('\n').collect();
    let indented = |l: &str| l.starts_with([' ', '\t']);
    let mut out = Vec::with_capacity(lines.len() * 2);
    for (i, line) in lines.iter().enumerate() {
        out.push(*line);
        if line.is_empty() || indented(line) {
            continue;
        }
        let next = lines
            .get(i + 1..)
            .and_then(|rest| rest.iter().find(|l| !l.is_empty()));
        if next.is_some_and(|n| !indented(n)) {
            out.push("");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn yaml11_lookalikes_are_what_yaml11_readers_take_for_another_type() {
        let yes = [
            "on",
            "Off",
            "y",
            "N",
            "yes",
            "1:30",
            "-1:20:59",
            "190:20:30.15",
            "1_0:05",
            "1_000",
            "0b101",
            "2024-01-31",
            "2001-12-14t21:59:43.10-05:00",
        ];
        for t in yes {
            assert!(super::yaml11_lookalike(t), "{t}");
        }
        let no = [
            "true",
            "0777",
            "203.0.113.11",
            "1.2.3",
            "1:60",
            "1:",
            ":1",
            "ok",
            "<<",
            "=",
            "v1",
        ];
        for t in no {
            assert!(!super::yaml11_lookalike(t), "{t}");
        }
    }

    use super::*;

    #[test]
    fn resolves_core_schema() {
        let cases: &[(&str, Resolved)] = &[
            ("", Resolved::Null),
            ("~", Resolved::Null),
            ("Null", Resolved::Null),
            ("true", Resolved::Bool(true)),
            ("FALSE", Resolved::Bool(false)),
            ("on", Resolved::Str("on")),
            ("12", Resolved::Int(12)),
            ("-3", Resolved::Int(-3)),
            ("+3", Resolved::Int(3)),
            ("0x1F", Resolved::Int(31)),
            ("0o17", Resolved::Int(15)),
            ("0777", Resolved::Int(777)),
            ("1e3", Resolved::Float(1000.0)),
            ("1.5", Resolved::Float(1.5)),
            (".5", Resolved::Float(0.5)),
            ("-.inf", Resolved::Float(f64::NEG_INFINITY)),
            ("1.0.0", Resolved::Str("1.0.0")),
            ("e3", Resolved::Str("e3")),
            ("0x", Resolved::Str("0x")),
            ("web", Resolved::Str("web")),
        ];
        for (text, want) in cases {
            assert_eq!(resolve_plain(text), *want, "{text:?}");
        }
        assert_eq!(
            resolve("12", ScalarStyle::DoubleQuoted, None),
            Resolved::Str("12")
        );
        assert_eq!(
            resolve("12", ScalarStyle::Plain, Some("!!str")),
            Resolved::Str("12")
        );
        assert_eq!(
            resolve("12", ScalarStyle::SingleQuoted, Some("!!int")),
            Resolved::Int(12)
        );
    }

    #[test]
    fn quotes_what_yaml_1_1_or_1_2_would_misread() {
        for t in [
            "on",
            "Off",
            "yes",
            "Y",
            "n",
            "true",
            "null",
            "~",
            "",
            "0777",
            "1e3",
            "1_000",
            "12:30",
            "0b101",
            ".inf",
            "-.5",
            "1.0.0",
            "2001-12-14t21:59:43.10-05:00",
            "<<",
            "=",
            "0x1F",
        ] {
            assert!(needs_quotes(t, false), "{t:?} must be quoted");
        }
        for t in [
            "web",
            "nginx:1.7",
            "--port",
            "-v",
            "a b",
            "app.kubernetes.io/name",
            "1x",
            "v1",
            "true-ish",
            "25%",
        ] {
            assert!(!needs_quotes(t, false), "{t:?} can be plain");
        }
    }

    #[test]
    fn quotes_what_plain_syntax_cannot_hold() {
        for t in [
            "- a", "-", "a: b", "a #b", "a:", " a", "a ", "#a", "&a", "*a", "!a", "|", ">", "'a",
            "\"a", "%a", "@a", "`a", "{a", "[a", "a\nb", "a\tb", "---", "...",
        ] {
            assert!(needs_quotes(t, false), "{t:?} must be quoted");
        }
        assert!(needs_quotes("a,b", true));
        assert!(!needs_quotes("a,b", false));
        assert!(!needs_quotes("a#b", false));
    }

    #[test]
    fn double_quoting_escapes_only_what_it_must() {
        assert_eq!(
            double_quoted("a\"b\\c\nd\u{1}é"),
            "\"a\\\"b\\\\c\\nd\\x01é\""
        );
        assert_eq!(single_quoted("it's"), Some("'it''s'".to_string()));
    }

    /// Found by the hostile-input review: U+FFFE and U+FFFF (noncharacters, outside YAML's printable set) were
    /// written raw in every style, and no YAML reader reads that back.
    #[test]
    fn characters_yaml_cannot_carry_raw_are_escaped() {
        for c in ['\u{fffe}', '\u{ffff}', '\u{7f}', '\u{1}', '\u{9f}'] {
            assert!(!printable(c), "{c:?}");
            let t = format!("a{c}b");
            assert!(needs_quotes(&t, false), "{c:?}");
            assert_eq!(single_quoted(&t), None, "{c:?}");
            assert!(!literal_ok(&format!("{t}\nx\n")), "{c:?}");
            let q = double_quoted(&t);
            assert!(q.chars().all(printable), "{q:?}");
        }
        assert_eq!(double_quoted("\u{fffe}\u{ffff}"), "\"\\ufffe\\uffff\"");
        for c in [
            '\t',
            '\u{85}',
            '\u{a0}',
            '\u{fffd}',
            '\u{10000}',
            '\u{e000}',
            'é',
        ] {
            assert!(printable(c), "{c:?}");
        }
    }
}
