//! A kustomization as a functionConfig: its patch fields applied as kustomize applies them,
//! so that `krm-merge --config kustomization.yaml base/` does what the kustomization's patches
//! would do, and a kustomization's patches move over without being rewritten first.
//!
//! * **What is read.** `patchesStrategicMerge` (each entry a file, or inline text when it reads
//!   as a resource, as kustomize decides), `patches` (`path` or `patch`, `target`,
//!   `options.allowNameChange`/`allowKindChange`) and `patchesJson6902` (`path` or `patch`, and a
//!   `target`), in kustomize's order: the strategic merge patches, then `patches`, then the JSON
//!   patches. Every step takes kustomize's options ([`PatchOptions::kustomize`]): its list order,
//!   its readings of the patch text, no merge keys from CRDs, and schema findings as warnings.
//!   `path:` files are relative to the kustomization's directory, as in kustomize.
//! * **What is left to kustomize.** `resources` and `bases` say where kustomize finds the
//!   resources: krm-merge takes them as its PATHs, and does not read these fields. Every other
//!   field (`namePrefix`, `images`, `configMapGenerator`, `components`, ...) changes resources in
//!   ways a patch list does not say: each is refused by name, saying what to use instead.
//! * **Names.** A step is named by its field (`patchesStrategicMerge[0]`, `patches[2]`), which is
//!   where the user finds it.
//!
//! What it must not do: read resources, or apply anything a kustomization says beyond its
//! patches.

use super::draft::Draft;
use super::source::{Content, Ctx, Source};
use super::{
    build_all, one_of, wire, ConfigError, ConfigErrors, ConfigForm, FailOn, PatchKind,
    PatchOptions, Plan, StepName,
};
use crate::path::Path;
use crate::schema::Schema;
use crate::yaml::Node;

/// The names kustomize reads a kustomization from, in a directory.
pub(crate) const FILES: &[&str] = &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The fields of a kustomization krm-merge applies.
pub(crate) fn patch_fields() -> &'static [&'static str] {
    &["patches", "patchesStrategicMerge", "patchesJson6902"]
}

/// The fields that say where kustomize finds the resources: krm-merge's PATHs instead.
const WHERE_RESOURCES_ARE: &[&str] = &["resources", "bases"];

/// Every other field of a kustomization kustomize knows, and what to use instead.
const REFUSED: &[(&str, &str)] = &[
    ("namespace", "set it with a patch (target: {}, patch: \"metadata: {namespace: NAME}\"); kustomize also rewrites what refers to it, which krm-merge does not"),
    ("namePrefix", "krm-merge renames nothing and rewrites no reference: keep it in kustomize"),
    ("nameSuffix", "krm-merge renames nothing and rewrites no reference: keep it in kustomize"),
    ("commonLabels", "add the labels with a merge2 patch (the guide's recipe: add a label); selectors are yours to patch"),
    ("labels", "add the labels with a merge2 patch (the guide's recipe: add a label)"),
    ("commonAnnotations", "add the annotations with a merge2 patch: target: {}, patch: \"metadata: {annotations: {KEY: VALUE}}\""),
    ("images", "set the image with a patch at every container: at: \"@containers[name=NAME]\", patch: \"image: IMAGE\""),
    ("replicas", "set spec.replicas with a merge2 patch"),
    ("configMapGenerator", "krm-merge makes no resources: keep generators in kustomize"),
    ("secretGenerator", "krm-merge makes no resources: keep generators in kustomize"),
    ("generatorOptions", "krm-merge makes no resources: keep generators in kustomize"),
    ("generators", "krm-merge makes no resources: keep generators in kustomize"),
    ("helmCharts", "krm-merge makes no resources: render the chart (helm template) and give the output as a PATH"),
    ("helmChartInflationGenerator", "krm-merge makes no resources: render the chart (helm template) and give the output as a PATH"),
    ("helmGlobals", "krm-merge makes no resources: render the chart (helm template) and give the output as a PATH"),
    ("transformers", "run those in kustomize, or as kpt functions"),
    ("validators", "run those in kustomize, or as kpt functions"),
    ("replacements", "krm-merge copies no value from one resource to another: keep it in kustomize"),
    ("vars", "krm-merge copies no value from one resource to another: keep it in kustomize"),
    ("components", "list the component's patches in this kustomization's patches, or build with kustomize"),
    ("crds", "give the CRDs among the PATHs, with crdMergeKeys: true in a Merge config (kustomize's options read none), or a Merge config's spec.schema"),
    ("openapi", "give the document in a Merge config's spec.schema.openAPI"),
    ("configurations", "krm-merge has no field specs: use a Merge config's spec.schema for merge keys"),
    ("buildMetadata", "krm-merge adds no build annotations: keep it in kustomize"),
    ("sortOptions", "krm-merge keeps the resources' order: keep it in kustomize"),
    ("imageTags", "set the image with a patch at every container: at: \"@containers[name=NAME]\", patch: \"image: IMAGE\""),
];

/// Whether a functionConfig that is none of krm-merge's own forms is a kustomization: `kind:
/// Kustomization` (or `Component`), or no `apiVersion` and `kind` at all but a field only a
/// kustomization has (a kustomization may leave both out; one copied into a config often
/// does).
pub(super) fn is_one(root: &Node<'_>) -> bool {
    let kind = root.get("kind").and_then(Node::as_str);
    let api_version = root.get("apiVersion").and_then(Node::as_str);
    let kustomize_api = api_version.is_none_or(|v| v.starts_with("kustomize.config.k8s.io/"));
    match kind {
        Some("Kustomization" | "Component") => kustomize_api,
        Some(_) => false,
        None => {
            api_version.is_none()
                && root.entries().iter().any(|e| {
                    e.key_str().is_some_and(|k| {
                        patch_fields().contains(&k)
                            || WHERE_RESOURCES_ARE.contains(&k)
                            || REFUSED.iter().any(|(f, _)| *f == k)
                    })
                })
        }
    }
}

/// The plan of a kustomization's patch fields (see the module documentation).
pub(super) fn form(root: &Node<'static>, ctx: &mut Ctx<'_>) -> Result<Plan, ConfigErrors> {
    let mut errors = Vec::new();
    for e in root.entries() {
        let key = e.key_str().unwrap_or_default();
        if matches!(key, "apiVersion" | "kind" | "metadata")
            || patch_fields().contains(&key)
            || WHERE_RESOURCES_ARE.contains(&key)
        {
            continue;
        }
        let message = match REFUSED.iter().find(|(f, _)| *f == key) {
            Some((_, instead)) => format!(
                "a kustomization field krm-merge does not apply: it applies a kustomization's \
                 patches only; {instead}"
            ),
            None => {
                let known = patch_fields()
                    .iter()
                    .chain(WHERE_RESOURCES_ARE)
                    .chain(REFUSED.iter().map(|(f, _)| f));
                let hint = crate::schema::suggest::closest(key, known.copied())
                    .map(|k| format!("; did you mean {k}?"))
                    .unwrap_or_default();
                format!("unknown kustomization field{hint}")
            }
        };
        errors.push(ConfigError::new(Path::fields(&[key]), message));
    }
    let (fields, structural) = wire::read_all::<wire::KustomizationPatches>(root);
    errors.extend(structural.iter().cloned());
    let Some(fields) = fields else {
        return Err(errors.into());
    };
    if fields.patches.is_none()
        && fields.patches_strategic_merge.is_none()
        && fields.patches_json6902.is_none()
        && errors.is_empty()
    {
        errors.push(ConfigError::new(
            Path::root(),
            "a kustomization without patches, patchesStrategicMerge or patchesJson6902: \
             nothing for krm-merge to apply",
        ));
    }
    let mut drafts = Vec::new();
    let mut index = 0;
    // kustomize's order: the strategic merge patches, `patches`, then the JSON patches.
    for (i, written) in fields.patches_strategic_merge.iter().flatten().enumerate() {
        let at = Path::fields(&["patchesStrategicMerge"]).index(i);
        let node = root
            .get("patchesStrategicMerge")
            .and_then(|n| n.items().get(i));
        let content = match node {
            Some(n) if reads_as_a_resource(written) => Content::Inline(n),
            _ => Content::File(written.clone()),
        };
        drafts.push(draft(
            &mut index,
            at.clone(),
            Some(PatchKind::Merge2),
            Source { field: at, content },
            None,
            PatchOptions::kustomize(),
            true,
        ));
    }
    for (field, kind) in [
        ("patches", None),
        ("patchesJson6902", Some(PatchKind::Json6902)),
    ] {
        let list = match field {
            "patches" => fields.patches.as_deref(),
            _ => fields.patches_json6902.as_deref(),
        };
        for (i, entry) in list.unwrap_or_default().iter().enumerate() {
            let at = Path::fields(&[field]).index(i);
            let node = root.get(field).and_then(|n| n.items().get(i));
            let patch = match one_of(&at, ("patch", node), ("path", entry.path.clone())) {
                Ok(Some(p)) => p,
                Ok(None) => {
                    errors.push(ConfigError::new(
                        at.clone(),
                        "give the patch: inline (patch) or in a file (path)",
                    ));
                    continue;
                }
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let mut options = PatchOptions::kustomize();
            if let Some(o) = &entry.options {
                options.allow_name_change = o.allow_name_change;
                options.allow_kind_change = o.allow_kind_change;
            }
            drafts.push(draft(
                &mut index,
                at,
                kind,
                patch,
                entry.target.clone(),
                options,
                false,
            ));
        }
    }
    let steps = build_all(drafts, &structural, ctx, &mut errors);
    if !errors.is_empty() {
        return Err(errors.into());
    }
    Ok(Plan {
        steps,
        schema: Schema::builtin(),
        form: ConfigForm::Kustomization,
        fail_on: FailOn::Error,
    })
}

/// A step of the kustomization, the next in the plan.
fn draft<'n>(
    index: &mut usize,
    at: Path,
    kind: Option<PatchKind>,
    patch: Source<'n>,
    target: Option<crate::select::target::TargetSpec>,
    options: PatchOptions,
    untrimmed: bool,
) -> Draft<'n> {
    let d = Draft {
        index: *index,
        name: StepName::Field(at.clone()),
        target_field: at.field("target"),
        target_prefix: at.field("target"),
        at,
        kind,
        patch,
        original: None,
        target,
        places: None,
        options,
        form: ConfigForm::Kustomization,
        untrimmed,
    };
    *index += 1;
    d
}

/// Whether a `patchesStrategicMerge` entry is the patch itself rather than a file's name: as
/// kustomize decides, when it reads as YAML holding a resource (a mapping).
fn reads_as_a_resource(written: &str) -> bool {
    crate::yaml::parse_stream(written).is_ok_and(|docs| {
        docs.iter()
            .filter_map(|d| d.root.as_ref())
            .any(Node::is_map)
    })
}
