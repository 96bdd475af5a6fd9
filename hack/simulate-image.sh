#!/usr/bin/env bash
# make simulate-image: the image examples/simulate/berth-simulate.yaml runs,
# berth's static binary alone (entrypoint /berth), as an OCI image-layout
# archive written without Docker or a registry (hack/mkimage):
#
#   _output/images/berth-simulate.tar   localhost/berth/berth:dev
#
# IMAGE overrides the name. Push the archive to a registry (for example
# skopeo copy oci-archive:_output/images/berth-simulate.tar docker://REG/berth:TAG)
# or import it on a node (ctr -n k8s.io images import --all-platforms FILE).
# It prints the manifest digest.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IMAGE=${IMAGE:-localhost/berth/berth:dev}
OUT=$REPO_ROOT/_output/images/berth-simulate
MKIMAGE=$REPO_ROOT/_output/bin/mkimage
VERSION=$(cd "$REPO_ROOT" && git describe --always --dirty 2>/dev/null || echo unknown)

(cd "$REPO_ROOT" && "$GO" build -o "$MKIMAGE" ./hack/mkimage)
rm -rf "$OUT/rootfs" && mkdir -p "$OUT/rootfs"
(cd "$REPO_ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$VERSION" \
	-o "$OUT/rootfs/berth" ./cmd/berth)
"$MKIMAGE" -rootfs "$OUT/rootfs" -name "$IMAGE" -entrypoint /berth -o "$REPO_ROOT/_output/images/berth-simulate.tar"
