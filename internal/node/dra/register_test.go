package dra

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/berthk8s/berth/internal/platform/pluginmanager"
	"github.com/berthk8s/berth/internal/platform/pluginmanager/pluginfake"
)

// TestDriversRegisterThroughThePluginManager: a DRA driver's registration
// socket in the plugin manager's directory registers it with Drivers
// (the driver is told so), one with no service berth speaks is refused
// with upstream's words, and a socket that goes deregisters its driver.
func TestDriversRegisterThroughThePluginManager(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "drareg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	m, _, clk := testManager(t, t.TempDir())
	pm, err := pluginmanager.New(pluginmanager.Config{Dir: dir, Clock: clk,
		Handlers: map[string]pluginmanager.Handler{registerapi.DRAPlugin: m.Drivers()}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- pm.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("plugin manager Run: %v", err)
		}
		m.Drivers().close()
	}()

	d := startDriver(t, drapb.DRAPluginService, drapbv1beta1.DRAPluginService)
	reg := pluginfake.Start(t, filepath.Join(dir, "test-reg.sock"), pluginfake.Config{Type: registerapi.DRAPlugin, Name: testDriver,
		Endpoint: d.endpoint, Versions: []string{drapbv1beta1.DRAPluginService, drapb.DRAPluginService}})
	waitFor(t, "the driver registered", func() bool { return len(m.Drivers().Registered()) == 1 })
	if got, want := m.Drivers().Registered()[0], testDriver+"="+drapb.DRAPluginService+"@"+d.endpoint; got != want {
		t.Errorf("registered %q, want %q", got, want)
	}
	waitFor(t, "the driver told", func() bool { return len(reg.Statuses()) == 1 })
	if s := reg.Statuses()[0]; !s.Registered {
		t.Errorf("the driver was told %+v, want registered", s)
	}

	old := pluginfake.Start(t, filepath.Join(dir, "old-reg.sock"), pluginfake.Config{Type: registerapi.DRAPlugin, Name: "old.example.com",
		Endpoint: d.endpoint, Versions: []string{"v1alpha4.Node"}})
	waitFor(t, "the old driver told", func() bool { return len(old.Statuses()) == 1 })
	if s := old.Statuses()[0]; s.Registered || !strings.Contains(s.Error, "none of services supported by the plugin") {
		t.Errorf("the old driver was told %+v, want refused for its services", s)
	}

	reg.Stop()
	waitFor(t, "the driver deregistered", func() bool { return len(m.Drivers().Registered()) == 0 })
}
