package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestContainerStatuses(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	term := func(id string, code int32, reason string) *corev1.ContainerStateTerminated {
		return &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: mt(t0.Add(60e9)),
			FinishedAt: mt(t0.Add(120e9)), ContainerID: "containerd://" + id}
	}
	runningState := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(t0.Add(60e9))}}
	base := func(id string, restarts int32) corev1.ContainerStatus {
		s := corev1.ContainerStatus{Name: "app", Image: "app:1", ImageID: "sha256:app", RestartCount: restarts, Started: ptr(false)}
		if id != "" {
			s.ContainerID = "containerd://" + id
		}
		return s
	}
	with := func(s corev1.ContainerStatus, f func(*corev1.ContainerStatus)) corev1.ContainerStatus {
		f(&s)
		return s
	}
	prevRunning := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{with(base("c1", 2), func(s *corev1.ContainerStatus) {
		s.State = runningState
		s.Ready, s.Started = true, ptr(true)
	})}}

	tests := []struct {
		name      string
		pod       *corev1.Pod
		runtime   *runtimestate.Pod
		previous  *corev1.PodStatus
		failures  map[string]runtimestate.StartFailure
		readiness map[string]bool
		startup   map[string]bool
		want      corev1.ContainerStatus
	}{
		{name: "not created yet", pod: staticPod("app"), runtime: rt(ready),
			want: corev1.ContainerStatus{Name: "app", Image: "app:1", Started: ptr(false),
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}}},
		{name: "waiting for init containers", pod: withInit(staticPod("app"), "init"), runtime: rt(ready),
			want: corev1.ContainerStatus{Name: "app", Image: "app:1", Started: ptr(false),
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonPodInitializing}}}},
		{name: "image pull failure", pod: staticPod("app"), runtime: rt(ready),
			failures: map[string]runtimestate.StartFailure{"app": {Reason: "ErrImagePull", Message: "not found"}},
			want: corev1.ContainerStatus{Name: "app", Image: "app:1", Started: ptr(false),
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}}},
		{name: "running ignores a stale failure", pod: staticPod("app"), runtime: rt(ready, running("app", "c1", 0)),
			failures: map[string]runtimestate.StartFailure{"app": {Reason: "ErrImagePull"}},
			want:     with(base("c1", 0), func(s *corev1.ContainerStatus) { s.State = runningState; s.Ready, s.Started = true, ptr(true) })},
		{name: "crash loop back-off", pod: staticPod("app"),
			runtime:  rt(ready, exited("app", "c2", 1, "Error", 3), exited("app", "c1", 1, "Error", 2)),
			failures: map[string]runtimestate.StartFailure{"app": {Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app"}},
			want: with(base("c2", 3), func(s *corev1.ContainerStatus) {
				s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app"}
				s.LastTerminationState.Terminated = term("c2", 1, "Error")
			})},
		{name: "restarted: last state from the older instance", pod: staticPod("app"),
			runtime: rt(ready, running("app", "c2", 1), exited("app", "c1", 137, "OOMKilled", 0)),
			want: with(base("c2", 1), func(s *corev1.ContainerStatus) {
				s.State = runningState
				s.Ready, s.Started = true, ptr(true)
				s.LastTerminationState.Terminated = term("c1", 137, "OOMKilled")
			})},
		{name: "terminated, Never: no failure applies", pod: withPolicy(staticPod("app"), corev1.RestartPolicyNever),
			runtime:  rt(ready, exited("app", "c1", 2, "", 0)),
			failures: map[string]runtimestate.StartFailure{"app": {Reason: "CrashLoopBackOff"}},
			want:     with(base("c1", 0), func(s *corev1.ContainerStatus) { s.State.Terminated = term("c1", 2, ReasonError) })},
		{name: "terminated 0 without reason reads Completed", pod: withPolicy(staticPod("app"), corev1.RestartPolicyNever),
			runtime: rt(ready, exited("app", "c1", 0, "", 0)),
			want:    with(base("c1", 0), func(s *corev1.ContainerStatus) { s.State.Terminated = term("c1", 0, ReasonCompleted) })},
		{name: "created: empty waiting", pod: staticPod("app"),
			runtime: rt(ready, withState(running("app", "c1", 0), runtimestate.ContainerCreated)),
			want:    with(base("c1", 0), func(s *corev1.ContainerStatus) { s.State.Waiting = &corev1.ContainerStateWaiting{} })},
		{name: "unknown after running: terminated unknown", pod: staticPod("app"), previous: prevRunning,
			runtime: rt(ready, withState(running("app", "c1", 2), runtimestate.ContainerUnknown)),
			want: with(base("c1", 3), func(s *corev1.ContainerStatus) {
				s.State.Terminated = &corev1.ContainerStateTerminated{Reason: ReasonContainerStatusUnknown, Message: msgUnknownWhenTerminated, ExitCode: 137}
			})},
		{name: "vanished after running", pod: staticPod("app"), previous: prevRunning, runtime: rt(ready),
			want: corev1.ContainerStatus{Name: "app", Image: "app:1", Started: ptr(false), RestartCount: 3,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					Reason: ReasonContainerStatusUnknown, Message: msgUnknownWhenDeleted, ExitCode: 137}}}},
		{name: "vanished after terminating: previous kept", pod: staticPod("app"), runtime: rt(ready),
			previous: &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{with(base("c1", 0), func(s *corev1.ContainerStatus) {
				s.State.Terminated = term("c1", 0, ReasonCompleted)
			})}},
			want: with(base("c1", 0), func(s *corev1.ContainerStatus) { s.State.Terminated = term("c1", 0, ReasonCompleted) })},
		{name: "readiness probe failing", pod: staticPod("app"), runtime: rt(ready, running("app", "c1", 0)),
			readiness: map[string]bool{"app": false},
			want:      with(base("c1", 0), func(s *corev1.ContainerStatus) { s.State = runningState; s.Started = ptr(true) })},
		{name: "startup probe not yet passed", pod: staticPod("app"), runtime: rt(ready, running("app", "c1", 0)),
			startup: map[string]bool{"app": false}, readiness: map[string]bool{"app": true},
			want: with(base("c1", 0), func(s *corev1.ContainerStatus) { s.State = runningState })},
		{name: "image and image ID fall back", pod: staticPod("app"),
			runtime: rt(ready, func() runtimestate.Container {
				c := running("app", "c1", 0)
				c.Image, c.ImageRef, c.ImageID = "", "", "sha256:id"
				return c
			}()),
			want: with(base("c1", 0), func(s *corev1.ContainerStatus) {
				s.ImageID = "sha256:id"
				s.State = runningState
				s.Ready, s.Started = true, ptr(true)
			})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Generate(Input{Pod: tc.pod, Runtime: tc.runtime, Previous: tc.previous, Failures: tc.failures,
				Readiness: tc.readiness, Startup: tc.startup, Now: now})
			if diff := cmp.Diff([]corev1.ContainerStatus{tc.want}, got.ContainerStatuses, ignoreResources); diff != "" {
				t.Errorf("container statuses mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInitContainerStatuses(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	pod := withInit(staticPod("app"), "i1", "i2")
	done := func(name, id string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Image: name + ":1", ImageID: "sha256:" + name, ContainerID: "containerd://" + id,
			Ready: true, Started: ptr(false), State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: ReasonCompleted, StartedAt: mt(t0.Add(60e9)), FinishedAt: mt(t0.Add(120e9)), ContainerID: "containerd://" + id}}}
	}
	tests := []struct {
		name     string
		runtime  *runtimestate.Pod
		failures map[string]runtimestate.StartFailure
		want     []corev1.ContainerStatus
	}{
		{"first done, second running", rt(ready, running("i2", "x2", 0), exited("i1", "x1", 0, "Completed", 0)), nil,
			[]corev1.ContainerStatus{done("i1", "x1"), {Name: "i2", Image: "i2:1", ImageID: "sha256:i2", ContainerID: "containerd://x2",
				Started: ptr(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(t0.Add(60e9))}}}}},
		{"done init ignores failures", rt(ready, exited("i2", "x2", 0, "Completed", 0), exited("i1", "x1", 0, "Completed", 0)),
			map[string]runtimestate.StartFailure{"i1": {Reason: "CrashLoopBackOff"}},
			[]corev1.ContainerStatus{done("i1", "x1"), done("i2", "x2")}},
		{"removed inits inferred completed once app exists", rt(ready, running("app", "c1", 0)), nil,
			[]corev1.ContainerStatus{
				{Name: "i1", Image: "i1:1", Ready: true, Started: ptr(false), State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: ReasonCompleted, Message: msgInitInferred}}},
				{Name: "i2", Image: "i2:1", Ready: true, Started: ptr(false), State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: ReasonCompleted, Message: msgInitInferred}}},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Generate(Input{Pod: pod, Runtime: tc.runtime, Failures: tc.failures, Now: now})
			if diff := cmp.Diff(tc.want, got.InitContainerStatuses, ignoreResources); diff != "" {
				t.Errorf("init container statuses mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeletedPodDoesNotShowRestart(t *testing.T) {
	pod := staticPod("app")
	pod.DeletionTimestamp = ptr(metav1.NewTime(now))
	prev := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 2,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	got := Generate(Input{Pod: pod, Previous: prev, Failures: map[string]runtimestate.StartFailure{"app": {Reason: "ErrImagePull"}}, Now: now})
	s := got.ContainerStatuses[0]
	if s.RestartCount != 2 || s.State.Waiting == nil || s.State.Waiting.Reason != ReasonContainerCreating {
		t.Errorf("deleted pod: restartCount %d, state %+v; want 2 and ContainerCreating (no failure shown)", s.RestartCount, s.State)
	}
}

func TestVolumeMountStatuses(t *testing.T) {
	pod := staticPod("app")
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "config", MountPath: "/etc/app", ReadOnly: true},
		{Name: "certs", MountPath: "/certs", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyEnabled)},
	}
	want := []corev1.VolumeMountStatus{
		{Name: "data", MountPath: "/data"},
		{Name: "config", MountPath: "/etc/app", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyDisabled)},
		{Name: "certs", MountPath: "/certs", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyEnabled)},
	}
	for _, runtime := range []*runtimestate.Pod{nil, rt(sbs(readySandbox("10.1.1.1")), running("app", "c1", 0))} {
		got := Generate(Input{Pod: pod, Runtime: runtime, Now: now})
		if diff := cmp.Diff(want, got.ContainerStatuses[0].VolumeMounts); diff != "" {
			t.Errorf("volumeMounts mismatch (-want +got):\n%s", diff)
		}
	}
}
