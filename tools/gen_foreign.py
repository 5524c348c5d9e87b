#!/usr/bin/env python3
"""Generated packages written by other tools than ours, for tools/bench.py: YAML as PyYAML and as
`kubectl get -o yaml` write it, not as examples/gen_package.rs (hand-written style) does.

Usage: tools/gen_foreign.py pyyaml|kubectl N > resources.yaml

Both hold N resources named as gen_package names them, so that bench.py's 20 patches select the
same kinds of targets: resource i is a Deployment `app-<i>` (i % 4 in 0, 1; two containers c0
and c1, `tier: backend`), a Service `svc-<i>` (i % 4 == 2, two ports) or a ConfigMap
`config-<i>` (i % 4 == 3), in namespace `team-<i % 17>`; and every eighth (i % 8 == 7) is
instead a custom resource (`Widget`) holding long `description:`s, as CRD-backed objects do.
Deterministic: a fixed seed, the same N gives the same bytes (for one PyYAML version).

* `pyyaml`: a multi-document stream from `yaml.safe_dump_all` with its defaults: long strings
  folded over several lines as plain or single-quoted scalars, strings with line breaks as
  multi-line quoted scalars, indentless sequences, keys in insertion order.
* `kubectl`: one `List` (`apiVersion: v1`, `items:`) as `kubectl get -o yaml` prints it: keys
  sorted, indentless sequences, `managedFields` with `fieldsV1` (`f:metadata`, `.: {}`),
  `status`, `creationTimestamp`, `resourceVersion`, `uid`, `generation`, and the
  `kubectl.kubernetes.io/last-applied-configuration` annotation holding the JSON of the applied
  object as a literal block, as Go's YAML writer puts a string with line breaks.
"""

import json
import random
import sys
import uuid

import yaml

WORDS = ("the controller reconciles each replica of this workload against its desired state and "
         "reports progress through conditions while the scheduler places pods across zones so "
         "that a rolling update never takes more than the budget allows; values here are "
         "defaults: see the operator's guide for tuning, limits, retries, timeouts and the "
         "metrics each component exposes on its port").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def deployment(i, rng):
    team = i % 17
    containers = []
    for c in range(2):
        port = 8080 + c
        containers.append({
            "name": f"c{c}",
            "image": f"registry.example.com/team/app-{i}:1.{c}.0",
            "imagePullPolicy": "IfNotPresent",
            "args": ["--port", str(port), "--verbose", f"--log-format={rng.choice(['json', 'text'])}"],
            "ports": [{"containerPort": port, "name": f"http-{c}", "protocol": "TCP"}],
            "env": [{"name": f"ENV_VAR_{e}", "value": f"value-{i}-{e}"} for e in range(4)]
            + [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
               {"name": "JAVA_OPTS", "value": "-XX:+UseG1GC -Xms256m -Xmx512m " + sentence(rng, 12)}],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"},
                          "requests": {"cpu": "100m", "memory": "128Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": port}, "initialDelaySeconds": 5},
        })
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"app-{i}",
            "namespace": f"team-{team}",
            "labels": {"app.kubernetes.io/name": f"app-{i}", "app.kubernetes.io/part-of": f"system-{team}",
                       "tier": "backend"},
            "annotations": {"description": sentence(rng, 30) + ".\nSecond line: " + sentence(rng, 8)},
        },
        "spec": {
            "replicas": 1 + i % 3,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app.kubernetes.io/name": f"app-{i}"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": f"app-{i}", "tier": "backend"}},
                "spec": {"serviceAccountName": f"sa-{team}", "containers": containers},
            },
        },
    }


def service(i, rng):
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"svc-{i}", "namespace": f"team-{i % 17}",
                     "labels": {"app.kubernetes.io/name": f"app-{i}"}},
        "spec": {
            "type": "ClusterIP",
            "selector": {"app.kubernetes.io/name": f"app-{i}"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                      {"name": "dns", "port": 53, "protocol": "UDP"}],
        },
    }


def configmap(i, rng):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"config-{i}", "namespace": f"team-{i % 17}"},
        "data": {
            "LOG_LEVEL": "info",
            "FEATURE_X": "on",
            "RETRIES": "3",
            "banner": sentence(rng, 40),
            "notes": "Note: " + sentence(rng, 25) + " # not a comment, 'quoted' words",
            "config.json": json.dumps({"name": f"app-{i}", "replicas": 3, "tags": WORDS[:6]}),
            "script.sh": "#!/bin/sh\nset -e\necho " + sentence(rng, 10) + "\nexec /app --config /etc/app\n",
        },
    }


def widget(i, rng):
    def field(depth):
        f = {"type": "object", "description": sentence(rng, rng.randint(20, 60))}
        if depth:
            f["properties"] = {w: field(depth - 1) for w in rng.sample(WORDS, 3)}
        return f
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": f"widget-{i}", "namespace": f"team-{i % 17}"},
        "spec": {"description": sentence(rng, 80), "schema": field(2)},
    }


def resource(i, rng):
    if i % 8 == 7:
        return widget(i, rng)
    return (deployment, deployment, service, configmap)[i % 4](i, rng)


# libyaml's writer where PyYAML has it (what most installs use, and 10x faster); the same text.
SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class GoYamlDumper(SafeDumper):
    """Strings with line breaks as literal blocks, as Go's YAML writers put them."""


def _str(dumper, s):
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None)


GoYamlDumper.add_representer(str, _str)


def live(obj, i, rng):
    """The object as the API server returns it: server fields, managedFields, status."""
    applied = json.dumps(obj, separators=(",", ":"), sort_keys=True) + "\n"
    meta = obj["metadata"]
    meta.setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = applied
    meta["creationTimestamp"] = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
    meta["generation"] = 1 + i % 5
    meta["resourceVersion"] = str(100000 + i * 7)
    meta["uid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    fields = {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}
    if "labels" in meta:
        fields["f:metadata"]["f:labels"] = {".": {}, **{f"f:{k}": {} for k in meta["labels"]}}
    if obj["kind"] == "Deployment":
        fields["f:spec"] = {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
            f'k:{{"name":"c{c}"}}': {".": {}, "f:image": {}, "f:name": {}} for c in range(2)}}}}
        obj["status"] = {
            "availableReplicas": obj["spec"]["replicas"], "observedGeneration": meta["generation"],
            "readyReplicas": obj["spec"]["replicas"], "replicas": obj["spec"]["replicas"],
            "updatedReplicas": obj["spec"]["replicas"],
            "conditions": [
                {"lastTransitionTime": meta["creationTimestamp"], "lastUpdateTime": meta["creationTimestamp"],
                 "message": "Deployment has minimum availability.", "reason": "MinimumReplicasAvailable",
                 "status": "True", "type": "Available"},
                {"lastTransitionTime": meta["creationTimestamp"], "lastUpdateTime": meta["creationTimestamp"],
                 "message": f'ReplicaSet "app-{i}-{rng.getrandbits(32):08x}" has successfully progressed.',
                 "reason": "NewReplicaSetAvailable", "status": "True", "type": "Progressing"},
            ],
        }
    elif obj["kind"] == "Service":
        ip = f"10.96.{i // 250 % 250}.{i % 250 + 1}"
        obj["spec"].update({"clusterIP": ip, "clusterIPs": [ip], "internalTrafficPolicy": "Cluster",
                            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None"})
        obj["status"] = {"loadBalancer": {}}
    managed = [{"apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1", "fieldsV1": fields,
                "manager": "kubectl-client-side-apply", "operation": "Update", "time": meta["creationTimestamp"]}]
    if "status" in obj and obj["kind"] == "Deployment":
        managed.append({"apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:status": {"f:conditions": {".": {}}, "f:replicas": {}}},
                        "manager": "kube-controller-manager", "operation": "Update",
                        "subresource": "status", "time": meta["creationTimestamp"]})
    meta["managedFields"] = managed
    return obj


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(20240601)
    out = sys.stdout
    if kind == "pyyaml":
        yaml.dump_all((resource(i, rng) for i in range(n)), out, Dumper=SafeDumper, sort_keys=False)
    elif kind == "kubectl":
        items = [live(resource(i, rng), i, rng) for i in range(n)]
        yaml.dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                  out, Dumper=GoYamlDumper, sort_keys=True)
    else:
        sys.exit(f"unknown generator {kind!r}: pyyaml or kubectl")


if __name__ == "__main__":
    main()
