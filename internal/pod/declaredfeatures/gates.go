package declaredfeatures

import (
	"k8s.io/component-base/featuregate"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
)

// gates is component-base's gate set as the library's FeatureGate, the
// adapter upstream's kubelet has (FeatureGateAdapter). It is read-only.
type gates struct {
	set featuregate.FeatureGate
	// known are the gates set knows.
	known map[featuregate.Feature]featuregate.FeatureSpec
}

// Gates adapts berth's resolved gate set (config.Config.FeatureGates) to
// the library's FeatureGate. A gate the set does not know (one a newer
// library asks about, before berth's gate table has it) reads as off
// instead of panicking as component-base's Enabled would.
func Gates(set featuregate.FeatureGate) ndf.FeatureGate {
	return gates{set: set, known: set.DeepCopy().GetAll()}
}

// Enabled implements ndf.FeatureGate.
func (g gates) Enabled(key string) bool {
	if _, ok := g.known[featuregate.Feature(key)]; !ok {
		return false
	}
	return g.set.Enabled(featuregate.Feature(key))
}
