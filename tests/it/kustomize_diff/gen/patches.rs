//! The case generator's patches: strategic merges (with or without a target, each kind's
//! body) built against the resource they are written for.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::*;

impl Gen {
    // ---------------------------------------------------------------- patches

    pub(super) fn patch(&mut self, pkg: &[Value]) -> Patch {
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

    pub(super) fn smp_type(&mut self) -> Option<&'static str> {
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
    pub(super) fn smp_doc(&mut self, subject: &Value, kind_body: bool, targeted: bool) -> Value {
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
    pub(super) fn repeat_current_values(&mut self, subject: &Value, doc: &mut Value) {
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
    pub(super) fn meta_edit(&mut self, subject: &Value) -> Map<String, Value> {
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
    pub(super) fn meta_map_edit(&mut self, old: &Value, keys: &[&str], values: &[&str]) -> Value {
        if self.targeted {
            self.tag("smp:targeted-metadata-null");
        }
        self.map_edit(old, keys, values, true)
    }

    pub(super) fn string_map_edit(&mut self, old: &Value, keys: &[&str], values: &[&str]) -> Value {
        self.map_edit(old, keys, values, true)
    }

    /// A patch of a map of strings: changed, added and (with `nulls`) removed keys; now and
    /// then the `$patch: replace` or `$patch: merge` directive, or null for the whole map.
    pub(super) fn map_edit(
        &mut self,
        old: &Value,
        keys: &[&str],
        values: &[&str],
        nulls: bool,
    ) -> Value {
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
    pub(super) fn map_value(&mut self, values: &[&str]) -> Value {
        let v = *self.r.pick(values);
        if v.contains('\n') {
            self.tag("smp:multi-line-value");
        }
        json!(v)
    }

    pub(super) fn deployment_body(&mut self, subject: &Value) -> Map<String, Value> {
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

    pub(super) fn existing_names(list: &Value, key: &str) -> Vec<Value> {
        list.as_array()
            .map(|a| a.iter().map(|e| e[key].clone()).collect())
            .unwrap_or_default()
    }

    /// A `$patch: replace` element opens a list patch; where the resource has no such list,
    /// kustomize keeps only the directive element.
    pub(super) fn replace_list_tag(&mut self, old: &Value) {
        self.tag("smp:$patch:replace-list");
        if !old.is_array() {
            self.tag("smp:$patch:replace-missing-list");
        }
    }

    pub(super) fn containers_patch(&mut self, old: &Value, field: &'static str) -> Value {
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

    pub(super) fn container_patch(&mut self, old: Option<&Value>, name: &str) -> Value {
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

    pub(super) fn env_patch(&mut self, old: &Value) -> Value {
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

    pub(super) fn ports_patch(&mut self, old: &Value, key: &'static str) -> Value {
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

    pub(super) fn volumes_patch(&mut self, old: &Value) -> Value {
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

    pub(super) fn service_body(&mut self, subject: &Value) -> Map<String, Value> {
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

    pub(super) fn configmap_body(&mut self, subject: &Value) -> Map<String, Value> {
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

    pub(super) fn clusterrole_body(&mut self, subject: &Value) -> Map<String, Value> {
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

    pub(super) fn widget_body(&mut self, subject: &Value) -> Map<String, Value> {
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
}
