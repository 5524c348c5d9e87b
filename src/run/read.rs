//! How input is read: one way, chosen once from the text by [`Reading::of`] before anything is
//! parsed, and every byte parsed once on the success path.
//!
//! * [`Reading::Items`] — a block-style ResourceList (how kpt calls a function): the text around
//!   its items (the wrapper, the functionConfig in it) is parsed first, so the plan is known;
//!   then the items, one by one, in pieces on every core where they are many (`items.rs`);
//!   untouched items are copied as text, and the output is the input's text with the touched
//!   items rewritten.
//! * [`Reading::List`] — a stream that is one block-style list kind (`kind: List`, as
//!   `kubectl get -o yaml` prints): in a package (what the command line runs), read as a
//!   ResourceList's items are, around them first and then item by item in pieces on every core
//!   (the output a stream, as the input was); elsewhere as [`Reading::Documents`].
//! * [`Reading::Documents`] — a plain stream: document by document, in pieces on every core
//!   where it is large ([`Documents`]), untouched documents copied as text.
//! * [`Reading::Whole`] — anything else (JSON or flow style, a ResourceList that already has
//!   results or anchors around its items, a directive): parsed whole with
//!   [`crate::krm::Input::read`].
//!
//! **CRDs first, parsed once.** The schema must know every CRD of the input before any resource
//! is merged. The pieces whose text names `CustomResourceDefinition` are parsed ahead, their
//! CRDs learned, and their trees kept until their turn; the other pieces are parsed when they
//! run. So an input without CRDs has one resource's tree in memory at a time (per thread), and
//! one with CRDs also the trees of the pieces that hold them.
//!
//! **What is read again**, and only on these paths: a piece that does not parse, or whose items
//! the parser reads otherwise than their lines say (an explicit key at an item's end), sends the
//! whole input to one piece on one thread, or to [`Reading::Whole`], which reports errors at
//! their true lines (a list kind's, to [`Reading::Documents`]); a list kind whose every item a
//! patch deleted, which leaves the stream without it, is read again as a document; a stream
//! that turns out to be one ResourceList whose `kind` the lines did not show is read whole; a
//! piece of items whose new sequences were written in another document's style than the one
//! before it sets is read again with that style.
//!
//! What it must not do: decide what a run does with the items (the engine does), or write
//! anything but the output text.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::krm::{self, ReadError, StreamOut, Streamed};
use crate::run::engine::{self, Engine, Setup};
use crate::run::pieces::{self, Pieces};
use crate::select::identity::Id;
use crate::yaml::split::{self, ListLayout, Shape};
use crate::yaml::{self, Document};

/// How an input is read: see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reading {
    /// A block-style ResourceList, read around its items and then item by item.
    Items(ListLayout),
    /// A stream of one block-style list kind, read so too.
    List(ListLayout),
    /// A plain stream, read document by document.
    Documents,
    /// Anything else, parsed whole.
    Whole,
}

impl Reading {
    /// The one choice, from the text's lines ([`split::shape`]).
    pub(crate) fn of(src: &str) -> Reading {
        match split::shape(src) {
            Shape::ResourceList(layout) => Reading::Items(layout),
            Shape::List(layout) => Reading::List(layout),
            Shape::Other => Reading::Whole,
            Shape::Stream => Reading::Documents,
        }
    }
}

/// How many bytes of input a run handed to the YAML reader: each byte once on the success path.
/// A count, shared by the threads of a run (never global), reported in the run's output.
#[derive(Debug, Default)]
pub(crate) struct Parses(AtomicUsize);

impl Parses {
    /// Counts `text` as parsed.
    pub(crate) fn add(&self, text: &str) {
        self.0.fetch_add(text.len(), Ordering::Relaxed);
    }

    /// The bytes counted so far.
    pub(crate) fn bytes(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// How input is read besides its text: the pieces, and the parse count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'r> {
    pub pieces: Pieces,
    pub parses: &'r Parses,
}

/// The most text of the pieces that name CRDs read ahead at once: their CRDs' types wait in
/// memory until the schema learns them.
const CRD_WINDOW: usize = 8 << 20;

/// A stream cut into pieces ([`Pieces`]), the pieces that hold CRDs read ahead.
pub(crate) struct Documents<'s> {
    src: &'s str,
    pieces: Vec<&'s str>,
    /// The documents of each piece read ahead; `None` for a piece read when it runs.
    ahead: Vec<Option<Vec<Document<'s>>>>,
}

/// Why a stream could not be read document by document.
pub(crate) enum Stop {
    /// It is one ResourceList: read it whole.
    Wrapped,
    /// Not resources: the error.
    Read(ReadError),
}

/// A stream read and patched.
pub(crate) struct StreamRead {
    pub out: StreamOut,
    /// How many resources were written (not deleted by a patch).
    pub kept: usize,
    /// How many documents were read: the index in the stream of the next one.
    pub read: usize,
    /// With `locate`: each resource's identity (its [`identity_key`]) and its index among the
    /// stream's resources.
    pub seen: Vec<(u64, usize)>,
}

impl<'s> Documents<'s> {
    /// `src` cut as `reader` says, the pieces that may hold CRDs parsed ahead and their CRDs
    /// learned by `setup`. (A piece read ahead that does not parse is read again when it runs,
    /// which reports the error; the CRDs before the error are learned, as a whole read learns
    /// them.)
    pub(crate) fn cut(src: &'s str, reader: Reader<'_>, setup: &mut Setup<'_>) -> Documents<'s> {
        let mut documents = Documents::cut_known(src, reader);
        let pieces = &documents.pieces;
        let ahead = read_ahead(
            pieces,
            |i| {
                let text = pieces.get(i).copied().unwrap_or("");
                reader.parses.add(text);
                let (mut docs, mut crds) = (Vec::new(), Vec::new());
                let read = yaml::parse_each(text, |d| {
                    if let Some(root) = d.root.as_ref() {
                        crds.extend(engine::crds_of(root));
                    }
                    docs.push(d);
                });
                (read.ok().map(|()| docs), crds)
            },
            setup,
        );
        documents.ahead = ahead;
        documents
    }

    /// `src` cut as `reader` says, whose CRDs the setup learned already: nothing read ahead.
    pub(crate) fn cut_known(src: &'s str, reader: Reader<'_>) -> Documents<'s> {
        let pieces = match reader.pieces.size(src.len()) {
            Some(size) => split::cut_at_markers(src, size),
            None => vec![src],
        };
        let ahead = pieces.iter().map(|_| None).collect();
        Documents { src, pieces, ahead }
    }

    /// Every piece through a fork of `engine` (one piece: through `engine` itself), absorbed in
    /// the stream's order. `out` has room for the whole output, and holds it at the end. With
    /// `locate` (the hasher of the keys), what [`StreamRead::seen`] says. When a piece cannot be read and there are
    /// several, the stream is read again as one piece (which reports the error at its line).
    pub(crate) fn run(
        self,
        engine: &mut Engine<'_>,
        out: StreamOut,
        reader: Reader<'_>,
        locate: Option<&crate::hash::State>,
    ) -> Result<StreamRead, Stop> {
        let Documents { src, pieces, ahead } = self;
        if pieces.len() < 2 {
            let mut ahead = ahead;
            let docs = ahead.pop().flatten();
            let text = pieces.first().copied().unwrap_or("");
            let done = one_piece(text, docs, engine, out, reader, locate, true)?;
            return Ok(done);
        }
        // Each piece writes its own output, added to the whole as soon as the pieces before it
        // are, and then dropped: the whole output and the outputs of a few pieces are held at
        // once, not the whole twice over (a 150 MB stream then fits in the address space it
        // must).
        let ahead: Vec<std::sync::Mutex<Option<Vec<Document<'s>>>>> =
            ahead.into_iter().map(std::sync::Mutex::new).collect();
        let template: &Engine<'_> = engine;
        let mut whole = StreamRead {
            out,
            kept: 0,
            read: 0,
            seen: Vec::new(),
        };
        let mut forks = Vec::with_capacity(pieces.len());
        let done = pieces::each(
            &pieces,
            |i, &text| {
                let out = StreamOut::try_for(text.len())?;
                let docs = ahead.get(i).and_then(|a| a.lock().ok()?.take());
                let mut fork = template.fork();
                let done = one_piece(text, docs, &mut fork, out, reader, locate, false).ok()?;
                Some((done, fork))
            },
            |_, (piece, fork)| {
                whole.add(piece);
                forks.push(fork);
                Some(())
            },
        );
        if done.is_none() {
            // A piece that does not read: once more as one piece, to report it where it is.
            drop(whole);
            let out = StreamOut::try_for(src.len()).ok_or(Stop::Read(ReadError::Shape(
                "not enough memory to read the stream again".into(),
            )))?;
            return one_piece(src, None, engine, out, reader, locate, true);
        }
        for fork in forks {
            engine.absorb(fork);
        }
        Ok(whole)
    }
}

impl StreamRead {
    /// The next piece's output and what it counted, after this one's.
    fn add(&mut self, piece: StreamRead) {
        self.out.source(&piece.out.text);
        self.kept += piece.kept;
        let offset = self.read;
        self.seen
            .extend(piece.seen.into_iter().map(|(id, n)| (id, n + offset)));
        self.read += piece.read;
    }
}

/// Reads ahead, with `work`, the `pieces` whose text names `CustomResourceDefinition`, on every
/// core, a window of [`CRD_WINDOW`] bytes at a time; learns the CRDs each holds, in the input's
/// order. What `work` made of each piece, by piece (`None` for the others). (Without a pool, on
/// this thread.)
pub(crate) fn read_ahead<T: Send>(
    pieces: &[&str],
    work: impl Fn(usize) -> (Option<T>, Vec<engine::CrdBuilt>) + Sync,
    setup: &mut Setup<'_>,
) -> Vec<Option<T>> {
    let named: Vec<usize> = (0..pieces.len())
        .filter(|&i| {
            pieces
                .get(i)
                .is_some_and(|t| t.contains("CustomResourceDefinition"))
        })
        .collect();
    let mut ahead: Vec<Option<T>> = pieces.iter().map(|_| None).collect();
    let mut rest = named.as_slice();
    while !rest.is_empty() {
        let mut bytes = 0;
        let n = rest
            .iter()
            .take_while(|&&i| {
                let first = bytes == 0;
                bytes += pieces.get(i).map_or(0, |t| t.len());
                first || bytes <= CRD_WINDOW
            })
            .count();
        let (window, after) = rest.split_at(n.max(1));
        rest = after;
        let read = pieces::map(window, |_, &i| Some(work(i)))
            .unwrap_or_else(|| window.iter().map(|&i| work(i)).collect());
        for (&i, (made, crds)) in window.iter().zip(read) {
            setup.learn(crds);
            if let Some(slot) = ahead.get_mut(i) {
                *slot = made;
            }
        }
    }
    ahead
}

/// The key a resource's identity is found by in results: a hash of its fields as written.
pub(crate) fn identity_key(hasher: &crate::hash::State, id: &Id<'_>) -> u64 {
    use std::hash::BuildHasher;
    hasher.hash_one((
        id.api_version.as_ref(),
        id.kind.as_ref(),
        id.name.as_ref(),
        id.namespace.as_ref(),
    ))
}

/// One piece of a stream read and patched by `engine`: its documents parsed now, or read ahead
/// (`docs`). `alone`: the piece is the whole stream (a ResourceList in it is a wrapper).
fn one_piece<'s>(
    text: &'s str,
    docs: Option<Vec<Document<'s>>>,
    engine: &mut Engine<'_>,
    mut out: StreamOut,
    reader: Reader<'_>,
    locate: Option<&crate::hash::State>,
    alone: bool,
) -> Result<StreamRead, Stop> {
    let mut kept = 0usize;
    let mut n = 0usize;
    let mut seen = Vec::new();
    let mut process = |item: krm::Item<'s>| {
        if let Some(hasher) = locate {
            krm::for_each_resource(&item.node, &mut |r| {
                seen.push((identity_key(hasher, &Id::of(r)), n));
            });
        }
        n += 1;
        let item = engine.process(item);
        kept += usize::from(item.is_some());
        item
    };
    let streamed = match docs {
        Some(docs) => krm::stream_documents(
            |each| {
                docs.into_iter().for_each(each);
                Ok(())
            },
            alone,
            &mut process,
            &mut out,
        ),
        None => {
            reader.parses.add(text);
            krm::stream_documents(
                |each| yaml::parse_each(text, each),
                alone,
                &mut process,
                &mut out,
            )
        }
    };
    match streamed {
        Ok(Streamed::Done) => Ok(StreamRead {
            out,
            kept,
            read: n,
            seen,
        }),
        Ok(Streamed::Wrapped) => Err(Stop::Wrapped),
        Err(e) => Err(Stop::Read(e)),
    }
}
