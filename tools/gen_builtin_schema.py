#!/usr/bin/env python3
"""Generate src/schema/builtin_data.rs and src/schema/shape_data.rs: the merge metadata, and the
fields and value types, of the built-in Kubernetes kinds.

Usage:
    python3 tools/gen_builtin_schema.py            # downloads the wheel with pip, writes the files
    python3 tools/gen_builtin_schema.py --wheel W  # use an already downloaded wheel (offline)
    python3 tools/gen_builtin_schema.py --check    # exit 1 if a committed file is not what we'd write

Source
------
PyPI `kubernetes-validate` 1.37.0 (Apache-2.0) ships the Kubernetes OpenAPI definitions converted to
JSON Schema, one directory per Kubernetes release. For v1.37.0 the wheel holds two variants (there is no
plain, non-local one for this release):

* `v1.37.0-local/_definitions.json`: every definition under `$defs`, `$ref`s local to the file
  (`#/$defs/<name>`), the `x-kubernetes-*` extensions kept as in the upstream OpenAPI document.
* `v1.37.0-local-strict/_definitions.json`: the same plus `"additionalProperties": false` on 834
  object definitions, a validation-only tightening (compared when this script was written: that
  is the only difference).

We read `-local`: `additionalProperties` in it is always a real map value schema, so it can be read as
"this object is a map" without special-casing `false`.

What is kept
------------
For every definition carrying `x-kubernetes-group-version-kind` (some carry several GVKs, e.g.
`DeleteOptions` is bound to every group; each GVK becomes a root), the type graph reachable from it
through properties, `$ref`, `items` and `additionalProperties`, pruned to what matters for merging:

* a field is kept when it carries merge metadata (`x-kubernetes-patch-merge-key`,
  `x-kubernetes-patch-strategy`, `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
  `x-kubernetes-map-type`, or a `$ref` to a type with a type-level `x-kubernetes-map-type: atomic`)
  or leads to a kept type;
* a type is kept when it has a kept field or map value, or is itself `x-kubernetes-map-type: atomic`
  (a list element that is replaced whole).

Types are shared: one entry per definition (plus one per inline map that leads somewhere), so
recursive types (JSONSchemaProps) cost nothing extra.

The field metadata is derived here, once, with the same rules as src/schema/ (see `derive_meta`):
patch-strategy, the strategic-merge metadata, decides when it speaks; list-type decides otherwise.
List keys are `x-kubernetes-list-map-keys` when present, else `[x-kubernetes-patch-merge-key]`.

Key defaults
------------
A list-map key field's `default` in the definitions becomes the key's default. The v1.37.0 definitions
carry no `default` at all, but the API server defaults `protocol` to "TCP" on ContainerPort and
ServicePort, and lists keyed by containerPort+protocol / port+protocol must pair an element without
`protocol` with one saying TCP. KEY_DEFAULT_SUPPLEMENT below adds exactly those two; the script fails
if the definitions ever give a different default for them.

Output
------
A compact Rust file of `static` tables (no parsing at start-up), sorted throughout so that running the
script twice gives the same bytes. The statistics the script prints are also written into the generated
file's header. For v1.37.0:

    definitions 862, with a GVK 203; GVK roots 325, of which 263 reach merge metadata
      (the others, e.g. the 62 WatchEvent roots, get no entry: looking them up says nothing either way)
    kept 548 types (539 definitions + 9 inline maps), 1034 fields, 21 distinct field metadata
    kept lists: map 110, atomic 320, set 26; fields atomic_map 102, retain_keys 10;
      types with map-type atomic 39; map keys with a default 3 (all from the supplement)
    in all definitions: patch-merge-key 88, patch-strategy 92, list-type 457, list-map-keys 108,
      map-type on fields 6 (and on 39 types);
      list-type map without a patch strategy 22 (merged by key: Map);
      patch strategy overriding list-type 2 (JobStatus.conditions, PodStatus.hostIPs: merge over atomic);
      list-map-keys differing from patch-merge-key 6 (keyed by list-map-keys, e.g. ports by
      containerPort+protocol, topologySpreadConstraints by topologyKey+whenUnsatisfiable);
      list-type on a non-list 1 (APIServiceSpec.caBundle, a string: ignored)
    about 70 KB of Rust

Shapes (shape_data.rs)
----------------------
For checking patches (src/schema/check.rs), every field of every type reachable from every GVK root,
unpruned: its name, its value type, whether it is a list of that type, and whether its object lists
it as `required`. Value types are objects (a definition with properties, or a map: a schema with
only `additionalProperties`, one entry per distinct value type) and primitives: any (`{}`), a free
object (`type: object` without properties: RawExtension, FieldsV1), string, integer, number,
boolean, int-or-string (`oneOf` string/integer), quantity (`oneOf` string/number). See `shape_of`;
src/schema/openapi.rs `Builder::shape` applies the same rules at run time.

Required fields are the definitions' own `required` lists, at every level, as data: the
kubernetes-validate definitions require `spec` of Deployment, DaemonSet, StatefulSet, ReplicaSet,
CronJob, HorizontalPodAutoscaler and others (not of Pod, Job or Service), `selector` and `template`
of a DeploymentSpec, `containers` of a PodSpec, `name` of a Container.

Compact: every name (groups, versions, kinds, fields) is stored once in one string; fields are
(name index, type code, flags) triples of integers; objects are ranges of fields. No pointers,
so nothing to relocate at load time. For v1.37.0:

    kinds 325; object types 850 (833 definitions + 17 maps), fields 3411 (lists 550, required 757);
    names 1165 distinct, 14857 bytes; about 46 KB in the binary

Checking the tables against the run-time loader
-----------------------------------------------
src/schema/tests.rs `builtin_tables_match_the_runtime_loader` (ignored by default) loads the same
_definitions.json through the Rust OpenAPI loader and checks that every field reachable from every
kind gets the same metadata as from these tables, so the two implementations of the rule and the
pruning cannot drift apart unnoticed. It also checks every field's shape and `required` in
shape_data.rs against the loader's (`Builder::shape`).
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter

PACKAGE = "kubernetes-validate"
VERSION = "1.37.0"
K8S_VERSION = "v1.37.0"
MEMBER = f"kubernetes_validate/kubernetes-json-schema/{K8S_VERSION}-local/_definitions.json"
REF_PREFIX = "#/$defs/"
SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "schema")
OUT = os.path.join(SCHEMA_DIR, "builtin_data.rs")
SHAPE_OUT = os.path.join(SCHEMA_DIR, "shape_data.rs")

# (definition, property) -> default value of a list-map key the API server fills in but the
# definitions do not state. See the module docstring.
KEY_DEFAULT_SUPPLEMENT = {
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "TCP",
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "TCP",
}

STRATEGIES = {"merge", "replace", "retainKeys"}


def fail(msg):
    sys.exit(f"gen_builtin_schema: {msg}")


def load_definitions(wheel):
    with zipfile.ZipFile(wheel) as z:
        raw = z.read(MEMBER)
    doc = json.loads(raw)
    defs = doc.get("$defs")
    if not isinstance(defs, dict):
        fail(f"{MEMBER} has no $defs")
    return defs, hashlib.sha256(raw).hexdigest()


def download_wheel(tmp):
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp,
         f"{PACKAGE}=={VERSION}"],
        check=True,
    )
    wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
    if len(wheels) != 1:
        fail(f"expected one wheel in {tmp}, found {wheels}")
    return os.path.join(tmp, wheels[0])


# ---------------------------------------------------------------------------------------------
# Reading one schema


def types_of(schema):
    t = schema.get("type")
    if t is None:
        return set()
    return set(t) if isinstance(t, list) else {t}


def ref_name(schema, where):
    ref = schema.get("$ref")
    if ref is None:
        return None
    if not ref.startswith(REF_PREFIX):
        fail(f"{where}: unexpected $ref {ref}")
    return ref[len(REF_PREFIX):]


def value_kind(schema, defs, where):
    """'array', 'object', 'scalar' or 'unknown' for a property schema."""
    name = ref_name(schema, where)
    if name is not None:
        schema = defs[name]
    ts = types_of(schema) - {"null"}
    if "array" in ts or (not ts and "items" in schema):
        return "array"
    if "object" in ts or "properties" in schema or isinstance(schema.get("additionalProperties"), dict):
        return "object"
    if ts:
        return "scalar"
    return "unknown"


def derive_meta(schema, defs, where, stats):
    """The merge metadata of one property: (list, atomic_map, retain_keys).

    list is None, ("atomic",), ("set",) or ("map", ((key, default), ...)).
    The same rules as src/schema/ext.rs.
    """
    kind = value_kind(schema, defs, where)
    strategy = schema.get("x-kubernetes-patch-strategy")
    strategies = set(strategy.split(",")) if strategy else set()
    if strategies - STRATEGIES:
        fail(f"{where}: unknown patch strategy {strategy}")
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    list_type = schema.get("x-kubernetes-list-type")
    map_keys = schema.get("x-kubernetes-list-map-keys")
    map_type = schema.get("x-kubernetes-map-type")

    lst = None
    if kind in ("array", "unknown"):
        items = schema.get("items", {})
        elem_kind = value_kind(items, defs, where + ".items") if items else "unknown"
        keys = None
        if "merge" in strategies:
            keys = map_keys or ([merge_key] if merge_key else None)
            if keys:
                lst = "map"
            elif elem_kind != "object":
                lst = "set"
            if list_type and list_type != lst:
                stats["strategy overrides list-type"] += 1
                stats[f"override {where}: {strategy} over {list_type}"] += 1
        elif "replace" in strategies:
            lst = "atomic"
        if lst is None and list_type:
            if list_type == "map":
                keys = map_keys
                if not keys:
                    fail(f"{where}: list-type map without list-map-keys")
                if not strategies:
                    stats["list-type map without patch-strategy"] += 1
            elif list_type not in ("atomic", "set"):
                fail(f"{where}: unknown list-type {list_type}")
            lst = list_type
        if lst == "map":
            if map_keys and merge_key and map_keys != [merge_key]:
                stats["list-map-keys differ from patch-merge-key"] += 1
            lst = ("map", tuple((k, key_default(items, k, defs, where, stats)) for k in keys))
        elif lst is not None:
            lst = (lst,)
    elif list_type:
        stats["list-type on a non-list (ignored)"] += 1

    atomic_map = False
    if kind in ("object", "unknown"):
        if map_type == "atomic":
            atomic_map = True
        elif map_type == "granular":
            atomic_map = False
        elif "replace" in strategies:
            atomic_map = True
        else:
            name = ref_name(schema, where)
            atomic_map = name is not None and defs[name].get("x-kubernetes-map-type") == "atomic"
    if map_type not in (None, "atomic", "granular"):
        fail(f"{where}: unknown map-type {map_type}")
    return (lst, atomic_map, "retainKeys" in strategies)


def key_default(items, key, defs, where, stats):
    name = ref_name(items, where)
    elem = defs[name] if name is not None else items
    prop = elem.get("properties", {}).get(key, {})
    value = prop.get("default")
    supplement = KEY_DEFAULT_SUPPLEMENT.get((name, key))
    if value is not None:
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif not isinstance(value, (str, int, float)):
            fail(f"{where}: key {key} has a non-scalar default")
        value = str(value)
        if supplement is not None and supplement != value:
            fail(f"{where}: key {key}: definitions say default {value}, supplement says {supplement}")
        stats["key defaults (from the definitions)"] += 1
        return value
    if supplement is not None:
        stats["key defaults (supplement)"] += 1
    return supplement


# ---------------------------------------------------------------------------------------------
# The type graph


class Node:
    def __init__(self, ident, name):
        self.ident = ident  # unique, sortable: the definition name, or "<definition>.<field>..."
        self.name = name  # definition name, None for an inline map
        self.atomic = False
        self.fields = {}  # name -> (meta, target Node or None)
        self.additional = None  # (meta, target) for additionalProperties
        self.rich = False
        self.reachable = False


def build_graph(defs, stats):
    nodes = {}

    def def_node(name):
        return nodes[name]

    for name in defs:
        nodes[name] = Node(name, name)

    def slot(schema, where):
        """(meta, target) for a property, items value or map value."""
        meta = derive_meta(schema, defs, where, stats)
        for ext in ("x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy",
                    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type"):
            if ext in schema:
                stats[f"raw {ext}"] += 1
        return meta, target(schema, where)

    def target(schema, where):
        name = ref_name(schema, where)
        if name is not None:
            return def_node(name)
        if "array" in types_of(schema) or "items" in schema:
            items = schema.get("items")
            if not isinstance(items, dict):
                return None
            name = ref_name(items, where + ".items")
            if name is not None:
                return def_node(name)
            if "items" in items:
                return None  # a list of lists: no element position
            return inline(items, where + ".items", element=True)
        return inline(schema, where, element=False)

    def inline(schema, where, element):
        props = schema.get("properties")
        add = schema.get("additionalProperties")
        if not props and not isinstance(add, dict):
            return None
        n = Node(where, None)
        nodes[where] = n
        # The map-type of a property is the field's own metadata; only a list element's map-type
        # is a type-level fact about the element.
        fill(n, schema, where, type_level=element)
        return n

    def fill(n, schema, where, type_level=True):
        n.atomic = type_level and schema.get("x-kubernetes-map-type") == "atomic"
        for field, prop in sorted(schema.get("properties", {}).items()):
            n.fields[field] = slot(prop, f"{where}.{field}")
        add = schema.get("additionalProperties")
        if isinstance(add, dict):
            n.additional = slot(add, f"{where}.*")

    for name, schema in sorted(defs.items()):
        fill(nodes[name], schema, name)
        if schema.get("x-kubernetes-map-type") == "atomic":
            stats["raw type-level map-type atomic"] += 1
    return nodes


def roots_of(defs):
    roots = []
    for name, schema in sorted(defs.items()):
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            roots.append((gvk.get("group", ""), gvk["version"], gvk["kind"], name))
    return sorted(roots, key=lambda r: tuple(s.encode() for s in r))


EMPTY = (None, False, False)


def prune(nodes, roots):
    stack = [nodes[r[3]] for r in roots]
    while stack:
        n = stack.pop()
        if n.reachable:
            continue
        n.reachable = True
        for _, t in slots(n):
            if t is not None:
                stack.append(t)
    changed = True
    while changed:
        changed = False
        for n in nodes.values():
            if n.rich:
                continue
            if n.atomic or any(m != EMPTY or (t is not None and t.rich) for m, t in slots(n)):
                n.rich = True
                changed = True
    return [n for n in nodes.values() if n.reachable and n.rich]


def slots(n):
    out = list(n.fields.values())
    if n.additional is not None:
        out.append(n.additional)
    return out


def kept_slot(m, t):
    return m != EMPTY or (t is not None and t.rich)


# ---------------------------------------------------------------------------------------------
# Emitting Rust


def rust_str(s):
    return json.dumps(s)  # ASCII-only names: JSON string syntax is Rust string syntax here


def meta_sort_key(m):
    return json.dumps(m)


def emit(defs, digest, stats_lines):
    stats = Counter()
    nodes = build_graph(defs, stats)
    roots = roots_of(defs)
    kept = prune(nodes, roots)

    named = sorted((n for n in kept if n.name is not None), key=lambda n: n.name.encode())
    inline = sorted((n for n in kept if n.name is None), key=lambda n: n.ident.encode())
    order = named + inline
    index = {id(n): i for i, n in enumerate(order)}
    if len(order) >= 0xFFFF:
        fail("too many types for u16 indexes")

    metas = {EMPTY}
    for n in order:
        for m, t in slots(n):
            if kept_slot(m, t):
                metas.add(m)
    metas = [EMPTY] + sorted(metas - {EMPTY}, key=meta_sort_key)
    meta_index = {m: i for i, m in enumerate(metas)}

    prefixes = sorted({n.name.rsplit(".", 1)[0] + "." for n in named}, key=str.encode)
    prefix_index = {p: i for i, p in enumerate(prefixes)}
    # A kind whose whole type graph says nothing about merging needs no entry: looking it up
    # gives "no schema information" either way (WatchEvent, for one).
    kept_roots = [r for r in roots if nodes[r[3]].rich]
    groups = sorted({r[0] for r in kept_roots}, key=str.encode)
    group_index = {g: i for i, g in enumerate(groups)}

    def target_ref(t):
        return "NO" if t is None or not t.rich else str(index[id(t)])

    def field(name, m, t):
        return f"F({rust_str(name)},{meta_index[m]},{target_ref(t)})"

    def list_rs(lst):
        if lst is None:
            return "None"
        if lst[0] == "atomic":
            return "Some(L::Atomic)"
        if lst[0] == "set":
            return "Some(L::Set)"
        keys = ",".join(
            f"K({rust_str(k)},{'None' if d is None else 'Some(' + rust_str(d) + ')'})" for k, d in lst[1]
        )
        return f"Some(L::Map(&[{keys}]))"

    # statistics over what is kept
    kept_fields = 0
    kept_stats = Counter()
    for n in order:
        if n.atomic:
            kept_stats["types with map-type atomic"] += 1
        for m, t in slots(n):
            if not kept_slot(m, t):
                continue
            kept_fields += 1
            lst = m[0]
            if lst is not None:
                kept_stats[f"lists {lst[0]}"] += 1
                if lst[0] == "map":
                    kept_stats["map keys with a default"] += sum(1 for _, d in lst[1] if d is not None)
            if m[1]:
                kept_stats["fields atomic_map"] += 1
            if m[2]:
                kept_stats["fields retain_keys"] += 1
    reachable = sum(1 for n in nodes.values() if n.reachable and n.name is not None)
    summary = [
        f"definitions {len(defs)}, with a GVK {sum(1 for d in defs.values() if 'x-kubernetes-group-version-kind' in d)}; "
        f"GVK roots {len(roots)}, kept {len(kept_roots)} (the others reach no merge metadata)",
        f"reachable from the roots: {reachable} definitions; kept {len(order)} types "
        f"({len(named)} definitions + {len(inline)} inline), {kept_fields} fields, {len(metas)} distinct field metadata",
    ]
    for k in sorted(kept_stats):
        summary.append(f"kept {k}: {kept_stats[k]}")
    for k in sorted(stats):
        if not k.startswith("override "):
            summary.append(f"all definitions, {k}: {stats[k]}")
    for k in sorted(stats):
        if k.startswith("override "):
            summary.append(k)
    stats_lines.extend(summary)

    out = []
    w = out.append
    w("// @generated by tools/gen_builtin_schema.py: do not edit, re-run the script.\n")
    w(f"// Source: PyPI {PACKAGE}=={VERSION}, {MEMBER}\n")
    w(f"// (Kubernetes {K8S_VERSION}), sha256 {digest}.\n")
    w("// Reproducible: running the script again gives these exact bytes.\n")
    w("//\n")
    for line in summary:
        w(f"// {line}\n")
    w("\n")
    w("use super::builtin::{Field as F, Key as K, Kind, ListDef as L, Meta as M, Type as T, NO};\n\n")
    w(f"/// Kubernetes release the tables describe.\n#[cfg(test)]\npub(super) const K8S_VERSION: &str = {rust_str(K8S_VERSION)};\n\n")
    w(f"/// API groups, sorted; `Kind` refers to them by index.\npub(super) static GROUPS: [&str; {len(groups)}] = [\n")
    for g in groups:
        w(f"    {rust_str(g)},\n")
    w("];\n\n")
    w(f"/// (group, version, kind) -> root type, sorted by group name, version, kind.\n")
    w(f"pub(super) static KINDS: [Kind; {len(kept_roots)}] = [\n")
    for g, v, k, name in kept_roots:
        w(f"    Kind({group_index[g]},{rust_str(v)},{rust_str(k)},{index[id(nodes[name])]}),\n")
    w("];\n\n")
    w(f"/// Distinct field metadata; index 0 says nothing.\npub(super) static METAS: [M; {len(metas)}] = [\n")
    for m in metas:
        w(f"    M({list_rs(m[0])},{str(m[1]).lower()},{str(m[2]).lower()}),\n")
    w("];\n\n")
    w(f"/// Definition name prefixes; `Type` names are prefix + suffix.\n")
    w(f"pub(super) static PREFIXES: [&str; {len(prefixes)}] = [\n")
    for p in prefixes:
        w(f"    {rust_str(p)},\n")
    w("];\n\n")
    w(f"/// Number of named types: TYPES[..NAMED] are sorted by full name, the rest are inline maps.\n")
    w(f"pub(super) const NAMED: usize = {len(named)};\n\n")
    w(f"/// Types: (prefix, name suffix, map-type atomic, fields sorted by name, map value).\n")
    w(f"pub(super) static TYPES: [T; {len(order)}] = [\n")
    for i, n in enumerate(order):
        if n.name is not None:
            p, s = n.name.rsplit(".", 1)
            head = f"{prefix_index[p + '.']},{rust_str(s)}"
        else:
            head = f"NO_PREFIX,{rust_str('')}"
        fs = ",".join(field(f, m, t) for f, (m, t) in sorted(n.fields.items(), key=lambda kv: kv[0].encode())
                      if kept_slot(m, t))
        add = "None"
        if n.additional is not None and kept_slot(*n.additional):
            m, t = n.additional
            add = f"Some(({meta_index[m]},{target_ref(t)}))"
        comment = "" if n.name is not None else f" // {n.ident}"
        w(f"    /* {i} */ T({head},{str(n.atomic).lower()},&[{fs}],{add}),{comment}\n")
    w("];\n")
    text = "".join(out)
    return text.replace("NO_PREFIX", "u8::MAX")



# ---------------------------------------------------------------------------------------------
# Shapes: the field names and value types of every type, for checking patches (shape_data.rs)

# Primitive value types; type codes below PRIMS name these, codes from PRIMS on are objects.
# The order is the Rust `Prim` enum's in src/schema/shape.rs.
PRIMS = ["ANY", "FREE", "STRING", "INTEGER", "NUMBER", "BOOLEAN", "INT_OR_STRING", "QUANTITY"]
PRIM = {p: i for i, p in enumerate(PRIMS)}
SCALARS = {"string": "STRING", "integer": "INTEGER", "number": "NUMBER", "boolean": "BOOLEAN"}
FLAG_LIST = 1
FLAG_REQUIRED = 2


def prim(name):
    return ("prim", name)


def scalar_of(ts):
    """The primitive for a set of (non-null) JSON types; the same rule as openapi.rs `Types::scalar`."""
    if ts == {"string", "integer"}:
        return "INT_OR_STRING"
    if "string" in ts and "number" in ts and ts <= {"string", "integer", "number"}:
        return "QUANTITY"
    if ts == {"integer", "number"}:
        return "NUMBER"
    if len(ts) == 1:
        return SCALARS.get(next(iter(ts)), "ANY")
    return "ANY"


def alt_types(schema):
    out = set()
    for key in ("oneOf", "anyOf"):
        for alt in schema.get(key, []):
            out |= types_of(alt) - {"null"}
    return out


def shape_of(schema, defs, where):
    """(lists, ref) for a property, items or map value schema: `lists` is 1 for a list (of ref),
    ref is ("prim", NAME), ("def", definition) or ("map", shape of the values).

    The same rules as the Rust loader (src/schema/openapi.rs `Builder::shape`); the ignored test
    `builtin_tables_match_the_runtime_loader` checks that the two agree on every field.
    """
    name = ref_name(schema, where)
    if name is not None:
        body = defs[name]
        if body.get("properties"):
            return (0, ("def", name))
        if "$ref" in body:
            fail(f"{where}: {name} is only a reference")
        # A definition without fields is what its type says (Time: a string, RawExtension: any
        # object, IntOrString: oneOf string or integer).
        return shape_of(body, defs, where)
    ts = types_of(schema) - {"null"}
    if "array" in ts or (not ts and "items" in schema):
        items = schema.get("items")
        if not isinstance(items, dict):
            return (1, prim("ANY"))
        lists, ref = shape_of(items, defs, where + ".items")
        if lists:
            fail(f"{where}: a list of lists")
        return (1, ref)
    if schema.get("x-kubernetes-preserve-unknown-fields") is True:
        fail(f"{where}: x-kubernetes-preserve-unknown-fields in a built-in definition")
    if schema.get("x-kubernetes-int-or-string") is True or schema.get("format") == "int-or-string":
        return (0, prim("INT_OR_STRING"))
    add = schema.get("additionalProperties")
    if "object" in ts or "properties" in schema or isinstance(add, dict):
        if schema.get("properties"):
            fail(f"{where}: an inline object with properties")
        if isinstance(add, dict):
            return (0, ("map", shape_of(add, defs, where + ".*")))
        return (0, prim("FREE"))
    if not ts:
        ts = alt_types(schema)
    if not ts:
        return (0, prim("ANY"))
    return (0, prim(scalar_of(ts)))


def shape_objects(defs, roots):
    """The object types reachable from the roots: key -> (fields, map value); fields are
    (name, shape, required) sorted by name. Keys are ("def", name) or ("map", shape)."""
    objects = {}
    stack = [("def", r[3]) for r in roots]
    while stack:
        key = stack.pop()
        if key in objects:
            continue
        if key[0] == "def":
            body = defs[key[1]]
            if not body.get("properties"):
                fail(f"root {key[1]} has no properties")
            required = body.get("required", [])
            if not isinstance(required, list):
                fail(f"{key[1]}: required is not a list")
            fields = []
            for field, prop in sorted(body["properties"].items(), key=lambda kv: kv[0].encode()):
                fields.append((field, shape_of(prop, defs, f"{key[1]}.{field}"), field in required))
            for r in required:
                if r not in body["properties"]:
                    fail(f"{key[1]}: required field {r} is not a property")
            objects[key] = (fields, None)
            refs = [f[1][1] for f in fields]
        else:
            objects[key] = ([], key[1])
            refs = [key[1][1]]
        stack.extend(r for r in refs if r[0] != "prim")
    return objects


def shape_label(shape):
    lists, ref = shape
    inner = ref[1].lower() if ref[0] == "prim" else ref[1] if ref[0] == "def" else "map of " + shape_label(ref[1])
    return "list of " + inner if lists else inner


def emit_shapes(defs, digest, stats_lines):
    roots = roots_of(defs)
    objects = shape_objects(defs, roots)
    named = sorted((k for k in objects if k[0] == "def"), key=lambda k: k[1].encode())
    maps = sorted((k for k in objects if k[0] == "map"), key=lambda k: json.dumps(k[1]))
    order = named + maps
    code = {k: len(PRIMS) + i for i, k in enumerate(order)}
    if len(PRIMS) + len(order) >= 0xFFFF:
        fail("too many object types for u16 codes")

    def type_code(ref):
        return PRIM[ref[1]] if ref[0] == "prim" else code[ref]

    strings = set()
    for g, v, k, _ in roots:
        strings.update((g, v, k))
    for k in order:
        strings.update(f[0] for f in objects[k][0])
    for s in strings:
        if not s.isascii():
            fail(f"non-ASCII name {s!r}")
    strings = sorted(strings, key=str.encode)
    sid = {s: i for i, s in enumerate(strings)}
    ends, offset = [], 0
    for s in strings:
        offset += len(s)
        ends.append(offset)
    if offset > 0xFFFF or len(strings) > 0xFFFF:
        fail("names do not fit u16 offsets")

    fields_out, objects_out = [], []
    for k in order:
        fields, value = objects[k]
        if len(fields) > 0xFF:
            fail(f"{k}: more than 255 fields")
        first = len(fields_out)
        for name, (lists, ref), required in fields:
            flags = (FLAG_LIST if lists else 0) | (FLAG_REQUIRED if required else 0)
            fields_out.append((sid[name], type_code(ref), flags))
        if value is None:
            val = ("NONE", 0)
        else:
            val = (type_code(value[1]), FLAG_LIST if value[0] else 0)
        objects_out.append((first, len(fields), val, k))
    if len(fields_out) > 0xFFFF:
        fail("too many fields for u16 indexes")

    required = sum(1 for f in fields_out if f[2] & FLAG_REQUIRED)
    lists = sum(1 for f in fields_out if f[2] & FLAG_LIST)
    prim_use = Counter(PRIMS[f[1]] for f in fields_out if f[1] < len(PRIMS))
    top_required = sorted({f for g, v, kind, name in roots for f in defs[name].get("required", [])})
    summary = [
        f"kinds {len(roots)}; object types {len(order)} ({len(named)} definitions + {len(maps)} maps), "
        f"fields {len(fields_out)} (lists {lists}, required {required}); "
        f"names {len(strings)} distinct, {offset} bytes",
        "fields of primitive type: " + ", ".join(f"{p} {prim_use[p]}" for p in PRIMS if prim_use[p]),
        "required at the top level of some kind: " + ", ".join(top_required),
    ]
    stats_lines.extend(summary)

    out = []
    w = out.append
    w("// @generated by tools/gen_builtin_schema.py: do not edit, re-run the script.\n")
    w(f"// Source: PyPI {PACKAGE}=={VERSION}, {MEMBER}\n")
    w(f"// (Kubernetes {K8S_VERSION}), sha256 {digest}.\n")
    w("// Reproducible: running the script again gives these exact bytes.\n")
    w("//\n")
    for line in summary:
        w(f"// {line}\n")
    w("\n")
    w("use super::shape::{Field as F, Kind as K, Object as O};\n\n")
    w(f"/// Type codes below this are primitives (`shape::Prim`), from it on `OBJECTS[code - PRIMS]`.\n")
    w(f"pub(super) const PRIMS: u16 = {len(PRIMS)};\n\n")
    w(f"/// The type code of `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`.\n")
    w(f"pub(super) const OBJECT_META: u16 = {code[('def', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')]};\n\n")
    w("/// Every name (groups, versions, kinds, fields), distinct, sorted, concatenated.\n")
    w("pub(super) static NAMES: &str = concat!(\n")
    line = ""
    for s in strings:
        if len(line) + len(s) > 90:
            w(f"    {rust_str(line)},\n")
            line = ""
        line += s
    w(f"    {rust_str(line)},\n")
    w(");\n\n")
    w(f"/// Where each name ends in `NAMES` (it starts where the one before ends).\n")
    w(f"pub(super) static NAME_ENDS: [u16; {len(ends)}] = [\n")
    for i in range(0, len(ends), 16):
        w("    " + ",".join(str(e) for e in ends[i:i + 16]) + ",\n")
    w("];\n\n")
    w(f"/// Kinds: (group, version, kind) as name indexes, type code; sorted by group, version, kind.\n")
    w(f"pub(super) static KINDS: [K; {len(roots)}] = [\n")
    for g, v, k, name in roots:
        w(f"    K({sid[g]},{sid[v]},{sid[k]},{code[('def', name)]}),\n")
    w("];\n\n")
    w(f"/// Object types: (first field, number of fields, map value type code or u16::MAX, its flags).\n")
    w(f"pub(super) static OBJECTS: [O; {len(objects_out)}] = [\n")
    for i, (first, n, (vt, vf), k) in enumerate(objects_out):
        label = k[1] if k[0] == "def" else "map of " + shape_label(k[1])
        vt = "u16::MAX" if vt == "NONE" else str(vt)
        w(f"    O({first},{n},{vt},{vf}), // {len(PRIMS) + i}: {label}\n")
    w("];\n\n")
    w(f"/// Fields, each object's sorted by name: (name, type code, flags: 1 list of, 2 required).\n")
    w(f"pub(super) static FIELDS: [F; {len(fields_out)}] = [\n")
    for first, n, _, _ in objects_out:
        if n:
            w("    " + ",".join(f"F({a},{b},{c})" for a, b, c in fields_out[first:first + n]) + ",\n")
    w("];\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", help="use this wheel instead of downloading it")
    ap.add_argument("--out", default=OUT, help="the merge tables (builtin_data.rs)")
    ap.add_argument("--shape-out", default=SHAPE_OUT, help="the shape tables (shape_data.rs)")
    ap.add_argument("--check", action="store_true", help="compare with the outputs instead of writing them")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download_wheel(tmp)
        defs, digest = load_definitions(wheel)
    stale = []
    for path, make in ((args.out, emit), (args.shape_out, emit_shapes)):
        stats = []
        text = make(defs, digest, stats)
        print(os.path.basename(path))
        for line in stats:
            print(f"  {line}")
        print(f"  {len(text.encode())} bytes")
        if args.check:
            with open(path, encoding="utf-8") as f:
                if f.read() != text:
                    stale.append(path)
            continue
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    if stale:
        fail(f"out of date: {', '.join(stale)}")


if __name__ == "__main__":
    main()
