//! The identity a strategic merge or JSON merge patch starts with: OLD's `apiVersion`, `kind`,
//! `metadata.name` and `metadata.namespace`, so that the patch selects OLD without a target.
//!
//! What it must not do: decide what changed. It only puts the identity fields in front of a
//! patch made elsewhere, and reports a patch that changes them.

use crate::path::{Path, Seg};
use crate::yaml::{Comments, Entry, Node};

use super::{Warning, WarningKind};

const TOP: [&str; 2] = ["apiVersion", "kind"];
const META: [&str; 2] = ["name", "namespace"];

/// `patch` (a mapping) with OLD's identity fields first: `apiVersion`, `kind`, then `metadata`
/// starting with `name` and `namespace`, then the rest of the patch in its order. A field the
/// patch already sets (NEW changed it) keeps the patch's value and is reported.
pub(super) fn with_identity<'n>(
    old: &Node<'_>,
    mut patch: Node<'n>,
    warnings: &mut Vec<Warning>,
) -> Node<'n> {
    if !patch.is_map() || !old.is_map() {
        return patch;
    }
    let mut rest: Vec<Entry<'n>> = patch.entries_mut().map(std::mem::take).unwrap_or_default();
    let mut head: Vec<Entry<'n>> = Vec::new();
    for field in TOP {
        head.extend(take_or_copy(
            &mut rest,
            old.get(field),
            field,
            &[],
            warnings,
        ));
    }
    let meta_at = rest.iter().position(|e| e.key.as_str() == Some("metadata"));
    let patch_meta = meta_at.map(|i| rest.remove(i));
    match patch_meta {
        // NEW removed or replaced metadata as a whole: nothing to put in front of it.
        Some(e) if !e.value.is_map() => head.push(e),
        patch_meta => {
            let old_meta = old.get("metadata");
            let (key, mut meta) = match patch_meta {
                Some(e) => (e.key, e.value),
                None => (Node::string("metadata"), Node::map()),
            };
            let mut meta_rest: Vec<Entry<'n>> =
                meta.entries_mut().map(std::mem::take).unwrap_or_default();
            let mut meta_head: Vec<Entry<'n>> = Vec::new();
            for field in META {
                meta_head.extend(take_or_copy(
                    &mut meta_rest,
                    old_meta.and_then(|m| m.get(field)),
                    field,
                    &["metadata"],
                    warnings,
                ));
            }
            meta_head.extend(meta_rest);
            if !meta_head.is_empty() {
                if let Some(es) = meta.entries_mut() {
                    *es = meta_head;
                }
                head.push(Entry { key, value: meta });
            }
        }
    }
    head.extend(rest);
    if let Some(es) = patch.entries_mut() {
        *es = head;
    }
    patch
}

/// The entry for `field`: the patch's own, reported as a change of identity, or else a copy of
/// OLD's scalar value, when OLD has one.
fn take_or_copy<'n>(
    rest: &mut Vec<Entry<'n>>,
    old: Option<&Node<'_>>,
    field: &str,
    parents: &[&str],
    warnings: &mut Vec<Warning>,
) -> Option<Entry<'n>> {
    if let Some(i) = rest.iter().position(|e| e.key.as_str() == Some(field)) {
        let mut segs: Vec<Seg> = parents.iter().map(|p| Seg::field(p)).collect();
        segs.push(Seg::field(field));
        warnings.push(Warning {
            path: Path(segs),
            kind: WarningKind::IdentityChanged,
        });
        return Some(rest.remove(i));
    }
    let old = old.filter(|v| v.is_scalar() && !v.is_null())?;
    let mut value = old.clone().into_owned();
    *value.comments_mut() = Comments::default();
    value.set_anchor(None);
    Some(Entry::new(field.to_owned(), value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::emit_node;

    use crate::diff::test_node as n;

    #[test]
    fn identity_goes_first_and_changes_are_reported() {
        let old = n("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # the name\n  namespace: ns\n  labels: {x: y}\ndata: {k: v}\n");
        let mut w = Vec::new();
        let p = with_identity(
            &old,
            n("data:\n  k: w\nmetadata:\n  labels:\n    x: z\n"),
            &mut w,
        );
        assert_eq!(
            emit_node(&p, Default::default()),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  labels:\n    x: z\ndata:\n  k: w\n"
        );
        assert!(w.is_empty());
        let p = with_identity(&old, n("metadata:\n  name: b\n"), &mut w);
        assert_eq!(
            emit_node(&p, Default::default()),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: ns\n"
        );
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].path.to_string(), "metadata.name");
    }

    #[test]
    fn an_empty_patch_is_the_identity() {
        let old = n("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
        let p = with_identity(&old, Node::map(), &mut Vec::new());
        assert_eq!(
            emit_node(&p, Default::default()),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
        );
    }
}
