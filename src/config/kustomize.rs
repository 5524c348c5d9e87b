//! How kustomize reads a patch, for the steps that ask for its behaviour.
//!
//! SPEC: with `newListItems: prepend` and `inferMergeKeys: false`
//! ([`PatchOptions::kustomize_compatible`]), `merge2` and `json6902` patches give the output of
//! kustomize v5's `patches:` field, quirks included. Some of those quirks come from the way
//! kustomize reads the patch before it applies anything, and are reproduced here, at plan time:
//!
//! * **Trimmed inline text.** kustomize trims the whitespace around an inline `patch:` (Go's
//!   `strings.TrimSpace`, which Rust's [`str::trim`] matches character for character) before it
//!   parses it, for strategic merge and JSON patches alike; a file named by `path:` is read as
//!   it is. So a `|` block scalar that ends an inline patch loses its final line break (and a
//!   `|+` block all of them), and trailing spaces on its last line go too.
//!
//! Other kinds (`jsonmerge`, `merge3`, `apply`) have no kustomize counterpart and are read as
//! written whatever their options.

use super::{PatchKind, PatchOptions};

/// Which of kustomize's readings a step gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Reading {
    /// The step asks for kustomize's behaviour and is (or, without `type`, will be detected as)
    /// `merge2` or `json6902`.
    compatible: bool,
}

impl Reading {
    /// The reading for a step of this `type` (`None`: left to detection, which only ever gives
    /// `merge2` or `json6902`) with these options.
    pub(super) fn of(kind: Option<PatchKind>, options: &PatchOptions) -> Reading {
        let kustomize_kind =
            kind.is_none_or(|k| matches!(k, PatchKind::Merge2 | PatchKind::Json6902));
        Reading {
            compatible: kustomize_kind && options.kustomize_compatible(),
        }
    }

    /// Inline patch text is trimmed before it is parsed.
    pub(super) fn trims_inline_text(self) -> bool {
        self.compatible
    }
}
