package containerconfig

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// Node holds the node facts and settings the Linux part of a container
// config depends on (NewNode). A plain value, read-only once built.
type Node struct {
	// SeccompProfileRoot is <root-dir>/seccomp: Localhost seccomp profiles
	// are paths relative to it.
	SeccompProfileRoot string
	// SeccompDefault makes RuntimeDefault the seccomp profile of
	// containers that ask for none (kubelet seccompDefault).
	SeccompDefault bool
	// MemoryCapacity is the node's memory in bytes, for the OOM score of
	// Burstable containers.
	MemoryCapacity int64
	// HugePageSizes are the node's huge page sizes in bytes, each limited
	// to 0 unless the container asks for pages of that size.
	HugePageSizes []int64
	// DefaultSysctls are the kubelet's defaultPodSysctls.
	DefaultSysctls sysctl.Defaults
	// MaskedPaths are the paths masked with the Default proc mount.
	MaskedPaths []string
	// Resources shape every container's Linux resources.
	Resources ResourceSettings
	// SELinux: the host runs SELinux, so the runtime relabels the
	// termination message file (upstream: selinux.GetEnabled()).
	SELinux bool
}

// NewNode gathers the node's facts and settings for container configs:
// the seccomp settings as given, and from host its memory, its huge page
// sizes and its masked paths.
func NewNode(host machine.Info, seccompProfileRoot string, seccompDefault bool) Node {
	return Node{
		SeccompProfileRoot: seccompProfileRoot,
		SeccompDefault:     seccompDefault,
		MemoryCapacity:     host.MemoryBytes,
		SELinux:            host.SELinux,
		HugePageSizes:      hugePageSizes(host),
		MaskedPaths:        defaultMaskedPaths(host.ThermalThrottleDirs),
	}
}

// hugePageSizes are the host's huge page sizes in bytes, smallest first.
func hugePageSizes(host machine.Info) []int64 {
	var sizes []int64
	for size := range host.HugePages {
		if q, err := resource.ParseQuantity(size); err == nil {
			sizes = append(sizes, q.Value())
		}
	}
	slices.Sort(sizes)
	return sizes
}
