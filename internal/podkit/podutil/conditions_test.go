package podutil

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestKubeletConditionsMatchUpstream pins the owned list to upstream's
// PodConditionsByKubelet and the two conditions its (default-on) gates add.
func TestKubeletConditionsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	want := src.Value("k8s.io/kubernetes/pkg/kubelet/types", "PodConditionsByKubelet").AsStrings()
	want = append(want, string(corev1.PodReadyToStartContainers), string(corev1.AllContainersRestarting))
	var got []string
	for _, c := range kubeletConditions {
		got = append(got, string(c))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("kubelet-owned conditions = %v, upstream's = %v", got, want)
	}
	for _, c := range kubeletConditions {
		if !OwnedByKubelet(c) || SharedWithKubelet(c) {
			t.Errorf("%s: owned %v shared %v, want owned only", c, OwnedByKubelet(c), SharedWithKubelet(c))
		}
	}
	if OwnedByKubelet(corev1.DisruptionTarget) || !SharedWithKubelet(corev1.DisruptionTarget) {
		t.Error("DisruptionTarget is shared with the kubelet, not owned")
	}
	if OwnedByKubelet("example.com/gate") || SharedWithKubelet("example.com/gate") {
		t.Error("a readiness gate's condition is neither owned nor shared")
	}
}
