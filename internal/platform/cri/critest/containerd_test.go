package critest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// TestContainerd runs the suite against a real containerd. It needs the
// images docker.io/library/busybox:1.36 and registry.k8s.io/pause:3.10.1
// present in the runtime (berth's make test imports them).
func TestContainerd(t *testing.T) {
	endpoint := os.Getenv("BERTH_CRI_ENDPOINT")
	if endpoint == "" {
		t.Skip("set BERTH_CRI_ENDPOINT (e.g. unix:///run/containerd/containerd.sock) to run the CRI suite against a real runtime")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cri.Dial(ctx, cri.Options{RuntimeEndpoint: endpoint, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("dial %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	RunSuite(t, Env{
		Client:       c,
		Image:        "docker.io/library/busybox:1.36",
		SandboxImage: "registry.k8s.io/pause:3.10.1",
		LogDir:       t.TempDir(),
	})
}
