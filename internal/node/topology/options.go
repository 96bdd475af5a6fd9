package topology

import (
	"fmt"
	"strconv"
)

// Policy names of topologyManagerPolicy, as upstream's.
const (
	PolicyNone           = "none"
	PolicyBestEffort     = "best-effort"
	PolicyRestricted     = "restricted"
	PolicySingleNUMANode = "single-numa-node"
)

// Scope names of topologyManagerScope, as upstream's.
const (
	ScopeContainer = "container"
	ScopePod       = "pod"
)

// The policy options, as upstream's policy_options.go names them.
const (
	PreferClosestNUMANodesOption = "prefer-closest-numa-nodes"
	MaxAllowableNUMANodesOption  = "max-allowable-numa-nodes"
)

// DefaultMaxAllowableNUMANodes is upstream's defaultMaxAllowableNUMANodes:
// with more NUMA nodes a policy other than none refuses to start.
const DefaultMaxAllowableNUMANodes = 8

// optionMaturity is each option's level in v1.37 (upstream's alphaOptions,
// betaOptions, stableOptions; pinned by a test). An alpha option needs the
// TopologyManagerPolicyAlphaOptions gate, a beta one
// TopologyManagerPolicyBetaOptions.
var optionMaturity = map[string]string{
	PreferClosestNUMANodesOption: "stable",
	MaxAllowableNUMANodesOption:  "stable",
}

// Gates are the two feature gates a manager's policy options depend on
// (the topology manager's TopologyManagerPolicyAlphaOptions and
// TopologyManagerPolicyBetaOptions; the CPU manager's
// CPUManagerPolicyAlphaOptions and CPUManagerPolicyBetaOptions), resolved
// at load.
type Gates struct {
	AlphaOptions bool
	BetaOptions  bool
}

// Allows reports whether an option of the given maturity ("alpha",
// "beta", "stable") may be set: alpha options need AlphaOptions, beta
// ones BetaOptions, as upstream's policy options of both managers.
func (g Gates) Allows(maturity string) bool {
	switch maturity {
	case "alpha":
		return g.AlphaOptions
	case "beta":
		return g.BetaOptions
	}
	return true
}

// Options are topologyManagerPolicyOptions, parsed.
type Options struct {
	// PreferClosestNUMA makes best-effort and restricted choose, among
	// preferred hints of the same width, the NUMA nodes closest to each
	// other (sysfs distances).
	PreferClosestNUMA bool
	// MaxAllowableNUMANodes is the most NUMA nodes a host may have.
	MaxAllowableNUMANodes int
}

// ParseOptions checks topologyManagerPolicyOptions as upstream's
// NewPolicyOptions does: known names, their gates, a boolean
// prefer-closest-numa-nodes, an integer max-allowable-numa-nodes not below
// the default. Upstream parses them only for a policy other than none, and
// so does config.Load. Pure.
func ParseOptions(opts map[string]string, g Gates) (Options, error) {
	o := Options{MaxAllowableNUMANodes: DefaultMaxAllowableNUMANodes}
	for name, value := range opts {
		level := optionMaturity[name]
		if level == "" {
			return o, fmt.Errorf("unknown Topology Manager Policy option: %q", name)
		}
		if !g.Allows(level) {
			return o, fmt.Errorf("topology manager policy %s-level options not enabled, but option %q provided", level, name)
		}
		switch name {
		case PreferClosestNUMANodesOption:
			v, err := strconv.ParseBool(value)
			if err != nil {
				return o, fmt.Errorf("bad value for option %q: %w", name, err)
			}
			o.PreferClosestNUMA = v
		case MaxAllowableNUMANodesOption:
			v, err := strconv.Atoi(value)
			if err != nil {
				return o, fmt.Errorf("unable to convert policy option to integer %q: %w", name, err)
			}
			if v < DefaultMaxAllowableNUMANodes {
				return o, fmt.Errorf("the minimum value of %q should not be less than %v", name, DefaultMaxAllowableNUMANodes)
			}
			o.MaxAllowableNUMANodes = v
		}
	}
	return o, nil
}

// ReasonTopologyAffinity is the reason a pod is refused with when its
// resources cannot be aligned (upstream's ErrorTopologyAffinity), and
// MessageTopologyAffinity the message (TopologyAffinityError.Error).
const (
	ReasonTopologyAffinity  = "TopologyAffinityError"
	MessageTopologyAffinity = "Resources cannot be allocated with Topology locality"
)
