package podplan

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// BenchmarkCompute plans a pod with 3 init containers (done) and 5
// containers, one of them crash-looping, the others running.
func BenchmarkCompute(b *testing.B) {
	inits := []string{"init-0", "init-1", "init-2"}
	names := []string{"c-0", "c-1", "c-2", "c-3", "c-4"}
	pod := newPod(corev1.RestartPolicyAlways, inits, names)
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		c.Env = []corev1.EnvVar{{Name: "INDEX", Value: fmt.Sprint(i)}}
		c.Ports = []corev1.ContainerPort{{ContainerPort: int32(8080 + i)}}
		c.LivenessProbe = &corev1.Probe{PeriodSeconds: 10}
	}
	var cs []runtimestate.Container
	for _, n := range names[1:] {
		cs = append(cs, running(pod, n, n+"-1", "sb-0"))
	}
	cs = append(cs, exited(pod, "c-0", "c-0-2", "sb-0", 1, at(0)), exited(pod, "c-0", "c-0-1", "sb-0", 1, at(-time.Minute)))
	for _, n := range inits {
		cs = append(cs, exited(pod, n, n+"-1", "sb-0", 0, at(-time.Hour)))
	}
	in := Inputs{
		Pod:     pod,
		Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)), cs...),
		Backoff: map[string]BackoffEntry{"c-0": entry(20*time.Second, at(-5*time.Second), hashOf(pod, "c-0"))},
		Now:     at(time.Second),
	}
	if a := Compute(in); a.Waiting["c-0"].Reason != WaitingReasonCrashLoopBackOff {
		b.Fatalf("unexpected plan %+v", a)
	}
	b.ReportAllocs()
	for b.Loop() {
		Compute(in)
	}
}
