# shellcheck shell=bash
# Shared settings and helpers for hack/*.sh. Source it; do not run it.
#
# Settings (environment overrides):
#   BERTH_NODE_STATE  state dir for the containerd we start: pid, log, config (default /var/lib/berth-node)
#   BERTH_CONTAINERD  1 (default): the host's containerd (Debian's 1.6);
#                     2: containerd 2.x built from tools/containerd2, run by
#                     hack/node-setup.sh next to the host's, on a socket of its own
#   CONTAINERD_SOCK   containerd's socket (default /run/containerd/containerd.sock;
#                     /run/berth-containerd2/containerd.sock with BERTH_CONTAINERD=2)
#   GO                the go command (default: go on PATH, else /usr/local/go/bin/go)

# shellcheck disable=SC2034 # the settings below are used by the scripts sourcing this file
# Functions called as $(f) stop at their first failing command too.
shopt -s inherit_errexit

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE_DIR=${BERTH_NODE_STATE:-/var/lib/berth-node}
BERTH_CONTAINERD=${BERTH_CONTAINERD:-1}
case $BERTH_CONTAINERD in
1) CONTAINERD_SOCK=${CONTAINERD_SOCK:-/run/containerd/containerd.sock} ;;
2) CONTAINERD_SOCK=${CONTAINERD_SOCK:-/run/berth-containerd2/containerd.sock} ;;
*)
	echo "berth: error: BERTH_CONTAINERD=$BERTH_CONTAINERD: want 1 (the host's containerd) or 2 (containerd 2.x from tools/containerd2)" >&2
	exit 1
	;;
esac
export BERTH_CONTAINERD
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
# root's sbin directories hold iptables and containerd's helpers; some
# environments leave them off PATH, and containerd inherits ours.
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

log() { echo "berth: $*"; }
warn() { echo "berth: warning: $*" >&2; }
die() {
	echo "berth: error: $*" >&2
	exit 1
}

# quiet runs a command with its output kept aside, and shows that output only
# when the command fails.
quiet() {
	local out rc=0
	out=$(mktemp)
	"$@" >"$out" 2>&1 || rc=$?
	if ((rc != 0)); then
		cat "$out" >&2
		echo "berth: error: '$*' exited $rc" >&2
	fi
	rm -f "$out"
	return "$rc"
}

require_root() {
	((EUID == 0)) || die "$(basename "$0") must run as root (try: sudo $0)"
}

# ctr_k8s runs ctr against our socket in the CRI's namespace.
ctr_k8s() {
	ctr --address "$CONTAINERD_SOCK" --connect-timeout 2s -n k8s.io "$@"
}

# lock_node serialises node set-up between concurrent runs (two `make test`
# in different clones, say). A child of a locked run skips the lock.
lock_node() {
	[[ -n ${BERTH_NODE_LOCKED:-} ]] && return 0
	mkdir -p "$STATE_DIR"
	exec 9>"$STATE_DIR/node-setup.lock"
	flock -w 300 9 || die "another node set-up holds $STATE_DIR/node-setup.lock"
	export BERTH_NODE_LOCKED=1
}
