//! The node plumbing every patch generator shares: inputs with their aliases expanded, equality
//! as data (mappings without key order), copies of NEW's nodes that can go into a patch, and
//! the text forms that messages and apimachinery's orderings need.
//!
//! What it must not do: decide what goes into a patch; the generators do.

use std::borrow::Cow;

use crate::merge::align::{FieldIndex, ScalarKey};
use crate::yaml::one_line;
use crate::yaml::scalar::Resolved;
use crate::yaml::{Kind, Node};

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

/// Whether two nodes hold the same data, as JSON would see them: scalars that resolve to the
/// same value, sequences with equal items in the same order, mappings with the same keys and
/// equal values in any order. Comments and styles do not count.
pub(super) fn same(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (a.kind(), b.kind()) {
        (Kind::Map, Kind::Map) => {
            let (ea, eb) = (a.entries(), b.entries());
            if ea.len() != eb.len() {
                return false;
            }
            if ea
                .iter()
                .zip(eb)
                .all(|(x, y)| x.key.same_data(&y.key) && same(&x.value, &y.value))
            {
                return true;
            }
            let index = FieldIndex::new(Some(b));
            ea.iter()
                .all(|x| index.get(&x.key).is_some_and(|y| same(&x.value, &y.value)))
        }
        (Kind::Seq, Kind::Seq) => {
            a.items().len() == b.items().len()
                && a.items().iter().zip(b.items()).all(|(x, y)| same(x, y))
        }
        _ => a.same_data(b),
    }
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

/// `%v` of a float64: the shortest digits, in exponent form when the exponent is below -4 or
/// at least 6 (`1e+06`, `1.5e-05`).
fn go_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
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
