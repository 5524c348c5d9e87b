#!/usr/bin/env python3
"""Whole-process benchmark: krm-merge against `kubectl kustomize` on generated packages.

For each size N it generates a package of N resources (examples/gen_package.rs: Deployments,
Services and ConfigMaps with comments, quoting, flow values and block scalars), and applies the
same 20 patches (strategic merges through every kind of target, JSON 6902 operations, patches
found by identity) with

  * krm-merge --config fn.yaml resources.yaml       (the standalone filter), and
  * kubectl kustomize DIR                            (the same patches under `patches:`),

reporting median wall time, the ratio, and peak RSS (from /usr/bin/time). It also reports the
identity round trip (a config whose patch selects nothing) and start-up on a tiny input.

Usage: tools/bench.py [--runs R] [--kustomize-max N] [--bin DIR] [SIZE ...]
                                                (default sizes 100 1000 10000 20000 100000)
After the table it prints the speed goals, each met or not, from the same run: the identity
round trip at least 80 MB/s on the package nearest 26 MB with peak RSS under 4x its input,
10,000 resources x 20 patches under 0.5 s, 1,000 x 20 at least 150x faster than kustomize,
cost linear (the largest size's time per resource within 1.25x of the least per-resource
time of the sizes from 1,000 up), start-up under 5 ms. A goal whose size was not run is
skipped.
With --bin DIR the binaries are DIR/krm-merge, DIR/gen_package and DIR/parse_events, as built
from another commit (to measure a baseline in the same session), and nothing is built.
Needs: cargo, /usr/bin/time; kubectl for the comparison (skipped when absent).

On YAML we did not write:

  tools/bench.py --foreign [--runs R]         the corpus of real manifests (tests/data/corpus)
                                               and two generators of other tools' YAML
                                               (tools/gen_foreign.py: PyYAML's safe_dump, and
                                               `kubectl get -o yaml`'s List), beside
                                               examples/gen_package.rs: MB/s of the identity
                                               round trip, 10,000 x 20 patches, 1,000 x 20
                                               against kubectl kustomize, a ResourceList on
                                               stdin against the same stream, the fast
                                               reader's share of the bytes, and each large
                                               corpus file's reading speed; then its goals,
                                               each met or not (see `foreign_goals`).

Two more measurements (merges at scale, and memory):

  tools/bench.py --scaling [--cap S] [N ...]   each merge and patch at n elements (default 10k,
                                               100k, 1M; examples/merge_scaling.rs): seconds,
                                               and the growth factor from the size before
  tools/bench.py --memory MB [--limit KIB]     a generated stream of about MB megabytes through
                                               the 20 patches, peak RSS and peak address space
                                               as multiples of the input; with --limit, under
                                               `ulimit -v KIB` (the issue's 150 MB under 700000)

A package upgrade:

  tools/bench.py --upgrade [--runs R] [N ...]  `krm-merge merge3 ORIGINAL/ UPDATED/ LOCAL/` on
                                               three directories of N generated resources each
                                               (default 1,000, 10,000, 20,000; one file a
                                               resource, 100 files a directory): UPDATED
                                               changes every 10th resource, deletes 1% and adds
                                               1%; LOCAL edits every 7th (some conflict, warned).
                                               Median seconds, CPU seconds and peak RSS,
                                               printed, with --output DIR and as three
                                               streams; the goals:
                                               10,000 under a second, cost linear (the largest
                                               size's CPU per resource within 1.25x of the
                                               least).
"""

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "krm-merge")
GEN = os.path.join(ROOT, "target", "release", "examples", "gen_package")
EVENTS = os.path.join(ROOT, "target", "release", "examples", "parse_events")
SCALING = os.path.join(ROOT, "target", "release", "examples", "merge_scaling")
READ_SPEED = os.path.join(ROOT, "target", "release", "examples", "read_speed")
FAST_CHECK = os.path.join(ROOT, "target", "release", "examples", "fast_check")
CORPUS = os.path.join(ROOT, "tests", "data", "corpus")
GEN_FOREIGN = os.path.join(ROOT, "tools", "gen_foreign.py")

# The 20 patches, written once and given to both tools. Names refer to the generated package:
# Deployments app-<i> (i % 4 in 0, 1), Services svc-<i> (i % 4 == 2), ConfigMaps config-<i>
# (i % 4 == 3), in namespaces team-<i % 17>.
PATCHES = [
    # Strategic merges through targets.
    {"target": {"kind": "Deployment"}, "patch": "metadata:\n  labels:\n    env: prod\n"},
    {"target": {"kind": "Deployment", "labelSelector": "tier=backend"},
     "patch": "spec:\n  revisionHistoryLimit: 5\n"},
    {"target": {"kind": "Deployment", "namespace": "team-(1|2|3)"},
     "patch": "spec:\n  replicas: 4\n"},
    {"target": {"kind": "Deployment", "name": "app-1.*"},
     "patch": "spec:\n  template:\n    spec:\n      containers:\n      - name: c0\n        env:\n        - name: EXTRA\n          value: \"1\"\n"},
    {"target": {"kind": "Deployment", "name": "app-2.*"},
     "patch": "spec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: registry.example.com/proxy:2.1\n"},
    {"target": {"kind": "Service"}, "patch": "metadata:\n  annotations:\n    team: platform\n"},
    {"target": {"kind": "Service", "namespace": "team-5"}, "patch": "spec:\n  type: NodePort\n"},
    {"target": {"kind": "ConfigMap"}, "patch": "data:\n  LOG_LEVEL: debug\n"},
    {"target": {"kind": "ConfigMap", "name": "config-3"}, "patch": "data:\n  FEATURE_X: \"off\"\n"},
    {"target": {"version": "v1", "kind": "Service|ConfigMap"}, "patch": "metadata:\n  labels:\n    managed-by: bench\n"},
    {"target": {"kind": "Deployment", "labelSelector": "app.kubernetes.io/name in (app-4,app-5,app-8)"},
     "patch": "spec:\n  template:\n    spec:\n      containers:\n      - name: c1\n        resources:\n          limits:\n            cpu: \"1\"\n"},
    {"target": {"kind": "Deployment", "name": "app-9.*"},
     "patch": "spec:\n  template:\n    spec:\n      containers:\n      - name: c0\n        ports:\n        - containerPort: 9090\n          name: metrics\n"},
    # JSON 6902.
    {"type": "json6902", "target": {"kind": "Deployment", "name": "app-4.*"},
     "patch": "- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: registry.example.com/team/app:2.0.0\n"},
    {"type": "json6902", "target": {"kind": "Deployment", "name": "app-5.*"},
     "patch": "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --debug\n"},
    {"type": "json6902", "target": {"kind": "Service", "name": "svc-1.*"},
     "patch": "- op: remove\n  path: /spec/ports/1\n"},
    {"type": "json6902", "target": {"kind": "ConfigMap", "name": "config-7.*"},
     "patch": "- op: add\n  path: /data/NEW_KEY\n  value: new\n"},
    # Found by identity (no target).
    {"patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-0\n  namespace: team-0\nspec:\n  replicas: 10\n"},
    {"patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-1\n  namespace: team-1\nspec:\n  paused: true\n"},
    {"patch": "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-2\n  namespace: team-2\nspec:\n  sessionAffinity: ClientIP\n"},
    {"patch": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-3\n  namespace: team-3\ndata:\n  RETRIES: \"5\"\n"},
]


def smp_text(p):
    """A targeted strategic-merge patch as kustomize needs it: with a kind and a name, which it
    ignores (and so does krm-merge, which keeps the target's identity)."""
    text = p["patch"]
    if p.get("type") == "json6902" or "target" not in p:
        return text
    if text.startswith("metadata:\n"):
        text = "metadata:\n  name: any\n" + text[len("metadata:\n"):]
    else:
        text = "metadata:\n  name: any\n" + text
    return "apiVersion: v1\nkind: Any\n" + text


def yaml_patch_entry(p, indent, kustomize):
    """One `patches:` entry, as YAML text with `indent` spaces."""
    pad = " " * indent
    lines = []
    first = True

    def line(s):
        nonlocal first
        lines.append((pad + "- " if first else pad + "  ") + s)
        first = False

    if "type" in p and not kustomize:
        line(f"type: {p['type']}")
    if "target" in p:
        t = ", ".join(f"{k}: \"{v}\"" for k, v in p["target"].items())
        line(f"target: {{{t}}}")
    if not kustomize:
        line("options: {newListItems: prepend, inferMergeKeys: false}")
    line("patch: |")
    for l in smp_text(p).splitlines():
        lines.append(pad + "    " + l)
    return "\n".join(lines)


def generator_cmd(gen, n):
    """The command writing `n` resources of generator `gen` (gen_package, pyyaml, kubectl)."""
    if gen == "gen_package":
        return [GEN, str(n)]
    return [sys.executable, GEN_FOREIGN, gen, str(n)]


def write_package(d, n, patches, gen="gen_package"):
    with open(os.path.join(d, "resources.yaml"), "w") as f:
        subprocess.run(generator_cmd(gen, n), stdout=f, check=True)
    with open(os.path.join(d, "kustomization.yaml"), "w") as f:
        f.write("resources:\n- resources.yaml\npatches:\n")
        f.write("\n".join(yaml_patch_entry(p, 0, True) for p in patches) + "\n")
    with open(os.path.join(d, "fn.yaml"), "w") as f:
        f.write("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: bench\nspec:\n  patches:\n")
        f.write("\n".join(yaml_patch_entry(p, 2, False) for p in patches) + "\n")
    with open(os.path.join(d, "none.yaml"), "w") as f:
        f.write("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: none\nspec:\n"
                "  patches:\n  - target: {kind: Nothing}\n    patch: 'metadata: {labels: {a: b}}'\n")
    return os.path.getsize(os.path.join(d, "resources.yaml"))


def measure(cmd, runs, cwd=None):
    """Median wall seconds and max peak RSS (KiB) over `runs` runs."""
    walls, rss = [], []
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - t)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
        rss.append(int(p.stderr.strip().splitlines()[-1]))
    return statistics.median(walls), max(rss)


def scaling(sizes, cap):
    """examples/merge_scaling over `sizes`: a Markdown table of seconds per case and size, with
    the factor over the previous size (linear: about the size factor; quadratic: its square)."""
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "merge_scaling"],
                   cwd=ROOT, check=True)
    p = subprocess.run([SCALING, "--cap", str(cap)] + [str(n) for n in sizes],
                       stdout=subprocess.PIPE, text=True, check=True)
    times = {}
    for line in p.stdout.splitlines()[1:]:
        f = line.split("\t")
        if len(f) == 4:
            times.setdefault(f[0], {})[int(f[1])] = float(f[3])
        elif len(f) == 2:
            times.setdefault(f[0], {})
    print("| case | " + " | ".join(f"{n:,}" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for case, row in times.items():
        cells, prev = [], None
        for n in sizes:
            t = row.get(n)
            if t is None:
                cells.append("(over the cap)" if prev is not None else "—")
                prev = None
                continue
            grow = f" ({t / prev:.1f}x)" if prev else ""
            cells.append(f"{t:.3f} s{grow}")
            prev = t if t > 0 else None
        print(f"| {case} | " + " | ".join(cells) + " |")


def peak(cmd, limit_kib=None):
    """Runs `cmd` (optionally under `ulimit -v`), sampling /proc: exit code, peak address space
    (VmPeak) and peak RSS (VmHWM) in KiB, and stderr's last line."""
    if limit_kib:
        cmd = ["sh", "-c", f'ulimit -v {limit_kib}; exec "$@"', "sh"] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    vm = rss = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmPeak:"):
                        vm = max(vm, int(line.split()[1]))
                    elif line.startswith("VmHWM:"):
                        rss = max(rss, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.02)
    err = p.stderr.read().strip().splitlines()
    return p.returncode, vm, rss, err[-1] if err else ""


def memory(mb, limit):
    """A stream of about `mb` MB through the 20 patches: peak memory against the input."""
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "krm-merge",
                    "--example", "gen_package"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as d:
        # gen_package writes about 1,380 bytes a resource.
        size = write_package(d, max(1, int(mb * 1e6 / 1380)), PATCHES)
        res = os.path.join(d, "resources.yaml")
        code, vm, rss, err = peak([BIN, "--config", os.path.join(d, "fn.yaml"), res], limit)
        kib = size / 1024
        under = f" under ulimit -v {limit}" if limit else ""
        print(f"input {size / 1e6:.1f} MB{under}: exit {code}, peak RSS {rss / 1024:.0f} MiB "
              f"({rss / kib:.2f}x the input), peak address space {vm / 1024:.0f} MiB "
              f"({vm / kib:.2f}x){': ' + err if code else ''}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sizes", nargs="*", type=int, default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kustomize-max", type=int, default=2000,
                    help="largest package given to kustomize (it takes minutes beyond)")
    ap.add_argument("--scaling", action="store_true", help="the merges and patches at n elements")
    ap.add_argument("--cap", type=float, default=60, help="--scaling: stop a case past this many seconds")
    ap.add_argument("--memory", type=float, metavar="MB", help="peak memory on a stream of MB megabytes")
    ap.add_argument("--limit", type=int, metavar="KIB", help="--memory: under ulimit -v KIB")
    ap.add_argument("--upgrade", action="store_true", help="merge3 of three package directories")
    ap.add_argument("--bin", metavar="DIR", help="take the binaries from DIR instead of building them")
    ap.add_argument("--foreign", action="store_true",
                    help="the corpus and the PyYAML and kubectl generators (see above)")
    args = ap.parse_args()
    if args.foreign:
        return foreign(args.runs)
    if args.bin:
        global BIN, GEN, EVENTS
        BIN, GEN, EVENTS = (os.path.join(args.bin, b) for b in ("krm-merge", "gen_package", "parse_events"))
    if args.upgrade:
        return upgrade(args.sizes or [1_000, 10_000, 20_000], args.runs, build=not args.bin)
    if args.scaling:
        return scaling(args.sizes or [10_000, 100_000, 1_000_000], args.cap)
    if args.memory:
        return memory(args.memory, args.limit)
    args.sizes = args.sizes or [100, 1000, 10000, 20000, 100000]
    if not args.bin:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "krm-merge",
                        "--example", "gen_package", "--example", "parse_events"], cwd=ROOT, check=True)
    kubectl = shutil.which("kubectl")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            d = os.path.join(tmp, f"pkg{n}")
            os.makedirs(d)
            size = write_package(d, n, PATCHES)
            res = os.path.join(d, "resources.yaml")
            krm_t, krm_rss = measure([BIN, "--config", os.path.join(d, "fn.yaml"), res], args.runs)
            id_t, id_rss = measure([BIN, "--config", os.path.join(d, "none.yaml"), res], args.runs)
            ev_t, _ = measure([EVENTS, res], args.runs)
            k_t = k_rss = None
            if kubectl and n <= args.kustomize_max:
                k_t, k_rss = measure([kubectl, "kustomize", d], max(1, min(args.runs, 3)))
            rows.append((n, size, krm_t, krm_rss, k_t, k_rss, id_t, id_rss, ev_t))
            print(f"done {n}", file=sys.stderr)
        tiny = os.path.join(tmp, "pkg100", "resources.yaml") if 100 in args.sizes else None
        startup = None
        if tiny:
            one = os.path.join(tmp, "one.yaml")
            with open(one, "w") as f:
                f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n")
            startup, _ = measure([BIN, "--config", os.path.join(tmp, "pkg100", "none.yaml"), one], 21)
    mb = lambda b: b / 1e6
    print("| resources | input | krm-merge (20 patches) | kubectl kustomize | ratio | krm-merge peak RSS | identity round trip | granit-parser events only |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, size, kt, kr, ct, cr, it, ir, et in rows:
        kust = f"{ct:.2f} s ({cr / 1024:.0f} MB)" if ct else "—"
        ratio = f"{ct / kt:.0f}x" if ct else "—"
        print(f"| {n:,} | {mb(size):.1f} MB | {kt:.3f} s | {kust} | {ratio} | {kr / 1024:.0f} MB ({kr * 1024 / size:.1f}x) "
              f"| {it:.3f} s ({mb(size) / it:.1f} MB/s) | {et:.3f} s ({mb(size) / et:.1f} MB/s) |")
    if startup is not None:
        print(f"\nStart-up on a one-resource input: {startup * 1000:.1f} ms (median of 21).")
    goals(rows, startup)
    in_place(runs=max(1, min(args.runs, 3))) if 20000 in args.sizes else None


def goals(rows, startup):
    """The speed goals against this run's rows, each printed as met or not."""
    by_n = {r[0]: r for r in rows}
    out = []

    def goal(ok, text):
        out.append(f"- {'met' if ok else 'NOT met'}: {text}")

    near = min(rows, key=lambda r: abs(r[1] - 26e6))
    if abs(near[1] - 26e6) < 13e6:
        n, size, _, _, _, _, it, ir = near[:8]
        mbs = size / 1e6 / it
        goal(mbs >= 80 and ir * 1024 < 4 * size,
             f"identity round trip at {n:,} resources ({size / 1e6:.1f} MB): {mbs:.0f} MB/s "
             f"(goal 80), peak RSS {ir * 1024 / size:.1f}x the input (goal under 4x)")
    if 10000 in by_n:
        t = by_n[10000][2]
        goal(t < 0.5, f"10,000 resources x 20 patches: {t:.3f} s (goal under 0.5 s)")
    if 1000 in by_n and by_n[1000][4]:
        kt, ct = by_n[1000][2], by_n[1000][4]
        goal(ct / kt >= 150, f"1,000 x 20: {ct / kt:.0f}x faster than kubectl kustomize (goal 150x)")
    big = [r for r in rows if r[0] >= 1000]
    if len(big) >= 2:
        per = [(r[0], r[2] / r[0]) for r in big]
        least = min(p for _, p in per[:-1])
        n, last = per[-1]
        goal(last <= 1.25 * least,
             f"linear cost: {last * 1e6:.1f} us a resource at {n:,} against {least * 1e6:.1f} at "
             f"the best smaller size ({last / least:.2f}x; goal at most 1.25x)")
    if startup is not None:
        goal(startup < 0.005, f"start-up {startup * 1000:.1f} ms (goal under 5 ms)")
    if out:
        print("\nThe speed goals, this run:\n" + "\n".join(out))


# ----- foreign YAML ----------------------------------------------------------------------------

PACKAGE_MB = 26
# A ResourceList on stdin counts as fast as the same resources as a stream when its median
# time is within this factor of the stream's (medians of --runs runs on a busy machine move by
# a few percent from run to run).
RL_MARGIN = 1.10
# Corpus files smaller than this are left out of the per-file speeds: their reading time is
# a few microseconds, where fixed costs per call, not the reader, decide the figure.
PER_FILE_MIN = 16 * 1024


def corpus_files():
    out = []
    for d, dirs, files in os.walk(CORPUS):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        if d == CORPUS:
            continue
        out += [os.path.join(d, f) for f in sorted(files)
                if f.endswith((".yaml", ".yml", ".json")) and not f.startswith(".")]
    return sorted(out)


def corpus_refused(tmp):
    """The corpus files krm-merge refuses (the error names them): one run a project."""
    none = os.path.join(tmp, "none.yaml")
    refused = set()
    for project in sorted(os.listdir(CORPUS)):
        d = os.path.join(CORPUS, project)
        if not os.path.isdir(d) or project.startswith("."):
            continue
        p = subprocess.run([BIN, "--config", none, "--check", d], capture_output=True, text=True)
        for line in p.stderr.splitlines():
            if line.startswith("krm-merge: error: ") and ": malformed YAML" in line:
                refused.add(line[len("krm-merge: error: "):].split(": malformed YAML")[0])
    return refused


def corpus_stream(tmp, files):
    """The files as one stream, joined as the standalone filter joins files."""
    path = os.path.join(tmp, "corpus.yaml")
    with open(path, "w", encoding="utf-8", newline="") as out:
        first = True
        for f in files:
            with open(f, encoding="utf-8", newline="") as fh:
                text = fh.read().lstrip("\ufeff")
            if not text.strip():
                continue
            if not first and not text.startswith("---"):
                out.write("---\n")
            out.write(text if text.endswith("\n") else text + "\n")
            first = False
    return path


def resource_list(stream_path, config_path, out_path):
    """The documents of a stream as the items of a ResourceList (each line indented under its
    `- `), with the config file as its functionConfig."""
    with open(stream_path, encoding="utf-8", newline="") as f:
        text = f.read()
    with open(out_path, "w", encoding="utf-8", newline="") as out:
        out.write("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
        first = True
        for line in text.splitlines(keepends=True):
            if line.rstrip("\r\n") == "---":
                first = True
                continue
            if line.strip() == "":
                out.write(line)
                continue
            if first and line.lstrip().startswith("#"):
                out.write("  " + line)
                continue
            out.write(("- " if first else "  ") + line)
            first = False
        out.write("functionConfig:\n")
        with open(config_path) as c:
            for line in c:
                out.write("  " + line)


def measure_stdin(cmd, path, runs):
    """Median wall seconds of `cmd` reading `path` on stdin."""
    walls = []
    for _ in range(runs):
        with open(path, "rb") as f:
            t = time.perf_counter()
            p = subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            walls.append(time.perf_counter() - t)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} < {path} failed:\n{p.stderr[-2000:]}")
    return statistics.median(walls)


def coverage(paths):
    """(fast bytes, total bytes) over `paths` from `fast_check --coverage`, or None where that
    example has no such option."""
    if not os.path.exists(FAST_CHECK):
        return None
    fast = total = 0
    for i in range(0, len(paths), 500):
        p = subprocess.run([FAST_CHECK, "--coverage"] + paths[i:i + 500], capture_output=True, text=True)
        rows = [l.split(maxsplit=2) for l in p.stdout.splitlines()]
        rows = [r for r in rows if len(r) == 3 and r[0].isdigit() and r[1].isdigit()]
        if p.returncode != 0 or not rows:
            return None
        fast += sum(int(r[0]) for r in rows)
        total += sum(int(r[1]) for r in rows)
    return fast, total


def read_speed(path, runs=5):
    """In-process reading speed (MB/s) of a file: examples/read_speed's `parse_each`."""
    p = subprocess.run([READ_SPEED, path, str(runs)], capture_output=True, text=True,
                       env={**os.environ, "ONLY": "tree"})
    if p.returncode != 0:
        return None
    for line in p.stdout.splitlines():
        if "MB/s" in line:
            return float(line.split("MB/s")[0].split()[-1])
    return None


def foreign(runs):
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "krm-merge", "--example", "gen_package",
                    "--example", "read_speed"], cwd=ROOT, check=True)
    have_cov = subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "fast_check"],
                              cwd=ROOT).returncode == 0
    kubectl = shutil.which("kubectl")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        write_package(tmp, 1, PATCHES)  # none.yaml, fn.yaml
        # The corpus as one stream (the files krm-merge reads).
        files = corpus_files()
        refused = corpus_refused(tmp)
        readable = [f for f in files if f not in refused]
        stream = corpus_stream(tmp, readable)
        size = os.path.getsize(stream)
        it, irss = measure([BIN, "--config", os.path.join(tmp, "none.yaml"), stream], runs)
        cov = coverage(files) if have_cov else None
        per_file = []
        for f in readable:
            if os.path.getsize(f) >= PER_FILE_MIN:
                mbs = read_speed(f)
                if mbs is not None:
                    per_file.append((mbs, os.path.relpath(f, CORPUS)))
        rows["corpus"] = dict(size=size, n=len(readable), refused=len(refused), identity=it, rss=irss,
                              coverage=cov, per_file=sorted(per_file))
        print(f"done corpus ({len(readable)} files read, {len(refused)} refused)", file=sys.stderr)
        for gen in ("gen_package", "pyyaml", "kubectl"):
            r = rows[gen] = {}
            # Bytes a resource, then the package nearest 26 MB.
            d1 = os.path.join(tmp, f"{gen}-1000")
            os.makedirs(d1)
            per = write_package(d1, 1000, PATCHES, gen) / 1000
            n26 = int(PACKAGE_MB * 1e6 / per)
            d26 = os.path.join(tmp, f"{gen}-26")
            os.makedirs(d26)
            size = write_package(d26, n26, PATCHES, gen)
            res26 = os.path.join(d26, "resources.yaml")
            r.update(n26=n26, size=size)
            r["identity"], r["rss"] = measure([BIN, "--config", os.path.join(d26, "none.yaml"), res26], runs)
            r["stream"], _ = measure([BIN, "--config", os.path.join(d26, "fn.yaml"), res26], runs)
            rl = os.path.join(d26, "rl.yaml")
            resource_list(res26, os.path.join(d26, "fn.yaml"), rl)
            r["rl"] = measure_stdin([BIN], rl, runs)
            r["read_speed"] = read_speed(res26)
            r["coverage"] = coverage([res26]) if have_cov else None
            os.remove(rl)
            d10 = os.path.join(tmp, f"{gen}-10000")
            os.makedirs(d10)
            r["size10k"] = write_package(d10, 10000, PATCHES, gen)
            r["p10k"], _ = measure([BIN, "--config", os.path.join(d10, "fn.yaml"),
                                    os.path.join(d10, "resources.yaml")], runs)
            shutil.rmtree(d10)
            r["size1k"] = os.path.getsize(os.path.join(d1, "resources.yaml"))
            r["p1k"], _ = measure([BIN, "--config", os.path.join(d1, "fn.yaml"),
                                   os.path.join(d1, "resources.yaml")], runs)
            r["kust1k"] = measure([kubectl, "kustomize", d1], max(1, min(runs, 3)))[0] if kubectl else None
            shutil.rmtree(d26)
            print(f"done {gen}", file=sys.stderr)
    foreign_table(rows)
    foreign_goals(rows)


def pct(cov):
    return f"{100 * cov[0] / cov[1]:.1f}%" if cov and cov[1] else "not available"


def foreign_table(rows):
    c = rows["corpus"]
    print(f"Corpus (tests/data/corpus): {c['n']:,} files krm-merge reads as one stream of "
          f"{c['size'] / 1e6:.1f} MB ({c['refused']} files it refuses left out): identity round trip "
          f"{c['identity']:.3f} s ({c['size'] / 1e6 / c['identity']:.0f} MB/s), peak RSS "
          f"{c['rss'] / 1024:.0f} MB; fast-path coverage (all files): {pct(c['coverage'])}.")
    pf = c["per_file"]
    if pf:
        print(f"Per corpus file of {PER_FILE_MIN // 1024} KB and more ({len(pf)} files), reading in "
              f"process (read_speed, parse_each): slowest {pf[0][0]:.0f} MB/s ({pf[0][1]}), median "
              f"{pf[len(pf) // 2][0]:.0f} MB/s, fastest {pf[-1][0]:.0f} MB/s. The five slowest: "
              + "; ".join(f"{m:.0f} MB/s {p}" for m, p in pf[:5]) + ".")
    print()
    print("| input | 26 MB package | identity round trip | reading in process | 10,000 x 20 patches "
          "| 1,000 x 20: krm-merge / kubectl kustomize | ResourceList on stdin / stream (26 MB, 20 patches) "
          "| fast-path coverage |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for gen in ("gen_package", "pyyaml", "kubectl"):
        r = rows[gen]
        mb = r["size"] / 1e6
        kust = (f"{r['p1k']:.3f} s / {r['kust1k']:.2f} s ({r['kust1k'] / r['p1k']:.0f}x)"
                if r["kust1k"] else f"{r['p1k']:.3f} s / —")
        rs = f"{r['read_speed']:.0f} MB/s" if r["read_speed"] else "—"
        print(f"| {gen} | {r['n26']:,} resources, {mb:.1f} MB | {r['identity']:.3f} s "
              f"({mb / r['identity']:.0f} MB/s) | {rs} | {r['p10k']:.3f} s ({r['size10k'] / 1e6:.1f} MB) "
              f"| {kust} ({r['size1k'] / 1e6:.1f} MB) | {r['rl']:.3f} s / {r['stream']:.3f} s "
              f"({r['rl'] / r['stream']:.2f}x) | {pct(r['coverage'])} |")


def foreign_goals(rows):
    """The goals on YAML we did not write, each met or not in this run."""
    out = []

    def goal(ok, text):
        out.append(f"- {'met' if ok else 'NOT met'}: {text}")

    c = rows["corpus"]
    if c["coverage"]:
        share = c["coverage"][0] / c["coverage"][1]
        goal(share >= 0.99, f"the fast reader reads {100 * share:.1f}% of the corpus's bytes (goal 99%)")
    else:
        out.append("- not measured: fast-path coverage (examples/fast_check has no --coverage here)")
    gen_rs = rows["gen_package"]["read_speed"]
    if c["per_file"] and gen_rs:
        slow = [(m, p) for m, p in c["per_file"] if m < gen_rs / 2]
        goal(not slow, f"no corpus file ({PER_FILE_MIN // 1024} KB and more) read below half of the "
                       f"generator's {gen_rs:.0f} MB/s: {len(slow)} below"
             + (" (" + ", ".join(f"{p} {m:.0f} MB/s" for m, p in slow[:5]) + ")" if slow else ""))
    mbs = c["size"] / 1e6 / c["identity"]
    goal(mbs >= 100, f"identity round trip on the corpus as one stream: {mbs:.0f} MB/s (goal 100)")
    for gen in ("gen_package", "pyyaml", "kubectl"):
        r = rows[gen]
        mbs = r["size"] / 1e6 / r["identity"]
        goal(mbs >= 100, f"{gen}: identity round trip on {r['size'] / 1e6:.1f} MB: {mbs:.0f} MB/s (goal 100)")
        goal(r["p10k"] < 0.5, f"{gen}: 10,000 x 20 patches ({r['size10k'] / 1e6:.1f} MB): {r['p10k']:.3f} s "
                              f"(goal under 0.5 s)")
        if r["kust1k"]:
            ratio = r["kust1k"] / r["p1k"]
            goal(ratio >= 150, f"{gen}: 1,000 x 20: {ratio:.0f}x faster than kubectl kustomize (goal 150x)")
        goal(r["rl"] <= RL_MARGIN * r["stream"],
             f"{gen}: a ResourceList on stdin {r['rl']:.3f} s against the stream's {r['stream']:.3f} s "
             f"({r['rl'] / r['stream']:.2f}x; goal within {RL_MARGIN:.2f}x, medians of the runs)")
    print("\nThe goals on foreign YAML, this run:\n" + "\n".join(out))


def in_place(n=20000, runs=3, per_dir=100):
    """Write-back's cost: the package of `n` generated resources, one file each (`per_dir` files
    to a directory), through the 20 patches, printed (`> /dev/null`) and written in place
    (`--in-place`, on a fresh copy each run; the copy is not timed), and the file system's floor
    (as many temporaries written and renamed over their files by this script, nothing synced).
    Prints the medians and the goal: in place within 3x of printing it (write-back syncs once
    per file system, not once per file)."""
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "krm-merge",
                    "--example", "gen_package"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "target")) as tmp:
        write_package(tmp, n, PATCHES)
        pristine = os.path.join(tmp, "pristine")
        with open(os.path.join(tmp, "resources.yaml")) as f:
            docs = f.read().split("\n---\n")
        for i, doc in enumerate(docs):
            d = os.path.join(pristine, f"d{i // per_dir:04}")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"r{i:06}.yaml"), "w") as out:
                out.write(doc if doc.endswith("\n") else doc + "\n")
        fn = os.path.join(tmp, "fn.yaml")
        printed, _ = measure([BIN, "--config", fn, pristine], runs)
        walls = []
        for r in range(runs):
            work = os.path.join(tmp, f"work{r}")
            shutil.copytree(pristine, work)
            t = time.perf_counter()
            p = subprocess.run([BIN, "--config", fn, work, "--in-place"], stderr=subprocess.PIPE, text=True)
            walls.append(time.perf_counter() - t)
            if p.returncode != 0:
                sys.exit(f"--in-place failed:\n{p.stderr}")
            shutil.rmtree(work)
        written = statistics.median(walls)
        # The file system's own cost of the same renames: a temporary written beside each file
        # and renamed over it, nothing synced (what no write-back by renames can go under).
        floors = []
        for r in range(runs):
            work = os.path.join(tmp, f"floor{r}")
            shutil.copytree(pristine, work)
            paths = [os.path.join(dp, f) for dp, _, fs in os.walk(work) for f in fs]
            t = time.perf_counter()
            for i, path in enumerate(paths):
                temp = os.path.join(os.path.dirname(path), f".krmfl{i:06}")
                with open(temp, "x") as out:
                    out.write("x" * 1300)
                os.rename(temp, path)
            floors.append(time.perf_counter() - t)
            shutil.rmtree(work)
        floor = statistics.median(floors)
    ratio = written / printed
    print(f"\n{len(docs):,} files ({n:,} resources, {per_dir} to a directory): printed {printed:.3f} s, "
          f"in place {written:.3f} s ({ratio:.1f}x); the file system's floor for as many "
          f"temporaries renamed over their files {floor:.3f} s (in place is {written / floor:.1f}x it)")
    print(f"- {'met' if ratio <= 3 else 'NOT met'}: the {len(docs):,}-file package in place within 3x "
          f"of printing it ({ratio:.1f}x)")


def upgrade_sides(n):
    """ORIGINAL, UPDATED and LOCAL of an upgrade of `n` generated resources, as lists of
    documents: UPDATED bumps the images of every 10th resource (a Deployment) and the log level
    of every 20th ConfigMap, deletes every 100th resource (from 50 on) and adds n / 100 new
    ones; LOCAL sets the replicas of every 7th Deployment and, on every 140th, the image too (a
    conflict, upstream wins with a warning)."""
    gen = subprocess.run([GEN, str(n + n // 100)], stdout=subprocess.PIPE, text=True, check=True).stdout
    docs = [d if d.endswith("\n") else d + "\n" for d in gen.split("\n---\n")]
    original, added = docs[:n], docs[n:]
    updated, local = [], []
    for i, d in enumerate(original):
        u = d
        if i % 10 == 0:
            u = u.replace(f"app-{i}:1.0.0", f"app-{i}:1.1.0")
        if i % 20 == 3:
            u = u.replace("LOG_LEVEL: info", "LOG_LEVEL: warn")
        if i % 100 != 50:
            updated.append(u)
        l = d
        if i % 7 == 0:
            l = re.sub(r"(?m)^  replicas: \d+", "  replicas: 9", l)
        if i % 140 == 0:
            l = l.replace(f"app-{i}:1.0.0", f"app-{i}:1.0.1")
        local.append(l)
    return original, updated + added, local


def write_dir(root, docs, per_dir=100):
    for i, doc in enumerate(docs):
        d = os.path.join(root, f"d{i // per_dir:04}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"r{i:06}.yaml"), "w") as out:
            out.write(doc)


def upgrade(sizes, runs, build=True):
    """`krm-merge merge3` of three package directories (see the module's doc), and of the same
    sides as three streams: a table, then the goals. `build`: build the binaries first (not
    when --bin gives them)."""
    if build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "krm-merge",
                        "--example", "gen_package"], cwd=ROOT, check=True)
    rows = []
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "target")) as tmp:
        for n in sizes:
            sides = upgrade_sides(n)
            dirs = [os.path.join(tmp, f"{name}{n}") for name in ("original", "updated", "local")]
            for d, docs in zip(dirs, sides):
                write_dir(d, docs)
            size = sum(len(x) for x in sides[2])
            streams = [d + ".yaml" for d in dirs]
            for path, docs in zip(streams, sides):
                with open(path, "w") as out:
                    out.write("---\n".join(docs))
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            printed, rss = measure([BIN, "merge3"] + dirs, runs)
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            # CPU seconds a run (user + system): what a loaded machine does not inflate.
            cpu = ((cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)) / runs
            as_streams, _ = measure([BIN, "merge3"] + streams, runs)
            walls = []
            for r in range(runs):
                out = os.path.join(tmp, f"out{n}-{r}")
                t = time.perf_counter()
                p = subprocess.run([BIN, "merge3"] + dirs + ["--output", out], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                walls.append(time.perf_counter() - t)
                if p.returncode != 0:
                    sys.exit(f"merge3 --output failed:\n{p.stderr}")
                shutil.rmtree(out)
            rows.append((n, size, printed, rss, statistics.median(walls), cpu, as_streams))
            print(f"done {n}", file=sys.stderr)
    print("| resources a side | LOCAL | merge3 to stdout | its CPU (user + sys) | peak RSS | merge3 --output DIR | as three streams |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, size, t, rss, out, cpu, st in rows:
        print(f"| {n:,} | {size / 1e6:.1f} MB | {t:.3f} s | {cpu:.3f} s | {rss / 1024:.0f} MB | {out:.3f} s | {st:.3f} s |")
    by_n = {n: (t, cpu) for n, _, t, _, _, cpu, _ in rows}
    if 10_000 in by_n:
        t, cpu = by_n[10_000]
        print(f"- {'met' if t < 1 else 'NOT met'}: 10,000 resources a side under 1 s ({t:.3f} s; "
              f"{cpu:.3f} s of CPU)")
    per = {n: cpu / n for n, _, _, _, _, cpu, _ in rows if n >= 1_000}
    if len(per) > 1:
        largest = max(per)
        ratio = per[largest] / min(per.values())
        print(f"- {'met' if ratio <= 1.25 else 'NOT met'}: linear (CPU per resource at {largest:,} "
              f"within 1.25x of the least: {ratio:.2f}x)")


if __name__ == "__main__":
    main()
