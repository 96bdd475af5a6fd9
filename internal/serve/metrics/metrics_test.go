package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
)

var epoch = time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)

func newTestMetrics(t *testing.T) (*Metrics, *clocktesting.FakePassiveClock) {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(epoch)
	m, err := New(Config{NodeName: "node-a", Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return m, clk
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a node name succeeded")
	}
}

func TestOperationType(t *testing.T) {
	for method, want := range map[string]string{
		"Version":                  "version",
		"Status":                   "status",
		"ContainerStatus":          "container_status",
		"ListContainers":           "list_containers",
		"RunPodSandbox":            "run_podsandbox",
		"PodSandboxStatus":         "podsandbox_status",
		"ListPodSandbox":           "list_podsandbox",
		"ListPodSandboxStats":      "list_podsandbox_stats",
		"UpdateContainerResources": "update_container",
		"ExecSync":                 "exec_sync",
		"PullImage":                "pull_image",
		"ImageFsInfo":              "image_fs_info",
		"ListContainerStats":       "list_container_stats",
		"ReopenContainerLog":       "reopen_container_log",
		"CheckpointContainer":      "checkpoint_container",
		"GetContainerEvents":       "get_container_events",
		"ListMetricDescriptors":    "list_metric_descriptors",
		"RuntimeConfig":            "runtime_config",
		"PortForward":              "port_forward",
	} {
		if got := operationType(method); got != want {
			t.Errorf("operationType(%q) = %q, want %q", method, got, want)
		}
	}
}

func TestObserveCRI(t *testing.T) {
	m, _ := newTestMetrics(t)
	m.ObserveCRI(cri.Call{Method: "ContainerStatus", Duration: 10 * time.Millisecond})
	m.ObserveCRI(cri.Call{Method: "ContainerStatus", Duration: time.Millisecond, Err: errors.New("boom")})
	m.ObserveCRI(cri.Call{Method: "RunPodSandbox", Request: &runtimeapi.RunPodSandboxRequest{}, Err: errors.New("no")})
	m.ObserveCRI(cri.Call{Method: "CreateContainer", Request: &runtimeapi.CreateContainerRequest{Config: &runtimeapi.ContainerConfig{
		Annotations: map[string]string{"io.kubernetes.container.type": "init"}}}})
	want := `
# HELP kubelet_runtime_operations_errors_total [ALPHA] Cumulative number of runtime operation errors by operation type.
# TYPE kubelet_runtime_operations_errors_total counter
kubelet_runtime_operations_errors_total{operation_type="container_status"} 1
kubelet_runtime_operations_errors_total{operation_type="run_podsandbox"} 1
# HELP kubelet_runtime_operations_total [ALPHA] Cumulative number of runtime operations by operation type.
# TYPE kubelet_runtime_operations_total counter
kubelet_runtime_operations_total{operation_type="container_status"} 2
kubelet_runtime_operations_total{operation_type="create_container"} 1
kubelet_runtime_operations_total{operation_type="run_podsandbox"} 1
# HELP kubelet_started_containers_total [ALPHA] Cumulative number of containers started
# TYPE kubelet_started_containers_total counter
kubelet_started_containers_total{container_type="init_container"} 1
# HELP kubelet_started_pods_errors_total [ALPHA] Cumulative number of errors when starting pods
# TYPE kubelet_started_pods_errors_total counter
kubelet_started_pods_errors_total 1
# HELP kubelet_started_pods_total [ALPHA] Cumulative number of pods started
# TYPE kubelet_started_pods_total counter
kubelet_started_pods_total 1
`
	got := render(t, m.Registry(), "kubelet_runtime_operations_total", "kubelet_runtime_operations_errors_total",
		"kubelet_started_pods_total", "kubelet_started_pods_errors_total", "kubelet_started_containers_total")
	if diff := cmp.Diff(strings.TrimPrefix(want, "\n"), got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if got := render(t, m.Registry(), "kubelet_runtime_operations_duration_seconds"); strings.Count(got, "_count{") != 3 {
		t.Errorf("duration series:\n%s", got)
	}
}

func TestObserveRelist(t *testing.T) {
	m, _ := newTestMetrics(t)
	m.ObserveRelist(Relist{Duration: time.Second, RunningPods: 2, Containers: map[string]int{"running": 3, "exited": 1}})
	m.ObserveRelist(Relist{Duration: time.Second, Interval: time.Second, Failed: true, Dropped: 2})
	want := `
# HELP kubelet_pleg_discard_events [ALPHA] The number of discard events in PLEG.
# TYPE kubelet_pleg_discard_events counter
kubelet_pleg_discard_events 2
# HELP kubelet_pleg_last_seen_seconds [ALPHA] Timestamp in seconds when PLEG was last seen active.
# TYPE kubelet_pleg_last_seen_seconds gauge
kubelet_pleg_last_seen_seconds 1.795377599e+09
# HELP kubelet_running_containers [ALPHA] Number of containers currently running
# TYPE kubelet_running_containers gauge
kubelet_running_containers{container_state="created"} 0
kubelet_running_containers{container_state="exited"} 1
kubelet_running_containers{container_state="running"} 3
kubelet_running_containers{container_state="unknown"} 0
# HELP kubelet_running_pods [ALPHA] Number of pods that have a running pod sandbox
# TYPE kubelet_running_pods gauge
kubelet_running_pods 2
`
	got := render(t, m.Registry(), "kubelet_pleg_discard_events", "kubelet_pleg_last_seen_seconds",
		"kubelet_running_containers", "kubelet_running_pods")
	if diff := cmp.Diff(strings.TrimPrefix(want, "\n"), got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if got := render(t, m.Registry(), "kubelet_pleg_relist_duration_seconds"); !strings.Contains(got, "kubelet_pleg_relist_duration_seconds_count 2") {
		t.Errorf("relist durations:\n%s", got)
	}
	if got := render(t, m.Registry(), "kubelet_pleg_relist_interval_seconds"); !strings.Contains(got, "kubelet_pleg_relist_interval_seconds_count 1") {
		t.Errorf("relist intervals (the failed relist's counts):\n%s", got)
	}
}

func TestHandlerExposesKubeletMetrics(t *testing.T) {
	m, _ := newTestMetrics(t)
	m.ObservePodSync("create", time.Second)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var missing []string
	for _, name := range []string{
		`kubelet_node_name{node="node-a"} 1`,
		`kubelet_pod_worker_duration_seconds_count{operation_type="create"} 1`,
		"# TYPE kubelet_pod_start_sli_duration_seconds histogram",
		"# TYPE kubelet_pod_start_duration_seconds histogram",
		"# TYPE kubelet_pleg_relist_duration_seconds histogram",
		"# TYPE kubelet_pleg_relist_interval_seconds histogram",
		"# TYPE kubelet_running_pods gauge",
		"go_goroutines",
		"process_start_time_seconds",
	} {
		if !strings.Contains(string(body), name) {
			missing = append(missing, name)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("missing from /metrics (-want +got):\n%s\n%s", diff, body)
	}
}

// render gathers reg and returns the named families in the text format,
// in the registry's (sorted) order.
func render(t *testing.T, reg *prometheus.Registry, names ...string) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var b strings.Builder
	for _, f := range families {
		for _, n := range names {
			if f.GetName() == n {
				if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return b.String()
}

func pullCall(uid string, start time.Time, d time.Duration) cri.Call {
	return cri.Call{Method: "PullImage", Start: start, Duration: d, Request: &runtimeapi.PullImageRequest{
		SandboxConfig: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Uid: uid}}}}
}
