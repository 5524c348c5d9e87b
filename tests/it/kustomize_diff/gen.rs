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

    // ---------------------------------------------------------------- patches

    fn patch(&mut self, pkg: &[Value]) -> Patch {
        // The resource the patch is written for: one of the package, or one that is not there.
        let subject = if self.r.chance(88) {
            pkg[self.r.below(pkg.len())].clone()
        } else {
            self.tag("patch:phantom-subject");
            let kinds = [
                "Deployment",
                "Service",
                "ConfigMap",
                "ClusterRole",
                "Widget",
            ];
            let k = *self.r.pick(&kinds);
            let mut r = Gen::new(self.r.next_u64(), self.all);
            let n = *self.r.pick(&["nope", "web", "api"]);
            let ns = if cluster_scoped(k) {
                None
            } else {
                *self.r.pick(NAMESPACES)
            };
            match k {
                "Deployment" => r.deployment(n, ns),
                "Service" => r.service(n, ns),
                "ConfigMap" => r.configmap(n, ns),
                "ClusterRole" => r.clusterrole(n),
                _ => r.widget(n, ns),
            }
        };
        match self.r.weighted(&[33, 30, 37]) {
            0 => {
                self.tag("patch:smp-no-target");
                let mut docs = vec![self.smp_doc(&subject, true, false)];
                if self.r.chance(12) {
                    self.tag("patch:smp-multidoc");
                    let other = pkg[self.r.below(pkg.len())].clone();
                    docs.push(self.smp_doc(&other, true, false));
                    // kustomize v5.5.0 panics on a document after one that deletes its resource.
                    if !self.all {
                        if let Some(m) = docs[0].as_object_mut() {
                            m.remove("$patch");
                        }
                    }
                }
                Patch {
                    body: Body::Smp(docs),
                    type_name: self.smp_type(),
                    target: None,
                    allow_name_change: false,
                }
            }
            1 => {
                self.tag("patch:smp-target");
                let target = if self.r.chance(12) {
                    self.exact_target(&subject)
                } else {
                    self.target(&subject, pkg)
                };
                let same_kind = target["kind"].as_str() == Some(kind(&subject));
                // A patch written for one kind applied to others meets lists without a schema,
                // where kustomize keeps `$patch` elements as data.
                let kind_body = same_kind || self.r.chance(50);
                if kind_body && !same_kind {
                    self.tag("smp:body-for-another-kind");
                }
                let mut doc = self.smp_doc(&subject, kind_body, true);
                // A rename where the target names one resource exactly.
                let exact = same_kind
                    && target["name"].as_str() == Some(name(&subject))
                    && (cluster_scoped(kind(&subject))
                        || target["namespace"].as_str() == effective_ns(&subject).as_deref());
                let allow_name_change = exact && self.r.chance(50);
                if allow_name_change {
                    self.tag("patch:allowNameChange");
                    doc["metadata"]["name"] = json!(format!("{}-renamed", name(&subject)));
                }
                Patch {
                    body: Body::Smp(vec![doc]),
                    type_name: self.smp_type(),
                    target: Some(target),
                    allow_name_change,
                }
            }
            _ => {
                self.tag("patch:json6902");
                let target = if self.r.chance(4) {
                    self.tag("patch:json-without-target");
                    None
                } else if self.r.chance(35) {
                    Some(self.exact_target(&subject))
                } else {
                    Some(self.target(&subject, pkg))
                };
                let ops = self.json_ops(&subject);
                let json_text = self.r.chance(25);
                if json_text {
                    self.tag("patch:json-as-json-text");
                }
                let type_name = *self.r.pick(&[
                    None,
                    None,
                    Some("json6902"),
                    Some("JsonPatch"),
                    Some("JSON6902"),
                ]);
                Patch {
                    body: Body::Json { ops, json_text },
                    type_name,
                    target,
                    allow_name_change: false,
                }
            }
        }
    }

    fn smp_type(&mut self) -> Option<&'static str> {
        *self.r.pick(&[
            None,
            None,
            None,
            Some("merge2"),
            Some("StrategicMerge"),
            Some("StrategicMergePatch"),
        ])
    }

    /// A strategic merge document for `subject`: its identity (or, with a target, sometimes
    /// another name — kustomize ignores it) and edits for its kind (`kind_body`) or of its
    /// metadata only.
    fn smp_doc(&mut self, subject: &Value, kind_body: bool, targeted: bool) -> Value {
        self.targeted = targeted;
        let mut meta = Map::new();
        let n = if targeted && self.r.chance(25) {
            self.tag("smp:target-with-other-name");
            "anything"
        } else {
            name(subject)
        };
        meta.insert("name".into(), json!(n));
        match namespace(subject) {
            Some("default") if !targeted && self.r.chance(40) => {
                self.tag("smp:identity-default-ns-omitted");
            }
            Some(ns) => {
                meta.insert("namespace".into(), json!(ns));
            }
            None if !targeted && !cluster_scoped(kind(subject)) && self.r.chance(20) => {
                self.tag("smp:identity-default-ns-written");
                meta.insert("namespace".into(), json!("default"));
            }
            None => {}
        }
        let mut doc = Map::new();
        doc.insert("apiVersion".into(), json!(api_version(subject)));
        doc.insert("kind".into(), json!(kind(subject)));
        doc.insert("metadata".into(), Value::Object(meta));
        if kind_body && self.r.chance(3) {
            self.tag("smp:$patch:delete-resource");
            doc.insert("$patch".into(), json!("delete"));
            return Value::Object(doc);
        }
        let body = if kind_body {
            match kind(subject) {
                "Deployment" => self.deployment_body(subject),
                "Service" => self.service_body(subject),
                "ConfigMap" => self.configmap_body(subject),
                "ClusterRole" => self.clusterrole_body(subject),
                _ => self.widget_body(subject),
            }
        } else {
            self.tag("smp:metadata-only");
            let mut m = Map::new();
            m.insert("metadata".into(), Value::Object(self.meta_edit(subject)));
            m
        };
        for (k, v) in body {
            if k == "metadata" {
                let Value::Object(extra) = v else {
                    unreachable!()
                };
                let Value::Object(meta) = &mut doc["metadata"] else {
                    unreachable!()
                };
                meta.extend(extra);
            } else {
                doc.insert(k, v);
            }
        }
        let mut doc = Value::Object(doc);
        if self.r.chance(30) {
            self.repeat_current_values(subject, &mut doc);
        }
        doc
    }

    /// Values the subject has, repeated in the patch where it says nothing about them (every
    /// patch without a target repeats name and namespace; a patch generated from a resource
    /// repeats more). Written plain, against resources whose strings may be quoted.
    fn repeat_current_values(&mut self, subject: &Value, doc: &mut Value) {
        let mut repeated = false;
        if let Some(labels) = subject["metadata"]["labels"].as_object() {
            if let Some((k, v)) = labels.iter().nth(self.r.below(labels.len().max(1))) {
                repeated |= put_if_absent(doc, &["metadata", "labels", k], v.clone());
            }
        }
        let path: &[&str] = match kind(subject) {
            "Deployment" => &["spec", "replicas"],
            "Service" => &["spec", "type"],
            "Widget" => &["spec", "size"],
            _ => &[],
        };
        let mut current = subject;
        for p in path {
            current = &current[p];
        }
        if !path.is_empty() && !current.is_null() {
            repeated |= put_if_absent(doc, path, current.clone());
        }
        if let Some(data) = subject["data"].as_object() {
            if let Some((k, v)) = data.iter().nth(self.r.below(data.len().max(1))) {
                repeated |= put_if_absent(doc, &["data", k], v.clone());
            }
        }
        if repeated {
            self.tag("smp:repeats-current-value");
        }
    }

    /// Edits of labels and/or annotations.
    fn meta_edit(&mut self, subject: &Value) -> Map<String, Value> {
        let mut m = Map::new();
        let which = self.r.below(3);
        if which != 1 {
            let l = self.meta_map_edit(
                &subject["metadata"]["labels"],
                &["app", "tier", "env", "extra"],
                &["web", "fe", "be", "prod", "new"],
            );
            m.insert("labels".into(), l);
        }
        if which != 0 {
            let a = self.meta_map_edit(
                &subject["metadata"]["annotations"],
                &["team", "example.com/owner", "note", "example.com/added"],
                &["a", "b", "carol", "x"],
            );
            m.insert("annotations".into(), a);
        }
        m
    }

    /// `string_map_edit` for labels or annotations. With a target, a null here is written by
    /// kustomize as its text (`"null"`, `"~"`, `""`) and `labels: null` is ignored — the same
    /// with kustomize's options.
    fn meta_map_edit(&mut self, old: &Value, keys: &[&str], values: &[&str]) -> Value {
        if self.targeted {
            self.tag("smp:targeted-metadata-null");
        }
        self.map_edit(old, keys, values, true)
    }

    fn string_map_edit(&mut self, old: &Value, keys: &[&str], values: &[&str]) -> Value {
        self.map_edit(old, keys, values, true)
    }

    /// A patch of a map of strings: changed, added and (with `nulls`) removed keys; now and
    /// then the `$patch: replace` or `$patch: merge` directive, or null for the whole map.
    fn map_edit(&mut self, old: &Value, keys: &[&str], values: &[&str], nulls: bool) -> Value {
        // Multi-line values are written as `|` blocks; kustomize trims an inline patch's text,
        // so the last one in a patch loses its final line break, and with kustomize's options
        // krm-merge reads the text the same way.
        if nulls && self.r.chance(5) {
            self.tag("smp:map-null");
            return self.null();
        }
        let mut m = Map::new();
        match self.r.below(12) {
            0 => {
                self.tag("smp:$patch:replace-map");
                m.insert("$patch".into(), json!("replace"));
            }
            1 => {
                self.tag("smp:$patch:merge-map");
                m.insert("$patch".into(), json!("merge"));
            }
            _ => {}
        }
        let existing: Vec<String> = old
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        let k = self.r.range(1, 2);
        for _ in 0..k {
            if !existing.is_empty() && self.r.chance(60) {
                let key = existing[self.r.below(existing.len())].clone();
                if nulls && self.r.chance(35) {
                    self.tag("smp:null-delete-key");
                    let n = self.null();
                    m.insert(key, n);
                } else {
                    let v = self.map_value(values);
                    m.insert(key, v);
                }
            } else {
                let k = (*self.r.pick(keys)).to_owned();
                let v = self.map_value(values);
                m.insert(k, v);
            }
        }
        if m.keys().all(|k| k == "$patch") {
            m.insert("extra".into(), json!("x"));
        }
        Value::Object(m)
    }

    /// One of `values`, for a map of strings.
    fn map_value(&mut self, values: &[&str]) -> Value {
        let v = *self.r.pick(values);
        if v.contains('\n') {
            self.tag("smp:multi-line-value");
        }
        json!(v)
    }

    fn deployment_body(&mut self, subject: &Value) -> Map<String, Value> {
        let mut body = Map::new();
        let mut spec = Map::new();
        let mut pod = Map::new();
        let old_pod = &subject["spec"]["template"]["spec"];
        let edits = self.r.range(1, 3);
        for _ in 0..edits {
            match self.r.weighted(&[10, 12, 30, 10, 6, 5, 5, 5, 4, 5, 3]) {
                0 => {
                    self.tag("smp:scalar");
                    let v = if self.r.chance(15) {
                        self.tag("smp:null-delete-key");
                        self.null()
                    } else {
                        json!(self.r.range(0, 9))
                    };
                    spec.insert("replicas".into(), v);
                }
                1 => {
                    body.insert("metadata".into(), Value::Object(self.meta_edit(subject)));
                }
                2 => {
                    let c = self.containers_patch(&old_pod["containers"], "containers");
                    pod.insert("containers".into(), c);
                }
                3 => {
                    let v = self.volumes_patch(&old_pod["volumes"]);
                    pod.insert("volumes".into(), v);
                }
                4 => {
                    self.tag("smp:nodeSelector");
                    let v = match self.r.below(4) {
                        0 => {
                            self.tag("smp:$patch:delete-map");
                            json!({"$patch": "delete"})
                        }
                        1 => {
                            self.tag("smp:$patch:replace-map");
                            json!({"$patch": "replace", "zone": "a"})
                        }
                        2 => json!({"zone": "b"}),
                        _ => self.null(),
                    };
                    pod.insert("nodeSelector".into(), v);
                }
                5 => {
                    self.tag("smp:list-replaced(tolerations)");
                    let v = if self.r.chance(20) {
                        self.null()
                    } else {
                        json!([{"key": "spot", "operator": "Exists"}])
                    };
                    pod.insert("tolerations".into(), v);
                }
                6 => {
                    self.tag("smp:template-labels");
                    spec.insert(
                        "template".into(),
                        json!({"metadata": {"labels": {"tier": *self.r.pick(&["fe", "be"])}}}),
                    );
                }
                7 => {
                    self.tag("smp:keyed(imagePullSecrets)");
                    pod.insert(
                        "imagePullSecrets".into(),
                        json!([{"name": *self.r.pick(&["regcred", "other"])}]),
                    );
                }
                8 => {
                    let v = if self.r.chance(30) {
                        self.tag("smp:null-delete-key");
                        self.null()
                    } else {
                        self.containers_patch(&old_pod["initContainers"], "initContainers")
                    };
                    pod.insert("initContainers".into(), v);
                }
                9 => {
                    self.tag("smp:strategy");
                    let v = if self.r.chance(50) {
                        json!({"type": "Recreate"})
                    } else {
                        json!({"rollingUpdate": {"maxSurge": 2}})
                    };
                    spec.insert("strategy".into(), v);
                }
                _ => {
                    self.tag("smp:$patch:replace-map(pod spec)");
                    pod = Map::new();
                    pod.insert("$patch".into(), json!("replace"));
                    let c = self.container("app", &[]);
                    pod.insert("containers".into(), json!([c]));
                }
            }
        }
        if !pod.is_empty() {
            let t = spec
                .entry("template")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .unwrap();
            t.insert("spec".into(), Value::Object(pod));
        }
        if !spec.is_empty() {
            body.insert("spec".into(), Value::Object(spec));
        }
        body
    }

    fn existing_names(list: &Value, key: &str) -> Vec<Value> {
        list.as_array()
            .map(|a| a.iter().map(|e| e[key].clone()).collect())
            .unwrap_or_default()
    }

    /// A `$patch: replace` element opens a list patch; where the resource has no such list,
    /// kustomize keeps only the directive element.
    fn replace_list_tag(&mut self, old: &Value) {
        self.tag("smp:$patch:replace-list");
        if !old.is_array() {
            self.tag("smp:$patch:replace-missing-list");
        }
    }

    fn containers_patch(&mut self, old: &Value, field: &'static str) -> Value {
        let names: Vec<String> = Gen::existing_names(old, "name")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        let mut items = Vec::new();
        if self.r.chance(20) {
            self.replace_list_tag(old);
            items.push(json!({"$patch": "replace"}));
        }
        let k = self.r.range(1, 2);
        let mut used = BTreeSet::new();
        for _ in 0..k {
            let existing = !names.is_empty() && self.r.chance(75);
            let n = if existing {
                names[self.r.below(names.len())].clone()
            } else {
                (*self.r.pick(&["extra", "app", "sidecar", "init"])).to_owned()
            };
            if !used.insert(n.clone()) {
                continue;
            }
            let old_c = old
                .as_array()
                .and_then(|a| a.iter().find(|c| c["name"] == json!(n)))
                .cloned();
            items.push(self.container_patch(old_c.as_ref(), &n));
        }
        if field == "containers" {
            self.tag("smp:keyed(containers)");
        } else {
            self.tag("smp:keyed(initContainers)");
        }
        Value::Array(items)
    }

    fn container_patch(&mut self, old: Option<&Value>, name: &str) -> Value {
        let mut c = Map::new();
        c.insert("name".into(), json!(name));
        if old.is_some() && self.r.chance(10) {
            self.tag("smp:$patch:delete-element");
            c.insert("$patch".into(), json!("delete"));
            return Value::Object(c);
        }
        let empty = json!(null);
        let old = old.unwrap_or(&empty);
        if old.is_null() {
            c.insert("image".into(), json!(*self.r.pick(IMAGES)));
        }
        let edits = self.r.range(1, 2);
        for _ in 0..edits {
            match self.r.weighted(&[15, 30, 20, 10, 8, 8, 5, 4]) {
                0 => {
                    self.tag("smp:scalar");
                    c.insert("image".into(), json!(*self.r.pick(IMAGES)));
                }
                1 => {
                    let e = self.env_patch(&old["env"]);
                    c.insert("env".into(), e);
                }
                2 => {
                    let p = self.ports_patch(&old["ports"], "containerPort");
                    c.insert("ports".into(), p);
                }
                3 => {
                    self.tag("smp:list-replaced(args)");
                    let v = if self.r.chance(30) {
                        self.tag("smp:null-delete-key");
                        self.null()
                    } else if self.r.chance(10) {
                        json!([])
                    } else {
                        json!(["--c", "--a"])
                    };
                    c.insert("args".into(), v);
                }
                4 => {
                    self.tag("smp:keyed(volumeMounts)");
                    let mounts = Gen::existing_names(&old["volumeMounts"], "mountPath");
                    let v = if !mounts.is_empty() && self.r.chance(40) {
                        self.tag("smp:$patch:delete-element");
                        json!([{"mountPath": mounts[self.r.below(mounts.len())], "$patch": "delete"}])
                    } else {
                        let n = *self.r.pick(VOLUMES);
                        json!([{"name": n, "mountPath": format!("/{n}"), "readOnly": true}])
                    };
                    c.insert("volumeMounts".into(), v);
                }
                5 => {
                    let v = match self.r.below(3) {
                        0 => {
                            self.tag("smp:$patch:delete-map");
                            json!({"$patch": "delete"})
                        }
                        1 => json!({"limits": {"cpu": "200m"}}),
                        _ => {
                            self.tag("smp:null-delete-key");
                            json!({"limits": {"memory": self.null()}})
                        }
                    };
                    c.insert("resources".into(), v);
                }
                6 => {
                    self.tag("smp:list-replaced(command)");
                    c.insert("command".into(), json!(["/bin/run"]));
                }
                _ => {
                    self.tag("smp:null-delete-key");
                    let n = self.null();
                    c.insert("imagePullPolicy".into(), n);
                }
            }
        }
        Value::Object(c)
    }

    fn env_patch(&mut self, old: &Value) -> Value {
        self.tag("smp:keyed(env)");
        if self.r.chance(5) {
            self.tag("smp:empty-list-on-keyed");
            return json!([]);
        }
        if self.r.chance(5) {
            self.tag("smp:null-delete-key");
            return self.null();
        }
        let names: Vec<Value> = Gen::existing_names(old, "name");
        let mut items = Vec::new();
        if self.r.chance(20) {
            self.replace_list_tag(old);
            items.push(json!({"$patch": "replace"}));
        }
        let k = self.r.range(1, 3);
        let mut used = BTreeSet::new();
        for _ in 0..k {
            let n = if !names.is_empty() && self.r.chance(60) {
                names[self.r.below(names.len())].clone()
            } else {
                json!(*self.r.pick(ENV))
            };
            if !used.insert(n.to_string()) {
                continue;
            }
            let existing = names.contains(&n);
            let item = match self.r.below(10) {
                0 | 1 if existing => {
                    self.tag("smp:$patch:delete-element");
                    json!({"name": n, "$patch": "delete"})
                }
                2 => {
                    json!({"name": n, "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}})
                }
                _ => json!({"name": n, "value": self.r.range(10, 99).to_string()}),
            };
            items.push(item);
        }
        Value::Array(items)
    }

    fn ports_patch(&mut self, old: &Value, key: &'static str) -> Value {
        self.tag(if key == "port" {
            "smp:keyed(service ports)"
        } else {
            "smp:keyed(container ports)"
        });
        let mut items = Vec::new();
        let mut used = BTreeSet::new();
        let existing: Vec<Value> = old.as_array().cloned().unwrap_or_default();
        let mut changed_existing = Vec::new();
        // New ports are new: not the key of an existing one.
        let mut taken: BTreeSet<(u64, bool)> = existing
            .iter()
            .map(|p| (p[key].as_u64().unwrap(), p["protocol"] == json!("UDP")))
            .collect();
        let k = self.r.range(1, 2);
        for _ in 0..k {
            if !existing.is_empty() && self.r.chance(60) {
                let delete = self.r.chance(25);
                let mut p = existing[self.r.below(existing.len())].clone();
                let number = p[key].as_u64().unwrap();
                let udp = p["protocol"] == json!("UDP");
                if !used.insert((number, udp)) {
                    continue;
                }
                let o = p.as_object_mut().unwrap();
                o.retain(|k2, _| k2 == key || k2 == "protocol");
                if delete {
                    self.tag("smp:$patch:delete-element");
                    o.insert("$patch".into(), json!("delete"));
                } else if key == "port" {
                    o.insert("targetPort".into(), json!(9999));
                } else {
                    o.insert("name".into(), json!("renamed"));
                }
                if o.contains_key("protocol") {
                    self.tag("smp:port-with-protocol");
                } else {
                    self.tag("smp:port-without-protocol");
                }
                if !delete {
                    changed_existing.push(items.len());
                }
                items.push(p);
            } else if let Some(p) = self.port(key, &mut taken) {
                used.insert((p[key].as_u64().unwrap(), p["protocol"] == json!("UDP")));
                items.push(p);
            }
        }
        // Where the list's elements have a protocol, kyaml pairs on both keys and, prepending,
        // leaves the existing elements a patch changes in place.
        let protocol = |v: &Value| v.get("protocol").is_some();
        if !changed_existing.is_empty()
            && (existing.iter().any(protocol) || items.iter().any(protocol))
        {
            self.tag("smp:two-key-list-existing-element");
        }
        // Ports with and without a protocol: kyaml pairs them on the keys that have values.
        let both = existing.iter().chain(&items);
        if both.clone().any(protocol) && both.clone().any(|p| !protocol(p)) {
            self.tag("smp:ports-mixing-protocol");
        }
        Value::Array(items)
    }

    fn volumes_patch(&mut self, old: &Value) -> Value {
        self.tag("smp:keyed(volumes)");
        let names: Vec<Value> = Gen::existing_names(old, "name");
        let mut items = Vec::new();
        let k = self.r.range(1, 2);
        let mut used = BTreeSet::new();
        for _ in 0..k {
            let n = if !names.is_empty() && self.r.chance(60) {
                names[self.r.below(names.len())].clone()
            } else {
                json!(*self.r.pick(VOLUMES))
            };
            if !used.insert(n.to_string()) {
                continue;
            }
            let existing = names.contains(&n);
            let item = if existing && self.r.chance(30) {
                self.tag("smp:$patch:delete-element");
                json!({"name": n, "$patch": "delete"})
            } else {
                let mut v = self.volume(n.as_str().unwrap());
                if existing {
                    self.tag("smp:volume-source-change");
                }
                if self.r.chance(10) {
                    v["configMap"] = json!({"name": "patched-cm", "optional": true});
                }
                v
            };
            items.push(item);
        }
        Value::Array(items)
    }

    fn service_body(&mut self, subject: &Value) -> Map<String, Value> {
        let mut body = Map::new();
        let mut spec = Map::new();
        for _ in 0..self.r.range(1, 2) {
            match self.r.weighted(&[40, 15, 15, 15, 15]) {
                0 => {
                    let p = self.ports_patch(&subject["spec"]["ports"], "port");
                    spec.insert("ports".into(), p);
                }
                1 => {
                    let v = self.string_map_edit(
                        &subject["spec"]["selector"],
                        &["app", "tier"],
                        &["web", "api", "fe"],
                    );
                    spec.insert("selector".into(), v);
                }
                2 => {
                    self.tag("smp:scalar");
                    spec.insert(
                        "type".into(),
                        json!(*self.r.pick(&["NodePort", "ClusterIP"])),
                    );
                }
                3 => {
                    self.tag("smp:scalar");
                    spec.insert("sessionAffinity".into(), json!("ClientIP"));
                }
                _ => {
                    body.insert("metadata".into(), Value::Object(self.meta_edit(subject)));
                }
            }
        }
        if !spec.is_empty() {
            body.insert("spec".into(), Value::Object(spec));
        }
        body
    }

    fn configmap_body(&mut self, subject: &Value) -> Map<String, Value> {
        let mut body = Map::new();
        if self.r.chance(75) {
            self.tag("smp:configmap-data");
            let mut v = self.string_map_edit(&subject["data"], DATA_KEYS, DATA_VALUES);
            // A `|` block last in the patch, where kustomize's trimming of the text shows.
            if let Some(m) = v.as_object_mut().filter(|_| self.r.chance(30)) {
                self.tag("smp:multi-line-value-last");
                let k = *self.r.pick(DATA_KEYS);
                m.remove(k);
                m.insert(k.to_owned(), json!(*self.r.pick(&["a\nb\n", "x=1\ny=2\n"])));
            }
            body.insert("data".into(), v);
        }
        if body.is_empty() || self.r.chance(30) {
            body.insert("metadata".into(), Value::Object(self.meta_edit(subject)));
        }
        body
    }

    fn clusterrole_body(&mut self, subject: &Value) -> Map<String, Value> {
        let mut body = Map::new();
        if self.r.chance(70) {
            self.tag("smp:list-replaced(rules)");
            let k = self.r.range(1, 2);
            let rules: Vec<Value> = (0..k).map(|_| self.rule()).collect();
            body.insert("rules".into(), Value::Array(rules));
        }
        if body.is_empty() || self.r.chance(30) {
            body.insert("metadata".into(), Value::Object(self.meta_edit(subject)));
        }
        body
    }

    fn widget_body(&mut self, subject: &Value) -> Map<String, Value> {
        let mut body = Map::new();
        let mut spec = Map::new();
        for _ in 0..self.r.range(1, 2) {
            match self.r.weighted(&[35, 10, 15, 15, 10, 5, 5, 5]) {
                0 => {
                    self.tag("smp:list-without-schema(items)");
                    let v = if self.r.chance(10) {
                        self.tag("smp:null-delete-key");
                        self.null()
                    } else if self.r.chance(8) {
                        json!([])
                    } else {
                        Value::Array(self.widget_items())
                    };
                    spec.insert("items".into(), v);
                }
                1 => {
                    self.tag("smp:list-without-schema(tags)");
                    let k = self.r.range(1, 2);
                    spec.insert("tags".into(), json!(self.r.choose(TAGS, k)));
                }
                2 => {
                    self.tag("smp:nested-map");
                    let v = self.string_map_edit(
                        &subject["spec"]["config"],
                        &["mode", "a~b", "example.com/k", "level"],
                        &["fast", "slow", "2"],
                    );
                    spec.insert("config".into(), v);
                }
                3 => {
                    self.tag("smp:scalar");
                    spec.insert("size".into(), json!(self.r.range(1, 20)));
                }
                4 => {
                    body.insert("metadata".into(), Value::Object(self.meta_edit(subject)));
                }
                5 => {
                    self.tag("smp:$patch:replace-map(spec)");
                    spec.insert("$patch".into(), json!("replace"));
                    spec.insert("size".into(), json!(1));
                }
                6 => {
                    self.tag("smp:directive-in-unkeyed-list");
                    let v = json!([{"name": "a", "$patch": "delete"}, {"name": "z"}]);
                    spec.insert("items".into(), v);
                }
                _ => {
                    // A value of another kind than the resource's: an error in kustomize.
                    let (field, v) = match self.r.below(3) {
                        0 => ("size", json!({"min": 1, "max": 3})),
                        1 => ("tags", json!({"x": true})),
                        _ => ("config", json!(["mode"])),
                    };
                    self.tag("smp:kind-change");
                    spec.insert(field.into(), v);
                }
            }
        }
        if !spec.is_empty() {
            body.insert("spec".into(), Value::Object(spec));
        }
        body
    }

    // ---------------------------------------------------------------- targets

    fn target(&mut self, subject: &Value, pkg: &[Value]) -> Value {
        match self.r.weighted(&[6, 56, 28, 10]) {
            0 => {
                self.tag("target:{}");
                json!({})
            }
            1 => self.aimed_target(subject),
            2 => self.random_target(),
            _ => {
                let other = pkg[self.r.below(pkg.len())].clone();
                self.aimed_target(&other)
            }
        }
    }

    /// A target naming one resource: kind, name and namespace.
    fn exact_target(&mut self, s: &Value) -> Value {
        self.tag("target:exact");
        let mut t = Map::new();
        t.insert("kind".into(), json!(kind(s)));
        t.insert("name".into(), json!(name(s)));
        if let Some(ns) = effective_ns(s) {
            t.insert("namespace".into(), json!(ns));
        }
        Value::Object(t)
    }

    fn aimed_target(&mut self, s: &Value) -> Value {
        let mut t = Map::new();
        let n = self.r.range(1, 3);
        let fields = self.r.choose(
            &[
                "kind",
                "kind",
                "kind",
                "name",
                "name",
                "namespace",
                "group",
                "version",
                "labelSelector",
                "annotationSelector",
            ],
            n + 1,
        );
        for f in fields {
            if t.contains_key(f) {
                continue;
            }
            let v = match f {
                "kind" => {
                    let k = kind(s);
                    match self.r.weighted(&[60, 15, 15, 10]) {
                        0 => {
                            self.tag("target:kind");
                            k.to_owned()
                        }
                        1 => {
                            self.tag("target:kind-regex-prefix");
                            format!("{}.*", &k[..4])
                        }
                        2 => {
                            self.tag("target:kind-alternation");
                            format!("{k}|Service")
                        }
                        _ => {
                            self.tag("target:kind-.*");
                            ".*".to_owned()
                        }
                    }
                }
                "name" => {
                    let n = name(s);
                    match self.r.weighted(&[47, 20, 15, 8, 10]) {
                        0 => {
                            self.tag("target:name");
                            n.to_owned()
                        }
                        1 => {
                            self.tag("target:name-alternation");
                            format!("{n}|api")
                        }
                        2 => {
                            self.tag("target:name-regex-prefix");
                            format!("{}.*", &n[..1])
                        }
                        3 => {
                            self.tag("target:name-.*");
                            ".*".to_owned()
                        }
                        _ => {
                            self.tag("target:name-unanchored-part");
                            n[1..].to_owned()
                        }
                    }
                }
                "namespace" => match effective_ns(s) {
                    None => {
                        if self.r.chance(50) {
                            self.tag("target:namespace-.*-cluster-scoped");
                            ".*".to_owned()
                        } else {
                            self.tag("target:namespace-default-cluster-scoped");
                            "default".to_owned()
                        }
                    }
                    Some(ns) => match self.r.weighted(&[55, 20, 15, 10]) {
                        0 => {
                            if namespace(s).is_none() {
                                self.tag("target:namespace-default-for-none");
                            } else {
                                self.tag("target:namespace");
                            }
                            ns
                        }
                        1 => {
                            self.tag("target:namespace-alternation");
                            "prod|staging".to_owned()
                        }
                        2 => {
                            self.tag("target:namespace-.*");
                            ".*".to_owned()
                        }
                        _ => {
                            self.tag("target:namespace");
                            "default".to_owned()
                        }
                    },
                },
                "group" => {
                    let g = group(s);
                    if g.is_empty() {
                        continue;
                    }
                    match self.r.weighted(&[60, 25, 15]) {
                        0 => {
                            self.tag("target:group");
                            g.to_owned()
                        }
                        1 => {
                            self.tag("target:group-alternation");
                            format!("{g}|example.com")
                        }
                        _ => {
                            self.tag("target:group-.*");
                            ".*".to_owned()
                        }
                    }
                }
                "version" => {
                    let v = version(s);
                    match self.r.weighted(&[60, 20, 20]) {
                        0 => {
                            self.tag("target:version");
                            v.to_owned()
                        }
                        1 => {
                            self.tag("target:version-regex");
                            "v.*".to_owned()
                        }
                        _ => {
                            self.tag("target:version-alternation");
                            format!("{v}|v2")
                        }
                    }
                }
                "labelSelector" => {
                    self.tag("target:labelSelector");
                    self.selector(&s["metadata"]["labels"], "label")
                }
                _ => {
                    self.tag("target:annotationSelector");
                    self.selector(&s["metadata"]["annotations"], "annotation")
                }
            };
            t.insert(f.into(), json!(v));
        }
        if t.is_empty() {
            t.insert("kind".into(), json!(kind(s)));
        }
        Value::Object(t)
    }

    /// A selector written from a resource's labels or annotations (so it often selects it).
    fn selector(&mut self, labels: &Value, what: &str) -> String {
        let pairs: Vec<(String, String)> = labels
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(_, v)| !v.as_str().unwrap_or(" ").contains(' '))
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let n = self.r.range(1, 2);
        let mut terms = Vec::new();
        for _ in 0..n {
            let (k, v) = if pairs.is_empty() || self.r.chance(15) {
                let k = if what == "label" { "tier" } else { "team" };
                (k.to_owned(), "fe".to_owned())
            } else {
                pairs[self.r.below(pairs.len())].clone()
            };
            let term = match self.r.below(8) {
                0 => {
                    self.tag("selector:=");
                    format!("{k}={v}")
                }
                1 => {
                    self.tag("selector:==");
                    format!("{k}=={v}")
                }
                2 => {
                    self.tag("selector:!=");
                    format!("{k}!=other")
                }
                3 => {
                    self.tag("selector:in");
                    format!("{k} in ({v},other)")
                }
                4 => {
                    self.tag("selector:notin");
                    format!("{k} notin (other)")
                }
                5 => {
                    self.tag("selector:exists");
                    k
                }
                6 => {
                    self.tag("selector:!key");
                    "!missing".to_owned()
                }
                _ => {
                    self.tag("selector:!key-present");
                    format!("!{k}")
                }
            };
            terms.push(term);
        }
        terms.join(",")
    }

    fn random_target(&mut self) -> Value {
        self.tag("target:random");
        let mut t = Map::new();
        let n = self.r.range(1, 2);
        for _ in 0..n {
            let (f, pool): (&str, &[&str]) = match self.r.below(7) {
                0 => (
                    "group",
                    &[
                        "apps",
                        "example.com",
                        "rbac.authorization.k8s.io",
                        ".*",
                        "apps|example.com",
                        "extensions",
                    ],
                ),
                1 => ("version", &["v1", "v1beta1", "v.*"]),
                2 => (
                    "kind",
                    &[
                        "Deployment",
                        "Service",
                        "ConfigMap",
                        "ClusterRole",
                        "Widget",
                        "Deploy.*",
                        "Service|ConfigMap",
                        ".*",
                        "Gadget",
                        "deployment",
                    ],
                ),
                3 => (
                    "name",
                    &[
                        "web", "api", "db", "web|api", "w.*", ".*", "eb", "web-.*", "cache|db",
                    ],
                ),
                4 => (
                    "namespace",
                    &["prod", "staging", "default", "prod|staging", ".*", "dev"],
                ),
                5 => (
                    "labelSelector",
                    &[
                        "app=web",
                        "app!=web",
                        "tier in (fe,be)",
                        "tier notin (fe)",
                        "!tier",
                        "tier",
                        "env=prod,tier!=cache",
                        "app in (web,api),!env",
                    ],
                ),
                _ => (
                    "annotationSelector",
                    &[
                        "team=a",
                        "team",
                        "!team",
                        "team!=b",
                        "example.com/owner=alice",
                        "team in (a,b)",
                    ],
                ),
            };
            t.insert(f.into(), json!(*self.r.pick(pool)));
        }
        Value::Object(t)
    }

    // ---------------------------------------------------------------- JSON 6902

    fn json_ops(&mut self, subject: &Value) -> Vec<Value> {
        let mut doc = subject.clone();
        let n = self.r.range(1, 4);
        let mut ops = Vec::new();
        for _ in 0..n {
            let op = self.json_op(&doc);
            // Follow the document, so the next operation sees what this one leaves.
            if let Ok(p) = serde_json::from_value::<json_patch::Patch>(json!([op.clone()])) {
                let _ = json_patch::patch(&mut doc, &p);
            }
            ops.push(op);
        }
        if ops
            .last()
            .and_then(|op| op.get("value"))
            .is_some_and(has_multi_line)
        {
            // kustomize trims the patch text, so a last `|` block loses its final line break;
            // krm-merge does too under kustomize's options.
            self.tag("json:multi-line-last");
        }
        ops
    }

    fn json_op(&mut self, doc: &Value) -> Value {
        let mut nodes = Vec::new();
        collect(doc, String::new(), &mut nodes);
        let all = self.all;
        let nodes: Vec<(String, Value)> = nodes
            .into_iter()
            .filter(|(p, _)| {
                !matches!(
                    p.as_str(),
                    "/apiVersion"
                        | "/kind"
                        | "/metadata"
                        | "/metadata/name"
                        | "/metadata/namespace"
                ) && (all || p != "/metadata/annotations")
            })
            .collect();
        let maps: Vec<&(String, Value)> = nodes.iter().filter(|(_, v)| v.is_object()).collect();
        let lists: Vec<&(String, Value)> = nodes
            .iter()
            .filter(|(_, v)| v.as_array().is_some_and(|a| !a.is_empty()))
            .collect();
        if nodes.is_empty() {
            self.tag("json:add");
            return json!({"op": "add", "path": "/metadata/labels", "value": {"added": "yes"}});
        }
        let pick_node = |g: &mut Gen| nodes[g.r.below(nodes.len())].clone();
        // Not the merge key of a list element: kyaml drops elements that lack their key when it
        // walks the list again (invalid input), and a port without its protocol is a documented
        // difference.
        let keyless: Vec<&(String, Value)> = nodes
            .iter()
            .filter(|(p, _)| {
                let last = p.rsplit('/').next().unwrap_or("");
                let in_list = p
                    .rsplit('/')
                    .nth(1)
                    .is_some_and(|s| s.chars().all(|c| c.is_ascii_digit()));
                !(in_list
                    && [
                        "name",
                        "mountPath",
                        "containerPort",
                        "port",
                        "protocol",
                        "ip",
                    ]
                    .contains(&last))
            })
            .collect();
        let pick_node_keep_keys = |g: &mut Gen| {
            if keyless.is_empty() {
                nodes[g.r.below(nodes.len())].clone()
            } else {
                keyless[g.r.below(keyless.len())].clone()
            }
        };
        match self.r.weighted(&[18, 26, 14, 9, 9, 14, 5, 5]) {
            0 => {
                let (p, v) = pick_node(self);
                if !v.is_object() && !v.is_array() && !v.is_null() && self.r.chance(25) {
                    // The value it has, written plain where the resource may quote it.
                    self.tag("json:replace-same-value");
                    return json!({"op": "replace", "path": p, "value": v});
                }
                if self.r.chance(20) {
                    return self.annotation_op(doc);
                }
                self.tag("json:replace");
                let nv = self.mutate(&v);
                json!({"op": "replace", "path": p, "value": nv})
            }
            1 => {
                // An element like the list's others, with keys of its own.
                let value_for_list = |g: &mut Gen, l: &Value| -> Value {
                    let a = l.as_array().unwrap();
                    let e = a[g.r.below(a.len())].clone();
                    g.fresh(&e)
                };
                if !lists.is_empty() && self.r.chance(50) {
                    let (p, l) = lists[self.r.below(lists.len())].clone();
                    let len = l.as_array().unwrap().len();
                    let v = value_for_list(self, &l);
                    if self.r.chance(50) {
                        self.tag("json:add-append-");
                        json!({"op": "add", "path": format!("{p}/-"), "value": v})
                    } else {
                        self.tag("json:add-at-index");
                        let i = self.r.range(0, len);
                        json!({"op": "add", "path": format!("{p}/{i}"), "value": v})
                    }
                } else if !maps.is_empty() && self.r.chance(90) {
                    let (p, m) = maps[self.r.below(maps.len())].clone();
                    let m = m.as_object().unwrap();
                    if !m.is_empty() && self.r.chance(20) {
                        self.tag("json:add-existing-key");
                        let k = m.keys().nth(self.r.below(m.len())).unwrap().clone();
                        let v = self.mutate(&m[&k]);
                        json!({"op": "add", "path": format!("{p}/{}", escape(&k)), "value": v})
                    } else {
                        let k = *self.r.pick(&["added", "example.com/added", "x~y", "zone"]);
                        if k.contains('/') {
                            self.tag("json:~1-escape");
                        }
                        if k.contains('~') {
                            self.tag("json:~0-escape");
                        }
                        self.tag("json:add-new-key");
                        let v = if self.r.chance(20) {
                            json!({"nested": ["v"]})
                        } else if self.r.chance(10) {
                            // A `|` block; the last one in a patch shows kustomize's trimming.
                            self.tag("json:multi-line-value");
                            json!("line 1\nline 2\n")
                        } else if self.r.chance(25) {
                            // kustomize reads JSON patches written in YAML as YAML 1.1 (and
                            // writes numbers as its JSON round trips leave them); so does
                            // krm-merge with kustomize's options.
                            self.tag("json:yaml-1.1-plain-value");
                            json!(format!(
                                "{}{}",
                                super::emit::PLAIN_MARK,
                                self.r.pick(YAML11_VALUES)
                            ))
                        } else {
                            json!("v1")
                        };
                        json!({"op": "add", "path": format!("{p}/{}", escape(k)), "value": v})
                    }
                } else if self.all && self.r.chance(50) {
                    self.tag("json:add-annotation-escaped");
                    json!({"op": "add", "path": "/metadata/annotations/example.com~1added", "value": "yes"})
                } else {
                    self.tag("json:add-missing-parent");
                    json!({"op": "add", "path": "/spec/nothere/x", "value": 1})
                }
            }
            2 => {
                if self.r.chance(85) {
                    self.tag("json:remove");
                    let (p, _) = pick_node_keep_keys(self);
                    json!({"op": "remove", "path": p})
                } else {
                    self.tag("json:remove-missing");
                    let (p, _) = pick_node(self);
                    json!({"op": "remove", "path": format!("{p}/nope")})
                }
            }
            3 | 4 => {
                let op = if self.r.chance(50) { "move" } else { "copy" };
                self.tag(if op == "move" {
                    "json:move"
                } else {
                    "json:copy"
                });
                let (from, v) = if op == "move" {
                    pick_node_keep_keys(self)
                } else {
                    pick_node(self)
                };
                // Into a list of scalars only a scalar: no keyed list gets a key twice, and no
                // list of objects gets a scalar (kustomize's name-reference pass, which runs
                // after the patches, fails on one in a list it reads, such as `volumes`).
                let scalar_lists: Vec<&&(String, Value)> = lists
                    .iter()
                    .filter(|(_, l)| {
                        l.as_array()
                            .unwrap()
                            .iter()
                            .all(|e| !e.is_object() && !e.is_array())
                    })
                    .collect();
                let path = if !scalar_lists.is_empty()
                    && !v.is_object()
                    && !v.is_array()
                    && self.r.chance(30)
                {
                    let (p, l) = (*scalar_lists[self.r.below(scalar_lists.len())]).clone();
                    let len = l.as_array().unwrap().len();
                    if self.r.chance(50) {
                        format!("{p}/-")
                    } else {
                        format!("{p}/{}", self.r.range(0, len))
                    }
                } else if !maps.is_empty() {
                    let (p, _) = maps[self.r.below(maps.len())].clone();
                    format!("{p}/moved")
                } else {
                    "/metadata/moved".to_owned()
                };
                // kustomize's JSON patch library moves a value into one of its own children
                // (RFC 6902 forbids it); with kustomize's options krm-merge does too.
                if op == "move" && path.starts_with(&format!("{from}/")) {
                    self.tag("json:move-into-child");
                }
                json!({"op": op, "from": from, "path": path})
            }
            5 => {
                let (p, v) = pick_node(self);
                if self.r.chance(80) {
                    self.tag("json:test-pass");
                    json!({"op": "test", "path": p, "value": v})
                } else {
                    self.tag("json:test-fail");
                    let nv = self.mutate(&v);
                    json!({"op": "test", "path": p, "value": nv})
                }
            }
            6 => {
                self.tag("json:replace-missing-member");
                let (p, _) = if maps.is_empty() {
                    ("/metadata".to_owned(), json!({}))
                } else {
                    maps[self.r.below(maps.len())].clone()
                };
                json!({"op": "replace", "path": format!("{p}/absent"), "value": "set"})
            }
            _ => {
                self.tag("json:index-path");
                // An element of a list by index, or one past the end.
                if lists.is_empty() {
                    json!({"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "img:2"})
                } else {
                    let (p, l) = lists[self.r.below(lists.len())].clone();
                    let len = l.as_array().unwrap().len();
                    let i = self.r.range(0, len);
                    json!({"op": "remove", "path": format!("{p}/{i}")})
                }
            }
        }
    }

    /// An operation under `metadata.annotations`, which the resource may lack: kustomize's
    /// build annotations fill that mapping while its JSON patches run, so `add` and `replace`
    /// under it succeed there, and krm-merge with kustomize's options does the same. Now and then a `replace` under a missing parent elsewhere, which fails in both.
    fn annotation_op(&mut self, doc: &Value) -> Value {
        let has = doc["metadata"]["annotations"].is_object();
        let key = *self.r.pick(&["description", "example.com~1owner", "team"]);
        let value = json!(*self.r.pick(&["the front end", "ops", "b"]));
        if self.r.chance(10) {
            self.tag("json:replace-missing-parent-elsewhere");
            return json!({"op": "replace", "path": "/spec/nothere/x", "value": value});
        }
        let op = *self.r.pick(&["replace", "add", "test"]);
        match (op, has) {
            ("replace", false) => self.tag("json:replace-missing-parent"),
            ("add", false) => self.tag("json:add-missing-annotations"),
            ("test", _) => self.tag("json:test-under-annotations"),
            _ => self.tag("json:under-annotations"),
        }
        let value = if op == "test" && !has {
            Value::Null
        } else {
            value
        };
        json!({"op": op, "path": format!("/metadata/annotations/{key}"), "value": value})
    }

    /// A new list element like `v`, whose key fields (`name`, ports, `mountPath`) take values
    /// no other element has: kyaml merges elements with equal keys into one (invalid input).
    fn fresh(&mut self, v: &Value) -> Value {
        self.fresh += 1;
        let n = self.fresh;
        match v {
            Value::Object(m) => {
                let mut m = m.clone();
                for (k, x) in m.iter_mut() {
                    match (k.as_str(), &*x) {
                        ("name" | "mountPath" | "ip", Value::String(s)) => {
                            *x = json!(format!("{s}-n{n}"))
                        }
                        ("containerPort" | "port", Value::Number(p)) => {
                            *x = json!(p.as_u64().unwrap_or(0) + 100 + n as u64)
                        }
                        _ => {}
                    }
                }
                m.insert("added".into(), json!("yes"));
                Value::Object(m)
            }
            Value::String(s) => json!(format!("{s}-n{n}")),
            other => self.mutate(other),
        }
    }

    /// A value like `v` but different.
    fn mutate(&mut self, v: &Value) -> Value {
        match v {
            Value::String(s) => json!(format!("{s}-x")),
            Value::Number(n) => json!(n.as_u64().unwrap_or(0) + 1),
            Value::Bool(b) => json!(!b),
            Value::Null => json!("was-null"),
            Value::Array(a) => {
                if self.r.chance(30) {
                    json!([])
                } else {
                    let mut a = a.clone();
                    if let Some(first) = a.first().cloned() {
                        a.push(self.fresh(&first));
                    } else {
                        a.push(json!("x"));
                    }
                    Value::Array(a)
                }
            }
            Value::Object(m) => {
                let mut m = m.clone();
                m.insert("added".into(), json!("yes"));
                Value::Object(m)
            }
        }
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
