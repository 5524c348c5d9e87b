//! Budgets: what one patch may cost on one resource, counted as it runs and refused past a
//! bound, so that legal but hostile input (a few hundred bytes of YAML whose aliases reach a
//! million places) ends in an error naming the patch rather than in minutes of work or an
//! allocation that aborts the process.
//!
//! What it is: [`Budget`], a plain value that the caller makes for one patch on one resource and
//! passes down by `&mut` to everything the patch does there — every place its `at:` selects,
//! every operation; each step spends from it and gets a [`BudgetError`] when too little is
//! left. What it must not do: be global or thread-local (every bound is a value someone passed
//! in), decide what a failure means for the run (the caller names the resource, the patch, the
//! operation and the place), or walk trees beyond measuring the resource once.
//!
//! The bounds, and why each exists:
//!
//! * **Places** — the places a patch applies at: those its `at:` selects and those each JSON
//!   patch operation's `[*]` select, counted over the whole patch ([`PLACES_BUDGET`]). Without
//!   aliases a resource has no more places than nodes; through aliases a few hundred bytes
//!   reach a million.
//! * **Growth** — what the patch adds to the resource, in [`Node::weight`] bytes, where one
//!   piece of a patch can be written many times: a value (or a whole merge patch) put at many
//!   places, JSON patch's copies (`copy /data/d -> /data/d/cN` doubles the resource each time),
//!   and the copies that aliases become when a change goes through them. A resource may grow
//!   by its own size before the patch plus [`GROWTH_SLACK`]: a 4 KB value added at a million
//!   places would need 4 GB.
//! * **Shifts** — list elements and mapping entries moved by inserts and removes before the end
//!   of a collection ([`SHIFT_BUDGET`]).
//! * **Scans** — list elements examined by key selectors (`[name=app]`), which read their whole
//!   list, and the members of wide mappings read to find one in a document with aliases, where
//!   JSON patch keeps no index of them ([`SCAN_BUDGET`]).
//! * **Rereads** — nodes JSON patch reads again to follow aliases after a change to an anchored
//!   node ([`REREAD_BUDGET`]).

use crate::yaml::Node;

/// How many places a patch may apply at on one resource, over its `at:` and all its
/// operations' `[*]` (see "Places"). A million elements reached by one `[*]` pass.
pub const PLACES_BUDGET: usize = 1 << 20;

/// What a patch may add to a resource beyond the resource's own size (see "Growth"), in
/// [`Node::weight`] bytes (48 a node, plus its text).
pub const GROWTH_SLACK: usize = 16 << 20;

/// How many elements (list items, mapping entries) a patch's inserts and removes may shift,
/// in all, on one resource. Each insert or remove before the end of a collection of n moves up
/// to n elements in memory; m of them on a large collection cost m·n. At this bound (134
/// million) that is about a second of copying; past it the patch is refused. A thousand removes
/// at the front of a list of 100,000 pass.
pub const SHIFT_BUDGET: usize = 1 << 27;

/// How many list elements a patch's key selectors (`[name=app]`) may examine, in all, on one
/// resource. A selector reads the whole list to find the one element it names, so m of them on
/// a list of n cost m·n; at this bound (67 million) that is a few seconds. A thousand selectors
/// on a list of 50,000 pass.
pub const SCAN_BUDGET: usize = 1 << 26;

/// How many nodes a JSON patch may read again, on one resource, to follow aliases after it
/// changed an anchored node (the anchored nodes are read once, and again only after a change
/// to one of them). At this bound (67 million) that is a few seconds.
pub const REREAD_BUDGET: usize = 1 << 26;

/// What one patch may still spend on one resource. Made by the caller for each resource a patch
/// applies to, and spent by every place and operation of the patch there.
#[derive(Clone, Debug)]
pub struct Budget {
    /// What the patch may still add, once the resource it applies to has been measured.
    growth: Option<Growth>,
    /// What has been added in all.
    grown: usize,
    places_left: usize,
    shifts_left: usize,
    scans_left: usize,
    rereads_left: usize,
}

/// The growth a budget allows, measured on the resource before the patch.
#[derive(Clone, Copy, Debug)]
struct Growth {
    left: usize,
    limit: usize,
}

/// What a patch adds that counts as growth: what it was adding when it passed the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// A JSON patch's `copy` of a value in the resource.
    Copy,
    /// A value (or a merge patch) put at one of several places.
    AtPlaces,
    /// The copy an alias becomes when a change goes through it.
    AliasCopy,
}

/// A bound a patch would pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The patch reaches more places than [`PLACES_BUDGET`].
    #[error(
        "the patch reaches more than {0} places (those its at: selects and those its [*] \
         select, counted together): aliases can make a few lines reach millions; split the \
         patch, or narrow what it selects"
    )]
    Places(usize),
    /// The patch would add more than the resource may grow by (see "Growth").
    #[error(
        "{} would grow the resource by more than {limit} bytes (a patch may add the \
         resource's own size and {} bytes more, counting each place a value goes to, each \
         copy and each alias a change goes through)",
        match .added {
            Added::Copy => "copies",
            Added::AtPlaces => "what it adds at its places",
            Added::AliasCopy => "the copies of the aliases it changes through",
        },
        GROWTH_SLACK
    )]
    Grows { limit: usize, added: Added },
    /// Inserts and removes would shift more than [`SHIFT_BUDGET`] elements.
    #[error(
        "the operations shift more than {0} list elements and mapping entries (each insert or \
         remove before the end of a collection of n moves up to n): split the patch, or \
         address elements from the end"
    )]
    Shifts(usize),
    /// Key selectors (and, through aliases, lookups in wide mappings) would examine more than
    /// [`SCAN_BUDGET`] list elements and mapping entries.
    #[error(
        "key selectors examine more than {0} list elements (each one reads the whole list; \
         so does a member looked up through aliases in a mapping of more than 16): address \
         elements by index, or split the patch"
    )]
    Scans(usize),
    /// Following aliases after changes to anchored nodes would read more than
    /// [`REREAD_BUDGET`] nodes.
    #[error(
        "following aliases after changes to their anchored nodes reads more than {0} nodes: \
         split the patch"
    )]
    Rereads(usize),
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new()
    }
}

impl Budget {
    /// A budget at its bounds, for a resource not measured yet: until [`measure`](Self::measure)
    /// says how large the resource is, it may grow by [`GROWTH_SLACK`].
    pub fn new() -> Budget {
        Budget {
            growth: None,
            grown: 0,
            places_left: PLACES_BUDGET,
            shifts_left: SHIFT_BUDGET,
            scans_left: SCAN_BUDGET,
            rereads_left: REREAD_BUDGET,
        }
    }

    /// Measures the resource the patch applies to, as it is before the patch: it may grow by
    /// its own size and [`GROWTH_SLACK`]. Only the first measure counts, so a caller that
    /// measured the whole resource keeps that limit when the patch measures a place inside it.
    pub fn measure(&mut self, resource: &Node<'_>) {
        if self.growth.is_none() {
            let limit = resource.weight().saturating_add(GROWTH_SLACK);
            self.growth = Some(Growth { left: limit, limit });
        }
    }

    /// Whether [`measure`](Self::measure) has been called.
    pub fn is_measured(&self) -> bool {
        self.growth.is_some()
    }

    /// What has been added in all ([`Node::weight`] bytes).
    pub fn grown(&self) -> usize {
        self.grown
    }

    /// Spends one place.
    pub fn place(&mut self) -> Result<(), BudgetError> {
        self.places_left = self
            .places_left
            .checked_sub(1)
            .ok_or(BudgetError::Places(PLACES_BUDGET))?;
        Ok(())
    }

    /// Spends `bytes` of growth ([`Node::weight`] bytes) on what `added` says.
    pub fn grow(&mut self, bytes: usize, added: Added) -> Result<(), BudgetError> {
        let g = self.growth.get_or_insert(Growth {
            left: GROWTH_SLACK,
            limit: GROWTH_SLACK,
        });
        g.left = g.left.checked_sub(bytes).ok_or(BudgetError::Grows {
            limit: g.limit,
            added,
        })?;
        self.grown = self.grown.saturating_add(bytes);
        Ok(())
    }

    /// Spends `n` elements shifted by an insert or a remove.
    pub fn shift(&mut self, n: usize) -> Result<(), BudgetError> {
        self.shifts_left = self
            .shifts_left
            .checked_sub(n)
            .ok_or(BudgetError::Shifts(SHIFT_BUDGET))?;
        Ok(())
    }

    /// Spends `n` list elements a key selector examines.
    pub fn scan(&mut self, n: usize) -> Result<(), BudgetError> {
        self.scans_left = self
            .scans_left
            .checked_sub(n)
            .ok_or(BudgetError::Scans(SCAN_BUDGET))?;
        Ok(())
    }

    /// Spends `n` nodes read again to follow aliases.
    pub fn reread(&mut self, n: usize) -> Result<(), BudgetError> {
        self.rereads_left = self
            .rereads_left
            .checked_sub(n)
            .ok_or(BudgetError::Rereads(REREAD_BUDGET))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bound_refuses_past_it() {
        let mut b = Budget::new();
        assert_eq!(b.scan(SCAN_BUDGET - 1), Ok(()));
        assert_eq!(b.scan(1), Ok(()));
        assert_eq!(b.scan(1), Err(BudgetError::Scans(SCAN_BUDGET)));
        assert_eq!(b.shift(SHIFT_BUDGET), Ok(()));
        assert_eq!(b.shift(1), Err(BudgetError::Shifts(SHIFT_BUDGET)));
        assert_eq!(b.reread(REREAD_BUDGET), Ok(()));
        assert_eq!(b.reread(1), Err(BudgetError::Rereads(REREAD_BUDGET)));
        for _ in 0..PLACES_BUDGET {
            assert_eq!(b.place(), Ok(()));
        }
        assert_eq!(b.place(), Err(BudgetError::Places(PLACES_BUDGET)));
        // Not measured: the slack.
        let over = BudgetError::Grows {
            limit: GROWTH_SLACK,
            added: Added::Copy,
        };
        assert_eq!(b.grow(GROWTH_SLACK + 1, Added::Copy), Err(over.clone()));
        assert_eq!(b.grow(GROWTH_SLACK, Added::AtPlaces), Ok(()));
        assert_eq!(b.grown(), GROWTH_SLACK);
        assert_eq!(b.grow(1, Added::Copy), Err(over));
    }

    #[test]
    fn growth_is_the_resources_own_size_and_the_slack_measured_once() {
        let big = Node::string("x".repeat(1000));
        let mut b = Budget::new();
        b.measure(&big);
        let limit = big.weight() + GROWTH_SLACK;
        b.measure(&Node::null());
        assert_eq!(b.grow(limit, Added::AliasCopy), Ok(()));
        assert_eq!(
            b.grow(1, Added::AliasCopy),
            Err(BudgetError::Grows {
                limit,
                added: Added::AliasCopy
            })
        );
    }
}
