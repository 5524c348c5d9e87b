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
pub struct Keep {
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
    pub const COMMENTS: Keep = Keep {
        comments: true,
        quoting: false,
    };
    /// The place's quoting; comments as the caller set them (merge3, which merges comments
    /// three-way itself).
    pub const QUOTING: Keep = Keep {
        comments: false,
        quoting: true,
    };
    /// The place's comments where the new value brings none, and its quoting (apply: the live
    /// object keeps its presentation).
    pub const BOTH: Keep = Keep {
        comments: true,
        quoting: true,
    };
}

/// Puts `new` in the place of `old`: `new` takes the blank lines before `old`, the spacing
/// after its indicator (scalar for scalar), and what `keep` asks for.
pub fn put<'a>(old: &mut Node<'a>, mut new: Node<'a>, keep: Keep) {
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
}
