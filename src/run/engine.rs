//! The engine: applies the plan's steps to the items, one item at a time, and reports what
//! happened.
//!
//! Each step sees the output of the previous one. Selection follows doc/GUIDE.md "Selecting
//! resources": a target selects by kustomize's rules (a warning when it selects nothing);
//! without one, each patch document selects the items with its own identity (an error when there
//! is none); bookkeeping items are left alone unless a target names their kind. All or nothing:
//! when any step fails the run is marked failed, and the caller writes the items as they came in.
//!
//! **One item at a time.** A step's effect on a resource depends only on that resource, the
//! step and the schema, so applying every step to one resource and then to the next gives the
//! same result as applying each step to every resource in turn — and needs one resource's tree
//! in memory, not the package's. What is not per resource is handled globally: the schema (the
//! CRDs among the items, learned by the [`Setup`] before any item is processed), the counts
//! behind the "selects nothing" results (reported by [`Engine::finish`]), and the resources a
//! merge3 update adds (made at the end, then put through the steps that follow it).
//!
//! The engine's state is four values, each with its own module: the `Report` (results and
//! counts), the `Aliases` of the document being read, the `Renames` written so far, and
//! kyaml's settled state of the item being processed. A [`Setup`] (the plan, the schema with
//! the input's CRDs, the functionConfig's identity) is shared by every engine of a run: an
//! engine for another share of the items ([`Engine::fork`]) is a fresh state over the same
//! setup, absorbed back in the input's order ([`Engine::absorb`]).
//!
//! What it must not do: parse or write text, or know the wire format beyond list kinds.

use crate::config::{Action, Plan};
use crate::krm::{self, FnResult, Item, Origin, Severity};
use crate::path::Path;
use crate::run::aliases::Aliases;
use crate::run::pairing::Sides;
use crate::run::renames::Renames;
use crate::run::report::Report;
use crate::schema::Schema;
use crate::select::bookkeeping;
use crate::select::identity::Id;
use crate::yaml::{self, Node};

/// What every engine of a run shares: the plan, the schema with the input's CRDs (learned
/// before any item is processed), and the functionConfig's identity.
pub(crate) struct Setup<'p> {
    pub plan: &'p Plan,
    /// The plan's schema and the CRDs of the input.
    pub schema: Schema,
    /// The functionConfig's identity, when it may be among the items (kpt passes it along).
    pub config: Option<&'p Id<'static>>,
    /// One hasher for the identities every engine of the run writes, so that they agree.
    pub hasher: crate::hash::State,
    /// Per step, for a merge3 update: its documents indexed by key (`run/pairing.rs`).
    pub updates: Vec<Option<Sides<'p>>>,
    /// What learning the CRDs said (a CRD that cannot be used), and the documents of an update
    /// that name one resource twice (an error each).
    warnings: Vec<FnResult>,
    /// Per update step (by [`crate::config::Step::index`]), each updated document's schema
    /// findings for the kind it names, checked ahead on every core ([`Setup::check_ahead`]);
    /// the check of a resource of that kind against the document takes them from here.
    pub checked_ahead: std::collections::HashMap<usize, Vec<CheckedAhead>>,
}

/// A patch document's schema findings, for the kind the document names.
#[derive(Debug)]
pub(crate) struct CheckedAhead {
    pub api_version: String,
    pub kind: String,
    pub findings: Vec<crate::schema::Finding>,
}

/// The documents of an update from which [`Setup::check_ahead`] is worth it, unless the
/// pieces are forced (`KRM_MERGE_PIECES`).
const CHECK_AHEAD: usize = 256;

impl<'p> Setup<'p> {
    pub(crate) fn new(plan: &'p Plan, config: Option<&'p Id<'static>>) -> Setup<'p> {
        let mut warnings = Vec::new();
        let updates = plan
            .steps
            .iter()
            .map(|step| {
                let Action::Update { original, updated } = &step.action else {
                    return None;
                };
                let sides = Sides::new(original, updated);
                for (field, docs, index) in [
                    ("original", original, &sides.original),
                    ("patch", updated, &sides.updated),
                ] {
                    for &(first, second) in &index.duplicates {
                        warnings.push(
                            FnResult::new(
                                Severity::Error,
                                format!(
                                    "{}: documents {} and {} of {field} are one resource ({}): \
                                     a package version holds each resource once",
                                    step.label(),
                                    first + 1,
                                    second + 1,
                                    docs.get(first)
                                        .map(|n| Id::of(n).to_string())
                                        .unwrap_or_default()
                                ),
                            )
                            .tags(step.tags()),
                        );
                    }
                }
                Some(sides)
            })
            .collect();
        Setup {
            plan,
            schema: plan.schema.clone(),
            config,
            hasher: crate::hash::State::default(),
            updates,
            warnings,
            checked_ahead: std::collections::HashMap::new(),
        }
    }

    /// Checks every document of the plan's updates against the schema (with the CRDs learned:
    /// call it after [`Setup::learn_crds`]), on every core, for the kind each names: what the
    /// check of each resource paired with one would find, one at a time. Not when the input is
    /// read whole (`pieces`), or for a small update.
    pub(crate) fn check_ahead(&mut self, pieces: crate::run::pieces::Pieces) {
        use crate::run::pieces::Pieces;
        let mut ahead = std::collections::HashMap::new();
        for step in &self.plan.steps {
            let Action::Update { updated, .. } = &step.action else {
                continue;
            };
            let worth = match pieces {
                Pieces::Whole => false,
                Pieces::Auto => updated.len() >= CHECK_AHEAD,
                Pieces::Size(_) => updated.len() > 1,
            };
            if !worth {
                continue;
            }
            let schema = self.schema_for(step.options.crd_merge_keys);
            let found = crate::run::pieces::map(updated, |_, doc| {
                let id = Id::of(doc);
                let gvk = crate::schema::Gvk::new(&id.api_version, &id.kind);
                let findings = crate::schema::check_patch(schema, gvk, doc);
                Some(CheckedAhead {
                    api_version: id.api_version.to_string(),
                    kind: id.kind.to_string(),
                    findings,
                })
            });
            if let Some(found) = found {
                ahead.insert(step.index, found);
            }
        }
        self.checked_ahead = ahead;
    }

    /// Learns the merge keys of the CRDs a document of the input holds (the document itself,
    /// or its items for a list kind). Call it for every document before any engine runs.
    pub(crate) fn learn_crds(&mut self, node: &Node<'_>) {
        let crds = crds_of(node);
        self.learn(crds);
    }

    /// Learns CRDs made ready by [`crds_of`] (on any thread), in the input's order: a kind
    /// already bound keeps its first CRD's schema.
    pub(crate) fn learn(&mut self, crds: Vec<CrdBuilt>) {
        for crd in crds {
            match crd.built {
                Ok(built) => self.schema.add_built_crd(built),
                Err(e) => {
                    let mut warning = crd.about;
                    warning.message = format!("CRD not used for merge keys: {e}");
                    self.warnings.push(warning);
                }
            }
        }
    }

    /// The schema a step merges with: with the CRDs of the input, unless the step asks for
    /// kustomize's behaviour, which reads none.
    pub(crate) fn schema_for(&self, crd_merge_keys: bool) -> &Schema {
        if crd_merge_keys {
            &self.schema
        } else {
            &self.plan.schema
        }
    }
}

/// A CRD of the input built for the schema, which any thread may do (the schema learns it in
/// the input's order: [`Setup::learn`]): its types, or why it has none, and the warning that
/// names it then.
pub(crate) struct CrdBuilt {
    built: Result<crate::schema::BuiltCrd, String>,
    about: FnResult,
}

/// The CRDs a document holds (the document itself, or its items for a list kind), built.
pub(crate) fn crds_of(node: &Node<'_>) -> Vec<CrdBuilt> {
    let mut crds = Vec::new();
    krm::for_each_resource(node, &mut |r| {
        if is_crd(r) {
            let built = yaml::to_json(r)
                .map_err(|e| e.to_string())
                .and_then(|v| Schema::build_crd(&v).map_err(|e| e.to_string()));
            crds.push(CrdBuilt {
                built,
                about: FnResult::new(Severity::Warning, String::new()).about(r),
            });
        }
    });
    crds
}

/// A CustomResourceDefinition, whose schema feeds the merges of its kind.
pub(crate) fn is_crd(node: &Node<'_>) -> bool {
    let id = Id::of(node);
    id.kind == "CustomResourceDefinition" && id.api_version.starts_with("apiextensions.k8s.io/")
}

/// Whether the item being processed is as kyaml's walk leaves it, under the schema with the
/// input's CRDs (`Some(true)`) or without (`Some(false)`): the last change made to it was a
/// strategic merge with kustomize's options at its root, so the next such merge need not walk
/// what its patch does not mention ([`crate::merge::Context`]). `None` otherwise.
pub(crate) type Settled = Option<bool>;

/// Applies a plan to items, one item at a time.
pub(crate) struct Engine<'p> {
    pub(super) setup: &'p Setup<'p>,
    pub(super) report: Report,
    pub(super) aliases: Aliases,
    pub(super) renames: Renames,
    /// The item being processed: see [`Settled`].
    pub(super) settled: Settled,
    /// The schema position of the kind looked up last ([`Engine::root_of`]).
    pub(super) last_root: std::sync::Mutex<LastRoot>,
}

/// A kind's position in one of the run's two schemas, kept for the next lookup: the steps that
/// patch a resource ask for its kind's position one after another, and packages hold resources
/// of one kind in a row. Which schema (with the input's CRDs or without), the kind's
/// `apiVersion` and `kind`, the position.
#[derive(Debug, Default)]
pub(crate) struct LastRoot(Option<(bool, String, String, crate::schema::Cursor)>);

/// What is left when every item has been processed.
pub(crate) struct Conclusion {
    /// Resources a merge3 update added, already through the steps after it; they go last.
    pub added: Vec<Item<'static>>,
    pub results: Vec<FnResult>,
    /// Some step failed: the items must be written as they came in.
    pub failed: bool,
}

/// The items of [`run_document`], processed.
pub(crate) struct Processed<'a> {
    pub items: Vec<Item<'a>>,
    pub results: Vec<FnResult>,
    pub failed: bool,
}

/// A list kind being read ([`Engine::enter_list`]): what ends it.
#[must_use]
pub(crate) struct InList {
    /// The list is a document of its own (see `Aliases::enter_list`).
    outer: bool,
    /// Its file, from kpt's annotations.
    file: Option<(String, u64)>,
    bookkeeping: bool,
    /// Where its items' results start.
    first_result: usize,
}

/// Applies every step of `plan` to `items` held in memory, each item a document of its own.
#[cfg(test)]
pub(crate) fn run<'a>(
    plan: &Plan,
    items: Vec<Item<'a>>,
    config: Option<&Id<'static>>,
) -> Processed<'a> {
    run_document(plan, items, config, None)
}

/// `run`; with `wrapper`, the items are one document with the root mapping of the
/// ResourceList or `List` around them (its `items` entry empty meanwhile): anchors reach from
/// the part before the items into them, from item to item, and from them into the part after.
pub(crate) fn run_document<'a>(
    plan: &Plan,
    items: Vec<Item<'a>>,
    config: Option<&Id<'static>>,
    wrapper: Option<&mut Node<'a>>,
) -> Processed<'a> {
    let mut setup = Setup::new(plan, config);
    for item in &items {
        setup.learn_crds(&item.node);
    }
    let mut engine = Engine::new(&setup);
    let mut out = engine.process_document(items, wrapper);
    let end = engine.finish();
    out.extend(end.added);
    Processed {
        items: out,
        results: end.results,
        failed: end.failed,
    }
}

impl<'p> Engine<'p> {
    /// The engine of a run: the plan's warnings and the setup's reported first (those about a
    /// step's target when the run ends, with what the target selected).
    pub(crate) fn new(setup: &'p Setup<'p>) -> Self {
        let mut engine = Engine::share(setup, Aliases::default(), Renames::default());
        for s in &setup.plan.steps {
            for w in s.warnings.iter().filter(|w| !w.about_target) {
                engine.report.push(
                    FnResult::new(
                        Severity::Warning,
                        match &w.hint {
                            Some(h) => format!("{}: {}; {h}", s.label(), w.message),
                            None => format!("{}: {}", s.label(), w.message),
                        },
                    )
                    .at_field(w.field.clone())
                    .tags(s.tags()),
                );
            }
        }
        for w in &setup.warnings {
            engine.report.push(w.clone());
        }
        engine
    }

    fn share(setup: &'p Setup<'p>, aliases: Aliases, renames: Renames) -> Self {
        Engine {
            setup,
            report: Report::new(setup.plan),
            aliases,
            renames,
            settled: None,
            last_root: std::sync::Mutex::default(),
        }
    }

    /// The position of `id`'s kind in the schema a step merges with ([`Setup::schema_for`]).
    pub(super) fn root_of(&self, crd_merge_keys: bool, id: &Id<'_>) -> crate::schema::Cursor {
        let lookup = || {
            let (g, v) = id.group_version();
            self.setup.schema_for(crd_merge_keys).root(g, v, &id.kind)
        };
        // Each engine is one thread's: the lock is never waited for.
        let Ok(mut last) = self.last_root.lock() else {
            return lookup();
        };
        if let Some((crds, api_version, kind, at)) = &last.0 {
            if *crds == crd_merge_keys && api_version == &id.api_version && kind == &id.kind {
                return *at;
            }
        }
        let at = lookup();
        last.0 = Some((
            crd_merge_keys,
            id.api_version.to_string(),
            id.kind.to_string(),
            at,
        ));
        at
    }

    /// An engine for another share of the same items (another thread's piece): the same setup
    /// and kind of document, nothing read or counted yet. Bring back what it did with
    /// [`Engine::absorb`].
    pub(crate) fn fork(&self) -> Engine<'p> {
        Engine::share(self.setup, self.aliases.fork(), Renames::for_share())
    }

    /// Adds what a fork did, as if this engine had read its share after what it read or
    /// absorbed so far (see `Report::absorb`).
    pub(crate) fn absorb(&mut self, mut fork: Engine<'p>) {
        let log = fork.renames.take_log();
        self.report.absorb(fork.report, log, &mut self.renames);
    }

    /// The items are one YAML document (a ResourceList's or a `List`'s): an item may alias an
    /// anchor of an earlier one. Without this call each item is a document of its own (a
    /// stream's).
    pub(crate) fn one_document(&mut self) {
        self.aliases.shared = true;
    }

    /// The items of one document are done: the next item is a document of its own.
    pub(crate) fn end_document(&mut self) {
        self.aliases.end_document();
    }

    /// Some of the input could not be read: the closing results do not say that a target
    /// selects nothing (what it was meant for may be in what was not read).
    pub fn input_unread(&mut self) {
        self.report.unread = true;
    }

    /// Reads and settles the entries `range` of a wrapper's root mapping (see
    /// `Aliases::wrapper_entries`); an error is about the document outside its items.
    pub(crate) fn wrapper_entries(
        &mut self,
        root: &mut Node<'_>,
        range: std::ops::Range<usize>,
    ) -> bool {
        match self.aliases.wrapper_entries(root, range) {
            Ok(changed) => changed,
            Err(e) => {
                self.report.push(FnResult::new(
                    Severity::Error,
                    format!("the document around the items: {e}"),
                ));
                false
            }
        }
    }

    /// Processes items held in memory; with `wrapper`, they are one document with the root
    /// mapping of the ResourceList or `List` around them (its `items` entry empty meanwhile):
    /// anchors reach from the part before the items into them, from item to item, and from them
    /// into the part after. Without it, each item is a document of its own. The engine reads
    /// documents apart again afterwards.
    pub(crate) fn process_document<'a>(
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
        self.aliases.end_document();
        out
    }

    /// Applies every step, in order, to one item. `None`: a step deleted it. A list kind's
    /// items are the resources (`Engine::process_list`).
    pub(crate) fn process<'a>(&mut self, mut item: Item<'a>) -> Option<Item<'a>> {
        if krm::is_list_kind(&item.node) {
            return self.process_list(item);
        }
        self.aliases.admit(&mut item.node);
        let mut item = self.process_from(item, 0)?;
        self.seal(&mut item);
        Some(item)
    }

    /// A list kind (`List`, `RoleList`, ...: [`krm::is_list_kind`]) is not a resource: its items
    /// are, as kustomize reads them. Each goes through the steps as an item of its own, in the
    /// document the list is (its anchors reach the items, as a ResourceList's do), and the list
    /// is written back around what is left of them: touched when an item was patched or
    /// deleted, gone when a patch deleted every item it had. An item that is not a mapping
    /// fails the run, as kustomize refuses it. Results about an item name the list's file (kpt
    /// gives the items of a list no path of their own). A list that came as JSON is written as
    /// block YAML once an item changed.
    fn process_list<'a>(&mut self, mut item: Item<'a>) -> Option<Item<'a>> {
        let list = self.enter_list(&item.node);
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
                self.report
                    .push(FnResult::new(Severity::Error, krm::not_a_resource(root, k)));
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
        self.leave_list(list);
        if emptied {
            return None;
        }
        item.touched |= changed;
        Some(item)
    }

    /// Starts reading the items of the list kind `list` (its root mapping; its items need not
    /// be in it): in the document it is, bookkeeping when it is, its file among the run's. Give
    /// what it returns to [`Engine::leave_list`] after the last item. (Reading a list's items in
    /// pieces, forks of this engine made between the two calls read them so.)
    pub(crate) fn enter_list(&mut self, list: &Node<'_>) -> InList {
        let outer = self.aliases.enter_list();
        let file = bookkeeping::file_of(list).map(|(p, i)| (p.to_owned(), i));
        if let Some((path, _)) = &file {
            self.report.files.insert(path.clone());
        }
        let bookkeeping = {
            let follow = |n| self.aliases.follow(n);
            bookkeeping::is_bookkeeping_item_with(list, &follow)
        };
        self.aliases.bookkeeping_lists += usize::from(bookkeeping);
        InList {
            outer,
            file,
            bookkeeping,
            first_result: self.report.results.len(),
        }
    }

    /// Ends a list kind's items: results about an item since [`Engine::enter_list`] name the
    /// list's file (kpt gives the items of a list no path of their own).
    pub(crate) fn leave_list(&mut self, list: InList) {
        if let Some(f) = &list.file {
            for r in self.report.results.iter_mut().skip(list.first_result) {
                if r.resource.is_some() && r.file.is_none() {
                    r.file = Some(f.clone());
                }
            }
        }
        self.aliases.bookkeeping_lists -= usize::from(list.bookkeeping);
        self.aliases.leave_list(list.outer);
    }

    /// The item as it will be written, read in its document: its aliases read what they read
    /// (an alias of an anchor that a patch changed or deleted, here or in an earlier item,
    /// becomes a copy of it, which carries the anchor on), the copies made to patch it become
    /// their aliases again where nothing changed, and no other item written has its identity
    /// after a rename. An item that must change for that is written from its tree.
    fn seal(&mut self, item: &mut Item<'_>) {
        match self.aliases.seal(&mut item.node, item.touched) {
            Ok(true) => item.touched = true,
            Ok(false) => {}
            Err(e) => {
                let r = FnResult::new(
                    Severity::Error,
                    format!("its anchors, as the output reads them: {e}"),
                )
                .about(&item.node);
                self.report.push(r);
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
        let around = self.aliases.nesting_around();
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
        self.report.push(r);
    }

    /// Remembers the identity of an item written out (see [`Renames`]).
    pub(super) fn note_identity(&mut self, item: &Item<'_>) {
        let at = self.report.results.len();
        let first = item.first_id.as_ref();
        if let Some(e) = self.renames.note(&self.setup.hasher, &item.node, first, at) {
            self.report.push(e);
        }
    }

    /// Applies the steps from `first` on, in order, to an item.
    pub(super) fn process_from<'a>(
        &mut self,
        mut item: Item<'a>,
        first: usize,
    ) -> Option<Item<'a>> {
        if let Some((path, _)) = bookkeeping::file_of(&item.node) {
            self.report.files.insert(path.to_owned());
        }
        let plan = self.setup.plan;
        // Whether the item is bookkeeping, read again only after a step changed it.
        let mut bookkeeping = None;
        self.settled = None;
        for (k, step) in plan.steps.iter().enumerate().skip(first) {
            let is = *bookkeeping.get_or_insert_with(|| self.is_bookkeeping(&item.node));
            if is && !super::steps::touches_bookkeeping(step) {
                continue;
            }
            let (effect, leaves_settled) = self.step(k, step, &mut item);
            // Any change but such a merge's leaves the item unsettled; a run that failed walks
            // everything (its output is the input, and its errors are those a full walk finds).
            match leaves_settled.filter(|_| !self.report.failed) {
                Some(schema) => self.settled = Some(schema),
                None if matches!(effect, Effect::Changed) => self.settled = None,
                None => {}
            }
            match effect {
                Effect::Unchanged => {}
                Effect::Changed => {
                    self.report.counts[k].changed += 1;
                    item.touched = true;
                    bookkeeping = None;
                }
                Effect::Deleted => {
                    self.report.counts[k].changed += 1;
                    return None;
                }
            }
        }
        Some(item)
    }

    /// Whether an item is bookkeeping (a local-config resource, the Kptfile, the functionConfig
    /// itself), which only a step whose target names a kind may touch.
    /// Whether the item is the functionConfig itself (kpt passes it among the items).
    pub(super) fn is_function_config_item(&self, item: &Item<'_>) -> bool {
        let follow = |n| self.aliases.follow(n);
        self.setup
            .config
            .is_some_and(|c| is_function_config(c, &Id::of_with(&item.node, &follow)))
    }

    fn is_bookkeeping(&self, node: &Node<'_>) -> bool {
        let follow = |n| self.aliases.follow(n);
        self.aliases.bookkeeping_lists > 0
            || bookkeeping::is_bookkeeping_item_with(node, &follow)
            || self
                .setup
                .config
                .is_some_and(|c| is_function_config(c, &Id::of_with(node, &follow)))
    }

    /// Makes the additions of merge3 updates, then reports what each step did.
    pub(crate) fn finish(mut self) -> Conclusion {
        let plan = self.setup.plan;
        let mut added: Vec<Item<'static>> = Vec::new();
        for (k, step) in plan.steps.iter().enumerate() {
            if let Action::Update { updated, .. } = &step.action {
                let more = self.update_additions(k, step, updated);
                added.extend(more);
            }
        }
        self.report.conclude(plan);
        Conclusion {
            added,
            results: self.report.results,
            failed: self.report.failed,
        }
    }

    /// Gives a new item a file of its own when the items come from files (kpt).
    pub(super) fn place_new(&mut self, node: &mut Node<'static>) {
        let files = &mut self.report.files;
        if files.is_empty() || !node.is_map() {
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
        while files.contains(&path) {
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
        files.insert(path);
    }
}

/// What a step did to an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    Unchanged,
    Changed,
    Deleted,
}

/// The item is the functionConfig itself, which kpt passes among the items: same apiVersion,
/// kind and name.
fn is_function_config(config: &Id<'_>, id: &Id<'_>) -> bool {
    !config.kind.is_empty()
        && id.api_version == config.api_version
        && id.kind == config.kind
        && id.name == config.name
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::krm::Severity;
    use crate::run::test_node as node;

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
