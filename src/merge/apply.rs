//! kubectl client-side apply, offline: the local configuration applied to the live object, with
//! the last applied configuration (the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation) as the common ancestor, and the annotation rewritten as kubectl writes it.
//!
//! kubectl computes a three-way strategic merge patch (apimachinery's `CreateThreeWayMergePatch`:
//! the changes from live to local, plus the deletions from last-applied to local) and the server
//! applies it. [`three_way`] computes the result of that directly, field by field, per the tables
//! of the kubectl book's "Merging Fields" chapter:
//!
//! * **primitives, and lists without merge semantics** — set to the local value; removed when the
//!   last applied configuration had them and the local one does not; kept (owned by someone
//!   else) when neither has them. `null` in the local configuration removes the field.
//! * **objects and maps** — merged key by key by the same rules (keys as data, as the API server
//!   reads them: the local `0x1` is live's `1`, and takes the local spelling); an object whose patch strategy
//!   is `replace` (or `x-kubernetes-map-type: atomic`) is set as a whole.
//! * **lists of primitives with patch strategy `merge`** (`finalizers`) — ordered sets: local
//!   elements are added, elements the last applied configuration had and the local one lacks are
//!   removed, others are kept.
//! * **lists of objects with a merge key** — elements paired by key and merged; elements the last
//!   applied configuration had and the local one lacks are removed (with every duplicate of
//!   their key), new ones are added, others are kept.
//! * **order** — the local configuration's order for its elements, the live order for the rest,
//!   interleaved as apimachinery does (`$setElementOrder`: a live-only element stays before a
//!   local element only when it was before it in the live list).
//! * **`retainKeys`** (Deployment `spec.strategy`, volume sources) — fields of the live object
//!   that the local configuration does not set are cleared.
//! * `null` fields inside the values set from the local configuration are dropped, as the API
//!   server drops them; `null` items of lists are kept. (apimachinery itself keeps `null` fields
//!   when it replaces a whole list or `replace` object; dropping them there too is what makes a
//!   second apply change nothing.)
//!
//! Merge metadata comes from the [`Schema`] (built-in kinds, CRDs, declarations, kyaml schema
//! comments) and, with [`Options::infer_keys`], the associative-key heuristic. Two differences
//! from kubectl follow from that: kubectl pairs `ports` on `containerPort` alone (the patch merge
//! key) where we pair on `containerPort` + `protocol` (the list-map keys), and kubectl falls back
//! to a JSON merge patch (every list replaced) for kinds it has no Go type for (custom
//! resources), where we use what the schema knows.
//!
//! [`apply`] wraps [`three_way`] with the annotation: see its documentation for exactly what
//! kubectl writes there.
//!
//! Presentation: the live object keeps its key order, layout and comments; a value the local
//! configuration sets keeps the live quoting where it can (see `yaml::place`) and brings its comments
//! where it has some; new fields and elements come from the local configuration as written.
//!
//! What it must not do: talk to a cluster, select resources, parse or write YAML text, or compare
//! nodes by printing them.

use crate::hash::{HashMap, HashSet};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::hash::Hash;

use serde_json::Value;

use crate::merge::align::{self, keys_of, FieldIndex, ListKind, ValueIds};
use crate::merge::{Context, MergeError, MergeErrorKind};
use crate::path::{Path, Seg};
use crate::schema::{Cursor, FieldMeta, MapKey, Schema};
use crate::yaml::anchors::{self, Anchors};
use crate::yaml::place::{self, replace, Keep};
use crate::yaml::{from_json, to_json, Entry, Kind, Node};

/// The annotation in which kubectl keeps the configuration it applied last.
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// How to apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Pair list elements by the associative-key heuristic when nothing else says how. kubectl
    /// never does; the default is off.
    pub infer_keys: bool,
}

/// The path of the annotation, for errors.
fn annotation_path() -> Path {
    Path(vec![
        Seg::field("metadata"),
        Seg::field("annotations"),
        Seg::field(LAST_APPLIED),
    ])
}

/// Applies the local configuration `local` (what `kubectl apply -f` would send) to the live
/// object `live`, in place: the original is `live`'s last-applied annotation; fields set in
/// `local` are set or merged, fields the original has and `local` lacks are deleted, fields in
/// neither are kept (owned by others); then the annotation is rewritten as kubectl writes it.
/// Without the annotation nothing is deleted.
///
/// The annotation is what kubectl's `GetModifiedConfiguration` writes: the local configuration
/// with `metadata.annotations` minus the annotation itself (an empty `annotations: {}` when
/// nothing else is left, as kubectl leaves it), and with `metadata.namespace` set to the live
/// object's when the local configuration has none (kubectl fills in the namespace it applies
/// to); encoded as Go's `json.Encoder` does: compact, object keys sorted, `<`, `>` and `&`
/// escaped as `\u003c`, `\u003e`, `\u0026`, numbers as Go prints them, and a final newline. It
/// is stored as a string (written as a `|` block when new).
///
/// Scalars are read as YAML 1.2 (kubectl reads YAML 1.1, where `yes`/`on` are booleans and
/// `0777` is octal; such plain scalars may appear differently in the annotation).
///
/// The annotation is JSON, which has no aliases: the copy of `local` made for it has its
/// aliases expanded, within `anchors::BUDGET` (a `local` without aliases costs a scan; see
/// "Patches and aliases" in [`crate::yaml::anchors`]). `cx.anchors` are the anchored nodes of
/// `live` ([`anchors::anchors_of`]), and `live`'s kind is at `cx.root` in `cx.schema`.
pub fn apply<'a, 'p: 'a>(
    live: &mut Node<'a>,
    local: &Node<'p>,
    cx: &Context<'_, 'a, Options>,
) -> Result<(), MergeError> {
    let original = last_applied(live)?;
    let mut modified: Node<'p> = local.clone();
    modified
        .expand_aliases(anchors::BUDGET)
        .map_err(|e| MergeError::new(MergeErrorKind::PatchAliases(e)))?;
    if modified.is_map() {
        let namespace = live
            .get_path(&["metadata", "namespace"])
            .filter(|n| !n.is_null())
            .cloned();
        let meta = modified.map_at("metadata");
        if let Some(meta) = meta {
            if let Some(ns) = namespace {
                if meta.get("namespace").is_none_or(Node::is_null) {
                    meta.set("namespace", ns.into_owned());
                }
            }
            if let Some(annotations) = meta.map_at("annotations") {
                annotations.remove(LAST_APPLIED);
            } else {
                // `annotations` is there but not a map: kubectl would fail to read it too.
                meta.set("annotations", Node::map());
            }
        }
    }
    let text = kubectl_json(&modified)?;
    if let Some(annotations) = modified
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        annotations.set(LAST_APPLIED, Node::string(text));
    }
    three_way(live, original.as_ref(), &modified, cx)
}

/// The last applied configuration, from `live`'s annotation; `None` without one (or with an
/// empty one, which kubectl also reads as none).
fn last_applied(live: &Node<'_>) -> Result<Option<Node<'static>>, MergeError> {
    let Some(value) = live.get_path(&["metadata", "annotations", LAST_APPLIED]) else {
        return Ok(None);
    };
    let bad = |kind| {
        Err(MergeError {
            path: annotation_path(),
            kind,
        })
    };
    let Some(text) = value.as_str().filter(|_| value.is_scalar()) else {
        return bad(MergeErrorKind::AnnotationNotObject("a YAML collection"));
    };
    if value.is_null() || text.is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => Ok(Some(from_json(&Value::Object(o)))),
        Ok(Value::Null) => Ok(None),
        Ok(Value::Array(_)) => bad(MergeErrorKind::AnnotationNotObject("an array")),
        Ok(_) => bad(MergeErrorKind::AnnotationNotObject("a scalar")),
        Err(e) => bad(MergeErrorKind::BadAnnotation {
            line: e.line(),
            column: e.column(),
            message: json_message(&e),
        }),
    }
}

/// serde_json's message without its own " at line L column C" suffix.
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_owned(),
        None => full,
    }
}

/// `node` as Go's `json.NewEncoder(w).Encode` writes an unstructured object: see [`apply`].
pub(crate) fn kubectl_json(node: &Node<'_>) -> Result<String, MergeError> {
    let v = to_json(node).map_err(|e| MergeError::new(MergeErrorKind::NotJson(e.to_string())))?;
    let mut out = String::new();
    write_go_json(&v, &mut out);
    out.push('\n');
    Ok(out)
}

fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(f) = n.as_f64() {
                // Go reads integers beyond int64 as float64, and prints floats its own way.
                out.push_str(&go_float(f));
            }
        }
        Value::String(s) => go_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(x, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_string(k, out);
                out.push(':');
                if let Some(x) = o.get(k) {
                    write_go_json(x, out);
                }
            }
            out.push('}');
        }
    }
}

/// A float as Go's encoding/json writes it: shortest form, exponent only below 1e-6 or from
/// 1e21 on, written `1e+21` / `1e-7`.
fn go_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    } else {
        format!("{f}")
    }
}

/// A string as Go's encoding/json writes it with HTML escaping on (its default).
fn go_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The three-way merge `kubectl apply` performs, without the annotation: `local` applied to
/// `live` in place, deleting what `original` (the last applied configuration) has and `local`
/// lacks. `original` is only read.
pub fn three_way<'a, 'p: 'a>(
    live: &mut Node<'a>,
    original: Option<&Node<'_>>,
    local: &Node<'p>,
    cx: &Context<'_, 'a, Options>,
) -> Result<(), MergeError> {
    let w = Walker {
        schema: cx.schema,
        opts: cx.opts,
        anchors: cx.anchors,
        depth: align::Depth::default(),
    };
    w.value(live, original, local, cx.root, &FieldMeta::default())
}

struct Walker<'s, 'x, 'a> {
    schema: &'s Schema,
    opts: Options,
    anchors: &'x Anchors<Node<'a>>,
    /// How many collections enclose the value being applied ([`Walker::value`] counts).
    depth: align::Depth,
}

impl<'a> Walker<'_, '_, 'a> {
    /// Applies `mv` to the live value `lv` (both present), `ov` being the last applied value.
    fn value<'p: 'a>(
        &self,
        lv: &mut Node<'a>,
        ov: Option<&Node<'_>>,
        mv: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<(), MergeError> {
        if lv.same_data(mv) {
            // Nothing to add or change, and nothing the original has that live still has.
            return Ok(());
        }
        align::materialize(lv, mv, self.anchors, self.depth.get())?;
        let _inside = self.depth.enter();
        align::block_if_empty(lv, mv);
        match (lv.kind(), mv.kind()) {
            (Kind::Map, Kind::Map) if !meta.replace => {
                self.map(lv, ov.filter(|o| o.is_map()), mv, at, meta.retain_keys)
            }
            (Kind::Seq, Kind::Seq) => {
                let ov = ov.filter(|o| o.is_seq());
                let lists: Vec<&Node<'_>> =
                    [Some(&*lv), ov, Some(mv)].into_iter().flatten().collect();
                match align::list_kind(meta, self.opts.infer_keys, &lists, |_| false) {
                    ListKind::Keyed(keys)
                        if lists.iter().all(|l| l.items().iter().all(Node::is_map)) =>
                    {
                        let elem = FieldMeta {
                            replace: self.schema.is_replaced(at),
                            retain_keys: meta.retain_keys,
                            ..FieldMeta::default()
                        };
                        self.keyed(lv, ov, mv, &keys, at, &elem)
                    }
                    ListKind::Set => {
                        set(lv, ov, mv);
                        Ok(())
                    }
                    _ => {
                        set_value(lv, without_nulls(mv.clone()));
                        Ok(())
                    }
                }
            }
            // Scalars, `replace` objects, and values whose kind changed: set as the server
            // stores a new value, without `null` fields (so that applying again changes
            // nothing: a value added and a value replaced look the same).
            _ => {
                set_value(lv, without_nulls(mv.clone()));
                Ok(())
            }
        }
    }

    /// Merges the local map `mv` into the live map `lv`.
    fn map<'p: 'a>(
        &self,
        lv: &mut Node<'a>,
        ov: Option<&Node<'_>>,
        mv: &Node<'p>,
        at: Cursor,
        retain_keys: bool,
    ) -> Result<(), MergeError> {
        let before = retain_keys.then(|| lv.clone());
        let Some(entries) = lv.entries_mut().map(std::mem::take) else {
            return Ok(());
        };
        let mut live: Vec<Option<Entry<'a>>> = entries.into_iter().map(Some).collect();
        // Fields pair by their keys as data (`0x1` is live's `1`: one field to the API
        // server); a field spelled otherwise takes the local spelling.
        let mut pos: HashMap<String, usize> = HashMap::default();
        for (i, e) in live.iter().enumerate() {
            if let Some(t) = e.as_ref().and_then(|e| align::key_text(&e.key)) {
                pos.entry(t.into_owned()).or_insert(i);
            }
        }
        let (oi, mi) = (FieldIndex::new(ov), FieldIndex::new(Some(mv)));
        let mut added: Vec<Entry<'a>> = Vec::new();
        let mut added_names: HashSet<Cow<'_, str>> = HashSet::default();
        let mut failed = None;
        for me in mv.entries() {
            let (Some(name), Some(id)) = (me.key.as_str(), align::key_text(&me.key)) else {
                continue;
            };
            let slot = pos.get(id.as_ref()).copied();
            let Some(le) = slot.and_then(|i| live.get_mut(i)).and_then(Option::as_mut) else {
                if !me.value.is_null() && added_names.insert(id) {
                    added.push(Entry {
                        key: me.key.clone(),
                        value: without_nulls(me.value.clone()),
                    });
                }
                continue;
            };
            if me.value.is_null() {
                // `null` deletes, except where live holds `null` too (no change, no patch).
                if !le.value.is_null() {
                    if let Some(s) = slot.and_then(|i| live.get_mut(i)) {
                        *s = None;
                    }
                }
                continue;
            }
            // A field spelled otherwise takes the local spelling, changed or not.
            place::respell_key(&mut le.key, &me.key);
            if le.value.same_data(&me.value) {
                continue;
            }
            let (meta, child) = align::field(self.schema, at, name, &[&le.key, &me.key]);
            le.key.take_comments_of(me.key.comments());
            let ov = oi.get(&me.key).map(|e| &e.value);
            if let Err(e) = self.value(&mut le.value, ov, &me.value, child, &meta) {
                failed = Some(e.within(Seg::field(name)));
                break;
            }
        }
        if failed.is_none() {
            // What the last applied configuration has and the local one lacks is deleted.
            for oe in ov.map_or(&[][..], Node::entries) {
                let gone = align::key_text(&oe.key).filter(|_| mi.get(&oe.key).is_none());
                let slot = gone.and_then(|t| pos.get(t.as_ref()).copied());
                if let Some(slot) = slot.and_then(|i| live.get_mut(i)) {
                    *slot = None;
                }
            }
        }
        let mut result: Vec<Entry<'a>> = live.into_iter().flatten().collect();
        result.extend(added);
        if let Some(es) = lv.entries_mut() {
            *es = result;
        }
        if let Some(e) = failed {
            return Err(e);
        }
        if let Some(before) = before {
            // `$retainKeys`: kubectl sends it when this map changes or live has more fields.
            let keep =
                |k: &Node<'_>| k.is_scalar() && mi.get(k).is_some_and(|e| !e.value.is_null());
            let extra = |n: &Node<'_>| {
                n.entries()
                    .iter()
                    .any(|e| !e.value.is_null() && e.key.is_scalar() && !keep(&e.key))
            };
            if extra(&before) || ov.is_some_and(extra) || !before.same_data(lv) {
                if let Some(es) = lv.entries_mut() {
                    es.retain(|e| keep(&e.key));
                }
            }
        }
        Ok(())
    }

    /// Merges lists whose elements pair by `keys`.
    ///
    /// Duplicate keys pair by occurrence (the second local `name: a` with the second live one),
    /// and a local element with no live partner of its occurrence merges into the first live
    /// element with its key, as apimachinery's sorted pairing does.
    fn keyed<'p: 'a>(
        &self,
        lv: &mut Node<'a>,
        ov: Option<&Node<'_>>,
        mv: &Node<'p>,
        keys: &[MapKey],
        at: Cursor,
        elem: &FieldMeta,
    ) -> Result<(), MergeError> {
        let live_keys = keys_of(lv, keys)?;
        let local_keys = keys_of(mv, keys)?;
        let orig_keys = ov.map_or(Ok(Vec::new()), |o| keys_of(o, keys))?;
        let orig_pos = align::positions(&orig_keys);
        // Local elements that are `{$patch: delete}` directives name elements to delete; every
        // other local element is data.
        let (local, deletes): (Vec<_>, Vec<_>) = local_keys
            .iter()
            .zip(mv.items())
            .partition(|(_, m)| !is_delete_directive(m));
        let local: Vec<(&Vec<String>, &Node<'p>)> = local;
        let local_order: Vec<Vec<String>> = local.iter().map(|(k, _)| (*k).clone()).collect();
        let local_set: HashSet<&Vec<String>> = local_order.iter().collect();
        let gone: HashSet<&Vec<String>> = orig_keys
            .iter()
            .filter(|k| !local_set.contains(k))
            .chain(deletes.iter().map(|(k, _)| *k))
            .collect();
        let Some(items) = lv.items_mut().map(std::mem::take) else {
            return Ok(());
        };
        let before = items.len();
        // The live elements that stay, with their keys.
        let mut current: Vec<(Vec<String>, Node<'a>)> = live_keys
            .into_iter()
            .zip(items)
            .filter(|(k, _)| !gone.contains(k))
            .collect();
        let removed = before - current.len();
        let from_live = current.len();
        let mut server_order: Vec<Vec<String>> = current.iter().map(|(k, _)| k.clone()).collect();
        let live_pos: HashMap<Vec<String>, Vec<usize>> = align::positions(&server_order)
            .into_iter()
            .map(|(k, v)| (k.to_vec(), v))
            .collect();
        let mut appended: HashMap<Vec<String>, usize> = HashMap::default();
        let mut seen: HashMap<&Vec<String>, usize> = HashMap::default();
        let mut failed = None;
        for (k, me) in &local {
            let nth = {
                let n = seen.entry(k).or_insert(0);
                *n += 1;
                *n - 1
            };
            let in_live = live_pos.get(*k);
            let target = in_live
                .and_then(|p| p.get(nth).or_else(|| p.first()))
                .or_else(|| appended.get(*k))
                .copied();
            match target {
                Some(i) => {
                    let oe = ov.and_then(|o| {
                        orig_pos
                            .get(k.as_slice())
                            .and_then(|p| p.get(nth))
                            .and_then(|&oi| o.items().get(oi))
                    });
                    if let Some((_, le)) = current.get_mut(i) {
                        if let Err(e) = self.value(le, oe, me, at, elem) {
                            failed = Some(e.within(align::key_seg(keys, k)));
                            break;
                        }
                    }
                }
                None => {
                    appended.insert((*k).clone(), current.len());
                    current.push(((*k).clone(), without_nulls((*me).clone())));
                }
            }
        }
        if let Some(e) = failed {
            if let Some(is) = lv.items_mut() {
                *is = current.into_iter().map(|(_, n)| n).collect();
            }
            return Err(e);
        }
        // apimachinery places live-only elements by the order of the live list as its merge
        // left it: deleted elements taken out, and new elements written into the places that
        // freed (it merges into the live list's storage and reads that storage back). A new
        // element thus comes after the live-only elements that followed a deleted one.
        server_order.extend(
            current[from_live..]
                .iter()
                .take(removed)
                .map(|(k, _)| k.clone()),
        );
        let ordered = interleave(current, &local_order, &server_order);
        if let Some(is) = lv.items_mut() {
            *is = ordered;
        }
        Ok(())
    }
}

/// apimachinery's order after a merge with `$setElementOrder`: the elements the local list names,
/// in its order, and the live-only elements in their live order, interleaved so that a live-only
/// element goes first only when both are in the live list and it was before there.
fn interleave<'a, K: Eq + Hash>(
    current: Vec<(K, Node<'a>)>,
    local: &[K],
    live: &[K],
) -> Vec<Node<'a>> {
    fn ranks<K: Eq + Hash>(order: &[K]) -> HashMap<&K, usize> {
        let mut m: HashMap<&K, usize> = HashMap::default();
        for (i, k) in order.iter().enumerate() {
            m.entry(k).or_insert(i);
        }
        m
    }
    let (local_rank, live_rank) = (ranks(local), ranks(live));
    let (mut named, mut others): (Vec<_>, Vec<_>) = current
        .into_iter()
        .partition(|(k, _)| local_rank.contains_key(k));
    named.sort_by_key(|(k, _)| local_rank.get(k).copied());
    others.sort_by_key(|(k, _)| live_rank.get(k).copied());
    let mut out = Vec::with_capacity(named.len() + others.len());
    let (mut named, mut others) = (named.into_iter().peekable(), others.into_iter().peekable());
    loop {
        let take_other = match (others.peek(), named.peek()) {
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
            (Some((o, _)), Some((n, _))) => match (live_rank.get(o), live_rank.get(n)) {
                (Some(a), Some(b)) => a < b,
                _ => false,
            },
        };
        let next = if take_other {
            others.next()
        } else {
            named.next()
        };
        if let Some((_, n)) = next {
            out.push(n);
        }
    }
    out
}

/// Lists of scalars with merge semantics: local elements added, elements the original had and
/// the local list lacks removed, in apimachinery's order.
fn set<'a, 'p: 'a>(lv: &mut Node<'a>, ov: Option<&Node<'_>>, mv: &Node<'p>) {
    let mut ids = ValueIds::default();
    let Some(items) = lv.items_mut().map(std::mem::take) else {
        return;
    };
    let live: Vec<usize> = items.iter().map(|n| ids.id(n)).collect();
    let local: Vec<usize> = mv.items().iter().map(|n| ids.id(n)).collect();
    let (live_set, local_set): (HashSet<usize>, HashSet<usize>) = (
        live.iter().copied().collect(),
        local.iter().copied().collect(),
    );
    let gone: HashSet<usize> = ov
        .map_or(&[][..], Node::items)
        .iter()
        .map(|n| ids.id(n))
        .filter(|id| !local_set.contains(id))
        .collect();
    let mut current: Vec<(usize, Node<'a>)> = live.iter().copied().zip(items).collect();
    let mut added: HashSet<usize> = HashSet::default();
    for (id, n) in local.iter().zip(mv.items()) {
        if !live_set.contains(id) && added.insert(*id) {
            current.push((*id, n.clone()));
        }
    }
    if !added.is_empty() {
        // The server merges by appending, then removing duplicates.
        let mut unique: HashSet<usize> = HashSet::default();
        current.retain(|(id, _)| unique.insert(*id));
    }
    // Deletions come last (apimachinery applies them after ordering); they do not move the rest.
    let mut kept = interleave(current, &local, &live);
    kept.retain(|n| !gone.contains(&ids.id(n)));
    if let Some(is) = lv.items_mut() {
        *is = kept;
    }
}

const PATCH: &str = "$patch";

/// A map carrying a `$patch` directive (which the server never stores).
fn has_directive(n: &Node<'_>) -> bool {
    n.get(PATCH).is_some()
}

/// A list element `{name: x, $patch: delete}`: delete the element with that key.
fn is_delete_directive(n: &Node<'_>) -> bool {
    n.get(PATCH).and_then(Node::as_str) == Some("delete")
}

/// Sets a value from the local configuration in the live one's place: live keeps its comments
/// where the local value has none, its blank lines and its quoting.
fn set_value<'a>(lv: &mut Node<'a>, new: Node<'a>) {
    replace(lv, new, Keep::COMMENTS);
}

/// A value as the server stores it when it is new: `null` fields of maps (at any depth, also in
/// maps inside lists) are dropped, and so are maps holding a `$patch` directive; `null` items
/// of lists stay. Its block sequences follow the live document's indentation
/// ([`place::from_patch`]).
fn without_nulls(mut n: Node<'_>) -> Node<'_> {
    strip_nulls(&mut n);
    place::from_patch(&mut n);
    n
}

fn strip_nulls(n: &mut Node<'_>) {
    let has = |n: &Node<'_>| {
        n.entries()
            .iter()
            .any(|e| e.value.is_null() || !e.value.is_scalar())
            || n.items().iter().any(|i| !i.is_scalar())
    };
    if !has(n) {
        return;
    }
    if let Some(es) = n.entries_mut() {
        es.retain(|e| !e.value.is_null() && !has_directive(&e.value));
        for e in es {
            strip_nulls(&mut e.value);
        }
    } else if let Some(is) = n.items_mut() {
        is.retain(|i| !has_directive(i));
        for i in is {
            strip_nulls(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::anchors::anchors_of;
    use crate::yaml::{emit_document, parse_stream};

    fn root_of(schema: &Schema, n: &Node<'_>) -> Cursor {
        match (n.str_at(&["apiVersion"]), n.str_at(&["kind"])) {
            (Some(av), Some(k)) => {
                let (g, v) = crate::select::identity::split_api_version(av);
                schema.root(g, v, k)
            }
            _ => Cursor::default(),
        }
    }

    /// `apply` of `local` to `live`, written back.
    fn run(live: &str, local: &str) -> Result<String, MergeError> {
        let mut l = parse_stream(live).unwrap();
        let m = parse_stream(local).unwrap();
        let schema = Schema::builtin();
        let node = l[0].root.as_mut().unwrap();
        let root = root_of(&schema, node);
        let anchors = anchors_of(node).expect("anchors within budget");
        let opts = Options::default();
        apply(
            node,
            m[0].root.as_ref().unwrap(),
            &Context::new(&schema, root, &anchors).with(opts),
        )?;
        let mut out = String::new();
        emit_document(&l[0], &mut out);
        Ok(out)
    }

    /// `three_way` with an explicit last applied configuration, written back.
    fn three(live: &str, last: Option<&str>, local: &str) -> String {
        let mut l = parse_stream(live).unwrap();
        let m = parse_stream(local).unwrap();
        let o = last.map(|t| parse_stream(t).unwrap());
        let schema = Schema::builtin();
        let node = l[0].root.as_mut().unwrap();
        let root = root_of(&schema, node);
        let original = o.as_ref().and_then(|o| o[0].root.as_ref());
        let local = m[0].root.as_ref().unwrap();
        three_way(
            node,
            original,
            local,
            &Context::new(&schema, root, &Anchors::default()).with(Options::default()),
        )
        .unwrap();
        let mut out = String::new();
        emit_document(&l[0], &mut out);
        out
    }

    const HEAD: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";

    /// The rows of the "Merging Fields" tables: (table row, live, last applied, local, result).
    /// Every document gets `HEAD` in front.
    const TABLES: &[(&str, &str, Option<&str>, &str, &str)] = &[
        // Merging primitives.
        (
            "primitive in config and in live: set to the config's value",
            "spec:\n  replicas: 1\n",
            None,
            "spec:\n  replicas: 2\n",
            "spec:\n  replicas: 2\n",
        ),
        (
            "primitive in config, not in live: set",
            "spec: {}\n",
            None,
            "spec:\n  minReadySeconds: 3\n",
            "spec:\n  minReadySeconds: 3\n",
        ),
        (
            "primitive not in config, in last applied: removed",
            "spec:\n  replicas: 2\n  paused: true\n",
            Some("spec:\n  replicas: 2\n"),
            "spec:\n  paused: true\n",
            "spec:\n  paused: true\n",
        ),
        (
            "primitive in neither config nor last applied: kept",
            "spec:\n  replicas: 5 # set by an autoscaler\n",
            Some("spec: {}\n"),
            "spec: {}\n",
            "spec:\n  replicas: 5 # set by an autoscaler\n",
        ),
        // Merging objects.
        (
            "object in config and in live: merged field by field",
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 1\n        fsGroup: 2\n",
            None,
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 3\n",
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 3\n        fsGroup: 2\n",
        ),
        (
            "object in config, not in live: set",
            "spec:\n  template:\n    spec: {}\n",
            None,
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 3\n",
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 3\n",
        ),
        (
            "object not in config, in last applied: removed",
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 1\n",
            Some("spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 1\n"),
            "spec:\n  template:\n    spec: {}\n",
            "spec:\n  template:\n    spec: {}\n",
        ),
        (
            "object in neither: kept",
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 1\n",
            Some("spec:\n  template: {}\n"),
            "spec:\n  template: {}\n",
            "spec:\n  template:\n    spec:\n      securityContext:\n        runAsUser: 1\n",
        ),
        // Merging maps: every row at once, key by key.
        (
            "map keys: merged, set, removed, kept",
            "spec:\n  template:\n    metadata:\n      labels:\n        a: '0'\n        gone: x\n        theirs: y\n",
            Some("spec:\n  template:\n    metadata:\n      labels:\n        a: '0'\n        gone: x\n"),
            "spec:\n  template:\n    metadata:\n      labels:\n        a: '1'\n        new: z\n",
            "spec:\n  template:\n    metadata:\n      labels:\n        a: '1'\n        theirs: y\n        new: z\n",
        ),
        (
            "null in the config removes",
            "spec:\n  replicas: 3\n  paused: true\n",
            None,
            "spec:\n  replicas: null\n",
            "spec:\n  paused: true\n",
        ),
        // Merging lists of objects (the "Merging Fields" chapter's containers example). It promises no order
        // for elements the config does not have; apimachinery puts the new element where the
        // deleted one freed a place in the live list, so after helper-d.
        (
            "list of objects by merge key",
            "spec:\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.10\n      - name: nginx-helper-a\n        image: helper:1.3\n      - name: nginx-helper-b\n        image: helper:1.3\n        args: [run]\n      - name: nginx-helper-d\n        image: helper:1.3\n",
            Some("spec:\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.10\n      - name: nginx-helper-a\n        image: helper:1.3\n      - name: nginx-helper-b\n        image: helper:1.3\n"),
            "spec:\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.10\n      - name: nginx-helper-b\n        image: helper:1.3\n      - name: nginx-helper-c\n        image: helper:1.3\n",
            "spec:\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.10\n      - name: nginx-helper-b\n        image: helper:1.3\n        args: [run]\n      - name: nginx-helper-d\n        image: helper:1.3\n      - name: nginx-helper-c\n        image: helper:1.3\n",
        ),
        (
            "list of objects: the config's order for its elements; x was before b in live",
            "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n      - name: x\n      - name: b\n",
            None,
            "spec:\n  template:\n    spec:\n      containers:\n      - name: b\n      - name: a\n",
            "spec:\n  template:\n    spec:\n      containers:\n      - name: x\n      - name: b\n      - name: a\n",
        ),
        (
            "list without merge key: replaced",
            "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        args: [x, y]\n",
            None,
            "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        args: [z]\n",
            "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        args: [z]\n",
        ),
        (
            "retainKeys: live fields the config does not set are cleared",
            "spec:\n  strategy:\n    type: RollingUpdate\n    rollingUpdate:\n      maxSurge: 1\n",
            None,
            "spec:\n  strategy:\n    type: Recreate\n",
            "spec:\n  strategy:\n    type: Recreate\n",
        ),
    ];

    #[test]
    fn merging_fields_tables() {
        for (row, live, last, local, want) in TABLES {
            let with_head = |t: &str| format!("{HEAD}{t}");
            let last = last.map(with_head);
            let out = three(&with_head(live), last.as_deref(), &with_head(local));
            assert_eq!(out, with_head(want), "{row}");
            // Applied again, with the config as the last applied one: nothing changes.
            let again = three(&out, Some(&with_head(local)), &with_head(local));
            assert_eq!(again, out, "{row}: not idempotent");
        }
    }

    #[test]
    fn lists_of_primitives_are_ordered_sets() {
        // The "Merging Fields" example, on a list with patch strategy merge (finalizers).
        let cm =
            |f: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: {f}\n");
        assert_eq!(
            three(&cm("[a, b, d]"), Some(&cm("[a, b]")), &cm("[a, c]")),
            cm("[a, c, d]")
        );
    }

    /// A Deployment as `kubectl apply` examples write it, and the annotation kubectl writes for it.
    const NGINX_LOCAL: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx-deployment\nspec:\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.7.9\n";

    const NGINX_ANNOTATION: &str = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"nginx-deployment","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.7.9","name":"nginx"}]}}}}"#;

    #[test]
    fn writes_the_annotation_as_kubectl_does() {
        // Live as the cluster has it: namespace filled in, a status, no annotation yet.
        let live = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx-deployment\n  namespace: default\nspec:\n  replicas: 1\nstatus:\n  replicas: 1\n";
        let out = run(live, NGINX_LOCAL).unwrap();
        let docs = parse_stream(&out).unwrap();
        let root = docs[0].root.as_ref().unwrap();
        let ann = root
            .get_path(&["metadata", "annotations", LAST_APPLIED])
            .unwrap();
        assert_eq!(
            ann.as_string(),
            Some(format!("{NGINX_ANNOTATION}\n").as_str())
        );
        assert!(
            out.contains(&format!(
                "  annotations:\n    {LAST_APPLIED}: |\n      {NGINX_ANNOTATION}\n"
            )),
            "{out}"
        );
        assert!(
            out.contains("spec:\n  replicas: 1\n  selector:\n"),
            "kept: {out}"
        );
        assert!(out.ends_with("status:\n  replicas: 1\n"), "kept: {out}");
        // Applied again: nothing changes.
        assert_eq!(run(&out, NGINX_LOCAL).unwrap(), out);
        // The field removed from the config is deleted, because the annotation has it.
        let local = NGINX_LOCAL.replace(
            "spec:\n  selector",
            "spec:\n  minReadySeconds: 3\n  selector",
        );
        let out = run(&out, &local).unwrap();
        assert!(out.contains("minReadySeconds: 3"), "{out}");
        let out = run(&out, NGINX_LOCAL).unwrap();
        assert!(!out.contains("minReadySeconds"), "{out}");
        assert!(
            out.contains("  replicas: 1\n"),
            "never applied, so kept: {out}"
        );
    }

    #[test]
    fn without_the_annotation_nothing_is_deleted() {
        let live =
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n  b: '2'\n";
        let out = run(
            live,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '3'\n",
        )
        .unwrap();
        assert!(out.contains("data:\n  a: '3'\n  b: '2'\n"), "{out}");
    }

    #[test]
    fn other_annotations_are_in_the_annotation_and_kept() {
        let live = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    {LAST_APPLIED}: '{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"annotations\":{{\"x\":\"1\"}},\"name\":\"c\"}}}}'\n    x: '1'\n    owner: ops\n"
        );
        let local =
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    y: <&>\n";
        let out = run(&live, local).unwrap();
        // `x` was applied before and is gone from the config: deleted. `owner` never was: kept.
        assert!(!out.contains("    x: '1'"), "{out}");
        assert!(out.contains("    owner: ops\n    y: <&>\n"), "{out}");
        // The old annotation was single-quoted: it stays a quoted string.
        let want = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"y":"\u003c\u0026\u003e"},"name":"c"}}"#;
        let docs = parse_stream(&out).unwrap();
        let ann =
            docs[0]
                .root
                .as_ref()
                .unwrap()
                .get_path(&["metadata", "annotations", LAST_APPLIED]);
        assert_eq!(
            ann.and_then(Node::as_string),
            Some(format!("{want}\n").as_str())
        );
    }

    #[test]
    fn malformed_annotation_is_a_typed_error() {
        let live = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    {LAST_APPLIED}: '{{\"a\": }}'\n");
        let err = run(&live, "apiVersion: v1\nkind: ConfigMap\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("metadata.annotations[{LAST_APPLIED}]: the last applied configuration is not valid JSON: expected value at line 1, column 7")
        );
        assert!(matches!(
            err.kind,
            MergeErrorKind::BadAnnotation {
                line: 1,
                column: 7,
                ..
            }
        ));
        let live = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    {LAST_APPLIED}: '[1]'\n");
        let err = run(&live, "apiVersion: v1\nkind: ConfigMap\n").unwrap_err();
        assert_eq!(err.kind, MergeErrorKind::AnnotationNotObject("an array"));
        // An empty annotation reads as none (as kubectl reads it).
        let live = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    {LAST_APPLIED}: ''\n"
        );
        assert!(run(&live, "apiVersion: v1\nkind: ConfigMap\n").is_ok());
    }

    #[test]
    fn missing_merge_key_is_an_error_with_a_path() {
        let live =
            format!("{HEAD}spec:\n  template:\n    spec:\n      containers:\n      - name: a\n");
        let local =
            format!("{HEAD}spec:\n  template:\n    spec:\n      containers:\n      - image: b\n");
        let err = run(&live, &local).unwrap_err();
        assert_eq!(
            err.to_string(),
            "spec.template.spec.containers[0]: list element has no merge key \"name\""
        );
    }

    #[test]
    fn go_json_encoding() {
        let doc = "s: \"<a href='x'>&\\n\\t\\u0001\\u2028é\"\ni: 42\nneg: -7\nf: 1.5\nwhole: 2.0\nbig: 1.0e21\nsmall: 1.5e-7\nhuge: 100000000000000000000000\nt: true\nn: null\nl: [b, a]\nm: {z: 1, a: 2}\n";
        let n = parse_stream(doc).unwrap()[0].root.clone().unwrap();
        assert_eq!(
            kubectl_json(&n).unwrap(),
            "{\"big\":1e+21,\"f\":1.5,\"huge\":1e+23,\"i\":42,\"l\":[\"b\",\"a\"],\"m\":{\"a\":2,\"z\":1},\"n\":null,\"neg\":-7,\"s\":\"\\u003ca href='x'\\u003e\\u0026\\n\\t\\u0001\\u2028é\",\"small\":1.5e-7,\"t\":true,\"whole\":2}\n"
        );
    }

    #[test]
    fn presentation_of_the_live_object_is_kept() {
        let live = format!("{HEAD}spec:\n  # how many\n  replicas: 1 # live\n  paused: false\n");
        let local = format!("{HEAD}spec:\n  replicas: 2\n  minReadySeconds: 3 # from the config\n");
        assert_eq!(
            three(&live, None, &local),
            format!("{HEAD}spec:\n  # how many\n  replicas: 2 # live\n  paused: false\n  minReadySeconds: 3 # from the config\n")
        );
    }
}
