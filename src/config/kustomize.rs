//! How kustomize reads a patch, for the steps that ask for its behaviour.
//!
//! doc/KUSTOMIZE.md: with `newListItems: prepend` and `inferMergeKeys: false`
//! ([`Compat::Kustomize`]), `merge2` and `json6902` patches give the output of
//! kustomize v5's `patches:` field, quirks included. Some of those quirks come from the way
//! kustomize reads the patch before it applies anything, and are reproduced here, at plan time:
//!
//! * **Trimmed inline text.** kustomize trims the whitespace around an inline `patch:` (Go's
//!   `strings.TrimSpace`, which Rust's [`str::trim`] matches character for character) before it
//!   parses it, for strategic merge and JSON patches alike; a file named by `path:` is read as
//!   it is. So a `|` block scalar that ends an inline patch loses its final line break (and a
//!   `|+` block all of them), and trailing spaces on its last line go too.
//! * **Labels and annotations as strings** in a strategic merge patch with a target. Before
//!   kustomize applies such a patch to each resource it selects, it copies the patch and writes
//!   the copy's `metadata.labels` and `metadata.annotations` back through Go's
//!   `map[string]string` (the resource code's label and annotation setters): every value
//!   becomes the string of its text — `x: null` gives `"null"`, `x: ~` gives `"~"`, an empty
//!   `x:` gives `""`, a nested mapping gives `""` — the keys come out sorted, and a map that
//!   ends up empty (`labels: null`, `annotations: {}`, a scalar) is removed, so the patch no
//!   longer mentions it. A patch without a target is applied as written.
//! * **JSON patches read as YAML 1.1.** A JSON patch whose text does not start with `[` is
//!   converted from YAML to JSON by go-yaml v2's rules (`goyaml.rs`): `on` is `true`, `0777` is
//!   511, the key `on:` is the member `"true"`. Numbers — from YAML or from JSON text — are
//!   written as kustomize's JSON round trips leave them (`1e3` gives `1000`); infinities, NaN
//!   and null keys have no JSON form and fail the patch, as they fail kustomize.
//!
//! Other kinds (`jsonmerge`, `merge3`, `apply`) have no kustomize counterpart and are read as
//! written whatever their options.
//!
//! What it must not do: apply anything, or change a patch a step without kustomize's options
//! reads.

use super::goyaml::{self, KeyError, V2};
use super::{Compat, ConfigError, PatchKind, PatchOptions};
use crate::path::Path;
use crate::yaml::scalar::Resolved;
use crate::yaml::{Kind, Node, ScalarStyle};

/// Which of kustomize's readings a step gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Reading {
    /// The step asks for kustomize's behaviour and is (or, without `type`, will be detected as)
    /// `merge2` or `json6902`.
    compatible: bool,
}

impl Reading {
    /// The reading for a step of this `type` (`None`: left to detection, which only ever gives
    /// `merge2` or `json6902`) with these options.
    pub(super) fn of(kind: Option<PatchKind>, options: &PatchOptions) -> Reading {
        let kustomize_kind =
            kind.is_none_or(|k| matches!(k, PatchKind::Merge2 | PatchKind::Json6902));
        Reading {
            compatible: kustomize_kind && options.compat == Compat::Kustomize,
        }
    }

    /// Inline patch text is trimmed before it is parsed.
    pub(super) fn trims_inline_text(self) -> bool {
        self.compatible
    }

    /// Applies the readings that depend on the patch's kind, once it is known: `targeted`, the
    /// step has a target; `bracket`, the text starts with `[` as kustomize sees it; `field`,
    /// the patch's field, for errors.
    pub(super) fn read(
        self,
        kind: PatchKind,
        targeted: bool,
        bracket: bool,
        docs: &mut [Node<'static>],
        field: &Path,
    ) -> Result<(), ConfigError> {
        if !self.compatible {
            return Ok(());
        }
        match kind {
            PatchKind::Merge2 if targeted => {
                docs.iter_mut().for_each(metadata_maps_as_strings);
                Ok(())
            }
            PatchKind::Json6902 => {
                for (i, doc) in docs.iter_mut().enumerate() {
                    // A JSON patch is almost always one document; a later one is named.
                    let mut at = if i > 0 {
                        format!("document {}", i + 1)
                    } else {
                        String::new()
                    };
                    as_json(doc, !bracket, &mut at)
                        .map_err(|m| ConfigError::new(field.clone(), m))?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// A targeted strategic merge patch document as kustomize applies it: `metadata.labels` and
/// `metadata.annotations` rewritten as maps of strings (see the module documentation).
fn metadata_maps_as_strings(doc: &mut Node<'static>) {
    let Some(meta) = doc.get_mut("metadata").filter(|m| m.is_map()) else {
        return;
    };
    for field in ["labels", "annotations"] {
        let Some(map) = meta.get_mut(field) else {
            continue;
        };
        match map.kind() {
            Kind::Map => {
                let Some(entries) = map.entries_mut() else {
                    continue;
                };
                for e in entries.iter_mut() {
                    let text = match e.value.kind() {
                        // The scalar's value as written (after escapes): `null`, `~`, ``.
                        Kind::Scalar => e.value.as_str().unwrap_or_default().to_owned(),
                        // A collection (or an alias) has no text of its own.
                        _ => String::new(),
                    };
                    if e.value.is_scalar() {
                        e.value.set_text(text, ScalarStyle::Any);
                        e.value.set_tag(None);
                    } else {
                        e.value = Node::string(text);
                    }
                }
                // A Go map: one value per key, the last written wins; then sorted keys.
                let mut seen = crate::hash::HashSet::default();
                let mut kept = Vec::with_capacity(entries.len());
                for e in entries.drain(..).rev() {
                    let key = e.key.as_str().unwrap_or_default().to_owned();
                    if seen.insert(key) {
                        kept.push(e);
                    }
                }
                kept.sort_by(|a, b| a.key.as_str().cmp(&b.key.as_str()));
                *entries = kept;
                if entries.is_empty() {
                    meta.remove(field);
                }
            }
            // kustomize reads a list's items as key/value pairs (and fails on an odd count); a
            // list is no label map in any tool, so the merge reports it as written.
            Kind::Seq => {}
            // `labels: null`, a scalar: no entries, so kustomize removes the field.
            Kind::Scalar | Kind::Alias => {
                meta.remove(field);
            }
        }
    }
}

/// A JSON patch document as kustomize's conversion to JSON leaves it: with `yaml11`, plain
/// scalars resolved by go-yaml v2 (keys too); numbers in the text kustomize writes for them.
/// `at` is the position inside the document, for errors.
fn as_json(node: &mut Node<'static>, yaml11: bool, at: &mut String) -> Result<(), String> {
    match node.kind() {
        Kind::Scalar => scalar_as_json(node, yaml11).map_err(|why| located(at, &why)),
        Kind::Seq => {
            for (i, item) in node.items_mut().into_iter().flatten().enumerate() {
                let len = at.len();
                at.push_str(&format!("[{i}]"));
                as_json(item, yaml11, at)?;
                at.truncate(len);
            }
            Ok(())
        }
        Kind::Map => {
            for e in node.entries_mut().into_iter().flatten() {
                let len = at.len();
                let name = e.key.as_str().unwrap_or_default().to_owned();
                if yaml11 {
                    key_as_json(&mut e.key).map_err(|why| located(at, &why))?;
                }
                if !at.is_empty() {
                    at.push('.');
                }
                at.push_str(&name);
                as_json(&mut e.value, yaml11, at)?;
                at.truncate(len);
            }
            Ok(())
        }
        // The patch's aliases are expanded when it is loaded.
        Kind::Alias => Ok(()),
    }
}

fn located(at: &str, why: &str) -> String {
    if at.is_empty() {
        why.to_owned()
    } else {
        format!("{at}: {why}")
    }
}

/// A go-yaml v2 reading of a plain untagged scalar; `None` for other scalars, which read as
/// they do everywhere (quoted and block text is a string, a tag decides).
fn v2_reading<'n>(node: &'n Node<'_>) -> Option<V2<'n>> {
    let plain = node.style() == Some(ScalarStyle::Plain) && node.tag().is_none();
    if plain {
        node.as_str().map(goyaml::resolve_plain)
    } else {
        None
    }
}

/// One scalar value: what go-yaml v2 (with `yaml11`) or JSON reads it as, written as the
/// JSON value kustomize ends up with.
fn scalar_as_json(node: &mut Node<'static>, yaml11: bool) -> Result<(), String> {
    let v2 = if yaml11 { v2_reading(node) } else { None };
    let value = match v2 {
        Some(v) => v,
        None => match node.resolved() {
            Some(Resolved::Null) => V2::Null,
            Some(Resolved::Bool(b)) => V2::Bool(b),
            Some(Resolved::Int(i)) => V2::Int(i),
            Some(Resolved::Float(f)) => V2::Float(f),
            Some(Resolved::Str(_)) | None => return Ok(()),
        },
    };
    let text = match value {
        V2::Null => "null".to_owned(),
        V2::Bool(b) => b.to_string(),
        // kyaml decodes the patched resource's JSON numbers into float64.
        V2::Int(i) => number(i as f64, node)?,
        V2::Float(f) => number(f, node)?,
        V2::Str(_) => {
            // A string to go-yaml that YAML 1.2 reads as something else (`1e400`): keep the
            // string, quoted where it lands.
            if !matches!(node.resolved(), Some(Resolved::Str(_))) {
                node.set_text(
                    node.as_str().unwrap_or_default().to_owned(),
                    ScalarStyle::Any,
                );
            }
            return Ok(());
        }
    };
    node.set_text(text, ScalarStyle::Plain);
    node.set_tag(None);
    Ok(())
}

fn number(f: f64, node: &Node<'_>) -> Result<String, String> {
    goyaml::number_text(f).ok_or_else(|| {
        format!(
            "`{}` is not a JSON number (kustomize converts the patch to JSON, which has no \
             infinity or NaN)",
            node.as_str().unwrap_or_default()
        )
    })
}

/// A plain key go-yaml v2 reads as another type becomes the member name the conversion to
/// JSON gives it (`on` → `true`, `0777` → `511`).
fn key_as_json(key: &mut Node<'static>) -> Result<(), String> {
    let Some(v2) = v2_reading(key) else {
        return Ok(());
    };
    if let V2::Str(_) = v2 {
        return Ok(());
    }
    let written = key.as_str().unwrap_or_default().to_owned();
    match goyaml::key_text(v2) {
        Ok(name) => {
            key.set_text(name, ScalarStyle::Any);
            Ok(())
        }
        Err(KeyError::Null) => Err(format!(
            "the key `{written}` is null, which is no JSON member name (kustomize cannot \
             convert the patch to JSON)"
        )),
        Err(KeyError::Unsigned) => Err(format!(
            "the key `{written}` is an integer beyond int64, which kustomize cannot convert to \
             a JSON member name"
        )),
    }
}
