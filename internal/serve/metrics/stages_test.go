package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestStageNamesMatchUpstream pins the names, help texts and buckets of
// the upstream metrics berth reports stages of a pod start with to
// upstream's pkg/kubelet/metrics.
func TestStageNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics"
	s := newStageMetrics()
	for _, tt := range []struct {
		key, berth, value string
		c                 prometheus.Collector
	}{
		{"PodWorkerStartDurationKey", podWorkerStartName, "PodWorkerStartDuration", s.workerStart},
		{"PodStatusSyncDurationKey", podStatusSyncName, "PodStatusSyncDuration", s.statusSync},
		{"RunPodSandboxDurationKey", runPodSandboxName, "RunPodSandboxDuration", s.runPodSandbox},
		{"RunPodSandboxErrorsKey", runPodSandboxErrorsName, "RunPodSandboxErrors", s.runPodSandboxErrors},
	} {
		if up := src.Value(pkg, tt.key).AsString(); up != tt.berth {
			t.Errorf("%s: berth %q, upstream %q", tt.key, tt.berth, up)
		}
		help := src.Value(pkg, tt.value).CompositeLits()[0].Fields()["Help"].AsString()
		if desc := describe(tt.c); !strings.Contains(desc, `help: "`+alpha+help+`"`) {
			t.Errorf("%s: %s lacks upstream's help %q", tt.value, desc, help)
		}
	}
	up := src.Value(pkg, "PodStatusSyncDuration").CompositeLits()[0].Fields()["Buckets"].AsFloats()
	if diff := cmp.Diff(up, podStatusSyncBuckets); diff != "" {
		t.Errorf("pod status sync buckets (-upstream +berth):\n%s", diff)
	}
}

func describe(c prometheus.Collector) string {
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	return (<-ch).String()
}

func TestStageDurations(t *testing.T) {
	at := func(ms int) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }
	full := stageTimes{workerStart: at(100), sandboxReady: at(600), containersStarted: at(900)}
	tests := []struct {
		name   string
		times  stageTimes
		cached time.Time
		want   map[string]time.Duration
	}{
		{"every moment", full, at(1000), map[string]time.Duration{
			stageSandbox: 500 * time.Millisecond, stageContainers: 300 * time.Millisecond, stageRuntimeToCache: 100 * time.Millisecond}},
		{"no worker start", stageTimes{sandboxReady: at(600), containersStarted: at(900)}, at(1000), map[string]time.Duration{
			stageContainers: 300 * time.Millisecond, stageRuntimeToCache: 100 * time.Millisecond}},
		{"cached before the start (clock skew)", full, at(800), map[string]time.Duration{
			stageSandbox: 500 * time.Millisecond, stageContainers: 300 * time.Millisecond}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, stageDurations(tt.times, tt.cached)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestPodStartStagesObserved follows one pod from first sight to its
// Running status written and checks every stage metric.
func TestPodStartStagesObserved(t *testing.T) {
	m, clk := newTestMetrics(t)
	at := func(ms int) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Name: "p", Namespace: "default", CreationTimestamp: metav1.NewTime(epoch)}}
	m.ObservePodsOnWatch([]*corev1.Pod{pod}, func(*corev1.Pod) bool { return false }, at(0))
	m.ObservePodWorkerStart("u", at(0), at(200))
	m.ObserveCRI(cri.Call{Method: "RunPodSandbox", Start: at(300), Duration: 400 * time.Millisecond,
		Request: &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Uid: "u"}}}})
	status := &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at(1000))}},
	}}}
	clk.SetTime(at(1500))
	m.ObservePodStatus("u", status)
	ctx := context.Background()
	m.ObservePodStatusWritten(ctx, pod, &corev1.PodStatus{Phase: corev1.PodPending}, at(0), at(250))
	m.ObservePodStatusWritten(ctx, pod, status, at(1500), at(2000))
	m.ObservePodStatusWritten(ctx, pod, status, at(1750), at(2000)) // stages are recorded once

	got := render(t, m.Registry(), "kubelet_pod_worker_start_duration_seconds", "kubelet_run_podsandbox_duration_seconds",
		"kubelet_pod_status_sync_duration_seconds", "berth_pod_start_stage_duration_seconds")
	for _, want := range []string{
		"kubelet_pod_worker_start_duration_seconds_sum 0.2\n",
		"kubelet_pod_worker_start_duration_seconds_count 1\n",
		`kubelet_run_podsandbox_duration_seconds_sum{runtime_handler=""} 0.4` + "\n",
		"kubelet_pod_status_sync_duration_seconds_sum 1\n",
		"kubelet_pod_status_sync_duration_seconds_count 3\n",
		`berth_pod_start_stage_duration_seconds_sum{stage="sandbox"} 0.5`,
		`berth_pod_start_stage_duration_seconds_sum{stage="containers"} 0.3`,
		`berth_pod_start_stage_duration_seconds_sum{stage="runtime_to_cache"} 0.5`,
		`berth_pod_start_stage_duration_seconds_count{stage="sandbox"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stage metrics lack %q:\n%s", want, got)
		}
	}
}
