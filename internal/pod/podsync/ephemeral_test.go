package podsync

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOnePlanEphemeral: one sync's plan for an ephemeral container shows in
// the CRI calls and in status.ephemeralContainerStatuses alike, and leaves
// the pod's phase alone.
func TestOnePlanEphemeral(t *testing.T) {
	tests := []struct {
		name   string
		target string
		before func(e *planEnv, pod *corev1.Pod) // drives the runtime before the last sync
		state  string
		calls  []string
	}{
		{
			name:   "added to a running pod: started once",
			before: func(e *planEnv, pod *corev1.Pod) {},
			state:  "waiting:ContainerCreating",
			calls:  []string{"CreateContainer", "StartContainer"},
		},
		{
			name:   "running: nothing to do",
			before: func(e *planEnv, pod *corev1.Pod) { e.sync(pod) },
			state:  "running",
		},
		{
			name:   "exited under restartPolicy Always: not restarted",
			before: func(e *planEnv, pod *corev1.Pod) { e.sync(pod); e.exit("debugger", 1) },
			state:  "terminated:Error",
		},
		{
			name:   "target exited: waits, not created",
			target: "app",
			before: func(e *planEnv, pod *corev1.Pod) {
				e.exit("app", 1)
				pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			},
			state: "waiting:CreateContainerConfigError",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newPlanEnv(t)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, Containers: []corev1.Container{
					{Name: "app", Image: "busybox:1.36"}, {Name: "side", Image: "busybox:1.36"}}},
			}
			e.sync(pod)
			pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox:1.36"},
				TargetContainerName:      tc.target,
			}}
			tc.before(e, pod)
			e.clock.Step(time.Second)
			e.fake.ResetCalls()
			e.sync(pod)
			if diff := cmp.Diff(tc.calls, mutatingCalls(e.fake.Calls())); diff != "" {
				t.Errorf("CRI calls (-want +got):\n%s", diff)
			}
			st, _ := e.store.Get(pod.UID)
			if len(st.EphemeralContainerStatuses) != 1 {
				t.Fatalf("ephemeral container statuses = %+v, want one", st.EphemeralContainerStatuses)
			}
			if got := stateOf(st.EphemeralContainerStatuses[0].State); got != tc.state {
				t.Errorf("ephemeral container state = %s, want %s", got, tc.state)
			}
			if st.Phase != corev1.PodRunning {
				t.Errorf("phase = %s, want Running", st.Phase)
			}
		})
	}
}
