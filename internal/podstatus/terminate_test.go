package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestTerminated(t *testing.T) {
	waiting := corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError"}}}
	done := corev1.ContainerStatus{Name: "done", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
	unknown := corev1.ContainerStatus{Name: "app", Started: ptrFalse(), State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 137, Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated"}}}
	for _, tc := range []struct {
		name   string
		in     corev1.PodStatus
		static bool
		want   corev1.PodStatus
	}{
		{name: "never started pending pod fails",
			in:   corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting}},
			want: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{unknown}}},
		{name: "terminated containers and terminal phase kept",
			in:   corev1.PodStatus{Phase: corev1.PodSucceeded, InitContainerStatuses: []corev1.ContainerStatus{done}, ContainerStatuses: []corev1.ContainerStatus{done}},
			want: corev1.PodStatus{Phase: corev1.PodSucceeded, InitContainerStatuses: []corev1.ContainerStatus{done}, ContainerStatuses: []corev1.ContainerStatus{done}}},
		{name: "static pod keeps its phase",
			in:     corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting}},
			static: true,
			want:   corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{unknown}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := *tc.in.DeepCopy()
			got := Terminated(tc.in, tc.static)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("input modified:\n%s", diff)
			}
		})
	}
}
