//! A copy of the parts of a tree an edit can reach, taken before the edit, to tell afterwards
//! whether the edit changed anything and to give back the verbatim source text of what it left
//! as it was ([`Node::keep_unchanged_source`]) — without copying what the edit cannot reach.
//!
//! Why: a patch is compared with the resource as it was after every step, and a whole copy of a
//! resource of a few kilobytes (a `kubectl get -o yaml` Deployment with its managed fields and
//! status) for a patch that sets one label cost more than the patch itself.
//!
//! The promise rests on the caller's [`Reach`]: an entry left out of it is one the edit does not
//! touch (it may move it within its mapping, not change it). What reaches where is the caller's
//! knowledge of its edit; when in doubt it says [`Reach::All`].
//!
//! What it must not do: decide what an edit may reach.

use super::{Node, Repr};

/// Which parts of a tree an edit may change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Anything in the node.
    All,
    /// In a mapping, only the entries under these keys, each as far as its own reach (a node
    /// that is not a mapping counts as reached whole).
    Keys(Vec<(String, Reach)>),
}

impl Reach {
    /// Nothing at all, yet.
    pub(crate) fn nothing() -> Reach {
        Reach::Keys(Vec::new())
    }

    /// Adds what `other` reaches.
    pub(crate) fn add(&mut self, other: Reach) {
        match (&mut *self, other) {
            (Reach::All, _) => {}
            (me, Reach::All) => *me = Reach::All,
            (Reach::Keys(mine), Reach::Keys(theirs)) => {
                for (key, reach) in theirs {
                    match mine.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, m)) => m.add(reach),
                        None => mine.push((key, reach)),
                    }
                }
            }
        }
    }

    /// Adds the node at a path of keys, reached whole (the empty path: everything).
    pub(crate) fn add_path<S: Into<String>>(&mut self, keys: impl IntoIterator<Item = S>) {
        let mut keys = keys.into_iter();
        let reach = match keys.next() {
            None => Reach::All,
            Some(first) => {
                let mut below = Reach::nothing();
                below.add_path(keys);
                Reach::Keys(vec![(first.into(), below)])
            }
        };
        self.add(reach);
    }

    /// What a merge patch (strategic or RFC 7386) reaches of the tree it is merged into: the
    /// entries it names, and into those, as far as its own mappings go; whole below anything
    /// else it holds (a list, a scalar, null) and at any level with a `$` directive, a tag or
    /// a key that is not a scalar.
    pub(crate) fn of_merge_patch(patch: &Node<'_>) -> Reach {
        let Repr::Map { entries, .. } = &patch.repr else {
            return Reach::All;
        };
        if patch.ext.as_ref().is_some_and(|e| e.tag.is_some()) {
            return Reach::All;
        }
        let mut reach = Reach::nothing();
        for e in entries {
            let Some(key) = e.key_str() else {
                return Reach::All;
            };
            if key.starts_with('$') {
                return Reach::All;
            }
            let below = if e.value.is_map() {
                Reach::of_merge_patch(&e.value)
            } else {
                Reach::All
            };
            reach.add(Reach::Keys(vec![(key.to_owned(), below)]));
        }
        reach
    }

    fn under(&self, key: Option<&str>) -> Option<&Reach> {
        match self {
            Reach::All => Some(self),
            Reach::Keys(keys) => {
                let key = key?;
                keys.iter().find(|(k, _)| k == key).map(|(_, r)| r)
            }
        }
    }
}

/// A node as it was before an edit, as far as the edit can reach it.
#[derive(Clone, Debug)]
pub(crate) enum Snapshot<'a> {
    /// The whole node.
    Whole(Node<'a>),
    /// A mapping: its own style, layout and extras (`shell`, without entries), each entry's
    /// key, and the values the edit can reach (`None`: one it cannot, left as it is).
    Map {
        shell: Node<'a>,
        entries: Vec<(Node<'a>, Option<Snapshot<'a>>)>,
    },
}

impl<'a> Node<'a> {
    /// What of this node `reach` says an edit can change, copied.
    pub(crate) fn snapshot(&self, reach: &Reach) -> Snapshot<'a> {
        let (Reach::Keys(_), Repr::Map { entries, flow, lay }) = (reach, &self.repr) else {
            return Snapshot::Whole(self.clone());
        };
        let shell = Node {
            repr: Repr::Map {
                entries: Vec::new(),
                flow: *flow,
                lay: *lay,
            },
            ext: self.ext.clone(),
        };
        let entries = entries
            .iter()
            .map(|e| {
                let below = reach.under(e.key.as_str()).map(|r| e.value.snapshot(r));
                (e.key.clone(), below)
            })
            .collect();
        Snapshot::Map { shell, entries }
    }

    /// [`Node::keep_unchanged_source`] against a [`Snapshot`]: true when nothing the snapshot
    /// holds differs, the verbatim source text given back where nothing changed. The values it
    /// left out count as unchanged.
    pub(crate) fn keep_unchanged_since(&mut self, before: &Snapshot<'a>) -> bool {
        let (shell, was) = match before {
            Snapshot::Whole(b) => return self.keep_unchanged_source(b),
            Snapshot::Map { shell, entries } => (shell, entries),
        };
        let (
            Repr::Map { entries, flow, lay },
            Repr::Map {
                flow: f, lay: l, ..
            },
        ) = (&mut self.repr, &shell.repr)
        else {
            return false;
        };
        let mut same = flow == f && lay == l && entries.len() == was.len();
        if entries.len() == was.len() {
            for (a, (key, value)) in entries.iter_mut().zip(was) {
                same &= a.key.keep_unchanged_source(key);
                if let Some(v) = value {
                    same &= a.value.keep_unchanged_since(v);
                }
            }
        } else {
            let by_key: crate::hash::HashMap<&str, (&Node<'a>, &Option<Snapshot<'a>>)> = was
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?, (k, v))))
                .collect();
            for a in entries.iter_mut() {
                if let Some((key, value)) = a.key.as_str().and_then(|k| by_key.get(k)) {
                    a.key.keep_unchanged_source(key);
                    if let Some(v) = value {
                        a.value.keep_unchanged_since(v);
                    }
                }
            }
        }
        self.keep_unchanged_extras(shell, same)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{emit_document, parse_stream, Comment, Document};

    fn parse(src: &str) -> Node<'_> {
        parse_stream(src).unwrap().remove(0).root.unwrap()
    }

    fn write(n: &Node<'_>) -> String {
        let mut out = String::new();
        emit_document(&Document::new(n.clone()), &mut out);
        out
    }

    fn reach(patch: &str) -> Reach {
        Reach::of_merge_patch(&parse(patch))
    }

    #[test]
    fn a_merge_patch_reaches_what_it_names_and_all_below_anything_but_a_mapping() {
        assert_eq!(
            reach("a: {b: 1, c: {d: [1]}}\ne: null\n"),
            Reach::Keys(vec![
                (
                    "a".into(),
                    Reach::Keys(vec![
                        ("b".into(), Reach::All),
                        ("c".into(), Reach::Keys(vec![("d".into(), Reach::All)])),
                    ])
                ),
                ("e".into(), Reach::All),
            ])
        );
        assert_eq!(reach("a: {$patch: replace, b: 1}\n"), {
            let mut r = Reach::nothing();
            r.add_path(["a"]);
            r
        });
        assert_eq!(reach("- a\n"), Reach::All);
        assert_eq!(reach("$retainKeys: [a]\na: 1\n"), Reach::All);
        let mut r = reach("a: {b: 1}\n");
        r.add_path(["a"]);
        r.add_path(["x", "y"]);
        assert_eq!(
            r,
            Reach::Keys(vec![
                ("a".into(), Reach::All),
                ("x".into(), Reach::Keys(vec![("y".into(), Reach::All)])),
            ])
        );
        r.add_path(Vec::<String>::new());
        assert_eq!(r, Reach::All);
    }

    /// Edits `src` with `edit` after a snapshot under `reach`: what the comparison says, the
    /// text written, and what the comparison with a whole copy says.
    fn edited(src: &str, reach: &Reach, edit: impl Fn(&mut Node<'_>)) -> (bool, String, bool) {
        let mut node = parse(src);
        let whole = node.clone();
        let snap = node.snapshot(reach);
        edit(&mut node);
        let mut check = node.clone();
        let expect = check.keep_unchanged_source(&whole);
        let same = node.keep_unchanged_since(&snap);
        (same, write(&node), expect)
    }

    #[test]
    fn an_edit_that_changes_nothing_leaves_the_source_text() {
        let src = "a: {x: 1,   y: 2}\nb: {p: [1,  2]}\nc: 3\n";
        let r = reach("a: {x: 1}\n");
        // Walked into `a` (its source text forgotten), changed nothing.
        let (same, text, expect) = edited(src, &r, |n| {
            let a = n.get_mut("a").unwrap();
            a.entries_mut();
        });
        assert!(same && expect);
        assert_eq!(text, src);
        // Changed `a.x`.
        let (same, text, expect) = edited(src, &r, |n| {
            let a = n.get_mut("a").unwrap();
            a.entries_mut().unwrap()[0].value = Node::plain("5");
        });
        assert!(!same && !expect);
        assert!(
            text.starts_with("a: {x: 5, y: 2}\nb: {p: [1,  2]}\n"),
            "{text}"
        );
        // Removed `c`, an entry out of reach: the mapping is shorter.
        let (same, _, expect) = edited(src, &r, |n| {
            n.remove("c");
        });
        assert!(!same && !expect);
        // Put `b` before `a`: keys are compared where they stand.
        let (same, _, expect) = edited(src, &r, |n| {
            n.entries_mut().unwrap().swap(0, 1);
        });
        assert!(!same && !expect);
        // A comment added on the mapping itself.
        let (same, _, expect) = edited(src, &r, |n| {
            n.comments_mut().head.push(Comment {
                text: " new".into(),
                blank: 0,
                col: 0,
            });
        });
        assert!(!same && !expect);
    }
}
