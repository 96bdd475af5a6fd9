package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/pluginmanager"
	"github.com/berthk8s/berth/internal/platform/pluginmanager/pluginfake"
)

// TestPluginManagerRuns: berth watches <root-dir>/plugins_registry and,
// with no handlers yet, tells a CSI plugin that announces itself there
// that no handler has its type, as upstream's kubelet tells a plugin of a
// type it does not know.
func TestPluginManagerRuns(t *testing.T) {
	fake := crifake.New(clock.RealClock{})
	cfg, _, _ := standalone(t, fake)
	dir := filepath.Join(cfg.RootDir, pluginmanager.DirName)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "csi.sock")
	plugin := pluginfake.Start(t, sock, pluginfake.Config{Type: registerapi.CSIPlugin, Name: "csi.example.com", Versions: []string{"1.0.0"}})

	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runWith(ctx, cfg, "test", clock.RealClock{}, testProcess()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitFor(t, "the plugin's status", func() bool { return len(plugin.Statuses()) > 0 })
	want := pluginfake.Status{Error: fmt.Sprintf("RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket %s", sock)}
	if diff := cmp.Diff(want, plugin.Statuses()[0]); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}
