#!/usr/bin/env bash
# Builds the upstream conformance tooling from tools/conformance into
# _output/tools/bin (or $BERTH_TOOLS_BIN), for `make conformance` only (never
# part of make test or make cluster-tools):
#
#   e2e.test             go test -c k8s.io/kubernetes/test/e2e
#   ginkgo               github.com/onsi/ginkgo/v2/ginkgo, the runner
#   agnhost              k8s.io/kubernetes/test/images/agnhost, the binary of
#                        the suite's main test image (hack/conformance-images.sh)
#   nnp                  k8s.io/kubernetes/test/images/nonewprivs, the binary of
#                        the nonewprivs test image
#   conformance-summary  tools/conformance/cmd/conformance-summary, the per-spec
#                        summary of ginkgo's JSON report
#
# at the versions tools/conformance/go.mod pins (k8s.io/kubernetes v1.37.2,
# its staging modules replaced by v0.37.2, as tools/kube), static and with
# -trimpath. As hack/cluster-build.sh: a stamp beside the binaries
# (.stamp.conformance) records what they were built from, and when it
# matches and every binary is there, nothing is built.
#
# A cold build of e2e.test is the bulk of it: see docs/conformance.md for
# the time it took.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
OUT=${BERTH_TOOLS_BIN:-$ROOT/_output/tools/bin}
MOD=$ROOT/tools/conformance
STAMP=$OUT/.stamp.conformance
PARALLEL=${BERTH_TOOLS_BUILD_P:-2}
CMDS=(e2e.test ginkgo agnhost nnp conformance-summary)

log() { printf '[conformance-build %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

module_version() {
	(cd "$MOD" && GOWORK=off "$GO" list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$1")
}

# ldflags sets the version e2e.test and agnhost report, as the upstream build does.
ldflags() {
	local v major minor pkg flags=""
	v=$(module_version k8s.io/kubernetes)
	major=${v#v}; major=${major%%.*}
	minor=${v#v*.}; minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+="-X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean "
	done
	echo "-s -w ${flags% }"
}

stamp() {
	echo "go: $("$GO" env GOVERSION)"
	echo "kubernetes: $(module_version k8s.io/kubernetes)"
	echo "ginkgo: $(module_version github.com/onsi/ginkgo/v2)"
	echo "sources: $(cd "$MOD" && find go.mod go.sum tools.go cmd -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
	echo "flags: CGO_ENABLED=0 -trimpath ldflags=$(ldflags)"
}

all_built() {
	local c
	for c in "${CMDS[@]}"; do
		[[ -x $OUT/$c ]] || return 1
	done
}

# build NAME PKG GO-VERB... runs `go GO-VERB... PKG` in the module with the
# shared flags, writing $OUT/NAME.
build() {
	local name=$1 pkg=$2 start=$SECONDS
	shift 2
	log "building $name ..."
	(cd "$MOD" && GOWORK=off CGO_ENABLED=0 "$GO" "$@" -p "$PARALLEL" -trimpath -buildvcs=false \
		-ldflags "$(ldflags)" -o "$OUT/$name.new" "$pkg")
	mv -f "$OUT/$name.new" "$OUT/$name"
	log "built $name in $((SECONDS - start))s"
}

main() {
	mkdir -p "$OUT"
	local want start=$SECONDS
	want=$(stamp)
	if all_built && [[ -f $STAMP ]] && [[ $(cat "$STAMP") == "$want" ]]; then
		log "up to date in $OUT"
		return 0
	fi
	log "building the conformance tools into $OUT"
	echo "$want" | sed 's/^/    /'
	rm -f "$STAMP"
	build e2e.test k8s.io/kubernetes/test/e2e test -c
	build ginkgo github.com/onsi/ginkgo/v2/ginkgo build
	build agnhost k8s.io/kubernetes/test/images/agnhost build
	build nnp k8s.io/kubernetes/test/images/nonewprivs build
	build conformance-summary ./cmd/conformance-summary build
	echo "$want" >"$STAMP"
	log "done in $((SECONDS - start))s"
}

main "$@"
