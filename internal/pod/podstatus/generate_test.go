package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestGenerateRunningPod(t *testing.T) {
	in := Input{
		Pod:     staticPod("app"),
		Runtime: rt(sbs(readySandbox("10.244.0.5")), running("app", "c1", 0)),
		HostIPs: []string{"10.0.0.1"},
		Now:     now,
	}
	want := corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: mt(now)},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: mt(now)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: mt(now)},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: mt(now)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: mt(now)},
		},
		HostIP:    "10.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "10.0.0.1"}},
		PodIP:     "10.244.0.5",
		PodIPs:    []corev1.PodIP{{IP: "10.244.0.5"}},
		StartTime: ptr(mt(now)),
		ContainerStatuses: []corev1.ContainerStatus{{
			Name:        "app",
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(t0.Add(60e9))}},
			Ready:       true,
			Image:       "app:1",
			ImageID:     "sha256:app",
			ContainerID: "containerd://c1",
			Started:     ptr(true),
			Resources:   &corev1.ResourceRequirements{},
		}},
		QOSClass:           corev1.PodQOSBestEffort,
		AllocatedResources: corev1.ResourceList{},
		Resources:          &corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}},
	}
	if diff := cmp.Diff(want, Generate(in)); diff != "" {
		t.Errorf("Generate() mismatch (-want +got):\n%s", diff)
	}
}

func TestGeneratePhase(t *testing.T) {
	ready := sbs(readySandbox("10.244.0.5"))
	nonStatic := func(p *corev1.Pod) *corev1.Pod { p.Annotations = nil; return p }
	tests := []struct {
		name     string
		pod      *corev1.Pod
		runtime  *runtimestate.Pod
		failures map[string]runtimestate.StartFailure
		previous *corev1.PodStatus
		terminal bool
		want     corev1.PodPhase
	}{
		{"nothing in the runtime", staticPod("app"), nil, nil, nil, false, corev1.PodPending},
		{"sandbox only", staticPod("app"), rt(ready), nil, nil, false, corev1.PodPending},
		{"created, not started", staticPod("app"), rt(ready, withState(running("app", "c1", 0), runtimestate.ContainerCreated)), nil, nil, false, corev1.PodPending},
		{"running", staticPod("app"), rt(ready, running("app", "c1", 0)), nil, nil, false, corev1.PodRunning},
		{"one running, one not yet", staticPod("a", "b"), rt(ready, running("a", "c1", 0)), nil, nil, false, corev1.PodPending},
		{"one running, one done, Never", withPolicy(staticPod("a", "b"), corev1.RestartPolicyNever),
			rt(ready, running("a", "c1", 0), exited("b", "c2", 0, "Completed", 0)), nil, nil, false, corev1.PodRunning},
		{"exited 0, Always: restarting", staticPod("app"), rt(ready, exited("app", "c1", 0, "Completed", 0)), nil, nil, false, corev1.PodRunning},
		{"exited 0, OnFailure", withPolicy(staticPod("app"), corev1.RestartPolicyOnFailure), rt(ready, exited("app", "c1", 0, "Completed", 0)), nil, nil, false, corev1.PodSucceeded},
		{"exited 1, OnFailure: restarting", withPolicy(staticPod("app"), corev1.RestartPolicyOnFailure), rt(ready, exited("app", "c1", 1, "Error", 0)), nil, nil, false, corev1.PodRunning},
		{"exited 0, Never", withPolicy(staticPod("app"), corev1.RestartPolicyNever), rt(ready, exited("app", "c1", 0, "Completed", 0)), nil, nil, false, corev1.PodSucceeded},
		{"exited 1, Never", withPolicy(staticPod("app"), corev1.RestartPolicyNever), rt(ready, exited("app", "c1", 1, "Error", 0)), nil, nil, false, corev1.PodFailed},
		{"mixed exits, Never", withPolicy(staticPod("a", "b"), corev1.RestartPolicyNever),
			rt(ready, exited("a", "c1", 0, "Completed", 0), exited("b", "c2", 2, "Error", 0)), nil, nil, false, corev1.PodFailed},
		{"crash loop, Always", staticPod("app"), rt(ready, exited("app", "c1", 1, "Error", 3)),
			map[string]runtimestate.StartFailure{"app": {Reason: "CrashLoopBackOff"}}, nil, false, corev1.PodRunning},
		{"terminal, Always, API pod", nonStatic(staticPod("app")), rt(ready, exited("app", "c1", 137, "Error", 0)), nil, nil, true, corev1.PodFailed},
		{"terminal, Always, API pod, exit 0", nonStatic(staticPod("app")), rt(ready, exited("app", "c1", 0, "Completed", 0)), nil, nil, true, corev1.PodSucceeded},
		{"terminal, Always, static pod", staticPod("app"), rt(ready, exited("app", "c1", 137, "Error", 0)), nil, nil, true, corev1.PodRunning},
		{"container restart policy Never overrides pod Always", func() *corev1.Pod {
			p := staticPod("app")
			p.Spec.Containers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyNever)
			return p
		}(), rt(ready, exited("app", "c1", 0, "Completed", 0)), nil, nil, false, corev1.PodSucceeded},
		{"restart rule restarts on exit 42", func() *corev1.Pod {
			p := withPolicy(staticPod("app"), corev1.RestartPolicyNever)
			p.Spec.Containers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyNever)
			p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{
				Action:    corev1.ContainerRestartRuleActionRestart,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
			}}
			return p
		}(), rt(ready, exited("app", "c1", 42, "Error", 0)), nil, nil, false, corev1.PodRunning},

		// Init containers.
		{"init running", withInit(staticPod("app"), "init"), rt(ready, running("init", "i1", 0)), nil, nil, false, corev1.PodPending},
		{"init done, app not started", withInit(staticPod("app"), "init"), rt(ready, exited("init", "i1", 0, "Completed", 0)), nil, nil, false, corev1.PodPending},
		{"init done, app running", withInit(staticPod("app"), "init"), rt(ready, running("app", "c1", 0), exited("init", "i1", 0, "Completed", 0)), nil, nil, false, corev1.PodRunning},
		{"init failed, Never", withInit(withPolicy(staticPod("app"), corev1.RestartPolicyNever), "init"), rt(ready, exited("init", "i1", 1, "Error", 0)), nil, nil, false, corev1.PodFailed},
		{"init failed, Always: retried", withInit(staticPod("app"), "init"), rt(ready, exited("init", "i1", 1, "Error", 0)), nil, nil, false, corev1.PodPending},
		{"second init pending", withInit(staticPod("app"), "i1", "i2"), rt(ready, exited("i1", "x1", 0, "Completed", 0)), nil, nil, false, corev1.PodPending},
		{"sidecar running, app running", func() *corev1.Pod {
			p := withInit(staticPod("app"), "side")
			p.Spec.InitContainers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
			return p
		}(), rt(ready, running("app", "c1", 0), running("side", "s1", 0)), nil, nil, false, corev1.PodRunning},
		{"sidecar running, app exited 0, Never", func() *corev1.Pod {
			p := withInit(withPolicy(staticPod("app"), corev1.RestartPolicyNever), "side")
			p.Spec.InitContainers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
			return p
		}(), rt(ready, exited("app", "c1", 0, "Completed", 0), running("side", "s1", 0)), nil, nil, false, corev1.PodRunning},

		// Never back from a terminal phase.
		{"previous Succeeded stays", withPolicy(staticPod("app"), corev1.RestartPolicyNever), nil, nil,
			&corev1.PodStatus{Phase: corev1.PodSucceeded}, false, corev1.PodSucceeded},
		{"previous Failed stays", staticPod("app"), rt(ready, running("app", "c1", 0)), nil,
			&corev1.PodStatus{Phase: corev1.PodFailed}, false, corev1.PodFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Generate(Input{Pod: tc.pod, Runtime: tc.runtime, Failures: tc.failures, Previous: tc.previous, Terminal: tc.terminal, Now: now})
			if got.Phase != tc.want {
				t.Errorf("phase = %s, want %s\nstatuses: %+v", got.Phase, tc.want, got.ContainerStatuses)
			}
		})
	}
}

func TestGeneratePreservesPhaseReason(t *testing.T) {
	prev := &corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "out of memory"}
	got := Generate(Input{Pod: staticPod("app"), Previous: prev, Now: now})
	if got.Phase != corev1.PodFailed || got.Reason != "Evicted" || got.Message != "out of memory" {
		t.Errorf("got phase %s reason %q message %q", got.Phase, got.Reason, got.Message)
	}
	got = Generate(Input{Pod: staticPod("app"), Runtime: rt(sbs(readySandbox("10.1.1.1")), running("app", "c1", 0)),
		Previous: &corev1.PodStatus{Phase: corev1.PodPending, Reason: "Stale"}, Now: now})
	if got.Phase != corev1.PodRunning || got.Reason != "" {
		t.Errorf("a new phase drops the old reason: got phase %s reason %q", got.Phase, got.Reason)
	}
}

func TestGenerateStartTimeAndQOS(t *testing.T) {
	prevStart := mt(t0)
	got := Generate(Input{Pod: staticPod("app"), Previous: &corev1.PodStatus{StartTime: &prevStart, QOSClass: corev1.PodQOSGuaranteed}, Now: now})
	if !got.StartTime.Equal(&prevStart) || got.QOSClass != corev1.PodQOSGuaranteed {
		t.Errorf("start time %v, qos %s; want preserved %v, Guaranteed", got.StartTime, got.QOSClass, prevStart)
	}
	got = Generate(Input{Pod: staticPod("app"), Now: now})
	if got.StartTime == nil || !got.StartTime.Time.Equal(now) || got.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("start time %v, qos %s; want now, BestEffort", got.StartTime, got.QOSClass)
	}
}

func TestGenerateDoesNotModifyInput(t *testing.T) {
	pod := withInit(staticPod("app"), "init")
	runtime := rt(sbs(readySandbox("10.1.1.1")), running("app", "c1", 0), exited("init", "i1", 0, "", 0))
	prev := Generate(Input{Pod: pod, Runtime: runtime, Now: t0})
	podCopy, rtCopy, prevCopy := pod.DeepCopy(), *runtime, prev.DeepCopy()
	got := Generate(Input{Pod: pod, Runtime: runtime, Previous: &prev, Now: now})
	got.ContainerStatuses[0].State.Running.StartedAt = mt(t0.Add(99e9))
	got.Conditions[0].Reason = "mutated"
	if diff := cmp.Diff(podCopy, pod); diff != "" {
		t.Errorf("pod modified:\n%s", diff)
	}
	if diff := cmp.Diff(rtCopy, *runtime); diff != "" {
		t.Errorf("runtime modified:\n%s", diff)
	}
	if diff := cmp.Diff(prevCopy, &prev); diff != "" {
		t.Errorf("previous modified:\n%s", diff)
	}
}

func BenchmarkGenerate(b *testing.B) {
	pod := withInit(staticPod("a", "b", "c"), "init")
	runtime := rt(sbs(readySandbox("10.244.0.5", "fd00::5")),
		running("a", "c1", 2), running("b", "c2", 0), exited("c", "c3", 1, "Error", 4), exited("c", "c0", 1, "Error", 3),
		exited("init", "i1", 0, "Completed", 0))
	in := Input{Pod: pod, Runtime: runtime, HostIPs: []string{"10.0.0.1", "fd00::1"}, Now: now,
		Failures: map[string]runtimestate.StartFailure{"c": {Reason: "CrashLoopBackOff", Message: "back-off 40s"}}}
	prev := Generate(in)
	in.Previous = &prev
	b.ReportAllocs()
	for b.Loop() {
		_ = Generate(in)
	}
}

// TestGenerateResourceHealth: the device manager's health of a
// container's devices becomes its allocatedResourcesStatus; other
// containers have none.
func TestGenerateResourceHealth(t *testing.T) {
	health := []corev1.ResourceStatus{{Name: "example.com/dev", Resources: []corev1.ResourceHealth{
		{ResourceID: "a", Health: corev1.ResourceHealthStatusHealthy},
		{ResourceID: "b", Health: corev1.ResourceHealthStatusUnhealthy},
	}}}
	in := Input{
		Pod:            staticPod("app", "side"),
		Runtime:        rt(sbs(readySandbox("10.244.0.5")), running("app", "c1", 0), running("side", "c2", 0)),
		ResourceHealth: map[string][]corev1.ResourceStatus{"app": health},
		Now:            now,
	}
	s := Generate(in)
	got := map[string][]corev1.ResourceStatus{}
	for _, c := range s.ContainerStatuses {
		got[c.Name] = c.AllocatedResourcesStatus
	}
	if d := cmp.Diff(map[string][]corev1.ResourceStatus{"app": health, "side": nil}, got); d != "" {
		t.Errorf("allocatedResourcesStatus (-want +got):\n%s", d)
	}
	in.ResourceHealth["app"][0].Resources[0].Health = corev1.ResourceHealthStatusUnknown
	if s.ContainerStatuses[0].AllocatedResourcesStatus[0].Resources[0].Health != corev1.ResourceHealthStatusHealthy {
		t.Error("the status shares memory with the input")
	}
}
