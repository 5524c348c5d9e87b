//! Package diffs: the patches that turn one set of resources (BASE) into another (VARIANT), as
//! a `Merge` functionConfig or as the `patches:` entries of a kustomization.
//!
//! Resources are paired by identity (apiVersion, kind, namespace, name), with hashing. Each
//! changed pair gives one patch, of the chosen type, targeted at its resource; a resource only
//! in BASE gives a strategic merge patch `$patch: delete`; a resource only in VARIANT cannot be
//! made by a patch: it is returned ([`PackageDiff::added`]) and reported. Unchanged resources
//! give nothing. The hosts' bookkeeping annotations (`config.kubernetes.io/*`, ...), which no
//! patch may change, are not compared.
//!
//! Targets name their resource exactly: group, version, kind, name and namespace as anchored,
//! escaped patterns (the effective namespace, `default` for a namespaced resource without one;
//! none for cluster-scoped kinds). The core group is left out, unless another resource would
//! then match (then it is `^$`, the empty group).
//!
//! What it must not do: read or write files, parse text, or run the patches. The caller passes
//! the resources and the schema (CRDs among the inputs included) and writes the result.

use std::borrow::Cow;

use crate::hash::HashMap;
use crate::schema::Schema;
use crate::select::bookkeeping::is_bookkeeping_annotation;
use crate::select::identity::{Id, DEFAULT_NAMESPACE};
use crate::yaml::{emit_node, Entry, Node, ScalarStyle};

use super::{json6902, jsonmerge, two_way, verify, DiffError, Options, Warning};

/// Which patch type a package diff writes for changed resources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PatchType {
    /// Strategic merge patches (`type: merge2`).
    #[default]
    Merge2,
    /// JSON patches (`type: json6902`).
    Json6902,
    /// JSON merge patches (`type: jsonmerge`).
    JsonMerge,
}

impl PatchType {
    /// The `type` a `Merge` functionConfig gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            PatchType::Merge2 => "merge2",
            PatchType::Json6902 => "json6902",
            PatchType::JsonMerge => "jsonmerge",
        }
    }
}

/// What a package diff is written as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// A `Merge` functionConfig (`apiVersion: fn.krm-merge.dev/v1alpha1`).
    #[default]
    Merge,
    /// A mapping holding a kustomization's `patches:` entries (each patch as text), made for
    /// kustomize ([`Options::kustomize`]): strategic merge patches kyaml applies as written,
    /// JSON patches by index, plain strings YAML 1.1 reads as something else quoted.
    Kustomization,
}

/// How a package diff is made.
#[derive(Clone, Debug, Default)]
pub struct PackageOptions {
    pub patch_type: PatchType,
    pub format: Format,
    /// How each patch is made. Merge2 entries of a `Merge` config carry `inferMergeKeys` to
    /// match [`Options::infer_keys`]; identity fields are always written.
    pub diff: Options,
    /// The `spec.schema` to put in the `Merge` config (the OpenAPI documents or merge keys the
    /// diff used beyond the built-in schema and the CRDs among the resources), so that running
    /// the config merges as the diff did.
    pub spec_schema: Option<Node<'static>>,
}

/// A package diff.
#[derive(Clone, Debug)]
pub struct PackageDiff<'n> {
    /// The `Merge` functionConfig, or a mapping with `patches:` (see [`Format`]).
    pub config: Node<'n>,
    /// Resources patched.
    pub changed: usize,
    /// Resources deleted.
    pub deleted: usize,
    /// Resources only VARIANT has, which no patch can create, in VARIANT's order.
    pub added: Vec<Node<'n>>,
    /// What the caller should report.
    pub warnings: Vec<PackageWarning>,
}

/// A warning about one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageWarning {
    pub resource: Id<'static>,
    pub kind: PackageWarningKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackageWarningKind {
    /// The resource's patch cannot give VARIANT exactly.
    Patch(Warning),
    /// The resource is only in VARIANT: a patch cannot create it.
    Added,
}

impl std::fmt::Display for PackageWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            PackageWarningKind::Patch(w) => write!(f, "{}: {w}", self.resource),
            PackageWarningKind::Added => write!(
                f,
                "{}: only in the variant; a patch cannot create a resource, so it is not in the \
                 patches",
                self.resource
            ),
        }
    }
}

/// A package diff that cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    /// Two resources of one side share an identity: pairing would be a guess.
    #[error("{side}: {id} appears more than once")]
    Duplicate { side: &'static str, id: String },
    /// Two resources of BASE differ only in ways a target cannot tell apart (a namespace left
    /// empty and `default`).
    #[error("base: {id} cannot be targeted apart from another resource with the same effective namespace")]
    Ambiguous { id: String },
    /// A resource's patch cannot be made.
    #[error("{id}: {source}")]
    Diff {
        id: Box<Id<'static>>,
        source: DiffError,
    },
    /// kustomize reads every patch that is not a list of operations as a strategic merge patch.
    #[error(
        "kustomize has no JSON merge patches: use merge2 or json6902 with the kustomization format"
    )]
    Unsupported,
}

type Key = (String, String, String, String);

fn key(id: &Id<'_>) -> Key {
    (
        id.api_version.to_string(),
        id.kind.to_string(),
        id.namespace.to_string(),
        id.name.to_string(),
    )
}

/// The patches that turn `base` into `variant`; see the module documentation.
pub fn diff<'n>(
    base: &[Node<'_>],
    variant: &[Node<'n>],
    schema: &Schema,
    opts: &PackageOptions,
) -> Result<PackageDiff<'n>, PackageError> {
    if opts.format == Format::Kustomization && opts.patch_type == PatchType::JsonMerge {
        return Err(PackageError::Unsupported);
    }
    let index =
        |side: &'static str, nodes: &[Node<'_>]| -> Result<HashMap<Key, usize>, PackageError> {
            let mut m = HashMap::default();
            for (i, n) in nodes.iter().enumerate() {
                let id = Id::of(n);
                if m.insert(key(&id), i).is_some() {
                    return Err(PackageError::Duplicate {
                        side,
                        id: id.to_string(),
                    });
                }
            }
            Ok(m)
        };
    let diff_opts = Options {
        kustomize: opts.format == Format::Kustomization,
        ..opts.diff
    };
    let base_index = index("base", base)?;
    let variant_index = index("variant", variant)?;
    let groups = target_groups(base)?;
    let mut patches: Vec<Node<'n>> = Vec::new();
    let mut warnings = Vec::new();
    let (mut changed, mut deleted) = (0, 0);
    for b in base {
        let id = Id::of(b);
        let target = target_of(&id, &groups);
        let Some(&v) = variant_index.get(&key(&id)) else {
            patches.push(entry(opts, PatchType::Merge2, target, delete_patch(b)));
            deleted += 1;
            continue;
        };
        let Some(v) = variant.get(v) else { continue };
        let (old, new) = (without_bookkeeping(b), without_bookkeeping(v));
        let (g, ver) = id.group_version();
        let root = schema.root(g, ver, &id.kind);
        let failed = |source| PackageError::Diff {
            id: Box::new(id.clone().into_owned()),
            source,
        };
        let (d, engine) = match opts.patch_type {
            PatchType::Merge2 => {
                let o = with_identity(&diff_opts);
                let d = two_way::make(&old, &new, schema, root, &o);
                (d, verify::Engine::merge2(&o))
            }
            PatchType::Json6902 => (
                json6902::make(&old, &new, schema, root, &diff_opts),
                verify::Engine::json6902(&diff_opts),
            ),
            PatchType::JsonMerge => (
                jsonmerge::make(&old, &new, &with_identity(&diff_opts)),
                verify::Engine::JsonMerge,
            ),
        };
        let d = d.map_err(failed)?;
        // The patch as it is written: the kustomization's text, or the config's patch.
        let text = match opts.format {
            Format::Kustomization => kustomize_text(d.patch.clone()),
            Format::Merge => verify::text_of(&d.patch),
        };
        verify::two_way(&old, &new, &text, engine, schema, root, &d.warnings).map_err(failed)?;
        if !d.changed {
            continue;
        }
        let patch = d.patch;
        warnings.extend(d.warnings.into_iter().map(|w| PackageWarning {
            resource: Id::of(b).into_owned(),
            kind: PackageWarningKind::Patch(w),
        }));
        patches.push(entry(opts, opts.patch_type, target, patch));
        changed += 1;
    }
    let mut added = Vec::new();
    for v in variant {
        if !base_index.contains_key(&key(&Id::of(v))) {
            warnings.push(PackageWarning {
                resource: Id::of(v).into_owned(),
                kind: PackageWarningKind::Added,
            });
            added.push(v.clone());
        }
    }
    Ok(PackageDiff {
        config: config(opts, patches),
        changed,
        deleted,
        added,
        warnings,
    })
}

fn with_identity(opts: &Options) -> Options {
    Options {
        identity: true,
        ..*opts
    }
}

/// `node` without the hosts' bookkeeping annotations (and without `annotations` when nothing
/// else is left in it).
fn without_bookkeeping<'x, 'a>(node: &'x Node<'a>) -> Cow<'x, Node<'a>> {
    let has = node
        .get_path(&["metadata", "annotations"])
        .is_some_and(|a| {
            a.entries()
                .iter()
                .any(|e| e.key.as_str().is_some_and(is_bookkeeping_annotation))
        });
    if !has {
        return Cow::Borrowed(node);
    }
    let mut copy = node.clone();
    if let Some(meta) = copy.get_mut("metadata") {
        let empty = match meta.get_mut("annotations").and_then(Node::entries_mut) {
            Some(es) => {
                es.retain(|e| !e.key.as_str().is_some_and(is_bookkeeping_annotation));
                es.is_empty()
            }
            None => false,
        };
        if empty {
            meta.remove("annotations");
        }
    }
    Cow::Owned(copy)
}

/// For each (version, kind, name, effective namespace) of BASE, the groups that have it: a
/// target may leave the core group out only where no other group shares the rest.
fn target_groups(base: &[Node<'_>]) -> Result<HashMap<Key, usize>, PackageError> {
    let mut groups: HashMap<Key, usize> = HashMap::default();
    let mut exact: HashMap<Key, ()> = HashMap::default();
    for b in base {
        let id = Id::of(b);
        let (g, v) = id.group_version();
        let ns = id.effective_namespace().to_owned();
        if exact
            .insert(
                (
                    g.to_owned(),
                    format!("{v}/{}", id.kind),
                    ns.clone(),
                    id.name.to_string(),
                ),
                (),
            )
            .is_some()
        {
            return Err(PackageError::Ambiguous { id: id.to_string() });
        }
        *groups
            .entry((v.to_owned(), id.kind.to_string(), ns, id.name.to_string()))
            .or_default() += 1;
    }
    Ok(groups)
}

/// The target naming exactly this resource.
fn target_of(id: &Id<'_>, groups: &HashMap<Key, usize>) -> Node<'static> {
    let (g, v) = id.group_version();
    let pattern = |s: &str| Node::string(quote_meta(s));
    let mut t = Node::map();
    let ns = id.effective_namespace();
    let shared = groups
        .get(&(
            v.to_owned(),
            id.kind.to_string(),
            ns.to_owned(),
            id.name.to_string(),
        ))
        .is_some_and(|&n| n > 1);
    if !g.is_empty() {
        t.set("group", pattern(g));
    } else if shared {
        t.set("group", Node::scalar("^$", ScalarStyle::SingleQuoted));
    }
    t.set("version", pattern(v));
    t.set("kind", pattern(&id.kind));
    t.set("name", pattern(&id.name));
    if !id.is_cluster_scoped() {
        t.set(
            "namespace",
            pattern(if id.namespace.is_empty() {
                DEFAULT_NAMESPACE
            } else {
                ns
            }),
        );
    }
    t
}

/// `s` as a regular expression that matches it alone (once anchored, as targets are): the
/// characters that mean something outside a class escaped, as Go's `regexp.QuoteMeta` does,
/// so that `web-settings` stays readable.
fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `$patch: delete` for this resource, with its identity.
fn delete_patch(b: &Node<'_>) -> Node<'static> {
    let id = Id::of(b);
    let mut p = Node::map();
    p.set("apiVersion", Node::string(id.api_version.to_string()));
    p.set("kind", Node::string(id.kind.to_string()));
    let mut meta = Node::map();
    meta.set("name", Node::string(id.name.to_string()));
    if !id.namespace.is_empty() {
        meta.set("namespace", Node::string(id.namespace.to_string()));
    }
    p.set("metadata", meta);
    p.set("$patch", Node::plain("delete"));
    p
}

fn entry<'n>(
    opts: &PackageOptions,
    ty: PatchType,
    target: Node<'static>,
    patch: Node<'n>,
) -> Node<'n> {
    let mut e = Node::map();
    match opts.format {
        Format::Merge => {
            e.set("type", Node::string(ty.as_str()));
            e.set("target", target);
            if ty == PatchType::Merge2 {
                let mut o = Node::map();
                o.set(
                    "inferMergeKeys",
                    Node::plain(opts.diff.infer_keys.to_string()),
                );
                e.set("options", o);
            }
            e.set("patch", patch);
        }
        Format::Kustomization => {
            // A strategic merge patch names its resource itself. With a target, kustomize
            // would write the patch's labels and annotations as strings first (a `null` that
            // removes one would become the string "null").
            if ty != PatchType::Merge2 {
                e.set("target", target);
            }
            e.set(
                "patch",
                Node::scalar(kustomize_text(patch), ScalarStyle::Any),
            );
        }
    }
    e
}

/// A patch as the text of a kustomization's `patch:`, read back by kustomize as the patch:
/// plain strings YAML 1.1 reads as something else (`on`, `0777`) quoted, as kustomize reads
/// patches as YAML 1.1; and, since kustomize trims the text, a `|` or `>` block that would end
/// it (and lose its last line break) double-quoted.
fn kustomize_text(mut patch: Node<'_>) -> String {
    patch.quote_yaml11_lookalikes();
    if let Some(last) = last_scalar(&mut patch) {
        if matches!(
            last.style(),
            Some(ScalarStyle::Literal | ScalarStyle::Folded | ScalarStyle::Any)
        ) && last.as_str().is_some_and(|t| t.contains('\n'))
        {
            let text = last.as_str().unwrap_or_default().to_owned();
            last.set_text(text, ScalarStyle::DoubleQuoted);
        }
    }
    emit_node(&patch, Default::default())
}

/// The scalar written last in a tree.
fn last_scalar<'x, 'n>(node: &'x mut Node<'n>) -> Option<&'x mut Node<'n>> {
    if node.is_scalar() {
        return Some(node);
    }
    if node.is_map() {
        return node
            .entries_mut()?
            .last_mut()
            .and_then(|e| last_scalar(&mut e.value));
    }
    node.items_mut()?.last_mut().and_then(last_scalar)
}

fn config<'n>(opts: &PackageOptions, patches: Vec<Node<'n>>) -> Node<'n> {
    match opts.format {
        Format::Kustomization => Node::map_of(vec![Entry::new("patches", Node::seq_of(patches))]),
        Format::Merge => {
            let mut meta = Node::map();
            meta.set("name", Node::string("diff"));
            let mut ann = Node::map();
            ann.set(
                crate::select::bookkeeping::LOCAL_CONFIG,
                Node::scalar("true", ScalarStyle::DoubleQuoted),
            );
            meta.set("annotations", ann);
            let mut spec = Node::map();
            spec.set("patches", Node::seq_of(patches));
            if let Some(s) = &opts.spec_schema {
                spec.set("schema", s.clone());
            }
            Node::map_of(vec![
                Entry::new("apiVersion", Node::string(crate::config::API_VERSION)),
                Entry::new("kind", Node::string(crate::config::KIND)),
                Entry::new("metadata", meta),
                Entry::new("spec", spec),
            ])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use crate::krm::{Item, Origin};
    use crate::run::engine;
    use crate::yaml::{parse_stream, to_json};

    fn docs(text: &str) -> Vec<Node<'static>> {
        parse_stream(text)
            .unwrap()
            .into_iter()
            .filter_map(|d| d.root)
            .map(Node::into_owned)
            .collect()
    }

    const BASE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    config.kubernetes.io/index: '0'\nspec:\n  replicas: 1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  namespace: ns\ndata: {a: b}\n";
    const VARIANT: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  namespace: ns\ndata: {a: b}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    config.kubernetes.io/index: '1'\nspec:\n  replicas: 3 # more\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: new\n";

    fn run_config(config: &Node<'_>, base: Vec<Node<'static>>) -> Vec<serde_json::Value> {
        let plan = config::plan(config, None).unwrap();
        let items = base
            .into_iter()
            .enumerate()
            .map(|(i, node)| Item {
                node,
                origin: Origin::Input(i),
                touched: false,
                first_id: None,
            })
            .collect();
        let run = engine::run(&plan, items, None);
        assert!(!run.failed, "{:?}", run.results);
        run.items
            .iter()
            .map(|i| to_json(&i.node).unwrap())
            .collect()
    }

    #[test]
    fn one_patch_per_changed_resource_and_the_function_gives_the_variant() {
        let (base, variant) = (docs(BASE), docs(VARIANT));
        for ty in [PatchType::Merge2, PatchType::Json6902, PatchType::JsonMerge] {
            let opts = PackageOptions {
                patch_type: ty,
                ..PackageOptions::default()
            };
            let d = diff(&base, &variant, &Schema::builtin(), &opts).unwrap();
            assert_eq!((d.changed, d.deleted, d.added.len()), (1, 1, 1), "{ty:?}");
            assert_eq!(d.warnings.len(), 1);
            assert_eq!(d.warnings[0].to_string(), "Secret new: only in the variant; a patch cannot create a resource, so it is not in the patches");
            let got = run_config(&d.config, base.clone());
            let mut want: Vec<serde_json::Value> = [variant[1].clone(), variant[0].clone()]
                .iter()
                .map(|n| to_json(n).unwrap())
                .collect();
            // The host's annotations are the base's: no patch changes them.
            want[0]["metadata"]["annotations"]["config.kubernetes.io/index"] = "0".into();
            assert_eq!(got, want, "{ty:?}");
        }
    }

    #[test]
    fn the_merge_config_and_the_kustomization() {
        let (base, variant) = (docs(BASE), docs(VARIANT));
        let d = diff(
            &base,
            &variant,
            &Schema::builtin(),
            &PackageOptions::default(),
        )
        .unwrap();
        let text = emit_node(&d.config, Default::default());
        assert!(
            text.starts_with("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\n"),
            "{text}"
        );
        assert!(text.contains("  - type: merge2\n    target:\n      group: apps\n      version: v1\n      kind: Deployment\n      name: web\n      namespace: default\n    options:\n      inferMergeKeys: false\n    patch:\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: web\n      spec:\n        replicas: 3 # more\n"), "{text}");
        assert!(text.contains("    patch:\n      apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: gone\n      $patch: delete\n"), "{text}");
        let opts = PackageOptions {
            format: Format::Kustomization,
            ..PackageOptions::default()
        };
        let d = diff(&base, &variant, &Schema::builtin(), &opts).unwrap();
        let text = emit_node(&d.config, Default::default());
        // Strategic merge patches name their resource: no target (with one, kustomize would
        // turn a label's null into the string "null").
        assert!(
            text.starts_with("patches:\n- patch: |\n    apiVersion: apps/v1\n"),
            "{text}"
        );
        // JSON patches need one, and go by index.
        let opts = PackageOptions {
            format: Format::Kustomization,
            patch_type: PatchType::Json6902,
            ..PackageOptions::default()
        };
        let d = diff(&base, &variant, &Schema::builtin(), &opts).unwrap();
        let text = emit_node(&d.config, Default::default());
        assert!(
            text.contains("- target:\n    group: apps\n    version: v1\n    kind: Deployment\n    name: web\n    namespace: default\n  patch: |\n    - op: replace\n      path: /spec/replicas\n"),
            "{text}"
        );
    }

    #[test]
    fn kustomization_text_survives_kustomizes_reading() {
        // A block scalar that ends the patch would lose its line break to kustomize's trim;
        // a plain `on` would be a boolean to YAML 1.1.
        let base = docs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: x\n");
        let variant = docs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  b: on\n  a: |\n    line\n");
        let opts = PackageOptions {
            format: Format::Kustomization,
            ..PackageOptions::default()
        };
        let d = diff(&base, &variant, &Schema::builtin(), &opts).unwrap();
        let text = emit_node(&d.config, Default::default());
        assert!(
            text.ends_with("    data:\n      b: \"on\"\n      a: \"line\\n\"\n"),
            "{text}"
        );
    }

    #[test]
    fn targets_match_their_names_alone() {
        for name in [
            "web-settings",
            "a.b",
            "x+y*z?",
            "(a|b)",
            "[c]{1}",
            "^d$",
            "e\\f",
        ] {
            let re = regex::Regex::new(&format!("^(?:{})$", quote_meta(name))).unwrap();
            assert!(re.is_match(name), "{name}");
            assert!(!re.is_match(&format!("{name}x")), "{name}");
        }
        assert_eq!(quote_meta("web-settings"), "web-settings");
        assert_eq!(quote_meta("a.b"), "a\\.b");
    }

    #[test]
    fn duplicates_and_look_alike_targets_are_errors() {
        let twice = docs("kind: A\nmetadata: {name: a}\n---\nkind: A\nmetadata: {name: a}\n");
        let err = diff(&twice, &[], &Schema::builtin(), &PackageOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "base: A a appears more than once");
        let alike = docs("apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\napiVersion: v1\nkind: A\nmetadata: {name: a, namespace: default}\n");
        assert!(matches!(
            diff(&alike, &[], &Schema::builtin(), &PackageOptions::default()),
            Err(PackageError::Ambiguous { .. })
        ));
        // The core group is named only where another group shares the rest.
        let groups = docs("apiVersion: v1\nkind: Event\nmetadata: {name: e}\n---\napiVersion: x.io/v1\nkind: Event\nmetadata: {name: e}\n");
        let d = diff(&groups, &[], &Schema::builtin(), &PackageOptions::default()).unwrap();
        assert!(emit_node(&d.config, Default::default()).contains("group: '^$'"));
    }
}
