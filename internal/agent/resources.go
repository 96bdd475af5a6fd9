package agent

import (
	"errors"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/containerconfig"
)

// cfsSettings is cpuCFSQuota and cpuCFSQuotaPeriod as containers,
// sandboxes and pod cgroups all use them.
func cfsSettings(kc *kubeletconfigv1beta1.KubeletConfiguration) containerconfig.CFS {
	return containerconfig.CFS{
		Unenforced: !ptr.Deref(kc.CPUCFSQuota, true),
		Period:     kc.CPUCFSQuotaPeriod.Microseconds(),
	}
}

// resourceSettings are the settings containers' and sandboxes' Linux
// resources are built with, on a host of the given cgroup version. As
// upstream's OS-specific validation, singleProcessOOMKill set to false is
// an error on cgroup v1, where the kernel kills single processes only.
func resourceSettings(kc *kubeletconfigv1beta1.KubeletConfiguration, cgroupV2 bool) (containerconfig.ResourceSettings, error) {
	if !cgroupV2 && kc.SingleProcessOOMKill != nil && !*kc.SingleProcessOOMKill {
		return containerconfig.ResourceSettings{}, errors.New("singleProcessOOMKill must not be explicitly set to false when using cgroup v1")
	}
	return containerconfig.ResourceSettings{
		CFS:      cfsSettings(kc),
		OOMGroup: containerconfig.OOMGroup(cgroupV2, kc.SingleProcessOOMKill),
	}, nil
}
