#!/usr/bin/env bash
# Stand-ins for the images the conformance suite pulls, built here and
# imported into containerd's k8s.io namespace under the names e2e.test asks
# for (k8s.io/kubernetes/test/utils/image/manifest.go at the release
# tools/conformance pins); nothing is pulled from a registry:
#
#   registry.k8s.io/e2e-test-images/agnhost:2.66.1
#       the agnhost binary hack/conformance-build.sh builds from
#       k8s.io/kubernetes/test/images/agnhost, on the busybox root filesystem
#       hack/images.sh builds (upstream's image is alpine with a few tools),
#       with what upstream's Dockerfile adds: /agnhost-2, /uploads, porter's
#       localhost.crt and .key, user-defined-in-image (1000) in
#       group-defined-in-image (50000), and the host's bash, curl, nc
#       (netcat-openbsd, in place of busybox's, which has no -u, -v or -t),
#       dig and getent (Debian's, with the shared libraries they load),
#       which upstream's alpine image has (bash, curl, netcat-openbsd,
#       bind-tools) and specs run (the lifecycle hook specs curl from their
#       pods, the Service specs nc, the DNS specs dig); /bin/sh is bash:
#       Debian's busybox shell runs its own applets before PATH (nc among
#       them), where alpine's finds netcat-openbsd; and the host's nsenter
#       behind a shim in /usr/local/bin (nsenter_shim, below) for the
#       storage specs' host executor; entrypoint /agnhost, cmd pause
#   registry.k8s.io/e2e-test-images/agnhost:2.55   the same image (AgnhostPrev)
#   registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1
#       the same image too: upstream's is Debian with dnsutils, and the DNS
#       specs run only sh, dig and getent (glibc's resolver) in it
#   registry.k8s.io/e2e-test-images/nonewprivs:1.4
#       the busybox root filesystem with nnp (k8s.io/kubernetes/test/images/nonewprivs)
#       setuid root in /usr/local/bin; cmd nnp, as upstream's Dockerfile
#   registry.k8s.io/e2e-test-images/nonroot:1.5
#       the busybox root filesystem run as user 1234, as upstream's Dockerfile
#   registry.k8s.io/e2e-test-images/busybox:1.37.0-2  docker.io/library/busybox:1.36 re-tagged
#   registry.k8s.io/pause:3.10.2                   registry.k8s.io/pause:3.10.1 re-tagged
#   registry.k8s.io/e2e-test-images/nginx:1.27.0-2
#       the busybox root filesystem serving /usr/share/nginx/html on port 80
#       with busybox's httpd (upstream's is nginx, which serves the same
#       directory on the same port); the NodeConformance spec that runs it
#       ("back-off timer reset on image update") runs only sh and sleep in it
#
# Other images (httpd, volume servers...) are not built: specs that need
# them fail on the pull, and the summary says so.
#
# Needs hack/images.sh (run by hack/node-setup.sh) and
# hack/conformance-build.sh first. Archives land in _output/conformance/images.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIN=${BERTH_TOOLS_BIN:-$REPO_ROOT/_output/tools/bin}
OUT=$REPO_ROOT/_output/conformance/images
MKIMAGE=$REPO_ROOT/_output/bin/mkimage
BUSYBOX_ROOTFS=$REPO_ROOT/_output/images/busybox/rootfs
E2E_REGISTRY=registry.k8s.io/e2e-test-images
AGNHOST_IMAGE=$E2E_REGISTRY/agnhost:2.66.1
AGNHOST_PREV_IMAGE=$E2E_REGISTRY/agnhost:2.55
GLIBC_DNS_IMAGE=$E2E_REGISTRY/glibc-dns-testing:2.1.1
BUSYBOX_IMAGE=$E2E_REGISTRY/busybox:1.37.0-2
PAUSE_IMAGE=registry.k8s.io/pause:3.10.2
NONEWPRIVS_IMAGE=$E2E_REGISTRY/nonewprivs:1.4
NONROOT_IMAGE=$E2E_REGISTRY/nonroot:1.5
NGINX_IMAGE=$E2E_REGISTRY/nginx:1.27.0-2

# kube_src prints the directory of the k8s.io/kubernetes module tools/conformance pins.
kube_src() {
	(cd "$REPO_ROOT/tools/conformance" && GOWORK=off "$GO" list -m -f '{{.Dir}}' k8s.io/kubernetes)
}

# add_host_binaries copies host programs into the root filesystem root, at
# the paths given, with every shared library they load (ldd) at its own path.
add_host_binaries() {
	local root=$1 bin lib
	shift
	for bin in "$@"; do
		[[ -x $bin ]] || die "$bin is missing (Debian package $(basename "$bin")): run hack/node-setup.sh"
		mkdir -p "$root$(dirname "$bin")"
		cp -L "$bin" "$root$bin"
		for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
			[[ -e $root$lib ]] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}

# nsenter_shim prints the /usr/local/bin/nsenter of the agnhost image. The
# storage specs' host executor (test/e2e/storage/utils/host_exec.go: a
# privileged agnhost pod with the host's / at /rootfs) runs every command
# on the node as `nsenter --mount=/rootfs/proc/1/ns/mnt -- ...`. On this
# machine nobody may open PID 1's namespaces (the VM's init), not even
# root on the host: `nsenter: can't open '/rootfs/proc/1/ns/mnt': Permission
# denied`, on either kubelet. The shim enters the mount namespace of the
# host's containerd instead, which is the host's (the one PID 1's would
# be), and passes every call on to the host's nsenter (util-linux, in the
# image at /usr/bin/nsenter). Not busybox's: its nsenter runs "sh" as its own
# applet, and that shell its own losetup, whose listing the block specs
# cannot parse; util-linux's runs the host's sh and losetup, as upstream's
# host executor means.
nsenter_shim() {
	cat <<'SHIM'
#!/bin/bash
# berth's conformance stand-in (hack/conformance-images.sh): PID 1's
# namespaces cannot be opened on this machine; containerd's mount namespace
# is the host's.
args=()
for a in "$@"; do
	if [[ $a == --mount=/rootfs/proc/1/ns/mnt ]] && ! { true <"${a#--mount=}"; } 2>/dev/null; then
		# The oldest containerd: the host's own, not one a test started
		# (and may stop while this runs).
		best= oldest=
		for comm in /rootfs/proc/[0-9]*/comm; do
			pid=${comm#/rootfs/proc/}
			pid=${pid%/comm}
			[[ $(<"$comm") == containerd ]] 2>/dev/null || continue
			{ true <"/rootfs/proc/$pid/ns/mnt"; } 2>/dev/null || continue
			stat=$(<"/rootfs/proc/$pid/stat") 2>/dev/null || continue
			read -ra f <<<"${stat##*) }"
			start=${f[19]} # field 22, starttime
			if [[ -z $oldest ]] || ((start < oldest)); then
				best=$pid oldest=$start
			fi
		done
		[[ -n $best ]] && a=--mount=/rootfs/proc/$best/ns/mnt
	fi
	args+=("$a")
done
exec /usr/bin/nsenter "${args[@]}"
SHIM
}

# build_agnhost writes the agnhost image archive and prints its manifest digest.
build_agnhost() {
	local dir=$OUT/agnhost root=$OUT/agnhost/rootfs src
	src=$(kube_src)/test/images/agnhost
	[[ -d $BUSYBOX_ROOTFS ]] || die "$BUSYBOX_ROOTFS is missing: run hack/images.sh (make node)"
	[[ -x $BIN/agnhost ]] || die "$BIN/agnhost is missing: run hack/conformance-build.sh"
	rm -rf "$root" && mkdir -p "$dir"
	cp -a "$BUSYBOX_ROOTFS" "$root"
	cp "$BIN/agnhost" "$root/agnhost"
	ln -s agnhost "$root/agnhost-2"
	mkdir -p "$root/uploads" "$root/home/user-defined-in-image"
	install -m 0644 "$src/porter/localhost.crt" "$root/localhost.crt"
	install -m 0600 "$src/porter/localhost.key" "$root/localhost.key"
	echo 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >>"$root/etc/passwd"
	printf '%s\n' 'user-defined-in-image:x:1000:' 'group-defined-in-image:x:50000:user-defined-in-image' >>"$root/etc/group"
	rm -f "$root/bin/bash" # a busybox applet, if it has one
	add_host_binaries "$root" /bin/bash /usr/bin/curl /bin/nc.openbsd /usr/bin/dig /usr/bin/getent /usr/bin/nsenter
	ln -sf nc.openbsd "$root/bin/nc"
	ln -sf bash "$root/bin/sh" # busybox's sh would run its nc applet
	mkdir -p "$root/usr/local/bin"
	nsenter_shim >"$root/usr/local/bin/nsenter"
	chmod 0755 "$root/usr/local/bin/nsenter"
	"$MKIMAGE" -rootfs "$root" -name "$AGNHOST_IMAGE" -o "$dir/image.tar" \
		-env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		-entrypoint /agnhost -cmd pause
}

# build_nonewprivs writes the nonewprivs image archive and prints its manifest digest.
build_nonewprivs() {
	local dir=$OUT/nonewprivs root=$OUT/nonewprivs/rootfs
	[[ -x $BIN/nnp ]] || die "$BIN/nnp is missing: run hack/conformance-build.sh"
	rm -rf "$root" && mkdir -p "$dir"
	cp -a "$BUSYBOX_ROOTFS" "$root"
	mkdir -p "$root/usr/local/bin"
	install -m 4755 "$BIN/nnp" "$root/usr/local/bin/nnp"
	"$MKIMAGE" -rootfs "$root" -name "$NONEWPRIVS_IMAGE" -o "$dir/image.tar" \
		-env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -cmd nnp
}

# build_nonroot writes the nonroot image archive and prints its manifest digest.
build_nonroot() {
	local dir=$OUT/nonroot
	mkdir -p "$dir"
	"$MKIMAGE" -rootfs "$BUSYBOX_ROOTFS" -name "$NONROOT_IMAGE" -o "$dir/image.tar" \
		-env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -user 1234 -cmd sh
}

# build_nginx writes the nginx stand-in's archive and prints its manifest digest.
build_nginx() {
	local dir=$OUT/nginx root=$OUT/nginx/rootfs
	rm -rf "$root" && mkdir -p "$dir"
	cp -a "$BUSYBOX_ROOTFS" "$root"
	mkdir -p "$root/usr/share/nginx/html"
	echo '<html><body>nginx stand-in</body></html>' >"$root/usr/share/nginx/html/index.html"
	"$MKIMAGE" -rootfs "$root" -name "$NGINX_IMAGE" -o "$dir/image.tar" \
		-env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		-cmd httpd -cmd -f -cmd -p -cmd 80 -cmd -h -cmd /usr/share/nginx/html
}

# digest_of prints the manifest digest containerd has for ref, or nothing.
digest_of() {
	ctr_k8s images ls "name==$1" | awk 'NR > 1 { print $3 }'
}

import_image() {
	local ref=$1 archive=$2 digest=$3
	[[ $(digest_of "$ref") == "$digest" ]] && return 0
	log "importing $ref ($digest)"
	quiet ctr_k8s images import "$archive"
	[[ $(digest_of "$ref") == "$digest" ]] || die "import $ref: containerd has digest '$(digest_of "$ref")', want $digest"
}

# retag gives the image containerd has under src the name dst as well.
retag() {
	local src=$1 dst=$2 digest
	digest=$(digest_of "$src")
	[[ -n $digest ]] || die "containerd has no $src: run hack/images.sh (make node)"
	[[ $(digest_of "$dst") == "$digest" ]] && return 0
	log "tagging $src as $dst"
	quiet ctr_k8s images tag --force "$src" "$dst"
}

main() {
	require_root
	lock_node
	mkdir -p "$OUT"
	local agnhost nonewprivs nonroot nginx
	agnhost=$(build_agnhost)
	nonewprivs=$(build_nonewprivs)
	nonroot=$(build_nonroot)
	nginx=$(build_nginx)
	import_image "$AGNHOST_IMAGE" "$OUT/agnhost/image.tar" "$agnhost"
	import_image "$NONEWPRIVS_IMAGE" "$OUT/nonewprivs/image.tar" "$nonewprivs"
	import_image "$NONROOT_IMAGE" "$OUT/nonroot/image.tar" "$nonroot"
	import_image "$NGINX_IMAGE" "$OUT/nginx/image.tar" "$nginx"
	retag "$AGNHOST_IMAGE" "$AGNHOST_PREV_IMAGE"
	retag "$AGNHOST_IMAGE" "$GLIBC_DNS_IMAGE"
	retag docker.io/library/busybox:1.36 "$BUSYBOX_IMAGE"
	retag registry.k8s.io/pause:3.10.1 "$PAUSE_IMAGE"
	log "conformance images ready: $AGNHOST_IMAGE $AGNHOST_PREV_IMAGE $GLIBC_DNS_IMAGE $NONEWPRIVS_IMAGE $NONROOT_IMAGE $NGINX_IMAGE $BUSYBOX_IMAGE $PAUSE_IMAGE"
}

main "$@"
