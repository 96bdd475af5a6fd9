package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// restartAllPod is a Never pod with an init container, a sidecar, a
// regular container "src" (restartPolicy Never, RestartAllContainers on
// exit 42) and a regular container "web".
func restartAllPod() *corev1.Pod {
	pod := newPod(corev1.RestartPolicyNever, []string{"init", "side"}, []string{"src", "web"})
	always, never := corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyNever
	specOf(pod, "side").RestartPolicy = &always
	src := specOf(pod, "src")
	src.RestartPolicy = &never
	src.RestartPolicyRules = restartAllOn(42)
	return pod
}

func restartAllOn(code int32) []corev1.ContainerRestartRule {
	return []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{code}}}}
}

func reset(id, name string, kill bool) ResetContainer {
	return ResetContainer{ContainerRef: ContainerRef{ID: id, Name: name}, Kill: kill}
}

// TestComputeRestartAll: a base running pod, one mutation per row.
func TestComputeRestartAll(t *testing.T) {
	now := at(time.Hour)
	sb := sandboxes(readySandbox("sb-0", 0))
	// base is the runtime of restartAllPod once initialized, src exited
	// with code: init done, the sidecar and web running.
	base := func(pod *corev1.Pod, code int32) *runtimestate.Pod {
		return rtPod(sb,
			running(pod, "web", "web-1", "sb-0"),
			exited(pod, "src", "src-1", "sb-0", code, at(59*time.Minute)),
			running(pod, "side", "side-1", "sb-0"),
			exited(pod, "init", "init-1", "sb-0", 0, at(time.Minute)),
		)
	}
	tests := []struct {
		name      string
		mutate    func(pod *corev1.Pod, in *Inputs)
		want      Actions
		keepBkoff bool
	}{
		{
			name:   "src exits 42: every instance reset, targets first (regular, init), then the source",
			mutate: func(pod *corev1.Pod, in *Inputs) { in.Runtime = base(pod, 42) },
			want: Actions{RestartAll: RestartAllResetting, Reset: []ResetContainer{
				reset("web-1", "web", true), reset("init-1", "init", false), reset("side-1", "side", true), reset("src-1", "src", false),
			}},
		},
		{
			name:   "src exits 1 (no rule matches): no restart, src stays down (Never)",
			mutate: func(pod *corev1.Pod, in *Inputs) { in.Runtime = base(pod, 1) },
			want:   Actions{},
		},
		{
			name: "only the newest instance triggers: an older exit 42 is history",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				specOf(pod, "src").RestartPolicyRules = append(restartAllOn(42), corev1.ContainerRestartRule{
					Action: corev1.ContainerRestartRuleActionRestart, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
						Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}})
				rt := base(pod, 42)
				rt.Containers = append([]runtimestate.Container{running(pod, "src", "src-2", "sb-0")}, rt.Containers...)
				in.Runtime = rt
			},
			want: Actions{},
		},
		{
			name: "every instance is reset, newest first; a source's older instance is a target",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				rt := base(pod, 42)
				rt.Containers = append(rt.Containers, exited(pod, "web", "web-0", "sb-0", 1, at(30*time.Minute)),
					exited(pod, "src", "src-0", "sb-0", 3, at(20*time.Minute)))
				in.Runtime = rt
			},
			want: Actions{RestartAll: RestartAllResetting, Reset: []ResetContainer{
				reset("src-0", "src", false), reset("web-1", "web", true), reset("web-0", "web", false),
				reset("init-1", "init", false), reset("side-1", "side", true), reset("src-1", "src", false),
			}},
		},
		{
			name: "a sidecar triggers: it is a source init container, reset last",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				specOf(pod, "side").RestartPolicyRules = restartAllOn(7)
				rt := base(pod, 0)
				rt.Containers[2] = exited(pod, "side", "side-1", "sb-0", 7, at(59*time.Minute))
				in.Runtime = rt
			},
			want: Actions{RestartAll: RestartAllResetting, Reset: []ResetContainer{
				reset("src-1", "src", false), reset("web-1", "web", true), reset("init-1", "init", false), reset("side-1", "side", false),
			}},
		},
		{
			name: "an ordinary init container triggers during initialization",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				never := corev1.ContainerRestartPolicyNever
				specOf(pod, "init").RestartPolicy = &never
				specOf(pod, "init").RestartPolicyRules = restartAllOn(42)
				in.Runtime = rtPod(sb, exited(pod, "init", "init-1", "sb-0", 42, at(time.Minute)))
			},
			want: Actions{RestartAll: RestartAllResetting, Reset: []ResetContainer{reset("init-1", "init", false)}},
		},
		{
			name: "under way (previous status) with containers left: the reset goes on",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				in.RestartingAll = true
				in.Runtime = rtPod(sb, exited(pod, "src", "src-1", "sb-0", 42, at(59*time.Minute)))
			},
			want: Actions{RestartAll: RestartAllResetting, Reset: []ResetContainer{reset("src-1", "src", false)}},
		},
		{
			name: "under way, nothing left: cleaned up, the pod starts over from its first init container in the same sandbox",
			mutate: func(_ *corev1.Pod, in *Inputs) {
				in.RestartingAll = true
				in.Runtime = rtPod(sb)
			},
			want: Actions{RestartAll: RestartAllCleanedUp, SandboxID: "sb-0", InitContainers: []int{0}},
		},
		{
			name: "under way, only containers no longer in the spec: cleaned up",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				in.RestartingAll = true
				in.Runtime = rtPod(sb, runtimestate.Container{ID: "gone-1", Name: "gone", SandboxID: "sb-0", State: runtimestate.ContainerExited})
			},
			want: Actions{RestartAll: RestartAllCleanedUp, SandboxID: "sb-0", InitContainers: []int{0}},
		},
		{
			name: "cleaned up without init containers: every regular container starts",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				pod.Spec.InitContainers = nil
				in.RestartingAll = true
				in.Runtime = rtPod(sb)
			},
			want: Actions{RestartAll: RestartAllCleanedUp, SandboxID: "sb-0", StartContainers: []int{0, 1}},
		},
		{
			name: "resetting keeps the back-off entries",
			mutate: func(pod *corev1.Pod, in *Inputs) {
				in.Runtime = base(pod, 42)
				in.Backoff = map[string]BackoffEntry{"web": {Delay: 20 * time.Second, LastUpdate: at(58 * time.Minute), Hash: hashOf(pod, "web")}}
			},
			keepBkoff: true,
			want: Actions{RestartAll: RestartAllResetting, Reset: []ResetContainer{
				reset("web-1", "web", true), reset("init-1", "init", false), reset("side-1", "side", true), reset("src-1", "src", false),
			}, Backoff: map[string]BackoffEntry{"web": {Delay: 20 * time.Second, LastUpdate: at(58 * time.Minute)}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := restartAllPod()
			in := Inputs{Pod: pod, Now: now}
			tc.mutate(pod, &in)
			got := Compute(in)
			if tc.keepBkoff {
				for name, e := range got.Backoff {
					e.Hash = 0 // compared without the hash, which the row cannot spell
					got.Backoff[name] = e
				}
			} else {
				got.Backoff = nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}
