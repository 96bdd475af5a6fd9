package podstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// restartAllPod is a Never static pod: "src" (restartPolicy Never,
// RestartAllContainers on exit 42) and "web".
func restartAllPod() *corev1.Pod {
	pod := withPolicy(staticPod("src", "web"), corev1.RestartPolicyNever)
	pod.Spec.Containers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyNever)
	pod.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{
		Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	return pod
}

func TestAllContainersRestartingCondition(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	view := func(s corev1.ConditionStatus, reason, msg string) *condView {
		return &condView{corev1.AllContainersRestarting, s, reason, msg}
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		runtime  *runtimestate.Pod
		restart  podplan.RestartAll
		terminal bool
		want     *condView // nil: no such condition
	}{
		{name: "a pod without RestartAllContainers rules has no condition", pod: staticPod("a"),
			runtime: rt(ready, running("a", "c1", 0)), restart: podplan.RestartAllResetting},
		{name: "no restart under way: False", pod: restartAllPod(),
			runtime: rt(ready, running("web", "w1", 0), running("src", "s1", 0)), want: view(F, "", "")},
		{name: "resetting: True", pod: restartAllPod(),
			runtime: rt(ready, running("web", "w1", 0), exited("src", "s1", 42, "Error", 0)), restart: podplan.RestartAllResetting,
			want: view(T, ReasonRestartAllContainersStarted, "container exited with restart policy rule")},
		{name: "cleaned up: False", pod: restartAllPod(), runtime: rt(ready), restart: podplan.RestartAllCleanedUp, want: view(F, "", "")},
		{name: "failed pod: False, PodFailed", pod: restartAllPod(), terminal: true,
			runtime: rt(ready, exited("web", "w1", 0, "", 0), exited("src", "s1", 1, "", 0)), want: view(F, ReasonPodFailed, "")},
		{name: "succeeded pod: False, PodCompleted", pod: restartAllPod(), terminal: true,
			runtime: rt(ready, exited("web", "w1", 0, "", 0), exited("src", "s1", 0, "", 0)), want: view(F, ReasonPodCompleted, "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Generate(Input{Pod: tc.pod, Runtime: tc.runtime, RestartAll: tc.restart, Terminal: tc.terminal, Now: now})
			var c *condView
			for _, v := range views(got.Conditions) {
				if v.Type == corev1.AllContainersRestarting {
					if c != nil {
						t.Fatalf("two AllContainersRestarting conditions: %+v", got.Conditions)
					}
					c = &v
				}
			}
			if diff := cmp.Diff(tc.want, c, ignoreResources); diff != "" {
				t.Errorf("AllContainersRestarting (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAllContainersRestartingTransition: the condition's
// lastTransitionTime moves only with its status, it carries no observed
// generation (as upstream), and the API's copy is replaced, not duplicated.
func TestAllContainersRestartingTransition(t *testing.T) {
	pod := restartAllPod()
	pod.Generation = 3
	before := now.Add(-time.Hour)
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.AllContainersRestarting, Status: corev1.ConditionFalse, LastTransitionTime: mt(before)}}
	ready := sbs(readySandbox("10.244.0.5"))
	gen := func(prev *corev1.PodStatus, r podplan.RestartAll, at time.Time) corev1.PodStatus {
		return Generate(Input{Pod: pod, Runtime: rt(ready, exited("src", "s1", 42, "Error", 0)), Previous: prev, RestartAll: r, Now: at})
	}
	find := func(s corev1.PodStatus) []corev1.PodCondition {
		var out []corev1.PodCondition
		for _, c := range s.Conditions {
			if c.Type == corev1.AllContainersRestarting {
				out = append(out, c)
			}
		}
		return out
	}
	first := gen(nil, podplan.RestartAllNone, now)
	if cs := find(first); len(cs) != 1 || !cs[0].LastTransitionTime.Equal(ptr(mt(before))) || cs[0].ObservedGeneration != 0 {
		t.Fatalf("unchanged False: %+v, want one, transition at %v, no observed generation", cs, before)
	}
	second := gen(&first, podplan.RestartAllResetting, now.Add(time.Minute))
	if cs := find(second); len(cs) != 1 || cs[0].Status != corev1.ConditionTrue || !cs[0].LastTransitionTime.Equal(ptr(mt(now.Add(time.Minute)))) {
		t.Errorf("turned True: %+v, want one, transition at now+1m", cs)
	}
}

// TestContainerStatusesRestartAll: the statuses of containers a reset
// removed, and of their next instances: restart counts never go backwards
// and the last termination carries over.
func TestContainerStatusesRestartAll(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	removed := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonRestartingAllContainers, Message: msgRestartingAll}}
	removedTerm := &corev1.ContainerStateTerminated{Reason: ReasonRestartingAllContainers, Message: msgRestartingAll, ExitCode: 137}
	srcTerm := &corev1.ContainerStateTerminated{ExitCode: 42, Reason: "Error", ContainerID: "containerd://s1"}
	runningAt := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(t0.Add(time.Minute))}}
	tests := []struct {
		name     string
		runtime  *runtimestate.Pod
		previous corev1.ContainerStatus // of "src"
		restart  podplan.RestartAll
		want     corev1.ContainerStatus
	}{
		{
			name:     "removed after terminating: waiting RestartingAllContainers, one more restart, the rest kept",
			runtime:  rt(ready),
			previous: corev1.ContainerStatus{Name: "src", Image: "src:1", ImageID: "sha256:src", ContainerID: "containerd://s1", RestartCount: 2, State: corev1.ContainerState{Terminated: srcTerm}},
			restart:  podplan.RestartAllCleanedUp,
			want: corev1.ContainerStatus{Name: "src", Image: "src:1", ImageID: "sha256:src", ContainerID: "containerd://s1", RestartCount: 3, Started: ptr(false),
				State: removed, LastTerminationState: corev1.ContainerState{Terminated: removedTerm}},
		},
		{
			name:     "removed while running: the same, from a fresh status",
			runtime:  rt(ready),
			previous: corev1.ContainerStatus{Name: "src", Image: "src:1", ContainerID: "containerd://s1", RestartCount: 0, State: runningAt},
			restart:  podplan.RestartAllCleanedUp,
			want: corev1.ContainerStatus{Name: "src", Image: "src:1", RestartCount: 1, Started: ptr(false),
				State: removed, LastTerminationState: corev1.ContainerState{Terminated: removedTerm}},
		},
		{
			name:     "never ran (waiting): stays waiting, no restart counted",
			runtime:  rt(ready),
			previous: corev1.ContainerStatus{Name: "src", Image: "src:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}},
			restart:  podplan.RestartAllCleanedUp,
			want: corev1.ContainerStatus{Name: "src", Image: "src:1", Started: ptr(false),
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}},
		},
		{
			name:    "running again with a lower runtime count: the count and last termination carry over",
			runtime: rt(ready, running("src", "s2", 0)),
			previous: corev1.ContainerStatus{Name: "src", Image: "src:1", RestartCount: 3,
				State: removed, LastTerminationState: corev1.ContainerState{Terminated: removedTerm}},
			want: corev1.ContainerStatus{Name: "src", Image: "src:1", ImageID: "sha256:src", ContainerID: "containerd://s2", RestartCount: 3,
				Ready: true, Started: ptr(true), State: runningAt, LastTerminationState: corev1.ContainerState{Terminated: removedTerm}},
		},
		{
			name:     "running again right after a termination the runtime lost: one more restart, that termination last",
			runtime:  rt(ready, running("src", "s2", 0)),
			previous: corev1.ContainerStatus{Name: "src", Image: "src:1", ContainerID: "containerd://s1", RestartCount: 2, State: corev1.ContainerState{Terminated: srcTerm}},
			want: corev1.ContainerStatus{Name: "src", Image: "src:1", ImageID: "sha256:src", ContainerID: "containerd://s2", RestartCount: 3,
				Ready: true, Started: ptr(true), State: runningAt, LastTerminationState: corev1.ContainerState{Terminated: srcTerm}},
		},
		{
			name:     "unknown after running while restarting: terminated RestartingAllContainers",
			runtime:  rt(ready, withState(running("src", "s1", 0), runtimestate.ContainerUnknown)),
			previous: corev1.ContainerStatus{Name: "src", Image: "src:1", ContainerID: "containerd://s1", State: runningAt},
			restart:  podplan.RestartAllResetting,
			want: corev1.ContainerStatus{Name: "src", Image: "src:1", ImageID: "sha256:src", ContainerID: "containerd://s1", RestartCount: 1, Started: ptr(false),
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: ReasonRestartingAllContainers, Message: msgUnknownWhenTerminated, ExitCode: 137}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := restartAllPod()
			prev := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{tc.previous}}
			got := Generate(Input{Pod: pod, Runtime: tc.runtime, Previous: prev, RestartAll: tc.restart, Now: now})
			if diff := cmp.Diff(tc.want, got.ContainerStatuses[0], ignoreResources); diff != "" {
				t.Errorf("src status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPhaseWhileRestartingAll: containers a reset removed count as
// restarting, so a Never pod stays Running rather than failing, and goes
// Pending while its init containers run again.
func TestPhaseWhileRestartingAll(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	pod := withInit(restartAllPod(), "init")
	term := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}
	}
	runningState := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	prev := &corev1.PodStatus{
		Phase:                 corev1.PodRunning,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: term(0)}},
		ContainerStatuses:     []corev1.ContainerStatus{{Name: "src", State: term(42)}, {Name: "web", State: runningState}},
	}
	cleaned := Generate(Input{Pod: pod, Runtime: rt(ready), Previous: prev, RestartAll: podplan.RestartAllCleanedUp, Now: now})
	if cleaned.Phase != corev1.PodRunning {
		t.Errorf("cleaned up: phase %s, want Running", cleaned.Phase)
	}
	again := Generate(Input{Pod: pod, Runtime: rt(ready, running("init", "i2", 0)), Previous: &cleaned, Now: now})
	if again.Phase != corev1.PodPending {
		t.Errorf("initializing again: phase %s, want Pending", again.Phase)
	}
	for _, s := range again.ContainerStatuses {
		if s.State.Waiting == nil || s.State.Waiting.Reason != ReasonPodInitializing || s.RestartCount != 1 ||
			s.LastTerminationState.Terminated == nil || s.LastTerminationState.Terminated.Reason != ReasonRestartingAllContainers {
			t.Errorf("%s while initializing again: %+v", s.Name, s)
		}
	}
}
