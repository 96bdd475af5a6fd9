package agent

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/pod/podstatus"
)

func TestObservedUpdateStartsThePodStartupClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC))
	m, err := newMetrics("n", clk)
	if err != nil {
		t.Fatal(err)
	}

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Name: "p", Namespace: "ns", CreationTimestamp: metav1.NewTime(clk.Now())},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	observeUpdate(m, clk)(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod}})
	// The syncer's status store reports the pod running; the pod start
	// duration is recorded from the update's first sighting.
	statuses := observedStatuses{podstatus.NewStore(clock.RealClock{}), m, nil}
	clk.Step(2 * time.Second)
	statuses.Set("u", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(clk.Now())}},
	}}})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{"kubelet_pod_start_duration_seconds_sum 2\n", "kubelet_containers_per_pod_count_count 1\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestObserveRelistCarriesThePLEGFigures: the PLEG's relist figures reach
// the metrics, a failed relist as one.
func TestObserveRelistCarriesThePLEGFigures(t *testing.T) {
	m, err := newMetrics("n", clocktesting.NewFakeClock(time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	observe := observeRelist(m)
	observe(pleg.RelistStats{Duration: time.Second, RunningPods: 2, Containers: map[string]int{"running": 3}, Dropped: 1})
	observe(pleg.RelistStats{Duration: time.Second, Interval: time.Second, Err: errors.New("down"), RunningPods: 9, Dropped: 1})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		"kubelet_running_pods 2\n", `kubelet_running_containers{container_state="running"} 3` + "\n",
		"kubelet_pleg_discard_events 2\n", "kubelet_pleg_relist_interval_seconds_count 1\n",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
