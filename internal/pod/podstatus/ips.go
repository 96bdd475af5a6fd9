package podstatus

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// hostIPs returns the node's primary IP and up to two host IPs.
func hostIPs(ips []string) (string, []corev1.HostIP) {
	if len(ips) == 0 {
		return "", nil
	}
	if len(ips) > 2 {
		ips = ips[:2]
	}
	out := make([]corev1.HostIP, 0, len(ips))
	for _, ip := range ips {
		out = append(out, corev1.HostIP{IP: ip})
	}
	return ips[0], out
}

// podIPs returns the pod's IPs:
//   - the newest sandbox's IPs when it is ready, ordered by the node's IP
//     family preference (one of each family at most);
//   - when no sandbox is ready (the pod stopped, its network is gone), the
//     previous IPs: the API expects a finished pod to keep its IP;
//   - for host-network pods without IPs, the node's IPs.
func podIPs(in *Input, old *corev1.PodStatus) (string, []corev1.PodIP) {
	var ips []string
	sb := in.Runtime.LatestSandbox()
	switch {
	case sb != nil && sb.State == runtimestate.SandboxReady:
		ips = sortPodIPs(sb.IPs, in.HostIPs)
	case !anySandboxReady(in.Runtime):
		for _, ip := range old.PodIPs {
			ips = append(ips, ip.IP)
		}
	}
	if len(ips) == 0 && in.Pod.Spec.HostNetwork {
		ips = sortPodIPs(in.HostIPs, in.HostIPs)
	}
	if len(ips) == 0 {
		return "", nil
	}
	out := make([]corev1.PodIP, 0, len(ips))
	for _, ip := range ips {
		out = append(out, corev1.PodIP{IP: ip})
	}
	return ips[0], out
}

func anySandboxReady(rt *runtimestate.Pod) bool {
	if rt == nil {
		return false
	}
	for _, s := range rt.Sandboxes {
		if s.State == runtimestate.SandboxReady {
			return true
		}
	}
	return false
}

// sortPodIPs picks the first IP of the node's primary family (that of the
// first host IP; IPv4 when unknown), then the first of the other family,
// in canonical form. Unparsable IPs are skipped.
func sortPodIPs(ips, host []string) []string {
	primaryV6 := false
	if len(host) > 0 {
		if a, err := netip.ParseAddr(host[0]); err == nil {
			primaryV6 = a.Unmap().Is6()
		}
	}
	var out []string
	for _, wantV6 := range []bool{primaryV6, !primaryV6} {
		for _, s := range ips {
			a, err := netip.ParseAddr(s)
			if err != nil {
				continue
			}
			a = a.Unmap()
			if a.Is6() == wantV6 {
				out = append(out, a.String())
				break
			}
		}
	}
	return out
}
