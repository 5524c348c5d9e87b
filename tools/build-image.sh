#!/usr/bin/env bash
# Builds the krm-merge container image without pulling anything:
#
#   1. a statically linked release binary (glibc, `+crt-static`; the explicit --target keeps
#      build scripts and proc-macros dynamically linked, as they must be);
#   2. a build context holding the binary and an /etc/passwd and /etc/group with `nobody`
#      (65534), which kpt's and kustomize's `--user nobody` needs;
#   3. a CycloneDX SBOM of the binary's crates (tools/sbom.py), in the image as
#      /usr/share/doc/krm-merge/sbom.cdx.json and beside it as <target dir>/image/krm-merge.cdx.json;
#   4. `podman build --pull=never` of the top-level Dockerfile (FROM scratch), labelled with the
#      OCI annotation keys (org.opencontainers.image.*: title, description, version, revision,
#      created, licenses, and source when the clone's origin is a network address).
#
# Usage: tools/build-image.sh [--no-build] [--print-labels] [TAG...]
#   TAG defaults to localhost/krm-merge:dev and localhost/krm-merge:<version>.
#   --no-build uses the static binary already in the target directory.
#   --print-labels prints the labels, one KEY=VALUE a line, and builds nothing.
# Environment: CARGO_TARGET_DIR (as cargo), CONTAINER_ENGINE (default podman; docker works too),
#   SOURCE_DATE_EPOCH (the `created` time, for a reproducible image; default: now).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

build=1
print_labels=0
tags=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --print-labels) print_labels=1 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-image.sh: unknown option $arg" >&2; exit 2 ;;
    *) tags+=("$arg") ;;
  esac
done
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ ${#tags[@]} -gt 0 ] || tags=("localhost/krm-merge:dev" "localhost/krm-merge:$version")
engine=${CONTAINER_ENGINE:-podman}

# The labels. `revision` is the commit built, with -dirty when the work tree differs from it;
# `source` is the clone's origin without any user or password in it, when it is a network
# address (a local path says nothing to whoever pulls the image).
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
  created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fi
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
if [ "$revision" != unknown ] && [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  revision="$revision-dirty"
fi
origin=$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)
case "$origin" in
  https://*|http://*) source=$(printf '%s' "$origin" | sed -E 's#^(https?://)[^/@]*@#\1#') ;;
  ssh://*|git@*:*) source=$(printf '%s' "$origin" | sed -E 's#^ssh://([^/@]*@)?#ssh://#') ;;
  *) source= ;;
esac
description=$(sed -n 's/^description = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
license=$(sed -n 's/^license = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
labels=(
  "org.opencontainers.image.title=krm-merge"
  "org.opencontainers.image.description=$description"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.revision=$revision"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.licenses=$license"
)
[ -z "$source" ] || labels+=("org.opencontainers.image.source=$source")
if [ "$print_labels" = 1 ]; then
  printf '%s\n' "${labels[@]}"
  exit 0
fi

target=x86_64-unknown-linux-gnu
target_dir=${CARGO_TARGET_DIR:-$root/target}
bin="$target_dir/$target/release/krm-merge"
if [ "$build" = 1 ]; then
  RUSTFLAGS="-C target-feature=+crt-static -C strip=symbols" \
    cargo build --release --locked --target "$target" --bin krm-merge
fi
[ -x "$bin" ] || { echo "build-image.sh: $bin is missing (build it, or drop --no-build)" >&2; exit 1; }
# A dynamically linked binary would not start in an empty image: refuse it here.
if readelf -l "$bin" | grep -q 'INTERP'; then
  echo "build-image.sh: $bin is dynamically linked" >&2
  exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$bin" "$ctx/krm-merge"
mkdir -p "$target_dir/image"
sbom="$target_dir/image/krm-merge.cdx.json"
python3 "$root/tools/sbom.py" --target "$target" --created "$created" "$sbom"
cp "$sbom" "$ctx/sbom.cdx.json"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$ctx/passwd"
printf 'root:x:0:\nnobody:x:65534:\n' >"$ctx/group"

tag_args=()
for t in "${tags[@]}"; do tag_args+=(--tag "$t"); done
label_args=()
for l in "${labels[@]}"; do label_args+=(--label "$l"); done
"$engine" build --pull=never --file "$root/Dockerfile" \
  "${label_args[@]}" "${tag_args[@]}" "$ctx" >&2

size=$("$engine" image inspect --format '{{.Size}}' "${tags[0]}")
echo "built ${tags[*]} ($size bytes; binary $(stat -c %s "$bin") bytes; SBOM $sbom)" >&2
