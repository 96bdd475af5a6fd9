package config

// The gates of the node-local pod APIs (internal/serve/podresources and
// internal/serve/podsapi), honoured either way (honouredGates).
const (
	gatePodResourcesListUseActivePods = "KubeletPodResourcesListUseActivePods"
	gatePodsAPI                       = "PodsAPI"
)

// PodResourcesListActivePods is KubeletPodResourcesListUseActivePods
// (deprecated, on by default in v1.37): the pod resources API's List shows
// the active pods only; off, every pod the kubelet has, terminal ones
// included, as upstream.
func (c *Config) PodResourcesListActivePods() bool {
	return gateOn(&c.Kubelet, gatePodResourcesListUseActivePods)
}

// PodsAPI is the PodsAPI gate (beta, on by default in v1.37): the Pods API
// is served on <root-dir>/pods-api/pods-api.sock only with it on.
func (c *Config) PodsAPI() bool { return gateOn(&c.Kubelet, gatePodsAPI) }
