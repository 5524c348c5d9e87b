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

use crate::config::{Action, Compat, Conflicts, PatchKind, Plan, Select, Step};
use crate::error::{Cause, PatchFailure};
use crate::hash::HashSet;
use crate::krm::{FnResult, Item, Origin, Severity};
use crate::merge::merge2::Outcome;
use crate::merge::{apply, merge2, merge3};
use crate::patch::{json6902, jsonmerge};
use crate::path::{Path, Pattern};
use crate::schema::{Cursor, Schema};
use crate::select::bookkeeping;
use crate::select::identity::{Id, Meta};
use crate::select::places::{self, Place};
use crate::select::target::Target;
use crate::yaml::anchors::{anchors_of, Anchors};
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
    /// With `at:`: the places it found, over all items.
    places: usize,
    /// With `at:`: the items it found places in.
    found_in: usize,
    /// json6902: the places each operation reached (see `json6902::apply_counted`).
    reached: Vec<usize>,
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

/// Applies every step of `plan` to `items` held in memory.
pub fn run<'a>(plan: &Plan, items: Vec<Item<'a>>, config: Option<&Id<'static>>) -> Run<'a> {
    let mut engine = Engine::new(plan, config);
    for item in items.iter().filter(|i| is_crd(&i.node)) {
        engine.add_crd(&item.node);
    }
    let mut out: Vec<Item<'a>> = items
        .into_iter()
        .filter_map(|i| engine.process(i))
        .collect();
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
                reached: vec![0; operations(&s.action)],
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
        }
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
                    reached: vec![0; t.reached.len()],
                    ..Tally::default()
                })
                .collect(),
            results: Vec::new(),
            failed: false,
            files: HashSet::default(),
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
            t.places += o.places;
            t.found_in += o.found_in;
            for (r, or) in t.reached.iter_mut().zip(o.reached) {
                *r += or;
            }
        }
        self.results.extend(other.results);
        self.failed |= other.failed;
        self.files.extend(other.files);
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
    pub fn process<'a>(&mut self, item: Item<'a>) -> Option<Item<'a>> {
        self.process_from(item, 0)
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
        let bookkeeping = bookkeeping::is_bookkeeping_item(node)
            || self.config.is_some_and(|c| is_function_config(c, node));
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
                let Some(at) = self.places(k, step, step.action.at(), item) else {
                    return Done::Untouched;
                };
                let opts = options.merge2();
                self.guarded(step, item, None, |node, ctx| {
                    at.apply(node, ctx, |node, cursor| {
                        for p in &docs {
                            match merge2::merge(node, p, ctx.schema, cursor, &opts, ctx.anchors) {
                                Ok(Outcome::Merged) => {}
                                Ok(Outcome::Deleted) => return Ok(Applied::Deleted),
                                Err(e) => return Err(Cause::Merge(e)),
                            }
                        }
                        Ok(Applied::Merged(Vec::new()))
                    })
                })
            }
            Action::JsonMerge { select, docs } => {
                let Some(docs) = self.chosen(k, step, select, docs, item) else {
                    return Done::Untouched;
                };
                let Some(at) = self.places(k, step, step.action.at(), item) else {
                    return Done::Untouched;
                };
                self.guarded(step, item, None, |node, ctx| {
                    at.apply(node, ctx, |node, _| {
                        for p in &docs {
                            jsonmerge::merge(node, p).map_err(Cause::JsonMerge)?;
                        }
                        Ok(Applied::Merged(Vec::new()))
                    })
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
            Action::Json6902 { target, at, ops } => {
                if !self.targets(k, step, target, item) {
                    return Done::Untouched;
                }
                let Some(at) = self.places(k, step, at.as_ref(), item) else {
                    return Done::Untouched;
                };
                let opts = options.json6902();
                let mut reached = vec![0; ops.len()];
                // At a place, the pointers are below a `[*]`, with its rules for what is missing.
                let run = match at {
                    At::Root => json6902::apply_counted,
                    At::Places(_) => json6902::apply_at_place,
                };
                let done = self.guarded(step, item, None, |node, ctx| {
                    at.apply(node, ctx, |node, _| {
                        let counts = run(node, ops, &opts).map_err(Cause::Json6902)?;
                        for (r, n) in reached.iter_mut().zip(counts) {
                            *r += n;
                        }
                        Ok(Applied::Merged(Vec::new()))
                    })
                });
                if !matches!(done, Done::Changed) {
                    return done;
                }
                // Operations whose `[*]` all select nothing here changed nothing here.
                if !ops.is_empty() && reached.iter().all(|n| *n == 0) {
                    return Done::Untouched;
                }
                for (r, n) in self.tallies[k].reached.iter_mut().zip(reached) {
                    *r += n;
                }
                done
            }
            Action::Merge3 {
                target,
                at: None,
                original,
                updated,
            } => {
                if !self.targets(k, step, target, item) {
                    return Done::Untouched;
                }
                self.merge3(step, item, original, updated, None)
            }
            Action::Merge3 {
                target,
                at: Some(pattern),
                original,
                updated,
            } => {
                if !self.targets(k, step, target, item) {
                    return Done::Untouched;
                }
                let Some(at) = self.places(k, step, Some(pattern), item) else {
                    return Done::Untouched;
                };
                let opts = step.options.merge3();
                self.guarded(step, item, None, |node, ctx| {
                    at.apply(node, ctx, |node, cursor| {
                        merge3::merge(
                            node,
                            original,
                            updated,
                            ctx.schema,
                            cursor,
                            &opts,
                            ctx.anchors,
                        )
                        .map(Applied::Merged)
                        .map_err(Cause::Merge)
                    })
                })
            }
            Action::Update { original, updated } => self.update(k, step, original, updated, item),
        }
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
        match select {
            Select::Target(target) => self
                .targets(k, step, (**target).as_ref(), item)
                .then(|| docs.iter().collect()),
            Select::OwnIdentity => {
                let mut chosen = Vec::new();
                for (d, doc) in docs.iter().enumerate() {
                    if is_for(item, &Id::of(doc)) {
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
        let meta = Meta::of(&item.node);
        let selected = match target.matches(&meta) {
            Ok(true) => true,
            Ok(false) => matches_first_id(target, &meta, item.first_id.as_ref()),
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
        let Some(d) = updated.iter().position(|u| is_for(item, &Id::of(u))) else {
            let deleted_upstream = original.iter().any(|o| is_for(item, &Id::of(o)));
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
    /// step keeps whatever its type: identity (unless the step may change it) and bookkeeping
    /// put back, an emptied annotations map dropped as kustomize drops it, the first identity
    /// remembered for later targets. A failure is reported about the resource as it was; the
    /// node may be half patched, and the run fails, so the caller writes the input back.
    fn guarded<'a>(
        &mut self,
        step: &Step,
        item: &mut Item<'a>,
        document: Option<usize>,
        apply: impl FnOnce(&mut Node<'a>, &Ctx<'_, 'a>) -> Result<Applied, Cause>,
    ) -> Done {
        let before = Id::of(&item.node).into_owned();
        let saved = bookkeeping::bookkeeping(&item.node);
        // kustomize writes no empty annotations map at all (its last step sets every
        // resource's annotations, and an empty set removes the field): under its options an
        // empty map goes whoever emptied it; by default only one the patch emptied.
        let annotated =
            step.options.compat == Compat::Kustomize || bookkeeping::has_annotations(&item.node);
        let anchors = match anchors_of(&item.node) {
            Ok(a) => a,
            Err(e) => {
                self.fail(failure(step, &item.node, document, Cause::Anchors(e)));
                return Done::Untouched;
            }
        };
        let root = {
            let (g, v) = before.group_version();
            self.schema.root(g, v, &before.kind)
        };
        let ctx = Ctx {
            schema: &self.schema,
            root,
            anchors: &anchors,
        };
        let conflicts = match apply(&mut item.node, &ctx) {
            Ok(Applied::Deleted) => return Done::Deleted,
            Ok(Applied::Merged(conflicts)) => conflicts,
            Err(cause) => {
                let file = bookkeeping::file_of(&item.node).map(|(p, i)| (p.to_owned(), i));
                self.fail(PatchFailure {
                    step: step.index,
                    kind: step.kind(),
                    resource: before,
                    file,
                    document,
                    cause,
                });
                return Done::Untouched;
            }
        };
        self.report_conflicts(step, &item.node, conflicts);
        // A merge does not rename what it patches (kustomize's rule, with or without a target:
        // a patch found by the resource's original name carries that old name).
        if matches!(step.kind(), PatchKind::Merge2 | PatchKind::JsonMerge) {
            restore_identity(&mut item.node, step, &before);
        }
        bookkeeping::protect_bookkeeping(&mut item.node, saved);
        bookkeeping::drop_emptied_annotations(&mut item.node, annotated);
        if item.first_id.is_none() && !Id::of(&item.node).same(&before) {
            item.first_id = Some(before);
        }
        Done::Changed
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
                self.place_new(&mut node);
                self.tallies[k].changed += 1;
                let item = Item {
                    node,
                    origin: Origin::New,
                    touched: true,
                    first_id: None,
                };
                if let Some(item) = self.process_from(item, k + 1) {
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
            if !self.failed {
                self.results.extend(unreached(step, tally));
            }
            // When the run fails nothing is applied; saying otherwise would mislead.
            if tally.changed > 0 && !self.failed {
                let message = match step.action.at() {
                    Some(at) => format!(
                        "{}: {} in {}",
                        step.label(),
                        counted(tally.places, at.place_noun()),
                        counted(tally.found_in, "resource")
                    ),
                    None => format!("{}: applied to {} resource(s)", step.label(), tally.changed),
                };
                self.results
                    .push(FnResult::new(Severity::Info, message).tag("patch", tag));
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
        let base = format!("{}_{}", id.kind.to_ascii_lowercase(), id.name);
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

// ----- at: the places inside a resource a step applies at ----------------------------------

/// Where in a resource a step's walker runs.
enum At {
    /// At its root: a step without `at:`.
    Root,
    /// At each of these places (never none), in document order.
    Places(Vec<Place>),
}

impl At {
    /// Runs `walk` at the root, or at each place with that place's schema position. A failure
    /// at a place says which; conflicts are named from the root; places a strategic merge
    /// deletes (`$patch: delete`) are removed once all have been merged, last first.
    fn apply<'a>(
        &self,
        node: &mut Node<'a>,
        ctx: &Ctx<'_, 'a>,
        mut walk: impl FnMut(&mut Node<'a>, Cursor) -> Result<Applied, Cause>,
    ) -> Result<Applied, Cause> {
        let places = match self {
            At::Root => return walk(node, ctx.root),
            At::Places(places) => places,
        };
        let mut conflicts = Vec::new();
        let mut deleted = Vec::new();
        for p in places {
            // Each route was found on this tree, and a walker changes nothing outside its place.
            let Some(here) = places::reach(node, &p.route, ctx.anchors) else {
                continue;
            };
            match walk(here, p.cursor).map_err(|cause| at_place(&p.path, cause))? {
                Applied::Merged(found) => {
                    conflicts.extend(found.into_iter().map(|mut c| {
                        c.path = joined(&p.path, &c.path);
                        c
                    }));
                }
                Applied::Deleted => deleted.push(&p.route),
            }
        }
        for route in deleted.into_iter().rev() {
            places::remove(node, route, ctx.anchors);
        }
        Ok(Applied::Merged(conflicts))
    }
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

/// `1 container`, `14 containers`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Warnings for what a step selected and did not reach: an `at:` that finds no place in any
/// resource its target selects, a json6902 operation whose `[*]` select nothing in any. Only
/// for a run that did not fail: a failure stops the counting.
fn unreached(step: &Step, tally: &Tally) -> Vec<FnResult> {
    let mut out = Vec::new();
    if tally.selected == 0 {
        return out; // the target's own warning says it
    }
    let resources = counted(tally.selected, "resource");
    let tag = step.index.to_string();
    if let Some(at) = step.action.at() {
        if tally.found_in == 0 {
            let msg = format!(
                "{}: at {at} finds nothing in the {resources} the target selects",
                step.label()
            );
            out.push(FnResult::new(Severity::Warning, msg).tag("patch", tag.clone()));
            return out;
        }
    }
    if let Action::Json6902 { ops, at, .. } = &step.action {
        for (i, (op, n)) in ops.iter().zip(&tally.reached).enumerate() {
            let wild = at.is_some()
                || op.path().has_wildcard()
                || matches!(op, json6902::Op::Move { from, .. } | json6902::Op::Copy { from, .. } if from.has_wildcard());
            if wild && *n == 0 {
                let msg = format!(
                    "{}: op {i} ({} {}) reaches no place in the {resources} the target selects",
                    step.label(),
                    op.verb(),
                    op.path()
                );
                out.push(FnResult::new(Severity::Warning, msg).tag("patch", tag.clone()));
            }
        }
    }
    out
}

impl Engine<'_> {
    /// Where step `k` applies in the item: its root, or the places its `at:` names there.
    /// `None` when `at:` finds no place, or when the item does not have the shape it describes
    /// (the step fails).
    fn places(
        &mut self,
        k: usize,
        step: &Step,
        at: Option<&Pattern>,
        item: &Item<'_>,
    ) -> Option<At> {
        let Some(pattern) = at else {
            return Some(At::Root);
        };
        let id = Id::of(&item.node);
        let (g, v) = id.group_version();
        let root = self.schema.root(g, v, &id.kind);
        match places::find(&item.node, pattern, &self.schema, (g, v, &id.kind), root) {
            Ok(found) if found.is_empty() => None,
            Ok(found) => {
                self.tallies[k].places += found.len();
                self.tallies[k].found_in += 1;
                Some(At::Places(found))
            }
            Err(e) => {
                self.fail(failure(step, &item.node, None, Cause::Place(e)));
                None
            }
        }
    }
}

/// How many operations of a step are counted as reaching places or not.
fn operations(action: &Action) -> usize {
    match action {
        Action::Json6902 { ops, .. } => ops.len(),
        _ => 0,
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
fn is_for(item: &Item<'_>, want: &Id<'_>) -> bool {
    item.first_id.as_ref().is_some_and(|f| f.same(want)) || has_identity(&item.node, want)
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
fn is_function_config(config: &Id<'_>, node: &Node<'_>) -> bool {
    let id = Id::of(node);
    !config.kind.is_empty()
        && id.api_version == config.api_version
        && id.kind == config.kind
        && id.name == config.name
}

/// The resource has the identity `want`, now or originally (kustomize's build annotations).
fn has_identity(node: &Node<'_>, want: &Id<'_>) -> bool {
    let id = Id::of(node);
    if id.same(want) {
        return true;
    }
    match Meta::of(node).original_id() {
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

/// kustomize's rule for merge patches: the patch cannot rename the resource, change its kind,
/// or move it to another namespace, unless the options allow it.
fn restore_identity(node: &mut Node<'_>, step: &Step, was: &Id<'static>) {
    fn set(node: &mut Node<'_>, path: &[&str], value: &str) {
        if node.str_at(path).unwrap_or("") == value {
            return;
        }
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut at = &mut *node;
        for p in parents {
            match at.map_at(p) {
                Some(n) => at = n,
                None => return,
            }
        }
        if value.is_empty() {
            at.remove(last);
        } else {
            at.set(last, Node::string(value.to_owned()));
        }
    }
    if !step.options.allow_kind_change {
        set(node, &["apiVersion"], &was.api_version);
        set(node, &["kind"], &was.kind);
    }
    if !step.options.allow_name_change {
        set(node, &["metadata", "name"], &was.name);
        set(node, &["metadata", "namespace"], &was.namespace);
    }
}
