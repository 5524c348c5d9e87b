//! JSON Patch (RFC 6902) on the lossless YAML tree, with JSON Pointers (RFC 6901) extended by
//! key selectors and wildcards.
//!
//! What it is: [`parse_ops`] reads a patch — a sequence of operation maps, written in YAML or in
//! JSON — into [`Op`]s, and [`patch`] runs them in order on a [`Node`]. Everything the RFC says
//! holds: `add` to a mapping replaces an existing member, `add` into a sequence inserts before the
//! index (`-`, or an index equal to the length, appends), `remove` and `replace` need an existing
//! target, `move` removes then adds and may not move a value into one of its own children, `copy`
//! copies deeply, `test` compares JSON values (numbers by value, mappings without regard to key
//! order). Members an operation does not define are ignored, as RFC 6902 §4 requires.
//!
//! Because it works on [`Node`]s rather than JSON values, what the patch does not change stays as
//! written: comments, key order, scalar styles. Values keep their own comments when they are
//! added, replaced, moved or copied, and a value that takes the place of another keeps the
//! comments of that place where it brings none. New keys are appended to their mapping. Values
//! from operations written in flow style (a JSON patch) are made block style, so a YAML resource
//! stays block YAML.
//!
//! **Key selectors** (our extension, not in RFC 6901): a reference token `[name=app]` applied to a
//! sequence selects the one element that is a mapping whose `name` field is a scalar with the
//! text `app`: `/spec/template/spec/containers/[name=app]/image`. See [`Selector`] for the exact
//! syntax. A selector resolves to the position of the element it selects, and the operation then
//! proceeds as if that index had been written (so `add` at a selector inserts before the
//! element). Applied to a mapping, the same token is the member of that name, as in RFC 6901, so
//! every pointer the RFC accepts means what the RFC says.
//!
//! **Wildcards** (our extension too): a token `[*]` applied to a sequence selects every element,
//! in `path` and in `from`, at any depth, several per pointer: `/spec/containers/[*]/env/-`. An
//! operation applies at each place its `[*]` select, in document order, as if each `[*]` were
//! that element's index; [`patch_with`] says at how many places each acted. The rules for places
//! that are not there are in the `wildcard` module. [`patch_at_place`] runs a patch at one of the
//! places a patch's `at:` selected (the engine's `@containers`): all of each pointer is below
//! that place, so the rules for places below a `[*]` apply to every operation.
//!
//! **All or nothing**: [`patch`] runs the operations on a copy of the document and puts the copy
//! in place only when every operation succeeded, so on error the document is exactly as it was
//! (one clone per call: simpler than an undo log, and documents are small).
//!
//! **Aliases**: an operation that changes something below an alias first replaces that alias
//! with a copy of its anchored node (without anchors), so the change stays at this place; reading
//! (`test`, `copy`'s `from`, selectors) looks through aliases. A result that would use an alias
//! before its anchor (`move`/`copy` can do that) is an error. A patch's aliases are expanded, and
//! its anchors dropped, once, when [`parse_ops`] reads it (see "Patches and aliases" in
//! [`crate::yaml::anchors`]); applying the operations to any number of documents expands nothing.
//!
//! **Bounds**: what a patch may cost on a resource is the caller's [`Budget`], passed in and
//! spent by every operation: each place a `[*]` selects, what the patch adds (a value at each
//! of its places, copies, the copies aliases become when a change goes through them), shifts,
//! key selectors' scans, and rereads of the anchored nodes. A failure names the operation, its
//! pointer and the place. The anchored nodes are read once for a run and again only after a
//! change to one of them, so a patch that reaches a hundred thousand places through aliases
//! walks each from the root in the time of a few lookups.
//!
//! The modules, one concept each: `op` (the operations and reading them), `error`, `rfc` (the
//! six operations at one pointer), `walk` (finding a pointer's target on the tree), `wildcard`
//! (one operation at every place its `[*]` select), `members` (wide mappings' members by key),
//! `aliases`, `equal` (JSON equality for `test`). Pointers themselves are plain data in
//! [`crate::path::pointer`], which the schema check reads too.
//!
//! What it must not do: consult a schema (RFC 6902 is schema-free), select resources, or parse
//! or write text.

mod aliases;
mod equal;
mod error;
mod members;
mod op;
mod rfc;
mod walk;
mod wildcard;

#[cfg(test)]
mod tests;

pub use crate::budget::Budget;
pub use crate::path::pointer::{Pointer, PointerError, Selector, SelectorError, Token};
pub use error::{PatchError, PatchErrorKind};
pub use op::{parse_ops, Op, Verb};

use crate::yaml::{Kind, Node, ScalarStyle};
use members::Members;

/// Choices that depart from RFC 6902, for compatibility with other tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `replace` of a member that an existing mapping lacks adds it, as kustomize's JSON patch
    /// library (evanphx/json-patch v4) does. RFC 6902 §4.3 requires the target to exist, which
    /// is the default (`false`). Sequences and missing parents are errors either way.
    pub replace_adds_missing: bool,
    /// A member that an existing mapping lacks reads as `null` to `copy` and `test`, as in
    /// evanphx/json-patch v4: `copy` from it adds `null`, `test` of it against `null` passes.
    /// RFC 6902 makes both errors, the default (`false`).
    pub missing_member_reads_null: bool,
    /// `move` into one of the moved value's own children is allowed, as evanphx/json-patch v4
    /// does it: the value is removed, then added at `path` as that pointer reads in the document
    /// without it (so `move /rules/0 → /rules/0/moved` puts the rule under the next one).
    /// RFC 6902 §4.4 forbids such a move, the default (`false`).
    pub move_into_child: bool,
    /// Every null in the patched document is written `null`, as kustomize leaves it: it
    /// applies a JSON patch to the resource's JSON and reads the result back, so an empty
    /// `key:` (or `- ` item) comes back as `key: null`. The data is the same, but kyaml's
    /// strategic merge drops an untouched empty `key:` from a map it merges into and keeps an
    /// explicit `null`, so the spelling decides what a later patch leaves. By default
    /// (`false`) the document keeps its text.
    pub nulls_written_as_null: bool,
    /// A resource whose `metadata` has no `annotations` has an empty `annotations` mapping
    /// while the operations run (and none after, unless they put something in it), as in
    /// kustomize, where its own build annotations (`internal.config.kubernetes.io/previousNames`
    /// and others) fill that mapping while a JSON patch runs: there, `add` and `replace` of
    /// `/metadata/annotations/x` succeed on a resource without annotations, and `test` of a
    /// member of it against `null` passes. Only at a document's root. By default (`false`) a
    /// missing parent is missing, as RFC 6902 says.
    pub annotations_present: bool,
}

impl Options {
    /// What `kustomize build` does with a JSON 6902 patch.
    pub fn kustomize() -> Options {
        Options {
            replace_adds_missing: true,
            missing_member_reads_null: true,
            move_into_child: true,
            nulls_written_as_null: true,
            annotations_present: true,
        }
    }
}

/// Applies `ops` to `doc` in order, as RFC 6902 says. All or nothing: on error `doc` is
/// unchanged, and the error names the failing operation.
///
/// ```
/// use krm_merge::{patch::json6902, yaml};
/// let mut doc = yaml::parse_stream("a: 1 # one\nb: [x]\n").unwrap().remove(0).root.unwrap();
/// let ops = yaml::parse_stream(r#"[{"op": "add", "path": "/b/-", "value": "y"}]"#).unwrap();
/// json6902::patch(&mut doc, &json6902::parse_ops(ops[0].root.as_ref().unwrap()).unwrap()).unwrap();
/// assert_eq!(yaml::one_line(&doc), r#"{"a":1,"b":["x","y"]}"#);
/// ```
pub fn patch<'a, 'p: 'a>(doc: &mut Node<'a>, ops: &[Op<'p>]) -> Result<(), PatchError> {
    patch_with(doc, ops, &Options::default(), &mut Budget::new()).map(drop)
}

/// [`patch`], with [`Options`] and the caller's [`Budget`] for this resource, also saying how
/// many places each operation acted on, in the order of `ops`: 1 for an operation without `[*]`;
/// for one with `[*]`, the places it changed, tested, moved or copied, without those the rules
/// of "Wildcards" skip (so 0 when its `[*]` select nothing).
pub fn patch_with<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    opts: &Options,
    budget: &mut Budget,
) -> Result<Vec<usize>, PatchError> {
    run_patch(doc, ops, opts, budget, Base::Root)
}

/// [`patch_with`] at one of the places a patch's `at:` selected: every pointer is below a `[*]`,
/// so the rules of "Wildcards" for places below one apply to all of it — `add` makes missing
/// members, `remove` and `replace` skip what is not there, `move` and `copy` skip a missing
/// `from` — and an operation counts 1 where it acted, 0 where it was skipped.
pub fn patch_at_place<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    opts: &Options,
    budget: &mut Budget,
) -> Result<Vec<usize>, PatchError> {
    run_patch(doc, ops, opts, budget, Base::Place)
}

/// Where a patch's pointers start.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Base {
    /// At the document's root, as RFC 6902 says.
    Root,
    /// At a place an `at:` selected: below a `[*]`.
    Place,
}

/// What every step of one patch run needs besides the document: the options, whether aliases
/// are in play (in the document or in the operations' values), the caller's budget, and what
/// the run keeps for itself — the index of wide mappings' members and the anchored nodes.
struct Cx<'r, 'a> {
    opts: &'r Options,
    aliased: bool,
    budget: &'r mut Budget,
    members: Members,
    /// The anchored nodes, where aliases are in play (boxed: it is taken out and put back at
    /// each read).
    aliases: Option<Box<aliases::Table<'a>>>,
    /// The operation running removed anchors, or added aliases or anchors: its result must be
    /// checked for an alias before its anchor.
    recheck: bool,
}

fn run_patch<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    opts: &Options,
    budget: &mut Budget,
    base: Base,
) -> Result<Vec<usize>, PatchError> {
    let mut cx = Cx::new(doc, ops, opts, budget, base);
    run_ops(doc, ops, &mut cx, base)
}

impl<'r, 'a> Cx<'r, 'a> {
    fn new(
        doc: &Node<'a>,
        ops: &[Op<'_>],
        opts: &'r Options,
        budget: &'r mut Budget,
        base: Base,
    ) -> Self {
        let aliased = doc.has_alias()
            || ops.iter().any(|op| match op {
                Op::Add { value, .. } | Op::Replace { value, .. } | Op::Test { value, .. } => {
                    value.has_alias()
                }
                _ => false,
            });
        // What may grow the document by more than the patch's own text: copies, values put at
        // many places, aliases that become copies. The resource is measured before the patch
        // (the engine measured the whole resource before an `at:`; that measure stays).
        let grows = base == Base::Place
            || aliased
            || ops.iter().any(|op| match op {
                Op::Copy { .. } => true,
                Op::Move { from, path } => from.has_wildcard() || path.has_wildcard(),
                op => op.path().has_wildcard(),
            });
        if grows {
            budget.measure(doc);
        }
        Cx {
            opts,
            aliased,
            budget,
            members: Members::new(aliased),
            aliases: aliased.then(Box::default),
            recheck: false,
        }
    }

    /// Runs `f`, a read-only walk of `doc`, with the view of the document's anchored nodes it
    /// follows aliases through. A walk that needed them when they could not be copied fails.
    fn read<T>(
        &mut self,
        doc: &Node<'a>,
        f: impl FnOnce(&aliases::View<'_, 'a>, &mut Self) -> Result<T, PatchErrorKind>,
    ) -> Result<T, PatchErrorKind> {
        let mut table = self.aliases.take();
        let (found, failed) = {
            let view = aliases::View::new(table.as_deref(), doc);
            let found = f(&view, self);
            (found, view.failure())
        };
        let reread = table.as_mut().map_or(0, |t| t.take_reread());
        self.aliases = table;
        if let Some(e) = failed {
            return Err(e);
        }
        self.budget.reread(reread)?;
        found
    }

    /// Notes what a change did to anchors and aliases: `gone` was taken out of the document,
    /// `added` put in, and `through_anchor` says whether the change was inside an anchored
    /// node. The anchored nodes are read again before the next alias is followed when any of
    /// them changed, and the result is checked for aliases before their anchors when anchors
    /// went or aliases came.
    fn changed_anchors(
        &mut self,
        gone: Option<&Node<'_>>,
        added: Option<&Node<'_>>,
        through_anchor: bool,
    ) {
        if !self.aliased {
            return;
        }
        let gone_anchor = gone.is_some_and(Node::has_anchor);
        let added_any = added.is_some_and(|n| n.has_anchor() || n.has_alias());
        if through_anchor || gone_anchor || added.is_some_and(Node::has_anchor) {
            if let Some(table) = self.aliases.as_mut() {
                table.stale();
            }
        }
        if gone_anchor || added_any {
            self.recheck = true;
        }
    }
}

/// The operations in order on a copy of `doc`, which replaces `doc` when all succeeded.
fn run_ops<'a, 'p: 'a>(
    doc: &mut Node<'a>,
    ops: &[Op<'p>],
    cx: &mut Cx<'_, 'a>,
    base: Base,
) -> Result<Vec<usize>, PatchError> {
    let opts = cx.opts;
    if ops.is_empty() {
        if opts.nulls_written_as_null {
            write_nulls_as_null(doc);
        }
        return Ok(Vec::new());
    }
    let mut work = doc.clone();
    let planted = opts.annotations_present && base == Base::Root && plant_annotations(&mut work);
    let mut reached = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        cx.recheck = false;
        let done = wildcard::run_counted(&mut work, op, cx, base).and_then(|n| {
            reached.push(n);
            if cx.recheck {
                aliases::check_aliases(&work).map_err(|k| (error::Which::Path, k))?;
            }
            Ok(())
        });
        if let Err((which, kind)) = done {
            return Err(PatchError::of(i, op, which, kind));
        }
    }
    if planted {
        unplant_annotations(&mut work);
    }
    if opts.nulls_written_as_null {
        write_nulls_as_null(&mut work);
    }
    *doc = work;
    Ok(reached)
}

/// Gives a resource's `metadata` mapping an empty `annotations` mapping where it has none (see
/// [`Options::annotations_present`]). True when it did.
fn plant_annotations(doc: &mut Node<'_>) -> bool {
    let has_meta = doc.get("metadata").is_some_and(Node::is_map);
    if !has_meta || doc.get_path(&["metadata", "annotations"]).is_some() {
        return false;
    }
    doc.get_mut("metadata")
        .is_some_and(|m| m.set("annotations", Node::map()))
}

/// Takes away the `annotations` mapping [`plant_annotations`] gave, where the operations left
/// it empty.
fn unplant_annotations(doc: &mut Node<'_>) {
    let empty = doc
        .get_path(&["metadata", "annotations"])
        .is_some_and(|a| a.is_map() && a.entries().is_empty());
    if empty {
        if let Some(m) = doc.get_mut("metadata") {
            m.remove("annotations");
        }
    }
}

/// Empty nulls (`key:`, `key: !!null`) become a plain `null` (see
/// [`Options::nulls_written_as_null`]); `~` and `Null` already say null in words and stay.
fn write_nulls_as_null(node: &mut Node<'_>) {
    match node.kind() {
        Kind::Scalar => {
            if node.is_null() && node.as_str() == Some("") {
                node.set_text("null", ScalarStyle::Plain);
                node.set_tag(None);
            }
        }
        Kind::Map => {
            for e in node.entries_mut().into_iter().flatten() {
                write_nulls_as_null(&mut e.value);
            }
        }
        Kind::Seq => {
            for item in node.items_mut().into_iter().flatten() {
                write_nulls_as_null(item);
            }
        }
        Kind::Alias => {}
    }
}

/// [`patch`], saying how many times the member index was found out of date and rebuilt (for
/// the tests: the changes the operations report keep it at 0).
#[cfg(test)]
fn stale_rebuilds<'a, 'p: 'a>(doc: &mut Node<'a>, ops: &[Op<'p>]) -> Result<usize, PatchError> {
    let (opts, mut budget) = (Options::default(), Budget::new());
    let mut cx = Cx::new(doc, ops, &opts, &mut budget, Base::Root);
    run_ops(doc, ops, &mut cx, Base::Root)?;
    Ok(cx.members.stale)
}
