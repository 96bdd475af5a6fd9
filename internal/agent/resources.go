package agent

import (
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
// resources are built with.
func resourceSettings(kc *kubeletconfigv1beta1.KubeletConfiguration) containerconfig.ResourceSettings {
	return containerconfig.ResourceSettings{CFS: cfsSettings(kc)}
}
