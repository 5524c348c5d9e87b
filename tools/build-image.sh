#!/usr/bin/env bash
# Builds the krm-merge container image without pulling anything:
#
#   1. a statically linked release binary (glibc, `+crt-static`; the explicit --target keeps
#      build scripts and proc-macros dynamically linked, as they must be);
#   2. a build context holding the binary and an /etc/passwd and /etc/group with `nobody`
#      (65534), which kpt's and kustomize's `--user nobody` needs;
#   3. `podman build --pull=never` of the top-level Dockerfile (FROM scratch).
#
# Usage: tools/build-image.sh [--no-build] [TAG...]
#   TAG defaults to localhost/krm-merge:dev and localhost/krm-merge:<version>.
#   --no-build uses the static binary already in the target directory.
# Environment: CARGO_TARGET_DIR (as cargo), CONTAINER_ENGINE (default podman; docker works too).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

build=1
tags=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-image.sh: unknown option $arg" >&2; exit 2 ;;
    *) tags+=("$arg") ;;
  esac
done
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ ${#tags[@]} -gt 0 ] || tags=("localhost/krm-merge:dev" "localhost/krm-merge:$version")
engine=${CONTAINER_ENGINE:-podman}

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
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$ctx/passwd"
printf 'root:x:0:\nnobody:x:65534:\n' >"$ctx/group"

tag_args=()
for t in "${tags[@]}"; do tag_args+=(--tag "$t"); done
"$engine" build --pull=never --file "$root/Dockerfile" \
  --label "org.opencontainers.image.title=krm-merge" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.licenses=Apache-2.0" \
  "${tag_args[@]}" "$ctx" >&2

size=$("$engine" image inspect --format '{{.Size}}' "${tags[0]}")
echo "built ${tags[*]} ($size bytes; binary $(stat -c %s "$bin") bytes)" >&2
