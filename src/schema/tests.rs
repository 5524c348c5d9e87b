use serde_json::{json, Value};

use super::*;

// ---- helpers: one line per case ------------------------------------------------------------

/// Walks a dotted path from a kind's root; list fields descend into their elements.
fn at(schema: &Schema, gvk: &str, path: &str) -> (FieldMeta, Cursor) {
    let (gv, kind) = gvk.rsplit_once('/').map_or(("", gvk), |(gv, k)| (gv, k));
    let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
    let mut cursor = schema.root(group, version, kind);
    let mut meta = FieldMeta::default();
    for name in path.split('.') {
        (meta, cursor) = schema.field(cursor, name);
    }
    (meta, cursor)
}

fn meta_at(schema: &Schema, gvk: &str, path: &str) -> FieldMeta {
    at(schema, gvk, path).0
}

fn builtin(gvk: &str, path: &str) -> FieldMeta {
    meta_at(&Schema::builtin(), gvk, path)
}

fn keyed(keys: &[(&str, Option<&str>)]) -> FieldMeta {
    list(ListMerge::Map {
        keys: keys
            .iter()
            .map(|(name, default)| MapKey {
                name: name.to_string(),
                default: default.map(str::to_string),
            })
            .collect(),
    })
}

fn by(name: &str) -> FieldMeta {
    keyed(&[(name, None)])
}

fn list(l: ListMerge) -> FieldMeta {
    FieldMeta {
        list: Some(l),
        ..FieldMeta::default()
    }
}

fn atomic_map() -> FieldMeta {
    FieldMeta {
        atomic_map: true,
        ..FieldMeta::default()
    }
}

/// An atomic map outside the built-in layer, which strategic merges replace whole.
fn replaced() -> FieldMeta {
    FieldMeta {
        atomic_map: true,
        replace: true,
        ..FieldMeta::default()
    }
}

fn retain(mut m: FieldMeta) -> FieldMeta {
    m.retain_keys = true;
    m
}

fn keys(k: &[&str]) -> Vec<String> {
    k.iter().map(|s| s.to_string()).collect()
}

// ---- built-in layer ------------------------------------------------------------------------

const POD_SPEC: &str = "spec.template.spec";

#[test]
fn deployment_pod_template() {
    let d = "apps/v1/Deployment";
    assert_eq!(builtin(d, &format!("{POD_SPEC}.containers")), by("name"));
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.initContainers")),
        by("name")
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.containers.ports")),
        keyed(&[("containerPort", None), ("protocol", Some("TCP"))])
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.containers.env")),
        by("name")
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.containers.volumeMounts")),
        by("mountPath")
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.containers.args")),
        list(ListMerge::Atomic)
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.containers.command")),
        list(ListMerge::Atomic)
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.volumes")),
        retain(by("name"))
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.tolerations")),
        list(ListMerge::Atomic)
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.nodeSelector")),
        atomic_map()
    );
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.topologySpreadConstraints")),
        keyed(&[("topologyKey", None), ("whenUnsatisfiable", None)])
    );
    // containers[].resources.claims: list-type map without a patch strategy.
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.containers.resources.claims")),
        by("name")
    );
    assert_eq!(builtin(d, "metadata.finalizers"), list(ListMerge::Set));
    assert_eq!(
        builtin(d, "spec.template.metadata.finalizers"),
        list(ListMerge::Set)
    );
    // LabelSelector is x-kubernetes-map-type: atomic.
    assert_eq!(builtin(d, "spec.selector"), atomic_map());
    assert_eq!(
        builtin(d, "spec.selector.matchExpressions"),
        list(ListMerge::Atomic)
    );
    assert_eq!(builtin(d, "spec.strategy"), retain(FieldMeta::default()));
    // Fields without merge metadata say nothing.
    assert_eq!(builtin(d, "spec.replicas"), FieldMeta::default());
    assert_eq!(
        builtin(d, &format!("{POD_SPEC}.containers.image")),
        FieldMeta::default()
    );
}

#[test]
fn other_workloads() {
    assert_eq!(builtin("v1/Pod", "spec.containers"), by("name"));
    assert!(builtin("v1/Pod", "spec.ephemeralContainers.ports")
        .list
        .is_some());
    assert_eq!(builtin("v1/Pod", "spec.volumes"), retain(by("name")));
    assert_eq!(builtin("v1/Pod", "spec.imagePullSecrets"), by("name"));
    assert_eq!(builtin("v1/Pod", "metadata.ownerReferences"), by("uid"));
    let sts = "apps/v1/StatefulSet";
    assert_eq!(
        builtin(sts, "spec.volumeClaimTemplates"),
        list(ListMerge::Atomic)
    );
    assert_eq!(
        builtin(sts, "spec.volumeClaimTemplates.spec.accessModes"),
        list(ListMerge::Atomic)
    );
    assert_eq!(
        builtin(sts, "spec.volumeClaimTemplates.metadata.finalizers"),
        list(ListMerge::Set)
    );
    assert_eq!(builtin(sts, &format!("{POD_SPEC}.containers")), by("name"));
    let cron = "batch/v1/CronJob";
    assert_eq!(
        builtin(cron, &format!("spec.jobTemplate.{POD_SPEC}.containers")),
        by("name")
    );
    assert_eq!(
        builtin(
            cron,
            &format!("spec.jobTemplate.{POD_SPEC}.containers.ports")
        ),
        keyed(&[("containerPort", None), ("protocol", Some("TCP"))])
    );
    assert_eq!(
        builtin("apps/v1/DaemonSet", &format!("{POD_SPEC}.volumes")),
        retain(by("name"))
    );
    assert_eq!(
        builtin("batch/v1/Job", &format!("{POD_SPEC}.containers")),
        by("name")
    );
}

#[test]
fn services_rbac_and_others() {
    assert_eq!(
        builtin("v1/Service", "spec.ports"),
        keyed(&[("port", None), ("protocol", Some("TCP"))])
    );
    assert_eq!(builtin("v1/Service", "spec.selector"), atomic_map());
    // RBAC rules carry list-type atomic and no patch strategy: replaced whole.
    let rules = list(ListMerge::Atomic);
    assert_eq!(
        builtin("rbac.authorization.k8s.io/v1/ClusterRole", "rules"),
        rules
    );
    assert_eq!(builtin("rbac.authorization.k8s.io/v1/Role", "rules"), rules);
    assert_eq!(
        builtin("rbac.authorization.k8s.io/v1/ClusterRole", "rules.verbs"),
        rules
    );
    assert_eq!(
        builtin("rbac.authorization.k8s.io/v1/RoleBinding", "subjects"),
        rules
    );
    assert_eq!(
        builtin("rbac.authorization.k8s.io/v1/RoleBinding", "roleRef"),
        atomic_map()
    );
    // patch strategy replace on a struct.
    assert_eq!(
        builtin("policy/v1/PodDisruptionBudget", "spec.selector"),
        atomic_map()
    );
    // Patch strategy merge wins over list-type atomic (SMP behaviour).
    assert_eq!(builtin("batch/v1/Job", "status.conditions"), by("type"));
    // granular on the field overrides ObjectReference's atomic.
    assert_eq!(
        builtin("v1/PersistentVolume", "spec.claimRef"),
        FieldMeta::default()
    );
    assert_eq!(
        builtin("v1/Pod", "spec.containers.env.valueFrom.configMapKeyRef"),
        atomic_map()
    );
}

#[test]
fn list_elements_of_atomic_types() {
    let s = Schema::builtin();
    let (_, owner) = at(&s, "v1/Pod", "metadata.ownerReferences");
    assert!(s.is_atomic(owner));
    let (_, container) = at(&s, "v1/Pod", "spec.containers");
    assert!(!s.is_atomic(container));
    assert!(!s.is_atomic(Cursor::default()));
}

#[test]
fn map_values_and_recursion() {
    // JSONSchemaProps.properties is a map of JSONSchemaProps: any key descends to the value.
    let crd = "apiextensions.k8s.io/v1/CustomResourceDefinition";
    let props = "spec.versions.schema.openAPIV3Schema.properties";
    assert_eq!(builtin(crd, "spec.versions"), list(ListMerge::Atomic));
    assert_eq!(
        builtin(crd, &format!("{props}.spec.required")),
        list(ListMerge::Atomic)
    );
    let deep = format!("{props}.a.properties.b.properties.c.required");
    assert_eq!(builtin(crd, &deep), list(ListMerge::Atomic));
}

#[test]
fn unknown_kinds_and_fields() {
    let s = Schema::builtin();
    assert!(s.root("example.com", "v1", "Widget").is_unknown());
    assert!(s.root("apps", "v1", "NoSuchKind").is_unknown());
    assert!(s.root("", "v1", "Deployment").is_unknown()); // Deployment is in group apps
    assert!(!s.root("apps", "v1", "Deployment").is_unknown());
    let (meta, c) = s.field(Cursor::default(), "spec");
    assert_eq!((meta, c), (FieldMeta::default(), Cursor::default()));
    let (_, c) = at(&s, "apps/v1/Deployment", "spec.noSuchField.containers");
    assert!(c.is_unknown());
    // A cursor from elsewhere is checked, not trusted.
    let bogus = Cursor {
        builtin: Some(u32::MAX),
        crds: Some(7),
        merge_keys: Some(u32::MAX),
        openapi: Some(1),
    };
    assert_eq!(
        s.field(bogus, "spec"),
        (FieldMeta::default(), Cursor::default())
    );
    assert!(!s.is_atomic(bogus));
}

/// Lookups are binary searches over static tables: 10,000 of them are nothing.
#[test]
fn lookups_are_cheap() {
    let s = Schema::builtin();
    let mut maps = 0;
    for i in 0..10_000 {
        let kind = ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"][i % 4];
        let mut c = s.root("apps", "v1", kind);
        for name in ["spec", "template", "spec", "containers", "ports"] {
            let (meta, next) = s.field(c, name);
            maps += usize::from(matches!(meta.list, Some(ListMerge::Map { .. })));
            c = next;
        }
    }
    assert_eq!(maps, 20_000);
}

// ---- CRDs ----------------------------------------------------------------------------------

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [
                {"name": "v1", "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {
                            "ports": {
                                "type": "array",
                                "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["port", "protocol"],
                                "items": {"type": "object", "properties": {
                                    "port": {"type": "integer"},
                                    "protocol": {"type": "string", "default": "TCP"},
                                    "tags": {"type": "array", "x-kubernetes-list-type": "set",
                                             "items": {"type": "string"}}
                                }}
                            },
                            "items": {"type": "array", "x-kubernetes-patch-merge-key": "id",
                                      "x-kubernetes-patch-strategy": "merge",
                                      "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
                            "plain": {"type": "array", "items": {"type": "object"}},
                            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                         "additionalProperties": {"type": "string"}},
                            "groups": {"type": "object", "additionalProperties": {
                                "type": "array", "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {"type": "object", "x-kubernetes-map-type": "atomic",
                                          "properties": {"name": {"type": "string"}}}
                            }}
                        }}
                    }
                }}},
                {"name": "v2", "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "properties": {
                        "ports": {"type": "array", "x-kubernetes-list-type": "atomic",
                                  "items": {"type": "object"}}
                    }}}
                }}},
                {"name": "v3"}
            ]
        }
    })
}

#[test]
fn crd_list_map_keys() {
    let mut s = Schema::builtin();
    s.add_crd(&widget_crd()).unwrap();
    let w = "example.com/v1/Widget";
    assert_eq!(
        meta_at(&s, w, "spec.ports"),
        keyed(&[("port", None), ("protocol", Some("TCP"))])
    );
    assert_eq!(meta_at(&s, w, "spec.ports.tags"), list(ListMerge::Set));
    assert_eq!(meta_at(&s, w, "spec.items"), by("id"));
    assert_eq!(meta_at(&s, w, "spec.plain"), FieldMeta::default());
    assert_eq!(meta_at(&s, w, "spec.selector"), replaced());
    assert_eq!(meta_at(&s, w, "spec.groups.anything"), by("name"));
    let (_, elem) = at(&s, w, "spec.groups.anything");
    assert!(s.is_atomic(elem));
    // Each version has its own schema; a version without one binds nothing.
    assert_eq!(
        meta_at(&s, "example.com/v2/Widget", "spec.ports"),
        list(ListMerge::Atomic)
    );
    assert!(s.root("example.com", "v3", "Widget").is_unknown());
    // Built-in kinds are untouched.
    assert_eq!(
        builtin("v1/Pod", "spec.containers"),
        meta_at(&s, "v1/Pod", "spec.containers")
    );
}

#[test]
fn crd_v1beta1_validation() {
    let mut s = Schema::builtin();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "version": "v1alpha1",
            "names": {"kind": "Gadget"},
            "validation": {"openAPIV3Schema": {"properties": {"spec": {"properties": {
                "parts": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object"}}
            }}}}}
        }
    });
    s.add_crd(&crd).unwrap();
    assert_eq!(
        meta_at(&s, "example.com/v1alpha1/Gadget", "spec.parts"),
        by("name")
    );
}

#[test]
fn crd_errors() {
    let mut s = Schema::builtin();
    let err = |s: &mut Schema, crd: Value| s.add_crd(&crd).unwrap_err().to_string();
    assert_eq!(
        err(&mut s, json!({"apiVersion": "v1", "kind": "ConfigMap"})),
        "CustomResourceDefinition (unnamed): : not a CustomResourceDefinition (apiVersion \"v1\", kind \"ConfigMap\")"
    );
    let mut crd = widget_crd();
    crd["spec"].as_object_mut().unwrap().remove("group");
    assert_eq!(
        err(&mut s, crd),
        "CustomResourceDefinition widgets.example.com: spec: missing group"
    );

    let mut crd = widget_crd();
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["ports"]["x-kubernetes-list-type"] = json!("map");
    assert_eq!(
        err(&mut s, crd),
        "CustomResourceDefinition widgets.example.com: \
         spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.ports: \
         x-kubernetes-list-type map needs x-kubernetes-list-map-keys"
    );
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] =
        json!({"$ref": "#/definitions/Spec"});
    assert!(err(&mut s, crd).ends_with(
        "spec.versions[0].schema.openAPIV3Schema.properties.spec: $ref \"#/definitions/Spec\" is not supported here (only \"#/definitions/NAME\" in an OpenAPI document)"
    ));
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-map-type"] = json!("partial");
    assert!(err(&mut s, crd).ends_with(
        "openAPIV3Schema.properties.spec.x-kubernetes-map-type: unknown map type \"partial\""
    ));
    // Nothing was added by the failed loads.
    assert!(s.root("example.com", "v1", "Widget").is_unknown());
    assert_eq!(s.crds.len(), 0);
}

#[test]
fn crd_nesting_is_bounded() {
    let mut schema = json!({"type": "object", "properties": {}});
    for _ in 0..300 {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "spec": {"group": "g", "names": {"kind": "Deep"},
                 "versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}
    });
    let mut s = Schema::builtin();
    let e = s.add_crd(&crd).unwrap_err();
    assert_eq!(e.kind, SchemaErrorKind::TooDeep(openapi::MAX_DEPTH));
}

// ---- OpenAPI v2 documents ------------------------------------------------------------------

/// The shape of kustomize's api/krusty/testdata/customschema.json, plus a recursive type.
fn custom_openapi() -> Value {
    json!({
        "swagger": "2.0",
        "definitions": {
            "v1alpha1.MyCRD": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "template": {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"},
                        "tree": {"$ref": "#/definitions/v1alpha1.Node"}
                    }}
                },
                "x-kubernetes-group-version-kind": [
                    {"group": "example.com", "kind": "MyCRD", "version": "v1alpha1"},
                    {"group": "", "kind": "MyCRD", "version": "v1alpha1"}
                ]
            },
            "v1alpha1.Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/definitions/v1alpha1.Node"},
                                 "x-kubernetes-patch-merge-key": "name",
                                 "x-kubernetes-patch-strategy": "merge"},
                    "parent": {"$ref": "#/definitions/v1alpha1.NodeAlias"}
                }
            },
            "v1alpha1.NodeAlias": {"$ref": "#/definitions/v1alpha1.Node"},
            "io.k8s.api.core.v1.PodTemplateSpec": {
                "type": "object",
                "properties": {"spec": {"$ref": "#/definitions/io.k8s.api.core.v1.PodSpec"}}
            },
            "io.k8s.api.core.v1.PodSpec": {
                "type": "object",
                "properties": {"containers": {
                    "type": "array",
                    "items": {"$ref": "#/definitions/io.k8s.api.core.v1.Container"},
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge"
                }}
            },
            "io.k8s.api.core.v1.Container": {
                "type": "object",
                "properties": {"ports": {
                    "type": "array",
                    "items": {"$ref": "#/definitions/io.k8s.api.core.v1.ContainerPort"},
                    "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-patch-merge-key": "containerPort",
                    "x-kubernetes-patch-strategy": "merge"
                }}
            },
            "io.k8s.api.core.v1.ContainerPort": {
                "type": "object",
                "properties": {"containerPort": {"type": "integer"}, "protocol": {"type": "string"}}
            }
        }
    })
}

#[test]
fn openapi_document_with_recursive_ref() {
    let mut s = Schema::builtin();
    s.add_openapi_v2(&custom_openapi()).unwrap();
    for gvk in ["example.com/v1alpha1/MyCRD", "v1alpha1/MyCRD"] {
        assert_eq!(
            meta_at(&s, gvk, "spec.template.spec.containers"),
            by("name")
        );
        assert_eq!(
            meta_at(&s, gvk, "spec.template.spec.containers.ports"),
            keyed(&[("containerPort", None), ("protocol", None)])
        );
    }
    let mut path = String::from("spec.tree");
    for _ in 0..50 {
        path.push_str(".children");
        assert_eq!(meta_at(&s, "example.com/v1alpha1/MyCRD", &path), by("name"));
    }
    // Through an alias definition.
    assert_eq!(
        meta_at(
            &s,
            "example.com/v1alpha1/MyCRD",
            "spec.tree.parent.parent.children"
        ),
        by("name")
    );
    // Built-in kinds still come from the built-in layer.
    assert_eq!(
        builtin("v1/Pod", "spec.containers.ports"),
        meta_at(&s, "v1/Pod", "spec.containers.ports")
    );
}

#[test]
fn openapi_errors() {
    let mut s = Schema::builtin();
    let mut doc = custom_openapi();
    doc["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]["items"]["$ref"] =
        json!("#/definitions/io.k8s.api.core.v1.Kontainer");
    assert_eq!(
        s.add_openapi_v2(&doc).unwrap_err().to_string(),
        "OpenAPI document: definitions[\"io.k8s.api.core.v1.PodSpec\"].properties.containers.items: \
         $ref \"#/definitions/io.k8s.api.core.v1.Kontainer\" does not resolve"
    );
    let mut doc = custom_openapi();
    doc["definitions"]["v1alpha1.Loop"] = json!({"$ref": "#/definitions/v1alpha1.Loop"});
    assert_eq!(
        s.add_openapi_v2(&doc).unwrap_err().kind,
        SchemaErrorKind::RefLoop("#/definitions/v1alpha1.Loop".into(), 64)
    );
    let mut doc = custom_openapi();
    doc["definitions"]["v1alpha1.MyCRD"]["x-kubernetes-group-version-kind"] =
        json!([{"group": "g"}]);
    assert_eq!(
        s.add_openapi_v2(&doc).unwrap_err().to_string(),
        "OpenAPI document: definitions[\"v1alpha1.MyCRD\"].x-kubernetes-group-version-kind[0]: missing version"
    );
    assert_eq!(
        s.add_openapi_v2(&json!({"swagger": "2.0"}))
            .unwrap_err()
            .to_string(),
        "OpenAPI document: : missing definitions"
    );
    // Nothing was added by the failed loads.
    assert!(s.root("example.com", "v1alpha1", "MyCRD").is_unknown());
    assert_eq!(s.openapi.len(), 0);
    let (_, c) = s
        .comment(r##"{"$ref": "#/definitions/v1alpha1.Node"}"##)
        .unwrap();
    assert!(c.is_unknown());
}

// ---- mergeKeys shorthand -------------------------------------------------------------------

#[test]
fn merge_keys_shorthand() {
    let mut s = Schema::builtin();
    let foo = |s: &mut Schema, path: &str, k: &[&str], strategy: Option<&str>| {
        s.add_merge_key("example.com", "Foo", path, keys(k), strategy)
    };
    foo(&mut s, "spec.items", &["name"], Some("merge")).unwrap();
    foo(&mut s, "spec.items[].ports", &["port", "protocol"], None).unwrap();
    foo(&mut s, "spec.tags", &[], Some("merge")).unwrap();
    foo(&mut s, "spec.config", &[], Some("replace")).unwrap();
    foo(&mut s, "spec.groups.*.rules", &["id"], None).unwrap();
    foo(&mut s, "spec.union", &[], Some("retainKeys")).unwrap();
    foo(&mut s, "spec.items", &["name"], Some("merge")).unwrap(); // the same again is fine

    // Any version of the kind.
    for gvk in ["example.com/v1/Foo", "example.com/v2beta1/Foo"] {
        assert_eq!(meta_at(&s, gvk, "spec.items"), by("name"));
        assert_eq!(
            meta_at(&s, gvk, "spec.items.ports"),
            keyed(&[("port", None), ("protocol", None)])
        );
        assert_eq!(meta_at(&s, gvk, "spec.tags"), list(ListMerge::Set));
        assert_eq!(
            meta_at(&s, gvk, "spec.config"),
            FieldMeta {
                list: Some(ListMerge::Atomic),
                atomic_map: true,
                replace: true,
                retain_keys: false
            }
        );
        assert_eq!(meta_at(&s, gvk, "spec.groups.whatever.rules"), by("id"));
        assert_eq!(meta_at(&s, gvk, "spec.union"), retain(FieldMeta::default()));
    }
    assert!(s.root("other.com", "v1", "Foo").is_unknown());
}

#[test]
fn merge_keys_errors() {
    let mut s = Schema::builtin();
    let mut add = |path: &str, k: &[&str], strategy: Option<&str>| {
        s.add_merge_key("example.com", "Foo", path, keys(k), strategy)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        add("", &["a"], None),
        "mergeKeys example.com/Foo : path: invalid path \"\": empty"
    );
    assert_eq!(
        add("spec..items", &["a"], None),
        "mergeKeys example.com/Foo spec..items: path: invalid path \"spec..items\": empty segment"
    );
    assert!(add("spec.items[0]", &["a"], None).contains("a segment is a field name"));
    assert_eq!(
        add("spec.items", &["a"], Some("replace")),
        "mergeKeys example.com/Foo spec.items: : strategy replace takes no keys"
    );
    assert_eq!(
        add("spec.items", &[], None),
        "mergeKeys example.com/Foo spec.items: : nothing declared: give keys, a strategy, or both"
    );
    assert_eq!(
        add("spec.items", &["a"], Some("merge,patch")),
        "mergeKeys example.com/Foo spec.items: strategy: unknown patch strategy \"patch\""
    );
    assert!(add("spec.items", &["a", "a"], None)
        .ends_with("keys: expected distinct, non-empty field names"));
    s.add_merge_key("", "ConfigMap", "data.x", keys(&["k"]), None)
        .unwrap();
    assert_eq!(
        s.add_merge_key("", "ConfigMap", "data.x", keys(&["j"]), None)
            .unwrap_err()
            .to_string(),
        "mergeKeys ConfigMap data.x: : declared twice with different metadata"
    );
}

// ---- precedence ----------------------------------------------------------------------------

#[test]
fn builtin_beats_declared_and_declared_fills_gaps() {
    let mut s = Schema::builtin();
    let d = "apps/v1/Deployment";
    let containers = format!("{POD_SPEC}.containers");
    // A declaration cannot override what the built-in schema says...
    s.add_merge_key("apps", "Deployment", &containers, vec![], Some("replace"))
        .unwrap();
    assert_eq!(meta_at(&s, d, &containers), by("name"));
    // ... but it fills what the built-in schema leaves unsaid, below built-in lists too.
    s.add_merge_key(
        "apps",
        "Deployment",
        &format!("{containers}.extraList"),
        keys(&["id"]),
        None,
    )
    .unwrap();
    s.add_merge_key(
        "apps",
        "Deployment",
        "metadata.annotations",
        vec![],
        Some("replace"),
    )
    .unwrap();
    assert_eq!(meta_at(&s, d, &format!("{containers}.extraList")), by("id"));
    assert!(meta_at(&s, d, "metadata.annotations").atomic_map);
    // The built-in layer still answers its own fields below.
    assert!(meta_at(&s, d, &format!("{containers}.ports"))
        .list
        .is_some());
}

#[test]
fn crd_beats_declared_layers_and_merge_keys_beat_openapi() {
    let mut s = Schema::builtin();
    s.add_crd(&widget_crd()).unwrap();
    s.add_merge_key(
        "example.com",
        "Widget",
        "spec.items",
        keys(&["other"]),
        None,
    )
    .unwrap();
    s.add_merge_key("example.com", "Widget", "spec.plain", keys(&["key"]), None)
        .unwrap();
    assert_eq!(meta_at(&s, "example.com/v1/Widget", "spec.items"), by("id"));
    // The CRD has `plain` but says nothing about it: the declaration fills it.
    assert_eq!(
        meta_at(&s, "example.com/v1/Widget", "spec.plain"),
        by("key")
    );

    let mut s = Schema::builtin();
    s.add_openapi_v2(&custom_openapi()).unwrap();
    s.add_merge_key(
        "example.com",
        "MyCRD",
        "spec.template.spec.containers",
        keys(&["image"]),
        None,
    )
    .unwrap();
    let gvk = "example.com/v1alpha1/MyCRD";
    assert_eq!(
        meta_at(&s, gvk, "spec.template.spec.containers"),
        by("image")
    );
    // Below it, the OpenAPI document still answers.
    assert_eq!(
        meta_at(&s, gvk, "spec.template.spec.containers.ports"),
        keyed(&[("containerPort", None), ("protocol", None)])
    );
}

// ---- comments ------------------------------------------------------------------------------

#[test]
fn comments() {
    let c = field_meta_from_comment;
    assert_eq!(
        c(r#"# {"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}"#),
        Some(by("name"))
    );
    assert_eq!(
        c(r#"{"type":"array", "x-kubernetes-patch-strategy": "merge"}"#),
        Some(list(ListMerge::Set))
    );
    assert_eq!(
        c(
            r#"{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["a","b"]}"#
        ),
        Some(keyed(&[("a", None), ("b", None)]))
    );
    assert_eq!(
        c(r#"{"x-kubernetes-map-type": "atomic"}"#),
        Some(replaced())
    );
    assert_eq!(
        c(r#"{"x-kubernetes-list-type": "atomic"}"#),
        Some(list(ListMerge::Atomic))
    );
    assert_eq!(
        c(r##"{"$ref":"#/definitions/io.k8s.api.core.v1.PodSpec"}"##),
        Some(FieldMeta::default())
    );
    assert_eq!(c("# just a comment"), None);
    assert_eq!(c("# {not json}"), None);
    assert_eq!(c(r#"# {"setBy": "me"}"#), None);
    assert_eq!(c(r#"# {"x-kubernetes-list-type": "bogus"}"#), None);
    assert_eq!(c(""), None);
}

#[test]
fn comments_resolve_refs() {
    let s = Schema::builtin();
    let containers = r##"# {"items":{"$ref": "#/definitions/io.k8s.api.core.v1.Container"},"type":"array","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy": "merge"}"##;
    let (meta, elem) = s.comment(containers).unwrap();
    assert_eq!(meta, by("name"));
    assert_eq!(s.field(elem, "args").0, list(ListMerge::Atomic));

    let (meta, spec) = s
        .comment(r##"{"$ref":"#/definitions/io.k8s.api.core.v1.PodSpec"}"##)
        .unwrap();
    assert_eq!(meta, FieldMeta::default());
    assert_eq!(s.field(spec, "containers").0, by("name"));

    let (meta, sel) = s
        .comment(r##"{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"}"##)
        .unwrap();
    assert_eq!(meta, atomic_map());
    assert!(s.is_atomic(sel));

    // An unresolved $ref keeps the comment's own extensions and gives no position.
    let (meta, c) = s
        .comment(r##"{"$ref":"#/definitions/nope","x-kubernetes-list-type":"set"}"##)
        .unwrap();
    assert_eq!((meta, c), (list(ListMerge::Set), Cursor::default()));

    // Declared OpenAPI documents are searched too, and a cursor can be completed by another.
    let mut s = Schema::builtin();
    s.add_openapi_v2(&custom_openapi()).unwrap();
    let (_, node) = s
        .comment(r##"{"$ref":"#/definitions/v1alpha1.Node"}"##)
        .unwrap();
    assert_eq!(s.field(node, "children").0, by("name"));
    let (_, pod_spec) = s
        .comment(r##"{"$ref":"#/definitions/io.k8s.api.core.v1.PodSpec"}"##)
        .unwrap();
    assert_eq!(s.field(pod_spec, "volumes").0, retain(by("name")));
    assert_eq!(Cursor::default().or(node), node);
}

#[test]
fn builtin_version_is_recorded() {
    assert_eq!(BUILTIN_KUBERNETES_VERSION, "v1.37.0");
}

// ---- the generator and the run-time loader agree --------------------------------------------

/// `tools/gen_builtin_schema.py` and the OpenAPI loader derive metadata by the same rule (the
/// generator's `derive_meta`, `ext::derive`): loading the generator's source as an OpenAPI
/// document must answer every field exactly as the built-in tables do, and the tables must have
/// pruned nothing that says something. Likewise for the shapes (the generator's `shape_of`,
/// `Builder::shape`): every field of every kind has the same name, value type and `required` in
/// `shape_data.rs` as from the loader, and no field is missing on either side. Needs the source
/// file, so it is ignored by default:
///
/// ```text
/// unzip -p kubernetes_validate-1.37.0-py3-none-any.whl \
///   kubernetes_validate/kubernetes-json-schema/v1.37.0-local/_definitions.json > /tmp/defs.json
/// KRM_MERGE_K8S_DEFINITIONS=/tmp/defs.json cargo test --lib schema -- --ignored
/// ```
#[test]
#[ignore = "needs KRM_MERGE_K8S_DEFINITIONS=<the generator's _definitions.json>"]
fn builtin_tables_match_the_runtime_loader() {
    let path = std::env::var("KRM_MERGE_K8S_DEFINITIONS").expect("KRM_MERGE_K8S_DEFINITIONS");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("#/$defs/", "#/definitions/");
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let mut defs = doc["$defs"].take();
    // The generator's documented supplement: the API server defaults these key fields.
    for port in ["ContainerPort", "ServicePort"] {
        defs[format!("io.k8s.api.core.v1.{port}")]["properties"]["protocol"]["default"] =
            json!("TCP");
    }
    let mut s = Schema::builtin();
    s.add_openapi_v2(&json!({ "definitions": defs })).unwrap();

    let mut seen = std::collections::HashSet::new();
    let mut fields = 0;
    for builtin::Kind(g, v, k, _) in &builtin_data::KINDS {
        let group = builtin_data::GROUPS[usize::from(*g)];
        let root = s.root(group, v, k);
        assert!(
            root.builtin.is_some() && root.openapi.is_some(),
            "{group}/{v}/{k}"
        );
        let path = format!("{group}/{v}/{k}");
        fields += compare(&s, root.builtin, root.openapi, &mut seen, &path);
    }
    assert!(fields > 1000, "{fields}");

    // The shapes (shape_data.rs): the same field names, value types and `required` for every
    // field of every kind, maps and lists included.
    let mut seen = std::collections::HashSet::new();
    let mut fields = 0;
    for shape::Kind(g, v, k, _) in &shape_data::KINDS {
        let (g, v, k) = (shape::name(*g), shape::name(*v), shape::name(*k));
        let b = shape::root(g, v, k).unwrap();
        let o = s
            .openapi
            .root(g, v, k)
            .unwrap_or_else(|| panic!("{g}/{v}/{k}"));
        assert!(s.openapi.node(o).unwrap().resource, "{g}/{v}/{k}");
        fields += compare_shapes(&s, Some(b), Some(o), &mut seen, &format!("{g}/{v}/{k}"));
    }
    assert!(fields > 3000, "{fields}");
}

/// Compares the built-in object type `b` with the loader's node `o`; both `None`, or a node
/// without fields or map value, is an object with any fields.
fn compare_shapes(
    s: &Schema,
    b: Option<u32>,
    o: Option<u32>,
    seen: &mut std::collections::HashSet<(Option<u32>, Option<u32>)>,
    path: &str,
) -> usize {
    let node = o.and_then(|o| s.openapi.node(o));
    let free = node.is_none_or(|n| n.fields.is_empty() && n.additional.is_none());
    assert_eq!(b.is_none_or(|b| !shape::is_closed(b)), free, "{path}");
    let (Some(b), Some(node)) = (b, node) else {
        return 0;
    };
    if !seen.insert((Some(b), o)) {
        return 0;
    }
    assert!(!node.open, "{path}");
    assert_eq!(shape::fields(b).count(), node.fields.len(), "{path}");
    let mut n = 0;
    let slots = node.fields.iter().map(|(k, v)| (k.as_str(), v));
    for (name, slot) in slots.chain(node.additional.iter().map(|a| ("*", a))) {
        let path = format!("{path}.{name}");
        let found = if name == "*" {
            shape::value(b)
        } else {
            shape::field(b, name)
        };
        let found = found.unwrap_or_else(|| panic!("{path}: not in the tables"));
        assert_eq!(found.shape, slot.shape, "{path}");
        assert_eq!(found.required, slot.required, "{path}");
        n += 1;
        if slot.shape.val == shape::Val::Object {
            n += compare_shapes(s, found.node, slot.target, seen, &path);
        } else {
            assert_eq!(found.node, None, "{path}");
        }
    }
    assert_eq!(
        shape::value(b).is_some(),
        node.additional.is_some(),
        "{path}"
    );
    n
}

fn compare(
    s: &Schema,
    b: Option<u32>,
    o: Option<u32>,
    seen: &mut std::collections::HashSet<(Option<u32>, u32)>,
    path: &str,
) -> usize {
    let Some(o) = o else { return 0 };
    if !seen.insert((b, o)) {
        return 0;
    }
    let node = s.openapi.node(o).unwrap();
    assert_eq!(b.is_some_and(builtin::atomic), node.atomic, "{path}");
    let mut n = 0;
    let slots = node.fields.iter().map(|(k, v)| (k.as_str(), v));
    for (name, slot) in slots.chain(node.additional.iter().map(|a| ("*", a))) {
        let found = b.and_then(|b| builtin::field(b, name));
        let meta = found
            .as_ref()
            .and_then(|f| f.meta.clone())
            .unwrap_or_default();
        let path = format!("{path}.{name}");
        // `replace` comes from map-types only outside the built-in layer (FieldMeta::replace).
        let expected = FieldMeta {
            replace: false,
            ..slot.meta.clone()
        };
        assert_eq!(meta, expected, "{path}");
        n += 1 + compare(s, found.and_then(|f| f.target), slot.target, seen, &path);
    }
    n
}

// ---- no panics -----------------------------------------------------------------------------

/// Every JSON pointer into `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            let k = k.replace('~', "~0").replace('/', "~1");
            pointers(v, format!("{at}/{k}"), out)
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, v)| pointers(v, format!("{at}/{i}"), out)),
        _ => {}
    }
}

/// Replacing any part of a valid input by a value of another shape gives `Ok` or a typed error,
/// never a panic, and a failed load leaves the schema as it was.
#[test]
fn mutated_inputs_never_panic() {
    let weird = [
        json!(null),
        json!(7),
        json!("#/definitions/v1alpha1.Node"),
        json!([]),
        json!({}),
        json!(true),
        json!({"$ref": "#/definitions/v1alpha1.Node"}),
        json!(["name", 3]),
    ];
    type Add = fn(&mut Schema, &Value) -> Result<(), SchemaError>;
    let inputs: [(Value, Add); 2] = [
        (widget_crd(), Schema::add_crd),
        (custom_openapi(), Schema::add_openapi_v2),
    ];
    for (input, add) in inputs {
        let mut paths = Vec::new();
        pointers(&input, String::new(), &mut paths);
        for p in &paths {
            for w in &weird {
                let mut v = input.clone();
                match v.pointer_mut(p) {
                    Some(slot) => *slot = w.clone(),
                    None => v = w.clone(),
                }
                let mut s = Schema::builtin();
                if add(&mut s, &v).is_err() {
                    assert_eq!((s.crds.len(), s.openapi.len()), (0, 0), "{p} = {w}");
                }
                let (_, c) = at(&s, "example.com/v1/Widget", "spec.ports.tags");
                let _ = s.field(c, "x");
            }
        }
    }
    for text in [
        "#",
        "# {",
        "{\"items\": 3}",
        "{\"type\": [1, {}]}",
        "{\"x-kubernetes-list-map-keys\": []}",
    ] {
        let _ = field_meta_from_comment(text);
        let _ = Schema::builtin().comment(text);
    }
}
