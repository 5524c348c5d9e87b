//! Which reader reads which document: the fast reader (`fast.rs`) as far as it reads,
//! `granit-parser` (through `granit.rs`) for the documents it leaves, and the fast reader again
//! from the next document on (`feed`); and the hidden functions that measure and check the fast
//! reader against the parser (`examples/fast_check.rs`, the fuzz target `fast_reader`,
//! `tests/it/yaml_roundtrip.rs`).
//!
//! What it must not do: build trees (`builder.rs` does) or read YAML itself.

use super::event::Ev;
use super::fast::Fast;
use super::granit::{self, Episode, Start};
// `lone_carriage_return` and `BOM` are the test hooks' (feature `test-hooks`).
#[cfg_attr(not(feature = "test-hooks"), allow(unused_imports))]
use super::parse::{lone_carriage_return, ParseError, BOM};

/// Which reader makes the builder's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reader {
    /// The fast reader, and `granit-parser` for the documents it does not read.
    Fast,
    /// `granit-parser` alone.
    Granit,
}

/// What a reading cost, for measurements: the bytes `granit-parser` read (the rest the fast
/// reader read alone).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stats {
    pub(crate) granit: usize,
}

/// Hands `src`'s events to `event` (the builder): the fast reader's as far as it reads (see
/// `fast.rs`); where it stops, `granit-parser`'s for the documents from the last one the fast
/// reader handed over completely to the one it stopped in (the events already handed over
/// skipped), and the fast reader's again from the next document on.
pub(crate) fn feed<'a>(
    src: &'a str,
    reader: Reader,
    stats: &mut Stats,
    event: &mut dyn FnMut(Ev<'a>) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    if reader == Reader::Granit {
        stats.granit = src.len();
        for ev in granit::events(src) {
            event(ev?)?;
        }
        return Ok(());
    }
    let mut at = Start::STREAM;
    loop {
        let mut fast = Fast::new(src, at);
        // Debug builds check that the events the parser skips are the ones handed over.
        #[cfg(debug_assertions)]
        let mut fed: Vec<u64> = Vec::new();
        let (restart, skip, docs) = loop {
            let read = fast.read();
            for ev in fast.take_safe() {
                #[cfg(debug_assertions)]
                fed.push(event_hash(&ev));
                event(ev)?;
            }
            match read {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(_) => break fast.restart(),
            }
        };
        #[cfg(debug_assertions)]
        let fed = fed.split_off(fed.len() - skip);
        let mut episode = Episode::new(src, restart, Some(docs));
        for (n, ev) in (&mut episode).enumerate() {
            let ev = ev?;
            if n < skip {
                #[cfg(debug_assertions)]
                debug_assert_eq!(
                    fed[n],
                    event_hash(&ev),
                    "the fast reader's event {n} from byte {} differs from granit-parser's: {ev:?}",
                    restart.byte
                );
                continue;
            }
            event(ev)?;
        }
        stats.granit += episode.covered();
        match episode.resume() {
            Some(next) => at = next,
            None => return Ok(()),
        }
    }
}

/// A hash of an event, to check in debug builds that the events the fast reader handed over
/// are the ones `granit-parser` skips.
#[cfg(debug_assertions)]
fn event_hash(ev: &Ev<'_>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ev.hash(&mut h);
    h.finish()
}

/// How many events the fast reader makes for `src` before it stops or ends (for benchmarks:
/// the reader alone, without building trees).
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn fast_reader_events(src: &str) -> usize {
    let mut fast = Fast::new(src, Start::STREAM);
    let mut n = 0;
    loop {
        let read = fast.read();
        n += fast.take_safe().count();
        if !matches!(read, Ok(false)) {
            return n;
        }
    }
}

/// How many bytes of `src` the fast reader reads, `granit-parser` reading the rest (for
/// measurements: `examples/fast_check.rs --coverage`), or the error the reading ends with.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn fast_reader_coverage(src: &str) -> Result<usize, ParseError> {
    let stats = super::parse::measure(src, Reader::Fast)?;
    Ok(src.len() - stats.granit.min(src.len()))
}

/// The lines where the fast reader stopped and left documents to `granit-parser`, for `src`
/// without a byte order mark (for `examples/fast_check.rs --stops`: what to read next).
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn fast_reader_stops(src: &str) -> Vec<usize> {
    let mut stops = Vec::new();
    let mut at = Start::STREAM;
    loop {
        let mut fast = Fast::new(src, at);
        let (restart, _, docs) = loop {
            match fast.read() {
                Ok(true) => return stops,
                Ok(false) => {
                    fast.take_safe();
                }
                Err(_) => break fast.restart(),
            }
        };
        stops.push(fast.line());
        let mut episode = Episode::new(src, restart, Some(docs));
        if episode.by_ref().any(|e| e.is_err()) {
            return stops;
        }
        match episode.resume() {
            Some(next) => at = next,
            None => return stops,
        }
    }
}

/// Checks the fast reader against `granit-parser` on `src` (for tests and the fuzz target):
/// the events it hands over, with the parser's for the documents it leaves to the parser, are
/// the parser's events for the whole text (read as Go reads, see `granit.rs`), without an
/// error before them. `Ok(true)` when the fast reader read the whole text, `Ok(false)` when it
/// left documents to the parser.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn check_fast_reader(src: &str) -> Result<bool, String> {
    let body = src.strip_prefix(BOM).unwrap_or(src);
    if lone_carriage_return(body).is_err() {
        return Ok(false);
    }
    let mut mine: Vec<Result<Ev<'_>, ParseError>> = Vec::new();
    let mut whole = true;
    let mut at = Start::STREAM;
    'runs: loop {
        let mut fast = Fast::new(body, at);
        let (restart, skip, docs) = loop {
            let read = fast.read();
            mine.extend(fast.take_safe().map(Ok));
            match read {
                Ok(true) => break 'runs,
                Ok(false) => {}
                Err(_) => break fast.restart(),
            }
        };
        whole = false;
        let mut episode = Episode::new(body, restart, Some(docs));
        for (n, ev) in (&mut episode).enumerate() {
            if n < skip {
                continue;
            }
            let stop = ev.is_err();
            mine.push(ev);
            if stop {
                break 'runs;
            }
        }
        match episode.resume() {
            Some(next) => at = next,
            None => break,
        }
    }
    let theirs: Vec<_> = granit::events(body).take(mine.len() + 1).collect();
    for (n, m) in mine.iter().enumerate() {
        match (m, theirs.get(n)) {
            (Ok(m), Some(Ok(t))) if t == m => {}
            (Err(m), Some(Err(t))) if t == m => {}
            (m, Some(t)) => return Err(format!("event {n}: fast {m:?}, granit {t:?}")),
            (m, None) => return Err(format!("event {n}: fast {m:?}, granit ended")),
        }
    }
    if theirs.len() > mine.len() {
        return Err(format!(
            "the readers ended after {} events, granit goes on: {:?}",
            mine.len(),
            theirs.get(mine.len())
        ));
    }
    Ok(whole)
}
