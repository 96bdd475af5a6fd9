#!/usr/bin/env bash
# Runs golangci-lint (.golangci.yml) over berth's module, building the
# pinned version from tools/lint into _output/tools/bin first when it is
# missing or its pin moved (a stamp of tools/lint's go.mod and go.sum).
# A cold build is a few minutes on two cores; an up-to-date check is
# instant.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}
BIN=$ROOT/_output/tools/bin
LINT=$BIN/golangci-lint
STAMP=$BIN/.stamp.lint
want=$(cat "$ROOT/tools/lint/go.mod" "$ROOT/tools/lint/go.sum" | sha256sum | cut -d' ' -f1)
if [[ ! -x $LINT || ! -f $STAMP || $(cat "$STAMP") != "$want" ]]; then
	echo "lint: building golangci-lint from tools/lint"
	mkdir -p "$BIN"
	(cd "$ROOT/tools/lint" && CGO_ENABLED=0 "$GO" build -trimpath -o "$LINT" github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
	echo "$want" >"$STAMP"
fi
cd "$ROOT"
exec "$LINT" run ./...
