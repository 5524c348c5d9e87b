//! The alias state of the document being read: which anchors the items so far defined, whether
//! the items share one document (a ResourceList's or a `List`'s) or each is its own (a stream's
//! documents), how deep in list kinds the engine is, and what the item being processed holds.
//!
//! One value, so that the engine's loop over items reads as such: [`Aliases::admit`] an item
//! before its first step, [`Aliases::localise`] it before its first patch, settle it after each
//! patch (in the guard), [`Aliases::seal`] it when it is written.
//!
//! What it must not do: decide whether a patch applies, or report beyond the errors of settling
//! (the engine turns them into results).

use crate::yaml::anchors::{Admitted, AliasError, Scope, Settle};
use crate::yaml::Node;

/// Anchors and aliases of the document being read, and of the item being processed.
#[derive(Debug, Default)]
pub(crate) struct Aliases {
    /// The anchors of the document: one per item of a stream, one for all the items of a
    /// ResourceList or a `List` (`shared`).
    pub scope: Scope,
    /// The items are one document: an item may alias an anchor of an earlier one.
    pub shared: bool,
    /// List kinds (`RoleList`, ...) being read inside the document around them: each adds two
    /// levels of nesting around its items.
    pub lists: usize,
    /// Of those, the bookkeeping ones: their items are bookkeeping too.
    pub bookkeeping_lists: usize,
    /// What the scope found in the item being processed.
    pub current: Admitted,
    /// The item being processed was made whole (its aliases copies) before its first patch.
    pub localised: bool,
}

impl Aliases {
    /// The state for another share of the same items (another thread's): the same kind of
    /// document, inside the same list kinds, nothing read yet.
    pub(crate) fn fork(&self) -> Aliases {
        Aliases {
            shared: self.shared,
            lists: self.lists,
            bookkeeping_lists: self.bookkeeping_lists,
            ..Aliases::default()
        }
    }

    /// Reads the next item of the document, before any step.
    pub(crate) fn admit(&mut self, node: &mut Node<'_>) {
        if !self.shared {
            self.scope.reset();
        }
        self.current = self.scope.admit(node, self.shared);
        self.localised = false;
    }

    /// An item that no document holds (a resource a patch added): nothing to read.
    pub(crate) fn admit_new(&mut self) {
        self.current = Admitted::default();
        self.localised = false;
    }

    /// Follows an alias to the node it reads (for selection: `kind: *k` is read through).
    pub(crate) fn follow<'n, 'a>(&'n self, node: &'n Node<'a>) -> &'n Node<'a> {
        self.scope.follow(node)
    }

    /// Makes the item whole once, before its first patch: every alias becomes a copy, so that
    /// every walker reads plain data (walkers read a place after changing another, decide
    /// deletions and pair list elements by data, which an alias hides). Past the alias budget
    /// (an alias bomb), only aliases of other items' anchors and on its identity become copies,
    /// and the walkers follow the rest. The copies become their aliases again when the item is
    /// written, where nothing changed them.
    pub(crate) fn localise(&mut self, node: &mut Node<'_>) -> Result<(), AliasError> {
        if !self.current.aliases || self.localised {
            return Ok(());
        }
        if self.scope.localise_all(node).is_err() {
            self.scope.localise(node)?;
        }
        self.localised = true;
        Ok(())
    }

    /// Reads the item after a patch, alone: an anchored node whose data changed loses its
    /// anchor, an alias that would read other data becomes a copy.
    pub(crate) fn after_patch(&mut self, node: &mut Node<'_>) -> Result<(), AliasError> {
        if !self.current.aliases {
            return Ok(());
        }
        let how = Settle {
            document: false,
            untouched: false,
            revert: false,
        };
        self.scope.settle(node, how).map(|_| ())
    }

    /// The item as it will be written, read in its document (see [`Scope::settle`]). True when
    /// it must be written from its tree for that.
    pub(crate) fn seal(&mut self, node: &mut Node<'_>, touched: bool) -> Result<bool, AliasError> {
        let scoped = self.current.aliases || self.current.anchors;
        if !scoped || !(self.shared || touched) {
            return Ok(false);
        }
        let how = Settle {
            document: true,
            untouched: !touched,
            revert: true,
        };
        self.scope.settle(node, how)
    }

    /// Reads and settles the entries `range` of a wrapper's root mapping: the part of the
    /// document before its items (their anchors may be aliased by the items), or, once every
    /// item is written, the part after them (an alias there of an anchor that a patch changed or
    /// deleted becomes a copy of what it read). True when one of them must be written anew.
    pub(crate) fn wrapper_entries(
        &mut self,
        root: &mut Node<'_>,
        range: std::ops::Range<usize>,
    ) -> Result<bool, AliasError> {
        self.scope.admit_entries(root, range.clone());
        let how = Settle {
            document: true,
            untouched: true,
            revert: false,
        };
        self.scope.settle_entries(root, range, how)
    }

    /// Ends the document the items were read in.
    pub(crate) fn end_document(&mut self) {
        self.shared = false;
        self.scope.reset();
    }

    /// Levels of nesting around an item as written: the ResourceList's or `List`'s two, and two
    /// for each list kind it is inside.
    pub(crate) fn nesting_around(&self) -> usize {
        2 * usize::from(self.shared) + 2 * self.lists
    }
}

impl Aliases {
    /// Enters a list kind's items: the list is a document of its own when no document holds it
    /// (a stream's), else two more levels inside the one that does. True for the former: give
    /// it back to [`Aliases::leave_list`].
    pub(crate) fn enter_list(&mut self) -> bool {
        let outer = !self.shared;
        if outer {
            self.scope.reset();
            self.shared = true;
        } else {
            self.lists += 1;
        }
        outer
    }

    /// Leaves a list kind's items (`outer`: what [`Aliases::enter_list`] said).
    pub(crate) fn leave_list(&mut self, outer: bool) {
        if outer {
            self.end_document();
        } else {
            self.lists -= 1;
        }
    }
}
