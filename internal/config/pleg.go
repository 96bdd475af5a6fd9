package config

// EventedPLEG is upstream's feature gate for the PLEG's use of the CRI
// container event stream (alpha, off by default in v1.37).
const EventedPLEG = "EventedPLEG"

// ContainerEvents reports whether berth's PLEG follows the runtime's
// container event stream (when the runtime offers one; see
// internal/pod/pleg's doc.go for why). Unlike upstream, berth does unless the
// user sets EventedPLEG=false explicitly: the gate is alpha and off in
// upstream's defaults, but the events change nothing a user sees but how
// soon a status is reported (the periodic relist goes on at upstream's
// period either way), and berth is meant to be faster. An explicit value
// of the gate is honoured either way.
func (c *Config) ContainerEvents() bool {
	on, set := c.Kubelet.FeatureGates[EventedPLEG]
	return !set || on
}
