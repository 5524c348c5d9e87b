# The krm-merge function image: one statically linked binary and its SBOM, nothing else.
#
# Build it with tools/build-image.sh, which compiles the static binary and prepares the build
# context this file expects (krm-merge, passwd, group, sbom.cdx.json) and labels the image;
# nothing is pulled from a registry:
#
#   tools/build-image.sh                      # -> localhost/krm-merge:dev
#
# kpt and kustomize run functions with `--user nobody`, which needs /etc/passwd in the image.
FROM scratch
COPY passwd group /etc/
COPY krm-merge /usr/local/bin/krm-merge
# The CycloneDX SBOM of the binary's crates (tools/sbom.py), for whoever has only the image.
COPY sbom.cdx.json /usr/share/doc/krm-merge/sbom.cdx.json
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/krm-merge"]
