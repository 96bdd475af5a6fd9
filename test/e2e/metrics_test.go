package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// TestClusterMetrics reads berth's /metrics, /stats/summary and
// /metrics/resource through the API server's node proxy (the API server's
// kubelet client certificate), as kubectl and metrics-server do, once a
// pod runs.
func TestClusterMetrics(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, apiWebPod("metrics-web"), metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "metrics-web")
	raw := func(path string) (string, error) {
		return e.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy"+path)
	}

	t.Run("Metrics", func(t *testing.T) {
		var body string
		// The running pods and containers gauges are set at PLEG relists:
		// the containers' can follow the pods' by a relist.
		e.node.waitFor("a pod start SLI sample, a running pod and a running container in /metrics", func() bool {
			body, err = raw("/metrics")
			return err == nil && sample(body, "kubelet_pod_start_sli_duration_seconds_count") >= 1 &&
				sample(body, "kubelet_running_pods") >= 1 && sample(body, `kubelet_running_containers{container_state="running"}`) >= 1
		})
		if err != nil {
			t.Fatalf("GET /metrics: %v: %s", err, body)
		}
		for _, want := range []string{
			`kubelet_node_name{node="` + nodeName + `"} 1`,
			"# TYPE kubelet_pod_start_sli_duration_seconds histogram",
			"# TYPE kubelet_pod_start_duration_seconds histogram",
			`kubelet_running_containers{container_state="running"}`,
			"kubelet_pleg_relist_duration_seconds_count",
			"kubelet_pleg_relist_interval_seconds_count",
			"kubelet_pleg_last_seen_seconds",
			`kubelet_pod_worker_duration_seconds_count{operation_type="create"}`,
			`kubelet_runtime_operations_total{operation_type="run_podsandbox"}`,
			`kubelet_runtime_operations_duration_seconds_count{operation_type="create_container"}`,
			"# TYPE kubelet_runtime_operations_errors_total counter",
			"kubelet_started_pods_total",
			"go_goroutines",
			"process_start_time_seconds",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		if v := sample(body, `kubelet_running_containers{container_state="running"}`); v < 1 {
			t.Errorf("running containers = %v, want >= 1", v)
		}
	})

	t.Run("StatsSummary", func(t *testing.T) {
		var sum statsapi.Summary
		var pod *statsapi.PodStats
		e.node.waitFor("the pod's container with memory in /stats/summary", func() bool {
			body, err := raw("/stats/summary")
			if err != nil || json.Unmarshal([]byte(body), &sum) != nil {
				return false
			}
			pod = findPodStats(sum.Pods, "metrics-web")
			return pod != nil && len(pod.Containers) == 1 && pod.Containers[0].Memory != nil &&
				pod.Containers[0].Memory.WorkingSetBytes != nil && *pod.Containers[0].Memory.WorkingSetBytes > 0
		})
		n := sum.Node
		if n.NodeName != nodeName || n.CPU == nil || n.CPU.UsageCoreNanoSeconds == nil || n.Memory == nil ||
			n.Memory.WorkingSetBytes == nil || *n.Memory.WorkingSetBytes == 0 || n.Fs == nil || n.Runtime == nil || n.Runtime.ImageFs == nil {
			t.Errorf("node stats incomplete: %+v", n)
		}
		if pod == nil {
			t.Fatalf("pod metrics-web not in the summary: %+v", sum.Pods)
		}
		c := pod.Containers[0]
		if c.Name != "web" || c.CPU == nil || c.CPU.UsageCoreNanoSeconds == nil || c.Rootfs == nil || c.Logs == nil {
			t.Errorf("container stats incomplete: %+v", c)
		}
		if pod.Memory == nil || pod.Memory.WorkingSetBytes == nil || *pod.Memory.WorkingSetBytes == 0 {
			t.Errorf("pod memory = %+v", pod.Memory)
		}
		body, err := raw("/stats/summary?only_cpu_and_memory=true")
		var only statsapi.Summary
		if err != nil || json.Unmarshal([]byte(body), &only) != nil {
			t.Fatalf("only_cpu_and_memory: %v: %s", err, body)
		}
		if only.Node.Fs != nil || only.Node.Memory == nil {
			t.Errorf("only_cpu_and_memory node = %+v", only.Node)
		}
	})

	t.Run("MetricsResource", func(t *testing.T) {
		series := `container_cpu_usage_seconds_total{container="web",namespace="default",pod="metrics-web"}`
		var body string
		e.node.waitFor("the container's CPU in /metrics/resource", func() bool {
			body, err = raw("/metrics/resource")
			return err == nil && strings.Contains(body, series)
		})
		for _, want := range []string{
			"node_cpu_usage_seconds_total", "node_memory_working_set_bytes",
			`container_memory_working_set_bytes{container="web",namespace="default",pod="metrics-web"}`,
			`container_start_time_seconds{container="web",namespace="default",pod="metrics-web"}`,
			`pod_cpu_usage_seconds_total{namespace="default",pod="metrics-web"}`,
			`pod_memory_working_set_bytes{namespace="default",pod="metrics-web"}`,
			"resource_scrape_error 0",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics/resource lacks %q:\n%s", want, body)
			}
		}
	})
}

// sample returns the value of the first sample whose line starts with
// series followed by a space or '{' (-1 when absent).
func sample(body, series string) float64 {
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, series)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		if rest[0] == '{' {
			i := strings.Index(rest, "} ")
			if i < 0 {
				continue
			}
			rest = rest[i+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			return v
		}
	}
	return -1
}

func findPodStats(pods []statsapi.PodStats, name string) *statsapi.PodStats {
	for i := range pods {
		if pods[i].PodRef.Name == name && pods[i].PodRef.Namespace == "default" {
			return &pods[i]
		}
	}
	return nil
}
