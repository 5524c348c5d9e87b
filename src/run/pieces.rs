//! Input read in pieces on every core.
//!
//! A stream is cut into pieces at document markers, a ResourceList's items at their dashes
//! (`yaml::split`); the threads of a pool (one a core) take the pieces one after another as they
//! come free (`rayon`): a thread that starts late (a virtual machine can take a millisecond to
//! give a new thread a core), or a piece heavier than the rest, costs little, where halves fixed
//! in advance leave one core idle for the difference. Resources are
//! independent, so each piece is patched by an engine of its own (forked from the caller's: the
//! same setup, nothing counted), and the pieces' outputs and engines are put together in the
//! input's order ([`super::engine::Engine::absorb`]), each output as soon as those before it
//! are ([`each`]). Which thread took which piece therefore
//! changes nothing: the text and the results are those of one thread reading the pieces one
//! after the other, which is what one piece is ([`Pieces::Whole`]).
//!
//! What it must not do: read YAML (the readers do), or hold global state: how the input is cut
//! is a value the caller passes down.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Below this, the threads' start-up is a large share of the work.
const WORTH_IT: usize = 1 << 20;
/// The size a piece aims at: small enough that the threads finish close together.
const PIECE: usize = 64 << 10;
/// At most this many pieces a thread: each keeps an engine of its own (what it found) until the
/// end.
const PIECES_PER_THREAD: usize = 16;
/// The walkers recurse once per nesting level: a thread that patches gets the stack the
/// binary's own function thread has (reserved, not committed; see src/main.rs).
const STACK_BYTES: usize = 16 << 20;

/// How input is cut into pieces read on every core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pieces {
    /// An input of more than 1 MB in pieces of about 64 KB (at most 16 a core), one piece
    /// otherwise.
    #[default]
    Auto,
    /// The whole input as one piece, read on one thread.
    Whole,
    /// Pieces of at least this many bytes (each at least one document or item), whatever the
    /// input's size: `1` cuts wherever a cut may fall.
    Size(usize),
}

impl Pieces {
    /// Reads `auto`, `whole` or a number of bytes (at least 1).
    pub fn parse(s: &str) -> Result<Pieces, String> {
        match s.trim() {
            "auto" => Ok(Pieces::Auto),
            "whole" => Ok(Pieces::Whole),
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Pieces::Size(n)),
                _ => Err(format!(
                    "{s:?} is not a piece size: give a number of bytes (at least 1), `whole` or `auto`"
                )),
            },
        }
    }

    /// The least size of the pieces a text of `len` bytes is cut into; `None`: one piece.
    pub(crate) fn size(self, len: usize) -> Option<usize> {
        match self {
            Pieces::Whole => None,
            Pieces::Size(n) => Some(n.max(1)),
            Pieces::Auto if len < WORTH_IT => None,
            Pieces::Auto => {
                let cores = threads();
                Some(len / (len / PIECE).clamp(cores, cores * PIECES_PER_THREAD))
            }
        }
    }
}

/// The threads work runs on: one a core.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `work` done on every piece, on as many threads as there are cores and pieces (one piece: on
/// this thread alone), the results in the pieces' order: see [`each`].
pub(crate) fn map<P: Sync, R: Send>(
    pieces: &[P],
    work: impl Fn(usize, &P) -> Option<R> + Sync,
) -> Option<Vec<R>> {
    let mut all = Vec::with_capacity(pieces.len());
    each(pieces, work, |_, r| {
        all.push(r);
        Some(())
    })?;
    Some(all)
}

/// `work` done on every piece, on as many threads as there are cores and pieces (one piece: on
/// this thread alone), each result handed to `deliver` in the pieces' order as soon as those
/// before it have been: by whichever thread finished the last of them, one at a time. So a
/// result waits only for slower pieces before it, and the caller need not hold them all at
/// once (a large stream's output is put together while it is read, not after). The threads of
/// `rayon`'s pool take the pieces in order as they come free. `None` when `work` or `deliver`
/// gave up (the threads then stop taking pieces; what was delivered stays delivered), or when
/// the pool could not be made. A panic in either (a bug) reaches the caller.
pub(crate) fn each<P: Sync, R: Send>(
    pieces: &[P],
    work: impl Fn(usize, &P) -> Option<R> + Sync,
    deliver: impl FnMut(usize, R) -> Option<()> + Send,
) -> Option<()> {
    let mut line = Line {
        next: 0,
        waiting: BTreeMap::new(),
        deliver,
    };
    if pieces.len() < 2 {
        for (i, p) in pieces.iter().enumerate() {
            line.hand(i, work(i, p)?)?;
        }
        return Some(());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads().min(pieces.len()))
        .stack_size(STACK_BYTES)
        .build()
        .ok()?;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let line = Mutex::new(line);
    pool.broadcast(|_| {
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(piece) = pieces.get(i) else { break };
            let handed = work(i, piece).and_then(|r| {
                // A thread that panicked while delivering has its panic reach the caller.
                let mut line = line.lock().unwrap_or_else(|e| e.into_inner());
                line.hand(i, r)
            });
            if handed.is_none() {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    (!stop.load(Ordering::Relaxed)).then_some(())
}

/// The results waiting for those of the pieces before them, and where they go.
struct Line<R, D> {
    /// The piece whose result is delivered next.
    next: usize,
    waiting: BTreeMap<usize, R>,
    deliver: D,
}

impl<R, D: FnMut(usize, R) -> Option<()>> Line<R, D> {
    /// Piece `i`'s result, and every waiting one it lets through, delivered.
    fn hand(&mut self, i: usize, r: R) -> Option<()> {
        self.waiting.insert(i, r);
        while let Some(r) = self.waiting.remove(&self.next) {
            (self.deliver)(self.next, r)?;
            self.next += 1;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_pieces_order_and_one_give_up_gives_up() {
        let pieces: Vec<usize> = (0..100).collect();
        assert_eq!(
            map(&pieces, |i, p| Some(i * 1000 + p)),
            Some((0..100).map(|i| i * 1001).collect())
        );
        assert_eq!(map(&pieces, |_, p| (*p != 57).then_some(())), None);
        assert_eq!(map(&[7], |_, p| Some(*p)), Some(vec![7]));
    }

    #[test]
    fn each_delivers_in_the_pieces_order_and_stops_at_a_give_up() {
        let pieces: Vec<usize> = (0..200).collect();
        let mut got = Vec::new();
        let done = each(
            &pieces,
            |i, p| Some(i + p),
            |i, r| {
                got.push((i, r));
                Some(())
            },
        );
        assert_eq!(done, Some(()));
        assert_eq!(got, (0..200).map(|i| (i, 2 * i)).collect::<Vec<_>>());
        // Nothing is delivered past a delivery that gave up.
        let mut n = 0;
        let done = each(
            &pieces,
            |_, p| Some(*p),
            |_, _| {
                n += 1;
                (n < 10).then_some(())
            },
        );
        assert_eq!((done, n), (None, 10));
    }

    #[test]
    fn piece_sizes_are_read_and_bounded() {
        assert_eq!(Pieces::parse("whole"), Ok(Pieces::Whole));
        assert_eq!(Pieces::parse("auto"), Ok(Pieces::Auto));
        assert_eq!(Pieces::parse("4096"), Ok(Pieces::Size(4096)));
        assert!(Pieces::parse("0").is_err() && Pieces::parse("-1").is_err());
        assert_eq!(Pieces::Whole.size(10 << 20), None);
        assert_eq!(Pieces::Auto.size(1000), None);
        assert_eq!(Pieces::Size(1).size(10), Some(1));
        let auto = Pieces::Auto.size(10 << 20).unwrap_or(0);
        assert!((PIECE / 2..=10 << 20).contains(&auto), "{auto}");
    }
}
