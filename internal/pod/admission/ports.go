package admission

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// wildcardIP is the host IP that binds every address, as upstream's
// HostPortInfo treats it (an empty host IP means it too).
const wildcardIP = "0.0.0.0"

// hostPort is a port a pod binds on the node.
type hostPort struct {
	ip, protocol string
	port         int32
}

// hostPorts returns the host ports of the containers that run for the
// pod's whole life, sidecars and regular containers, as upstream's
// GetHostPorts, with upstream's defaults: protocol TCP, host IP 0.0.0.0.
// Regular init containers finish before the others start: their ports are
// not reserved.
func hostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	collect := func(c *corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: string(p.Protocol), port: p.HostPort}
			if hp.ip == "" {
				hp.ip = wildcardIP
			}
			if hp.protocol == "" {
				hp.protocol = string(corev1.ProtocolTCP)
			}
			out = append(out, hp)
		}
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; podutil.IsSidecar(c) {
			collect(c)
		}
	}
	for i := range pod.Spec.Containers {
		collect(&pod.Spec.Containers[i])
	}
	return out
}

// conflicts reports whether two host ports cannot both be bound: same
// protocol and port, and the same IP or either one the wildcard.
func (a hostPort) conflicts(b hostPort) bool {
	if a.protocol != b.protocol || a.port != b.port {
		return false
	}
	return a.ip == b.ip || a.ip == wildcardIP || b.ip == wildcardIP
}

// portsFit reports whether none of the pod's host ports is taken by an
// active pod.
func portsFit(pod *corev1.Pod, active []*corev1.Pod) bool {
	want := hostPorts(pod)
	if len(want) == 0 {
		return true
	}
	for _, p := range active {
		for _, used := range hostPorts(p) {
			for _, w := range want {
				if w.conflicts(used) {
					return false
				}
			}
		}
	}
	return true
}
