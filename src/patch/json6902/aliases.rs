//! Aliases in a document a JSON patch runs on: reading looks through them, and a change below
//! one first makes it a copy of its anchored node, so the change stays at that place.
//!
//! What it is: the anchored nodes of the document, copied into a [`Table`] the first time a walk
//! must follow an alias and kept for the whole run, so that following an alias costs a lookup
//! however many places a patch visits; copied again only after a change to an anchored node
//! ([`Table::stale`]), and then charged to the budget's rereads. A [`View`] is the table as one
//! read-only walk sees it. What it must not do: change the document (the walks do, where a route
//! says), or read the document again while nothing anchored changed.

use std::cell::{Cell, OnceCell};

use super::error::PatchErrorKind;
use crate::yaml::anchors::{anchors_of, first_dangling, Anchors};
use crate::yaml::{AliasError, Kind, Node};

/// The anchored nodes of one run's document, copied when first needed.
#[derive(Default)]
pub(super) struct Table<'a> {
    copies: OnceCell<Built<'a>>,
    /// The copies were forgotten after a change: building them again is a reread, not charged
    /// yet.
    owed: bool,
}

/// A table as it was built: the copies, or why they could not be made, and what building
/// them read.
struct Built<'a> {
    copies: Result<Anchors<Node<'a>>, AliasError>,
    read: usize,
}

impl<'a> Table<'a> {
    /// Forgets the copies after a change to an anchored node: the next alias followed reads
    /// the document again.
    pub(super) fn stale(&mut self) {
        if self.copies.take().is_some() {
            self.owed = true;
        }
    }

    /// What building the table again read, once, when it was built again since
    /// [`stale`](Self::stale); the first reading of the document is not counted.
    pub(super) fn take_reread(&mut self) -> usize {
        match self.copies.get() {
            Some(b) if self.owed => {
                self.owed = false;
                b.read
            }
            _ => 0,
        }
    }

    /// The copy of its anchored node that the alias `alias` becomes, without anchors; `None`
    /// when `alias` is no alias, or the table is not built, or names no anchor in it.
    pub(super) fn copy_for(&self, alias: &Node<'_>) -> Option<Node<'a>> {
        match self.copies.get()?.copies.as_ref() {
            Ok(anchors) => anchors.copy_for(alias),
            Err(_) => None,
        }
    }

    /// The anchored nodes, built from `doc` if they are not.
    fn built(&self, doc: &Node<'a>) -> &Built<'a> {
        self.copies.get_or_init(|| Built {
            copies: anchors_of(doc),
            read: doc.node_count(),
        })
    }
}

/// The document's anchored nodes as one read-only walk follows them: a table (none where no
/// aliases are in play) and the document it is built from when it must be.
pub(super) struct View<'v, 'a> {
    table: Option<&'v Table<'a>>,
    doc: &'v Node<'a>,
    /// A walk needed the table, and it could not be built.
    failed: Cell<bool>,
}

impl<'v, 'a> View<'v, 'a> {
    pub(super) fn new(table: Option<&'v Table<'a>>, doc: &'v Node<'a>) -> Self {
        View {
            table,
            doc,
            failed: Cell::new(false),
        }
    }

    /// Why following an alias failed during this walk (the anchored nodes could not be
    /// copied), if it did: what the walk found is then not to be trusted.
    pub(super) fn failure(&self) -> Option<PatchErrorKind> {
        if !self.failed.get() {
            return None;
        }
        match self.table?.built(self.doc).copies.as_ref() {
            Err(e) => Some(PatchErrorKind::Alias(e.clone())),
            Ok(_) => None,
        }
    }
}

/// Something that knows what an alias stands for.
pub(super) trait Follow<'a> {
    /// What `node` stands for: an alias's anchored node, any other node (or an alias whose
    /// anchor is unknown) itself.
    fn follow<'s>(&'s self, node: &'s Node<'a>) -> &'s Node<'a>;
}

impl<'a> Follow<'a> for View<'_, 'a> {
    fn follow<'s>(&'s self, node: &'s Node<'a>) -> &'s Node<'a> {
        let Some(table) = self.table.filter(|_| node.kind() == Kind::Alias) else {
            return node;
        };
        match table.built(self.doc).copies.as_ref() {
            Ok(anchors) => anchors.follow(node),
            Err(_) => {
                self.failed.set(true);
                node
            }
        }
    }
}

impl<'a> Follow<'a> for Anchors<&Node<'a>> {
    fn follow<'s>(&'s self, node: &'s Node<'a>) -> &'s Node<'a> {
        Anchors::follow(self, node)
    }
}

/// [`Follow::follow`] on the way of a change: when `node` is an alias, its depth (the steps
/// that reach it) goes in `expand`, as it must become a copy of its anchored node before
/// anything below it changes.
pub(super) fn follow_for_change<'s, 'a>(
    view: &'s View<'_, 'a>,
    node: &'s Node<'a>,
    depth: usize,
    expand: &mut Vec<usize>,
) -> &'s Node<'a> {
    let followed = view.follow(node);
    if !std::ptr::eq(followed, node) {
        expand.push(depth);
    }
    followed
}

/// Every alias must name an anchor that comes before it in document order.
pub(super) fn check_aliases(root: &Node<'_>) -> Result<(), PatchErrorKind> {
    match first_dangling(root) {
        Some(name) => Err(PatchErrorKind::DanglingAlias(name.to_owned())),
        None => Ok(()),
    }
}
