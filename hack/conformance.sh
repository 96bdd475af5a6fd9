#!/usr/bin/env bash
# make conformance: the upstream Kubernetes e2e suite's [NodeConformance]
# specs (k8s.io/kubernetes v1.37.2, test/e2e) against a node of berth's
# development cluster, and a per-spec summary of the result.
#
#   1. node set-up (containerd, CNI, test images; hack/node-setup.sh)
#   2. the control plane (hack/cluster-build.sh; with KUBELET=upstream also
#      the upstream kubelet), e2e.test, ginkgo and agnhost
#      (hack/conformance-build.sh; a cold e2e.test build is long, see
#      docs/conformance.md)
#   3. under /tmp/berth-e2e.lock for the rest of the run: the stand-in
#      images the suite pulls (hack/conformance-images.sh; under the lock,
#      for another checkout's run imports its own under the same names),
#      berth-cluster
#      (the control plane on 127.0.0.1 and one node joined through TLS
#      bootstrap, as make cluster, with kube-proxy and CoreDNS: see
#      CONFORMANCE_NETWORK), then ginkgo running e2e.test on it, then
#      conformance-summary over ginkgo's JSON report
#
# Settings (environment; make passes its command-line variables on):
#   KUBELET=berth|upstream   the node's kubelet (default berth; upstream is the
#                            kubelet v1.37.2 tools/kube builds, as make bench)
#   CONFORMANCE_SET          the specs: node (default) is the [NodeConformance]
#                            set; storage is upstream's single-node storage
#                            specs (storage_focus, storage_skip below), into
#                            _output/conformance/$KUBELET-storage
#   CONFORMANCE_FOCUS        ginkgo --focus (default '\[NodeConformance\]', or
#                            the set's)
#   CONFORMANCE_SKIP         ginkgo --skip (default '\[Serial\]|\[Disruptive\]|\[Flaky\]',
#                            or the set's)
#   CONFORMANCE_PROCS        parallel ginkgo processes (default 6)
#   CONFORMANCE_TIMEOUT      ginkgo --timeout for the whole suite (default 3h)
#   BERTH_CONTAINERD=2       the node runs on containerd 2.x (see hack/node-setup.sh)
#   CONFORMANCE_NETWORK      1 (default): build kube-proxy and CoreDNS
#                            (hack/cluster-build.sh --network) and run them
#                            (berth-cluster --network), for the specs that
#                            reach pods through Services and cluster DNS;
#                            0: neither (the node has no clusterDNS)
#   CONFORMANCE_SMOKE=1      only the specs of hack/conformance-smoke.txt (make
#                            test runs them), into _output/conformance/$KUBELET-smoke;
#                            it fails unless every one of them ran and passed;
#                            without kube-proxy and CoreDNS (CONFORMANCE_NETWORK=0),
#                            so that make test neither builds nor starts them
#
# Output in _output/conformance/$KUBELET: summary.txt (one line a spec:
# PASSED, FAILED with the first line of the failure, SKIPPED with the
# reason; then "N passed, N failed, N skipped"), report.json and junit.xml
# (ginkgo), ginkgo.log, cluster.log (control plane and kubelet output) and
# nodes.txt (the nodes' taints and conditions as the suite ended, printed
# last when the run failed).
# It exits non-zero when a spec failed.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KUBELET=${KUBELET:-berth}
SET=${CONFORMANCE_SET:-node}
PROCS=${CONFORMANCE_PROCS:-6}
TIMEOUT=${CONFORMANCE_TIMEOUT:-3h}
BIN=${BERTH_TOOLS_BIN:-$REPO_ROOT/_output/tools/bin}
RUN=$REPO_ROOT/_output/conformance/$KUBELET
SMOKE_LIST=$REPO_ROOT/hack/conformance-smoke.txt
NETWORK=${CONFORMANCE_NETWORK:-1}
CLUSTER_PID=
ADMIN_KUBECONFIG=

# storage_focus prints the focus of CONFORMANCE_SET=storage (issue 24):
# the [sig-storage] In-tree Volumes suites of the drivers that need only
# the node (local, hostPath, hostPathSymlink, emptydir), PersistentVolumes-local,
# the projected volume specs of sig-storage, and sig-auth's
# clusterTrustBundle and podCertificate projections.
storage_focus() {
	local -a alt=(
		'\[sig-storage\] In-tree Volumes \[Driver: (local|hostPath|hostPathSymlink|emptydir)\] '
		'\[sig-storage\] PersistentVolumes-local '
		'\[sig-storage\] Projected '
		'\[FeatureGate:ClusterTrustBundleProjection\]'
	)
	(IFS='|' && echo "${alt[*]}")
}

# storage_skip prints the skip of CONFORMANCE_SET=storage: the default's
# [Serial], [Disruptive] and [Flaky]; [Slow] (250 specs of the focus,
# upstream's long ones; run them with CONFORMANCE_SKIP); and
# [Feature:OffByDefault] (alpha gates the cluster leaves off). Specs that
# need a second node or a cloud provider (gce-localssd-scsi-fs) skip
# themselves at run time.
storage_skip() {
	echo '\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Slow\]|\[Feature:OffByDefault\]'
}

case $SET in
node)
	DEFAULT_FOCUS='\[NodeConformance\]'
	DEFAULT_SKIP='\[Serial\]|\[Disruptive\]|\[Flaky\]'
	;;
storage)
	DEFAULT_FOCUS=$(storage_focus)
	DEFAULT_SKIP=$(storage_skip)
	RUN=$RUN-storage
	;;
*) die "CONFORMANCE_SET=$SET: want node or storage" ;;
esac
FOCUS=${CONFORMANCE_FOCUS:-$DEFAULT_FOCUS}
SKIP=${CONFORMANCE_SKIP:-$DEFAULT_SKIP}

# smoke_specs prints the smoke set's spec texts, one a line.
smoke_specs() {
	grep -v -e '^#' -e '^$' "$SMOKE_LIST"
}

# smoke_focus prints the ginkgo focus that selects exactly the smoke set:
# each text with its regexp characters escaped, followed by the space
# before the labels or by the end of the spec's text (so that no longer
# text it is a prefix of matches; the storage suites' specs mostly have
# no labels in their text).
smoke_focus() {
	smoke_specs | sed -e 's/[][\\.*^$()+?{}|]/\\&/g' -e 's/$/( \\[|$)/' | paste -sd'|'
}

# check_smoke fails unless every spec of the smoke set passed.
check_smoke() {
	local spec missing=0
	while IFS= read -r spec; do
		if ! grep -qF "PASSED   $spec [" "$RUN/summary.txt" && ! grep -qxF "PASSED   $spec" "$RUN/summary.txt"; then
			echo "berth: error: smoke spec did not pass: $spec" >&2
			missing=1
		fi
	done < <(smoke_specs)
	return "$missing"
}

if [[ ${CONFORMANCE_SMOKE:-} == 1 ]]; then
	FOCUS=$(smoke_focus)
	RUN=$RUN-smoke
	NETWORK=0
fi
# berth-cluster's flags for the network.
NETWORK_FLAG=()
[[ $NETWORK == 1 ]] && NETWORK_FLAG=(--network)

# kubelet_args prints the node binary, then the flags it needs beyond those
# berth-cluster gives, one a line.
kubelet_args() {
	case $KUBELET in
	berth) echo "$REPO_ROOT/_output/conformance/berth-bin" ;;
	# No swap check: berth checks /proc/swaps at its default failSwapOn too.
	upstream) printf '%s\n' "$BIN/kubelet" --fail-swap-on=false ;;
	*) die "KUBELET=$KUBELET: want berth or upstream" ;;
	esac
}

prepare() {
	bash "$REPO_ROOT/hack/node-setup.sh"
	if [[ $KUBELET == upstream ]]; then
		bash "$REPO_ROOT/hack/cluster-build.sh" --with-kubelet
	else
		bash "$REPO_ROOT/hack/cluster-build.sh"
	fi
	if [[ $NETWORK == 1 ]]; then
		bash "$REPO_ROOT/hack/cluster-build.sh" --network
	fi
	bash "$REPO_ROOT/hack/conformance-build.sh"
	local version
	version=$(git -C "$REPO_ROOT" describe --always --dirty 2>/dev/null || echo unknown)
	mkdir -p "$REPO_ROOT/_output/bin" "$REPO_ROOT/_output/conformance"
	(cd "$REPO_ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -buildvcs=false \
		-ldflags "-s -w -X main.version=$version" -o _output/conformance/berth-bin ./cmd/berth)
	(cd "$REPO_ROOT" && "$GO" build -o _output/bin/berth-cluster ./test/cluster/cmd/berth-cluster)
}

stop_cluster() {
	[[ -n $CLUSTER_PID ]] || return 0
	log "stopping the cluster"
	kill -TERM "$CLUSTER_PID" 2>/dev/null || true
	wait "$CLUSTER_PID" 2>/dev/null || true
	CLUSTER_PID=
	# berth-cluster removes kube-proxy's rules as it stops; this is for
	# one that was killed first.
	if [[ $NETWORK == 1 ]]; then
		"$BIN/kube-proxy" --cleanup >>"$RUN/cluster.log" 2>&1 || warn "kube-proxy --cleanup failed; see $RUN/cluster.log"
	fi
}

# start_cluster starts berth-cluster in the background and returns once the
# node is Ready, with ADMIN_KUBECONFIG set. (Not in $(...): the cluster must
# be a child of this shell, for stop_cluster.)
start_cluster() {
	local -a node
	mapfile -t node < <(kubelet_args)
	rm -rf "$RUN/static-pods" && mkdir -p "$RUN/static-pods"
	"$REPO_ROOT/_output/bin/berth-cluster" --bin-dir "$BIN" --berth "${node[0]}" --cri-endpoint "unix://$CONTAINERD_SOCK" \
		--static-pod-path "$RUN/static-pods" "${NETWORK_FLAG[@]}" -- "${node[@]:1}" >"$RUN/cluster.log" 2>&1 &
	CLUSTER_PID=$!
	local kubeconfig="" i
	for ((i = 0; i < 120; i++)); do
		kill -0 "$CLUSTER_PID" 2>/dev/null || die "berth-cluster exited; see $RUN/cluster.log"
		kubeconfig=$(sed -n 's/^ *export KUBECONFIG=//p' "$RUN/cluster.log" | head -1)
		[[ -n $kubeconfig ]] && break
		sleep 1
	done
	[[ -n $kubeconfig ]] || die "the control plane did not start in 120 s; see $RUN/cluster.log"
	for ((i = 0; i < 120; i++)); do
		[[ -n $("$BIN/kubectl" --kubeconfig "$kubeconfig" get nodes -o name 2>/dev/null) ]] && break
		sleep 1
	done
	"$BIN/kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=180s ||
		die "no Ready node; see $RUN/cluster.log"
	# The suite starts only on an untainted node (its wait is 30 min): the
	# node lifecycle controller's not-ready taint goes within seconds of
	# Ready; a pressure taint stays.
	for ((i = 0; i < 120; i++)); do
		[[ -z $(blocking_taints "$kubeconfig") ]] && break
		sleep 1
	done
	if [[ -n $(blocking_taints "$kubeconfig") ]]; then
		node_report "$kubeconfig" >&2
		die "the node is Ready but tainted $(blocking_taints "$kubeconfig" | paste -sd' ') after 120 s: no spec could run on it; see $RUN/cluster.log"
	fi
	if [[ $NETWORK == 1 ]]; then
		for ((i = 0; i < 180; i++)); do
			kill -0 "$CLUSTER_PID" 2>/dev/null || die "berth-cluster exited; see $RUN/cluster.log"
			grep -q '^berth-cluster: network ready' "$RUN/cluster.log" && break
			sleep 1
		done
		grep -q '^berth-cluster: network ready' "$RUN/cluster.log" ||
			die "kube-proxy and CoreDNS not ready in 180 s; see $RUN/cluster.log"
	fi
	ADMIN_KUBECONFIG=$kubeconfig
}

# blocking_taints prints the nodes' NoSchedule and NoExecute taints
# (key:effect), one a line: those that keep the suite's pods off a node.
blocking_taints() {
	"$BIN/kubectl" --kubeconfig "$1" get nodes \
		-o jsonpath='{range .items[*].spec.taints[*]}{.key}:{.effect}{"\n"}{end}' | grep -E ':(NoSchedule|NoExecute)$' || true
}

# node_report prints each node's taints and conditions: what the suite
# judges a node by (a failed run's last lines say why it found none).
node_report() {
	"$BIN/kubectl" --kubeconfig "$1" get nodes -o go-template='{{range .items}}node {{.metadata.name}}: taints {{.spec.taints}}{{"\n"}}{{range .status.conditions}}  {{.type}}={{.status}} {{.reason}}: {{.message}}{{"\n"}}{{end}}{{end}}' ||
		echo "berth: could not read the nodes"
}

run_suite() {
	local kubeconfig=$1
	log "running e2e.test: focus '$FOCUS', skip '$SKIP', $PROCS processes"
	"$BIN/ginkgo" --procs="$PROCS" --focus="$FOCUS" --skip="$SKIP" --timeout="$TIMEOUT" --no-color --silence-skips \
		--output-dir="$RUN" --json-report=report.json --junit-report=junit.xml \
		"$BIN/e2e.test" -- \
		--provider=skeleton --kubeconfig="$kubeconfig" --kubectl-path="$BIN/kubectl" \
		--container-runtime-endpoint="unix://$CONTAINERD_SOCK" --kubelet-root-dir=/var/lib/kubelet \
		--node-os-distro=debian --disable-log-dump --e2e-output-dir="$RUN" \
		--node-schedulable-timeout=5m 2>&1 | tee "$RUN/ginkgo.log"
}

# locked runs under /tmp/berth-e2e.lock: cluster, suite, summary.
locked() {
	rm -rf "$RUN" && mkdir -p "$RUN"
	# The stand-in images under the lock: containerd's names are shared,
	# and a run from another checkout (make test's smoke set, say) imports
	# its own under the same names.
	bash "$REPO_ROOT/hack/conformance-images.sh"
	trap stop_cluster EXIT
	log "starting the control plane and a $KUBELET node (log: $RUN/cluster.log)"
	local rc=0
	start_cluster
	run_suite "$ADMIN_KUBECONFIG" || rc=$?
	# The nodes as the suite ended, printed again last if the run failed.
	node_report "$ADMIN_KUBECONFIG" >"$RUN/nodes.txt" 2>&1
	stop_cluster
	[[ -f $RUN/report.json ]] || die "ginkgo wrote no report (exit $rc); see $RUN/ginkgo.log"
	log "summary: $RUN/summary.txt"
	"$BIN/conformance-summary" -report "$RUN/report.json" -o "$RUN/summary.txt" || rc=$?
	if [[ ${CONFORMANCE_SMOKE:-} == 1 ]]; then
		check_smoke || rc=1
	fi
	if [[ $rc != 0 ]]; then
		echo "berth: the nodes as the suite ended ($RUN/nodes.txt):" >&2
		cat "$RUN/nodes.txt" >&2
	fi
	return "$rc"
}

main() {
	require_root
	if [[ ${1:-} == --locked ]]; then
		locked
		return
	fi
	kubelet_args >/dev/null
	prepare
	# -o: the lock is flock's own; the cluster and the suite do not inherit it.
	exec flock -o /tmp/berth-e2e.lock bash "$0" --locked
}

main "$@"
