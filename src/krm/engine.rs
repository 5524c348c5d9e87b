//! The engine: applies the plan's patches to the items and reports what happened.
//!
//! Each patch sees the output of the previous one. Selection follows README "Selecting resources": a `target` selects by
//! kustomize's rules (a warning when it selects nothing); without one, each patch document
//! selects the items with its own identity (an error when there is none); bookkeeping items are
//! left alone unless a target names their kind. All or nothing: when any patch fails the run is
//! marked failed, and the caller writes the items as they came in.
//!
//! **One item at a time.** A patch's effect on a resource depends only on that resource, the
//! patch and the schema, so applying every patch to one resource and then to the next gives the
//! same result as applying each patch to every resource in turn — and needs one resource's tree
//! in memory, not the package's. What is not per resource is handled globally: the schema (the
//! CRDs among the items, added with [`Engine::add_crd`] before any item is processed), the counts
//! behind the "selects nothing" results (reported by [`Engine::finish`]), and the resources
//! merge3 adds (made at the end, then put through the patches that follow it).
//!
//! What it must not do: parse or write text, or know the wire format.

use crate::hash::HashSet;

use crate::config::{Conflicts, NewListItems, PatchKind, PatchStep, Plan};
use crate::krm::{FnResult, Item, Origin, Severity};
use crate::merge::apply;
use crate::merge::merge2::{self, NewItems, Outcome};
use crate::merge::merge3;
use crate::patch::json6902;
use crate::patch::jsonmerge;
use crate::schema::{Cursor, Schema};
use crate::select::resource::{self, Id, Meta, OwnedId};
use crate::select::target::Target;
use crate::yaml::anchors::{anchors_of, Anchors};
use crate::yaml::{self, Node};

/// The identity of the functionConfig, which kpt also passes among the items.
#[derive(Clone, Debug, Default)]
pub struct ConfigId {
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

impl ConfigId {
    pub fn of(node: &Node<'_>) -> ConfigId {
        let id = Id::of(node);
        ConfigId {
            api_version: id.api_version.into(),
            kind: id.kind.into(),
            name: id.name.into(),
        }
    }

    fn is(&self, node: &Node<'_>) -> bool {
        let id = Id::of(node);
        !self.kind.is_empty()
            && id.api_version == self.api_version
            && id.kind == self.kind
            && id.name == self.name
    }
}

/// What each patch did, counted over all items.
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
    config: Option<&'p ConfigId>,
    tallies: Vec<Tally>,
    results: Vec<FnResult>,
    failed: bool,
    /// The files of the items seen (kpt's path annotations), to give new items files of their own.
    files: HashSet<String>,
}

/// What is left when every item has been processed.
pub struct Finish {
    /// Resources merge3 added, already through the patches after it; they go after the others.
    pub new_items: Vec<Item<'static>>,
    pub results: Vec<FnResult>,
    /// Some patch failed: the items must be written as they came in.
    pub failed: bool,
}

/// The result of [`run`].
pub struct Run<'a> {
    pub items: Vec<Item<'a>>,
    pub results: Vec<FnResult>,
    pub failed: bool,
}

/// Applies every step of `plan` to `items` held in memory.
pub fn run<'a>(plan: &Plan, items: Vec<Item<'a>>, config: Option<&ConfigId>) -> Run<'a> {
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

/// Why an item could not be patched, before it becomes a result.
struct ItemError {
    field: Option<String>,
    message: String,
}

/// What a step did to an item.
enum Done {
    Untouched,
    Changed,
    Deleted,
}

impl<'p> Engine<'p> {
    pub fn new(plan: &'p Plan, config: Option<&'p ConfigId>) -> Self {
        let tallies = plan
            .steps
            .iter()
            .map(|s| Tally {
                found: vec![false; if s.target.is_none() { s.patch.len() } else { 0 }],
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

    /// Applies every step, in order, to one item. `None`: a patch deleted it.
    pub fn process<'a>(&mut self, item: Item<'a>) -> Option<Item<'a>> {
        self.process_from(item, 0)
    }

    fn process_from<'a>(&mut self, mut item: Item<'a>, first: usize) -> Option<Item<'a>> {
        if let Some((path, _)) = resource::file_of(&item.node) {
            self.files.insert(path.to_owned());
        }
        let plan = self.plan;
        for (k, step) in plan.steps.iter().enumerate().skip(first) {
            if !candidate(step, &item.node, self.config) {
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

    /// Applies step `k` to an item, if it selects the item.
    fn step<'a>(&mut self, k: usize, step: &'p PatchStep, item: &mut Item<'a>) -> Done {
        match (step.kind, &step.target) {
            (PatchKind::Merge3, None) => self.merge3_resource(k, step, item),
            (_, Some(target)) => {
                let meta = Meta::of(&item.node);
                match target.matches(&meta.view()) {
                    Ok(true) => {}
                    Ok(false) if !matches_first_id(target, &meta, item.first_id.as_ref()) => {
                        return Done::Untouched
                    }
                    Ok(false) => {}
                    Err(e) => {
                        let msg = format!(
                            "{}: cannot tell the resource's original name: {e}",
                            label(step)
                        );
                        self.error(step, msg, &item.node, None);
                        return Done::Untouched;
                    }
                }
                self.tallies[k].selected += 1;
                let docs: Vec<&'p Node<'static>> = step.patch.iter().collect();
                self.patch(step, item, &docs)
            }
            (_, None) => {
                let mut docs = Vec::new();
                for (d, doc) in step.patch.iter().enumerate() {
                    let want = Id::of(doc);
                    if item
                        .first_id
                        .as_ref()
                        .is_some_and(|f| f.as_id().same(&want))
                        || has_identity(&item.node, &want)
                    {
                        self.tallies[k].found[d] = true;
                        docs.push(doc);
                    }
                }
                if docs.is_empty() {
                    return Done::Untouched;
                }
                self.patch(step, item, &docs)
            }
        }
    }

    /// Applies the documents of a step to an item, keeping its identity and bookkeeping.
    fn patch<'a>(
        &mut self,
        step: &'p PatchStep,
        item: &mut Item<'a>,
        docs: &[&'p Node<'static>],
    ) -> Done {
        let before = OwnedId::of(&item.node);
        let saved = resource::bookkeeping(&item.node);
        // kustomize writes no empty annotations map at all (its last step sets every
        // resource's annotations, and an empty set removes the field): under its options an
        // empty map goes whoever emptied it; by default only one the patch emptied.
        let annotated =
            step.options.kustomize_compatible() || resource::has_annotations(&item.node);
        let root = self.root(&item.node);
        let anchors = match anchors_of(&item.node) {
            Ok(a) => a,
            Err(e) => {
                let msg = format!("{}: {e}", label(step));
                self.error_about(step, msg, &before, resource::file_of(&item.node), None);
                return Done::Untouched;
            }
        };
        let mut conflicts = Vec::new();
        let mut deleted = false;
        let outcome = patch_node(
            step,
            &mut item.node,
            docs,
            &self.schema,
            root,
            &anchors,
            &mut conflicts,
            &mut deleted,
        );
        if let Err(e) = outcome {
            // The node may be half patched; the run fails, and the caller writes the input back.
            let msg = format!("{}: {}", label(step), e.message);
            self.error_about(step, msg, &before, resource::file_of(&item.node), e.field);
            return Done::Untouched;
        }
        self.report_conflicts(step, &item.node, conflicts);
        if deleted {
            return Done::Deleted;
        }
        // A merge does not rename what it patches (kustomize's rule, with or without a target:
        // a patch found by the resource's original name carries that old name).
        if matches!(step.kind, PatchKind::Merge2 | PatchKind::JsonMerge) {
            restore_identity(&mut item.node, &step.options, &before);
        }
        resource::protect_bookkeeping(&mut item.node, saved);
        resource::drop_emptied_annotations(&mut item.node, annotated);
        if item.first_id.is_none() && !Id::of(&item.node).same(&before.as_id()) {
            item.first_id = Some(before);
        }
        Done::Changed
    }

    /// merge3 without a target, for one item: paired by identity with the updated (patch) and
    /// original documents; deleted upstream → deleted, both → merged. Additions are made by
    /// [`Engine::finish`].
    fn merge3_resource<'a>(&mut self, k: usize, step: &'p PatchStep, item: &mut Item<'a>) -> Done {
        let same = |doc: &Node<'_>| {
            let want = Id::of(doc);
            item.first_id
                .as_ref()
                .is_some_and(|f| f.as_id().same(&want))
                || has_identity(&item.node, &want)
        };
        let updated = step.patch.iter().position(&same);
        let original = |u: &Node<'_>| step.original.iter().find(|o| Id::of(o).same(&Id::of(u)));
        match updated {
            Some(d) => {
                self.tallies[k].found[d] = true;
                let u = &step.patch[d];
                let empty = Node::map();
                let o = original(u).unwrap_or(&empty);
                let before = OwnedId::of(&item.node);
                let saved = resource::bookkeeping(&item.node);
                let root = self.root(&item.node);
                let anchors = match anchors_of(&item.node) {
                    Ok(a) => a,
                    Err(e) => {
                        let msg = format!("{}: document {}: {e}", label(step), d + 1);
                        self.error_about(step, msg, &before, resource::file_of(&item.node), None);
                        return Done::Untouched;
                    }
                };
                let opts = merge3::Options {
                    infer_keys: step.options.infer_merge_keys,
                };
                match merge3::merge(&mut item.node, o, u, &self.schema, root, &opts, &anchors) {
                    Ok(conflicts) => {
                        self.report_conflicts(step, &item.node, conflicts);
                        resource::protect_bookkeeping(&mut item.node, saved);
                        Done::Changed
                    }
                    Err(e) => {
                        let msg = format!("{}: document {}: {}", label(step), d + 1, e.kind);
                        self.error_about(
                            step,
                            msg,
                            &before,
                            resource::file_of(&item.node),
                            Some(e.path.to_string()),
                        );
                        Done::Untouched
                    }
                }
            }
            None if step.original.iter().any(&same) => Done::Deleted,
            None => Done::Untouched,
        }
    }

    fn root(&self, node: &Node<'_>) -> Cursor {
        let id = Id::of(node);
        let (g, v) = id.group_version();
        self.schema.root(g, v, id.kind)
    }

    fn error(&mut self, step: &PatchStep, msg: String, about: &Node<'_>, field: Option<String>) {
        let mut res = FnResult::new(Severity::Error, msg)
            .tag("patch", step.index.to_string())
            .about(about);
        if let Some(f) = field {
            res = res.at_field(f);
        }
        self.results.push(res);
        self.failed = true;
    }

    fn error_about(
        &mut self,
        step: &PatchStep,
        msg: String,
        id: &OwnedId,
        file: Option<(&str, u64)>,
        field: Option<String>,
    ) {
        let mut res = FnResult::new(Severity::Error, msg).tag("patch", step.index.to_string());
        res.resource = Some(crate::krm::ResourceRef {
            api_version: id.api_version.clone(),
            kind: id.kind.clone(),
            name: id.name.clone(),
            namespace: id.namespace.clone(),
        });
        res.file = file.map(|(p, i)| (p.to_owned(), i));
        if let Some(f) = field {
            res = res.at_field(f);
        }
        self.results.push(res);
        self.failed = true;
    }

    fn report_conflicts(
        &mut self,
        step: &PatchStep,
        node: &Node<'_>,
        conflicts: Vec<merge3::Conflict>,
    ) {
        let severity = match step.options.conflicts {
            Conflicts::Warn => Severity::Warning,
            Conflicts::Error => Severity::Error,
        };
        for c in conflicts {
            // When the run fails nothing changes: say what clashed, not how it was settled.
            let text = conflict_text(&c, severity != Severity::Error);
            let mut res = FnResult::new(severity, format!("{}: conflict: {}", label(step), text))
                .about(node)
                .at_field(c.path.to_string())
                .tag("patch", step.index.to_string());
            res.current = c.local.clone();
            res.proposed = c.upstream.clone();
            if severity == Severity::Error {
                self.failed = true;
            }
            self.results.push(res);
        }
    }

    /// Makes merge3's additions, then reports what each patch did.
    pub fn finish(mut self) -> Finish {
        let plan = self.plan;
        let mut new_items: Vec<Item<'static>> = Vec::new();
        for (k, step) in plan.steps.iter().enumerate() {
            if step.kind != PatchKind::Merge3 || step.target.is_some() {
                continue;
            }
            for (d, updated) in step.patch.iter().enumerate() {
                let id = Id::of(updated);
                if self.tallies[k].found[d] || step.original.iter().any(|o| Id::of(o).same(&id)) {
                    continue;
                }
                let mut node: Node<'static> = updated.clone();
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
            if let Some(t) = &step.target {
                if tally.selected == 0 {
                    self.results.push(
                        FnResult::new(
                            Severity::Warning,
                            format!("{}: target {t} selects no resource", label(step)),
                        )
                        .tag("patch", tag.clone()),
                    );
                }
            } else if step.kind != PatchKind::Merge3 {
                for (d, found) in tally.found.iter().enumerate() {
                    if *found {
                        continue;
                    }
                    let msg = format!(
                        "{}: document {} ({}) matches no resource; give the patch a target, or check its apiVersion, kind, name and namespace",
                        label(step),
                        d + 1,
                        step.patch.get(d).map(|n| Id::of(n).to_string()).unwrap_or_default()
                    );
                    self.results
                        .push(FnResult::new(Severity::Error, msg).tag("patch", tag.clone()));
                    self.failed = true;
                }
            }
            // When the run fails nothing is applied; saying otherwise would mislead.
            if tally.changed > 0 && !self.failed {
                self.results.push(
                    FnResult::new(
                        Severity::Info,
                        format!("{}: applied to {} resource(s)", label(step), tally.changed),
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
            ann.set(resource::PATH, Node::string(path.clone()));
            ann.set(resource::INDEX, Node::string("0"));
        }
        self.files.insert(path);
    }
}

fn label(step: &PatchStep) -> String {
    format!("patch[{}] ({})", step.index, step.kind.as_str())
}

/// Applies the documents `docs` of `step` to `node`, by the step's kind.
#[allow(clippy::too_many_arguments)]
fn patch_node<'a>(
    step: &PatchStep,
    node: &mut Node<'a>,
    docs: &[&Node<'static>],
    schema: &Schema,
    root: Cursor,
    anchors: &Anchors<Node<'a>>,
    conflicts: &mut Vec<merge3::Conflict>,
    deleted: &mut bool,
) -> Result<(), ItemError> {
    let at = |path: String, message: String| ItemError {
        field: Some(path),
        message,
    };
    let plain = |message: String| ItemError {
        field: None,
        message,
    };
    match step.kind {
        PatchKind::Merge2 => {
            let opts = merge2::Options {
                new_items: match step.options.new_list_items {
                    NewListItems::Append => NewItems::Append,
                    NewListItems::Prepend => NewItems::Prepend,
                },
                infer_keys: step.options.infer_merge_keys,
                kustomize: step.options.kustomize_compatible(),
            };
            for p in docs {
                match merge2::merge(node, p, schema, root, &opts, anchors) {
                    Ok(Outcome::Merged) => {}
                    Ok(Outcome::Deleted) => {
                        *deleted = true;
                        return Ok(());
                    }
                    Err(e) => return Err(at(e.path.to_string(), e.kind.to_string())),
                }
            }
        }
        PatchKind::JsonMerge => {
            for p in docs {
                jsonmerge::merge(node, p).map_err(|e| plain(e.to_string()))?;
            }
        }
        PatchKind::Json6902 => {
            // kustomize's JSON patch library is lenient where the RFC is not; kustomize's
            // options (prepend, no inference) ask for kustomize's behaviour.
            let opts = if step.options.kustomize_compatible() {
                json6902::Options::kustomize()
            } else {
                json6902::Options::default()
            };
            for p in docs {
                let ops = json6902::parse_ops(p).map_err(|e| plain(e.to_string()))?;
                json6902::apply_with(node, &ops, &opts).map_err(|e| plain(e.to_string()))?;
            }
        }
        PatchKind::Apply => {
            // kubectl never guesses merge keys: apply follows kubectl, whatever
            // `inferMergeKeys` says.
            let opts = apply::Options { infer_keys: false };
            for p in docs {
                apply::apply(node, p, schema, root, &opts, anchors)
                    .map_err(|e| at(e.path.to_string(), e.kind.to_string()))?;
            }
        }
        PatchKind::Merge3 => {
            let opts = merge3::Options {
                infer_keys: step.options.infer_merge_keys,
            };
            let empty = Node::map();
            let original = step.original.first().unwrap_or(&empty);
            for p in docs {
                let found = merge3::merge(node, original, p, schema, root, &opts, anchors)
                    .map_err(|e| at(e.path.to_string(), e.kind.to_string()))?;
                conflicts.extend(found);
            }
        }
    }
    Ok(())
}

/// Items a step may touch: not bookkeeping (local-config resources, the Kptfile, the
/// functionConfig itself), unless the step's target names a kind.
fn candidate(step: &PatchStep, node: &Node<'_>, config: Option<&ConfigId>) -> bool {
    let bookkeeping = resource::is_bookkeeping_item(node) || config.is_some_and(|c| c.is(node));
    if !bookkeeping {
        return true;
    }
    step.target
        .as_ref()
        .and_then(|t| t.spec().kind.as_deref())
        .is_some_and(|k| !k.is_empty())
}

/// A patch earlier in this run renamed the resource: the target selects it by the name and
/// namespace it came in with, as kustomize's in-memory previous names do.
fn matches_first_id(target: &Target, meta: &Meta<'_>, first: Option<&OwnedId>) -> bool {
    let Some(first) = first else { return false };
    let mut view = meta.view();
    view.name = &first.name;
    view.namespace = &first.namespace;
    target.matches(&view).unwrap_or(false)
}

/// The resource has the identity `want`, now or originally (kustomize's build annotations).
fn has_identity(node: &Node<'_>, want: &Id<'_>) -> bool {
    let id = Id::of(node);
    if id.same(want) {
        return true;
    }
    let meta = Meta::of(node);
    match meta.view().original_id() {
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
fn restore_identity(node: &mut Node<'_>, opts: &crate::config::PatchOptions, was: &OwnedId) {
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
    if !opts.allow_kind_change {
        set(node, &["apiVersion"], &was.api_version);
        set(node, &["kind"], &was.kind);
    }
    if !opts.allow_name_change {
        set(node, &["metadata", "name"], &was.name);
        set(node, &["metadata", "namespace"], &was.namespace);
    }
}
