// Command containerd2 is containerd 2.x (github.com/containerd/containerd/v2)
// at the version pinned in this module's go.mod: upstream's cmd/containerd
// main with upstream's builtins (the CRI plugin among them), built for the
// tests that need a runtime newer than the host's containerd 1.6 (the CRI
// container event stream, GetContainerEvents).
//
// It is named containerd2 so that it can never be taken for the host's
// containerd; the tests start it with a root, state, socket and config of
// their own.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/containerd/containerd/v2/cmd/containerd/command"

	_ "github.com/containerd/containerd/v2/cmd/containerd/builtins"
)

func main() {
	if err := command.App().Run(context.Background(), os.Args); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "containerd:", err)
		os.Exit(1)
	}
}
