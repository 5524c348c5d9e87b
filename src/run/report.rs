//! What a run says: the results as they come, whether it failed, and what each step did counted
//! over every item, which becomes the closing results (a target that selects nothing, a document
//! that matches nothing, an `at:` that finds no place, how many resources a patch changed).
//!
//! A share of the items read apart (a piece) reports into a report of its own; the run's report
//! [`Report::absorb`]s the shares in the input's order, so the results are those of one reading
//! of all the items: counts add up, a schema-check finding already made is not made again, and
//! the rename errors a share logged take their places among its results.
//!
//! What it must not do: decide whether a patch applies, or change resources.

use crate::config::{Action, ConfigForm, Conflicts, FailOn, Plan, Select, Step, Validation};
use crate::hash::{HashMap, HashSet};
use crate::krm::{FnResult, Severity};
use crate::patch::json6902;
use crate::run::guard::VALIDATION_ESCAPE;
use crate::run::renames::Renames;
use crate::run::update::UpdateCounts;
use crate::select::identity::Id;
use crate::select::target::NearMiss;
use crate::yaml::Node;

/// What one step did, counted over all items.
#[derive(Clone, Debug, Default)]
pub(crate) struct StepCounts {
    /// Items its target selected.
    pub selected: usize,
    /// Items it changed or deleted.
    pub changed: usize,
    /// Without target: which of its documents found a resource.
    pub found: Vec<bool>,
    /// With `at:`: the places it found, over all items.
    pub places: usize,
    /// With `at:`: the items it found places in.
    pub found_in: usize,
    /// json6902: the places each operation reached (see `json6902::patch_with`).
    pub reached: Vec<usize>,
    /// merge3: the conflicts it reported.
    pub conflicts: usize,
    /// A merge3 update: what became of the resources.
    pub update: UpdateCounts,
    /// With a target, while it has selected nothing: a resource it nearly selects.
    pub near: Option<NearMiss>,
    /// With a target: the first resources it selected (at most [`EXAMPLES`]), as messages name
    /// them.
    pub examples: Vec<String>,
}

/// How many of the resources a target selected a message names.
pub const EXAMPLES: usize = 3;

impl StepCounts {
    /// Nothing counted yet, for a step.
    fn for_step(step: &Step) -> StepCounts {
        StepCounts {
            found: vec![false; own_identity_documents(&step.action).len()],
            reached: vec![0; operations(&step.action)],
            ..StepCounts::default()
        }
    }

    /// Notes a resource the step's target selected, to name in messages.
    pub fn saw(&mut self, id: &Id<'_>) {
        if self.examples.len() < EXAMPLES {
            self.examples.push(id.to_string());
        }
    }

    fn add(&mut self, o: StepCounts) {
        if self.near.is_none() {
            self.near = o.near;
        }
        for e in o.examples {
            if self.examples.len() < EXAMPLES {
                self.examples.push(e);
            }
        }
        self.selected += o.selected;
        self.changed += o.changed;
        for (f, of) in self.found.iter_mut().zip(o.found) {
            *f |= of;
        }
        self.places += o.places;
        self.found_in += o.found_in;
        for (r, or) in self.reached.iter_mut().zip(o.reached) {
            *r += or;
        }
        self.conflicts += o.conflicts;
        self.update.add(o.update);
    }
}

/// What a schema check is done once for: a step's patch document, an apiVersion and a kind.
pub(crate) type CheckKey = ((usize, usize), String, String);

/// The results and counts of a run, or of a share of its items.
#[derive(Debug)]
pub(crate) struct Report {
    pub results: Vec<FnResult>,
    /// Some step failed: the items must be written as they came in.
    pub failed: bool,
    /// Per step of the plan.
    pub counts: Vec<StepCounts>,
    /// The patches already checked against a kind's schema: (step, document) to the
    /// apiVersions and kinds (looked up by borrowed text, as this is asked for every item).
    checked: HashMap<(usize, usize), HashMap<String, HashSet<String>>>,
    /// The schema-check findings among `results`: each one's index there, and what was checked.
    findings: Vec<(usize, CheckKey)>,
    /// The files of the items seen (kpt's path annotations), to give new items files of their
    /// own.
    pub files: HashSet<String>,
    /// Some of the input could not be read: what the steps did not select may be there, so
    /// "selects no resource" is not said.
    pub unread: bool,
}

impl Report {
    /// Nothing reported or counted yet, for `plan`.
    pub(crate) fn new(plan: &Plan) -> Report {
        Report {
            results: Vec::new(),
            failed: false,
            counts: plan.steps.iter().map(StepCounts::for_step).collect(),
            checked: HashMap::default(),
            findings: Vec::new(),
            files: HashSet::default(),
            unread: false,
        }
    }

    /// Adds a result; an error fails the run.
    pub(crate) fn push(&mut self, r: FnResult) {
        self.failed |= r.severity == Severity::Error;
        self.results.push(r);
    }

    /// Whether step document `key` was checked against `version` and `kind` already.
    pub(crate) fn was_checked(&self, key: (usize, usize), version: &str, kind: &str) -> bool {
        self.checked
            .get(&key)
            .and_then(|v| v.get(version))
            .is_some_and(|k| k.contains(kind))
    }

    /// A schema-check finding about `checked`.
    pub(crate) fn finding(&mut self, r: FnResult, checked: CheckKey) {
        self.findings.push((self.results.len(), checked));
        self.push(r);
    }

    /// Records that a step's patch was checked against a kind; false when it already was.
    pub(crate) fn check_once(&mut self, (step, version, kind): &CheckKey) -> bool {
        self.checked
            .entry(*step)
            .or_default()
            .entry(version.clone())
            .or_default()
            .insert(kind.clone())
    }

    /// Adds what a share of the items reported, as if this report had read that share after
    /// what it read or absorbed so far: its results in order, each rename the share logged
    /// replayed against `renames` at its place among them (an error where a rename makes it one
    /// with a resource of an earlier share), a schema-check finding already made not made
    /// again; its counts added.
    pub(crate) fn absorb(
        &mut self,
        share: Report,
        log: Vec<super::renames::Logged>,
        renames: &mut Renames,
    ) {
        let mut log = log.into_iter().peekable();
        let mut findings = share.findings.into_iter().peekable();
        // The checks of the share that no earlier share made: every finding of each is kept
        // (one check may find several things).
        let mut new_checks: Vec<CheckKey> = Vec::new();
        for (i, r) in share.results.into_iter().enumerate() {
            while let Some(entry) = log.next_if(|e| e.at <= i) {
                if let Some(e) = renames.replay(entry) {
                    self.push(e);
                }
            }
            match findings.next_if(|(at, _)| *at == i) {
                None => self.push(r),
                Some((_, key)) => {
                    let new = new_checks.contains(&key) || {
                        let first = self.check_once(&key);
                        if first {
                            new_checks.push(key.clone());
                        }
                        first
                    };
                    if new {
                        self.finding(r, key);
                    }
                }
            }
        }
        for entry in log {
            if let Some(e) = renames.replay(entry) {
                self.push(e);
            }
        }
        for (c, o) in self.counts.iter_mut().zip(share.counts) {
            c.add(o);
        }
        self.failed |= share.failed;
        self.unread |= share.unread;
        self.files.extend(share.files);
        for (key, versions) in share.checked {
            let mine = self.checked.entry(key).or_default();
            for (version, kinds) in versions {
                mine.entry(version).or_default().extend(kinds);
            }
        }
    }

    /// The closing results: for each step what it selected and did, over every item (see the
    /// module documentation); then, under `failOn: warning`, every warning made an error.
    pub(crate) fn conclude(&mut self, plan: &Plan) {
        // The "applied to" results, which a run failed by failOn must not keep.
        let mut applied = Vec::new();
        for (k, step) in plan.steps.iter().enumerate() {
            let Some(counts) = self.counts.get(k).cloned() else {
                continue;
            };
            self.target_warnings(step, &counts);
            if matches!(step.action, Action::Update { .. }) {
                if let Some(r) = update_summary(step, &counts, self.failed) {
                    self.push(r);
                }
                continue;
            }
            self.unmatched(step, &counts);
            let missed = if self.failed {
                Vec::new()
            } else {
                unreached(step, &counts)
            };
            // A patch that found its resources and changed none (and no warning says why): they
            // already hold what it says (a render run a second time, a patch repeating the
            // current values).
            let said = !missed.is_empty();
            self.results.extend(missed);
            if counts.changed == 0 && counts.selected > 0 && !said && !self.failed {
                let message = format!(
                    "{}: changed nothing: what it says is already so in the {} it selects",
                    step.label(),
                    counted(counts.selected, "resource")
                );
                self.push(FnResult::new(Severity::Info, message).tags(step.tags()));
            }
            // When the run fails nothing is applied; saying otherwise would mislead.
            if counts.changed > 0 && !self.failed {
                let message = match step.action.at() {
                    Some(at) => format!(
                        "{}: {} in {}",
                        step.label(),
                        counted(counts.places, at.place_noun()),
                        counted(counts.found_in, "resource")
                    ),
                    None => format!(
                        "{}: applied to {} resource(s)",
                        step.label(),
                        counts.changed
                    ),
                };
                applied.push(self.results.len());
                self.push(FnResult::new(Severity::Info, message).tags(step.tags()));
            }
        }
        match plan.form {
            ConfigForm::Empty => self.push(FnResult::new(Severity::Error, NO_CONFIG)),
            _ if plan.steps.is_empty() => self.push(FnResult::new(
                Severity::Info,
                "no patches in the functionConfig: nothing to do",
            )),
            _ => {}
        }
        if escalate(plan.fail_on, &mut self.results) {
            self.failed = true;
            for at in applied.into_iter().rev() {
                self.results.remove(at);
            }
        }
    }

    /// The warnings the config made about a step's target (a pattern that reads as a glob),
    /// with what the target selected: errors, or warnings under `validation: warn`.
    fn target_warnings(&mut self, step: &Step, counts: &StepCounts) {
        for w in step.warnings.iter().filter(|w| w.about_target) {
            let selected = match counts.selected {
                0 => "it selects no resource".to_owned(),
                n => {
                    let more = n.saturating_sub(counts.examples.len());
                    let others = if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    };
                    format!("it selects {}{others}", counts.examples.join(", "))
                }
            };
            let (severity, escape) = match step.options.validation {
                Validation::Error => (Severity::Error, VALIDATION_ESCAPE),
                Validation::Warn => (Severity::Warning, ""),
            };
            let hint = w
                .hint
                .as_deref()
                .map(|h| format!("; {h}"))
                .unwrap_or_default();
            self.push(
                FnResult::new(
                    severity,
                    format!("{}: {}: {selected}{hint}{escape}", step.label(), w.message),
                )
                .at_field(w.field.clone())
                .tags(step.tags()),
            );
        }
    }

    /// A target that selected nothing (a warning, naming what it nearly selected), a document
    /// without target that found no resource (an error); neither when some of the input could
    /// not be read, where the resources may be.
    fn unmatched(&mut self, step: &Step, counts: &StepCounts) {
        if self.unread {
            return;
        }
        if let Some(t) = step.action.target() {
            if counts.selected == 0 {
                let near = counts
                    .near
                    .as_ref()
                    .map(|n| format!("; {n}"))
                    .unwrap_or_default();
                self.push(
                    FnResult::new(
                        Severity::Warning,
                        format!("{}: target {t} selects no resource{near}", step.label()),
                    )
                    .tags(step.tags()),
                );
            }
        }
        let docs = own_identity_documents(&step.action);
        for (d, found) in counts.found.iter().enumerate() {
            if *found {
                continue;
            }
            let msg = format!(
                "{}: document {} ({}) matches no resource; give the patch a target, or check its apiVersion, kind, name and namespace",
                step.label(),
                d + 1,
                docs.get(d).map(|n| Id::of(n).to_string()).unwrap_or_default()
            );
            self.push(FnResult::new(Severity::Error, msg).tags(step.tags()));
        }
    }
}

/// What a merge3 update did, in one info result (tagged `summary`): how many resources it
/// updated, left unchanged, added, deleted and kept, how many upstream still has that the
/// local copy deleted, and its conflicts with how they were settled. A run that failed changed
/// nothing: only its conflicts are counted, if any.
fn update_summary(step: &Step, counts: &StepCounts, failed: bool) -> Option<FnResult> {
    let u = &counts.update;
    let conflicts = match (counts.conflicts, step.options.conflicts) {
        (0, _) => "no conflict".to_owned(),
        (n, Conflicts::Warn) => format!(
            "{}: upstream's side taken, each warned",
            counted(n, "conflict")
        ),
        (n, Conflicts::Upstream) => format!("{}: upstream's side taken", counted(n, "conflict")),
        (n, Conflicts::Local) => format!(
            "{}: the local side kept, each warned",
            counted(n, "conflict")
        ),
        (n, Conflicts::Error) => format!("{}: errors, nothing changed", counted(n, "conflict")),
    };
    let message = if failed {
        if counts.conflicts == 0 {
            return None;
        }
        format!("{}: {conflicts}", step.label())
    } else {
        format!(
            "{}: {} updated, {} unchanged, {} added, {} deleted, {} kept local, {} deleted locally \
             (not added back); {conflicts}",
            step.label(),
            u.updated,
            u.unchanged,
            u.added,
            u.deleted,
            u.kept,
            u.deleted_locally,
        )
    };
    Some(
        FnResult::new(Severity::Info, message)
            .tags(step.tags())
            .tag("summary", "merge3"),
    )
}

/// What a run with no functionConfig says: what is missing, and how to give it.
pub const NO_CONFIG: &str = "no functionConfig: nothing says what to patch, so nothing was \
changed. Give one: kpt fn eval DIR --exec krm-merge --fn-config FN.yaml (or key=value pairs \
after --: kind=Deployment 'patch=spec: {replicas: 3}'), configPath: FN.yaml in a Kptfile \
pipeline (kpt fn render), a functionConfig in the ResourceList, or krm-merge --config FN.yaml \
PATH... for files";

/// Under `failOn: warning`, makes every warning among `results` an error (saying why, at the
/// end of its message); whether any was. Under `failOn: error`, changes nothing.
pub fn escalate(fail_on: FailOn, results: &mut [FnResult]) -> bool {
    if fail_on != FailOn::Warning {
        return false;
    }
    let mut any = false;
    for r in results
        .iter_mut()
        .filter(|r| r.severity == Severity::Warning)
    {
        r.severity = Severity::Error;
        r.message
            .push_str(" (a warning; failOn: warning makes it an error)");
        any = true;
    }
    any
}

/// The documents of a step that select resources by their own identity (none when the step has
/// a target): what "matches no resource" is counted over.
pub(crate) fn own_identity_documents(action: &Action) -> &[Node<'static>] {
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

/// How many operations of a step are counted as reaching places or not.
fn operations(action: &Action) -> usize {
    match action {
        Action::Json6902 { ops, .. } => ops.len(),
        _ => 0,
    }
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
fn unreached(step: &Step, counts: &StepCounts) -> Vec<FnResult> {
    let mut out = Vec::new();
    if counts.selected == 0 {
        return out; // the target's own warning says it
    }
    let resources = counted(counts.selected, "resource");
    if let Some(at) = step.action.at() {
        if counts.found_in == 0 {
            let msg = format!(
                "{}: at {at} finds nothing in the {resources} the target selects",
                step.label()
            );
            out.push(FnResult::new(Severity::Warning, msg).tags(step.tags()));
            return out;
        }
    }
    if let Action::Json6902 { ops, at, .. } = &step.action {
        for (i, (op, n)) in ops.iter().zip(&counts.reached).enumerate() {
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
                out.push(FnResult::new(Severity::Warning, msg).tags(step.tags()));
            }
        }
    }
    out
}
