package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
)

// TestResourceHealthGates: both gates default on (upstream's v1.37
// defaults, from the generated table), are honoured off, the message only
// with the health, and validate either way (the message off with the
// health; TestGateDependencies refuses the health off alone).
func TestResourceHealthGates(t *testing.T) {
	for _, tc := range []struct {
		name        string
		gates       map[string]bool
		health, msg bool
	}{
		{"defaults", nil, true, true},
		{"health off", map[string]bool{gateResourceHealthStatus: false, gateResourceHealthStatusMessage: false}, false, false},
		{"message off", map[string]bool{gateResourceHealthStatusMessage: false}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			c.Kubelet.FeatureGates = tc.gates
			if got := c.ResourceHealthStatus(); got != tc.health {
				t.Errorf("ResourceHealthStatus() = %t, want %t", got, tc.health)
			}
			if got := c.ResourceHealthStatusMessage(); got != tc.msg {
				t.Errorf("ResourceHealthStatusMessage() = %t, want %t", got, tc.msg)
			}
			if ps := validateFeatureGates(klog.Background(), tc.gates); len(ps) != 0 {
				t.Errorf("validateFeatureGates refuses %v: %v", tc.gates, problemMsgs(ps))
			}
		})
	}
}

// TestGateDependencies: as upstream's component-base with kube_features.go's
// dependencies, a gate on (given or by default) whose dependency is off is
// refused, naming both; every gate and dependency of the table is one the
// gate set knows.
func TestGateDependencies(t *testing.T) {
	const msg = `kubeletConfiguration field "featureGates": ResourceHealthStatusMessage is enabled, but depends on features that are disabled: [ResourceHealthStatus] (enable ResourceHealthStatus or set ResourceHealthStatusMessage: false)`
	for _, tc := range []struct {
		name  string
		gates map[string]bool
		want  []string
	}{
		{"defaults", nil, nil},
		{"health off alone: the message is on by default", map[string]bool{gateResourceHealthStatus: false}, []string{msg}},
		{"health off, message on", map[string]bool{gateResourceHealthStatus: false, gateResourceHealthStatusMessage: true}, []string{msg}},
		{"both off", map[string]bool{gateResourceHealthStatus: false, gateResourceHealthStatusMessage: false}, nil},
		{"message off alone", map[string]bool{gateResourceHealthStatusMessage: false}, nil},
		{"a dependency on a locked gate", map[string]bool{EventedPLEG: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, problemMsgs(validateFeatureGates(klog.Background(), tc.gates))); diff != "" {
				t.Errorf("validateFeatureGates (-want +got):\n%s", diff)
			}
		})
	}
	fg, err := newFeatureGate()
	if err != nil {
		t.Fatal(err)
	}
	known := fg.GetAll()
	for name, deps := range upstreamGateDependencies {
		for _, g := range append([]string{name}, deps...) {
			if _, ok := known[featuregate.Feature(g)]; !ok {
				t.Errorf("dependency table names %s, which the gate set does not know", g)
			}
		}
	}
}
