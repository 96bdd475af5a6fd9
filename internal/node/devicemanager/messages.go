package devicemanager

// Upstream's error texts, pinned by upstream_test.go: they reach pod
// events and the admission message, which tools and people match.
const (
	msgUnsupportedVersion  = "requested API version %q is not supported by kubelet. Supported version is %q"
	msgInvalidResourceName = "the ResourceName %q is invalid"
	msgAlreadyConnected    = "device plugin already connected: %s"
	msgOptionsFailed       = "failed to get device plugin options: %v"
	msgEndpointStopped     = "endpoint %v has been stopped"
	msgChangedRequest      = "pod %q container %q changed request for resource %q from %d to %d"
	msgUnregistered        = "cannot allocate unregistered device %s"
	msgNoHealthy           = "no healthy devices present; cannot allocate unhealthy devices %s"
	msgNoLongerHealthy     = "previously allocated devices are no longer healthy; cannot allocate unhealthy devices %s"
	msgUnavailable         = "requested number of devices unavailable for %s. Requested: %d, Available: %d"
	msgLessThanRequired    = "unexpectedly allocated less resources than required. Requested: %d, Got: %d"
	msgUnknownPlugin       = "unknown Device Plugin %s"
	msgNoContainers        = "no containers return in allocation response %v"
	msgNoEndpoint          = "endpoint not found in cache for a registered resource: %s"
	msgNoDevicesCached     = "no devices found allocated in local cache for pod %s, container %s, resource %s"
	msgPreStartFailed      = "device plugin PreStartContainer rpc failed with err: %v"
	msgPreferredFailed     = "device plugin GetPreferredAllocation rpc failed with err: %v"
	// msgUnexpected is admission's message for a failed Allocate.
	msgUnexpected = "Allocate failed due to %v, which is unexpected"
)
