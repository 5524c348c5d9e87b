//! JSON merge patch creation (RFC 7386): the merge patch that turns OLD into NEW, for
//! `jsonmerge::merge` to apply.
//!
//! Mappings are compared field by field, keys as data (`1` and `0x1` are one field, named in
//! the patch as NEW spells it, and named even unchanged when NEW spells it otherwise than OLD,
//! so that the result takes NEW's spelling): a field only NEW has, or whose value changed, is NEW's value
//! (mappings on both sides give the patch of their fields); a field only OLD has is `null`. Lists are never merged: a list that changed is NEW's list, whole. A NEW that is not a
//! mapping is the patch itself (it replaces the document).
//!
//! RFC 7386 cannot write `null` into a mapping (`null` removes the field there, and mappings the
//! patch creates drop their nulls): such places are reported ([`WarningKind::NullNotKept`]).
//! Nulls inside lists are kept (lists are taken as written).
//!
//! What it must not do: consult a schema (merge patches have none), apply the patch, or look at
//! anything but the two nodes and the options.

use crate::path::{Path, Seg};
use crate::yaml::{Entry, Kind, Node};

use super::identity::with_identity;
use super::nodes::{bare, expanded, plain_copy, same_spelled, shell, KeyIndex};
use super::{checked, verify, written, Diff, DiffError, Options, Warning, WarningKind};
use crate::schema::{Cursor, Schema};

/// The JSON merge patch that turns `old` into `new`. With [`Options::identity`] a mapping patch
/// starts with OLD's identity fields.
pub fn diff<'n>(old: &Node<'_>, new: &Node<'n>, opts: &Options) -> Result<Diff<'n>, DiffError> {
    let d = make(old, new, opts)?;
    // A merge patch knows no schema.
    let engine = verify::Engine::JsonMerge;
    checked(old, new, d, engine, &Schema::builtin(), Cursor::default())
}

/// [`diff`]'s patch, not yet checked (the package diff checks it as it writes it).
pub(super) fn make<'n>(
    old: &Node<'_>,
    new: &Node<'n>,
    opts: &Options,
) -> Result<Diff<'n>, DiffError> {
    let (old, new) = (expanded(old)?, expanded(new)?);
    let mut d = Differ {
        path: Vec::new(),
        warnings: Vec::new(),
    };
    if !new.is_map() {
        // A patch that is not a mapping replaces the whole document.
        let changed = !same_spelled(&old, &new);
        return Ok(Diff {
            patch: written(plain_copy(&new)),
            changed,
            warnings: d.warnings,
        });
    }
    let body = if old.is_map() {
        d.map(&old, &new)
    } else {
        d.copy(&new)
    };
    let changed = !body.entries().is_empty() || !old.is_map();
    let patch = if opts.identity && old.is_map() {
        with_identity(&old, body, &mut d.warnings)
    } else {
        body
    };
    Ok(Diff {
        patch: written(patch),
        changed,
        warnings: d.warnings,
    })
}

struct Differ {
    path: Vec<Seg>,
    warnings: Vec<Warning>,
}

impl Differ {
    fn warn_null(&mut self) {
        self.warnings.push(Warning {
            path: Path(self.path.clone()),
            kind: WarningKind::NullNotKept,
        });
    }

    fn map<'n>(&mut self, old: &Node<'_>, new: &Node<'n>) -> Node<'n> {
        let index = KeyIndex::new(old);
        let mut out: Vec<Entry<'n>> = Vec::new();
        for ne in new.entries() {
            self.path
                .push(Seg::field(ne.key.as_str().unwrap_or_default()));
            let oe = index.get(&ne.key);
            // A field is named as NEW spells it: `merge` pairs keys as data and gives the
            // result the patch's spelling. A field both have that NEW spells otherwise
            // (`0x1` for `1`) is named even when its value did not change (`{}` for a
            // mapping), so that the result takes NEW's spelling; a null cannot (it deletes).
            let respelled = oe.is_some_and(|oe| {
                (oe.key.as_str() != ne.key.as_str() || oe.key.tag() != ne.key.tag())
                    && !ne.value.is_null()
            });
            let value = match oe {
                Some(oe) if oe.value.is_map() && ne.value.is_map() => {
                    let sub = self.map(&oe.value, &ne.value);
                    (!sub.entries().is_empty() || respelled).then_some(sub)
                }
                Some(oe) if same_spelled(&oe.value, &ne.value) && !respelled => None,
                _ => Some(self.copy(&ne.value)),
            };
            if let Some(value) = value {
                out.push(Entry {
                    key: ne.key.clone(),
                    value,
                });
            }
            self.path.pop();
        }
        let new_index = KeyIndex::new(new);
        for oe in old.entries() {
            if new_index.get(&oe.key).is_none() {
                out.push(Entry {
                    key: bare(&oe.key),
                    value: Node::null(),
                });
            }
        }
        let mut m = shell(new);
        if let Some(es) = m.entries_mut() {
            *es = out;
        }
        m
    }

    /// NEW's value for the patch; the nulls `merge` will drop (the value itself, and members of
    /// mappings outside lists) are reported.
    fn copy<'n>(&mut self, new: &Node<'n>) -> Node<'n> {
        self.nulls_in(new);
        plain_copy(new)
    }

    fn nulls_in(&mut self, node: &Node<'_>) {
        match node.kind() {
            Kind::Map => {
                for e in node.entries() {
                    self.path
                        .push(Seg::field(e.key.as_str().unwrap_or_default()));
                    self.nulls_in(&e.value);
                    self.path.pop();
                }
            }
            _ if node.is_null() => self.warn_null(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::jsonmerge;
    use crate::yaml::{emit_node, to_json};

    use crate::diff::test_node as n;

    fn run(old: &str, new: &str) -> (String, Diff<'static>) {
        let (old, new) = (n(old), n(new));
        let opts = Options {
            infer_keys: false,
            identity: false,
            kustomize: false,
        };
        let d = diff(&old, &new, &opts).unwrap();
        let mut applied = old.clone();
        jsonmerge::merge(&mut applied, &d.patch).unwrap();
        if d.warnings.is_empty() {
            assert_eq!(to_json(&applied).unwrap(), to_json(&new).unwrap());
        }
        (emit_node(&d.patch, Default::default()), d)
    }

    #[test]
    fn fields_merge_and_lists_replace() {
        let (p, d) = run(
            "a: 1\nb: {c: 2, d: 3}\nl: [1, 2]\ngone: x\n",
            "a: 1\nb: {c: 2, d: 4} # four\nl: [1, 2, 3]\nnew: [null]\n",
        );
        assert_eq!(
            p,
            "b: {d: 4} # four\nl: [1, 2, 3]\nnew: [null]\ngone: null\n"
        );
        assert!(d.changed && d.warnings.is_empty());
    }

    #[test]
    fn nulls_in_mappings_are_reported() {
        let (p, d) = run("a: 1\n", "a: null\nb: {c: null}\n");
        assert_eq!(p, "a: null\nb: {c: null}\n");
        let paths: Vec<String> = d.warnings.iter().map(|w| w.path.to_string()).collect();
        assert_eq!(paths, ["a", "b.c"]);
    }

    #[test]
    fn a_document_that_is_not_a_mapping_is_the_patch() {
        let (p, d) = run("a: 1\n", "[1, 2]\n");
        assert_eq!(p, "[1, 2]\n");
        assert!(d.changed);
    }
}
