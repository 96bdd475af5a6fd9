package cpumanager

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/berthk8s/berth/internal/node/topology"
)

// Policy names of cpuManagerPolicy.
const (
	PolicyNone   = "none"
	PolicyStatic = "static"
)

// The static policy's options, as upstream's policy_options.go names them.
const (
	FullPCPUsOnlyOption             = "full-pcpus-only"
	DistributeCPUsAcrossNUMAOption  = "distribute-cpus-across-numa"
	AlignBySocketOption             = "align-by-socket"
	DistributeCPUsAcrossCoresOption = "distribute-cpus-across-cores"
	StrictCPUReservationOption      = "strict-cpu-reservation"
	PreferAlignByUnCoreCacheOption  = "prefer-align-cpus-by-uncorecache"
)

// Maturity of the options in v1.37 (upstream's alphaOptions, betaOptions,
// stableOptions; pinned by a test). An alpha option needs the
// CPUManagerPolicyAlphaOptions gate, a beta one CPUManagerPolicyBetaOptions.
var optionMaturity = map[string]string{
	AlignBySocketOption:             "alpha",
	DistributeCPUsAcrossCoresOption: "alpha",
	DistributeCPUsAcrossNUMAOption:  "beta",
	FullPCPUsOnlyOption:             "stable",
	StrictCPUReservationOption:      "stable",
	PreferAlignByUnCoreCacheOption:  "stable",
}

// notImplemented are the options berth refuses although upstream has them:
// they choose allocation algorithms berth does not carry yet (upstream's
// takeByTopologyNUMADistributed and its uncore-cache steps).
var notImplemented = map[string]bool{
	DistributeCPUsAcrossNUMAOption: true,
	AlignBySocketOption:            true,
	PreferAlignByUnCoreCacheOption: true,
}

// Options are the static policy's options, parsed.
type Options struct {
	FullPhysicalCPUsOnly      bool
	DistributeCPUsAcrossCores bool
	StrictCPUReservation      bool
}

// ParseOptions checks cpuManagerPolicyOptions as upstream's
// NewStaticPolicyOptions does (names, gates, boolean values, the pairs that
// exclude each other) and refuses the options berth does not implement.
// Pure; config.Load calls it, so a bad option stops berth before it starts.
func ParseOptions(opts map[string]string, g topology.Gates) (Options, error) {
	var o Options
	var set = map[string]bool{}
	for name, value := range opts {
		level := optionMaturity[name]
		if level == "" {
			return o, fmt.Errorf("unknown CPU Manager Policy option: %q", name)
		}
		if !g.Allows(level) {
			return o, fmt.Errorf("CPU Manager Policy %s-level Options not enabled, but option %q provided", strings.ToUpper(level[:1])+level[1:], name)
		}
		v, err := strconv.ParseBool(value)
		if err != nil {
			return o, fmt.Errorf("bad value for option %q: %w", name, err)
		}
		set[name] = v
	}
	for _, pair := range [][2]string{
		{FullPCPUsOnlyOption, DistributeCPUsAcrossCoresOption},
		{DistributeCPUsAcrossNUMAOption, DistributeCPUsAcrossCoresOption},
		{PreferAlignByUnCoreCacheOption, DistributeCPUsAcrossCoresOption},
		{PreferAlignByUnCoreCacheOption, DistributeCPUsAcrossNUMAOption},
	} {
		if set[pair[0]] && set[pair[1]] {
			return o, fmt.Errorf("static policy options %s and %s can not be used at the same time", pair[0], pair[1])
		}
	}
	for name, v := range set {
		if v && notImplemented[name] {
			return o, fmt.Errorf("cpu manager policy option %q is not implemented by berth yet", name)
		}
	}
	o.FullPhysicalCPUsOnly = set[FullPCPUsOnlyOption]
	o.DistributeCPUsAcrossCores = set[DistributeCPUsAcrossCoresOption]
	o.StrictCPUReservation = set[StrictCPUReservationOption]
	return o, nil
}
