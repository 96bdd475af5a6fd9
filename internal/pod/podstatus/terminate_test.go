package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestTerminated(t *testing.T) {
	waitingAs := func(name, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
	}
	exited := func(name string, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	unknownAs := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Started: ptrFalse(), State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated"}}}
	}
	always := corev1.ContainerRestartPolicyAlways
	startedTrue := true
	sidecarRunning := corev1.ContainerStatus{Name: "init2", Started: &startedTrue, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	plain := &corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}
	withInit := &corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init1"}, {Name: "init2"}}, Containers: []corev1.Container{{Name: "app"}}}
	withSidecar := &corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init1"}, {Name: "init2", RestartPolicy: &always}}, Containers: []corev1.Container{{Name: "app"}}}
	waiting := waitingAs("app", "CreateContainerConfigError")
	done := exited("done", 0)
	done.State.Terminated.Reason = "Completed"
	for _, tc := range []struct {
		name   string
		spec   *corev1.PodSpec
		in     corev1.PodStatus
		static bool
		want   corev1.PodStatus
	}{
		{name: "never started pending pod fails", spec: plain,
			in:   corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting}},
			want: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{unknownAs("app")}}},
		{name: "terminated containers and terminal phase kept", spec: plain,
			in:   corev1.PodStatus{Phase: corev1.PodSucceeded, InitContainerStatuses: []corev1.ContainerStatus{done}, ContainerStatuses: []corev1.ContainerStatus{done}},
			want: corev1.PodStatus{Phase: corev1.PodSucceeded, InitContainerStatuses: []corev1.ContainerStatus{done}, ContainerStatuses: []corev1.ContainerStatus{done}}},
		{name: "static pod keeps its phase", spec: plain,
			in:     corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting}},
			static: true,
			want:   corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{unknownAs("app")}}},
		// Upstream's conformance spec "should not start app containers and
		// fail the pod if init containers fail on a RestartNever pod": the
		// app container never had a chance and stays waiting.
		{name: "init container failed: the app container stays waiting", spec: withInit,
			in: corev1.PodStatus{Phase: corev1.PodFailed,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), exited("init2", 1)},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "PodInitializing")}},
			want: corev1.PodStatus{Phase: corev1.PodFailed,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), exited("init2", 1)},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "PodInitializing")}}},
		{name: "deleted while the first init container waits: only it is unknown", spec: withInit,
			in: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{waitingAs("init1", "PodInitializing"), waitingAs("init2", "PodInitializing")},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "PodInitializing")}},
			want: corev1.PodStatus{Phase: corev1.PodFailed,
				InitContainerStatuses: []corev1.ContainerStatus{unknownAs("init1"), waitingAs("init2", "PodInitializing")},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "PodInitializing")}}},
		{name: "deleted while the second init container waits: the first ran, the rest stay waiting", spec: withInit,
			in: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), waitingAs("init2", "ErrImagePull")},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "PodInitializing")}},
			want: corev1.PodStatus{Phase: corev1.PodFailed,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), waitingAs("init2", "ErrImagePull")},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "PodInitializing")}}},
		{name: "initialized (the last init container completed): a waiting app container is unknown", spec: withInit,
			in: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), exited("init2", 0)},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "ErrImagePull")}},
			want: corev1.PodStatus{Phase: corev1.PodFailed,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), exited("init2", 0)},
				ContainerStatuses:     []corev1.ContainerStatus{unknownAs("app")}}},
		{name: "initialized (the last init container is a started sidecar)", spec: withSidecar,
			in: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), sidecarRunning},
				ContainerStatuses:     []corev1.ContainerStatus{waitingAs("app", "ErrImagePull")}},
			want: corev1.PodStatus{Phase: corev1.PodFailed,
				InitContainerStatuses: []corev1.ContainerStatus{exited("init1", 0), unknownAs("init2")},
				ContainerStatuses:     []corev1.ContainerStatus{unknownAs("app")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := *tc.in.DeepCopy()
			got := Terminated(tc.spec, tc.in, tc.static)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("input modified:\n%s", diff)
			}
		})
	}
}
