package config

// The gates of the containers' allocatedResourcesStatus (the device
// manager's and the DRA manager's device health), honoured either way
// (honouredGates).
const (
	gateResourceHealthStatus        = "ResourceHealthStatus"
	gateResourceHealthStatusMessage = "ResourceHealthStatusMessage"
)

// ResourceHealthStatus is the ResourceHealthStatus gate (beta, on by
// default since v1.36): the containers' allocatedResourcesStatus shows
// their devices' health (device plugins' and DRA drivers'), pods are synced
// when it changes, and DRA drivers' health streams are opened; off, none
// of it, as upstream.
func (c *Config) ResourceHealthStatus() bool { return gateOn(&c.Kubelet, gateResourceHealthStatus) }

// ResourceHealthStatusMessage is the ResourceHealthStatusMessage gate
// (beta, on by default since v1.36; it needs ResourceHealthStatus): a
// DRA driver's message about a device is shown beside its health.
func (c *Config) ResourceHealthStatusMessage() bool {
	return c.ResourceHealthStatus() && gateOn(&c.Kubelet, gateResourceHealthStatusMessage)
}
