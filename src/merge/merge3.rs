//! Three-way merge of one resource: the change from `original` to `updated` carried into `dest`,
//! in place (kyaml's merge3), with the conflicts it had to settle.
//!
//! `original` is the common ancestor, `updated` the new upstream version, `dest` the local copy.
//! A field is *changed upstream* when `original` and `updated` differ there (data compared as
//! data, [`Node::same_data`], and comments as text), *changed locally* when `original` and `dest`
//! differ. Explicit `null` and absence are both "no value"; a `null` written upstream where the
//! original had something else is an instruction to clear.
//!
//! * **Nothing changed upstream** — `dest` is left exactly as it is, whatever it holds. (kyaml
//!   also clears `null`s in `dest` there; we keep them, so that a merge with no upstream change
//!   never touches the local copy.)
//! * **Scalars, lists without keys, atomic maps, values whose kind changed** — when the data
//!   changed upstream the updated value is taken, even if `dest` changed it too (the upstream
//!   value wins; [`ConflictKind::BothChanged`]). Deleted or cleared upstream: removed
//!   ([`ConflictKind::DeletedUpstreamChangedLocally`] when `dest` had changed it).
//! * **Maps** — paired by key (as data: `0x1` is `1`; a key's spelling merges like a value,
//!   upstream's winning where upstream changed it and `dest` did not) and merged recursively.
//!   Keys only in `dest` keep their value and
//!   place; keys new upstream are appended after `dest`'s, in `updated`'s order. A map deleted
//!   upstream loses what the original had in it and keeps what `dest` added; a map that this
//!   empties is removed, one that was already empty stays.
//! * **Associative lists** (keys from the schema, a kyaml schema comment, or the associative-key
//!   heuristic with [`Options::infer_keys`]; see `merge::align`) — elements are paired by key
//!   and merged like maps; an element deleted upstream is removed with everything in it, one new
//!   upstream is appended. Lists of scalars with merge semantics (`finalizers`) add what upstream
//!   added and drop what it dropped.
//! * **Missing from `dest`** — a field or element that `dest` lacks gets only the *delta*: what
//!   changed between `original` and `updated` (kyaml's rule; list elements keep their key
//!   fields). If upstream changed something that `dest` deleted, that is
//!   [`ConflictKind::ChangedUpstreamDeletedLocally`]; it is reported once, where `dest` stops.
//!   An explicit `null` in `dest` is a local deletion: where upstream changed the value, the
//!   `null` stays (same conflict), rather than going, so that merging again changes nothing.
//!
//! Comments: a scalar's comment travels with its value: when the upstream value is taken, its
//! comment comes with it if upstream changed the comment, otherwise `dest`'s comment stays,
//! except a line comment on a value `dest` had changed (a conflict upstream won: `replicas: 5 #
//! scaled by hand` speaks of the 5, not of upstream's value, which gets upstream's); a
//! change of comment alone is taken only where `dest` still has the original's value and comment.
//! Comments on keys (head comments, and the comment after `key:` of a collection) merge three-way
//! on their own: upstream's are taken where `dest`'s are still the original's (kyaml's "Update
//! comment" / "Don't update local modified comment").
//!
//! Presentation: `dest` keeps its key order, layout, comments and quoting (a replaced string keeps
//! its quotes where it can, see `yaml::place`); nodes taken from `updated` keep `updated`'s. Unlike
//! kyaml, new keys follow `updated`'s order rather than lexicographic order.
//!
//! What it must not do: pair resources (deleting and adding whole resources is the caller's job),
//! parse or write text, look at anything but the three nodes, the schema and the options, or
//! compare nodes by printing them.

use crate::hash::{HashMap, HashSet};
use std::fmt;

use crate::merge::align::{self, key_seg, FieldIndex, ListKind, ValueIds};
use crate::merge::{Context, MergeError};
use crate::path::{Path, Seg};
use crate::schema::{Cursor, FieldMeta, MapKey, Schema};
use crate::yaml::anchors::Anchors;
use crate::yaml::one_line;
use crate::yaml::place::{self, replace, same_value, Keep};
use crate::yaml::{Comments, Entry, Kind, Node};

/// How to merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Pair list elements by the associative-key heuristic when nothing else says how.
    pub infer_keys: bool,
    /// Which side a conflict settles for.
    pub winner: Winner,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            infer_keys: true,
            winner: Winner::Upstream,
        }
    }
}

/// The side a conflict settles for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Winner {
    /// Upstream's change is made: its value taken, its deletion done, its change to what the
    /// local copy deleted brought back as a delta (kyaml's rules).
    #[default]
    Upstream,
    /// The local copy's value stays, as it is: what it changed, what it deleted.
    Local,
}

/// What the two sides did to the same place. What the merge made of it is the [`Winner`]'s
/// side; for [`Winner::Upstream`], as each kind says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictKind {
    /// Both changed the value, differently (or both added it with different values). The
    /// updated value was taken.
    BothChanged,
    /// Upstream deleted (or explicitly cleared) what the local copy had changed. It was removed.
    DeletedUpstreamChangedLocally,
    /// Upstream changed what the local copy had deleted (or explicitly set to `null`). A deleted
    /// field or element received upstream's delta; a local `null` stayed.
    ChangedUpstreamDeletedLocally,
}

/// A place where both sides changed the same thing; the merge settled it for `settled`, as
/// [`ConflictKind`] says for each side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// Where, from the resource's root: `spec.template.spec.containers[name=app].image`.
    pub path: Path,
    /// How the merge settled it.
    pub kind: ConflictKind,
    /// The side whose value the result holds there. A local `null` upstream changed stays
    /// whatever the options say (so that merging again changes nothing): [`Winner::Local`].
    pub settled: Winner,
    /// `dest`'s value before the merge, as one line of YAML; `None` when it had none.
    pub local: Option<String>,
    /// `updated`'s value, as one line of YAML; `None` when upstream deleted it.
    pub upstream: Option<String>,
}

impl Conflict {
    /// What clashed, with both values: `changed locally to 5 and upstream to 4`.
    pub fn clash(&self) -> String {
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".to_owned());
        match self.kind {
            ConflictKind::BothChanged => format!(
                "changed locally to {} and upstream to {}",
                show(&self.local),
                show(&self.upstream)
            ),
            ConflictKind::DeletedUpstreamChangedLocally => format!(
                "deleted upstream but changed locally (to {})",
                show(&self.local)
            ),
            ConflictKind::ChangedUpstreamDeletedLocally => format!(
                "changed upstream (to {}) but deleted locally",
                show(&self.upstream)
            ),
        }
    }

    /// How the merge settled it: `took upstream`, `deleted` or `kept local`.
    pub fn outcome(&self) -> &'static str {
        match (self.settled, self.kind) {
            (Winner::Local, _) => "kept local",
            (Winner::Upstream, ConflictKind::DeletedUpstreamChangedLocally) => "deleted",
            (Winner::Upstream, _) => "took upstream",
        }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; {}", self.path, self.clash(), self.outcome())
    }
}

/// Merges the change from `original` to `updated` into `dest`, in place, and returns the
/// conflicts: places where both sides changed the same field differently (the updated value
/// wins), or where one side deleted what the other changed. `dest`'s kind is at `cx.root` in
/// `cx.schema`.
///
/// `cx.anchors` are the anchored nodes of `dest` ([`crate::yaml::anchors::anchors_of`]): merging
/// into an alias replaces it with a copy of its anchored node. `original` and `updated` are only
/// read, and taken as they are (see "Patches and aliases" in [`crate::yaml::anchors`]): aliases
/// in them compare by name.
///
/// When `updated` as a whole is `null` (cleared upstream), `dest` becomes `null`: dropping the
/// resource is the caller's decision.
pub fn merge<'a, 'p: 'a>(
    dest: &mut Node<'a>,
    original: &Node<'p>,
    updated: &Node<'p>,
    cx: &Context<'_, 'a, Options>,
) -> Result<Vec<Conflict>, MergeError> {
    let m = Merger {
        schema: cx.schema,
        opts: cx.opts,
        winner: std::cell::Cell::new(cx.opts.winner),
        anchors: cx.anchors,
        depth: align::Depth::default(),
    };
    let mut out = Vec::new();
    let fate = m.field(
        Some(dest),
        Some(original),
        Some(updated),
        cx.root,
        &FieldMeta::default(),
        &mut out,
    )?;
    match fate {
        Fate::Keep => {}
        Fate::Remove => *dest = Node::null(),
        Fate::Set(n) => {
            replace(dest, n, Keep::NO_COMMENTS);
        }
    }
    Ok(out)
}

/// What becomes of a field (or element) of `dest`.
enum Fate<'a> {
    /// As it is now (merged in place, or still absent).
    Keep,
    /// Removed.
    Remove,
    /// Set to this node (added, or in place of a `null`).
    Set(Node<'a>),
}

/// One side's value at a place.
#[derive(Clone, Copy)]
enum Side<'n, 'x> {
    Absent,
    Null,
    Value(&'n Node<'x>),
}

impl<'n, 'x> Side<'n, 'x> {
    fn of(n: Option<&'n Node<'x>>) -> Self {
        match n {
            None => Side::Absent,
            Some(n) if n.is_null() => Side::Null,
            Some(n) => Side::Value(n),
        }
    }

    fn value(self) -> Option<&'n Node<'x>> {
        match self {
            Side::Value(n) => Some(n),
            _ => None,
        }
    }
}

/// Whether upstream left this place alone: same data and same comments, or no value on either
/// side (a `null` dropped upstream is no change; a `null` written upstream is).
fn unchanged(o: Side<'_, '_>, u: Side<'_, '_>) -> bool {
    match (o, u) {
        (Side::Value(a), Side::Value(b)) => identical(a, b),
        (Side::Value(_), _) | (_, Side::Value(_)) => false,
        (Side::Absent, Side::Null) => false,
        (Side::Absent | Side::Null, Side::Absent) | (Side::Null, Side::Null) => true,
    }
}

/// Same data and the same comment texts everywhere (layout of comments aside).
fn identical(a: &Node<'_>, b: &Node<'_>) -> bool {
    a.same_data(b) && same_comments_deep(a, b)
}

fn same_comments_deep(a: &Node<'_>, b: &Node<'_>) -> bool {
    a.comments().same_text(b.comments())
        && a.entries().iter().zip(b.entries()).all(|(x, y)| {
            x.key.comments().same_text(y.key.comments()) && same_comments_deep(&x.value, &y.value)
        })
        && a.items()
            .iter()
            .zip(b.items())
            .all(|(x, y)| same_comments_deep(x, y))
}

/// Records a conflict settled for `settled`; true when that is the local side (the caller then
/// leaves the local value as it is).
fn conflict(
    out: &mut Vec<Conflict>,
    kind: ConflictKind,
    settled: Winner,
    local: Option<&Node<'_>>,
    upstream: Option<&Node<'_>>,
) -> bool {
    out.push(Conflict {
        path: Path::root(),
        kind,
        settled,
        local: local.map(one_line),
        upstream: upstream.map(one_line),
    });
    settled == Winner::Local
}

/// Prefixes the conflicts recorded since `mark` with `seg`, as the walk unwinds.
fn prefix(out: &mut [Conflict], mark: usize, seg: &Seg) {
    for c in out.iter_mut().skip(mark) {
        c.path = std::mem::take(&mut c.path).within(seg.clone());
    }
}

/// The first element of `list` with key `k`, by the list's [`align::positions`].
fn first<'n, 'x>(
    positions: &HashMap<&[String], Vec<usize>>,
    list: Option<&'n Node<'x>>,
    k: &[String],
) -> Option<&'n Node<'x>> {
    let i = *positions.get(k)?.first()?;
    list?.items().get(i)
}

struct Merger<'s, 'x, 'a> {
    schema: &'s Schema,
    opts: Options,
    /// Which side conflicts settle for here: the options' [`Winner`], except while a node is
    /// built for a place `dest` lacks ([`Merger::fill`]), where nothing local is in the way.
    winner: std::cell::Cell<Winner>,
    anchors: &'x Anchors<Node<'a>>,
    /// How many collections enclose the place being decided ([`Merger::field`] counts).
    depth: align::Depth,
}

impl<'a> Merger<'_, '_, 'a> {
    /// Decides one place: `dest` may be absent, `orig` and `upd` may be absent.
    fn field<'p: 'a>(
        &self,
        dest: Option<&mut Node<'a>>,
        orig: Option<&Node<'p>>,
        upd: Option<&Node<'p>>,
        at: Cursor,
        meta: &FieldMeta,
        out: &mut Vec<Conflict>,
    ) -> Result<Fate<'a>, MergeError> {
        let (o, u) = (Side::of(orig), Side::of(upd));
        if unchanged(o, u) {
            return Ok(Fate::Keep);
        }
        // `both` reads the depth before the guard counts this level.
        let depth = self.depth.get();
        let _inside = self.depth.enter();
        let Side::Value(un) = u else {
            // Deleted (absent) or cleared (`null`) upstream.
            let Some(d) = dest else {
                return Ok(Fate::Keep);
            };
            if d.is_null() {
                return Ok(Fate::Remove);
            }
            if let (Side::Absent, Side::Value(on)) = (u, o) {
                return self.deleted_upstream(d, on, at, meta, out);
            }
            if !o.value().is_some_and(|on| d.same_data(on))
                && conflict(
                    out,
                    ConflictKind::DeletedUpstreamChangedLocally,
                    self.winner.get(),
                    Some(d),
                    None,
                )
            {
                return Ok(Fate::Keep);
            }
            return Ok(Fate::Remove);
        };
        match dest {
            None => self.missing_locally(o, un, at, meta, out),
            Some(d) if d.is_null() => {
                if let Side::Null = o {
                    // The `null` is the original's: not a local change.
                    return Ok(self.build(un, at, meta)?.map_or(Fate::Keep, Fate::Set));
                }
                // A local `null` clears the value; it stays, so that merging again changes
                // nothing.
                conflict(
                    out,
                    ConflictKind::ChangedUpstreamDeletedLocally,
                    Winner::Local,
                    Some(d),
                    Some(un),
                );
                Ok(Fate::Keep)
            }
            Some(d) => self.both(d, o, un, at, meta, depth, out),
        }
    }

    /// `dest` lacks the place, upstream has a value.
    fn missing_locally<'p: 'a>(
        &self,
        o: Side<'_, 'p>,
        un: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
        out: &mut Vec<Conflict>,
    ) -> Result<Fate<'a>, MergeError> {
        let Side::Value(on) = o else {
            // Added upstream.
            return Ok(self.build(un, at, meta)?.map_or(Fate::Keep, Fate::Set));
        };
        if on.same_data(un) {
            // Only comments changed, on something the local copy deleted.
            return Ok(Fate::Keep);
        }
        match self.delta(on, un, at, meta)? {
            Some(n) => {
                let local = conflict(
                    out,
                    ConflictKind::ChangedUpstreamDeletedLocally,
                    self.winner.get(),
                    None,
                    Some(un),
                );
                Ok(if local { Fate::Keep } else { Fate::Set(n) })
            }
            None => Ok(Fate::Keep),
        }
    }

    /// `dest` has a value that upstream deleted (`orig` had `on`, `updated` has nothing).
    fn deleted_upstream<'p: 'a>(
        &self,
        d: &mut Node<'a>,
        on: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
        out: &mut Vec<Conflict>,
    ) -> Result<Fate<'a>, MergeError> {
        let empty = |n: &Node<'_>| n.entries().is_empty() && n.items().is_empty();
        let was_empty = empty(d);
        if d.is_map() && on.is_map() && !meta.replace {
            self.map(d, Some(on), None, at, out)?;
            return Ok(if empty(d) && !was_empty {
                Fate::Remove
            } else {
                Fate::Keep
            });
        }
        if d.is_seq() && on.is_seq() {
            let merged = match self.list_kind(meta, &[d, on]) {
                ListKind::Keyed(keys) => {
                    self.keyed(d, Some(on), None, &keys, at, out)?;
                    true
                }
                ListKind::Set => {
                    set(d, Some(on), None);
                    true
                }
                ListKind::Atomic => false,
            };
            if merged {
                return Ok(if empty(d) && !was_empty {
                    Fate::Remove
                } else {
                    Fate::Keep
                });
            }
        }
        if !d.same_data(on)
            && conflict(
                out,
                ConflictKind::DeletedUpstreamChangedLocally,
                self.winner.get(),
                Some(d),
                None,
            )
        {
            return Ok(Fate::Keep);
        }
        Ok(Fate::Remove)
    }

    /// Both `dest` and `updated` have a value, and upstream changed something. `depth`: the
    /// collections around `d`.
    #[allow(clippy::too_many_arguments)]
    fn both<'p: 'a>(
        &self,
        d: &mut Node<'a>,
        o: Side<'_, 'p>,
        un: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
        depth: usize,
        out: &mut Vec<Conflict>,
    ) -> Result<Fate<'a>, MergeError> {
        align::materialize(d, un, self.anchors, depth)?;
        let on = o.value();
        let fits = |k: Kind| on.is_none_or(|n| n.kind() == k);
        if d.kind() == un.kind() {
            align::block_if_empty(d, un);
        }
        match (d.kind(), un.kind()) {
            (Kind::Map, Kind::Map) if !meta.replace && fits(Kind::Map) => {
                self.own_comments(d, on, un);
                self.map(d, on, Some(un), at, out)?;
                Ok(Fate::Keep)
            }
            (Kind::Seq, Kind::Seq) if fits(Kind::Seq) => {
                let lists: Vec<&Node<'_>> =
                    [Some(&*d), on, Some(un)].into_iter().flatten().collect();
                match self.list_kind(meta, &lists) {
                    ListKind::Keyed(keys) => {
                        self.own_comments(d, on, un);
                        self.keyed(d, on, Some(un), &keys, at, out)?;
                        Ok(Fate::Keep)
                    }
                    ListKind::Set => {
                        self.own_comments(d, on, un);
                        set(d, on, Some(un));
                        Ok(Fate::Keep)
                    }
                    ListKind::Atomic => self.atomic(d, o, un, at, meta, out),
                }
            }
            _ => self.atomic(d, o, un, at, meta, out),
        }
    }

    /// A value merged as a whole: taken from upstream when upstream changed its data.
    fn atomic<'p: 'a>(
        &self,
        d: &mut Node<'a>,
        o: Side<'_, 'p>,
        un: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
        out: &mut Vec<Conflict>,
    ) -> Result<Fate<'a>, MergeError> {
        let on = o.value();
        if on.is_some_and(|on| on.same_data(un)) {
            // Only comments changed upstream: taken where the local copy is still the original.
            if on.is_some_and(|on| identical(d, on)) {
                self.take(d, un, on, at, meta, false)?;
            }
            return Ok(Fate::Keep);
        }
        if d.same_data(un) {
            // The same change on both sides.
            return Ok(Fate::Keep);
        }
        let local_unchanged = match o {
            Side::Value(on) => d.same_data(on),
            Side::Null => d.is_null(),
            Side::Absent => false,
        };
        if !local_unchanged
            && conflict(
                out,
                ConflictKind::BothChanged,
                self.winner.get(),
                Some(d),
                Some(un),
            )
        {
            return Ok(Fate::Keep);
        }
        self.take(d, un, on, at, meta, !local_unchanged)?;
        Ok(Fate::Keep)
    }

    /// Puts upstream's value in `d`'s place. Its own comments come along when upstream changed
    /// them (relative to `on`); otherwise `d` keeps its own, except, when `d` held a value of
    /// its own that upstream's overrides (`overridden`, a conflict upstream won), the line
    /// comment: that one speaks of the local value (`replicas: 5 # scaled by hand`), and the
    /// value written is upstream's, with upstream's line comment.
    fn take<'p: 'a>(
        &self,
        d: &mut Node<'a>,
        un: &Node<'p>,
        on: Option<&Node<'p>>,
        at: Cursor,
        meta: &FieldMeta,
        overridden: bool,
    ) -> Result<(), MergeError> {
        let Some(mut new) = self.build(un, at, meta)? else {
            return Ok(());
        };
        let upstream_changed = !un
            .comments()
            .same_text(on.map_or(&Comments::default(), |n| n.comments()));
        if same_value(d, &new) {
            // The value stays as written; only a comment upstream changed comes along.
            if upstream_changed {
                *d.comments_mut() = new.comments().clone();
            }
            return Ok(());
        }
        if !upstream_changed {
            let line = new.comments().line.clone();
            *new.comments_mut() = d.comments().clone();
            if overridden {
                new.comments_mut().line = line;
            }
        }
        replace(d, new, Keep::NO_COMMENTS);
        Ok(())
    }

    /// A collection's own comments (its foot): upstream's where `dest`'s are the original's.
    fn own_comments<'p: 'a>(&self, d: &mut Node<'a>, on: Option<&Node<'p>>, un: &Node<'p>) {
        let empty = Comments::default();
        let oc = on.map_or(&empty, |n| n.comments());
        if !oc.same_text(un.comments()) && d.comments().same_text(oc) {
            *d.comments_mut() = un.comments().clone();
        }
    }

    /// Merges the maps: `dest`'s keys in place, then upstream's new keys in `updated`'s order.
    fn map<'p: 'a>(
        &self,
        d: &mut Node<'a>,
        orig: Option<&Node<'p>>,
        upd: Option<&Node<'p>>,
        at: Cursor,
        out: &mut Vec<Conflict>,
    ) -> Result<(), MergeError> {
        let (oi, ui) = (FieldIndex::new(orig), FieldIndex::new(upd));
        let Some(entries) = d.entries_mut().map(std::mem::take) else {
            return Ok(());
        };
        let mut had_text: HashSet<String> = HashSet::default();
        let mut had_other: HashMap<u64, Vec<Node<'a>>> = HashMap::default();
        let mut kept: Vec<Entry<'a>> = Vec::with_capacity(entries.len());
        let mut rest = entries.into_iter();
        while let Some(mut entry) = rest.next() {
            match align::key_text(&entry.key) {
                Some(t) => {
                    had_text.insert(t.into_owned());
                }
                None => had_other
                    .entry(align::data_hash(&entry.key))
                    .or_default()
                    .push(entry.key.clone()),
            }
            let (oe, ue) = (oi.get(&entry.key), ui.get(&entry.key));
            match self.entry(&mut entry, oe, ue, at, out) {
                Ok(true) => kept.push(entry),
                Ok(false) => {}
                Err(e) => {
                    // Nothing is lost: the entries go back, as far as they got.
                    kept.push(entry);
                    kept.extend(rest);
                    if let Some(es) = d.entries_mut() {
                        *es = kept;
                    }
                    return Err(e);
                }
            }
        }
        for ue in upd.map_or(&[][..], Node::entries) {
            let seen = match align::key_text(&ue.key) {
                Some(t) => had_text.contains(t.as_ref()),
                None => had_other
                    .get(&align::data_hash(&ue.key))
                    .is_some_and(|ks| ks.iter().any(|k| k.same_data(&ue.key))),
            };
            if seen {
                continue;
            }
            match self.new_field(oi.get(&ue.key), ue, at, out) {
                Ok(Some(e)) => {
                    if let Some(t) = align::key_text(&e.key) {
                        had_text.insert(t.into_owned());
                    }
                    kept.push(e);
                }
                Ok(None) => {}
                Err(e) => {
                    if let Some(es) = d.entries_mut() {
                        *es = kept;
                    }
                    return Err(e);
                }
            }
        }
        if let Some(es) = d.entries_mut() {
            *es = kept;
        }
        Ok(())
    }

    /// The entry `dest` gets for a key it lacks and `updated` has, if any.
    fn new_field<'p: 'a>(
        &self,
        oe: Option<&Entry<'p>>,
        ue: &Entry<'p>,
        at: Cursor,
        out: &mut Vec<Conflict>,
    ) -> Result<Option<Entry<'a>>, MergeError> {
        let name = ue.key.as_str().unwrap_or_default();
        let sources: Vec<&Node<'_>> = [oe.map(|e| &e.key), Some(&ue.key)]
            .into_iter()
            .flatten()
            .collect();
        let (meta, child) = align::field(self.schema, at, name, &sources);
        let mark = out.len();
        let fate = self
            .field(
                None,
                oe.map(|e| &e.value),
                Some(&ue.value),
                child,
                &meta,
                out,
            )
            .map_err(|e| e.within(Seg::field(name)))?;
        prefix(out, mark, &Seg::field(name));
        Ok(match fate {
            Fate::Set(value) => Some(Entry {
                key: ue.key.clone(),
                value,
            }),
            Fate::Keep | Fate::Remove => None,
        })
    }

    /// Merges one entry of `dest` with its counterparts; false when it is to be removed.
    fn entry<'p: 'a>(
        &self,
        entry: &mut Entry<'a>,
        oe: Option<&Entry<'p>>,
        ue: Option<&Entry<'p>>,
        at: Cursor,
        out: &mut Vec<Conflict>,
    ) -> Result<bool, MergeError> {
        let (ov, uv) = (oe.map(|e| &e.value), ue.map(|e| &e.value));
        if let Some(ue) = ue {
            key_spelling(&mut entry.key, oe, ue);
        }
        if unchanged(Side::of(ov), Side::of(uv)) && key_unchanged(oe, ue) {
            return Ok(true);
        }
        let name = entry.key.as_str().unwrap_or_default().to_owned();
        let seg = Seg::field(&name);
        let sources: Vec<&Node<'_>> = [Some(&entry.key), oe.map(|e| &e.key), ue.map(|e| &e.key)]
            .into_iter()
            .flatten()
            .collect();
        let (meta, child) = align::field(self.schema, at, &name, &sources);
        if let Some(ue) = ue {
            key_comments(&mut entry.key, oe, ue);
        }
        let mark = out.len();
        let fate = self
            .field(Some(&mut entry.value), ov, uv, child, &meta, out)
            .map_err(|e| e.within(seg.clone()))?;
        prefix(out, mark, &seg);
        Ok(match fate {
            Fate::Keep => true,
            Fate::Remove => false,
            Fate::Set(n) => {
                replace(&mut entry.value, n, Keep::NO_COMMENTS);
                true
            }
        })
    }

    /// Merges lists whose elements pair by `keys`: `dest`'s elements in place (removed when
    /// deleted upstream), then the elements new to `dest`, in `updated`'s order.
    fn keyed<'p: 'a>(
        &self,
        d: &mut Node<'a>,
        orig: Option<&Node<'p>>,
        upd: Option<&Node<'p>>,
        keys: &[MapKey],
        at: Cursor,
        out: &mut Vec<Conflict>,
    ) -> Result<(), MergeError> {
        let keys_of =
            |list: Option<&Node<'_>>| list.map_or(Ok(Vec::new()), |l| align::keys_of(l, keys));
        let dk = keys_of(Some(&*d))?;
        let ok = keys_of(orig)?;
        let uk = keys_of(upd)?;
        let (op, up) = (align::positions(&ok), align::positions(&uk));
        let elem = FieldMeta {
            replace: self.schema.is_replaced(at),
            ..FieldMeta::default()
        };
        let Some(items) = d.items_mut().map(std::mem::take) else {
            return Ok(());
        };
        let mut have: HashSet<Vec<String>> = dk.iter().cloned().collect();
        let mut kept: Vec<Node<'a>> = Vec::with_capacity(items.len());
        let mut rest = dk.iter().zip(items);
        while let Some((k, mut item)) = rest.next() {
            let (oe, ue) = (first(&op, orig, k), first(&up, upd, k));
            if unchanged(Side::of(oe), Side::of(ue)) {
                kept.push(item);
                continue;
            }
            let seg = key_seg(keys, k);
            let mark = out.len();
            let fate = match ue {
                // Deleted upstream: the element goes, with whatever the local copy put in it.
                None => {
                    let local = !oe.is_some_and(|oe| item.same_data(oe))
                        && conflict(
                            out,
                            ConflictKind::DeletedUpstreamChangedLocally,
                            self.winner.get(),
                            Some(&item),
                            None,
                        );
                    Ok(if local { Fate::Keep } else { Fate::Remove })
                }
                Some(_) => self.field(Some(&mut item), oe, ue, at, &elem, out),
            };
            match fate {
                Ok(Fate::Keep) => kept.push(item),
                Ok(Fate::Remove) => {}
                Ok(Fate::Set(n)) => {
                    replace(&mut item, n, Keep::NO_COMMENTS);
                    kept.push(item);
                }
                Err(e) => {
                    kept.push(item);
                    kept.extend(rest.map(|(_, n)| n));
                    if let Some(is) = d.items_mut() {
                        *is = kept;
                    }
                    return Err(e.within(seg));
                }
            }
            prefix(out, mark, &seg);
        }
        for (k, ue) in uk.iter().zip(upd.map_or(&[][..], Node::items)) {
            if have.contains(k) {
                continue;
            }
            let oe = first(&op, orig, k);
            let seg = key_seg(keys, k);
            let mark = out.len();
            let fate = match self.field(None, oe, Some(ue), at, &elem, out) {
                Ok(f) => f,
                Err(e) => {
                    if let Some(is) = d.items_mut() {
                        *is = kept;
                    }
                    return Err(e.within(seg));
                }
            };
            prefix(out, mark, &seg);
            if let Fate::Set(n) = fate {
                kept.push(with_keys(n, ue, keys));
                have.insert(k.clone());
            }
        }
        if let Some(is) = d.items_mut() {
            *is = kept;
        }
        Ok(())
    }

    /// How lists at a field merge; keyed lists of anything but maps cannot be paired.
    fn list_kind(&self, meta: &FieldMeta, lists: &[&Node<'_>]) -> ListKind {
        match align::list_kind(meta, self.opts.infer_keys, lists, |_| false) {
            ListKind::Keyed(_) if !lists.iter().all(|l| l.items().iter().all(Node::is_map)) => {
                ListKind::Atomic
            }
            k => k,
        }
    }

    /// A new node holding `un` for a place `dest` lacks and the original lacked: maps and
    /// merged lists are built through the walk (so `null`s in them clear, i.e. are left out).
    /// `None` when nothing is left.
    fn build<'p: 'a>(
        &self,
        un: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<Option<Node<'a>>, MergeError> {
        self.fill(None, un, at, meta, true)
    }

    /// What `dest` should get for a place it lacks while the original had `on`: the change from
    /// `on` to `un` only. `None` when that change carries nothing (only deletions).
    fn delta<'p: 'a>(
        &self,
        on: &Node<'p>,
        un: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
    ) -> Result<Option<Node<'a>>, MergeError> {
        self.fill(Some(on), un, at, meta, false)
    }

    /// Builds from an empty node shaped like `un`. Conflicts found inside are not reported: the
    /// caller reports one where `dest` stops.
    fn fill<'p: 'a>(
        &self,
        on: Option<&Node<'p>>,
        un: &Node<'p>,
        at: Cursor,
        meta: &FieldMeta,
        keep_empty: bool,
    ) -> Result<Option<Node<'a>>, MergeError> {
        let mut scratch = Vec::new();
        // Nothing local is in the way of what is built here: upstream's rules throughout.
        let _upstream = WinnerGuard::set(&self.winner, Winner::Upstream);
        let fits = |k: Kind| on.is_none_or(|n| n.kind() == k);
        let mut n: Node<'a> = un.shell();
        place::shell_from_patch(&mut n);
        match un.kind() {
            Kind::Map if !meta.replace && fits(Kind::Map) => {
                self.map(&mut n, on, Some(un), at, &mut scratch)?;
                if n.entries().is_empty() && !keep_empty {
                    return Ok(None);
                }
            }
            Kind::Seq if fits(Kind::Seq) => {
                let lists: Vec<&Node<'_>> = [on, Some(un)].into_iter().flatten().collect();
                match self.list_kind(meta, &lists) {
                    ListKind::Keyed(keys) => {
                        self.keyed(&mut n, on, Some(un), &keys, at, &mut scratch)?
                    }
                    ListKind::Set => set(&mut n, on, Some(un)),
                    ListKind::Atomic => {
                        let mut list = un.clone();
                        place::from_patch(&mut list);
                        return Ok(Some(list));
                    }
                }
                if n.items().is_empty() && !keep_empty {
                    return Ok(None);
                }
            }
            _ => return Ok(Some(un.clone())),
        }
        Ok(Some(n))
    }
}

/// Sets a merger's winner until it is dropped, then puts the one before back.
struct WinnerGuard<'c> {
    cell: &'c std::cell::Cell<Winner>,
    before: Winner,
}

impl<'c> WinnerGuard<'c> {
    fn set(cell: &'c std::cell::Cell<Winner>, w: Winner) -> Self {
        WinnerGuard {
            cell,
            before: cell.replace(w),
        }
    }
}

impl Drop for WinnerGuard<'_> {
    fn drop(&mut self) {
        self.cell.set(self.before);
    }
}

/// Whether upstream left a key's comments alone.
fn key_unchanged(oe: Option<&Entry<'_>>, ue: Option<&Entry<'_>>) -> bool {
    match (oe, ue) {
        (Some(o), Some(u)) => o.key.comments().same_text(u.key.comments()),
        (None, Some(u)) => u.key.comments().is_empty(),
        _ => true,
    }
}

/// A key's spelling merges three-way, like a value: keys pair as data (`0x1` is the
/// original's `1`), and upstream's spelling wins where upstream changed it from the original's
/// (or added the key), unless `dest` respelled it too. The result holds one key.
fn key_spelling<'a, 'p: 'a>(dk: &mut Node<'a>, oe: Option<&Entry<'p>>, ue: &Entry<'p>) {
    let spelled = |n: &Node<'_>| (n.as_str().map(str::to_owned), n.tag().map(str::to_owned));
    let upstream = spelled(&ue.key);
    let changed = oe.is_none_or(|o| spelled(&o.key) != upstream);
    let local_kept = oe.is_none_or(|o| spelled(&o.key) == spelled(dk));
    if changed && local_kept {
        place::respell_key(dk, &ue.key);
    }
}

/// Key comments merge three-way: upstream's where `dest`'s are still the original's.
fn key_comments<'a, 'p: 'a>(dk: &mut Node<'a>, oe: Option<&Entry<'p>>, ue: &Entry<'p>) {
    let empty = Comments::default();
    let oc = oe.map_or(&empty, |e| e.key.comments());
    let uc = ue.key.comments();
    if !oc.same_text(uc) && dk.comments().same_text(oc) {
        *dk.comments_mut() = uc.clone();
    }
}

/// Scalar lists merged as sets: what upstream dropped goes, what it added is appended.
fn set<'a, 'p: 'a>(d: &mut Node<'a>, orig: Option<&Node<'p>>, upd: Option<&Node<'p>>) {
    let (o, u) = (
        orig.map_or(&[][..], Node::items),
        upd.map_or(&[][..], Node::items),
    );
    let mut ids = ValueIds::default();
    let oid: HashSet<usize> = o.iter().map(|x| ids.id(x)).collect();
    let uid: Vec<usize> = u.iter().map(|x| ids.id(x)).collect();
    let uset: HashSet<usize> = uid.iter().copied().collect();
    let Some(items) = d.items_mut() else {
        return;
    };
    let mut present: HashSet<usize> = HashSet::default();
    let keep: Vec<bool> = items
        .iter()
        .map(|x| {
            let id = ids.id(x);
            let dropped = oid.contains(&id) && !uset.contains(&id);
            if !dropped {
                present.insert(id);
            }
            !dropped
        })
        .collect();
    let mut keep = keep.into_iter();
    items.retain(|_| keep.next().unwrap_or(true));
    for (x, id) in u.iter().zip(uid) {
        if !oid.contains(&id) && present.insert(id) {
            items.push(x.clone());
        }
    }
}

/// An element built from a delta, given back its key fields (which did not change, so the delta
/// lacks them), all fields in the upstream element's order.
fn with_keys<'a, 'p: 'a>(mut n: Node<'a>, ue: &Node<'p>, keys: &[MapKey]) -> Node<'a> {
    let Some(es) = n.entries_mut() else {
        return n;
    };
    for k in keys {
        if !es.iter().any(|e| e.key.as_str() == Some(&k.name)) {
            if let Some(src) = ue
                .entries()
                .iter()
                .find(|e| e.key.as_str() == Some(&k.name))
            {
                es.push(src.clone());
            }
        }
    }
    // Each field's place in the upstream element, by hash (elements can be wide).
    let mut place: HashMap<&str, usize> = HashMap::default();
    for (i, u) in ue.entries().iter().enumerate() {
        if let Some(k) = u.key.as_str() {
            place.entry(k).or_insert(i);
        }
    }
    let rank = |e: &Entry<'_>| {
        e.key
            .as_str()
            .and_then(|k| place.get(k).copied())
            .unwrap_or(usize::MAX)
    };
    es.sort_by_key(rank);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::anchors::anchors_of;
    use crate::yaml::{emit_document, parse_stream};

    /// merge3 of `original` → `updated` into `dest` (schema from dest's apiVersion/kind): the
    /// result and the conflicts as `path: kind`.
    fn run(original: &str, updated: &str, dest: &str) -> (String, Vec<String>) {
        let o = parse_stream(original).unwrap();
        let u = parse_stream(updated).unwrap();
        let mut d = parse_stream(dest).unwrap();
        let schema = Schema::builtin();
        let node = d[0].root.as_mut().unwrap();
        let root = match (node.str_at(&["apiVersion"]), node.str_at(&["kind"])) {
            (Some(av), Some(k)) => {
                let (g, v) = crate::select::identity::split_api_version(av);
                schema.root(g, v, k)
            }
            _ => Cursor::default(),
        };
        let anchors = anchors_of(node).expect("anchors within budget");
        let conflicts = merge(
            node,
            o[0].root.as_ref().unwrap(),
            u[0].root.as_ref().unwrap(),
            &Context::new(&schema, root, &anchors).with(Options::default()),
        )
        .unwrap();
        let mut out = String::new();
        emit_document(&d[0], &mut out);
        let cs = conflicts
            .iter()
            .map(|c| format!("{}: {:?}", c.path, c.kind))
            .collect();
        (out, cs)
    }

    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n";

    /// (what, original, updated, dest, expected result, expected conflicts)
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static [&'static str],
    );

    const CASES: &[Case] = &[
        (
            "changed upstream only: taken",
            "a: 1\nb: x\n",
            "a: 2\nb: x\n",
            "a: 1\nb: y\n",
            "a: 2\nb: y\n",
            &[],
        ),
        (
            "changed locally only: kept",
            "a: 1\n",
            "a: 1\n",
            "a: 5 # mine\n",
            "a: 5 # mine\n",
            &[],
        ),
        (
            "both changed: upstream wins",
            "a: 1\n",
            "a: 2\n",
            "a: 3\n",
            "a: 2\n",
            &["a: BothChanged"],
        ),
        (
            "both made the same change: no conflict",
            "a: 1\n",
            "a: 2\n",
            "a: 2\n",
            "a: 2\n",
            &[],
        ),
        (
            "both added, differently",
            "{}\n",
            "a: 2\n",
            "a: 3\n",
            "a: 2\n",
            &["a: BothChanged"],
        ),
        (
            "deleted upstream, unchanged locally: deleted",
            "a: 1\nb: 2\n",
            "b: 2\n",
            "a: 1\nb: 2\n",
            "b: 2\n",
            &[],
        ),
        (
            "deleted upstream, changed locally: deleted",
            "a: 1\nb: 2\n",
            "b: 2\n",
            "a: 9\nb: 2\n",
            "b: 2\n",
            &["a: DeletedUpstreamChangedLocally"],
        ),
        (
            "changed upstream, deleted locally: taken",
            "a: 1\nb: 2\n",
            "a: 3\nb: 2\n",
            "b: 2\n",
            "b: 2\na: 3\n",
            &["a: ChangedUpstreamDeletedLocally"],
        ),
        (
            "explicit null upstream clears",
            "b: 2\n",
            "a: null\nb: 2\n",
            "a: 1\nb: 2\n",
            "b: 2\n",
            &["a: DeletedUpstreamChangedLocally"],
        ),
        (
            "a null in dest is a local deletion",
            "a: 1\n",
            "a: 2\n",
            "a: null\n",
            "a: null\n",
            &["a: ChangedUpstreamDeletedLocally"],
        ),
        (
            "null kept as null when upstream did not touch it",
            "a: 1\nn: ~\n",
            "a: 2\nn: ~\n",
            "a: 1\nn: ~\nm: null\n",
            "a: 2\nn: ~\nm: null\n",
            &[],
        ),
        (
            "new keys follow dest's, in updated's order",
            "a: 1\n",
            "z: 1\na: 1\nb: 2\n",
            "a: 1\nlocal: x\n",
            "a: 1\nlocal: x\nz: 1\nb: 2\n",
            &[],
        ),
        (
            "map deleted upstream keeps what dest added, and goes when emptied",
            "m:\n  a: 1\nn:\n  a: 1\n",
            "{}\n",
            "m:\n  a: 1\n  mine: 2\nn:\n  a: 1\n",
            "m:\n  mine: 2\n",
            &[],
        ),
        (
            "a map missing locally gets only the delta",
            "m:\n  a: 1\n  b: 1\n",
            "m:\n  a: 1\n  b: 2\n",
            "x: 1\n",
            "x: 1\nm:\n  b: 2\n",
            &["m: ChangedUpstreamDeletedLocally"],
        ),
        (
            "a map missing locally and unchanged upstream stays missing",
            "m:\n  a: 1\nx: 1\n",
            "m:\n  a: 1\nx: 2\n",
            "x: 1\n",
            "x: 2\n",
            &[],
        ),
        (
            "lists without keys are replaced when changed upstream",
            "l: [1, 2]\n",
            "l: [1, 2, 3]\n",
            "l: [1, 2, 9]\n",
            "l: [1, 2, 3]\n",
            &["l: BothChanged"],
        ),
        (
            "quoting of dest is kept for a replaced string",
            "a: x\n",
            "a: 'y'\n",
            "a: \"x\"\n",
            "a: \"y\"\n",
            &[],
        ),
    ];

    #[test]
    fn rules() {
        for (what, o, u, d, want, conflicts) in CASES {
            let (out, cs) = run(o, u, d);
            assert_eq!(out, *want, "{what}");
            assert_eq!(cs, *conflicts, "{what}");
            // Idempotent: the same change merged again into the result changes nothing.
            assert_eq!(run(o, u, &out).0, out, "{what}: not idempotent");
        }
    }

    #[test]
    fn no_upstream_change_leaves_dest_byte_identical() {
        let dest = "a: {x: 1,   y: [1,2]}  # flow, spaced\nb: null\nc:\n- name: q\n  v: ~\n";
        let (out, cs) = run("a: 1\n", "a: 1\n", dest);
        assert_eq!(out, dest);
        assert!(cs.is_empty());
    }

    #[test]
    fn keyed_lists_and_conflict_paths() {
        let orig = DEPLOY;
        let upd = DEPLOY.replace("app:1", "app:2") + "      - name: side\n        image: side:1\n";
        let dest = DEPLOY.replace("app:1", "app:local");
        let (out, cs) = run(orig, &upd, &dest);
        assert!(
            out.contains("image: app:2\n      - name: side\n        image: side:1\n"),
            "{out}"
        );
        assert_eq!(
            cs,
            ["spec.template.spec.containers[name=app].image: BothChanged"]
        );
        // An element deleted upstream goes, even with local changes (reported).
        let upd = DEPLOY.replace("      - name: app\n        image: app:1\n", "        []\n");
        let dest = DEPLOY.to_owned() + "        args: [x]\n";
        let (out, cs) = run(orig, &upd, &dest);
        assert!(out.ends_with("containers: []\n"), "{out}");
        assert_eq!(
            cs,
            ["spec.template.spec.containers[name=app]: DeletedUpstreamChangedLocally"]
        );
        // An element changed upstream that dest deleted comes back as its delta.
        let upd = DEPLOY.to_owned() + "        args: [y]\n";
        let dest = DEPLOY.replace("      - name: app\n        image: app:1\n", "        []\n");
        let (out, cs) = run(orig, &upd, &dest);
        // It stands where the empty `[]` stood on its own line.
        assert!(
            out.ends_with("containers:\n        - name: app\n          args: [y]\n"),
            "{out}"
        );
        assert_eq!(
            cs,
            ["spec.template.spec.containers[name=app]: ChangedUpstreamDeletedLocally"]
        );
    }

    #[test]
    fn sets_merge_as_sets() {
        let (out, cs) = run(
            "metadata:\n  finalizers: [a, b]\n",
            "metadata:\n  finalizers: [b, c]\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [a, b, d]\n",
        );
        assert_eq!(
            out,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [b, d, c]\n"
        );
        assert!(cs.is_empty());
    }

    #[test]
    fn comments() {
        // A key's comment: upstream's where dest's is the original's, dest's otherwise.
        let (out, _) = run("a: # o\n- 1\n", "a: # u\n- 2\n", "a: # o\n- 1\n");
        assert_eq!(out, "a: # u\n- 2\n");
        let (out, _) = run("a: # o\n- 1\n", "a: # u\n- 2\n", "a: # mine\n- 1\n");
        assert_eq!(out, "a: # mine\n- 2\n");
        // A scalar's comment travels with the upstream value when upstream changed it...
        let (out, _) = run("a: 1 # o\n", "a: 2 # u\n", "a: 3 # mine\n");
        assert_eq!(out, "a: 2 # u\n");
        // ...and dest's stays when upstream changed only the value.
        let (out, _) = run("a: 1 # o\n", "a: 2 # o\n", "a: 1 # mine\n");
        assert_eq!(out, "a: 2 # mine\n");
        // A change of comment alone is taken only where dest is still the original.
        let (out, _) = run("a: 1 # o\n", "a: 1 # u\n", "a: 1 # o\n");
        assert_eq!(out, "a: 1 # u\n");
        let (out, _) = run("a: 1 # o\n", "a: 1 # u\n", "a: 4 # o\n");
        assert_eq!(out, "a: 4 # o\n");
    }

    #[test]
    fn merging_into_an_alias_changes_only_that_place() {
        let (out, _) = run(
            "a: &x\n  k: 1\nb: *x\n",
            "a: &x\n  k: 1\nb:\n  k: 1\n  j: 2\n",
            "a: &x\n  k: 1\nb: *x\n",
        );
        assert_eq!(out, "a: &x\n  k: 1\nb:\n  k: 1\n  j: 2\n");
    }

    #[test]
    fn elements_without_their_key_are_errors_with_a_path() {
        let o = parse_stream(DEPLOY).unwrap();
        let (ut, dt) = (
            DEPLOY.replace("app:1", "app:2"),
            DEPLOY.replace("- name: app\n        image", "- image"),
        );
        let u = parse_stream(&ut).unwrap();
        let mut d = parse_stream(&dt).unwrap();
        let schema = Schema::builtin();
        let root = schema.root("apps", "v1", "Deployment");
        let err = merge(
            d[0].root.as_mut().unwrap(),
            o[0].root.as_ref().unwrap(),
            u[0].root.as_ref().unwrap(),
            &Context::new(&schema, root, &Anchors::default()).with(Options::default()),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "spec.template.spec.containers[0]: list element has no merge key \"name\""
        );
    }

    #[test]
    fn conflicts_display() {
        let mut c = Conflict {
            path: Path(vec![Seg::field("spec"), Seg::field("replicas")]),
            kind: ConflictKind::BothChanged,
            settled: Winner::Upstream,
            local: Some("2".into()),
            upstream: Some("3".into()),
        };
        assert_eq!(
            c.to_string(),
            "spec.replicas: changed locally to 2 and upstream to 3; took upstream"
        );
        c.settled = Winner::Local;
        assert_eq!(
            c.to_string(),
            "spec.replicas: changed locally to 2 and upstream to 3; kept local"
        );
        assert_eq!(
            one_line(
                &parse_stream("{a: [1, x]}\n").unwrap()[0]
                    .root
                    .clone()
                    .unwrap()
            ),
            r#"{"a":[1,"x"]}"#
        );
    }
}
