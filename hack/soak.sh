#!/usr/bin/env bash
# make soak: berth and the upstream kubelet v1.37.2 through the soak suite
# side by side on this machine (test/soak, docs/reliability.md): churn,
# crashes, a runtime restart, CRI faults and an API server outage. Sets the
# node up, builds the control plane and the upstream kubelet (tools/kube)
# and berth, then runs every scenario for both kubelets. Arguments go to
# test/soak/cmd/soak (e.g. -churn-cycles 100 -outage 1m for a shorter run;
# -kubelet "" runs berth alone). The full run takes hours: 10,000 churn
# cycles a kubelet.
#
# It holds /tmp/berth-e2e.lock while it runs: end-to-end tests, the bench
# and the soak share containerd (and the soak restarts it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
cd "$ROOT"
# shellcheck source=hack/lib.sh
source "$ROOT/hack/lib.sh" # CONTAINERD_SOCK, from BERTH_CONTAINERD

bash hack/node-setup.sh
bash hack/cluster-build.sh --with-kubelet
VERSION=$(git describe --always --dirty 2>/dev/null || echo unknown)
mkdir -p _output/soak
CGO_ENABLED=0 "$GO" build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$VERSION" -o _output/soak/berth ./cmd/berth
"$GO" build -o _output/soak/soak ./test/soak/cmd/soak
exec flock -o /tmp/berth-e2e.lock _output/soak/soak -berth _output/soak/berth \
	-kubelet "${BERTH_TOOLS_BIN:-_output/tools/bin}/kubelet" -cri "unix://$CONTAINERD_SOCK" -out _output/soak "$@"
