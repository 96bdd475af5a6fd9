package sysctl

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// nameFmt is upstream's valid sysctl name for defaultPodSysctls
// (pkg/kubelet/apis/config/validation sysctlContainSlashFmt).
const nameFmt = "(" + segmentFmt + "[\\./])*" + segmentFmt

var nameRegexp = regexp.MustCompile("^" + nameFmt + "$")

// ipcSysctls are the IPC sysctls upstream's applyPodSysctls sets unless the
// pod shares the host's IPC namespace (kuberuntime validSysctlMap), besides
// fs.mqueue.*. TestIPCSysctlsMatchUpstream pins it.
var ipcSysctls = []string{
	"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
	"kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
}

// Defaults are the kubelet's defaultPodSysctls, keyed by normalized name
// (dots, as the CRI takes them). A plain value, read-only once built.
type Defaults map[string]string

// ParseDefaults validates defaultPodSysctls as upstream does (a valid
// name, known to be namespaced, not given twice once normalized) and
// returns them normalized, with one error per name refused, in name order.
func ParseDefaults(in map[string]string) (Defaults, []error) {
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	out := Defaults{}
	var errs []error
	for _, k := range names {
		if len(k) > maxLength || !nameRegexp.MatchString(k) {
			errs = append(errs, fmt.Errorf("%q is not a valid sysctl name for defaultPodSysctls", k))
			continue
		}
		if ns, _, _ := utilsysctl.GetNamespace(k); ns == utilsysctl.UnknownNamespace {
			errs = append(errs, fmt.Errorf("%q is not known to be namespaced for defaultPodSysctls", k))
		}
		norm := utilsysctl.NormalizeName(k)
		if _, dup := out[norm]; dup {
			errs = append(errs, fmt.Errorf("duplicate sysctl %q found in defaultPodSysctls", norm))
		}
		out[norm] = in[k]
	}
	return out, errs
}

// ForPod returns the defaults that apply to pod, as upstream's
// applyPodSysctls: IPC ones unless the pod uses the host's IPC namespace,
// net.* unless it uses the host's network, user.* only in a user
// namespace of its own, kernel.domainname unless it uses the host's
// network; nothing else. The pod's own sysctls override them (the caller
// merges). Nil when none applies.
func (d Defaults) ForPod(pod *corev1.Pod) map[string]string {
	var out map[string]string
	set := func(k, v string) {
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	spec := &pod.Spec
	for k, v := range d {
		switch {
		case isIPC(k):
			if !spec.HostIPC {
				set(k, v)
			}
		case strings.HasPrefix(k, "net."):
			if !spec.HostNetwork {
				set(k, v)
			}
		case strings.HasPrefix(k, "user."):
			if spec.HostUsers != nil && !*spec.HostUsers {
				set(k, v)
			}
		case k == "kernel.domainname" && !spec.HostNetwork:
			set(k, v)
		}
	}
	return out
}

// isIPC reports an IPC sysctl upstream sets by default (a normalized name).
func isIPC(name string) bool {
	return slices.Contains(ipcSysctls, name) || strings.HasPrefix(name, "fs.mqueue.")
}
