//! A generator of realistic Kubernetes packages for benchmarks and round-trip tests:
//! Deployments (two containers, env, ports, probes, resources), Services and ConfigMaps, with
//! comments, quoted and flow-style values and block scalars, as people write them.
//! Deterministic: the same `n` gives the same bytes.
#![allow(dead_code)]

use std::fmt::Write;

/// Resource `i` of a package, as one YAML document (no `---`).
pub fn resource(i: usize) -> String {
    let mut s = String::with_capacity(2600);
    let team = i % 17;
    match i % 4 {
        0 | 1 => {
            let _ = write!(
                s,
                "# Deployment {i}: generated\n\
                 apiVersion: apps/v1\n\
                 kind: Deployment\n\
                 metadata:\n  name: app-{i}   # the name\n  namespace: team-{team}\n  labels:\n    app.kubernetes.io/name: app-{i}\n    app.kubernetes.io/part-of: \"system-{team}\"\n    tier: backend\n  annotations:\n    description: |\n      Multi-line description for app {i}.\n      It has two lines.\n\
                 spec:\n  replicas: {replicas}\n  revisionHistoryLimit: 10\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: app-{i}\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: {{maxSurge: 25%, maxUnavailable: 0}}\n  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: app-{i}\n        tier: backend\n    spec:\n      serviceAccountName: sa-{team}\n      containers:\n",
                replicas = 1 + i % 3
            );
            for c in 0..2 {
                let _ = write!(
                    s,
                    "      # container {c}\n      - name: c{c}\n        image: \"registry.example.com/team/app-{i}:1.{c}.0\"\n        imagePullPolicy: IfNotPresent\n        args: [\"--port\", \"{port}\", \"--verbose\"]\n        ports:\n        - containerPort: {port}\n          name: http-{c}\n          protocol: TCP\n        env:\n",
                    port = 8080 + c
                );
                for e in 0..4 {
                    let _ = writeln!(s, "        - name: ENV_VAR_{e}\n          value: \"value-{i}-{e}\"   # env {e}");
                }
                s.push_str(
                    "        - name: POD_NAME\n          valueFrom:\n            fieldRef: {fieldPath: metadata.name}\n        resources:\n          limits: {cpu: 500m, memory: 256Mi}\n          requests:\n            cpu: 100m\n            memory: 128Mi\n        readinessProbe:\n          httpGet: {path: /healthz, port: 8080}\n          initialDelaySeconds: 5\n",
                );
            }
        }
        2 => {
            let _ = write!(
                s,
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\n  namespace: team-{team}\n  labels:\n    app.kubernetes.io/name: app-{i}\nspec:\n  type: ClusterIP\n  selector:\n    app.kubernetes.io/name: app-{i}\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n    protocol: TCP\n  - name: dns\n    port: 53\n    protocol: UDP\n"
            );
        }
        _ => {
            let _ = write!(
                s,
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-{i}\n  namespace: team-{team}\ndata:\n  # settings\n  LOG_LEVEL: info\n  FEATURE_X: \"on\"\n  RETRIES: \"3\"\n  config.json: |\n    {{\"name\": \"app-{i}\", \"replicas\": 3}}\n"
            );
        }
    }
    s
}

/// `n` resources as a multi-document stream.
pub fn stream(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str("---\n");
        }
        s.push_str(&resource(i));
    }
    s
}

/// `n` resources in a ResourceList, laid out as kpt writes one (`- ` items, 2-space indent),
/// with `config` as its functionConfig (YAML text, indented here).
pub fn resource_list(n: usize, config: &str) -> String {
    let mut s = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    for i in 0..n {
        for (k, line) in resource(i).lines().enumerate() {
            if line.is_empty() {
                s.push('\n');
                continue;
            }
            s.push_str(if k == 0 { "- " } else { "  " });
            s.push_str(line);
            s.push('\n');
        }
    }
    s.push_str("functionConfig:\n");
    for line in config.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}
