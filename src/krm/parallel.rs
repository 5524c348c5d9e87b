//! A large plain stream read and patched on every core.
//!
//! The stream is cut into pieces at document markers, and the threads (as many as cores, the
//! caller's among them) take the pieces one after another as they come free: a thread that
//! starts late (a virtual machine can take a millisecond to give a new thread a core), or a piece
//! heavier than the rest, costs little, where halves fixed in advance leave one core idle for
//! the difference. Resources are independent, so each thread patches with an engine of its own
//! (forked from the caller's) and reports what it found piece by piece. The pieces' outputs and
//! reports are then put together in the stream's order. Which thread took which piece therefore
//! changes nothing: the text and the results are those of one thread reading the pieces one
//! after the other.
//!
//! What it must not do: read anything but plain streams of resources. A piece that does not
//! parse, or a stream that turns out to be a wrapper (a `List` alone, a ResourceList), gives up:
//! the caller reads the whole stream on one thread, which reports errors at their true lines.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::krm::engine::{Engine, Report};
use crate::krm::{self, StreamOut, Streamed};

/// Below this, the threads' start-up is a large share of the work.
const WORTH_IT: usize = 1 << 20;
/// The size a piece aims at: small enough that the threads finish close together.
const PIECE: usize = 64 << 10;
/// At most this many pieces a thread: each keeps an output and a report of its own until the
/// end.
const PIECES_PER_THREAD: usize = 16;

/// What the stream came to, read on several threads.
pub struct Parallel {
    /// The whole output, in the stream's order.
    pub out: StreamOut,
    /// How many resources were written (not deleted by a patch).
    pub kept: usize,
}

/// `src` read and patched on every core, with the engines' counts and results absorbed into
/// `engine`. `None` when that does not apply (a small stream, one core, no document markers to
/// cut at, not enough memory for the outputs) or a piece is not plain resources: then nothing
/// was absorbed, and the caller reads the stream whole on one thread.
pub fn stream(src: &str, engine: &mut Engine<'_>) -> Option<Parallel> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if src.len() < WORTH_IT || cores < 2 {
        return None;
    }
    let pieces = cut(
        src,
        (src.len() / PIECE).clamp(cores, cores * PIECES_PER_THREAD),
    );
    if pieces.len() < 2 {
        return None;
    }
    let next = AtomicUsize::new(0);
    let give_up = AtomicBool::new(false);
    let template: &Engine<'_> = engine;
    let work = || {
        let mut forked = template.fork();
        let mut done: Vec<(usize, Piece)> = Vec::new();
        while !give_up.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&text) = pieces.get(i) else { break };
            // The first piece's output has room for the whole, which it becomes.
            let room = if i == 0 { src.len() } else { text.len() };
            let piece = StreamOut::try_for(room).and_then(|out| Piece::run(text, &mut forked, out));
            match piece {
                Some(p) => done.push((i, p)),
                None => give_up.store(true, Ordering::Relaxed),
            }
        }
        (forked, done)
    };
    let (forks, mut done) = std::thread::scope(|s| {
        let others: Vec<_> = (1..cores.min(pieces.len()))
            .map(|_| s.spawn(work))
            .collect();
        let (mine, mut done) = work();
        let mut forks = vec![mine];
        for o in others {
            // A thread that panicked has a bug: its pieces are missing, and the stream is read
            // again on this thread, where the panic is reported.
            if let Ok((fork, theirs)) = o.join() {
                forks.push(fork);
                done.extend(theirs);
            }
        }
        (forks, done)
    });
    if give_up.into_inner() || done.len() != pieces.len() {
        return None;
    }
    done.sort_unstable_by_key(|(i, _)| *i);
    let mut done = done.into_iter().map(|(_, p)| p);
    let first = done.next()?;
    let rest: Vec<Piece> = done.collect();
    let mut out = first.out;
    out.text
        .try_reserve(rest.iter().map(|p| p.out.text.len()).sum())
        .ok()?;
    let mut kept = first.kept;
    engine.absorb_report(first.report);
    for p in rest {
        out.source(&p.out.text);
        kept += p.kept;
        engine.absorb_report(p.report);
    }
    for fork in forks {
        engine.absorb_counts(fork);
    }
    Some(Parallel { out, kept })
}

/// One piece, read and patched.
struct Piece {
    out: StreamOut,
    kept: usize,
    report: Report,
}

impl Piece {
    /// `None` when the piece is not plain resources.
    fn run(text: &str, engine: &mut Engine<'_>, mut out: StreamOut) -> Option<Piece> {
        let mut kept = 0usize;
        let streamed = krm::stream_items(
            text,
            &mut |item| {
                let item = engine.process(item);
                kept += usize::from(item.is_some());
                item
            },
            &mut out,
        );
        let report = engine.report();
        match streamed {
            Ok(Streamed::Done) => Some(Piece { out, kept, report }),
            Ok(Streamed::Wrapped) | Err(_) => None,
        }
    }
}

/// `src` cut into about `n` pieces of about the same size, each cut at the start of a `---`
/// line. Such a line is always a document marker (YAML forbids one inside any content), so
/// every cut falls between two documents.
fn cut(src: &str, n: usize) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let aim = src.len() / n * k;
        if aim <= start {
            continue;
        }
        let Some(at) = marker_at_or_after(src, aim) else {
            break;
        };
        if let Some(piece) = src.get(start..at).filter(|p| !p.is_empty()) {
            pieces.push(piece);
            start = at;
        }
    }
    if let Some(last) = src.get(start..) {
        pieces.push(last);
    }
    pieces
}

/// The start of the first `---` line (`---` then a blank or the line's end) after `from`.
fn marker_at_or_after(src: &str, from: usize) -> Option<usize> {
    let bytes = src.as_bytes();
    let mut from = (from..=src.len()).find(|&i| src.is_char_boundary(i))?;
    loop {
        let i = src.get(from..)?.find("\n---")?;
        let at = from + i + 1;
        if matches!(bytes.get(at + 3), None | Some(b'\n' | b'\r' | b' ' | b'\t')) {
            return Some(at);
        }
        from = at + 3;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_only_at_document_markers() {
        let src = "a: 1\n---\nb: '\n---x'\n---\nc: 3\n";
        assert_eq!(cut(src, 2), ["a: 1\n---\nb: '\n---x'\n", "---\nc: 3\n"]);
        assert_eq!(cut("a: 1\nb: 2\n", 4), ["a: 1\nb: 2\n"]);
        // More pieces asked for than there are documents: each cut once, none empty.
        let three = "a: 1\n---\nb: 2\n--- # c\nc: 3\n";
        assert_eq!(cut(three, 20), ["a: 1\n", "---\nb: 2\n", "--- # c\nc: 3\n"]);
        assert_eq!(cut(three, 20).concat(), three);
    }
}
