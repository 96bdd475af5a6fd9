#!/usr/bin/env bash
# Builds berth's test images from local sources, without a registry, and
# imports them into containerd's k8s.io namespace, where the CRI sees them:
#
#   registry.k8s.io/pause:3.10.1     images/pause (a static Go program)
#   docker.io/library/busybox:1.36   /bin/busybox from Debian's busybox-static
#   localhost/berth/grpc-health:1.0  images/grpchealth (grpc.health.v1, for probes)
#
# Archives land in _output/images/. An image whose digest is already in
# containerd is not imported again, so a second run only rebuilds (seconds).
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
BUSYBOX_IMAGE=docker.io/library/busybox:1.36
GRPC_HEALTH_IMAGE=localhost/berth/grpc-health:1.0
OUT=$REPO_ROOT/_output/images
MKIMAGE=$REPO_ROOT/_output/bin/mkimage

build_mkimage() {
	(cd "$REPO_ROOT" && "$GO" build -o "$MKIMAGE" ./hack/mkimage)
}

# build_pause writes the pause image archive and prints its manifest digest.
build_pause() {
	local dir=$OUT/pause
	rm -rf "$dir/rootfs" && mkdir -p "$dir/rootfs"
	(cd "$REPO_ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags='-s -w -buildid=' \
		-o "$dir/rootfs/pause" ./images/pause)
	"$MKIMAGE" -rootfs "$dir/rootfs" -name "$PAUSE_IMAGE" -entrypoint /pause -o "$dir/image.tar"
}

# build_grpc_health writes the gRPC health server image archive and prints
# its manifest digest.
build_grpc_health() {
	local dir=$OUT/grpc-health
	rm -rf "$dir/rootfs" && mkdir -p "$dir/rootfs"
	(cd "$REPO_ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags='-s -w -buildid=' \
		-o "$dir/rootfs/grpc-health" ./images/grpchealth)
	"$MKIMAGE" -rootfs "$dir/rootfs" -name "$GRPC_HEALTH_IMAGE" -entrypoint /grpc-health -o "$dir/image.tar"
}

# build_busybox writes the busybox image archive and prints its manifest digest.
build_busybox() {
	local dir=$OUT/busybox root=$OUT/busybox/rootfs applet
	[[ -x /bin/busybox ]] || die "/bin/busybox is missing: apt-get install busybox-static"
	rm -rf "$root" && mkdir -p "$root/bin" "$root/etc" "$root/home" "$root/root" "$root/tmp"
	chmod 1777 "$root/tmp"
	chmod 0700 "$root/root"
	cp /bin/busybox "$root/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[[ $applet == busybox || -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
	done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/home:/bin/false' >"$root/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nobody:x:65534:' >"$root/etc/group"
	"$MKIMAGE" -rootfs "$root" -name "$BUSYBOX_IMAGE" -o "$dir/image.tar" \
		-env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -cmd sh
}

# import_image imports an archive unless containerd already has the image
# under that name with that digest.
import_image() {
	local ref=$1 archive=$2 digest=$3 have
	have=$(ctr_k8s images ls "name==$ref" | awk 'NR > 1 { print $3 }')
	if [[ $have == "$digest" ]]; then
		return 0
	fi
	log "importing $ref ($digest)"
	quiet ctr_k8s images import "$archive"
	have=$(ctr_k8s images ls "name==$ref" | awk 'NR > 1 { print $3 }')
	[[ $have == "$digest" ]] || die "import $ref: containerd has digest '$have', want $digest"
}

main() {
	require_root
	lock_node
	mkdir -p "$OUT"
	build_mkimage
	local pause busybox grpc_health
	pause=$(build_pause)
	busybox=$(build_busybox)
	grpc_health=$(build_grpc_health)
	import_image "$PAUSE_IMAGE" "$OUT/pause/image.tar" "$pause"
	import_image "$BUSYBOX_IMAGE" "$OUT/busybox/image.tar" "$busybox"
	import_image "$GRPC_HEALTH_IMAGE" "$OUT/grpc-health/image.tar" "$grpc_health"
	log "images ready: $PAUSE_IMAGE $BUSYBOX_IMAGE $GRPC_HEALTH_IMAGE"
}

main "$@"
