#!/usr/bin/env bash
# make bench: berth and the upstream kubelet v1.37.2 side by side on this
# machine (test/bench, docs/performance.md). Sets the node up, builds the
# control plane and the upstream kubelet (tools/kube), builds berth the way
# the kubelet is built (static, -trimpath, -s -w), then runs every scenario
# for both kubelets in both configurations (-configs shared,defaults: the
# bench's shared file, and only what this machine needs), the density
# scenario (-density 250, with -max-pods 250; 0 = off), berth's heap at 0,
# 10, 110 and 250 pods (-heap), and the CRI floor. Arguments go to
# test/bench/cmd/bench (e.g. -repeats 1 -bursts 10 -steady 20s -configs
# shared -density 0 -heap=false for a quick look). It refuses to
# run when other processes use more than -idle-threshold (10 %) of the CPU
# once it holds the lock, unless -allow-busy is given, and warns in its
# output when they do during the run (docs/performance.md).
#
# It holds /tmp/berth-e2e.lock while it runs: end-to-end tests and the bench
# share containerd and must not run at once.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
cd "$ROOT"
# shellcheck source=hack/lib.sh
source "$ROOT/hack/lib.sh" # CONTAINERD_SOCK, from BERTH_CONTAINERD

bash hack/node-setup.sh
bash hack/cluster-build.sh --with-kubelet
VERSION=$(git describe --always --dirty 2>/dev/null || echo unknown)
mkdir -p _output/bench
CGO_ENABLED=0 "$GO" build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$VERSION" -o _output/bench/berth ./cmd/berth
"$GO" build -o _output/bench/bench ./test/bench/cmd/bench
exec flock -o /tmp/berth-e2e.lock _output/bench/bench -berth _output/bench/berth \
	-kubelet "${BERTH_TOOLS_BIN:-_output/tools/bin}/kubelet" -cri "unix://$CONTAINERD_SOCK" -out _output/bench "$@"
