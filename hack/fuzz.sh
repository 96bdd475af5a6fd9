#!/usr/bin/env bash
# make fuzz: runs every fuzz target in the repository (every `func FuzzX(`
# in a *_test.go file, in berth's module and in the tools modules) for
# FUZZTIME each (default 30s), one after the other: go test -fuzz takes one
# target of one package at a time, and each run uses every core.
#
#   FUZZTIME=2m make fuzz          longer runs
#   FUZZ='Expand' make fuzz        only targets whose name matches the regexp
#
# A target that fails leaves its crashing input under the package's
# testdata/fuzz/FuzzX/; commit it with the fix as a regression seed. The
# script goes on with the other targets and fails at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
FUZZTIME=${FUZZTIME:-30s}
FUZZ=${FUZZ:-.}
cd "$ROOT"

# module_root DIR prints the nearest directory at or above DIR with a go.mod.
module_root() {
	local d=$1
	until [[ -f $d/go.mod ]]; do d=$(dirname "$d"); done
	echo "$d"
}

# targets prints "<package dir> <FuzzName>" for every fuzz target, sorted.
targets() {
	find . \( -path ./_output -o -path ./bin -o -name testdata -o -name '.?*' \) -prune \
		-o -name '*_test.go' -print0 |
		xargs -0r grep -H -o '^func Fuzz[A-Za-z0-9_]*(' |
		sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' |
		LC_ALL=C sort -u
}

mapfile -t all < <(targets)
failed=()
ran=0
for t in "${all[@]}"; do
	read -r dir name <<<"$t"
	[[ $name =~ $FUZZ ]] || continue
	mod=$(module_root "$dir")
	rel=${dir#"$mod"}
	printf '[fuzz %s] %s %s for %s\n' "$(date +%H:%M:%S)" "${dir#./}" "$name" "$FUZZTIME"
	ran=$((ran + 1))
	if ! (cd "$mod" && "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "./${rel#/}"); then
		failed+=("${dir#./} $name")
	fi
done
if ((ran == 0)); then
	echo "no fuzz target matches FUZZ=$FUZZ" >&2
	exit 1
fi
if ((${#failed[@]} > 0)); then
	printf 'failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "all $ran fuzz targets passed"
