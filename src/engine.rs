//! The engine: applies the plan's patches, in order, to the items, and reports what happened.
//!
//! Each patch sees the output of the previous one. Selection follows SPEC: a `target` selects
//! by kustomize's rules (a warning when it selects nothing); without one, each patch document
//! selects the items with its own identity (an error when there is none); bookkeeping items are
//! left alone unless a target names their kind. All or nothing: when any patch fails, the run is
//! marked failed and the caller writes the items as they came in.
//!
//! What it must not do: parse or write text, or know the wire format.

use crate::apply;
use crate::config::{Conflicts, NewListItems, PatchKind, PatchStep, Plan};
use crate::json6902;
use crate::jsonmerge;
use crate::krm::{FnResult, Item, Origin, Severity};
use crate::merge2::{self, NewItems, Outcome};
use crate::merge3;
use crate::resource::{self, Id, Meta};
use crate::schema::{Cursor, Schema};
use crate::yaml::{self, Node};

/// What a run produced.
pub struct Run<'a> {
    pub items: Vec<Item<'a>>,
    pub results: Vec<FnResult>,
    /// Some patch failed: the items must be returned as they came in.
    pub failed: bool,
}

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

/// Applies every step of `plan` to `items`.
pub fn run<'a>(plan: &Plan, items: Vec<Item<'a>>, config: Option<&ConfigId>) -> Run<'a> {
    let mut r = Run {
        items,
        results: Vec::new(),
        failed: false,
    };
    let schema = schema_with_crds(&plan.schema, &mut r);
    let uses_paths = r.items.iter().any(|i| resource::file_of(&i.node).is_some());
    for step in &plan.steps {
        let ctx = Ctx {
            step,
            schema: &schema,
            config,
            uses_paths,
        };
        ctx.apply(&mut r);
    }
    if plan.steps.is_empty() {
        r.results.push(FnResult::new(
            Severity::Info,
            "no patches in the functionConfig: nothing to do",
        ));
    }
    r
}

/// The plan's schema plus the CustomResourceDefinitions among the items.
fn schema_with_crds(base: &Schema, r: &mut Run<'_>) -> Schema {
    let mut schema = base.clone();
    for item in &r.items {
        let id = Id::of(&item.node);
        if id.kind != "CustomResourceDefinition"
            || !id.api_version.starts_with("apiextensions.k8s.io/")
        {
            continue;
        }
        let loaded = yaml::to_json(&item.node)
            .map_err(|e| e.to_string())
            .and_then(|v| schema.add_crd(&v).map_err(|e| e.to_string()));
        if let Err(e) = loaded {
            r.results.push(
                FnResult::new(
                    Severity::Warning,
                    format!("CRD not used for merge keys: {e}"),
                )
                .about(&item.node),
            );
        }
    }
    schema
}

struct Ctx<'s> {
    step: &'s PatchStep,
    schema: &'s Schema,
    config: Option<&'s ConfigId>,
    uses_paths: bool,
}

/// An error from one item, before it is turned into a result.
struct ItemError {
    field: Option<String>,
    message: String,
}

impl<'s> Ctx<'s> {
    fn label(&self) -> String {
        format!("patch[{}] ({})", self.step.index, self.step.kind.as_str())
    }

    fn error(&self, r: &mut Run<'_>, msg: String, about: Option<&Node<'_>>, field: Option<String>) {
        let mut res = FnResult::new(Severity::Error, msg).tag("patch", self.step.index.to_string());
        if let Some(n) = about {
            res = res.about(n);
        }
        if let Some(f) = field {
            res = res.at_field(f);
        }
        r.results.push(res);
        r.failed = true;
    }

    fn candidate(&self, node: &Node<'_>) -> bool {
        candidate(self.step, node, self.config)
    }

    /// The items the step's target selects.
    fn selected(&self, r: &mut Run<'_>) -> Vec<usize> {
        let Some(target) = &self.step.target else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for (i, item) in r.items.iter().enumerate() {
            if !self.candidate(&item.node) {
                continue;
            }
            let meta = Meta::of(&item.node);
            match target.matches(&meta.view()) {
                Ok(true) => out.push(i),
                Ok(false) => {}
                Err(e) => errors.push((i, e.to_string())),
            }
        }
        for (i, e) in errors {
            let msg = format!(
                "{}: cannot tell the resource's original name: {e}",
                self.label()
            );
            let node = r.items[i].node.clone();
            self.error(r, msg, Some(&node), None);
        }
        out
    }

    /// The items with the identity of `doc` (current, or original under kustomize's build
    /// annotations or an earlier rename in this run).
    fn by_identity(&self, items: &[Item<'_>], doc: &Node<'_>) -> Vec<usize> {
        let want = Id::of(doc);
        items
            .iter()
            .enumerate()
            .filter(|(_, item)| {
                item.first_id
                    .as_ref()
                    .is_some_and(|f| f.as_id().same(&want))
                    || has_identity(&item.node, &want)
            })
            .map(|(i, _)| i)
            .collect()
    }

    fn apply(&self, r: &mut Run<'_>) {
        let step = self.step;
        let changed = match (step.kind, &step.target) {
            (PatchKind::Merge3, None) => self.merge3_resources(r),
            (_, Some(_)) => {
                let selected = self.selected(r);
                if selected.is_empty() {
                    let t = step
                        .target
                        .as_ref()
                        .map(|t| t.to_string())
                        .unwrap_or_default();
                    r.results.push(
                        FnResult::new(
                            Severity::Warning,
                            format!("{}: target {t} selects no resource", self.label()),
                        )
                        .tag("patch", step.index.to_string()),
                    );
                    return;
                }
                let mut changed = 0;
                let mut deleted = Vec::new();
                for &i in &selected {
                    match self.apply_to(r, i, None) {
                        Ok(true) => deleted.push(i),
                        Ok(false) => changed += 1,
                        Err(()) => {}
                    }
                }
                remove_indices(&mut r.items, &deleted);
                changed
            }
            (_, None) => {
                let mut changed = 0;
                for (d, doc) in step.patch.iter().enumerate() {
                    let matched = self.by_identity(&r.items, doc);
                    if matched.is_empty() {
                        let msg = format!(
                            "{}: document {} ({}) matches no resource; give the patch a target, or check its apiVersion, kind, name and namespace",
                            self.label(),
                            d + 1,
                            Id::of(doc)
                        );
                        self.error(r, msg, None, None);
                        continue;
                    }
                    let mut deleted = Vec::new();
                    for &i in &matched {
                        match self.apply_to(r, i, Some(d)) {
                            Ok(true) => deleted.push(i),
                            Ok(false) => changed += 1,
                            Err(()) => {}
                        }
                    }
                    remove_indices(&mut r.items, &deleted);
                }
                changed
            }
        };
        if changed > 0 {
            r.results.push(
                FnResult::new(
                    Severity::Info,
                    format!("{}: applied to {changed} resource(s)", self.label()),
                )
                .tag("patch", step.index.to_string()),
            );
        }
    }

    /// Applies the step (or only its document `doc`) to item `i`. `Ok(true)`: the item is to be
    /// deleted.
    fn apply_to(&self, r: &mut Run<'_>, i: usize, doc: Option<usize>) -> Result<bool, ()> {
        let step = self.step;
        let docs: Vec<&Node<'static>> = match doc {
            Some(d) => step.patch.get(d).into_iter().collect(),
            None => step.patch.iter().collect(),
        };
        let mut node = r.items[i].node.clone();
        let saved = resource::bookkeeping(&node);
        let before = Id::of(&node);
        let (name, namespace, api_version, kind) = (
            before.name.to_owned(),
            before.namespace.to_owned(),
            before.api_version.to_owned(),
            before.kind.to_owned(),
        );
        let root = self.root(&node);
        let anchors = merge2::anchors_of(&node);
        let mut delete = false;
        let mut warnings = Vec::new();
        let outcome: Result<(), ItemError> = (|| {
            match step.kind {
                PatchKind::Merge2 => {
                    let opts = merge2::Options {
                        new_items: match step.options.new_list_items {
                            NewListItems::Append => NewItems::Append,
                            NewListItems::Prepend => NewItems::Prepend,
                        },
                        infer_keys: step.options.infer_merge_keys,
                    };
                    for p in &docs {
                        match merge2::merge(&mut node, p, self.schema, root, &opts, &anchors) {
                            Ok(Outcome::Merged) => {}
                            Ok(Outcome::Deleted) => {
                                delete = true;
                                return Ok(());
                            }
                            Err(e) => {
                                return Err(ItemError {
                                    field: Some(e.path.to_string()),
                                    message: e.kind.to_string(),
                                })
                            }
                        }
                    }
                }
                PatchKind::JsonMerge => {
                    for p in &docs {
                        jsonmerge::merge(&mut node, p).map_err(|e| ItemError {
                            field: None,
                            message: e.to_string(),
                        })?;
                    }
                }
                PatchKind::Json6902 => {
                    // kustomize's JSON patch library lets `replace` create a missing member; the
                    // kustomize options (prepend, no inference) ask for kustomize's behaviour.
                    let opts = if step.options.new_list_items == NewListItems::Prepend
                        && !step.options.infer_merge_keys
                    {
                        json6902::Options::kustomize()
                    } else {
                        json6902::Options::default()
                    };
                    for p in &docs {
                        let ops = json6902::parse_ops(p).map_err(|e| ItemError {
                            field: None,
                            message: e.to_string(),
                        })?;
                        json6902::apply_with(&mut node, &ops, &opts).map_err(|e| ItemError {
                            field: None,
                            message: e.to_string(),
                        })?;
                    }
                }
                PatchKind::Apply => {
                    // kubectl never guesses merge keys: apply follows kubectl, whatever
                    // `inferMergeKeys` says.
                    let opts = apply::Options { infer_keys: false };
                    for p in &docs {
                        apply::apply(&mut node, p, self.schema, root, &opts, &anchors).map_err(
                            |e| ItemError {
                                field: Some(e.path.to_string()),
                                message: e.kind.to_string(),
                            },
                        )?;
                    }
                }
                PatchKind::Merge3 => {
                    let opts = merge3::Options {
                        infer_keys: step.options.infer_merge_keys,
                    };
                    let empty = Node::map();
                    let original = step.original.first().unwrap_or(&empty);
                    for p in &docs {
                        let conflicts = merge3::merge(
                            &mut node,
                            original,
                            p,
                            self.schema,
                            root,
                            &opts,
                            &anchors,
                        )
                        .map_err(|e| ItemError {
                            field: Some(e.path.to_string()),
                            message: e.kind.to_string(),
                        })?;
                        warnings.extend(conflicts);
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = outcome {
            let msg = format!("{}: {}", self.label(), e.message);
            let orig = r.items[i].node.clone();
            self.error(r, msg, Some(&orig), e.field);
            return Err(());
        }
        self.report_conflicts(r, &node, warnings);
        if delete {
            return Ok(true);
        }
        // The patch cannot rename the resource (kustomize's rule, with or without a target: a
        // patch found by the resource's original name carries that old name).
        if matches!(step.kind, PatchKind::Merge2 | PatchKind::JsonMerge) {
            restore_identity(
                &mut node,
                step.options.allow_kind_change,
                step.options.allow_name_change,
                &api_version,
                &kind,
                &name,
                &namespace,
            );
        }
        resource::protect_bookkeeping(&mut node, saved);
        let item = &mut r.items[i];
        if item.first_id.is_none() && !Id::of(&node).same(&Id::of(&item.node)) {
            item.first_id = Some(resource::OwnedId::of(&item.node));
        }
        item.node = node;
        item.touched = true;
        Ok(false)
    }

    fn report_conflicts(&self, r: &mut Run<'_>, node: &Node<'_>, conflicts: Vec<merge3::Conflict>) {
        let severity = match self.step.options.conflicts {
            Conflicts::Warn => Severity::Warning,
            Conflicts::Error => Severity::Error,
        };
        for c in conflicts {
            let mut res = FnResult::new(
                severity,
                format!("{}: conflict: {}", self.label(), conflict_text(&c)),
            )
            .about(node)
            .at_field(c.path.to_string())
            .tag("patch", self.step.index.to_string());
            res.current = c.local.clone();
            res.proposed = c.upstream.clone();
            if severity == Severity::Error {
                r.failed = true;
            }
            r.results.push(res);
        }
    }

    fn root(&self, node: &Node<'_>) -> Cursor {
        let id = Id::of(node);
        let (g, v) = id.group_version();
        self.schema.root(g, v, id.kind)
    }

    /// merge3 without a target: resources are paired by identity across original, updated
    /// (the patch) and the items; deleted upstream → removed, added upstream → added, both →
    /// merged field by field.
    fn merge3_resources(&self, r: &mut Run<'_>) -> usize {
        let step = self.step;
        let mut changed = 0;
        let mut deleted = Vec::new();
        for (d, updated) in step.patch.iter().enumerate() {
            let want = Id::of(updated);
            let original = step.original.iter().find(|o| Id::of(o).same(&want));
            let matched = self.by_identity(&r.items, updated);
            if matched.is_empty() {
                if original.is_none() {
                    let mut node: Node<'static> = updated.clone();
                    self.place_new(r, &mut node);
                    r.items.push(Item {
                        node,
                        origin: Origin::New,
                        touched: true,
                        first_id: None,
                    });
                    changed += 1;
                }
                continue;
            }
            for &i in &matched {
                let empty = Node::map();
                let orig = original.unwrap_or(&empty);
                let mut node = r.items[i].node.clone();
                let saved = resource::bookkeeping(&node);
                let root = self.root(&node);
                let anchors = merge2::anchors_of(&node);
                let opts = merge3::Options {
                    infer_keys: step.options.infer_merge_keys,
                };
                match merge3::merge(&mut node, orig, updated, self.schema, root, &opts, &anchors) {
                    Ok(conflicts) => {
                        self.report_conflicts(r, &node, conflicts);
                        resource::protect_bookkeeping(&mut node, saved);
                        r.items[i].node = node;
                        r.items[i].touched = true;
                        changed += 1;
                    }
                    Err(e) => {
                        let msg = format!("{}: document {}: {}", self.label(), d + 1, e.kind);
                        let orig_node = r.items[i].node.clone();
                        self.error(r, msg, Some(&orig_node), Some(e.path.to_string()));
                    }
                }
            }
        }
        for original in &step.original {
            let id = Id::of(original);
            if step.patch.iter().any(|u| Id::of(u).same(&id)) {
                continue;
            }
            for i in self.by_identity(&r.items, original) {
                if !deleted.contains(&i) {
                    deleted.push(i);
                    changed += 1;
                }
            }
        }
        remove_indices(&mut r.items, &deleted);
        changed
    }

    /// Gives a new item a file of its own when the items come from files (kpt).
    fn place_new(&self, r: &Run<'_>, node: &mut Node<'static>) {
        if !self.uses_paths || !node.is_map() {
            return;
        }
        let id = Id::of(node);
        let base = format!("{}_{}", id.kind.to_ascii_lowercase(), id.name);
        let taken = |p: &str| {
            r.items
                .iter()
                .any(|i| resource::file_of(&i.node).is_some_and(|(f, _)| f == p))
        };
        let mut path = format!("{base}.yaml");
        let mut n = 2;
        while taken(&path) {
            path = format!("{base}-{n}.yaml");
            n += 1;
        }
        if let Some(ann) = node
            .map_at("metadata")
            .and_then(|m| m.map_at("annotations"))
        {
            ann.set(resource::PATH, Node::string(path));
            ann.set(resource::INDEX, Node::string("0"));
        }
    }
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

/// Whether some step of `plan` could act on this resource as it comes in. A resource no step
/// selects is never changed (patches change only what they select), so a reader may leave it
/// as text. CustomResourceDefinitions always count: their schemas feed every merge.
pub fn may_touch(plan: &Plan, node: &Node<'_>, config: Option<&ConfigId>) -> bool {
    let id = Id::of(node);
    if id.kind == "CustomResourceDefinition" {
        return true;
    }
    plan.steps.iter().any(|step| {
        if !candidate(step, node, config) {
            return false;
        }
        match &step.target {
            // An item whose original name cannot be told is kept, so the engine reports it.
            Some(t) => t.matches(&Meta::of(node).view()).unwrap_or(true),
            None => step
                .patch
                .iter()
                .chain(&step.original)
                .any(|d| has_identity(node, &Id::of(d))),
        }
    })
}

fn conflict_text(c: &merge3::Conflict) -> String {
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
    match c.kind {
        merge3::ConflictKind::BothChanged => {
            format!(
                "changed locally to {} and upstream to {}; took upstream",
                show(&c.local),
                show(&c.upstream)
            )
        }
        merge3::ConflictKind::DeletedUpstreamChangedLocally => {
            format!(
                "deleted upstream but changed locally (to {}); deleted",
                show(&c.local)
            )
        }
        merge3::ConflictKind::ChangedUpstreamDeletedLocally => {
            format!(
                "changed upstream (to {}) but deleted locally; took upstream",
                show(&c.upstream)
            )
        }
    }
}

/// kustomize's rule for patches with a target: the patch cannot rename the resource, change
/// its kind, or move it to another namespace, unless the options allow it.
fn restore_identity(
    node: &mut Node<'_>,
    allow_kind: bool,
    allow_name: bool,
    api_version: &str,
    kind: &str,
    name: &str,
    namespace: &str,
) {
    let set = |node: &mut Node<'_>, path: &[&str], value: &str| {
        let current = node.str_at(path).unwrap_or("");
        if current == value {
            return;
        }
        let (last, parents) = match path.split_last() {
            Some(x) => x,
            None => return,
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
    };
    if !allow_kind {
        set(node, &["apiVersion"], api_version);
        set(node, &["kind"], kind);
    }
    if !allow_name {
        set(node, &["metadata", "name"], name);
    }
    set(node, &["metadata", "namespace"], namespace);
}

fn remove_indices<T>(v: &mut Vec<T>, indices: &[usize]) {
    if indices.is_empty() {
        return;
    }
    let mut i = 0;
    v.retain(|_| {
        let keep = !indices.contains(&i);
        i += 1;
        keep
    });
}
