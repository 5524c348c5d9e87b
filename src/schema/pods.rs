//! Where workloads keep their pods: the places the named starts of `at:` stand for
//! (`@podTemplate`, `@podSpec`, `@containers`), per kind.
//!
//! The built-in kinds' places are derived from the built-in tables, not listed by hand: a pod
//! template is a field whose type is `io.k8s.api.core.v1.PodTemplateSpec`, a pod spec one whose
//! type is `io.k8s.api.core.v1.PodSpec` (or the `spec` of a pod template), and the containers
//! are the elements of the fields of a PodSpec whose type is `io.k8s.api.core.v1.Container`
//! (`containers` and `initContainers`; `ephemeralContainers` are another type). A field that
//! is a list (the shape tables say) is crossed with `[*]`, so a `DeploymentList`'s templates are
//! `items[*].spec.template`. Fields below a pod template or pod spec are not searched further,
//! and map values are not searched at all (no built-in kind keeps a pod in one).
//!
//! Other kinds declare theirs (`spec.schema.workloads` of the functionConfig,
//! [`Schema::add_pod_holder`]): a field path to a pod template or a pod spec, for a group and
//! kind (any version). A declaration for a built-in kind adds to what the tables say.
//!
//! The built-in places are found once per [`Schema`] value, on first use (a walk of the type
//! graph: each type is visited once to learn whether a pod lies below it, then each kind's
//! fields down to its pods), and shared by its clones.

use std::sync::{Arc, OnceLock};

use super::{builtin, shape, Schema};
use crate::path::{Part, Start};

const POD_TEMPLATE_SPEC: &str = "io.k8s.api.core.v1.PodTemplateSpec";
const POD_SPEC: &str = "io.k8s.api.core.v1.PodSpec";
const CONTAINER: &str = "io.k8s.api.core.v1.Container";

/// What a declared field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PodHolder {
    /// A pod template (`metadata` and `spec`, the spec a PodSpec).
    Template,
    /// A pod spec.
    Spec,
}

/// A built-in kind that keeps pods, and where ([`Schema::builtin_pod_kinds`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// Its pod templates.
    pub templates: Vec<Vec<Part>>,
    /// Its pod specs outside pod templates.
    pub specs: Vec<Vec<Part>>,
}

/// The places of pods a schema knows.
#[derive(Clone, Debug, Default)]
pub(super) struct Pods {
    builtin: OnceLock<Arc<Builtin>>,
    declared: Vec<Declared>,
}

#[derive(Clone, Debug)]
struct Declared {
    group: String,
    kind: String,
    holder: PodHolder,
    parts: Vec<Part>,
}

/// The built-in places, derived from the tables.
#[derive(Debug, Default)]
struct Builtin {
    /// The kinds that keep pods, sorted by (group, version, kind).
    kinds: Vec<PodKind>,
    /// The container lists of a PodSpec, from the PodSpec: `containers[*]`, `initContainers[*]`.
    containers: Vec<Vec<Part>>,
}

impl Builtin {
    fn derive() -> Builtin {
        let (Some(template), Some(spec), Some(container)) = (
            builtin::by_name(POD_TEMPLATE_SPEC),
            builtin::by_name(POD_SPEC),
            builtin::by_name(CONTAINER),
        ) else {
            return Builtin::default();
        };
        let reaches = reaching(&[template, spec]);
        let mut out = Builtin::default();
        let mut spec_shape = None;
        for (group, version, kind) in builtin::kinds() {
            let (Some(root), root_shape) = (
                builtin::root(group, version, kind),
                shape::root(group, version, kind),
            ) else {
                continue;
            };
            let mut walk = Walk {
                template,
                spec,
                reaches: &reaches,
                path: Vec::new(),
                on_path: vec![root],
                found: PodKind {
                    group,
                    version,
                    kind,
                    templates: Vec::new(),
                    specs: Vec::new(),
                },
                spec_shape: None,
            };
            walk.fields(root, root_shape);
            spec_shape = spec_shape.or(walk.spec_shape);
            if !walk.found.templates.is_empty() || !walk.found.specs.is_empty() {
                out.kinds.push(walk.found);
            }
        }
        out.containers = builtin::typed_fields(spec)
            .filter(|&(_, t)| t == container)
            .map(|(name, _)| field_parts(name, spec_shape))
            .collect();
        out
    }

    fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&PodKind> {
        self.kinds
            .binary_search_by(|k| (k.group, k.version, k.kind).cmp(&(group, version, kind)))
            .ok()
            .and_then(|i| self.kinds.get(i))
    }
}

/// Which types have a field (at any depth) whose type is one of `targets`: one pass over the
/// type graph per level of depth, until nothing changes.
fn reaching(targets: &[u32]) -> Vec<bool> {
    let n = builtin::type_count();
    let mut reaches = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for t in 0..n {
            let Ok(at) = u32::try_from(t) else { break };
            if reaches.get(t).copied().unwrap_or(true) {
                continue;
            }
            let below = builtin::typed_fields(at).any(|(_, f)| {
                targets.contains(&f)
                    || usize::try_from(f).is_ok_and(|f| reaches.get(f) == Some(&true))
            });
            if below {
                if let Some(r) = reaches.get_mut(t) {
                    *r = true;
                }
                changed = true;
            }
        }
    }
    reaches
}

/// A field as parts: its name, and `[*]` for each level of list the shape tables give it.
fn field_parts(name: &str, shape_node: Option<u32>) -> Vec<Part> {
    let lists = shape_node
        .and_then(|n| shape::field(n, name))
        .map_or(0, |s| s.shape.lists);
    std::iter::once(Part::Field(name.to_owned()))
        .chain((0..lists).map(|_| Part::Every))
        .collect()
}

/// The search of one kind's fields for its pods.
struct Walk<'r> {
    template: u32,
    spec: u32,
    reaches: &'r [bool],
    path: Vec<Part>,
    /// The types on the way from the root (recursive types are not entered twice).
    on_path: Vec<u32>,
    found: PodKind,
    /// The shape of a PodSpec, once one is met.
    spec_shape: Option<u32>,
}

impl Walk<'_> {
    fn fields(&mut self, at: u32, shape_node: Option<u32>) {
        for (name, t) in builtin::typed_fields(at) {
            let is_pod = t == self.template || t == self.spec;
            let below = usize::try_from(t).is_ok_and(|i| self.reaches.get(i) == Some(&true));
            if !(is_pod || below) || self.on_path.contains(&t) {
                continue;
            }
            let slot = shape_node.and_then(|n| shape::field(n, name));
            let parts = field_parts(name, shape_node);
            let depth = self.path.len();
            self.path.extend(parts);
            if t == self.template {
                self.found.templates.push(self.path.clone());
            } else if t == self.spec {
                self.found.specs.push(self.path.clone());
                self.spec_shape = self.spec_shape.or(slot.and_then(|s| s.node));
            } else {
                self.on_path.push(t);
                self.fields(t, slot.and_then(|s| s.node));
                self.on_path.pop();
            }
            self.path.truncate(depth);
        }
    }
}

impl Pods {
    fn builtin(&self) -> &Builtin {
        self.builtin.get_or_init(|| Arc::new(Builtin::derive()))
    }
}

impl Schema {
    /// Where resources of a kind keep the places `start` names: field paths from the resource's
    /// root, with `[*]` where they cross lists; none for a kind without pods. Built-in kinds'
    /// from the built-in tables, other kinds' as declared ([`Schema::add_pod_holder`]); see
    /// `pods.rs`.
    pub(crate) fn pod_places(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        start: Start,
    ) -> Vec<Vec<Part>> {
        let builtin = self.pods.builtin();
        let known = builtin.kind(group, version, kind);
        let declared = self
            .pods
            .declared
            .iter()
            .filter(|d| d.group == group && d.kind == kind);
        let mut templates: Vec<Vec<Part>> = known.map(|k| k.templates.clone()).unwrap_or_default();
        let mut specs: Vec<Vec<Part>> = known.map(|k| k.specs.clone()).unwrap_or_default();
        for d in declared {
            match d.holder {
                PodHolder::Template => templates.push(d.parts.clone()),
                PodHolder::Spec => specs.push(d.parts.clone()),
            }
        }
        if start == Start::PodTemplate {
            return templates;
        }
        let spec = Part::Field("spec".to_owned());
        let all_specs = templates
            .into_iter()
            .map(|mut t| {
                t.push(spec.clone());
                t
            })
            .chain(specs);
        if start == Start::PodSpec {
            return all_specs.collect();
        }
        all_specs
            .flat_map(|s| {
                builtin.containers.iter().map(move |c| {
                    let mut path = s.clone();
                    path.extend(c.iter().cloned());
                    path
                })
            })
            .collect()
    }

    /// Declares that resources of `group`/`kind` (any version) keep a pod template or a pod
    /// spec (`holder`) at `parts` (a field path from the root, with `[*]` where it crosses
    /// lists), for the named starts of `at:`.
    pub(crate) fn add_pod_holder(
        &mut self,
        group: &str,
        kind: &str,
        holder: PodHolder,
        parts: Vec<Part>,
    ) {
        self.pods.declared.push(Declared {
            group: group.to_owned(),
            kind: kind.to_owned(),
            holder,
            parts,
        });
    }

    /// The built-in kinds that keep pods, and where, sorted by group, version and kind: what the
    /// named starts of `at:` find in them.
    pub fn builtin_pod_kinds(&self) -> Vec<PodKind> {
        self.pods.builtin().kinds.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::Pattern;

    fn places(schema: &Schema, gvk: (&str, &str, &str), start: Start) -> Vec<String> {
        schema
            .pod_places(gvk.0, gvk.1, gvk.2, start)
            .into_iter()
            .map(|parts| Pattern { start: None, parts }.to_string())
            .collect()
    }

    #[test]
    fn workloads_keep_their_pods_where_the_schema_says() {
        let s = Schema::builtin();
        let t = |g, v, k| places(&s, (g, v, k), Start::PodTemplate);
        assert_eq!(t("apps", "v1", "Deployment"), ["spec.template"]);
        assert_eq!(t("apps", "v1", "StatefulSet"), ["spec.template"]);
        assert_eq!(t("apps", "v1", "DaemonSet"), ["spec.template"]);
        assert_eq!(t("apps", "v1", "ReplicaSet"), ["spec.template"]);
        assert_eq!(t("", "v1", "ReplicationController"), ["spec.template"]);
        assert_eq!(t("", "v1", "PodTemplate"), ["template"]);
        assert_eq!(t("batch", "v1", "Job"), ["spec.template"]);
        assert_eq!(
            t("batch", "v1", "CronJob"),
            ["spec.jobTemplate.spec.template"]
        );
        assert_eq!(
            t("apps", "v1", "DeploymentList"),
            ["items[*].spec.template"]
        );
        assert!(t("", "v1", "Pod").is_empty());
        assert!(t("", "v1", "Service").is_empty());
        assert!(t("example.com", "v1", "Foo").is_empty());

        let spec = |g, v, k| places(&s, (g, v, k), Start::PodSpec);
        assert_eq!(spec("", "v1", "Pod"), ["spec"]);
        assert_eq!(
            spec("batch", "v1", "CronJob"),
            ["spec.jobTemplate.spec.template.spec"]
        );
        let c = |g, v, k| places(&s, (g, v, k), Start::Containers);
        assert_eq!(
            c("", "v1", "Pod"),
            ["spec.containers[*]", "spec.initContainers[*]"]
        );
        assert_eq!(
            c("apps", "v1", "Deployment"),
            [
                "spec.template.spec.containers[*]",
                "spec.template.spec.initContainers[*]"
            ]
        );
        assert!(c("", "v1", "ConfigMap").is_empty());
    }

    #[test]
    fn other_kinds_declare_theirs() {
        let mut s = Schema::builtin();
        let parts = |t: &str| t.parse::<Pattern>().unwrap().parts;
        s.add_pod_holder(
            "example.com",
            "Pipeline",
            PodHolder::Template,
            parts("spec.steps[*].template"),
        );
        s.add_pod_holder(
            "example.com",
            "Pipeline",
            PodHolder::Spec,
            parts("spec.runner"),
        );
        let g = ("example.com", "v2", "Pipeline");
        assert_eq!(
            places(&s, g, Start::PodTemplate),
            ["spec.steps[*].template"]
        );
        assert_eq!(
            places(&s, g, Start::PodSpec),
            ["spec.steps[*].template.spec", "spec.runner"]
        );
        assert_eq!(places(&s, g, Start::Containers).len(), 4);
        assert!(places(&s, ("other.com", "v1", "Pipeline"), Start::PodSpec).is_empty());
        // A built-in kind gets the declared places besides its own.
        s.add_pod_holder("apps", "Deployment", PodHolder::Spec, parts("spec.extra"));
        assert_eq!(
            places(&s, ("apps", "v1", "Deployment"), Start::PodSpec),
            ["spec.template.spec", "spec.extra"]
        );
    }

    #[test]
    fn the_kinds_with_pods_are_the_workloads_and_their_lists() {
        let kinds = Schema::builtin().builtin_pod_kinds();
        let name = |k: &PodKind| format!("{}/{}/{}", k.group, k.version, k.kind);
        let (lists, items): (Vec<&PodKind>, Vec<&PodKind>) =
            kinds.iter().partition(|k| k.kind.ends_with("List"));
        assert_eq!(
            items.iter().map(|k| name(k)).collect::<Vec<_>>(),
            [
                "/v1/Pod",
                "/v1/PodTemplate",
                "/v1/ReplicationController",
                "apps/v1/DaemonSet",
                "apps/v1/Deployment",
                "apps/v1/ReplicaSet",
                "apps/v1/StatefulSet",
                "batch/v1/CronJob",
                "batch/v1/Job",
            ]
        );
        // Each list kind keeps its items' pods under `items[*]`.
        assert_eq!(lists.len(), items.len());
        for (list, item) in lists.iter().zip(&items) {
            assert_eq!(list.kind, format!("{}List", item.kind));
            let under = |ps: &[Vec<Part>]| -> Vec<Vec<Part>> {
                ps.iter()
                    .map(|p| [vec![Part::Field("items".into()), Part::Every], p.clone()].concat())
                    .collect()
            };
            assert_eq!(list.templates, under(&item.templates), "{}", list.kind);
            assert_eq!(list.specs, under(&item.specs), "{}", list.kind);
        }
    }
}
