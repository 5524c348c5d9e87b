#!/usr/bin/env python3
"""Generate src/schema/builtin_data.rs: the merge metadata of the built-in Kubernetes kinds.

Usage:
    python3 tools/gen_builtin_schema.py            # downloads the wheel with pip, writes the file
    python3 tools/gen_builtin_schema.py --wheel W  # use an already downloaded wheel (offline)
    python3 tools/gen_builtin_schema.py --check    # exit 1 if the committed file is not what we'd write

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

Checking the tables against the run-time loader
-----------------------------------------------
src/schema/tests.rs `builtin_tables_match_the_runtime_loader` (ignored by default) loads the same
_definitions.json through the Rust OpenAPI loader and checks that every field reachable from every
kind gets the same metadata as from these tables, so the two implementations of the rule and the
pruning cannot drift apart unnoticed.
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
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "schema", "builtin_data.rs")

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
    w(f"/// Kubernetes release the tables describe.\npub(super) const K8S_VERSION: &str = {rust_str(K8S_VERSION)};\n\n")
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", help="use this wheel instead of downloading it")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download_wheel(tmp)
        defs, digest = load_definitions(wheel)
    stats = []
    text = emit(defs, digest, stats)
    for line in stats:
        print(line)
    print(f"{len(text.encode())} bytes")
    if args.check:
        with open(args.out, encoding="utf-8") as f:
            if f.read() != text:
                fail(f"{args.out} is out of date")
        return
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


if __name__ == "__main__":
    main()
