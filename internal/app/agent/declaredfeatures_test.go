package agent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/admission"
)

// TestDeclareFeaturesAtDefaults: berth at its default gates declares what
// it implements of what the library discovers, whatever the runtime says.
func TestDeclareFeaturesAtDefaults(t *testing.T) {
	for _, rt := range []cri.RuntimeFeatures{{}, {UserNamespacesHostNetwork: true, MountOptions: true}} {
		d, err := declareFeatures(context.Background(), &config.Config{}, cri.Info{Features: rt})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"}
		if diff := cmp.Diff(want, d.Names()); diff != "" {
			t.Errorf("runtime %+v: declared features (-want +got):\n%s", rt, diff)
		}
	}
}

// TestAdmitDeclaredFeaturesLast: the declared features are upstream's last
// admit handler, after the predicates.
func TestAdmitDeclaredFeaturesLast(t *testing.T) {
	d, err := declareFeatures(context.Background(), &config.Config{}, cri.Info{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		nodeName string
		want     string
	}{
		{name: "predicates first", nodeName: "other", want: "NodeName"},
		{name: "then the declared features", want: "PodFeatureUnsupported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Handlers{
				Node: func() *corev1.Node {
					n := &corev1.Node{}
					n.Name = "node"
					n.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}
					return n
				},
				Pressure: func(*corev1.Pod) (bool, string) { return true, "" },
				Features: d.Admit,
			}
			pod := &corev1.Pod{}
			pod.Name, pod.UID, pod.Spec.NodeName = "p", "u", tt.nodeName
			// A user namespace with the host's network: the library infers
			// a feature berth never declares.
			pod.Spec.HostNetwork, pod.Spec.HostUsers = true, new(false)
			if got := a.Decide(context.Background(), pod, nil); got.Reason != tt.want {
				t.Errorf("decide = %+v, want reason %q", got, tt.want)
			}
		})
	}
}
