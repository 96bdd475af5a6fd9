package agent

import (
	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/cm"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

// cfsSettings is cpuCFSQuota and cpuCFSQuotaPeriod as containers,
// sandboxes and pod cgroups all use them.
func cfsSettings(set config.Settings) cgroupmath.CFS {
	return cgroupmath.CFS{
		Unenforced: !set.CPUCFSQuota,
		Period:     set.CPUCFSQuotaPeriod.Microseconds(),
	}
}

// resourceSettings are the settings containers' and sandboxes' Linux
// resources are built with, on a host of the given cgroup version
// (config.CheckHost has refused the settings it cannot have).
func resourceSettings(set config.Settings, singleProcessOOMKill *bool, cgroupV2 bool) containerconfig.ResourceSettings {
	return containerconfig.ResourceSettings{
		CFS:      cfsSettings(set),
		OOMGroup: containerconfig.OOMGroup(cgroupV2, singleProcessOOMKill),
	}
}

// memorySettings are the node facts and settings containers' and pods'
// memory QoS and swap are decided from: the MemoryQoS gate, cgroup
// version, memoryThrottlingFactor, memoryReservationPolicy, the node's
// allocatable memory (capacity less systemReserved and kubeReserved, as
// upstream's GetNodeAllocatableAbsolute), its page size, and memorySwap
// with the swap facts of host.
func memorySettings(cfg *config.Config, host machine.Info, pageSize int64) cgroupmath.MemorySettings {
	kc := &cfg.Kubelet
	alloc := cm.EnforcedAllocatable(cgroupCapacity(host), resourceList(kc.SystemReserved), resourceList(kc.KubeReserved))[corev1.ResourceMemory]
	return cgroupmath.MemorySettings{
		CgroupV2:          host.CgroupV2,
		QoS:               cfg.MemoryQoS(),
		ThrottlingFactor:  kc.MemoryThrottlingFactor,
		TieredReservation: kc.MemoryReservationPolicy == kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy,
		AllocatableMemory: alloc.Value(),
		PageSize:          pageSize,
		Swap: cgroupmath.SwapSettings{
			ControllerAvailable: host.SwapController,
			Behavior:            kc.MemorySwap.SwapBehavior,
			Capacity:            host.SwapBytes,
			MemoryCapacity:      host.MemoryBytes,
		},
	}
}
