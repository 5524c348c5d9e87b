use std::path::PathBuf;

use super::*;
use crate::merge::merge2::NewItems;
use crate::schema::ListMerge;
use crate::yaml::parse_stream;

const HEAD: &str = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\n";

fn node(yaml: &str) -> Node<'static> {
    let docs = parse_stream(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    docs.into_iter()
        .next()
        .and_then(|d| d.root)
        .map(Node::into_owned)
        .unwrap_or_else(Node::null)
}

fn plan_of(yaml: &str) -> Result<Plan, ConfigErrors> {
    plan(&node(yaml), None)
}

fn ok(yaml: &str) -> Plan {
    plan_of(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

fn err(yaml: &str) -> String {
    match plan_of(yaml) {
        Ok(p) => panic!("expected an error, got {} steps\n{yaml}", p.steps.len()),
        Err(e) => e.to_string(),
    }
}

/// A Merge config with these lines under `spec:` (already indented by two).
fn merge(spec: &str) -> String {
    format!("{HEAD}spec:\n{spec}")
}

/// The parts of a step the tests look at, whatever its action.
trait Parts {
    /// The patch documents (the update's for merge3).
    fn patch(&self) -> Vec<&Node<'static>>;
    /// merge3's original documents.
    fn original(&self) -> Vec<&Node<'static>>;
    /// The target, if any.
    fn target(&self) -> Option<&Target>;
    /// A JSON patch's operations.
    fn ops(&self) -> &[crate::patch::json6902::Op<'static>];
}

impl Parts for Step {
    fn patch(&self) -> Vec<&Node<'static>> {
        match &self.action {
            Action::Merge2 { docs, .. }
            | Action::JsonMerge { docs, .. }
            | Action::Apply { docs, .. } => docs.iter().collect(),
            Action::Merge3 { updated, .. } => vec![updated],
            Action::Update { updated, .. } => updated.iter().collect(),
            Action::Json6902 { .. } => Vec::new(),
        }
    }

    fn original(&self) -> Vec<&Node<'static>> {
        match &self.action {
            Action::Merge3 { original, .. } => vec![original],
            Action::Update { original, .. } => original.iter().collect(),
            _ => Vec::new(),
        }
    }

    fn target(&self) -> Option<&Target> {
        self.action.target()
    }

    fn ops(&self) -> &[crate::patch::json6902::Op<'static>] {
        match &self.action {
            Action::Json6902 { ops, .. } => ops,
            _ => &[],
        }
    }
}

const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";

#[test]
fn merge_form_reads_every_field() {
    let p = ok(&merge(
        r#"  patches:
  - type: merge2
    patch: |
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec: {replicas: 3}
    target:
      group: apps
      version: v1
      kind: Deployment
      name: "web-.*"
      namespace: "prod|staging"
      labelSelector: "env in (prod),tier!=cache"
      annotationSelector: "team=payments"
    options:
      allowNameChange: true
      allowKindChange: true
      newListItems: prepend
      inferMergeKeys: false
  - type: merge3
    patch: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "2"}}
    original: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "1"}}
    options: {conflicts: error}
"#,
    ));
    assert_eq!(p.form, ConfigForm::Merge);
    assert_eq!(p.steps.len(), 2);
    let s = &p.steps[0];
    assert_eq!(
        (s.index, s.kind(), s.source.as_str()),
        (0, PatchKind::Merge2, "inline")
    );
    assert_eq!(s.patch().len(), 1);
    assert_eq!(s.patch()[0].str_at(&["spec", "replicas"]), Some("3"));
    assert!(s.original().is_empty());
    let target = s.target().map(|t| t.to_string());
    assert_eq!(
        target.as_deref(),
        Some(
            "{group: apps, version: v1, kind: Deployment, name: web-.*, namespace: prod|staging, \
             labelSelector: \"env in (prod),tier!=cache\", annotationSelector: team=payments}"
        )
    );
    assert_eq!(
        s.options,
        PatchOptions {
            allow_name_change: true,
            allow_kind_change: true,
            new_list_items: NewItems::Prepend,
            infer_merge_keys: false,
            conflicts: Conflicts::Warn,
            compat: Compat::Kustomize,
            crd_merge_keys: false,
            validation: Validation::Warn,
        }
    );
    let s = &p.steps[1];
    assert_eq!((s.index, s.kind()), (1, PatchKind::Merge3));
    assert!(s.target().is_none());
    assert_eq!(s.original()[0].str_at(&["data", "a"]), Some("1"));
    assert_eq!(s.patch()[0].str_at(&["data", "a"]), Some("2"));
    assert_eq!(s.options.conflicts, Conflicts::Error);
    assert_eq!(
        (s.options.new_list_items, s.options.infer_merge_keys),
        (NewItems::Append, true),
        "defaults"
    );
}

#[test]
fn empty_forms_have_no_steps() {
    for yaml in [
        "",
        "~",
        "{}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\ndata: {}\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\n",
        "apiVersion: v1\nkind: ConfigMap\ndata:\n",
    ] {
        let p = ok(yaml);
        assert_eq!((p.form, p.steps.len()), (ConfigForm::Empty, 0), "{yaml:?}");
    }
    let p = ok(HEAD);
    assert_eq!((p.form, p.steps.len()), (ConfigForm::Merge, 0));
    let p = ok(&merge("  patches:\n"));
    assert_eq!((p.form, p.steps.len()), (ConfigForm::Merge, 0));
}

#[test]
fn every_type_name_is_accepted() {
    let table = [
        ("merge2", PatchKind::Merge2),
        ("StrategicMerge", PatchKind::Merge2),
        ("StrategicMergePatch", PatchKind::Merge2),
        ("json6902", PatchKind::Json6902),
        ("JsonPatch", PatchKind::Json6902),
        ("JSON6902", PatchKind::Json6902),
        ("jsonmerge", PatchKind::JsonMerge),
        ("MergePatch", PatchKind::JsonMerge),
        ("JsonMergePatch", PatchKind::JsonMerge),
        ("merge3", PatchKind::Merge3),
        ("apply", PatchKind::Apply),
        ("ClientSideApply", PatchKind::Apply),
    ];
    for (name, kind) in table {
        let patch = if kind == PatchKind::Json6902 {
            "[{op: remove, path: /spec}]"
        } else {
            "{kind: Deployment, metadata: {name: web}}"
        };
        let original = if kind == PatchKind::Merge3 {
            format!("    original: {patch}\n")
        } else {
            String::new()
        };
        let p = ok(&merge(&format!(
            "  patches:\n  - type: {name}\n    patch: {patch}\n{original}    target: {{}}\n"
        )));
        assert_eq!(p.steps[0].kind(), kind, "{name}");
        assert_eq!(name.parse::<PatchKind>(), Ok(kind));
    }
    assert_eq!(
        PatchKind::all_names().count(),
        table.len(),
        "the table covers every name"
    );
    for kind in PatchKind::ALL {
        assert_eq!(kind.to_string().parse::<PatchKind>(), Ok(kind));
    }
}

#[test]
fn type_is_detected_from_the_patch() {
    let table = [
        ("{kind: Deployment, metadata: {name: web}}", PatchKind::Merge2),
        ("\"kind: Deployment\\nmetadata: {name: web}\\n\"", PatchKind::Merge2),
        (
            "|\n      kind: Deployment\n      metadata: {name: a}\n      ---\n      kind: Deployment\n      metadata: {name: b}",
            PatchKind::Merge2,
        ),
        (
            "'{\"kind\": \"Deployment\", \"metadata\": {\"name\": \"web\"}}'",
            PatchKind::Merge2,
        ),
        ("[{op: add, path: /a, value: 1}]", PatchKind::Json6902),
        ("\"- op: remove\\n  path: /a\\n\"", PatchKind::Json6902),
        (
            "'[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 3}]'",
            PatchKind::Json6902,
        ),
        (
            "|\n      [\n      \t{\"op\": \"remove\", \"path\": \"/a\"}\n      ]",
            PatchKind::Json6902,
        ),
        ("[]", PatchKind::Json6902),
    ];
    for (patch, kind) in table {
        let yaml = merge(&format!(
            "  patches:\n  - patch: {patch}\n    target: {{}}\n"
        ));
        let p = ok(&yaml);
        assert_eq!(p.steps[0].kind(), kind, "{patch}");
        if kind == PatchKind::Json6902 {
            assert_eq!(p.steps[0].patch().len(), 0, "parsed into operations");
        }
    }
    let p = ok(&merge(
        "  patches:\n  - patch: |\n      kind: Deployment\n      metadata: {name: a}\n      ---\n      ---\n      kind: Service\n      metadata: {name: b}\n",
    ));
    assert_eq!(p.steps[0].patch().len(), 2, "empty documents are dropped");
}

/// `(lines under spec:, expected error)`: each must fail with exactly this message.
const MERGE_ERRORS: &[(&str, &str)] = &[
    // Type detection.
    (
        "  patches:\n  - patch: '3'\n",
        "spec.patches[0].patch: the patch is a number; a patch is a partial resource (a mapping) or one list of JSON patch operations",
    ),
    (
        "  patches:\n  - patch: '[a, b]'\n    target: {}\n",
        "spec.patches[0].patch: a list, but not of JSON patch operations (mappings with op); a patch is a partial resource (a mapping) or a list of operations",
    ),
    (
        "  patches:\n  - patch: \"kind: A\\n---\\n- op: remove\\n\"\n",
        "spec.patches[0].patch: document 2 is a list; a patch is a partial resource (a mapping) or one list of JSON patch operations",
    ),
    // json6902 needs a target, and operations.
    (
        "  patches:\n  - patch: '[{op: remove, path: /a}]'\n",
        "spec.patches[0].target: a json6902 patch needs a target: a list of operations does not name the resource it patches",
    ),
    (
        "  patches:\n  - type: json6902\n    patch: {kind: A}\n    target: {}\n",
        "spec.patches[0].patch: a json6902 patch is a list of operations, found a mapping",
    ),
    (
        "  patches:\n  - type: JsonPatch\n    patch: \"- op: remove\\n  path: /a\\n---\\n- op: remove\\n  path: /b\\n\"\n    target: {}\n",
        "spec.patches[0].patch: a json6902 patch is one list of operations, found 2 documents",
    ),
    (
        "  patches:\n  - patch: [{op: ad, path: /a}]\n    target: {}\n",
        "spec.patches[0].patch[0].op: unknown operation \"ad\"; expected add, remove, replace, move, copy or test",
    ),
    (
        "  patches:\n  - patch: [{op: remove, path: /a}, {op: add, path: /b}]\n    target: {}\n",
        "spec.patches[0].patch[1]: missing value (a add operation needs one)",
    ),
    (
        "  patches:\n  - patch: [{op: move, path: /a}]\n    target: {}\n",
        "spec.patches[0].patch[0]: missing from (a move operation needs one)",
    ),
    (
        "  patches:\n  - patch: [{op: remove, path: a/b}]\n    target: {}\n",
        "spec.patches[0].patch[0].path: \"a/b\": a JSON pointer must be empty or start with '/'",
    ),
    (
        "  patches:\n  - type: json6902\n    patch: [{op: remove}, 3]\n    target: {}\n",
        "spec.patches[0].patch[0]: missing path (a remove operation needs one)",
    ),
    (
        "  patches:\n  - type: json6902\n    patch: [3]\n    target: {}\n",
        "spec.patches[0].patch[0]: expected an operation (a mapping with op and path), found a number",
    ),
    // The other types take mappings.
    (
        "  patches:\n  - type: merge2\n    patch: [{op: remove, path: /a}]\n    target: {}\n",
        "spec.patches[0].patch: the patch is a list; a merge2 patch is made of partial resources (mappings)",
    ),
    (
        "  patches:\n  - type: jsonmerge\n    patch: \"kind: A\\n---\\nfoo\\n\"\n    target: {}\n",
        "spec.patches[0].patch: document 2 is a string; a jsonmerge patch is made of partial resources (mappings)",
    ),
    // Empty patches.
    (
        "  patches:\n  - patch: \"\"\n",
        "spec.patches[0].patch: empty: no YAML or JSON document",
    ),
    (
        "  patches:\n  - patch: |\n      # only a comment\n\n    target: {}\n",
        "spec.patches[0].patch: empty: no YAML or JSON document",
    ),
    ("  patches:\n  - patch:\n", "spec.patches[0].patch: empty: no YAML or JSON document"),
    // patch and path.
    (
        "  patches:\n  - patch: {kind: A}\n    path: a.yaml\n",
        "spec.patches[0]: give either patch or path, not both",
    ),
    (
        "  patches:\n  - target: {kind: A}\n",
        "spec.patches[0]: give the patch: inline (patch) or in a file (path)",
    ),
    (
        "  patches:\n  - path: \"\"\n",
        "spec.patches[0].path: empty path",
    ),
    // original is merge3's.
    (
        "  patches:\n  - patch: {kind: A, metadata: {name: a}}\n    original: {kind: A, metadata: {name: a}}\n",
        "spec.patches[0].original: only merge3 patches take an original; this patch is merge2 (set type: merge3 for a 3-way merge)",
    ),
    (
        "  patches:\n  - type: apply\n    patch: {kind: A, metadata: {name: a}}\n    originalPath: o.yaml\n",
        "spec.patches[0].originalPath: only merge3 patches take an original; this patch is apply",
    ),
    (
        "  patches:\n  - type: merge3\n    patch: {kind: A, metadata: {name: a}}\n",
        "spec.patches[0]: a merge3 patch needs the common ancestor: original or originalPath",
    ),
    (
        "  patches:\n  - type: merge3\n    patch: {kind: A, metadata: {name: a}}\n    original: {kind: A, metadata: {name: a}}\n    originalPath: o.yaml\n",
        "spec.patches[0]: give either original or originalPath, not both",
    ),
    (
        "  patches:\n  - type: merge3\n    patch: \"kind: A\\n---\\nkind: B\\n\"\n    original: {kind: A}\n    target: {kind: A}\n",
        "spec.patches[0]: a merge3 patch with a target takes one document in patch and one in original; found 2 and 1",
    ),
    // Without a target, documents need an identity.
    (
        "  patches:\n  - patch: {spec: {replicas: 3}}\n",
        "spec.patches[0].patch: the patch has no kind: without a target, each document patches the item with its own apiVersion, kind, namespace and name; give them, or give a target",
    ),
    (
        "  patches:\n  - type: merge3\n    patch: {kind: A, metadata: {name: a}}\n    original: \"kind: A\\nmetadata: {name: a}\\n---\\nkind: B\\n\"\n",
        "spec.patches[0].original: document 2 has no metadata.name: without a target, each document patches the item with its own apiVersion, kind, namespace and name; give them, or give a target",
    ),
    // Unknown fields, at every level.
    (
        "  foo: 1\n",
        "spec.foo: unknown field `foo`, expected one of `patches`, `failOn`, `schema`",
    ),
    (
        "  patches:\n  - patch: {kind: A}\n    tagret: {}\n",
        "spec.patches[0].tagret: unknown field `tagret`, expected one of `name`, `type`, `patch`, `path`, `original`, `originalPath`, `target`, `at`, `options`; did you mean `target`?",
    ),
    (
        "  patches:\n  - patch: {kind: A}\n    target: {nmae: web}\n",
        "spec.patches[0].target.nmae: unknown field `nmae`, expected one of `group`, `version`, `kind`, `name`, `namespace`, `labelSelector`, `annotationSelector`; did you mean `name`?",
    ),
    (
        "  patches:\n  - patch: {kind: A, metadata: {name: a}}\n    options: {allowNameChanges: true}\n",
        "spec.patches[0].options.allowNameChanges: unknown field `allowNameChanges`, expected one of `allowNameChange`, `allowKindChange`, `newListItems`, `inferMergeKeys`, `conflicts`, `compatibility`, `crdMergeKeys`, `validation`, `strict`; did you mean `allowNameChange`?",
    ),
    (
        "  schema: {openapi: {}}\n",
        "spec.schema.openapi: unknown field `openapi`, expected one of `openAPI`, `mergeKeys`, `workloads`; did you mean `openAPI`?",
    ),
    (
        "  schema: {openAPI: {file: x}}\n",
        "spec.schema.openAPI.file: unknown field `file`, expected `path` or `inline`",
    ),
    (
        "  schema: {mergeKeys: [{kind: Foo, path: spec.items, key: [name]}]}\n",
        "spec.schema.mergeKeys[0].key: unknown field `key`, expected one of `group`, `kind`, `path`, `keys`, `strategy`; did you mean `keys`?",
    ),
    // Wrong types and values.
    (
        "  patches:\n  - patch: {kind: A, metadata: {name: a}}\n    options: {inferMergeKeys: \"yes\"}\n",
        "spec.patches[0].options.inferMergeKeys: invalid type: string \"yes\", expected a boolean",
    ),
    (
        "  patches:\n  - patch: {kind: A, metadata: {name: a}}\n    options: {newListItems: middle}\n",
        "spec.patches[0].options.newListItems: unknown variant `middle`, expected `append` or `prepend`",
    ),
    (
        "  patches:\n  - patch: {kind: A, metadata: {name: a}}\n    options: {conflicts: fail}\n",
        "spec.patches[0].options.conflicts: unknown variant `fail`, expected `warn` or `error`",
    ),
    (
        "  patches:\n  - type: Strategic\n    patch: {kind: A, metadata: {name: a}}\n",
        "spec.patches[0].type: unknown type \"Strategic\"; expected one of merge2, StrategicMerge, StrategicMergePatch, json6902, JsonPatch, JSON6902, jsonmerge, MergePatch, JsonMergePatch, merge3, apply, ClientSideApply",
    ),
    (
        "  patches:\n  - patch: 5\n",
        "spec.patches[0].patch: invalid type: integer `5`, expected a string of YAML or JSON documents, a mapping or a list",
    ),
    (
        "  patches:\n  - patch: {kind: A}\n    target: {kind: 5}\n",
        "spec.patches[0].target.kind: invalid type: integer `5`, expected a string",
    ),
    (
        "  patches: {a: 1}\n",
        "spec.patches: invalid type: map, expected a sequence",
    ),
    (
        "  schema: {mergeKeys: [{path: spec.items}]}\n",
        "spec.schema.mergeKeys[0]: missing field `kind`",
    ),
    // Targets that do not compile.
    (
        "  patches:\n  - patch: {kind: A}\n    target: {name: \"*web\"}\n",
        "spec.patches[0].target.name: invalid regex \"*web\": repetition operator missing expression (a glob? target patterns are regular expressions: did you mean \".*web\"?)",
    ),
    (
        "  patches:\n  - patch: {kind: A}\n    target: {labelSelector: \"a in b\"}\n",
        "spec.patches[0].target.labelSelector: invalid selector \"a in b\": ",
    ),
    // The schema section.
    (
        "  schema: {openAPI: {}}\n",
        "spec.schema.openAPI: give path or inline",
    ),
    (
        "  schema: {openAPI: {path: a.json, inline: {}}}\n",
        "spec.schema.openAPI: give either path or inline, not both",
    ),
    (
        "  schema: {openAPI: {inline: [1]}}\n",
        "spec.schema.openAPI.inline: expected an OpenAPI v2 document (an object with definitions)",
    ),
    (
        "  schema: {openAPI: {inline: {swagger: \"2.0\"}}}\n",
        "spec.schema.openAPI.inline: missing definitions",
    ),
    (
        "  schema: {openAPI: {inline: {definitions: {a: {$ref: \"#/definitions/b\"}}}}}\n",
        "spec.schema.openAPI.inline: definitions[\"a\"]: $ref \"#/definitions/b\" does not resolve",
    ),
    (
        "  schema: {openAPI: {inline: \"{definitions: [\"}}\n",
        "spec.schema.openAPI.inline: line 1, column ",
    ),
    (
        "  schema: {mergeKeys: [{kind: Foo, path: spec.items, keys: [a], strategy: replace}]}\n",
        "spec.schema.mergeKeys[0]: strategy replace takes no keys",
    ),
    (
        "  schema: {mergeKeys: [{kind: Foo, path: spec.items}]}\n",
        "spec.schema.mergeKeys[0]: nothing declared: give keys, a strategy, or both",
    ),
];

#[test]
fn merge_form_errors_name_the_field() {
    for (spec, expected) in MERGE_ERRORS {
        let got = match plan_of(&merge(spec)) {
            Ok(_) => panic!("expected an error\n{spec}"),
            Err(e) => e.to_string(),
        };
        if expected.ends_with(": ") || expected.ends_with("column ") {
            assert!(
                got.starts_with(expected),
                "{spec}\n got: {got}\nwant: {expected}..."
            );
        } else {
            assert_eq!(&got, expected, "{spec}");
        }
    }
}

#[test]
fn top_level_errors() {
    let table = [
        (
            "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nspec: {}\nstatus: {}\n",
            "status: unknown field `status`, expected one of `apiVersion`, `kind`, `metadata`, `spec`",
        ),
        (
            "apiVersion: fn.krm-merge.dev/v1\nkind: Merge\n",
            "apiVersion: kind Merge needs apiVersion fn.krm-merge.dev/v1alpha1, found \"fn.krm-merge.dev/v1\"",
        ),
        (
            "kind: Merge\n",
            "apiVersion: kind Merge needs apiVersion fn.krm-merge.dev/v1alpha1, found missing",
        ),
        (
            "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: [a]\n",
            "metadata: invalid type: sequence, expected a map",
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\n",
            "kind: apiVersion \"apps/v1\", kind \"Deployment\" is not a functionConfig krm-merge reads; use kind Merge (apiVersion fn.krm-merge.dev/v1alpha1), kustomize's PatchTransformer, a kustomization's patches, or a v1 ConfigMap with data keys type, patch, original, group, version, kind, name, namespace, labelSelector, annotationSelector, at, allowNameChange, allowKindChange, newListItems, inferMergeKeys, conflicts, compatibility, crdMergeKeys, validation, strict, failOn",
        ),
        (
            "- a\n",
            "functionConfig: expected a mapping (a KRM object), found a list",
        ),
    ];
    for (yaml, expected) in table {
        assert_eq!(err(yaml), expected, "{yaml}");
    }
}

#[test]
fn metadata_is_free_form() {
    let p = ok(&format!(
        "{HEAD}metadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {{path: ./krm-merge}}\n    config.kubernetes.io/local-config: 'true'\n    internal.config.kubernetes.io/path: fn.yaml\n  anything: [1, 2]\nspec:\n  patches:\n  - patch: {{kind: A, metadata: {{name: a}}}}\n"
    ));
    assert_eq!(p.steps.len(), 1);
}

#[test]
fn inline_patch_keeps_its_comments() {
    let p = ok(&merge(
        "  patches:\n  - patch:\n      # the deployment\n      kind: Deployment\n      metadata:\n        name: web\n      spec:\n        replicas: 3 # three\n",
    ));
    let doc = &p.steps[0].patch()[0];
    assert!(doc.is_map());
    let replicas = doc.get_path(&["spec", "replicas"]).unwrap();
    assert_eq!(
        replicas.comments().line.as_ref().map(|c| c.text.as_ref()),
        Some(" three")
    );
    let kind = &doc.entries()[0].key;
    assert_eq!(
        kind.comments().head.first().map(|c| c.text.as_ref()),
        Some(" the deployment")
    );
}

#[test]
fn malformed_patch_text_is_located() {
    let got = err(&merge(
        "  patches:\n  - patch: |\n      kind: A\n      metadata:\n        name: a\n         bad: [\n",
    ));
    assert!(
        got.starts_with("spec.patches[0].patch: line 4, column "),
        "{got}"
    );
    assert!(got.contains(" of the inline text: "), "{got}");
    let got = err(&merge("  patches:\n  - patch: \"a: 1\\na: 2\\n\"\n"));
    assert!(
        got.starts_with("spec.patches[0].patch: line 2, column 1 of the inline text: "),
        "{got}"
    );
}

#[test]
fn aliases_are_expanded_within_the_budget() {
    let p = ok(&merge(
        "  patches:\n  - patch: |\n      kind: A\n      metadata: &m {name: a}\n      spec: {copy: *m}\n",
    ));
    assert_eq!(
        p.steps[0].patch()[0].str_at(&["spec", "copy", "name"]),
        Some("a")
    );
    // Aliases in the config itself.
    let p = ok(&merge(
        "  patches:\n  - patch: {kind: A, metadata: &n {name: a}}\n    target: *n\n",
    ));
    assert_eq!(
        p.steps[0].target().map(|t| t.to_string()).as_deref(),
        Some("{name: a}")
    );

    // Nine levels of ten aliases each: 10^9 nodes.
    let mut bomb = String::from("kind: A\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let refs = vec![format!("*l{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
    }
    let inline: String = bomb.lines().map(|l| format!("      {l}\n")).collect();
    let got = err(&merge(&format!(
        "  patches:\n  - patch: |\n{inline}    target: {{}}\n"
    )));
    assert_eq!(
        got,
        "spec.patches[0].patch: expanding aliases would add more than 1000000 nodes to the \
         functionConfig (an alias bomb?)"
    );
    let got = err(&format!(
        "{HEAD}metadata:\n{}",
        bomb.replace("kind: A\n", "")
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    ));
    assert_eq!(
        got,
        "functionConfig: expanding aliases would add more than 1000000 nodes to the \
         functionConfig (an alias bomb?)"
    );
}

#[test]
fn the_alias_budget_is_shared_by_all_patches() {
    // Each patch adds about 345,000 nodes and keeps copies of 123,000 for its anchors (which
    // count while it is expanded): two fit, the third does not.
    let mut one =
        String::from("kind: A\nmetadata: {name: a}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..5 {
        let refs = vec![format!("*l{}", i - 1); 10].join(", ");
        one.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
    }
    one.push_str("l5: [*l4, *l4]\n");
    let inline: String = one.lines().map(|l| format!("      {l}\n")).collect();
    let entry = format!("  - patch: |\n{inline}");
    ok(&merge(&format!("  patches:\n{entry}{entry}")));
    let got = err(&merge(&format!("  patches:\n{entry}{entry}{entry}")));
    assert!(
        got.starts_with("spec.patches[2].patch: expanding aliases"),
        "{got}"
    );
}

// ----- files --------------------------------------------------------------------------------

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("krm-merge-config-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, name: &str, text: &str) {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, text).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn paths_are_read_relative_to_base_dir() {
    let dir = TempDir::new("paths");
    dir.write(
        "patches/replicas.yaml",
        &format!("{DEPLOY}spec:\n  replicas: 3\n"),
    );
    dir.write("patches/orig.yaml", DEPLOY);
    dir.write(
        "ops.json",
        "[\n\t{\"op\": \"remove\", \"path\": \"/spec\"}\n]\n",
    );
    let config = node(&merge(
        "  patches:\n  - path: patches/replicas.yaml\n  - type: merge3\n    path: patches/replicas.yaml\n    originalPath: patches/orig.yaml\n  - path: ops.json\n    target: {kind: Deployment}\n",
    ));
    let p = plan(&config, Some(&dir.0)).unwrap();
    let s = &p.steps[0];
    assert_eq!(
        (s.kind(), s.source.as_str()),
        (PatchKind::Merge2, "patches/replicas.yaml")
    );
    assert_eq!(s.patch()[0].str_at(&["spec", "replicas"]), Some("3"));
    assert_eq!(
        p.steps[1].original()[0].str_at(&["metadata", "name"]),
        Some("web")
    );
    assert_eq!(p.steps[2].kind(), PatchKind::Json6902);

    let got = plan(
        &node(&merge("  patches:\n  - path: nope.yaml\n")),
        Some(&dir.0),
    )
    .unwrap_err()
    .to_string();
    // A missing file names where it was looked for, and why there.
    let missing = dir.0.join("nope.yaml");
    assert_eq!(
        got,
        format!(
            "spec.patches[0].path: nope.yaml: no such file: looked for {} (relative to the \
             functionConfig's directory, {})",
            missing.display(),
            dir.0.display()
        ),
    );
    let got = plan(
        &node(&merge("  patches:\n  - path: patches\n")),
        Some(&dir.0),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        got,
        format!(
            "spec.patches[0].path: {}: not a regular file",
            dir.0.join("patches").display()
        )
    );

    dir.write("bad.yaml", "kind: A\nmetadata:\n  name: [\n");
    let got = plan(
        &node(&merge("  patches:\n  - path: bad.yaml\n")),
        Some(&dir.0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        got.starts_with(&format!(
            "spec.patches[0].path: {}: line ",
            dir.0.join("bad.yaml").display()
        )),
        "{got}"
    );
    dir.write("empty.yaml", "# nothing\n");
    let got = plan(
        &node(&merge("  patches:\n  - path: empty.yaml\n")),
        Some(&dir.0),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        got,
        format!(
            "spec.patches[0].path: {}: empty: no YAML or JSON document",
            dir.0.join("empty.yaml").display()
        )
    );
    std::fs::write(dir.0.join("latin1.yaml"), b"kind: \xe9\n").unwrap();
    let got = plan(
        &node(&merge("  patches:\n  - path: latin1.yaml\n")),
        Some(&dir.0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        got.ends_with("latin1.yaml: not UTF-8 text (invalid byte at offset 6)"),
        "{got}"
    );

    // Absolute paths are taken as they are: inside the base directory's tree they load, outside
    // it only when the load restrictor is lifted.
    let absolute = dir.0.join("patches/replicas.yaml");
    let config = node(&merge(&format!(
        "  patches:\n  - path: {:?}\n",
        absolute.display().to_string()
    )));
    assert_eq!(plan(&config, Some(&dir.0)).unwrap().steps.len(), 1);
    let elsewhere = Load::new(Some(std::path::Path::new("/nonexistent")));
    assert!(plan_with(&config, &elsewhere).is_err());
    let lifted = elsewhere.restricted(LoadRestrictor::None);
    assert_eq!(plan_with(&config, &lifted).unwrap().steps.len(), 1);
}

/// `path:` read any file the process could read. Files must now resolve,
/// `..` and symlinks followed, inside the root's tree (the base directory unless the caller
/// names another root); the error names the rule, the file and the root.
#[test]
fn files_outside_the_root_are_refused_unless_the_restrictor_is_lifted() {
    let dir = TempDir::new("confined");
    dir.write(
        "outside/secret.yaml",
        "kind: Secret\nmetadata:\n  name: token\n",
    );
    dir.write("pkg/in.yaml", "kind: A\nmetadata:\n  name: a\n");
    dir.write("pkg/sub/fn.yaml", "");
    let base = dir.0.join("pkg");
    let real_base = std::fs::canonicalize(&base).unwrap();
    let config = |path: &str| {
        node(&merge(&format!(
            "  patches:\n  - type: jsonmerge\n    path: {path:?}\n    target: {{}}\n"
        )))
    };
    let refused = |got: String, written: &str| {
        assert!(
            got.starts_with(&format!(
                "spec.patches[0].path: {written}: refused by the load restrictor rootOnly: it resolves to "
            )) && got.contains(&format!("outside {}", real_base.display()))
                && got.contains("--load-restrictor none"),
            "{got}"
        );
    };
    let restricted = Load::new(Some(&base));
    let lifted = restricted.clone().restricted(LoadRestrictor::None);
    let mut escapes = vec![
        "../outside/secret.yaml".to_owned(),
        "sub/../../outside/secret.yaml".to_owned(),
        dir.0.join("outside/secret.yaml").display().to_string(),
    ];
    if std::path::Path::new("/proc/self/status").exists() {
        escapes.push("/proc/self/status".to_owned());
    }
    #[cfg(unix)]
    {
        // A symlink inside the tree that points out of it, to a file and to a directory.
        std::os::unix::fs::symlink(dir.0.join("outside/secret.yaml"), base.join("link.yaml"))
            .unwrap();
        std::os::unix::fs::symlink(dir.0.join("outside"), base.join("linkdir")).unwrap();
        escapes.push("link.yaml".to_owned());
        escapes.push("linkdir/secret.yaml".to_owned());
        // A symlink that stays inside is followed.
        std::os::unix::fs::symlink(base.join("in.yaml"), base.join("sub/inside.yaml")).unwrap();
        assert!(plan_with(&config("sub/inside.yaml"), &restricted).is_ok());
    }
    for written in &escapes {
        let got = plan_with(&config(written), &restricted)
            .unwrap_err()
            .to_string();
        refused(got, written);
        if !written.starts_with("/proc") {
            assert!(plan_with(&config(written), &lifted).is_ok(), "{written}");
        }
    }
    // `..` that stays inside is fine; so is a root above the base directory (kpt's package
    // root), which admits files beside the config's directory.
    assert!(plan_with(&config("sub/../in.yaml"), &restricted).is_ok());
    let from_sub = Load::new(Some(&base.join("sub")));
    assert!(plan_with(&config("../in.yaml"), &from_sub).is_err());
    let package = from_sub.with_root(Some(&base));
    assert!(plan_with(&config("../in.yaml"), &package).is_ok());
    // spec.schema.openAPI.path and originalPath are confined the same way.
    let schema = node(&merge(
        "  schema:\n    openAPI:\n      path: ../outside/secret.yaml\n  patches:\n  - path: in.yaml\n",
    ));
    let got = plan_with(&schema, &restricted).unwrap_err().to_string();
    assert!(
        got.starts_with("spec.schema.openAPI.path: ../outside/secret.yaml: refused by"),
        "{got}"
    );
    let m3 = node(&merge(
        "  patches:\n  - type: merge3\n    path: in.yaml\n    originalPath: ../outside/secret.yaml\n",
    ));
    let got = plan_with(&m3, &restricted).unwrap_err().to_string();
    assert!(
        got.starts_with("spec.patches[0].originalPath: ../outside/secret.yaml: refused by"),
        "{got}"
    );
    // The restrictor's names, ours and kustomize's.
    for (text, want) in [
        ("rootOnly", LoadRestrictor::RootOnly),
        ("LoadRestrictionsRootOnly", LoadRestrictor::RootOnly),
        ("none", LoadRestrictor::None),
        ("LoadRestrictionsNone", LoadRestrictor::None),
    ] {
        assert_eq!(text.parse::<LoadRestrictor>(), Ok(want), "{text}");
    }
    assert!("all".parse::<LoadRestrictor>().is_err());
}

// ----- schema -------------------------------------------------------------------------------

#[test]
fn declared_merge_metadata_feeds_the_schema() {
    let dir = TempDir::new("schema");
    dir.write(
        "foo.json",
        r#"{"definitions": {"com.example.v1.Foo": {
            "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Foo"}],
            "properties": {"spec": {"properties": {"items": {"type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                "items": {"type": "object"}}}}}}}}"#,
    );
    let config = node(&merge(
        "  schema:\n    openAPI:\n      path: foo.json\n    mergeKeys:\n    - {group: example.com, kind: Bar, path: spec.things, keys: [name], strategy: merge}\n    - {kind: Baz, path: spec.tags, strategy: merge}\n",
    ));
    let p = plan(&config, Some(&dir.0)).unwrap();
    let list = |group: &str, kind: &str, path: &[&str]| {
        let mut at = p.schema.root(group, "v1", kind);
        let mut meta = Default::default();
        for f in path {
            (meta, at) = p.schema.field(at, f);
        }
        let meta: crate::schema::FieldMeta = meta;
        meta.list
    };
    let keys = |l: Option<ListMerge>| match l {
        Some(ListMerge::Map { keys }) => keys.into_iter().map(|k| k.name).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(keys(list("example.com", "Foo", &["spec", "items"])), ["id"]);
    assert_eq!(
        keys(list("example.com", "Bar", &["spec", "things"])),
        ["name"]
    );
    assert_eq!(list("", "Baz", &["spec", "tags"]), Some(ListMerge::Set));

    let inline = ok(&merge(
        "  schema:\n    openAPI:\n      inline:\n        definitions:\n          foo:\n            x-kubernetes-group-version-kind: {group: example.com, version: v1, kind: Foo}\n            properties:\n              list: {type: array, x-kubernetes-patch-merge-key: k, x-kubernetes-patch-strategy: merge, items: {type: object}}\n",
    ));
    let at = inline.schema.root("example.com", "v1", "Foo");
    let (meta, _) = inline.schema.field(at, "list");
    assert!(matches!(meta.list, Some(ListMerge::Map { .. })), "{meta:?}");

    let text = ok(&merge(
        "  schema:\n    openAPI:\n      inline: '{\"definitions\": {\"foo\": {\"x-kubernetes-group-version-kind\": {\"group\": \"g\", \"version\": \"v1\", \"kind\": \"Foo\"}, \"properties\": {\"tags\": {\"type\": \"array\", \"x-kubernetes-list-type\": \"set\", \"items\": {\"type\": \"string\"}}}}}}'\n",
    ));
    let (meta, _) = text
        .schema
        .field(text.schema.root("g", "v1", "Foo"), "tags");
    assert_eq!(meta.list, Some(ListMerge::Set));

    let got = plan(
        &node(&merge("  schema: {openAPI: {path: missing.json}}\n")),
        Some(&dir.0),
    )
    .unwrap_err()
    .to_string();
    assert!(got.starts_with("spec.schema.openAPI.path: "), "{got}");
}

// ----- PatchTransformer ---------------------------------------------------------------------

#[test]
fn patch_transformer_form() {
    let p = ok("apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: fix\npatch: |-\n  - op: replace\n    path: /spec/replicas\n    value: 3\ntarget:\n  kind: Deployment\n  name: web\noptions:\n  allowNameChange: true\n");
    assert_eq!(p.form, ConfigForm::PatchTransformer);
    let s = &p.steps[0];
    assert_eq!((s.index, s.kind()), (0, PatchKind::Json6902));
    assert_eq!(
        s.options,
        PatchOptions {
            allow_name_change: true,
            ..PatchOptions::kustomize()
        }
    );
    let p = ok(&format!(
        "apiVersion: builtin\nkind: PatchTransformer\npatch: |\n{}",
        DEPLOY
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    ));
    assert_eq!(p.steps[0].kind(), PatchKind::Merge2);
    assert!(p.steps[0].target().is_none());

    let table = [
        (
            "kind: PatchTransformer\npatch: '[{op: remove, path: /a}]'\n",
            "target: a json6902 patch needs a target: a list of operations does not name the resource it patches",
        ),
        (
            "kind: PatchTransformer\npatch: \"kind: A\\n---\\nkind: B\\n\"\ntarget: {kind: A}\n",
            "patch: 2 documents and a target: a PatchTransformer's strategic merge patch with a target is one document (as in kustomize); use one PatchTransformer per document, or kind Merge",
        ),
        (
            "kind: PatchTransformer\npatch: {kind: A}\ntarget: {name: \"(\"}\n",
            "target.name: invalid regex \"(\": ",
        ),
        (
            "kind: PatchTransformer\npatch: {kind: A}\npath: a.yaml\n",
            "functionConfig: give either patch or path, not both",
        ),
        (
            "kind: PatchTransformer\n",
            "functionConfig: give the patch: inline (patch) or in a file (path)",
        ),
        (
            "kind: PatchTransformer\npatch: {kind: A}\ntarget: {}\noptions: {newListItems: append}\n",
            "options.newListItems: unknown field `newListItems`, expected `allowNameChange` or `allowKindChange`",
        ),
        (
            "kind: PatchTransformer\npatch: {kind: A}\ntarget: {}\ntype: merge2\n",
            "type: unknown field `type`, expected one of `apiVersion`, `kind`, `metadata`, `patch`, `path`, `target`, `options`",
        ),
    ];
    for (yaml, expected) in table {
        let got = err(yaml);
        if expected.ends_with(": ") {
            assert!(got.starts_with(expected), "{yaml}\n got: {got}");
        } else {
            assert_eq!(got, expected, "{yaml}");
        }
    }
    // Several documents without a target are fine.
    let p = ok("kind: PatchTransformer\npatch: \"kind: A\\nmetadata: {name: a}\\n---\\nkind: B\\nmetadata: {name: b}\\n\"\n");
    assert_eq!(p.steps[0].patch().len(), 2);
}

// ----- ConfigMap ----------------------------------------------------------------------------

#[test]
fn configmap_form() {
    let p = ok(r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: function-input
  annotations: {config.kubernetes.io/local-config: "true"}
data:
  type: JsonPatch
  patch: '[{"op": "add", "path": "/metadata/labels/a", "value": "b"}]'
  kind: Deployment
  name: web-.*
  labelSelector: app=web
  newListItems: prepend
  inferMergeKeys: "false"
  allowNameChange: "true"
  conflicts: error
"#);
    assert_eq!(p.form, ConfigForm::ConfigMap);
    let s = &p.steps[0];
    assert_eq!(s.kind(), PatchKind::Json6902);
    assert_eq!(
        s.target().map(|t| t.to_string()).as_deref(),
        Some("{kind: Deployment, name: web-.*, labelSelector: app=web}")
    );
    assert_eq!(
        s.options,
        PatchOptions {
            allow_name_change: true,
            allow_kind_change: false,
            new_list_items: NewItems::Prepend,
            infer_merge_keys: false,
            conflicts: Conflicts::Error,
            compat: Compat::Kustomize,
            crd_merge_keys: false,
            validation: Validation::Warn,
        }
    );

    let p = ok("apiVersion: v1\nkind: ConfigMap\ndata:\n  type: merge3\n  patch: |\n    kind: A\n    metadata: {name: a}\n  original: |\n    kind: A\n    metadata: {name: a}\n");
    assert_eq!(p.steps[0].kind(), PatchKind::Merge3);
    assert!(p.steps[0].target().is_none());
    assert_eq!(p.steps[0].original().len(), 1);

    let cm = |data: &str| format!("apiVersion: v1\nkind: ConfigMap\ndata:\n{data}");
    let table = [
        (
            cm("  patch: '{kind: A, metadata: {name: a}}'\n  foo: bar\n"),
            "data.foo: unknown key; known keys are type, patch, original, group, version, kind, name, namespace, labelSelector, annotationSelector, at, allowNameChange, allowKindChange, newListItems, inferMergeKeys, conflicts, compatibility, crdMergeKeys, validation, strict, failOn",
        ),
        (
            cm("  kind: Deployment\n"),
            "data.patch: missing: a ConfigMap functionConfig needs a patch",
        ),
        (
            cm("  patch: '{kind: A}'\n  kind: A\n  inferMergeKeys: 'no'\n"),
            "data.inferMergeKeys: expected \"true\" or \"false\", found \"no\"",
        ),
        (
            cm("  patch: '{kind: A}'\n  kind: A\n  newListItems: first\n"),
            "data.newListItems: unknown variant `first`, expected `append` or `prepend`",
        ),
        (
            cm("  patch: '{kind: A}'\n  type: smp\n"),
            "data.type: unknown type \"smp\"; expected one of merge2, StrategicMerge, StrategicMergePatch, json6902, JsonPatch, JSON6902, jsonmerge, MergePatch, JsonMergePatch, merge3, apply, ClientSideApply",
        ),
        (
            cm("  patch: '{kind: A}'\n  name: '[z-a]'\n"),
            "data.name: invalid regex \"[z-a]\": ",
        ),
        (
            cm("  patch: '[{op: remove, path: /a}]'\n"),
            "data: a json6902 patch needs a target: a list of operations does not name the resource it patches",
        ),
        (
            cm("  patch: {kind: A}\n"),
            "data.patch: expected a string, found a mapping",
        ),
        (
            cm("  patch: '{kind: A, metadata: {name: a}}'\n  original: '{kind: A, metadata: {name: a}}'\n"),
            "data.original: only merge3 patches take an original; this patch is merge2 (set type: merge3 for a 3-way merge)",
        ),
        (
            cm("  patch: 'a: [1'\n"),
            "data.patch: line 1, column ",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nbinaryData: {a: b}\n".to_owned(),
            "binaryData: unknown field `binaryData`, expected one of `apiVersion`, `kind`, `metadata`, `data`, `immutable`",
        ),
    ];
    for (yaml, expected) in table {
        let got = err(&yaml);
        if expected.ends_with(": ") || expected.ends_with("column ") {
            assert!(got.starts_with(expected), "{yaml}\n got: {got}");
        } else {
            assert_eq!(got, expected, "{yaml}");
        }
    }
}

// ----- the published schema ---------------------------------------------------------------

#[test]
fn json_schema_describes_the_merge_form() {
    let schema = json_schema();
    assert!(schema.is_object());
    let spec = &schema["properties"]["spec"];
    assert!(spec.is_object(), "{schema:#}");
    assert_eq!(
        schema["properties"]["apiVersion"]["enum"],
        serde_json::json!([API_VERSION]),
        "{schema:#}"
    );
    assert_eq!(
        schema["properties"]["kind"]["enum"],
        serde_json::json!([KIND])
    );
    assert_eq!(
        schema["required"],
        serde_json::json!(["apiVersion", "kind"])
    );
    let replicas = &spec["properties"]["patches"]["items"]["properties"]["options"]["properties"]
        ["inferMergeKeys"];
    assert_eq!(replicas["default"], serde_json::json!(true));
    let description = replicas["description"].as_str().unwrap_or_default();
    assert!(
        description.starts_with("Pair the elements") && !description.contains('\n'),
        "doc comments become one-line descriptions: {description:?}"
    );
    let text = schema.to_string();
    assert!(
        !text.contains("\"$ref\""),
        "subschemas are inlined: {schema:#}"
    );
    for name in PatchKind::all_names() {
        assert!(text.contains(&format!("\"{name}\"")), "{name}");
    }
}

#[test]
fn the_target_schema_matches_target_spec() {
    // The schema documents `TargetDoc`; `TargetSpec` is what reads targets. Every documented
    // field must be one TargetSpec accepts, and every TargetSpec field must be documented.
    let schema = json_schema();
    let item = &schema["properties"]["spec"]["properties"]["patches"]["items"];
    let props = item["properties"]["target"]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{item:#}"));
    let all: serde_json::Map<String, serde_json::Value> = props
        .keys()
        .map(|k| (k.clone(), serde_json::json!("x")))
        .collect();
    let spec: TargetSpec = serde_json::from_value(all.into()).unwrap();
    let shown = spec.to_string();
    assert_eq!(shown.matches(": x").count(), 7, "{shown}");
    assert_eq!(props.len(), 7);
}

// ----- robustness ---------------------------------------------------------------------------

/// Every position of a tree: the keys and indexes leading to it.
fn positions(
    n: &Node<'_>,
    at: &mut Vec<Result<String, usize>>,
    out: &mut Vec<Vec<Result<String, usize>>>,
) {
    out.push(at.clone());
    for e in n.entries() {
        if let Some(k) = e.key_str() {
            at.push(Ok(k.to_owned()));
            positions(&e.value, at, out);
            at.pop();
        }
    }
    for (i, item) in n.items().iter().enumerate() {
        at.push(Err(i));
        positions(item, at, out);
        at.pop();
    }
}

fn replace_at(n: &mut Node<'static>, at: &[Result<String, usize>], with: Node<'static>) {
    match at.split_first() {
        None => *n = with,
        Some((Ok(k), rest)) => {
            if let Some(child) = n.get_mut(k) {
                replace_at(child, rest, with);
            }
        }
        Some((Err(i), rest)) => {
            if let Some(child) = n.items_mut().and_then(|items| items.get_mut(*i)) {
                replace_at(child, rest, with);
            }
        }
    }
}

#[test]
fn any_value_anywhere_is_an_answer_not_a_panic() {
    let configs = [
        merge(
            "  patches:\n  - type: merge3\n    patch: {kind: A, metadata: {name: a}}\n    original: \"kind: A\\nmetadata: {name: a}\\n\"\n    target: {kind: A, labelSelector: a=b}\n    options: {allowNameChange: true, newListItems: prepend, inferMergeKeys: false, conflicts: error}\n  - patch: [{op: copy, from: /a, path: /b}]\n    target: {}\n  schema:\n    openAPI: {inline: {definitions: {}}}\n    mergeKeys: [{group: g, kind: K, path: spec.items, keys: [name], strategy: merge}]\n",
        ),
        "apiVersion: builtin\nkind: PatchTransformer\npatch: '{kind: A, metadata: {name: a}}'\ntarget: {name: a}\noptions: {allowKindChange: true}\n".to_owned(),
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  type: merge2\n  patch: '{kind: A, metadata: {name: a}}'\n  name: a\n  inferMergeKeys: 'true'\n".to_owned(),
    ];
    let values = [
        "~", "0", "-1.5e300", "true", "''", "'[{'", "x", "[]", "[1, {}]", "{}", "{a: [b]}", "'*'",
    ];
    for config in &configs {
        let root = node(config);
        assert!(plan(&root, None).is_ok(), "{config}");
        let mut all = Vec::new();
        positions(&root, &mut Vec::new(), &mut all);
        for at in &all {
            for v in values {
                let mut changed = root.clone();
                replace_at(&mut changed, at, node(v));
                // Either answer is fine; reaching it without a panic is the test.
                let _ = plan(&changed, None);
            }
        }
    }
}

// ----- kustomize's reading (kustomize.rs) --------------------------------------------------

const KUSTOMIZE: &str = "    options: {newListItems: prepend, inferMergeKeys: false}\n";

/// A ConfigMap patch whose last value is a `|` block, written as a double-quoted `patch:` so
/// that the text around it is exactly what the test says.
fn block_last(lead: &str, trail: &str) -> String {
    format!(
        "  - patch: \"{lead}kind: ConfigMap\\nmetadata:\\n  name: c\\ndata:\\n  flag: |\\n    x=1\\n    y=2\\n{trail}\"\n"
    )
}

#[test]
fn kustomize_options_trim_inline_patch_text() {
    let flag = |p: &Plan, i: usize| {
        p.steps[i].patch()[0]
            .str_at(&["data", "flag"])
            .map(str::to_owned)
    };
    let p = ok(&merge(&format!(
        "  patches:\n{}{KUSTOMIZE}{}{}{KUSTOMIZE}",
        block_last("", ""),
        block_last("", ""),
        block_last("\\n\\n  ", "  \\n\\n"),
    )));
    // Trimmed: the block loses its final line break, as in kustomize; by default it keeps it.
    assert_eq!(flag(&p, 0).as_deref(), Some("x=1\ny=2"));
    assert_eq!(flag(&p, 1).as_deref(), Some("x=1\ny=2\n"));
    assert_eq!(flag(&p, 2).as_deref(), Some("x=1\ny=2"));
    // JSON patches too, and the PatchTransformer form, whose defaults are kustomize's.
    let json = ok(&merge(&format!(
        "  patches:\n  - patch: \"- op: add\\n  path: /data/x\\n  value: |+\\n    a\\n\\n\"\n    target: {{}}\n{KUSTOMIZE}"
    )));
    match json.steps[0].ops() {
        [crate::patch::json6902::Op::Add { value, .. }] => assert_eq!(value.as_str(), Some("a")),
        other => panic!("{other:?}"),
    }
    let pt = ok("apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npatch: |\n  kind: ConfigMap\n  metadata:\n    name: c\n  data:\n    flag: |\n      x\n");
    assert_eq!(flag(&pt, 0).as_deref(), Some("x"));
    // Types kustomize does not have are read as written.
    let other = ok(&merge(&format!(
        "  patches:\n{}    type: jsonmerge\n{KUSTOMIZE}",
        block_last("", "")
    )));
    assert_eq!(flag(&other, 0).as_deref(), Some("x=1\ny=2\n"));
}

#[test]
fn kustomize_options_leave_patch_files_untrimmed() {
    let dir = TempDir::new("untrimmed");
    dir.write(
        "flag.yaml",
        "kind: ConfigMap\nmetadata:\n  name: c\ndata:\n  flag: |\n    x=1\n",
    );
    let config = node(&merge(&format!(
        "  patches:\n  - path: flag.yaml\n{KUSTOMIZE}"
    )));
    let p = plan(&config, Some(&dir.0)).unwrap();
    assert_eq!(
        p.steps[0].patch()[0].str_at(&["data", "flag"]),
        Some("x=1\n")
    );
}

#[test]
fn trimmed_patch_text_is_located_in_the_text_written() {
    let got = err(&merge(&format!(
        "  patches:\n  - patch: \"\\n\\n  a: [\\n\"\n{KUSTOMIZE}"
    )));
    assert!(
        got.starts_with("spec.patches[0].patch: line 3, column "),
        "{got}"
    );
    let got = err(&merge(&format!(
        "  patches:\n  - patch: \"\\n   a: 1\\na: 2\\n\"\n{KUSTOMIZE}"
    )));
    assert!(
        got.starts_with("spec.patches[0].patch: line 3, column 1 of the inline text: "),
        "{got}"
    );
}

#[test]
fn at_says_where_inside_each_resource_a_patch_applies() {
    let plan = ok(&merge(
        "  patches:
  - target: {kind: Deployment}
    at: '@containers'
    patch: {imagePullPolicy: Always}
  - target: {kind: Deployment}
    type: json6902
    at: spec.template.spec.containers[name=app]
    patch: [{op: add, path: /env/-, value: {name: A}}]
  - target: {kind: Deployment}
    type: jsonmerge
    at: '@podTemplate.metadata'
    patch: {labels: {a: b}}
  - target: {kind: Deployment}
    type: merge3
    at: '@containers[name=log]'
    original: {image: a}
    patch: {image: b}
  - target: {kind: Deployment}
    patch: {spec: {replicas: 1}}
",
    ));
    let at: Vec<Option<String>> = plan
        .steps
        .iter()
        .map(|s| s.action.at().map(ToString::to_string))
        .collect();
    assert_eq!(
        at,
        [
            Some("@containers".to_owned()),
            Some("spec.template.spec.containers[name=app]".to_owned()),
            Some("@podTemplate.metadata".to_owned()),
            Some("@containers[name=log]".to_owned()),
            None,
        ]
    );
    assert_eq!(plan.steps[0].label(), "patch[0] (merge2 at @containers)");
    assert_eq!(plan.steps[4].label(), "patch[4] (merge2)");

    // The ConfigMap form takes it as a data key.
    let cm = ok("apiVersion: v1\nkind: ConfigMap\ndata:\n  kind: Deployment\n  at: '@podSpec'\n  patch: '{hostNetwork: true}'\n");
    assert_eq!(cm.steps[0].label(), "patch[0] (merge2 at @podSpec)");
    assert_eq!(
        err("apiVersion: v1\nkind: ConfigMap\ndata:\n  at: '@podSpec'\n  patch: '{kind: A, metadata: {name: a}}'\n"),
        "data.at: at needs a target: a patch that applies at places inside resources does not \
         name the resources it patches"
    );
}

#[test]
fn at_errors_name_the_field() {
    let cases = [
        (
            "  - at: '@containers'\n    patch: {kind: A, metadata: {name: a}}\n",
            "spec.patches[0].at: at needs a target: a patch that applies at places inside \
             resources does not name the resources it patches",
        ),
        (
            "  - target: {}\n    type: apply\n    at: spec\n    patch: {a: 1}\n",
            "spec.patches[0].at: an apply patch takes no at: kubectl's last-applied \
             configuration is the whole resource's; use merge2 to merge at a place",
        ),
        (
            "  - target: {}\n    at: '@pods'\n    patch: {a: 1}\n",
            "spec.patches[0].at: invalid path \"@pods\": unknown start @pods; known: \
             @podTemplate, @podSpec, @containers (at byte 0)",
        ),
        (
            "  - target: {}\n    at: 'spec..x'\n    patch: {a: 1}\n",
            "spec.patches[0].at: invalid path \"spec..x\": expected a field name (at byte 5)",
        ),
        (
            "  - target: {}\n    at: 3\n    patch: {a: 1}\n",
            "spec.patches[0].at: invalid type: integer `3`, expected a string",
        ),
    ];
    for (patches, expected) in cases {
        assert_eq!(
            err(&merge(&format!("  patches:\n{patches}"))),
            expected,
            "{patches}"
        );
    }
    // kustomize's form has no at.
    assert!(
        err("kind: PatchTransformer\nat: spec\npatch: '{a: 1}'\ntarget: {}\n")
            .starts_with("at: unknown field `at`")
    );
}

#[test]
fn workloads_declare_where_other_kinds_keep_their_pods() {
    let plan = ok(&merge(
        "  schema:
    workloads:
    - {group: example.com, kind: Pipeline, podTemplate: 'spec.tasks[*].template'}
    - {group: example.com, kind: Runner, podSpec: spec.pod}
",
    ));
    let places = |kind, start| {
        plan.schema
            .pod_places("example.com", "v1", kind, start)
            .into_iter()
            .map(|parts| Pattern { start: None, parts }.to_string())
            .collect::<Vec<_>>()
    };
    use crate::path::Start;
    assert_eq!(
        places("Pipeline", Start::PodTemplate),
        ["spec.tasks[*].template"]
    );
    assert_eq!(places("Runner", Start::PodSpec), ["spec.pod"]);
    assert_eq!(
        places("Runner", Start::Containers),
        ["spec.pod.containers[*]", "spec.pod.initContainers[*]"]
    );
    let cases = [
        ("    - {kind: X}\n", "spec.schema.workloads[0]: give the field that holds the pod: podTemplate or podSpec"),
        ("    - {kind: X, podSpec: a, podTemplate: b}\n", "spec.schema.workloads[0]: give either podTemplate or podSpec, not both"),
        ("    - {kind: X, podSpec: '@podSpec'}\n", "spec.schema.workloads[0].podSpec: \"@podSpec\": a field path from the top of the resource, without a start"),
        ("    - {kind: X, podSpec: 'a['}\n", "spec.schema.workloads[0].podSpec: invalid path \"a[\": missing the closing ']' (at byte 2)"),
        ("    - {podSpec: a}\n", "spec.schema.workloads[0]: missing field `kind`"),
    ];
    for (entry, expected) in cases {
        assert_eq!(
            err(&merge(&format!("  schema:\n    workloads:\n{entry}"))),
            expected,
            "{entry}"
        );
    }
}
