#!/usr/bin/env python3
"""Writes a CycloneDX 1.5 SBOM (JSON) of the crates in the krm-merge binary.

Usage: tools/sbom.py [--target TRIPLE] [--created RFC3339] [OUT]   (stdout without OUT)

The crates are those cargo builds for the binary: `cargo tree -e normal` of this package for the
target, which resolves features as a build of the binary does (dev-dependencies left out).
Crates linked into the binary are `required`; crates that only run at build time (proc-macros
and what they alone depend on, found with `-e no-proc-macro`) are `excluded`, as CycloneDX
marks what is not part of the shipped artifact. Each component carries its version, its
Cargo.lock checksum (SHA-256 of the crate file crates.io serves), its license, a package URL
(`pkg:cargo/NAME@VERSION`) and its repository; `dependencies` is the graph cargo resolved.

Why not `cargo cyclonedx`: it reads `cargo metadata`, whose feature resolution is not the one
a build of the binary uses (features dev-dependencies enable leak into it), and it is one more
tool of a few hundred crates to build in CI. `cargo tree` is the resolver's own answer.

Everything comes from Cargo.toml, Cargo.lock and the registry sources cargo has already
fetched (`--locked --offline`): no network.
"""

import argparse
import datetime
import json
import re
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^(\d+)(\S+) v(\S+)(?: \(([^)]*)\))?\t(.*)\t(.*?)(?: \(\*\))?$")


def tree(target, edges):
    """(depth, name, version, local, license, repository) per line of `cargo tree`."""
    out = subprocess.run(
        ["cargo", "tree", "--locked", "--offline", "--package", "krm-merge",
         "--target", target, "--edges", edges, "--prefix", "depth",
         "--format", "{p}\t{l}\t{r}"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            sys.exit(f"sbom.py: cannot read this line of cargo tree: {line!r}")
        depth, name, version, source, lic, repo = m.groups()
        local = source is not None and not source.startswith("proc-macro")
        rows.append((int(depth), name, version, local, lic, repo))
    return rows


def purl(name, version):
    return f"pkg:cargo/{name}@{version}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="x86_64-unknown-linux-gnu")
    ap.add_argument("--created", help="the SBOM's timestamp (default: now, UTC)")
    ap.add_argument("out", nargs="?")
    args = ap.parse_args()

    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    checksums = {(p["name"], p["version"]): p.get("checksum") for p in lock["package"]}
    manifest = tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]

    rows = tree(args.target, "normal")
    linked = {(r[1], r[2]) for r in tree(args.target, "normal,no-proc-macro")}

    components, deps, parents = {}, {}, []
    for depth, name, version, local, lic, repo in rows:
        ref = purl(name, version)
        del parents[depth:]
        if parents:
            deps.setdefault(parents[-1], set()).add(ref)
        parents.append(ref)
        deps.setdefault(ref, set())
        if depth == 0 or ref in components:
            continue
        if local:
            sys.exit(f"sbom.py: {name} {version} is not from a registry; the SBOM names registry crates only")
        c = {
            "type": "library",
            "bom-ref": ref,
            "name": name,
            "version": version,
            "scope": "required" if (name, version) in linked else "excluded",
            "purl": ref,
        }
        checksum = checksums.get((name, version))
        if not checksum:
            sys.exit(f"sbom.py: {name} {version} has no checksum in Cargo.lock")
        c["hashes"] = [{"alg": "SHA-256", "content": checksum}]
        if lic:
            c["licenses"] = [{"expression": lic}]
        if repo:
            c["externalReferences"] = [{"type": "vcs", "url": repo}]
        components[ref] = c

    created = args.created or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    root = purl(manifest["name"], manifest["version"])
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        # The same inputs give the same serial number, so that a rebuild gives the same file.
        "serialNumber": "urn:uuid:" + str(uuid.uuid5(uuid.NAMESPACE_URL, root + "#" + created + "#" + json.dumps(sorted(components)))),
        "version": 1,
        "metadata": {
            "timestamp": created,
            "tools": {"components": [{"type": "application", "name": "tools/sbom.py"}]},
            "component": {
                "type": "application",
                "bom-ref": root,
                "name": manifest["name"],
                "version": manifest["version"],
                "description": manifest.get("description", ""),
                "licenses": [{"expression": manifest["license"]}],
                "purl": root,
            },
        },
        "components": sorted(components.values(), key=lambda c: (c["name"], c["version"])),
        "dependencies": [
            {"ref": ref, "dependsOn": sorted(on)} for ref, on in sorted(deps.items())
        ],
    }
    text = json.dumps(bom, indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
