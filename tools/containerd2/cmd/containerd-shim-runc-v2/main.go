// Command containerd-shim-runc-v2 is the runc shim of containerd 2.x, from
// the same module and version as containerd2 (upstream's main as is). The
// tests put its directory first in containerd2's PATH, so that containerd2
// starts this shim and not the host's containerd 1.6 one; runc itself is
// the host's.
package main

import (
	"context"

	"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2/manager"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2/task/plugin"
	"github.com/containerd/containerd/v2/pkg/shim"
)

func main() {
	shim.RunShim(context.Background(), manager.NewShimManager("io.containerd.runc.v2"))
}
