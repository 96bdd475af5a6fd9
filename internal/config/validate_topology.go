package config

import (
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/topology"
)

// validateTopologyManager checks topologyManagerPolicy and
// topologyManagerScope with upstream's validation messages and, for a
// policy other than none, topologyManagerPolicyOptions as upstream's
// NewManager parses them at start (with none upstream never reads them).
// It returns the parsed options (nil with policy none).
func validateTopologyManager(kc *kubeletconfigv1beta1.KubeletConfiguration) (*topology.Options, []problem) {
	var ps []problem
	policies := []string{topology.PolicyNone, topology.PolicyBestEffort, topology.PolicyRestricted, topology.PolicySingleNUMANode}
	knownPolicy := false
	for _, p := range policies {
		knownPolicy = knownPolicy || kc.TopologyManagerPolicy == p
	}
	if !knownPolicy {
		ps = append(ps, fieldProblem("topologyManagerPolicy", "invalid configuration: topologyManagerPolicy (--topology-manager-policy) %q must be one of: %q", kc.TopologyManagerPolicy, policies))
	}
	switch kc.TopologyManagerScope {
	case topology.ScopeContainer, topology.ScopePod:
	default:
		ps = append(ps, fieldProblem("topologyManagerScope", "invalid configuration: topologyManagerScope (--topology-manager-scope) %q must be one of: %q, or %q", kc.TopologyManagerScope, topology.ScopeContainer, topology.ScopePod))
	}
	if kc.TopologyManagerPolicy == topology.PolicyNone || !knownPolicy {
		return nil, ps
	}
	opts, err := topology.ParseOptions(kc.TopologyManagerPolicyOptions, topology.Gates{
		AlphaOptions: gateOn(kc, "TopologyManagerPolicyAlphaOptions"),
		BetaOptions:  gateOn(kc, "TopologyManagerPolicyBetaOptions"),
	})
	if err != nil {
		ps = append(ps, fieldProblem("topologyManagerPolicyOptions", "%v", err))
	}
	return &opts, ps
}
