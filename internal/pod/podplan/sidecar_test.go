package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// sidecarPod has init containers proxy (sidecar), setup (ordinary) and
// agent (sidecar, with a startup probe), and one regular container web.
func sidecarPod(policy corev1.RestartPolicy) *corev1.Pod {
	pod := newPod(policy, []string{"proxy", "setup", "agent"}, []string{"web"})
	always := corev1.ContainerRestartPolicyAlways
	pod.Spec.InitContainers[0].RestartPolicy = &always
	pod.Spec.InitContainers[2].RestartPolicy = &always
	pod.Spec.InitContainers[2].StartupProbe = &corev1.Probe{}
	return pod
}

func TestComputeSidecars(t *testing.T) {
	now := at(time.Hour)
	pod := sidecarPod(corev1.RestartPolicyAlways)
	run := func(name string) runtimestate.Container { return running(pod, name, name+"-1", "sb-0") }
	exit := func(name string, code int32) runtimestate.Container {
		return exited(pod, name, name+"-1", "sb-0", code, now.Add(-time.Minute))
	}
	started := func(in *Inputs, ids ...string) {
		in.Probes.Started = map[string]bool{}
		for _, id := range ids {
			in.Probes.Started[id] = true
		}
	}
	restartEntry := func(name string) map[string]BackoffEntry {
		return map[string]BackoffEntry{name: entry(10*time.Second, now, hashOf(pod, name))}
	}
	tests := []struct {
		name       string
		policy     corev1.RestartPolicy
		containers []runtimestate.Container
		probes     func(in *Inputs)
		want       Actions
	}{
		{
			name: "nothing yet: start the first sidecar",
			want: Actions{SandboxID: "sb-0", InitContainers: []int{0}},
		},
		{
			name:       "first sidecar runs (no startup probe): start the next init container",
			containers: []runtimestate.Container{run("proxy")},
			want:       Actions{SandboxID: "sb-0", InitContainers: []int{1}},
		},
		{
			name:       "ordinary init container runs beside the sidecar: wait",
			containers: []runtimestate.Container{run("setup"), run("proxy")},
			want:       Actions{},
		},
		{
			name:       "sidecar exits during initialization: restart it while the init container runs",
			containers: []runtimestate.Container{run("setup"), exit("proxy", 1)},
			want:       Actions{SandboxID: "sb-0", InitContainers: []int{0}, Backoff: restartEntry("proxy")},
		},
		{
			name:       "setup done: start the second sidecar",
			containers: []runtimestate.Container{exit("setup", 0), run("proxy")},
			want:       Actions{SandboxID: "sb-0", InitContainers: []int{2}},
		},
		{
			name:       "last sidecar running but its startup probe has not passed: wait",
			containers: []runtimestate.Container{run("agent"), exit("setup", 0), run("proxy")},
			want:       Actions{},
		},
		{
			name:       "last sidecar started: the regular containers start",
			containers: []runtimestate.Container{run("agent"), exit("setup", 0), run("proxy")},
			probes:     func(in *Inputs) { started(in, "agent-1") },
			want:       Actions{SandboxID: "sb-0", StartContainers: []int{0}},
		},
		{
			name:       "sidecar failed its startup probe: kill and restart it",
			containers: []runtimestate.Container{run("agent"), exit("setup", 0), run("proxy")},
			probes:     func(in *Inputs) { in.Probes.StartupFailed = map[string]bool{"agent-1": true} },
			want: Actions{
				SandboxID: "sb-0", InitContainers: []int{2},
				KillContainers: map[ContainerRef]KillReason{{ID: "agent-1", Name: "agent"}: {
					Reason: KillReasonStartupProbe, Message: "Init container agent failed startup probe",
				}},
			},
		},
		{
			name:       "initialized, steady: nothing to do",
			containers: []runtimestate.Container{run("web"), run("agent"), exit("setup", 0), run("proxy")},
			probes:     func(in *Inputs) { started(in, "agent-1") },
			want:       Actions{},
		},
		{
			name:       "sidecar exits after initialization: restart it, keep the rest",
			containers: []runtimestate.Container{run("web"), exit("agent", 2), exit("setup", 0), run("proxy")},
			want:       Actions{SandboxID: "sb-0", InitContainers: []int{2}, Backoff: restartEntry("agent")},
		},
		{
			name:       "sidecar exited 0 under Never is still restarted",
			policy:     corev1.RestartPolicyNever,
			containers: []runtimestate.Container{run("web"), run("agent"), exit("setup", 0), exit("proxy", 0)},
			probes:     func(in *Inputs) { started(in, "agent-1") },
			want:       Actions{SandboxID: "sb-0", InitContainers: []int{0}, Backoff: restartEntry("proxy")},
		},
		{
			name:       "initialized, removed sidecar: start it again",
			containers: []runtimestate.Container{run("web"), run("agent")},
			probes:     func(in *Inputs) { started(in, "agent-1") },
			want:       Actions{SandboxID: "sb-0", InitContainers: []int{0}},
		},
		{
			name:       "liveness failure kills a sidecar too",
			containers: []runtimestate.Container{run("web"), run("agent"), exit("setup", 0), run("proxy")},
			probes: func(in *Inputs) {
				started(in, "agent-1")
				in.Probes.LivenessFailed = map[string]bool{"proxy-1": true}
			},
			want: Actions{
				SandboxID: "sb-0", InitContainers: []int{0},
				KillContainers: map[ContainerRef]KillReason{{ID: "proxy-1", Name: "proxy"}: {
					Reason: KillReasonLivenessProbe, Message: "Init container proxy failed liveness probe",
				}},
			},
		},
		{
			name:       "regular containers done under Never: kill the pod, sidecars not restarted",
			policy:     corev1.RestartPolicyNever,
			containers: []runtimestate.Container{exit("web", 0), exit("agent", 137), exit("setup", 0), run("proxy")},
			want:       Actions{KillPod: true},
		},
		{
			name:       "regular containers done under OnFailure: kill the pod",
			policy:     corev1.RestartPolicyOnFailure,
			containers: []runtimestate.Container{exit("web", 0), run("agent"), exit("setup", 0), run("proxy")},
			probes:     func(in *Inputs) { started(in, "agent-1") },
			want:       Actions{KillPod: true},
		},
		{
			name:       "ordinary init container fails under Never: kill the pod",
			policy:     corev1.RestartPolicyNever,
			containers: []runtimestate.Container{exit("setup", 1), run("proxy")},
			want:       Actions{KillPod: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := sidecarPod(corev1.RestartPolicyAlways)
			if tt.policy != "" {
				p.Spec.RestartPolicy = tt.policy
			}
			in := Inputs{Pod: p, Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)), tt.containers...), Now: now}
			if tt.probes != nil {
				tt.probes(&in)
			}
			if diff := cmp.Diff(tt.want, Compute(in)); diff != "" {
				t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
