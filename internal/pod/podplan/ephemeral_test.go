package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// withEphemeral adds ephemeral containers to the pod: name, or
// name=target for one with a targetContainerName.
func withEphemeral(pod *corev1.Pod, names ...string) {
	for _, n := range names {
		ec := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: n, Image: "busybox:1.36", Command: []string{"sh"}, Stdin: true, TTY: true,
		}}
		if name, target, ok := cutTarget(n); ok {
			ec.Name, ec.TargetContainerName = name, target
		}
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, ec)
	}
}

func cutTarget(s string) (name, target string, ok bool) {
	for i := range s {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// ephemeralInstance is an instance of an ephemeral container in the given state.
func ephemeralInstance(name, id, sandbox string, state runtimestate.ContainerState, code int32) runtimestate.Container {
	return runtimestate.Container{ID: id, Name: name, SandboxID: sandbox, State: state, ExitCode: code, StartedAt: t0}
}

func TestComputeEphemeral(t *testing.T) {
	now := at(time.Hour)
	tests := []struct {
		name   string
		mutate func(in *Inputs)
		want   Actions
	}{
		{
			name:   "new ephemeral container in a running pod: started once, in the pod's sandbox",
			mutate: func(in *Inputs) { withEphemeral(in.Pod, "debugger") },
			want:   Actions{SandboxID: "sb-0", EphemeralContainers: []EphemeralStart{{Index: 0}}},
		},
		{
			name: "running ephemeral container: nothing to do",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger")
				in.Runtime.Containers = append(in.Runtime.Containers, ephemeralInstance("debugger", "dbg-1", "sb-0", runtimestate.ContainerRunning, 0))
			},
			want: Actions{},
		},
		{
			name: "exited ephemeral container under restartPolicy Always: never restarted, never backed off",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger")
				in.Runtime.Containers = append(in.Runtime.Containers, ephemeralInstance("debugger", "dbg-1", "sb-0", runtimestate.ContainerExited, 1))
			},
			want: Actions{},
		},
		{
			name: "ephemeral container created but never started: not started again",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger")
				in.Runtime.Containers = append(in.Runtime.Containers, ephemeralInstance("debugger", "dbg-1", "sb-0", runtimestate.ContainerCreated, 0))
			},
			want: Actions{},
		},
		{
			name: "only the new one of two starts",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "old", "new")
				in.Runtime.Containers = append(in.Runtime.Containers, ephemeralInstance("old", "old-1", "sb-0", runtimestate.ContainerExited, 0))
			},
			want: Actions{SandboxID: "sb-0", EphemeralContainers: []EphemeralStart{{Index: 1}}},
		},
		{
			name: "pod being deleted: not started",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger")
				ts := metav1.NewTime(now)
				in.Pod.DeletionTimestamp = &ts
			},
			want: Actions{},
		},
		{
			name: "sandbox being re-created: not started, the pod's containers are",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger")
				in.Runtime.Sandboxes = sandboxes(deadSandbox("sb-0", 0))
				in.Runtime.Containers = nil
			},
			want: Actions{KillPod: true, CreateSandbox: true, Attempt: 1, StartContainers: []int{0, 1}},
		},
		{
			name: "pod torn down (every container done): not started",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				withEphemeral(in.Pod, "debugger")
				in.Runtime.Containers = []runtimestate.Container{
					exited(in.Pod, "web", "web-1", "sb-0", 0, now),
					exited(in.Pod, "log", "log-1", "sb-0", 0, now),
				}
			},
			want: Actions{KillPod: true},
		},
		{
			name: "pod still initializing: started before initialization is done",
			mutate: func(in *Inputs) {
				withInit(in, corev1.RestartPolicyAlways, running(newPod(corev1.RestartPolicyAlways, []string{"setup", "migrate"}, nil), "setup", "setup-1", "sb-0"))
				withEphemeral(in.Pod, "debugger")
			},
			want: Actions{SandboxID: "sb-0", EphemeralContainers: []EphemeralStart{{Index: 0}}},
		},
		{
			name:   "target running: joins the target's running instance",
			mutate: func(in *Inputs) { withEphemeral(in.Pod, "debugger=web") },
			want:   Actions{SandboxID: "sb-0", EphemeralContainers: []EphemeralStart{{Index: 0, TargetID: "web-1"}}},
		},
		{
			name: "target exited: waits, CreateContainerConfigError",
			mutate: func(in *Inputs) {
				in.Pod.Spec.RestartPolicy = corev1.RestartPolicyNever
				withEphemeral(in.Pod, "debugger=web")
				in.Runtime.Containers[0] = exited(in.Pod, "web", "web-1", "sb-0", 1, now)
			},
			want: Actions{Waiting: map[string]Waiting{"debugger": {
				Reason: WaitingReasonCreateContainerConfigError, Message: "target container web is not running"}}},
		},
		{
			name: "target never ran: waits, upstream's message",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger=web")
				in.Runtime.Containers = in.Runtime.Containers[1:]
			},
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}, Waiting: map[string]Waiting{"debugger": {
				Reason: WaitingReasonCreateContainerConfigError, Message: "unable to find target container web"}}},
		},
		{
			name: "target runs only in an older sandbox: waits",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger=web")
				in.Runtime.Containers[0].SandboxID = "sb-old"
			},
			want: Actions{Waiting: map[string]Waiting{"debugger": {
				Reason: WaitingReasonCreateContainerConfigError, Message: "unable to find target container web"}}},
		},
		{
			name: "target is being restarted for a changed spec: waits for the new instance",
			mutate: func(in *Inputs) {
				withEphemeral(in.Pod, "debugger=web")
				in.Runtime.Containers[0] = exited(in.Pod, "web", "web-1", "sb-0", 0, now.Add(-time.Hour))
			},
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}, Waiting: map[string]Waiting{"debugger": {
				Reason: WaitingReasonCreateContainerConfigError, Message: "target container web is not running"}},
				Backoff: map[string]BackoffEntry{"web": entry(10*time.Second, now, hashOf(baseInputs().Pod, "web"))}},
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

func TestEphemeralPending(t *testing.T) {
	deleted := metav1.NewTime(t0)
	exitedOne := ephemeralInstance("debugger", "dbg-1", "sb-0", runtimestate.ContainerExited, 0)
	tests := []struct {
		name    string
		deleted bool
		latest  *runtimestate.Container
		want    bool
	}{
		{name: "never ran", want: true},
		{name: "never ran, pod deleted", deleted: true, want: false},
		{name: "ran and exited", latest: &exitedOne, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := newPod(corev1.RestartPolicyAlways, nil, []string{"web"})
			if tt.deleted {
				pod.DeletionTimestamp = &deleted
			}
			if got := EphemeralPending(pod, tt.latest); got != tt.want {
				t.Errorf("EphemeralPending() = %v, want %v", got, tt.want)
			}
		})
	}
}
