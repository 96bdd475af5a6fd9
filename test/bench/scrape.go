package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/berthk8s/berth/test/cluster"
)

// stageMetric is a latency histogram a kubelet exposes on /metrics for a
// stage of a pod's start (or around it), read before and after a burst:
// the mean of what the burst added is the stage's mean per observation.
type stageMetric struct {
	Key    string // the measure key's suffix
	Family string
	Labels map[string]string // the series to sum; nil: all
	Title  string
}

// stageMetrics are upstream's names (both kubelets expose them; see
// internal/serve/metrics) and berth's own stage histogram.
var stageMetrics = []stageMetric{
	{"m_worker_start", "kubelet_pod_worker_start_duration_seconds", nil, "seen to worker start"},
	{"m_run_podsandbox", "kubelet_run_podsandbox_duration_seconds", nil, "RunPodSandbox"},
	{"m_create_container", "kubelet_runtime_operations_duration_seconds", map[string]string{"operation_type": "create_container"}, "CreateContainer"},
	{"m_start_container", "kubelet_runtime_operations_duration_seconds", map[string]string{"operation_type": "start_container"}, "StartContainer"},
	{"m_worker_create", "kubelet_pod_worker_duration_seconds", map[string]string{"operation_type": "create"}, "first sync (create)"},
	{"m_pleg_relist_interval", "kubelet_pleg_relist_interval_seconds", nil, "PLEG relist interval"},
	{"m_pleg_relist", "kubelet_pleg_relist_duration_seconds", nil, "PLEG relist"},
	{"m_pod_start", "kubelet_pod_start_duration_seconds", nil, "seen to Running status"},
	{"m_status_sync", "kubelet_pod_status_sync_duration_seconds", nil, "status change to API"},
	{"m_start_sli", "kubelet_pod_start_sli_duration_seconds", nil, "startup SLI"},
	{"m_berth_sandbox", "berth_pod_start_stage_duration_seconds", map[string]string{"stage": "sandbox"}, "berth: worker start to sandbox"},
	{"m_berth_containers", "berth_pod_start_stage_duration_seconds", map[string]string{"stage": "containers"}, "berth: sandbox to containers started"},
	{"m_berth_runtime_to_cache", "berth_pod_start_stage_duration_seconds", map[string]string{"stage": "runtime_to_cache"}, "berth: runtime to status cache"},
}

// scrapeTimeout bounds one /metrics request.
const scrapeTimeout = 30 * time.Second

// scrape reads the kubelet's /metrics on its secure port.
func (r *runner) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	var fams map[string]*dto.MetricFamily
	err := r.kubeletGet(ctx, "/metrics", func(body io.Reader) (err error) {
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err = p.TextToMetricFamilies(io.LimitReader(body, 64<<20))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("scrape /metrics: %w", err)
	}
	return fams, nil
}

// kubeletURL is path on the kubelet API of the node at nodeIP.
func kubeletURL(nodeIP, path string) string {
	return "https://" + net.JoinHostPort(nodeIP, "10250") + path
}

// kubeletClient calls the kubelet API as user admin of the cluster: its
// client certificate (signed by the cluster CA, group system:masters)
// passes a real node's webhook authorization (the defaults
// configuration); the shared one allows anonymous requests. The kubelets'
// serving certificates are self-signed.
func kubeletClient(kp cluster.KeyPair) (*http.Client, error) {
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load the bench's client certificate: %w", err)
	}
	tlsCfg := &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}} //nolint:gosec // the kubelet's self-signed certificate, on this machine
	return &http.Client{Timeout: 2 * scrapeTimeout, Transport: &http.Transport{TLSClientConfig: tlsCfg}}, nil
}

// histogramTotals sums the count and sum of a histogram family's series
// whose labels include want. It is pure.
func histogramTotals(fams map[string]*dto.MetricFamily, family string, want map[string]string) (count uint64, sum float64) {
	f := fams[family]
	if f == nil {
		return 0, 0
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, want) || m.GetHistogram() == nil {
			continue
		}
		count += m.GetHistogram().GetSampleCount()
		sum += m.GetHistogram().GetSampleSum()
	}
	return count, sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// histogramMeans returns, per stage metric the kubelet exposes, the mean
// of the observations made between before and after; a metric with no new
// observation is left out. It is pure.
func histogramMeans(before, after map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range stageMetrics {
		c0, s0 := histogramTotals(before, m.Family, m.Labels)
		c1, s1 := histogramTotals(after, m.Family, m.Labels)
		if c1 > c0 {
			out[m.Key] = (s1 - s0) / float64(c1-c0)
		}
	}
	return out
}
