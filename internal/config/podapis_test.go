package config

import (
	"testing"

	"k8s.io/klog/v2"
)

// TestPodAPIGates: both gates default on (upstream's v1.37 defaults), are
// honoured off, and validate either way.
func TestPodAPIGates(t *testing.T) {
	var c Config
	if !c.PodResourcesListActivePods() || !c.PodsAPI() {
		t.Errorf("defaults: list active pods %t, pods API %t, want both on", c.PodResourcesListActivePods(), c.PodsAPI())
	}
	c.Kubelet.FeatureGates = map[string]bool{gatePodResourcesListUseActivePods: false, gatePodsAPI: false}
	if c.PodResourcesListActivePods() || c.PodsAPI() {
		t.Errorf("set off: list active pods %t, pods API %t, want both off", c.PodResourcesListActivePods(), c.PodsAPI())
	}
	if ps := validateFeatureGates(klog.Background(), c.Kubelet.FeatureGates); len(ps) != 0 {
		t.Errorf("validateFeatureGates refuses the gates off: %v", problemMsgs(ps))
	}
}
