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

use crate::budget::{Added, Budget};
use crate::config::{Action, Conflicts, Plan, Select, Step};
use crate::error::{Cause, PatchFailure};
use crate::hash::{HashMap, HashSet};
use crate::krm::invariants::{self, Before};
use crate::krm::{FnResult, Item, Origin, Severity};
use crate::merge::merge2::Outcome;
use crate::merge::{apply, merge2, merge3};
use crate::patch::{json6902, jsonmerge};
use crate::path::{Path, Pattern};
use crate::schema::{check_json6902, check_patch, Cursor, Finding, Gvk, Schema};
use crate::select::bookkeeping;
use crate::select::identity::{Id, Meta};
use crate::select::places::{self, Place};
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
    /// With `at:`: the places it found, over all items.
    places: usize,
    /// With `at:`: the items it found places in.
    found_in: usize,
    /// json6902: the places each operation reached (see `json6902::patch_with`).
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
    /// The patches already checked against a kind's schema: (step, document) to the
    /// apiVersions and kinds (looked up by borrowed text, as this is asked for every item).
    checked: HashMap<(usize, usize), HashMap<String, HashSet<String>>>,
    /// The schema-check findings among `results`: each one's index there, and what was checked.
    findings: Vec<(usize, CheckKey)>,
    /// The anchors of the document being read: one per item of a stream, one for all the items
    /// of a ResourceList or a `List` (`shared`).
    scope: Scope,
    shared: bool,
    /// List kinds (`RoleList`, ...) being read inside the document around them: each adds two
    /// levels of nesting around its items, and those of a bookkeeping list are bookkeeping too.
    lists: usize,
    bookkeeping_lists: usize,
    /// What the scope found in the item being processed, and whether it was made whole.
    current: Admitted,
    localised: bool,
    /// The item being processed is as kyaml's walk leaves it, under the schema with the input's
    /// CRDs (`Some(true)`) or without (`Some(false)`): the last change made to it was a strategic
    /// merge with kustomize's options at its root, so the next such merge need not walk what its
    /// patch does not mention ([`merge2::merge_settled`]). `None` otherwise.
    settled: Option<bool>,
    /// Set by a step that leaves the item so.
    leaves_settled: Option<bool>,
    /// The identities of the items written so far, to tell when a rename makes two resources
    /// one: by a hash of the identity, whether that item was renamed (and from what).
    seen: HashMap<u64, Seen>,
    hasher: crate::hash::State,
}

/// What a schema check is done once for: a step's patch document, an apiVersion and a kind.
type CheckKey = ((usize, usize), String, String);

/// What an engine reported while reading a share of the items: see [`Engine::report`].
pub struct Report {
    results: Vec<FnResult>,
    seen: HashMap<u64, Seen>,
    findings: Vec<(usize, CheckKey)>,
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
    wrapper: Option<&mut Node<'a>>,
) -> Run<'a> {
    let mut engine = Engine::new(plan, config);
    for item in &items {
        crate::krm::for_each_resource(&item.node, &mut |r| {
            if is_crd(r) {
                engine.add_crd(r);
            }
        });
    }
    let mut out = engine.process_document(items, wrapper);
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

/// A patch to check against a kind's schema.
#[derive(Clone, Copy)]
enum Checked<'d> {
    /// The document (its index in the patch) of a merge, merge3 update or apply patch.
    Document(usize, &'d Node<'static>),
    /// A JSON patch's operations.
    Operations(&'d [json6902::Op<'static>]),
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
        let results = plan
            .steps
            .iter()
            .flat_map(|s| {
                s.warnings.iter().map(move |w| {
                    FnResult::new(Severity::Warning, format!("{}: {}", s.label(), w.message))
                        .at_field(w.field.clone())
                        .tag("patch", s.index.to_string())
                })
            })
            .collect();
        Engine {
            plan,
            schema: plan.schema.clone(),
            config,
            tallies,
            results,
            failed: false,
            files: HashSet::default(),
            checked: HashMap::default(),
            findings: Vec::new(),
            scope: Scope::new(),
            shared: false,
            lists: 0,
            bookkeeping_lists: 0,
            current: Admitted::default(),
            localised: false,
            settled: None,
            leaves_settled: None,
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

    /// Reads and settles the entries `range` of a wrapper's root mapping: the part of the
    /// document before its items (their anchors may be aliased by the items), or, once every
    /// item is written, the part after them (an alias there of an anchor that a patch changed or
    /// deleted becomes a copy of what it read). True when one of them must be written anew.
    pub fn wrapper_entries(&mut self, root: &mut Node<'_>, range: std::ops::Range<usize>) -> bool {
        self.scope.admit_entries(root, range.clone());
        let how = Settle {
            document: true,
            untouched: true,
            revert: false,
        };
        self.scope
            .settle_entries(root, range, how)
            .unwrap_or_else(|e| {
                self.fail_document(&e);
                false
            })
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
    /// schema, nothing counted yet. Bring back what it reported with [`Engine::absorb_report`]
    /// and what it counted with [`Engine::absorb_counts`].
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
            checked: HashMap::default(),
            findings: Vec::new(),
            scope: Scope::new(),
            shared: self.shared,
            lists: 0,
            bookkeeping_lists: 0,
            current: Admitted::default(),
            localised: false,
            settled: None,
            leaves_settled: None,
            seen: HashMap::default(),
            hasher: self.hasher.clone(),
        }
    }

    /// What this engine reported since the last call: its results, the identities it wrote, and
    /// which results are schema-check findings. A fork that reads several pieces of a stream
    /// gives one report per piece, so that the pieces can be put together in the stream's order
    /// ([`Engine::absorb_report`]) whichever fork read which.
    pub fn report(&mut self) -> Report {
        Report {
            results: std::mem::take(&mut self.results),
            seen: std::mem::take(&mut self.seen),
            findings: std::mem::take(&mut self.findings),
        }
    }

    /// Adds a fork's [`Report`] of a piece, as if this engine had read that piece after what it
    /// read or absorbed so far: a schema-check finding this engine already made (or absorbed from
    /// an earlier piece) is not made again, and an identity two pieces give two resources is an
    /// error, as it is within one piece.
    pub fn absorb_report(&mut self, report: Report) {
        let mut findings = report.findings.into_iter().peekable();
        for (i, r) in report.results.into_iter().enumerate() {
            let Some((_, key)) = findings.next_if(|(at, _)| *at == i) else {
                self.results.push(r);
                continue;
            };
            if self.check_once(&key) {
                self.findings.push((self.results.len(), key));
                self.results.push(r);
            }
        }
        for (h, seen) in report.seen {
            self.remember(h, seen, None);
        }
    }

    /// Adds what a fork counted, once its reports are absorbed: how many resources each step
    /// selected and changed, whether any failed, the files seen and the kinds checked.
    pub fn absorb_counts(&mut self, other: Engine<'p>) {
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
        self.failed |= other.failed;
        self.files.extend(other.files);
        for (key, versions) in other.checked {
            let mine = self.checked.entry(key).or_default();
            for (version, kinds) in versions {
                mine.entry(version).or_default().extend(kinds);
            }
        }
    }

    /// Records that a step's patch was checked against a kind; false when it already was.
    fn check_once(&mut self, (step, version, kind): &CheckKey) -> bool {
        self.checked
            .entry(*step)
            .or_default()
            .entry(version.clone())
            .or_default()
            .insert(kind.clone())
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

    /// Processes items held in memory; with `wrapper`, they are one document with the root
    /// mapping of the ResourceList or `List` around them (its `items` entry empty meanwhile):
    /// anchors reach from the part before the items into them, from item to item, and from them
    /// into the part after. Without it, each item is a document of its own. The engine reads
    /// documents apart again afterwards.
    pub fn process_document<'a>(
        &mut self,
        items: Vec<Item<'a>>,
        mut wrapper: Option<&mut Node<'a>>,
    ) -> Vec<Item<'a>> {
        let split = wrapper.as_deref().map(|root| {
            let n = root.entries().len();
            (root.position("items").unwrap_or(n), n)
        });
        if let (Some(root), Some((at, _))) = (wrapper.as_deref_mut(), split) {
            self.one_document();
            let _ = self.wrapper_entries(root, 0..at);
        }
        let out = items.into_iter().filter_map(|i| self.process(i)).collect();
        if let (Some(root), Some((at, n))) = (wrapper, split) {
            let _ = self.wrapper_entries(root, (at + 1).min(n)..n);
        }
        self.shared = false;
        self.scope.reset();
        out
    }

    /// Applies every step, in order, to one item. `None`: a step deleted it. A list kind's
    /// items are the resources ([`Engine::process_list`]).
    pub fn process<'a>(&mut self, mut item: Item<'a>) -> Option<Item<'a>> {
        if crate::krm::is_list_kind(&item.node) {
            return self.process_list(item);
        }
        if !self.shared {
            self.scope.reset();
        }
        self.current = self.scope.admit(&mut item.node, self.shared);
        self.localised = false;
        let mut item = self.process_from(item, 0)?;
        self.seal(&mut item);
        Some(item)
    }

    /// A list kind (`List`, `RoleList`, ...: [`crate::krm::is_list_kind`]) is not a resource:
    /// its items are, as kustomize reads them. Each goes through the steps as an item of its
    /// own, in the document the list is (its anchors reach the items, as a ResourceList's do),
    /// and the list is written back around what is left of them: touched when an item was
    /// patched or deleted, gone when a patch deleted every item it had. An item that is not a
    /// mapping fails the run, as kustomize refuses it. Results about an item name the list's
    /// file (kpt gives the items of a list no path of their own). A list that came as JSON is
    /// written as block YAML once an item changed.
    fn process_list<'a>(&mut self, mut item: Item<'a>) -> Option<Item<'a>> {
        let outer = !self.shared;
        if outer {
            self.scope.reset();
            self.shared = true;
        } else {
            self.lists += 1;
        }
        let file = bookkeeping::file_of(&item.node).map(|(p, i)| (p.to_owned(), i));
        if let Some((path, _)) = &file {
            self.files.insert(path.clone());
        }
        let bookkeeping = {
            let follow = |n| self.scope.follow(n);
            bookkeeping::is_bookkeeping_item_with(&item.node, &follow)
        };
        self.bookkeeping_lists += usize::from(bookkeeping);
        let first_result = self.results.len();
        let root = &mut item.node;
        let n = root.entries().len();
        let at = root.position("items").unwrap_or(n);
        let mut changed = self.wrapper_entries(root, 0..at);
        let members: Vec<Node<'a>> = root
            .get_mut("items")
            .and_then(Node::items_mut)
            .map(std::mem::take)
            .unwrap_or_default();
        let had = members.len();
        let mut kept = Vec::with_capacity(had);
        for (k, node) in members.into_iter().enumerate() {
            if !node.is_map() {
                self.results.push(FnResult::new(
                    Severity::Error,
                    super::not_a_resource(root, k),
                ));
                self.failed = true;
                kept.push(node);
                continue;
            }
            let member = Item {
                node,
                origin: Origin::Input(k),
                touched: false,
                first_id: None,
            };
            match self.process(member) {
                Some(m) => {
                    changed |= m.touched;
                    kept.push(m.node);
                }
                None => changed = true,
            }
        }
        let emptied = had > 0 && kept.is_empty();
        if let Some(list) = root.get_mut("items").and_then(Node::items_mut) {
            *list = kept;
        }
        changed |= self.wrapper_entries(root, (at + 1).min(n)..n);
        if changed && root.is_flow() {
            root.make_block();
        }
        if let Some(f) = &file {
            for r in self.results.iter_mut().skip(first_result) {
                if r.resource.is_some() && r.file.is_none() {
                    r.file = Some(f.clone());
                }
            }
        }
        self.bookkeeping_lists -= usize::from(bookkeeping);
        if outer {
            self.shared = false;
            self.scope.reset();
        } else {
            self.lists -= 1;
        }
        if emptied {
            return None;
        }
        item.touched |= changed;
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
        if item.touched {
            self.check_depth(item);
        }
        self.note_identity(item);
    }

    /// A patched item written out must read back: its nesting, with the two levels of the
    /// ResourceList or `List` around it when it has one, within the [`yaml::MAX_DEPTH`] levels
    /// every reader takes. A patch can pass it without any walker seeing an alias (a merge into
    /// a copy of an anchored node nests the copy where the alias stood), so it is checked on the
    /// item as it will be written.
    fn check_depth(&mut self, item: &Item<'_>) {
        let around = if self.shared { 2 } else { 0 } + 2 * self.lists;
        let depth = item.node.depth() + around;
        if depth <= yaml::MAX_DEPTH {
            return;
        }
        let r = FnResult::new(
            Severity::Error,
            format!(
                "the patched resource would nest {depth} levels deep{}, deeper than the {} levels a YAML reader takes",
                if around > 0 { " in its list" } else { "" },
                yaml::MAX_DEPTH
            ),
        )
        .about(&item.node)
        .at_field(deepest(&item.node));
        self.results.push(r);
        self.failed = true;
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
        // Whether the item is bookkeeping, read again only after a step changed it.
        let mut bookkeeping = None;
        self.settled = None;
        for (k, step) in plan.steps.iter().enumerate().skip(first) {
            let is = *bookkeeping.get_or_insert_with(|| self.is_bookkeeping(&item.node));
            if is && !names_a_kind(step) {
                continue;
            }
            self.leaves_settled = None;
            let done = self.step(k, step, &mut item);
            // Any change but such a merge's leaves the item unsettled; a run that failed walks
            // everything (its output is the input, and its errors are those a full walk finds).
            match self.leaves_settled.take().filter(|_| !self.failed) {
                Some(schema) => self.settled = Some(schema),
                None if matches!(done, Done::Changed) => self.settled = None,
                None => {}
            }
            match done {
                Done::Untouched => {}
                Done::Changed => {
                    self.tallies[k].changed += 1;
                    item.touched = true;
                    bookkeeping = None;
                }
                Done::Deleted => {
                    self.tallies[k].changed += 1;
                    return None;
                }
            }
        }
        Some(item)
    }

    /// Whether an item is bookkeeping (a local-config resource, the Kptfile, the functionConfig
    /// itself), which only a step whose target names a kind may touch ([`names_a_kind`]).
    fn is_bookkeeping(&self, node: &Node<'_>) -> bool {
        let follow = |n| self.scope.follow(n);
        self.bookkeeping_lists > 0
            || bookkeeping::is_bookkeeping_item_with(node, &follow)
            || self
                .config
                .is_some_and(|c| is_function_config(c, &Id::of_with(node, &follow)))
    }

    /// Applies step `k` to an item, if it selects the item.
    fn step<'a>(&mut self, k: usize, step: &'p Step, item: &mut Item<'a>) -> Done {
        let options = &step.options;
        match &step.action {
            Action::Merge2 { select, docs } => {
                let Some(docs) = self.chosen(k, step, select, docs, item) else {
                    return Done::Untouched;
                };
                let Some((at, mut budget)) =
                    self.places(k, step, step.action.at(), item, || weight_of(&docs))
                else {
                    return Done::Untouched;
                };
                let opts = options.merge2();
                // kyaml walks the whole resource at each merge with kustomize's options: after
                // one at the root of a resource without aliases, the resource is as the walk
                // leaves it until something else changes it.
                let kyaml_root = opts.kustomize && matches!(at, At::Root) && !self.current.aliases;
                let schema = options.crd_merge_keys;
                let settled = kyaml_root && self.settled == Some(schema);
                let mut walked = false;
                let done = self.guarded(step, item, None, |node, ctx| {
                    at.visit(node, ctx, &mut budget, |node, cursor, _| {
                        for p in &docs {
                            let merged = merge2::merge_settled(
                                node,
                                p,
                                ctx.schema,
                                cursor,
                                &opts,
                                ctx.anchors,
                                settled,
                            );
                            match merged {
                                Ok(Outcome::Merged) => {}
                                Ok(Outcome::Deleted) => return Ok(Applied::Deleted),
                                Err(e) => return Err(Cause::Merge(e)),
                            }
                        }
                        walked = true;
                        Ok(Applied::Merged(Vec::new()))
                    })
                });
                if walked && kyaml_root {
                    self.leaves_settled = Some(schema);
                }
                done
            }
            Action::JsonMerge { select, docs } => {
                let Some(docs) = self.chosen(k, step, select, docs, item) else {
                    return Done::Untouched;
                };
                let Some((at, mut budget)) =
                    self.places(k, step, step.action.at(), item, || weight_of(&docs))
                else {
                    return Done::Untouched;
                };
                self.guarded(step, item, None, |node, ctx| {
                    at.visit(node, ctx, &mut budget, |node, _, _| {
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
                if at.is_none() {
                    // Pointers below an `at:` place are not paths from the kind's root.
                    self.check(step, item, Checked::Operations(ops));
                }
                // JSON patch spends what it adds at each place itself.
                let Some((at, mut budget)) = self.places(k, step, at.as_ref(), item, || 0) else {
                    return Done::Untouched;
                };
                let opts = options.json6902();
                let mut reached = vec![0; ops.len()];
                // At a place, the pointers are below a `[*]`, with its rules for what is missing.
                let run = match at {
                    At::Root => json6902::patch_with,
                    At::Places { .. } => json6902::patch_at_place,
                };
                let done = self.guarded(step, item, None, |node, ctx| {
                    at.visit(node, ctx, &mut budget, |node, _, budget| {
                        let counts = run(node, ops, &opts, budget).map_err(Cause::Json6902)?;
                        for (r, n) in reached.iter_mut().zip(counts) {
                            *r += n;
                        }
                        Ok(Applied::Merged(Vec::new()))
                    })
                });
                // Places an operation reached count whether or not it changed them (a
                // `replace` with the value already there reaches its place).
                let none_reached = reached.iter().all(|n| *n == 0);
                for (r, n) in self.tallies[k].reached.iter_mut().zip(reached) {
                    *r += n;
                }
                // Operations whose `[*]` all select nothing here changed nothing here.
                if !ops.is_empty() && none_reached {
                    return Done::Untouched;
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
                self.check(step, item, Checked::Document(0, updated));
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
                let Some((at, mut budget)) =
                    self.places(k, step, Some(pattern), item, || updated.weight())
                else {
                    return Done::Untouched;
                };
                let opts = step.options.merge3();
                self.guarded(step, item, None, |node, ctx| {
                    at.visit(node, ctx, &mut budget, |node, cursor, _| {
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
                    if is_for(&self.scope, item, &Id::of(doc)) {
                        self.tallies[k].found[d] = true;
                        chosen.push((d, doc));
                    }
                }
                if chosen.is_empty() {
                    return None;
                }
                self.tallies[k].selected += 1;
                chosen
            }
        };
        // A patch at an `at:` place is not a partial resource: the kind's schema does not
        // describe it from its root.
        if step.action.at().is_none() {
            for &(d, doc) in &chosen {
                self.check(step, item, Checked::Document(d, doc));
            }
        }
        Some(chosen.into_iter().map(|(_, doc)| doc).collect())
    }

    /// Whether `target` selects the item, now or by the name it had when an earlier step
    /// renamed it (counted). Inconsistent build annotations fail the step.
    fn targets(&mut self, k: usize, step: &Step, target: &Target, item: &Item<'_>) -> bool {
        let selected = {
            let scope = &self.scope;
            let follow = |n| scope.follow(n);
            // Most targets rule most resources out by type: then nothing else is read.
            let id = Id::of_with(&item.node, &follow);
            if !target.matches_type(&id) {
                return false;
            }
            let meta = Meta::of_id(id, &item.node, &follow);
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
        self.check(step, item, Checked::Document(d, u));
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
        apply: impl FnOnce(&mut Node<'a>, &Ctx<'_, 'a>) -> Result<Applied, Cause>,
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
        // What the patch is compared with: one that changes nothing leaves the item untouched
        // (written as it came, and not counted as changed).
        let pristine = item.node.clone();
        let outcome = self.attempt(step, item, &before.id, apply);
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
        if item.node.keep_unchanged_source(&pristine) {
            return Done::Untouched;
        }
        if item.first_id.is_none() && !Id::of(&item.node).same(&id) {
            item.first_id = Some(id);
        }
        Done::Changed
    }

    /// The schema a step merges with: with the CRDs of the input, unless the step asks for
    /// kustomize's behaviour, which reads none.
    fn schema_for(&self, step: &Step) -> &Schema {
        if step.options.crd_merge_keys {
            &self.schema
        } else {
            &self.plan.schema
        }
    }

    /// Checks a step's patch against the schema of the item's kind, once per step, document and
    /// kind: unknown fields, values of the wrong type, required fields removed. Findings are
    /// warnings, or errors under `options.strict`.
    fn check(&mut self, step: &Step, item: &Item<'_>, patch: Checked<'_>) {
        let id = Id::of(&item.node);
        let document = match patch {
            Checked::Document(d, _) => d,
            Checked::Operations(_) => 0,
        };
        let key = (step.index, document);
        let done = self
            .checked
            .get(&key)
            .and_then(|v| v.get(id.api_version.as_ref()))
            .is_some_and(|k| k.contains(id.kind.as_ref()));
        if done {
            return;
        }
        let gvk = Gvk::new(&id.api_version, &id.kind);
        let schema = self.schema_for(step);
        let findings: Vec<(Option<usize>, Finding)> = match patch {
            Checked::Document(_, doc) => check_patch(schema, gvk, doc)
                .into_iter()
                .map(|f| (None, f))
                .collect(),
            Checked::Operations(ops) => {
                check_json6902(schema, gvk, ops.iter().map(json6902::Op::pointers))
                    .into_iter()
                    .map(|f| (Some(f.op), f.finding))
                    .collect()
            }
        };
        let severity = if step.options.strict {
            Severity::Error
        } else {
            Severity::Warning
        };
        for (op, finding) in findings {
            let place = op.map(|i| format!("op {i}: ")).unwrap_or_default();
            let mut res = FnResult::new(
                severity,
                format!("{}: {place}{}", step.label(), finding.kind),
            )
            .about(&item.node)
            .at_field(finding.path.clone())
            .tag("patch", step.index.to_string())
            .tag("check", "schema");
            if self.documents(step) > 1 {
                res = res.tag("document", (document + 1).to_string());
            }
            let checked = (key, id.api_version.to_string(), id.kind.to_string());
            self.findings.push((self.results.len(), checked));
            self.results.push(res);
            self.failed |= severity == Severity::Error;
        }
        self.check_once(&(key, id.api_version.to_string(), id.kind.to_string()));
    }

    /// How many documents a step's patch has.
    fn documents(&self, step: &Step) -> usize {
        match &step.action {
            Action::Merge2 { docs, .. }
            | Action::JsonMerge { docs, .. }
            | Action::Apply { docs, .. } => docs.len(),
            Action::Update { updated, .. } => updated.len(),
            Action::Json6902 { .. } | Action::Merge3 { .. } => 1,
        }
    }

    /// Runs a walker on the item, with its anchors and the schema's position of its kind.
    fn attempt<'a>(
        &self,
        step: &Step,
        item: &mut Item<'a>,
        id: &Id<'static>,
        apply: impl FnOnce(&mut Node<'a>, &Ctx<'_, 'a>) -> Result<Applied, Cause>,
    ) -> Result<Applied, Cause> {
        let anchors = anchors_of(&item.node).map_err(Cause::Anchors)?;
        let schema = self.schema_for(step);
        let root = {
            let (g, v) = id.group_version();
            schema.root(g, v, &id.kind)
        };
        let ctx = Ctx {
            schema,
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
            let missed = if self.failed {
                Vec::new()
            } else {
                unreached(step, tally)
            };
            // A patch that found its resources and changed none (and no warning says why): they
            // already hold what it says (a render run a second time, a patch repeating the
            // current values).
            let said = !missed.is_empty();
            self.results.extend(missed);
            if tally.changed == 0 && tally.selected > 0 && !said && !self.failed {
                let message = format!(
                    "{}: changed nothing: what it says is already so in the {} it selects",
                    step.label(),
                    counted(tally.selected, "resource")
                );
                self.results
                    .push(FnResult::new(Severity::Info, message).tag("patch", tag.clone()));
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

// ----- at: the places inside a resource a step applies at ----------------------------------

/// Where in a resource a step's walker runs.
enum At {
    /// At its root: a step without `at:`.
    Root,
    /// At each of these places (never none), in document order. `per_place`: what the walker
    /// adds at each at most (its patch's weight), spent from the budget when they were found.
    Places {
        places: Vec<Place>,
        per_place: usize,
    },
}

impl At {
    /// Runs `walk` at the root, or at each place with that place's schema position. A failure
    /// at a place says which; conflicts are named from the root; places a strategic merge
    /// deletes (`$patch: delete`) are removed once all have been merged, last first.
    ///
    /// `budget` is the step's on this resource: `walk` may spend from it (JSON patch does), and
    /// at each place what the copies of aliases on the way to it weigh is spent, and so is what
    /// the place grew by beyond what the walker spent and what was spent for it when it was
    /// found (a merge into an alias there copies the alias's anchored node).
    fn visit<'a>(
        &self,
        node: &mut Node<'a>,
        ctx: &Ctx<'_, 'a>,
        budget: &mut Budget,
        mut walk: impl FnMut(&mut Node<'a>, Cursor, &mut Budget) -> Result<Applied, Cause>,
    ) -> Result<Applied, Cause> {
        let (places, per_place) = match self {
            At::Root => return walk(node, ctx.root, budget),
            At::Places { places, per_place } => (places, *per_place),
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
            let applied = walk(here, p.cursor, budget).map_err(|cause| at_place(&p.path, cause))?;
            let grew = here.weight().saturating_sub(weight);
            let paid = (budget.grown() - spent).saturating_add(per_place);
            budget
                .grow(grew.saturating_sub(paid), Added::AtPlaces)
                .map_err(fail)?;
            match applied {
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
    ) -> Option<(At, Budget)> {
        let mut budget = Budget::new();
        let Some(pattern) = at else {
            return Some((At::Root, budget));
        };
        // The resource as it is before the patch: what it may grow by.
        budget.measure(&item.node);
        let per_place = per_place();
        let id = Id::of(&item.node);
        let (g, v) = id.group_version();
        let root = self.schema.root(g, v, &id.kind);
        let kind = (g, v, id.kind.as_ref());
        match places::find(
            &item.node,
            pattern,
            &self.schema,
            kind,
            root,
            &mut budget,
            per_place,
        ) {
            Ok(found) if found.is_empty() => None,
            Ok(found) => {
                self.tallies[k].places += found.len();
                self.tallies[k].found_in += 1;
                Some((
                    At::Places {
                        places: found,
                        per_place,
                    },
                    budget,
                ))
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

/// The path to the most deeply nested collection of `node` (computed only for an error).
fn deepest(node: &Node<'_>) -> Path {
    use crate::path::Seg;
    let mut path = Path::root();
    let mut at = node;
    loop {
        let entry = at
            .entries()
            .iter()
            .max_by_key(|e| e.value.depth())
            .map(|e| (Seg::field(e.key.as_str().unwrap_or("?")), &e.value));
        let item = at
            .items()
            .iter()
            .enumerate()
            .max_by_key(|(_, n)| n.depth())
            .map(|(i, n)| (Seg::Index(i), n));
        match entry.or(item) {
            Some((seg, next)) if next.depth() > 0 => {
                path.0.push(seg);
                at = next;
            }
            _ => return path,
        }
    }
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
/// Whether a step's target names a kind, which lets it touch bookkeeping items.
fn names_a_kind(step: &Step) -> bool {
    step.action
        .target()
        .and_then(|t| t.spec().kind.as_deref())
        .is_some_and(|k| !k.is_empty())
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_stream;

    fn node(text: &str) -> Node<'static> {
        parse_stream(text)
            .unwrap()
            .remove(0)
            .root
            .unwrap()
            .into_owned()
    }

    fn plan(patches: &str) -> Plan {
        let config = node(&format!(
            "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nspec:\n  patches:\n{patches}"
        ));
        crate::config::plan(&config, None).unwrap()
    }

    fn items(texts: &[&str]) -> Vec<Item<'static>> {
        texts
            .iter()
            .enumerate()
            .map(|(n, t)| Item {
                node: node(t),
                origin: Origin::Input(n),
                touched: false,
                first_id: None,
            })
            .collect()
    }

    const WEB: &str =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\n";
    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n";

    #[test]
    fn a_step_touches_only_what_it_selects_and_says_so() {
        let p = plan("  - target: {kind: Deployment}\n    patch: 'spec: {replicas: 3}'\n");
        let run = run(&p, items(&[WEB, CM]), None);
        assert!(!run.failed);
        assert!(run.items[0].touched && !run.items[1].touched);
        assert_eq!(run.items[0].node.str_at(&["spec", "replicas"]), Some("3"));
        let messages: Vec<_> = run.results.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(messages, ["patch[0] (merge2): applied to 1 resource(s)"]);
    }

    #[test]
    fn a_target_that_selects_nothing_is_a_warning_and_a_document_that_finds_nothing_an_error() {
        let p = plan(
            "  - target: {kind: Service}\n    patch: 'spec: {x: 1}'\n  - patch: {apiVersion: v1, kind: ConfigMap, metadata: {name: other}, data: {b: '2'}}\n",
        );
        let run = run(&p, items(&[CM]), None);
        assert!(run.failed);
        let got: Vec<_> = run
            .results
            .iter()
            .map(|r| (r.severity, r.message.clone()))
            .collect();
        assert_eq!(got[0].0, Severity::Warning);
        assert!(got[0].1.contains("selects no resource"), "{got:?}");
        assert_eq!(got[1].0, Severity::Error);
        assert!(got[1].1.contains("matches no resource"), "{got:?}");
    }

    #[test]
    fn the_guard_puts_identity_and_bookkeeping_back() {
        let p = plan(
            "  - target: {kind: ConfigMap}\n    patch: |\n      metadata:\n        name: renamed\n        annotations:\n          config.kubernetes.io/path: elsewhere.yaml\n",
        );
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    config.kubernetes.io/path: c.yaml\n";
        let run = run(&p, items(&[cm]), None);
        assert!(!run.failed, "{:?}", run.results);
        let n = &run.items[0].node;
        assert_eq!(n.str_at(&["metadata", "name"]), Some("c"));
        assert_eq!(
            n.str_at(&["metadata", "annotations", "config.kubernetes.io/path"]),
            Some("c.yaml")
        );
    }

    #[test]
    fn a_failure_names_the_patch_and_the_resource_as_it_was() {
        let p =
            plan("  - target: {kind: ConfigMap}\n    patch: '[{op: remove, path: /data/zz}]'\n");
        let run = run(&p, items(&[CM]), None);
        assert!(run.failed);
        let r = &run.results[0];
        assert_eq!(r.severity, Severity::Error);
        assert_eq!(
            r.resource.as_ref().map(|id| id.to_string()).as_deref(),
            Some("ConfigMap c")
        );
        assert!(
            r.message
                .starts_with("patch[0] (json6902): op 0 (remove /data/zz)"),
            "{}",
            r.message
        );
    }

    #[test]
    fn bookkeeping_items_are_selected_only_by_a_target_naming_their_kind() {
        let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: l\n  annotations: {config.kubernetes.io/local-config: 'true'}\ndata: {a: '1'}\n";
        let any = plan("  - target: {}\n    patch: 'data: {b: \"2\"}'\n");
        assert!(!run(&any, items(&[local]), None).items[0].touched);
        let named = plan("  - target: {kind: ConfigMap}\n    patch: 'data: {b: \"2\"}'\n");
        assert!(run(&named, items(&[local]), None).items[0].touched);
    }

    /// A list kind's items are the resources, at any depth; the list is
    /// written back around them, touched only when an item changed, gone when every item was
    /// deleted.
    #[test]
    fn a_list_kinds_items_are_resources() {
        let roles = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleList\nmetadata:\n  annotations: {config.kubernetes.io/path: roles.yaml, config.kubernetes.io/index: '0'}\nitems:\n- {apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: a, namespace: x}, rules: []}\n- apiVersion: v1\n  kind: List\n  items:\n  - {apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: b, namespace: x}, rules: []}\n";
        let p = plan("  - target: {kind: Role, name: b}\n    patch: '{rules: [{verbs: [get]}]}'\n");
        let run = run(&p, items(&[roles, CM]), None);
        assert!(!run.failed, "{:?}", run.results);
        assert!(run.items[0].touched && !run.items[1].touched);
        let list = &run.items[0].node;
        assert_eq!(list.str_at(&["kind"]), Some("RoleList"));
        let nested = &list.get("items").unwrap().items()[1]
            .get("items")
            .unwrap()
            .items()[0];
        assert!(nested.get("rules").unwrap().items()[0]
            .get("verbs")
            .is_some());
        assert!(list.get("items").unwrap().items()[0]
            .get("rules")
            .unwrap()
            .items()
            .is_empty());
        let messages: Vec<_> = run.results.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(messages, ["patch[0] (merge2): applied to 1 resource(s)"]);
        // A target for the list itself selects nothing: it is not a resource.
        let p = plan("  - target: {kind: RoleList}\n    patch: '{metadata: {labels: {x: y}}}'\n");
        let r = super::run(&p, items(&[roles]), None);
        assert!(!r.items[0].touched);
        assert!(
            r.results[0].message.contains("selects no resource"),
            "{:?}",
            r.results
        );
        // Results about an item name the list's file.
        let p = plan("  - target: {kind: Role, name: a}\n    type: json6902\n    patch: '[{op: remove, path: /nope}]'\n");
        let r = super::run(&p, items(&[roles]), None);
        assert!(r.failed);
        let err = r
            .results
            .iter()
            .find(|r| r.severity == Severity::Error)
            .unwrap();
        assert_eq!(err.file, Some(("roles.yaml".to_owned(), 0)));
        assert_eq!(
            err.resource.as_ref().map(ToString::to_string).as_deref(),
            Some("Role x/a")
        );
        // Every item deleted: the list goes too; an item that is not a resource fails the run.
        let p = plan("  - target: {kind: Role}\n    patch: '$patch: delete'\n");
        assert!(super::run(&p, items(&[roles, CM]), None).items.len() == 1);
        let bad = "apiVersion: v1\nkind: List\nitems: [1]\n";
        let r = super::run(&p, items(&[bad]), None);
        assert!(r.failed);
        assert!(
            r.results[0].message.contains("items[0] is not a resource"),
            "{:?}",
            r.results
        );
        // Without `items` a `*List` kind is a resource like any other.
        let acl =
            "apiVersion: example.com/v1\nkind: AccessList\nmetadata: {name: acl}\nspec: {x: 1}\n";
        let p = plan("  - target: {kind: AccessList}\n    patch: '{spec: {x: 2}}'\n");
        assert!(super::run(&p, items(&[acl]), None).items[0].touched);
    }

    /// The items of a `local-config` list are bookkeeping too: only a target naming their kind
    /// selects them.
    #[test]
    fn the_items_of_a_bookkeeping_list_are_bookkeeping() {
        let local = "apiVersion: v1\nkind: ConfigMapList\nmetadata:\n  annotations: {config.kubernetes.io/local-config: 'true'}\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: l}, data: {a: '1'}}\n";
        let any = plan("  - target: {}\n    patch: 'data: {b: \"2\"}'\n");
        assert!(!run(&any, items(&[local]), None).items[0].touched);
        let named = plan("  - target: {kind: ConfigMap}\n    patch: 'data: {b: \"2\"}'\n");
        assert!(run(&named, items(&[local]), None).items[0].touched);
    }
}
