#!/usr/bin/env bash
# make simbench: berth simulate, kwok and kubemark's hollow nodes side by
# side (issue 28 item 5; test/simbench says what it measures and how).
#
#   make simbench                                     # 100, 500 and 1000 nodes, 10 pods a node
#   make simbench SIMBENCH_ARGS="-sizes 5,20 -window 20s"
#   hack/simbench.sh -simulators berth,kwok -sizes 200 -berth-args "--pod-watch shared"
#
# It builds what it runs: the control plane (hack/cluster-build.sh, an
# up-to-date check when built), kwok, kwok-stages and kubemark
# (hack/cluster-build.sh --simbench, a stamp of their own; cold: about 3
# minutes on 2 cores), bin/berth (make build, from the working tree) and
# the harness; then runs the harness with the arguments given here
# (simbench -h lists them: -sizes, -pods-per-node, -simulators, -window,
# -settle, -ready-timeout, -running-timeout, -berth-args, -mem-floor-mib,
# -out). The table and the raw JSON go to _output/simbench/. One run at a
# time (a lock); it never uses containerd and is never part of make test;
# kubemark's runs need root when fs.inotify.max_user_instances is under
# upstream's 1000 (raised for the run, put back after). All three at 100/500/1000 nodes take about an hour or
# more: every simulator at every size gets a control plane of its own.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
cd "$ROOT"
bash hack/cluster-build.sh
bash hack/cluster-build.sh --simbench
make --no-print-directory build GO="$GO"
mkdir -p _output/simbench
"$GO" build -o _output/simbench/simbench ./test/simbench/cmd/simbench
# -o: flock holds the lock itself, so that nothing the harness starts
# inherits it.
rc=0
flock -n -o -E 75 /tmp/berth-simbench.lock _output/simbench/simbench -berth bin/berth "$@" || rc=$?
if ((rc == 75)); then
	echo "simbench: another run holds /tmp/berth-simbench.lock" >&2
fi
exit "$rc"
