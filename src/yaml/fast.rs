//! The fast reader: the YAML that real packages are made of, read straight into the builder's
//! events, with `granit-parser` as the fallback for the documents it does not read.
//!
//! What it reads: block mappings and sequences (compact `key:\n- item` and indented, `- key:`
//! items, a value on the line after its key, a root standing indented), plain scalars (over several lines too), single-
//! and double-quoted scalars over any number of lines (folding, escapes, `\` continuations),
//! literal and folded block scalars with every header (`|`, `>-`, `|2`, `>+1`, a comment
//! after it), flow collections over several lines (comments inside, a trailing comma),
//! anchors and tags on values and collections, aliases, own-line and line comments, `---` and
//! `...`, blank lines, CRLF line ends, and the forms Go reads that YAML 1.2 refuses (quoted
//! and flow lines at or left of their block's indentation, tabs leading them, `\'`; see
//! `granit.rs`). Anything else — directives, explicit keys, properties on keys or alone on a
//! line before a scalar, complex keys, empty documents or list items, tabs elsewhere, unusual
//! characters — is not read here: the reader stops, and the caller reads the documents from
//! the last one it handed over to the one it stopped in with `granit-parser`, and comes back
//! to this reader at the next `---` (see `parse.rs`, `feed`).
//!
//! **The promise**: for every text, the events this reader hands over are exactly the ones
//! `granit-parser` gives for the same text read as Go reads it (`granit.rs`): kind, value,
//! style, byte range, lines, in the same order. The builder then builds the same trees,
//! reports the same errors and hands over the same documents. The fuzz target `fast_reader`
//! and `tests/it/yaml_roundtrip.rs` hold it to that.
//!
//! What it must not do: report an error, guess (anything it is not sure `granit-parser` reads
//! the same way is left to it), or know about the tree builder beyond the events.
//!
//! **Errors are granit's.** This reader never reports a parse error: on anything it does not
//! accept it stops, and `granit-parser`, started at the end of the last document whose events
//! were all handed over, skips the events handed over since and goes on from there, reporting
//! what it reports. For that to be seamless the events handed over must be ones
//! `granit-parser` gives before it could notice a problem further on; it looks ahead at most
//! to the first token of the next line holding content (a simple key is decided on its own
//! line). So an event is handed over only once the two content lines (or multi-line tokens)
//! after the one that produced it have been read and accepted (at the end of the text,
//! everything is).

use std::borrow::Cow;

use super::event::{Ev, EvKind, Style};
use super::granit::Start;
use super::scan::{self, at_eol, marker_line, text_ok};

/// The reader stopped: the text from here is not one it reads (or is malformed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsupported;

pub(crate) type R<T> = Result<T, Unsupported>;

/// Deepest nesting of block and flow collections read here (the builder's bound is higher;
/// deeper input is left to `granit-parser`, which reports it).
const MAX_NEST: usize = 200;

/// How many safe events are handed over at a time.
const BATCH: usize = 256;

/// Longest implicit key read here; `granit-parser` refuses keys past 1024 characters.
const MAX_KEY: usize = 1000;

/// Most comments read in a row here. `granit-parser` refuses more than its bound on comments
/// queued while it looks ahead (`granit.rs` sets 2^20) where a key's value is still open; a
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

/// The properties written before a node: the byte ranges of its anchor (`&name`) and its tag,
/// and the line they stand on.
#[derive(Clone, Copy, Debug, Default)]
struct Props {
    anchor: Option<(usize, usize)>,
    tag: Option<(usize, usize)>,
    line: usize,
}

impl Props {
    fn is_empty(&self) -> bool {
        self.anchor.is_none() && self.tag.is_none()
    }
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
    /// Properties written after the `:` or `-`, for the collection on the lines after.
    props: Props,
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
    /// Where the current document's `---` ends, and its line, if it has one.
    explicit: Option<(usize, usize)>,
    /// Where the current document's root ends when it is a flow collection, and its line:
    /// where the parser puts the document's end.
    root_end: Option<(usize, usize)>,
    finished: bool,
    /// Events handed over: made before the first one in `out`.
    handed: usize,
    /// Where each document read here ended (and where the reader started), with the absolute
    /// number of events made before that point: where `granit-parser` may take over.
    bounds: Vec<(Start, usize)>,
    /// Anchors defined so far in the stream (the parser numbers them through it), and the
    /// current document's, by name (the last one of a name counts).
    anchors: usize,
    doc_anchors: Vec<(&'a str, usize)>,
}

/// Whether `b` separates (white space, a line's end, the end of the text): what must follow
/// an indicator.
fn is_blank_or_end(b: Option<&u8>) -> bool {
    matches!(b, None | Some(b' ' | b'\t' | b'\n' | b'\r'))
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
            explicit: None,
            root_end: None,
            finished: false,
            handed: 0,
            bounds: vec![(at, 0)],
            anchors: at.anchors,
            doc_anchors: Vec::new(),
        }
    }

    /// The line the reader stopped at (after [`Fast::read`] gave `Err`): the line it was
    /// reading.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn line(&self) -> usize {
        self.line
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
        self.out.push(Ev::at(kind, sb, eb, line));
    }

    /// A document's end over `sb..eb`, where the parser may take over at `(byte, line)` (the
    /// end of the `...`, or the next `---`).
    fn end_doc(&mut self, (sb, eb, line): (usize, usize, usize), (byte, at_line): (usize, usize)) {
        self.out.push(Ev::at(EvKind::DocEnd, sb, eb, line));
        let start = Start {
            byte,
            line: at_line,
            anchors: self.anchors,
        };
        self.bounds.push((start, self.handed + self.out.len()));
        self.in_doc = false;
    }

    /// A document that `---` started and nothing filled: an empty scalar after its `---`.
    fn empty_doc(&mut self) -> R<()> {
        let Some((at, line)) = self.explicit else {
            return Err(Unsupported);
        };
        self.flush_held();
        self.emit(
            EvKind::Scalar(Cow::Borrowed("~"), Style::Plain),
            at,
            at,
            line,
        );
        self.has_root = true;
        Ok(())
    }

    /// A node's event (a scalar, alias or collection start over `sb..eb`, from `line` to
    /// `end_line`), then its anchor's.
    fn emit_node(
        &mut self,
        kind: EvKind<'a>,
        (sb, eb): (usize, usize),
        (line, end_line): (usize, usize),
        props: Props,
    ) {
        self.out.push(Ev {
            kind,
            sb,
            eb,
            line,
            end_line,
            tag: props.tag,
        });
        if let Some((s, e)) = props.anchor {
            self.anchors += 1;
            let name = &self.src[s + 1..e];
            self.doc_anchors.push((name, self.anchors));
            self.emit(
                EvKind::Anchor(self.anchors, Cow::Borrowed(name)),
                s,
                e,
                props.line,
            );
        }
    }

    fn flush_held(&mut self) {
        self.out.append(&mut self.held);
    }

    /// A comment whose `#` is at `i`, to the end of its line: its event (`right`: after
    /// something on its line), and the end of its text.
    fn comment_at(&self, i: usize, right: bool) -> R<(Ev<'a>, usize)> {
        let end = content_end(self.b, i);
        text_ok(self.src, i, end, false)?;
        let text = &self.src[i + 1..end];
        Ok((
            Ev::at(
                EvKind::Comment(Cow::Borrowed(text), right),
                i,
                end,
                self.line,
            ),
            end,
        ))
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
                    // Spaces at the end of the text, on a line of their own, end nothing.
                    self.pos = i;
                    return Ok(());
                }
                Some(b'\n' | b'\r') => self.next_line(i),
                Some(b'#') => {
                    if self.held.len() >= MAX_HELD_COMMENTS {
                        return Err(Unsupported);
                    }
                    let (ev, end) = self.comment_at(i, false)?;
                    self.held.push(ev);
                    self.next_line(end);
                }
                Some(_) => return Ok(()),
            }
        }
    }

    /// Moves to the line after the one whose content ends at `end` (its line break, or the end
    /// of the text).
    fn next_line(&mut self, end: usize) {
        let b = self.b;
        let end = if b.get(end) == Some(&b'\r') {
            end + 1
        } else {
            end
        };
        if end < b.len() {
            self.pos = end + 1;
            self.line += 1;
        } else {
            self.pos = b.len();
        }
    }

    /// Reads what comes next: comments, then one content line (with the lines its tokens span),
    /// or the end of the text.
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
        if matches!(c, b'\t') {
            return Err(Unsupported);
        }
        if i == 0 && marker_line(b, p) {
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
            // A document that starts with a flow collection starts at its bracket.
            let eb = if matches!(c, b'[' | b'{') { p + 1 } else { p };
            self.emit(EvKind::DocStart(false), p, eb, self.line);
            self.in_doc = true;
            self.has_root = false;
            self.explicit = None;
            self.root_end = None;
            self.doc_anchors.clear();
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
                if !dash && !self.is_key_line(p) {
                    // A scalar or a flow collection on the line after its key or dash.
                    if !pk.props.is_empty() {
                        return Err(Unsupported);
                    }
                    return self.node_inline(p, pk.col, false, Props::default());
                }
                let open = Open {
                    map: !dash,
                    col: i,
                    indentless: false,
                };
                self.begin(open, p, pk.props);
                return if dash { self.item(p) } else { self.entry(p) };
            }
            if i == pk.col && dash && !pk.item {
                self.flush_held();
                if self.stack.len() >= MAX_NEST {
                    return Err(Unsupported);
                }
                // The sequence starts where `granit-parser` looks next after the `-`: after a
                // comment on its line, if there is one.
                let mut q = self.after_dash(p);
                if b.get(q) == Some(&b'#') {
                    q = content_end(b, q);
                }
                let open = Open {
                    map: false,
                    col: i,
                    indentless: true,
                };
                self.begin(open, q, pk.props);
                return self.item(p);
            }
            if !pk.props.is_empty() {
                return Err(Unsupported);
            }
            self.empty_value(pk);
        }
        self.flush_held();
        self.close(i, dash, p);
        match self.stack.last().copied() {
            None => {
                // A root block collection may stand indented (its column is its entries'
                // column); a flow one is read here only at column 0.
                let flow = matches!(c, b'[' | b'{');
                if self.has_root || (i != 0 && flow) {
                    return Err(Unsupported);
                }
                self.has_root = true;
                if flow {
                    // A flow collection at the root (JSON): its document ends right after it.
                    let end = self.flow(p, 0, Props::default())?;
                    self.root_end = Some((end, self.line));
                    return self.tail(end);
                }
                let open = Open {
                    map: !dash,
                    col: i,
                    indentless: false,
                };
                self.begin(open, p, Props::default());
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

    /// Whether the line whose content starts at `p` is a mapping entry: a key on one line,
    /// then `:`.
    fn is_key_line(&self, p: usize) -> bool {
        let b = self.b;
        match b[p] {
            b'"' | b'\'' => match scan::quoted(self.src, p) {
                Ok(q) if q.breaks == 0 => {
                    let mut e = q.end;
                    while b.get(e) == Some(&b' ') {
                        e += 1;
                    }
                    b.get(e) == Some(&b':')
                }
                _ => false,
            },
            c if plain_start(c, b.get(p + 1)) => {
                matches!(self.plain(p), Ok((_, Stop::Colon(_))))
            }
            // Anything else is not a key this reader reads; `?` and properties are left to
            // the parser by `entry`.
            _ => matches!(b[p], b'?' | b'&' | b'!' | b'*'),
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
            if pk.item || !pk.props.is_empty() {
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
        let line = self.line;
        if self.in_doc {
            if let Some((e, l)) = self.root_end {
                self.flush_held();
                self.end_doc((e, e, l), (p, line));
            } else if self.has_root {
                self.close_all(p, line)?;
                self.end_doc((p, p, line), (p, line));
            } else {
                // An empty document ends where its empty scalar is.
                self.empty_doc()?;
                let (at, l) = self.explicit.unwrap_or((p, line));
                self.end_doc((at, at, l), (p, line));
            }
        } else {
            self.flush_held();
        }
        self.emit(EvKind::DocStart(true), p, p + 3, line);
        self.in_doc = true;
        self.has_root = false;
        self.explicit = Some((p + 3, line));
        self.root_end = None;
        self.doc_anchors.clear();
        // Only a comment may follow on the line.
        let b = self.b;
        let mut q = p + 3;
        while b.get(q) == Some(&b' ') {
            q += 1;
        }
        match b.get(q) {
            None | Some(b'\n' | b'\r') => {
                self.next_line(q);
                Ok(())
            }
            Some(b'#') if q > p + 3 => {
                let (ev, end) = self.comment_at(q, true)?;
                self.out.push(ev);
                self.next_line(end);
                Ok(())
            }
            _ => Err(Unsupported),
        }
    }

    /// `...` at `p`.
    fn doc_end(&mut self, p: usize) -> R<()> {
        if !self.in_doc {
            return Err(Unsupported);
        }
        let line = self.line;
        if self.has_root {
            self.close_all(p, line)?;
        } else {
            self.empty_doc()?;
        }
        if !at_eol(self.b, p + 3) {
            return Err(Unsupported);
        }
        self.end_doc((p, p + 3, line), (p + 3, line));
        self.explicit = None;
        self.next_line(p + 3);
        Ok(())
    }

    /// The end of the text.
    fn finish(&mut self) -> R<()> {
        let end = self.b.len();
        let line = self.line;
        if self.in_doc {
            if let Some((e, l)) = self.root_end {
                self.flush_held();
                self.end_doc((e, e, l), (end, line));
            } else if self.has_root {
                self.close_all(end, line)?;
                self.end_doc((end, end, line), (end, line));
            } else {
                self.empty_doc()?;
                let (at, l) = self.explicit.unwrap_or((end, line));
                self.end_doc((at, at, l), (end, line));
            }
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
                let q = scan::quoted(self.src, p)?;
                if q.breaks > 0 {
                    return Err(Unsupported);
                }
                let mut c = q.end;
                while b.get(c) == Some(&b' ') {
                    c += 1;
                }
                if b.get(c) != Some(&b':') || !is_blank_or_end(b.get(c + 1)) || c - p > MAX_KEY {
                    return Err(Unsupported);
                }
                let style = quote_style(b[p]);
                self.emit(EvKind::Scalar(q.value, style), p, q.end, line);
                Ok((c, c + 1))
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
        if r == q && !at_eol(b, r) {
            // A tab after the `:` is read here only before the line's end.
            while b.get(r) == Some(&b'\t') {
                r += 1;
            }
            if r == q || !at_eol(b, r) {
                return Err(Unsupported);
            }
        }
        let (props, r) = self.props(r)?;
        match b.get(r) {
            None | Some(b'\n' | b'\r') => {
                self.pending = Some(PendingKey {
                    col,
                    item: false,
                    colon,
                    line: self.line,
                    props,
                });
                self.next_line(r);
                Ok(())
            }
            Some(b'#') => {
                if r == q || b[r - 1] != b' ' {
                    return Err(Unsupported);
                }
                let (ev, end) = self.comment_at(r, true)?;
                self.held.push(ev);
                self.pending = Some(PendingKey {
                    col,
                    item: false,
                    colon,
                    line: self.line,
                    props,
                });
                self.next_line(end);
                Ok(())
            }
            Some(_) => self.node_inline(r, col, false, props),
        }
    }

    /// The properties (anchor, tag) written at `r`, each followed by a space: them, and the
    /// byte after them and the spaces after.
    fn props(&self, r: usize) -> R<(Props, usize)> {
        let b = self.b;
        let mut props = Props {
            line: self.line,
            ..Props::default()
        };
        let mut i = r;
        loop {
            match b.get(i) {
                Some(b'&') if props.anchor.is_none() => {
                    let e = name_end(b, i + 1);
                    if e == i + 1 || !is_blank_or_end(b.get(e)) {
                        return Err(Unsupported);
                    }
                    props.anchor = Some((i, e));
                    i = e;
                }
                Some(b'!') if props.tag.is_none() => {
                    let e = tag_end(b, i)?;
                    props.tag = Some((i, e));
                    i = e;
                }
                _ => return Ok((props, i)),
            }
            if !at_eol(b, i) && b[i] != b' ' {
                return Err(Unsupported);
            }
            while b.get(i) == Some(&b' ') {
                i += 1;
            }
        }
    }

    /// A node that starts at `r` on the current line, after `key: ` or `- ` (or at the start
    /// of the line after them) in a block collection at column `col`, with the properties
    /// written before it; `item`: after a `-`, where `key: value` starts a mapping.
    fn node_inline(&mut self, r: usize, col: usize, item: bool, props: Props) -> R<()> {
        let b = self.b;
        let line = self.line;
        match b[r] {
            b'|' | b'>' => self.block_scalar(r, col, props),
            b'[' | b'{' => {
                let end = self.flow(r, 0, props)?;
                self.tail(end)
            }
            b'"' | b'\'' => {
                let q = scan::quoted(self.src, r)?;
                let mut c = q.end;
                while b.get(c) == Some(&b' ') {
                    c += 1;
                }
                if b.get(c) == Some(&b':') {
                    if !item || !is_blank_or_end(b.get(c + 1)) || !props.is_empty() {
                        return Err(Unsupported);
                    }
                    return self.compact_map(r);
                }
                let end_line = line + q.breaks;
                self.emit_node(
                    EvKind::Scalar(q.value, quote_style(b[r])),
                    (r, q.end),
                    (line, end_line),
                    props,
                );
                self.line = end_line;
                self.tail(q.end)
            }
            b'*' => {
                if !props.is_empty() {
                    return Err(Unsupported);
                }
                let end = self.alias(r)?;
                self.tail(end)
            }
            c if plain_start(c, b.get(r + 1)) => {
                let (end, stop) = self.plain(r)?;
                if let Stop::Colon(_) = stop {
                    if !item || !props.is_empty() {
                        return Err(Unsupported);
                    }
                    return self.compact_map(r);
                }
                let more = match stop {
                    Stop::Eol => scan::plain_lines(self.src, r, end, col)?,
                    _ => None,
                };
                match more {
                    Some(m) => {
                        let end_line = line + m.breaks;
                        self.emit_node(
                            EvKind::Scalar(m.value, Style::Plain),
                            (r, m.end),
                            (line, end_line),
                            props,
                        );
                        self.line = end_line;
                        self.tail(m.end)
                    }
                    None => {
                        self.emit_node(
                            EvKind::Scalar(Cow::Borrowed(&self.src[r..end]), Style::Plain),
                            (r, end),
                            (line, line),
                            props,
                        );
                        self.tail(end)
                    }
                }
            }
            _ => Err(Unsupported),
        }
    }

    /// An alias at `r` (`*name`): its event; the byte after it.
    fn alias(&mut self, r: usize) -> R<usize> {
        let b = self.b;
        let e = name_end(b, r + 1);
        if e == r + 1
            || !(is_blank_or_end(b.get(e)) || matches!(b.get(e), Some(b',' | b']' | b'}')))
        {
            return Err(Unsupported);
        }
        let name = &self.src[r + 1..e];
        let id = self
            .doc_anchors
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|&(_, id)| id)
            .ok_or(Unsupported)?;
        self.emit(EvKind::Alias(id), r, e, self.line);
        Ok(e)
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
        self.begin(open, r, Props::default());
        self.entry(r)
    }

    /// Opens a block collection whose start event is at `at`, with the properties written
    /// before it.
    fn begin(&mut self, open: Open, at: usize, props: Props) {
        let kind = if open.map {
            EvKind::MapStart(false)
        } else {
            EvKind::SeqStart(false)
        };
        self.stack.push(open);
        self.emit_node(kind, (at, at), (self.line, self.line), props);
    }

    /// A sequence entry whose `-` is at `p`.
    fn item(&mut self, p: usize) -> R<()> {
        let b = self.b;
        let r = self.after_dash(p);
        let col = p - self.pos;
        if r == p + 1 && !at_eol(b, r) {
            return Err(Unsupported);
        }
        let (props, r) = self.props(r)?;
        match b.get(r) {
            // `-` at the end of the text: an empty item.
            None => return Err(Unsupported),
            // `-` alone, or with a comment (`- # Deployment 1`, how kpt and kustomize write a
            // ResourceList's items that start with a comment): the item is on the lines after.
            Some(b'\n' | b'\r' | b'#') => {
                let line = self.line;
                let mut end = r;
                if b[r] == b'#' {
                    if b[r - 1] != b' ' || !props.is_empty() {
                        return Err(Unsupported);
                    }
                    let (comment, e) = self.comment_at(r, true)?;
                    end = e;
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
                    props,
                });
                self.next_line(end);
                return Ok(());
            }
            Some(_) => {}
        }
        if b[r] == b'-' && is_blank_or_end(b.get(r + 1)) {
            // `- - a`: a sequence in a sequence, starting on the same line.
            if !props.is_empty() || self.stack.len() >= MAX_NEST {
                return Err(Unsupported);
            }
            let open = Open {
                map: false,
                col: r - self.pos,
                indentless: false,
            };
            self.begin(open, r, Props::default());
            return self.item(r);
        }
        self.node_inline(r, col, true, props)
    }

    /// After a node that ended at `end`: white space, then a line comment or the end of the
    /// line.
    fn tail(&mut self, end: usize) -> R<()> {
        let b = self.b;
        let mut q = end;
        while matches!(b.get(q), Some(b' ' | b'\t')) {
            q += 1;
        }
        match b.get(q) {
            None => {
                self.pos = q;
                Ok(())
            }
            Some(b'\n' | b'\r') => {
                self.next_line(q);
                Ok(())
            }
            Some(b'#') if q > end => {
                let (ev, e) = self.comment_at(q, true)?;
                self.out.push(ev);
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
                None | Some(b'\n' | b'\r') => break Stop::Eol,
                Some(b' ' | b'\t') => {
                    if b.get(i + 1) == Some(&b'#') {
                        break Stop::Comment;
                    }
                    if b[i] == b'\t' {
                        // A tab ends the text (white space before the line's end or a comment)
                        // or is left to the parser.
                        let mut j = i;
                        while matches!(b.get(j), Some(b' ' | b'\t')) {
                            j += 1;
                        }
                        match b.get(j) {
                            None | Some(b'\n' | b'\r') => break Stop::Eol,
                            Some(b'#') => break Stop::Comment,
                            _ => return Err(Unsupported),
                        }
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
        while end > p && matches!(b[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if !ascii {
            text_ok(self.src, p, end, false)?;
        }
        Ok((end, stop))
    }

    /// Skips white space in a flow collection from `i`: spaces, line breaks and, where
    /// `comments` allows them, comments (their events made). Gives the next byte.
    fn flow_space(&mut self, mut i: usize, comments: bool) -> R<usize> {
        let b = self.b;
        loop {
            match b.get(i) {
                // Tabs separate in flow context, leading a line too (as Go reads them).
                Some(b' ' | b'\t') => i += 1,
                Some(b'\n' | b'\r') => {
                    self.next_line(i);
                    i = self.pos;
                    if marker_line(b, i) || b.get(i) == Some(&b'%') {
                        return Err(Unsupported);
                    }
                }
                Some(b'#') if comments && (i == self.pos || matches!(b[i - 1], b' ' | b'\t')) => {
                    let right = b[self.pos..i].iter().any(|&c| !matches!(c, b' ' | b'\t'));
                    let (ev, end) = self.comment_at(i, right)?;
                    self.out.push(ev);
                    i = end;
                }
                _ => return Ok(i),
            }
        }
    }

    /// A flow collection at `p` (`[` or `{`), nested `depth` deep in flow, with the properties
    /// written before it: emits its events and gives the byte after its closing bracket (the
    /// reader's line is then the bracket's).
    fn flow(&mut self, p: usize, depth: usize, props: Props) -> R<usize> {
        if depth >= 64 || self.stack.len() + depth >= MAX_NEST {
            return Err(Unsupported);
        }
        let b = self.b;
        let map = b[p] == b'{';
        let close = if map { b'}' } else { b']' };
        let line = self.line;
        let start = if map {
            EvKind::MapStart(true)
        } else {
            EvKind::SeqStart(true)
        };
        self.emit_node(start, (p, p + 1), (line, line), props);
        let end_kind = |map| if map { EvKind::MapEnd } else { EvKind::SeqEnd };
        let mut i = self.flow_space(p + 1, true)?;
        if b.get(i) == Some(&close) {
            self.emit(end_kind(map), i, i + 1, self.line);
            return Ok(i + 1);
        }
        loop {
            if map {
                let key = i;
                let key_line = self.line;
                i = self.flow_node(i, depth, true)?;
                // A key is implicit in flow too: on one line with its `:`, and past its bound
                // `granit-parser` reads it otherwise (found by comparing the two on long keys).
                if self.line != key_line
                    || b.get(i) != Some(&b':')
                    || b.get(i + 1) != Some(&b' ')
                    || i - key > MAX_KEY
                {
                    return Err(Unsupported);
                }
                i = self.skip_spaces(i + 1);
                i = self.flow_node(i, depth, false)?;
            } else {
                i = self.flow_node(i, depth, false)?;
            }
            // A comment after an entry (`"a"  # why`, `a, # why`) in a sequence.
            i = self.flow_space(i, !map)?;
            match b.get(i) {
                Some(b',') => {
                    i = self.flow_space(i + 1, true)?;
                    match b.get(i) {
                        Some(&c) if c == close => {
                            self.emit(end_kind(map), i, i + 1, self.line);
                            return Ok(i + 1);
                        }
                        Some(b']' | b'}' | b',') | None => return Err(Unsupported),
                        _ => {}
                    }
                }
                Some(&c) if c == close => {
                    self.emit(end_kind(map), i, i + 1, self.line);
                    return Ok(i + 1);
                }
                _ => return Err(Unsupported),
            }
        }
    }

    fn skip_spaces(&self, mut i: usize) -> usize {
        while matches!(self.b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        i
    }

    /// A node inside a flow collection at `i`: emits it and gives the byte after it (spaces
    /// after it skipped for a key). `key`: a flow mapping's key (a scalar on one line).
    fn flow_node(&mut self, i: usize, depth: usize, key: bool) -> R<usize> {
        let b = self.b;
        let line = self.line;
        let (props, i) = if key {
            (Props::default(), i)
        } else {
            self.props(i)?
        };
        match b.get(i) {
            Some(b'[' | b'{') if !key => self.flow(i, depth + 1, props),
            Some(b'*') if !key && props.is_empty() => self.alias(i),
            Some(b'"' | b'\'') => {
                let q = scan::quoted(self.src, i)?;
                // `"a":b`: JSON's adjacent value, left to the parser.
                if !key && b.get(q.end) == Some(&b':') {
                    return Err(Unsupported);
                }
                if key && q.breaks > 0 {
                    return Err(Unsupported);
                }
                let end_line = line + q.breaks;
                self.emit_node(
                    EvKind::Scalar(q.value, quote_style(b[i])),
                    (i, q.end),
                    (line, end_line),
                    props,
                );
                if q.breaks > 0 {
                    // The reader's line follows the scalar's last one.
                    self.line = end_line;
                    self.pos = self.b[..q.end]
                        .iter()
                        .rposition(|&c| c == b'\n')
                        .map_or(0, |n| n + 1);
                }
                Ok(if key { self.skip_spaces(q.end) } else { q.end })
            }
            Some(&c)
                if plain_start(c, b.get(i + 1))
                    && !matches!(c, b'?' | b':')
                    && !(c == b'-'
                        && matches!(b.get(i + 1), Some(b',' | b'[' | b']' | b'{' | b'}'))) =>
            {
                let mut j = i;
                loop {
                    match b.get(j) {
                        None | Some(b'\n' | b'\r') => break,
                        Some(b',' | b']' | b'}') => break,
                        Some(b' ') if b.get(j + 1) == Some(&b'#') => return Err(Unsupported),
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
                if at_eol(b, j) && tab_leads_next(b, j, !self.stack.is_empty()) {
                    // The parser reads the next line as more of the scalar, and refuses its
                    // tab (Go does too), unless that line goes on with the collection (JSON
                    // indented with tabs: `false\n\t}`) and no block collection holds the
                    // flow one: then a tab left of the block's indentation is refused even
                    // before `]` (`- [f\n\t]`), which is left to the parser.
                    return Err(Unsupported);
                }
                let mut end = j;
                while end > i && b[end - 1] == b' ' {
                    end -= 1;
                }
                text_ok(self.src, i, end, false)?;
                self.emit_node(
                    EvKind::Scalar(Cow::Borrowed(&self.src[i..end]), Style::Plain),
                    (i, end),
                    (line, line),
                    props,
                );
                Ok(if key { j } else { end })
            }
            _ => Err(Unsupported),
        }
    }

    /// A block scalar whose header is at `h`, in a block collection at column `n`, with the
    /// properties written before it.
    fn block_scalar(&mut self, h: usize, n: usize, props: Props) -> R<()> {
        let b = self.b;
        let folded = b[h] == b'>';
        let (chomp, indicator, hdr_end) = scan::block_header(b, h)?;
        let mut q = hdr_end;
        while matches!(b.get(q), Some(b' ' | b'\t')) {
            q += 1;
        }
        // The header line: nothing else, or a comment after white space.
        let mut comment = None;
        let header_line = self.line;
        match b.get(q) {
            None => return Err(Unsupported),
            Some(b'\n' | b'\r') => {}
            Some(b'#') if q > hdr_end => {
                let (ev, e) = self.comment_at(q, true)?;
                comment = Some(ev);
                q = e;
            }
            _ => return Err(Unsupported),
        }
        if q >= b.len() {
            // A header that ends the text: left to the parser.
            return Err(Unsupported);
        }
        let at = if b[q] == b'\r' { q + 2 } else { q + 1 };
        let body = scan::block_body(self.src, at, n, indicator, folded, chomp)?;
        if body.value.is_empty() && chomp == b'+' {
            // Keep chomping without content is left to the parser.
            return Err(Unsupported);
        }
        let end_line = header_line + 1 + body.breaks;
        // Without a body the span starts where the block ends.
        // Without a body the span starts where the block ends, or, at the end of the text, at
        // its header.
        let (sb, sline) = match body.first {
            Some((s, k)) => (s, header_line + 1 + k),
            None if body.end >= b.len() => (h, header_line),
            None => (body.end, end_line),
        };
        let style = if folded {
            Style::Folded
        } else {
            Style::Literal
        };
        self.emit_node(
            EvKind::Scalar(Cow::Owned(body.value), style),
            (sb, body.end),
            (sline, end_line),
            props,
        );
        if let Some(c) = comment {
            self.out.push(c);
        }
        // Go on from the start of the line that ended the block.
        self.pos = body.next;
        self.line = end_line;
        Ok(())
    }
}

/// Whether a tab leads the first line with content after the line that ends at `i`, and that
/// content is not a flow indicator that ends a plain scalar (`,`, `]`, `}`), or is one and
/// `in_block` (the flow collection stands in a block one).
fn tab_leads_next(b: &[u8], mut i: usize, in_block: bool) -> bool {
    let mut tab = false;
    while i < b.len() {
        match b[i] {
            b'\t' => tab = true,
            b' ' | b'\r' | b'\n' => {}
            b',' | b']' | b'}' => return tab && in_block,
            _ => return tab,
        }
        i += 1;
    }
    false
}

/// The end of the line holding `i`: its `\n`, or the end of the text.
fn line_end(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n)
}

/// The end of the content of the line holding `i`: before its `\r\n` or `\n`, or the end of
/// the text.
fn content_end(b: &[u8], i: usize) -> usize {
    let e = line_end(b, i);
    if e > i && b[e - 1] == b'\r' {
        e - 1
    } else {
        e
    }
}

/// The end of an anchor's or alias's name that starts at `i`: the characters Go and the parser
/// both take in one.
fn name_end(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
    {
        i += 1;
    }
    i
}

/// The end of a tag at `i` (`!name` or `!!name`), followed by a space or the line's end.
fn tag_end(b: &[u8], i: usize) -> R<usize> {
    let mut e = i + 1;
    if b.get(e) == Some(&b'!') {
        e += 1;
    }
    let s = e;
    while b
        .get(e)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/'))
    {
        e += 1;
    }
    if e == s || !is_blank_or_end(b.get(e)) {
        return Err(Unsupported);
    }
    Ok(e)
}

/// The style of a quoted scalar opened by `q`.
fn quote_style(q: u8) -> Style {
    if q == b'"' {
        Style::DoubleQuoted
    } else {
        Style::SingleQuoted
    }
}

/// Whether a plain scalar can start with `c` (followed by `next`), in block context.
fn plain_start(c: u8, next: Option<&u8>) -> bool {
    match c {
        b'-' | b'?' | b':' => !is_blank_or_end(next),
        b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
        | b'"' | b'%' | b'@' | b'`' => false,
        c => c >= 0x20 && c != 0x7f,
    }
}
