package agent

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/cluster/statussync"
	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/pod/podsync"
	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/serve/metrics"
	"github.com/berthk8s/berth/internal/serve/stats"
)

// newMetrics builds berth's metric set; the components get its observers
// as they are built (see assemble).
func newMetrics(nodeName string, clk clock.PassiveClock) (*metrics.Metrics, error) {
	return metrics.New(metrics.Config{NodeName: nodeName, Clock: clk})
}

// observedStatuses shows every status the pod syncer stores to the pod
// startup tracker and the pods' start timelines. (All forget a pod that
// is gone through the route: registerOwners.)
type observedStatuses struct {
	podsync.StatusStore
	metrics  *metrics.Metrics
	timeline *timeline.Recorder
}

var _ podsync.StatusStore = observedStatuses{}

func (s observedStatuses) Set(uid types.UID, status corev1.PodStatus) corev1.PodStatus {
	out := s.StatusStore.Set(uid, status)
	s.metrics.ObservePodStatus(uid, &out)
	s.timeline.ObserveStatus(uid, &out)
	return out
}

// observeUpdate shows each pod of a source update to the pod startup
// tracker: berth's equivalent of upstream observing pods on the watch. The
// sync loop calls it as it takes the update.
func observeUpdate(m *metrics.Metrics, clk clock.PassiveClock) func(podsource.Update) {
	return func(u podsource.Update) { m.ObservePodsOnWatch(u.Pods, podutil.IsStatic, clk.Now()) }
}

// observeRelist gives the metrics the figures of every PLEG relist.
func observeRelist(m *metrics.Metrics) func(pleg.RelistStats) {
	return func(s pleg.RelistStats) {
		m.ObserveRelist(metrics.Relist{
			Duration: s.Duration, Interval: s.Interval, Failed: s.Err != nil, Dropped: s.Dropped,
			RunningPods: s.RunningPods, Containers: s.Containers,
		})
	}
}

// observeWritten shows every pod status the status writer wrote to the
// status sync latency, the pod start stages and the pods' start
// timelines.
func observeWritten(m *metrics.Metrics, t *timeline.Recorder) func(context.Context, statussync.Written) {
	return func(ctx context.Context, w statussync.Written) {
		m.ObservePodStatusWritten(ctx, w.Pod, &w.Status, w.Since, w.At)
		t.StatusWritten(w.Pod, &w.Status, w.At)
	}
}

// observability is the kubelet API's metrics and stats endpoints. Built
// once by assemble; read-only.
type observability struct {
	// Metrics serves GET /metrics; Stats serves /stats/ and below;
	// MetricsResource serves GET /metrics/resource, MetricsCadvisor GET
	// /metrics/cadvisor.
	Metrics, Stats, MetricsResource, MetricsCadvisor http.Handler
	// stats samples CPU usage; the agent runs it.
	stats *stats.Provider
}

// newObservability builds the stats provider and the metrics and stats
// handlers.
func (n *node) newObservability() (observability, error) {
	kc := &n.cfg.Kubelet
	p, err := stats.New(stats.Config{
		Runtime: n.conn.client.Runtime, Images: n.conn.client.Image, NodeName: n.cfg.NodeName,
		RootDir: n.cfg.RootDir, PodLogsDir: kc.PodLogsDir, Clock: n.clock, PodsDir: n.podsDir(),
		VolumeStatsAggPeriod: kc.VolumeStatsAggPeriod.Duration, VolumeStatsOff: kc.VolumeStatsAggPeriod.Duration <= 0,
		SystemCgroups: statsSystemCgroups(n.cfg), SamplePeriod: n.cfg.HousekeepingInterval.Duration,
		Volumes: n.vols.manager, CSI: n.statsCSI(),
	})
	if err != nil {
		return observability{}, fmt.Errorf("create stats provider: %w", err)
	}
	return observability{
		Metrics: n.metrics.HandlerWithVolumeStats(podStats(p)), Stats: stats.Handler(p.Summary), MetricsResource: stats.ResourceHandler(p.Summary),
		MetricsCadvisor: p.CadvisorHandler(), stats: p,
	}, nil
}

// statsCSI is what asks CSI drivers for their volumes' usage: nil
// standalone (an interface holding a nil *csi.Mounter would not be nil).
func (n *node) statsCSI() stats.CSIStats {
	if n.vols.mounter == nil {
		return nil
	}
	return n.vols.mounter
}

// podStats lists the pods' stats of a full summary, for the volume stats
// metrics (upstream's collector lists the pod stats on each scrape).
func podStats(p *stats.Provider) metrics.PodStatsFunc {
	return func(ctx context.Context) ([]statsapi.PodStats, error) {
		sum, err := p.Summary(ctx, false)
		if err != nil {
			return nil, err
		}
		return sum.Pods, nil
	}
}
