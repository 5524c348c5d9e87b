#!/bin/sh
# krm-merge as a Helm post-renderer: the chart Helm rendered on stdin, the patched chart on
# stdout. The first argument is the functionConfig (a path relative to where helm runs); the
# others go to krm-merge as they are (-q, --results FILE).
#
#   Helm 4, with this directory installed as a plugin (plugin.yaml):
#     helm install web ./chart --post-renderer krm-merge --post-renderer-args fn.yaml
#   Helm 3, with this script as the post-renderer:
#     helm install web ./chart --post-renderer ./post-render.sh --post-renderer-args fn.yaml
#
# Environment: KRM_MERGE, the krm-merge to run (default: the one on PATH); KRM_MERGE_LOG, a
# file krm-merge's messages are appended to (Helm 4 does not show what a post-renderer plugin
# writes to stderr, only that it failed).
#
# When a patch fails, krm-merge writes nothing and exits 1, and Helm installs nothing.
set -eu
if [ -n "${KRM_MERGE_LOG:-}" ]; then
  exec 2>>"$KRM_MERGE_LOG"
fi
if [ $# -eq 0 ]; then
  echo "krm-merge post-renderer: name the functionConfig: --post-renderer-args FILE" >&2
  exit 2
fi
config=$1
shift
exec "${KRM_MERGE:-krm-merge}" --config "$config" "$@" -
