package pluginmanager

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/pluginmanager/pluginfake"
)

// TestTotalPlugins: the gauge counts each socket in the directory
// (desired) and each registered plugin (actual), in the registry given.
func TestTotalPlugins(t *testing.T) {
	dir := socketDir(t)
	reg := prometheus.NewPedanticRegistry()
	// A plugin of a type without a handler is desired, not registered.
	refused := filepath.Join(dir, "refused.sock")
	pluginfake.Start(t, refused, pluginfake.Config{Type: "DRAPlugin", Name: "r.example.com"})
	ok := filepath.Join(dir, "ok.sock")
	pluginfake.Start(t, ok, pluginfake.Config{Type: testType, Name: "p.example.com"})
	m, _ := startWith(t, Config{Dir: dir, Clock: testingclock.NewFakeClock(t0), Handlers: map[string]Handler{testType: &testHandler{}}, Registerer: reg})
	waitFor(t, "the plugin registered", func() bool { return len(regs(m)) == 1 && len(m.Snapshot().Desired) == 2 })
	want := `# HELP plugin_manager_total_plugins [ALPHA] Number of plugins in Plugin Manager
# TYPE plugin_manager_total_plugins gauge
plugin_manager_total_plugins{socket_path="` + ok + `",state="actual_state_of_world"} 1
plugin_manager_total_plugins{socket_path="` + ok + `",state="desired_state_of_world"} 1
plugin_manager_total_plugins{socket_path="` + refused + `",state="desired_state_of_world"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "plugin_manager_total_plugins"); err != nil {
		t.Error(err)
	}
}
