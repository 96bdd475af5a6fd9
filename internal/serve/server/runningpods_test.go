package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestToRunningPods(t *testing.T) {
	ready := []runtimestate.Sandbox{{State: runtimestate.SandboxReady}}
	stopped := []runtimestate.Sandbox{{State: runtimestate.SandboxNotReady}}
	running := runtimestate.Container{Name: "web", Image: "busybox", State: runtimestate.ContainerRunning}
	exited := runtimestate.Container{Name: "init", Image: "busybox", State: runtimestate.ContainerExited}
	got := toRunningPods(map[types.UID]*runtimestate.Pod{
		"b": {UID: "b", Name: "web", Namespace: "ns", Sandboxes: stopped, Containers: []runtimestate.Container{exited, running}},
		"a": {UID: "a", Name: "starting", Namespace: "ns", Sandboxes: ready},
		"c": {UID: "c", Name: "dead", Namespace: "ns", Sandboxes: stopped, Containers: []runtimestate.Container{exited}},
		"d": {UID: "d", Name: "orphan", Namespace: "ns"},
	})
	want := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{UID: "a", Name: "starting", Namespace: "ns"}},
		{ObjectMeta: metav1.ObjectMeta{UID: "b", Name: "web", Namespace: "ns"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
