//! The scalars of the fast reader (`fast.rs`): quoted scalars over any number of lines, plain
//! scalars' continuation lines, block scalars' bodies — their values and where they end, read
//! from the text as `granit-parser` reads them (as Go reads them where the two differ, see
//! `granit.rs`): the folding of line breaks, escapes, chomping, indentation indicators.
//!
//! What it must not do: emit events or know the reader's state; anything it is not sure the
//! parser reads the same way is [`Unsupported`], and the reader leaves the document to the
//! parser.

use std::borrow::Cow;

use super::fast::{Unsupported, R};

/// A scalar read from the text: its value, the byte after it, and how many line breaks it
/// spans.
#[derive(Debug)]
pub(crate) struct Scanned<'a> {
    pub(crate) value: Cow<'a, str>,
    pub(crate) end: usize,
    pub(crate) breaks: usize,
}

/// A character YAML allows in text, and that this reader takes.
pub(crate) fn printable(ch: char) -> bool {
    matches!(ch, ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && !matches!(ch, '\u{feff}' | '\u{2028}' | '\u{2029}')
}

/// Every character of `src[from..to]` is one this reader takes inside a scalar or a comment:
/// printable, and a tab only where `tabs` allows it.
pub(crate) fn text_ok(src: &str, from: usize, to: usize, tabs: bool) -> R<()> {
    let bytes = &src.as_bytes()[from..to];
    if bytes.iter().all(|&c| (0x20..0x7f).contains(&c)) {
        return Ok(());
    }
    for ch in src[from..to].chars() {
        if !(printable(ch) || tabs && ch == '\t') {
            return Err(Unsupported);
        }
    }
    Ok(())
}

/// Whether the line starting at `ls` starts with a document marker (`---` or `...` followed by
/// white space or the end).
pub(crate) fn marker_line(b: &[u8], ls: usize) -> bool {
    matches!(b.get(ls..ls + 3), Some(b"---" | b"..."))
        && matches!(b.get(ls + 3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

/// Whether `b[i]` ends a line's content: a line feed, a carriage return before one, or the
/// end of the text. (A carriage return alone is refused before any reader runs.)
pub(crate) fn at_eol(b: &[u8], i: usize) -> bool {
    matches!(b.get(i), None | Some(b'\n' | b'\r'))
}

/// The byte after the line break at `i` (a `\n`, or a `\r\n`).
fn after_break(b: &[u8], i: usize) -> usize {
    if b[i] == b'\r' {
        i + 2
    } else {
        i + 1
    }
}

/// A double-quoted scalar's escape after its `\`: the character and the bytes it took (Go's
/// `\'` included).
pub(crate) fn escape(rest: &[u8]) -> R<(char, usize)> {
    let hex = |n: usize| -> R<(char, usize)> {
        let digits = rest.get(1..=n).ok_or(Unsupported)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(Unsupported);
        }
        let text = std::str::from_utf8(digits).map_err(|_| Unsupported)?;
        let v = u32::from_str_radix(text, 16).map_err(|_| Unsupported)?;
        // Surrogates (which the parser pairs) and the like are left to it.
        let ch = char::from_u32(v).ok_or(Unsupported)?;
        Ok((ch, n + 1))
    };
    let ch = match rest.first() {
        Some(b'0') => '\0',
        Some(b'a') => '\x07',
        Some(b'b') => '\x08',
        Some(b't' | b'\t') => '\t',
        Some(b'n') => '\n',
        Some(b'v') => '\x0b',
        Some(b'f') => '\x0c',
        Some(b'r') => '\r',
        Some(b'e') => '\x1b',
        Some(b' ') => ' ',
        Some(b'"') => '"',
        Some(b'\'') => '\'',
        Some(b'/') => '/',
        Some(b'\\') => '\\',
        Some(b'N') => '\u{85}',
        Some(b'_') => '\u{a0}',
        Some(b'L') => '\u{2028}',
        Some(b'P') => '\u{2029}',
        Some(b'x') => return hex(2),
        Some(b'u') => return hex(4),
        Some(b'U') => return hex(8),
        _ => return Err(Unsupported),
    };
    Ok((ch, 1))
}

/// The quoted scalar opened at `p` (`'` or `"`), over as many lines as it takes. Its lines
/// after the first may stand at any column (Go reads them so), and the white space that leads
/// them is not content; a line that starts with a document marker ends the reading here.
pub(crate) fn quoted(src: &str, p: usize) -> R<Scanned<'_>> {
    let b = src.as_bytes();
    let single = b[p] == b'\'';
    let quote = b[p];
    // Most quoted scalars are plain text on one line: the closing quote comes before any
    // escape, `''` pair or line break.
    let stop = if single { quote } else { b'\\' };
    if let Some(n) = memchr::memchr3(quote, stop, b'\n', &b[p + 1..]) {
        let close = p + 1 + n;
        let pair = single && b.get(close + 1) == Some(&b'\'');
        if b[close] == quote && !pair && b[p + 1..close].iter().all(|&c| (0x20..0x7f).contains(&c))
        {
            return Ok(Scanned {
                value: Cow::Borrowed(&src[p + 1..close]),
                end: close + 1,
                breaks: 0,
            });
        }
    }
    let mut i = p + 1;
    // The value, once it differs from the text (an escape, a fold); until then it is
    // `src[p + 1..run]`.
    let mut owned: Option<String> = None;
    let mut run = i;
    let mut breaks = 0;
    let close = loop {
        match b.get(i) {
            None => return Err(Unsupported),
            Some(&c) if c == quote => {
                if single && b.get(i + 1) == Some(&b'\'') {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(&src[run..=i]);
                    i += 2;
                    run = i;
                    continue;
                }
                break i;
            }
            Some(b'\\') if !single => {
                let s = owned.get_or_insert_with(String::new);
                s.push_str(&src[run..i]);
                if matches!(b.get(i + 1), Some(b'\n' | b'\r')) {
                    // An escaped line break: neither it nor the next line's leading white
                    // space is content, and no space is folded in; empty lines are.
                    i = after_break(b, i + 1);
                    let (next, empty) = leading(b, i)?;
                    breaks += 1 + empty;
                    s.extend(std::iter::repeat_n('\n', empty));
                    i = next;
                } else {
                    let (ch, len) = escape(&b[i + 1..])?;
                    s.push(ch);
                    i += 1 + len;
                }
                run = i;
            }
            Some(b' ' | b'\t' | b'\n' | b'\r') => {
                // White space: kept inside a line, dropped before a line break, which folds.
                let ws = i;
                while matches!(b.get(i), Some(b' ' | b'\t')) {
                    i += 1;
                }
                if !matches!(b.get(i), Some(b'\n' | b'\r')) {
                    continue;
                }
                let s = owned.get_or_insert_with(String::new);
                s.push_str(&src[run..ws]);
                i = after_break(b, i);
                let (next, empty) = leading(b, i)?;
                breaks += 1 + empty;
                if empty == 0 {
                    s.push(' ');
                }
                s.extend(std::iter::repeat_n('\n', empty));
                i = next;
                run = i;
            }
            Some(_) => i += 1,
        }
    };
    // The text as written: printable, with tabs and line breaks.
    let ascii = |c: &u8| (0x20..0x7f).contains(c) || matches!(c, b'\t' | b'\n' | b'\r');
    if !b[p + 1..close].iter().all(ascii)
        && !src[p + 1..close]
            .chars()
            .all(|c| printable(c) || matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(Unsupported);
    }
    let value = match owned {
        Some(mut s) => {
            s.push_str(&src[run..close]);
            Cow::Owned(s)
        }
        None => Cow::Borrowed(&src[p + 1..close]),
    };
    Ok(Scanned {
        value,
        end: close + 1,
        breaks,
    })
}

/// From the start of a quoted scalar's continuation line at `i`: the white space that leads
/// it and the empty lines after, skipped; the first byte of content, and how many empty lines
/// there were. A line that starts with a document marker, or the end of the text, is not read
/// here.
fn leading(b: &[u8], mut i: usize) -> R<(usize, usize)> {
    let mut empty = 0;
    loop {
        if marker_line(b, i) {
            return Err(Unsupported);
        }
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        match b.get(i) {
            None => return Err(Unsupported),
            Some(b'\n' | b'\r') => {
                i = after_break(b, i);
                empty += 1;
            }
            Some(_) => return Ok((i, empty)),
        }
    }
}

/// A plain scalar's continuation lines in block context, after its first line ended at `end`
/// (its last content byte + 1) with nothing after it: lines indented more than `n` (the column
/// of the key or dash it belongs to) that hold text, folded in. Stops before a comment line
/// and a line indented `n` or less; a line with a tab or `: ` in it (which the parser
/// refuses), or with `#` after its text, is not read here. `None`: no continuation.
pub(crate) fn plain_lines<'a>(
    src: &'a str,
    start: usize,
    end: usize,
    n: usize,
) -> R<Option<Scanned<'a>>> {
    let b = src.as_bytes();
    let mut value: Option<String> = None;
    let mut last = end;
    let mut breaks = 0;
    // The line break after the last content, and the empty lines since.
    let mut i = end;
    while matches!(b.get(i), Some(b' ')) {
        i += 1;
    }
    if !at_eol(b, i) || i >= b.len() {
        return Ok(None);
    }
    let mut pending_breaks = 0;
    let mut at = after_break(b, i);
    loop {
        // One line: its indentation, then text or nothing.
        let mut s = at;
        while b.get(s) == Some(&b' ') {
            s += 1;
        }
        match b.get(s) {
            None => break,
            Some(b'\n' | b'\r') => {
                pending_breaks += 1;
                at = after_break(b, s);
                continue;
            }
            Some(b'\t') => return Err(Unsupported),
            Some(_) => {}
        }
        if s - at <= n || b[s] == b'#' || marker_line(b, at) {
            break;
        }
        // The line's text: to its end, without trailing spaces; `: ` or ` #` in it is left to
        // the parser.
        let mut e = s;
        while !at_eol(b, e) {
            match b[e] {
                b':' if matches!(b.get(e + 1), None | Some(b' ' | b'\n' | b'\r')) => {
                    return Err(Unsupported)
                }
                b'#' if b[e - 1] == b' ' => return Err(Unsupported),
                c if c < 0x20 || c == 0x7f => return Err(Unsupported),
                _ => e += 1,
            }
        }
        let mut te = e;
        while b[te - 1] == b' ' {
            te -= 1;
        }
        text_ok(src, s, te, false)?;
        let v = value.get_or_insert_with(|| src[start..end].to_owned());
        breaks += 1 + pending_breaks;
        if pending_breaks == 0 {
            v.push(' ');
        }
        for _ in 0..pending_breaks {
            v.push('\n');
        }
        pending_breaks = 0;
        v.push_str(&src[s..te]);
        last = te;
        if e >= b.len() {
            break;
        }
        at = after_break(b, e);
    }
    Ok(value.map(|v| Scanned {
        value: Cow::Owned(v),
        end: last,
        breaks,
    }))
}

/// A block scalar's header after its indicator (`|` or `>` at `h`): chomping (`c`lip, `-`
/// strip, `+` keep), the indentation indicator, and the byte after them.
pub(crate) fn block_header(b: &[u8], h: usize) -> R<(u8, Option<usize>, usize)> {
    let mut q = h + 1;
    let mut chomp = b'c';
    let mut indicator = None;
    for _ in 0..2 {
        match b.get(q) {
            Some(&c @ (b'-' | b'+')) if chomp == b'c' => chomp = c,
            Some(&d @ b'1'..=b'9') if indicator.is_none() => {
                indicator = Some(usize::from(d - b'0'))
            }
            _ => break,
        }
        q += 1;
    }
    Ok((chomp, indicator, q))
}

/// A block scalar's body, read from `at` (the start of the line after its header).
pub(crate) struct Body {
    pub(crate) value: String,
    /// Where its first content line's text starts (after the indentation), and that line's
    /// break count from `at`; `None` without content lines.
    pub(crate) first: Option<(usize, usize)>,
    /// Where the parser ends it: the first byte after the indentation of the line that ends it
    /// (or the end of the text), and the line breaks from `at` to there.
    pub(crate) end: usize,
    pub(crate) breaks: usize,
    /// The start of the line that ended it (where the reader goes on).
    pub(crate) next: usize,
}

/// Reads a block scalar's body from `at`, in a block collection at column `n`, with its
/// indentation indicator if any, folded or literal, with its chomping: as libyaml and the
/// parser do, line by line (the indentation found from the first line with text, or `n` plus
/// the indicator; more-indented lines of a folded scalar kept with their breaks).
pub(crate) fn block_body(
    src: &str,
    at: usize,
    n: usize,
    indicator: Option<usize>,
    folded: bool,
    chomp: u8,
) -> R<Body> {
    let b = src.as_bytes();
    let mut i = at;
    let mut breaks = 0;
    let mut trailing = 0usize;
    // The indentation: given, or the most spaces before the first text (at least n + 1).
    let indent = match indicator {
        Some(d) => {
            let bi = n + d;
            let (next, nb, eof) = indentation(b, i, bi)?;
            (i, breaks, trailing) = (next, nb, nb);
            // The first line with text, indented past the parent but short of the indicator's
            // column, the parser refuses.
            let ls = b[..i]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |k| k + 1);
            if !eof && i - ls < bi && i - ls > n {
                return Err(Unsupported);
            }
            bi
        }
        None => {
            let mut most = 0;
            loop {
                let ls = i;
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                most = most.max(i - ls);
                match b.get(i) {
                    Some(b'\n' | b'\r') => {
                        i = after_break(b, i);
                        breaks += 1;
                        trailing += 1;
                    }
                    Some(b'\t') => return Err(Unsupported),
                    _ => {
                        let first = i - ls;
                        let bi = first.max(n + 1);
                        // Leading empty lines with more spaces than the text are refused.
                        if most > bi || (i >= b.len() && most > 0) {
                            return Err(Unsupported);
                        }
                        // Back to the text's line, its indentation eaten up to `bi`.
                        i = ls + first.min(bi);
                        break bi;
                    }
                }
            }
        }
    };
    let mut value = String::new();
    let mut first = None;
    let mut leading_break = false;
    let mut leading_blank = false;
    let line_start = |i: usize| {
        b[..i]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |k| k + 1)
    };
    // The start of the line `i` stands on.
    let mut ls = line_start(i);
    // Lines whose indentation reaches `indent` (`i` stands after it).
    while i < b.len() && i - ls == indent {
        let trailing_blank = matches!(b[i], b' ' | b'\t');
        if folded && leading_break && !leading_blank && !trailing_blank {
            if trailing == 0 {
                value.push(' ');
            }
        } else if leading_break {
            value.push('\n');
        }
        for _ in 0..trailing {
            value.push('\n');
        }
        leading_blank = trailing_blank;
        let e = match memchr::memchr2(b'\n', b'\r', &b[i..]) {
            Some(n) => i + n,
            None => b.len(),
        };
        text_ok(src, i, e, true)?;
        if first.is_none() {
            first = Some((i, breaks));
        }
        value.push_str(&src[i..e]);
        if e >= b.len() {
            // The last line has no line break; the parser reads one all the same.
            i = e;
            leading_break = true;
            trailing = 0;
            break;
        }
        i = after_break(b, e);
        breaks += 1;
        leading_break = true;
        let (next, nb, _) = indentation(b, i, indent)?;
        i = next;
        breaks += nb;
        trailing = nb;
        ls = if nb == 0 {
            after_break(b, e)
        } else {
            line_start(i)
        };
    }
    // Chomping: clip keeps the last break, keep the empty lines after it too.
    if chomp != b'-' && leading_break {
        value.push('\n');
    }
    if chomp == b'+' {
        for _ in 0..trailing {
            value.push('\n');
        }
    }
    let next = if i >= b.len() { i } else { line_start(i) };
    Ok(Body {
        value,
        first,
        end: i,
        breaks,
        next,
    })
}

/// From a line start at `i`: eats up to `indent` spaces and the empty lines (lines of at most
/// `indent` spaces); the byte where it stopped, the line breaks eaten, and whether it stopped
/// at the end of the text.
fn indentation(b: &[u8], mut i: usize, indent: usize) -> R<(usize, usize, bool)> {
    let mut breaks = 0;
    loop {
        let ls = i;
        while i - ls < indent && b.get(i) == Some(&b' ') {
            i += 1;
        }
        match b.get(i) {
            None => return Ok((i, breaks, true)),
            Some(b'\t') if i - ls < indent => return Err(Unsupported),
            Some(b'\n' | b'\r') => {
                i = after_break(b, i);
                breaks += 1;
            }
            Some(_) => return Ok((i, breaks, false)),
        }
    }
}
