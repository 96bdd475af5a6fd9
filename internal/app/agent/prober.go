package agent

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/pod/prober"
)

// newProber builds the prober with its own metrics registry and returns
// the /metrics/probes handler that serves that registry.
func (n *node) newProber() (*prober.Prober, http.Handler, error) {
	reg := prometheus.NewRegistry()
	p, err := prober.New(prober.Config{
		Statuses: n.pods.statuses, Runtime: n.conn.client.Runtime, Recorder: n.cluster.recorder,
		Clock: n.clock, Registerer: reg, KubernetesVersion: config.KubernetesVersion, Handler: n.probeHandler(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create prober: %w", err)
	}
	return p, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}
