package nodestatus

import (
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/machine"
)

// Inputs is a snapshot of everything the node status is computed from. The
// agent builds a fresh one for every update; the setters only read it.
type Inputs struct {
	// NodeName is the Node object's name; Hostname is the value of the
	// kubernetes.io/hostname label and of the Hostname address.
	NodeName string
	Hostname string
	// Machine is what internal/platform/machine read from the host.
	Machine machine.Info
	// NodeIPs are the node's InternalIPs: --node-ip (one, or an IPv4/IPv6
	// pair), or the address the agent detected. Unspecified addresses
	// (0.0.0.0, ::) are ignored. The agent checks that they belong to
	// the host.
	NodeIPs []net.IP
	// ExternalCloudProvider is --cloud-provider=external: a cloud
	// controller manager initializes the Node and owns its addresses, and
	// NodeIPs are only those --node-ip gave (none: the CCM finds them).
	ExternalCloudProvider bool
	// ProviderID is providerID (--provider-id), the Node's spec.providerID
	// at registration.
	ProviderID string
	// ControllerAttachDetach is enableControllerAttachDetach: the Node
	// carries the controller-managed attach/detach annotation. Off, the
	// kubelet would attach volumes itself; berth has no attachable volume
	// plugin, so leaving the annotation off is all it has to do.
	ControllerAttachDetach bool
	// LocalStorageCapacityIsolation is localStorageCapacityIsolation:
	// ephemeral-storage is part of capacity (and so of allocatable) and
	// required for Ready. Off (hosts whose root filesystem cannot be
	// measured, rootless), the node reports no ephemeral-storage, as
	// upstream.
	LocalStorageCapacityIsolation bool

	// RuntimeVersion is "<runtime name>://<version>" ("containerd://1.6.20").
	RuntimeVersion string
	// RuntimeReady and NetworkReady are the runtime's conditions. When one
	// is false, its message (see RuntimeNotReadyMessage and
	// NetworkNotReadyMessage) becomes part of the Ready condition's message;
	// an empty message stands for "container runtime is down" and
	// "container runtime network not ready".
	RuntimeReady   bool
	RuntimeMessage string
	NetworkReady   bool
	NetworkMessage string
	// StorageMessage, when set, is why the node's storage is not ready
	// (upstream's storage state: "CSINode is not yet initialized"); it is
	// part of the Ready condition's message, after the network's.
	StorageMessage string
	// RuntimeHandlers and Features are what the runtime reports in its
	// status, converted to the API types. Features nil leaves the field as
	// it is, as upstream.
	RuntimeHandlers []corev1.NodeRuntimeHandler
	Features        *corev1.NodeFeatures
	// DeclaredFeatures are the node's declared features, sorted
	// (internal/pod/declaredfeatures, fixed at start).
	DeclaredFeatures []string

	// KubeletVersion is the Kubernetes version berth stands in for
	// ("v1.37.2"): a plain semantic version, so kubectl, version-skew
	// checks and upgrade tools read the node the way they read a kubelet.
	KubeletVersion string
	// KubeletPort is daemonEndpoints.kubeletEndpoint.Port (10250).
	KubeletPort int32
	// MaxPods is the pods capacity (PodCapacity).
	MaxPods int32
	// Reserved is what allocatable leaves out of capacity.
	Reserved Reserved

	// Images are the runtime's images; MaxImages is nodeStatusMaxImages
	// (-1 reports all of them).
	Images    []Image
	MaxImages int32

	// Pressure is the eviction manager's verdicts (none until berth has
	// one).
	Pressure Pressure
	// VolumesInUse are the attachable volumes mounted or being mounted on
	// the node, sorted: status.volumesInUse, which the attach/detach
	// controller reads before it detaches a volume. Nil means not known
	// (the Node's list is kept: reporting fewer would let a volume be
	// detached under its mount); empty, none.
	VolumesInUse []corev1.UniqueVolumeName

	// DevicePlugins are the device plugin resources (the device manager's
	// capacity); zero: none.
	DevicePlugins DevicePlugins

	// ShuttingDown is true while a graceful node shutdown is under way
	// (internal/node/nodeshutdown): the node is not ready.
	ShuttingDown bool

	// Now is the time of this update: every heartbeat and transition time.
	Now time.Time
}

// Reserved holds the KubeletConfiguration fields of the same names,
// already validated.
type Reserved struct {
	KubeReserved, SystemReserved, EvictionHard map[string]string
}

// DevicePlugins are the extended resources device plugins serve
// (upstream's GetDevicePluginResourceCapacity): Capacity counts every
// device, Allocatable the healthy ones, and Removed are resources whose
// plugin stayed away past its grace period, reported at 0.
type DevicePlugins struct {
	Capacity, Allocatable corev1.ResourceList
	Removed               []string
}

// Pressure is whether the node is under memory, disk and PID pressure:
// the MemoryPressure, DiskPressure and PIDPressure conditions.
type Pressure struct {
	Memory, Disk, PID bool
}

// Image is one image as the runtime lists it.
type Image struct {
	RepoTags    []string
	RepoDigests []string
	SizeBytes   int64
}

// Event is a Node event that a change of status calls for. The controller
// records it; the setters only return it.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type    string
	Reason  string
	Message string
}
