package config

import (
	"maps"
	"slices"
	"strconv"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"
)

// The enforceNodeAllocatable keys of v1.37 (upstream pkg/kubelet/types;
// internal/node/cm pins them).
const (
	enforcePods                   = "pods"
	enforceSystemReserved         = "system-reserved"
	enforceSystemReservedCompress = "system-reserved-compressible"
	enforceKubeReserved           = "kube-reserved"
	enforceKubeReservedCompress   = "kube-reserved-compressible"
	enforceNone                   = "none"
)

// validateCgroups checks the container manager's fields as upstream's
// ValidateKubeletConfiguration does: cgroupsPerQOS, systemCgroups,
// reservedSystemCPUs and enforceNodeAllocatable with the
// reserved cgroups it needs. It is the one place these rules live.
func validateCgroups(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	if kc.SystemCgroups != "" && kc.CgroupRoot == "" {
		ps = append(ps, fieldProblem("systemCgroups", "systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified"))
	}
	if kc.ReservedSystemCPUs != "" {
		if kc.SystemReservedCgroup != "" || kc.KubeReservedCgroup != "" {
			ps = append(ps, fieldProblem("reservedSystemCPUs", "can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)"))
		}
		if _, err := cpuset.Parse(kc.ReservedSystemCPUs); err != nil {
			ps = append(ps, fieldProblem("reservedSystemCPUs", "unable to parse %q: %v", kc.ReservedSystemCPUs, err))
		}
	}
	keys := kc.EnforceNodeAllocatable
	for _, pair := range [][2]string{{enforceSystemReserved, enforceSystemReservedCompress}, {enforceKubeReserved, enforceKubeReservedCompress}} {
		if slices.Contains(keys, pair[0]) && slices.Contains(keys, pair[1]) {
			ps = append(ps, fieldProblem("enforceNodeAllocatable", "both %q and %q cannot be specified together", pair[0], pair[1]))
		}
	}
	seen := map[string]bool{}
	for _, key := range keys {
		if seen[key] {
			ps = append(ps, fieldProblem("enforceNodeAllocatable", "duplicated enforcement %q", key))
			continue
		}
		seen[key] = true
		switch key {
		case enforcePods:
		case enforceSystemReserved, enforceSystemReservedCompress:
			if kc.SystemReservedCgroup == "" {
				ps = append(ps, fieldProblem("systemReservedCgroup", "must be specified when %q or %q is included in enforceNodeAllocatable", enforceSystemReserved, enforceSystemReservedCompress))
			}
		case enforceKubeReserved, enforceKubeReservedCompress:
			if kc.KubeReservedCgroup == "" {
				ps = append(ps, fieldProblem("kubeReservedCgroup", "must be specified when %q or %q is included in enforceNodeAllocatable", enforceKubeReserved, enforceKubeReservedCompress))
			}
		case enforceNone:
			if len(keys) > 1 {
				ps = append(ps, fieldProblem("enforceNodeAllocatable", "may not contain additional enforcements when %q is specified", enforceNone))
			}
			continue
		default:
			ps = append(ps, fieldProblem("enforceNodeAllocatable", "invalid option %q: valid options are %q, %q, %q, %q, %q or %q", key,
				enforcePods, enforceSystemReserved, enforceSystemReservedCompress, enforceKubeReserved, enforceKubeReservedCompress, enforceNone))
			continue
		}
		if !ptr.Deref(kc.CgroupsPerQOS, true) {
			ps = append(ps, fieldProblem("cgroupsPerQOS", "must be true when %q is contained in enforceNodeAllocatable", key))
		}
	}
	return ps
}

// applyReservedCPUs gives reservedSystemCPUs its upstream meaning once the
// configuration is valid: their count replaces the cpu of systemReserved,
// and kubeReserved reserves no cpu (upstream's kubelet server does this
// before anything reads the reservations). berth pins no CPUs
// (cpuManagerPolicy none), so this is all they do.
func applyReservedCPUs(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	cpus, err := cpuset.Parse(kc.ReservedSystemCPUs)
	if err != nil || cpus.Size() == 0 {
		return
	}
	kube := maps.Clone(kc.KubeReserved)
	delete(kube, "cpu")
	kc.KubeReserved = kube
	system := maps.Clone(kc.SystemReserved)
	if system == nil {
		system = map[string]string{}
	}
	system["cpu"] = strconv.Itoa(cpus.Size())
	kc.SystemReserved = system
}
