//! The node plumbing every patch generator shares: inputs with their aliases expanded, mapping
//! keys as data ([`key_text`], [`KeyIndex`]), equality as data (mappings without key order),
//! copies of NEW's nodes that can go into a patch, and the text forms that messages and
//! apimachinery's orderings need.
//!
//! A mapping key is the same key as another when Kubernetes would read the two as one field:
//! both sides are JSON object keys there, so a key's identity is its text when it is a string
//! and the text of its value otherwise ([`key_text`]): `1`, `0x1`, `1.0` and `"1"` are one key,
//! `true` and `True` another, `null` and `~` a third; `"0x1"` (a string) is not `0x1` (the
//! number one).
//!
//! What it must not do: decide what goes into a patch; the generators do.

use std::borrow::Cow;

use crate::hash::HashMap;
use crate::merge::align::{data_hash, ScalarKey};
use crate::yaml::one_line;
use crate::yaml::scalar::Resolved;
use crate::yaml::{Entry, Kind, Node};

use super::{DiffError, DiffErrorKind};

/// Most nodes expanding an input's aliases may produce.
const ALIAS_BUDGET: usize = 1_000_000;

/// `node` with its aliases replaced by copies of their anchored nodes (borrowed as it is when
/// it has none), so that comparing and copying never meet an alias.
pub(super) fn expanded<'x, 'a>(node: &'x Node<'a>) -> Result<Cow<'x, Node<'a>>, DiffError> {
    if !node.has_alias() {
        return Ok(Cow::Borrowed(node));
    }
    let mut copy = node.clone();
    copy.expand_aliases(ALIAS_BUDGET)
        .map_err(|e| DiffError::new(DiffErrorKind::Alias(e)))?;
    Ok(Cow::Owned(copy))
}

use crate::yaml::index::go_float;
pub(crate) use crate::yaml::index::key_text;

/// The entries of a mapping by key as data ([`key_text`]; keys without text by their data), so
/// that pairing the fields of two mappings costs a lookup per field. The first of two entries
/// with one key wins.
pub(crate) struct KeyIndex<'n, 'x> {
    by_text: HashMap<Cow<'n, str>, &'n Entry<'x>>,
    others: HashMap<u64, Vec<&'n Entry<'x>>>,
}

impl<'n, 'x> KeyIndex<'n, 'x> {
    pub(crate) fn new(map: &'n Node<'x>) -> Self {
        let mut idx = KeyIndex {
            by_text: HashMap::default(),
            others: HashMap::default(),
        };
        for e in map.entries() {
            match key_text(&e.key) {
                Some(t) => {
                    idx.by_text.entry(t).or_insert(e);
                }
                None => idx.others.entry(data_hash(&e.key)).or_default().push(e),
            }
        }
        idx
    }

    /// The entry whose key is `key` as data.
    pub(crate) fn get(&self, key: &Node<'_>) -> Option<&'n Entry<'x>> {
        match key_text(key) {
            Some(t) => self.by_text.get(t.as_ref()).copied(),
            None => self
                .others
                .get(&data_hash(key))?
                .iter()
                .copied()
                .find(|e| e.key.same_data(key)),
        }
    }
}

/// Whether two keys are one key as data ([`key_text`]).
pub(crate) fn same_key(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (key_text(a), key_text(b)) {
        (Some(x), Some(y)) => x == y,
        (None, None) => a.same_data(b),
        _ => false,
    }
}

/// Whether two nodes hold the same data, as Kubernetes would see them: scalars that resolve to
/// the same value, sequences with equal items in the same order, mappings with the same keys
/// (as data: [`key_text`]) and equal values in any order. Comments and styles do not count.
pub(crate) fn same(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (a.kind(), b.kind()) {
        (Kind::Map, Kind::Map) => {
            let (ea, eb) = (a.entries(), b.entries());
            if ea.len() != eb.len() {
                return false;
            }
            if ea
                .iter()
                .zip(eb)
                .all(|(x, y)| same_key(&x.key, &y.key) && same(&x.value, &y.value))
            {
                return true;
            }
            // Each of `a`'s entries pairs with one of `b`'s, a different one each time (two keys
            // of `a` that are one key as data must not both find the same entry).
            let index = KeyIndex::new(b);
            let mut used = crate::hash::HashSet::default();
            ea.iter().all(|x| {
                index
                    .get(&x.key)
                    .is_some_and(|y| used.insert(std::ptr::from_ref(y)) && same(&x.value, &y.value))
            })
        }
        (Kind::Seq, Kind::Seq) => {
            a.items().len() == b.items().len()
                && a.items().iter().zip(b.items()).all(|(x, y)| same(x, y))
        }
        _ => a.same_data(b),
    }
}

/// Whether two nodes that hold the same data ([`same`]) also spell every mapping key alike
/// (its text and tag): `{1: a}` and `{0x1: a}` are the same data spelled otherwise. Keys that
/// are not one key as data do not count here (`same` has told them apart).
pub(super) fn spelled_alike(a: &Node<'_>, b: &Node<'_>) -> bool {
    let alike = |x: &Node<'_>, y: &Node<'_>| x.as_str() == y.as_str() && x.tag() == y.tag();
    match (a.kind(), b.kind()) {
        (Kind::Map, Kind::Map) => {
            let (ea, eb) = (a.entries(), b.entries());
            if ea.len() == eb.len() && ea.iter().zip(eb).all(|(x, y)| alike(&x.key, &y.key)) {
                return ea
                    .iter()
                    .zip(eb)
                    .all(|(x, y)| spelled_alike(&x.value, &y.value));
            }
            let index = KeyIndex::new(b);
            ea.iter().all(|x| {
                index
                    .get(&x.key)
                    .is_none_or(|y| alike(&x.key, &y.key) && spelled_alike(&x.value, &y.value))
            })
        }
        (Kind::Seq, Kind::Seq) => a
            .items()
            .iter()
            .zip(b.items())
            .all(|(x, y)| spelled_alike(x, y)),
        _ => true,
    }
}

/// [`same`] data with every key spelled alike ([`spelled_alike`]): what a patch whose engine
/// gives the result the patch's spelling of a key need not mention.
pub(super) fn same_spelled(a: &Node<'_>, b: &Node<'_>) -> bool {
    same(a, b) && spelled_alike(a, b)
}

/// A copy of `node` that can go into a patch: its comments and styles kept, its anchors
/// dropped (carried into a resource they could capture the resource's later aliases).
pub(super) fn plain_copy<'n>(node: &Node<'n>) -> Node<'n> {
    let mut copy = node.clone();
    if has_anchor(&copy) {
        strip_anchors(&mut copy);
    }
    copy
}

/// A copy of a scalar without comments, anchors or place, borrowing nothing.
pub(super) fn bare(n: &Node<'_>) -> Node<'static> {
    let mut c = plain_copy(n).into_owned();
    *c.comments_mut() = crate::yaml::Comments::default();
    c.set_blank_lines(0);
    c
}

fn has_anchor(node: &Node<'_>) -> bool {
    node.anchor().is_some()
        || node
            .entries()
            .iter()
            .any(|e| has_anchor(&e.key) || has_anchor(&e.value))
        || node.items().iter().any(has_anchor)
}

fn strip_anchors(node: &mut Node<'_>) {
    node.set_anchor(None);
    if let Some(es) = node.entries_mut() {
        for e in es {
            strip_anchors(&mut e.key);
            strip_anchors(&mut e.value);
        }
    } else if let Some(items) = node.items_mut() {
        items.iter_mut().for_each(strip_anchors);
    }
}

/// A node with `node`'s presentation (style, comments) and no children: the start of a patch
/// collection built in NEW's image.
pub(super) fn shell<'n>(node: &Node<'n>) -> Node<'n> {
    let mut n = node.clone();
    n.set_anchor(None);
    if let Some(es) = n.entries_mut() {
        es.clear();
    } else if let Some(is) = n.items_mut() {
        is.clear();
    }
    n
}

/// The text Go's `fmt.Sprintf("%v", v)` gives for a scalar decoded from JSON (numbers are
/// float64 there), which is how apimachinery orders deletion lists and merge keys. Only the
/// order of generated lists depends on it.
pub(super) fn go_text(n: &Node<'_>) -> String {
    match n.resolved() {
        Some(Resolved::Null) => "<nil>".to_owned(),
        Some(Resolved::Bool(b)) => b.to_string(),
        Some(Resolved::Int(i)) if i.unsigned_abs() < 1_000_000 => i.to_string(),
        Some(Resolved::Int(i)) => go_float(i as f64),
        Some(Resolved::Float(f)) => go_float(f),
        Some(Resolved::Str(s)) => s.to_owned(),
        None => one_line(n),
    }
}

/// Whether a list holds two equal values (scalars by value, collections by data).
pub(super) fn has_duplicate_values(items: &[Node<'_>]) -> bool {
    let mut seen = crate::hash::HashSet::default();
    let mut others: Vec<&Node<'_>> = Vec::new();
    for i in items {
        match ScalarKey::of(i) {
            Some(k) => {
                if !seen.insert(k) {
                    return true;
                }
            }
            None => {
                if others.iter().any(|o| same(o, i)) {
                    return true;
                }
                others.push(i);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::diff::test_node as n;

    #[test]
    fn same_ignores_key_order_and_styles_but_not_types() {
        assert!(same(&n("{a: 1, b: [x, 'y']}"), &n("b: [\"x\", y]\na: 1\n")));
        assert!(!same(&n("{a: 1}"), &n("{a: '1'}")));
        assert!(!same(&n("[1, 2]"), &n("[2, 1]")));
        assert!(!same(&n("{a: 1}"), &n("{a: 1, b: 2}")));
        assert!(same(&n("{a: ~}"), &n("{a: null}")));
    }

    #[test]
    fn copies_lose_anchors_and_keep_comments() {
        let c = plain_copy(&n("a: &x 1 # one\nb: 2\n"));
        assert_eq!(c.get("a").and_then(Node::anchor), None);
        assert_eq!(
            c.get("a")
                .and_then(|a| a.comments().line.as_ref())
                .map(|c| c.text.as_ref()),
            Some(" one")
        );
    }

    #[test]
    fn go_text_is_percent_v() {
        assert_eq!(go_text(&n("3")), "3");
        assert_eq!(go_text(&n("abc")), "abc");
        assert_eq!(go_text(&n("1.5")), "1.5");
        assert_eq!(go_text(&n("true")), "true");
        assert_eq!(go_text(&n("null")), "<nil>");
        assert_eq!(go_text(&n("1000000")), "1e+06");
        assert_eq!(go_text(&n("1234567")), "1.234567e+06");
        assert_eq!(go_text(&n("0.00001")), "1e-05");
    }

    #[test]
    fn duplicates_are_found_by_value() {
        assert!(has_duplicate_values(n("[a, b, 'a']").items()));
        assert!(!has_duplicate_values(n("[1, '1']").items()));
        assert!(has_duplicate_values(n("[{a: 1}, {a: 1}]").items()));
    }
}
