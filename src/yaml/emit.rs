//! Writes [`Document`]s and [`Node`]s as YAML text.
//!
//! Nodes that carry source layout are written as they were (relative indentation, blank
//! lines, comment columns, spacing, verbatim text); new nodes get the canonical layout. See the
//! module doc of [`super`] for the exact guarantee.

use std::borrow::Cow;

use super::scalar::{self, Resolved};
use super::{flags, Comment, Document, Entry, Node, Repr, ScalarStyle, SeqIndent};

/// Choices for nodes without source layout.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmitOptions {
    /// Indentation of new block sequences under a key.
    pub seq_indent: SeqIndent,
}

/// Writes documents from their trees, with `---` between them where YAML needs one.
pub fn emit_stream(docs: &[Document<'_>], out: &mut String) {
    let mut prev_ended = true;
    for (i, d) in docs.iter().enumerate() {
        if i > 0 && d.start.is_none() && !prev_ended {
            out.push_str("---\n");
        }
        emit_document(d, out);
        prev_ended = d.end;
    }
}

/// Writes one document from its tree.
pub fn emit_document(doc: &Document<'_>, out: &mut String) {
    let mut e = Emitter {
        out,
        opts: EmitOptions {
            seq_indent: doc.seq_indent,
        },
        block_body: None,
        keep_end: None,
    };
    if doc.bom {
        e.out.push('\u{feff}');
    }
    e.comments(&doc.pre, 0);
    for d in &doc.directives {
        e.out.push_str(d);
        e.out.push('\n');
    }
    if let Some(start_comment) = &doc.start {
        e.out.push_str("---");
        let inline_root = doc.root.as_ref().filter(|r| {
            !is_block_collection(r)
                && !doc.root_next_line
                && r.comments().head.is_empty()
                && r.layout().flags & flags::SOURCE != 0
                && !(r.as_str() == Some("")
                    && r.style() == Some(ScalarStyle::Plain)
                    && r.tag().is_none())
        });
        match (inline_root, &doc.root) {
            (Some(r), _) => e.value(r, 0, None, Ctx::DocStart),
            (None, Some(r)) if is_block_collection(r) && !doc.root_next_line => {
                // `--- !tag` / `--- &anchor`: the collection's properties share the marker's line.
                let mut props = String::new();
                push_props(r, &mut props);
                if !props.is_empty() {
                    e.out.push(' ');
                    e.out.push_str(props.trim_end());
                }
                e.line_comment(start_comment.as_ref().or(r.comments().line.as_ref()));
                e.out.push('\n');
                e.root_body(r);
            }
            (None, root) => {
                e.line_comment(start_comment.as_ref());
                e.out.push('\n');
                if let Some(r) = root {
                    e.root(r);
                }
            }
        }
    } else if let Some(r) = &doc.root {
        e.root(r);
    }
    let rewritten_multi_line_root = doc.root.as_ref().is_some_and(|r| {
        r.ext.as_ref().is_none_or(|x| x.raw.is_none())
            && (r.as_str().is_some_and(|t| t.contains('\n')) || is_block_scalar(r))
    });
    if rewritten_multi_line_root && doc.foot.iter().any(|c| c.col > 0) {
        // After a scalar of several lines written anew (as a block scalar), an indented
        // comment would read as part of its text: comments start the line there.
        let foot: Vec<Comment<'_>> = doc
            .foot
            .iter()
            .map(|c| Comment {
                col: 0,
                ..c.clone()
            })
            .collect();
        e.comments(&foot, 0);
    } else {
        e.comments(&doc.foot, 0);
    }
    if doc.end {
        e.blank(doc.end_blank);
        e.out.push_str("...\n");
    }
    e.comments(&doc.trailer, 0);
    e.blank(doc.tail_blank);
}

/// One item of a block sequence whose dashes are at column `dash_col`, written as the sequence
/// would write it: its blank lines and head comments, the dash, the item.
pub fn emit_seq_item(item: &Node<'_>, dash_col: usize, opts: EmitOptions, out: &mut String) {
    Emitter {
        out,
        opts,
        block_body: None,
        keep_end: None,
    }
    .seq_item(item, dash_col, false);
}

/// A node alone, as a block YAML document (for messages and tests).
pub fn emit_node(node: &Node<'_>, opts: EmitOptions) -> String {
    let mut out = String::new();
    Emitter {
        out: &mut out,
        opts,
        block_body: None,
        keep_end: None,
    }
    .root(node);
    out
}

/// The one-line canonical rendering of a scalar, alias or flow collection, ignoring verbatim
/// source text except for single-line children. The parser compares it with the source to
/// decide whether a node needs its source text kept.
pub(crate) fn canonical_inline(node: &Node<'_>, in_flow: bool) -> String {
    let mut s = String::new();
    push_props(node, &mut s);
    match &node.repr {
        Repr::Scalar { text, style, .. } => s.push_str(&scalar_text(node, text, *style, in_flow)),
        Repr::Alias { name, .. } => {
            s.push('*');
            s.push_str(name);
        }
        Repr::Seq { items, .. } => {
            s.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                let child = flow_child(item);
                if child.is_empty() {
                    // An empty value cannot be written as nothing in a flow sequence.
                    s.push_str("null");
                } else {
                    s.push_str(&child);
                }
            }
            s.push(']');
        }
        Repr::Map { entries, .. } => {
            s.push('{');
            for (i, e) in entries.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                let key = flow_child(&e.key);
                if key.chars().count() > IMPLICIT_KEY_MAX {
                    s.push_str("? ");
                }
                s.push_str(&key);
                if needs_space_before_colon(&e.key) {
                    s.push(' ');
                }
                s.push(':');
                let v = flow_child(&e.value);
                if !v.is_empty() {
                    s.push(' ');
                    s.push_str(&v);
                }
            }
            s.push('}');
        }
    }
    s
}

/// A child inside a flow collection: its single-line source text if it has one, else canonical.
fn flow_child(node: &Node<'_>) -> String {
    // A plain scalar from block context may hold what ends it in a flow collection.
    let not_in_flow = |text: &str| {
        node.style() == Some(ScalarStyle::Plain) && text.contains([',', '[', ']', '{', '}'])
    };
    match node.ext.as_ref().and_then(|e| e.raw.as_ref()) {
        Some(raw)
            if !raw.text.contains('\n') && !is_block_scalar(node) && !not_in_flow(&raw.text) =>
        {
            let mut s = String::new();
            push_props(node, &mut s);
            s.push_str(&raw.text);
            s
        }
        _ => canonical_inline(node, true),
    }
}

fn push_props(node: &Node<'_>, s: &mut String) {
    if let Some(a) = node.anchor() {
        s.push('&');
        s.push_str(a);
        s.push(' ');
    }
    if let Some(t) = node.tag() {
        s.push_str(t);
        s.push(' ');
    }
    // A property with nothing after it (`&a` on an empty value) keeps no trailing space; an
    // empty string written `""` (`! ""`) needs it.
    if s.ends_with(' ') && is_plain_empty(node) {
        s.pop();
    }
}

/// A key that a `:` right after it would run into: an alias (`*a:` names the alias `a:`) or
/// an empty scalar written as its properties alone (`!!null:` is one tag).
fn needs_space_before_colon(k: &Node<'_>) -> bool {
    k.kind() == super::Kind::Alias
        || (is_plain_empty(k) && (k.tag().is_some() || k.anchor().is_some()))
}

/// A plain empty scalar that is written as nothing at all (a tagged empty string out of its
/// source, `!!str`, is written `""`).
fn is_plain_empty(node: &Node<'_>) -> bool {
    node.as_str() == Some("")
        && node.style() == Some(ScalarStyle::Plain)
        && scalar_text(node, "", ScalarStyle::Plain, false).is_empty()
}

/// A scalar's text as written on one line (no verbatim source).
fn scalar_text<'t>(
    node: &Node<'_>,
    text: &'t str,
    style: ScalarStyle,
    in_flow: bool,
) -> Cow<'t, str> {
    // Resolving a plain scalar is work: only the styles that ask are given it.
    let is_string = || matches!(node.resolved(), Some(Resolved::Str(_)));
    let from_source = node.layout().flags & flags::SOURCE != 0;
    match style {
        // The parser read it as a plain scalar: it is valid as written, unless it came from
        // block context and now goes into a flow collection, where `,[]{}` end it, or it
        // starts like a document marker and may now start a line (a value moved to a root).
        ScalarStyle::Plain if from_source && plain_as_read(text, in_flow) => Cow::Borrowed(text),
        // A value that is no string only because of its tag (`!!null :[a`) may be any text.
        ScalarStyle::Plain
            if !text.contains('\n')
                && ((node.tag().is_none() && !is_string()) || scalar::plain_ok(text, in_flow)) =>
        {
            Cow::Borrowed(text)
        }
        ScalarStyle::Plain if is_string() && !scalar::needs_quotes(text, in_flow) => {
            Cow::Borrowed(text)
        }
        ScalarStyle::SingleQuoted if !text.contains('\n') => scalar::single_quoted(text)
            .map_or_else(|| Cow::Owned(scalar::double_quoted(text)), Cow::Owned),
        ScalarStyle::Any if !scalar::needs_quotes(text, in_flow) => Cow::Borrowed(text),
        _ => Cow::Owned(scalar::double_quoted(text)),
    }
}

/// Whether written text would put a document marker (`---` or `...` and then a space or the
/// line's end) at the start of a line: its continuation lines, and its first when it starts one.
fn starts_a_marker_line(text: &str, first_starts_a_line: bool) -> bool {
    let marker = |l: &str| {
        (l.starts_with("---") || l.starts_with("..."))
            && matches!(l.as_bytes().get(3), None | Some(b' ' | b'\t' | b'\r'))
    };
    text.split('\n')
        .enumerate()
        .any(|(i, l)| (i > 0 || first_starts_a_line) && marker(l))
}

/// Whether a plain scalar the parser read can be written as it was read, on one line. Its text
/// may have been replaced since (a value put in its place keeps its style), so characters YAML
/// cannot carry raw are checked again.
fn plain_as_read(text: &str, in_flow: bool) -> bool {
    if text.contains('\n') || text.starts_with("---") || text.starts_with("...") {
        return false;
    }
    // Most text is printable ASCII, read a byte at a time.
    if !text.bytes().all(|b| (0x20..0x7f).contains(&b)) && !text.chars().all(scalar::printable) {
        return false;
    }
    !in_flow || !text.contains([',', '[', ']', '{', '}'])
}

fn is_block_collection(n: &Node<'_>) -> bool {
    match &n.repr {
        Repr::Map {
            entries,
            flow: false,
            ..
        } => !entries.is_empty(),
        Repr::Seq {
            items, flow: false, ..
        } => !items.is_empty(),
        _ => false,
    }
}

fn is_block_scalar(n: &Node<'_>) -> bool {
    matches!(n.style(), Some(ScalarStyle::Literal | ScalarStyle::Folded))
}

/// Where a value is being written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// After `key:`.
    Value,
    /// After `-`.
    Item,
    /// After `---`.
    DocStart,
}

struct Emitter<'o> {
    out: &'o mut String,
    opts: EmitOptions,
    /// Right after a block scalar: the column of its text. A comment written there must stand
    /// to the left of it, or it reads as more text (a comment that followed a plain scalar in
    /// the source can follow a block scalar here).
    block_body: Option<usize>,
    /// Where the output ended when a block scalar with keep chomping (`|+`) was written: an
    /// empty line right after one is its text, so no blank line of layout is written there.
    keep_end: Option<usize>,
}

fn pad(out: &mut String, mut n: usize) {
    // Indentation is written for every line: a slice of spaces at a time, not a character.
    const SPACES: &str = "                                                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// How far the lines of `raw` (a flow scalar's or flow collection's continuation lines, or an
/// auto-detected block scalar's body) move when written where such lines may start at column
/// `base` (see [`super::Raw::base`]). Indentation is not content there, so the lines may move
/// freely, except that moving left stops before any line's text reaches column 0 (a body line
/// starting with a tab there would end the scalar).
fn shift_of<'l>(raw: &super::Raw<'_>, base: usize, lines: impl Iterator<Item = &'l str>) -> isize {
    let shift = base as isize - raw.base as isize;
    if shift >= 0 {
        return shift;
    }
    let least = lines
        .filter(|l| !l.trim_start_matches(' ').is_empty())
        .map(|l| (l.len() - l.trim_start_matches(' ').len()) as isize)
        .min();
    least.map_or(shift, |m| shift.max(1 - m).min(0))
}

/// The same for a block scalar with an indentation indicator, whose body's indentation is
/// that many columns right of its parent's column (the key or dash; 0 at a document's root,
/// as the parser reads it): the body moves with the parent.
fn indicator_shift(raw: &super::Raw<'_>, base: usize) -> isize {
    base.saturating_sub(1) as isize - raw.base.saturating_sub(1) as isize
}

/// The longest key written as an implicit key, with room for its properties' separators.
const IMPLICIT_KEY_MAX: usize = 1000;

/// The indentation of a value written on the line after its key, dash or properties: as read,
/// unless it was a document's root at column 0, which under a key or dash must move right.
fn next_line_indent(indent: u8, at: Ctx) -> usize {
    match (indent, at) {
        (0, Ctx::Value | Ctx::Item) => 2,
        _ => usize::from(indent),
    }
}

/// Shifts every line after the first by `shift` columns (removing at most the leading spaces
/// there are when `shift` is negative).
fn shift_lines(text: &str, shift: isize) -> Cow<'_, str> {
    if shift == 0 || !text.contains('\n') {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            s.push('\n');
            s.push_str(&shift_line(line, shift));
        } else {
            s.push_str(line);
        }
    }
    Cow::Owned(s)
}

fn shift_line(line: &str, shift: isize) -> Cow<'_, str> {
    if line.is_empty() || shift == 0 {
        return Cow::Borrowed(line);
    }
    if shift > 0 {
        let mut s = String::with_capacity(line.len() + shift.unsigned_abs());
        pad(&mut s, shift.unsigned_abs());
        s.push_str(line);
        Cow::Owned(s)
    } else {
        let leading = line.len() - line.trim_start_matches(' ').len();
        Cow::Borrowed(&line[leading.min(shift.unsigned_abs())..])
    }
}

impl Emitter<'_> {
    fn comments(&mut self, cs: &[Comment<'_>], col: usize) {
        for c in cs {
            self.blank(c.blank);
            let at = (col as isize + isize::from(c.col)).max(0).unsigned_abs();
            pad(
                self.out,
                match self.block_body {
                    Some(text_col) if at >= text_col => text_col.saturating_sub(1),
                    _ => at,
                },
            );
            self.out.push('#');
            self.out.push_str(&c.text);
            self.out.push('\n');
        }
    }

    fn line_comment(&mut self, c: Option<&Comment<'_>>) {
        if let Some(c) = c {
            pad(self.out, usize::try_from(c.col).unwrap_or(0).max(1));
            self.out.push('#');
            self.out.push_str(&c.text);
        }
    }

    fn blank(&mut self, n: u8) {
        if self.keep_end == Some(self.out.len()) {
            return;
        }
        for _ in 0..n {
            self.out.push('\n');
        }
    }

    fn root(&mut self, r: &Node<'_>) {
        if is_block_collection(r) {
            self.root_props(r);
        }
        self.root_body(r);
    }

    /// The root without the properties of a block collection (written by the caller).
    fn root_body(&mut self, r: &Node<'_>) {
        self.comments(&r.comments().head, 0);
        let lay = r.layout();
        let col = if lay.flags & flags::SOURCE != 0 {
            usize::from(lay.indent)
        } else {
            0
        };
        match &r.repr {
            Repr::Map {
                flow: false,
                entries,
                ..
            } if !entries.is_empty() => self.block_map(r, col, false),
            Repr::Seq {
                flow: false, items, ..
            } if !items.is_empty() => self.block_seq(r, col, false),
            _ => {
                if is_plain_empty(r) && r.tag().is_none() && r.anchor().is_none() {
                    return;
                }
                pad(self.out, col);
                let mut props = String::new();
                push_props(r, &mut props);
                self.out.push_str(&props);
                self.scalar_or_flow_body(r, col, r.comments().line.as_ref(), false);
            }
        }
    }

    fn root_props(&mut self, r: &Node<'_>) {
        let mut props = String::new();
        push_props(r, &mut props);
        if !props.is_empty() || r.comments().line.is_some() {
            self.out.push_str(props.trim_end());
            self.line_comment(r.comments().line.as_ref());
            self.out.push('\n');
        }
    }

    fn block_map(&mut self, node: &Node<'_>, col: usize, inline_first: bool) {
        let entries = node.entries();
        for (i, e) in entries.iter().enumerate() {
            if !(inline_first && i == 0) {
                self.blank(e.key.layout().blank);
                self.comments(&e.key.comments().head, col);
                pad(self.out, col);
            }
            // An entry whose key is written as nothing starts its line with ':', which would
            // give its value to an explicit key left without one just before it.
            let next_key_bare = entries.get(i + 1).is_some_and(|n| {
                n.key.layout().flags & flags::EXPLICIT_KEY == 0
                    && is_plain_empty(&n.key)
                    && n.key.tag().is_none()
                    && n.key.anchor().is_none()
            });
            self.entry(e, col, next_key_bare);
        }
        self.comments(&node.comments().foot, col);
    }

    fn entry(&mut self, e: &Entry<'_>, col: usize, next_key_bare: bool) {
        self.block_body = None;
        let k = &e.key;
        let explicit = k.layout().flags & flags::EXPLICIT_KEY != 0 || is_block_collection(k);
        // Most keys are plain text without properties: written from their text, not copied.
        let key_text: Cow<'_, str> = match &k.repr {
            Repr::Scalar { text, style, .. } => {
                let mut s = String::new();
                push_props(k, &mut s);
                let t = match k.ext.as_ref().and_then(|x| x.raw.as_ref()) {
                    Some(raw) if !raw.text.contains('\n') && !is_block_scalar(k) => {
                        Cow::Borrowed(raw.text.as_ref())
                    }
                    _ => {
                        let st = if is_block_scalar(k) {
                            ScalarStyle::DoubleQuoted
                        } else {
                            *style
                        };
                        scalar_text(k, text, st, false)
                    }
                };
                if s.is_empty() {
                    t
                } else {
                    s.push_str(&t);
                    Cow::Owned(s)
                }
            }
            Repr::Alias { name, .. } => Cow::Owned(format!("*{name}")),
            _ => match k.ext.as_ref().and_then(|x| x.raw.as_ref()) {
                Some(raw) if !raw.text.contains('\n') => {
                    let mut s = String::new();
                    push_props(k, &mut s);
                    s.push_str(&raw.text);
                    Cow::Owned(s)
                }
                _ => Cow::Owned(canonical_inline(k, true)),
            },
        };
        // An implicit key is at most 1024 characters long (YAML 1.2, 7.4.2): a longer one,
        // written on one line, is written as an explicit key. (No fewer bytes than characters.)
        let explicit = explicit
            || (key_text.len() > IMPLICIT_KEY_MAX && key_text.chars().count() > IMPLICIT_KEY_MAX);
        if explicit {
            self.out.push_str("? ");
            self.out.push_str(&key_text);
            self.line_comment(k.comments().line.as_ref());
            self.out.push('\n');
            let v = &e.value;
            if v.layout().flags & flags::OMITTED != 0
                && is_plain_empty(v)
                && v.ext.is_none()
                && !next_key_bare
            {
                return;
            }
            pad(self.out, col);
            self.out.push(':');
            self.value(&e.value, col, None, Ctx::Value);
        } else {
            self.out.push_str(&key_text);
            let before_colon = usize::from(k.layout().gap);
            let before_colon = if needs_space_before_colon(k) {
                before_colon.max(1)
            } else if key_text.is_empty() {
                // Nothing to stand apart from, and at a line's start the spaces would move the
                // mapping's indentation (a key that lost its anchor, say).
                0
            } else {
                before_colon
            };
            pad(self.out, before_colon);
            self.out.push(':');
            self.value(&e.value, col, k.comments().line.as_ref(), Ctx::Value);
        }
    }

    fn block_seq(&mut self, node: &Node<'_>, col: usize, inline_first: bool) {
        for (i, item) in node.items().iter().enumerate() {
            self.seq_item(item, col, inline_first && i == 0);
        }
        self.comments(&node.comments().foot, col);
    }

    /// One item of a block sequence whose dashes are at `col`; `inline`: the dash goes on the
    /// current line (`- - a`), without the item's blank lines and head comments.
    fn seq_item(&mut self, item: &Node<'_>, col: usize, inline: bool) {
        if !inline {
            self.blank(item.layout().blank);
            self.comments(&item.comments().head, col);
            pad(self.out, col);
        }
        self.block_body = None;
        self.out.push('-');
        self.value(item, col, None, Ctx::Item);
    }

    /// Writes a node after its indicator (`key:`, `-` or `---`), which sits at column `ctx`.
    fn value(&mut self, v: &Node<'_>, ctx: usize, key_comment: Option<&Comment<'_>>, at: Ctx) {
        let lay = v.layout();
        let from_source = lay.flags & flags::SOURCE != 0;
        let next_line = from_source && lay.flags & flags::NEXT_LINE != 0;
        let mut props = String::new();
        push_props(v, &mut props);
        let props = props.trim_end();
        if is_block_collection(v) {
            let canonical = match (&v.repr, at) {
                (Repr::Seq { .. }, Ctx::Value) => match self.opts.seq_indent {
                    SeqIndent::Compact => 0,
                    SeqIndent::Wide => 2,
                },
                _ => 2,
            };
            // A map must be indented past its key; a node that was a document root (indented
            // 0) and now is a value takes the canonical indentation.
            let map_value = matches!(v.repr, Repr::Map { .. }) && at != Ctx::DocStart;
            let indent = if from_source && !(map_value && lay.indent == 0) {
                usize::from(lay.indent)
            } else {
                canonical
            };
            let own_comment = v.comments().line.as_ref();
            let first_clean = match &v.repr {
                Repr::Map { entries, .. } => entries
                    .first()
                    .is_some_and(|e| e.key.comments().head.is_empty() && e.key.layout().blank == 0),
                Repr::Seq { items, .. } => items
                    .first()
                    .is_some_and(|i| i.comments().head.is_empty() && i.layout().blank == 0),
                _ => false,
            };
            if at == Ctx::Item
                && !next_line
                && props.is_empty()
                && own_comment.is_none()
                && first_clean
            {
                let indent = indent.max(2);
                pad(self.out, indent - 1);
                match &v.repr {
                    Repr::Map { .. } => self.block_map(v, ctx + indent, true),
                    _ => self.block_seq(v, ctx + indent, true),
                }
                return;
            }
            if !props.is_empty() {
                self.out.push(' ');
                self.out.push_str(props);
            }
            // The comment after `key:` is the key's; a collection has one of its own only when
            // it replaced a scalar that had one, and then the key's (the patch's) is newer.
            self.line_comment(key_comment.or(own_comment));
            self.out.push('\n');
            let child = if at == Ctx::Value || at == Ctx::DocStart {
                ctx + indent
            } else {
                ctx + indent.max(1)
            };
            match &v.repr {
                Repr::Map { .. } => self.block_map(v, child, false),
                _ => self.block_seq(v, child, false),
            }
            return;
        }
        if next_line {
            // `key:` / `-` alone, the value on the following line(s).
            self.line_comment(key_comment.filter(|_| at == Ctx::Value));
            if at == Ctx::Item {
                self.line_comment(
                    v.comments()
                        .line
                        .as_ref()
                        .filter(|_| !v.is_scalar() && v.kind() != super::Kind::Alias),
                );
            }
            self.out.push('\n');
            let col = ctx + next_line_indent(lay.indent, at);
            self.comments(&v.comments().head, col);
            pad(self.out, col);
            self.out.push_str(props);
            if !props.is_empty() && !(is_plain_empty(v)) {
                self.out.push(' ');
            }
            let own = if v.is_scalar() || v.kind() == super::Kind::Alias {
                v.comments().line.as_ref()
            } else {
                None
            };
            self.scalar_or_flow_body(v, ctx, own, at != Ctx::DocStart);
            return;
        }
        let empty = is_plain_empty(v) && props.is_empty();
        if !empty {
            pad(
                self.out,
                if lay.gap == 0 {
                    1
                } else {
                    usize::from(lay.gap)
                },
            );
            self.out.push_str(props);
            if from_source && lay.flags & flags::PROPS_LINE != 0 && !props.is_empty() {
                // `key: &anchor` then the content on the next line.
                self.out.push('\n');
                pad(self.out, ctx + next_line_indent(lay.indent, at));
            } else if !props.is_empty() && !is_plain_empty(v) {
                self.out.push(' ');
            }
        }
        self.scalar_or_flow_body(
            v,
            ctx,
            v.comments().line.as_ref().or(key_comment),
            at != Ctx::DocStart,
        );
    }

    /// Writes a scalar, alias or flow collection whose properties are already out, then its
    /// line comment and the line end. `nested` is false for a document's root, whose
    /// continuation lines may start at column 0; inside a block collection (its key or dash at
    /// column `ctx`) they must stand right of it.
    fn scalar_or_flow_body(
        &mut self,
        v: &Node<'_>,
        ctx: usize,
        comment: Option<&Comment<'_>>,
        nested: bool,
    ) {
        let base = if nested { ctx + 1 } else { 0 };
        let raw = v.ext.as_ref().and_then(|e| e.raw.as_ref());
        match &v.repr {
            Repr::Scalar { text, style, .. } => {
                if let Some(raw) = raw.filter(|_| is_block_scalar(v)) {
                    // An empty body after the header's line break is one empty line when
                    // chomping keeps it (`|+`): it is the scalar's content, not layout.
                    let (header, body) = match raw.text.split_once('\n') {
                        Some((h, b)) => (h, (!b.is_empty() || h.contains('+')).then_some(b)),
                        None => (raw.text.as_ref(), None),
                    };
                    let indicator = header.bytes().any(|b| b.is_ascii_digit());
                    let shift = if indicator {
                        indicator_shift(raw, base)
                    } else {
                        shift_of(raw, base, body.unwrap_or("").split('\n'))
                    };
                    self.out.push_str(header);
                    self.line_comment(comment);
                    self.out.push('\n');
                    let start = self.out.len();
                    if let Some(body) = body {
                        for line in body.split('\n') {
                            self.out.push_str(&shift_line(line, shift));
                            self.out.push('\n');
                        }
                    }
                    if indicator {
                        // Its lines may be indented more than its body's column: comments
                        // after it go to the parent's column, the only place the parser takes.
                        self.block_body = Some(base.max(1));
                    } else {
                        self.after_block_body(start, base);
                    }
                    if header.contains('+') {
                        self.keep_end = Some(self.out.len());
                    }
                    return;
                }
                if let Some(raw) = raw {
                    let shift = shift_of(raw, base, raw.text.split('\n').skip(1));
                    let shifted = shift_lines(&raw.text, shift);
                    let at_line_start = self.out.is_empty() || self.out.ends_with('\n');
                    // Read in the middle of a line (after an anchor, or under a key), a line of
                    // it that starts like a document marker would end the document once it
                    // starts a line: the value is written anew instead.
                    if !starts_a_marker_line(&shifted, at_line_start) {
                        self.out.push_str(&shifted);
                        self.line_comment(comment);
                        self.out.push('\n');
                        return;
                    }
                }
                let block = match style {
                    ScalarStyle::Literal | ScalarStyle::Folded => true,
                    ScalarStyle::Any | ScalarStyle::Plain => {
                        text.contains('\n') && scalar::literal_ok(text)
                    }
                    _ => false,
                } && scalar::literal_ok(text);
                if block {
                    self.block_scalar(text, *style == ScalarStyle::Folded, ctx, comment);
                    return;
                }
                let t = scalar_text(v, text, *style, false);
                self.out.push_str(&t);
                self.line_comment(comment);
                self.out.push('\n');
            }
            Repr::Alias { name, .. } => {
                self.out.push('*');
                self.out.push_str(name);
                self.line_comment(comment);
                self.out.push('\n');
            }
            Repr::Seq { .. } | Repr::Map { .. } => {
                match raw {
                    Some(raw) => {
                        let shift = shift_of(raw, base, raw.text.split('\n').skip(1));
                        self.out.push_str(&shift_lines(&raw.text, shift));
                    }
                    None => {
                        let mut s = canonical_inline(v, true);
                        // Properties are already written.
                        let mut p = String::new();
                        push_props(v, &mut p);
                        if s.starts_with(&p) {
                            s.drain(..p.len());
                        }
                        self.out.push_str(&s);
                    }
                }
                self.line_comment(comment);
                self.out.push('\n');
            }
        }
    }

    /// A new multi-line string as a literal block, or a folded one (`folded`), with the
    /// chomping indicator its final line breaks need and its body two columns right of `ctx`.
    fn block_scalar(
        &mut self,
        text: &str,
        folded: bool,
        ctx: usize,
        comment: Option<&Comment<'_>>,
    ) {
        let trimmed = text.trim_end_matches('\n');
        let trailing = text.len() - trimmed.len();
        self.out.push(if folded { '>' } else { '|' });
        self.out.push_str(match trailing {
            0 => "-",
            1 => "",
            _ => "+",
        });
        self.line_comment(comment);
        self.out.push('\n');
        let lines = if folded {
            scalar::folded_lines(trimmed)
        } else {
            trimmed.split('\n').collect()
        };
        for line in lines {
            if !line.is_empty() {
                pad(self.out, ctx + 2);
                self.out.push_str(line);
            }
            self.out.push('\n');
        }
        for _ in 1..trailing {
            self.out.push('\n');
        }
        self.block_body = Some(ctx + 2);
        if trailing > 1 {
            self.keep_end = Some(self.out.len());
        }
    }

    /// Notes the column of the block scalar body written since `start`, which comments after
    /// it must stand left of. Without a body line, the first line right of the parent (whose
    /// lines may start at `base`) would be its body, comments included.
    fn after_block_body(&mut self, start: usize, base: usize) {
        self.block_body = self
            .out
            .get(start..)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start_matches(' ').len())
            .min()
            .or(Some(base.max(1)));
    }
}

/// A node's value on one line, for messages and results: plain YAML for scalars, JSON (which
/// is YAML) for collections.
pub fn one_line(n: &Node<'_>) -> String {
    if matches!(n.kind(), super::Kind::Scalar | super::Kind::Alias) {
        let mut bare = n.clone();
        *bare.comments_mut() = super::Comments::default();
        let s = emit_node(&bare, Default::default());
        let s = s.trim_end();
        if !s.contains('\n') {
            return s.to_owned();
        }
    }
    match super::to_json(n) {
        Ok(v) => v.to_string(),
        Err(_) => emit_node(n, Default::default())
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emit(n: &Node<'_>) -> String {
        emit_node(n, EmitOptions::default())
    }

    #[test]
    fn new_nodes_are_canonical() {
        let mut m = Node::map();
        m.set("name", Node::string("web"));
        m.set("on", Node::string("on"));
        m.set("replicas", Node::plain("3"));
        m.set(
            "labels",
            Node::map_of(vec![Entry::new("app", Node::string("web"))]),
        );
        m.set(
            "args",
            Node::seq_of(vec![Node::string("--port"), Node::string("0777")]),
        );
        m.set("script", Node::string("echo a\necho b\n"));
        m.set("empty", Node::map());
        m.set(
            "list",
            Node::seq_of(vec![Node::map_of(vec![
                Entry::new("a", Node::plain("1")),
                Entry::new("b", Node::plain("2")),
            ])]),
        );
        assert_eq!(
            emit(&m),
            "name: web\n\"on\": \"on\"\nreplicas: 3\nlabels:\n  app: web\nargs:\n- --port\n- \"0777\"\nscript: |\n  echo a\n  echo b\nempty: {}\nlist:\n- a: 1\n  b: 2\n"
        );
    }

    /// Inputs the fuzzer (`fuzz/`, target `yaml_roundtrip`) found whose trees, written back
    /// (as parsed, or rewritten in canonical block style), did not read back as the same data.
    #[test]
    fn rewritten_in_block_style_they_read_back_the_same() {
        for src in [
            // A non-specific tag on an empty scalar: written `!""`, which is not YAML.
            "!\n",
            "a: !\n",
            "- !\n- !!str\n",
            "? !\n: !\n",
            // A comment after a root scalar of several lines, rewritten as a literal block: it
            // was written inside the block.
            "W\n\n}\n  #\n",
            "a\n b\n  # c\n",
            // A byte order mark, then a sequence whose item has two lines: the mark counted in
            // the columns made the sequence indented.
            "\u{feff}- o\n o\n",
            "\u{feff}k:\n- a\n",
            // `.nan` is the same data as `.nan`.
            ".nan\n",
            "- [.NAN]\n",
            // A null item of a complex key's sequence, written in flow style: `[]`.
            "? - \n",
            "? - a\n  -\n: b\n",
            // A plain scalar with `]` from block context, written in a flow collection.
            "? ? p.]x\n",
            "? [a, b]\n: - c]d\n",
            // An empty key written as its tag alone, then `:`: `!!null: a` is one tag.
            "!!null : a\nb: c\n",
            "- !!str\n-\n  !!null : a\n  b: !!str\n- !!str : !!null\n",
            "&x : a\nb: *x\n",
            "{!!null : a, b: c}\n",
            "{&x : a, *x : b}\n",
            // An explicit key without a value, then an empty key: the `:` of the second entry
            // was taken for the first one's value.
            "? !!str a\n: \n: !!str d\n",
            "? a\n: b\n",
            // A `|+` block whose body is one empty line: the line was taken for no body.
            "- |+\n\n---",
            "- |+ # c\n\n---",
            "k: |+\n\n",
            "- |+\n\n...\n",
            "- |+ \n",
            // A last line of spaces without a line break: written with one, it was content.
            "- |+\n \n  ",
            "k: |+\n  x\n  ",
            "- |+\n  ",
            "- |+ # c\n",
            "- |+\n\n# c\n",
            "k: |+\n\nj: >+\n\n\nl: |\n\nm: 1\n",
            // A comment between a value's properties and its empty block scalar, written after
            // the header: right of the key, it was the block's first line, so its content.
            "empty bar: >\n \n  \n: &a value\nkey2: &b    \n #*a\n |\n",
            "k: &b\n  # c\n  |\n",
            "- &b\n  # c\n  >2-\n",
            // A comment after a `|1` block whose lines are indented more than that, behind
            // tabs: it was written at the body's least indentation, inside the block.
            "- |1\n  explicit\n\t\t#\t\n",
            "- |1\n  explicit\n\t\t#\t",
            // A plain scalar that is null by its tag, with `:[` inside, written in a flow
            // collection (an explicit key's list): left plain, the `:` began a pair.
            "? - !!null :[ a\n: b\n",
            "? - !!int :{x\n: b\n",
        ] {
            let docs = crate::yaml::parse_stream(src).expect(src);
            let root = docs[0].root.clone().expect(src);
            let mut block = root.clone();
            block.make_block();
            for out in [emit(&root), emit(&block)] {
                let back = crate::yaml::parse_stream(&out)
                    .unwrap_or_else(|e| panic!("{src:?} -> {out:?}: {e}"));
                let back = back[0].root.as_ref().expect("a root");
                assert!(back.same_data(&root), "{src:?} -> {out:?}");
            }
        }
    }

    /// Found by the yaml_roundtrip fuzz target: a flow map's key of many lines, rewritten in
    /// block style on one line, was longer than an implicit key may be (1024 characters).
    #[test]
    fn keys_longer_than_an_implicit_key_may_be_are_written_explicit() {
        let long = "word ".repeat(300);
        let folded = long.trim_end().replace(' ', "\n  ");
        let mut new = Node::map();
        new.set(long.trim_end(), Node::plain("v"));
        let mut flow = crate::yaml::parse_stream("{a: 1}\n").expect("parses")[0]
            .root
            .clone()
            .expect("a root");
        flow.set(long.trim_end(), Node::plain("v"));
        for src in [
            // A flow map's entry may be a key alone, of several lines.
            format!("{{ \"{folded}\"}}\n"),
            format!("- {{ \"{folded}\", c: d}}\n"),
            format!("? \"{folded}\"\n: b\n"),
        ] {
            let docs = crate::yaml::parse_stream(&src).expect("parses");
            let root = docs[0].root.clone().expect("a root");
            let mut block = root.clone();
            block.make_block();
            for (tree, out) in [
                (&root, emit(&root)),
                (&root, emit(&block)),
                (&new, emit(&new)),
                (&flow, emit(&flow)),
            ] {
                let back =
                    crate::yaml::parse_stream(&out).unwrap_or_else(|e| panic!("{out:?}: {e}"));
                let back = back[0].root.as_ref().expect("a root");
                assert!(back.same_data(tree), "{out:?}");
            }
        }
    }

    /// Found by the merges fuzz target (a JSON merge patch whose root is `---` folded with
    /// the next line): a plain scalar that starts like a document marker, read in the middle of
    /// a line, started the line once it became a document's root.
    #[test]
    fn plain_scalars_like_document_markers_are_quoted_at_a_root() {
        for src in [
            "k: --- j\n",
            "k: ... j\n",
            "- --- j\n",
            "&a ---\nj\n",
            "k: ---x\n",
        ] {
            let docs = crate::yaml::parse_stream(src).expect(src);
            let root = docs[0].root.clone().expect(src);
            let value = root
                .get("k")
                .or_else(|| root.items().first())
                .unwrap_or(&root)
                .clone();
            let mut bare = Node::plain(value.as_str().expect("a scalar").to_owned());
            bare.set_anchor(None);
            // Its anchor dropped, the source text starts the line (found again by the merges
            // fuzz target: a JSON merge patch's anchored root, detached).
            let mut stripped = value.clone();
            stripped.set_anchor(None);
            for node in [&value, &bare, &stripped] {
                let out = emit(node);
                let back = crate::yaml::parse_stream(&out)
                    .unwrap_or_else(|e| panic!("{src:?} -> {out:?}: {e}"));
                let back = back[0].root.as_ref().expect("a root");
                assert!(back.same_data(node), "{src:?} -> {out:?}");
            }
        }
    }

    /// Found by the merges fuzz target (apply wrote its annotation, a new `|` block, before
    /// an indented comment): a comment that followed a plain value follows a block scalar once
    /// the value is rewritten, and must stand left of its text.
    #[test]
    fn a_comment_after_a_new_block_scalar_stays_a_comment() {
        for src in [
            "a:\n  b: x\n      # deep\n",
            "- x\n    # deep\n",
            "a: x\n    # deep\nb: y\n",
        ] {
            let docs = crate::yaml::parse_stream(src).expect(src);
            let mut root = docs[0].root.clone().expect(src);
            let target = match root.get_mut("a") {
                Some(a) if a.is_map() => a.get_mut("b").expect("b"),
                Some(a) => a,
                None => &mut root.items_mut().expect("items")[0],
            };
            target.set_text("one\ntwo\n", ScalarStyle::Any);
            let out = emit(&root);
            let back = crate::yaml::parse_stream(&out).expect("parses");
            assert!(
                back[0].root.as_ref().expect("root").same_data(&root),
                "{src:?} -> {out:?}"
            );
            assert!(out.contains("# deep"), "{out}");
        }
    }

    /// Found by tests/it/properties.rs (a merge2 patch run twice doubled a comment): a comment
    /// at the dash column after a compact sequence was that sequence's foot, so a head comment
    /// written there for the next key read back as the sequence's, and the next merge added
    /// the key's comment again.
    #[test]
    fn a_comment_after_a_compact_sequence_is_the_next_keys() {
        let src =
            "spec:\n  c:\n  - a\n  # about a\n  a: a\n  d:\n    - x\n    # foot of d\n  # end\n";
        let docs = crate::yaml::parse_stream(src).expect("parses");
        let spec = docs[0]
            .root
            .as_ref()
            .and_then(|r| r.get("spec"))
            .expect("spec");
        let (c, a) = (&spec.entries()[0], &spec.entries()[1]);
        assert!(c.value.comments().foot.is_empty());
        assert_eq!(a.key.comments().head[0].text, " about a");
        // An indented sequence keeps its foot; the map's own foot stays the map's.
        let d = spec.get("d").expect("d");
        assert_eq!(d.comments().foot[0].text, " foot of d");
        assert_eq!(spec.comments().foot[0].text, " end");
        let mut out = String::new();
        crate::yaml::emit_stream(&docs, &mut out);
        assert_eq!(out, src);
    }

    #[test]
    fn wide_sequences_follow_the_document() {
        let m = Node::map_of(vec![Entry::new("a", Node::seq_of(vec![Node::plain("1")]))]);
        assert_eq!(
            emit_node(
                &m,
                EmitOptions {
                    seq_indent: SeqIndent::Wide
                }
            ),
            "a:\n  - 1\n"
        );
    }
}
