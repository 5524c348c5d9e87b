//! The fast reader: the YAML that real packages are made of, read straight into the builder's
//! events, with `granit-parser` as the fallback for anything else.
//!
//! What it reads: block mappings and sequences (compact `key:\n- item` and indented, `- key:`
//! items), plain scalars on one line, quoted scalars on one line, literal and folded block
//! scalars (`|`, `|-`, `|+`, `>`, ...) without an indentation indicator, flow collections on
//! one line, own-line and line comments, `---` and `...`, blank lines. Anything else —
//! anchors, aliases, tags, directives, explicit keys, multi-line plain or quoted scalars and
//! flow collections, tabs, carriage returns, empty documents or list items, a value on the line
//! after its key, unusual escapes or characters — is not read here: the reader stops, and the
//! caller goes on with `granit-parser` (see `parse.rs`, `parse_with`).
//!
//! **The promise**: for every text, the events this reader hands over are exactly the ones
//! `granit-parser` gives for the same text (kind, value, style, byte range, lines), in the same
//! order. The builder then builds the same trees, reports the same errors and hands over the
//! same documents. The fuzz target `fast_reader` and `tests/it/yaml_roundtrip.rs` hold it to
//! that.
//!
//! What it must not do: report an error, guess (anything it is not sure `granit-parser` reads
//! the same way is left to it), or know about the tree builder beyond the events.
//!
//! **Errors are granit's.** This reader never reports a parse error: on anything it does not
//! accept it stops, and `granit-parser`, started on the whole text, skips the events already
//! handed over and goes on from there, reporting what it reports. For that to be seamless the
//! events handed over must be ones `granit-parser` gives before it could notice a problem
//! further on; it looks ahead at most to the first token of the next line holding content
//! (a simple key is decided on its own line). So an event is handed over only once the two
//! content lines after the one that produced it have been read and accepted (at the end of the
//! text, everything is).

use std::borrow::Cow;

use super::event::{Ev, EvKind, Style};
use super::granit::Start;

/// The reader stopped: the text from here is not one it reads (or is malformed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsupported;

type R<T> = Result<T, Unsupported>;

/// Deepest nesting of block and flow collections read here (the builder's bound is higher;
/// deeper input is left to `granit-parser`, which reports it).
const MAX_NEST: usize = 200;

/// How many safe events are handed over at a time.
const BATCH: usize = 256;

/// Longest implicit key read here; `granit-parser` refuses keys past 1024 characters.
const MAX_KEY: usize = 1000;

/// Most comments read in a row here. `granit-parser` refuses more than its bound on comments
/// queued while it looks ahead (`parse.rs` sets 2^20) where a key's value is still open; a
/// longer run is left to it, wherever it stands, so that it reports that error itself.
const MAX_HELD_COMMENTS: usize = 1 << 16;

/// An open block collection.
#[derive(Clone, Copy, Debug)]
struct Open {
    map: bool,
    /// Column of its keys or dashes.
    col: usize,
    /// A sequence whose dashes stand at its key's column (`key:\n- a`).
    indentless: bool,
}

/// A key whose value was not on its line, or a `-` with nothing after it on its line: the next
/// content line decides what it is.
#[derive(Clone, Copy, Debug)]
struct PendingKey {
    /// Column of the key (the mapping's column), or of the `-`.
    col: usize,
    /// A sequence item, not a key. Its node must be on the lines after (more indented): an
    /// empty item is left to `granit-parser`.
    item: bool,
    /// Byte of its `:` and its line: where an empty value is reported.
    colon: usize,
    line: usize,
}

/// What a plain scalar ended at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// The end of its line (or of the text).
    Eol,
    /// ` #`: a comment follows.
    Comment,
    /// `: ` (or `:` at the end of the line): it is a key; the byte of the `:`.
    Colon(usize),
}

pub(crate) struct Fast<'a> {
    src: &'a str,
    b: &'a [u8],
    /// The start of the line to read next.
    pos: usize,
    /// Its 1-based line number.
    line: usize,
    stack: Vec<Open>,
    pending: Option<PendingKey>,
    /// Comments read since the last content line, waiting for what comes next to be known.
    held: Vec<Ev<'a>>,
    /// Events made and not handed over yet.
    out: Vec<Ev<'a>>,
    /// `out.len()` when the previous content line was started.
    last_mark: usize,
    /// How many events at the start of `out` are safe to hand over.
    safe: usize,
    in_doc: bool,
    /// The current document's root has been read.
    has_root: bool,
    finished: bool,
    /// Events handed over: made before the first one in `out`.
    handed: usize,
    /// Where each document read here ended (and where the reader started), with the absolute
    /// number of events made before that point: where `granit-parser` may take over.
    bounds: Vec<(Start, usize)>,
    /// Anchors defined so far (the parser numbers them through the stream).
    anchors: usize,
}

fn is_blank_or_end(b: Option<&u8>) -> bool {
    matches!(b, None | Some(b' ' | b'\n'))
}

impl<'a> Fast<'a> {
    /// A reader of `src` from `at`: the start of the stream, or the start of a line between
    /// documents (where the next one starts).
    pub(crate) fn new(src: &'a str, at: Start) -> Fast<'a> {
        let out = if at.byte == 0 {
            vec![Ev::at(EvKind::StreamStart, 0, 0, 1)]
        } else {
            Vec::new()
        };
        Fast {
            src,
            b: src.as_bytes(),
            pos: at.byte,
            line: at.line,
            stack: Vec::new(),
            pending: None,
            held: Vec::new(),
            out,
            last_mark: 0,
            safe: 0,
            in_doc: false,
            has_root: false,
            finished: false,
            handed: 0,
            bounds: vec![(at, 0)],
            anchors: at.anchors,
        }
    }

    /// Where `granit-parser` takes over after the reader stopped: the end of the last document
    /// whose events were all handed over (or where the reader started), how many events were
    /// handed over since, and how many documents it must read (to the end of the one the reader
    /// stopped in).
    pub(crate) fn restart(&self) -> (Start, usize, usize) {
        let i = self
            .bounds
            .iter()
            .rposition(|&(_, n)| n <= self.handed)
            .unwrap_or(0);
        let (start, n) = self.bounds[i];
        (start, self.handed - n, self.bounds.len() - i)
    }

    /// Reads on until a batch of events is safe to hand over ([`Fast::take_safe`]), or to the
    /// end of the text. `Ok(true)`: the text is read to its end, and every event is safe.
    /// `Err`: the reader stops here; the events already safe still are, no other counts.
    pub(crate) fn read(&mut self) -> R<bool> {
        loop {
            if self.finished {
                self.safe = self.out.len();
                return Ok(true);
            }
            let mark = self.out.len();
            self.step()?;
            // The events made before the previous content line started are safe now.
            self.safe = self.last_mark;
            self.last_mark = mark;
            if self.safe >= BATCH {
                return Ok(false);
            }
        }
    }

    /// The events that are safe to hand over, in order.
    pub(crate) fn take_safe(&mut self) -> std::vec::Drain<'_, Ev<'a>> {
        let n = self.safe;
        self.safe = 0;
        self.last_mark -= n.min(self.last_mark);
        self.handed += n;
        // Only the bounds at or after the first event not handed over can still be needed.
        let keep = self
            .bounds
            .iter()
            .rposition(|&(_, b)| b <= self.handed)
            .unwrap_or(0);
        self.bounds.drain(..keep);
        self.out.drain(..n)
    }

    fn emit(&mut self, kind: EvKind<'a>, sb: usize, eb: usize, line: usize) {
        let end = matches!(kind, EvKind::DocEnd);
        self.out.push(Ev::at(kind, sb, eb, line));
        if end {
            let start = Start {
                byte: eb,
                line,
                anchors: self.anchors,
            };
            self.bounds.push((start, self.handed + self.out.len()));
        }
    }

    fn flush_held(&mut self) {
        self.out.append(&mut self.held);
    }

    /// The line number of the end of the text.
    fn eof_line(&self) -> usize {
        // `self.line` counts up to `self.pos`; the rest has no line break when this is asked.
        self.line
    }

    /// Skips blank lines and reads own-line comments (held), up to the next content line or
    /// the end of the text. Leaves `pos` at the start of that line.
    fn skip_blank_and_comments(&mut self) -> R<()> {
        let b = self.b;
        loop {
            let mut i = self.pos;
            while b.get(i) == Some(&b' ') {
                i += 1;
            }
            match b.get(i) {
                None => {
                    // Spaces at the end of the text, on a line of their own.
                    if i > self.pos {
                        return Err(Unsupported);
                    }
                    return Ok(());
                }
                Some(b'\n') => {
                    self.pos = i + 1;
                    self.line += 1;
                }
                Some(b'#') => {
                    if self.held.len() >= MAX_HELD_COMMENTS {
                        return Err(Unsupported);
                    }
                    let end = line_end(b, i);
                    self.check_text(i, end)?;
                    let text = &self.src[i + 1..end];
                    self.held.push(Ev::at(
                        EvKind::Comment(Cow::Borrowed(text), false),
                        i,
                        end,
                        self.line,
                    ));
                    self.next_line(end);
                }
                Some(_) => return Ok(()),
            }
        }
    }

    /// Moves to the line after the one ending at `end` (its `\n`, or the end of the text).
    fn next_line(&mut self, end: usize) {
        if end < self.b.len() {
            self.pos = end + 1;
            self.line += 1;
        } else {
            self.pos = end;
        }
    }

    /// Every character of `from..to` is one this reader takes inside a scalar or a comment
    /// (printable, no tab, no carriage return, no byte order mark, no line separator).
    fn check_text(&self, from: usize, to: usize) -> R<()> {
        let bytes = &self.b[from..to];
        if bytes.iter().all(|&c| (0x20..0x7f).contains(&c)) {
            return Ok(());
        }
        for ch in self.src[from..to].chars() {
            if !printable(ch) {
                return Err(Unsupported);
            }
        }
        Ok(())
    }

    /// Reads what comes next: comments, then one content line, or the end of the text.
    fn step(&mut self) -> R<()> {
        self.skip_blank_and_comments()?;
        let b = self.b;
        if self.pos >= b.len() {
            return self.finish();
        }
        let ls = self.pos;
        let mut p = ls;
        while b[p] == b' ' {
            p += 1;
        }
        let i = p - ls;
        let c = b[p];
        if matches!(c, b'\t' | b'\r') {
            return Err(Unsupported);
        }
        if i == 0 && (b[p..].starts_with(b"---") || b[p..].starts_with(b"...")) {
            if !is_blank_or_end(b.get(p + 3)) {
                return Err(Unsupported);
            }
            return if c == b'-' {
                self.doc_start(p)
            } else {
                self.doc_end(p)
            };
        }
        if c == b'%' && !self.in_doc {
            return Err(Unsupported);
        }
        let dash = c == b'-' && is_blank_or_end(b.get(p + 1));
        if !self.in_doc {
            self.flush_held();
            self.emit(EvKind::DocStart(false), p, p, self.line);
            self.in_doc = true;
            self.has_root = false;
        }
        if let Some(pk) = self.pending.take() {
            if pk.item && i <= pk.col {
                return Err(Unsupported);
            }
            if i > pk.col {
                self.flush_held();
                if self.stack.len() >= MAX_NEST {
                    return Err(Unsupported);
                }
                let open = Open {
                    map: !dash,
                    col: i,
                    indentless: false,
                };
                self.begin(open, p);
                return if dash { self.item(p) } else { self.entry(p) };
            }
            if i == pk.col && dash {
                self.flush_held();
                if self.stack.len() >= MAX_NEST {
                    return Err(Unsupported);
                }
                // The sequence starts where `granit-parser` looks next after the `-`: after a
                // comment on its line, if there is one.
                let mut q = self.after_dash(p);
                if b.get(q) == Some(&b'#') {
                    q = line_end(b, q);
                }
                let open = Open {
                    map: false,
                    col: i,
                    indentless: true,
                };
                self.begin(open, q);
                return self.item(p);
            }
            self.empty_value(pk);
        }
        self.flush_held();
        self.close(i, dash, p);
        match self.stack.last().copied() {
            None => {
                if self.has_root || i != 0 {
                    return Err(Unsupported);
                }
                self.has_root = true;
                let open = Open {
                    map: !dash,
                    col: 0,
                    indentless: false,
                };
                self.begin(open, p);
                if dash {
                    self.item(p)
                } else {
                    self.entry(p)
                }
            }
            Some(top) if top.col == i && top.map && !dash => self.entry(p),
            Some(top) if top.col == i && !top.map && dash => self.item(p),
            Some(_) => Err(Unsupported),
        }
    }

    /// The first byte after a `-` and the spaces after it.
    fn after_dash(&self, p: usize) -> usize {
        let mut q = p + 1;
        while self.b.get(q) == Some(&b' ') {
            q += 1;
        }
        q
    }

    /// A key without a value: an empty plain scalar where its `:` is.
    fn empty_value(&mut self, pk: PendingKey) {
        self.emit(
            EvKind::Scalar(Cow::Borrowed("~"), Style::Plain),
            pk.colon,
            pk.colon,
            pk.line,
        );
    }

    /// Ends the block collections that a content line at column `i` (a `-` entry when `dash`),
    /// first byte `p`, closes.
    fn close(&mut self, i: usize, dash: bool, p: usize) {
        while let Some(top) = self.stack.last() {
            let closes = top.col > i || (!top.map && top.indentless && top.col == i && !dash);
            if !closes {
                break;
            }
            let kind = if top.map {
                EvKind::MapEnd
            } else {
                EvKind::SeqEnd
            };
            self.stack.pop();
            self.emit(kind, p, p, self.line);
        }
    }

    /// Everything open ends at `p` (a document marker, or the end of the text).
    fn close_all(&mut self, p: usize, line: usize) -> R<()> {
        if let Some(pk) = self.pending.take() {
            if pk.item {
                return Err(Unsupported);
            }
            self.empty_value(pk);
        }
        self.flush_held();
        while let Some(top) = self.stack.pop() {
            let kind = if top.map {
                EvKind::MapEnd
            } else {
                EvKind::SeqEnd
            };
            self.emit(kind, p, p, line);
        }
        Ok(())
    }

    /// `---` at `p`.
    fn doc_start(&mut self, p: usize) -> R<()> {
        if self.in_doc {
            if !self.has_root {
                return Err(Unsupported);
            }
            let line = self.line;
            self.close_all(p, line)?;
            self.emit(EvKind::DocEnd, p, p, line);
        } else {
            self.flush_held();
        }
        self.emit(EvKind::DocStart(true), p, p + 3, self.line);
        self.in_doc = true;
        self.has_root = false;
        // Only a comment may follow on the line.
        let b = self.b;
        let mut q = p + 3;
        while b.get(q) == Some(&b' ') {
            q += 1;
        }
        match b.get(q) {
            None | Some(b'\n') => {
                self.next_line(q);
                Ok(())
            }
            Some(b'#') if q > p + 3 => {
                let end = line_end(b, q);
                self.check_text(q, end)?;
                self.emit(
                    EvKind::Comment(Cow::Borrowed(&self.src[q + 1..end]), true),
                    q,
                    end,
                    self.line,
                );
                self.next_line(end);
                Ok(())
            }
            _ => Err(Unsupported),
        }
    }

    /// `...` at `p`.
    fn doc_end(&mut self, p: usize) -> R<()> {
        if !self.in_doc || !self.has_root {
            return Err(Unsupported);
        }
        let line = self.line;
        self.close_all(p, line)?;
        self.emit(EvKind::DocEnd, p, p + 3, line);
        self.in_doc = false;
        let end = line_end(self.b, p);
        if end != p + 3 {
            return Err(Unsupported);
        }
        self.next_line(end);
        Ok(())
    }

    /// The end of the text.
    fn finish(&mut self) -> R<()> {
        let end = self.b.len();
        let line = self.eof_line();
        if self.in_doc {
            if !self.has_root {
                return Err(Unsupported);
            }
            self.close_all(end, line)?;
            self.emit(EvKind::DocEnd, end, end, line);
        } else {
            self.flush_held();
        }
        self.emit(EvKind::StreamEnd, end, end, line);
        self.finished = true;
        Ok(())
    }

    /// A mapping entry whose key starts at `p` (on the line starting at `pos`), in the mapping
    /// at `p`'s column.
    fn entry(&mut self, p: usize) -> R<()> {
        let col = p - self.pos;
        let (colon, after) = self.key(p)?;
        self.value(colon, after, col)
    }

    /// Reads a key at `p` and emits it: the byte of its `:` and the byte after the `:`.
    fn key(&mut self, p: usize) -> R<(usize, usize)> {
        let b = self.b;
        let line = self.line;
        match b[p] {
            b'"' | b'\'' => {
                let (value, end) = self.quoted(p)?;
                let mut q = end;
                while b.get(q) == Some(&b' ') {
                    q += 1;
                }
                if b.get(q) != Some(&b':') || !is_blank_or_end(b.get(q + 1)) || q - p > MAX_KEY {
                    return Err(Unsupported);
                }
                let style = if b[p] == b'"' {
                    Style::DoubleQuoted
                } else {
                    Style::SingleQuoted
                };
                self.emit(EvKind::Scalar(value, style), p, end, line);
                Ok((q, q + 1))
            }
            c if plain_start(c, b.get(p + 1)) => {
                let (end, stop) = self.plain(p)?;
                let Stop::Colon(colon) = stop else {
                    return Err(Unsupported);
                };
                if colon - p > MAX_KEY {
                    return Err(Unsupported);
                }
                self.emit(
                    EvKind::Scalar(Cow::Borrowed(&self.src[p..end]), Style::Plain),
                    p,
                    end,
                    line,
                );
                Ok((colon, colon + 1))
            }
            _ => Err(Unsupported),
        }
    }

    /// The value after a key's `:` (at `colon`; `q` is the byte after it), in a mapping at
    /// column `col`.
    fn value(&mut self, colon: usize, q: usize, col: usize) -> R<()> {
        let b = self.b;
        let mut r = q;
        while b.get(r) == Some(&b' ') {
            r += 1;
        }
        match b.get(r) {
            None | Some(b'\n') => {
                self.pending = Some(PendingKey {
                    col,
                    item: false,
                    colon,
                    line: self.line,
                });
                self.next_line(r);
                Ok(())
            }
            Some(b'#') => {
                let end = line_end(b, r);
                self.check_text(r, end)?;
                self.held.push(Ev::at(
                    EvKind::Comment(Cow::Borrowed(&self.src[r + 1..end]), true),
                    r,
                    end,
                    self.line,
                ));
                self.pending = Some(PendingKey {
                    col,
                    item: false,
                    colon,
                    line: self.line,
                });
                self.next_line(end);
                Ok(())
            }
            Some(_) => self.node_inline(r, col, false),
        }
    }

    /// A node that starts at `r` on the current line, after `key: ` or `- ` in a block
    /// collection at column `col`; `item`: after a `-`, where `key: value` starts a mapping.
    fn node_inline(&mut self, r: usize, col: usize, item: bool) -> R<()> {
        let b = self.b;
        let line = self.line;
        match b[r] {
            b'|' | b'>' => self.block_scalar(r, col),
            b'[' | b'{' => {
                let end = self.flow(r, 0)?;
                self.tail(end)
            }
            b'"' | b'\'' => {
                let (value, end) = self.quoted(r)?;
                let mut q = end;
                while b.get(q) == Some(&b' ') {
                    q += 1;
                }
                if b.get(q) == Some(&b':') {
                    if !item || !is_blank_or_end(b.get(q + 1)) {
                        return Err(Unsupported);
                    }
                    return self.compact_map(r);
                }
                let style = if b[r] == b'"' {
                    Style::DoubleQuoted
                } else {
                    Style::SingleQuoted
                };
                self.emit(EvKind::Scalar(value, style), r, end, line);
                self.tail(end)
            }
            c if plain_start(c, b.get(r + 1)) => {
                let (end, stop) = self.plain(r)?;
                if let Stop::Colon(_) = stop {
                    if !item {
                        return Err(Unsupported);
                    }
                    return self.compact_map(r);
                }
                self.emit(
                    EvKind::Scalar(Cow::Borrowed(&self.src[r..end]), Style::Plain),
                    r,
                    end,
                    line,
                );
                self.tail(end)
            }
            _ => Err(Unsupported),
        }
    }

    /// A mapping that starts on a `- ` line, its first key at `r`.
    fn compact_map(&mut self, r: usize) -> R<()> {
        if self.stack.len() >= MAX_NEST {
            return Err(Unsupported);
        }
        let open = Open {
            map: true,
            col: r - self.pos,
            indentless: false,
        };
        self.begin(open, r);
        self.entry(r)
    }

    /// Opens a block collection whose start event is at `at`.
    fn begin(&mut self, open: Open, at: usize) {
        let kind = if open.map {
            EvKind::MapStart(false)
        } else {
            EvKind::SeqStart(false)
        };
        self.stack.push(open);
        self.emit(kind, at, at, self.line);
    }

    /// A sequence entry whose `-` is at `p`.
    fn item(&mut self, p: usize) -> R<()> {
        let b = self.b;
        let r = self.after_dash(p);
        let col = p - self.pos;
        match b.get(r) {
            // `-` at the end of the text: an empty item.
            None => return Err(Unsupported),
            // `-` alone, or with a comment (`- # Deployment 1`, how kpt and kustomize write a
            // ResourceList's items that start with a comment): the item is on the lines after.
            Some(b'\n') | Some(b'#') => {
                let line = self.line;
                let mut end = r;
                if b[r] == b'#' {
                    end = line_end(b, r);
                    self.check_text(r, end)?;
                    let comment = Ev::at(
                        EvKind::Comment(Cow::Borrowed(&self.src[r + 1..end]), true),
                        r,
                        end,
                        line,
                    );
                    // `granit-parser` reports the comment before the start of an indentless
                    // sequence (`key:\n- # c`) whose first item this is: it looks past the
                    // `-` before starting it.
                    let indentless = self.stack.last().is_some_and(|o| o.indentless);
                    match self.out.last() {
                        Some(Ev {
                            kind: EvKind::SeqStart(false),
                            line: l,
                            ..
                        }) if *l == line && indentless => {
                            let at = self.out.len() - 1;
                            self.out.insert(at, comment);
                        }
                        _ => self.held.push(comment),
                    }
                }
                self.pending = Some(PendingKey {
                    col,
                    item: true,
                    colon: p,
                    line,
                });
                self.next_line(end);
                return Ok(());
            }
            Some(_) => {}
        }
        if b[r] == b'-' && is_blank_or_end(b.get(r + 1)) {
            // `- - a`.
            return Err(Unsupported);
        }
        self.node_inline(r, col, true)
    }

    /// After a node that ended at `end`: spaces, then a line comment or the end of the line.
    fn tail(&mut self, end: usize) -> R<()> {
        let b = self.b;
        let mut q = end;
        while b.get(q) == Some(&b' ') {
            q += 1;
        }
        match b.get(q) {
            None => {
                self.pos = q;
                Ok(())
            }
            Some(b'\n') => {
                self.next_line(q);
                Ok(())
            }
            Some(b'#') if q > end => {
                let e = line_end(b, q);
                self.check_text(q, e)?;
                self.emit(
                    EvKind::Comment(Cow::Borrowed(&self.src[q + 1..e]), true),
                    q,
                    e,
                    self.line,
                );
                self.next_line(e);
                Ok(())
            }
            _ => Err(Unsupported),
        }
    }

    /// A plain scalar at `p`, in block context, on one line: its end (trailing spaces left
    /// out) and what stopped it.
    fn plain(&self, p: usize) -> R<(usize, Stop)> {
        let b = self.b;
        let mut i = p;
        let mut ascii = true;
        let stop = loop {
            match b.get(i) {
                None | Some(b'\n') => break Stop::Eol,
                Some(b' ') => {
                    if b.get(i + 1) == Some(&b'#') {
                        break Stop::Comment;
                    }
                }
                Some(b':') => {
                    if is_blank_or_end(b.get(i + 1)) {
                        break Stop::Colon(i);
                    }
                }
                Some(&c) if c < 0x20 || c == 0x7f => return Err(Unsupported),
                Some(&c) if c >= 0x80 => ascii = false,
                Some(_) => {}
            }
            i += 1;
        };
        let mut end = i;
        while end > p && b[end - 1] == b' ' {
            end -= 1;
        }
        if !ascii {
            self.check_text(p, end)?;
        }
        Ok((end, stop))
    }

    /// A quoted scalar at `p` (`'` or `"`), closed on its line: its value and the byte after
    /// the closing quote.
    fn quoted(&self, p: usize) -> R<(Cow<'a, str>, usize)> {
        let b = self.b;
        let src = self.src;
        if b[p] == b'\'' {
            let mut i = p + 1;
            let mut owned: Option<String> = None;
            let mut run = i;
            loop {
                match b.get(i) {
                    None | Some(b'\n') => return Err(Unsupported),
                    Some(b'\'') => {
                        if b.get(i + 1) == Some(&b'\'') {
                            let s = owned.get_or_insert_with(String::new);
                            s.push_str(&src[run..=i]);
                            i += 2;
                            run = i;
                            continue;
                        }
                        break;
                    }
                    _ => i += 1,
                }
            }
            self.check_text(p + 1, i)?;
            let value = unescaped(src, owned, p + 1, run, i);
            // A quoted scalar whose edges are spaces is read the same by both readers, but
            // keep to the common case.
            return Ok((value, i + 1));
        }
        let mut i = p + 1;
        let mut owned: Option<String> = None;
        let mut run = i;
        loop {
            match b.get(i) {
                None | Some(b'\n') => return Err(Unsupported),
                Some(b'"') => break,
                Some(b'\\') => {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(&src[run..i]);
                    let (ch, len) = escape(&b[i + 1..])?;
                    s.push(ch);
                    i += 1 + len;
                    run = i;
                }
                _ => i += 1,
            }
        }
        self.check_text(p + 1, i)?;
        Ok((unescaped(src, owned, p + 1, run, i), i + 1))
    }

    /// A flow collection at `p` (`[` or `{`), closed on its line, nested `depth` deep in flow:
    /// emits its events and gives the byte after its closing bracket.
    fn flow(&mut self, p: usize, depth: usize) -> R<usize> {
        if depth >= 64 || self.stack.len() + depth >= MAX_NEST {
            return Err(Unsupported);
        }
        let b = self.b;
        let line = self.line;
        let map = b[p] == b'{';
        let close = if map { b'}' } else { b']' };
        self.emit(
            if map {
                EvKind::MapStart(true)
            } else {
                EvKind::SeqStart(true)
            },
            p,
            p + 1,
            line,
        );
        let mut i = self.skip_spaces(p + 1);
        if b.get(i) == Some(&close) {
            self.emit(
                if map { EvKind::MapEnd } else { EvKind::SeqEnd },
                i,
                i + 1,
                line,
            );
            return Ok(i + 1);
        }
        loop {
            if map {
                let key = i;
                i = self.flow_node(i, depth, true)?;
                i = self.skip_spaces(i);
                // A key is implicit in flow too: past its bound `granit-parser` reads it
                // otherwise (found by comparing the two on long keys).
                if b.get(i) != Some(&b':') || b.get(i + 1) != Some(&b' ') || i - key > MAX_KEY {
                    return Err(Unsupported);
                }
                i = self.skip_spaces(i + 1);
                i = self.flow_node(i, depth, false)?;
            } else {
                i = self.flow_node(i, depth, false)?;
            }
            i = self.skip_spaces(i);
            match b.get(i) {
                Some(b',') => {
                    i = self.skip_spaces(i + 1);
                    if matches!(b.get(i), Some(b']' | b'}' | b',')) {
                        return Err(Unsupported);
                    }
                }
                Some(&c) if c == close => {
                    self.emit(
                        if map { EvKind::MapEnd } else { EvKind::SeqEnd },
                        i,
                        i + 1,
                        line,
                    );
                    return Ok(i + 1);
                }
                _ => return Err(Unsupported),
            }
        }
    }

    fn skip_spaces(&self, mut i: usize) -> usize {
        while self.b.get(i) == Some(&b' ') {
            i += 1;
        }
        i
    }

    /// A node inside a flow collection at `i`: emits it and gives the byte after it. `key`: a
    /// flow mapping's key (a scalar).
    fn flow_node(&mut self, i: usize, depth: usize, key: bool) -> R<usize> {
        let b = self.b;
        let line = self.line;
        match b.get(i) {
            Some(b'[' | b'{') if !key => self.flow(i, depth + 1),
            Some(b'"' | b'\'') => {
                let (value, end) = self.quoted(i)?;
                let style = if b[i] == b'"' {
                    Style::DoubleQuoted
                } else {
                    Style::SingleQuoted
                };
                // `"a":b`: JSON's adjacent value, left to the parser.
                if !key && b.get(end) == Some(&b':') {
                    return Err(Unsupported);
                }
                self.emit(EvKind::Scalar(value, style), i, end, line);
                Ok(end)
            }
            Some(&c) if plain_start(c, b.get(i + 1)) && !matches!(c, b'-' | b'?' | b':') => {
                let mut j = i;
                loop {
                    match b.get(j) {
                        None | Some(b'\n') => return Err(Unsupported),
                        Some(b',' | b']' | b'}') => break,
                        Some(b'[' | b'{' | b'#' | b':') => {
                            if b[j] == b':' && key && b.get(j + 1) == Some(&b' ') {
                                break;
                            }
                            return Err(Unsupported);
                        }
                        Some(&c) if c < 0x20 || c == 0x7f => return Err(Unsupported),
                        Some(_) => j += 1,
                    }
                }
                let mut end = j;
                while end > i && b[end - 1] == b' ' {
                    end -= 1;
                }
                self.check_text(i, end)?;
                self.emit(
                    EvKind::Scalar(Cow::Borrowed(&self.src[i..end]), Style::Plain),
                    i,
                    end,
                    line,
                );
                Ok(end)
            }
            _ => Err(Unsupported),
        }
    }

    /// A block scalar whose header is at `h`, in a block collection at column `n`.
    fn block_scalar(&mut self, h: usize, n: usize) -> R<()> {
        let b = self.b;
        let folded = b[h] == b'>';
        let mut q = h + 1;
        let mut chomp = b'c';
        if matches!(b.get(q), Some(b'-' | b'+')) {
            chomp = b[q];
            q += 1;
        }
        let hdr_end = q;
        while b.get(q) == Some(&b' ') {
            q += 1;
        }
        // The header line: nothing else, or a comment after a space.
        let mut comment = None;
        let header_line = self.line;
        match b.get(q) {
            None => return Err(Unsupported),
            Some(b'\n') => {
                if q > hdr_end {
                    return Err(Unsupported);
                }
            }
            Some(b'#') if q > hdr_end => {
                let e = line_end(b, q);
                self.check_text(q, e)?;
                comment = Some((q, e));
                q = e;
            }
            _ => return Err(Unsupported),
        }
        // The body, line by line from the line after the header.
        let mut at = q + 1;
        // A header that ends the text (with no line break after it) leaves the block on its
        // line (found by the fuzz target: a header comment running to the end).
        let mut line = if q < b.len() {
            header_line + 1
        } else {
            header_line
        };
        let mut indent = None::<usize>;
        let mut start = None::<(usize, usize)>;
        // Content lines (their text after the indentation), and empty lines as `None`.
        let mut lines: Vec<Option<&'a str>> = Vec::new();
        // Where the block ends, its line, and the start of that line.
        let (end, end_line, next) = loop {
            if at >= b.len() {
                break (b.len(), line, b.len());
            }
            let mut s = at;
            while b.get(s) == Some(&b' ') {
                s += 1;
            }
            match b.get(s) {
                Some(b'\n') if s == at => {
                    lines.push(None);
                    at = s + 1;
                    line += 1;
                    continue;
                }
                None | Some(b'\n') => return Err(Unsupported),
                Some(b'\t' | b'\r') => return Err(Unsupported),
                Some(_) => {}
            }
            let ind = s - at;
            let bi = match indent {
                Some(bi) => bi,
                None if ind > n => {
                    indent = Some(ind);
                    ind
                }
                None => break (s, line, at),
            };
            if ind < bi {
                break (s, line, at);
            }
            let e = line_end(b, s);
            self.check_text(s, e)?;
            if start.is_none() {
                start = Some((at + bi, line));
            }
            if folded && ind > bi {
                return Err(Unsupported);
            }
            lines.push(Some(&self.src[at + bi..e]));
            if e >= b.len() {
                // The last line has no line break.
                break (e, line, e);
            }
            at = e + 1;
            line += 1;
        };
        let value = block_value(&lines, folded, chomp)?;
        // Without a body the span starts where the block ends, or, at the end of the text, at
        // its header.
        let (sb, sline) = match start {
            Some(s) => s,
            None if end >= b.len() => (h, header_line),
            None => (end, end_line),
        };
        self.out.push(Ev {
            kind: EvKind::Scalar(
                Cow::Owned(value),
                if folded {
                    Style::Folded
                } else {
                    Style::Literal
                },
            ),
            sb,
            eb: end,
            line: sline,
            end_line,
            tag: None,
        });
        if let Some((cs, ce)) = comment {
            self.emit(
                EvKind::Comment(Cow::Borrowed(&self.src[cs + 1..ce]), true),
                cs,
                ce,
                header_line,
            );
        }
        // Go on from the start of the line that ended the block.
        self.pos = next;
        self.line = end_line;
        Ok(())
    }
}

/// The end of the line holding `i`: its `\n`, or the end of the text.
fn line_end(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n)
}

/// A character YAML allows in text, and that this reader takes.
fn printable(ch: char) -> bool {
    matches!(ch, ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && !matches!(ch, '\u{feff}' | '\u{2028}' | '\u{2029}')
}

/// Whether a plain scalar can start with `c` (followed by `next`), in block context.
fn plain_start(c: u8, next: Option<&u8>) -> bool {
    match c {
        b'-' => !is_blank_or_end(next),
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' => false,
        c => c >= 0x20 && c != 0x7f,
    }
}

/// A double-quoted scalar's escape after its `\`: the character and the bytes it took.
fn escape(rest: &[u8]) -> R<(char, usize)> {
    let hex = |n: usize| -> R<(char, usize)> {
        let digits = rest.get(1..=n).ok_or(Unsupported)?;
        let text = std::str::from_utf8(digits).map_err(|_| Unsupported)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(Unsupported);
        }
        let v = u32::from_str_radix(text, 16).map_err(|_| Unsupported)?;
        let ch = char::from_u32(v).ok_or(Unsupported)?;
        if !printable(ch) {
            return Err(Unsupported);
        }
        Ok((ch, n + 1))
    };
    match rest.first() {
        Some(b'\\') => Ok(('\\', 1)),
        Some(b'"') => Ok(('"', 1)),
        Some(b'/') => Ok(('/', 1)),
        Some(b'n') => Ok(('\n', 1)),
        Some(b't') => Ok(('\t', 1)),
        Some(b'x') => hex(2),
        Some(b'u') => hex(4),
        Some(b'U') => hex(8),
        _ => Err(Unsupported),
    }
}

/// A block scalar's value from its lines (content, or `None` for an empty line), folded or
/// not, with its chomping (`c`lip, `-` strip, `+` keep).
fn block_value(lines: &[Option<&str>], folded: bool, chomp: u8) -> R<String> {
    let last = lines.iter().rposition(Option::is_some);
    let Some(last) = last else {
        // No content: clip and strip give nothing; keep is left to the parser.
        return if chomp == b'+' {
            Err(Unsupported)
        } else {
            Ok(String::new())
        };
    };
    let mut s = String::new();
    let mut prev_content = false;
    let mut empties = 0usize;
    for l in &lines[..=last] {
        match l {
            None => empties += 1,
            Some(t) => {
                if folded {
                    // Lines next to each other fold into one, with a space.
                    if prev_content && empties == 0 {
                        s.push(' ');
                    }
                    for _ in 0..empties {
                        s.push('\n');
                    }
                } else {
                    if prev_content {
                        s.push('\n');
                    }
                    for _ in 0..empties {
                        s.push('\n');
                    }
                }
                s.push_str(t);
                prev_content = true;
                empties = 0;
            }
        }
    }
    match chomp {
        b'-' => {}
        b'+' => {
            s.push('\n');
            for _ in last + 1..lines.len() {
                s.push('\n');
            }
        }
        _ => s.push('\n'),
    }
    Ok(s)
}

/// The value of a quoted scalar whose text is `src[start..end]`: borrowed when it held no escape,
/// else `owned`, the text up to `run` with its escapes resolved, and the rest appended.
fn unescaped<'s>(
    src: &'s str,
    owned: Option<String>,
    start: usize,
    run: usize,
    end: usize,
) -> Cow<'s, str> {
    match owned {
        Some(mut s) => {
            s.push_str(&src[run..end]);
            Cow::Owned(s)
        }
        None => Cow::Borrowed(&src[start..end]),
    }
}
