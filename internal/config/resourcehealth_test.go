package config

import (
	"testing"

	"k8s.io/klog/v2"
)

// TestResourceHealthGates: both gates default on (upstream's v1.37
// defaults, from the generated table), are honoured off, the message only
// with the health, and validate either way.
func TestResourceHealthGates(t *testing.T) {
	for _, tc := range []struct {
		name        string
		gates       map[string]bool
		health, msg bool
	}{
		{"defaults", nil, true, true},
		{"health off", map[string]bool{gateResourceHealthStatus: false, gateResourceHealthStatusMessage: false}, false, false},
		{"message off", map[string]bool{gateResourceHealthStatusMessage: false}, true, false},
		{"health off alone", map[string]bool{gateResourceHealthStatus: false}, false, false},
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
