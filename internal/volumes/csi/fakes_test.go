package csi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

const testDriver = "csi.example.com"

// socketDir is a short directory for sockets (t.TempDir's can pass the
// 108-byte limit of a socket's path).
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "csi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startDriver serves a fake driver and returns it with its endpoint.
func startDriver(t *testing.T, cfg csifake.Config) (*csifake.Driver, string) {
	t.Helper()
	endpoint := filepath.Join(socketDir(t), "csi.sock")
	return csifake.Start(t, endpoint, cfg), endpoint
}

// testContext is a context whose logger writes to t.
func testContext(t *testing.T) context.Context {
	_, ctx := ktesting.NewTestContext(t)
	return ctx
}
