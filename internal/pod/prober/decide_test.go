package prober

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func running(id string, startedAt time.Time) *corev1.ContainerStatus {
	return &corev1.ContainerStatus{Name: "c", ContainerID: "containerd://" + id,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}}}
}

func TestDecide(t *testing.T) {
	spec := &corev1.Probe{InitialDelaySeconds: 5}
	base := func() (ProbeType, instance, observation) {
		return Liveness, instance{ContainerID: "a"}, observation{
			HasStatus: true, Phase: corev1.PodRunning, Container: running("a", t0), Started: true, Now: t0.Add(10 * time.Second),
		}
	}
	exited := &corev1.ContainerStatus{Name: "c", ContainerID: "containerd://a",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}
	tests := []struct {
		name   string
		mutate func(t *ProbeType, st *instance, o *observation)
		want   tick
	}{
		{"running and started: liveness probes", nil, tick{Instance: instance{ContainerID: "a"}, Probe: true}},
		{"no pod status: wait", func(_ *ProbeType, _ *instance, o *observation) { o.HasStatus = false },
			tick{Instance: instance{ContainerID: "a"}}},
		{"pod succeeded: stop", func(_ *ProbeType, _ *instance, o *observation) { o.Phase = corev1.PodSucceeded },
			tick{Instance: instance{ContainerID: "a"}, Stop: true}},
		{"pod failed: stop", func(_ *ProbeType, _ *instance, o *observation) { o.Phase = corev1.PodFailed },
			tick{Instance: instance{ContainerID: "a"}, Stop: true}},
		{"no container yet: wait", func(_ *ProbeType, _ *instance, o *observation) { o.Container = nil },
			tick{Instance: instance{ContainerID: "a"}}},
		{"new instance: reset to the initial liveness result and probe",
			func(_ *ProbeType, st *instance, _ *observation) {
				*st = instance{ContainerID: "old", OnHold: true, Last: Failure, Run: 2}
			},
			tick{Instance: instance{ContainerID: "a"}, Set: Success, SetResult: true, Probe: true}},
		{"new instance: readiness starts failed",
			func(pt *ProbeType, st *instance, _ *observation) { *pt = Readiness; st.ContainerID = "" },
			tick{Instance: instance{ContainerID: "a"}, Set: Failure, SetResult: true, Probe: true}},
		{"new instance: startup starts unknown",
			func(pt *ProbeType, st *instance, o *observation) {
				*pt = Startup
				st.ContainerID = ""
				o.Started = false
			},
			tick{Instance: instance{ContainerID: "a"}, Set: Unknown, SetResult: true, Probe: true}},
		{"on hold: nothing until a new instance",
			func(_ *ProbeType, st *instance, _ *observation) { st.OnHold = true },
			tick{Instance: instance{ContainerID: "a", OnHold: true}}},
		{"not running: failure, keep going",
			func(_ *ProbeType, _ *instance, o *observation) { o.Container = exited },
			tick{Instance: instance{ContainerID: "a"}, Set: Failure, SetResult: true}},
		{"terminated for good: failure and stop",
			func(_ *ProbeType, _ *instance, o *observation) { o.Container = exited; o.NoRestart = true },
			tick{Instance: instance{ContainerID: "a"}, Set: Failure, SetResult: true, Stop: true}},
		{"deleting: liveness records success and stops",
			func(_ *ProbeType, _ *instance, o *observation) { o.Deleting = true },
			tick{Instance: instance{ContainerID: "a"}, Set: Success, SetResult: true, Stop: true}},
		{"deleting: readiness goes on",
			func(pt *ProbeType, _ *instance, o *observation) { *pt = Readiness; o.Deleting = true },
			tick{Instance: instance{ContainerID: "a"}, Probe: true}},
		{"within the initial delay: no probe",
			func(_ *ProbeType, _ *instance, o *observation) { o.Now = t0.Add(4 * time.Second) },
			tick{Instance: instance{ContainerID: "a"}}},
		{"initial delay just passed: probe",
			func(_ *ProbeType, _ *instance, o *observation) { o.Now = t0.Add(5 * time.Second) },
			tick{Instance: instance{ContainerID: "a"}, Probe: true}},
		{"not started: liveness waits",
			func(_ *ProbeType, _ *instance, o *observation) { o.Started = false },
			tick{Instance: instance{ContainerID: "a"}}},
		{"not started: readiness waits",
			func(pt *ProbeType, _ *instance, o *observation) { *pt = Readiness; o.Started = false },
			tick{Instance: instance{ContainerID: "a"}}},
		{"not started: startup probes",
			func(pt *ProbeType, _ *instance, o *observation) { *pt = Startup; o.Started = false },
			tick{Instance: instance{ContainerID: "a"}, Probe: true}},
		{"started: startup probing ends for this instance",
			func(pt *ProbeType, _ *instance, _ *observation) { *pt = Startup },
			tick{Instance: instance{ContainerID: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt, st, obs := base()
			if tt.mutate != nil {
				tt.mutate(&pt, &st, &obs)
			}
			if diff := cmp.Diff(tt.want, decide(pt, spec, st, obs)); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecord(t *testing.T) {
	type step struct {
		r       Result
		want    Result
		publish bool
	}
	tests := []struct {
		name  string
		typ   ProbeType
		spec  corev1.Probe
		steps []step
		end   instance
	}{
		{"default thresholds: success at once, failure after three", Readiness, corev1.Probe{},
			[]step{{Success, Success, true}, {Failure, 0, false}, {Failure, 0, false}, {Failure, Failure, true}, {Failure, Failure, true}},
			instance{Last: Failure, Run: 4}},
		{"success threshold 2", Readiness, corev1.Probe{SuccessThreshold: 2, FailureThreshold: 1},
			[]step{{Failure, Failure, true}, {Success, 0, false}, {Failure, Failure, true}, {Success, 0, false}, {Success, Success, true}},
			instance{Last: Success, Run: 2}},
		{"liveness failure puts the instance on hold", Liveness, corev1.Probe{FailureThreshold: 2},
			[]step{{Failure, 0, false}, {Failure, Failure, true}},
			instance{OnHold: true, Last: Failure}},
		{"startup failure puts the instance on hold", Startup, corev1.Probe{FailureThreshold: 1},
			[]step{{Failure, Failure, true}},
			instance{OnHold: true, Last: Failure}},
		{"a success between failures restarts the count", Liveness, corev1.Probe{FailureThreshold: 2},
			[]step{{Failure, 0, false}, {Success, Success, true}, {Failure, 0, false}},
			instance{Last: Failure, Run: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st instance
			for i, s := range tt.steps {
				var got Result
				var ok bool
				st, got, ok = record(tt.typ, &tt.spec, st, s.r)
				if ok != s.publish || got != s.want {
					t.Errorf("step %d (%v): got %v, %v; want %v, %v", i, s.r, got, ok, s.want, s.publish)
				}
			}
			if diff := cmp.Diff(tt.end, st); diff != "" {
				t.Errorf("final state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuntimeID(t *testing.T) {
	for in, want := range map[string]string{"containerd://abc": "abc", "abc": "abc", "docker://x": "x"} {
		if got := runtimeID(in); got != want {
			t.Errorf("runtimeID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNoRestart(t *testing.T) {
	never, always := corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyAlways
	terminated := func(code int32) *corev1.ContainerStatus {
		return &corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	allOn42 := []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	restarting := corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.AllContainersRestarting, Status: corev1.ConditionTrue}}}
	tests := []struct {
		name   string
		pod    corev1.RestartPolicy
		spec   corev1.Container
		status corev1.PodStatus
		c      *corev1.ContainerStatus
		want   bool
	}{
		{name: "no status yet", pod: corev1.RestartPolicyNever},
		{name: "running", pod: corev1.RestartPolicyNever, c: &corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		{name: "pod Never, exited", pod: corev1.RestartPolicyNever, c: terminated(1), want: true},
		{name: "pod Always, exited", pod: corev1.RestartPolicyAlways, c: terminated(1)},
		{name: "pod OnFailure, exited 0", pod: corev1.RestartPolicyOnFailure, c: terminated(0), want: true},
		{name: "pod Never, container Always", pod: corev1.RestartPolicyNever, spec: corev1.Container{RestartPolicy: &always}, c: terminated(0)},
		{name: "pod Never, RestartAllContainers rule matched", pod: corev1.RestartPolicyNever,
			spec: corev1.Container{RestartPolicy: &never, RestartPolicyRules: allOn42}, c: terminated(42)},
		{name: "pod Never, a restart of all containers under way", pod: corev1.RestartPolicyNever, status: restarting, c: terminated(137)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tc.pod}}
			if got := noRestart(pod, &tc.spec, &tc.status, tc.c); got != tc.want {
				t.Errorf("noRestart = %v, want %v", got, tc.want)
			}
		})
	}
}
