#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora under fuzz/corpus/ from the test data: the YAML test
suite's inputs and the conformance suites' cases (tests/data). Run from anywhere; idempotent."""
import glob
import hashlib
import json
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


def put(target, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def text(v):
    """A case input as YAML text (inputs are strings of YAML or JSON, or YAML values)."""
    if isinstance(v, str):
        return v
    return yaml.safe_dump(v, sort_keys=False)


def indent(s, by="  "):
    return "".join(by + line if line.strip() else line for line in s.splitlines(True))


TYPES = {"strategic-merge": "merge2", "json6902": "json6902", "json-patch": "json6902"}


def merge_config(patches):
    return {
        "apiVersion": "fn.krm-merge.dev/v1alpha1",
        "kind": "Merge",
        "metadata": {"name": "seed"},
        "spec": {"patches": patches},
    }


def resource_list(resources, config):
    items = [d for d in yaml.safe_load_all(resources) if isinstance(d, dict)]
    return yaml.safe_dump(
        {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
         "functionConfig": config}, sort_keys=False)


for path in sorted(glob.glob(os.path.join(DATA, "yaml-test-suite", "**", "in.yaml"), recursive=True)):
    put("yaml_roundtrip", open(path, "rb").read())

for path in sorted(glob.glob(os.path.join(DATA, "conformance", "*", "*.yaml"))):
    raw = open(path, "rb").read()
    put("yaml_roundtrip", raw)
    suite = yaml.safe_load(raw)
    for case in suite.get("cases", []):
        inputs = case.get("inputs")
        if not isinstance(inputs, dict):
            continue
        docs = [text(inputs[k]) for k in ("dest", "current", "original", "doc", "resources")
                if k in inputs]
        docs += [text(inputs[k]) for k in ("src", "patch", "modified", "updated", "twoWay")
                 if k in inputs and not isinstance(inputs[k], list)]
        if docs:
            stream = "\n---\n".join(d.rstrip("\n") + "\n" for d in docs)
            for flags in (b"\x00", b"\x07"):
                put("merges", flags + stream.encode())
        resources = inputs.get("resources") or inputs.get("dest") or inputs.get("doc")
        if not isinstance(resources, str):
            continue
        patches = []
        if isinstance(inputs.get("patches"), list):
            for p in inputs["patches"]:
                step = {"type": TYPES.get(p.get("type"), "merge2"), "patch": p.get("patch", "")}
                if p.get("target"):
                    step["target"] = p["target"]
                patches.append(step)
        elif "patch" in inputs or "src" in inputs or "updated" in inputs:
            kind = "merge3" if "updated" in inputs else (
                "json6902" if suite["suite"] in ("rfc6902", "kustomize-json6902") else "merge2")
            step = {"type": kind, "patch": text(inputs.get("patch", inputs.get("src", inputs.get("updated"))))}
            if kind == "merge3":
                step["original"] = text(inputs["original"])
            if kind == "json6902" or kind == "merge2" and suite["suite"] == "kyaml-merge2":
                step["target"] = {}
            patches.append(step)
        if not patches:
            continue
        config = merge_config(patches)
        try:
            rl = resource_list(resources, config)
        except yaml.YAMLError:
            continue
        put("function", b"\x00" + rl.encode())
        put("function", b"\x01" + yaml.safe_dump(config, sort_keys=False).encode())
        put("function", b"\x00" + json.dumps(yaml.safe_load(rl)).encode())

# Anchors shared between items, and inside one resource: shapes the test data above
# rarely has, from which the fuzzer grows the rest.
SHARED_ITEMS = """\
- apiVersion: v1
  kind: &k ConfigMap
  metadata:
    name: a
    labels: &l {app: web}
    annotations: {internal.config.kubernetes.io/path: a.yaml}
  data: &d {k: v, m: &m [1, 2]}
- apiVersion: v1
  kind: *k
  metadata: {name: b, labels: *l, annotations: {internal.config.kubernetes.io/path: b.yaml}}
  data: *d
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c, annotations: {internal.config.kubernetes.io/path: c.yaml}}
  data: {x: *m, y: &d {k: w}, z: *d}
"""
ANCHOR_PATCHES = [
    "- target: {kind: ConfigMap, name: a}\n  patch: |\n    $patch: delete\n",
    "- target: {kind: ConfigMap, name: a}\n  patch: |\n    data: {k: w2}\n",
    "- target: {kind: ConfigMap, name: b}\n  type: json6902\n  patch: |\n    - {op: add, path: /data/j, value: 1}\n",
    "- target: {kind: ConfigMap, name: c}\n  type: json6902\n  patch: |\n    - {op: replace, path: /data/y/k, value: q}\n    - {op: copy, from: /data/z, path: /data/q}\n",
    "- target: {kind: ConfigMap}\n  type: jsonmerge\n  patch: |\n    metadata: {annotations: 5}\n",
    "- target: {labelSelector: app=web}\n  options: {allowNameChange: true}\n  patch: |\n    metadata: {name: c}\n",
    "- type: merge3\n  original: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n  patch: |\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: ../n, annotations: {config.kubernetes.io/path: ../../x.yaml}}\n",
]
for patches in ANCHOR_PATCHES:
    config = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: seed}\nspec:\n  patches:\n" + indent(patches)
    rl = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + SHARED_ITEMS + "functionConfig:\n" + indent(config)
    put("function", b"\x00" + rl.encode())
    put("function", b"\x01" + config.encode())
for a, b in [
    ("data:\n  m: &m {k: v}\n  mm: *m\n  n: [*m, &m {k: z}, *m]\n", "data:\n  m: {k: w}\n"),
    ("data:\n  m: &m {k: v}\n  mm: *m\n", "- {op: replace, path: /data/m/k, value: w}\n- {op: copy, from: /data/mm, path: /data/c}\n"),
    ("spec:\n  containers:\n  - &c {name: a, image: x}\n  - {name: b, <<: *c}\nextra: *c\n", "spec:\n  containers:\n  - {name: a, image: y}\n"),
]:
    for flags in (b"\x00", b"\x07"):
        put("merges", flags + (a + "---\n" + b + "---\n" + b).encode())

# Wildcards: one operation at every place its `[*]` select, and `at:` places, through aliases
# (each alias a copy when a change goes through it, every place and copy spent from the patch's
# budget), with values the rules skip, make or refuse.
FAN_DOC = """\
l0: &l0 [{name: a, env: [{name: X}]}, {name: b}, {}]
l1: &l1 [*l0, *l0, {name: c, env: *l0}]
top: [*l1, *l1, [*l0, {name: d}]]
keep: *l1
"""
FAN_OPS = [
    "- {op: add, path: '/top/[*]/[*]/[*]/k', value: {v: 1}}\n",
    "- {op: add, path: '/top/[*]/[*]/env/-', value: {name: Y}}\n- {op: remove, path: '/top/[*]/[*]/env/[name=X]'}\n",
    "- {op: replace, path: '/top/[*]/[*]/[*]/name', value: z}\n- {op: test, path: '/top/[*]/[*]/[*]/name', value: z}\n",
    "- {op: copy, from: '/top/[*]/[*]/[*]/name', path: '/top/[*]/[*]/[*]/was'}\n",
    "- {op: move, from: '/top/[*]/[*]', path: /moved/-}\n",
    "- {op: copy, from: /keep, path: '/top/[*]/[*]'}\n",
    "- {op: add, path: '/top/[*]/[*]', value: &v {x: [1]}}\n- {op: add, path: /top/0/-, value: *v}\n",
]
for ops in FAN_OPS:
    for flags in (b"\x00", b"\x04", b"\x07"):
        put("merges", flags + (FAN_DOC + "---\n" + ops + "---\n" + ops).encode())
FAN_ITEMS = """\
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: w, annotations: {internal.config.kubernetes.io/path: w.yaml}}
  spec:
    template:
      spec:
        initContainers: &cs [{name: init, image: i}, {name: app, image: a, env: [{name: X, value: "1"}]}]
        containers: *cs
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: g, annotations: {internal.config.kubernetes.io/path: g.yaml}}
  row: &row [{}, {}, {}]
  grid: [*row, *row, [*row]]
"""
FAN_PATCHES = [
    "- target: {kind: Deployment}\n  at: '@containers'\n  patch: |\n    env: [{name: Y, value: '2'}]\n",
    "- target: {kind: Deployment}\n  at: '@containers[name=app]'\n  type: json6902\n  patch: |\n    - {op: add, path: /env/-, value: {name: Z}}\n    - {op: remove, path: '/env/[name=X]'}\n",
    "- target: {kind: ConfigMap}\n  at: 'grid[*][*]'\n  patch: |\n    k: v\n",
    "- target: {kind: ConfigMap}\n  at: 'grid[*]'\n  type: json6902\n  patch: |\n    - {op: add, path: '/[*]/k', value: v}\n",
    "- target: {kind: ConfigMap}\n  type: json6902\n  patch: |\n    - {op: copy, from: /row, path: '/grid/[*]/[*]/row'}\n",
    "- target: {kind: Deployment}\n  at: '@containers'\n  type: jsonmerge\n  patch: |\n    image: j\n",
]
for patches in FAN_PATCHES:
    config = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: seed}\nspec:\n  patches:\n" + indent(patches)
    rl = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + FAN_ITEMS + "functionConfig:\n" + indent(config)
    put("function", b"\x00" + rl.encode())
    put("function", b"\x01" + config.encode())

# The fast reader: the YAML that real packages are made of, which it reads itself,
# and everything the YAML seeds above hold, which it leaves to granit-parser from some point.
ROOT = os.path.join(HERE, "..")
for pattern in ("tests/data/yaml-test-suite/**/in.yaml", "tests/data/conformance/*/*.yaml",
                "tests/fixtures/**/*.yaml", "functions/**/*.yaml", "examples/**/*.yaml",
                "tests/data/go_yaml/**/*.yaml", "tests/data/corpus/**/*.yaml",
                "tests/data/corpus/**/*.yml", "tests/data/corpus/**/*.json"):
    for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
        raw = open(path, "rb").read()
        if len(raw) <= 65536:
            put("fast_reader", raw)
            if "go_yaml" in path:
                put("yaml_roundtrip", raw)
# A resource as benches/support/gen.rs writes them (comments, quoting, flow values, block
# scalars), as a stream of two and inside a ResourceList.
GENERATED = """\
# Deployment 0: generated
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-0   # the name
  namespace: team-0
  labels:
    app.kubernetes.io/name: app-0
    app.kubernetes.io/part-of: "system-0"
  annotations:
    description: |
      Multi-line description for app 0.
      It has two lines.
spec:
  replicas: 1
  strategy:
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}
  template:
    spec:
      containers:
      # container 0
      - name: c0
        image: "registry.example.com/team/app-0:1.0.0"
        args: ["--port", "8080", "--verbose"]
        ports:
        - containerPort: 8080
          protocol: TCP
        env:
        - name: ENV_VAR_0
          value: "value-0-0"   # env 0
        - name: POD_NAME
          valueFrom:
            fieldRef: {fieldPath: metadata.name}
        resources:
          limits: {cpu: 500m, memory: 256Mi}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config-3
data:
  # settings
  LOG_LEVEL: info
  FEATURE_X: "on"
  config.json: |
    {"name": "app-3", "replicas": 3}
  folded: >-
    one
    two

    three
"""
put("fast_reader", GENERATED.encode())
put("fast_reader", ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
                    + "".join(("- " if i == 0 else "  ") + l + "\n" if l else "\n"
                              for doc in GENERATED.split("---\n")
                              for i, l in enumerate(doc.splitlines()))
                    + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n").encode())

# What real files hold beyond the generator's YAML: quoted scalars over lines (with Go's
# under-indented lines, tabs and \\'), plain scalars over lines, block scalars with every
# header, flow collections over lines with comments, anchors, tags and aliases, JSON, CRLF.
REAL = [
    "data:\n  a: 'Name of the referent.\n    More info: x\n\n    TODO: it''s'\n  b: \"p\\\n"
    "     q \\t r \\x41\\u00e9\n    s\"\n  c:\n  - 'x\n  y'\n  d: \"go's \\' escape\"\n"
    "  e: \"x\n\t  y\"  # c\n",
    "spec:\n  containers:\n  - name: c\n    command: [sh, -c]\n    args: [\"\n      echo hi &&\n"
    "      echo 'x'\n    \"]\n    flags: [\n      \"--validate=false\",  # why\n      \"--other\",\n"
    "    ]\n    env: [ # c1\n      {name: a, value: \"1\"},\n\t{name: b, value: '2'}\n    ] # c3\n",
    "description: A long description that PyYAML wraps over\n  several lines, with `backticks`\n"
    "  and \"quotes\".\n\n  A second paragraph.\nport: :8443\nsteps:\n- - name: a\n  - name: b\n",
    "metadata:\n  name: &n props\n  labels: &l\n    app: web\n  annotations: !!map\n"
    "    a: !!str 1\ndata:\n  x: *n\n  z: &s\n  - 1\n  - *l\n  w: [&f 1, *f]\n---\n# empty\n---\n"
    "a: 1\n...\n---\nb: 2\n",
    "data:\n  a: |2\n      indented\n    text\n  b: >+\n    folded\n     more\n    text\n\n\n"
    "  c: |-  # comment\n    x\n\n  d: >2-\n     y\n  f:\n    |\n    next line\n  g:\n"
    "    plain on next\n    line\n",
    "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [{\"a\": [1, true, null]}]\n}\n",
    "apiVersion: v1\r\nkind: ConfigMap\r\ndata:\r\n  a: |\r\n    l1\r\n\r\n    l2\r\n"
    "  b: \"x\r\n    y\"\r\n  c: [1,\r\n    2]\r\n  d: plain\t\r\n    more\r\n",
]
for text in REAL:
    put("fast_reader", text.encode())
    put("yaml_roundtrip", text.encode())

for target in ("yaml_roundtrip", "merges", "function", "fast_reader"):
    print(target, len(os.listdir(os.path.join(HERE, "corpus", target))), "seeds")
