//! The adapter over `granit-parser`, the only file that knows the parser crate: its events as
//! the builder reads them ([`Ev`]), for a stream or for a run of its documents ([`Episode`]),
//! read as Go's YAML libraries read them.
//!
//! **Read as Go reads.** kubectl, kustomize and kpt read YAML with go-yaml (v2, and v3 through
//! kyaml), which accept a few forms YAML 1.2 refuses and `granit-parser` refuses with it:
//!
//! * the continuation lines of a quoted scalar at or left of the indentation of the block
//!   collection holding it (go-yaml does not check their indentation at all);
//! * tabs in the leading white space of a quoted scalar's continuation lines, and of the lines
//!   of a flow collection (go-yaml reads them as separation);
//! * `\'` in a double-quoted scalar (a single quote);
//! * a comment right after a token, without white space before its `#` (`"a"# c`, `[a]# c`,
//!   `[a,# c`, `|# c`): go-yaml starts a comment wherever a token may start;
//! * a block scalar's header (`|`, `>-`, ...) on the line after its key, at the key's column
//!   (`key:\n|\n  text`): a block scalar is never a key, so go-yaml takes it for the value.
//!
//! (Flow collections whose lines stand at or left of the enclosing block's indentation,
//! closing brackets included, `granit-parser` reads already.) None of these changes a value:
//! the leading white space of those lines is not content. So when `granit-parser` refuses one
//! of them, the episode reads a copy of the text in which exactly that construct is respelled
//! in YAML 1.2 — its continuation lines indented to the column of its opening quote, leading
//! tabs turned into spaces, `\'` written `\x27`, a space put before the `#` or the block
//! header — and maps every position back to the original text. The construct is found from
//! the error's place and the text after the last event handed over (`locate`); an error that
//! is not one of these forms, or whose construct cannot be found, is reported as it is. Each
//! respelling costs a new parse of the episode's text, so their number is bounded
//! ([`REPARSE_BUDGET`]).
//!
//! What it must not do: build trees (the builder does), or read anything as Go does that Go
//! refuses: a document marker at the start of a quoted scalar's line stays an error, as do
//! unknown escapes other than `\'`.

use std::borrow::Cow;

use granit_parser::{
    ErrorKind, Event, Options, Parser, Placement, ScalarStyle as GStyle, ScanError, Span, StrInput,
    StructureStyle,
};

use super::event::{Ev, EvKind, Style, NO_OFFSET};
use super::parse::ParseError;
use super::MAX_DEPTH;

/// Bytes of text parsed again, beyond the first parse, for the respellings of one episode: this
/// much plus [`REPARSE_FACTOR`] times the episode's text read so far. A document that needs
/// more (thousands of Go-only constructs in a document the fast reader does not read) gets the
/// parser's error.
pub(crate) const REPARSE_BUDGET: usize = 64 << 20;
const REPARSE_FACTOR: usize = 16;

/// The parser's options: anchors reported as events, nesting bounded by [`MAX_DEPTH`].
fn options() -> Options {
    let mut opts = Options::default();
    opts.emit_anchor_events = true;
    opts.block_nesting_limit = MAX_DEPTH;
    opts.flow_nesting_limit = MAX_DEPTH;
    // Long runs of commented-out YAML are common in real files.
    opts.max_buffered_comment_events = 1 << 20;
    opts
}

/// Where an episode starts: a byte of the text (at a document boundary, see `parse.rs`), its
/// 1-based line, and how many anchors the stream defined before it (the parser numbers them
/// through the stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Start {
    pub(crate) byte: usize,
    pub(crate) line: usize,
    pub(crate) anchors: usize,
}

impl Start {
    pub(crate) const STREAM: Start = Start {
        byte: 0,
        line: 1,
        anchors: 0,
    };
}

/// One respelling: `del` bytes of the original text at `at` replaced by `ins`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edit {
    at: usize,
    del: usize,
    ins: String,
}

/// The text an episode parses: the original from its start, with the edits applied, and how
/// to map positions in it back.
struct Copy {
    text: String,
    /// Per edit (in order): where its replacement starts in the copy, where it ends, and the
    /// difference copy - original after it.
    marks: Vec<(usize, usize, isize)>,
}

impl Copy {
    /// `src[from..]` with `edits` (sorted, in original positions, not overlapping).
    fn new(src: &str, from: usize, edits: &[Edit]) -> Copy {
        let mut text = String::with_capacity(src.len() - from + edits.len() * 8);
        let mut marks = Vec::with_capacity(edits.len());
        let mut at = from;
        let mut delta = 0isize;
        for e in edits {
            text.push_str(&src[at..e.at]);
            let start = text.len();
            text.push_str(&e.ins);
            delta += e.ins.len() as isize - e.del as isize;
            marks.push((start, text.len(), delta));
            at = e.at + e.del;
        }
        text.push_str(&src[at..]);
        Copy { text, marks }
    }

    /// The original position (relative to the episode's start) of position `p` of the copy;
    /// inside a replacement, the start of what it replaced (or its end, past that).
    fn orig(&self, p: usize, edits: &[Edit], from: usize) -> usize {
        let i = self.marks.partition_point(|&(start, _, _)| start <= p);
        if i == 0 {
            return p;
        }
        let (start, end, delta) = self.marks[i - 1];
        let e = &edits[i - 1];
        if p < end {
            return e.at - from + (p - start).min(e.del);
        }
        (p as isize - delta) as usize
    }

    /// The copy's position of original position `o` (relative to the episode's start).
    fn of_orig(&self, o: usize, edits: &[Edit], from: usize) -> usize {
        let i = edits.partition_point(|e| e.at - from <= o);
        if i == 0 {
            return o;
        }
        let (start, _, delta) = self.marks[i - 1];
        let e = &edits[i - 1];
        if o < e.at - from + e.del {
            return start;
        }
        (o as isize + delta) as usize
    }
}

/// `granit-parser`'s events for a run of documents of `src` from a [`Start`], as the builder
/// reads them, read as Go reads (see the module's doc); positions are the original text's. A
/// parse error ends them.
///
/// With `docs = Some(n)` the episode ends before the first document start that follows its
/// `n`-th document end with nothing but comments between (where a reader of documents can
/// take over: [`Episode::resume`] tells where), or at the end of the stream. With `None` it
/// reads to the end of the stream.
pub(crate) struct Episode<'a> {
    src: &'a str,
    start: Start,
    /// How many documents it reads (see [`Stopper`]), and where it stands.
    docs: Option<usize>,
    stop: Stopper,
    source: Source<'a>,
    /// Events handed over, and the furthest original position any of them reached.
    handed: usize,
    last_end: usize,
    /// Open flow collections (brackets) after the last event handed over.
    depth: usize,
    edits: Vec<Edit>,
    /// Whether quoted scalars may still be guessed (see [`Episode::respell`]); the original
    /// positions of the guessed edits, and the spans of the guessed scalars.
    guessing: bool,
    guesses: crate::hash::HashSet<usize>,
    guessed: Vec<(usize, usize)>,
    reparsed: usize,
    /// Where a reader of documents takes over, once the episode has ended there.
    resume: Option<Start>,
    anchors: usize,
    done: bool,
}

enum Source<'a> {
    Direct(Box<Parser<'a, StrInput<'a>>>),
    /// Events read from a respelled copy, positions already mapped back.
    Buffered(std::vec::IntoIter<Result<Ev<'a>, ParseError>>),
}

impl<'a> Episode<'a> {
    pub(crate) fn new(src: &'a str, start: Start, docs: Option<usize>) -> Episode<'a> {
        let mut parser = Parser::new_from_str_with_options(&src[start.byte..], options());
        parser.set_anchor_offset(start.anchors + 1);
        Episode {
            src,
            start,
            docs,
            stop: Stopper::new(docs),
            source: Source::Direct(Box::new(parser)),
            handed: 0,
            last_end: start.byte,
            depth: 0,
            edits: Vec::new(),
            guessing: true,
            guesses: crate::hash::HashSet::default(),
            guessed: Vec::new(),
            reparsed: 0,
            resume: None,
            anchors: start.anchors,
            done: false,
        }
    }

    /// Where the episode stopped for a reader of documents to go on: the start of the line of
    /// the next document's start, its line, and the anchors defined before it. `None` while it
    /// runs, and when it ended with the stream or an error.
    pub(crate) fn resume(&self) -> Option<Start> {
        self.resume
    }

    /// Bytes of the text the episode covered (from its start to where it ended or got to).
    pub(crate) fn covered(&self) -> usize {
        self.resume.map_or(self.last_end, |r| r.byte) - self.start.byte
    }

    /// The next event from the source, positions mapped to the original text.
    fn raw_next(&mut self) -> Option<Result<Ev<'a>, ParseError>> {
        match &mut self.source {
            Source::Buffered(it) => it.next(),
            Source::Direct(parser) => {
                let item = parser.next()?;
                let (src, start) = (self.src, self.start);
                match item {
                    Ok((event, span)) => Some(Ok(shift(from_granit(event, &span), start))),
                    Err(e) => match self.respell(&e) {
                        Some(()) => self.raw_next(),
                        None => Some(Err(error_at(src, start, &e, None))),
                    },
                }
            }
        }
    }

    /// Respells the construct the parser refused with `e` if it is one of Go's forms (and any
    /// further one the respelled text shows), and switches to the events of the respelled copy,
    /// the ones handed over skipped. `None`: not one of them, or the budget is spent.
    ///
    /// A quoted scalar found this way is seldom alone (a CRD's descriptions are written alike
    /// throughout), and each parse reads the episode from its start: so with the first one,
    /// every multi-line quoted scalar [`candidates`] finds after it is respelled at once. A
    /// guess is kept only if the parser confirms it — a quoted scalar event exactly where it
    /// was guessed, for every guess the events reach; otherwise all the guesses are dropped and
    /// the episode goes on one construct at a time.
    fn respell(&mut self, e: &ScanError) -> Option<()> {
        let from = self.start.byte;
        let mut err = e.clone();
        let mut edits = self.edits.clone();
        let (mut last_end, mut depth) = (self.last_end, self.depth);
        // Whether `err` is one still to respell (not when reading again without the guesses).
        let mut fresh = true;
        // The events of the last copy read, if any.
        let mut read: Option<Vec<Result<Ev<'a>, ParseError>>> = None;
        loop {
            if fresh {
                let copy = Copy::new(self.src, from, &edits);
                let at = copy.of_orig(last_end - from, &edits, from);
                let Some(found) = locate(&copy.text, at, depth, &err) else {
                    // Not one of Go's forms: the error stands, after what the copy read.
                    return self.settle(read, edits, Some(err));
                };
                let mut changed = false;
                for (at, del, ins) in found {
                    let o = copy.orig(at, &edits, from) + from;
                    changed |= merge(&mut edits, o, del, ins);
                }
                if !changed {
                    return self.settle(read, edits, Some(err));
                }
                // Guess from here unless guesses reach here already (a round of guesses ends
                // where the lexer stops: at the next document, or at what it does not follow).
                let err_at = err.marker().byte_offset().unwrap_or(0);
                let past = self
                    .guessed
                    .last()
                    .is_none_or(|&(_, end)| copy.orig(err_at, &edits, from) + from > end);
                if self.guessing && past && is_quoted_form(&err) {
                    self.guess(&mut edits, &copy, at, depth);
                }
            }
            let reached = err.marker().byte_offset().unwrap_or(0);
            let budget = REPARSE_BUDGET + REPARSE_FACTOR * reached;
            let Some((events, next)) = self.read_copy(&edits, budget) else {
                // Read again too often: the error stands, saying why.
                let mut e = error_at(self.src, self.start, &err, None);
                e.message = format!(
                    "{} (one of the forms Go reads, but the document holds more of them than \
                     are read again here: {} bytes)",
                    e.message, self.reparsed
                );
                self.source = Source::Buffered(vec![Err(e)].into_iter());
                return Some(());
            };
            (last_end, depth) = frontier(self.src, from, &events);
            let wrong = !self.confirmed(&events, last_end);
            match next {
                // A guess was wrong, or an error that is not Go's may be a guess's doing: read
                // again without them, and go on one construct at a time.
                _ if wrong && !self.guesses.is_empty() => self.drop_guesses(&mut edits),
                Some(ref ne) if !is_go_form(ne) && !self.guesses.is_empty() => {
                    self.drop_guesses(&mut edits)
                }
                Some(ne) if is_go_form(&ne) => {
                    err = ne;
                    fresh = true;
                    read = Some(events);
                    continue;
                }
                next => return self.settle(Some(events), edits, next),
            }
            fresh = false;
        }
    }

    /// Goes on with the events of the copy respelled with `edits` (`events`, read to the
    /// parser's error `err` if any), the ones handed over skipped. `None` when no copy was read.
    fn settle(
        &mut self,
        events: Option<Vec<Result<Ev<'a>, ParseError>>>,
        edits: Vec<Edit>,
        err: Option<ScanError>,
    ) -> Option<()> {
        let mut events = events?;
        if let Some(e) = err {
            let copy = Copy::new(self.src, self.start.byte, &edits);
            events.push(Err(error_at(
                self.src,
                self.start,
                &e,
                Some((&copy, &edits)),
            )));
        }
        self.edits = edits;
        let rest: Vec<_> = events.into_iter().skip(self.handed).collect();
        self.source = Source::Buffered(rest.into_iter());
        Some(())
    }

    /// Takes the guessed respellings out of `edits`, and guesses no more.
    fn drop_guesses(&mut self, edits: &mut Vec<Edit>) {
        edits.retain(|e| !self.guesses.contains(&e.at));
        self.guesses.clear();
        self.guessed.clear();
        self.guessing = false;
    }

    /// Adds the respellings of the multi-line quoted scalars [`candidates`] finds in `copy`
    /// after `at` (between tokens, `depth` flow collections open) to `edits`, and notes them
    /// as guesses.
    fn guess(&mut self, edits: &mut Vec<Edit>, copy: &Copy, at: usize, depth: usize) {
        let from = self.start.byte;
        let b = copy.text.as_bytes();
        let mut new = Vec::new();
        for (open, depth) in candidates(b, at, depth) {
            let Some(found) = continuation_edits(b, open, depth) else {
                continue;
            };
            if found.is_empty() {
                continue;
            }
            let close = quoted_end(b, open).unwrap_or(open);
            let o = |p: usize| copy.orig(p, edits, from) + from;
            self.guessed.push((o(open), o(close) + 1));
            for (at, del, ins) in found {
                new.push((o(at), del, ins));
            }
        }
        for (o, del, ins) in new {
            if merge(edits, o, del, ins) {
                self.guesses.insert(o);
            }
        }
    }

    /// Whether every guessed quoted scalar that `events` reach (those starting before `end`)
    /// is a quoted scalar event where it was guessed.
    fn confirmed(&self, events: &[Result<Ev<'a>, ParseError>], end: usize) -> bool {
        let quoted: std::collections::HashSet<(usize, usize)> = events
            .iter()
            .flatten()
            .filter(|e| {
                matches!(
                    e.kind,
                    EvKind::Scalar(_, Style::SingleQuoted | Style::DoubleQuoted)
                )
            })
            .map(|e| (e.sb, e.eb))
            .collect();
        self.guessed
            .iter()
            .filter(|(open, _)| *open < end)
            .all(|g| quoted.contains(g))
    }

    /// The events of the copy with `edits`, as far as this episode reads (or to an error,
    /// returned apart).
    #[allow(clippy::type_complexity)]
    fn read_copy(
        &mut self,
        edits: &[Edit],
        budget: usize,
    ) -> Option<(Vec<Result<Ev<'a>, ParseError>>, Option<ScanError>)> {
        let copy = Copy::new(self.src, self.start.byte, edits);
        self.reparsed += copy.text.len();
        if self.reparsed > budget {
            return None;
        }
        let mut parser = Parser::new_from_str_with_options(&copy.text, options());
        parser.set_anchor_offset(self.start.anchors + 1);
        let mut stop = Stopper::new(self.docs);
        let mut events = Vec::new();
        for item in parser {
            match item {
                Err(e) => return Some((events, Some(e))),
                Ok((Event::StreamStart, _)) if self.start.byte > 0 => {}
                Ok((event, span)) => {
                    let ev = from_granit(event, &span);
                    let ev = self.mapped(ev, &copy, edits);
                    let end = stop.sees(&ev, self.src);
                    events.push(Ok(ev));
                    if end {
                        break;
                    }
                }
            }
        }
        Some((events, None))
    }

    /// An event of the copy with its positions and borrowed text in the original's terms.
    fn mapped(&self, ev: Ev<'_>, copy: &Copy, edits: &[Edit]) -> Ev<'a> {
        let from = self.start.byte;
        let map = |p: usize| {
            if p == NO_OFFSET {
                p
            } else {
                copy.orig(p, edits, from) + from
            }
        };
        let text = |c: Cow<'_, str>| -> Cow<'a, str> {
            if let Cow::Borrowed(s) = &c {
                let base = copy.text.as_ptr() as usize;
                let at = (s.as_ptr() as usize).wrapping_sub(base);
                if at <= copy.text.len() {
                    let o = copy.orig(at, edits, from) + from;
                    if let Some(t) = self.src.get(o..o + s.len()).filter(|t| t == s) {
                        return Cow::Borrowed(t);
                    }
                }
            }
            Cow::Owned(c.into_owned())
        };
        let kind = match ev.kind {
            EvKind::Comment(t, r) => EvKind::Comment(text(t), r),
            EvKind::Anchor(i, t) => EvKind::Anchor(i, text(t)),
            EvKind::Scalar(t, s) => EvKind::Scalar(text(t), s),
            EvKind::StreamStart => EvKind::StreamStart,
            EvKind::StreamEnd => EvKind::StreamEnd,
            EvKind::DocStart(x) => EvKind::DocStart(x),
            EvKind::DocEnd => EvKind::DocEnd,
            EvKind::Alias(i) => EvKind::Alias(i),
            EvKind::MapStart(f) => EvKind::MapStart(f),
            EvKind::SeqStart(f) => EvKind::SeqStart(f),
            EvKind::MapEnd => EvKind::MapEnd,
            EvKind::SeqEnd => EvKind::SeqEnd,
            EvKind::Other => EvKind::Other,
        };
        Ev {
            kind,
            sb: map(ev.sb),
            eb: map(ev.eb),
            line: ev.line + self.start.line - 1,
            end_line: ev.end_line + self.start.line - 1,
            tag: ev.tag.map(|(s, e)| (map(s), map(e))),
        }
    }
}

/// The furthest original position `events` reached, and the flow collections (brackets) open
/// after them.
fn frontier(src: &str, from: usize, events: &[Result<Ev<'_>, ParseError>]) -> (usize, usize) {
    let bytes = src.as_bytes();
    let mut end = from;
    let mut depth = 0usize;
    for ev in events.iter().flatten() {
        if ev.eb != NO_OFFSET {
            end = end.max(ev.eb);
        }
        match ev.kind {
            EvKind::SeqStart(true) | EvKind::MapStart(true)
                if matches!(bytes.get(ev.sb), Some(b'[' | b'{')) =>
            {
                depth += 1
            }
            EvKind::SeqEnd | EvKind::MapEnd if matches!(bytes.get(ev.sb), Some(b']' | b'}')) => {
                depth = depth.saturating_sub(1)
            }
            _ => {}
        }
    }
    (end, depth)
}

/// Adds the edit (`del` original bytes at `at` replaced by `ins`) to `edits`, sorted; a line
/// respelled again keeps what it replaced in the original. Whether `edits` changed.
fn merge(edits: &mut Vec<Edit>, at: usize, del: usize, ins: String) -> bool {
    match edits.binary_search_by_key(&at, |x| x.at) {
        Ok(i) if edits[i].ins != ins => {
            edits[i].ins = ins;
            true
        }
        Ok(_) => false,
        Err(i) => {
            edits.insert(i, Edit { at, del, ins });
            true
        }
    }
}

/// Whether the parser's error is about a quoted scalar's continuation lines.
fn is_quoted_form(e: &ScanError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::InvalidQuotedScalarIndent | ErrorKind::TabInIndentation
    )
}

/// Whether the parser's error is one a respelling may lift.
fn is_go_form(e: &ScanError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::InvalidQuotedScalarIndent
            | ErrorKind::TabInIndentation
            | ErrorKind::TabInBlockIndentation
            | ErrorKind::UnknownQuotedScalarEscape
            | ErrorKind::CommentNotSeparated
            | ErrorKind::SimpleKeyExpected
    )
}

/// Decides where an episode that reads `docs` documents ends (see [`Episode`]): at the first
/// `---` after its `docs`-th document end with nothing but comments between. A document that
/// starts otherwise (implicitly after `...`, or after directives) is read too.
#[derive(Clone, Copy, Debug)]
struct Stopper {
    docs: Option<usize>,
    ends: usize,
    /// Where the last document end ended.
    after: usize,
}

impl Stopper {
    fn new(docs: Option<usize>) -> Stopper {
        Stopper {
            docs,
            ends: 0,
            after: 0,
        }
    }

    /// Takes the next event (of `src`); true when the episode ends at it (a document start
    /// that is not its own, or the end of the stream).
    fn sees(&mut self, ev: &Ev<'_>, src: &str) -> bool {
        match ev.kind {
            EvKind::StreamEnd => true,
            EvKind::DocEnd => {
                self.ends += 1;
                self.after = ev.eb;
                false
            }
            EvKind::DocStart(explicit) => {
                let Some(n) = self.docs.as_mut() else {
                    return false;
                };
                if self.ends < *n {
                    return false;
                }
                let between = src.get(self.after..ev.sb).unwrap_or("%");
                let directives = between.starts_with('%') || between.contains("\n%");
                if explicit && !directives {
                    return true;
                }
                *n += 1;
                false
            }
            _ => false,
        }
    }
}

impl<'a> Iterator for Episode<'a> {
    type Item = Result<Ev<'a>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut item = self.raw_next();
        if self.start.byte > 0 && self.handed == 0 {
            // A run of documents inside the stream: the stream started before it.
            if let Some(Ok(Ev {
                kind: EvKind::StreamStart,
                ..
            })) = item
            {
                item = self.raw_next();
            }
        }
        let Some(Ok(ev)) = item else {
            self.done = true;
            return item;
        };
        let end = self.stop.sees(&ev, self.src);
        if end && matches!(ev.kind, EvKind::DocStart(_)) {
            // Another reader goes on from this line.
            let ls = self.src[..ev.sb.min(self.src.len())]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            self.resume = Some(Start {
                byte: ls,
                line: ev.line,
                anchors: self.anchors,
            });
            self.done = true;
            return None;
        }
        if end {
            self.done = true;
        }
        self.handed += 1;
        if ev.eb != NO_OFFSET {
            self.last_end = self.last_end.max(ev.eb);
        }
        let bytes = self.src.as_bytes();
        match ev.kind {
            EvKind::Anchor(..) => self.anchors += 1,
            EvKind::SeqStart(true) | EvKind::MapStart(true)
                if matches!(bytes.get(ev.sb), Some(b'[' | b'{')) =>
            {
                self.depth += 1
            }
            EvKind::SeqEnd | EvKind::MapEnd if matches!(bytes.get(ev.sb), Some(b']' | b'}')) => {
                self.depth = self.depth.saturating_sub(1)
            }
            _ => {}
        }
        Some(Ok(ev))
    }
}

/// An event of a parse of `src[start.byte..]` in the whole text's terms.
fn shift(ev: Ev<'_>, start: Start) -> Ev<'_> {
    let by = |p: usize| if p == NO_OFFSET { p } else { p + start.byte };
    Ev {
        sb: by(ev.sb),
        eb: by(ev.eb),
        line: ev.line + start.line - 1,
        end_line: ev.end_line + start.line - 1,
        tag: ev.tag.map(|(s, e)| (by(s), by(e))),
        kind: ev.kind,
    }
}

/// The parser's error as a [`ParseError`] at its place in the original text (from a parse of
/// the episode's text, or of its respelled `copy`).
fn error_at(src: &str, start: Start, e: &ScanError, copy: Option<(&Copy, &[Edit])>) -> ParseError {
    let m = e.marker();
    let line = m.line() + start.line - 1;
    let byte = m.byte_offset().map(|b| match copy {
        Some((c, edits)) => c.orig(b, edits, start.byte) + start.byte,
        None => b + start.byte,
    });
    let column = match byte.filter(|&b| b <= src.len() && src.is_char_boundary(b)) {
        Some(b) => {
            let ls = src[..b].rfind('\n').map_or(0, |i| i + 1);
            src[ls..b].chars().count() + 1
        }
        None => m.col() + 1,
    };
    ParseError {
        line,
        column,
        message: e.info().replace('\n', " "),
    }
}

/// `granit-parser`'s events for a whole stream, read as Go reads: what the fast reader must
/// agree with.
pub(crate) fn events(src: &str) -> Episode<'_> {
    Episode::new(src, Start::STREAM, None)
}

/// One of the parser's events as the builder reads it.
fn from_granit<'a>(event: Event<'a>, span: &Span) -> Ev<'a> {
    let (sb, eb) = span
        .byte_range()
        .map_or((NO_OFFSET, NO_OFFSET), |r| (r.start, r.end));
    let style = |s: GStyle| match s {
        GStyle::Plain => Style::Plain,
        GStyle::SingleQuoted => Style::SingleQuoted,
        GStyle::DoubleQuoted => Style::DoubleQuoted,
        GStyle::Literal => Style::Literal,
        GStyle::Folded => Style::Folded,
    };
    let kind = match event {
        Event::StreamStart => EvKind::StreamStart,
        Event::StreamEnd => EvKind::StreamEnd,
        Event::DocumentStart(explicit, _) => EvKind::DocStart(explicit),
        Event::DocumentEnd => EvKind::DocEnd,
        Event::Comment(text, placement) => EvKind::Comment(text, placement == Placement::Right),
        Event::Anchor(id, name) => EvKind::Anchor(id, name),
        Event::Alias(id) => EvKind::Alias(id),
        Event::Scalar(value, s, _, _) => EvKind::Scalar(value, style(s)),
        Event::MappingStart(s, _, _) => EvKind::MapStart(s == StructureStyle::Flow),
        Event::SequenceStart(s, _, _) => EvKind::SeqStart(s == StructureStyle::Flow),
        Event::MappingEnd => EvKind::MapEnd,
        Event::SequenceEnd => EvKind::SeqEnd,
        _ => EvKind::Other,
    };
    let tag = span
        .tag_span()
        .and_then(|t| t.byte_range())
        .map(|r| (r.start, r.end));
    Ev {
        kind,
        sb,
        eb,
        line: span.start.line(),
        end_line: span.end.line(),
        tag,
    }
}

/// What the text is inside at some place, as [`scan`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inside {
    /// A quoted scalar opened at this byte (`'` or `"`), `depth` flow collections around it.
    Quoted { open: usize, depth: usize },
    /// Between tokens, inside `depth` flow collections (0: block context).
    Between { depth: usize },
}

/// The respelling for the parser's error `err` on `text` (the episode's copy), given that the
/// last event handed over ended at `from` with `depth` flow collections open: the edits, in the
/// copy's positions, or `None` when the error is not one of Go's forms (or its construct is
/// not found).
fn locate(
    text: &str,
    from: usize,
    depth: usize,
    err: &ScanError,
) -> Option<Vec<(usize, usize, String)>> {
    let b = text.as_bytes();
    let at = err.marker().byte_offset()?;
    let line_start = |p: usize| {
        b[..p.min(b.len())]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1)
    };
    match err.kind() {
        ErrorKind::UnknownQuotedScalarEscape => {
            // At the opening quote: `\'` is Go's, any other unknown escape is not.
            if b.get(at) != Some(&b'"') {
                return None;
            }
            let close = quoted_end(b, at)?;
            let mut edits = Vec::new();
            let mut i = at + 1;
            while i < close {
                if b[i] == b'\\' {
                    match b.get(i + 1) {
                        Some(b'\'') => edits.push((i + 1, 1, "x27".to_owned())),
                        Some(c) if KNOWN_ESCAPES.contains(c) => {}
                        Some(b'\r' | b'\n') => {}
                        _ => return None,
                    }
                    i += 2;
                } else {
                    i += 1;
                }
            }
            Some(edits)
        }
        ErrorKind::InvalidQuotedScalarIndent | ErrorKind::TabInIndentation => {
            let ls = line_start(at);
            match scan(b, from, depth, ls)? {
                Inside::Quoted { open, depth } => Some(continuation_edits(b, open, depth)?),
                Inside::Between { .. } => None,
            }
        }
        ErrorKind::TabInBlockIndentation => {
            let ls = line_start(at);
            match scan(b, from, depth, ls)? {
                Inside::Quoted { open, depth } if depth > 0 => {
                    Some(continuation_edits(b, open, depth)?)
                }
                Inside::Between { depth } if depth > 0 => flow_tab_edits(b, ls, depth),
                _ => None,
            }
        }
        ErrorKind::SimpleKeyExpected if matches!(b.get(at), Some(b'|' | b'>')) => {
            // A block scalar's header on the line after its key, at the key's column: Go reads
            // it as the key's value (a block scalar is never a key). One space more makes it so
            // for the parser too; the body's indentation does not depend on the header's.
            let ls = line_start(at);
            (b[ls..at].iter().all(|&c| c == b' ') && key_above(b, ls) == Some(at - ls))
                .then(|| vec![(at, 0, " ".to_owned())])
        }
        ErrorKind::CommentNotSeparated if b.get(at) == Some(&b'#') => {
            // Go starts a comment at a `#` where a token may start, spaced or not.
            Some(vec![(at, 0, " ".to_owned())])
        }
        _ => None,
    }
}

/// The column of the key that the last line with content before the line starting at `ls`
/// holds, when that line is `KEY:` with nothing after it (but a comment): a key waiting for
/// its value. `- ` before the key is skipped.
fn key_above(b: &[u8], ls: usize) -> Option<usize> {
    let mut end = ls.checked_sub(1)?;
    loop {
        let start = b[..end]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        let line = &b[start..end];
        let text = line.iter().position(|&c| c != b' ' && c != b'\r');
        match text {
            Some(t) if line[t] != b'#' => {
                let mut k = t;
                while line[k..].starts_with(b"- ") {
                    k += 2;
                    while line.get(k) == Some(&b' ') {
                        k += 1;
                    }
                }
                let body = match line.windows(2).position(|w| w == b" #") {
                    Some(c) => &line[..c],
                    None => line,
                };
                let body = body.trim_ascii_end();
                return (body.ends_with(b":") && body.len() > k + 1).then_some(k);
            }
            _ => end = start.checked_sub(1)?,
        }
    }
}

/// The escapes YAML 1.2 knows in a double-quoted scalar (after `\`), besides line breaks.
const KNOWN_ESCAPES: &[u8] = b"0abt\tnvfre \"/\\N_LPxuU";

/// The byte of the quote that closes the quoted scalar opened at `open`.
fn quoted_end(b: &[u8], open: usize) -> Option<usize> {
    let q = *b.get(open)?;
    let mut i = open + 1;
    loop {
        match *b.get(i)? {
            b'\'' if q == b'\'' => {
                if b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                return Some(i);
            }
            b'"' if q == b'"' => return Some(i),
            b'\\' if q == b'"' => i += 2,
            _ => i += 1,
        }
    }
}

/// Whether the line starting at `ls` starts with a document marker.
fn marker_line(b: &[u8], ls: usize) -> bool {
    let m = b.get(ls..ls + 3);
    matches!(m, Some(b"---" | b"..."))
        && matches!(b.get(ls + 3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

/// The column (in characters) of byte `p` in its line.
fn column(b: &[u8], p: usize) -> usize {
    let ls = b[..p]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    b[ls..p].iter().filter(|&&c| c & 0xc0 != 0x80).count()
}

/// Respells the continuation lines of the quoted scalar opened at `open`: in block context
/// (`depth` 0) indented at least to the opening quote's column, and their leading tabs made
/// spaces. A line that starts with a document marker is left alone (the parser refuses it, as
/// Go does).
fn continuation_edits(b: &[u8], open: usize, depth: usize) -> Option<Vec<(usize, usize, String)>> {
    let close = quoted_end(b, open)?;
    let want = if depth == 0 { column(b, open) } else { 0 };
    let mut edits = Vec::new();
    let mut i = open;
    while let Some(n) = b[i..close].iter().position(|&c| c == b'\n') {
        let ls = i + n + 1;
        i = ls;
        if marker_line(b, ls) {
            continue;
        }
        let w = b[ls..]
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        let tabs = b[ls..ls + w].contains(&b'\t');
        let at_end = matches!(b.get(ls + w), None | Some(b'\r' | b'\n'));
        if tabs || (w < want && !at_end) {
            edits.push((ls, w, " ".repeat(w.max(if at_end { 0 } else { want }))));
        }
    }
    Some(edits)
}

/// Makes spaces of the leading tabs of every line of the flow collections open at `ls` (a line
/// start, `depth` collections deep), to where they close.
fn flow_tab_edits(b: &[u8], ls: usize, depth: usize) -> Option<Vec<(usize, usize, String)>> {
    let end = flow_end(b, ls, depth)?;
    let mut edits = Vec::new();
    let mut s = ls;
    loop {
        let w = b[s..]
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        if b[s..s + w].contains(&b'\t') {
            edits.push((s, w, " ".repeat(w)));
        }
        match b[s..end].iter().position(|&c| c == b'\n') {
            Some(n) => s += n + 1,
            None => return Some(edits),
        }
    }
}

/// Where the flow collections open at `from` (`depth` deep, between tokens) close.
fn flow_end(b: &[u8], from: usize, depth: usize) -> Option<usize> {
    let mut d = depth;
    let mut i = from;
    while d > 0 {
        match *b.get(i)? {
            b'[' | b'{' => d += 1,
            b']' | b'}' => d -= 1,
            b'\'' | b'"' if token_start(b, i) => i = quoted_end(b, i)?,
            b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n') => {
                i += b[i..].iter().position(|&c| c == b'\n')?;
            }
            _ => {}
        }
        i += 1;
    }
    Some(i)
}

/// Whether a quote at `i` (in flow context) opens a scalar: it follows a separator or an
/// indicator, not text.
fn token_start(b: &[u8], i: usize) -> bool {
    i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'[' | b'{' | b',' | b':')
}

/// A token of [`Lexer`]: a quoted scalar (its opening and closing quotes), or anything else
/// (ending where the lexer stands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Quoted { open: usize, close: usize },
    Other,
}

/// A reading of YAML text token by token, good enough to find its quoted scalars from a place
/// between tokens: flow brackets are counted, comments, properties and indicators skipped,
/// plain scalars read to their end (in block context with their continuation lines, told by
/// their indentation), block scalars skipped by indentation. It stops (`None`) at what it does
/// not follow: a document marker, unbalanced brackets, a block scalar in flow context.
struct Lexer<'b> {
    b: &'b [u8],
    i: usize,
    depth: usize,
    /// The column of the key or dash that starts the current line's last entry.
    owner: usize,
    /// A plain scalar ended its line in block context: lines indented more than this column
    /// continue it.
    plain_owner: Option<usize>,
    /// Where the last token started.
    tok: usize,
}

impl<'b> Lexer<'b> {
    fn new(b: &'b [u8], i: usize, depth: usize) -> Lexer<'b> {
        let ls = b[..i]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |n| n + 1);
        let owner = b[ls..].iter().take_while(|&&c| c == b' ').count();
        Lexer {
            b,
            i,
            depth,
            owner,
            plain_owner: None,
            tok: i,
        }
    }

    fn blank(&self, at: usize) -> bool {
        matches!(self.b.get(at), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
    }

    /// The end of the line holding `i` (its `\n`, or the end of the text).
    fn eol(&self, i: usize) -> usize {
        self.b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |n| i + n)
    }

    /// Skips the lines after the one ending at `i` that are blank or indented more than
    /// `col`; gives where the first other line starts.
    fn skip_indented(&self, mut i: usize, col: usize) -> usize {
        while i < self.b.len() {
            let ls = i + 1;
            let w = self.b[ls..].iter().take_while(|&&c| c == b' ').count();
            let blank = matches!(self.b.get(ls + w), None | Some(b'\r' | b'\n'));
            if !blank && w <= col {
                return ls;
            }
            i = self.eol(ls);
        }
        self.b.len()
    }

    fn next(&mut self) -> Option<Tok> {
        let b = self.b;
        loop {
            let c = *b.get(self.i)?;
            self.tok = self.i;
            match c {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\n' => {
                    let ls = self.i + 1;
                    let w = b[ls..].iter().take_while(|&&c| c == b' ').count();
                    let content = !matches!(b.get(ls + w), None | Some(b'\r' | b'\n' | b'#'));
                    if self.depth == 0 && content {
                        if self.plain_owner.is_some_and(|o| w > o) {
                            // A plain scalar's continuation line.
                            self.i = self.eol(ls);
                            continue;
                        }
                        self.plain_owner = None;
                        self.owner = w;
                    }
                    if marker_line(b, ls) || b.get(ls) == Some(&b'%') {
                        return None;
                    }
                    self.i = ls;
                }
                b'#' => self.i = self.eol(self.i),
                b'[' | b'{' => {
                    self.depth += 1;
                    self.i += 1;
                    return Some(Tok::Other);
                }
                b']' | b'}' => {
                    self.depth = self.depth.checked_sub(1)?;
                    self.i += 1;
                    return Some(Tok::Other);
                }
                b',' | b':' if self.depth > 0 => {
                    self.i += 1;
                    return Some(Tok::Other);
                }
                b'-' | b'?' | b':' if self.blank(self.i + 1) => {
                    if c != b':' {
                        self.owner = column(b, self.i);
                    }
                    self.i += 1;
                    return Some(Tok::Other);
                }
                b'&' | b'*' | b'!' => {
                    while !(self.blank(self.i) || self.depth > 0 && b",[]{}".contains(&b[self.i])) {
                        self.i += 1;
                    }
                    return Some(Tok::Other);
                }
                b'\'' | b'"' => {
                    let open = self.i;
                    let close = quoted_end(b, open)?;
                    self.i = close + 1;
                    let mut k = self.i;
                    while matches!(b.get(k), Some(b' ' | b'\t')) {
                        k += 1;
                    }
                    if b.get(k) == Some(&b':') && self.depth == 0 {
                        self.owner = column(b, open);
                    }
                    return Some(Tok::Quoted { open, close });
                }
                b'|' | b'>' if self.depth == 0 => {
                    let end = self.eol(self.i);
                    self.i = self.skip_indented(end, self.owner);
                    return Some(Tok::Other);
                }
                b'|' | b'>' | b'%' | b',' | b'@' | b'`' => return None,
                _ => {
                    self.plain();
                    return Some(Tok::Other);
                }
            }
        }
    }

    /// A plain scalar from where the lexer stands: to the end of its line in block context (a
    /// key when `: ` follows), to a flow indicator in flow context; ` #` ends it in both.
    fn plain(&mut self) {
        let b = self.b;
        let start = self.i;
        while self.i < b.len() {
            match b[self.i] {
                b'\n' if self.depth == 0 => break,
                b'\r' if self.depth == 0 && b.get(self.i + 1) == Some(&b'\n') => break,
                b',' | b'[' | b']' | b'{' | b'}' if self.depth > 0 => break,
                b':' if self.blank(self.i + 1) => break,
                b'#' if matches!(b[self.i - 1], b' ' | b'\t' | b'\n') => break,
                _ => self.i += 1,
            }
        }
        if self.depth == 0 {
            match b.get(self.i) {
                Some(b':') => self.owner = column(b, start),
                Some(b'\r' | b'\n') | None => self.plain_owner = Some(self.owner),
                _ => {}
            }
        }
    }
}

/// Reads `b` from `from` (between tokens, `depth` flow collections open) to `to` (a line
/// start) and says what `to` is inside: a quoted scalar, or nothing (between tokens). `None`
/// when the text holds what [`Lexer`] does not follow, or `to` falls inside another token.
fn scan(b: &[u8], from: usize, depth: usize, to: usize) -> Option<Inside> {
    let mut lx = Lexer::new(b, from, depth);
    while lx.i < to {
        let depth = lx.depth;
        let token = lx.next();
        if lx.tok >= to {
            // The next token starts at or after `to`: `to` is between tokens.
            return Some(Inside::Between { depth });
        }
        match token {
            Some(Tok::Quoted { open, close }) if close >= to => {
                return Some(Inside::Quoted { open, depth });
            }
            // Another token that runs past `to`.
            Some(_) if lx.tok < to && lx.i > to => return None,
            Some(_) => {}
            None => return None,
        }
    }
    Some(Inside::Between { depth: lx.depth })
}

/// The quoted scalars that span lines in `b` after `from` (between tokens, `depth` flow
/// collections open), with the flow collections around each: guesses, as [`Lexer`] reads.
fn candidates(b: &[u8], from: usize, depth: usize) -> Vec<(usize, usize)> {
    let mut lx = Lexer::new(b, from, depth);
    let mut out = Vec::new();
    loop {
        let depth = lx.depth;
        match lx.next() {
            Some(Tok::Quoted { open, close }) => {
                if b[open..close].contains(&b'\n') {
                    out.push((open, depth));
                }
            }
            Some(Tok::Other) => {}
            None => return out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(src: &str) -> Result<Vec<String>, ParseError> {
        events(src)
            .map(|e| {
                e.map(|e| match e.kind {
                    EvKind::Scalar(v, _) => format!("{v}"),
                    k => format!("{k:?}"),
                })
            })
            .collect()
    }

    #[test]
    fn under_indented_quoted_lines_read_as_go_reads() {
        let src = "a:\n  b:\n    description: 'Name of the referent. More info:\n    \
                   https://k/#names\n    TODO: x,\n    y.'\n    type: string\n";
        let got = read(src).expect("read");
        let want = "Name of the referent. More info: https://k/#names TODO: x, y.";
        assert!(got.iter().any(|v| v == want), "{got:?}");
    }

    /// Where a guess is wrong (here a plain scalar's line that starts with a quote, which the
    /// lexer takes for a quoted scalar), the guesses are dropped and the reading is the same.
    #[test]
    fn a_wrong_guess_changes_nothing() {
        let src = "a:\n  b: 'x\n  y'\n  c:\n    p\n    'q r\n  d: 's\n  t'\n";
        let got = read(src).expect("read");
        for want in ["x y", "p 'q r", "s t"] {
            assert!(got.iter().any(|v| v == want), "{want}: {got:?}");
        }
    }

    #[test]
    fn go_forms_read_as_go_reads() {
        for (src, want) in [
            ("a:\n  f:\n  |\n    next line\n  g: 1\n", "next line\n"),
            ("f:\n>-\n  text\n  more\ng: 1\n", "text more"),
            ("a: \"it\\'s\"\n", "it's"),
            ("a:\n  b: [x,\n\ty]\n", "y"),
            ("a:\n  b: \"x\n\t  y\"\n", "x y"),
            ("a: 'x'# c\n", "x"),
            ("a: [x]# c\n", "x"),
            ("a: [x,# c\n  y]\n", "y"),
            ("a: |# c\n  x\n", "x\n"),
            ("- k: \"x\n  y\"\n", "x y"),
        ] {
            let got = read(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
            assert!(got.iter().any(|v| v == want), "{src:?}: {got:?}");
        }
    }

    /// What Go refuses stays an error: a document marker starting a quoted scalar's line, an
    /// unknown escape.
    #[test]
    fn what_go_refuses_stays_an_error() {
        for src in [
            "a: 'x\n---\n  y'\n",
            "a: \"\\q\"\n",
            "a: 'x\n...\n'\n",
            "a: 1\n|\n  x\n",
            "a:\n  b:\n|\n  x\n",
        ] {
            let e = read(src).expect_err(src);
            assert!(e.line > 0 && e.column > 0, "{src:?}: {e}");
        }
    }
}
