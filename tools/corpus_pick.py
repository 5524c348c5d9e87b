#!/usr/bin/env python3
"""Picks the corpus of real Kubernetes YAML (tests/data/corpus) out of clones of public repositories.

Usage: tools/corpus_pick.py MIRROR OUT

MIRROR holds one git clone per repository, as MIRROR/<owner>+<name>/repo (a bare repository or
a `.git` directory: only `git ls-tree` and `git show` are used), at least at the revisions named
in PROJECTS. OUT gets one directory per project, OUT/<project>/<path in the repository>, a
SOURCES.md saying where each file came from, and the projects' NOTICE files.

What is picked: the files under the listed directories named *.yaml, *.yml or *.json that hold
resources (a top-level `apiVersion:` and `kind:`; for JSON an object with both), that are not
Helm or Go templates (`{{ .Values }}`, `{{- if }}`; Argo's `{{inputs.parameters.x}}` is data and
stays), not kustomize or kpt build files (kustomization.yaml, Kptfile) and not under a dot
directory. A file over MAX_FILE bytes is trimmed by whole documents: the documents showing an
unusual form (see `odd_forms`) first, then the others in order while they fit, kept in their
original order and byte for byte, separators included; a document never is cut, and one that
alone is over MAX_FILE is left out.
"""

import json
import os
import re
import subprocess
import sys

MAX_FILE = 300_000

# (directory in the corpus, repository, revision, path patterns picked)
PROJECTS = [
    ("kubernetes-examples", "kubernetes/examples", "HEAD", [r""]),
    ("prometheus-operator", "prometheus-operator/prometheus-operator", "HEAD", [r"^example/"]),
    # The bundle of an older release: today's is a 4 MB file of CRDs.
    ("prometheus-operator", "prometheus-operator/prometheus-operator", "v0.40.0", [r"^bundle\.yaml$"]),
    ("argo-workflows", "argoproj/argo-workflows", "HEAD", [r"^examples/", r"^manifests/"]),
    # The release whose controller.yaml has `args: [` closed at the key's column.
    ("tekton-pipeline", "tektoncd/pipeline", "v0.59.0", [r"^config/", r"^examples/v1/"]),
    ("rook", "rook/rook", "HEAD", [r"^deploy/examples/"]),
    ("calico", "projectcalico/calico", "HEAD",
     [r"^manifests/", r"^api/config/crd/", r"^libcalico-go/config/crd/"]),
    ("longhorn", "longhorn/longhorn", "HEAD", [r"^deploy/", r"^examples/"]),
    ("velero", "vmware-tanzu/velero", "HEAD", [r"^config/", r"^examples/", r"^design/CLI/PoC/"]),
    ("opentelemetry-operator", "open-telemetry/opentelemetry-operator", "HEAD",
     [r"^bundle/", r"^config/", r"^tests/e2e-upgrade/", r"^tests/e2e/"]),
    ("argo-cd", "argoproj/argo-cd", "HEAD",
     [r"^manifests/", r"^applicationset/examples/", r"^resource_customizations/"]),
    ("knative-serving", "knative/serving", "HEAD", [r"^config/"]),
    ("gatekeeper", "open-policy-agent/gatekeeper", "HEAD",
     [r"^deploy/", r"^config/", r"^demo/", r"^test/gator/"]),
    ("strimzi", "strimzi/strimzi-kafka-operator", "HEAD", [r"^packaging/install/", r"^packaging/examples/"]),
    ("kustomize", "kubernetes-sigs/kustomize", "HEAD", [r"^examples/"]),
    ("kpt", "kptdev/kpt", "HEAD", [r"^package-examples/"]),
    ("kubeflow-manifests", "kubeflow/manifests", "HEAD", [r"^applications/", r"^common/"]),
    ("ingress-nginx", "kubernetes/ingress-nginx", "HEAD", [r"^deploy/"]),
    ("cert-manager", "cert-manager/cert-manager", "HEAD", [r"^deploy/crds/", r"^deploy/manifests/"]),
    ("flux2", "fluxcd/flux2", "HEAD", [r"^manifests/"]),
]

# Left out: near copies of calico.yaml and of operator-crds.yaml; templates whose values are
# `{{name}}` placeholders (flow mappings as keys: no resource); test inputs made invalid on
# purpose; a chainsaw assertion without a kind.
EXCLUDE = re.compile(
    r"^manifests/(calico-(bpf|policy-only|typha|vxlan)|v1_crd_projectcalico_org)\.yaml$"
    r"|-template\.yaml$|invalid-resources/|smoke-deletion/01-assert\.yaml$"
    r"|(^|/)\.|/templates/|(^|/)charts?/|(^|/)Chart\.ya?ml$|(^|/)values[^/]*\.ya?ml$"
    r"|(^|/)kustomization\.ya?ml$|(^|/)Kustomization$|(^|/)Kptfile$|(^|/)vendor/"
    r"|(^|/)node_modules/|(^|/)testdata/.*golden|openapi|swagger|package(-lock)?\.json$"
    r"|tsconfig|(^|/)schema")
TEMPLATE = re.compile(r"\{\{-|-\}\}|\{\{\s*\.|\{\{\s*(include|template|if|range|end|toYaml|with|define|\$)\b")
# Licences read from each repository (all Apache-2.0 at these revisions).
LICENCE = "Apache-2.0"


def odd_forms(text):
    """A rough look for forms Go's YAML readers take and strict YAML 1.2 does not: a quoted
    scalar whose next line sits at (or left of) its key's column, a flow collection whose
    content or closing bracket does; and CRLF line ends."""
    out = set()
    lines = text.split("\n")
    for i, l in enumerate(lines):
        m = re.match(r"^(\s*)(?:- )?([^\s#\"'][^:#]*?):\s+([\"'\[{])(.*)$", l)
        if not m:
            continue
        ind, q, rest = len(m.group(1)), m.group(3), m.group(4)
        if q in "\"'":
            closed = q in re.sub(r"\\.", "", rest) if q == '"' else "'" in rest.replace("''", "")
            if closed:
                continue
            for nl in lines[i + 1:]:
                if nl.strip() == "":
                    continue
                if len(nl) - len(nl.lstrip(" ")) <= ind:
                    out.add("quoted-continuation-at-key-indent")
                break
        else:
            close = "]" if q == "[" else "}"
            if close in rest:
                continue
            for nl in lines[i + 1:i + 200]:
                if nl.strip() == "" or nl.lstrip().startswith("#"):
                    continue
                if len(nl) - len(nl.lstrip(" ")) <= ind:
                    out.add("flow-close-at-key-indent" if nl.strip().startswith(close)
                            else "flow-content-at-key-indent")
                    break
                if close in nl:
                    break
    if "\r\n" in text:
        out.add("crlf")
    return out


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), capture_output=True).stdout


def split_docs(text):
    """The text cut before each line that starts a document (`---` at column 0); the first
    piece may be what comes before the first `---`."""
    return [p for p in re.split(r"(?m)^(?=---(?:[ \t\r]|$))", text) if p != ""]


def is_resource_file(path, text):
    if path.endswith(".json"):
        try:
            v = json.loads(text)
        except ValueError:
            return False
        return isinstance(v, dict) and "kind" in v and "apiVersion" in v
    return bool(re.search(r"(?m)^kind:\s*\S", text) and re.search(r"(?m)^apiVersion:\s*\S", text))


def trim(text):
    """The text, or whole documents of it within MAX_FILE; with (kept, total) when trimmed."""
    if len(text.encode()) <= MAX_FILE:
        return text, None
    docs = split_docs(text)
    keep, size = [False] * len(docs), 0
    for i in sorted(range(len(docs)), key=lambda i: (0 if odd_forms(docs[i]) else 1, i)):
        n = len(docs[i].encode())
        if size + n <= MAX_FILE:
            keep[i], size = True, size + n
    return "".join(d for d, k in zip(docs, keep) if k), (sum(keep), len(docs))


def main():
    mirror, out = sys.argv[1], sys.argv[2]
    rows = []
    for name, repo_name, rev, include in PROJECTS:
        repo = os.path.join(mirror, repo_name.replace("/", "+"), "repo")
        commit = git(repo, "rev-parse", rev).decode().strip()
        count, total, trimmed = 0, 0, []
        for f in git(repo, "ls-tree", "-r", "--name-only", rev).decode().split("\n"):
            if not f.endswith((".yaml", ".yml", ".json")) or EXCLUDE.search(f):
                continue
            if not any(re.search(r, f) for r in include):
                continue
            raw = git(repo, "show", f"{rev}:{f}")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if not raw or TEMPLATE.search(text) or not is_resource_file(f, text):
                continue
            if f.endswith(".json") and len(raw) > MAX_FILE:
                continue
            kept, how = trim(text)
            if not kept.strip() or not is_resource_file(f, kept):
                continue
            dst = os.path.join(out, name, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as fh:
                fh.write(kept.encode("utf-8"))
            count, total = count + 1, total + len(kept.encode())
            if how:
                trimmed.append((f, len(raw), how))
        notice = git(repo, "show", f"{rev}:NOTICE")
        if notice:
            with open(os.path.join(out, name, "NOTICE"), "wb") as fh:
                fh.write(notice)
        rows.append((name, repo_name, rev, commit, include, count, total, trimmed))
        print(f"{name} ({rev}): {count} files, {total / 1e6:.2f} MB, {len(trimmed)} trimmed", file=sys.stderr)
    write_sources(out, rows)


def write_sources(out, rows):
    with open(os.path.join(out, "SOURCES.md"), "w") as f:
        f.write(
            "# Where the corpus comes from\n\n"
            "Each file `<project>/<path>` is the file `<path>` of the repository below, at the commit\n"
            "below, byte for byte, picked and trimmed by `tools/corpus_pick.py` (which says what it\n"
            "picks). Every repository is under the Apache License 2.0 (`LICENSE-APACHE-2.0` here);\n"
            "a project's `NOTICE`, where it has one, is in its directory.\n\n"
            "| directory | repository | revision | commit | paths picked | files | bytes | licence |\n"
            "|---|---|---|---|---|---:|---:|---|\n")
        for name, repo, rev, commit, include, count, total, _ in rows:
            paths = ", ".join(f"`{p.lstrip('^')}`" if p else "all" for p in include)
            f.write(f"| `{name}/` | github.com/{repo} | {rev} | `{commit}` | {paths} | {count} | {total:,} | {LICENCE} |\n")
        f.write("\n## Trimmed files\n\n"
                f"Files over {MAX_FILE:,} bytes keep whole documents only (the rest of the file is as upstream):\n\n"
                "| file | upstream bytes | documents kept |\n|---|---:|---:|\n")
        for name, _, _, _, _, _, _, trimmed in rows:
            for path, size, (kept, docs) in trimmed:
                f.write(f"| `{name}/{path}` | {size:,} | {kept} of {docs} |\n")


if __name__ == "__main__":
    main()
