//! JSON Merge Patch (RFC 7386) on the lossless YAML tree.
//!
//! What it is: [`merge`] merges a partial document into a document, in place. A mapping in the
//! patch is merged member by member (members are keys as data, as JSON object keys are: `0x1`
//! is the target's `1`, and the member keeps the patch's spelling): `null` removes the member,
//! a mapping recurses, anything else
//! (scalars, sequences) replaces the member's value whole. A patch that is not a mapping replaces
//! the whole target; a mapping merged into something that is not a mapping replaces it with a
//! mapping first. Mappings the patch creates contain no `null`s (the RFC's recursion into an
//! empty target drops them), while a sequence is taken exactly as written, `null`s included.
//!
//! Presentation: where the target keeps a node its key order, comments and styles stay; new
//! members are appended in the patch's order; a node taken from the patch keeps the patch's
//! comments and style, except that a string replacing a string keeps the target's quoting and a
//! block sequence follows the document's indentation (see `yaml::place`); where both have a comment for the same place the patch's wins (kyaml's
//! rule, as in `merge2`). A patch written in flow style (JSON) is made block style first, so a
//! YAML document stays block YAML.
//!
//! What it must not do: consult a schema (RFC 7386 has none: lists are never merged), select
//! resources, or parse or write text.

use std::borrow::Cow;

use crate::path::{Path, Seg};
use crate::yaml::anchors::{anchors_of, detached, Anchors};
use crate::yaml::index::{key_text, KeyPositions};
use crate::yaml::place::{self, replace, Keep};
use crate::yaml::{AliasError, Entry, Node, MAX_DEPTH};

/// A merge patch that cannot be applied; the target is then unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergePatchError {
    /// The patch's aliases cannot be expanded: one names no anchor before it, or their copies
    /// would exceed the budget (`crate::yaml::anchors::BUDGET`).
    #[error("the patch: {0}")]
    PatchAliases(AliasError),
    /// The target's anchored nodes are too large to copy for merging into its aliases
    /// ([`anchors_of`]).
    #[error("the target: {0}")]
    TargetAnchors(AliasError),
    /// Merging into the alias `*alias` at `at` copies its anchored node there, which would nest
    /// the target `depth` levels deep: deeper than [`MAX_DEPTH`], which no YAML reader takes.
    #[error(
        "{}: merging into the alias *{alias} here copies its anchored node, which would nest \
         the resource {depth} levels deep, deeper than the {} levels a YAML reader takes",
        .at,
        MAX_DEPTH
    )]
    TooDeep {
        /// The alias's name (without `*`).
        alias: String,
        /// How deep the copy would nest the target.
        depth: usize,
        /// Where, from the target's root.
        at: Path,
    },
}

impl MergePatchError {
    /// The error one member further from the root.
    fn within(self, key: &str) -> Self {
        match self {
            MergePatchError::TooDeep { alias, depth, at } => MergePatchError::TooDeep {
                alias,
                depth,
                at: at.within(Seg::field(key)),
            },
            other => other,
        }
    }
}

/// Merges `patch` into `dest` as RFC 7386 says (see the module doc).
///
/// What the merge takes from the patch is its one copy, made once ([`detached`]): aliases
/// expanded, anchors dropped (in the target they could capture its later aliases), and block
/// style when the patch is flow (JSON). A patch with no alias, anchor or flow style is not
/// copied at all (see "Patches and aliases" in [`crate::yaml::anchors`]). An alias in
/// `dest` that a patch mapping merges into becomes a copy of its anchored node, so the change
/// stays at that place.
///
/// ```
/// use krm_merge::{patch::jsonmerge, yaml};
/// let src = "a: 1 # one\nb: {c: 2}\n";
/// let docs = yaml::parse_stream(src).unwrap();
/// let mut dest = docs[0].root.clone().unwrap();
/// let patch_docs = yaml::parse_stream(r#"{"a": null, "d": [1, null]}"#).unwrap();
/// jsonmerge::merge(&mut dest, patch_docs[0].root.as_ref().unwrap()).unwrap();
/// let mut out = String::new();
/// yaml::emit_document(&yaml::Document::new(dest), &mut out);
/// assert_eq!(out, "b: {c: 2}\nd:\n- 1\n- null\n");
/// ```
pub fn merge<'a, 'p: 'a>(dest: &mut Node<'a>, patch: &Node<'p>) -> Result<(), MergePatchError> {
    let mut patch = detached(patch).map_err(MergePatchError::PatchAliases)?;
    if patch.is_flow() {
        patch.to_mut().make_block();
    }
    let anchors = anchors_of(dest).map_err(MergePatchError::TargetAnchors)?;
    if !dest.has_alias() {
        // Without aliases nothing is copied, so the merge cannot fail halfway.
        return merge_value(dest, &patch, &anchors, 0);
    }
    let before = dest.clone();
    merge_value(dest, &patch, &anchors, 0).inspect_err(|_| *dest = before)
}

/// Merges `patch` into `dest`, which `depth` collections enclose.
fn merge_value<'a, 'p: 'a>(
    dest: &mut Node<'a>,
    patch: &Node<'p>,
    anchors: &Anchors<Node<'a>>,
    depth: usize,
) -> Result<(), MergePatchError> {
    if !patch.is_map() {
        let mut new = patch.clone();
        place::from_patch(&mut new);
        replace(dest, new, Keep::COMMENTS);
        return Ok(());
    }
    // An alias whose anchor is unknown stays an alias, and is replaced below like any value
    // that is not a mapping.
    let alias = dest.alias_name().map(str::to_owned);
    if anchors.materialize(dest) {
        let total = depth.saturating_add(dest.depth());
        if total > MAX_DEPTH {
            return Err(MergePatchError::TooDeep {
                alias: alias.unwrap_or_default(),
                depth: total,
                at: Path::root(),
            });
        }
    }
    if !dest.is_map() {
        // A mapping built from the patch: members are added by merging, which drops `null`s.
        replace(dest, patch.shell(), Keep::COMMENTS);
    } else {
        dest.take_comments_of(patch.comments());
        if dest.is_flow() && dest.entries().is_empty() && !patch.is_flow() {
            place::open_empty_flow(dest);
        }
    }
    // A member named twice is its last entry, as JSON readers take it. Members are keys as
    // data (`key_text`: JSON object keys, so `0x1` names the resource's `1`).
    let mut last: crate::hash::HashMap<Cow<'_, str>, usize> = crate::hash::HashMap::default();
    for (i, pe) in patch.entries().iter().enumerate() {
        if let Some(key) = key_text(&pe.key) {
            last.insert(key, i);
        }
    }
    // Members are found by hash in wide maps; the ones `null` deletes go in one pass at the end
    // (removing each at once shifted the rest: quadratic).
    let mut positions = KeyPositions::new(dest);
    let mut deleted: crate::hash::HashSet<Cow<'_, str>> = crate::hash::HashSet::default();
    for (i, pe) in patch.entries().iter().enumerate() {
        let Some(key) = key_text(&pe.key) else {
            continue;
        };
        if last.get(&key) != Some(&i) {
            continue;
        }
        let at = pe.key.as_str().unwrap_or_default();
        match positions.find_node(dest, &pe.key) {
            Some(_) if pe.value.is_null() => {
                // Every entry of that name goes: two keys that differ only by a tag are one
                // member to JSON (removing just the first made a second merge remove another).
                deleted.insert(key);
            }
            None if pe.value.is_null() => {}
            Some(i) => {
                if let Some(de) = dest.entries_mut().and_then(|es| es.get_mut(i)) {
                    // The member spelled otherwise takes the patch's spelling: one key.
                    place::respell_key(&mut de.key, &pe.key);
                    de.key.take_comments_of(pe.key.comments());
                    merge_value(&mut de.value, &pe.value, anchors, depth + 1)
                        .map_err(|e| e.within(at))?;
                }
            }
            None => {
                let value = if pe.value.is_map() {
                    let mut v = pe.value.shell();
                    merge_value(&mut v, &pe.value, anchors, depth + 1)?;
                    v
                } else {
                    let mut v = pe.value.clone();
                    place::from_patch(&mut v);
                    v
                };
                if let Some(es) = dest.entries_mut() {
                    es.push(Entry {
                        key: pe.key.clone(),
                        value,
                    });
                    positions.pushed(dest);
                }
            }
        }
    }
    if !deleted.is_empty() {
        if let Some(es) = dest.entries_mut() {
            es.retain(|e| key_text(&e.key).is_none_or(|k| !deleted.contains(&k)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{emit_document, parse_stream, to_json, Document};

    fn merged(dest: &str, patch: &str) -> String {
        let d = parse_stream(dest).unwrap();
        let p = parse_stream(patch).unwrap();
        let mut node = d[0].root.clone().unwrap();
        merge(&mut node, p[0].root.as_ref().unwrap()).unwrap();
        let mut out = String::new();
        emit_document(&Document::new(node), &mut out);
        out
    }

    /// RFC 7386 Appendix A: every example, as JSON text, compared as JSON values.
    #[test]
    fn rfc7386_appendix_a() {
        let cases = [
            (r#"{"a":"b"}"#, r#"{"a":"c"}"#, r#"{"a":"c"}"#),
            (r#"{"a":"b"}"#, r#"{"b":"c"}"#, r#"{"a":"b","b":"c"}"#),
            (r#"{"a":"b"}"#, r#"{"a":null}"#, r#"{}"#),
            (r#"{"a":"b","b":"c"}"#, r#"{"a":null}"#, r#"{"b":"c"}"#),
            (r#"{"a":["b"]}"#, r#"{"a":"c"}"#, r#"{"a":"c"}"#),
            (r#"{"a":"c"}"#, r#"{"a":["b"]}"#, r#"{"a":["b"]}"#),
            (
                r#"{"a":{"b":"c"}}"#,
                r#"{"a":{"b":"d","c":null}}"#,
                r#"{"a":{"b":"d"}}"#,
            ),
            (r#"{"a":[{"b":"c"}]}"#, r#"{"a":[1]}"#, r#"{"a":[1]}"#),
            (r#"["a","b"]"#, r#"["c","d"]"#, r#"["c","d"]"#),
            (r#"{"a":"b"}"#, r#"["c"]"#, r#"["c"]"#),
            (r#"{"a":"foo"}"#, "null", "null"),
            (r#"{"a":"foo"}"#, r#""bar""#, r#""bar""#),
            (r#"{"e":null}"#, r#"{"a":1}"#, r#"{"e":null,"a":1}"#),
            (r#"[1,2]"#, r#"{"a":"b","c":null}"#, r#"{"a":"b"}"#),
            (
                r#"{}"#,
                r#"{"a":{"bb":{"ccc":null}}}"#,
                r#"{"a":{"bb":{}}}"#,
            ),
        ];
        for (dest, patch, want) in cases {
            let got = merged(dest, patch);
            let got_v = to_json(parse_stream(&got).unwrap()[0].root.as_ref().unwrap()).unwrap();
            let want_v: serde_json::Value = serde_json::from_str(want).unwrap();
            assert_eq!(got_v, want_v, "{dest} + {patch}:\n{got}");
        }
    }

    /// Keys that are one JSON member (`!t 1`, a string, and `0x1`, the number one) are one
    /// member to the patch: null removes them all, so a second merge of the same patch changes
    /// nothing (found by the merges fuzz target). The empty plain key is null, the member
    /// `null`, not `""`.
    #[test]
    fn null_removes_every_entry_of_the_name() {
        let once = merged("!t 1: 1\n0x1: 2\nb: 3\n", "\"1\": null\n");
        assert_eq!(once, "b: 3\n");
        assert_eq!(merged(&once, "\"1\": null\n"), once);
        let once = merged("!t : 1\n: 2\nb: 3\n", "\"\": null\n");
        assert_eq!(once, ": 2\nb: 3\n");
        assert_eq!(merged(&once, "\"\": null\n"), once);
    }

    /// A patch map replacing a scalar, whose empty key loses its anchor: the key is written
    /// as nothing, and the space that stood after the anchor must not indent the mapping
    /// (found by the merges fuzz target).
    #[test]
    fn an_empty_key_that_loses_its_anchor_stays_readable() {
        let out = merged("y\n", "&- :\n a\n");
        let back = parse_stream(&out).unwrap_or_else(|e| panic!("{out:?}: {e}"));
        let v = to_json(back[0].root.as_ref().unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"": "a"}), "{out:?}");
    }

    /// A patch that names a member twice (`: ` and `:` are both the empty key) counts as its
    /// last entry, as JSON readers take it, so a second merge changes nothing, order included
    /// (found by the merges fuzz target).
    #[test]
    fn a_member_named_twice_in_the_patch_counts_once() {
        let p = ":\n:\n  a: 1\nb: 2\n";
        let once = merged("x\n", p);
        assert_eq!(once, ":\n  a: 1\nb: 2\n");
        let d = parse_stream(&once).unwrap();
        let mut m = d[0].root.clone().unwrap();
        let before = m.clone();
        let pd = parse_stream(p).unwrap();
        merge(&mut m, pd[0].root.as_ref().unwrap()).unwrap();
        assert!(m.same_data(&before));
    }

    /// RFC 7386 section 3's example, on YAML with comments.
    #[test]
    fn keeps_order_and_comments_of_the_target() {
        let dest = "\
# the title
title: Goodbye!
author: # who
  givenName: John
  familyName: Doe # family
tags:
- example
- sample
content: This will be unchanged
";
        let patch = "\
title: Hello!
phoneNumber: +01-123-456-7890
author:
  familyName: null
tags:
- example
";
        assert_eq!(
            merged(dest, patch),
            "\
# the title
title: Hello!
author: # who
  givenName: John
tags:
- example
content: This will be unchanged
phoneNumber: +01-123-456-7890
"
        );
    }

    #[test]
    fn patch_comments_win_where_present() {
        assert_eq!(
            merged("a: 1 # old\nb: 2 # kept\n", "a: 3 # new\nb: 4\n"),
            "a: 3 # new\nb: 4 # kept\n"
        );
        assert_eq!(
            merged("# old head\na:\n  x: 1\n", "# new head\na:\n  y: 2\n"),
            "# new head\na:\n  x: 1\n  y: 2\n"
        );
    }

    #[test]
    fn json_patch_into_yaml_stays_block() {
        assert_eq!(
            merged(
                "metadata:\n  name: web\n",
                r#"{"metadata": {"labels": {"app": "web"}}, "spec": {"ports": [{"port": 80}]}}"#
            ),
            "metadata:\n  name: web\n  labels:\n    app: web\nspec:\n  ports:\n  - port: 80\n"
        );
    }

    #[test]
    fn merging_into_an_alias_copies_it() {
        assert_eq!(
            merged("base: &b\n  x: 1\nuse: *b\nother: *b\n", "use:\n  y: 2\n"),
            "base: &b\n  x: 1\nuse:\n  x: 1\n  y: 2\nother: *b\n"
        );
    }

    #[test]
    fn patch_aliases_are_expanded_within_a_budget() {
        assert_eq!(
            merged("a: 1\n", "x: &v [1, 2]\ny: *v\n"),
            "a: 1\nx: [1, 2]\ny: [1, 2]\n"
        );
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let p = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let d = parse_stream("k: v\n").unwrap();
        let p = parse_stream(&bomb).unwrap();
        let mut node = d[0].root.clone().unwrap();
        let before = node.clone();
        assert!(merge(&mut node, p[0].root.as_ref().unwrap()).is_err());
        assert!(node.same_data(&before));
    }

    /// A value put in an existing member's place keeps the spacing after `:` that the place
    /// has, as in every walker.
    #[test]
    fn a_replaced_value_keeps_the_spacing_of_its_place() {
        assert_eq!(
            merged("a:   1 # one\nb: 2\n", "a: 3\n"),
            "a:   3 # one\nb: 2\n"
        );
    }

    #[test]
    fn idempotent() {
        let dest = "a: 1\nb:\n  c: [1, 2]\n";
        let patch = "b:\n  c: [3]\n  d: null\ne: {f: 1}\n";
        let once = merged(dest, patch);
        assert_eq!(merged(&once, patch), once);
    }
}
