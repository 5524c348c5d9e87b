//! A large plain stream read and patched on every core.
//!
//! The stream is cut into pieces at document markers, and the threads (as many as cores, the
//! caller's among them) take the pieces one after another as they come free: a thread that
//! starts late (a virtual machine can take a millisecond to give a new thread a core), or a piece
//! heavier than the rest, costs little, where halves fixed in advance leave one core idle for
//! the difference. Resources are independent, so each piece is patched by an engine of its own
//! (forked from the caller's: the same setup, nothing counted) and the pieces' outputs and
//! engines are put together in the stream's order. Which thread took which piece therefore
//! changes nothing: the text and the results are those of one thread reading the pieces one
//! after the other.
//!
//! What it must not do: read anything but plain streams of resources. A piece that does not
//! parse, or a stream that turns out to be a wrapper (a `List` alone, a ResourceList), gives up:
//! the caller reads the whole stream on one thread, which reports errors at their true lines.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::krm::{self, StreamOut, Streamed};
use crate::run::engine::Engine;
use crate::yaml::split::cut_at_markers;

/// Below this, the threads' start-up is a large share of the work.
const WORTH_IT: usize = 1 << 20;
/// The size a piece aims at: small enough that the threads finish close together.
const PIECE: usize = 64 << 10;
/// At most this many pieces a thread: each keeps an output and an engine of its own until the
/// end.
const PIECES_PER_THREAD: usize = 16;
/// The walkers recurse once per nesting level: a thread that patches gets the stack the
/// binary's own function thread has (reserved, not committed).
const STACK_BYTES: usize = 64 << 20;

/// What the stream came to, read on several threads.
pub struct Parallel {
    /// The whole output, in the stream's order.
    pub out: StreamOut,
    /// How many resources were written (not deleted by a patch).
    pub kept: usize,
}

/// `src` read and patched on every core, what each piece's engine did absorbed into `engine`.
/// `None` when that does not apply (a small stream, one core, no document markers to cut at,
/// not enough memory for the outputs) or a piece is not plain resources: then nothing was
/// absorbed, and the caller reads the stream whole on one thread.
pub fn stream(src: &str, engine: &mut Engine<'_>) -> Option<Parallel> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if src.len() < WORTH_IT || cores < 2 {
        return None;
    }
    let pieces = cut_at_markers(
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
        let mut done: Vec<(usize, Piece<'_>)> = Vec::new();
        while !give_up.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&text) = pieces.get(i) else { break };
            // The first piece's output has room for the whole, which it becomes.
            let room = if i == 0 { src.len() } else { text.len() };
            let piece =
                StreamOut::try_for(room).and_then(|out| Piece::run(text, template.fork(), out));
            match piece {
                Some(p) => done.push((i, p)),
                None => give_up.store(true, Ordering::Relaxed),
            }
        }
        done
    };
    let mut done = std::thread::scope(|s| {
        let others: Vec<_> = (1..cores.min(pieces.len()))
            .filter_map(|_| {
                std::thread::Builder::new()
                    .stack_size(STACK_BYTES)
                    .spawn_scoped(s, work)
                    .ok()
            })
            .collect();
        let mut done = work();
        for o in others {
            // A thread that panicked has a bug: its pieces are missing, and the stream is read
            // again on this thread, where the panic is reported.
            if let Ok(theirs) = o.join() {
                done.extend(theirs);
            }
        }
        done
    });
    if give_up.into_inner() || done.len() != pieces.len() {
        return None;
    }
    done.sort_unstable_by_key(|(i, _)| *i);
    let mut done = done.into_iter().map(|(_, p)| p);
    let first = done.next()?;
    let rest: Vec<Piece<'_>> = done.collect();
    let mut out = first.out;
    out.text
        .try_reserve(rest.iter().map(|p| p.out.text.len()).sum())
        .ok()?;
    let mut kept = first.kept;
    engine.absorb(first.engine);
    for p in rest {
        out.source(&p.out.text);
        kept += p.kept;
        engine.absorb(p.engine);
    }
    Some(Parallel { out, kept })
}

/// One piece, read and patched.
struct Piece<'p> {
    out: StreamOut,
    kept: usize,
    engine: Engine<'p>,
}

impl<'p> Piece<'p> {
    /// `None` when the piece is not plain resources.
    fn run(text: &str, mut engine: Engine<'p>, mut out: StreamOut) -> Option<Piece<'p>> {
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
        match streamed {
            Ok(Streamed::Done) => Some(Piece { out, kept, engine }),
            Ok(Streamed::Wrapped) | Err(_) => None,
        }
    }
}
