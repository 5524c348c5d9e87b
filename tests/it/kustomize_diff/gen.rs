//! The case generator: a package of resources and a list of patches, from a seed.
//!
//! Resources are drawn from a few kinds (Deployments, Services, ConfigMaps, a cluster-scoped
//! ClusterRole, the CRD-less `example.com/v1 Widget`) over small pools of names, namespaces,
//! labels and list keys, so that patches often meet what they name — and sometimes do not.
//! Patches are strategic merges with or without a target and JSON 6902 patches; JSON patch
//! operations are built against the state the earlier operations leave, so most of them apply.
//!
//! Inputs where kustomize and krm-merge differ on purpose are not generated (see `AVOIDED` in
//! the test); `Gen::all` lifts the exclusions that concern documented differences
//! (`DIFFERENCES`). Resources may hold entries with no value (`key:`), which kustomize's
//! strategic merge drops and its JSON patches turn into `null`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::emit::{NULL_EMPTY, NULL_TILDE};
use super::rng::Rng;

mod patches;
mod targets;

const NAMES: &[&str] = &["web", "api", "db", "cache", "front"];
const NAMESPACES: &[Option<&str>] = &[None, None, Some("prod"), Some("staging"), Some("default")];
const CONTAINERS: &[&str] = &["app", "sidecar", "proxy"];
const ENV: &[&str] = &["A", "B", "C", "D", "E"];
const VOLUMES: &[&str] = &["data", "config", "cache", "logs"];
const TCP_PORTS: &[u64] = &[80, 443, 8080, 9090];
const UDP_PORTS: &[u64] = &[53, 5353];
const IMAGES: &[&str] = &["nginx:1.25", "nginx:1.27", "busybox:1.36", "envoy:v1.30"];
const ITEMS: &[&str] = &["a", "b", "c", "d"];
const TAGS: &[&str] = &["x", "y", "z"];
const DATA_KEYS: &[&str] = &["LOG_LEVEL", "mode", "config.yaml", "flag", "count"];
const DATA_VALUES: &[&str] = &[
    "info",
    "debug",
    "true",
    "1",
    "0777",
    "on",
    "a b",
    "1e3",
    "x=1\ny=2\n",
];

/// Plain JSON patch values that YAML 1.1 (kustomize's reading of a JSON patch written in
/// YAML) and YAML 1.2 read differently, or that kustomize writes as other text (`1.0`, `1e3`).
const YAML11_VALUES: &[&str] = &[
    "on",
    "y",
    "yes",
    "off",
    "n",
    "NO",
    "True",
    "0777",
    "08",
    "1e3",
    "1_000",
    "0x1F",
    "0b11",
    "+12",
    ".5",
    "1.0",
    "1.5e6",
    "2024-01-31",
];

/// One generated case.
pub struct Case {
    pub resources: Vec<Value>,
    pub patches: Vec<Patch>,
    /// Small collections written in flow style in the resources.
    pub flow_leaves: bool,
    pub indent_lists: bool,
    /// Strings quoted in the resources where plain would do (Helm's way).
    pub quote_strings: bool,
    /// Runs of resources written as the items of one list kind document.
    pub lists: Vec<ListDoc>,
}

/// Resources `start..start + len` of a case written as one list kind document (kustomize
/// flattens it; krm-merge patches its items where they are).
pub struct ListDoc {
    pub start: usize,
    pub len: usize,
    pub api_version: String,
    /// `List`, or `<Kind>List` when its items are of one kind.
    pub kind: String,
    /// `kind:` written after `items:`, as kube-prometheus writes its lists.
    pub kind_last: bool,
    /// The list is itself the only item of a `v1 List`.
    pub nested: bool,
}

impl ListDoc {
    /// The list document holding `items`.
    pub fn document(&self, items: &[Value]) -> Value {
        let mut m = Map::new();
        m.insert("apiVersion".into(), json!(self.api_version));
        if !self.kind_last {
            m.insert("kind".into(), json!(self.kind));
        }
        m.insert("items".into(), Value::Array(items.to_vec()));
        if self.kind_last {
            m.insert("kind".into(), json!(self.kind));
        }
        if self.nested {
            json!({"apiVersion": "v1", "kind": "List", "items": [Value::Object(m)]})
        } else {
            Value::Object(m)
        }
    }
}

pub struct Patch {
    pub body: Body,
    /// The `type` our functionConfig gives the patch (none: left to detection).
    pub type_name: Option<&'static str>,
    pub target: Option<Value>,
    pub allow_name_change: bool,
}

pub enum Body {
    /// Strategic merge documents.
    Smp(Vec<Value>),
    /// JSON 6902 operations; `json_text`: written as a JSON array rather than a YAML list.
    Json { ops: Vec<Value>, json_text: bool },
}

pub struct Gen {
    r: Rng,
    /// Generate the inputs of documented differences too (`DIFFERENCES`).
    all: bool,
    /// Every TCP port carries its protocol in this case; else TCP ports have none, and a list
    /// mixes them with UDP ports, which always have one (kyaml's pairing of such lists is
    /// kustomize's output under kustomize's options).
    explicit_tcp: bool,
    /// Some TCP ports have a protocol and some not, and ports of the same number come with and
    /// without a protocol.
    mixed_ports: bool,
    /// The strategic merge document being written has a target.
    targeted: bool,
    /// A counter for values that must not repeat (list keys added by JSON patches).
    fresh: usize,
    /// What the case exercises, for the coverage summary.
    pub tags: BTreeMap<&'static str, usize>,
}

pub fn api_version(v: &Value) -> &str {
    v["apiVersion"].as_str().unwrap_or("")
}
pub fn kind(v: &Value) -> &str {
    v["kind"].as_str().unwrap_or("")
}
pub fn name(v: &Value) -> &str {
    v["metadata"]["name"].as_str().unwrap_or("")
}
pub fn namespace(v: &Value) -> Option<&str> {
    v["metadata"]["namespace"].as_str()
}
fn group(v: &Value) -> &str {
    api_version(v).rsplit_once('/').map_or("", |(g, _)| g)
}
fn version(v: &Value) -> &str {
    api_version(v)
        .rsplit_once('/')
        .map_or(api_version(v), |(_, v)| v)
}
fn cluster_scoped(kind: &str) -> bool {
    kind == "ClusterRole"
}
/// The namespace kustomize compares: `default` for none, nothing for cluster-scoped kinds.
fn effective_ns(v: &Value) -> Option<String> {
    if cluster_scoped(kind(v)) {
        None
    } else {
        Some(namespace(v).unwrap_or("default").to_owned())
    }
}

/// A JSON Pointer segment.
pub fn escape(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
}

impl Gen {
    pub fn new(seed: u64, all: bool) -> Gen {
        let mut r = Rng::new(seed);
        let explicit_tcp = r.chance(50);
        let mixed_ports = r.chance(40);
        Gen {
            r,
            all,
            explicit_tcp,
            mixed_ports,
            targeted: false,
            fresh: 0,
            tags: BTreeMap::new(),
        }
    }

    fn tag(&mut self, t: &'static str) {
        *self.tags.entry(t).or_default() += 1;
    }

    pub fn case(&mut self) -> Case {
        let mut resources = self.resources();
        // Patches are written for the kinds the generator knows; a CRD beside its resources only
        // teaches merge keys (which kustomize's options do not use), and any target may still
        // select it.
        let subjects: Vec<Value> = resources.clone();
        if resources.iter().any(|r| kind(r) == "Widget") && self.r.chance(30) {
            self.tag("res:crd-beside-cr");
            let at = self.r.range(0, resources.len());
            resources.insert(at, widget_crd());
        }
        let n = self.r.range(1, 4);
        let patches: Vec<Patch> = (0..n).map(|_| self.patch(&subjects)).collect();
        let lists = self.lists(&resources);
        let quote_strings = self.r.chance(30);
        if quote_strings {
            self.tag("res:quoted-strings");
        }
        if resources.iter().any(has_empty_value) {
            self.tag("res:empty-value");
            // kustomize's JSON patches write an entry with no value back as `null`, which its
            // later strategic merges keep; krm-merge does the same under kustomize's options.
            if patches.iter().any(|p| matches!(p.body, Body::Json { .. })) {
                self.tag("res:empty-value-json-patch");
            }
        }
        // A target naming a resource by the name it had before a rename earlier in the run.
        if patches.iter().rev().skip(1).any(|p| p.allow_name_change) {
            self.tag("patch:rename-then-more");
        }
        Case {
            resources,
            patches,
            flow_leaves: self.r.chance(30),
            indent_lists: self.r.chance(30),
            quote_strings,
            lists,
        }
    }

    /// Runs of resources to write as list kinds: `<Kind>List` where the run is of
    /// one kind, `v1 List` otherwise or now and then, `kind:` first or last, sometimes nested
    /// in a `List`.
    fn lists(&mut self, resources: &[Value]) -> Vec<ListDoc> {
        let mut out = Vec::new();
        if !self.r.chance(40) {
            return out;
        }
        let mut i = 0;
        while i < resources.len() {
            if !self.r.chance(50) {
                i += 1;
                continue;
            }
            let len = self.r.range(1, 3).min(resources.len() - i);
            let run = &resources[i..i + len];
            // kustomize reads a list's items through JSON: an entry with no value becomes an
            // explicit `null`, which its strategic merges then keep, and every string comes
            // back double-quoted, so a number a patch sets over a port's name is written as a
            // string (doc/KUSTOMIZE.md).
            if run.iter().any(|r| has_empty_value(r) || has_named_port(r)) {
                i += len;
                continue;
            }
            let one_kind = run.iter().all(|r| kind(r) == kind(&run[0]));
            let (api_version, kind_name) = if one_kind && self.r.chance(75) {
                self.tag("res:kind-list");
                (
                    api_version(&run[0]).to_owned(),
                    format!("{}List", kind(&run[0])),
                )
            } else {
                self.tag("res:v1-list");
                ("v1".to_owned(), "List".to_owned())
            };
            let kind_last = self.r.chance(50);
            let nested = self.r.chance(10);
            if nested {
                self.tag("res:nested-list");
            }
            out.push(ListDoc {
                start: i,
                len,
                api_version,
                kind: kind_name,
                kind_last,
                nested,
            });
            i += len;
        }
        if !out.is_empty() {
            self.tag("res:list-kind");
        }
        out
    }

    fn null(&mut self) -> Value {
        match self.r.weighted(&[60, 20, 20]) {
            0 => {
                self.tag("null:null");
                Value::Null
            }
            1 => {
                self.tag("null:~");
                Value::String(NULL_TILDE.into())
            }
            _ => {
                self.tag("null:empty");
                Value::String(NULL_EMPTY.into())
            }
        }
    }

    // ---------------------------------------------------------------- resources

    fn resources(&mut self) -> Vec<Value> {
        let n = self.r.range(1, 6);
        let mut out = Vec::new();
        let mut ids = BTreeSet::new();
        let mut tries = 0;
        while out.len() < n && tries < 60 {
            tries += 1;
            let kind = *self.r.pick(&[
                "Deployment",
                "Deployment",
                "Deployment",
                "Service",
                "Service",
                "ConfigMap",
                "ClusterRole",
                "Widget",
                "Widget",
            ]);
            let name = *self.r.pick(NAMES);
            let ns = if cluster_scoped(kind) {
                None
            } else {
                *self.r.pick(NAMESPACES)
            };
            // kustomize refuses two resources whose effective namespaces are equal.
            let eff = if cluster_scoped(kind) {
                None
            } else {
                Some(ns.unwrap_or("default"))
            };
            if !ids.insert((kind, eff, name)) {
                continue;
            }
            let r = match kind {
                "Deployment" => self.deployment(name, ns),
                "Service" => self.service(name, ns),
                "ConfigMap" => self.configmap(name, ns),
                "ClusterRole" => self.clusterrole(name),
                _ => self.widget(name, ns),
            };
            out.push(r);
        }
        out
    }

    fn metadata(&mut self, name: &str, ns: Option<&str>) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), json!(name));
        if let Some(ns) = ns {
            m.insert("namespace".into(), json!(ns));
        }
        if self.r.chance(75) {
            let mut l = Map::new();
            if self.r.chance(85) {
                l.insert("app".into(), json!(name));
            }
            if self.r.chance(50) {
                l.insert("tier".into(), json!(*self.r.pick(&["fe", "be", "cache"])));
            }
            if self.r.chance(30) {
                l.insert("env".into(), json!(*self.r.pick(&["prod", "dev"])));
            }
            if !l.is_empty() {
                m.insert("labels".into(), Value::Object(l));
            }
        }
        if self.r.chance(50) {
            let mut a = Map::new();
            if self.r.chance(70) {
                a.insert("team".into(), json!(*self.r.pick(&["a", "b"])));
            }
            if self.r.chance(50) {
                a.insert(
                    "example.com/owner".into(),
                    json!(*self.r.pick(&["alice", "bob"])),
                );
            }
            if self.r.chance(20) {
                a.insert("note".into(), json!("two words"));
            }
            if a.is_empty() {
                a.insert("team".into(), json!("a"));
            }
            m.insert("annotations".into(), Value::Object(a));
        }
        Value::Object(m)
    }

    fn deployment(&mut self, name: &str, ns: Option<&str>) -> Value {
        let mut spec = Map::new();
        if self.r.chance(70) {
            spec.insert("replicas".into(), json!(self.r.range(1, 5)));
        }
        if self.r.chance(85) {
            spec.insert("selector".into(), json!({"matchLabels": {"app": name}}));
            if self.r.chance(25) {
                let s = if self.r.chance(60) {
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
                } else {
                    json!({"type": "Recreate"})
                };
                spec.insert("strategy".into(), s);
            }
            let pod = self.pod_spec();
            spec.insert(
                "template".into(),
                json!({"metadata": {"labels": {"app": name}}, "spec": pod}),
            );
        } else {
            self.tag("res:deployment-without-template");
        }
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": self.metadata(name, ns),
            "spec": spec,
        })
    }

    fn pod_spec(&mut self) -> Value {
        let mut p = Map::new();
        let vols = if self.r.chance(45) {
            let k = self.r.range(1, 3);
            self.r.choose(VOLUMES, k)
        } else {
            Vec::new()
        };
        let k = self.r.range(1, 3);
        let names = self.r.choose(CONTAINERS, k);
        let containers: Vec<Value> = names.iter().map(|n| self.container(n, &vols)).collect();
        p.insert("containers".into(), Value::Array(containers));
        if self.r.chance(20) {
            let c = self.container("init", &vols);
            p.insert("initContainers".into(), json!([c]));
        }
        if !vols.is_empty() {
            let v: Vec<Value> = vols.iter().map(|n| self.volume(n)).collect();
            p.insert("volumes".into(), Value::Array(v));
        }
        if self.r.chance(25) {
            p.insert("nodeSelector".into(), json!({"disk": "ssd"}));
        }
        if self.r.chance(20) {
            p.insert(
                "tolerations".into(),
                json!([{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}]),
            );
        }
        if self.r.chance(15) {
            p.insert("imagePullSecrets".into(), json!([{"name": "regcred"}]));
        }
        if self.r.chance(10) {
            p.insert(
                "hostAliases".into(),
                json!([{"ip": "10.0.0.1", "hostnames": ["a.local"]}]),
            );
        }
        if self.r.chance(15) {
            p.insert("serviceAccountName".into(), json!("runner"));
        }
        Value::Object(p)
    }

    fn container(&mut self, name: &str, vols: &[&str]) -> Value {
        let mut c = Map::new();
        c.insert("name".into(), json!(name));
        c.insert("image".into(), json!(*self.r.pick(IMAGES)));
        if self.r.chance(40) {
            const ARGS: &[&[&str]] = &[&["--a", "--b"], &["--port", "8080"], &["-v"]];
            let a = *self.r.pick(ARGS);
            c.insert("args".into(), json!(a));
        }
        if self.r.chance(20) {
            c.insert("command".into(), json!(["sh", "-c", "run"]));
        }
        if self.r.chance(60) {
            let k = self.r.range(1, 4);
            let names = self.r.choose(ENV, k);
            let env: Vec<Value> = names.iter().map(|n| self.env_var(n)).collect();
            c.insert("env".into(), Value::Array(env));
        }
        if self.r.chance(50) {
            let k = self.r.range(1, 3);
            let ports = self.ports("containerPort", k);
            c.insert("ports".into(), Value::Array(ports));
        }
        if !vols.is_empty() && self.r.chance(60) {
            let m: Vec<Value> = vols
                .iter()
                .map(|v| json!({"name": v, "mountPath": format!("/{v}")}))
                .collect();
            c.insert("volumeMounts".into(), Value::Array(m));
        }
        if self.r.chance(30) {
            c.insert(
                "resources".into(),
                json!({"limits": {"cpu": "100m", "memory": "64Mi"}}),
            );
        }
        if self.r.chance(15) {
            c.insert("imagePullPolicy".into(), json!("IfNotPresent"));
        } else if self.r.chance(8) {
            c.insert("imagePullPolicy".into(), json!(NULL_EMPTY));
        }
        Value::Object(c)
    }

    fn env_var(&mut self, name: &str) -> Value {
        if self.r.chance(20) {
            json!({"name": name, "valueFrom": {"configMapKeyRef": {"name": "settings", "key": name.to_lowercase()}}})
        } else {
            json!({"name": name, "value": self.r.range(1, 9).to_string()})
        }
    }

    /// A port, or `None` when its key is taken in `used`.
    fn port(&mut self, key: &str, used: &mut BTreeSet<(u64, bool)>) -> Option<Value> {
        let udp = self.r.chance(25);
        let number = if udp && !(self.mixed_ports && self.r.chance(50)) {
            *self.r.pick(UDP_PORTS)
        } else {
            *self.r.pick(TCP_PORTS)
        };
        if !used.insert((number, udp)) {
            return None;
        }
        let mut p = Map::new();
        p.insert(key.into(), json!(number));
        if key == "port" && self.r.chance(50) {
            let t = if self.r.chance(50) {
                json!(number + 8000)
            } else {
                json!("http")
            };
            p.insert("targetPort".into(), t);
        }
        let protocol = if udp {
            Some("UDP")
        } else if self.mixed_ports {
            self.r.chance(50).then_some("TCP")
        } else {
            self.explicit_tcp.then_some("TCP")
        };
        if let Some(pr) = protocol {
            p.insert("protocol".into(), json!(pr));
        }
        if self.r.chance(40) {
            p.insert("name".into(), json!(format!("p{number}")));
        }
        Some(Value::Object(p))
    }

    fn ports(&mut self, key: &str, k: usize) -> Vec<Value> {
        let mut used = BTreeSet::new();
        (0..k).filter_map(|_| self.port(key, &mut used)).collect()
    }

    fn volume(&mut self, name: &str) -> Value {
        match self.r.below(4) {
            0 => json!({"name": name, "configMap": {"name": format!("{name}-cm")}}),
            1 => json!({"name": name, "emptyDir": {}}),
            2 => json!({"name": name, "secret": {"secretName": format!("{name}-s")}}),
            _ => json!({"name": name, "hostPath": {"path": format!("/var/{name}")}}),
        }
    }

    fn service(&mut self, name: &str, ns: Option<&str>) -> Value {
        let mut spec = Map::new();
        if self.r.chance(85) {
            spec.insert("selector".into(), json!({"app": name}));
        }
        let k = self.r.range(1, 3);
        let ports = self.ports("port", k);
        spec.insert("ports".into(), Value::Array(ports));
        if self.r.chance(40) {
            spec.insert(
                "type".into(),
                json!(*self.r.pick(&["ClusterIP", "NodePort"])),
            );
        }
        if self.r.chance(15) {
            spec.insert("sessionAffinity".into(), json!("None"));
        }
        json!({"apiVersion": "v1", "kind": "Service", "metadata": self.metadata(name, ns), "spec": spec})
    }

    fn configmap(&mut self, name: &str, ns: Option<&str>) -> Value {
        let mut data = Map::new();
        let k = self.r.range(1, 4);
        for key in self.r.choose(DATA_KEYS, k) {
            data.insert(key.into(), json!(*self.r.pick(DATA_VALUES)));
        }
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": self.metadata(name, ns), "data": data})
    }

    fn rule(&mut self) -> Value {
        let g = *self.r.pick(&["", "apps"]);
        let res = if g.is_empty() { "pods" } else { "deployments" };
        let k = self.r.range(1, 3);
        let verbs = self.r.choose(&["get", "list", "watch"], k);
        json!({"apiGroups": [g], "resources": [res], "verbs": verbs})
    }

    fn clusterrole(&mut self, name: &str) -> Value {
        let k = self.r.range(1, 2);
        let rules: Vec<Value> = (0..k).map(|_| self.rule()).collect();
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": self.metadata(name, None),
            "rules": rules,
        })
    }

    fn widget_items(&mut self) -> Vec<Value> {
        let k = self.r.range(1, 3);
        self.r
            .choose(ITEMS, k)
            .into_iter()
            .map(|n| {
                if self.r.chance(50) {
                    json!({"name": n, "value": self.r.range(1, 9).to_string()})
                } else {
                    json!({"name": n})
                }
            })
            .collect()
    }

    fn widget(&mut self, name: &str, ns: Option<&str>) -> Value {
        let mut spec = Map::new();
        if self.r.chance(60) {
            spec.insert("size".into(), json!(self.r.range(1, 9)));
        }
        if self.r.chance(85) {
            spec.insert("items".into(), Value::Array(self.widget_items()));
        }
        if self.r.chance(40) {
            let k = self.r.range(1, 3);
            spec.insert("tags".into(), json!(self.r.choose(TAGS, k)));
        }
        if self.r.chance(40) {
            let mut c = Map::new();
            c.insert("mode".into(), json!(*self.r.pick(&["fast", "safe"])));
            if self.r.chance(40) {
                c.insert("a~b".into(), json!("1"));
            }
            if self.r.chance(40) {
                c.insert("example.com/k".into(), json!("v"));
            }
            if self.r.chance(15) {
                c.insert("level".into(), json!(NULL_EMPTY));
            }
            spec.insert("config".into(), Value::Object(c));
        }
        if self.r.chance(10) {
            self.tag("res:explicit-null");
            spec.insert("extra".into(), Value::Null);
        } else if self.r.chance(10) {
            spec.insert("extra".into(), json!(NULL_EMPTY));
        }
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": self.metadata(name, ns), "spec": spec})
    }
}

/// The CRD of the generator's `Widget`: `spec.items` a list-type map keyed by `name`,
/// `spec.tags` a set. By default krm-merge merges those lists by the CRD's keys; kustomize, and
/// krm-merge with kustomize's options, never read CRDs and replace them.
fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "properties": {
                            "items": {
                                "type": "array",
                                "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "string"}}},
                            },
                            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        },
                    }},
                }},
            }],
        },
    })
}

/// Sets `path` in `doc` to `v` where nothing is there yet: every map on the way absent (then
/// made) or a map without a `$patch` directive. False when something was in the way.
fn put_if_absent(doc: &mut Value, path: &[&str], v: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut at = doc;
    for p in parents {
        let Some(m) = at.as_object_mut() else {
            return false;
        };
        if m.contains_key("$patch") {
            return false;
        }
        at = m.entry(p.to_string()).or_insert_with(|| json!({}));
    }
    match at.as_object_mut() {
        Some(m) if !m.contains_key("$patch") && !m.contains_key(*last) => {
            m.insert(last.to_string(), v);
            true
        }
        _ => false,
    }
}

/// Every node of `v` below the root with its JSON Pointer.
fn collect(v: &Value, ptr: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{ptr}/{}", escape(k));
                out.push((p.clone(), x.clone()));
                collect(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{ptr}/{i}");
                out.push((p.clone(), x.clone()));
                collect(x, p, out);
            }
        }
        _ => {}
    }
}

/// Whether a map of `v` has an entry with no value (`key:`).
fn has_empty_value(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .values()
            .any(|x| matches!(x, Value::String(s) if s == NULL_EMPTY) || has_empty_value(x)),
        Value::Array(a) => a.iter().any(has_empty_value),
        _ => false,
    }
}

/// Whether `v` has a port (`targetPort`, ...) given by name, a string where a patch may set a
/// number.
fn has_named_port(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| {
            (super::emit::INT_OR_STRING.contains(&k.as_str()) && x.is_string()) || has_named_port(x)
        }),
        Value::Array(a) => a.iter().any(has_named_port),
        _ => false,
    }
}

/// Whether `v` holds a string of more than one line.
fn has_multi_line(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\n'),
        Value::Object(m) => m.values().any(has_multi_line),
        Value::Array(a) => a.iter().any(has_multi_line),
        _ => false,
    }
}
