package podstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// condView is a condition without its timestamps.
type condView struct {
	Type            corev1.PodConditionType
	Status          corev1.ConditionStatus
	Reason, Message string
}

func views(cs []corev1.PodCondition) []condView {
	var out []condView
	for _, c := range cs {
		out = append(out, condView{c.Type, c.Status, c.Reason, c.Message})
	}
	return out
}

func TestConditions(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	const (
		rts = corev1.PodReadyToStartContainers
		ini = corev1.PodInitialized
		rdy = corev1.PodReady
		crd = corev1.ContainersReady
		sch = corev1.PodScheduled
	)
	tests := []struct {
		name      string
		pod       *corev1.Pod
		runtime   *runtimestate.Pod
		readiness map[string]bool
		want      []condView
	}{
		{"nothing yet", staticPod("a", "b"), nil, nil, []condView{
			{rts, F, ReasonPodSandboxNotReady, "no pod sandbox exists"},
			{ini, T, "", ""},
			{rdy, F, ReasonContainersNotReady, "containers with unready status: [a b]"},
			{crd, F, ReasonContainersNotReady, "containers with unready status: [a b]"},
			{sch, T, "", ""},
		}},
		{"all ready", staticPod("a", "b"), rt(ready, running("a", "c1", 0), running("b", "c2", 0)), nil, []condView{
			{rts, T, "", ""}, {ini, T, "", ""}, {rdy, T, "", ""}, {crd, T, "", ""}, {sch, T, "", ""},
		}},
		{"one unready", staticPod("a", "b"), rt(ready, running("a", "c1", 0), running("b", "c2", 0)), map[string]bool{"b": false}, []condView{
			{rts, T, "", ""},
			{ini, T, "", ""},
			{rdy, F, ReasonContainersNotReady, "containers with unready status: [b]"},
			{crd, F, ReasonContainersNotReady, "containers with unready status: [b]"},
			{sch, T, "", ""},
		}},
		{"init in progress", withInit(staticPod("app"), "i1", "i2"), rt(ready, running("i2", "x2", 0), exited("i1", "x1", 0, "Completed", 0)), nil, []condView{
			{rts, T, "", ""},
			{ini, F, ReasonContainersNotInitialized, "containers with incomplete status: [i2]"},
			{rdy, F, ReasonContainersNotReady, "containers with unready status: [app]"},
			{crd, F, ReasonContainersNotReady, "containers with unready status: [app]"},
			{sch, T, "", ""},
		}},
		{"succeeded", withInit(withPolicy(staticPod("app"), corev1.RestartPolicyNever), "i1"),
			rt(sbs(runtimestate.Sandbox{ID: "sb1"}), exited("app", "c1", 0, "Completed", 0), exited("i1", "x1", 0, "Completed", 0)), nil, []condView{
				{rts, F, ReasonPodSandboxNotReady, "pod sandbox is not ready"},
				{ini, T, ReasonPodCompleted, ""},
				{rdy, F, ReasonPodCompleted, ""},
				{crd, F, ReasonPodCompleted, ""},
				{sch, T, "", ""},
			}},
		{"failed", withPolicy(staticPod("app"), corev1.RestartPolicyNever), rt(ready, exited("app", "c1", 1, "Error", 0)), nil, []condView{
			{rts, T, "", ""},
			{ini, T, "", ""},
			{rdy, F, ReasonPodFailed, ""},
			{crd, F, ReasonPodFailed, ""},
			{sch, T, "", ""},
		}},
		{"readiness gate missing", func() *corev1.Pod {
			p := staticPod("app")
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
			return p
		}(), rt(ready, running("app", "c1", 0)), nil, []condView{
			{rts, T, "", ""},
			{ini, T, "", ""},
			{rdy, F, ReasonReadinessGatesNotReady, `corresponding condition of pod readiness gate "example.com/lb" does not exist.`},
			{crd, T, "", ""},
			{sch, T, "", ""},
		}},
		{"readiness gate met; foreign condition kept", func() *corev1.Pod {
			p := staticPod("app")
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/lb", Status: T}, {Type: corev1.PodReady, Status: F}}
			return p
		}(), rt(ready, running("app", "c1", 0)), nil, []condView{
			{"example.com/lb", T, "", ""},
			{rts, T, "", ""}, {ini, T, "", ""}, {rdy, T, "", ""}, {crd, T, "", ""}, {sch, T, "", ""},
		}},
		{"host network sandbox", func() *corev1.Pod { p := staticPod("app"); p.Spec.HostNetwork = true; return p }(),
			rt(sbs(runtimestate.Sandbox{ID: "sb1", State: runtimestate.SandboxReady, HostNetwork: true})), nil, []condView{
				{rts, T, "", ""},
				{ini, T, "", ""},
				{rdy, F, ReasonContainersNotReady, "containers with unready status: [app]"},
				{crd, F, ReasonContainersNotReady, "containers with unready status: [app]"},
				{sch, T, "", ""},
			}},
		{"two ready sandboxes need a new one", staticPod("app"),
			rt(sbs(readySandbox("10.1.1.1"), runtimestate.Sandbox{ID: "sb0", State: runtimestate.SandboxReady, IPs: []string{"10.1.1.2"}})), nil, []condView{
				{rts, F, ReasonPodSandboxNotReady, "multiple pod sandboxes are ready and need to be reconciled"},
				{ini, T, "", ""},
				{rdy, F, ReasonContainersNotReady, "containers with unready status: [app]"},
				{crd, F, ReasonContainersNotReady, "containers with unready status: [app]"},
				{sch, T, "", ""},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Generate(Input{Pod: tc.pod, Runtime: tc.runtime, Readiness: tc.readiness, Now: now})
			if diff := cmp.Diff(tc.want, views(got.Conditions)); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionTransitionTimes(t *testing.T) {
	pod := staticPod("app")
	pod.Generation = 3
	before := t0.Add(-10 * time.Minute)
	prev := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: mt(before)},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: mt(before)},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: mt(before)},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", LastTransitionTime: mt(before)},
	}}
	got := Generate(Input{Pod: pod, Runtime: rt(sbs(readySandbox("10.1.1.1")), running("app", "c1", 0)), Previous: prev, Now: now})
	want := map[corev1.PodConditionType]corev1.PodCondition{
		corev1.DisruptionTarget:          {Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", LastTransitionTime: mt(before)},
		corev1.PodReady:                  {Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: mt(before), ObservedGeneration: 3},
		corev1.ContainersReady:           {Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: mt(now), ObservedGeneration: 3},
		corev1.PodScheduled:              {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: mt(before), ObservedGeneration: 3},
		corev1.PodInitialized:            {Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: mt(now), ObservedGeneration: 3},
		corev1.PodReadyToStartContainers: {Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: mt(now), ObservedGeneration: 3},
	}
	if len(got.Conditions) != len(want) {
		t.Fatalf("got %d conditions, want %d: %+v", len(got.Conditions), len(want), got.Conditions)
	}
	for typ, w := range want {
		if diff := cmp.Diff(w, cond(got.Conditions, typ)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", typ, diff)
		}
	}
	if got.ObservedGeneration != 3 {
		t.Errorf("observedGeneration = %d, want 3", got.ObservedGeneration)
	}
}

func TestSidecarConditions(t *testing.T) {
	F, T := corev1.ConditionFalse, corev1.ConditionTrue
	sidecarPod := func() *corev1.Pod {
		p := withInit(staticPod("app"), "side")
		p.Spec.InitContainers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
		return p
	}
	ready := sbs(readySandbox("10.1.1.1"))
	tests := []struct {
		name      string
		runtime   *runtimestate.Pod
		startup   map[string]bool
		readiness map[string]bool
		want      []condView
	}{
		{"sidecar running, startup probe pending", rt(ready, running("side", "s1", 0)), map[string]bool{"side": false}, nil, []condView{
			{corev1.PodReadyToStartContainers, T, "", ""},
			{corev1.PodInitialized, F, ReasonContainersNotInitialized, "containers with incomplete status: [side]"},
			{corev1.PodReady, F, ReasonContainersNotReady, "containers with unready status: [side app]"},
			{corev1.ContainersReady, F, ReasonContainersNotReady, "containers with unready status: [side app]"},
			{corev1.PodScheduled, T, "", ""},
		}},
		{"sidecar started", rt(ready, running("side", "s1", 0)), nil, nil, []condView{
			{corev1.PodReadyToStartContainers, T, "", ""},
			{corev1.PodInitialized, T, "", ""},
			{corev1.PodReady, F, ReasonContainersNotReady, "containers with unready status: [app]"},
			{corev1.ContainersReady, F, ReasonContainersNotReady, "containers with unready status: [app]"},
			{corev1.PodScheduled, T, "", ""},
		}},
		{"sidecar restarting after initialization, not ready", rt(ready, running("app", "c1", 0), exited("side", "s1", 1, "Error", 2)), nil, nil, []condView{
			{corev1.PodReadyToStartContainers, T, "", ""},
			{corev1.PodInitialized, T, "", ""},
			{corev1.PodReady, F, ReasonContainersNotReady, "containers with unready status: [side]"},
			{corev1.ContainersReady, F, ReasonContainersNotReady, "containers with unready status: [side]"},
			{corev1.PodScheduled, T, "", ""},
		}},
		{"sidecar readiness probe fails", rt(ready, running("app", "c1", 0), running("side", "s1", 0)), nil, map[string]bool{"side": false}, []condView{
			{corev1.PodReadyToStartContainers, T, "", ""},
			{corev1.PodInitialized, T, "", ""},
			{corev1.PodReady, F, ReasonContainersNotReady, "containers with unready status: [side]"},
			{corev1.ContainersReady, F, ReasonContainersNotReady, "containers with unready status: [side]"},
			{corev1.PodScheduled, T, "", ""},
		}},
		{"all ready", rt(ready, running("app", "c1", 0), running("side", "s1", 0)), nil, nil, []condView{
			{corev1.PodReadyToStartContainers, T, "", ""},
			{corev1.PodInitialized, T, "", ""},
			{corev1.PodReady, T, "", ""},
			{corev1.ContainersReady, T, "", ""},
			{corev1.PodScheduled, T, "", ""},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Generate(Input{Pod: sidecarPod(), Runtime: tc.runtime, Startup: tc.startup, Readiness: tc.readiness, Now: now})
			if diff := cmp.Diff(tc.want, views(got.Conditions)); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSidecarStatus(t *testing.T) {
	p := withInit(withPolicy(staticPod("app"), corev1.RestartPolicyNever), "side")
	p.Spec.InitContainers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
	ready := sbs(readySandbox("10.1.1.1"))
	// The sidecar exited 0 and waits in CrashLoopBackOff: it is restarted
	// whatever the pod's policy, so the waiting state shows.
	got := Generate(Input{Pod: p, Runtime: rt(ready, running("app", "c1", 0), exited("side", "s2", 0, "Completed", 3), exited("side", "s1", 1, "Error", 2)),
		Failures: map[string]runtimestate.StartFailure{"side": {Reason: "CrashLoopBackOff", Message: "back-off 40s"}}, Now: now})
	s := got.InitContainerStatuses[0]
	if s.State.Waiting == nil || s.State.Waiting.Reason != "CrashLoopBackOff" || s.RestartCount != 3 ||
		s.LastTerminationState.Terminated == nil || s.LastTerminationState.Terminated.ExitCode != 0 || s.Ready || s.Started == nil || *s.Started {
		t.Errorf("sidecar status = %+v", s)
	}
	got = Generate(Input{Pod: p, Runtime: rt(ready, running("app", "c1", 0), running("side", "s1", 1)), Readiness: map[string]bool{"side": true}, Now: now})
	s = got.InitContainerStatuses[0]
	if s.State.Running == nil || !s.Ready || s.Started == nil || !*s.Started || s.RestartCount != 1 {
		t.Errorf("running sidecar status = %+v", s)
	}
	if got.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running", got.Phase)
	}
	// The main container succeeded and the sidecar was stopped: Succeeded.
	got = Generate(Input{Pod: p, Runtime: rt(ready, exited("app", "c1", 0, "Completed", 0), exited("side", "s1", 137, "Error", 0)), Now: now})
	if got.Phase != corev1.PodSucceeded {
		t.Errorf("phase with the main container done and the sidecar stopped = %s, want Succeeded", got.Phase)
	}
}

func TestNeedsReadinessReconcile(t *testing.T) {
	gated := func(conds ...corev1.PodCondition) *corev1.Pod {
		p := staticPod("app")
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
		p.Status.Conditions = conds
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		p.Status.Phase = corev1.PodRunning
		return p
	}
	gateTrue := corev1.PodCondition{Type: "example.com/lb", Status: corev1.ConditionTrue}
	notReady := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: ReasonReadinessGatesNotReady,
		Message: `corresponding condition of pod readiness gate "example.com/lb" does not exist.`}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"no gates", staticPod("app"), false},
		{"no Ready condition yet", gated(gateTrue), false},
		{"gate turned True, Ready still False", gated(gateTrue, notReady), true},
		{"gate still missing, Ready False with its message", gated(notReady), false},
		{"gate True and Ready True", gated(gateTrue, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsReadinessReconcile(tc.pod); got != tc.want {
				t.Errorf("NeedsReadinessReconcile = %v, want %v", got, tc.want)
			}
		})
	}
}
