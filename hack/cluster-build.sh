#!/usr/bin/env bash
# Builds berth's development control plane from the tools modules:
#
#   tools/etcd  etcd                      (go.etcd.io/etcd/server/v3)
#   tools/kube  kube-apiserver, kube-controller-manager, kube-scheduler,
#               kubectl                   (k8s.io/kubernetes, k8s.io/kubectl),
#               csi-mock-driver           (upstream's e2e CSI mock driver with
#               node-driver-registrar's registration, for the CSI tests)
#   tools/registry  registry              (github.com/distribution/distribution/v3),
#               the OCI registry the image pull tests push to
#   tools/metrics  metrics-server         (sigs.k8s.io/metrics-server), for the
#               `kubectl top` tests
#   tools/provisioner  local-provisioner  (sigs.k8s.io/sig-storage-lib-external-provisioner),
#               the dynamic provisioner of the cluster's default StorageClass
#
# It also builds upstream's DRA test driver (tools/dradriver:
# dra-test-driver, k8s.io/kubernetes/test/e2e/dra/test-driver, whose
# kubelet-plugin mode the DRA end-to-end tests run), with a stamp of its
# own (.stamp.dradriver); --dradriver builds only that.
#
# It also builds containerd 2.x (tools/containerd2: containerd2 and its
# containerd-shim-runc-v2), which the end-to-end tests of the CRI event
# stream start privately (the host runs containerd 1.6, which has none); it
# has a stamp of its own, so that moving one pin does not rebuild the other.
# --containerd2 builds only that.
#
# It also builds upstream's sample device plugin (tools/deviceplugin:
# k8s.io/kubernetes/test/images/sample-device-plugin, named as a tool in
# its go.mod; two fake devices of example.com/resource), which the device
# manager's end-to-end test runs on the host; a stamp of its own
# (.stamp.deviceplugin). --deviceplugin builds only that.
#
# With --network it builds only the Service network of the cluster (a stamp
# of its own, .stamp.network): kube-proxy (tools/kube) and CoreDNS
# (tools/coredns: github.com/coredns/coredns with the few plugins the
# cluster's Corefile uses), which berth-cluster --network runs (make
# cluster, make conformance; never make test). CoreDNS is a module of its
# own: it pins its own k8s.io/* (v0.37.1 for v1.15.0), miekg/dns, quic-go
# and so on, which must not move what the control plane is built from.
# Measured on 2 busy cores with the control plane's Go build cache warm:
# kube-proxy 29 s (18 CPU-s), CoreDNS 64 s (103 CPU-s); with an empty Go
# build cache CoreDNS alone takes 2 min 13 s (165 CPU-s).
#
# With --simbench it builds only the simulators `make simbench` compares
# berth simulate with (hack/simbench.sh), a stamp of their own
# (.stamp.simbench), never built by make test or make cluster-tools:
# kwok and kwok-stages (tools/kwok: sigs.k8s.io/kwok's kwok binary, named
# as a tool in its go.mod, and the default Stages kwokctl would hand it)
# and kubemark (tools/kube: k8s.io/kubernetes/cmd/kubemark, the hollow
# node, built by package path so that the control plane's mains and stamp
# stay as they are).
#
# With --with-kubelet it also builds the upstream kubelet (tools/kube), which
# only `make bench` runs (hack/bench.sh); it has a stamp of its own.
#
# into _output/tools/bin (or $BERTH_TOOLS_BIN), static (CGO_ENABLED=0) and
# with -trimpath. A stamp beside the binaries records what they were built
# from: the Go version and a hash of each module's go.mod, go.sum and mains.
# When the stamp matches and every binary is there, nothing is built; change
# a pinned version and the next run rebuilds.
#
# Two modules, not one: k8s.io/kubernetes v1.37.2 and k8s.io/apiserver
# v0.37.2 require go.etcd.io/etcd/server/v3 v3.7.0 (and its v3.7 api and
# client modules), so in one build list the etcd server could not be v3.6.
#
# containerd2 adds about 3 CPU-minutes to a cold build (measured: 183 CPU-s,
# 6 minutes of wall time on 2 busy cores, with an empty Go build cache and
# the modules downloaded); it shares little with the control plane.
#
# A cold build needs about 27 CPU-minutes: some 14 minutes on 2 idle cores,
# 22 on a busy machine (kube-apiserver is most of it; metrics-server about
# 4 CPU-minutes; the registry, under a minute). With the Go build
# cache warm, a rebuild (new stamp) takes about 30 s; an up-to-date check,
# a fraction of a second.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
OUT=${BERTH_TOOLS_BIN:-$ROOT/_output/tools/bin}
STAMP=$OUT/.stamp
PARALLEL=${BERTH_TOOLS_BUILD_P:-2}

ETCD_CMDS=(etcd)
KUBE_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubectl csi-mock-driver)
REGISTRY_CMDS=(registry)
METRICS_CMDS=(metrics-server)
PROVISIONER_CMDS=(local-provisioner)
CONTAINERD2_CMDS=(containerd2 containerd-shim-runc-v2)
DEVICEPLUGIN_CMDS=(sample-device-plugin)
DRADRIVER_CMDS=(dra-test-driver)
SIMBENCH_KWOK_CMDS=(kwok-stages)
SIMBENCH_CMDS=(kwok kwok-stages kubemark)
NETWORK_KUBE_CMDS=(kube-proxy)
NETWORK_COREDNS_CMDS=(coredns)

log() { printf '[cluster-build %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# module_version DIR MODULE prints the version of MODULE that DIR's go.mod pins.
module_version() {
	(cd "$1" && GOWORK=off "$GO" list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$2")
}

# stamp prints what the binaries are built from, one fact a line.
stamp() {
	echo "go: $("$GO" env GOVERSION)"
	echo "etcd: $(module_version "$ROOT/tools/etcd" go.etcd.io/etcd/server/v3)"
	echo "kubernetes: $(module_version "$ROOT/tools/kube" k8s.io/kubernetes)"
	echo "kubectl: $(module_version "$ROOT/tools/kube" k8s.io/kubectl)"
	echo "registry: $(module_version "$ROOT/tools/registry" github.com/distribution/distribution/v3)"
	echo "metrics-server: $(module_version "$ROOT/tools/metrics" sigs.k8s.io/metrics-server)"
	echo "provisioner: $(module_version "$ROOT/tools/provisioner" sigs.k8s.io/sig-storage-lib-external-provisioner/v13)"
	local mod
	for mod in etcd registry metrics provisioner; do
		echo "$mod sources: $(sources_hash "$mod" cmd)"
	done
	# Only the mains of the binaries this stamp covers: adding a main
	# (kube-proxy, the kubelet) to tools/kube rebuilds nothing here.
	echo "kube sources: $(sources_hash kube "${KUBE_CMDS[@]/#/cmd/}")"
	echo "flags: CGO_ENABLED=0 -trimpath ldflags=$(kube_ldflags) metrics-server ldflags=$(metrics_ldflags)"
}

# sources_hash MOD PATH... hashes tools/MOD's go.mod, go.sum and the files
# under each PATH.
sources_hash() {
	local mod=$1
	shift
	(cd "$ROOT/tools/$mod" && find go.mod go.sum "$@" -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
}

# kube_ldflags sets the version that kube binaries report (/version, kubectl
# version), as the upstream build does.
kube_ldflags() {
	local v major minor pkg flags=""
	v=$(module_version "$ROOT/tools/kube" k8s.io/kubernetes)
	major=${v#v}; major=${major%%.*}
	minor=${v#v*.}; minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+="-X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean "
	done
	echo "-s -w ${flags% }"
}

# metrics_ldflags sets the version metrics-server reports (--version, its
# OpenAPI), as upstream's Makefile does.
metrics_ldflags() {
	echo "-s -w -X k8s.io/client-go/pkg/version.gitVersion=$(module_version "$ROOT/tools/metrics" sigs.k8s.io/metrics-server)"
}

# built_from STAMP WANT CMD... succeeds when every CMD is built in $OUT
# and the file STAMP holds WANT: the check each cached build step makes
# before it builds again.
built_from() {
	local stamp=$1 want=$2 c
	shift 2
	for c in "$@"; do
		[[ -x $OUT/$c ]] || return 1
	done
	[[ -f $stamp && $(cat "$stamp") == "$want" ]]
}

# build DIR LDFLAGS CMD... builds each CMD of the module in DIR into $OUT.
build() {
	local dir=$1 ldflags=$2 c start
	shift 2
	for c in "$@"; do
		start=$SECONDS
		log "building $c (module tools/$(basename "$dir")) ..."
		(cd "$dir" && GOWORK=off CGO_ENABLED=0 "$GO" build -p "$PARALLEL" -trimpath -buildvcs=false \
			-ldflags "$ldflags" -o "$OUT/$c.new" "./cmd/$c")
		mv -f "$OUT/$c.new" "$OUT/$c"
		log "built $c in $((SECONDS - start))s"
	done
}

# build_kubelet builds the upstream kubelet (for make bench only) unless its
# own stamp says it is built from what the control plane is.
build_kubelet() {
	local want=$1
	if built_from "$STAMP.kubelet" "$want" kubelet; then
		log "kubelet up to date in $OUT"
		return 0
	fi
	rm -f "$STAMP.kubelet"
	build "$ROOT/tools/kube" "$(kube_ldflags)" kubelet
	echo "$want" >"$STAMP.kubelet"
}

# containerd2_stamp prints what containerd2 is built from.
containerd2_stamp() {
	echo "go: $("$GO" env GOVERSION)"
	echo "containerd: $(module_version "$ROOT/tools/containerd2" github.com/containerd/containerd/v2)"
	echo "containerd2 sources: $(cd "$ROOT/tools/containerd2" && find go.mod go.sum cmd -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
	echo "flags: CGO_ENABLED=0 -trimpath ldflags=$(containerd2_ldflags)"
}

# containerd2_ldflags sets the version containerd reports (containerd2
# --version, the CRI Version call), as upstream's Makefile does.
containerd2_ldflags() {
	local v
	v=$(module_version "$ROOT/tools/containerd2" github.com/containerd/containerd/v2)
	echo "-s -w -X github.com/containerd/containerd/v2/version.Version=$v"
}

# build_containerd2 builds containerd 2.x and its runc shim unless their
# own stamp matches.
build_containerd2() {
	local want
	want=$(containerd2_stamp)
	if built_from "$STAMP.containerd2" "$want" "${CONTAINERD2_CMDS[@]}"; then
		log "containerd2 up to date in $OUT"
		return 0
	fi
	log "building containerd2 into $OUT (cold: about 3 CPU-minutes, 2-6 minutes on 2 cores)"
	rm -f "$STAMP.containerd2"
	local start=$SECONDS
	build "$ROOT/tools/containerd2" "$(containerd2_ldflags)" "${CONTAINERD2_CMDS[@]}"
	echo "$want" >"$STAMP.containerd2"
	log "containerd2 done in $((SECONDS - start))s"
}

# deviceplugin_stamp prints what the sample device plugin is built from.
deviceplugin_stamp() {
	echo "go: $("$GO" env GOVERSION)"
	echo "kubernetes: $(module_version "$ROOT/tools/deviceplugin" k8s.io/kubernetes)"
	echo "deviceplugin sources: $(sources_hash deviceplugin)"
	echo "flags: CGO_ENABLED=0 -trimpath ldflags=-s -w"
}

# build_deviceplugin builds the sample device plugin unless its own stamp
# matches. It is upstream's package main, built by import path (a tool of
# the module), not from a ./cmd directory.
build_deviceplugin() {
	local want start=$SECONDS
	want=$(deviceplugin_stamp)
	if built_from "$STAMP.deviceplugin" "$want" "${DEVICEPLUGIN_CMDS[@]}"; then
		log "sample-device-plugin up to date in $OUT"
		return 0
	fi
	rm -f "$STAMP.deviceplugin"
	log "building sample-device-plugin (module tools/deviceplugin) ..."
	(cd "$ROOT/tools/deviceplugin" && GOWORK=off CGO_ENABLED=0 "$GO" build -p "$PARALLEL" -trimpath -buildvcs=false \
		-ldflags "-s -w" -o "$OUT/sample-device-plugin.new" k8s.io/kubernetes/test/images/sample-device-plugin)
	mv -f "$OUT/sample-device-plugin.new" "$OUT/sample-device-plugin"
	echo "$want" >"$STAMP.deviceplugin"
	log "built sample-device-plugin in $((SECONDS - start))s"
}

# dradriver_stamp prints what the DRA test driver is built from.
dradriver_stamp() {
	echo "go: $("$GO" env GOVERSION)"
	echo "kubernetes: $(module_version "$ROOT/tools/dradriver" k8s.io/kubernetes)"
	echo "dradriver sources: $(sources_hash dradriver cmd)"
	echo "flags: CGO_ENABLED=0 -trimpath ldflags=-s -w"
}

# build_dradriver builds the DRA test driver unless its own stamp matches.
build_dradriver() {
	local want
	want=$(dradriver_stamp)
	if built_from "$STAMP.dradriver" "$want" "${DRADRIVER_CMDS[@]}"; then
		log "dra-test-driver up to date in $OUT"
		return 0
	fi
	rm -f "$STAMP.dradriver"
	build "$ROOT/tools/dradriver" "-s -w" "${DRADRIVER_CMDS[@]}"
	echo "$want" >"$STAMP.dradriver"
}

# simbench_stamp prints what kwok, kwok-stages and kubemark are built from.
simbench_stamp() {
	echo "go: $("$GO" env GOVERSION)"
	echo "kwok: $(module_version "$ROOT/tools/kwok" sigs.k8s.io/kwok)"
	echo "kubernetes: $(module_version "$ROOT/tools/kube" k8s.io/kubernetes)"
	echo "kwok sources: $(sources_hash kwok cmd)"
	echo "kube modules: $(sources_hash kube)"
	echo "flags: CGO_ENABLED=0 -trimpath kwok ldflags=-s -w kubemark ldflags=$(kube_ldflags)"
}

# build_pkg DIR LDFLAGS NAME PKG builds the package PKG of the module in
# DIR (a main of a required module) into $OUT/NAME.
build_pkg() {
	local dir=$1 ldflags=$2 name=$3 pkg=$4 start=$SECONDS
	log "building $name ($pkg, module tools/$(basename "$dir")) ..."
	(cd "$dir" && GOWORK=off CGO_ENABLED=0 "$GO" build -p "$PARALLEL" -trimpath -buildvcs=false \
		-ldflags "$ldflags" -o "$OUT/$name.new" "$pkg")
	mv -f "$OUT/$name.new" "$OUT/$name"
	log "built $name in $((SECONDS - start))s"
}

# build_simbench builds kwok, kwok-stages and kubemark unless their own
# stamp matches.
build_simbench() {
	local want
	want=$(simbench_stamp)
	if built_from "$STAMP.simbench" "$want" "${SIMBENCH_CMDS[@]}"; then
		log "kwok, kwok-stages and kubemark up to date in $OUT"
		return 0
	fi
	rm -f "$STAMP.simbench"
	local start=$SECONDS
	build_pkg "$ROOT/tools/kwok" "-s -w" kwok sigs.k8s.io/kwok/cmd/kwok
	build "$ROOT/tools/kwok" "-s -w" "${SIMBENCH_KWOK_CMDS[@]}"
	build_pkg "$ROOT/tools/kube" "$(kube_ldflags)" kubemark k8s.io/kubernetes/cmd/kubemark
	echo "$want" >"$STAMP.simbench"
	log "kwok, kwok-stages and kubemark done in $((SECONDS - start))s"
}

# network_stamp prints what kube-proxy and CoreDNS are built from.
network_stamp() {
	echo "go: $("$GO" env GOVERSION)"
	echo "kubernetes: $(module_version "$ROOT/tools/kube" k8s.io/kubernetes)"
	echo "coredns: $(module_version "$ROOT/tools/coredns" github.com/coredns/coredns)"
	echo "kube sources: $(sources_hash kube "${NETWORK_KUBE_CMDS[@]/#/cmd/}")"
	echo "coredns sources: $(sources_hash coredns cmd)"
	echo "flags: CGO_ENABLED=0 -trimpath ldflags=$(kube_ldflags) coredns ldflags=-s -w"
}

# build_network builds kube-proxy and CoreDNS unless their own stamp
# matches.
build_network() {
	local want
	want=$(network_stamp)
	if built_from "$STAMP.network" "$want" "${NETWORK_KUBE_CMDS[@]}" "${NETWORK_COREDNS_CMDS[@]}"; then
		log "kube-proxy and CoreDNS up to date in $OUT"
		return 0
	fi
	log "building kube-proxy and CoreDNS into $OUT (warm Go cache: 1-2 minutes; cold CoreDNS: about 2 minutes)"
	rm -f "$STAMP.network"
	local start=$SECONDS
	build "$ROOT/tools/kube" "$(kube_ldflags)" "${NETWORK_KUBE_CMDS[@]}"
	build "$ROOT/tools/coredns" "-s -w" "${NETWORK_COREDNS_CMDS[@]}"
	echo "$want" >"$STAMP.network"
	log "kube-proxy and CoreDNS done in $((SECONDS - start))s"
}

main() {
	mkdir -p "$OUT"
	case ${1:-} in
	--containerd2)
		build_containerd2
		return 0
		;;
	--network)
		build_network
		return 0
		;;
	--deviceplugin)
		build_deviceplugin
		return 0
		;;
	--dradriver)
		build_dradriver
		return 0
		;;
	--simbench)
		build_simbench
		return 0
		;;
	esac
	local want
	want=$(stamp)
	case ${1:-} in
	--with-kubelet)
		build_control_plane "$want"
		build_containerd2
		build_deviceplugin
		build_dradriver
		build_kubelet "$want"
		return 0
		;;
	esac
	build_control_plane "$want"
	build_containerd2
	build_deviceplugin
	build_dradriver
}

build_control_plane() {
	local want=$1
	if built_from "$STAMP" "$want" "${ETCD_CMDS[@]}" "${KUBE_CMDS[@]}" "${REGISTRY_CMDS[@]}" "${METRICS_CMDS[@]}" "${PROVISIONER_CMDS[@]}"; then
		log "up to date in $OUT"
		return 0
	fi
	log "building the control plane into $OUT (cold: 14-22 minutes on 2 cores; warm Go cache: 30 s)"
	echo "$want" | sed 's/^/    /'
	rm -f "$STAMP"
	local start=$SECONDS
	build "$ROOT/tools/etcd" "-s -w" "${ETCD_CMDS[@]}"
	build "$ROOT/tools/kube" "$(kube_ldflags)" "${KUBE_CMDS[@]}"
	build "$ROOT/tools/metrics" "$(metrics_ldflags)" "${METRICS_CMDS[@]}"
	build "$ROOT/tools/registry" "-s -w" "${REGISTRY_CMDS[@]}"
	build "$ROOT/tools/provisioner" "-s -w" "${PROVISIONER_CMDS[@]}"
	echo "$want" >"$STAMP"
	log "done in $((SECONDS - start))s"
}

main "$@"
