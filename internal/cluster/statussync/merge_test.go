package statussync

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podstatus"
)

func TestMerge(t *testing.T) {
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	earlier := t0.Add(-time10m)
	lb := corev1.PodCondition{Type: "example.com/lb", Status: T, LastTransitionTime: mt(earlier)}
	evicted := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: T, Reason: "EvictionByEvictionAPI", LastTransitionTime: mt(earlier)}
	byKubelet := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: T, Reason: "TerminationByKubelet", LastTransitionTime: mt(now)}

	tests := []struct {
		name string
		api  corev1.PodStatus
		ours corev1.PodStatus
		want func() corev1.PodStatus
		// couldRun: the pod could still have running containers.
		couldRun bool
	}{
		{
			name: "empty API status takes ours",
			api:  corev1.PodStatus{Phase: corev1.PodPending},
			ours: running(),
			want: running,
		},
		{
			name: "other writers' conditions and fields are kept, stale kubelet conditions replaced",
			api: corev1.PodStatus{
				Phase:                 corev1.PodPending,
				NominatedNodeName:     "node1",
				ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "gpu"}},
				Conditions:            []corev1.PodCondition{lb, cond(corev1.PodReady, F, earlier), cond(corev1.PodScheduled, T, earlier)},
			},
			ours: func() corev1.PodStatus {
				st := running()
				st.Conditions = append(st.Conditions, corev1.PodCondition{Type: "example.com/lb", Status: F}) // a stale copy
				return st
			}(),
			want: func() corev1.PodStatus {
				st := running()
				st.NominatedNodeName = "node1"
				st.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu"}}
				st.Conditions[4].LastTransitionTime = mt(earlier) // PodScheduled did not change
				st.Conditions = append([]corev1.PodCondition{lb}, st.Conditions...)
				return st
			},
		},
		{
			name: "start time and QoS class once set are kept",
			api:  corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptrTime(earlier), QOSClass: corev1.PodQOSGuaranteed},
			ours: running(),
			want: func() corev1.PodStatus {
				st := running()
				st.StartTime, st.QOSClass = ptrTime(earlier), corev1.PodQOSGuaranteed
				return st
			},
		},
		{
			name: "DisruptionTarget is not sent before the terminal phase",
			api:  corev1.PodStatus{Phase: corev1.PodRunning},
			ours: func() corev1.PodStatus { st := running(); st.Conditions = append(st.Conditions, byKubelet); return st }(),
			want: running,
		},
		{
			name: "DisruptionTarget is sent with the terminal phase and replaces the API's",
			api:  corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{evicted}},
			ours: func() corev1.PodStatus { st := failed(); st.Conditions = append(st.Conditions, byKubelet); return st }(),
			want: func() corev1.PodStatus {
				st := failed()
				c := byKubelet
				c.LastTransitionTime = evicted.LastTransitionTime // still True: the time stays
				st.Conditions = append([]corev1.PodCondition{c}, st.Conditions...)
				return st
			},
		},
		{
			name: "DisruptionTarget is added with the terminal phase",
			api:  corev1.PodStatus{Phase: corev1.PodRunning},
			ours: func() corev1.PodStatus { st := failed(); st.Conditions = append(st.Conditions, byKubelet); return st }(),
			want: func() corev1.PodStatus { st := failed(); st.Conditions = append(st.Conditions, byKubelet); return st },
		},
		{
			name:     "no terminal phase nor DisruptionTarget while containers could run",
			api:      corev1.PodStatus{Phase: corev1.PodRunning, Reason: "api", Message: "api message"},
			ours:     func() corev1.PodStatus { st := failed(); st.Conditions = append(st.Conditions, byKubelet); return st }(),
			couldRun: true,
			want: func() corev1.PodStatus {
				st := failed()
				st.Phase, st.Reason, st.Message = corev1.PodRunning, "api", "api message"
				return st
			},
		},
		{
			name: "an API DisruptionTarget stays once terminal",
			api:  corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{evicted}},
			ours: func() corev1.PodStatus { st := failed(); st.Conditions = append(st.Conditions, byKubelet); return st }(),
			want: func() corev1.PodStatus {
				st := failed()
				st.Conditions = append([]corev1.PodCondition{evicted}, st.Conditions...)
				return st
			},
		},
		{
			name: "AllContainersRestarting is the kubelet's: ours replaces the API's",
			api:  corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(corev1.AllContainersRestarting, T, earlier)}},
			ours: func() corev1.PodStatus {
				st := running()
				st.Conditions = append(st.Conditions, cond(corev1.AllContainersRestarting, F, now))
				return st
			}(),
			want: func() corev1.PodStatus {
				st := running()
				st.Conditions = append(st.Conditions, cond(corev1.AllContainersRestarting, F, now))
				return st
			},
		},
		{
			name: "a terminal phase never reports ready",
			api:  corev1.PodStatus{Phase: corev1.PodRunning},
			ours: func() corev1.PodStatus { st := running(); st.Phase = corev1.PodSucceeded; return st }(),
			want: func() corev1.PodStatus {
				st := running()
				st.Phase = corev1.PodSucceeded
				st.Conditions[2] = corev1.PodCondition{Type: corev1.PodReady, Status: F, Reason: podstatus.ReasonPodCompleted, LastTransitionTime: mt(now)}
				st.Conditions[3] = corev1.PodCondition{Type: corev1.ContainersReady, Status: F, Reason: podstatus.ReasonPodCompleted, LastTransitionTime: mt(now)}
				return st
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api, ours := *tc.api.DeepCopy(), *tc.ours.DeepCopy()
			got := merge(tc.api, tc.ours, now, tc.couldRun)
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("merge mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(api, tc.api); diff != "" {
				t.Errorf("merge changed the API status:\n%s", diff)
			}
			if diff := cmp.Diff(ours, tc.ours); diff != "" {
				t.Errorf("merge changed berth's status:\n%s", diff)
			}
		})
	}
}

func TestMergeTruncatesTerminationMessages(t *testing.T) {
	ours := failed()
	ours.ContainerStatuses = append(ours.ContainerStatuses, *ours.ContainerStatuses[0].DeepCopy())
	ours.ContainerStatuses[1].Name = "side"
	ours.ContainerStatuses[0].State.Terminated.Message = strings.Repeat("x", 10000)
	ours.ContainerStatuses[1].State.Terminated.Message = "short"
	got := merge(corev1.PodStatus{}, ours, now, false)
	if n := len(got.ContainerStatuses[0].State.Terminated.Message); n != 6*1024 {
		t.Errorf("message length %d, want %d", n, 6*1024)
	}
	if m := got.ContainerStatuses[1].State.Terminated.Message; m != "short" {
		t.Errorf("short message became %q", m)
	}
}

func TestEqualNormalizes(t *testing.T) {
	a := running()
	b := running()
	b.StartTime = ptrTime(t0.Add(300 * 1000)) // sub-second: the API server keeps seconds
	b.ContainerStatuses = append([]corev1.ContainerStatus{{Name: "a-side"}}, b.ContainerStatuses...)
	a.ContainerStatuses = append(a.ContainerStatuses, corev1.ContainerStatus{Name: "a-side"})
	if !equal(a, b) {
		t.Error("equal() = false for statuses that differ in sub-second times and order")
	}
	b.ContainerStatuses[0].RestartCount = 1
	if equal(a, b) {
		t.Error("equal() = true for different restart counts")
	}
	c := running()
	c.Conditions = append(c.Conditions, corev1.PodCondition{Type: "example.com/lb", Status: corev1.ConditionTrue})
	if equal(running(), c) || !kubeletEqual(running(), c) {
		t.Error("kubeletEqual must ignore other writers' conditions, equal must not")
	}
}

// TestMergeTruncatesEphemeralTerminationMessages: ephemeral containers
// share the budget and are cut too, as upstream's normalizeStatus.
func TestMergeTruncatesEphemeralTerminationMessages(t *testing.T) {
	ours := failed()
	dbg := *ours.ContainerStatuses[0].DeepCopy()
	dbg.Name = "debugger"
	dbg.State.Terminated.Message = strings.Repeat("x", 10000)
	ours.EphemeralContainerStatuses = []corev1.ContainerStatus{dbg}
	got := merge(corev1.PodStatus{}, ours, now, false)
	if n := len(got.EphemeralContainerStatuses[0].State.Terminated.Message); n != 6*1024 {
		t.Errorf("ephemeral message length %d, want %d", n, 6*1024)
	}
}
