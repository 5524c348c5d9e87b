//! Aliases in a document a JSON patch runs on: reading looks through them, and a change below
//! one first makes it a copy of its anchored node, so the change stays at that place.
//!
//! What it is: the anchored nodes of the document as a walk sees them ([`View`]), the step that
//! notes an alias on a route for copying ([`follow_for_change`]), and the checks every result
//! through aliases must pass (each alias after its anchor, nesting within the reader's bound).
//! What it must not do: change the document (the walks do, where a route says).

use super::error::PatchErrorKind;
use crate::yaml::anchors::{first_dangling, Anchors};
use crate::yaml::{Node, MAX_DEPTH};

/// The anchored nodes of a document, borrowed: a JSON patch finds its way through the document
/// before it changes anything, so it needs no copies.
pub(super) type View<'n, 'a> = Anchors<&'n Node<'a>>;

/// The anchored nodes of `root` when aliases are in play (`aliased`), none otherwise.
pub(super) fn view<'n, 'a>(root: &'n Node<'a>, aliased: bool) -> View<'n, 'a> {
    if aliased {
        Anchors::view(root)
    } else {
        Anchors::default()
    }
}

/// [`Anchors::follow`], noting in `expand` that the alias (reached after `depth` steps) must
/// become a copy of its anchored node before anything below it changes.
pub(super) fn follow_for_change<'n, 'a>(
    anchors: &'n View<'n, 'a>,
    node: &'n Node<'a>,
    depth: usize,
    expand: &mut Vec<(usize, Node<'a>)>,
) -> &'n Node<'a> {
    match anchors.copy_for(node) {
        Some(copy) => {
            expand.push((depth, copy));
            anchors.follow(node)
        }
        None => node,
    }
}

/// Every alias must name an anchor that comes before it in document order.
pub(super) fn check_aliases(root: &Node<'_>) -> Result<(), PatchErrorKind> {
    match first_dangling(root) {
        Some(name) => Err(PatchErrorKind::DanglingAlias(name.to_owned())),
        None => Ok(()),
    }
}

/// Levels of collections in the document, after a change that went through an alias (it
/// became a copy of its anchored node): deeper than [`MAX_DEPTH`] is an error, as no YAML
/// reader would read the result back.
pub(super) fn check_depth(root: &Node<'_>) -> Result<(), PatchErrorKind> {
    if root.depth() > MAX_DEPTH {
        return Err(PatchErrorKind::TooDeep(MAX_DEPTH));
    }
    Ok(())
}
