//! One step, whatever the form: a patch entry as its form gave it (a [`Draft`]), read and
//! checked into a [`Step`]. Every check that does not depend on another is made, so that one
//! reading of a config says everything wrong with an entry: its patch, its original, its target
//! (each field), its `at:`.
//!
//! What it must not do: know which form the entry came from beyond the rules that differ
//! (kustomize's readings, the PatchTransformer's one-document rule), or apply anything.

use super::source::{self, Ctx, Source};
use super::{
    kustomize, Action, ConfigError, ConfigForm, ConfigWarning, PatchKind, PatchOptions, Select,
    Step, StepName, TargetAt, KIND,
};
use crate::path::{Path, Pattern, PatternError};
use crate::select::target::{Target, TargetSpec};
use crate::yaml::Node;

/// Plain strings of a patch that YAML 1.1 reads as another type are quoted where they land (see
/// [`Node::quote_yaml11_lookalikes`]).
fn quote_yaml11_lookalikes(docs: &mut [Node<'static>]) {
    for doc in docs {
        doc.quote_yaml11_lookalikes();
    }
}

/// A step as the form gave it, before its patch is read and checked.
pub(super) struct Draft<'n> {
    pub index: usize,
    pub name: StepName,
    /// The entry's own field, for errors about the entry as a whole.
    pub at: Path,
    pub kind: Option<PatchKind>,
    pub patch: Source<'n>,
    pub original: Option<Source<'n>>,
    pub target: Option<TargetSpec>,
    /// Where a missing target is reported.
    pub target_field: Path,
    /// Where the target's fields are (`spec.patches[0].target`, `data`).
    pub target_prefix: Path,
    /// `at:` as written, and its field.
    pub places: Option<(Path, String)>,
    pub options: PatchOptions,
    pub form: ConfigForm,
    /// Inline patch text is read as it is, even under kustomize's options (kustomize trims the
    /// text of a `patches:` entry, not that of a `patchesStrategicMerge:` one).
    pub untrimmed: bool,
}

impl Draft<'_> {
    /// The step, or every error its fields have.
    pub(super) fn build(self, ctx: &mut Ctx<'_>) -> Result<Step, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let patch = self.patch_documents(ctx).map_err(|e| errors.push(e)).ok();
        let original = patch.as_ref().and_then(|(kind, _, _)| {
            self.original_documents(*kind, ctx)
                .map_err(|e| errors.push(e))
                .ok()
        });
        let globs = self
            .target
            .as_ref()
            .map(TargetSpec::glob_lookalikes)
            .unwrap_or_default();
        let target = match &self.target {
            Some(spec) => match Target::compile_all(spec) {
                Ok(t) => Some(Some(t)),
                Err(es) => {
                    for e in es {
                        let hint = globs
                            .iter()
                            .find(|(f, _, _)| *f == e.field)
                            .map(|(_, _, meant)| {
                                format!(
                                    " (a glob? target patterns are regular expressions: did \
                                     you mean {meant:?}?)"
                                )
                            })
                            .unwrap_or_default();
                        errors.push(ConfigError::new(
                            self.target_prefix.field(e.field.as_str()),
                            format!("{}{hint}", e.kind),
                        ));
                    }
                    None
                }
            },
            None => Some(None),
        };
        let at = match &self.places {
            Some((field, text)) => match parse_pattern(field, text) {
                Ok(p) => Some(Some((field, p))),
                Err(e) => {
                    errors.push(e);
                    None
                }
            },
            None => Some(None),
        };
        let (Some((kind, patch, source)), Some(original), Some(target), Some(at)) =
            (patch, original, target, at)
        else {
            return Err(errors);
        };
        let warnings = globs
            .iter()
            .map(|(field, written, meant)| ConfigWarning {
                field: self.target_prefix.field(field.as_str()),
                message: format!(
                    "{written:?} looks like a glob, but target patterns are anchored regular \
                     expressions, where `*` repeats the character before it"
                ),
                hint: Some(format!("did you mean {meant:?}?")),
                about_target: true,
            })
            .collect();
        let action = self
            .action(kind, patch, original, target, at)
            .map_err(|e| vec![e])?;
        Ok(Step {
            index: self.index,
            name: self.name,
            source,
            options: self.options,
            action,
            warnings,
        })
    }

    /// The patch's documents, read as the step's options say, with its type (given, or
    /// detected) and where they came from.
    fn patch_documents(
        &self,
        ctx: &mut Ctx<'_>,
    ) -> Result<(PatchKind, Vec<Node<'static>>, String), ConfigError> {
        let compatible = kustomize::Reading::of(self.kind, &self.options);
        let trim = compatible.trims_inline_text() && !self.untrimmed;
        let loaded = ctx.load(&self.patch, trim)?;
        let (mut patch, source) = (loaded.docs, loaded.name);
        let kind = match self.kind {
            Some(k) => k,
            None => source::detect(&patch, &self.patch.field)?,
        };
        source::check_shape(kind, &patch, &self.patch.field)?;
        compatible.read(
            kind,
            self.target.is_some(),
            loaded.bracket,
            &mut patch,
            &self.patch.field,
        )?;
        quote_yaml11_lookalikes(&mut patch);
        Ok((kind, patch, source))
    }

    /// merge3's common ancestor; for any other type, the error of giving one.
    fn original_documents(
        &self,
        kind: PatchKind,
        ctx: &mut Ctx<'_>,
    ) -> Result<Vec<Node<'static>>, ConfigError> {
        match (kind, &self.original) {
            (PatchKind::Merge3, Some(src)) => {
                let mut original = ctx.load(src, false)?.docs;
                source::check_shape(kind, &original, &src.field)?;
                quote_yaml11_lookalikes(&mut original);
                Ok(original)
            }
            (PatchKind::Merge3, None) => Err(ConfigError::new(
                self.at.clone(),
                "a merge3 patch needs the common ancestor: original or originalPath",
            )),
            (_, Some(src)) => {
                let hint = if self.kind.is_none() {
                    " (set type: merge3 for a 3-way merge)"
                } else {
                    ""
                };
                Err(ConfigError::new(
                    src.field.clone(),
                    format!("only merge3 patches take an original; this patch is {kind}{hint}"),
                ))
            }
            (_, None) => Ok(Vec::new()),
        }
    }

    /// The action of a step whose documents are read, with the rules that tie them to its
    /// target (see the module documentation of `config`).
    fn action(
        &self,
        kind: PatchKind,
        patch: Vec<Node<'static>>,
        original: Vec<Node<'static>>,
        target: Option<Target>,
        at: Option<(&Path, Pattern)>,
    ) -> Result<Action, ConfigError> {
        let field = &self.patch.field;
        let at = match (at, kind, &target) {
            (None, _, _) => None,
            (Some((field, _)), PatchKind::Apply, _) => {
                return Err(ConfigError::new(
                    field.clone(),
                    "an apply patch takes no at: kubectl's last-applied configuration is the \
                     whole resource's; use merge2 to merge at a place",
                ))
            }
            (Some((field, _)), _, None) => {
                return Err(ConfigError::new(
                    field.clone(),
                    "at needs a target: a patch that applies at places inside resources does \
                     not name the resources it patches",
                ))
            }
            (Some((_, pattern)), _, Some(_)) => Some(pattern),
        };
        let Some(target) = target else {
            if kind == PatchKind::Json6902 {
                return Err(ConfigError::new(
                    self.target_field.clone(),
                    "a json6902 patch needs a target: a list of operations does not name the \
                     resource it patches",
                ));
            }
            source::check_identity(&patch, field)?;
            if let Some(src) = &self.original {
                source::check_identity(&original, &src.field)?;
            }
            return match kind {
                PatchKind::Merge3 => Ok(Action::Update {
                    original,
                    updated: patch,
                }),
                PatchKind::Merge2 | PatchKind::Json6902 => Ok(Action::Merge2 {
                    select: Select::OwnIdentity,
                    docs: patch,
                }),
                PatchKind::JsonMerge => Ok(Action::JsonMerge {
                    select: Select::OwnIdentity,
                    docs: patch,
                }),
                PatchKind::Apply => Ok(Action::Apply {
                    select: Select::OwnIdentity,
                    docs: patch,
                }),
            };
        };
        match kind {
            PatchKind::Json6902 => {
                let [ops] = &patch[..] else {
                    // check_shape allows one list of operations only.
                    return Err(ConfigError::new(
                        field.clone(),
                        "a json6902 patch is one list of operations",
                    ));
                };
                Ok(Action::Json6902 {
                    target,
                    at,
                    ops: source::operations(ops, field)?,
                })
            }
            PatchKind::Merge3 => {
                let (n, m) = (patch.len(), original.len());
                match (<[_; 1]>::try_from(patch), <[_; 1]>::try_from(original)) {
                    (Ok([updated]), Ok([original])) => Ok(Action::Merge3 {
                        target,
                        at,
                        original,
                        updated,
                    }),
                    _ => Err(ConfigError::new(
                        self.at.clone(),
                        format!(
                            "a merge3 patch with a target takes one document in patch and one \
                             in original; found {n} and {m}"
                        ),
                    )),
                }
            }
            PatchKind::Merge2
                if matches!(
                    self.form,
                    ConfigForm::PatchTransformer | ConfigForm::Kustomization
                ) && patch.len() > 1 =>
            {
                let (what, instead) = if self.form == ConfigForm::Kustomization {
                    ("a kustomization's", "one patches: entry")
                } else {
                    ("a PatchTransformer's", "one PatchTransformer")
                };
                Err(ConfigError::new(
                    field.clone(),
                    format!(
                        "{} documents and a target: {what} strategic merge patch with a target \
                         is one document (as in kustomize); use {instead} per document, or \
                         kind {KIND}",
                        patch.len()
                    ),
                ))
            }
            PatchKind::Merge2 => Ok(Action::Merge2 {
                select: Select::Target(Box::new(TargetAt { target, at })),
                docs: patch,
            }),
            PatchKind::JsonMerge => Ok(Action::JsonMerge {
                select: Select::Target(Box::new(TargetAt { target, at })),
                docs: patch,
            }),
            PatchKind::Apply => Ok(Action::Apply {
                select: Select::Target(Box::new(target)),
                docs: patch,
            }),
        }
    }
}

/// An `at:` (or a workload's field path) read into a pattern, errors on `field`.
pub(super) fn parse_pattern(field: &Path, text: &str) -> Result<Pattern, ConfigError> {
    text.parse().map_err(|e: PatternError| {
        ConfigError::new(field.clone(), format!("invalid path {text:?}: {e}"))
    })
}
