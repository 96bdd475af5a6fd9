package nodestatus

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Setter sets one concern of a node's status from a snapshot, in place, and
// returns the events the change calls for. Setters are pure.
type Setter func(node *corev1.Node, in Inputs) []Event

// Setters returns every setter in the order upstream runs them. The Ready
// condition comes last: it checks the capacity the others set, and
// version-skewed readers expect it last among the conditions.
func Setters() []Setter {
	return []Setter{
		Addresses,
		MachineInfo,
		VersionInfo,
		DaemonEndpoints,
		Images,
		RuntimeHandlers,
		MemoryPressureCondition,
		DiskPressureCondition,
		PIDPressureCondition,
		ReadyCondition,
		VolumesInUse,
		DeclaredFeatures,
	}
}

// VolumesInUse sets status.volumesInUse, as upstream's setter of the name
// (after the Ready condition); a list not known this round leaves the
// Node's as it is.
func VolumesInUse(node *corev1.Node, in Inputs) []Event {
	switch {
	case in.VolumesInUse == nil:
	case len(in.VolumesInUse) == 0:
		node.Status.VolumesInUse = nil
	default:
		node.Status.VolumesInUse = slices.Clone(in.VolumesInUse)
	}
	return nil
}

// Apply runs every setter over node and returns the events, in order.
func Apply(node *corev1.Node, in Inputs) []Event {
	var events []Event
	for _, set := range Setters() {
		events = append(events, set(node, in)...)
	}
	return events
}

// maxNamesPerImage is how many names of one image the status reports.
const maxNamesPerImage = 5

// Addresses sets the InternalIP (or the IPv4/IPv6 pair) and Hostname
// addresses. With no usable node IP it takes the hostname when that is an
// IP; otherwise it leaves the addresses as they are, as upstream does when
// it cannot find the node's IP.
//
// With an external cloud provider it does what upstream's NodeAddress
// setter does: --node-ip is handed to the cloud controller manager in the
// provided-node-ip annotation; addresses the Node already has are the
// CCM's and stay; a Node without any gets --node-ip's, or only the
// Hostname address when --node-ip was not given.
func Addresses(node *corev1.Node, in Inputs) []Event {
	ips := specifiedIPs(in.NodeIPs)
	providedNodeIP(node, in)
	if in.ExternalCloudProvider {
		if len(node.Status.Addresses) > 0 {
			return nil
		}
		if len(in.NodeIPs) == 0 {
			node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: in.Hostname}}
			return nil
		}
	}
	if len(ips) == 0 {
		if ip := net.ParseIP(in.Hostname); ip != nil {
			ips = []net.IP{ip}
		}
	}
	if len(ips) == 0 {
		return nil
	}
	addrs := make([]corev1.NodeAddress, 0, len(ips)+1)
	for _, ip := range ips {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
	}
	node.Status.Addresses = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: in.Hostname})
	return nil
}

// specifiedIPs returns the node IPs that are not unspecified (0.0.0.0,
// ::), at most two.
func specifiedIPs(nodeIPs []net.IP) []net.IP {
	var ips []net.IP
	for _, ip := range nodeIPs {
		if ip != nil && !ip.IsUnspecified() {
			ips = append(ips, ip)
		}
	}
	if len(ips) > 2 {
		ips = ips[:2]
	}
	return ips
}

// providedNodeIP sets the provided-node-ip annotation to --node-ip (the
// first IP, and the second when both are specified) with an external
// cloud provider, and removes a stale one otherwise, as upstream.
func providedNodeIP(node *corev1.Node, in Inputs) {
	specified := func(i int) bool { return len(in.NodeIPs) > i && in.NodeIPs[i] != nil && !in.NodeIPs[i].IsUnspecified() }
	if !in.ExternalCloudProvider || !specified(0) {
		delete(node.Annotations, AnnotationProvidedNodeIP)
		return
	}
	val := in.NodeIPs[0].String()
	if specified(1) {
		val += "," + in.NodeIPs[1].String()
	}
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[AnnotationProvidedNodeIP] = val
}

// MachineInfo sets the machine, system and boot IDs, swap, capacity and
// allocatable. A boot ID different from a previously reported one is a
// reboot, reported with a Warning event.
func MachineInfo(node *corev1.Node, in Inputs) []Event {
	var events []Event
	info := &node.Status.NodeInfo
	info.MachineID = in.Machine.MachineID
	info.SystemUUID = in.Machine.SystemUUID
	if info.BootID != "" && info.BootID != in.Machine.BootID {
		events = append(events, Event{
			Type:    corev1.EventTypeWarning,
			Reason:  "Rebooted",
			Message: fmt.Sprintf("Node %s has been rebooted, boot id: %s", in.NodeName, in.Machine.BootID),
		})
	}
	info.BootID = in.Machine.BootID
	info.Swap = nil
	if in.Machine.SwapBytes != 0 {
		swap := in.Machine.SwapBytes
		info.Swap = &corev1.NodeSwapStatus{Capacity: &swap}
	}
	node.Status.Capacity = Capacity(node.Status.Capacity, in)
	node.Status.Allocatable = Allocatable(node.Status.Capacity, in)
	return events
}

// VersionInfo sets the kernel, OS image, OS, architecture, runtime and
// kubelet versions. kubeProxyVersion is cleared: upstream's
// DisableNodeKubeProxyVersion is on by default since v1.33.
func VersionInfo(node *corev1.Node, in Inputs) []Event {
	info := &node.Status.NodeInfo
	info.KernelVersion = in.Machine.KernelVersion
	info.OSImage = in.Machine.OSImage
	info.OperatingSystem = in.Machine.OperatingSystem
	info.Architecture = in.Machine.Architecture
	info.ContainerRuntimeVersion = in.RuntimeVersion
	info.KubeletVersion = in.KubeletVersion
	info.KubeProxyVersion = "" //nolint:staticcheck // deprecated, and upstream clears it too
	return nil
}

// DaemonEndpoints sets the kubelet endpoint's port.
func DaemonEndpoints(node *corev1.Node, in Inputs) []Event {
	node.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{
		KubeletEndpoint: corev1.DaemonEndpoint{Port: in.KubeletPort},
	}
	return nil
}

// Images sets the node's images, largest first, at most MaxImages of them
// (all with -1), each with at most five names: digests, then tags. Images
// of equal size are ordered by their names so that an unchanged set never
// reads as a change.
func Images(node *corev1.Node, in Inputs) []Event {
	imgs := make([]corev1.ContainerImage, 0, len(in.Images))
	for _, img := range in.Images {
		names := append(append([]string{}, img.RepoDigests...), img.RepoTags...)
		if len(names) > maxNamesPerImage {
			names = names[:maxNamesPerImage]
		}
		imgs = append(imgs, corev1.ContainerImage{Names: names, SizeBytes: img.SizeBytes})
	}
	sort.SliceStable(imgs, func(i, j int) bool {
		if imgs[i].SizeBytes != imgs[j].SizeBytes {
			return imgs[i].SizeBytes > imgs[j].SizeBytes
		}
		return strings.Join(imgs[i].Names, ",") < strings.Join(imgs[j].Names, ",")
	})
	if in.MaxImages > -1 && int(in.MaxImages) < len(imgs) {
		imgs = imgs[:in.MaxImages]
	}
	if len(imgs) == 0 {
		imgs = nil
	}
	node.Status.Images = imgs
	return nil
}

// RuntimeHandlers sets the runtime handlers and, when the runtime reports
// them, its features.
func RuntimeHandlers(node *corev1.Node, in Inputs) []Event {
	node.Status.RuntimeHandlers = nil
	for _, h := range in.RuntimeHandlers {
		node.Status.RuntimeHandlers = append(node.Status.RuntimeHandlers, *h.DeepCopy())
	}
	if in.Features != nil {
		node.Status.Features = in.Features.DeepCopy()
	}
	return nil
}

// DeclaredFeatures sets the node's declared features, as upstream's
// setNodeStatus does after its setters: the sorted list discovered at
// start, replacing whatever the Node had.
func DeclaredFeatures(node *corev1.Node, in Inputs) []Event {
	node.Status.DeclaredFeatures = append([]string(nil), in.DeclaredFeatures...)
	return nil
}
