//! The engine: applies the plan's steps to the items and reports what happened.
//!
//! Each step sees the output of the previous one. Selection follows README "Selecting
//! resources": a target selects by kustomize's rules (a warning when it selects nothing);
//! without one, each patch document selects the items with its own identity (an error when there
//! is none); bookkeeping items are left alone unless a target names their kind. All or nothing:
//! when any step fails the run is marked failed, and the caller writes the items as they came in.
//!
//! **One item at a time.** A step's effect on a resource depends only on that resource, the
//! step and the schema, so applying every step to one resource and then to the next gives the
//! same result as applying each step to every resource in turn — and needs one resource's tree
//! in memory, not the package's. What is not per resource is handled globally: the schema (the
//! CRDs among the items, added with [`Engine::add_crd`] before any item is processed), the counts
//! behind the "selects nothing" results (reported by [`Engine::finish`]), and the resources a
//! merge3 update adds (made at the end, then put through the steps that follow it).
//!
//! **One guard around every patch** (`Engine::guarded`): whatever the step's type, the
//! resource's identity is put back unless the step may change it, the hosts' bookkeeping
//! annotations are put back, and a failure becomes a [`PatchFailure`] about the resource as it was.
//!
//! What it must not do: parse or write text, or know the wire format.

use crate::config::{Action, Conflicts, Plan, Select, Step};
use crate::error::{Cause, PatchFailure};
use crate::hash::{HashMap, HashSet};
use crate::krm::invariants::{self, Before};
use crate::krm::{FnResult, Item, Origin, Severity};
use crate::merge::merge2::Outcome;
use crate::merge::{apply, merge2, merge3};
use crate::patch::{json6902, jsonmerge};
use crate::schema::{Cursor, Schema};
use crate::select::bookkeeping;
use crate::select::identity::{Id, Meta};
use crate::select::target::Target;
use crate::yaml::anchors::{anchors_of, Admitted, AliasError, Anchors, Scope, Settle};
use crate::yaml::{self, Node};

/// What each step did, counted over all items.
#[derive(Clone, Debug, Default)]
struct Tally {
    /// Items its target selected.
    selected: usize,
    /// Items it changed or deleted.
    changed: usize,
    /// Without target: which of its documents found a resource.
    found: Vec<bool>,
}

/// Applies a plan to items, one item at a time.
pub struct Engine<'p> {
    plan: &'p Plan,
    schema: Schema,
    /// The functionConfig's identity, when it may be among the items (kpt passes it along).
    config: Option<&'p Id<'static>>,
    tallies: Vec<Tally>,
    results: Vec<FnResult>,
    failed: bool,
    /// The files of the items seen (kpt's path annotations), to give new items files of their own.
    files: HashSet<String>,
    /// The anchors of the document being read: one per item of a stream, one for all the items
    /// of a ResourceList or a `List` (`shared`).
    scope: Scope,
    shared: bool,
    /// What the scope found in the item being processed, and whether it was made whole.
    current: Admitted,
    localised: bool,
    /// The identities of the items written so far, to tell when a rename makes two resources
    /// one: by a hash of the identity, whether that item was renamed (and from what).
    seen: HashMap<u64, Seen>,
    hasher: crate::hash::State,
}

/// An item written out, as [`Engine::seen`] remembers it.
#[derive(Clone, Debug)]
struct Seen {
    /// The identity it had before a patch renamed it; `None`: named so from the start.
    renamed_from: Option<Box<Id<'static>>>,
}

/// What is left when every item has been processed.
pub struct Finish {
    /// Resources a merge3 update added, already through the steps after it; they go last.
    pub new_items: Vec<Item<'static>>,
    pub results: Vec<FnResult>,
    /// Some step failed: the items must be written as they came in.
    pub failed: bool,
}

/// The result of [`run`].
pub struct Run<'a> {
    pub items: Vec<Item<'a>>,
    pub results: Vec<FnResult>,
    pub failed: bool,
}

/// Applies every step of `plan` to `items` held in memory, each item a document of its own.
#[cfg(test)]
pub fn run<'a>(plan: &Plan, items: Vec<Item<'a>>, config: Option<&Id<'static>>) -> Run<'a> {
    run_document(plan, items, config, None)
}

/// [`run`]; with `wrapper`, the items are one document with the root mapping of the
/// ResourceList or `List` around them (its `items` entry empty meanwhile): anchors reach from
/// the part before the items into them, from item to item, and from them into the part after.
pub fn run_document<'a>(
    plan: &Plan,
    items: Vec<Item<'a>>,
    config: Option<&Id<'static>>,
    mut wrapper: Option<&mut Node<'a>>,
) -> Run<'a> {
    let mut engine = Engine::new(plan, config);
    let split = wrapper.as_deref().map(|root| {
        let n = root.entries().len();
        let at = root.position("items").unwrap_or(n);
        (at, n)
    });
    if let (Some(root), Some((at, _))) = (wrapper.as_deref_mut(), split) {
        engine.one_document();
        engine.wrapper_before(root, 0..at);
    }
    for item in items.iter().filter(|i| is_crd(&i.node)) {
        engine.add_crd(&item.node);
    }
    let mut out: Vec<Item<'a>> = items
        .into_iter()
        .filter_map(|i| engine.process(i))
        .collect();
    if let (Some(root), Some((at, n))) = (wrapper, split) {
        engine.wrapper_after(root, (at + 1).min(n)..n);
    }
    let finish = engine.finish();
    out.extend(finish.new_items);
    Run {
        items: out,
        results: finish.results,
        failed: finish.failed,
    }
}

/// A CustomResourceDefinition, whose schema feeds the merges of its kind.
pub fn is_crd(node: &Node<'_>) -> bool {
    let id = Id::of(node);
    id.kind == "CustomResourceDefinition" && id.api_version.starts_with("apiextensions.k8s.io/")
}

/// What a step did to an item.
enum Done {
    Untouched,
    Changed,
    Deleted,
}

/// What a walker left: the resource merged (with any merge3 conflicts it settled), or deleted.
enum Applied {
    Merged(Vec<merge3::Conflict>),
    Deleted,
}

/// What a walker needs besides the resource and the patch.
struct Ctx<'s, 'a> {
    schema: &'s Schema,
    /// The schema's position of the resource's root.
    root: Cursor,
    /// The resource's anchored nodes, for merges into its aliases.
    anchors: &'s Anchors<Node<'a>>,
}

impl<'p> Engine<'p> {
    pub fn new(plan: &'p Plan, config: Option<&'p Id<'static>>) -> Self {
        let tallies = plan
            .steps
            .iter()
            .map(|s| Tally {
                found: vec![false; identity_documents(&s.action)],
                ..Tally::default()
            })
            .collect();
        Engine {
            plan,
            schema: plan.schema.clone(),
            config,
            tallies,
            results: Vec::new(),
            failed: false,
            files: HashSet::default(),
            scope: Scope::new(),
            shared: false,
            current: Admitted::default(),
            localised: false,
            seen: HashMap::default(),
            hasher: crate::hash::State::default(),
        }
    }

    /// The items are one YAML document (a ResourceList's or a `List`'s): an item may alias an
    /// anchor of an earlier one. Without this call each item is a document of its own (a
    /// stream's).
    pub fn one_document(&mut self) {
        self.shared = true;
    }

    /// Reads the entries `range` of a wrapper's root mapping, the part of the document before
    /// its items (their anchors may be aliased by the items).
    pub fn wrapper_before(&mut self, root: &mut Node<'_>, range: std::ops::Range<usize>) {
        self.scope.admit_entries(root, range.clone());
        let how = Settle {
            document: true,
            untouched: true,
            revert: false,
        };
        if let Err(e) = self.scope.settle_entries(root, range, how) {
            self.fail_document(&e);
        }
    }

    /// Settles the entries `range` of a wrapper's root mapping, the part of the document after
    /// its items, once every item is written: an alias there of an anchor that a patch changed
    /// or deleted becomes a copy of what it read.
    pub fn wrapper_after(&mut self, root: &mut Node<'_>, range: std::ops::Range<usize>) {
        self.scope.admit_entries(root, range.clone());
        let how = Settle {
            document: true,
            untouched: true,
            revert: false,
        };
        if let Err(e) = self.scope.settle_entries(root, range, how) {
            self.fail_document(&e);
        }
    }

    /// An error about the document outside its items.
    fn fail_document(&mut self, e: &AliasError) {
        self.results.push(FnResult::new(
            Severity::Error,
            format!("the document around the items: {e}"),
        ));
        self.failed = true;
    }

    /// An engine for another share of the same items (another thread's): same plan and
    /// schema, nothing counted yet. Bring its counts back with [`Engine::absorb`].
    pub fn fork(&self) -> Engine<'p> {
        Engine {
            plan: self.plan,
            schema: self.schema.clone(),
            config: self.config,
            tallies: self
                .tallies
                .iter()
                .map(|t| Tally {
                    found: vec![false; t.found.len()],
                    ..Tally::default()
                })
                .collect(),
            results: Vec::new(),
            failed: false,
            files: HashSet::default(),
            scope: Scope::new(),
            shared: self.shared,
            current: Admitted::default(),
            localised: false,
            seen: HashMap::default(),
            hasher: self.hasher.clone(),
        }
    }

    /// Adds what a [`Engine::fork`] counted and reported, as if this engine had processed its
    /// items after its own.
    pub fn absorb(&mut self, other: Engine<'p>) {
        for (t, o) in self.tallies.iter_mut().zip(other.tallies) {
            t.selected += o.selected;
            t.changed += o.changed;
            for (f, of) in t.found.iter_mut().zip(o.found) {
                *f |= of;
            }
        }
        self.results.extend(other.results);
        self.failed |= other.failed;
        self.files.extend(other.files);
        for (h, seen) in other.seen {
            self.remember(h, seen, None);
        }
    }

    /// Learns the merge keys of a CustomResourceDefinition among the items. Call it for every
    /// CRD before processing any item.
    pub fn add_crd(&mut self, node: &Node<'_>) {
        let loaded = yaml::to_json(node)
            .map_err(|e| e.to_string())
            .and_then(|v| self.schema.add_crd(&v).map_err(|e| e.to_string()));
        if let Err(e) = loaded {
            self.results.push(
                FnResult::new(
                    Severity::Warning,
                    format!("CRD not used for merge keys: {e}"),
                )
                .about(node),
            );
        }
    }

    /// Applies every step, in order, to one item. `None`: a step deleted it.
    pub fn process<'a>(&mut self, mut item: Item<'a>) -> Option<Item<'a>> {
        if !self.shared {
            self.scope.reset();
        }
        self.current = self.scope.admit(&mut item.node, self.shared);
        self.localised = false;
        let mut item = self.process_from(item, 0)?;
        self.seal(&mut item);
        Some(item)
    }

    /// The item as it will be written, read in its document: its aliases read what they read
    /// (an alias of an anchor that a patch changed or deleted, here or in an earlier item,
    /// becomes a copy of it, which carries the anchor on), the copies made to patch it become
    /// their aliases again where nothing changed, and no other item written has its identity
    /// after a rename. An item that must change for that is written from its tree.
    fn seal(&mut self, item: &mut Item<'_>) {
        let scoped = self.current.aliases || self.current.anchors;
        if scoped && (self.shared || item.touched) {
            let how = Settle {
                document: true,
                untouched: !item.touched,
                revert: true,
            };
            match self.scope.settle(&mut item.node, how) {
                Ok(true) => item.touched = true,
                Ok(false) => {}
                Err(e) => {
                    let r = FnResult::new(
                        Severity::Error,
                        format!("its anchors, as the output reads them: {e}"),
                    )
                    .about(&item.node);
                    self.results.push(r);
                    self.failed = true;
                }
            }
        }
        self.note_identity(item);
    }

    /// Remembers the identity of an item written out; two items with one identity after a
    /// rename fail the run, naming both.
    fn note_identity(&mut self, item: &Item<'_>) {
        let id = Id::of(&item.node);
        let renamed_from = item
            .first_id
            .as_ref()
            .filter(|f| !f.same(&id))
            .map(|f| Box::new(f.clone()));
        let h = self.identity_hash(&id);
        let seen = Seen { renamed_from };
        self.remember(h, seen, Some(&item.node));
    }

    fn identity_hash(&self, id: &Id<'_>) -> u64 {
        use std::hash::BuildHasher;
        self.hasher.hash_one((
            id.api_version.as_ref(),
            id.kind.as_ref(),
            id.name.as_ref(),
            id.effective_namespace(),
        ))
    }

    /// Adds an item to [`Engine::seen`]; a second item with an identity that a rename gave one
    /// of the two is an error about it (`node`, when known).
    fn remember(&mut self, h: u64, seen: Seen, node: Option<&Node<'_>>) {
        let Some(other) = self.seen.get(&h) else {
            self.seen.insert(h, seen);
            return;
        };
        if other.renamed_from.is_none() && seen.renamed_from.is_none() {
            // Two resources with one identity in the input: not a patch's doing.
            return;
        }
        let how = |s: &Seen| match &s.renamed_from {
            Some(f) => format!("one renamed from {f}"),
            None => "one named so in the input".to_owned(),
        };
        let msg = format!(
            "two resources would have the same identity: {} and {}; a patch may not give a \
             resource the apiVersion, kind, name and namespace of another",
            how(&seen),
            how(other)
        );
        let mut r = FnResult::new(Severity::Error, msg);
        if let Some(n) = node {
            r = r.about(n);
        }
        self.results.push(r);
        self.failed = true;
    }

    fn process_from<'a>(&mut self, mut item: Item<'a>, first: usize) -> Option<Item<'a>> {
        if let Some((path, _)) = bookkeeping::file_of(&item.node) {
            self.files.insert(path.to_owned());
        }
        let plan = self.plan;
        for (k, step) in plan.steps.iter().enumerate().skip(first) {
            if !self.candidate(step, &item.node) {
                continue;
            }
            match self.step(k, step, &mut item) {
                Done::Untouched => {}
                Done::Changed => {
                    self.tallies[k].changed += 1;
                    item.touched = true;
                }
                Done::Deleted => {
                    self.tallies[k].changed += 1;
                    return None;
                }
            }
        }
        Some(item)
    }

    /// Items a step may touch: not bookkeeping (local-config resources, the Kptfile, the
    /// functionConfig itself), unless the step's target names a kind.
    fn candidate(&self, step: &Step, node: &Node<'_>) -> bool {
        let follow = |n| self.scope.follow(n);
        let bookkeeping = bookkeeping::is_bookkeeping_item_with(node, &follow)
            || self
                .config
                .is_some_and(|c| is_function_config(c, &Id::of_with(node, &follow)));
        !bookkeeping
            || step
                .action
                .target()
                .and_then(|t| t.spec().kind.as_deref())
                .is_some_and(|k| !k.is_empty())
    }

    /// Applies step `k` to an item, if it selects the item.
    fn step<'a>(&mut self, k: usize, step: &'p Step, item: &mut Item<'a>) -> Done {
        let options = &step.options;
        match &step.action {
            Action::Merge2 { select, docs } => {
                let Some(docs) = self.chosen(k, step, select, docs, item) else {
                    return Done::Untouched;
                };
                let opts = options.merge2();
                self.guarded(step, item, None, |node, ctx| {
                    for p in &docs {
                        match merge2::merge(node, p, ctx.schema, ctx.root, &opts, ctx.anchors) {
                            Ok(Outcome::Merged) => {}
                            Ok(Outcome::Deleted) => return Ok(Applied::Deleted),
                            Err(e) => return Err(Cause::Merge(e)),
                        }
                    }
                    Ok(Applied::Merged(Vec::new()))
                })
            }
            Action::JsonMerge { select, docs } => {
                let Some(docs) = self.chosen(k, step, select, docs, item) else {
                    return Done::Untouched;
                };
                self.guarded(step, item, None, |node, _| {
                    for p in &docs {
                        jsonmerge::merge(node, p).map_err(Cause::JsonMerge)?;
                    }
                    Ok(Applied::Merged(Vec::new()))
                })
            }
            Action::Apply { select, docs } => {
                let Some(docs) = self.chosen(k, step, select, docs, item) else {
                    return Done::Untouched;
                };
                // kubectl never guesses merge keys: apply follows kubectl, whatever
                // `inferMergeKeys` says.
                let opts = apply::Options { infer_keys: false };
                self.guarded(step, item, None, |node, ctx| {
                    for p in &docs {
                        apply::apply(node, p, ctx.schema, ctx.root, &opts, ctx.anchors)
                            .map_err(Cause::Merge)?;
                    }
                    Ok(Applied::Merged(Vec::new()))
                })
            }
            Action::Json6902 { target, ops } => {
                if !self.targets(k, step, target, item) {
                    return Done::Untouched;
                }
                let opts = options.json6902();
                self.guarded(step, item, None, |node, _| {
                    json6902::apply_with(node, ops, &opts).map_err(Cause::Json6902)?;
                    Ok(Applied::Merged(Vec::new()))
                })
            }
            Action::Merge3 {
                target,
                original,
                updated,
            } => {
                if !self.targets(k, step, target, item) {
                    return Done::Untouched;
                }
                self.merge3(step, item, original, updated, None)
            }
            Action::Update { original, updated } => self.update(k, step, original, updated, item),
        }
    }

    /// The documents of a merge step that apply to the item: all of them when the step's target
    /// selects it, those with the item's identity when the step has no target. `None` when
    /// nothing applies.
    fn chosen<'d>(
        &mut self,
        k: usize,
        step: &Step,
        select: &Select,
        docs: &'d [Node<'static>],
        item: &Item<'_>,
    ) -> Option<Vec<&'d Node<'static>>> {
        match select {
            Select::Target(target) => self
                .targets(k, step, target, item)
                .then(|| docs.iter().collect()),
            Select::OwnIdentity => {
                let mut chosen = Vec::new();
                for (d, doc) in docs.iter().enumerate() {
                    if is_for(&self.scope, item, &Id::of(doc)) {
                        self.tallies[k].found[d] = true;
                        chosen.push(doc);
                    }
                }
                (!chosen.is_empty()).then_some(chosen)
            }
        }
    }

    /// Whether `target` selects the item, now or by the name it had when an earlier step
    /// renamed it (counted). Inconsistent build annotations fail the step.
    fn targets(&mut self, k: usize, step: &Step, target: &Target, item: &Item<'_>) -> bool {
        let selected = {
            let scope = &self.scope;
            let meta = Meta::of_with(&item.node, &|n| scope.follow(n));
            match target.matches(&meta) {
                Ok(true) => Ok(true),
                Ok(false) => Ok(matches_first_id(target, &meta, item.first_id.as_ref())),
                Err(e) => Err(e),
            }
        };
        let selected = match selected {
            Ok(s) => s,
            Err(e) => {
                self.fail(failure(step, &item.node, None, Cause::PreviousIds(e)));
                return false;
            }
        };
        if selected {
            self.tallies[k].selected += 1;
        }
        selected
    }

    /// merge3 into one item: the change from `original` to `updated`, conflicts reported.
    fn merge3<'a>(
        &mut self,
        step: &Step,
        item: &mut Item<'a>,
        original: &Node<'static>,
        updated: &Node<'static>,
        document: Option<usize>,
    ) -> Done {
        let opts = step.options.merge3();
        self.guarded(step, item, document, |node, ctx| {
            merge3::merge(
                node,
                original,
                updated,
                ctx.schema,
                ctx.root,
                &opts,
                ctx.anchors,
            )
            .map(Applied::Merged)
            .map_err(Cause::Merge)
        })
    }

    /// A merge3 update, for one item: paired by identity with the updated and original
    /// documents; deleted upstream → deleted, both → merged. Additions are made by
    /// [`Engine::finish`].
    fn update<'a>(
        &mut self,
        k: usize,
        step: &Step,
        original: &[Node<'static>],
        updated: &[Node<'static>],
        item: &mut Item<'a>,
    ) -> Done {
        let Some(d) = updated
            .iter()
            .position(|u| is_for(&self.scope, item, &Id::of(u)))
        else {
            let deleted_upstream = original
                .iter()
                .any(|o| is_for(&self.scope, item, &Id::of(o)));
            return if deleted_upstream {
                Done::Deleted
            } else {
                Done::Untouched
            };
        };
        self.tallies[k].found[d] = true;
        let u = &updated[d];
        let empty = Node::map();
        let o = original
            .iter()
            .find(|o| Id::of(o).same(&Id::of(u)))
            .unwrap_or(&empty);
        self.merge3(step, item, o, u, Some(d + 1))
    }

    /// Runs `apply` on the item's node with what the walkers need, and keeps the promises every
    /// step keeps whatever its type, checked on its result ([`invariants`]): still a resource,
    /// identity (unless the step may change it) kept, bookkeeping put back (with a warning), an
    /// emptied annotations map dropped as kustomize drops it, every alias reading what it read
    /// ([`Scope::settle`]), the first identity remembered for later targets. A failure is
    /// reported about the resource as it was; the node may be half patched, and the run fails,
    /// so the caller writes the input back.
    fn guarded<'a>(
        &mut self,
        step: &Step,
        item: &mut Item<'a>,
        document: Option<usize>,
        apply: impl Fn(&mut Node<'a>, &Ctx<'_, 'a>) -> Result<Applied, Cause>,
    ) -> Done {
        if let Some(name) = self.current.unresolved.clone() {
            let e = AliasError::Unknown(name);
            self.fail(failure(step, &item.node, document, Cause::Anchors(e)));
            return Done::Untouched;
        }
        if self.current.aliases && !self.localised {
            // Made whole once, before its first patch: every alias becomes a copy, so that every
            // walker reads plain data (walkers read a place after changing another, decide
            // deletions and pair list elements by data, which an alias hides). Past the alias
            // budget (an alias bomb), only aliases of other items' anchors and on its identity
            // become copies, and the walkers follow the rest. The copies become their aliases
            // again when the item is written, where nothing changed them.
            if self.scope.localise_all(&mut item.node).is_err() {
                if let Err(e) = self.scope.localise(&mut item.node) {
                    self.fail(failure(step, &item.node, document, Cause::Anchors(e)));
                    return Done::Untouched;
                }
            }
            self.localised = true;
        }
        let before = Before::of(step, &item.node);
        let outcome = self.attempt(step, item, &before.id, &apply);
        let conflicts = match outcome {
            Ok(Applied::Deleted) => return Done::Deleted,
            Ok(Applied::Merged(conflicts)) => conflicts,
            Err(cause) => {
                let file = bookkeeping::file_of(&item.node).map(|(p, i)| (p.to_owned(), i));
                self.fail(PatchFailure {
                    step: step.index,
                    kind: step.kind(),
                    resource: before.id,
                    file,
                    document,
                    cause,
                });
                return Done::Untouched;
            }
        };
        self.report_conflicts(step, &item.node, conflicts);
        if self.current.aliases {
            let how = Settle {
                document: false,
                untouched: false,
                revert: false,
            };
            if let Err(e) = self.scope.settle(&mut item.node, how) {
                self.fail_before(step, &item.node, &before.id, document, Cause::Anchors(e));
                return Done::Untouched;
            }
        }
        let id = before.id.clone();
        match invariants::enforce(step, &mut item.node, before) {
            Ok(warnings) => self.results.extend(warnings),
            Err(broken) => {
                self.fail_before(step, &item.node, &id, document, Cause::Broken(broken));
                return Done::Untouched;
            }
        }
        if item.first_id.is_none() && !Id::of(&item.node).same(&id) {
            item.first_id = Some(id);
        }
        Done::Changed
    }

    /// Runs a walker on the item, with its anchors and the schema's position of its kind.
    fn attempt<'a>(
        &self,
        step: &Step,
        item: &mut Item<'a>,
        id: &Id<'static>,
        apply: &impl Fn(&mut Node<'a>, &Ctx<'_, 'a>) -> Result<Applied, Cause>,
    ) -> Result<Applied, Cause> {
        let _ = step;
        let anchors = anchors_of(&item.node).map_err(Cause::Anchors)?;
        let root = {
            let (g, v) = id.group_version();
            self.schema.root(g, v, &id.kind)
        };
        let ctx = Ctx {
            schema: &self.schema,
            root,
            anchors: &anchors,
        };
        apply(&mut item.node, &ctx)
    }

    /// A failure about the resource as it was before the step.
    fn fail_before(
        &mut self,
        step: &Step,
        node: &Node<'_>,
        was: &Id<'static>,
        document: Option<usize>,
        cause: Cause,
    ) {
        let file = bookkeeping::file_of(node).map(|(p, i)| (p.to_owned(), i));
        self.fail(PatchFailure {
            step: step.index,
            kind: step.kind(),
            resource: was.clone(),
            file,
            document,
            cause,
        });
    }

    fn fail(&mut self, failure: PatchFailure) {
        self.results.push(failure.to_result());
        self.failed = true;
    }

    fn report_conflicts(&mut self, step: &Step, node: &Node<'_>, conflicts: Vec<merge3::Conflict>) {
        let severity = match step.options.conflicts {
            Conflicts::Warn => Severity::Warning,
            Conflicts::Error => Severity::Error,
        };
        for c in conflicts {
            // When the run fails nothing changes: say what clashed, not how it was settled.
            let text = conflict_text(&c, severity != Severity::Error);
            let mut res = FnResult::new(severity, format!("{}: conflict: {}", step.label(), text))
                .about(node)
                .at_field(c.path.clone())
                .tag("patch", step.index.to_string());
            res.current = c.local.clone();
            res.proposed = c.upstream.clone();
            if severity == Severity::Error {
                self.failed = true;
            }
            self.results.push(res);
        }
    }

    /// Makes the additions of merge3 updates, then reports what each step did.
    pub fn finish(mut self) -> Finish {
        let plan = self.plan;
        let mut new_items: Vec<Item<'static>> = Vec::new();
        for (k, step) in plan.steps.iter().enumerate() {
            let Action::Update { original, updated } = &step.action else {
                continue;
            };
            for (d, doc) in updated.iter().enumerate() {
                let id = Id::of(doc);
                if self.tallies[k].found[d] || original.iter().any(|o| Id::of(o).same(&id)) {
                    continue;
                }
                let mut node: Node<'static> = doc.clone();
                // A resource a patch brings in says nothing about where a host keeps it: a
                // planted `config.kubernetes.io/path` would have `kpt fn sink` write it anywhere.
                for key in invariants::strip_host_bookkeeping(&mut node) {
                    self.results.push(
                        FnResult::new(
                            Severity::Warning,
                            format!(
                                "{}: document {}: {key} is a host's bookkeeping annotation, which \
                                 a resource a patch adds may not bring: dropped",
                                step.label(),
                                d + 1
                            ),
                        )
                        .about(&node)
                        .at_field(crate::path::Path::fields(&[
                            "metadata",
                            "annotations",
                            &key,
                        ]))
                        .tag("patch", step.index.to_string()),
                    );
                }
                self.place_new(&mut node);
                self.current = Admitted::default();
                self.localised = false;
                self.tallies[k].changed += 1;
                let item = Item {
                    node,
                    origin: Origin::New,
                    touched: true,
                    first_id: None,
                };
                if let Some(item) = self.process_from(item, k + 1) {
                    self.note_identity(&item);
                    new_items.push(item);
                }
            }
        }
        for (k, step) in plan.steps.iter().enumerate() {
            let tally = &self.tallies[k];
            let tag = step.index.to_string();
            match &step.action {
                Action::Update { .. } => {}
                action => {
                    if let Some(t) = action.target() {
                        if tally.selected == 0 {
                            self.results.push(
                                FnResult::new(
                                    Severity::Warning,
                                    format!("{}: target {t} selects no resource", step.label()),
                                )
                                .tag("patch", tag.clone()),
                            );
                        }
                    }
                    let docs = own_identity_documents(action);
                    for (d, found) in tally.found.iter().enumerate() {
                        if *found {
                            continue;
                        }
                        let msg = format!(
                            "{}: document {} ({}) matches no resource; give the patch a target, or check its apiVersion, kind, name and namespace",
                            step.label(),
                            d + 1,
                            docs.get(d).map(|n| Id::of(n).to_string()).unwrap_or_default()
                        );
                        self.results
                            .push(FnResult::new(Severity::Error, msg).tag("patch", tag.clone()));
                        self.failed = true;
                    }
                }
            }
            // When the run fails nothing is applied; saying otherwise would mislead.
            if tally.changed > 0 && !self.failed {
                self.results.push(
                    FnResult::new(
                        Severity::Info,
                        format!("{}: applied to {} resource(s)", step.label(), tally.changed),
                    )
                    .tag("patch", tag),
                );
            }
        }
        if plan.steps.is_empty() {
            self.results.push(FnResult::new(
                Severity::Info,
                "no patches in the functionConfig: nothing to do",
            ));
        }
        Finish {
            new_items,
            results: self.results,
            failed: self.failed,
        }
    }

    /// Gives a new item a file of its own when the items come from files (kpt).
    fn place_new(&mut self, node: &mut Node<'static>) {
        if self.files.is_empty() || !node.is_map() {
            return;
        }
        let id = Id::of(node);
        // A file name in the package's directory, whatever the kind and name say: a name like
        // `../../etc/x` must not become a path kpt writes outside the package.
        let base: String = format!("{}_{}", id.kind.to_ascii_lowercase(), id.name)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut path = format!("{base}.yaml");
        let mut n = 2;
        while self.files.contains(&path) {
            path = format!("{base}-{n}.yaml");
            n += 1;
        }
        if let Some(ann) = node
            .map_at("metadata")
            .and_then(|m| m.map_at("annotations"))
        {
            ann.set(bookkeeping::PATH, Node::string(path.clone()));
            ann.set(bookkeeping::INDEX, Node::string("0"));
        }
        self.files.insert(path);
    }
}

/// The documents of a step that select resources by their own identity (none when the step has
/// a target): what "matches no resource" is counted over.
fn own_identity_documents(action: &Action) -> &[Node<'static>] {
    match action {
        Action::Merge2 {
            select: Select::OwnIdentity,
            docs,
        }
        | Action::JsonMerge {
            select: Select::OwnIdentity,
            docs,
        }
        | Action::Apply {
            select: Select::OwnIdentity,
            docs,
        } => docs,
        Action::Update { updated, .. } => updated,
        _ => &[],
    }
}

/// How many documents of a step are counted as found or not.
fn identity_documents(action: &Action) -> usize {
    own_identity_documents(action).len()
}

/// A failure about the item as it is.
fn failure(step: &Step, node: &Node<'_>, document: Option<usize>, cause: Cause) -> PatchFailure {
    PatchFailure {
        step: step.index,
        kind: step.kind(),
        resource: Id::of(node).into_owned(),
        file: bookkeeping::file_of(node).map(|(p, i)| (p.to_owned(), i)),
        document,
        cause,
    }
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

/// The item is the functionConfig itself, which kpt passes among the items: same apiVersion,
/// kind and name.
fn is_function_config(config: &Id<'_>, id: &Id<'_>) -> bool {
    !config.kind.is_empty()
        && id.api_version == config.api_version
        && id.kind == config.kind
        && id.name == config.name
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

/// What clashed in a conflict, and, with `settled`, how the merge settled it.
fn conflict_text(c: &merge3::Conflict, settled: bool) -> String {
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
    let (clash, outcome) = match c.kind {
        merge3::ConflictKind::BothChanged => (
            format!(
                "changed locally to {} and upstream to {}",
                show(&c.local),
                show(&c.upstream)
            ),
            "took upstream",
        ),
        merge3::ConflictKind::DeletedUpstreamChangedLocally => (
            format!(
                "deleted upstream but changed locally (to {})",
                show(&c.local)
            ),
            "deleted",
        ),
        merge3::ConflictKind::ChangedUpstreamDeletedLocally => (
            format!(
                "changed upstream (to {}) but deleted locally",
                show(&c.upstream)
            ),
            "took upstream",
        ),
    };
    if settled {
        format!("{clash}; {outcome}")
    } else {
        clash
    }
}
