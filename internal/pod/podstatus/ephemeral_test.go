package podstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// withEphemeral adds an ephemeral container per name (image "<name>:1").
func withEphemeral(p *corev1.Pod, names ...string) *corev1.Pod {
	for _, n := range names {
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: n, Image: n + ":1"},
		})
	}
	return p
}

func TestEphemeralContainerStatuses(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	cid := "containerd://d1"
	runningDbg := corev1.ContainerStatus{Name: "dbg", Image: "dbg:1", ImageID: "sha256:dbg", ContainerID: cid,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(t0.Add(time.Minute))}}}
	exitedDbg := corev1.ContainerStatus{Name: "dbg", Image: "dbg:1", ImageID: "sha256:dbg", ContainerID: cid,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
			StartedAt: mt(t0.Add(time.Minute)), FinishedAt: mt(t0.Add(2 * time.Minute)), ContainerID: cid}}}
	targetWait := runtimestate.StartFailure{Reason: podplan.WaitingReasonCreateContainerConfigError, Message: "target container app is not running"}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		runtime  *runtimestate.Pod
		previous *corev1.PodStatus
		failures map[string]runtimestate.StartFailure
		want     []corev1.ContainerStatus
	}{
		{name: "none in the spec: no statuses", pod: staticPod("app"), runtime: rt(ready, running("app", "c1", 0))},
		{name: "not created yet", pod: withEphemeral(staticPod("app"), "dbg"), runtime: rt(ready, running("app", "c1", 0)),
			want: []corev1.ContainerStatus{{Name: "dbg", Image: "dbg:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}}}},
		{name: "not created yet, pod with init containers", pod: withEphemeral(withInit(staticPod("app"), "init"), "dbg"), runtime: rt(ready),
			want: []corev1.ContainerStatus{{Name: "dbg", Image: "dbg:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonPodInitializing}}}}},
		{name: "target not running: the plan's reason", pod: withEphemeral(staticPod("app"), "dbg"), runtime: rt(ready),
			failures: map[string]runtimestate.StartFailure{"dbg": targetWait},
			want: []corev1.ContainerStatus{{Name: "dbg", Image: "dbg:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: targetWait.Reason, Message: targetWait.Message}}}}},
		{name: "running: no started flag, never ready", pod: withEphemeral(staticPod("app"), "dbg"),
			runtime: rt(ready, running("dbg", "d1", 0), running("app", "c1", 0)),
			want:    []corev1.ContainerStatus{runningDbg}},
		{name: "exited under restartPolicy Always: terminated for good, a stale failure ignored", pod: withEphemeral(staticPod("app"), "dbg"),
			runtime:  rt(ready, exited("dbg", "d1", 1, "", 0), running("app", "c1", 0)),
			failures: map[string]runtimestate.StartFailure{"dbg": {Reason: "ErrImagePull"}},
			want:     []corev1.ContainerStatus{exitedDbg}},
		{name: "vanished while running: restart count stays 0", pod: withEphemeral(staticPod("app"), "dbg"),
			runtime:  rt(ready, running("app", "c1", 0)),
			previous: &corev1.PodStatus{EphemeralContainerStatuses: []corev1.ContainerStatus{runningDbg}},
			want: []corev1.ContainerStatus{{Name: "dbg", Image: "dbg:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					Reason: ReasonContainerStatusUnknown, Message: msgUnknownWhenDeleted, ExitCode: exitCodeUnknown}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Generate(Input{Pod: tt.pod, Runtime: tt.runtime, Previous: tt.previous, Failures: tt.failures, Now: now})
			if diff := cmp.Diff(tt.want, got.EphemeralContainerStatuses); diff != "" {
				t.Errorf("ephemeral container statuses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEphemeralContainersLeavePhaseAlone: a running ephemeral container
// neither keeps a finished pod from its terminal phase nor makes a pod
// whose containers wait Running or Ready.
func TestEphemeralContainersLeavePhaseAlone(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	tests := []struct {
		name      string
		pod       *corev1.Pod
		runtime   *runtimestate.Pod
		wantPhase corev1.PodPhase
		wantReady corev1.ConditionStatus
	}{
		{name: "regular container done under Never, debugger running: Succeeded",
			pod:     withEphemeral(withPolicy(staticPod("app"), corev1.RestartPolicyNever), "dbg"),
			runtime: rt(ready, running("dbg", "d1", 0), exited("app", "c1", 0, "Completed", 0)), wantPhase: corev1.PodSucceeded, wantReady: corev1.ConditionFalse},
		{name: "regular container not created, debugger running: Pending",
			pod:     withEphemeral(staticPod("app"), "dbg"),
			runtime: rt(ready, running("dbg", "d1", 0)), wantPhase: corev1.PodPending, wantReady: corev1.ConditionFalse},
		{name: "regular container running, debugger exited 1: Running and Ready",
			pod:     withEphemeral(staticPod("app"), "dbg"),
			runtime: rt(ready, exited("dbg", "d1", 1, "Error", 0), running("app", "c1", 0)), wantPhase: corev1.PodRunning, wantReady: corev1.ConditionTrue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Generate(Input{Pod: tt.pod, Runtime: tt.runtime, Now: now})
			if got.Phase != tt.wantPhase {
				t.Errorf("phase = %s, want %s", got.Phase, tt.wantPhase)
			}
			if c := cond(got.Conditions, corev1.PodReady); c.Status != tt.wantReady {
				t.Errorf("Ready = %s, want %s", c.Status, tt.wantReady)
			}
		})
	}
}
