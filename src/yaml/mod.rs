//! A lossless YAML document model: our own node tree over a reader's events (our fast reader for
//! the YAML packages are made of, `granit-parser` for the rest), and its emitter.
//!
//! What it is: [`parse_stream`] turns YAML text into [`Document`]s whose [`Node`] trees keep
//! everything a person wrote that is not data — comments (head, line and foot, with their
//! spacing), blank lines, key order, scalar styles and the source text of scalars whose
//! rendering is not canonical, flow and block collections, tags, anchors and aliases,
//! explicit `---` / `...`, directives. [`emit_stream`] writes them back.
//!
//! What it must not do: know about Kubernetes (no `apiVersion`, no `kind`), merge, or select.
//! Only `granit.rs` talks to the parser crate, so the parser can be swapped; the fast reader
//! (`fast.rs`, with `scan.rs`) must give exactly the events that crate gives, so which one read
//! a text never shows in a tree or an error.
//!
//! Text is read as Go's YAML libraries (go-yaml, and so kubectl, kustomize and kpt) read it:
//! where YAML 1.2 refuses a form they read — quoted scalars' and flow collections' lines at or
//! left of their block's indentation, tabs leading those lines, `\'` in a double-quoted scalar,
//! a comment glued to a token — it is read as they read it (`granit.rs`); what they refuse is
//! refused. A node read in such a form is written back as it was while untouched, and where a
//! patch moves it, its lines move with it and still read the same.
//!
//! # Round-trip guarantees and their limits
//!
//! * A document nobody touched is written back byte-identical: [`Document::text`] is its exact
//!   source slice, and the callers that know a document is untouched write that.
//! * A document written from its tree ([`emit_document`]) reproduces, byte for byte, anything in
//!   the usual YAML shapes: block maps and sequences at any indentation (compact or wide
//!   sequences, `- key:` items, `-` alone with the item on the next line), comments at any column
//!   with any number of blank lines before them, spaces before a line comment, spaces after `:`
//!   and `-`, plain, quoted and block scalars (with their header, indentation indicator and
//!   chomping, and any whitespace inside them), multi-line scalars, flow collections (kept
//!   verbatim while unchanged, comments inside included), anchors, aliases, tags, directives and
//!   document markers. The known differences, all of them outside of what Kubernetes tooling
//!   writes, are:
//!   - whitespace at the end of a line, and on lines holding only whitespace outside block
//!     scalars, is dropped;
//!   - tabs used as separation (after `:`, before `#`) become spaces; CRLF line ends become LF;
//!   - a stream that does not end with a line break gets one;
//!   - `!tag &anchor` is written `&anchor !tag`;
//!   - an explicit key (`? key`) holding a collection, a block scalar or several lines is
//!     written in flow style;
//!   - an anchor or tag alone on its line before a block collection moves to the key's line;
//!   - a comment after `...` on the same line, and document markers with no document between
//!     them, are dropped.
//!   - a tag whose handle a `%TAG` directive declares (`!e!foo`) is written in verbatim form
//!     (`!<tag:example.com,2000:foo>`), so that it means the same wherever the node moves.
//!
//!   `tests/it/yaml_roundtrip.rs` checks the guarantee on the yaml-test-suite, lists the cases that
//!   hit these limits, and checks that those still read back as the same data.
//! * Nodes that are changed or created are written canonically: two spaces of indentation, the
//!   document's own sequence-indent style (compact `- ` under the key, or indented), plain
//!   scalars unless the text would read back as something else, in which case it is quoted (see
//!   [`scalar`]). A flow collection that is changed is rewritten on one line; comments that were
//!   inside it are lost (they are kept while it is unchanged).
//! * Indentation is stored relative to the parent, so a subtree keeps its shape when it moves
//!   to another place or another document. Source text kept verbatim (multi-line scalars, block
//!   scalars, flow collections) moves with it: its continuation lines keep their place relative
//!   to the enclosing key or dash, and text that stood at a root's left edge moves right of the
//!   key that now holds it. `tests/it/yaml_roundtrip.rs` moves every node of the yaml-test-suite
//!   into a root, under keys and into lists, and reads the results back.
//!
//! # Bounds
//!
//! Nesting is limited to [`MAX_DEPTH`] collections (the parser stops with a located error), so
//! no recursive walk over a tree can overflow the stack. Aliases are kept as aliases; they are
//! expanded only on request ([`Node::expand_aliases`]) and within a node budget; [`anchors`]
//! holds all alias handling.

pub mod anchors;
mod builder;
mod emit;
mod event;
mod fast;
mod feed;
mod granit;
pub(crate) mod index;
mod json;
mod node;
mod parse;
pub(crate) mod place;
pub mod scalar;
mod scan;
pub(crate) mod snapshot;
pub(crate) mod split;

pub(crate) use anchors::AliasError;
pub use emit::{emit_document, emit_node, emit_seq_item, emit_stream, one_line, EmitOptions};
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use feed::{check_fast_reader, fast_reader_coverage, fast_reader_events, fast_reader_stops};
pub use json::{from_json, to_json, ToJsonError};
pub use node::{Entry, Kind, NODE_WEIGHT};
pub use parse::{parse_each, parse_split, parse_stream, ParseError, Split, SplitItem};
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use parse::{parse_each_granit, parse_split_granit, parse_stream_granit};

use std::borrow::Cow;

/// Deepest nesting of collections the parser accepts. Real Kubernetes objects stay below 40;
/// CRD schemas below 200.
pub const MAX_DEPTH: usize = 512;

/// A YAML node: a scalar, a sequence, a mapping or an alias, with its presentation.
///
/// Text borrows from the source where it can (`'a`), so a parsed tree costs little more than
/// the source it came from. A node is 40 bytes; everything that only some nodes have (comments,
/// tag, anchor, verbatim source text) lives in a boxed `Ext` that is absent for most nodes.
#[derive(Clone, Debug)]
pub struct Node<'a> {
    pub(crate) repr: Repr<'a>,
    pub(crate) ext: Option<Box<Ext<'a>>>,
}

/// The node's content. Layout sits inside each variant so that it shares space with the
/// variant's tag (see the size test in `node.rs`).
#[derive(Clone, Debug)]
pub(crate) enum Repr<'a> {
    Scalar {
        /// The value after YAML escape processing; for block scalars the folded/chomped content.
        text: Cow<'a, str>,
        style: ScalarStyle,
        lay: Layout,
    },
    Seq {
        items: Vec<Node<'a>>,
        flow: bool,
        lay: Layout,
    },
    Map {
        entries: Vec<Entry<'a>>,
        flow: bool,
        lay: Layout,
    },
    /// `*name`. The anchored node is found by name, in document order, when needed.
    Alias { name: Cow<'a, str>, lay: Layout },
}

/// How a scalar is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarStyle {
    /// Unquoted: the text is resolved by the YAML 1.2 core schema (null, bool, int, float, string).
    Plain,
    /// `'text'`; always a string.
    SingleQuoted,
    /// `"text"`; always a string.
    DoubleQuoted,
    /// `|` block; always a string.
    Literal,
    /// `>` block; always a string.
    Folded,
    /// A string whose style the emitter picks: plain when the text would read back as the same
    /// string under YAML 1.1 and 1.2, a literal block when it spans lines, double-quoted
    /// otherwise. Nodes made from JSON strings and other new text use this.
    Any,
}

/// Where a node sits in its parent, as written: enough to reproduce the source around it.
///
/// Columns are stored relative to the node's context — the column of the key or `-` that
/// introduces it, or 0 for a document root — never absolute, so subtrees can move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Empty lines before this node's entry (before its head comments, if any).
    pub(crate) blank: u8,
    /// Spaces between the indicator (`:` or `-`) and the node when both share a line;
    /// 0 means the canonical single space.
    pub(crate) gap: u8,
    /// For block collections: the column of the children (keys, or dashes) minus the context
    /// column. For values on the line after their key (see [`flags::NEXT_LINE`]) the column of
    /// the value. Meaningful only with [`flags::SOURCE`].
    pub(crate) indent: u8,
    /// Bit set of [`flags`].
    pub(crate) flags: u8,
}

/// Bits of [`Layout::flags`].
pub(crate) mod flags {
    /// The layout was read from source; without it the emitter uses canonical layout.
    pub(crate) const SOURCE: u8 = 1;
    /// The node starts on the line after its key or `-` (e.g. `-` alone, then the item).
    pub(crate) const NEXT_LINE: u8 = 2;
    /// The node is a key written in explicit form (`? key`).
    pub(crate) const EXPLICIT_KEY: u8 = 4;
    /// The value of an explicit key was not written at all (`? key` alone means null).
    pub(crate) const OMITTED: u8 = 8;
    /// The node's anchor or tag stands on the line before its content.
    pub(crate) const PROPS_LINE: u8 = 16;
}

/// What only some nodes have.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ext<'a> {
    pub(crate) tag: Option<Cow<'a, str>>,
    pub(crate) anchor: Option<Cow<'a, str>>,
    pub(crate) comments: Comments<'a>,
    pub(crate) raw: Option<Raw<'a>>,
    /// Which anchor occurrence of its document the node is or stands for ([`anchors::Mark`]).
    pub(crate) mark: anchors::Mark,
}

/// Source text reused verbatim while the node is unchanged: scalars whose canonical rendering
/// would differ (block scalars, multi-line and escaped scalars) and flow collections whose
/// canonical rendering would differ (spacing, line breaks, comments inside).
#[derive(Clone, Debug)]
pub(crate) struct Raw<'a> {
    /// For block scalars: the header (`|2-` and anything after it on its line except a
    /// comment) then `\n` then the body lines as written; otherwise the exact source slice.
    pub(crate) text: Cow<'a, str>,
    /// The least column the text's continuation lines (a block scalar's body) may start at in
    /// its source: one right of the enclosing block collection's column (its key or dash), or 0
    /// where none encloses it (a document's root). A block scalar's indentation indicator
    /// counts from the column left of it. Written elsewhere, the lines move by the difference
    /// of the two places' bases, which keeps every line legal and every indicator meaningful.
    pub(crate) base: u32,
}

/// The comments attached to a node.
///
/// * `head`: own-line comments before the node's entry (before a map key, a sequence item, or a
///   document root).
/// * `line`: the comment at the end of the node's line. For a key whose value is a block
///   collection, the comment after `key:`; for a block scalar, the comment after its header; for
///   a block collection that is a sequence item written on the line after `-`, the comment after
///   the `-`.
/// * `foot`: own-line comments after the last entry of a block collection, indented at least as
///   deep as its entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comments<'a> {
    /// Own-line comments before the node's entry.
    pub head: Vec<Comment<'a>>,
    /// The comment at the end of the node's line.
    pub line: Option<Comment<'a>>,
    /// Own-line comments after the last entry of a block collection.
    pub foot: Vec<Comment<'a>>,
}

impl<'a> Comments<'a> {
    /// True when there is no comment at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_empty() && self.line.is_none() && self.foot.is_empty()
    }

    /// Same comment texts in the same places (blank lines and columns do not count).
    pub(crate) fn same_text(&self, other: &Comments<'_>) -> bool {
        let texts = |v: &[Comment<'_>], w: &[Comment<'_>]| {
            v.len() == w.len() && v.iter().zip(w).all(|(x, y)| x.text == y.text)
        };
        texts(&self.head, &other.head)
            && texts(&self.foot, &other.foot)
            && self.line.as_ref().map(|c| &c.text) == other.line.as_ref().map(|c| &c.text)
    }
}

impl<'a> Node<'a> {
    /// Takes the comments `other` has, head, line and foot separately, over this node's (a
    /// patch's comments win over the resource's: kyaml's rule).
    pub(crate) fn take_comments_of(&mut self, other: &Comments<'a>) {
        if other.is_empty() {
            return;
        }
        let c = self.comments_mut();
        if !other.head.is_empty() {
            c.head = other.head.clone();
        }
        if other.line.is_some() {
            c.line = other.line.clone();
        }
        if !other.foot.is_empty() {
            c.foot = other.foot.clone();
        }
    }

    /// Gives this node the comments of `other` where it has none of its own (a new value keeps
    /// the comments of the place it takes).
    pub(crate) fn keep_comments_of(&mut self, other: &Comments<'a>) {
        if other.is_empty() {
            return;
        }
        let own = self.comments();
        let (head, line, foot) = (own.head.is_empty(), own.line.is_none(), own.foot.is_empty());
        let c = self.comments_mut();
        if head {
            c.head = other.head.clone();
        }
        if line {
            c.line = other.line.clone();
        }
        if foot {
            c.foot = other.foot.clone();
        }
    }
}

/// One comment line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment<'a> {
    /// The text after `#`, as written (usually starting with a space).
    pub text: Cow<'a, str>,
    /// Own-line comments: empty lines before it. Line comments: unused.
    pub blank: u8,
    /// Own-line comments: column relative to the entry it belongs to. Line comments: the
    /// number of spaces before `#` (0 means one).
    pub col: i16,
}

impl<'a> Comment<'a> {
    /// A copy that borrows nothing.
    pub(crate) fn into_owned(self) -> Comment<'static> {
        Comment {
            text: Cow::Owned(self.text.into_owned()),
            blank: self.blank,
            col: self.col,
        }
    }
}

/// One YAML document of a stream.
#[derive(Clone, Debug)]
pub struct Document<'a> {
    /// The document's content; `None` for an empty document (`---` followed by nothing).
    pub root: Option<Node<'a>>,
    /// The exact source text of the document, from the end of the previous one: writing it
    /// instead of the tree is how untouched documents come back byte-identical. Empty for
    /// documents that were not parsed.
    pub text: &'a str,
    pub(crate) directives: Vec<Cow<'a, str>>,
    /// Comments before the `---` of this document (e.g. a licence header).
    pub(crate) pre: Vec<Comment<'a>>,
    /// `---` was written; with the comment on its line, if any.
    pub(crate) start: Option<Option<Comment<'a>>>,
    /// Comments after the root that no collection claimed.
    pub(crate) foot: Vec<Comment<'a>>,
    /// `...` was written.
    pub(crate) end: bool,
    /// Empty lines before `...`, and after everything else at the end of the document's text.
    pub(crate) end_blank: u8,
    pub(crate) tail_blank: u8,
    /// The root starts on a line after `---` (rather than on it).
    pub(crate) root_next_line: bool,
    /// Comments after `...` at the end of the stream.
    pub(crate) trailer: Vec<Comment<'a>>,
    /// How this document indents block sequences under a key; new sequences follow it.
    pub seq_indent: SeqIndent,
    /// The stream starts with a byte order mark, which is written back before this document.
    pub(crate) bom: bool,
}

impl<'a> Document<'a> {
    /// A new document holding `root`, with canonical layout.
    pub fn new(root: Node<'a>) -> Self {
        Document {
            root: Some(root),
            ..Document::empty()
        }
    }

    /// A document with nothing in it, with canonical layout.
    pub(crate) fn empty() -> Self {
        Document {
            root: None,
            text: "",
            directives: Vec::new(),
            pre: Vec::new(),
            start: None,
            foot: Vec::new(),
            end: false,
            end_blank: 0,
            tail_blank: 0,
            root_next_line: false,
            trailer: Vec::new(),
            seq_indent: SeqIndent::Compact,
            bom: false,
        }
    }

    /// Asks for `---` before this document when it is written.
    pub(crate) fn set_explicit_start(&mut self) {
        if self.start.is_none() {
            self.start = Some(None);
        }
    }
}

/// How block sequences that are values of a key are indented.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SeqIndent {
    /// `key:\n- item` (kubectl, kustomize and kyaml write this).
    #[default]
    Compact,
    /// `key:\n  - item`.
    Wide,
}
