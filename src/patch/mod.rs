//! Patches that are not merges by schema: RFC 6902 JSON patches ([`json6902`]) and RFC 7386
//! JSON merge patches ([`jsonmerge`]).
//!
//! What it must not do: consult the schema, select resources, or read or write text.

pub mod json6902;
pub mod jsonmerge;
