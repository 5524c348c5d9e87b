//! What YAML 1.1 readers take plain text for: the implicit types of the YAML 1.1 type
//! repository (yaml.org/type: `bool`, `null`, `int`, `float`, `timestamp`, `merge`, `value`),
//! and the two readers Kubernetes users meet, which stray from the letter of it:
//!
//! * go-yaml v2 (under sigs.k8s.io/yaml, so under kubectl and the API server's YAML path): it
//!   deletes every `_` from text that starts with a digit or a sign and then reads Go's number
//!   syntax (`0x`, `0o`, `0b` in either case, a leading `0` for octal, `1.5e3` with or without
//!   the exponent's sign), so `-_1` and `0_x1` are numbers to it; text that starts with `.` is
//!   Go's `ParseFloat` (`.5_5`); dates need one or two digits for month and day (`2001-1-2`);
//! * PyYAML, whose float allows `_` after the point and no digit at all (`._`, `-.`).
//!
//! Each form is matched as its pattern says, over the whole text; the set is their union. The
//! readers' range checks (a month past 12, a float past `f64`) are left out: a form counts
//! whatever its digits say, which only ever quotes more.
//!
//! What it must not do: read YAML 1.2 (the core schema is [`super::resolve_plain`]'s), or judge
//! plain syntax ([`super::plain_ok`]).

/// Which 1.1 floats count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Floats {
    /// The letter of the type repository too, whose base-10 float takes any digits and points
    /// after the first point (`1.2.3`, `203.0.113.10`): for strings krm-merge writes anew.
    Letter,
    /// What the readers take (`1.2.3` is a string to all of them): for text a user wrote.
    Readers,
}

/// Whether some YAML 1.1 reader resolves plain `t` to another type than a string.
pub(crate) fn non_string(t: &str, floats: Floats) -> bool {
    let b = t.as_bytes();
    word(t) || int(b) || float(b, floats) || timestamp(b) || go_yaml_v2(b)
}

/// The words of `bool`, `null`, `merge` and `value`, and the floats `.inf` and `.nan`.
fn word(t: &str) -> bool {
    matches!(
        t,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
            | ""
            | "~"
            | "null"
            | "Null"
            | "NULL"
            | "<<"
            | "="
            | ".nan"
            | ".NaN"
            | ".NAN"
    ) || matches!(unsigned(t.as_bytes()), b".inf" | b".Inf" | b".INF")
}

/// `b` without one leading sign.
fn unsigned(b: &[u8]) -> &[u8] {
    match b {
        [b'-' | b'+', rest @ ..] => rest,
        _ => b,
    }
}

/// How many bytes at the start of `b` satisfy `f`.
fn run(b: &[u8], f: impl Fn(u8) -> bool) -> usize {
    b.iter().take_while(|&&c| f(c)).count()
}

fn digit_(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

/// `(:[0-5]?[0-9])+`, the whole of `b`.
fn sixties(b: &[u8]) -> bool {
    let Some(rest) = b.strip_prefix(b":") else {
        return false;
    };
    rest.split(|&c| c == b':').all(|part| match part {
        [d] => d.is_ascii_digit(),
        [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
        _ => false,
    })
}

/// A base-60 head and its groups: `H[0-9_]*(:[0-5]?[0-9])+`, the whole of `b`, where `head`
/// says which first digits are allowed.
fn base60(b: &[u8], head: impl Fn(u8) -> bool) -> bool {
    match b.first() {
        Some(&c) if head(c) => sixties(&b[1 + run(&b[1..], digit_)..]),
        _ => false,
    }
}

/// `int`: `[-+]?0b[0-1_]+`, `[-+]?0[0-7_]+`, `[-+]?(0|[1-9][0-9_]*)`, `[-+]?0x[0-9a-fA-F_]+`,
/// `[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`.
fn int(b: &[u8]) -> bool {
    let all = |rest: &[u8], f: fn(u8) -> bool| !rest.is_empty() && rest.iter().all(|&c| f(c));
    match unsigned(b) {
        [b'0'] => true,
        [b'0', b'b', rest @ ..] => all(rest, |c| matches!(c, b'0' | b'1' | b'_')),
        [b'0', b'x', rest @ ..] => all(rest, |c| c.is_ascii_hexdigit() || c == b'_'),
        [b'0', rest @ ..] => all(rest, |c| matches!(c, b'0'..=b'7' | b'_')),
        u @ [b'1'..=b'9', rest @ ..] => {
            rest.iter().all(|&c| digit_(c)) || base60(u, |c| matches!(c, b'1'..=b'9'))
        }
        _ => false,
    }
}

/// `float`: base 10, `[-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?` by the letter and
/// `[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?` by PyYAML; base 60,
/// `[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`. (`.inf` and `.nan` are [`word`]s.)
fn float(b: &[u8], floats: Floats) -> bool {
    let u = unsigned(b);
    let whole = if u.first().is_some_and(u8::is_ascii_digit) {
        1 + run(&u[1..], digit_)
    } else {
        0
    };
    if let Some(after) = u[whole..].strip_prefix(b".") {
        let exponent_or_end = |rest: &[u8]| match rest {
            [] => true,
            [b'e' | b'E', b'-' | b'+', digits @ ..] => {
                !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
            }
            _ => false,
        };
        if exponent_or_end(&after[run(after, digit_)..]) {
            return true;
        }
        let dotted = run(after, |c| c.is_ascii_digit() || c == b'.');
        if floats == Floats::Letter && exponent_or_end(&after[dotted..]) {
            return true;
        }
    }
    match u.iter().position(|&c| c == b'.') {
        Some(point) => {
            base60(&u[..point], |c| c.is_ascii_digit()) && u[point + 1..].iter().all(|&c| digit_(c))
        }
        None => false,
    }
}

/// A reader over bytes for the fixed-shape forms (timestamps).
struct Cursor<'b>(&'b [u8]);

impl Cursor<'_> {
    /// Between `min` and `max` digits.
    fn digits(&mut self, min: usize, max: usize) -> bool {
        let n = run(self.0, |c| c.is_ascii_digit()).min(max);
        self.0 = &self.0[n..];
        n >= min
    }
    fn byte(&mut self, f: impl Fn(u8) -> bool) -> bool {
        match self.0.split_first() {
            Some((&c, rest)) if f(c) => {
                self.0 = rest;
                true
            }
            _ => false,
        }
    }
    fn blanks(&mut self) -> usize {
        let n = run(self.0, |c| c == b' ' || c == b'\t');
        self.0 = &self.0[n..];
        n
    }
    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

/// `timestamp`, by the letter (with PyYAML's blanks before any zone) and as go-yaml v2 reads
/// one (Go's layouts `2006-1-2`, `2006-1-2T15:4:5.999999999Z07:00` with `T` or `t`, and
/// `2006-1-2 15:4:5.999999999`).
fn timestamp(b: &[u8]) -> bool {
    // The date, which every form starts with; month and day of one or two digits (the letter's
    // date alone has two of each, go-yaml's one or two).
    let mut c = Cursor(b);
    if !(c.digits(4, 4)
        && c.byte(|x| x == b'-')
        && c.digits(1, 2)
        && c.byte(|x| x == b'-')
        && c.digits(1, 2))
    {
        return false;
    }
    // The date alone: the letter's `[0-9]{4}-[0-9]{2}-[0-9]{2}`, or go-yaml's `2006-1-2`.
    c.done() || spec_time(c.0) || go_time(c.0)
}

/// The letter's time after the date: `([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](\.[0-9]*)?`
/// and a zone `([ \t]*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?))?`.
fn spec_time(b: &[u8]) -> bool {
    let mut c = Cursor(b);
    if !(c.byte(|x| x == b'T' || x == b't') || c.blanks() > 0) {
        return false;
    }
    if !(c.digits(1, 2)
        && c.byte(|x| x == b':')
        && c.digits(2, 2)
        && c.byte(|x| x == b':')
        && c.digits(2, 2))
    {
        return false;
    }
    if c.byte(|x| x == b'.') {
        c.digits(0, usize::MAX);
    }
    if c.done() {
        return true;
    }
    c.blanks();
    if c.byte(|x| x == b'Z') {
        return c.done();
    }
    if !(c.byte(|x| x == b'-' || x == b'+') && c.digits(1, 2)) {
        return false;
    }
    if c.byte(|x| x == b':') && !c.digits(2, 2) {
        return false;
    }
    c.done()
}

/// go-yaml v2's time after the date: `[Tt]h:m:s` with a fraction and a zone (`Z` or `±hh:mm`),
/// or ` h:m:s` with a fraction and no zone; one or two digits each, the fraction `[.,][0-9]+`.
fn go_time(b: &[u8]) -> bool {
    let mut c = Cursor(b);
    let zoned = if c.byte(|x| x == b'T' || x == b't') {
        true
    } else if c.byte(|x| x == b' ') {
        false
    } else {
        return false;
    };
    if !(c.digits(1, 2)
        && c.byte(|x| x == b':')
        && c.digits(1, 2)
        && c.byte(|x| x == b':')
        && c.digits(1, 2))
    {
        return false;
    }
    if c.byte(|x| x == b'.' || x == b',') && !c.digits(1, usize::MAX) {
        return false;
    }
    if !zoned {
        return c.done();
    }
    if c.byte(|x| x == b'Z') {
        return c.done();
    }
    c.byte(|x| x == b'-' || x == b'+')
        && c.digits(2, 2)
        && c.byte(|x| x == b':')
        && c.digits(2, 2)
        && c.done()
}

/// What go-yaml v2 reads as a number: text starting with `.` as Go's `ParseFloat`
/// (`\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?`); text starting with a digit or a sign, once
/// every `_` is deleted, as Go's integer syntax
/// (`[-+]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)`) or its own float
/// pattern (`[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`). (Its words are [`word`]s,
/// its timestamps [`timestamp`]s.)
fn go_yaml_v2(b: &[u8]) -> bool {
    match b.first() {
        Some(b'.') => go_parse_float(&b[1..]),
        Some(b'-' | b'+' | b'0'..=b'9') => {
            let plain: std::borrow::Cow<'_, [u8]> = if b.contains(&b'_') {
                b.iter().copied().filter(|&c| c != b'_').collect()
            } else {
                b.into()
            };
            go_int(&plain) || go_float(&plain)
        }
        _ => false,
    }
}

/// `[0-9](_?[0-9])*`, the whole of `b`.
fn separated_digits(b: &[u8]) -> bool {
    b.first().is_some_and(u8::is_ascii_digit)
        && b.last().is_some_and(u8::is_ascii_digit)
        && !b.windows(2).any(|w| w == b"__")
        && b.iter().all(|&c| digit_(c))
}

/// Go's `ParseFloat` of `.` then `b`.
fn go_parse_float(b: &[u8]) -> bool {
    let mantissa = run(b, digit_);
    let (m, rest) = b.split_at(mantissa);
    separated_digits(m)
        && match rest {
            [] => true,
            [b'e' | b'E', exp @ ..] => {
                let exp = match exp {
                    [b'-' | b'+', e @ ..] => e,
                    e => e,
                };
                separated_digits(exp)
            }
            _ => false,
        }
}

fn go_int(b: &[u8]) -> bool {
    let all = |rest: &[u8], f: fn(&u8) -> bool| !rest.is_empty() && rest.iter().all(f);
    match unsigned(b) {
        [b'0', b'x' | b'X', rest @ ..] => all(rest, u8::is_ascii_hexdigit),
        [b'0', b'b' | b'B', rest @ ..] => all(rest, |c| matches!(c, b'0' | b'1')),
        [b'0', b'o' | b'O', rest @ ..] => all(rest, |c| matches!(c, b'0'..=b'7')),
        [b'0', rest @ ..] => rest.iter().all(|c| matches!(c, b'0'..=b'7')),
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

fn go_float(b: &[u8]) -> bool {
    let u = unsigned(b);
    let whole = run(u, |c| c.is_ascii_digit());
    let rest = &u[whole..];
    let rest = match rest.strip_prefix(b".") {
        Some(after) => {
            let fraction = run(after, |c| c.is_ascii_digit());
            if whole == 0 && fraction == 0 {
                return false;
            }
            &after[fraction..]
        }
        None if whole == 0 => return false,
        None => rest,
    };
    match rest {
        [] => true,
        [b'e' | b'E', exp @ ..] => {
            let exp = match exp {
                [b'-' | b'+', e @ ..] => e,
                e => e,
            };
            !exp.is_empty() && exp.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}
