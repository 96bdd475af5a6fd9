package kuberuntime

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Paths masked and made read-only in unprivileged containers, as upstream's
// securitycontext package lists them for the Default proc mount. The CRI
// leaves this to the caller: a runtime given none masks none.
var (
	defaultMaskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	defaultReadonlyPaths = []string{
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	}
)

// namespaceOptions are the pod's namespace modes (upstream NamespacesForPod).
func namespaceOptions(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
		Ipc:     runtimeapi.NamespaceMode_POD,
	}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	return ns
}

// hasPrivilegedContainer reports whether any container of the pod is
// privileged: the sandbox must then be privileged too.
func hasPrivilegedContainer(pod *corev1.Pod) bool {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if sc := list[i].SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				return true
			}
		}
	}
	return false
}

// effectiveSecurity merges the pod's security context under the
// container's, for the fields berth honours.
type effectiveSecurity struct {
	RunAsUser, RunAsGroup *int64
	RunAsNonRoot          *bool
	Seccomp               *corev1.SeccompProfile
}

func mergeSecurity(pod *corev1.Pod, c *corev1.Container) effectiveSecurity {
	var e effectiveSecurity
	if psc := pod.Spec.SecurityContext; psc != nil {
		e = effectiveSecurity{RunAsUser: psc.RunAsUser, RunAsGroup: psc.RunAsGroup, RunAsNonRoot: psc.RunAsNonRoot, Seccomp: psc.SeccompProfile}
	}
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			e.RunAsUser = csc.RunAsUser
		}
		if csc.RunAsGroup != nil {
			e.RunAsGroup = csc.RunAsGroup
		}
		if csc.RunAsNonRoot != nil {
			e.RunAsNonRoot = csc.RunAsNonRoot
		}
		if csc.SeccompProfile != nil {
			e.Seccomp = csc.SeccompProfile
		}
	}
	return e
}

// containerSecurity builds the container's Linux security context. Fields
// berth cannot honour yet are refused (CreateContainerConfigError) rather
// than dropped: runAsNonRoot without a numeric runAsUser (needs the image
// user), SELinux options, a Localhost seccomp profile and AppArmor.
func containerSecurity(pod *corev1.Pod, c *corev1.Container) (*runtimeapi.LinuxContainerSecurityContext, error) {
	e := mergeSecurity(pod, c)
	sc := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: namespaceOptions(pod),
		MaskedPaths:      slices.Clone(defaultMaskedPaths),
		ReadonlyPaths:    slices.Clone(defaultReadonlyPaths),
		Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined},
	}
	if e.RunAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *e.RunAsUser}
	}
	if e.RunAsGroup != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *e.RunAsGroup}
	}
	if e.RunAsNonRoot != nil && *e.RunAsNonRoot {
		if e.RunAsUser == nil {
			return nil, errors.New("runAsNonRoot without runAsUser is not supported yet")
		}
		if *e.RunAsUser == 0 {
			return nil, errors.New("container's runAsUser breaks non-root policy")
		}
	}
	if p := e.Seccomp; p != nil {
		switch p.Type {
		case corev1.SeccompProfileTypeRuntimeDefault:
			sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
		case corev1.SeccompProfileTypeUnconfined:
		default:
			return nil, fmt.Errorf("seccomp profile type %q is not supported yet", p.Type)
		}
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.SELinuxOptions != nil || psc.AppArmorProfile != nil {
			return nil, errors.New("pod seLinuxOptions and appArmorProfile are not supported yet")
		}
		if psc.FSGroup != nil {
			sc.SupplementalGroups = append(sc.SupplementalGroups, *psc.FSGroup)
		}
		sc.SupplementalGroups = append(sc.SupplementalGroups, psc.SupplementalGroups...)
	}
	if err := applyContainerSecurity(sc, c.SecurityContext); err != nil {
		return nil, err
	}
	return sc, nil
}

// applyContainerSecurity copies the container-only fields.
func applyContainerSecurity(sc *runtimeapi.LinuxContainerSecurityContext, csc *corev1.SecurityContext) error {
	if csc == nil {
		return nil
	}
	if csc.SELinuxOptions != nil || csc.AppArmorProfile != nil {
		return errors.New("container seLinuxOptions and appArmorProfile are not supported yet")
	}
	if csc.Privileged != nil && *csc.Privileged {
		sc.Privileged = true
		sc.MaskedPaths, sc.ReadonlyPaths = nil, nil
	}
	if csc.ProcMount != nil && *csc.ProcMount == corev1.UnmaskedProcMount {
		sc.MaskedPaths, sc.ReadonlyPaths = nil, nil
	}
	if csc.ReadOnlyRootFilesystem != nil {
		sc.ReadonlyRootfs = *csc.ReadOnlyRootFilesystem
	}
	if csc.AllowPrivilegeEscalation != nil {
		sc.NoNewPrivs = !*csc.AllowPrivilegeEscalation
	}
	if caps := csc.Capabilities; caps != nil {
		sc.Capabilities = &runtimeapi.Capability{}
		for _, c := range caps.Add {
			sc.Capabilities.AddCapabilities = append(sc.Capabilities.AddCapabilities, string(c))
		}
		for _, c := range caps.Drop {
			sc.Capabilities.DropCapabilities = append(sc.Capabilities.DropCapabilities, string(c))
		}
	}
	return nil
}

// sandboxLinuxConfig is the sandbox's Linux config (upstream
// generatePodSandboxLinuxConfig). The cgroup parent stays empty for now.
func sandboxLinuxConfig(pod *corev1.Pod) *runtimeapi.LinuxPodSandboxConfig {
	lc := &runtimeapi.LinuxPodSandboxConfig{
		SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: namespaceOptions(pod),
			Privileged:       hasPrivilegedContainer(pod),
			Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
		},
	}
	if sc := pod.Spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			lc.SecurityContext.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
		}
		if sc.RunAsGroup != nil {
			lc.SecurityContext.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
		}
		if sc.FSGroup != nil {
			lc.SecurityContext.SupplementalGroups = append(lc.SecurityContext.SupplementalGroups, *sc.FSGroup)
		}
		lc.SecurityContext.SupplementalGroups = append(lc.SecurityContext.SupplementalGroups, sc.SupplementalGroups...)
		if len(sc.Sysctls) > 0 {
			lc.Sysctls = make(map[string]string, len(sc.Sysctls))
			for _, s := range sc.Sysctls {
				lc.Sysctls[s.Name] = s.Value
			}
		}
	}
	return lc
}
