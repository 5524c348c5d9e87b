//! The members of a patch run's wide mappings, by key: m operations on a mapping of n members
//! cost O(n + m) rather than O(n·m).
//!
//! What it is: [`Members`], the positions of the members of each wide mapping a run has found,
//! by the pointer that reached it, kept true to what every operation did ([`Members::changed`])
//! and checked against the mapping itself whenever it answers, so that an index out of date is
//! rebuilt, never believed. It lives as long as one run of a patch on one document. What it must
//! not do: change a document, or be shared between runs.

use crate::hash::HashMap;
use crate::path::pointer::{Pointer, Token};
use crate::yaml::Node;

/// Wide mappings indexed at once, at most (a patch touching more starts over).
const INDEXED_MAX: usize = 256;

/// The member index of one patch run.
pub(super) struct Members {
    /// Member positions of the wide mappings found so far, by the pointer that reached them
    /// (a pointer without selectors or `-`); `None` when the document has aliases, where one
    /// mapping is reached by several pointers.
    by_pointer: Option<HashMap<String, MemberIndex>>,
    /// Index entries found out of date (by their length, or a key not where they said): each
    /// costs a rebuild. The changes the operations report keep it at 0; the tests check that.
    pub(super) stale: usize,
}

/// What an operation did to the document, for the member index.
pub(super) enum Change {
    /// A member was appended, at this index, to the mapping at the first `depth` tokens.
    Pushed(usize),
    /// The value at the first `depth + 1` tokens was replaced.
    Replaced,
    /// The sequence at the first `depth` tokens had an element inserted or removed: the
    /// positions after it moved.
    Shifted,
    /// The member at the first `depth + 1` tokens was removed from its mapping.
    Removed,
    /// The whole document was replaced.
    Everything,
}

impl Members {
    /// Mappings wider than this are indexed; narrower ones are scanned.
    pub(super) const INDEX_FROM: usize = 16;

    /// An empty index; none at all for a document with aliases (`aliased`).
    pub(super) fn new(aliased: bool) -> Members {
        Members {
            by_pointer: (!aliased).then(HashMap::default),
            stale: 0,
        }
    }

    /// The position of `key` among the members of `map`, which the first `depth` tokens of
    /// `ptr` reached: scanned in a narrow mapping, found by hash in a wide one (the index is
    /// built once and kept up to date). Checked against the mapping itself, so an index that is
    /// out of date is rebuilt, never believed.
    pub(super) fn position(
        &mut self,
        map: &Node<'_>,
        ptr: &Pointer,
        depth: usize,
        key: &str,
    ) -> Option<usize> {
        let entries = map.entries();
        if entries.len() <= Self::INDEX_FROM {
            return map.position(key);
        }
        let (Some(prefix), Some(members)) = (stable_prefix(ptr, depth), self.by_pointer.as_mut())
        else {
            return map.position(key);
        };
        if members.get(&prefix).is_none_or(|i| i.len != entries.len()) {
            if members.contains_key(&prefix) {
                self.stale += 1;
            }
            if members.len() >= INDEXED_MAX {
                members.clear();
            }
            match MemberIndex::of(map) {
                Some(index) => members.insert(prefix.clone(), index),
                None => members.remove(&prefix),
            };
        }
        let Some(index) = members.get(&prefix) else {
            return map.position(key);
        };
        match index.position(key) {
            Some(i) if entries.get(i).and_then(|e| e.key.as_str()) == Some(key) => Some(i),
            Some(_) => {
                // Out of date after all: forget it and scan.
                members.remove(&prefix);
                self.stale += 1;
                map.position(key)
            }
            None => None,
        }
    }

    /// Keeps the index true to what an operation at `ptr` did (see [`Change`]).
    pub(super) fn changed(&mut self, ptr: &Pointer, depth: usize, change: Change) {
        let Some(members) = self.by_pointer.as_mut() else {
            return;
        };
        // The mapping at `upto` tokens and everything below it are forgotten; a selector or
        // `-` on the way stands for any element of its list.
        let forget = |members: &mut HashMap<String, MemberIndex>, upto: usize| {
            let cut = ptr
                .tokens()
                .iter()
                .take(upto)
                .position(|t| matches!(t, Token::Select(_) | Token::End))
                .unwrap_or(upto);
            let prefix = ptr.prefix(cut);
            members.retain(|k, _| {
                !(k == &prefix
                    || k.strip_prefix(prefix.as_str())
                        .is_some_and(|r| r.starts_with('/')))
            });
        };
        match change {
            Change::Everything => members.clear(),
            Change::Replaced => forget(members, depth + 1),
            Change::Shifted => forget(members, depth),
            Change::Pushed(index) => {
                let key = ptr.tokens().get(depth).map(Token::text);
                let entry = stable_prefix(ptr, depth).and_then(|p| members.get_mut(&p));
                let kept = match (entry, key) {
                    (Some(m), Some(key)) if m.len == index => m.push(key),
                    (None, _) => true,
                    _ => false,
                };
                if !kept {
                    forget(members, depth);
                }
            }
            Change::Removed => {
                // Members are found by name, so only what was below the removed one goes.
                forget(members, depth + 1);
                let key = ptr.tokens().get(depth).map(Token::text);
                let entry = stable_prefix(ptr, depth).and_then(|p| members.get_mut(&p));
                match (entry, key) {
                    (Some(m), Some(key)) => m.remove(&key),
                    (None, _) => {}
                    (Some(_), None) => forget(members, depth),
                }
            }
        }
    }
}

/// The text of the pointer made of `ptr`'s first `n` tokens, when it names one mapping for
/// the whole run: no selector (which picks by content that may change) and no `-`.
fn stable_prefix(ptr: &Pointer, n: usize) -> Option<String> {
    let tokens = ptr.tokens().get(..n)?;
    if tokens
        .iter()
        .any(|t| matches!(t, Token::Select(_) | Token::End))
    {
        return None;
    }
    Some(ptr.prefix(n))
}

/// A wide mapping's members by key, kept up to date as members are appended and removed.
/// Each member has a slot, numbered in the order members were indexed or appended; a removed
/// member's slot stays counted in `gone`, so a member's position is its slot less the removed
/// slots before it (a Fenwick tree: O(log n) to update and to read).
struct MemberIndex {
    len: usize,
    slot: HashMap<String, usize>,
    /// Fenwick tree over slots (1-based inside): how many of them are removed.
    gone: Vec<u32>,
    slots: usize,
}

impl MemberIndex {
    /// The index of `map`; `None` when two of its keys have the same text (only a scan finds
    /// the second once the first is removed).
    fn of(map: &Node<'_>) -> Option<MemberIndex> {
        let entries = map.entries();
        let mut slot: HashMap<String, usize> = HashMap::default();
        slot.reserve(entries.len());
        for (i, e) in entries.iter().enumerate() {
            if let Some(k) = e.key.as_str() {
                if slot.insert(k.to_owned(), i).is_some() {
                    return None;
                }
            }
        }
        Some(MemberIndex {
            len: entries.len(),
            slot,
            gone: vec![0; 2 * entries.len() + 2],
            slots: entries.len(),
        })
    }

    /// Removed slots before `slot`.
    fn gone_before(&self, slot: usize) -> usize {
        let mut i = slot;
        let mut n = 0;
        while i > 0 {
            n += self.gone.get(i).copied().unwrap_or(0) as usize;
            i &= i - 1;
        }
        n
    }

    fn position(&self, key: &str) -> Option<usize> {
        let slot = *self.slot.get(key)?;
        Some(slot - self.gone_before(slot))
    }

    /// Appends `key`; false when the tree is full (the caller rebuilds).
    fn push(&mut self, key: String) -> bool {
        if self.slots + 1 >= self.gone.len() {
            return false;
        }
        self.slot.entry(key).or_insert(self.slots);
        self.slots += 1;
        self.len += 1;
        true
    }

    fn remove(&mut self, key: &str) {
        if let Some(slot) = self.slot.remove(key) {
            let mut i = slot + 1;
            while let Some(g) = self.gone.get_mut(i) {
                *g += 1;
                i += i & i.wrapping_neg();
            }
            self.len = self.len.saturating_sub(1);
        }
    }
}
