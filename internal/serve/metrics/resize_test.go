package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func withPriority(p int32) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Priority: ptr.To(p)}}
}

// TestResizeObservers: each observer feeds its series, with upstream's
// label values; the pending gauge is replaced as a whole, so a bucket no
// longer pending drops out.
func TestResizeObservers(t *testing.T) {
	m, _ := newTestMetrics(t)
	m.ObserveRequestedResize("cpu", "requests", "increase")
	m.ObserveRequestedResize("cpu", "requests", "increase")
	m.ObserveRequestedResize("memory", "limits", "remove")
	m.ObservePodResize(true, 1500*time.Microsecond+42*time.Millisecond)
	m.ObservePodResize(false, 3*time.Second)
	m.ObserveInfeasibleResize("swap_limitation")
	m.ObserveDeferredAcceptedResize("pods_removed")
	m.ObserveDeferredResize("accepted", withPriority(2000001000), 7*time.Second)
	m.ObserveDeferredResize("terminated", nil, time.Second)
	m.SetPendingResizes(map[*corev1.Pod]string{
		withPriority(0): "Deferred", {}: "Deferred", withPriority(-5): "Infeasible", withPriority(150000): "Deferred",
	})
	m.SetInProgressResizes(3)

	want := `
# HELP kubelet_container_requested_resizes_total [ALPHA] ` + requestedHelp + `
# TYPE kubelet_container_requested_resizes_total counter
kubelet_container_requested_resizes_total{operation="increase",requirement="requests",resource="cpu"} 2
kubelet_container_requested_resizes_total{operation="remove",requirement="limits",resource="memory"} 1
# HELP kubelet_pod_in_progress_resizes [ALPHA] Number of in-progress resizes for pods.
# TYPE kubelet_pod_in_progress_resizes gauge
kubelet_pod_in_progress_resizes 3
# HELP kubelet_pod_infeasible_resizes_total [ALPHA] Number of infeasible resizes for pods.
# TYPE kubelet_pod_infeasible_resizes_total counter
kubelet_pod_infeasible_resizes_total{reason_detail="swap_limitation"} 1
# HELP kubelet_pod_deferred_accepted_resizes_total [ALPHA] Cumulative number of resizes that were accepted after being deferred.
# TYPE kubelet_pod_deferred_accepted_resizes_total counter
kubelet_pod_deferred_accepted_resizes_total{retry_trigger="pods_removed"} 1
# HELP kubelet_pod_pending_resizes [ALPHA] ` + pendingHelp + `
# TYPE kubelet_pod_pending_resizes gauge
kubelet_pod_pending_resizes{priority_bucket="high",reason="deferred"} 1
kubelet_pod_pending_resizes{priority_bucket="low",reason="infeasible"} 1
kubelet_pod_pending_resizes{priority_bucket="normal",reason="deferred"} 2
`
	names := []string{
		"kubelet_container_requested_resizes_total", "kubelet_pod_in_progress_resizes", "kubelet_pod_infeasible_resizes_total",
		"kubelet_pod_deferred_accepted_resizes_total", "kubelet_pod_pending_resizes",
	}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}

	// The resize took 43 ms (whole milliseconds, as upstream): the 50 ms
	// bucket; the failed one 3000 ms.
	hist := render(t, m.Registry(), "kubelet_pod_resize_duration_milliseconds")
	for _, line := range []string{
		`kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="10"} 0`,
		`kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="50"} 1`,
		`kubelet_pod_resize_duration_milliseconds_sum{success="true"} 43`,
		`kubelet_pod_resize_duration_milliseconds_sum{success="false"} 3000`,
	} {
		if !strings.Contains(hist, line) {
			t.Errorf("resize duration lacks %s:\n%s", line, hist)
		}
	}
	deferred := render(t, m.Registry(), "kubelet_pod_deferred_resize_duration_seconds")
	for _, line := range []string{
		`kubelet_pod_deferred_resize_duration_seconds_bucket{priority_bucket="system-critical",resolution="accepted",le="10"} 1`,
		`kubelet_pod_deferred_resize_duration_seconds_sum{priority_bucket="system-critical",resolution="accepted"} 7`,
		`kubelet_pod_deferred_resize_duration_seconds_count{priority_bucket="unknown",resolution="terminated"} 1`,
	} {
		if !strings.Contains(deferred, line) {
			t.Errorf("deferred duration lacks %s:\n%s", line, deferred)
		}
	}

	m.SetPendingResizes(map[*corev1.Pod]string{withPriority(-5000): "Deferred"})
	if got := testutil.CollectAndCount(m.resize.pending); got != 1 {
		t.Errorf("pending series after the others resolved = %d, want 1", got)
	}
	if got := testutil.ToFloat64(m.resize.pending.WithLabelValues("deferred", "very-low")); got != 1 {
		t.Errorf("very-low deferred = %v, want 1", got)
	}
}
