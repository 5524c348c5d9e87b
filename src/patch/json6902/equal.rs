//! JSON equality, what `test` compares (RFC 6902 §4.6), on YAML trees.
//!
//! What it is: [`json_equal`], read-only, through aliases and within a budget of node visits.
//! What it must not do: count presentation (comments, styles, key order) as data.

use super::aliases::Follow;
use super::error::PatchErrorKind;
use crate::hash::HashMap;
use crate::yaml::anchors;
use crate::yaml::scalar::Resolved;
use crate::yaml::{Kind, Node};

/// JSON equality (RFC 6902 §4.6): same type; numbers equal by value (`1` and `1.0`), strings by
/// their text, mappings with the same members whatever their order, sequences item by item.
/// Comments and styles do not count. Aliases are followed, within `budget` node visits.
pub(super) fn json_equal<'x, 'y>(
    a: &Node<'x>,
    aa: &impl Follow<'x>,
    b: &Node<'y>,
    ba: &impl Follow<'y>,
    budget: &mut usize,
) -> Result<bool, PatchErrorKind> {
    *budget = budget
        .checked_sub(1)
        .ok_or(PatchErrorKind::TooLarge(anchors::BUDGET))?;
    let (a, b) = (aa.follow(a), ba.follow(b));
    Ok(match (a.kind(), b.kind()) {
        (Kind::Scalar, Kind::Scalar) => match (a.resolved(), b.resolved()) {
            (Some(x), Some(y)) => scalar_equal(x, y),
            _ => false,
        },
        (Kind::Seq, Kind::Seq) => {
            if a.items().len() != b.items().len() {
                return Ok(false);
            }
            for (x, y) in a.items().iter().zip(b.items()) {
                if !json_equal(x, aa, y, ba, budget)? {
                    return Ok(false);
                }
            }
            true
        }
        (Kind::Map, Kind::Map) => {
            let (ea, eb) = (a.entries(), b.entries());
            if ea.len() != eb.len() {
                return Ok(false);
            }
            let index: HashMap<&str, &Node<'_>> = eb
                .iter()
                .filter_map(|e| e.key.as_str().map(|k| (k, &e.value)))
                .collect();
            for e in ea {
                let Some(other) = e.key.as_str().and_then(|k| index.get(k)) else {
                    return Ok(false);
                };
                if !json_equal(&e.value, aa, other, ba, budget)? {
                    return Ok(false);
                }
            }
            true
        }
        (Kind::Alias, Kind::Alias) => a.alias_name() == b.alias_name(),
        _ => false,
    })
}

fn scalar_equal(a: Resolved<'_>, b: Resolved<'_>) -> bool {
    match (a, b) {
        (Resolved::Int(x), Resolved::Float(y)) | (Resolved::Float(y), Resolved::Int(x)) => {
            int_equals_float(x, y)
        }
        (x, y) => x == y,
    }
}

fn int_equals_float(i: i128, f: f64) -> bool {
    // Exact: f must be integral and in range, then compare as integers.
    f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && f as i128 == i
}
