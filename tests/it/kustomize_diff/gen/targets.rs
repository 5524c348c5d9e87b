//! The case generator's targets (exact, aimed at what a resource has, random) and JSON 6902
//! operations, built against the state the earlier operations leave.

use serde_json::{json, Map, Value};

use super::*;

impl Gen {
    // ---------------------------------------------------------------- targets

    pub(super) fn target(&mut self, subject: &Value, pkg: &[Value]) -> Value {
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
    pub(super) fn exact_target(&mut self, s: &Value) -> Value {
        self.tag("target:exact");
        let mut t = Map::new();
        t.insert("kind".into(), json!(kind(s)));
        t.insert("name".into(), json!(name(s)));
        if let Some(ns) = effective_ns(s) {
            t.insert("namespace".into(), json!(ns));
        }
        Value::Object(t)
    }

    pub(super) fn aimed_target(&mut self, s: &Value) -> Value {
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
    pub(super) fn selector(&mut self, labels: &Value, what: &str) -> String {
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

    pub(super) fn random_target(&mut self) -> Value {
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

    pub(super) fn json_ops(&mut self, subject: &Value) -> Vec<Value> {
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

    pub(super) fn json_op(&mut self, doc: &Value) -> Value {
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
                                super::super::emit::PLAIN_MARK,
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
    pub(super) fn annotation_op(&mut self, doc: &Value) -> Value {
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
    pub(super) fn fresh(&mut self, v: &Value) -> Value {
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
    pub(super) fn mutate(&mut self, v: &Value) -> Value {
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
