package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var t0 = time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// The lines as berth and the upstream kubelet write them (klog text).
const testLog = `I1124 03:00:00.100000  123 stages.go:120] "Pod start stages" pod="default/b-1" podUID="u1" ` +
	`firstSeen="2026-11-24T03:00:00.1Z" workerStart="2026-11-24T03:00:00.15Z" sandboxReady="2026-11-24T03:00:01Z" ` +
	`containersStarted="2026-11-24T03:00:01.5Z" statusCached="2026-11-24T03:00:01.7Z" statusPatched="2026-11-24T03:00:01.75Z"
I1124 03:00:00.200000  123 other.go:1] "Something else" pod="default/b-2"
I1124 03:00:02.000000  456 pod_startup_latency_tracker.go:144] "Observed pod startup duration" pod="default/u-1" ` +
	`podStartSLOduration=1.9 podStartE2EDuration="1.9s" podCreationTimestamp="2026-11-24 03:00:00 +0000 UTC" ` +
	`observedRunningTime="2026-11-24 03:00:01.8 +0000 UTC m=+12.345" watchObservedRunningTime="2026-11-24 03:00:01.9 +0000 UTC m=+12.445"
`

func TestParseStageLines(t *testing.T) {
	berth, err := parseStageLines(strings.NewReader(testLog), berthStagesMsg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]time.Time{"default/b-1": {
		"firstSeen": ms(100), "workerStart": ms(150), "sandboxReady": ms(1000),
		"containersStarted": ms(1500), "statusCached": ms(1700), "statusPatched": ms(1750),
	}}
	if diff := cmp.Diff(want, berth); diff != "" {
		t.Errorf("berth lines (-want +got):\n%s", diff)
	}
	up, err := parseStageLines(strings.NewReader(testLog), upstreamStartMsg)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]map[string]time.Time{"default/u-1": {
		"podCreationTimestamp": t0, "observedRunningTime": ms(1800), "watchObservedRunningTime": ms(1900),
	}}
	if diff := cmp.Diff(want, up); diff != "" {
		t.Errorf("upstream lines (-want +got):\n%s", diff)
	}
}

func TestSplitStages(t *testing.T) {
	moments := map[string]time.Time{
		"firstSeen": ms(100), "workerStart": ms(150), "sandboxReady": ms(1000),
		"containersStarted": ms(1500), "statusCached": ms(1700), "statusPatched": ms(1750),
	}
	got := splitStages(berthStages, t0, ms(2000), moments)
	want := map[string]float64{
		"watch_delivery": 0.1, "admission_worker_start": 0.05, "sandbox": 0.85, "containers": 0.5,
		"runtime_to_cache": 0.2, "cache_to_patch": 0.05, "patch_to_watch": 0.25,
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("berth stages (-want +got):\n%s", diff)
	}
	delete(moments, "sandboxReady")
	got = splitStages(berthStages, t0, ms(2000), moments)
	if _, ok := got["sandbox"]; ok || len(got) != 5 {
		t.Errorf("with sandboxReady missing: %v, want sandbox and containers left out", got)
	}
	got = splitStages(upstreamStages, t0, ms(2000), map[string]time.Time{upstreamPatchedAt: ms(1800)})
	if diff := cmp.Diff(map[string]float64{"create_to_patch": 1.8, "patch_to_watch": 0.2}, got, approx); diff != "" {
		t.Errorf("upstream stages (-want +got):\n%s", diff)
	}
}

var approx = cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })

func families(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	f, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestHistogramMeans(t *testing.T) {
	before := families(t, `# TYPE kubelet_runtime_operations_duration_seconds histogram
kubelet_runtime_operations_duration_seconds_bucket{operation_type="create_container",le="+Inf"} 2
kubelet_runtime_operations_duration_seconds_sum{operation_type="create_container"} 0.4
kubelet_runtime_operations_duration_seconds_count{operation_type="create_container"} 2
kubelet_runtime_operations_duration_seconds_bucket{operation_type="start_container",le="+Inf"} 1
kubelet_runtime_operations_duration_seconds_sum{operation_type="start_container"} 0.1
kubelet_runtime_operations_duration_seconds_count{operation_type="start_container"} 1
`)
	after := families(t, `# TYPE kubelet_runtime_operations_duration_seconds histogram
kubelet_runtime_operations_duration_seconds_bucket{operation_type="create_container",le="+Inf"} 6
kubelet_runtime_operations_duration_seconds_sum{operation_type="create_container"} 2.4
kubelet_runtime_operations_duration_seconds_count{operation_type="create_container"} 6
kubelet_runtime_operations_duration_seconds_bucket{operation_type="start_container",le="+Inf"} 1
kubelet_runtime_operations_duration_seconds_sum{operation_type="start_container"} 0.1
kubelet_runtime_operations_duration_seconds_count{operation_type="start_container"} 1
# TYPE kubelet_pod_worker_start_duration_seconds histogram
kubelet_pod_worker_start_duration_seconds_bucket{le="+Inf"} 2
kubelet_pod_worker_start_duration_seconds_sum 0.02
kubelet_pod_worker_start_duration_seconds_count 2
`)
	want := map[string]float64{"m_create_container": 0.5, "m_worker_start": 0.01}
	if diff := cmp.Diff(want, histogramMeans(before, after), approx); diff != "" {
		t.Errorf("histogramMeans (-want +got):\n%s", diff)
	}
}

func TestAddKubeletAdded(t *testing.T) {
	s := Samples{}
	s.Add("burst2_pod", ColBerth, 3, 5)
	s.Add("burst2_pod", ColUpstream, 4, 8)
	s.Add("burst2_pod", ColFloor, 2, 3)
	AddKubeletAdded(s, []int{2})
	want := Samples{
		"burst2_pod":       s["burst2_pod"],
		"burst2_added_p50": {ColBerth: {1}, ColUpstream: {2}},
		"burst2_added_p99": {ColBerth: {2}, ColUpstream: {5}},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}
