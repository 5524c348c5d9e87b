//! Budgets: what one patch may cost on one resource, counted as it runs and refused past a
//! bound, so that legal but hostile input (a few kilobytes of YAML) ends in an error naming the
//! patch rather than in minutes of work or an allocation that aborts the process.
//!
//! What it is: [`Budget`], a plain value that the caller makes for one patch on one resource and
//! passes down by `&mut` to what the patch does there; each step spends from it and gets a
//! [`BudgetError`] when too little is left. What it must not do: be global or thread-local
//! (every bound is a value someone passed in), decide what a failure means for the run (the
//! caller names the resource, the patch and the operation), or walk trees.
//!
//! The bounds, and why each exists:
//!
//! * **Growth** — what a JSON patch's `copy` operations add to the resource, in
//!   [`Node::weight`] bytes: `copy /data/d -> /data/d/cN` doubles the resource each time, so
//!   forty of them in a 2 KB config asked for a terabyte. A resource may grow by its own size
//!   before the patch, or by [`COPY_SLACK`] when it is smaller.
//! * **Shifts** — list elements and mapping entries moved by inserts and removes before the end
//!   of a collection ([`SHIFT_BUDGET`]).
//! * **Scans** — list elements examined by key selectors (`[name=app]`), which read their whole
//!   list ([`SCAN_BUDGET`]).

use crate::yaml::Node;

/// What a resource smaller than this may grow by through a patch's copies (see "Growth" in the
/// module documentation).
pub const COPY_SLACK: usize = 64 << 10;

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

/// What one patch may still spend on one resource. Made by the caller for each resource a patch
/// applies to, and spent by every operation of the patch there.
#[derive(Clone, Debug)]
pub struct Budget {
    /// What the patch may still add, once the resource it applies to has been measured.
    growth: Option<Growth>,
    shifts_left: usize,
    scans_left: usize,
}

/// The growth a budget allows, measured on the resource before the patch.
#[derive(Clone, Copy, Debug)]
struct Growth {
    left: usize,
    limit: usize,
}

/// A bound a patch would pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The patch would add more than the resource may grow by (see "Growth").
    #[error("the patch would grow the resource by more than {limit} bytes")]
    Grows { limit: usize },
    /// Inserts and removes would shift more than [`SHIFT_BUDGET`] elements.
    #[error("the operations shift more than {0} list elements and mapping entries")]
    Shifts(usize),
    /// Key selectors would examine more than [`SCAN_BUDGET`] list elements.
    #[error("key selectors examine more than {0} list elements")]
    Scans(usize),
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new()
    }
}

impl Budget {
    /// A budget at its bounds, for a resource not measured yet: until [`measure`](Self::measure)
    /// says how large the resource is, it may grow by [`COPY_SLACK`].
    pub fn new() -> Budget {
        Budget {
            growth: None,
            shifts_left: SHIFT_BUDGET,
            scans_left: SCAN_BUDGET,
        }
    }

    /// Measures the resource the patch applies to, as it is before the patch: it may grow by
    /// its own size, or by [`COPY_SLACK`] when that is more. Only the first measure counts, so
    /// a caller that measured the whole resource keeps that limit when a patch measures the
    /// place it applies at.
    pub fn measure(&mut self, resource: &Node<'_>) {
        if self.growth.is_none() {
            let limit = resource.weight().max(COPY_SLACK);
            self.growth = Some(Growth { left: limit, limit });
        }
    }

    /// Whether [`measure`](Self::measure) has been called.
    pub fn is_measured(&self) -> bool {
        self.growth.is_some()
    }

    /// Spends `bytes` of growth ([`Node::weight`] bytes).
    pub fn grow(&mut self, bytes: usize) -> Result<(), BudgetError> {
        let g = self.growth.get_or_insert(Growth {
            left: COPY_SLACK,
            limit: COPY_SLACK,
        });
        g.left = g
            .left
            .checked_sub(bytes)
            .ok_or(BudgetError::Grows { limit: g.limit })?;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bound_refuses_past_it_and_spends_nothing_then() {
        let mut b = Budget::new();
        assert_eq!(b.scan(SCAN_BUDGET - 1), Ok(()));
        assert_eq!(b.scan(1), Ok(()));
        assert_eq!(b.scan(1), Err(BudgetError::Scans(SCAN_BUDGET)));
        assert_eq!(b.shift(SHIFT_BUDGET), Ok(()));
        assert_eq!(b.shift(1), Err(BudgetError::Shifts(SHIFT_BUDGET)));
        // Not measured: the slack.
        assert_eq!(
            b.grow(COPY_SLACK + 1),
            Err(BudgetError::Grows { limit: COPY_SLACK })
        );
        assert_eq!(b.grow(COPY_SLACK), Ok(()));
        assert_eq!(b.grow(1), Err(BudgetError::Grows { limit: COPY_SLACK }));
    }

    #[test]
    fn growth_is_the_resources_own_size_measured_once() {
        let big = Node::string("x".repeat(2 * COPY_SLACK));
        let mut b = Budget::new();
        b.measure(&big);
        let limit = big.weight();
        b.measure(&Node::null());
        assert_eq!(b.grow(limit), Ok(()));
        assert_eq!(b.grow(1), Err(BudgetError::Grows { limit }));
    }
}
