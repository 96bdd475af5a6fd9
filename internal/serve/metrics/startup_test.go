package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPullTime(t *testing.T) {
	at := func(s int) time.Time { return epoch.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name  string
		pulls []pullSession
		want  time.Duration
	}{
		{"none", nil, 0},
		{"one", []pullSession{{at(1), at(4)}}, 3 * time.Second},
		{"disjoint", []pullSession{{at(10), at(12)}, {at(1), at(4)}}, 5 * time.Second},
		{"overlapping counted once", []pullSession{{at(1), at(4)}, {at(3), at(6)}}, 5 * time.Second},
		{"nested", []pullSession{{at(1), at(10)}, {at(2), at(3)}}, 9 * time.Second},
	}
	for _, tt := range tests {
		if got := pullTime(tt.pulls); got != tt.want {
			t.Errorf("%s: pullTime = %v, want %v", tt.name, got, tt.want)
		}
	}
	sli, total := startupDurations(epoch, epoch.Add(10*time.Second), []pullSession{{at(1), at(4)}}, 2*time.Second)
	if sli != 5*time.Second || total != 10*time.Second {
		t.Errorf("startupDurations = %v, %v; want 5s, 10s", sli, total)
	}
}

func runningStatus(phase corev1.PodPhase) *corev1.PodStatus {
	return &corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch)}},
	}}}
}

func TestStartupTrackerRecordsSLI(t *testing.T) {
	notStatic := func(*corev1.Pod) bool { return false }
	tests := []struct {
		name    string
		mutate  func(p *corev1.Pod)
		static  bool
		wantSLI string // the SLI histogram's _sum and _count lines, "" when none
	}{
		{name: "stateless pod", wantSLI: "sum 8\n" + "count 1"},
		{name: "stateful pod is left out", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}},
		{name: "pod already started when first seen", mutate: func(p *corev1.Pod) { p.Status.StartTime = &metav1.Time{Time: epoch} }},
		{name: "static pod", static: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, clk := newTestMetrics(t)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Name: "p", CreationTimestamp: metav1.NewTime(epoch)}}
			pod.Spec.Containers = []corev1.Container{{Name: "c"}}
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			static := func(*corev1.Pod) bool { return tt.static }
			if !tt.static {
				static = notStatic
			}
			clk.SetTime(epoch.Add(time.Second))
			m.ObservePodsOnWatch([]*corev1.Pod{pod}, static, clk.Now())
			// A 3s pull, then the status generated at 8s shows the pod running.
			m.ObserveCRI(pullCall("u", epoch.Add(2*time.Second), 3*time.Second))
			clk.SetTime(epoch.Add(8 * time.Second))
			m.ObservePodStatus("u", runningStatus(corev1.PodRunning))
			// The watch shows it at 11s: 11s since creation, minus the pull.
			clk.SetTime(epoch.Add(11 * time.Second))
			seen := pod.DeepCopy()
			seen.Status = *runningStatus(corev1.PodRunning)
			m.ObservePodsOnWatch([]*corev1.Pod{seen}, static, clk.Now())
			m.ObservePodsOnWatch([]*corev1.Pod{seen}, static, clk.Now()) // recorded once

			got := render(t, m.Registry(), "kubelet_pod_start_sli_duration_seconds")
			for _, line := range strings.Split(tt.wantSLI, "\n") {
				if line != "" && !strings.Contains(got, "kubelet_pod_start_sli_duration_seconds_"+line+"\n") {
					t.Errorf("SLI histogram lacks %q:\n%s", line, got)
				}
			}
			if tt.wantSLI == "" && strings.Contains(got, "_count 1") {
				t.Errorf("SLI recorded, want none:\n%s", got)
			}
			start := render(t, m.Registry(), "kubelet_pod_start_duration_seconds")
			wantStart := "kubelet_pod_start_duration_seconds_sum 7\n"
			if tt.mutate != nil && tt.name == "pod already started when first seen" {
				wantStart = "kubelet_pod_start_duration_seconds_count 0\n"
			}
			if !strings.Contains(start, wantStart) {
				t.Errorf("pod start duration lacks %q:\n%s", wantStart, start)
			}
		})
	}
}

func TestStartupTrackerForgetsTerminalPods(t *testing.T) {
	m, clk := newTestMetrics(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", CreationTimestamp: metav1.NewTime(epoch)}}
	m.ObservePodsOnWatch([]*corev1.Pod{pod}, func(*corev1.Pod) bool { return false }, clk.Now())
	done := pod.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	m.ObservePodsOnWatch([]*corev1.Pod{done}, func(*corev1.Pod) bool { return false }, clk.Now())
	if len(m.startup.pods) != 0 {
		t.Errorf("tracker still holds %d pods", len(m.startup.pods))
	}
	m.ObservePodsOnWatch([]*corev1.Pod{pod}, func(*corev1.Pod) bool { return false }, clk.Now())
	m.Forget(context.Background(), "u")
	if len(m.startup.pods) != 0 {
		t.Errorf("tracker still holds %d pods after Forget", len(m.startup.pods))
	}
}
