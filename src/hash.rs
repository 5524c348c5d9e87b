//! The hash maps and sets the crate uses: std's, with one change under `cfg(fuzzing)`.
//!
//! std's `RandomState` seeds every map differently in every process. The maps' code is compiled
//! into this crate, so a fuzzer sees their probing as coverage, and a fuzz run with a fixed
//! seed took different paths each time, so a crash it found might not repeat. Fuzz builds hash
//! with fixed keys instead. Everything else keeps random keys, so crafted input cannot
//! make the maps slow.
//!
//! What it must not do: change what any map holds or how the crate behaves.

#[cfg(not(fuzzing))]
pub(crate) type State = std::collections::hash_map::RandomState;
#[cfg(fuzzing)]
pub(crate) type State = std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, State>;
pub(crate) type HashSet<T> = std::collections::HashSet<T, State>;
