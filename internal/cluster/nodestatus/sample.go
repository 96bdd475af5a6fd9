package nodestatus

import (
	"context"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/machine"
)

// Sampler gathers the snapshot node status is computed from (Inputs):
// machine facts read once at start, the runtime's latest status and its
// images. It is read-only after NewSampler; Inputs may be called from any
// goroutine.
type Sampler struct {
	cfg     *config.Config
	machine machine.Info
	// runtimeVersion is "<name>://<version>" as the runtime reported it at start.
	runtimeVersion string
	ips            []net.IP
	health         *cri.Health
	images         runtimeapi.ImageServiceClient
	clock          clock.PassiveClock
	// pressure is the eviction manager's verdicts (MemoryPressure,
	// DiskPressure, PIDPressure); nil reports none.
	pressure func() (memory, disk, pid bool)
	// storage is why the node's storage is not ready (the CSI handler's
	// CSINode initialization); nil, or returning nil, reports ready.
	storage func() error
	// volumesInUse lists the attachable volumes in use (nil: none).
	volumesInUse func(context.Context) ([]corev1.UniqueVolumeName, error)
	// declared are the node's declared features, fixed at start.
	declared []string
	// devicePlugins gives the device plugin resources (nil: none).
	devicePlugins func(context.Context) (capacity, allocatable corev1.ResourceList, removed []string)
	// resetExtended is Guards.ResetExtendedResources.
	resetExtended func() bool
}

// Guards are the node's verdicts from other wings that node status shows.
type Guards struct {
	// Pressure gives the eviction manager's pressure verdicts (nil: none).
	Pressure func() (memory, disk, pid bool)
	// Storage says why the node's storage is not ready (nil: it is).
	Storage func() error
	// VolumesInUse lists the attachable volumes mounted or being mounted
	// (nil: none).
	VolumesInUse func(context.Context) ([]corev1.UniqueVolumeName, error)
	// DevicePlugins gives the device plugin resources (the device
	// manager's Capacity; nil: none).
	DevicePlugins func(context.Context) (capacity, allocatable corev1.ResourceList, removed []string)
	// ResetExtendedResources says whether the extended resources of a Node
	// found at registration are zeroed (the device manager's
	// ShouldResetExtendedResourceCapacity; nil: never).
	ResetExtendedResources func() bool
}

// NewSampler reads the machine facts and returns a Sampler for the node of
// cfg, whose runtime reported runtime at start and whose IPs are ips;
// guards give the verdicts of other wings; declared are the node's
// declared features (sorted).
func NewSampler(cfg *config.Config, info machine.Info, runtime cri.Info, ips []string, health *cri.Health, images runtimeapi.ImageServiceClient, clk clock.PassiveClock,
	guards Guards, declared []string) (*Sampler, error) {
	n := &Sampler{
		cfg: cfg, machine: info, health: health, images: images, clock: clk, pressure: guards.Pressure, storage: guards.Storage, volumesInUse: guards.VolumesInUse, declared: declared,
		devicePlugins: guards.DevicePlugins, resetExtended: guards.ResetExtendedResources,
		runtimeVersion: runtime.RuntimeName + "://" + runtime.RuntimeVersion,
	}
	for _, ip := range ips {
		n.ips = append(n.ips, net.ParseIP(ip))
	}
	return n, nil
}

// Machine is the machine facts read at start.
func (n *Sampler) Machine() machine.Info { return n.machine }

// Inputs returns a fresh snapshot. A failure to list images leaves the
// image list empty for this round; it is logged, not fatal.
func (n *Sampler) Inputs(ctx context.Context) Inputs {
	kc := &n.cfg.Kubelet
	rt := n.health.Info()
	in := Inputs{
		NodeName:       n.cfg.NodeName,
		Hostname:       n.cfg.NodeName,
		Machine:        n.machine,
		NodeIPs:        n.ips,
		RuntimeVersion: n.runtimeVersion,
		RuntimeReady:   rt.RuntimeReady && n.health.Err() == nil,
		NetworkReady:   rt.NetworkReady,
		KubeletVersion: config.KubernetesVersion,
		KubeletPort:    kc.Port,
		MaxPods:        PodCapacity(kc.MaxPods, kc.PodsPerCore, n.machine.NumCPU),
		Reserved: Reserved{
			KubeReserved: kc.KubeReserved, SystemReserved: kc.SystemReserved, EvictionHard: n.cfg.AllocatableEvictionHard(),
		},
		MaxImages: derefInt32(kc.NodeStatusMaxImages, 50),
		Now:       n.clock.Now(),

		ExternalCloudProvider: n.cfg.ExternalCloudProvider(),
		ProviderID:            kc.ProviderID,

		ControllerAttachDetach:        kc.EnableControllerAttachDetach == nil || *kc.EnableControllerAttachDetach,
		LocalStorageCapacityIsolation: kc.LocalStorageCapacityIsolation == nil || *kc.LocalStorageCapacityIsolation,
	}
	in.RuntimeHandlers = runtimeHandlers(rt.Handlers)
	in.DeclaredFeatures = n.declared
	if n.pressure != nil {
		in.Pressure.Memory, in.Pressure.Disk, in.Pressure.PID = n.pressure()
	}
	if n.storage != nil {
		if err := n.storage(); err != nil {
			in.StorageMessage = err.Error()
		}
	}
	if n.volumesInUse != nil {
		inUse, err := n.volumesInUse(ctx)
		if err != nil {
			// Reporting fewer volumes would let one be detached under its
			// mount: keep what the Node shows until it can be read.
			klog.FromContext(ctx).Error(err, "List the volumes in use; status.volumesInUse left as it was")
		} else {
			in.VolumesInUse = inUse
			if in.VolumesInUse == nil {
				in.VolumesInUse = []corev1.UniqueVolumeName{} // known: none
			}
		}
	}
	if n.devicePlugins != nil {
		d := &in.DevicePlugins
		d.Capacity, d.Allocatable, d.Removed = n.devicePlugins(ctx)
	}
	if in.ExternalCloudProvider {
		// Only --node-ip: the addresses are the cloud controller's to find.
		in.NodeIPs = n.cfg.NodeIPs
	}
	if !in.RuntimeReady {
		reason, msg := splitReason(rt.RuntimeMessage)
		if err := n.health.Err(); err != nil && msg == "" {
			msg = err.Error()
		}
		in.RuntimeMessage = RuntimeNotReadyMessage(reason, msg)
	}
	if !in.NetworkReady {
		reason, msg := splitReason(rt.NetworkMessage)
		in.NetworkMessage = NetworkNotReadyMessage(reason, msg)
	}
	resp, err := n.images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		klog.FromContext(ctx).Error(err, "List images for node status")
		return in
	}
	for _, img := range resp.GetImages() {
		in.Images = append(in.Images, Image{
			RepoTags:    sets.List(sets.New(img.GetRepoTags()...)),
			RepoDigests: img.GetRepoDigests(),
			SizeBytes:   int64(img.GetSize()),
		})
	}
	return in
}

// splitReason splits the cri package's "reason: message" form.
func splitReason(s string) (reason, message string) {
	if r, m, ok := strings.Cut(s, ": "); ok {
		return r, m
	}
	return "", s
}

func derefInt32(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// runtimeHandlers converts the runtime's handlers to the Node's
// status.runtimeHandlers, each with both features said explicitly, as
// upstream's RuntimeHandlers setter (users and tools read
// features.userNamespaces to know where hostUsers: false pods can run).
func runtimeHandlers(hs []cri.RuntimeHandler) []corev1.NodeRuntimeHandler {
	var out []corev1.NodeRuntimeHandler
	for _, h := range hs {
		out = append(out, corev1.NodeRuntimeHandler{Name: h.Name, Features: &corev1.NodeRuntimeHandlerFeatures{
			RecursiveReadOnlyMounts: new(h.RecursiveReadOnlyMounts),
			UserNamespaces:          new(h.UserNamespaces),
		}})
	}
	return out
}

// ResetExtendedResources says whether the Node found at registration has
// its extended resources zeroed until their plugins report them
// (Guards.ResetExtendedResources).
func (s *Sampler) ResetExtendedResources() bool {
	return s.resetExtended != nil && s.resetExtended()
}
