//! Indexes over a tree's collections, which the walkers use to pair and find entries by hash
//! rather than by scan: a scalar's value as a hash key ([`ScalarKey`]), a hash of any node's data
//! that agrees with [`Node::same_data`] ([`data_hash`]), and a mapping's entry positions by key,
//! kept up to date while a walker merges into it ([`KeyPositions`]).
//!
//! What it is: plain data structures over [`Node`]s, shared by the merge walkers
//! (`crate::merge`) and the JSON merge patch (`crate::patch::jsonmerge`). What it must not do:
//! change a tree (except [`KeyPositions::compact`], which takes out what its caller removed),
//! or know about schemas, merge keys or patches.

use std::borrow::Cow;

use crate::hash::HashMap;

use super::scalar::Resolved;
use super::{Kind, Node};

/// A scalar's value in a form that can be hashed: two scalars have the same `ScalarKey` exactly
/// when [`Node::same_data`] holds for them (`3` and `3`, `"a"` and `a`, not `3` and `"3"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ScalarKey {
    Null,
    Bool(bool),
    Int(i128),
    /// The bits of the value, `-0.0` counted as `0.0`.
    Float(u64),
    Str(String),
}

impl ScalarKey {
    /// The key of a scalar; `None` for collections and aliases.
    pub(crate) fn of(n: &Node<'_>) -> Option<ScalarKey> {
        Some(match n.resolved()? {
            Resolved::Null => ScalarKey::Null,
            Resolved::Bool(b) => ScalarKey::Bool(b),
            Resolved::Int(i) => ScalarKey::Int(i),
            Resolved::Float(f) => ScalarKey::Float(if f == 0.0 { 0 } else { f.to_bits() }),
            Resolved::Str(s) => ScalarKey::Str(s.to_owned()),
        })
    }
}

/// A mapping key's identity as data, as Kubernetes reads keys (its YAML-to-JSON conversion
/// makes every key a JSON object key): a string's text; the text of another scalar's value as
/// that conversion writes it (`1` for `0x1` and `1.0`, `true` for `True`, `null` for `~`;
/// integral floats as integers, other floats as Go prints them); `None` for a key that is a
/// collection or an alias, which has no text. So `1`, `0x1`, `1.0` and `"1"` are one key, and
/// `"0x1"` (a string) is not `0x1` (the number one). Keys the reader refuses as duplicates are
/// one key here too; the merge walkers' pairing ([`KeyPositions`],
/// `crate::merge::align::FieldIndex`) and the patch generators use this one notion.
pub fn key_text<'x>(key: &'x Node<'_>) -> Option<Cow<'x, str>> {
    Some(match key.resolved()? {
        Resolved::Str(s) => Cow::Borrowed(s),
        Resolved::Null => Cow::Borrowed("null"),
        Resolved::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
        Resolved::Int(i) => Cow::Owned(i.to_string()),
        Resolved::Float(f) if f.is_nan() => Cow::Borrowed(".nan"),
        Resolved::Float(f) if f.is_infinite() => {
            Cow::Borrowed(if f > 0.0 { ".inf" } else { "-.inf" })
        }
        Resolved::Float(f) if f.fract() == 0.0 && f.abs() < 1e21 => {
            Cow::Owned(format!("{}", f as i128))
        }
        Resolved::Float(f) => Cow::Owned(go_float(f)),
    })
}

/// `%v` of a float64: the shortest digits, in exponent form when the exponent is below -4 or
/// at least 6 (`1e+06`, `1.5e-05`).
pub(crate) fn go_float(f: f64) -> String {
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

/// How a walker pairs a patch's mapping keys with a resource's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pairing {
    /// As data ([`key_text`]): `1` and `0x1` are one key, as Kubernetes reads them.
    #[default]
    Data,
    /// As text: `1` and `0x1` are two keys, as kyaml's walk (field names as strings) takes
    /// them; kustomize's options only.
    Text,
}

impl Pairing {
    /// The identity of `key` under this pairing; `None` for keys that are not scalars.
    pub fn ident<'x>(self, key: &'x Node<'_>) -> Option<Cow<'x, str>> {
        match self {
            Pairing::Data => key_text(key),
            Pairing::Text => key.as_str().map(Cow::Borrowed),
        }
    }
}

/// A hash of a node's data that agrees with [`Node::same_data`]: nodes with the same data
/// have the same hash (scalars by their [`ScalarKey`], collections by their children in order,
/// aliases by name; comments and styles do not count). Equal hashes are then confirmed with
/// `same_data`.
pub(crate) fn data_hash(n: &Node<'_>) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    // One hasher for the process, so hashes agree between nodes; its keys random (as the
    // crate's maps' are, `crate::hash`), so crafted input cannot put everything in one bucket.
    static STATE: std::sync::OnceLock<crate::hash::State> = std::sync::OnceLock::new();
    let mut h = STATE
        .get_or_init(crate::hash::State::default)
        .build_hasher();
    fn feed(n: &Node<'_>, h: &mut impl std::hash::Hasher) {
        match n.kind() {
            Kind::Scalar => {
                0u8.hash(h);
                match ScalarKey::of(n) {
                    // `.nan` is the same data as `.nan`, whatever its bits.
                    Some(ScalarKey::Float(f)) if f64::from_bits(f).is_nan() => 1u8.hash(h),
                    k => k.hash(h),
                }
            }
            Kind::Seq => {
                1u8.hash(h);
                n.items().len().hash(h);
                n.items().iter().for_each(|i| feed(i, h));
            }
            Kind::Map => {
                2u8.hash(h);
                n.entries().len().hash(h);
                for e in n.entries() {
                    feed(&e.key, h);
                    feed(&e.value, h);
                }
            }
            Kind::Alias => {
                3u8.hash(h);
                n.alias_name().hash(h);
            }
        }
    }
    feed(n, &mut h);
    h.finish()
}

/// The positions of a map's entries by key (as data or as text: [`Pairing`]), kept up to date
/// while a walker merges into the map: what it appends is added, what it removes is only marked
/// and taken out by [`KeyPositions::compact`] at the end (removing each at once shifted the
/// rest: quadratic). A map of up to [`KeyPositions::SCAN`] entries is scanned; a wider one is
/// hashed, so merging a patch of m keys into a map of n costs O(n + m), not O(n·m). The first
/// of duplicate keys is found.
#[derive(Default)]
pub(crate) struct KeyPositions {
    pairing: Pairing,
    hashed: Option<HashMap<String, usize>>,
    /// The positions of the keys that are collections, by [`data_hash`], made when first asked
    /// for in a wide map.
    by_data: Option<HashMap<u64, Vec<usize>>>,
    /// `gone[i]`: the entry at `i` is to be removed.
    gone: Vec<bool>,
    any_gone: bool,
}

impl KeyPositions {
    /// Up to this many entries, a scan is cheaper than a hash map.
    pub(crate) const SCAN: usize = 16;

    /// The positions of `map`'s entries (none for a non-map), keys paired as data.
    pub(crate) fn new(map: &Node<'_>) -> Self {
        Self::with(map, Pairing::Data)
    }

    /// The positions of `map`'s entries, keys paired as `pairing` says.
    pub(crate) fn with(map: &Node<'_>, pairing: Pairing) -> Self {
        let mut p = KeyPositions {
            pairing,
            ..KeyPositions::default()
        };
        if map.entries().len() > Self::SCAN {
            p.hash(map);
        }
        p
    }

    fn hash(&mut self, map: &Node<'_>) {
        let mut h: HashMap<String, usize> = HashMap::default();
        h.reserve(map.entries().len());
        for (i, e) in map.entries().iter().enumerate() {
            if let Some(k) = self.pairing.ident(&e.key) {
                if !self.is_gone(i) {
                    h.entry(k.into_owned()).or_insert(i);
                }
            }
        }
        self.hashed = Some(h);
    }

    fn is_gone(&self, i: usize) -> bool {
        self.gone.get(i).copied().unwrap_or(false)
    }

    /// The position of the live entry whose key has this identity ([`Pairing::ident`]).
    fn find(&self, map: &Node<'_>, key: &str) -> Option<usize> {
        match &self.hashed {
            Some(h) => h.get(key).copied(),
            None => map.entries().iter().enumerate().position(|(i, e)| {
                self.pairing.ident(&e.key).as_deref() == Some(key) && !self.is_gone(i)
            }),
        }
    }

    /// The position of the live entry whose key is `key` (any key; scalar keys by
    /// [`Pairing::ident`], the rare collection keys by [`data_hash`] once the map is wide).
    pub(crate) fn find_node(&mut self, map: &Node<'_>, key: &Node<'_>) -> Option<usize> {
        let Some(t) = self.pairing.ident(key) else {
            if map.entries().len() <= Self::SCAN {
                return map
                    .entries()
                    .iter()
                    .enumerate()
                    .position(|(i, e)| e.key.same_data(key) && !self.is_gone(i));
            }
            let by_data = self.by_data.get_or_insert_with(|| {
                let mut m: HashMap<u64, Vec<usize>> = HashMap::default();
                for (i, e) in map.entries().iter().enumerate() {
                    if e.key.as_str().is_none() {
                        m.entry(data_hash(&e.key)).or_default().push(i);
                    }
                }
                m
            });
            let gone = &self.gone;
            return by_data.get(&data_hash(key))?.iter().copied().find(|&i| {
                !gone.get(i).copied().unwrap_or(false)
                    && map.entries().get(i).is_some_and(|e| e.key.same_data(key))
            });
        };
        self.find(map, &t)
    }

    /// The entry of `map` at `i` is to go.
    pub(crate) fn remove(&mut self, map: &Node<'_>, i: usize) {
        if self.gone.len() <= i {
            self.gone.resize(i + 1, false);
        }
        if let Some(g) = self.gone.get_mut(i) {
            *g = true;
        }
        self.any_gone = true;
        let key = map
            .entries()
            .get(i)
            .and_then(|e| self.pairing.ident(&e.key));
        if let (Some(h), Some(k)) = (&mut self.hashed, key) {
            if h.get(k.as_ref()) == Some(&i) {
                h.remove(k.as_ref());
            }
        }
    }

    /// An entry was appended to `map`.
    pub(crate) fn pushed(&mut self, map: &Node<'_>) {
        let len = map.entries().len();
        if let (Some(m), Some(e)) = (&mut self.by_data, map.entries().last()) {
            if e.key.as_str().is_none() {
                m.entry(data_hash(&e.key)).or_default().push(len - 1);
            }
        }
        match &mut self.hashed {
            Some(h) => {
                let pairing = self.pairing;
                if let Some(k) = map.entries().last().and_then(|e| pairing.ident(&e.key)) {
                    h.entry(k.into_owned()).or_insert(len - 1);
                }
            }
            None if len > Self::SCAN => self.hash(map),
            None => {}
        }
    }

    /// Takes the removed entries out of `map`, in one pass.
    pub(crate) fn compact(self, map: &mut Node<'_>) {
        if !self.any_gone {
            return;
        }
        if let Some(es) = map.entries_mut() {
            let mut i = 0;
            es.retain(|_| {
                let keep = !self.gone.get(i).copied().unwrap_or(false);
                i += 1;
                keep
            });
        }
    }
}
