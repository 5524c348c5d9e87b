//! The tree builder: events in, [`Document`] trees out. The events come from the fast reader
//! (`fast.rs`) for the documents it reads, and from `granit-parser` (through `granit.rs`, the
//! only file that knows that crate) for the others (`feed.rs` chooses). Both give the same
//! events, so the builder cannot tell them apart.
//!
//! The parser reports nodes, comments (with a placement hint) and byte spans. What it leaves
//! implicit — where the `-`, `:` and `?` indicators are, how many blank lines separate things,
//! block scalar headers — is read from the source text between events (the "gap"), which holds
//! nothing but whitespace, indicators, anchors and tags.
//!
//! Comment attachment rules (see [`super::Comments`]):
//! * an own-line comment belongs to the next map key, sequence item or document root (its
//!   head), unless it is indented at least as deep as the entries of a block collection that
//!   ends right after it (its foot);
//! * a comment on the same line as a node's end (or a block scalar's header) is that node's line
//!   comment; a comment after an indicator alone on its line (`- # c`, `--- # c`) is the line
//!   comment of the node that follows.
//!
//! What it must not do: read YAML text itself beyond the gaps between events (the readers do,
//! and `feed.rs` drives them), or know which reader an event came from; the entry points (byte
//! order mark, line ends, splitting a sequence off) are `parse.rs`'s.

use crate::hash::HashSet;
use std::borrow::Cow;

use super::emit::canonical_inline;
use super::event::{Ev, EvKind, Style, NO_OFFSET};
use super::parse::{ParseError, SplitItem};
use super::{
    flags, Comment, Document, Entry, Layout, Node, Raw, Repr, ScalarStyle, SeqIndent, MAX_DEPTH,
};

/// The sequence being split.
pub(super) struct SplitState<'a, 's> {
    key: &'s str,
    each: &'s mut dyn FnMut(Node<'a>, SplitItem<'a>),
    /// Depth of the sequence's frame while it is being read.
    depth: Option<usize>,
    /// Where the next item's text starts.
    next: usize,
    range: Option<std::ops::Range<usize>>,
}

impl<'a, 's> SplitState<'a, 's> {
    /// Splits the sequence under the top-level key `key`, handing its items to `each`.
    pub(super) fn new(key: &'s str, each: &'s mut dyn FnMut(Node<'a>, SplitItem<'a>)) -> Self {
        SplitState {
            key,
            each,
            depth: None,
            next: 0,
            range: None,
        }
    }
}

/// An indicator found between events.
#[derive(Clone, Copy, Debug)]
struct Ind {
    byte: usize,
    col: usize,
    line: usize,
    /// The last line holding content before the indicator (for counting blank lines).
    prev_line: usize,
}

/// An own-line comment waiting for the node it belongs to.
struct Pending<'a> {
    text: Cow<'a, str>,
    line: usize,
    col: usize,
    blank: u8,
    /// Byte after the comment.
    end: usize,
}

/// Where the last completed node went, for attaching a line comment or an anchor to it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Root,
    /// The key waiting in the top frame.
    Key,
    /// The value of the last entry of the top frame.
    Value,
    /// The last item of the top frame.
    Item,
}

#[derive(Clone, Copy)]
struct Done {
    slot: Slot,
    depth: usize,
    first_line: usize,
    last_line: usize,
}

struct Frame<'a> {
    node: Node<'a>,
    map: bool,
    flow: bool,
    /// Absolute column of the entries: keys of a map, dashes of a sequence.
    col: Option<usize>,
    /// Absolute column of the context: the key or dash that introduces this collection.
    ctx_col: usize,
    /// First byte (flow: the bracket) and first line.
    start: usize,
    /// Whether a flow collection opened with its bracket: not a single pair in a flow
    /// sequence (`[a: b]`), which is a map without braces.
    bracketed: bool,
    start_line: usize,
    /// Where this frame's children start in the builder's scratch vectors.
    first_child: usize,
    key: Option<Node<'a>>,
    /// Line and column of the key waiting for its value.
    key_line: usize,
    /// Byte after the key waiting for its value.
    key_end: usize,
    keys_seen: Option<HashSet<KeyId>>,
}

/// What makes two keys of one mapping the same key. The same text (`"1"` and `1`: Kubernetes
/// and every walker here match keys by text), or the same value when that is not a string:
/// `1` and `0x1`, `~` and `null`, `true` and `True`, `1` and `1.0` (a number key is the same
/// JSON member whichever way it is written). The empty key, which YAML also allows for
/// several `: value` entries of odd streams, is never compared.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum KeyId {
    Text(String),
    Null,
    Bool(bool),
    Int(i128),
    /// The bits of a float that is not a whole number, `-0.0` counted as `0.0`.
    Float(u64),
}

/// The [`KeyId`] of a key's value when it is not a string.
fn value_id(key: &Node<'_>) -> Option<KeyId> {
    use super::scalar::Resolved;
    match key.resolved()? {
        Resolved::Null => Some(KeyId::Null),
        Resolved::Bool(b) => Some(KeyId::Bool(b)),
        Resolved::Int(i) => Some(KeyId::Int(i)),
        Resolved::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e38 => {
            Some(KeyId::Int(f as i128))
        }
        Resolved::Float(f) => Some(KeyId::Float(if f == 0.0 { 0 } else { f.to_bits() })),
        Resolved::Str(_) => None,
    }
}

/// Where the node [`Builder::begin`] fills in sits: the root, a flow collection (whose text
/// is kept verbatim), a mapping's key or value, or a sequence's item.
enum Role {
    Root,
    Key,
    Value,
    Item,
    Flow,
}

/// Where a node's entry starts (at its anchor or tag, when it has one): byte, line and
/// column.
#[derive(Clone, Copy)]
struct At {
    start: usize,
    line: usize,
    col: usize,
}

/// The state of one stream being built: the open documents and collections, and what was read
/// between events that the next node needs.
pub(super) struct Builder<'a, 's, F: FnMut(Document<'a>)> {
    src: &'a str,
    pub(super) split: Option<SplitState<'a, 's>>,
    /// The end of the last text that belongs to the tree (tokens, attached comments): where an
    /// item's text ends when comments after it belong to the next one.
    content_end: usize,
    /// Where finished documents go; the last one is held back until the stream ends, because
    /// what follows it (comments, blank lines) still belongs to it.
    each: F,
    held: Option<Document<'a>>,
    handed: usize,
    doc: Option<Document<'a>>,
    doc_start_line: usize,
    seq_indent: Option<SeqIndent>,
    stack: Vec<Frame<'a>>,
    items: Vec<Node<'a>>,
    entries: Vec<Entry<'a>>,
    pending: Vec<Pending<'a>>,
    pending_line: Option<(Comment<'a>, usize)>,
    done: Option<Done>,
    /// Whether the last node event started a collection (anchors attach to it) or completed a
    /// scalar/alias (anchors attach to that).
    started_collection: bool,
    prev_end: usize,
    prev_end_line: usize,
    last_line: usize,
    dash: Option<Ind>,
    colon: Option<Ind>,
    question: Option<Ind>,
    header: Option<usize>,
    /// Where the anchor or tag of the next node starts, when it has one.
    props_start: Option<(usize, usize)>,
    anchors: Vec<(usize, Cow<'a, str>)>,
    /// The document's anchored scalars: the anchor's id, the text and value (an alias of one
    /// used as a key is that key, for the duplicate check), and the key an alias about to be
    /// placed stands for.
    anchored_scalars: Vec<(usize, String, Option<KeyId>)>,
    alias_key: Option<(String, Option<KeyId>)>,
    /// Where the next document's text starts, and where the last finished one started.
    text_start: usize,
    last_doc_start: usize,
    /// `%` directive lines seen since the last document.
    directives: Vec<Cow<'a, str>>,
    /// The last byte whose line start was asked for, and that line start: lookups mostly move
    /// forward, so each scans only the text since the last one. (Scanning back from every node
    /// to its line's start made a long flow collection on one line quadratic.)
    line_cache: std::cell::Cell<(usize, usize)>,
}

/// The byte after the line break that ends the line holding `byte` (or the end of the text).
fn end_of_line(src: &str, byte: usize) -> usize {
    match src.get(byte..).and_then(|s| s.find('\n')) {
        Some(i) => byte + i + 1,
        None => src.len(),
    }
}

fn clamp_u8(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

fn clamp_i16(n: isize) -> i16 {
    i16::try_from(n).unwrap_or(if n < 0 { i16::MIN } else { i16::MAX })
}

fn blank_between(prev_line: usize, line: usize) -> u8 {
    clamp_u8(line.saturating_sub(prev_line).saturating_sub(1))
}

impl<'a, 's, F: FnMut(Document<'a>)> Builder<'a, 's, F> {
    pub(super) fn new(src: &'a str, each: F) -> Self {
        Builder {
            src,
            split: None,
            content_end: 0,
            each,
            held: None,
            handed: 0,
            doc: None,
            doc_start_line: 0,
            seq_indent: None,
            stack: Vec::new(),
            items: Vec::new(),
            entries: Vec::new(),
            pending: Vec::new(),
            pending_line: None,
            done: None,
            started_collection: false,
            prev_end: 0,
            prev_end_line: 1,
            last_line: 0,
            dash: None,
            colon: None,
            question: None,
            header: None,
            props_start: None,
            anchors: Vec::new(),
            anchored_scalars: Vec::new(),
            alias_key: None,
            text_start: 0,
            last_doc_start: 0,
            directives: Vec::new(),
            line_cache: std::cell::Cell::new((0, 0)),
        }
    }

    /// The first byte of the line holding `byte`.
    fn line_start(&self, byte: usize) -> usize {
        let bytes = self.src.as_bytes();
        let byte = byte.min(bytes.len());
        let after_newline = |from: usize| {
            bytes
                .get(from..byte)
                .and_then(|b| b.iter().rposition(|c| *c == b'\n'))
                .map(|i| from + i + 1)
        };
        let (at, start) = self.line_cache.get();
        if byte >= at {
            let found = after_newline(at).unwrap_or(start);
            self.line_cache.set((byte, found));
            found
        } else if byte >= start {
            start
        } else {
            after_newline(0).unwrap_or(0)
        }
    }

    /// The byte column of `byte` in its line.
    fn col_of(&self, byte: usize) -> usize {
        byte.saturating_sub(self.line_start(byte))
    }

    fn err(&self, byte: usize, line: usize, message: impl Into<String>) -> ParseError {
        let col = self
            .src
            .get(self.line_start(byte)..byte)
            .map_or(0, |s| s.chars().count());
        ParseError {
            line,
            column: col + 1,
            message: message.into(),
        }
    }

    fn in_flow(&self) -> bool {
        self.stack.last().is_some_and(|f| f.flow)
    }

    /// Reads the source between the previous event and `upto`: indicators, block scalar
    /// headers, line counts.
    fn scan_gap(&mut self, upto: usize) {
        if upto <= self.prev_end {
            return;
        }
        let src = self.src;
        let bytes = src.as_bytes();
        let mut i = self.prev_end;
        let mut line = self.prev_end_line;
        let in_flow = self.in_flow();
        while i < upto {
            let c = bytes[i];
            match c {
                b'\n' => {
                    line += 1;
                    i += 1;
                }
                b' ' | b'\t' | b'\r' => i += 1,
                b'%' if self.doc.is_none() && (i == 0 || bytes[i - 1] == b'\n') => {
                    // The whole line, with its comment (whose event is then skipped).
                    let end = src[i..].find('\n').map_or(src.len(), |n| i + n);
                    self.directives.push(Cow::Borrowed(src[i..end].trim_end()));
                    self.last_line = line;
                    i = end;
                }
                b'#' => {
                    // A comment whose event comes later (after a block scalar header).
                    while i < upto && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                b'&' | b'!' => {
                    if self.props_start.is_none() {
                        self.props_start = Some((i, line));
                    }
                    self.last_line = line;
                    while i < upto && !bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                }
                b'|' | b'>' if !in_flow => {
                    self.header = Some(i);
                    self.last_line = line;
                    while i < upto && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                b'-' | b'?' | b':' if !in_flow => {
                    let next_blank = bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
                    let prev_ok = c == b':' || i == 0 || bytes[i - 1].is_ascii_whitespace();
                    if next_blank && prev_ok {
                        let ind = Ind {
                            byte: i,
                            col: self.col_of(i),
                            line,
                            prev_line: self.last_line,
                        };
                        self.last_line = line;
                        match c {
                            b'-' => self.dash = Some(ind),
                            b'?' => self.question = Some(ind),
                            _ => self.colon = Some(ind),
                        }
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        if i > upto {
            // A directive line ran past `upto`.
            self.prev_end = i;
            self.prev_end_line = line;
        } else {
            self.prev_end = upto;
            self.prev_end_line = line;
        }
    }

    fn advance(&mut self, end: usize, end_line: usize) {
        if end > self.prev_end {
            self.prev_end = end;
            self.prev_end_line = end_line;
        }
    }

    pub(crate) fn event(&mut self, ev: Ev<'a>) -> Result<(), ParseError> {
        let (sb, eb) = if ev.sb == NO_OFFSET || ev.eb == NO_OFFSET {
            (self.prev_end, self.prev_end)
        } else {
            (ev.sb, ev.eb)
        };
        let (line, end_line, tag) = (ev.line, ev.end_line, ev.tag);
        match ev.kind {
            EvKind::StreamStart | EvKind::Other => {}
            EvKind::StreamEnd => self.stream_end(),
            EvKind::DocStart(explicit) => self.doc_start(explicit, sb, eb, line),
            EvKind::DocEnd => self.doc_end(sb, eb, line),
            EvKind::Comment(text, right) => self.comment(text, right, sb, eb, line),
            EvKind::Anchor(id, name) => self.anchor(id, name),
            EvKind::Alias(id) => {
                self.scan_gap(sb);
                let name = self
                    .anchors
                    .iter()
                    .rev()
                    .find(|(i, _)| *i == id)
                    .map(|(_, n)| n.clone())
                    .unwrap_or_default();
                let mut node = Node {
                    repr: Repr::Alias {
                        name,
                        lay: Layout::default(),
                    },
                    ext: None,
                };
                self.begin(&mut node, sb, line, false)?;
                self.last_line = self.last_line.max(end_line);
                self.content_end = self.content_end.max(eb);
                self.advance(eb, end_line);
                // As a key, it is the key its anchor is on: compared with its siblings.
                self.alias_key = self
                    .anchored_scalars
                    .iter()
                    .rev()
                    .find(|(i, _, _)| *i == id)
                    .map(|(_, k, v)| (k.clone(), v.clone()));
                self.place(node, line, end_line, sb, eb)?;
            }
            EvKind::Scalar(value, style) => {
                self.scan_gap(sb);
                self.scalar(value, style, tag, end_line, sb, eb, line)?;
            }
            EvKind::MapStart(flow) | EvKind::SeqStart(flow) => {
                let map = matches!(ev.kind, EvKind::MapStart(_));
                self.scan_gap(sb);
                self.start_collection(map, flow, tag, sb, eb, line)?;
            }
            EvKind::MapEnd | EvKind::SeqEnd => self.end_collection(sb, eb, end_line)?,
        }
        Ok(())
    }

    /// A node's tag as written, or in verbatim form (`!<prefix+suffix>`) when its handle is
    /// one the document's `%TAG` directives declare: the tag then means the same wherever the
    /// node is written, also in a document without that directive.
    fn tag_text(&self, tag: Option<(usize, usize)>) -> Option<Cow<'a, str>> {
        let src: &'a str = self.src;
        let text = tag.and_then(|(s, e)| src.get(s..e))?;
        let directives = self.doc.as_ref().map_or(&[][..], |d| &d.directives[..]);
        Some(resolve_tag_handle(text, directives).map_or(Cow::Borrowed(text), Cow::Owned))
    }

    fn doc_start(&mut self, explicit: bool, sb: usize, eb: usize, line: usize) {
        self.scan_gap(sb);
        let mut doc = Document::new(Node::null());
        doc.root = None;
        doc.directives = std::mem::take(&mut self.directives);
        if explicit {
            doc.pre = self.take_pending(0);
            doc.start = Some(None);
            self.last_line = line;
            self.advance(eb, line);
        }
        self.doc_start_line = line;
        self.doc = Some(doc);
        self.done = None;
        self.anchors.clear();
        self.anchored_scalars.clear();
        self.seq_indent = None;
        self.dash = None;
        self.colon = None;
        self.question = None;
    }

    fn doc_end(&mut self, sb: usize, eb: usize, line: usize) {
        let explicit = eb > sb;
        if explicit {
            self.scan_gap(sb);
        }
        let pending = self.take_pending(0);
        if let Some(mut doc) = self.doc.take() {
            doc.foot = pending;
            doc.end = explicit;
            if explicit {
                doc.end_blank = blank_between(self.last_line, line);
            }
            doc.seq_indent = self.seq_indent.unwrap_or_default();
            if explicit {
                self.last_line = line;
                self.advance(eb, line);
            }
            // The document's text runs to the end of its last line.
            let end = self.end_of_line(self.prev_end.max(self.text_start));
            doc.text = self.src.get(self.text_start..end).unwrap_or("");
            self.last_doc_start = self.text_start;
            self.text_start = end;
            self.push_doc(doc);
        }
        self.done = None;
    }

    fn end_of_line(&self, byte: usize) -> usize {
        match self.src.get(byte..).and_then(|s| s.find('\n')) {
            Some(i) => byte + i + 1,
            None => self.src.len(),
        }
    }

    fn stream_end(&mut self) {
        let pending = self.take_pending(0);
        let src = self.src;
        if self.held.is_none() && self.handed == 0 && !src.is_empty() {
            // Only comments (or nothing but markers): a document without content keeps them.
            let mut doc = Document::new(Node::null());
            doc.root = None;
            doc.directives = std::mem::take(&mut self.directives);
            doc.foot = pending;
            doc.text = src;
            self.push_doc(doc);
            return;
        }
        let tail_blank = blank_between(
            self.last_line,
            self.prev_end_line
                .max(memchr::memchr_iter(b'\n', src.as_bytes()).count() + 1),
        );
        if let Some(last) = self.held.as_mut() {
            last.tail_blank = tail_blank;
            if last.end {
                last.trailer = pending;
            } else {
                last.foot.extend(pending);
            }
            // Whatever follows the last document (blank lines, comments) belongs to it.
            last.text = src.get(self.last_doc_start..).unwrap_or("");
        }
    }

    fn take_pending(&mut self, ctx_col: usize) -> Vec<Comment<'a>> {
        self.pending
            .drain(..)
            .map(|p| Comment {
                text: p.text,
                blank: p.blank,
                col: clamp_i16(p.col as isize - ctx_col as isize),
            })
            .collect()
    }

    fn comment(&mut self, text: Cow<'a, str>, right: bool, sb: usize, eb: usize, line: usize) {
        if sb >= self.prev_end {
            self.scan_gap(sb);
        }
        let on_directive = self.doc.is_none()
            && self
                .src
                .get(self.line_start(sb)..)
                .is_some_and(|l| l.starts_with('%'));
        if self.stack.iter().any(|f| f.flow) || on_directive {
            // Inside a flow collection, or after a directive: part of that verbatim text.
            self.advance(eb, line);
            return;
        }
        if right {
            // A line comment belongs to what is on its line (or right after it).
            self.content_end = self.content_end.max(eb);
            let gap = self.src.get(self.line_start(sb)..sb).unwrap_or("");
            let spaces = gap.len() - gap.trim_end_matches([' ', '\t']).len();
            let comment = Comment {
                text,
                blank: 0,
                col: i16::from(clamp_u8(spaces)),
            };
            let attach = self.done.filter(|d| {
                d.depth == self.stack.len() && (d.first_line == line || d.last_line == line)
            });
            match attach {
                Some(d) => {
                    if let Some(node) = self.slot_mut(d.slot) {
                        node.ext.get_or_insert_with(Box::default).comments.line = Some(comment);
                    }
                }
                None => {
                    let after_start = self
                        .doc
                        .as_ref()
                        .is_some_and(|d| d.start.is_some() && d.root.is_none())
                        && line == self.doc_start_line
                        && self.stack.is_empty();
                    if after_start {
                        if let Some(doc) = &mut self.doc {
                            doc.start = Some(Some(comment));
                        }
                    } else {
                        self.pending_line = Some((comment, line));
                    }
                }
            }
        } else if self.doc.is_none() && !self.directives.is_empty() {
            // Between directives and `---`: kept in place as a directive line.
            let text = self.src.get(self.line_start(sb)..eb).unwrap_or("");
            self.directives.push(Cow::Borrowed(text));
        } else {
            let col = self.col_of(sb);
            let blank = blank_between(self.last_line, line);
            self.pending.push(Pending {
                text,
                line,
                col,
                blank,
                end: eb,
            });
        }
        self.last_line = self.last_line.max(line);
        self.advance(eb, line);
    }

    fn anchor(&mut self, id: usize, name: Cow<'a, str>) {
        self.anchors.push((id, name.clone()));
        let node = if self.started_collection {
            self.stack.last_mut().map(|f| &mut f.node)
        } else {
            match self.done {
                Some(d) if d.depth == self.stack.len() => self.slot_mut(d.slot),
                _ => None,
            }
        };
        let mut scalar = None;
        if let Some(n) = node {
            scalar = n.as_str().map(|text| (id, text.to_owned(), value_id(n)));
            n.ext.get_or_insert_with(Box::default).anchor = Some(name);
        }
        self.anchored_scalars.extend(scalar);
    }

    fn slot_mut(&mut self, slot: Slot) -> Option<&mut Node<'a>> {
        match slot {
            Slot::Root => self.doc.as_mut().and_then(|d| d.root.as_mut()),
            Slot::Key => self.stack.last_mut().and_then(|f| f.key.as_mut()),
            Slot::Value => self.entries.last_mut().map(|e| &mut e.value),
            Slot::Item => self.items.last_mut(),
        }
    }

    /// Fills in a node's layout and comments from where it starts. `block_coll`: the node is
    /// a block collection (its head comments may belong to its first entry instead).
    fn begin(
        &mut self,
        node: &mut Node<'a>,
        start: usize,
        line: usize,
        block_coll: bool,
    ) -> Result<(), ParseError> {
        // A node's entry starts at its anchor or tag, when it has one.
        let (content_line, content_col) = (line, self.col_of(start));
        let (start, line) = self
            .props_start
            .take()
            .filter(|&(b, _)| b < start)
            .unwrap_or((start, line));
        let col = self.col_of(start);
        let empty = node.as_str() == Some("") && node.style() == Some(ScalarStyle::Plain);
        let mut lay = Layout {
            flags: flags::SOURCE,
            ..Layout::default()
        };
        let at = At { start, line, col };

        let role = match self.stack.last() {
            None => Role::Root,
            Some(f) if f.flow => Role::Flow,
            Some(f) if f.map && f.key.is_none() => Role::Key,
            Some(f) if f.map => Role::Value,
            Some(_) => Role::Item,
        };
        // A comment after a `-` alone on its line belongs to the item, never to the sequence
        // whose start the parser may report after it.
        let line_comment = if block_coll && !matches!(role, Role::Item) {
            None
        } else {
            self.pending_line.take().map(|(c, _)| c)
        };
        let head = match role {
            Role::Flow => Vec::new(),
            Role::Root => self.begin_root(&mut lay, at),
            Role::Key => self.begin_key(&mut lay, at)?,
            Role::Value => self.begin_value(&mut lay, at, block_coll, empty)?,
            Role::Item => self.begin_item(&mut lay, at, block_coll)?,
        };
        if !head.is_empty() || line_comment.is_some() {
            let ext = node.ext.get_or_insert_with(Box::default);
            ext.comments.head = head;
            if line_comment.is_some() {
                ext.comments.line = line_comment;
                if !matches!(role, Role::Flow | Role::Key) && !empty {
                    lay.flags |= flags::NEXT_LINE;
                }
            }
        }
        if content_line > line && !block_coll {
            lay.flags |= flags::PROPS_LINE;
            if !matches!(role, Role::Key | Role::Flow) {
                // Where the content goes, relative to the context.
                let ctx = self.ctx_col();
                lay.indent = clamp_u8(content_col.saturating_sub(ctx));
            }
        }
        *node.layout_mut() = lay;
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.err(
                start,
                line,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    /// [`Self::begin`] for a document's root: its layout, and its head comments.
    fn begin_root(&mut self, lay: &mut Layout, at: At) -> Vec<Comment<'a>> {
        let At { line, col, .. } = at;
        let start_line = self
            .doc
            .as_ref()
            .and_then(|d| d.start.as_ref())
            .map(|_| self.doc_start_line);
        // Whether the root shares the `---` line is the document's business, not the
        // node's: a root can become a list item elsewhere.
        if let (Some(sl), Some(doc)) = (start_line, self.doc.as_mut()) {
            doc.root_next_line = line > sl;
        }
        lay.indent = clamp_u8(col);
        let head = self.take_pending(0);
        lay.blank = blank_between(self.last_line, line);
        head
    }

    /// [`Self::begin`] for a mapping's key: its layout (an explicit `?` key starts at the
    /// `?`), and its head comments; the first key settles the mapping's column.
    fn begin_key(&mut self, lay: &mut Layout, at: At) -> Result<Vec<Comment<'a>>, ParseError> {
        let At { start, line, col } = at;
        let q = self.question.take().filter(|q| q.line <= line);
        let entry_col = q.map_or(col, |q| q.col);
        let entry_line = q.map_or(line, |q| q.line);
        let prev = q.map_or(self.last_line, |q| q.prev_line);
        if q.is_some() {
            lay.flags |= flags::EXPLICIT_KEY;
        }
        let Some(frame) = self.stack.last_mut() else {
            return Err(self.err(
                start,
                line,
                "unexpected parser state (key without a collection)",
            ));
        };
        let frame_col = *frame.col.get_or_insert(entry_col);
        let head = self.take_pending(frame_col);
        lay.blank = blank_between(prev, entry_line);
        self.last_line = self.last_line.max(line);
        Ok(head)
    }

    /// [`Self::begin`] for a mapping's value: on its key's line after the `:` (the spaces
    /// between), on the lines after it (with head comments of its own), or omitted after an
    /// explicit key. Also records the spaces between the key and its `:`.
    fn begin_value(
        &mut self,
        lay: &mut Layout,
        at: At,
        block_coll: bool,
        empty: bool,
    ) -> Result<Vec<Comment<'a>>, ParseError> {
        let At { start, line, col } = at;
        let mut head = Vec::new();
        let colon = self.colon.take();
        let Some(frame) = self.stack.last() else {
            return Err(self.err(
                start,
                line,
                "unexpected parser state (value without a mapping)",
            ));
        };
        let (key_line, key_end) = (frame.key_line, frame.key_end);
        let ind_line = colon.map_or(key_line, |c| c.line);
        if let Some(c) = colon.filter(|c| c.line == key_line && c.byte >= key_end) {
            let before = clamp_u8(c.byte - key_end);
            if let Some(k) = self.stack.last_mut().and_then(|f| f.key.as_mut()) {
                k.layout_mut().gap = before;
            }
        }
        let ctx = self.stack.last().and_then(|f| f.col).unwrap_or(col);
        if block_coll {
            // Always on the lines after its key; the indentation is settled at its end.
            lay.indent = clamp_u8(col.saturating_sub(ctx));
        } else if line > ind_line && !empty {
            lay.flags |= flags::NEXT_LINE;
            lay.indent = clamp_u8(col.saturating_sub(ctx));
            head = self.take_pending(col);
            lay.blank = blank_between(self.last_line, line);
        } else if let Some(c) = colon {
            lay.gap = self.gap_after(c, start);
        } else if empty
            && self
                .stack
                .last()
                .and_then(|f| f.key.as_ref())
                .is_some_and(|k| k.layout().flags & flags::EXPLICIT_KEY != 0)
        {
            lay.flags |= flags::OMITTED;
        }
        Ok(head)
    }

    /// [`Self::begin`] for a sequence's item: its layout from its `-` (the first item settles
    /// the sequence's column), and its head comments: those before the dash's line, and those
    /// after it when the item starts on a later line.
    fn begin_item(
        &mut self,
        lay: &mut Layout,
        at: At,
        block_coll: bool,
    ) -> Result<Vec<Comment<'a>>, ParseError> {
        let At { start, line, col } = at;
        let dash = self.dash.take();
        let Some(frame) = self.stack.last_mut() else {
            return Err(self.err(
                start,
                line,
                "unexpected parser state (item without a collection)",
            ));
        };
        let dash_col = dash.map_or(col, |d| d.col);
        let frame_col = *frame.col.get_or_insert(dash_col);
        let dash_line = dash.map_or(line, |d| d.line);
        let prev = dash.map_or(self.last_line, |d| d.prev_line);
        // Comments after the dash line belong to what follows the dash.
        let before_dash = self
            .pending
            .iter()
            .take_while(|p| p.line < dash_line)
            .count();
        let after: Vec<Pending<'a>> = self.pending.drain(before_dash..).collect();
        let mut head = self.take_pending(frame_col);
        self.pending = after;
        lay.blank = blank_between(prev, dash_line);
        if line > dash_line {
            lay.flags |= flags::NEXT_LINE;
            if !block_coll {
                let extra = self.take_pending(col);
                head.extend(extra);
            }
        }
        lay.indent = clamp_u8(col.saturating_sub(frame_col));
        if line == dash_line && !block_coll {
            if let Some(d) = dash {
                lay.gap = self.gap_after(d, start);
            }
        }
        Ok(head)
    }

    /// Spaces between an indicator and the node after it on the same line (0 = one space).
    fn gap_after(&self, ind: Ind, node_start: usize) -> u8 {
        let ls = self.line_start(node_start);
        let ind_byte = ls + ind.col;
        let between = self.src.get(ind_byte + 1..node_start).unwrap_or("");
        let spaces = between.len() - between.trim_start_matches(' ').len();
        if spaces == 1 {
            0
        } else {
            clamp_u8(spaces)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn scalar(
        &mut self,
        value: Cow<'a, str>,
        style: Style,
        tag: Option<(usize, usize)>,
        span_end_line: usize,
        sb: usize,
        eb: usize,
        line: usize,
    ) -> Result<(), ParseError> {
        let src: &'a str = self.src;
        let raw_src = src.get(sb..eb).unwrap_or("");
        let (mut node, style, unbroken_end) = self.scalar_node(value, style, tag, sb, eb);
        let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
        let header = if block {
            // With an empty body the parser's span starts at the header itself.
            self.header
                .take()
                .or_else(|| matches!(src.as_bytes().get(sb), Some(b'|' | b'>')).then_some(sb))
        } else {
            None
        };
        // A block scalar's entry starts at its header's line, not at its body.
        let (first_line, begin_at, begin_line) = match header {
            Some(h) => {
                let hl = line - src.get(h..sb).map_or(0, |s| s.matches('\n').count());
                (hl, h, hl)
            }
            None => (line, sb, line),
        };
        self.begin(&mut node, begin_at, begin_line, false)?;
        let in_flow = self.in_flow();
        let mut last_line = span_end_line;
        let mut end_byte = eb;
        if block {
            if let Some(h) = header {
                (last_line, end_byte) =
                    self.block_scalar_body(&mut node, h, first_line, eb, unbroken_end);
            }
        } else if style != ScalarStyle::Plain || raw_src.contains('\n') {
            self.keep_inline_source(&mut node, raw_src, in_flow);
        }
        if sb == eb && !(block && header.is_some()) {
            // An empty value ends where it starts (the parser's end may point past the line);
            // a block scalar's end was found from its header above.
            last_line = first_line;
        } else {
            self.last_line = self.last_line.max(last_line);
        }
        let end_line = if end_byte == eb {
            span_end_line
        } else {
            last_line
        };
        // The value an explicit key goes without (`? key` alone) is placed by the parser at
        // the next token, which may be the next item's: it holds no text of its own.
        if node.layout().flags & flags::OMITTED == 0 {
            self.content_end = self.content_end.max(end_byte);
        }
        self.advance(end_byte, end_line);
        self.place(node, first_line, last_line, sb, end_byte)
    }

    /// The node of a scalar event spanning `sb..eb`, with its tag; its style; and whether it
    /// is a block scalar whose last content line ends the input (its value then has no last
    /// line break).
    fn scalar_node(
        &self,
        value: Cow<'a, str>,
        style: Style,
        tag: Option<(usize, usize)>,
        sb: usize,
        eb: usize,
    ) -> (Node<'a>, ScalarStyle, bool) {
        let src: &'a str = self.src;
        // YAML 1.2 §8.1.1.2: clip and keep chomping keep the last line break of a block
        // scalar's content, when there is one; a last content line that ends the input has
        // none. The event parser adds one anyway (libyaml, and so kustomize, does not): take it
        // off, and write the scalar anew rather than as its source, which would gain the break
        // back from the line end after it.
        let unbroken_end = matches!(style, Style::Literal | Style::Folded)
            && eb >= src.len()
            && src
                .rsplit('\n')
                .next()
                .is_some_and(|l| !l.trim().is_empty())
            && value.ends_with('\n');
        let value = if unbroken_end {
            let mut v = value.into_owned();
            v.pop();
            Cow::Owned(v)
        } else {
            value
        };
        let (text, style) = match style {
            Style::Plain if sb == eb => (Cow::Borrowed(""), ScalarStyle::Plain),
            Style::Plain => (value, ScalarStyle::Plain),
            Style::SingleQuoted => (value, ScalarStyle::SingleQuoted),
            Style::DoubleQuoted => (value, ScalarStyle::DoubleQuoted),
            Style::Literal => (value, ScalarStyle::Literal),
            Style::Folded => (value, ScalarStyle::Folded),
        };
        let mut node = Node {
            repr: Repr::Scalar {
                text,
                style,
                lay: Layout::default(),
            },
            ext: None,
        };
        if let Some(tag) = self.tag_text(tag) {
            node.ext.get_or_insert_with(Box::default).tag = Some(tag);
        }
        (node, style, unbroken_end)
    }

    /// Reads a block scalar's header (at byte `h`, on line `first_line`) and body, keeping
    /// them as the node's source text when writing it anew would not give them back: the
    /// scalar's last line and the byte its body ends at.
    fn block_scalar_body(
        &self,
        node: &mut Node<'a>,
        h: usize,
        first_line: usize,
        eb: usize,
        unbroken_end: bool,
    ) -> (usize, usize) {
        let src: &'a str = self.src;
        let header_end = src
            .get(h..)
            .and_then(|s| s.find('\n'))
            .map_or(src.len(), |i| h + i);
        let header_line = src.get(h..header_end).unwrap_or("");
        let header_text = strip_comment(header_line);
        // The body runs to the end of its last line holding anything but whitespace;
        // blank lines after it are layout (they count as blank lines before what follows).
        let tail = src.get(header_end..eb.max(header_end)).unwrap_or("");
        // The body runs to the last line break before what follows it: trailing lines
        // with only spaces are kept as written (with `|+` they are content, and a line
        // with more spaces than the indentation always is).
        let body_end = if eb >= src.len() {
            if src.ends_with('\n') {
                src.len() - 1
            } else {
                src.len()
            }
        } else {
            tail.rfind('\n')
                .filter(|&i| i > 0)
                .map_or(header_end, |i| header_end + i)
        };
        let body_end = body_end.max(header_end);
        let body = src
            .get((header_end + 1).min(body_end)..body_end)
            .unwrap_or("");
        // A body of one empty line is "" too. Under `|+` that line is content (the
        // raw text ends with its line break); otherwise it is a blank line of layout.
        let keep = header_text.contains('+');
        let has_body = !body.is_empty() || (keep && body_end > header_end);
        let last_line = first_line
            + if has_body {
                body.matches('\n').count() + 1
            } else {
                0
            };
        let raw = if header_text.len() == header_line.len() {
            Cow::Borrowed(src.get(h..body_end).unwrap_or(""))
        } else if has_body {
            Cow::Owned(format!("{header_text}\n{body}"))
        } else {
            Cow::Owned(header_text.to_string())
        };
        // Nor is the source kept for a block whose last line ends the input without a
        // line break: written with one, a last line of spaces would become content.
        let at_unbroken_end = eb >= src.len() && !src.ends_with('\n');
        if !unbroken_end && !at_unbroken_end {
            node.ext.get_or_insert_with(Box::default).raw = Some(Raw {
                text: raw,
                base: self.raw_base(),
            });
        }
        (last_line, body_end)
    }

    /// Keeps a quoted or multi-line scalar's source text (`raw_src`) on the node unless the
    /// emitter would write it the same.
    fn keep_inline_source(&self, node: &mut Node<'a>, raw_src: &'a str, in_flow: bool) {
        // Text over several lines is never written so anew: a line break in it folds (or
        // is escaped) in the value, which the emitter writes on one line.
        let canonical = match quoted_as_written(node, raw_src) {
            _ if raw_src.contains('\n') => false,
            Some(same) => {
                debug_assert_eq!(same, canonical_inline(node, in_flow) == raw_src);
                same
            }
            None => canonical_inline(node, in_flow) == raw_src,
        };
        if !canonical {
            node.ext.get_or_insert_with(Box::default).raw = Some(Raw {
                text: Cow::Borrowed(raw_src),
                base: self.raw_base(),
            });
        }
    }

    /// Column of the context the node being built sits in: the key column of a map, the dash
    /// column of a sequence, 0 at the root.
    fn ctx_col(&self) -> usize {
        match self.stack.last() {
            None => 0,
            Some(f) if f.flow => f.ctx_col,
            Some(f) => f.col.unwrap_or(0),
        }
    }

    /// [`Raw::base`] for text read now: one right of the innermost block collection's column,
    /// 0 where no block collection encloses the text (a document's root, or flow at the root).
    fn raw_base(&self) -> u32 {
        self.stack.iter().rev().find(|f| !f.flow).map_or(0, |f| {
            u32::try_from(f.col.unwrap_or(0) + 1).unwrap_or(u32::MAX)
        })
    }

    fn start_collection(
        &mut self,
        map: bool,
        flow: bool,
        tag: Option<(usize, usize)>,
        sb: usize,
        eb: usize,
        line: usize,
    ) -> Result<(), ParseError> {
        let mut node = if map { Node::map() } else { Node::seq() };
        if let Repr::Map { flow: f, .. } | Repr::Seq { flow: f, .. } = &mut node.repr {
            *f = flow;
        }
        if let Some(tag) = self.tag_text(tag) {
            node.ext.get_or_insert_with(Box::default).tag = Some(tag);
        }
        // For block sequences the parser's start may be the first item; the dash comes from
        // the gap, so the column is settled at the first item.
        self.begin(&mut node, sb, line, !flow)?;
        let ctx_col = self.ctx_col();
        let first_child = if map {
            self.entries.len()
        } else {
            self.items.len()
        };
        if !map && !flow && self.stack.len() == 1 {
            let root = &self.stack[0];
            let wanted = self
                .split
                .as_ref()
                .filter(|sp| sp.range.is_none())
                .map(|sp| sp.key);
            let key = root.key.as_ref().and_then(Node::as_str);
            if root.map && !root.flow && key.is_some() && key == wanted {
                let start = end_of_line(self.src, root.key_end);
                if let Some(sp) = self.split.as_mut() {
                    sp.depth = Some(2);
                    sp.next = start;
                    sp.range = Some(start..start);
                }
            }
        }
        self.advance(if flow { eb } else { sb }, line);
        if flow {
            self.last_line = self.last_line.max(line);
        }
        self.stack.push(Frame {
            node,
            map,
            flow,
            col: None,
            ctx_col,
            start: sb,
            bracketed: !map || self.src.get(sb..eb) == Some("{"),
            start_line: line,
            first_child,
            key: None,
            key_line: line,
            key_end: sb,
            keys_seen: None,
        });
        self.started_collection = true;
        Ok(())
    }

    fn end_collection(&mut self, sb: usize, eb: usize, end_line: usize) -> Result<(), ParseError> {
        let depth = self.stack.len();
        if let Some(sp) = self.split.as_mut().filter(|sp| sp.depth == Some(depth)) {
            sp.depth = None;
            let end = sp.next;
            if let Some(r) = sp.range.as_mut() {
                r.end = end;
            }
        }
        let Some(mut frame) = self.stack.pop() else {
            return Ok(());
        };
        if frame.flow {
            self.scan_gap(sb);
            self.advance(eb, end_line);
            self.content_end = self.content_end.max(eb);
        }
        // Children out of the scratch vectors, in one exact-size allocation.
        match &mut frame.node.repr {
            Repr::Map { entries, .. } => {
                *entries = self.entries.drain(frame.first_child..).collect()
            }
            Repr::Seq { items, .. } => *items = self.items.drain(frame.first_child..).collect(),
            _ => {}
        }
        let first_line = frame.start_line;
        let mut last_line = end_line;
        if frame.flow {
            let raw_src = self.src.get(frame.start..eb).unwrap_or("");
            let canonical = canonical_inline(&frame.node, self.in_flow());
            // A single pair in a flow sequence (`[a: b]`) is a map without braces: its text
            // would not be a map anywhere else, so it is written anew when it moves.
            if canonical != raw_src && frame.bracketed {
                frame.node.ext.get_or_insert_with(Box::default).raw = Some(Raw {
                    text: Cow::Borrowed(raw_src),
                    base: self.raw_base(),
                });
            }
            self.last_line = self.last_line.max(end_line);
        } else {
            // Foot comments: pending comments indented at least as deep as the entries. A
            // sequence whose dashes stand at its key's column (`key:\n- a`) shares that column
            // with the keys after it: a comment there belongs to what follows (the next key's
            // head, or the map's foot), so that writing it back and reading it again puts it in
            // the same place.
            let col = frame.col.unwrap_or(frame.ctx_col);
            let indentless = !frame.map
                && frame.col == Some(frame.ctx_col)
                && self.stack.last().is_some_and(|f| f.map && !f.flow);
            let n = self
                .pending
                .iter()
                .take_while(|p| p.col > col || (p.col == col && !indentless))
                .count();
            if let Some(last) = self.pending.get(n.wrapping_sub(1)).filter(|_| n > 0) {
                self.content_end = self.content_end.max(last.end);
            }
            if n > 0 {
                let foot: Vec<Comment<'a>> = self
                    .pending
                    .drain(..n)
                    .map(|p| Comment {
                        text: p.text,
                        blank: p.blank,
                        col: clamp_i16(p.col as isize - col as isize),
                    })
                    .collect();
                frame
                    .node
                    .ext
                    .get_or_insert_with(Box::default)
                    .comments
                    .foot = foot;
            }
            last_line = self.last_line;
            // The block collection's column relative to its context.
            if let Some(c) = frame.col {
                let lay = frame.node.layout_mut();
                lay.indent = clamp_u8(c.saturating_sub(frame.ctx_col));
            }
        }
        self.started_collection = false;
        let node = frame.node;
        self.place(
            node,
            first_line,
            last_line,
            frame.start,
            eb.max(frame.start),
        )
    }

    /// Puts a completed node into its parent.
    fn place(
        &mut self,
        node: Node<'a>,
        first_line: usize,
        last_line: usize,
        at: usize,
        end: usize,
    ) -> Result<(), ParseError> {
        let depth = self.stack.len();
        let slot = match self.stack.last_mut() {
            None => {
                if let Some(doc) = &mut self.doc {
                    doc.root = Some(node);
                }
                Slot::Root
            }
            Some(f) if f.map => match f.key.take() {
                None => {
                    // A key: refuse duplicates, the same text or the same value ([`KeyId`]);
                    // an alias is the key its anchor is on.
                    let alias = self.alias_key.take();
                    let key = match (node.as_str(), &alias) {
                        (Some(k), _) => Some((k, value_id(&node))),
                        (None, Some((k, v))) => Some((k.as_str(), v.clone())),
                        (None, None) => None,
                    };
                    let dup = match key {
                        None | Some(("", _)) => false,
                        Some((k, value)) => {
                            let siblings = &self.entries[f.first_child..];
                            let insert = |seen: &mut HashSet<KeyId>| {
                                let text_new = seen.insert(KeyId::Text(k.to_owned()));
                                let value_new = value.clone().is_none_or(|v| seen.insert(v));
                                !(text_new && value_new)
                            };
                            match &mut f.keys_seen {
                                Some(seen) => insert(seen),
                                None if siblings.len() < 16 => siblings.iter().any(|e| {
                                    e.key.as_str().is_some_and(|t| {
                                        !t.is_empty()
                                            && (t == k
                                                || value.is_some() && value_id(&e.key) == value)
                                    })
                                }),
                                None => {
                                    let mut seen: HashSet<KeyId> = HashSet::default();
                                    for e in siblings {
                                        if let Some(t) = e.key.as_str().filter(|t| !t.is_empty()) {
                                            seen.insert(KeyId::Text(t.to_owned()));
                                            seen.extend(value_id(&e.key));
                                        }
                                    }
                                    let dup = insert(&mut seen);
                                    f.keys_seen = Some(seen);
                                    dup
                                }
                            }
                        }
                    };
                    if dup {
                        let text = node.as_str().or(alias.as_ref().map(|(k, _)| k.as_str()));
                        let msg = format!("duplicate key {:?}", text.unwrap_or_default());
                        return Err(self.err(at, first_line, msg));
                    }
                    f.key = Some(node);
                    f.key_line = last_line;
                    f.key_end = end;
                    Slot::Key
                }
                Some(key) => {
                    if !f.flow && !node.is_flow() {
                        if let Repr::Seq { .. } = node.repr {
                            if self.seq_indent.is_none() && !node.items().is_empty() {
                                let ind = node.layout().indent;
                                self.seq_indent = Some(if ind == 0 {
                                    SeqIndent::Compact
                                } else {
                                    SeqIndent::Wide
                                });
                            }
                        }
                    }
                    self.entries.push(Entry { key, value: node });
                    Slot::Value
                }
            },
            Some(f) => {
                let dash_col = f.col.unwrap_or(0);
                if let Some(sp) = self.split.as_mut().filter(|sp| sp.depth == Some(depth)) {
                    let end = end_of_line(self.src, self.content_end.max(sp.next));
                    let text = self.src.get(sp.next..end).unwrap_or("");
                    sp.next = end;
                    let seq_indent = self.seq_indent.unwrap_or_default();
                    (sp.each)(
                        node,
                        SplitItem {
                            text,
                            dash_col,
                            seq_indent,
                        },
                    );
                    self.started_collection = false;
                    self.done = None;
                    return Ok(());
                }
                self.items.push(node);
                Slot::Item
            }
        };
        self.started_collection = false;
        self.done = Some(Done {
            slot,
            depth,
            first_line,
            last_line,
        });
        Ok(())
    }

    fn push_doc(&mut self, doc: Document<'a>) {
        if let Some(prev) = self.held.replace(doc) {
            (self.each)(prev);
            self.handed += 1;
        }
    }

    pub(super) fn finish(mut self) -> Option<std::ops::Range<usize>> {
        if let Some(doc) = self.doc.take() {
            self.push_doc(doc);
        }
        if let Some(last) = self.held.take() {
            (self.each)(last);
        }
        self.split.and_then(|s| s.range)
    }
}

/// Whether a quoted scalar on one line is written as the emitter would write it anew (so no
/// source text needs keeping), when that is plain to see: ASCII text with nothing to escape
/// and no tag or anchor, inside the quotes of its style. `None`: ask the emitter
/// ([`canonical_inline`]).
fn quoted_as_written(node: &Node<'_>, raw: &str) -> Option<bool> {
    let Repr::Scalar { text, style, .. } = &node.repr else {
        return None;
    };
    let quote = match style {
        ScalarStyle::DoubleQuoted => b'"',
        ScalarStyle::SingleQuoted => b'\'',
        _ => return None,
    };
    if node.tag().is_some() || node.anchor().is_some() {
        return None;
    }
    let simple = text
        .bytes()
        .all(|c| (0x20..0x7f).contains(&c) && c != quote && c != b'\\');
    if !simple {
        return None;
    }
    let r = raw.as_bytes();
    Some(
        r.len() == text.len() + 2
            && r.first() == Some(&quote)
            && r.last() == Some(&quote)
            && &raw[1..raw.len() - 1] == text.as_ref(),
    )
}

/// A block scalar header line without its trailing comment.
fn strip_comment(header: &str) -> &str {
    match header.find(" #").or_else(|| header.find("\t#")) {
        Some(i) => header[..i].trim_end(),
        None => header.trim_end(),
    }
}

/// `tag` in verbatim form when its handle (`!name!`, `!!` or `!`) is declared by one of the
/// `%TAG` lines among `directives`; `None` when it keeps its written form.
fn resolve_tag_handle(tag: &str, directives: &[Cow<'_, str>]) -> Option<String> {
    if tag.starts_with("!<") || directives.is_empty() {
        return None;
    }
    let rest = tag.strip_prefix('!')?;
    let (handle, suffix) = match rest.find('!') {
        Some(i)
            if rest[..i]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-') =>
        {
            (&tag[..i + 2], &rest[i + 1..])
        }
        _ => ("!", rest),
    };
    directives.iter().find_map(|d| {
        let mut words = d.split_whitespace();
        (words.next() == Some("%TAG") && words.next() == Some(handle))
            .then(|| words.next())
            .flatten()
            .map(|prefix| format!("!<{prefix}{suffix}>"))
    })
}
