package pluginmanager

import "github.com/prometheus/client_golang/prometheus"

// totalPlugins is upstream's plugin_manager_total_plugins (its
// pluginmanager/metrics): one series per socket and state, 1 for each
// socket in the directory (desired_state_of_world) and each registered
// plugin (actual_state_of_world). upstream_test.go pins the names.
var totalPlugins = prometheus.NewDesc("plugin_manager_total_plugins",
	"[ALPHA] Number of plugins in Plugin Manager", []string{"socket_path", "state"}, nil)

const (
	stateDesired = "desired_state_of_world"
	stateActual  = "actual_state_of_world"
)

// collector reads the gauge off the manager's latest snapshot at every
// scrape; safe for concurrent use.
type collector struct{ m *Manager }

func (c collector) Describe(ch chan<- *prometheus.Desc) { ch <- totalPlugins }

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Snapshot()
	for _, socket := range s.Desired {
		ch <- prometheus.MustNewConstMetric(totalPlugins, prometheus.GaugeValue, 1, socket, stateDesired)
	}
	for _, p := range s.Registered {
		ch <- prometheus.MustNewConstMetric(totalPlugins, prometheus.GaugeValue, 1, p.SocketPath, stateActual)
	}
}
