//! The parser's entry points: YAML text in, [`Document`]s out (all at once, one at a time, or
//! with one long sequence handed over item by item), and [`ParseError`], the located error
//! every reader and the builder give.
//!
//! What it is: the adapter between a caller's text and the pipeline that reads it. It takes a
//! byte order mark off the text (the first document keeps it), refuses a carriage return that
//! is not part of a CRLF, and feeds the reader's events (`feed.rs`) to the tree builder
//! (`builder.rs`).
//!
//! What it must not do: build trees or attach comments (`builder.rs` does), or read YAML itself
//! (the readers do).

use super::builder::{Builder, SplitState};
use super::feed::{feed, Reader, Stats};
use super::{Document, Node, SeqIndent};

/// The byte order mark YAML allows at the start of a stream.
pub(crate) const BOM: char = '\u{feff}';

/// Malformed YAML, with its place in the source (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// The line, from 1, in the text that was parsed (a file's own lines for a file).
    pub line: usize,
    /// The column, from 1, counted in characters.
    pub column: usize,
    /// What is wrong there, as the reader says it.
    pub message: String,
}

/// Parses a YAML stream into its documents.
///
/// Malformed input — including duplicate keys, invalid indentation and tabs used as
/// indentation — is an error with its line and column. Nesting deeper than
/// [`MAX_DEPTH`](super::MAX_DEPTH) is an error too.
pub fn parse_stream(src: &str) -> Result<Vec<Document<'_>>, ParseError> {
    let mut docs = Vec::new();
    parse_each(src, |d| docs.push(d))?;
    Ok(docs)
}

/// Parses a YAML stream, handing each document to `each` as soon as it is complete (and the
/// next one has started), so a caller can keep only what it needs of a large stream. On error
/// the documents handed over so far are the ones before the error.
pub fn parse_each<'a>(src: &'a str, each: impl FnMut(Document<'a>)) -> Result<(), ParseError> {
    parse_with(src, each, None, Reader::Fast, &mut Stats::default()).map(|_| ())
}

fn parse_with<'a, 's>(
    src: &'a str,
    mut each: impl FnMut(Document<'a>),
    split: Option<SplitState<'a, 's>>,
    reader: Reader,
    stats: &mut Stats,
) -> Result<Option<std::ops::Range<usize>>, ParseError> {
    // A byte order mark is not part of the text the builder sees (its columns and layout start
    // after it); the first document's text includes it, and the document says to write it.
    let (body, bom) = match src.strip_prefix(BOM) {
        Some(rest) => (rest, BOM.len_utf8()),
        None => (src, 0),
    };
    if bom > 0 && body.is_empty() {
        // Nothing but the mark: no document to carry it, so one empty document does, and the
        // stream is written back as it came.
        let mut d = Document::empty();
        d.text = src;
        d.bom = true;
        each(d);
        return Ok(None);
    }
    let mut first = bom > 0;
    let each = move |mut d: Document<'a>| {
        if first {
            first = false;
            d.bom = true;
            d.text = src.get(..bom + d.text.len()).unwrap_or(d.text);
        }
        each(d)
    };
    let src = body;
    lone_carriage_return(src)?;
    let mut b = Builder::new(src, each);
    b.split = split;
    feed(src, reader, stats, &mut |ev| b.event(ev))?;
    Ok(b.finish().map(|r| r.start + bom..r.end + bom))
}

/// Reads `src` (building and dropping its documents) with `reader`: what the reading cost.
#[cfg(feature = "test-hooks")]
pub(crate) fn measure(src: &str, reader: Reader) -> Result<Stats, ParseError> {
    let mut stats = Stats::default();
    parse_with(src, |_| {}, None, reader, &mut stats)?;
    Ok(stats)
}

/// [`parse_stream`] with `granit-parser` alone: what the fast reader must agree with.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn parse_stream_granit(src: &str) -> Result<Vec<Document<'_>>, ParseError> {
    let mut docs = Vec::new();
    parse_each_granit(src, |d| docs.push(d))?;
    Ok(docs)
}

/// [`parse_each`] with `granit-parser` alone.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn parse_each_granit<'a>(
    src: &'a str,
    each: impl FnMut(Document<'a>),
) -> Result<(), ParseError> {
    parse_with(src, each, None, Reader::Granit, &mut Stats::default()).map(|_| ())
}

/// [`parse_split`] with `granit-parser` alone.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn parse_split_granit<'a>(
    src: &'a str,
    key: &str,
    each: &mut dyn FnMut(Node<'a>, SplitItem<'a>),
) -> Result<Split<'a>, ParseError> {
    split_with(src, key, each, Reader::Granit)
}

/// YAML reads a carriage return alone as a line break, but the tree's layout counts lines by
/// line feeds: such a text is refused (CRLF is read, and written back as LF).
pub(crate) fn lone_carriage_return(src: &str) -> Result<(), ParseError> {
    let bytes = src.as_bytes();
    let lone = memchr::memchr_iter(b'\r', bytes).find(|&i| bytes.get(i + 1) != Some(&b'\n'));
    let Some(at) = lone else {
        return Ok(());
    };
    let before = src.get(..at).unwrap_or_default();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Err(ParseError {
        line: before.matches('\n').count() + 1,
        column: before.get(line_start..).map_or(0, |l| l.chars().count()) + 1,
        message: "a carriage return that is not followed by a line feed: line breaks must be \
                  LF or CRLF"
            .into(),
    })
}

/// One item of a sequence handed over by [`parse_split`].
pub struct SplitItem<'a> {
    /// The item's exact source text: its lines, from the end of the previous item (so blank
    /// lines and comments before it are included) to the end of its last line.
    pub text: &'a str,
    /// Column of the sequence's `-`.
    pub dash_col: usize,
    /// The document's sequence-indent style, as far as read.
    pub seq_indent: SeqIndent,
}

/// What [`parse_split`] leaves: the documents, the split sequence in them empty, and where its
/// items' text lies in the source (from the first item's text to the last one's end), if the
/// sequence was found.
pub struct Split<'a> {
    /// The documents of the text, the split sequence in them left empty.
    pub docs: Vec<Document<'a>>,
    /// Where the split sequence's items lie in the text, when the sequence was found.
    pub items: Option<std::ops::Range<usize>>,
}

/// Parses like [`parse_stream`], but the items of the block sequence that is the value of the
/// top-level key `key` (in a document whose root is a block mapping) are handed to `each` one by
/// one as they are parsed, with their source text, instead of being kept in the tree. A long
/// sequence then costs the memory of one item at a time.
pub fn parse_split<'a>(
    src: &'a str,
    key: &str,
    each: &mut dyn FnMut(Node<'a>, SplitItem<'a>),
) -> Result<Split<'a>, ParseError> {
    split_with(src, key, each, Reader::Fast)
}

fn split_with<'a>(
    src: &'a str,
    key: &str,
    each: &mut dyn FnMut(Node<'a>, SplitItem<'a>),
    reader: Reader,
) -> Result<Split<'a>, ParseError> {
    let mut docs = Vec::new();
    let split = SplitState::new(key, each);
    let range = parse_with(
        src,
        |d| docs.push(d),
        Some(split),
        reader,
        &mut Stats::default(),
    )?;
    Ok(Split { docs, items: range })
}

#[cfg(test)]
mod tests {
    use super::parse_stream;
    use crate::yaml::emit_document;

    /// The text of the value of `k` in the first document of `src`, and the document written
    /// back from its tree.
    fn value_and_emitted(src: &str) -> (String, String) {
        let docs = parse_stream(src).unwrap_or_else(|e| panic!("{e}: {src:?}"));
        let root = docs[0].root.as_ref().expect("a root");
        let text = root
            .get("k")
            .and_then(|n| n.as_str())
            .expect("k")
            .to_owned();
        let mut out = String::new();
        let mut doc = docs[0].clone();
        if let Some(r) = doc.root.as_mut() {
            // Written from the tree, not copied from the source.
            r.set("other", crate::yaml::Node::plain("1"));
        }
        emit_document(&doc, &mut out);
        (text, out)
    }

    #[test]
    fn a_block_scalar_that_ends_the_input_has_no_last_line_break() {
        for (src, want) in [
            ("k: |\n  x\n  y", "x\ny"),
            ("k: >\n  x\n  y", "x y"),
            ("k: |+\n  x", "x"),
            ("k: |-\n  x", "x"),
            ("k: |\n  x\n  y\n", "x\ny\n"),
            ("k: |+\n  x\n\n", "x\n\n"),
        ] {
            let (text, emitted) = value_and_emitted(src);
            assert_eq!(text, want, "{src:?}");
            // Written back, it reads as the same text.
            let (again, _) = value_and_emitted(&emitted);
            assert_eq!(again, want, "{src:?} written as {emitted:?}");
        }
    }

    /// Keys are the same key when their text is, or their value when it is not a string,
    /// in small mappings (compared one by one) and wide ones (hashed).
    #[test]
    fn keys_written_differently_with_the_same_value_are_duplicates() {
        let filler: String = (0..20).map(|i| format!("f{i}: x\n")).collect();
        for (a, b) in [
            ("1", "0x1"),
            ("1", "\"1\""),
            ("~", "null"),
            ("Null", "NULL"),
            ("true", "True"),
            ("1", "1.0"),
            ("0.5", ".5"),
            ("0o7", "7"),
            ("web", "'web'"),
        ] {
            for pad in ["", filler.as_str()] {
                let src = format!("{pad}{a}: 1\n{b}: 2\n");
                let e = parse_stream(&src).expect_err(&src);
                assert!(e.to_string().contains("duplicate key"), "{src}: {e}");
                assert_eq!(e.line, pad.lines().count() + 2, "{src}: {e}");
            }
        }
        // Different values, and strings that only look alike, are different keys.
        for (a, b) in [
            ("1", "2"),
            ("\"0x1\"", "1"),
            ("'null'", "~"),
            ("a", "A"),
            ("1", "true"),
        ] {
            for pad in ["", filler.as_str()] {
                let src = format!("{pad}{a}: 1\n{b}: 2\n");
                parse_stream(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
            }
        }
        // The empty key is never compared (YAML allows `: a` entries).
        parse_stream(": 1\n~: 2\n\"\": 3\n").expect("empty keys");
    }
}
