package stats

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// cadvisorLabels are the labels the kubelet gives cAdvisor's container
// metrics (upstream's containerPrometheusLabelsFunc), in name order.
var cadvisorLabels = []string{"container", "id", "image", "name", "namespace", "pod"}

// machineLabels are cAdvisor's machine metric labels (baseLabelsNames).
var machineLabels = []string{"machine_id", "system_uuid", "boot_id"}

// cadvisorDefs are the cAdvisor metrics berth measures, as cAdvisor's
// metrics package declares them (name, help and extra labels; pinned by a
// test). Berth reads from the CRI, not cgroups by path, so a row's id is
// the runtime's container or sandbox ID ("/" for the machine), not a
// cgroup path.
var cadvisorDefs = map[string]metricDef{
	"container_cpu_usage_seconds_total":      {Help: "Cumulative cpu time consumed in seconds.", Labels: []string{"cpu"}},
	"container_memory_rss":                   {Help: "Size of RSS in bytes."},
	"container_memory_usage_bytes":           {Help: "Current memory usage in bytes, including all memory regardless of when it was accessed"},
	"container_memory_working_set_bytes":     {Help: "Current working set in bytes."},
	"container_fs_usage_bytes":               {Help: "Number of bytes that are consumed by the container on this filesystem.", Labels: []string{"device"}},
	"container_network_receive_bytes_total":  {Help: "Cumulative count of bytes received", Labels: []string{"interface"}},
	"container_network_transmit_bytes_total": {Help: "Cumulative count of bytes transmitted", Labels: []string{"interface"}},
	"container_start_time_seconds":           {Help: "Start time of the container since unix epoch in seconds."},
	"machine_cpu_cores":                      {Help: "Number of logical CPU cores."},
	"machine_memory_bytes":                   {Help: "Amount of memory installed on the machine."},
}

// cadvisorDesc is the descriptor of a cAdvisor metric: its base labels
// (machine or container) and its extra ones.
func cadvisorDesc(name string) *prometheus.Desc {
	d := cadvisorDefs[name]
	base := cadvisorLabels
	if name == "machine_cpu_cores" || name == "machine_memory_bytes" {
		base = machineLabels
	}
	return prometheus.NewDesc(name, d.Help, append(append([]string(nil), base...), d.Labels...), nil)
}

// cadvisorView is what one /metrics/cadvisor scrape reports.
type cadvisorView struct {
	Summary *statsapi.Summary
	// Runtime holds, by pod UID, the sandbox and containers the summary
	// was built from: the ids, names and images of the rows.
	Runtime map[string]podRuntime
	Machine machine
	// Device is the runtime filesystem's device (container_fs_usage_bytes).
	Device string
	Now    time.Time
}

// podRuntime is one pod's sandbox ID and its containers by name.
type podRuntime struct {
	SandboxID  string
	Containers map[string]*runtimeapi.Container
}

// runtimeIndex indexes the sandboxes and running containers the summary
// reports, by pod UID. It is pure.
func runtimeIndex(snap criSnapshot) map[string]podRuntime {
	out := map[string]podRuntime{}
	for _, sb := range pickSandboxes(snap.Sandboxes) {
		out[sb.GetMetadata().GetUid()] = podRuntime{SandboxID: sb.GetId(), Containers: map[string]*runtimeapi.Container{}}
	}
	for _, c := range snap.Containers {
		uid := c.GetLabels()["io.kubernetes.pod.uid"]
		pr, ok := out[uid]
		if ok && pr.SandboxID == c.GetPodSandboxId() && c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			pr.Containers[c.GetMetadata().GetName()] = c
		}
	}
	return out
}

// CadvisorHandler serves GET /metrics/cadvisor: cAdvisor's metric names
// and labels for the machine, the node (id "/"), every pod (container "")
// and every running container, from a full summary.
func (p *Provider) CadvisorHandler() http.Handler {
	return cadvisorHandler(p.cadvisorView)
}

func cadvisorHandler(view func(ctx context.Context) (cadvisorView, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(cadvisorCollector{ctx: r.Context(), view: view})
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
}

// cadvisorView takes a full summary and what the rows are labelled with.
func (p *Provider) cadvisorView(ctx context.Context) (cadvisorView, error) {
	sum, snap, err := p.summary(ctx, false)
	if err != nil {
		return cadvisorView{}, err
	}
	m, err := p.node.machine()
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot read machine info", "err", err)
	}
	return cadvisorView{Summary: sum, Runtime: runtimeIndex(snap), Machine: m, Device: p.imageFsDevice(ctx), Now: p.cfg.Clock.Now()}, nil
}

// cadvisorCollector collects one scrape; it lives for one request.
type cadvisorCollector struct {
	ctx  context.Context
	view func(ctx context.Context) (cadvisorView, error)
}

func (c cadvisorCollector) Describe(ch chan<- *prometheus.Desc) {
	for name := range cadvisorDefs {
		ch <- cadvisorDesc(name)
	}
}

func (c cadvisorCollector) Collect(ch chan<- prometheus.Metric) {
	v, err := c.view(c.ctx)
	if err != nil {
		klog.FromContext(c.ctx).Error(err, "Cannot get the summary for the cadvisor metrics endpoint")
		return
	}
	emitCadvisor(ch, v)
}
