//! A block-style ResourceList, or a stream of one block-style list kind (`kind: List`), read by
//! its items (see `read.rs`): the text around the items parsed first ([`wrapper`]), then the
//! items region (from its `items:` line to the next key) cut into pieces at the items' dashes
//! and each piece parsed as `items:` and its items, item by item, on every core where they are
//! many. The output is the input's text with each touched item written from its tree and each
//! deleted one gone.
//!
//! **As one reading.** A piece is an engine's share of the items, absorbed in order, so the
//! results are those of one reading. The parser also says in which style a document indents
//! its sequences, as far as it has read (the first block sequence under a key sets it), and a
//! touched item's new sequences follow it; a piece read apart knows only its own, so each piece
//! says which style it used for what it wrote and which it sets, and a piece that wrote in
//! another style than the pieces before it set is read again with theirs.
//!
//! **Anchors.** The text around the items holds none (else the input is read whole). Items may
//! hold anchors and aliases, and are cut all the same: an alias in one piece of an anchor in an
//! earlier one is an unknown anchor to the parser of its piece, and the items are then read as
//! one piece, as if never cut; an alias of an anchor of its own piece reads what it reads in the
//! whole text.
//!
//! What it must not do: read anything but a ResourceList or list kind that
//! [`crate::yaml::split::shape`] found plain.

use std::ops::Range;
use std::sync::Mutex;

use crate::krm::{self, Item, Origin};
use crate::run::engine::{self, Engine, Setup};
use crate::run::pieces;
use crate::run::read::{self, identity_key, Reader};
use crate::select::identity::Id;
use crate::yaml::split::{self, ListLayout};
use crate::yaml::{self, EmitOptions, Node, SeqIndent, SplitItem};

/// What is around the items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Around {
    /// A ResourceList (how kpt calls a function).
    ResourceList,
    /// A list kind (`List`, `RoleList`, ...): a resource's container, as kustomize reads it.
    List,
}

impl Around {
    /// Whether `root` (its `items` taken out) is a plain block mapping of this kind: no anchors
    /// or aliases, which the items may share; a ResourceList without results yet.
    fn holds(self, root: &Node<'_>) -> bool {
        let kind = root.str_at(&["kind"]).unwrap_or("");
        let kind_is = match self {
            Around::ResourceList => kind == "ResourceList" && root.get("results").is_none(),
            Around::List => kind.ends_with("List") && kind != "ResourceList",
        };
        root.is_map()
            && !root.is_flow()
            && !root.has_anchor()
            && !root.has_alias()
            && kind_is
            && root.get("items").is_none()
    }
}

/// The text around a ResourceList's or a list kind's items, parsed.
pub(crate) struct Wrapper {
    /// Its root mapping, without `items`.
    pub root: Node<'static>,
    /// What it is.
    around: Around,
    /// The style of sequence indentation its entries before the items set.
    head_style: Option<SeqIndent>,
}

impl Wrapper {
    /// A ResourceList's `functionConfig`, when there is one.
    pub(crate) fn function_config(&self) -> Option<&Node<'static>> {
        self.root.get("functionConfig").filter(|f| !f.is_null())
    }
}

/// Parses the text around the items (everything but the `items` entry): `None` when it is not
/// one plain block mapping of the kind `around` says (anchors or aliases, which the items may
/// share; does not parse: then the whole read reports where).
pub(crate) fn wrapper(
    src: &str,
    layout: &ListLayout,
    around: Around,
    reader: Reader<'_>,
) -> Option<Wrapper> {
    let (head, tail) = (src.get(..layout.items.start)?, src.get(layout.items.end..)?);
    let text = format!("{head}{tail}");
    reader.parses.add(head);
    reader.parses.add(tail);
    let docs = yaml::parse_stream(&text).ok()?;
    let mut roots = docs.iter().filter_map(|d| d.root.as_ref());
    let (Some(root), None) = (roots.next(), roots.next()) else {
        return None;
    };
    if !around.holds(root) {
        return None;
    }
    let before = root.entries().get(..layout.keys_before)?;
    Some(Wrapper {
        head_style: split::first_seq_indent_in(before),
        root: root.clone().into_owned(),
        around,
    })
}

/// The items read ahead from a piece that names CRDs: its text as parsed, each item's tree and
/// where its text is.
struct Ahead {
    text: String,
    items: Vec<(Node<'static>, Range<usize>, usize, SeqIndent)>,
    range: Option<Range<usize>>,
}

/// A ResourceList's or a list kind's items cut into pieces, those that name CRDs read ahead.
pub(crate) struct Items<'s> {
    src: &'s str,
    layout: ListLayout,
    /// Slices of the items region; the first starts with the `items:` line.
    pieces: Vec<&'s str>,
    ahead: Vec<Option<Ahead>>,
    /// The style of sequences the text before the items sets.
    head_style: Option<SeqIndent>,
    /// The column of the keys around the items: 0, or a list kind's inside a ResourceList.
    base: usize,
    /// The list kind whose items these are (a stream's one list, or a ResourceList's only item:
    /// [`nested_list`]): its root mapping without them.
    list: Option<Node<'static>>,
    /// For a ResourceList's only item read by its own items: the ResourceList's items, and the
    /// style its entries before them set, read so when the list's items cannot be.
    outer: Option<(ListLayout, Option<SeqIndent>)>,
    /// The items are a list kind's, which the engine reads when the whole list is read (a
    /// stream's document, a ResourceList's item): their new sequences take the style the
    /// parser knows at the list's end — the entries' before the items, else the items' own
    /// sequences', else the `items` sequence's — not the style as far as read at each item.
    in_list: bool,
}

/// What reading the items came to.
enum Attempt {
    Read(ItemsRead),
    /// They could not be read so.
    Unread,
    /// A patch deleted every one.
    Emptied,
}

/// The items read and patched: the output up to the end of the last item, and where the text
/// after it starts in the input.
pub(crate) struct ItemsRead {
    pub out: String,
    pub rest: usize,
    /// How a new item is written: the items' dash column, and the document's style.
    pub dash_col: usize,
    pub opts: EmitOptions,
    /// How many items there were, and how many were written (not deleted).
    pub count: Count,
    /// With `locate`: each resource's identity ([`identity_key`]), as it came.
    pub seen: Vec<u64>,
}

/// Items read, and written (not deleted by a patch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Count {
    pub read: usize,
    pub written: usize,
}

/// A sequence style forced on a piece whose keys stand at column `base`: a key whose value is
/// a block sequence written so.
fn style_prefix(style: Option<SeqIndent>, base: usize) -> String {
    let pad = " ".repeat(base);
    match style {
        None => String::new(),
        Some(SeqIndent::Compact) => format!("{pad}_:\n{pad}- _\n"),
        Some(SeqIndent::Wide) => format!("{pad}_:\n{pad}  - _\n"),
    }
}

/// The list kind that is a ResourceList's only item (how kpt passes a file of one
/// `kind: List`), read by its own items when the ResourceList is large and the plan adds no
/// resources (which go after the ResourceList's last item, not the list's): where its items are,
/// its root mapping without them, and the style of sequences its entries before them set.
fn nested_list(
    src: &str,
    layout: &ListLayout,
    wrapper: &Wrapper,
    reader: Reader<'_>,
    setup: &Setup<'_>,
) -> Option<(ListLayout, Node<'static>, Option<SeqIndent>)> {
    let adds = setup
        .plan
        .steps
        .iter()
        .any(|s| matches!(s.action, crate::config::Action::Update { .. }));
    let region = src.get(layout.items.clone())?;
    if wrapper.around != Around::ResourceList || adds || reader.pieces.size(region.len()).is_none()
    {
        return None;
    }
    let inner = split::only_item_list(src, layout.items.clone(), layout.dash_col)?;
    let head = src.get(layout.items.start..inner.items.start)?;
    let tail = src.get(inner.items.end..layout.items.end)?;
    let text = format!("{head}{tail}");
    reader.parses.add(head);
    reader.parses.add(tail);
    let docs = yaml::parse_stream(&text).ok()?;
    let root = docs.first()?.root.as_ref()?;
    let [list] = root.get("items")?.items() else {
        return None;
    };
    if !Around::List.holds(list) {
        return None;
    }
    let style = split::first_seq_indent_in(list.entries().get(..inner.keys_before)?);
    Some((inner, list.clone().into_owned(), style))
}

impl<'s> Items<'s> {
    /// The items of `src` cut as `reader` says, the pieces that name CRDs parsed ahead (on
    /// every core) and their CRDs learned by `setup`.
    pub(crate) fn cut(
        src: &'s str,
        layout: ListLayout,
        wrapper: &Wrapper,
        reader: Reader<'_>,
        setup: &mut Setup<'_>,
    ) -> Option<Items<'s>> {
        let mut items = match nested_list(src, &layout, wrapper, reader, setup) {
            Some((inner, list, style)) => {
                let base = layout.dash_col + 2;
                let style = wrapper.head_style.or(style);
                let mut items = Items::plain(src, inner, style, base, Some(list), reader)?;
                items.outer = Some((layout, wrapper.head_style));
                items
            }
            None => {
                let list = (wrapper.around == Around::List).then(|| wrapper.root.clone());
                Items::plain(src, layout, wrapper.head_style, 0, list, reader)?
            }
        };
        let this = &items;
        let work = |k: usize| {
            reader.parses.add(this.pieces.get(k).copied().unwrap_or(""));
            let text = this.text_of(k, this.forced(k));
            let (mut read, mut crds) = (Vec::new(), Vec::new());
            let range = yaml::parse_split(&text, "items", &mut |node, info| {
                crds.extend(engine::crds_of(&node));
                let at = info.text.as_ptr() as usize - text.as_ptr() as usize;
                let span = at..at + info.text.len();
                read.push((node.into_owned(), span, info.dash_col, info.seq_indent));
            })
            .ok()
            .map(|r| r.items);
            let ahead = range.map(|range| Ahead {
                items: read,
                range,
                text,
            });
            (ahead, crds)
        };
        let ahead = read::read_ahead(&this.pieces, work, setup);
        items.ahead = ahead;
        Some(items)
    }

    /// The items of `layout` cut as `reader` says, nothing read yet (see [`Items`]' fields).
    fn plain(
        src: &'s str,
        layout: ListLayout,
        head_style: Option<SeqIndent>,
        base: usize,
        list: Option<Node<'static>>,
        reader: Reader<'_>,
    ) -> Option<Items<'s>> {
        let region = src.get(layout.items.clone())?;
        let pieces = match reader.pieces.size(region.len()) {
            Some(size) => split::cut_items(region, layout.dash_col, size),
            None => vec![region],
        };
        Some(Items {
            src,
            layout,
            pieces,
            ahead: Vec::new(),
            head_style,
            base,
            in_list: list.is_some(),
            list,
            outer: None,
        })
    }

    /// The style the `items` sequence itself sets: compact when its dashes stand at its key's
    /// column.
    fn items_style(&self) -> SeqIndent {
        if self.layout.dash_col == self.base {
            SeqIndent::Compact
        } else {
            SeqIndent::Wide
        }
    }

    /// The style piece `k` is read with from its start: the one the wrapper sets, for the first
    /// piece (later ones learn theirs from the pieces before them).
    fn forced(&self, k: usize) -> Option<SeqIndent> {
        if k == 0 {
            self.head_style
        } else {
            None
        }
    }

    /// The text piece `k` is parsed as: `items:` and its items, after a key that sets `style`.
    fn text_of(&self, k: usize, style: Option<SeqIndent>) -> String {
        let piece = self.pieces.get(k).copied().unwrap_or("");
        let items = if k == 0 {
            String::new()
        } else {
            format!("{}items:\n", " ".repeat(self.base))
        };
        format!("{}{items}{piece}", style_prefix(style, self.base))
    }

    /// What the text piece `k` is parsed as holds before the piece, with `style` forced.
    fn synthetic(&self, k: usize, style: Option<SeqIndent>) -> usize {
        let items = if k == 0 {
            0
        } else {
            self.base + "items:\n".len()
        };
        style_prefix(style, self.base).len() + items
    }

    /// Where piece `k` starts in the input.
    fn offset(&self, k: usize) -> usize {
        let region = self.src.get(self.layout.items.clone()).unwrap_or("");
        let piece = self.pieces.get(k).copied().unwrap_or("");
        self.layout.items.start + (piece.as_ptr() as usize - region.as_ptr() as usize)
    }

    /// Every piece through a fork of `engine`, absorbed in order, the items of a list kind read
    /// as the engine reads them (`Engine::process_list`); `out` (room for the whole output)
    /// holds the output up to the last item's end. `None`, and nothing absorbed: the items
    /// cannot be read so (a piece does not parse, an item is not a mapping, the parser reads an
    /// item otherwise than its lines say), or a patch deleted every one (which the text around
    /// them cannot say: a list kind goes, a ResourceList's items are `[]`): read the input
    /// whole. Pieces that cannot be read apart are read again as one. With `locate` (the hasher
    /// of the keys), what [`ItemsRead::seen`] says.
    pub(crate) fn run(
        mut self,
        engine: &mut Engine<'_>,
        out: String,
        reader: Reader<'_>,
        locate: Option<&crate::hash::State>,
    ) -> Option<ItemsRead> {
        let list = self.list.take();
        let outer = self.outer.take();
        let (src, room) = (self.src, out.capacity());
        // Cut, and when the pieces cannot be read apart (an alias of another piece's anchor),
        // as one piece: what a reading that never cut them reads.
        let one = (self.pieces.len() > 1).then(|| self.as_one_piece());
        let mut read = self.attempt(engine, list.as_ref(), out, reader, locate);
        if let (Attempt::Unread, Some(one)) = (&read, one) {
            let mut out = String::new();
            out.try_reserve(room).ok()?;
            read = one.attempt(engine, list.as_ref(), out, reader, locate);
        }
        match read {
            Attempt::Read(read) => Some(read),
            // A ResourceList's only item that could not be read by its own items (or lost them
            // all): read as an item, as a ResourceList's items are.
            Attempt::Unread | Attempt::Emptied => {
                let (layout, style) = outer?;
                let items = Items::plain(src, layout, style, 0, None, reader)?;
                let mut out = String::new();
                out.try_reserve(room).ok()?;
                items.run(engine, out, reader, locate)
            }
        }
    }

    /// These items, not cut: one piece, nothing read ahead (their CRDs are learned).
    fn as_one_piece(&self) -> Items<'s> {
        let region = self.src.get(self.layout.items.clone()).unwrap_or("");
        Items {
            src: self.src,
            layout: self.layout.clone(),
            pieces: vec![region],
            ahead: Vec::new(),
            head_style: self.head_style,
            base: self.base,
            list: None,
            outer: None,
            in_list: self.in_list,
        }
    }

    /// The items through a fork of `engine` (the items of `list` when they are a list kind's),
    /// absorbed when they are read and not every one deleted.
    fn attempt(
        self,
        engine: &mut Engine<'_>,
        list: Option<&Node<'static>>,
        out: String,
        reader: Reader<'_>,
        locate: Option<&crate::hash::State>,
    ) -> Attempt {
        let mut fork = engine.fork();
        let inside = list.map(|l| fork.enter_list(l));
        let read = self.run_items(&mut fork, out, reader, locate);
        if let Some(inside) = inside {
            fork.leave_list(inside);
        }
        match read {
            None => Attempt::Unread,
            Some(read) if read.count.written == 0 && read.count.read > 0 => Attempt::Emptied,
            Some(read) => {
                engine.absorb(fork);
                Attempt::Read(read)
            }
        }
    }

    /// [`Items::run`] for the items themselves: every piece through a fork of `engine` (one
    /// piece: through `engine` itself), absorbed in order.
    fn run_items(
        mut self,
        engine: &mut Engine<'_>,
        mut out: String,
        reader: Reader<'_>,
        locate: Option<&crate::hash::State>,
    ) -> Option<ItemsRead> {
        let first_line = self.pieces.first()?.find('\n').map_or(0, |i| i + 1);
        out.push_str(self.src.get(..self.layout.items.start + first_line)?);
        let ahead: Vec<Mutex<Option<Ahead>>> = std::mem::take(&mut self.ahead)
            .into_iter()
            .map(Mutex::new)
            .collect();
        let take = |k: usize| ahead.get(k).and_then(|a| a.lock().ok()?.take());
        if self.pieces.len() < 2 && !self.in_list {
            let at = (0, self.forced(0));
            let piece = self.piece(at, take(0), engine, &mut out, reader, locate)?;
            let opts = EmitOptions {
                seq_indent: self.head_style.or(piece.sets).unwrap_or_default(),
            };
            return Some(ItemsRead {
                out,
                rest: piece.items.end,
                dash_col: self.layout.dash_col,
                opts,
                count: piece.count,
                seen: piece.seen,
            });
        }
        let first = Mutex::new(Some(out));
        let template: &Engine<'_> = engine;
        let this = &self;
        let mut join = Join {
            items: this,
            template,
            first_line,
            reader,
            locate,
            // A list kind's items take the style of its whole document (see `Items::in_list`):
            // its header's, or else the first that a piece sets, or else the `items` sequence's.
            style: self.head_style,
            known: !self.in_list || self.head_style.is_some(),
            waiting: Vec::new(),
            whole: None,
            count: Count::default(),
            seen: Vec::new(),
            forks: Vec::with_capacity(self.pieces.len()),
        };
        pieces::each(
            &self.pieces,
            |k, piece| {
                let mut fork = template.fork();
                let mut out = match k {
                    0 => first.lock().ok()?.take()?,
                    _ => String::with_capacity(piece.len()),
                };
                let at = (k, this.forced(k));
                let read = this.piece(at, take(k), &mut fork, &mut out, reader, locate)?;
                Some((read, out, fork))
            },
            |k, done| join.add(k, done),
        )?;
        join.finish()?;
        let Join {
            style,
            whole,
            count,
            seen,
            forks,
            ..
        } = join;
        for fork in forks {
            engine.absorb(fork);
        }
        let (out, rest) = whole?;
        Some(ItemsRead {
            out,
            rest,
            dash_col: self.layout.dash_col,
            opts: EmitOptions {
                seq_indent: style.unwrap_or_default(),
            },
            count,
            seen,
        })
    }

    /// Piece `k` read and patched by `engine`, its items written to `out`: parsed now with
    /// `style` forced, or read ahead (when that was with the same style).
    fn piece(
        &self,
        (k, style): (usize, Option<SeqIndent>),
        ahead: Option<Ahead>,
        engine: &mut Engine<'_>,
        out: &mut String,
        reader: Reader<'_>,
        locate: Option<&crate::hash::State>,
    ) -> Option<PieceRead> {
        let piece = self.pieces.get(k)?;
        // What the text parsed has before the piece's own text, and where its first item
        // starts in it.
        let synthetic = self.synthetic(k, style);
        let first_item = synthetic
            + if k == 0 {
                piece.find('\n').map_or(piece.len(), |i| i + 1)
            } else {
                0
            };
        let mut state = PieceState {
            locate,
            ..PieceState::default()
        };
        let range = match ahead.filter(|_| style == self.forced(k)) {
            Some(Ahead { text, items, range }) => {
                for (node, span, dash_col, seq_indent) in items {
                    let info = SplitItem {
                        text: text.get(span)?,
                        dash_col,
                        seq_indent,
                    };
                    state.item(node, info, engine, out);
                }
                range
            }
            None => {
                // The first piece is the input's own text, unless a style is forced on it.
                let text = match (k, style) {
                    (0, None) => std::borrow::Cow::Borrowed(*piece),
                    _ => std::borrow::Cow::Owned(self.text_of(k, style)),
                };
                reader.parses.add(piece);
                let read = yaml::parse_split(&text, "items", &mut |node, info| {
                    state.item(node, info, engine, out)
                });
                read.ok()?.items
            }
        }?;
        if state.give_up || range.start != first_item {
            return None;
        }
        let at = |x: usize| self.offset(k) + x - synthetic;
        Some(PieceRead {
            items: at(range.start)..at(range.end),
            used: state.used,
            sets: state.sets,
            count: state.count,
            seen: state.seen,
        })
    }
}

/// The pieces of items put together in order as they are read (`pieces::each`), each as one
/// reading of them all would have read it: with the style the pieces before it set (the first
/// piece was read so already), or a list kind's items with the style of its whole document.
/// A piece read in another style is read again in that one.
struct Join<'j, 's, 'p> {
    items: &'j Items<'s>,
    template: &'j Engine<'p>,
    /// Where the first piece's items start in it.
    first_line: usize,
    reader: Reader<'j>,
    locate: Option<&'j crate::hash::State>,
    /// The style new sequences are written in so far.
    style: Option<SeqIndent>,
    /// Whether `style` is final: a list kind's items wait (`waiting`) until a piece sets it.
    known: bool,
    waiting: Vec<(usize, Done<'p>)>,
    /// The output so far, and where the last piece's items end in the input.
    whole: Option<(String, usize)>,
    count: Count,
    seen: Vec<u64>,
    /// What each piece's engine found, in order, for the caller's engine to absorb.
    forks: Vec<Engine<'p>>,
}

/// A piece read: what it said, its output, and the engine that read it.
type Done<'e> = (PieceRead, String, Engine<'e>);

impl<'p> Join<'_, '_, 'p> {
    /// Piece `k` read, the pieces before it already added.
    fn add(&mut self, k: usize, done: Done<'p>) -> Option<()> {
        if !self.known {
            let sets = done.0.sets;
            self.waiting.push((k, done));
            if sets.is_none() {
                return Some(());
            }
            self.style = sets;
            self.known = true;
            return self.flush();
        }
        self.append(k, done)
    }

    /// After the last piece: a list kind's items that set no style take the `items`
    /// sequence's.
    fn finish(&mut self) -> Option<()> {
        if !self.known {
            self.style = Some(self.items.items_style());
            self.known = true;
        }
        self.flush()
    }

    fn flush(&mut self) -> Option<()> {
        for (k, done) in std::mem::take(&mut self.waiting) {
            self.append(k, done)?;
        }
        Some(())
    }

    fn append(&mut self, k: usize, (mut read, mut text, mut fork): Done<'p>) -> Option<()> {
        let items = self.items;
        if let Some(s) = self.style.filter(|s| read.used.iter().any(|u| u != s)) {
            fork = self.template.fork();
            text.clear();
            if k == 0 {
                text.push_str(
                    items
                        .src
                        .get(..items.layout.items.start + self.first_line)?,
                );
            }
            let (reader, locate) = (self.reader, self.locate);
            read = items.piece((k, Some(s)), None, &mut fork, &mut text, reader, locate)?;
        }
        if !items.in_list {
            self.style = self.style.or(read.sets);
        }
        self.count.read += read.count.read;
        self.count.written += read.count.written;
        self.seen.append(&mut read.seen);
        self.forks.push(fork);
        self.whole = match self.whole.take() {
            None => Some((text, read.items.end)),
            Some((mut out, at)) => {
                out.push_str(items.src.get(at..read.items.start)?);
                out.push_str(&text);
                Some((out, read.items.end))
            }
        };
        Some(())
    }
}

/// A piece of items read and patched.
struct PieceRead {
    /// Where the piece's items are in the input.
    items: Range<usize>,
    /// The styles it wrote touched items' new sequences in.
    used: Vec<SeqIndent>,
    /// The style its items set for the document (the first of them that sets one).
    sets: Option<SeqIndent>,
    count: Count,
    seen: Vec<u64>,
}

/// What a piece's items said while they were read.
#[derive(Default)]
struct PieceState<'h> {
    used: Vec<SeqIndent>,
    sets: Option<SeqIndent>,
    /// An item is not a mapping, or the parser read it otherwise than its lines say.
    give_up: bool,
    count: Count,
    /// The hasher of identity keys, when they are kept (`seen`).
    locate: Option<&'h crate::hash::State>,
    seen: Vec<u64>,
}

impl PieceState<'_> {
    /// One item, through the engine, written to `out`.
    fn item<'a>(
        &mut self,
        node: Node<'a>,
        info: SplitItem<'a>,
        engine: &mut Engine<'_>,
        out: &mut String,
    ) {
        if self.give_up {
            return;
        }
        if !split::starts_at_its_dash(info.text, info.dash_col) || !node.is_map() {
            // A line of the item before went with this one (an explicit key's `:` alone on its
            // line), or not a resource: the whole read says what it is.
            self.give_up = true;
            return;
        }
        if self.sets.is_none() {
            self.sets = split::first_seq_indent(&node);
        }
        if let Some(hasher) = self.locate {
            krm::for_each_resource(&node, &mut |r| {
                self.seen.push(identity_key(hasher, &Id::of(r)));
            });
        }
        let item = Item {
            node,
            origin: Origin::Input(self.count.read),
            touched: false,
            first_id: None,
        };
        self.count.read += 1;
        let written = engine.process(item);
        self.count.written += usize::from(written.is_some());
        match written {
            None => {}
            Some(it) if !it.touched => out.push_str(info.text),
            Some(it) => {
                self.used.push(info.seq_indent);
                let opts = EmitOptions {
                    seq_indent: info.seq_indent,
                };
                yaml::emit_seq_item(&it.node, info.dash_col, opts, out);
            }
        }
    }
}

/// Writes the items a merge3 update added, after the last item.
pub(crate) fn write_added(read: &mut ItemsRead, added: &[Item<'_>]) {
    for item in added {
        yaml::emit_seq_item(&item.node, read.dash_col, read.opts, &mut read.out);
    }
}
