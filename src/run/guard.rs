//! One guard around every patch, whatever its type: the item made whole before its first patch
//! (its aliases copies), the walker run with what it needs, and the promises every patch keeps
//! checked on its result ([`invariants`]): still a resource, identity put back unless the step
//! may change it, the hosts' bookkeeping annotations put back, every alias reading what it read.
//! A failure becomes a [`PatchFailure`] about the resource as it was. Also here: the schema check
//! of a patch against the item's kind, done once per step, document and kind.
//!
//! What it must not do: select, or know which walker runs (the step passes it in).

use crate::config::{Action, Conflicts, Step, Validation};
use crate::error::{Cause, PatchFailure};
use crate::krm::{FnResult, Item, Severity};
use crate::merge::{merge3, Context};
use crate::patch::json6902;
use crate::path::pointer::Token;
use crate::run::engine::{Effect, Engine};
use crate::run::invariants::{self, Before};
use crate::run::steps::file_of;
use crate::schema::{check_json6902, check_patch, Finding, Gvk};
use crate::select::identity::Id;
use crate::yaml::anchors::{anchors_of, AliasError, Anchors};
use crate::yaml::snapshot::Reach;
use crate::yaml::Node;

/// What a walker left: the resource merged (with any merge3 conflicts it settled), or deleted.
pub(crate) enum Walked {
    Merged(Vec<merge3::Conflict>),
    Deleted,
}

/// A patch to check against a kind's schema.
#[derive(Clone, Copy)]
pub(crate) enum CheckedPatch<'d> {
    /// The document (its index in the patch) of a merge, merge3 update or apply patch.
    Document(usize, &'d Node<'static>),
    /// A JSON patch's operations.
    Operations(&'d [json6902::Op<'static>]),
}

impl Engine<'_> {
    /// Runs `walk` on the item's node with what the walkers need, and keeps the promises every
    /// step keeps whatever its type (see the module documentation): an emptied annotations map
    /// dropped as kustomize drops it, the first identity remembered for later targets. A failure
    /// is reported about the resource as it was; the node may be half patched, and the run
    /// fails, so the caller writes the input back.
    pub(super) fn guarded<'a>(
        &mut self,
        step: &Step,
        item: &mut Item<'a>,
        document: Option<usize>,
        walk: impl FnOnce(&mut Node<'a>, &Context<'_, 'a>) -> Result<Walked, Cause>,
    ) -> Effect {
        if let Some(name) = self.aliases.current.unresolved.clone() {
            let e = AliasError::Unknown(name);
            self.fail(failure(step, &item.node, document, Cause::Anchors(e)));
            return Effect::Unchanged;
        }
        if let Err(e) = self.aliases.localise(&mut item.node) {
            self.fail(failure(step, &item.node, document, Cause::Anchors(e)));
            return Effect::Unchanged;
        }
        let before = Before::of(step, &item.node);
        // What the patch is compared with: one that changes nothing leaves the item untouched
        // (written as it came, and not counted as changed). Only what the step can reach is
        // copied: a patch of one label need not copy the whole resource.
        let reach = if self.aliases.current.aliases || self.aliases.current.anchors {
            // A merge may follow an alias anywhere.
            Reach::All
        } else {
            self.reach(step)
        };
        let pristine = item.node.snapshot(&reach);
        // Tests (debug builds) check that the step changed nothing out of its reach.
        #[cfg(debug_assertions)]
        let whole = item.node.clone();
        let conflicts = match self.attempt(step, item, &before.id, walk) {
            Ok(Walked::Deleted) => return Effect::Deleted,
            Ok(Walked::Merged(conflicts)) => conflicts,
            Err(cause) => {
                self.fail_before(step, &item.node, &before.id, document, cause);
                return Effect::Unchanged;
            }
        };
        self.report_conflicts(step, &item.node, conflicts);
        if let Err(e) = self.aliases.after_patch(&mut item.node) {
            self.fail_before(step, &item.node, &before.id, document, Cause::Anchors(e));
            return Effect::Unchanged;
        }
        let id = before.id.clone();
        match invariants::enforce(step, &mut item.node, before) {
            Ok(warnings) => self.report.results.extend(warnings),
            Err(broken) => {
                self.fail_before(step, &item.node, &id, document, Cause::Broken(broken));
                return Effect::Unchanged;
            }
        }
        #[cfg(debug_assertions)]
        let expected = {
            let mut check = item.node.clone();
            let same = check.keep_unchanged_source(&whole);
            (same, check)
        };
        let unchanged = item.node.keep_unchanged_since(&pristine);
        #[cfg(debug_assertions)]
        {
            let (same, mut check) = expected;
            debug_assert_eq!(
                unchanged,
                same,
                "{}: a change out of the step's reach",
                step.label()
            );
            debug_assert!(
                item.node.clone().keep_unchanged_source(&check)
                    && check.keep_unchanged_source(&item.node),
                "{}: source text given back differs",
                step.label()
            );
        }
        if unchanged {
            return Effect::Unchanged;
        }
        if item.first_id.is_none() && !Id::of(&item.node).same(&id) {
            item.first_id = Some(id);
        }
        Effect::Changed
    }

    /// What of a resource `step` can change, besides what [`invariants::enforce`] puts back
    /// (the identity and the annotations): what its merge patches name (a strategic merge
    /// with kustomize's options walks the whole resource unless it is settled, see
    /// [`Settled`](crate::run::engine::Settled)), the paths of its JSON patch's pointers; the
    /// whole resource for the other patches, and at `at:` places.
    fn reach(&self, step: &Step) -> Reach {
        if step.action.at().is_some() {
            return Reach::All;
        }
        let mut reach = match &step.action {
            Action::Merge2 { docs, .. }
                if !step.options.merge2().kustomize
                    || self.settled == Some(step.options.crd_merge_keys) =>
            {
                merge_patches(docs)
            }
            Action::JsonMerge { docs, .. } => merge_patches(docs),
            Action::Json6902 { ops, .. } => {
                let mut reach = Reach::nothing();
                for (pointer, _) in ops.iter().flat_map(json6902::Op::pointers) {
                    reach.add_path(pointer.tokens().iter().map(Token::text));
                }
                reach
            }
            _ => Reach::All,
        };
        for field in ["apiVersion", "kind"] {
            reach.add_path([field]);
        }
        for field in ["name", "namespace", "annotations"] {
            reach.add_path(["metadata", field]);
        }
        reach
    }

    /// Runs a walker on the item, with its anchors and the schema's position of its kind.
    fn attempt<'a>(
        &self,
        step: &Step,
        item: &mut Item<'a>,
        id: &Id<'static>,
        walk: impl FnOnce(&mut Node<'a>, &Context<'_, 'a>) -> Result<Walked, Cause>,
    ) -> Result<Walked, Cause> {
        // An item admitted without aliases has none (patches bring none): nothing to look for.
        let anchors = if self.aliases.current.aliases {
            anchors_of(&item.node).map_err(Cause::Anchors)?
        } else {
            Anchors::default()
        };
        let schema = self.setup.schema_for(step.options.crd_merge_keys);
        let root = self.root_of(step.options.crd_merge_keys, id);
        walk(&mut item.node, &Context::new(schema, root, &anchors))
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
        self.fail(PatchFailure {
            step: step.index,
            name: step.name.clone(),
            kind: step.kind(),
            resource: was.clone(),
            file: file_of(node),
            document,
            cause,
        });
    }

    fn report_conflicts(&mut self, step: &Step, node: &Node<'_>, conflicts: Vec<merge3::Conflict>) {
        let severity = conflict_severity(step.options.conflicts);
        // A step's index is its place in the plan.
        if let Some(counts) = self.report.counts.get_mut(step.index) {
            counts.conflicts += conflicts.len();
        }
        for c in conflicts {
            // When the run fails nothing changes: say what clashed, not how it was settled.
            let text = conflict_text(&c, severity != Severity::Error);
            let mut res = FnResult::new(severity, format!("{}: conflict: {}", step.label(), text))
                .about(node)
                .at_field(c.path.clone())
                .tags(step.tags());
            res.current = c.local.clone();
            res.proposed = c.upstream.clone();
            self.report.push(res);
        }
    }

    /// Checks a step's patch against the schema of the item's kind, once per step, document and
    /// kind: unknown fields, values of the wrong type, required fields removed. Findings are
    /// errors, or warnings under `options.validation: warn`.
    pub(super) fn check(&mut self, step: &Step, item: &Item<'_>, patch: CheckedPatch<'_>) {
        let id = Id::of(&item.node);
        let document = match patch {
            CheckedPatch::Document(d, _) => d,
            CheckedPatch::Operations(_) => 0,
        };
        let key = (step.index, document);
        if self.report.was_checked(key, &id.api_version, &id.kind) {
            return;
        }
        let gvk = Gvk::new(&id.api_version, &id.kind);
        let schema = self.setup.schema_for(step.options.crd_merge_keys);
        let findings: Vec<(Option<usize>, Finding)> = match patch {
            CheckedPatch::Document(d, doc) => {
                let ahead = (self.setup.checked_ahead.get(&step.index))
                    .and_then(|docs| docs.get(d))
                    .filter(|a| a.api_version == id.api_version && a.kind == id.kind);
                match ahead {
                    Some(a) => a.findings.clone(),
                    None => check_patch(schema, gvk, doc),
                }
                .into_iter()
                .map(|f| (None, f))
                .collect()
            }
            CheckedPatch::Operations(ops) => {
                check_json6902(schema, gvk, ops.iter().map(json6902::Op::pointers))
                    .into_iter()
                    .map(|f| (Some(f.op), f.finding))
                    .collect()
            }
        };
        let (severity, escape) = match step.options.validation {
            Validation::Error => (Severity::Error, VALIDATION_ESCAPE),
            Validation::Warn => (Severity::Warning, ""),
        };
        for (op, finding) in findings {
            let place = op.map(|i| format!("op {i}: ")).unwrap_or_default();
            let mut res = FnResult::new(
                severity,
                format!("{}: {place}{}{escape}", step.label(), finding.kind),
            )
            .about(&item.node)
            .at_field(finding.path.clone())
            .tags(step.tags())
            .tag("check", "schema");
            if documents(&step.action) > 1 {
                res = res.tag("document", (document + 1).to_string());
            }
            let checked = (key, id.api_version.to_string(), id.kind.to_string());
            self.report.finding(res, checked);
        }
        self.report
            .check_once(&(key, id.api_version.to_string(), id.kind.to_string()));
    }
}

/// What an error the schema check found says of how to let it through.
pub const VALIDATION_ESCAPE: &str =
    " (options.validation: warn makes it a warning, and the patch is applied as written)";

/// A failure about the item as it is.
pub(crate) fn failure(
    step: &Step,
    node: &Node<'_>,
    document: Option<usize>,
    cause: Cause,
) -> PatchFailure {
    PatchFailure {
        step: step.index,
        name: step.name.clone(),
        kind: step.kind(),
        resource: Id::of(node).into_owned(),
        file: file_of(node),
        document,
        cause,
    }
}

/// What merge patches reach together.
fn merge_patches(docs: &[Node<'static>]) -> Reach {
    let mut reach = Reach::nothing();
    for doc in docs {
        reach.add(Reach::of_merge_patch(doc));
    }
    reach
}

/// What clashed in a conflict, and, with `settled`, how the merge settled it.
fn conflict_text(c: &merge3::Conflict, settled: bool) -> String {
    if settled {
        format!("{}; {}", c.clash(), c.outcome())
    } else {
        c.clash()
    }
}

/// The severity of a conflict's result under `conflicts`: `upstream`'s are said only with
/// `-v` (and in the results file).
pub(super) fn conflict_severity(conflicts: Conflicts) -> Severity {
    match conflicts {
        Conflicts::Warn | Conflicts::Local => Severity::Warning,
        Conflicts::Error => Severity::Error,
        Conflicts::Upstream => Severity::Info,
    }
}

/// How many documents a step's patch has.
fn documents(action: &Action) -> usize {
    match action {
        Action::Merge2 { docs, .. }
        | Action::JsonMerge { docs, .. }
        | Action::Apply { docs, .. } => docs.len(),
        Action::Update { updated, .. } => updated.len(),
        Action::Json6902 { .. } | Action::Merge3 { .. } => 1,
    }
}
