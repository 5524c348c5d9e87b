//! How kustomize's JSON patch path reads YAML and writes numbers, for the steps that ask for
//! kustomize's behaviour (see `kustomize.rs`).
//!
//! kustomize does not read a JSON 6902 patch written in YAML the way it reads resources: it
//! converts the text to JSON with sigs.k8s.io/yaml, whose parser is a fork of go-yaml v2 — YAML
//! 1.1 with go-yaml's own resolution rules — and hands the JSON to its JSON patch library. So
//! a plain `on` in a patch value is `true`, `0777` is 511, `1_000` is 1000, while the same text
//! in a resource (read by kyaml, YAML 1.2) would be a string or 777. [`resolve_plain`] is that
//! resolution, rule for rule; [`key_text`] is how the converter turns the non-string keys it
//! produces back into JSON member names.
//!
//! Numbers then travel as JSON: the patched resource is decoded into Go `float64`s, written
//! back as YAML, and kustomize's output is JSON again before its final YAML. [`number_text`]
//! is the text that journey ends with, so that a value krm-merge writes reads as the same
//! number kustomize writes (`1e3` gives `1000`, `.5` gives `0.5`, `1234567.5` gives
//! `1.2345675e+06`).
//!
//! What it must not do: I/O, or panic on any input: everything here is pure text → value.

/// A plain scalar as go-yaml v2 resolves it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum V2<'t> {
    Null,
    Bool(bool),
    /// An integer go-yaml returns as `int`/`int64` (fits `i64`) or `uint64` (fits `u64`).
    Int(i128),
    /// A float; `.inf` and `.nan` included, which JSON cannot carry.
    Float(f64),
    Str(&'t str),
}

/// Resolves the text of a plain, untagged scalar as go-yaml v2 does: a table of words
/// (`y`/`yes`/`on`/`true`… in three spellings, `~`/`null`, `.inf`/`.nan`), then — only for
/// text that starts with a digit or a sign — an integer in Go's base-prefix syntax (`0x1F`,
/// `0o17`, `0b11`, and `0777` octal) with underscores ignored, or a float; text starting with
/// `.` may be a float. Anything else is a string, timestamps included (go-yaml v2 hands them to
/// an untyped target as the text).
pub(super) fn resolve_plain(text: &str) -> V2<'_> {
    let hint = match text.as_bytes().first() {
        None => b'M',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(c) if b"yYnNtTfFoO~".contains(c) => b'M',
        Some(b'.') => b'.',
        // go-yaml looks nothing else up: `<<`, `=`, `_1` stay strings.
        Some(_) => return V2::Str(text),
    };
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return V2::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return V2::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => return V2::Null,
        ".nan" | ".NaN" | ".NAN" => return V2::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return V2::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return V2::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match hint {
        // Go's float parser on the text as written (underscores are not removed here).
        b'.' => go_parse_float(text).map_or(V2::Str(text), V2::Float),
        b'D' | b'S' => {
            let plain: String = text.chars().filter(|&c| c != '_').collect();
            if let Some(i) = go_parse_int(&plain) {
                return V2::Int(i);
            }
            if yaml_style_float(&plain) {
                if let Some(f) = go_parse_float(&plain) {
                    return V2::Float(f);
                }
            }
            V2::Str(text)
        }
        _ => V2::Str(text),
    }
}

/// `strconv.ParseInt(s, 0, 64)`, then `strconv.ParseUint(s, 0, 64)`: an optional sign (the
/// unsigned parse takes none), then `0x`/`0X` hex, `0o`/`0O` or a leading `0` octal, `0b`/`0B`
/// binary, or decimal digits; `None` when it does not parse or does not fit.
fn go_parse_int(s: &str) -> Option<i128> {
    let (negative, signed, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, true, &s[1..]),
        Some(b'+') => (false, true, &s[1..]),
        _ => (false, false, s),
    };
    let lower = rest.get(..2).map(str::to_ascii_lowercase);
    let (radix, digits) = match lower.as_deref() {
        Some("0x") => (16, &rest[2..]),
        Some("0o") => (8, &rest[2..]),
        Some("0b") => (2, &rest[2..]),
        _ if rest.len() > 1 && rest.starts_with('0') => (8, &rest[1..]),
        _ => (10, rest),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    let magnitude = i128::try_from(magnitude).ok()?;
    let value = if negative { -magnitude } else { magnitude };
    let fits_int64 = i64::try_from(value).is_ok();
    let fits_uint64 = !signed && u64::try_from(value).is_ok();
    (fits_int64 || fits_uint64).then_some(value)
}

/// go-yaml v2's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    fn digits(b: &[u8]) -> usize {
        b.iter().take_while(|c| c.is_ascii_digit()).count()
    }
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    if b.get(i) == Some(&b'.') {
        let n = digits(&b[i + 1..]);
        if n == 0 {
            return false;
        }
        i += 1 + n;
    } else {
        let n = digits(&b[i..]);
        if n == 0 {
            return false;
        }
        i += n;
        if b.get(i) == Some(&b'.') {
            i += 1 + digits(&b[i + 1..]);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let n = digits(&b[i..]);
        if n == 0 {
            return false;
        }
        i += n;
    }
    i == b.len()
}

/// `strconv.ParseFloat(s, 64)` for the decimal forms go-yaml hands it; out of range (`1e400`)
/// is an error there, so `None` here.
fn go_parse_float(s: &str) -> Option<f64> {
    if s.bytes()
        .any(|c| c.is_ascii_alphabetic() && !matches!(c, b'e' | b'E'))
    {
        // Rust reads `inf` and `nan`; go-yaml never passes such words to the parser.
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// The text kustomize's output gives a number that a JSON patch brought in: the value as a
/// `float64` (kyaml decodes the patched JSON that way), written as JSON (`encoding/json`:
/// fixed notation from 1e-6 to 1e21), read back by go-yaml v2 (an integer when the text is one
/// that fits `int64`/`uint64`) and written by it (Go's shortest `%g`: exponent form below 1e-4
/// and from 1e6). `None` for infinities and NaN, which JSON cannot carry (kustomize fails).
pub(super) fn number_text(f: f64) -> Option<String> {
    if !f.is_finite() {
        return None;
    }
    if f == 0.0 {
        // `-0` too: go-yaml reads JSON's `-0` as the integer 0.
        return Some("0".to_owned());
    }
    if (1e-6..1e21).contains(&f.abs()) {
        // Rust's `Display` is the shortest round-trip digits in fixed notation, as Go's
        // `FormatFloat(f, 'f', -1, 64)`.
        let fixed = format!("{f}");
        let integer = !fixed.contains('.');
        if integer && (fixed.parse::<i64>().is_ok() || fixed.parse::<u64>().is_ok()) {
            return Some(fixed);
        }
    }
    Some(go_shortest_g(&format!("{f:e}"), || format!("{f}")))
}

/// Go's `FormatFloat(f, 'g', -1, bits)` from Rust's shortest exponent form of the same value
/// (`1.2345675e6`) and its shortest fixed form: the exponent form when the exponent is below
/// -4 or at least 6 (Go's precision for shortest `%g`), written `1.2345675e+06`.
fn go_shortest_g(exp_form: &str, fixed: impl FnOnce() -> String) -> String {
    let Some((mantissa, exp)) = exp_form.split_once('e') else {
        return fixed();
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return fixed();
    };
    if (-4..6).contains(&exp) {
        return fixed();
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
}

/// Why a key has no JSON member name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KeyError {
    /// `~`, `null`, an empty key.
    Null,
    /// An integer beyond `int64` (go-yaml gives `uint64`, which the converter refuses).
    Unsigned,
}

/// The JSON member name sigs.k8s.io/yaml makes of a key go-yaml v2 resolved to `key`:
/// integers in decimal, floats as Go writes a `float32` (`1.5e+06`, `.inf`), booleans as
/// `true`/`false`.
pub(super) fn key_text(key: V2<'_>) -> Result<String, KeyError> {
    match key {
        V2::Null => Err(KeyError::Null),
        V2::Bool(b) => Ok(b.to_string()),
        V2::Int(i) if i64::try_from(i).is_ok() => Ok(i.to_string()),
        V2::Int(_) => Err(KeyError::Unsigned),
        V2::Float(f) => {
            // The converter formats keys with 32-bit precision.
            let g = f as f32;
            Ok(if g.is_nan() {
                ".nan".to_owned()
            } else if g.is_infinite() {
                if g > 0.0 { ".inf" } else { "-.inf" }.to_owned()
            } else {
                go_shortest_g(&format!("{g:e}"), || format!("{g}"))
            })
        }
        V2::Str(s) => Ok(s.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_yaml_v2_words() {
        for t in [
            "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
        ] {
            assert_eq!(resolve_plain(t), V2::Bool(true), "{t}");
        }
        for t in ["n", "N", "no", "NO", "off", "Off", "OFF", "false", "FALSE"] {
            assert_eq!(resolve_plain(t), V2::Bool(false), "{t}");
        }
        for t in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(resolve_plain(t), V2::Null, "{t}");
        }
        for t in [
            "yES",
            "oN",
            "tRUE",
            "nULL",
            "<<",
            "=",
            "_1",
            "web",
            "2024-01-31",
            "1:30",
        ] {
            assert_eq!(resolve_plain(t), V2::Str(t), "{t}");
        }
        assert_eq!(resolve_plain("+.inf"), V2::Float(f64::INFINITY));
        assert!(matches!(resolve_plain(".NaN"), V2::Float(f) if f.is_nan()));
    }

    #[test]
    fn go_yaml_v2_numbers() {
        // What kustomize v5.5.0 gave for these JSON patch values (kubectl kustomize).
        let ints = [
            ("0777", 511),
            ("1_000", 1000),
            ("1__0", 10),
            ("1_", 1),
            ("0x1F", 31),
            ("+0x1f", 31),
            ("0xFF_FF", 65535),
            ("0B11", 3),
            ("0o17", 15),
            ("+12", 12),
            ("-0", 0),
            ("9223372036854775807", 9223372036854775807),
            ("18446744073709551615", 18446744073709551615),
        ];
        for (t, want) in ints {
            assert_eq!(resolve_plain(t), V2::Int(want), "{t}");
        }
        let floats = [
            ("08", 8.0),
            ("1e3", 1000.0),
            ("1e+3", 1000.0),
            (".5", 0.5),
            ("+.5", 0.5),
            ("-.5", -0.5),
            ("1.", 1.0),
            ("99999999999999999999", 1e20),
            ("+18446744073709551615", 18446744073709551615.0),
        ];
        for (t, want) in floats {
            assert_eq!(resolve_plain(t), V2::Float(want), "{t}");
        }
        for t in ["0x", ".", "0.5e", "1e400", "._5", "0x_", "1e", "-", "+"] {
            assert_eq!(resolve_plain(t), V2::Str(t), "{t}");
        }
    }

    #[test]
    fn numbers_as_kustomize_writes_them() {
        let cases = [
            (1e6, "1000000"),
            (1.5e6, "1500000"),
            (3.0, "3"),
            (-0.0, "0"),
            (0.5, "0.5"),
            (1.1, "1.1"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (1.2e-6, "1.2e-06"),
            (1234567.5, "1.2345675e+06"),
            (9223372036854775807.0, "9223372036854776000"),
            (18446744073709551615.0, "1.8446744073709552e+19"),
            (1e20, "1e+20"),
            (1e21, "1e+21"),
            (1.2345678901234568e20, "1.2345678901234568e+20"),
            (-31.0, "-31"),
        ];
        for (f, want) in cases {
            assert_eq!(number_text(f).as_deref(), Some(want), "{f}");
        }
        assert_eq!(number_text(f64::INFINITY), None);
        assert_eq!(number_text(f64::NAN), None);
    }

    #[test]
    fn keys_as_the_converter_names_them() {
        let key = |t| key_text(resolve_plain(t));
        assert_eq!(key("on").as_deref(), Ok("true"));
        assert_eq!(key("0777").as_deref(), Ok("511"));
        assert_eq!(key("1.5").as_deref(), Ok("1.5"));
        assert_eq!(key("1e3").as_deref(), Ok("1000"));
        assert_eq!(key("1.5e6").as_deref(), Ok("1.5e+06"));
        assert_eq!(key("123456789.0").as_deref(), Ok("1.2345679e+08"));
        assert_eq!(key("0.00001").as_deref(), Ok("1e-05"));
        assert_eq!(key("1234567").as_deref(), Ok("1234567"));
        assert_eq!(key(".inf").as_deref(), Ok(".inf"));
        assert_eq!(key("web").as_deref(), Ok("web"));
        assert_eq!(key("~"), Err(KeyError::Null));
        assert_eq!(key("18446744073709551615"), Err(KeyError::Unsigned));
    }
}
