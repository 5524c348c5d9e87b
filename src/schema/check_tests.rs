//! Tests of the shape tables (`shape.rs`) and of the patch check (`check.rs`).

use serde_json::{json, Value};

use super::check::*;
use super::shape::{self, Shape, Val};
use super::Schema;
use crate::patch::json6902::{parse_ops, Op};
use crate::yaml::{parse_stream, Node};

// ---- helpers -------------------------------------------------------------------------------

/// The built-in slot at a dotted path from a kind (lists descend into their elements).
fn builtin_slot(group: &str, version: &str, kind: &str, path: &str) -> shape::Slot {
    let mut node = shape::root(group, version, kind).expect("kind");
    let mut slot = None;
    for name in path.split('.') {
        let s = shape::field(node, name)
            .or_else(|| shape::value(node))
            .unwrap_or_else(|| panic!("{kind} {path}: no {name}"));
        if let Some(n) = s.node {
            node = n;
        }
        slot = Some(s);
    }
    slot.unwrap()
}

fn shape_at(group: &str, version: &str, kind: &str, path: &str) -> Shape {
    builtin_slot(group, version, kind, path).shape
}

fn one(val: Val) -> Shape {
    Shape::of(val)
}

fn list_of(val: Val) -> Shape {
    Shape::of(val).listed()
}

fn yaml(text: &str) -> Node<'_> {
    parse_stream(text)
        .unwrap()
        .into_iter()
        .next()
        .and_then(|d| d.root)
        .unwrap()
}

const DEPLOYMENT: Gvk<'static> = Gvk {
    group: "apps",
    version: "v1",
    kind: "Deployment",
};

fn check(schema: &Schema, kind: Gvk<'_>, patch: &str) -> Vec<String> {
    check_patch(schema, kind, &yaml(patch))
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn check_builtin(kind: Gvk<'_>, patch: &str) -> Vec<String> {
    check(&Schema::builtin(), kind, patch)
}

fn ops(schema: &Schema, kind: Gvk<'_>, patch: &str) -> Vec<String> {
    let node = yaml(patch);
    let ops = parse_ops(&node).unwrap();
    check_json6902(schema, kind, ops.iter().map(Op::pointers))
        .iter()
        .map(|f| format!("op {}: {}", f.op, f.finding))
        .collect()
}

// ---- the table -----------------------------------------------------------------------------

#[test]
fn builtin_fields_and_types() {
    let d = |path| shape_at("apps", "v1", "Deployment", path);
    assert_eq!(d("spec"), one(Val::Object));
    assert_eq!(d("spec.replicas"), one(Val::Integer));
    assert_eq!(d("spec.paused"), one(Val::Boolean));
    assert_eq!(
        d("spec.strategy.rollingUpdate.maxSurge"),
        one(Val::IntOrString)
    );
    assert_eq!(d("spec.template.spec.containers"), list_of(Val::Object));
    assert_eq!(d("spec.template.spec.containers.image"), one(Val::String));
    assert_eq!(
        d("spec.template.spec.containers.args"),
        list_of(Val::String)
    );
    assert_eq!(
        d("spec.template.spec.containers.ports.containerPort"),
        one(Val::Integer)
    );
    assert_eq!(
        d("spec.template.spec.containers.resources.limits"),
        one(Val::Object)
    );
    assert_eq!(
        d("spec.template.spec.containers.resources.limits.cpu"),
        one(Val::Quantity),
        "a map of quantities: any key"
    );
    assert_eq!(d("metadata.labels.anything"), one(Val::String));
    assert_eq!(d("metadata.creationTimestamp"), one(Val::String), "Time");
    assert_eq!(d("status.conditions"), list_of(Val::Object));

    let c = |path| shape_at("", "v1", "ConfigMap", path);
    assert_eq!(c("data.any-key"), one(Val::String));
    assert_eq!(c("immutable"), one(Val::Boolean));
    let s = |path| shape_at("", "v1", "Service", path);
    assert_eq!(s("spec.ports.targetPort"), one(Val::IntOrString));
    assert_eq!(s("spec.ports.port"), one(Val::Integer));
    let crd = |path: &str| {
        shape_at(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            path,
        )
    };
    let props = "spec.versions.schema.openAPIV3Schema";
    assert_eq!(crd(&format!("{props}.default")), one(Val::Any), "JSON");
    assert_eq!(crd(&format!("{props}.properties.x.type")), one(Val::String));
    let ctl = |path| shape_at("apps", "v1", "ControllerRevision", path);
    assert_eq!(ctl("data"), one(Val::Object), "RawExtension");
    assert!(builtin_slot("apps", "v1", "ControllerRevision", "data")
        .node
        .is_none());
}

#[test]
fn builtin_required_fields() {
    let req = |g, v, k, path| builtin_slot(g, v, k, path).required;
    assert!(req("apps", "v1", "Deployment", "spec"));
    assert!(req("apps", "v1", "StatefulSet", "spec"));
    assert!(!req("apps", "v1", "Deployment", "metadata"));
    assert!(req("apps", "v1", "Deployment", "spec.selector"));
    assert!(req("apps", "v1", "Deployment", "spec.template"));
    assert!(!req("apps", "v1", "Deployment", "spec.replicas"));
    assert!(req(
        "apps",
        "v1",
        "Deployment",
        "spec.template.spec.containers"
    ));
    assert!(req(
        "apps",
        "v1",
        "Deployment",
        "spec.template.spec.containers.name"
    ));
    assert!(
        !req("", "v1", "Pod", "spec"),
        "a Pod's spec is not required"
    );
    assert!(req(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "roleRef"
    ));
}

#[test]
fn every_kind_is_in_the_table() {
    // Kinds the merge tables leave out (nothing to merge) still have shapes.
    assert!(shape::root("", "v1", "Namespace").is_some());
    assert!(shape::root("", "v1", "Pod").is_some());
    assert!(shape::root("", "v1", "WatchEvent").is_some());
    assert!(shape::root("example.com", "v1", "Widget").is_none());
}

// ---- the check: strategic merge and JSON merge patches -------------------------------------

#[test]
fn typo_gets_the_closest_field() {
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\n  replcas: 3\n"),
        ["`spec.replcas`: unknown field of Deployment; did you mean `replicas`?"]
    );
    let f = check_patch(
        &Schema::builtin(),
        DEPLOYMENT,
        &yaml("spec:\n  replcas: 3\n"),
    );
    assert_eq!(
        f[0].kind,
        FindingKind::UnknownField {
            field: "replcas".into(),
            of_kind: "Deployment".into(),
            suggestion: Some(Suggestion::Similar("replicas".into())),
        }
    );
}

#[test]
fn bad_indent_removes_spec_and_misplaces_its_field() {
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\nreplicas: 3\n"),
        [
            "`spec`: removes `spec`, which Deployment requires",
            "`replicas`: unknown field of Deployment; did you mean `spec.replicas`?",
        ]
    );
    // One level deeper: containers under the template instead of its spec.
    let patch = "spec:\n  template:\n    containers:\n    - name: app\n";
    assert_eq!(
        check_builtin(DEPLOYMENT, patch),
        ["`spec.template.containers`: unknown field of Deployment; did you mean `spec.template.spec.containers`?"]
    );
    // Through a list: a container field at the top.
    assert_eq!(
        check_builtin(DEPLOYMENT, "imagePullPolicy: Always\n"),
        ["`imagePullPolicy`: unknown field of Deployment; did you mean `spec.template.spec.containers[].imagePullPolicy`?"]
    );
    // Too deep: found from the root.
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\n  template:\n    spec:\n      replicas: 2\n"),
        ["`spec.template.spec.replicas`: unknown field of Deployment; did you mean `spec.replicas`?"]
    );
    // Nothing close anywhere.
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\n  zzzzzz: 1\n"),
        ["`spec.zzzzzz`: unknown field of Deployment"]
    );
}

#[test]
fn wrong_types() {
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec: replicas\n"),
        ["`spec`: expected an object, found a string"]
    );
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\n  replicas: \"3\"\n"),
        ["`spec.replicas`: expected an integer, found a string"]
    );
    assert_eq!(
        check_builtin(
            DEPLOYMENT,
            "spec:\n  template:\n    spec:\n      containers:\n        name: app\n"
        ),
        ["`spec.template.spec.containers`: expected a list, found an object"]
    );
    assert_eq!(
        check_builtin(
            DEPLOYMENT,
            "metadata:\n  labels:\n    on: true\n    n: 1.5\n"
        ),
        [
            "`metadata.labels.on`: expected a string, found a boolean",
            "`metadata.labels.n`: expected a string, found a number",
        ]
    );
    // What the types take: int-or-string, quantities, YAML 1.1 booleans, integers for numbers.
    let fine = "spec:\n  paused: yes\n  strategy:\n    rollingUpdate:\n      maxSurge: 25%\n      maxUnavailable: 1\n  template:\n    spec:\n      containers:\n      - name: app\n        resources:\n          limits: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1, x: 0.5}\n";
    assert_eq!(check_builtin(DEPLOYMENT, fine), Vec::<String>::new());
    let hpa = Gvk::new("autoscaling/v2", "HorizontalPodAutoscaler");
    assert_eq!(
        check_builtin(hpa, "spec:\n  maxReplicas: 3\n"),
        Vec::<String>::new()
    );
}

#[test]
fn list_elements_are_checked_one_by_one() {
    let patch = "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        imagee: x\n      - image: y\n        ports:\n        - containerPort: http\n";
    assert_eq!(
        check_builtin(DEPLOYMENT, patch),
        [
            "`spec.template.spec.containers[name=app].imagee`: unknown field of Deployment; did you mean `image`?",
            "`spec.template.spec.containers[1].ports[0].containerPort`: expected an integer, found a string",
        ]
    );
}

#[test]
fn removing_fields() {
    // Optional fields may go; unknown ones are still unknown; required ones are findings.
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\n  replicas: null\n"),
        Vec::<String>::new()
    );
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\n  replcas: ~\n"),
        ["`spec.replcas`: unknown field of Deployment; did you mean `replicas`?"]
    );
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec:\n  selector: {$patch: delete}\n"),
        ["`spec.selector`: removes `selector`, which Deployment requires"]
    );
    assert_eq!(
        check_builtin(DEPLOYMENT, "spec: null\n"),
        ["`spec`: removes `spec`, which Deployment requires"]
    );
    // A Pod's spec is optional in the definitions.
    assert_eq!(
        check_builtin(Gvk::new("v1", "Pod"), "spec:\n"),
        Vec::<String>::new()
    );
}

#[test]
fn directives_are_skipped() {
    let patch = r#"
$patch: merge
spec:
  strategy:
    $retainKeys: [type]
    type: Recreate
  template:
    spec:
      $setElementOrder/containers: [{name: b}, {name: a}]
      containers:
      - name: a
        $patch: delete
      - $patch: replace
      $deleteFromPrimitiveList/finalizers: [x]
"#;
    assert_eq!(check_builtin(DEPLOYMENT, patch), Vec::<String>::new());
}

#[test]
fn free_form_maps_take_any_key() {
    let patch = "metadata:\n  labels: {a.example.com/b: c}\n  annotations: {x: y}\ndata: {ANY_KEY: v}\nbinaryData: {k: aGk=}\n";
    assert_eq!(
        check_builtin(Gvk::new("v1", "ConfigMap"), patch),
        Vec::<String>::new()
    );
    let rev = "data: {anything: {at: [all]}}\nrevision: 2\n";
    assert_eq!(
        check_builtin(Gvk::new("apps/v1", "ControllerRevision"), rev),
        Vec::<String>::new()
    );
}

#[test]
fn unknown_kinds_give_nothing() {
    let patch = "spec:\n  anything: [1]\nreplcas: 3\n";
    assert_eq!(
        check_builtin(Gvk::new("example.com/v1", "Widget"), patch),
        Vec::<String>::new()
    );
    assert_eq!(
        check_builtin(Gvk::new("apps/v9", "Deployment"), patch),
        Vec::<String>::new()
    );
    let ops_patch = "- op: add\n  path: /spec/nope\n  value: 1\n";
    assert_eq!(
        ops(
            &Schema::builtin(),
            Gvk::new("example.com/v1", "Widget"),
            ops_patch
        ),
        Vec::<String>::new()
    );
}

#[test]
fn gvk_from_api_version() {
    assert_eq!(Gvk::new("apps/v1", "Deployment"), DEPLOYMENT);
    let core = Gvk::new("v1", "Pod");
    assert_eq!((core.group, core.version, core.kind), ("", "v1", "Pod"));
}

// ---- CRDs and declared documents -------------------------------------------------------------

fn gadget_crd(v1beta1: bool) -> Value {
    let schema = json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "required": ["size"], "properties": {
                "size": {"type": "integer"},
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "ratio": {"type": "number"},
                "parts": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
                }}},
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "known": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                          "properties": {"level": {"type": "integer"}}},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                "raw": {"x-kubernetes-preserve-unknown-fields": true},
                "inner": {"type": "object", "x-kubernetes-embedded-resource": true,
                          "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
        }
    });
    if v1beta1 {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1beta1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "version": "v1", "names": {"kind": "Gadget"},
                     "validation": {"openAPIV3Schema": schema}}
        })
    } else {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Gadget"},
                     "versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}
        })
    }
}

const GADGET: Gvk<'static> = Gvk {
    group: "example.com",
    version: "v1",
    kind: "Gadget",
};

#[test]
fn custom_resources_are_checked_against_their_crd() {
    let mut s = Schema::builtin();
    s.add_crd(&gadget_crd(false)).unwrap();
    let fine = r#"
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g, labels: {a: b}}
spec:
  size: 3
  port: http
  ratio: 1
  parts:
  - name: p
    grid: [[1, 2], [3]]
  config: {anything: {goes: [here]}}
  known: {level: 2, other: x}
  extra: {k: v}
  raw: 7
  inner:
    apiVersion: v1
    kind: Thing
    metadata: {name: n}
    spec: {a: b}
status: {ready: true}
"#;
    assert_eq!(check(&s, GADGET, fine), Vec::<String>::new());
    let bad = r#"
metadata: {nmae: g}
spec:
  szie: 3
  ratio: fast
  parts:
  - name: p
    grid: [[x]]
  known: {level: high}
  extra: {k: {deep: 1}}
  inner:
    spec: {b: 1}
statsu: {}
"#;
    assert_eq!(
        check(&s, GADGET, bad),
        [
            "`metadata.nmae`: unknown field of Gadget; did you mean `name`?",
            "`spec.szie`: unknown field of Gadget; did you mean `size`?",
            "`spec.ratio`: expected a number, found a string",
            "`spec.parts[0].grid[0][0]`: expected an integer, found a string",
            "`spec.known.level`: expected an integer, found a string",
            "`spec.extra.k`: expected a string, found an object",
            "`spec.inner.spec.b`: unknown field of Gadget",
            "`statsu`: unknown field of Gadget; did you mean `status`?",
        ]
    );
    assert_eq!(
        check(&s, GADGET, "spec:\n  size: null\n"),
        ["`spec.size`: removes `size`, which Gadget requires"]
    );
}

#[test]
fn preserving_crds_accept_unknown_fields() {
    let mut s = Schema::builtin();
    s.add_crd(&gadget_crd(true)).unwrap();
    // v1beta1 keeps unknown fields by default: only types are checked.
    assert_eq!(
        check(&s, GADGET, "spec:\n  szie: 3\n  size: big\nother: 1\n"),
        ["`spec.size`: expected an integer, found a string"]
    );
    let mut crd = gadget_crd(true);
    crd["spec"]["preserveUnknownFields"] = json!(false);
    let mut s = Schema::builtin();
    s.add_crd(&crd).unwrap();
    assert_eq!(
        check(&s, GADGET, "spec:\n  szie: 3\n"),
        ["`spec.szie`: unknown field of Gadget; did you mean `size`?"]
    );
}

#[test]
fn declared_openapi_documents_are_checked() {
    let doc = json!({"definitions": {
        "com.example.v1.Thing": {
            "type": "object",
            "x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Thing"},
            "properties": {
                "spec": {"$ref": "#/definitions/com.example.v1.ThingSpec"}
            }
        },
        "com.example.v1.ThingSpec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer"},
                "port": {"type": "string", "format": "int-or-string"},
                "cpu": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}
            }
        },
        "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"}
    }});
    let mut s = Schema::builtin();
    s.add_openapi_v2(&doc).unwrap();
    let thing = Gvk::new("example.com/v1", "Thing");
    assert_eq!(
        check(
            &s,
            thing,
            "metadata: {name: t}\nspec: {size: 1, port: 80, cpu: 1}\n"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        check(&s, thing, "spec: {siz: 1, size: null}\n"),
        [
            "`spec.siz`: unknown field of Thing; did you mean `size`?",
            "`spec.size`: removes `size`, which Thing requires",
        ]
    );
}

// ---- JSON 6902 -----------------------------------------------------------------------------

#[test]
fn json6902_paths_and_values() {
    let s = Schema::builtin();
    let patch = r#"
- op: replace
  path: /spec/replcas
  value: 3
- op: add
  path: /spec/template/spec/containers/0/imagee
  value: x
- op: add
  path: /spec/template/spec/containers/-
  value: {name: b, image: y, port: 80}
- op: replace
  path: /spec/template/spec/containers/[name=a]/ports/0/containerPort
  value: http
- op: remove
  path: /spec/selector
- op: move
  from: /spec/template
  path: /spec/templat
- op: add
  path: /metadata/labels/a.b~1c
  value: d
- op: replace
  path: /spec/replicas
  value: 2
- op: test
  path: /spec/nope
  value: 1
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: 1
- op: replace
  path: /spec
  value: null
"#;
    assert_eq!(
        ops(&s, DEPLOYMENT, patch),
        [
            "op 0: `spec.replcas`: unknown field of Deployment; did you mean `replicas`?",
            "op 1: `spec.template.spec.containers[0].imagee`: unknown field of Deployment; did you mean `image`?",
            "op 2: `spec.template.spec.containers.-.port`: unknown field of Deployment; did you mean `ports`?",
            "op 3: `spec.template.spec.containers[name=a].ports[0].containerPort`: expected an integer, found a string",
            "op 4: `spec.selector`: removes `selector`, which Deployment requires",
            "op 5: `spec.template`: removes `template`, which Deployment requires",
            "op 5: `spec.templat`: unknown field of Deployment; did you mean `template`?",
            "op 9: `spec.template.spec.containers[0].args.-`: expected a string, found an integer",
            "op 10: `spec`: removes `spec`, which Deployment requires",
        ]
    );
}

#[test]
fn json6902_on_custom_resources() {
    let mut s = Schema::builtin();
    s.add_crd(&gadget_crd(false)).unwrap();
    let patch = "- op: add\n  path: /spec/config/anything\n  value: 1\n- op: add\n  path: /spec/sise\n  value: 1\n- op: add\n  path: /metadata/annotations/x\n  value: y\n";
    assert_eq!(
        ops(&s, GADGET, patch),
        ["op 1: `spec.sise`: unknown field of Gadget; did you mean `size`?"]
    );
}

// ---- bounds ---------------------------------------------------------------------------------

#[test]
fn suggestions_are_bounded() {
    let mut patch = String::from("spec:\n");
    for i in 0..200 {
        patch.push_str(&format!("  replicas{i}: 1\n"));
    }
    let f = check_patch(&Schema::builtin(), DEPLOYMENT, &yaml(&patch));
    assert_eq!(f.len(), 200);
    let suggested = f
        .iter()
        .filter(|f| {
            matches!(
                &f.kind,
                FindingKind::UnknownField {
                    suggestion: Some(_),
                    ..
                }
            )
        })
        .count();
    assert!(suggested <= MAX_SUGGESTIONS, "{suggested}");
}

#[test]
fn odd_patches_never_panic() {
    let s = Schema::builtin();
    for text in [
        "",
        "3",
        "[1, 2]",
        "? [a]\n: b\n",
        "spec: &a {replicas: 1}\nstatus: *a\n",
        "spec: !!binary aGk=\n",
        "spec:\n  template:\n    spec:\n      containers: [[1], {}, null, 3]\n",
        "metadata: {labels: [x]}\n",
    ] {
        let node = parse_stream(text)
            .unwrap()
            .into_iter()
            .next()
            .and_then(|d| d.root)
            .unwrap_or_else(Node::null);
        let _ = check_patch(&s, DEPLOYMENT, &node);
    }
    let node = yaml("- op: add\n  path: /spec/template/spec/containers/0/0/0\n  value: 1\n- op: add\n  path: /spec/replicas/x\n  value: 1\n- op: add\n  path: ''\n  value: {spec: 1}\n");
    let ops = parse_ops(&node).unwrap();
    let f: Vec<String> = check_json6902(&s, DEPLOYMENT, ops.iter().map(Op::pointers))
        .iter()
        .map(|f| format!("op {}: {}", f.op, f.finding))
        .collect();
    assert_eq!(
        f,
        [
            "op 0: `spec.template.spec.containers[0].0`: unknown field of Deployment",
            "op 2: `spec`: expected an object, found an integer",
        ]
    );
}
