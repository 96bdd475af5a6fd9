#!/usr/bin/env bash
# Prepares this machine to run berth against containerd, as root:
#
#   1. installs the Debian packages berth and its tests need, when missing;
#   2. writes the CNI bridge network /etc/cni/net.d/10-berth-bridge.conflist
#      (bridge berth0, 10.88.0.0/16, masquerade, portmap) and enables
#      IPv4 forwarding;
#   3. writes containerd's configuration (see "containerd configuration");
#   4. makes sure containerd runs and its CRI plugin answers;
#   5. builds and imports the test images (hack/images.sh).
#
# With BERTH_CONTAINERD=2, steps 3 and 4 run containerd 2.x instead (see
# "containerd 2"); the host's containerd is left as it is.
#
# It is idempotent: a second run changes nothing and takes a few seconds.
#
# containerd configuration
#   berth's config (marked by its first line) goes to /etc/containerd/config.toml
#   when that file is absent, already ours, or Debian's unmodified default (kept
#   as config.toml.berth-orig). A config you wrote yourself is never touched:
#   berth's then goes to $STATE_DIR/containerd.toml and is used only when this
#   script starts containerd itself; a containerd already running on your config
#   is used as it is, with a warning if it lacks what berth needs.
#
# Starting containerd
#   With systemd (/run/systemd/system), `systemctl restart containerd` whenever
#   berth's config changed. Without systemd, this script starts containerd in
#   the background with its pid and log in $STATE_DIR, restarts it when its
#   config changed, and never starts a second one next to a containerd that
#   already answers on $CONTAINERD_SOCK.
#
# containerd 2
#   BERTH_CONTAINERD=2 runs containerd 2.x, built from tools/containerd2
#   (hack/cluster-build.sh --containerd2), next to the host's containerd and
#   independent of it: its binaries are copied to $STATE_DIR/containerd2/bin
#   (so it never runs from a checkout that may go away), its config, pid and
#   log are in $STATE_DIR/containerd2, its root is /var/lib/berth-containerd2,
#   and its state, socket, shim sockets and runc root are under
#   /run/berth-containerd2. It shares the CNI network. This script always
#   starts it itself (no systemd unit), and restarts it when its config or
#   binaries changed. Point berth at it with
#   containerRuntimeEndpoint: unix:///run/berth-containerd2/containerd.sock
#   (make does so when BERTH_CONTAINERD=2 is set).
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PACKAGES=(containerd runc containernetworking-plugins iptables busybox-static
	gcc libc6-dev # gcc and libc6-dev: go test -race needs cgo
	dbus-daemon # the private bus of the graceful node shutdown tests
	curl netcat-openbsd bind9-dnsutils) # the conformance stand-in of agnhost (hack/conformance-images.sh)
CNI_BIN_DIR=/usr/lib/cni
CNI_CONF=/etc/cni/net.d/10-berth-bridge.conflist
ETC_CONFIG=/etc/containerd/config.toml
MARKER="# Written by berth hack/node-setup.sh; delete this line to keep your own edits."
PID_FILE=$STATE_DIR/containerd.pid
LOG_FILE=$STATE_DIR/containerd.log
HASH_FILE=$STATE_DIR/containerd.config.sha256
# The containerd binary start_ourselves runs, and what goes before PATH for
# it (the directory of its shim).
CONTAINERD_BIN=containerd
CONTAINERD_PATH_PREFIX=
C2_HOME=$STATE_DIR/containerd2
C2_ROOT=/var/lib/berth-containerd2
C2_RUN=$(dirname "$CONTAINERD_SOCK")
CHANGED=0 # set by put_file

install_packages() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		# A containerd or runc from elsewhere (Docker's containerd.io, say)
		# will do, and Debian's packages would conflict with it.
		[[ $p == containerd || $p == runc ]] && command -v "$p" >/dev/null && continue
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	log "installing ${missing[*]}"
	quiet apt-get update
	quiet env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# put_file writes content (stdin) to path when it differs, atomically, and
# says whether it did through the global CHANGED.
put_file() {
	local path=$1 tmp
	tmp=$(mktemp "$(dirname "$path")/.berth-XXXXXX")
	cat >"$tmp"
	if cmp -s "$tmp" "$path"; then
		rm -f "$tmp"
		CHANGED=0
		return 0
	fi
	chmod 0644 "$tmp"
	mv -f "$tmp" "$path"
	CHANGED=1
	log "wrote $path"
}

setup_network() {
	mkdir -p "$(dirname "$CNI_CONF")"
	put_file "$CNI_CONF" <<-'EOF'
		{
		  "cniVersion": "1.0.0",
		  "name": "berth",
		  "plugins": [
		    {
		      "type": "bridge",
		      "bridge": "berth0",
		      "isGateway": true,
		      "ipMasq": true,
		      "hairpinMode": true,
		      "ipam": {
		        "type": "host-local",
		        "ranges": [[{ "subnet": "10.88.0.0/16" }]],
		        "routes": [{ "dst": "0.0.0.0/0" }]
		      }
		    },
		    { "type": "portmap", "capabilities": { "portMappings": true } }
		  ]
		}
	EOF
	local first
	first=$(find "$(dirname "$CNI_CONF")" -maxdepth 1 -name '*.conf*' | sort | head -n1)
	[[ $first == "$CNI_CONF" ]] || warn "containerd uses the first CNI config, $first, not $CNI_CONF"
	mkdir -p /etc/sysctl.d
	put_file /etc/sysctl.d/99-berth.conf <<<"net.ipv4.ip_forward = 1"
	sysctl -qw net.ipv4.ip_forward=1
	modprobe -q overlay 2>/dev/null || true
}

# restrict_oom_score_adj prints containerd's restrict_oom_score_adj: true
# when root lacks CAP_SYS_RESOURCE (bit 24 of CapEff), as in unprivileged
# containers and some VMs. It keeps containers' oom_score_adj at or above
# containerd's own, which such a root cannot go below.
restrict_oom_score_adj() {
	local capeff
	capeff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
	if (((0x$capeff >> 24) & 1)); then echo false; else echo true; fi
}

# containerd_config prints berth's containerd configuration.
containerd_config() {
	local restrict
	restrict=$(restrict_oom_score_adj)
	# The runc runtime uses the cgroupfs driver, matching cgroupDriver in
	# examples/kubelet-config.yaml, with or without systemd. AppArmor needs no
	# setting: containerd applies it only where the kernel enables it.
	cat <<-EOF
		$MARKER
		version = 2

		[plugins]
		  [plugins."io.containerd.grpc.v1.cri"]
		    sandbox_image = "registry.k8s.io/pause:3.10.1"
		    restrict_oom_score_adj = $restrict
		    [plugins."io.containerd.grpc.v1.cri".cni]
		      bin_dir = "$CNI_BIN_DIR"
		      conf_dir = "$(dirname "$CNI_CONF")"
		    [plugins."io.containerd.grpc.v1.cri".containerd]
		      default_runtime_name = "runc"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		        runtime_type = "io.containerd.runc.v2"
		        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		          SystemdCgroup = false
		  [plugins."io.containerd.internal.v1.opt"]
		    path = "/var/lib/containerd/opt"
	EOF
}

# etc_config_kind classifies /etc/containerd/config.toml: absent, ours,
# pristine (Debian's unmodified default) or foreign.
etc_config_kind() {
	if [[ ! -e $ETC_CONFIG ]]; then
		echo absent
	elif [[ $(head -n1 "$ETC_CONFIG") == "$MARKER" ]]; then
		echo ours
	else
		local want have
		want=$(dpkg-query -W -f='${Conffiles}\n' containerd 2>/dev/null | awk -v f="$ETC_CONFIG" '$1 == f { print $2 }')
		have=$(md5sum <"$ETC_CONFIG" | cut -d' ' -f1)
		if [[ -n $want && $have == "$want" ]]; then echo pristine; else echo foreign; fi
	fi
}

# write_containerd_config sets CONFIG_PATH to berth's config file and
# FOREIGN_CONFIG to 1 when /etc/containerd/config.toml is someone else's.
write_containerd_config() {
	FOREIGN_CONFIG=0
	CONFIG_PATH=$ETC_CONFIG
	case $(etc_config_kind) in
	pristine) cp -p "$ETC_CONFIG" "$ETC_CONFIG.berth-orig" ;;
	foreign)
		FOREIGN_CONFIG=1
		CONFIG_PATH=$STATE_DIR/containerd.toml
		;;
	esac
	mkdir -p "$(dirname "$CONFIG_PATH")"
	put_file "$CONFIG_PATH" < <(containerd_config)
	if ((FOREIGN_CONFIG && CHANGED)); then
		log "kept your $ETC_CONFIG; berth's containerd config is $CONFIG_PATH"
	fi
}

# alive says whether pid is a live process, whatever its name. A zombie does
# not count: an init that does not reap would leave a dead containerd looking
# alive. The process this script starts is judged by this alone: until its
# exec, /proc names the subshell (bash, then setsid), not containerd.
alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	[[ ${stat##*) } != Z* ]]
}

# running says whether pid is a live containerd: the pid file of an earlier
# run may name a pid that another program has since been given.
running() {
	local stat
	alive "$1" || return 1
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	[[ $stat == *" (containerd) "* ]]
}

# our_pid prints the pid of the containerd this script started, if it runs.
our_pid() {
	local pid
	pid=$(cat "$PID_FILE" 2>/dev/null) || return 0
	if running "$pid"; then echo "$pid"; fi
}

containerd_answers() {
	[[ -S $CONTAINERD_SOCK ]] && ctr --address "$CONTAINERD_SOCK" --connect-timeout 1s version >/dev/null 2>&1
}

# cri_status prints the CRI plugin's status: ok, error or skip; nothing when
# containerd has no CRI plugin; unreachable when containerd did not answer.
cri_status() {
	local plugins
	plugins=$(ctr --address "$CONTAINERD_SOCK" --connect-timeout 1s plugins ls 2>/dev/null) || {
		echo unreachable
		return 0
	}
	awk '$1 == "io.containerd.grpc.v1" && $2 == "cri" { print $NF }' <<<"$plugins"
}

# wait_ready waits up to 60s for containerd with a working CRI plugin.
wait_ready() {
	local pid=${1:-} i
	for ((i = 0; i < 120; i++)); do
		if containerd_answers; then
			# Plugins load before containerd serves, so its answer is final.
			case $(cri_status) in
			ok) return 0 ;;
			unreachable) ;;
			"") fail_containerd "containerd has no CRI plugin (disabled_plugins in its config?)" "$pid" ;;
			*) fail_containerd "containerd's CRI plugin did not load" "$pid" ;;
			esac
		fi
		if [[ -n $pid ]] && ! alive "$pid"; then
			fail_containerd "containerd (pid $pid) exited" "$pid"
		fi
		sleep 0.5
	done
	fail_containerd "containerd did not answer on $CONTAINERD_SOCK within 60s" "$pid"
}

fail_containerd() {
	local msg=$1 pid=${2:-}
	echo "berth: error: $msg" >&2
	if [[ -d /run/systemd/system ]]; then
		journalctl -u containerd -n 30 --no-pager >&2 || true
	elif [[ -n $pid && -f $LOG_FILE ]]; then
		echo "--- last lines of $LOG_FILE:" >&2
		tail -n 30 "$LOG_FILE" >&2
	fi
	exit 1
}

start_with_systemd() {
	local hash=$1
	if ((FOREIGN_CONFIG)); then
		systemctl is-active -q containerd || systemctl start containerd
		warn "containerd runs on your $ETC_CONFIG; berth needs what $CONFIG_PATH sets"
	elif ! systemctl is-active -q containerd || [[ $(cat "$HASH_FILE" 2>/dev/null) != "$hash" ]]; then
		log "restarting containerd with systemd"
		systemctl enable -q containerd 2>/dev/null || true
		systemctl restart containerd
		echo "$hash" >"$HASH_FILE"
	fi
	wait_ready
}

start_ourselves() {
	local hash=$1 pid i
	pid=$(our_pid)
	if [[ -n $pid && $(cat "$HASH_FILE" 2>/dev/null) == "$hash" ]]; then
		wait_ready "$pid"
		return 0
	fi
	if [[ -n $pid ]]; then
		log "restarting containerd (pid $pid): its config changed"
		kill -TERM "$pid"
		for ((i = 0; i < 40; i++)); do running "$pid" || break; sleep 0.25; done
		kill -KILL "$pid" 2>/dev/null || true
	elif containerd_answers; then
		((CHANGED)) && warn "a containerd not started by berth runs on $CONTAINERD_SOCK; restart it to apply $CONFIG_PATH"
		wait_ready
		return 0
	fi
	[[ -f $LOG_FILE ]] && mv -f "$LOG_FILE" "$LOG_FILE.1"
	# setsid: containerd leaves our session and outlives this script and make.
	# Every inherited descriptor above stderr is closed: containerd must not
	# hold a lock of ours (fd 9) or of a caller's (flock(1) passes its own
	# lock on, and a containerd holding it blocks every test run after).
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			((fd > 2)) && eval "exec $fd>&-"
		done
		export PATH=$CONTAINERD_PATH_PREFIX$PATH
		exec setsid "$CONTAINERD_BIN" --config "$CONFIG_PATH" </dev/null >"$LOG_FILE" 2>&1
	) &
	pid=$!
	echo "$pid" >"$PID_FILE"
	echo "$hash" >"$HASH_FILE"
	log "started containerd (pid $pid, log $LOG_FILE)"
	wait_ready "$pid"
}

# containerd2_config prints the configuration of containerd 2 (version 3
# of the format): what containerd_config sets, in containerd 2's plugin
# names, with every path of its own. NRI is off: it would listen on the
# host containerd's /var/run/nri/nri.sock.
containerd2_config() {
	local restrict
	restrict=$(restrict_oom_score_adj)
	cat <<-EOF
		$MARKER
		version = 3
		root = "$C2_ROOT"
		state = "$C2_RUN/state"
		disabled_plugins = ["io.containerd.nri.v1.nri"]

		[grpc]
		  address = "$CONTAINERD_SOCK"

		[ttrpc]
		  address = "$CONTAINERD_SOCK.ttrpc"

		[plugins]
		  [plugins.'io.containerd.shim.v1.manager']
		    socket_dir = "$C2_RUN/s"
		  [plugins.'io.containerd.internal.v1.opt']
		    path = "$C2_ROOT/opt"
		  [plugins.'io.containerd.cri.v1.images']
		    [plugins.'io.containerd.cri.v1.images'.pinned_images]
		      sandbox = "registry.k8s.io/pause:3.10.1"
		  [plugins.'io.containerd.cri.v1.runtime']
		    restrict_oom_score_adj = $restrict
		    netns_mounts_under_state_dir = true
		    [plugins.'io.containerd.cri.v1.runtime'.cni]
		      bin_dirs = ["$CNI_BIN_DIR"]
		      conf_dir = "$(dirname "$CNI_CONF")"
		    [plugins.'io.containerd.cri.v1.runtime'.containerd]
		      default_runtime_name = "runc"
		      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
		        runtime_type = "io.containerd.runc.v2"
		        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
		          SystemdCgroup = false
		          Root = "$C2_RUN/runc"
	EOF
}

# install_containerd2 builds containerd 2 when needed, copies its binaries
# to $C2_HOME/bin (as containerd and containerd-shim-runc-v2), writes its
# config and sets the globals start_ourselves uses.
install_containerd2() {
	local bin=${BERTH_TOOLS_BIN:-$REPO_ROOT/_output/tools/bin} name
	bash "$REPO_ROOT/hack/cluster-build.sh" --containerd2
	mkdir -p "$C2_HOME/bin"
	for name in containerd2:containerd containerd-shim-runc-v2:containerd-shim-runc-v2; do
		if ! cmp -s "$bin/${name%%:*}" "$C2_HOME/bin/${name##*:}"; then
			install -m 0755 "$bin/${name%%:*}" "$C2_HOME/bin/.${name##*:}.new"
			mv -f "$C2_HOME/bin/.${name##*:}.new" "$C2_HOME/bin/${name##*:}"
		fi
	done
	CONFIG_PATH=$C2_HOME/config.toml
	put_file "$CONFIG_PATH" < <(containerd2_config)
	PID_FILE=$C2_HOME/containerd.pid
	LOG_FILE=$C2_HOME/containerd.log
	HASH_FILE=$C2_HOME/config.sha256
	CONTAINERD_BIN=$C2_HOME/bin/containerd
	CONTAINERD_PATH_PREFIX=$C2_HOME/bin:
}

# stop_ours stops the containerd this script started (for
# --restart-containerd): SIGTERM, then SIGKILL after 10 s. Its shims and
# containers live on, as in any containerd restart.
stop_ours() {
	local pid i
	pid=$(our_pid)
	[[ -n $pid ]] || die "--restart-containerd: no containerd started by this script runs ($PID_FILE)"
	log "stopping containerd (pid $pid) to restart it"
	kill -TERM "$pid"
	for ((i = 0; i < 40; i++)); do running "$pid" || return 0; sleep 0.25; done
	kill -KILL "$pid" 2>/dev/null || true
}

main() {
	local restart=0
	case ${1:-} in
	--restart-containerd) restart=1 ;; # the soak suite's runtime restart (test/soak)
	"") ;;
	*) die "unknown argument $1 (only --restart-containerd)" ;;
	esac
	require_root
	lock_node
	install_packages
	setup_network
	local hash
	if ((restart)); then
		((BERTH_CONTAINERD == 2)) && install_containerd2
		if ((BERTH_CONTAINERD != 2)) && [[ -d /run/systemd/system ]]; then
			systemctl restart containerd
			wait_ready
			return 0
		fi
		stop_ours
	fi
	if ((BERTH_CONTAINERD == 2)); then
		install_containerd2
		hash=$(cat "$CONFIG_PATH" "$C2_HOME/bin/containerd" "$C2_HOME/bin/containerd-shim-runc-v2" | sha256sum | cut -d' ' -f1)
		start_ourselves "$hash"
	else
		write_containerd_config
		hash=$(sha256sum <"$CONFIG_PATH" | cut -d' ' -f1)
		if [[ -d /run/systemd/system ]]; then
			start_with_systemd "$hash"
		else
			start_ourselves "$hash"
		fi
	fi
	((restart)) && return 0
	bash "$REPO_ROOT/hack/images.sh"
	log "node ready: containerd on $CONTAINERD_SOCK, CNI $CNI_CONF"
}

# Sourced (by test/nodesetup), it only defines its functions.
[[ ${BASH_SOURCE[0]} != "$0" ]] || main "$@"
