//! The built-in layer: the shapes of the generated tables in `builtin_data.rs` and the lookups
//! over them.
//!
//! The tables are plain `static` data written by `tools/gen_builtin_schema.py`; nothing is parsed
//! or allocated at start-up. Every lookup is a binary search over a sorted slice (kinds, field
//! names, definition names) or an index, so it costs O(log n) whatever the input.
//!
//! Indexes that come from a [`Cursor`](super::Cursor) are checked (`get`), never trusted: a cursor
//! made by another `Schema` gives "no information", not a panic.

use std::cmp::Ordering;

use super::builtin_data::{GROUPS, KINDS, METAS, NAMED, PREFIXES, TYPES};
use super::{FieldMeta, ListMerge, MapKey};

/// "No type" in a `u16` type index.
pub(super) const NO: u16 = u16::MAX;

/// A root: (index into `GROUPS`, version, kind, index into `TYPES`).
pub(super) struct Kind(pub u8, pub &'static str, pub &'static str, pub u16);

/// A list-map key: (field name, value assumed when the element lacks the field).
pub(super) struct Key(pub &'static str, pub Option<&'static str>);

/// How a list merges; the static twin of [`ListMerge`].
pub(super) enum ListDef {
    Atomic,
    Set,
    Map(&'static [Key]),
}

/// The metadata of a field: (list, atomic map, retain keys); the static twin of [`FieldMeta`].
pub(super) struct Meta(pub Option<ListDef>, pub bool, pub bool);

/// A field of a type: (name, index into `METAS`, index into `TYPES` or [`NO`]). For a list the
/// type is the element's.
pub(super) struct Field(pub &'static str, pub u8, pub u16);

/// A type: (index into `PREFIXES` or `u8::MAX` for an inline map, name suffix, type-level
/// `x-kubernetes-map-type: atomic`, fields sorted by name, map value as (meta, type)).
pub(super) struct Type(
    pub u8,
    pub &'static str,
    pub bool,
    pub &'static [Field],
    pub Option<(u8, u16)>,
);

impl Meta {
    fn is_empty(&self) -> bool {
        self.0.is_none() && !self.1 && !self.2
    }

    fn to_field_meta(&self) -> FieldMeta {
        let list = self.0.as_ref().map(|l| match l {
            ListDef::Atomic => ListMerge::Atomic,
            ListDef::Set => ListMerge::Set,
            ListDef::Map(keys) => ListMerge::Map {
                keys: keys
                    .iter()
                    .map(|Key(name, default)| MapKey {
                        name: (*name).to_string(),
                        default: default.map(str::to_string),
                    })
                    .collect(),
            },
        });
        FieldMeta {
            list,
            atomic_map: self.1,
            // No built-in map has patch strategy `replace` (the generator keeps one table of
            // distinct metadata; none of it is a replaced map), and built-in map-types are
            // server-side-apply metadata.
            replace: false,
            retain_keys: self.2,
        }
    }
}

/// A field as the lookups report it: the metadata if it says anything, and the type below.
pub(super) struct Found {
    pub meta: Option<FieldMeta>,
    pub target: Option<u32>,
}

fn target(t: u16) -> Option<u32> {
    (t != NO).then_some(u32::from(t))
}

fn found(meta: u8, t: u16) -> Found {
    let meta = METAS
        .get(usize::from(meta))
        .filter(|m| !m.is_empty())
        .map(Meta::to_field_meta);
    Found {
        meta,
        target: target(t),
    }
}

/// The root type of a built-in kind; `group` is "" for the core group.
pub(super) fn root(group: &str, version: &str, kind: &str) -> Option<u32> {
    let i = KINDS
        .binary_search_by(|Kind(g, v, k, _)| {
            let g = GROUPS.get(usize::from(*g)).copied().unwrap_or("");
            (g, *v, *k).cmp(&(group, version, kind))
        })
        .ok()?;
    KINDS.get(i).map(|k| u32::from(k.3))
}

/// The field `name` of the type `at`, or its map value when it has no such field.
pub(super) fn field(at: u32, name: &str) -> Option<Found> {
    let Type(_, _, _, fields, additional) = TYPES.get(usize::try_from(at).ok()?)?;
    match fields.binary_search_by(|f| f.0.cmp(name)) {
        Ok(i) => fields.get(i).map(|f| found(f.1, f.2)),
        Err(_) => additional.map(|(m, t)| found(m, t)),
    }
}

/// Whether the type `at` is `x-kubernetes-map-type: atomic`.
pub(super) fn atomic(at: u32) -> bool {
    usize::try_from(at)
        .ok()
        .and_then(|i| TYPES.get(i))
        .is_some_and(|t| t.2)
}

/// The type of the definition called `name` (e.g. `io.k8s.api.core.v1.PodSpec`), if it carries
/// merge metadata.
pub(super) fn by_name(name: &str) -> Option<u32> {
    let named = TYPES.get(..NAMED)?;
    let i = named
        .binary_search_by(|t| {
            let prefix = PREFIXES.get(usize::from(t.0)).copied().unwrap_or("");
            cmp_concat(prefix, t.1, name)
        })
        .ok()?;
    u32::try_from(i).ok()
}

/// The fields of the type `at` that have a type of their own in the tables: (name, type), for a
/// list its element type; sorted by name.
pub(super) fn typed_fields(at: u32) -> impl Iterator<Item = (&'static str, u32)> {
    let fields = usize::try_from(at)
        .ok()
        .and_then(|i| TYPES.get(i))
        .map_or(&[][..], |t| t.3);
    fields.iter().filter_map(|f| target(f.2).map(|t| (f.0, t)))
}

/// How many types the tables hold: type indexes are below it.
pub(super) fn type_count() -> usize {
    TYPES.len()
}

/// Every kind: (group, version, kind), sorted.
pub(super) fn kinds() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    KINDS
        .iter()
        .map(|Kind(g, v, k, _)| (GROUPS.get(usize::from(*g)).copied().unwrap_or(""), *v, *k))
}

/// Compares `a + b` with `c` without building `a + b`.
fn cmp_concat(a: &str, b: &str, c: &str) -> Ordering {
    a.bytes().chain(b.bytes()).cmp(c.bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generator promises sorted tables; the binary searches rely on it.
    #[test]
    fn tables_are_sorted() {
        let key = |k: &Kind| (GROUPS[usize::from(k.0)], k.1, k.2);
        assert!(KINDS.windows(2).all(|w| key(&w[0]) < key(&w[1])));
        let name = |t: &Type| format!("{}{}", PREFIXES[usize::from(t.0)], t.1);
        assert!(TYPES[..NAMED].windows(2).all(|w| name(&w[0]) < name(&w[1])));
        for t in &TYPES {
            assert!(t.3.windows(2).all(|w| w[0].0 < w[1].0), "{}", t.1);
            for f in t.3 {
                assert!(usize::from(f.1) < METAS.len());
                assert!(f.2 == NO || usize::from(f.2) < TYPES.len());
            }
        }
        assert!(KINDS.iter().all(|k| usize::from(k.3) < TYPES.len()));
        assert!(METAS[0].is_empty());
    }

    #[test]
    fn by_name_finds_every_named_type() {
        for (i, t) in TYPES[..NAMED].iter().enumerate() {
            let name = format!("{}{}", PREFIXES[usize::from(t.0)], t.1);
            assert_eq!(by_name(&name), Some(i as u32), "{name}");
        }
        assert_eq!(by_name("io.k8s.api.core.v1.NoSuchThing"), None);
        assert_eq!(by_name(""), None);
    }
}
