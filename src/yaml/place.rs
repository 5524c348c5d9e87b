//! Placement: one node put in another's place in a tree.
//!
//! What it is: [`put`], the one mechanical step every walker takes once it has decided that a
//! value is replaced (merge2, merge3, apply, jsonmerge, json6902, and an alias that becomes a
//! copy of its anchored node, see [`super::anchors`]), and [`from_patch`], what a node taken
//! from a patch loses before it goes into a resource. A node's presentation is partly the
//! value's and partly the place's. The blank lines before an entry, the spacing after its `:`
//! or `-`, a string's quoting and a block sequence's indentation belong to the place and stay
//! (see "The place's style"); comments could go either way, and each walker's documented rule
//! picks, through [`Keep`].
//!
//! # The place's style
//!
//! A value a patch changes is written as the resource wrote the value it replaces, as far as
//! the new value allows:
//!
//! * **Strings over strings** (both untagged) keep the old string's style: `"app:1.0"` patched
//!   to `app:1.1` is written `"app:1.1"`, and `'a'` stays single-quoted unless the new text
//!   needs what only double quotes carry (a line break, a control character). A plain string
//!   stays plain unless the new text must be quoted to read back as that string — YAML 1.2's
//!   other types, plain syntax, and what YAML 1.1 readers take for another type (`on`,
//!   `1_000`: [`super::scalar::needs_quotes`]); it is then double-quoted, or written as a
//!   literal block when it spans lines.
//! * **Block scalars** (`|`, `>`) stay block scalars of their kind when the new text spans
//!   lines (it holds a line break, a final one included) and a block can carry it: its first
//!   line does not start with a space, and it holds no character YAML cannot write raw
//!   ([`super::scalar::literal_ok`]). The header is written anew for the new text: the
//!   chomping indicator (`|-`, `|`, `|+`) that gives its final line breaks, no indentation
//!   indicator, the body two columns right of the key; a folded block is folded so that it
//!   reads back as the new text ([`super::scalar::folded_lines`]). A new text on one line
//!   without a line break, or one a block cannot carry, is written as a plain string would be.
//! * **A multi-line quoted or plain string** (a flow scalar over several lines) keeps its
//!   quoting as above; the new text is written on one line, or as a literal block when it has
//!   line breaks and the old string was plain.
//! * **Another type** (a number over a quoted string, a string over a number, a tagged value)
//!   is written in the form its own type needs: the patch's.
//! * **A block sequence** replacing a block sequence keeps the old one's indentation (`key:`
//!   then `- a` or `  - a`); one that replaces an empty flow collection standing on its own
//!   line (`ports:` then `  []`, as Helm writes it) stands where that collection stood. Other
//!   block sequences a patch brings follow the document's sequence indentation, as new nodes
//!   do ([`from_patch`]).
//!
//! What it must not do: decide whether a value is replaced, or look at anything but the two
//! nodes (no schema, no paths, no other part of the tree).

use super::scalar::{self, Resolved};
use super::{flags, Layout, Node, Repr, ScalarStyle};

/// Which comments the new node keeps; the place's quoting and indentation stay whatever this
/// says (see "The place's style").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Keep {
    /// The old node's comments wherever the new node has none of its own (head, line and foot
    /// each on its own): a value from a patch brings its comments, and the place keeps those
    /// the patch does not replace. Off: the comments are the new node's, as the caller set them.
    pub comments: bool,
}

impl Keep {
    /// The place's comments where the new value brings none (merge2, jsonmerge, json6902 and
    /// apply: a node taken from the patch brings its own comments).
    pub(crate) const COMMENTS: Keep = Keep { comments: true };
    /// Comments as the caller set them (merge3, which merges comments three-way itself).
    pub(crate) const NO_COMMENTS: Keep = Keep { comments: false };
}

/// Puts `new` in the place of `old`: `new` takes the blank lines before `old`, the spacing
/// after its indicator (scalar for scalar), the place's style (see "The place's style") and
/// the comments `keep` asks for.
pub(crate) fn put<'a>(old: &mut Node<'a>, mut new: Node<'a>, keep: Keep) {
    if keep.comments {
        new.keep_comments_of(old.comments());
    }
    new.set_blank_lines(old.blank_lines());
    if old.is_scalar() && new.is_scalar() {
        new.layout_mut().gap = old.layout().gap;
        if let Some(style) = kept_style(old, &new) {
            let text = new.as_str().unwrap_or_default().to_owned();
            new.set_text(text, style);
        }
    }
    if let Some(indent) = seq_indent_of_place(old, &new) {
        let lay = new.layout_mut();
        lay.indent = indent;
        lay.flags = flags::SOURCE;
    }
    *old = new;
}

/// The indentation a block sequence `new` takes from the place of `old` (see "The place's
/// style"): a block sequence's as written, or the column of an empty flow collection that
/// stood on its own line.
fn seq_indent_of_place(old: &Node<'_>, new: &Node<'_>) -> Option<u8> {
    if !new.is_seq() || new.is_flow() || new.items().is_empty() {
        return None;
    }
    let lay = old.layout();
    if lay.flags & flags::SOURCE == 0 || !old.is_seq() {
        return None;
    }
    if !old.is_flow() && !old.items().is_empty() {
        return Some(lay.indent);
    }
    own_line_column(old)
}

/// The column (relative to its key or dash) of an empty flow collection that stands on the
/// line after its key or dash (`resources:` then `  {}`, as Helm writes empty values).
fn own_line_column(node: &Node<'_>) -> Option<u8> {
    let lay = node.layout();
    let own_line = flags::SOURCE | flags::NEXT_LINE;
    let empty = node.entries().is_empty() && node.items().is_empty();
    (node.is_flow() && empty && lay.flags & own_line == own_line && lay.indent > 0)
        .then_some(lay.indent)
}

/// Makes the empty flow collection `node` (`{}`, `[]`) a block collection, about to receive
/// entries: where it stood on its own line (`resources:` then `  {}`), its entries stand at
/// that column; otherwise where the document puts new ones.
pub(crate) fn open_empty_flow(node: &mut Node<'_>) {
    let column = own_line_column(node);
    let blank = node.blank_lines();
    node.make_block();
    if let Some(indent) = column {
        *node.layout_mut() = Layout {
            blank,
            gap: 0,
            indent,
            flags: flags::SOURCE,
        };
    }
    node.set_blank_lines(blank);
}

/// A mapping key that a patch names as the same key spelled otherwise (`0x1` for the
/// resource's `1`: the same key as data, [`super::index::key_text`]) takes the patch's
/// spelling: its text, style and tag. It keeps its place's comments and blank lines (the
/// walkers merge key comments themselves). A key with an anchor, on either side, keeps its
/// spelling: aliases elsewhere may name the resource's anchor, and a patch's anchor means
/// nothing in the resource. True when the key changed.
pub fn respell_key<'a>(dest: &mut Node<'a>, key: &Node<'a>) -> bool {
    let same = dest.as_str() == key.as_str() && dest.tag() == key.tag();
    if same || !dest.is_scalar() || !key.is_scalar() || dest.anchor().is_some() {
        return false;
    }
    if key.anchor().is_some() {
        return false;
    }
    let mut new = key.clone();
    *new.comments_mut() = dest.comments().clone();
    new.set_blank_lines(dest.blank_lines());
    new.layout_mut().gap = dest.layout().gap;
    *dest = new;
    true
}

/// Makes `node`, taken from a patch, ready to go into a resource: its block sequences drop the
/// indentation the patch wrote them with, so that they are written as the resource's document
/// indents its sequences (`key:` then `- a`, or `  - a`). Everything else keeps the patch's
/// presentation. Linear in the node.
pub(crate) fn from_patch(node: &mut Node<'_>) {
    match &mut node.repr {
        Repr::Seq {
            items,
            flow: false,
            lay,
        } => {
            lay.flags &= !(flags::SOURCE | flags::NEXT_LINE);
            lay.indent = 0;
            items.iter_mut().for_each(from_patch);
        }
        Repr::Map {
            entries,
            flow: false,
            ..
        } => {
            for e in entries {
                from_patch(&mut e.value);
            }
        }
        _ => {}
    }
}

/// [`from_patch`] for `node` itself only: a collection being built from a patch, whose
/// children are made ready one by one as they are added.
pub(crate) fn shell_from_patch(node: &mut Node<'_>) {
    if let Repr::Seq {
        flow: false, lay, ..
    } = &mut node.repr
    {
        lay.flags &= !(flags::SOURCE | flags::NEXT_LINE);
        lay.indent = 0;
    }
}

/// [`put`], unless `old` already holds the value `new` holds ([`same_value`]): a value that a
/// patch does not change keeps its text, style and comments (`namespace: "cert-manager"` stays
/// quoted when a patch repeats it plain). Every walker replaces values through this. True when
/// `old` changed.
pub(crate) fn replace<'a>(old: &mut Node<'a>, new: Node<'a>, keep: Keep) -> bool {
    if same_value(old, &new) {
        return false;
    }
    put(old, new, keep);
    true
}

/// Whether two nodes hold the same value: the same data as YAML 1.2 reads it
/// ([`Node::same_data`]: `"1"` and `1` differ, `1` and `0x1` do not, mappings in the same key
/// order), read the same by a YAML 1.1 reader (Kubernetes) too, and with the same tags where a
/// tag is not one of the core schema's (`!vault x` is not `x`). A plain scalar that YAML 1.1
/// may read otherwise (`yes`, a boolean there; `0777`, 511 there; `1e3`, a string there) is the
/// same value only as the same text. Aliases are the same only as the same alias. Mapping
/// keys must be spelled alike ([`same_spelling`]).
pub(crate) fn same_value(a: &Node<'_>, b: &Node<'_>) -> bool {
    use super::Kind;
    if own_tag(a) != own_tag(b) {
        return false;
    }
    match (a.kind(), b.kind()) {
        (Kind::Scalar, Kind::Scalar) => {
            a.same_data(b)
                && ((a.style() == b.style() && a.as_str() == b.as_str())
                    || (reads_alike(a) && reads_alike(b)))
        }
        (Kind::Seq, Kind::Seq) => {
            a.items().len() == b.items().len()
                && a.items()
                    .iter()
                    .zip(b.items())
                    .all(|(x, y)| same_value(x, y))
        }
        (Kind::Map, Kind::Map) => {
            a.entries().len() == b.entries().len()
                && a.entries()
                    .iter()
                    .zip(b.entries())
                    .all(|(x, y)| same_spelling(&x.key, &y.key) && same_value(&x.value, &y.value))
        }
        (Kind::Alias, Kind::Alias) => a.alias_name() == b.alias_name(),
        _ => false,
    }
}

/// Two mapping keys that are the same value ([`same_value`]) and spelled alike: a key spelled
/// otherwise (`0x1` for `1`, `TRUE` for `true`) is the patch's statement, as [`respell_key`]
/// takes it, so a mapping holding it is not the same value (its quoting alone does not count).
fn same_spelling(a: &Node<'_>, b: &Node<'_>) -> bool {
    same_value(a, b) && a.as_str() == b.as_str() && a.tag() == b.tag()
}

/// A tag that says more than the core schema's types (which [`Node::same_data`] reads).
fn own_tag<'n>(n: &'n Node<'_>) -> Option<&'n str> {
    n.tag().filter(|t| {
        !matches!(
            *t,
            "!" | "!!str" | "!!int" | "!!float" | "!!bool" | "!!null" | "!!map" | "!!seq"
        )
    })
}

/// Whether YAML 1.1 and 1.2 read a scalar alike: a quoted, block or tagged scalar (its style
/// or tag decides), and a plain one in the forms both read the same way — a string no 1.1
/// reader takes for another type, null, a boolean, a decimal integer without leading zeros, a
/// hexadecimal one, a decimal fraction without exponent.
fn reads_alike(n: &Node<'_>) -> bool {
    if n.style() != Some(ScalarStyle::Plain) || n.tag().is_some() {
        return true;
    }
    let t = n.as_str().unwrap_or_default();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    match n.resolved() {
        Some(Resolved::Str(_)) => !scalar::yaml11_lookalike(t),
        Some(Resolved::Null | Resolved::Bool(_)) => true,
        Some(Resolved::Int(_)) => {
            unsigned == "0"
                || (digits(unsigned) && !unsigned.starts_with('0'))
                || t.strip_prefix("0x")
                    .is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit()))
        }
        Some(Resolved::Float(_)) => match unsigned.split_once('.') {
            Some((whole, fraction)) => {
                digits(whole)
                    && (whole == "0" || !whole.starts_with('0'))
                    && (fraction.is_empty() || digits(fraction))
            }
            None => false,
        },
        None => false,
    }
}

/// The style `new` should take from `old`, if any (see "The place's style"): only between
/// untagged strings, so the value's type cannot change.
fn kept_style(old: &Node<'_>, new: &Node<'_>) -> Option<ScalarStyle> {
    if old.tag().is_some() || new.tag().is_some() {
        return None;
    }
    let (Some(Resolved::Str(_)), Some(Resolved::Str(text))) = (old.resolved(), new.resolved())
    else {
        return None;
    };
    let (from, to) = (old.style()?, new.style()?);
    if from == to {
        return None;
    }
    // `Any` writes plain where plain reads back as the same string, and otherwise a literal
    // block where the text spans lines and a block can carry it, or double quotes.
    Some(match from {
        ScalarStyle::DoubleQuoted => from,
        ScalarStyle::SingleQuoted => match scalar::single_quoted(text) {
            Some(_) => from,
            // Only double quotes carry what single quotes cannot (a line break).
            None if to == ScalarStyle::DoubleQuoted => return None,
            None => ScalarStyle::DoubleQuoted,
        },
        ScalarStyle::Plain | ScalarStyle::Any => ScalarStyle::Any,
        ScalarStyle::Literal | ScalarStyle::Folded if scalar::literal_ok(text) => from,
        ScalarStyle::Literal | ScalarStyle::Folded => ScalarStyle::Any,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_stream;

    fn value<'a>(docs: &'a [crate::yaml::Document<'a>], key: &str) -> Node<'a> {
        docs[0].root.as_ref().unwrap().get(key).unwrap().clone()
    }

    #[test]
    fn the_place_keeps_its_spacing_and_what_keep_asks_for() {
        let d = parse_stream("a:   \"x\" # place\n").unwrap();
        let p = parse_stream("a: 'y'\nb: z # own\n").unwrap();
        for (keep, comment, style) in [
            (Keep::COMMENTS, Some(" place"), ScalarStyle::DoubleQuoted),
            (Keep::NO_COMMENTS, None, ScalarStyle::DoubleQuoted),
        ] {
            let mut old = value(&d, "a");
            put(&mut old, value(&p, "a"), keep);
            assert_eq!(old.as_str(), Some("y"));
            assert_eq!(old.layout().gap, value(&d, "a").layout().gap, "{keep:?}");
            let line = old.comments().line.as_ref().map(|c| c.text.as_ref());
            assert_eq!(line, comment, "{keep:?}");
            assert_eq!(old.style(), Some(style), "{keep:?}");
        }
        // A value that brings a comment keeps it.
        let mut old = value(&d, "a");
        put(&mut old, value(&p, "b"), Keep::COMMENTS);
        let line = old.comments().line.as_ref().map(|c| c.text.as_ref());
        assert_eq!(line, Some(" own"));
    }

    #[test]
    fn same_value_is_the_same_data_read_alike_by_yaml_1_1_and_1_2() {
        let v = |t: &str| {
            parse_stream(&format!("v: {t}\n")).unwrap()[0]
                .root
                .as_ref()
                .unwrap()
                .get("v")
                .unwrap()
                .clone()
                .into_owned()
        };
        for (a, b) in [
            ("\"cert-manager\"", "cert-manager"),
            ("'x'", "\"x\""),
            ("0x3", "3"),
            ("1.50", "1.5"),
            ("true", "True"),
            ("~", "null"),
            ("yes", "yes"),
            ("[a, \"b\"]", "['a', b]"),
            ("{a: 1}", "{\"a\": 1}"),
        ] {
            assert!(same_value(&v(a), &v(b)), "{a} and {b}");
        }
        for (a, b) in [
            ("\"1\"", "1"),
            ("yes", "\"yes\""),
            ("0777", "777"),
            ("1e3", "1000.0"),
            ("!vault x", "x"),
            ("{a: 1, b: 2}", "{b: 2, a: 1}"),
            ("[1]", "[1, 1]"),
        ] {
            assert!(!same_value(&v(a), &v(b)), "{a} and {b}");
        }
        // replace leaves a node holding the value as it is, comments included.
        let d = parse_stream("a: \"x\" # mine\n").unwrap();
        let p = parse_stream("a: x # theirs\nb: y\n").unwrap();
        let mut old = value(&d, "a");
        assert!(!replace(&mut old, value(&p, "a"), Keep::COMMENTS));
        assert_eq!(old.style(), Some(ScalarStyle::DoubleQuoted));
        let line = old.comments().line.as_ref().map(|c| c.text.as_ref());
        assert_eq!(line, Some(" mine"));
        assert!(replace(&mut old, value(&p, "b"), Keep::COMMENTS));
        assert_eq!(old.as_str(), Some("y"));
    }

    /// `key: OLD` with the value of `key: NEW` put in its place, written.
    fn replaced(old: &str, new: &str) -> String {
        let d = parse_stream(old).unwrap();
        let p = parse_stream(new).unwrap();
        let mut root = d[0].root.clone().unwrap();
        let new = value(&p, "k");
        put(root.get_mut("k").unwrap(), new, Keep::COMMENTS);
        let mut out = String::new();
        crate::yaml::emit_document(&crate::yaml::Document::new(root), &mut out);
        // What is written reads back as the new value.
        let back = parse_stream(&out).unwrap();
        assert!(value(&back, "k").same_data(&value(&p, "k")), "{out}");
        out
    }

    #[test]
    fn a_changed_string_keeps_the_places_style() {
        for (old, new, want) in [
            // Quotes stay, of either kind.
            ("k: \"app:1.0\"\n", "k: app:1.1\n", "k: \"app:1.1\"\n"),
            ("k: 'app:1.0'\n", "k: \"app:1.1\"\n", "k: 'app:1.1'\n"),
            // Single quotes cannot carry a line break: double quotes do.
            ("k: 'a'\n", "k: \"a\\nb\"\n", "k: \"a\\nb\"\n"),
            // A plain string stays plain, unless the new text must be quoted: YAML 1.1's
            // booleans, another YAML 1.2 type, syntax.
            ("k: web\n", "k: 'api'\n", "k: api\n"),
            ("k: web\n", "k: \"on\"\n", "k: \"on\"\n"),
            ("k: web\n", "k: \"12\"\n", "k: \"12\"\n"),
            ("k: web\n", "k: \"a: b\"\n", "k: \"a: b\"\n"),
            // ... or spans lines: then a literal block.
            ("k: web\n", "k: \"a\\nb\\n\"\n", "k: |\n  a\n  b\n"),
            // Another type is written as its type needs.
            ("k: \"80\"\n", "k: 8080\n", "k: 8080\n"),
            ("k: \"x\"\n", "k: true\n", "k: true\n"),
            ("k: 80\n", "k: \"http\"\n", "k: \"http\"\n"),
            ("k: !!str a\n", "k: 'b'\n", "k: 'b'\n"),
            // A block scalar stays one when the new text spans lines; its header fits the new
            // text's final line breaks.
            ("k: |\n  a\n  b\n", "k: \"x\\ny\"\n", "k: |-\n  x\n  y\n"),
            ("k: |2-\n    a\n", "k: \"x\\n\\n\"\n", "k: |+\n  x\n\n"),
            ("k: |\n  a\n", "k: \"x\\n\"\n", "k: |\n  x\n"),
            // Folded, it is folded so as to read back as the new text.
            (
                "k: >\n  a\n  b\n",
                "k: \"one two\\nthree\\n\\nfour\\n  indented\\nfive\\n\"\n",
                "k: >\n  one two\n\n  three\n\n\n  four\n    indented\n  five\n",
            ),
            // One line without a line break, or one a block cannot carry: as a plain string.
            ("k: |\n  a\n  b\n", "k: 'short'\n", "k: short\n"),
            ("k: >\n  a\n", "k: \"on\"\n", "k: \"on\"\n"),
            ("k: |\n  a\n", "k: \" lead\\n\"\n", "k: \" lead\\n\"\n"),
            // Several lines of a flow scalar: the quoting stays, the new text is on one line.
            ("k: \"a\n  b\"\n", "k: c d\n", "k: \"c d\"\n"),
            ("k: a\n  b\n", "k: 'c d'\n", "k: c d\n"),
        ] {
            assert_eq!(replaced(old, new), want, "{old:?} <- {new:?}");
        }
    }

    #[test]
    fn a_block_sequence_keeps_the_places_indentation() {
        for (old, new, want) in [
            // A sequence over a sequence: the old one's indentation.
            ("k:\n  - a\n", "k:\n- b\n- c\n", "k:\n  - b\n  - c\n"),
            ("k:\n- a\n", "k:\n    - b\n", "k:\n- b\n"),
            // Over an empty flow sequence on its own line: where it stood.
            ("k:\n    []\n", "k:\n- b\n", "k:\n    - b\n"),
            // Over anything else: the document's (compact here), not the patch's.
            ("k: []\n", "k:\n  - b\n", "k:\n- b\n"),
            ("k: x\n", "k:\n  - b\n", "k:\n- b\n"),
        ] {
            let d = parse_stream(old).unwrap();
            let p = parse_stream(new).unwrap();
            let mut root = d[0].root.clone().unwrap();
            let mut node = value(&p, "k");
            from_patch(&mut node);
            put(root.get_mut("k").unwrap(), node, Keep::COMMENTS);
            let mut out = String::new();
            crate::yaml::emit_document(&crate::yaml::Document::new(root), &mut out);
            assert_eq!(out, want, "{old:?} <- {new:?}");
        }
    }

    #[test]
    fn an_empty_flow_collection_on_its_own_line_opens_where_it_stood() {
        for (src, want) in [
            ("k:\n  {}\n", "k:\n  a: 1\n"),
            ("k:\n      {}\n", "k:\n      a: 1\n"),
            ("k: {}\n", "k:\n  a: 1\n"),
        ] {
            let d = parse_stream(src).unwrap();
            let mut root = d[0].root.clone().unwrap();
            let k = root.get_mut("k").unwrap();
            open_empty_flow(k);
            k.set("a", Node::plain("1"));
            let mut out = String::new();
            crate::yaml::emit_document(&crate::yaml::Document::new(root), &mut out);
            assert_eq!(out, want, "{src:?}");
        }
    }
}
