//! The rule every generated patch is held to before anyone sees it: written as it will be
//! written, read back, and applied to OLD by the engine it is made for (`merge2` with
//! [`Options::merge2_options`], `json6902` — with kustomize's options for the kustomize
//! flavour —, `jsonmerge`), it gives NEW as data. A patch that does not (it does not read back,
//! it does not apply, or it gives something else) is an error, [`DiffErrorKind::NotReproduced`],
//! at the first place where the result and NEW differ; it is never handed out.
//!
//! "As data" is as Kubernetes reads it: scalars by their value, sequences in order, mappings
//! without order and with their keys as data ([`key_text`]: `1` and `0x1` are one key), and,
//! where the engine pairs keys as data (strategic merge without kustomize's options, JSON
//! merge patch), a key holding a value spelled as NEW spells it (`0x1`, not OLD's `1`). What
//! a [`Warning`] says a patch cannot give is not held against it: a null in a mapping
//! ([`WarningKind::NullNotKept`]: nulls in mappings are then not compared), elements kyaml
//! regroups ([`WarningKind::KyamlRegroups`]: the patch must then only apply).
//!
//! A three-way patch is applied to CURRENT, and the result must hold everything MODIFIED says
//! (its lists merged by key hold MODIFIED's elements in MODIFIED's order; fields and elements
//! only CURRENT has may stay) and nothing ORIGINAL set that MODIFIED no longer does.
//!
//! Every check reads each tree once, with lookups by hash: linear in the sizes of OLD, NEW and
//! the patch (the engines' own costs aside).
//!
//! What it must not do: make or change a patch, or decide what a patch type can say (the
//! generators do, and say it with warnings).

use crate::merge::align::{self, key_values, ListKind, ScalarKey};
use crate::merge::{merge2, Context};
use crate::patch::{json6902, jsonmerge};
use crate::path::{Path, Seg};
use crate::schema::{Cursor, FieldMeta, Schema};
use crate::yaml::{self, one_line, Document, Kind, Node};

use super::nodes::{expanded, key_text, KeyIndex};
use super::{DiffError, DiffErrorKind, Options, Warning, WarningKind};

/// The engine a patch is made for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Engine {
    /// A strategic merge patch, applied with these options.
    Merge2(merge2::Options),
    /// A JSON patch; `kustomize`: with the options of kustomize's JSON patch library.
    Json6902 { kustomize: bool },
    /// A JSON merge patch.
    JsonMerge,
}

impl Engine {
    /// The engine a patch of this type made with `opts` meets.
    pub(crate) fn merge2(opts: &Options) -> Engine {
        Engine::Merge2(opts.merge2_options())
    }

    pub(crate) fn json6902(opts: &Options) -> Engine {
        Engine::Json6902 {
            kustomize: opts.kustomize,
        }
    }
}

/// A patch as the text it is written as: one YAML document.
pub(crate) fn text_of(patch: &Node<'_>) -> String {
    let mut text = String::new();
    yaml::emit_document(&Document::new(patch.clone()), &mut text);
    text
}

/// Checks that `text`, the patch as written, applied to `old` by `engine`, gives `new` (a
/// resource of the kind at `root`), except where `warnings` say it cannot.
pub(crate) fn two_way(
    old: &Node<'_>,
    new: &Node<'_>,
    text: &str,
    engine: Engine,
    schema: &Schema,
    root: Cursor,
    warnings: &[Warning],
) -> Result<(), DiffError> {
    let got = applied(old, text, engine, schema, root)?;
    if warnings
        .iter()
        .any(|w| w.kind == WarningKind::KyamlRegroups)
    {
        return Ok(());
    }
    let nulls = !warnings.iter().any(|w| w.kind == WarningKind::NullNotKept);
    let new = expanded(new)?;
    // The engines that pair keys as data give the result the patch's spelling of a key, so
    // there the result must spell its keys as NEW does. A JSON patch names members by their
    // text (the pointers of RFC 6901), and kyaml (kustomize's options) pairs keys by text:
    // there a key both versions hold keeps OLD's spelling.
    let spelling = match engine {
        Engine::Merge2(o) => !o.kustomize,
        Engine::JsonMerge => true,
        Engine::Json6902 { .. } => false,
    };
    let mut cmp = Compare {
        path: Vec::new(),
        nulls,
        spelling,
    };
    match cmp.equal(&got, &new) {
        Ok(()) => Ok(()),
        Err(why) => Err(cmp.fail(why)),
    }
}

/// Checks a three-way patch (`text`, as written) applied to `current`: the result holds what
/// `modified` says and lacks what `original` set and `modified` no longer does.
#[allow(clippy::too_many_arguments)]
pub(crate) fn three_way(
    original: &Node<'_>,
    current: &Node<'_>,
    modified: &Node<'_>,
    text: &str,
    schema: &Schema,
    root: Cursor,
    opts: &Options,
) -> Result<(), DiffError> {
    let got = applied(current, text, Engine::merge2(opts), schema, root)?;
    let (original, modified) = (expanded(original)?, expanded(modified)?);
    let mut cover = Cover {
        schema,
        infer: opts.infers(),
        cmp: Compare {
            path: Vec::new(),
            nulls: false,
            spelling: false,
        },
    };
    let done = cover
        .covers(&got, &modified, root, &FieldMeta::default())
        .and_then(|()| cover.dropped(&got, &original, &modified, root, &FieldMeta::default()));
    done.map_err(|why| cover.cmp.fail(why))
}

/// `old` with the patch `text` applied by `engine`, the patch read back as it is written.
fn applied<'o>(
    old: &Node<'o>,
    text: &str,
    engine: Engine,
    schema: &Schema,
    root: Cursor,
) -> Result<Node<'o>, DiffError> {
    let unverified = |why: String| DiffError::new(DiffErrorKind::NotReproduced(why));
    let docs = yaml::parse_stream(text)
        .map_err(|e| unverified(format!("the patch made does not read back: {e}")))?;
    let patch: Node<'static> = docs
        .into_iter()
        .find_map(|d| d.root)
        .unwrap_or_else(Node::null)
        .into_owned();
    let mut got = expanded(old)?.into_owned();
    let failed = |e: String| unverified(format!("the patch made does not apply: {e}"));
    match engine {
        Engine::Merge2(o) => {
            merge2::merge(
                &mut got,
                &patch,
                &Context::new(schema, root, &Default::default()).with(o),
            )
            .map_err(|e| failed(e.to_string()))?;
        }
        Engine::Json6902 { kustomize } => {
            let ops = json6902::parse_ops(&patch).map_err(|e| failed(e.to_string()))?;
            let o = if kustomize {
                json6902::Options::kustomize()
            } else {
                json6902::Options::default()
            };
            json6902::patch_with(&mut got, &ops, &o, &mut crate::budget::Budget::new())
                .map_err(|e| failed(e.to_string()))?;
        }
        Engine::JsonMerge => {
            jsonmerge::merge(&mut got, &patch).map_err(|e| failed(e.to_string()))?;
        }
    }
    Ok(got)
}

/// A comparison of a result with what it should be, which knows where it is.
struct Compare {
    path: Vec<Seg>,
    /// Compare entries whose value is null (off where a warning says a patch cannot write
    /// them: they count as absent on both sides).
    nulls: bool,
    /// Keys holding a value that is not null must be spelled as NEW spells them (`0x1`, not
    /// OLD's `1`), where the patch type can say it.
    spelling: bool,
}

impl Compare {
    fn fail(&self, why: String) -> DiffError {
        DiffError {
            path: Path(self.path.clone()),
            kind: DiffErrorKind::NotReproduced(format!(
                "the patch made does not give the new version: {why}"
            )),
        }
    }

    /// `got` and `want` are the same data; else why not, with `self.path` where.
    fn equal(&mut self, got: &Node<'_>, want: &Node<'_>) -> Result<(), String> {
        match (got.kind(), want.kind()) {
            (Kind::Map, Kind::Map) => {
                let nulls = self.nulls;
                let counts = |e: &&yaml::Entry<'_>| nulls || !e.value.is_null();
                let index = KeyIndex::new(got);
                let mut paired = 0;
                for w in want.entries().iter().filter(counts) {
                    self.path.push(key_seg(&w.key));
                    match index.get(&w.key).filter(counts) {
                        Some(g) if self.spelling && !w.value.is_null() && respelled(g, w) => {
                            return Err(format!(
                                "the patched resource spells the key {}, the new version {}",
                                one_line(&g.key),
                                one_line(&w.key)
                            ));
                        }
                        Some(g) => self.equal(&g.value, &w.value)?,
                        None => return Err("the patched resource lacks it".to_owned()),
                    }
                    self.path.pop();
                    paired += 1;
                }
                if got.entries().iter().filter(counts).count() != paired {
                    let want_index = KeyIndex::new(want);
                    let stray = got
                        .entries()
                        .iter()
                        .filter(counts)
                        .find(|g| want_index.get(&g.key).filter(counts).is_none());
                    if let Some(g) = stray {
                        self.path.push(key_seg(&g.key));
                    }
                    return Err("the patched resource has it; the new version does not".to_owned());
                }
                Ok(())
            }
            (Kind::Seq, Kind::Seq) => {
                let (gi, wi) = (got.items(), want.items());
                if gi.len() != wi.len() {
                    return Err(format!(
                        "the patched resource has {} items, the new version {}",
                        gi.len(),
                        wi.len()
                    ));
                }
                for (i, (g, w)) in gi.iter().zip(wi).enumerate() {
                    self.path.push(Seg::Index(i));
                    self.equal(g, w)?;
                    self.path.pop();
                }
                Ok(())
            }
            _ if got.same_data(want) => Ok(()),
            _ => Err(format!(
                "the patched resource holds {}, the new version {}",
                shown(got),
                shown(want)
            )),
        }
    }
}

/// A value for a message: its one-line YAML, cut short.
fn shown(n: &Node<'_>) -> String {
    let t = one_line(n);
    match t.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t,
    }
}

/// Whether two entries paired as data spell their keys differently (text or tag).
fn respelled(g: &yaml::Entry<'_>, w: &yaml::Entry<'_>) -> bool {
    g.key.as_str() != w.key.as_str() || g.key.tag() != w.key.tag()
}

fn key_seg(key: &Node<'_>) -> Seg {
    Seg::field(&key_text(key).unwrap_or_else(|| one_line(key).into()))
}

/// The three-way checks, which know the schema (how lists merge).
struct Cover<'s> {
    schema: &'s Schema,
    infer: bool,
    cmp: Compare,
}

impl Cover<'_> {
    fn field(&self, at: Cursor, key: &Node<'_>) -> (FieldMeta, Cursor) {
        let name = key.as_str().unwrap_or_default();
        align::field(self.schema, at, name, &[key])
    }

    /// The result `got` holds everything `want` (MODIFIED) says.
    fn covers(
        &mut self,
        got: &Node<'_>,
        want: &Node<'_>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<(), String> {
        match (got.kind(), want.kind()) {
            (Kind::Map, Kind::Map) if !meta.replace => {
                let index = KeyIndex::new(got);
                for w in want.entries() {
                    self.cmp.path.push(key_seg(&w.key));
                    match index.get(&w.key) {
                        // A null says "remove the field".
                        Some(g) if w.value.is_null() && !g.value.is_null() => {
                            return Err(format!(
                                "the patched resource holds {}, the new configuration removes it",
                                shown(&g.value)
                            ))
                        }
                        None if w.value.is_null() => {}
                        None => return Err("the patched resource lacks it".to_owned()),
                        Some(g) => {
                            let (m, child) = self.field(at, &w.key);
                            self.covers(&g.value, &w.value, child, &m)?;
                        }
                    }
                    self.cmp.path.pop();
                }
                Ok(())
            }
            (Kind::Seq, Kind::Seq) => match self.merged_list(want, meta) {
                Some(ListKind::Set) => {
                    let wanted: crate::hash::HashSet<ScalarKey> =
                        want.items().iter().filter_map(ScalarKey::of).collect();
                    let kept: Vec<&Node<'_>> = got
                        .items()
                        .iter()
                        .filter(|g| ScalarKey::of(g).is_some_and(|k| wanted.contains(&k)))
                        .collect();
                    let same = kept.len() == want.items().len()
                        && kept.iter().zip(want.items()).all(|(g, w)| g.same_data(w));
                    if same {
                        Ok(())
                    } else {
                        Err("the patched list does not hold the new configuration's values in its order".to_owned())
                    }
                }
                Some(ListKind::Keyed(keys)) => {
                    let wanted: crate::hash::HashSet<Vec<String>> = want
                        .items()
                        .iter()
                        .filter_map(|w| key_values(w, &keys))
                        .collect();
                    let kept: Vec<&Node<'_>> = got
                        .items()
                        .iter()
                        .filter(|g| key_values(g, &keys).is_some_and(|k| wanted.contains(&k)))
                        .collect();
                    if kept.len() != want.items().len() {
                        return Err(
                            "the patched list does not hold the new configuration's elements"
                                .to_owned(),
                        );
                    }
                    for (g, w) in kept.into_iter().zip(want.items()) {
                        let (gk, wk) = (key_values(g, &keys), key_values(w, &keys));
                        if gk != wk {
                            return Err("the patched list does not hold the new configuration's elements in its order".to_owned());
                        }
                        self.cmp
                            .path
                            .push(align::key_seg(&keys, &wk.unwrap_or_default()));
                        self.covers(g, w, at, &FieldMeta::default())?;
                        self.cmp.path.pop();
                    }
                    Ok(())
                }
                _ => self.cmp.equal(got, want),
            },
            _ => self.cmp.equal(got, want),
        }
    }

    /// How a list of MODIFIED merges, when it merges (`None`: it is replaced, compared whole):
    /// as a set of distinct scalars, or by keys every element has, once each.
    fn merged_list(&self, want: &Node<'_>, meta: &FieldMeta) -> Option<ListKind> {
        let items = want.items();
        match align::list_kind(meta, self.infer, &[want], |_| false) {
            ListKind::Set => {
                let mut seen = crate::hash::HashSet::default();
                items
                    .iter()
                    .all(|i| i.is_scalar() && ScalarKey::of(i).is_some_and(|k| seen.insert(k)))
                    .then_some(ListKind::Set)
            }
            ListKind::Keyed(keys) => {
                let mut seen = crate::hash::HashSet::default();
                items
                    .iter()
                    .all(|i| i.is_map() && key_values(i, &keys).is_some_and(|k| seen.insert(k)))
                    .then_some(ListKind::Keyed(keys))
            }
            ListKind::Atomic => None,
        }
    }

    /// The result `got` lacks what `original` set and `modified` no longer does.
    fn dropped(
        &mut self,
        got: &Node<'_>,
        original: &Node<'_>,
        modified: &Node<'_>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<(), String> {
        match (got.kind(), original.kind(), modified.kind()) {
            (Kind::Map, Kind::Map, Kind::Map) if !meta.replace => {
                let (gi, mi) = (KeyIndex::new(got), KeyIndex::new(modified));
                for o in original.entries() {
                    let g = gi.get(&o.key).filter(|g| !g.value.is_null());
                    let Some(g) = g else { continue };
                    self.cmp.path.push(key_seg(&o.key));
                    match mi.get(&o.key) {
                        None => {
                            return Err(
                                "the new configuration no longer sets it, the patched resource still has it"
                                    .to_owned(),
                            )
                        }
                        Some(m) => {
                            let (fm, child) = self.field(at, &o.key);
                            self.dropped(&g.value, &o.value, &m.value, child, &fm)?;
                        }
                    }
                    self.cmp.path.pop();
                }
                Ok(())
            }
            (Kind::Seq, Kind::Seq, Kind::Seq) => {
                let Some(kind) = self.merged_list(modified, meta) else {
                    return Ok(());
                };
                match kind {
                    ListKind::Set => {
                        let now: crate::hash::HashSet<ScalarKey> =
                            modified.items().iter().filter_map(ScalarKey::of).collect();
                        let gone: crate::hash::HashSet<ScalarKey> = original
                            .items()
                            .iter()
                            .filter_map(ScalarKey::of)
                            .filter(|k| !now.contains(k))
                            .collect();
                        match got
                            .items()
                            .iter()
                            .find(|g| ScalarKey::of(g).is_some_and(|k| gone.contains(&k)))
                        {
                            Some(g) => Err(format!(
                                "the new configuration no longer lists {}, the patched list still does",
                                shown(g)
                            )),
                            None => Ok(()),
                        }
                    }
                    ListKind::Keyed(keys) => {
                        let now: crate::hash::HashMap<Vec<String>, &Node<'_>> = modified
                            .items()
                            .iter()
                            .filter_map(|m| Some((key_values(m, &keys)?, m)))
                            .collect();
                        let before: crate::hash::HashMap<Vec<String>, &Node<'_>> = original
                            .items()
                            .iter()
                            .filter(|o| o.is_map())
                            .filter_map(|o| Some((key_values(o, &keys)?, o)))
                            .collect();
                        for g in got.items() {
                            let Some(k) = key_values(g, &keys) else {
                                continue;
                            };
                            let Some(o) = before.get(&k) else { continue };
                            self.cmp.path.push(align::key_seg(&keys, &k));
                            match now.get(&k) {
                                None => {
                                    return Err("the new configuration no longer has this element, the patched list still does".to_owned())
                                }
                                Some(m) => self.dropped(g, o, m, at, &FieldMeta::default())?,
                            }
                            self.cmp.path.pop();
                        }
                        Ok(())
                    }
                    ListKind::Atomic => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::test_node as n;

    const OLD: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  1: a\n  b: x\n";

    fn check(old: &str, new: &str, patch: &str, engine: Engine) -> Result<(), DiffError> {
        let schema = Schema::builtin();
        let root = schema.root("", "v1", "ConfigMap");
        two_way(&n(old), &n(new), patch, engine, &schema, root, &[])
    }

    #[test]
    fn a_patch_that_gives_new_passes_and_a_corrupted_one_is_refused_where_it_differs() {
        let new = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  0x1: b\n  b: x\n";
        let m2 = Engine::merge2(&Options::default());
        check(OLD, new, "data:\n  0x1: b\n", m2).unwrap();
        // OLD's spelling gives NEW as data, but not as NEW spells it.
        let e = check(OLD, new, "data:\n  1: b\n", m2).unwrap_err();
        assert_eq!(e.to_string(), "data.1: the patch made does not give the new version: the patched resource spells the key 1, the new version 0x1");
        // A wrong value, a stray field, a lost one, a duplicate key as data.
        let e = check(OLD, new, "data:\n  0x1: c\n", m2).unwrap_err();
        assert_eq!(e.to_string(), "data.1: the patch made does not give the new version: the patched resource holds c, the new version b");
        let e = check(OLD, new, "data:\n  0x1: b\n  z: 1\n", m2).unwrap_err();
        assert_eq!(e.path.to_string(), "data.z");
        let e = check(OLD, new, "data:\n  0x1: b\n  b: null\n", m2).unwrap_err();
        assert_eq!(e.path.to_string(), "data.b");
        let e = check(OLD, new, "data:\n  0x1: b\n  1: null\n", m2).unwrap_err();
        assert!(e.to_string().contains("does not read back"), "{e}");
        // A JSON patch that makes a string of a number key.
        let ops = "- {op: remove, path: /data/1}\n- {op: add, path: /data/0x1, value: b}\n";
        let e = check(OLD, new, ops, Engine::Json6902 { kustomize: false }).unwrap_err();
        assert_eq!(e.path.to_string(), "data.1");
        let ops = "- {op: replace, path: /data/1, value: b}\n";
        check(OLD, new, ops, Engine::Json6902 { kustomize: false }).unwrap();
        // One that does not apply.
        let e = check(
            OLD,
            new,
            "- {op: remove, path: /x}\n",
            Engine::Json6902 { kustomize: false },
        )
        .unwrap_err();
        assert!(e.to_string().contains("does not apply"), "{e}");
    }

    #[test]
    fn nulls_a_warning_names_are_not_compared() {
        let new = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  1: a\n  b: x\n  c: null\n";
        let schema = Schema::builtin();
        let root = schema.root("", "v1", "ConfigMap");
        let m2 = Engine::merge2(&Options::default());
        let (old, new) = (n(OLD), n(new));
        let null = [Warning {
            path: Path::fields(&["data", "c"]),
            kind: WarningKind::NullNotKept,
        }];
        two_way(&old, &new, "data:\n  c: null\n", m2, &schema, root, &null).unwrap();
        assert!(two_way(&old, &new, "data:\n  c: null\n", m2, &schema, root, &[]).is_err());
    }

    #[test]
    fn three_way_results_hold_what_modified_says_and_drop_what_it_dropped() {
        let schema = Schema::builtin();
        let root = schema.root("", "v1", "Pod");
        let pod = |containers: &str| {
            n(&format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n{containers}"))
        };
        let original = pod("  - name: a\n  - name: b\n");
        let current = pod("  - name: a\n    image: live\n  - name: b\n  - name: server\n");
        let modified = pod("  - name: c\n  - name: a\n");
        let opts = Options::default();
        let good = "spec:\n  $setElementOrder/containers:\n  - name: c\n  - name: a\n  containers:\n  - name: c\n  - name: b\n    $patch: delete\n";
        three_way(&original, &current, &modified, good, &schema, root, &opts).unwrap();
        // Without the deletion, `b` stays.
        let kept = "spec:\n  $setElementOrder/containers:\n  - name: c\n  - name: a\n  containers:\n  - name: c\n";
        let e = three_way(&original, &current, &modified, kept, &schema, root, &opts).unwrap_err();
        assert_eq!(e.path.to_string(), "spec.containers[name=b]");
        // Without the order, `c` comes last.
        let unordered = "spec:\n  containers:\n  - name: c\n  - name: b\n    $patch: delete\n";
        let e = three_way(
            &original, &current, &modified, unordered, &schema, root, &opts,
        )
        .unwrap_err();
        assert_eq!(e.path.to_string(), "spec.containers");
    }
}
