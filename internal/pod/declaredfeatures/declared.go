package declaredfeatures

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
)

// Config is what discovery reads, once at start.
type Config struct {
	// Registry is the library's registry of features
	// (features.AllFeatures). New does not modify it.
	Registry []ndf.Feature
	// Gates are berth's resolved feature gates (Gates adapts
	// config.Config.FeatureGates).
	Gates ndf.FeatureGate
	// Version is the Kubernetes version berth reports
	// (config.KubernetesVersion, "v1.37.2").
	Version string
	// Runtime are the features the runtime's Status reported (zero when it
	// reports none).
	Runtime ndf.RuntimeFeatures
}

// Declared is the node's declared features, fixed at start. It is
// read-only, safe for use from any goroutine.
type Declared struct {
	framework *ndf.Framework
	version   *version.Version
	// names are the declared features, sorted; set is the same as the
	// framework's FeatureSet.
	names []string
	set   ndf.FeatureSet
}

// New discovers the node's features as upstream's kubelet does
// (discoverNodeDeclaredFeatures: the library's framework over the gates,
// the version and the runtime's features), and keeps those berth
// implements (Declare).
func New(cfg Config) (*Declared, error) {
	if cfg.Gates == nil {
		return nil, fmt.Errorf("declare node features: no feature gates")
	}
	v, err := version.Parse(cfg.Version)
	if err != nil {
		return nil, fmt.Errorf("parse version %q: %w", cfg.Version, err)
	}
	// ndf.New sorts the registry it is given: a copy, so that the
	// library's package variable is left alone.
	fw := ndf.New(slices.Clone(cfg.Registry))
	discovered := fw.DiscoverNodeFeatures(&ndf.NodeConfiguration{
		FeatureGates:    cfg.Gates,
		Version:         v,
		RuntimeFeatures: cfg.Runtime,
	})
	names := Declare(discovered)
	slices.Sort(names)
	set, err := fw.MapSorted(names)
	if err != nil {
		return nil, fmt.Errorf("map declared features %q: %w", names, err)
	}
	return &Declared{framework: fw, version: v, names: names, set: set}, nil
}

// Names returns the declared features, sorted, as node.status.declaredFeatures
// carries them; nil when there are none. The caller may keep the slice.
func (d *Declared) Names() []string { return slices.Clone(d.names) }
