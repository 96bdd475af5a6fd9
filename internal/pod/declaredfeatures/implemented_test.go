package declaredfeatures

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-helpers/nodedeclaredfeatures/features"
)

// TestEveryRegisteredFeatureDecided lists every feature of the library's
// registry with berth's decision. A feature a newer library adds fails
// here until someone decides whether berth does it (decide) and adds its
// row.
func TestEveryRegisteredFeatureDecided(t *testing.T) {
	want := map[string]bool{
		"ExtendWebSocketsToKubelet":                    true,
		"RestartAllContainersOnContainerExits":         true,
		"InPlacePodLevelResourcesVerticalScaling":      true,
		"InPlacePodVerticalScalingInitContainers":      true,
		"InPlacePodVerticalScalingMemoryBackedVolumes": false,
		"UserNamespacesHostNetworkSupport":             false,
		"VolumeBindMountOptions":                       false,
		"DRANodeAllocatableResources":                  false,
		"DRAOptionalNodeOperations":                    false,
	}
	got := map[string]bool{}
	for _, f := range features.AllFeatures {
		yes, decided := decide(f.Name())
		if !decided {
			t.Errorf("feature %q of the library's registry is not decided: say in decide whether berth does it", f.Name())
		}
		got[f.Name()] = yes
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions over the library's registry (-want +got):\n%s", diff)
	}
}

func TestDeclare(t *testing.T) {
	tests := []struct {
		name       string
		discovered []string
		want       []string
	}{
		{"none", nil, nil},
		{"kept in order", []string{"RestartAllContainersOnContainerExits", "ExtendWebSocketsToKubelet"}, []string{"RestartAllContainersOnContainerExits", "ExtendWebSocketsToKubelet"}},
		{"in-place resize kept, memory-backed volumes dropped", []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "InPlacePodVerticalScalingMemoryBackedVolumes"}, []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers"}},
		{"DRA dropped", []string{"DRANodeAllocatableResources", "DRAOptionalNodeOperations"}, nil},
		{"unknown dropped", []string{"SomeFutureFeature", "RestartAllContainersOnContainerExits"}, []string{"RestartAllContainersOnContainerExits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Declare(tt.discovered)); diff != "" {
				t.Errorf("Declare(%q) (-want +got):\n%s", tt.discovered, diff)
			}
		})
	}
}
