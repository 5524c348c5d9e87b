//! Placement: one node put in another's place in a tree.
//!
//! What it is: [`put`], the one mechanical step every walker takes once it has decided that a
//! value is replaced (merge2, merge3, apply, jsonmerge, json6902, and an alias that becomes a
//! copy of its anchored node, see [`super::anchors`]). A node's presentation is partly the
//! value's and partly the place's. The blank lines before an entry and the spacing after its
//! `:` or `-` belong to the place and always stay; comments and quoting could go either way,
//! and each walker's documented rule picks, through [`Keep`].
//!
//! What it must not do: decide whether a value is replaced, or look at anything but the two
//! nodes (no schema, no paths, no other part of the tree).

use super::scalar::{self, Resolved};
use super::{Node, ScalarStyle};

/// What the new node keeps of the old one, besides the place's blank lines and spacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Keep {
    /// The old node's comments wherever the new node has none of its own (head, line and foot
    /// each on its own): a value from a patch brings its comments, and the place keeps those
    /// the patch does not replace. Off: the comments are the new node's, as the caller set them.
    pub comments: bool,
    /// The old string's quoting, when both are untagged strings and that quoting can still
    /// write the new text: `"local"` replaced by `'update'` stays double-quoted; a plain string
    /// stays plain unless the new text needs quotes. Off: the new node's own style.
    pub quoting: bool,
}

impl Keep {
    /// The place's comments where the new value brings none; the value's own style (merge2,
    /// jsonmerge, json6902: a node taken from the patch keeps the patch's style).
    pub(crate) const COMMENTS: Keep = Keep {
        comments: true,
        quoting: false,
    };
    /// The place's quoting; comments as the caller set them (merge3, which merges comments
    /// three-way itself).
    pub(crate) const QUOTING: Keep = Keep {
        comments: false,
        quoting: true,
    };
    /// The place's comments where the new value brings none, and its quoting (apply: the live
    /// object keeps its presentation).
    pub(crate) const BOTH: Keep = Keep {
        comments: true,
        quoting: true,
    };
}

/// Puts `new` in the place of `old`: `new` takes the blank lines before `old`, the spacing
/// after its indicator (scalar for scalar), and what `keep` asks for.
pub(crate) fn put<'a>(old: &mut Node<'a>, mut new: Node<'a>, keep: Keep) {
    if keep.comments {
        new.keep_comments_of(old.comments());
    }
    new.set_blank_lines(old.blank_lines());
    if old.is_scalar() && new.is_scalar() {
        new.layout_mut().gap = old.layout().gap;
        if keep.quoting {
            if let Some(style) = kept_style(old, &new) {
                let text = new.as_str().unwrap_or_default().to_owned();
                new.set_text(text, style);
            }
        }
    }
    *old = new;
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
/// same value only as the same text. Aliases are the same only as the same alias.
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
                    .all(|(x, y)| same_value(&x.key, &y.key) && same_value(&x.value, &y.value))
        }
        (Kind::Alias, Kind::Alias) => a.alias_name() == b.alias_name(),
        _ => false,
    }
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

/// The style `new` should take from `old`, if any: only between untagged strings, so the
/// value's type cannot change.
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
    match from {
        ScalarStyle::DoubleQuoted => Some(from),
        ScalarStyle::SingleQuoted => scalar::single_quoted(text).map(|_| from),
        // `Any` writes plain where plain reads back as the same string, quoted otherwise.
        ScalarStyle::Plain | ScalarStyle::Any => Some(ScalarStyle::Any),
        ScalarStyle::Literal if text.contains('\n') && scalar::literal_ok(text) => Some(from),
        ScalarStyle::Literal | ScalarStyle::Folded => None,
    }
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
            (Keep::COMMENTS, Some(" place"), ScalarStyle::SingleQuoted),
            (Keep::QUOTING, None, ScalarStyle::DoubleQuoted),
            (Keep::BOTH, Some(" place"), ScalarStyle::DoubleQuoted),
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
}
