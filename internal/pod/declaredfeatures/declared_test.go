package declaredfeatures

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/featuregate"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/component-helpers/nodedeclaredfeatures/features"
	"k8s.io/component-helpers/nodedeclaredfeatures/types"

	"github.com/berthk8s/berth/internal/config"
)

// allGates turns on every gate any registered feature asks for.
func allGates() ndf.FeatureGate {
	m := types.FeatureGateMap{}
	for _, f := range features.AllFeatures {
		for _, g := range f.Requirements().EnabledFeatureGates {
			m[g] = true
		}
	}
	return m
}

func allRuntime() ndf.RuntimeFeatures {
	return ndf.RuntimeFeatures{UserNamespacesHostNetwork: true, MountOptions: true}
}

// berthGates is berth's gate set at its defaults, as a config without
// featureGates resolves it.
func berthGates(t *testing.T) ndf.FeatureGate {
	fg, err := (&config.Config{}).FeatureGates(logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return Gates(fg)
}

func TestNew(t *testing.T) {
	tests := []struct {
		name  string
		gates func(t *testing.T) ndf.FeatureGate
		rt    ndf.RuntimeFeatures
		want  []string
	}{
		{
			// What this machine declares, whatever the runtime: the e2e
			// test reads the same list from the Node.
			name: "berth's defaults", gates: berthGates, rt: allRuntime(),
			want: []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"},
		},
		{
			name: "berth's defaults, runtime without features", gates: berthGates,
			want: []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"},
		},
		{
			name: "every gate and runtime feature: only what berth implements", rt: allRuntime(),
			gates: func(*testing.T) ndf.FeatureGate { return allGates() },
			want:  []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"},
		},
		{
			name:  "gates off: nothing",
			gates: func(*testing.T) ndf.FeatureGate { return types.FeatureGateMap{} }, rt: allRuntime(),
		},
		{
			name:  "one gate",
			gates: func(*testing.T) ndf.FeatureGate { return types.FeatureGateMap{"ExtendWebSocketsToKubelet": true} },
			want:  []string{"ExtendWebSocketsToKubelet"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(Config{Registry: features.AllFeatures, Gates: tt.gates(t), Version: config.KubernetesVersion, Runtime: tt.rt})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.Names()); diff != "" {
				t.Errorf("declared features (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := New(Config{Registry: features.AllFeatures, Gates: allGates(), Version: "not-a-version"}); err == nil {
		t.Error("a version that does not parse was accepted")
	}
	if _, err := New(Config{Registry: features.AllFeatures, Version: config.KubernetesVersion}); err == nil {
		t.Error("no gates was accepted")
	}
}

func TestNamesIsACopy(t *testing.T) {
	d, err := New(Config{Registry: features.AllFeatures, Gates: allGates(), Version: config.KubernetesVersion})
	if err != nil {
		t.Fatal(err)
	}
	d.Names()[0] = "changed"
	if got := d.Names()[0]; got == "changed" {
		t.Error("Names shares its slice with the caller")
	}
}

func TestGates(t *testing.T) {
	fg := featuregate.NewFeatureGate()
	if err := fg.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		"On":  {Default: true, PreRelease: featuregate.Beta},
		"Off": {Default: false, PreRelease: featuregate.Alpha},
		"Set": {Default: false, PreRelease: featuregate.Alpha},
	}); err != nil {
		t.Fatal(err)
	}
	if err := fg.SetFromMap(map[string]bool{"Set": true}); err != nil {
		t.Fatal(err)
	}
	g := Gates(fg)
	got := map[string]bool{}
	for _, name := range []string{"On", "Off", "Set", "Unknown"} {
		got[name] = g.Enabled(name) // an unknown gate must not panic
	}
	want := map[string]bool{"On": true, "Off": false, "Set": true, "Unknown": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gates (-want +got):\n%s", diff)
	}
}
