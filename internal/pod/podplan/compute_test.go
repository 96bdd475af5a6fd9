package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// baseInputs is a steady pod: Always, two running containers in one ready
// sandbox. Every row of TestCompute mutates a copy of it.
func baseInputs() Inputs {
	pod := newPod(corev1.RestartPolicyAlways, nil, []string{"web", "log"})
	return Inputs{
		Pod: pod,
		Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)),
			running(pod, "web", "web-1", "sb-0"),
			running(pod, "log", "log-1", "sb-0"),
		),
		Now: at(time.Hour),
	}
}

// withInit switches the base pod to one with two init containers and
// nothing in the runtime but the ready sandbox.
func withInit(in *Inputs, policy corev1.RestartPolicy, containers ...runtimestate.Container) {
	in.Pod = newPod(policy, []string{"setup", "migrate"}, []string{"web", "log"})
	in.Runtime = rtPod(sandboxes(readySandbox("sb-0", 0)), containers...)
}

func entry(delay time.Duration, last time.Time, hash uint64) BackoffEntry {
	return BackoffEntry{Delay: delay, LastUpdate: last, Hash: hash}
}

func TestCompute(t *testing.T) {
	now := at(time.Hour)
	p := baseInputs().Pod // for hashes of web and log
	tests := []struct {
		name   string
		mutate func(in *Inputs)
		want   Actions
	}{
		{
			name:   "steady pod: nothing to do",
			mutate: func(in *Inputs) {},
			want:   Actions{Attempt: 0},
		},
		{
			name:   "fresh pod: create sandbox, start every container",
			mutate: func(in *Inputs) { in.Runtime = nil },
			want:   Actions{CreateSandbox: true, StartContainers: []int{0, 1}},
		},
		{
			name:   "fresh pod with init containers: create sandbox, first init container",
			mutate: func(in *Inputs) { withInit(in, corev1.RestartPolicyAlways); in.Runtime = &runtimestate.Pod{} },
			want:   Actions{CreateSandbox: true, InitContainers: []int{0}},
		},
		{
			name: "sandbox died: kill pod, re-create with attempt+1",
			mutate: func(in *Inputs) {
				in.Runtime.Sandboxes = sandboxes(deadSandbox("sb-3", 3))
			},
			want: Actions{KillPod: true, CreateSandbox: true, Attempt: 4, StartContainers: []int{0, 1}},
		},
		{
			name: "sandbox died with exited containers: restarts pass the backoff gate",
			mutate: func(in *Inputs) {
				in.Runtime = rtPod(sandboxes(deadSandbox("sb-0", 0)),
					exited(in.Pod, "web", "web-1", "sb-0", 137, now.Add(-time.Second)),
					exited(in.Pod, "log", "log-1", "sb-0", 137, now.Add(-time.Second)))
			},
			want: Actions{
				KillPod: true, CreateSandbox: true, Attempt: 1, StartContainers: []int{0, 1},
				Backoff: map[string]BackoffEntry{
					"web": entry(10*time.Second, now, hashOf(p, "web")),
					"log": entry(10*time.Second, now, hashOf(p, "log")),
				},
			},
		},
		{
			name: "two ready sandboxes: re-create",
			mutate: func(in *Inputs) {
				in.Runtime.Sandboxes = sandboxes(readySandbox("sb-1", 1), readySandbox("sb-0", 0))
			},
			want: Actions{KillPod: true, CreateSandbox: true, Attempt: 2, StartContainers: []int{0, 1}},
		},
		{
			name:   "hostNetwork changed: re-create",
			mutate: func(in *Inputs) { in.Pod.Spec.HostNetwork = true },
			want:   Actions{KillPod: true, CreateSandbox: true, Attempt: 1, StartContainers: []int{0, 1}},
		},
		{
			name: "host-network sandbox without IP is fine",
			mutate: func(in *Inputs) {
				in.Pod.Spec.HostNetwork = true
				in.Runtime.Sandboxes[0].HostNetwork = true
				in.Runtime.Sandboxes[0].IPs = nil
			},
			want: Actions{},
		},
		{
			name:   "pod-network sandbox without IP: re-create",
			mutate: func(in *Inputs) { in.Runtime.Sandboxes[0].IPs = nil },
			want:   Actions{KillPod: true, CreateSandbox: true, Attempt: 1, StartContainers: []int{0, 1}},
		},
		{
			name: "Never pod finished: no new sandbox, nothing started",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				in.Runtime = rtPod(sandboxes(deadSandbox("sb-0", 0)),
					exited(in.Pod, "web", "web-1", "sb-0", 0, now), exited(in.Pod, "log", "log-1", "sb-0", 1, now))
			},
			want: Actions{KillPod: true, Attempt: 1},
		},
		{
			name: "Never pod whose sandbox died before any container: re-create",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				in.Runtime = rtPod(sandboxes(deadSandbox("sb-0", 0)))
			},
			want: Actions{KillPod: true, CreateSandbox: true, Attempt: 1, StartContainers: []int{0, 1}},
		},
		{
			name: "OnFailure re-create skips containers that succeeded",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				in.Runtime = rtPod(sandboxes(deadSandbox("sb-0", 0)),
					exited(in.Pod, "web", "web-1", "sb-0", 0, now.Add(-time.Minute)),
					running(in.Pod, "log", "log-1", "sb-0"))
			},
			want: Actions{KillPod: true, CreateSandbox: true, Attempt: 1, StartContainers: []int{1}},
		},
		{
			name: "OnFailure re-create with every container succeeded: no new sandbox",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				in.Runtime = rtPod(sandboxes(deadSandbox("sb-0", 0)),
					exited(in.Pod, "web", "web-1", "sb-0", 0, now), exited(in.Pod, "log", "log-1", "sb-0", 0, now))
			},
			want: Actions{KillPod: true, Attempt: 1},
		},
		{
			name: "re-created pod with init containers starts over at the first",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways)
				in.Runtime.Sandboxes = sandboxes(deadSandbox("sb-0", 0))
			},
			want: Actions{KillPod: true, CreateSandbox: true, Attempt: 1, InitContainers: []int{0}},
		},
		{
			name: "init container running: wait",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways, running(in.Pod, "setup", "setup-1", "sb-0"))
			},
			want: Actions{},
		},
		{
			name: "init container created but never started: start that one",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways)
				in.Runtime.Containers = append(in.Runtime.Containers, inState(in.Pod, "setup", "setup-1", "sb-0", runtimestate.ContainerCreated))
			},
			want: Actions{SandboxID: "sb-0", InitContainers: []int{0}, StartCreated: map[string]string{"setup": "setup-1"}},
		},
		{
			name: "init container created from another spec: start a new one",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways)
				c := inState(in.Pod, "setup", "setup-1", "sb-0", runtimestate.ContainerCreated)
				c.Hash++
				in.Runtime.Containers = append(in.Runtime.Containers, c)
			},
			want: Actions{SandboxID: "sb-0", InitContainers: []int{0}},
		},
		{
			name: "first init container done: start the second",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways, exited(in.Pod, "setup", "setup-1", "sb-0", 0, now))
			},
			want: Actions{SandboxID: "sb-0", InitContainers: []int{1}},
		},
		{
			name: "init container failed under Always: restart it",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways, exited(in.Pod, "setup", "setup-1", "sb-0", 1, now.Add(-time.Second)))
			},
			want: Actions{
				SandboxID: "sb-0", InitContainers: []int{0},
				Backoff: map[string]BackoffEntry{"setup": entry(10*time.Second, now, hashOf(newPod("", []string{"setup"}, nil), "setup"))},
			},
		},
		{
			name: "init container failed under OnFailure: restart it",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyOnFailure,
					exited(in.Pod, "migrate", "migrate-1", "sb-0", 2, now.Add(-time.Second)),
					exited(in.Pod, "setup", "setup-1", "sb-0", 0, now.Add(-time.Minute)))
			},
			want: Actions{
				SandboxID: "sb-0", InitContainers: []int{1},
				Backoff: map[string]BackoffEntry{"migrate": entry(10*time.Second, now, hashOf(newPod("", []string{"migrate"}, nil), "migrate"))},
			},
		},
		{
			name: "init container failed under Never: kill the pod",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyNever, exited(in.Pod, "setup", "setup-1", "sb-0", 1, now))
			},
			want: Actions{KillPod: true},
		},
		{
			name: "init container OOM-killed with exit 0 counts as failed",
			mutate: func(in *Inputs) {
				c := exited(in.Pod, "setup", "setup-1", "sb-0", 0, now)
				c.Reason = "OOMKilled"
				withInit(in, corev1.RestartPolicyNever, c)
			},
			want: Actions{KillPod: true},
		},
		{
			name: "init container in unknown state: kill it, start it again",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways, inState(in.Pod, "setup", "setup-1", "sb-0", runtimestate.ContainerUnknown))
			},
			want: Actions{
				SandboxID: "sb-0", InitContainers: []int{0},
				KillContainers: map[ContainerRef]KillReason{{ID: "setup-1", Name: "setup"}: {
					Reason: KillReasonUnknown, Message: `Init container is in "unknown" state, try killing it before restart`,
				}},
			},
		},
		{
			name: "init containers of a previous sandbox do not count",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways,
					exited(in.Pod, "migrate", "migrate-1", "sb-0", 0, now.Add(-time.Hour)),
					exited(in.Pod, "setup", "setup-1", "sb-0", 0, now.Add(-time.Hour)))
				in.Runtime.Sandboxes = sandboxes(readySandbox("sb-1", 1), deadSandbox("sb-0", 0))
			},
			// The old instance still counts as the previous one for backoff.
			want: Actions{
				SandboxID: "sb-1", Attempt: 1, InitContainers: []int{0},
				Backoff: map[string]BackoffEntry{"setup": entry(10*time.Second, now, hashOf(newPod("", []string{"setup"}, nil), "setup"))},
			},
		},
		{
			name: "all init containers done: start the regular containers",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways,
					exited(in.Pod, "migrate", "migrate-1", "sb-0", 0, now),
					exited(in.Pod, "setup", "setup-1", "sb-0", 0, now.Add(-time.Minute)))
			},
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0, 1}},
		},
		{
			name: "init containers removed after regular containers ran: initialization stays done",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways, running(in.Pod, "log", "log-1", "sb-0"))
			},
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}},
		},
		{
			name: "Always, exited 0: restart",
			mutate: func(in *Inputs) {
				in.Runtime.Containers[0] = exited(in.Pod, "web", "web-1", "sb-0", 0, now.Add(-time.Minute))
			},
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				Backoff: map[string]BackoffEntry{"web": entry(10*time.Second, now, hashOf(p, "web"))},
			},
		},
		{
			name: "Always, exited 1: restart",
			mutate: func(in *Inputs) {
				in.Runtime.Containers[0] = exited(in.Pod, "web", "web-1", "sb-0", 1, now.Add(-time.Minute))
			},
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				Backoff: map[string]BackoffEntry{"web": entry(10*time.Second, now, hashOf(p, "web"))},
			},
		},
		{
			name: "OnFailure, exited 0: leave it",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				in.Runtime.Containers[0] = exited(in.Pod, "web", "web-1", "sb-0", 0, now.Add(-time.Minute))
			},
			want: Actions{},
		},
		{
			name: "OnFailure, exited 1: restart",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				in.Runtime.Containers[0] = exited(in.Pod, "web", "web-1", "sb-0", 1, now.Add(-time.Minute))
			},
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				Backoff: map[string]BackoffEntry{"web": entry(10*time.Second, now, hashOf(p, "web"))},
			},
		},
		{
			name: "Never, exited 1: leave it",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				in.Runtime.Containers[0] = exited(in.Pod, "web", "web-1", "sb-0", 1, now.Add(-time.Minute))
			},
			want: Actions{},
		},
		{
			name: "container created but never started: start that one",
			mutate: func(in *Inputs) {
				in.Runtime.Containers[0] = inState(in.Pod, "web", "web-1", "sb-0", runtimestate.ContainerCreated)
			},
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}, StartCreated: map[string]string{"web": "web-1"}},
		},
		{
			name: "container created from another spec: start a new one",
			mutate: func(in *Inputs) {
				in.Runtime.Containers[0] = inState(in.Pod, "web", "web-1", "sb-0", runtimestate.ContainerCreated)
				in.Pod.Spec.Containers[0].Image = "nginx:1.28"
			},
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}},
		},
		{
			name: "container created in an older sandbox, the sandbox recreated: start a new one",
			mutate: func(in *Inputs) {
				in.Runtime.Sandboxes = sandboxes(deadSandbox("sb-0", 0))
				in.Runtime.Containers[0] = inState(in.Pod, "web", "web-1", "sb-0", runtimestate.ContainerCreated)
			},
			want: Actions{KillPod: true, CreateSandbox: true, Attempt: 1, StartContainers: []int{0, 1}},
		},
		{
			name: "container created, the pod being deleted: nothing started",
			mutate: func(in *Inputs) {
				in.Runtime.Containers[0] = inState(in.Pod, "web", "web-1", "sb-0", runtimestate.ContainerCreated)
				in.Pod.DeletionTimestamp = &metav1.Time{Time: now}
			},
			want: Actions{},
		},
		{
			name: "container in unknown state: kill it, start it again",
			mutate: func(in *Inputs) {
				in.Runtime.Containers[0] = inState(in.Pod, "web", "web-1", "sb-0", runtimestate.ContainerUnknown)
			},
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {
					Reason: KillReasonUnknown, Message: `Container is in "unknown" state, try killing it before restart`,
				}},
			},
		},
		{
			name:   "spec changed: kill and start again",
			mutate: func(in *Inputs) { in.Pod.Spec.Containers[0].Image = "nginx:1.28" },
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {
					Reason: KillReasonSpecChanged, Message: "Container web definition changed, will be restarted",
				}},
			},
		},
		{
			name: "spec changed under Never: still restarted",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				in.Pod.Spec.Containers[1].Args = []string{"-v"}
			},
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{1},
				KillContainers: map[ContainerRef]KillReason{{ID: "log-1", Name: "log"}: {
					Reason: KillReasonSpecChanged, Message: "Container log definition changed, will be restarted",
				}},
			},
		},
		{
			name:   "no recorded hash: kept",
			mutate: func(in *Inputs) { in.Runtime.Containers[0].Hash = 0 },
			want:   Actions{},
		},
		{
			name:   "liveness failed: kill and restart",
			mutate: func(in *Inputs) { in.Probes.LivenessFailed = map[string]bool{"web-1": true} },
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {
					Reason: KillReasonLivenessProbe, Message: "Container web failed liveness probe, will be restarted",
				}},
			},
		},
		{
			name: "liveness failed under Never: kill only",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				in.Probes.LivenessFailed = map[string]bool{"web-1": true}
			},
			want: Actions{
				KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {
					Reason: KillReasonLivenessProbe, Message: "Container web failed liveness probe",
				}},
			},
		},
		{
			name: "liveness failed under Never on the last running container: kill the pod",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				in.Runtime.Containers[1] = exited(in.Pod, "log", "log-1", "sb-0", 0, now)
				in.Probes.LivenessFailed = map[string]bool{"web-1": true}
			},
			want: Actions{
				KillPod: true,
				KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {
					Reason: KillReasonLivenessProbe, Message: "Container web failed liveness probe",
				}},
			},
		},
		{
			name:   "startup failed: kill and restart",
			mutate: func(in *Inputs) { in.Probes.StartupFailed = map[string]bool{"log-1": true} },
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{1},
				KillContainers: map[ContainerRef]KillReason{{ID: "log-1", Name: "log"}: {
					Reason: KillReasonStartupProbe, Message: "Container log failed startup probe, will be restarted",
				}},
			},
		},
		{
			name: "OnFailure, all exited 0: kill the pod",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				in.Runtime.Containers = []runtimestate.Container{
					exited(in.Pod, "web", "web-1", "sb-0", 0, now), exited(in.Pod, "log", "log-1", "sb-0", 0, now),
				}
			},
			want: Actions{KillPod: true},
		},
		{
			name: "Never, all exited: kill the pod",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				in.Runtime.Containers = []runtimestate.Container{
					exited(in.Pod, "web", "web-1", "sb-0", 1, now), exited(in.Pod, "log", "log-1", "sb-0", 0, now),
				}
			},
			want: Actions{KillPod: true},
		},
		{
			name: "latest instance decides, not an older one",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				in.Runtime.Containers = append(in.Runtime.Containers, exited(in.Pod, "web", "web-0", "sb-0", 1, now.Add(-time.Hour)))
			},
			want: Actions{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			tt.mutate(&in)
			got := Compute(in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
