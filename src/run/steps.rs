//! One function per patch type: what a step of each [`Action`] does to one item. [`Engine::step`]
//! dispatches to them; each selects (a target, or the patch documents' own identities), finds
//! where in the resource it applies (its root, or the places an `at:` names), checks its patch
//! against the kind's schema once, and runs its walker inside the guard (`guard.rs`). A new
//! patch type is a new function here and a line in the dispatch.
//!
//! What it must not do: keep the promises every patch keeps (the guard does), or report what
//! a step did over all items (the report does).

use crate::budget::{Added, Budget};
use crate::config::{Action, Select, Step, TargetAt};
use crate::error::{Cause, PatchFailure};
use crate::krm::Item;
use crate::merge::merge2::Outcome;
use crate::merge::{apply, merge2, merge3, Context};
use crate::patch::{json6902, jsonmerge};
use crate::path::{Path, Pattern};
use crate::run::engine::{Effect, Engine, Settled};
use crate::run::guard::{failure, CheckedPatch, Walked};
use crate::select::bookkeeping;
use crate::select::identity::{Id, Meta};
use crate::select::places::{self, Place};
use crate::select::target::Target;
use crate::yaml::anchors::Scope;
use crate::yaml::Node;

impl<'p> Engine<'p> {
    /// Applies step `k` to an item, if it selects the item: what it did, and whether it leaves
    /// the item settled (see [`Settled`]).
    pub(super) fn step(
        &mut self,
        k: usize,
        step: &'p Step,
        item: &mut Item<'_>,
    ) -> (Effect, Settled) {
        match &step.action {
            Action::Merge2 { select, docs } => self.merge2_step(k, step, select, docs, item),
            Action::JsonMerge { select, docs } => {
                (self.jsonmerge_step(k, step, select, docs, item), None)
            }
            Action::Apply { select, docs } => (self.apply_step(k, step, select, docs, item), None),
            Action::Json6902 { target, at, ops } => {
                let effect = self.json6902_step(k, step, target, at.as_ref(), ops, item);
                (effect, None)
            }
            Action::Merge3 {
                target,
                at,
                original,
                updated,
            } => (
                self.merge3_step(k, step, target, at.as_ref(), original, updated, item),
                None,
            ),
            Action::Update { original, updated } => {
                (self.update_step(k, step, original, updated, item), None)
            }
        }
    }

    /// A strategic merge (kyaml's merge2).
    fn merge2_step(
        &mut self,
        k: usize,
        step: &Step,
        select: &Select<TargetAt>,
        docs: &[Node<'static>],
        item: &mut Item<'_>,
    ) -> (Effect, Settled) {
        let Some(docs) = self.chosen(k, step, select, docs, item) else {
            return (Effect::Unchanged, None);
        };
        let Some((at, mut budget)) =
            self.places(k, step, step.action.at(), item, || weight_of(&docs))
        else {
            return (Effect::Unchanged, None);
        };
        let opts = step.options.merge2();
        // kyaml walks the whole resource at each merge with kustomize's options: after one at
        // the root of a resource without aliases, the resource is as the walk leaves it until
        // something else changes it.
        let kyaml_root =
            opts.kustomize && matches!(at, Site::Root) && !self.aliases.current.aliases;
        let schema = step.options.crd_merge_keys;
        // A resource the walk would leave as it is, is so already (most are): then neither the
        // walk nor the copy of the whole resource that its changes are found by is needed.
        if kyaml_root && self.settled != Some(schema) {
            let id = Id::of(&item.node);
            let root = self.root_of(schema, &id);
            if merge2::settles_as_is(&item.node, self.setup.schema_for(schema), root) {
                self.settled = Some(schema);
            }
        }
        let settled = kyaml_root && self.settled == Some(schema);
        let mut walked = false;
        let effect = self.guarded(step, item, None, |node, ctx| {
            let ctx = if settled { ctx.kyaml_settled() } else { *ctx };
            at.walk(node, &ctx, &mut budget, |node, here, _| {
                let here = here.with(opts);
                for p in &docs {
                    match merge2::merge(node, p, &here) {
                        Ok(Outcome::Merged) => {}
                        Ok(Outcome::Deleted) => return Ok(Walked::Deleted),
                        Err(e) => return Err(Cause::Merge(e)),
                    }
                }
                walked = true;
                Ok(Walked::Merged(Vec::new()))
            })
        });
        (effect, (walked && kyaml_root).then_some(schema))
    }

    /// A JSON merge patch (RFC 7386).
    fn jsonmerge_step(
        &mut self,
        k: usize,
        step: &Step,
        select: &Select<TargetAt>,
        docs: &[Node<'static>],
        item: &mut Item<'_>,
    ) -> Effect {
        let Some(docs) = self.chosen(k, step, select, docs, item) else {
            return Effect::Unchanged;
        };
        let Some((at, mut budget)) =
            self.places(k, step, step.action.at(), item, || weight_of(&docs))
        else {
            return Effect::Unchanged;
        };
        self.guarded(step, item, None, |node, ctx| {
            at.walk(node, ctx, &mut budget, |node, _, _| {
                for p in &docs {
                    jsonmerge::merge(node, p).map_err(Cause::JsonMerge)?;
                }
                Ok(Walked::Merged(Vec::new()))
            })
        })
    }

    /// `kubectl apply`'s merge.
    fn apply_step(
        &mut self,
        k: usize,
        step: &Step,
        select: &Select,
        docs: &[Node<'static>],
        item: &mut Item<'_>,
    ) -> Effect {
        let Some(docs) = self.chosen(k, step, select, docs, item) else {
            return Effect::Unchanged;
        };
        // kubectl never guesses merge keys: apply follows kubectl, whatever `inferMergeKeys`
        // says.
        let opts = apply::Options { infer_keys: false };
        self.guarded(step, item, None, |node, ctx| {
            let ctx = ctx.with(opts);
            for p in &docs {
                apply::apply(node, p, &ctx).map_err(Cause::Merge)?;
            }
            Ok(Walked::Merged(Vec::new()))
        })
    }

    /// A JSON patch (RFC 6902), with our pointers' selectors and wildcards.
    fn json6902_step(
        &mut self,
        k: usize,
        step: &Step,
        target: &Target,
        at: Option<&Pattern>,
        ops: &[json6902::Op<'static>],
        item: &mut Item<'_>,
    ) -> Effect {
        if !self.targets(k, step, target, item) {
            return Effect::Unchanged;
        }
        if at.is_none() {
            // Pointers below an `at:` place are not paths from the kind's root.
            self.check(step, item, CheckedPatch::Operations(ops));
        }
        // JSON patch spends what it adds at each place itself.
        let Some((at, mut budget)) = self.places(k, step, at, item, || 0) else {
            return Effect::Unchanged;
        };
        let opts = step.options.json6902();
        let mut reached = vec![0; ops.len()];
        // At a place, the pointers are below a `[*]`, with its rules for what is missing.
        let patch = match at {
            Site::Root => json6902::patch_with,
            Site::Places { .. } => json6902::patch_at_place,
        };
        let effect = self.guarded(step, item, None, |node, ctx| {
            at.walk(node, ctx, &mut budget, |node, _, budget| {
                let counts = patch(node, ops, &opts, budget).map_err(Cause::Json6902)?;
                for (r, n) in reached.iter_mut().zip(counts) {
                    *r += n;
                }
                Ok(Walked::Merged(Vec::new()))
            })
        });
        // Places an operation reached count whether or not it changed them (a `replace` with
        // the value already there reaches its place).
        let none_reached = reached.iter().all(|n| *n == 0);
        for (r, n) in self.report.counts[k].reached.iter_mut().zip(reached) {
            *r += n;
        }
        // Operations whose `[*]` all select nothing here changed nothing here.
        if !ops.is_empty() && none_reached {
            return Effect::Unchanged;
        }
        effect
    }

    /// A 3-way merge with a target: the change from `original` to `updated`, at the root or at
    /// each place an `at:` names, conflicts reported.
    #[allow(clippy::too_many_arguments)]
    fn merge3_step(
        &mut self,
        k: usize,
        step: &Step,
        target: &Target,
        at: Option<&Pattern>,
        original: &Node<'static>,
        updated: &Node<'static>,
        item: &mut Item<'_>,
    ) -> Effect {
        if !self.targets(k, step, target, item) {
            return Effect::Unchanged;
        }
        if at.is_none() {
            self.check(step, item, CheckedPatch::Document(0, updated));
        }
        let Some((site, mut budget)) = self.places(k, step, at, item, || updated.weight()) else {
            return Effect::Unchanged;
        };
        self.merge3(step, item, &site, &mut budget, original, updated, None)
    }

    /// merge3 into one item at `site`: the change from `original` to `updated`, conflicts
    /// reported; `budget` is the step's on this item (see [`Site::walk`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn merge3(
        &mut self,
        step: &Step,
        item: &mut Item<'_>,
        site: &Site,
        budget: &mut Budget,
        original: &Node<'static>,
        updated: &Node<'static>,
        document: Option<usize>,
    ) -> Effect {
        let opts = step.options.merge3();
        self.guarded(step, item, document, |node, ctx| {
            site.walk(node, ctx, budget, |node, here, _| {
                merge3::merge(node, original, updated, &here.with(opts))
                    .map(Walked::Merged)
                    .map_err(Cause::Merge)
            })
        })
    }

    /// The documents of a merge step that apply to the item: all of them when the step's target
    /// selects it, those with the item's identity when the step has no target. `None` when
    /// nothing applies.
    fn chosen<'d, T: AsRef<Target>>(
        &mut self,
        k: usize,
        step: &Step,
        select: &Select<T>,
        docs: &'d [Node<'static>],
        item: &Item<'_>,
    ) -> Option<Vec<&'d Node<'static>>> {
        let chosen: Vec<(usize, &'d Node<'static>)> = match select {
            Select::Target(target) => {
                if !self.targets(k, step, (**target).as_ref(), item) {
                    return None;
                }
                docs.iter().enumerate().collect()
            }
            Select::OwnIdentity => {
                let mut chosen = Vec::new();
                for (d, doc) in docs.iter().enumerate() {
                    if is_for(&self.aliases.scope, item, &Id::of(doc)) {
                        self.report.counts[k].found[d] = true;
                        chosen.push((d, doc));
                    }
                }
                if chosen.is_empty() {
                    return None;
                }
                self.report.counts[k].selected += 1;
                chosen
            }
        };
        // A patch at an `at:` place is not a partial resource: the kind's schema does not
        // describe it from its root.
        if step.action.at().is_none() {
            for &(d, doc) in &chosen {
                self.check(step, item, CheckedPatch::Document(d, doc));
            }
        }
        Some(chosen.into_iter().map(|(_, doc)| doc).collect())
    }

    /// Whether `target` selects the item, now or by the name it had when an earlier step
    /// renamed it (counted). Inconsistent build annotations fail the step.
    fn targets(&mut self, k: usize, step: &Step, target: &Target, item: &Item<'_>) -> bool {
        // Until the step selects something, what it nearly selects is looked for: said with
        // "selects no resource" when it never does.
        let looking = {
            let c = &self.report.counts[k];
            c.selected == 0 && c.near.is_none()
        };
        let selected = {
            let follow = |n| self.aliases.follow(n);
            // Most targets rule most resources out by type: then nothing else is read.
            let id = Id::of_with(&item.node, &follow);
            if !target.matches_type(&id) {
                if looking {
                    let meta = Meta::of_id(id, &item.node, &follow);
                    self.report.counts[k].near = target.near_miss(&meta);
                }
                return false;
            }
            let meta = Meta::of_id(id, &item.node, &follow);
            let selected = match target.matches(&meta) {
                Ok(true) => Ok(true),
                Ok(false) => Ok(matches_first_id(target, &meta, item.first_id.as_ref())),
                Err(e) => Err(e),
            };
            if looking && matches!(selected, Ok(false)) {
                self.report.counts[k].near = target.near_miss(&meta);
            }
            if matches!(selected, Ok(true)) {
                self.report.counts[k].saw(&meta.id);
            }
            selected
        };
        let selected = match selected {
            Ok(s) => s,
            Err(e) => {
                self.fail(failure(step, &item.node, None, Cause::PreviousIds(e)));
                return false;
            }
        };
        if selected {
            self.report.counts[k].selected += 1;
        }
        selected
    }

    /// Where step `k` applies in the item: its root, or the places its `at:` names there; and
    /// the step's budget on the item, which the places found were spent from, each with what
    /// the walker adds there at most (`per_place`). `None` when `at:` finds no place, or when
    /// the item does not have the shape it describes or the places pass the budget (the step
    /// fails).
    fn places(
        &mut self,
        k: usize,
        step: &Step,
        at: Option<&Pattern>,
        item: &Item<'_>,
        per_place: impl FnOnce() -> usize,
    ) -> Option<(Site, Budget)> {
        let mut budget = Budget::new();
        let Some(pattern) = at else {
            return Some((Site::Root, budget));
        };
        // The resource as it is before the patch: what it may grow by.
        budget.measure(&item.node);
        let per_place = per_place();
        let id = Id::of(&item.node);
        let (g, v) = id.group_version();
        let schema = &self.setup.schema;
        let root = schema.root(g, v, &id.kind);
        let kind = (g, v, id.kind.as_ref());
        match places::find(
            &item.node,
            pattern,
            schema,
            kind,
            root,
            &mut budget,
            per_place,
        ) {
            Ok(found) if found.is_empty() => None,
            Ok(found) => {
                self.report.counts[k].places += found.len();
                self.report.counts[k].found_in += 1;
                let places = found;
                Some((Site::Places { places, per_place }, budget))
            }
            Err(e) => {
                self.fail(failure(step, &item.node, None, Cause::Place(e)));
                None
            }
        }
    }
}

/// Where in a resource a step's walker runs.
pub(super) enum Site {
    /// At its root: a step without `at:`.
    Root,
    /// At each of these places (never none), in document order. `per_place`: what the walker
    /// adds at each at most (its patch's weight), spent from the budget when they were found.
    Places {
        places: Vec<Place>,
        per_place: usize,
    },
}

impl Site {
    /// Runs `walk` at the root, or at each place with the context re-rooted there. A failure
    /// at a place says which; conflicts are named from the root; places a strategic merge
    /// deletes (`$patch: delete`) are removed once all have been merged, last first.
    ///
    /// `budget` is the step's on this resource: `walk` may spend from it (JSON patch does), and
    /// at each place what the copies of aliases on the way to it weigh is spent, and so is what
    /// the place grew by beyond what the walker spent and what was spent for it when it was
    /// found (a merge into an alias there copies the alias's anchored node).
    fn walk<'a>(
        &self,
        node: &mut Node<'a>,
        ctx: &Context<'_, 'a>,
        budget: &mut Budget,
        mut walk: impl FnMut(&mut Node<'a>, Context<'_, 'a>, &mut Budget) -> Result<Walked, Cause>,
    ) -> Result<Walked, Cause> {
        let (places, per_place) = match self {
            Site::Root => return walk(node, *ctx, budget),
            Site::Places { places, per_place } => (places, *per_place),
        };
        let mut conflicts = Vec::new();
        let mut deleted = Vec::new();
        for p in places {
            // Each route was found on this tree, and a walker changes nothing outside its place.
            let Some((here, copied)) = places::reach(node, &p.route, ctx.anchors) else {
                continue;
            };
            let fail = |e| at_place(&p.path, Cause::Budget(e));
            budget.grow(copied, Added::AliasCopy).map_err(fail)?;
            let (weight, spent) = (here.weight(), budget.grown());
            let walked =
                walk(here, ctx.at(p.cursor), budget).map_err(|cause| at_place(&p.path, cause))?;
            let grew = here.weight().saturating_sub(weight);
            let paid = (budget.grown() - spent).saturating_add(per_place);
            budget
                .grow(grew.saturating_sub(paid), Added::AtPlaces)
                .map_err(fail)?;
            match walked {
                Walked::Merged(found) => {
                    conflicts.extend(found.into_iter().map(|mut c| {
                        c.path = joined(&p.path, &c.path);
                        c
                    }));
                }
                Walked::Deleted => deleted.push(&p.route),
            }
        }
        for route in deleted.into_iter().rev() {
            places::remove(node, route, ctx.anchors);
        }
        Ok(Walked::Merged(conflicts))
    }
}

/// What a merge patch adds at a place at most: its documents' weight.
fn weight_of(docs: &[&Node<'_>]) -> usize {
    docs.iter().map(|d| d.weight()).sum()
}

/// A failure at a place: a merge's own path is completed from the root; other causes are
/// wrapped with the place.
fn at_place(place: &Path, cause: Cause) -> Cause {
    match cause {
        Cause::Merge(mut e) => {
            e.path = joined(place, &e.path);
            Cause::Merge(e)
        }
        other => Cause::At {
            place: place.clone(),
            cause: Box::new(other),
        },
    }
}

fn joined(place: &Path, below: &Path) -> Path {
    Path(place.0.iter().chain(&below.0).cloned().collect())
}

/// Whether a step may touch bookkeeping items: a target that names a kind, or a merge3 update
/// (which pairs them with the documents that name them: see `run/update.rs`).
pub(super) fn touches_bookkeeping(step: &Step) -> bool {
    matches!(step.action, Action::Update { .. })
        || step
            .action
            .target()
            .and_then(|t| t.spec().kind.as_deref())
            .is_some_and(|k| !k.is_empty())
}

/// The item is the resource `want` names: now, by the identity it had before an earlier step
/// renamed it, or by the original identity kustomize's build annotations record.
fn is_for(scope: &Scope, item: &Item<'_>, want: &Id<'_>) -> bool {
    item.first_id.as_ref().is_some_and(|f| f.same(want)) || has_identity(scope, &item.node, want)
}

/// A step earlier in this run renamed the resource: the target selects it by the name and
/// namespace it came in with, as kustomize's in-memory previous names do.
fn matches_first_id(target: &Target, meta: &Meta<'_>, first: Option<&Id<'static>>) -> bool {
    let Some(first) = first else { return false };
    let mut then = meta.clone();
    then.id.name = first.name.clone();
    then.id.namespace = first.namespace.clone();
    target.matches(&then).unwrap_or(false)
}

/// The resource has the identity `want`, now or originally (kustomize's build annotations).
fn has_identity(scope: &Scope, node: &Node<'_>, want: &Id<'_>) -> bool {
    let follow = |n| scope.follow(n);
    let meta = Meta::of_with(node, &follow);
    let id = &meta.id;
    if id.same(want) {
        return true;
    }
    match meta.original_id() {
        Ok(Some(orig)) => {
            id.api_version == want.api_version
                && orig.kind == want.kind
                && orig.name == want.name
                && orig.effective_namespace() == want.effective_namespace()
        }
        _ => false,
    }
}

/// A failure about the item's resource, as it is now, with its file.
pub(super) fn file_of(node: &Node<'_>) -> Option<(String, u64)> {
    bookkeeping::file_of(node).map(|(p, i)| (p.to_owned(), i))
}

impl Engine<'_> {
    /// A failed step: its error, and the run fails.
    pub(super) fn fail(&mut self, failure: PatchFailure) {
        self.report.push(failure.to_result());
    }
}
