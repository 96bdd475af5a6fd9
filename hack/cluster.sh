#!/usr/bin/env bash
# make cluster: berth's development cluster on this machine.
#
#   1. node set-up (containerd, CNI, test images; hack/node-setup.sh)
#   2. the control plane binaries, kube-proxy and CoreDNS (hack/cluster-build.sh,
#      hack/cluster-build.sh --network; cached)
#   3. berth (bin/berth) and berth-cluster (_output/bin/berth-cluster)
#   4. berth-cluster: etcd, kube-apiserver, kube-controller-manager and
#      kube-scheduler on 127.0.0.1 with real TLS, then berth joined to them
#      as node $(hostname) through TLS bootstrap (a bootstrap token and
#      rotateCertificates, as kubeadm join; --tls-bootstrap=false gives it a
#      system:node certificate instead), with examples/static-pods; once
#      the node is registered, kube-proxy (iptables mode) and CoreDNS
#      (the kube-dns Service at 10.0.0.10, the node's clusterDNS), both as
#      host processes (berth-cluster --network; test/cluster/network.go);
#      before berth starts, local-provisioner (tools/provisioner) for the node
#      and the default StorageClass "standard" (WaitForFirstConsumer,
#      reclaimPolicy Delete; its volumes are directories under the cluster's
#      volumes/; berth-cluster --storage, on by default; test/cluster/storage.go).
#      It prints the kubectl command line to use. Ctrl-C or SIGTERM stops
#      berth, kube-proxy and CoreDNS (removing kube-proxy's iptables rules:
#      kube-proxy --cleanup), the provisioner and the control plane.
#
# Like `make run`, berth removes every CRI pod on containerd it was not asked
# to run: do not start it while tests use the same containerd.
#
# Arguments go to berth-cluster; after `--`, to berth. Examples:
#
#   bash hack/cluster.sh --node-name=dev1
#   BERTH_CLUSTER_CONTROL_PLANE_ONLY=1 bash hack/cluster.sh   # no node set-up, no berth, no network
#   BERTH_CLUSTER_NETWORK=0 bash hack/cluster.sh   # no kube-proxy, no CoreDNS
#   bash hack/cluster.sh --storage=false           # no provisioner, no default StorageClass
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
cd "$ROOT"

# shellcheck source=hack/lib.sh
source "$ROOT/hack/lib.sh" # CONTAINERD_SOCK, from BERTH_CONTAINERD
log() { printf '[cluster] %s\n' "$*"; }

BERTH_FLAG=(--berth "$ROOT/bin/berth" --cri-endpoint "unix://$CONTAINERD_SOCK")
NETWORK=${BERTH_CLUSTER_NETWORK:-1}
if [[ ${BERTH_CLUSTER_CONTROL_PLANE_ONLY:-} == 1 ]]; then
	BERTH_FLAG=(--berth "")
	NETWORK=0
	log "control plane only: no node set-up, no berth"
else
	log "node set-up"
	bash hack/node-setup.sh
fi

bash hack/cluster-build.sh
if [[ $NETWORK == 1 ]]; then
	bash hack/cluster-build.sh --network
	BERTH_FLAG+=(--network)
fi

if [[ ${BERTH_CLUSTER_CONTROL_PLANE_ONLY:-} != 1 ]]; then
	log "building berth"
	VERSION=${VERSION:-$(git describe --always --dirty 2>/dev/null || echo unknown)}
	"$GO" build -ldflags "-X main.version=$VERSION" -o bin/berth ./cmd/berth
fi
log "building berth-cluster"
"$GO" build -o _output/bin/berth-cluster ./test/cluster/cmd/berth-cluster

exec _output/bin/berth-cluster "${BERTH_FLAG[@]}" "$@"
