package containerconfig

import (
	"errors"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Paths masked and made read-only in containers with the Default proc
// mount, as upstream's securitycontext package lists them (kept in sync
// with moby's; TestProcPathsMatchUpstream pins both). The CRI leaves this
// to the caller: a runtime given none masks none. (Runtimes ignore them
// for privileged containers.)
var (
	fixedMaskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	defaultReadonlyPaths = []string{
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	}
)

// defaultMaskedPaths are the masked paths on a host with the given
// per-CPU thermal_throttle directories (machine.Info): the fixed list,
// then those, as upstream appends them.
func defaultMaskedPaths(thermalThrottleDirs []string) []string {
	return append(slices.Clone(fixedMaskedPaths), thermalThrottleDirs...)
}

// UserNamespace is a pod's own user namespace: container IDs 0 to
// Length-1 are host IDs HostID to HostID+Length-1, for users and groups
// alike (internal/node/userns allocates it).
type UserNamespace struct {
	HostID, Length uint32
}

// usernsOptions are the CRI's user namespace options (upstream
// GetOrCreateUserNamespaceMappings): mode NODE, said explicitly as
// upstream does with UserNamespacesSupport on, for a pod in the host's
// user namespace (nil); mode POD with the same UID and GID mapping for a
// pod with its own.
func usernsOptions(u *UserNamespace) *runtimeapi.UserNamespace {
	if u == nil {
		return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_NODE}
	}
	return &runtimeapi.UserNamespace{
		Mode: runtimeapi.NamespaceMode_POD,
		Uids: []*runtimeapi.IDMapping{{HostId: u.HostID, ContainerId: 0, Length: u.Length}},
		Gids: []*runtimeapi.IDMapping{{HostId: u.HostID, ContainerId: 0, Length: u.Length}},
	}
}

// namespaceOptions are the pod's namespace modes (upstream NamespacesForPod).
func namespaceOptions(pod *corev1.Pod, userns *UserNamespace) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network:       runtimeapi.NamespaceMode_POD,
		Pid:           runtimeapi.NamespaceMode_CONTAINER,
		Ipc:           runtimeapi.NamespaceMode_POD,
		UsernsOptions: usernsOptions(userns),
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

// effectiveSecurity is the container's security context with the pod's
// fields filled in where the container leaves them unset (upstream
// DetermineEffectiveSecurityContext). It never returns nil.
func effectiveSecurity(pod *corev1.Pod, c *corev1.Container) *corev1.SecurityContext {
	e := &corev1.SecurityContext{}
	if c.SecurityContext != nil {
		e = c.SecurityContext.DeepCopy()
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return e
	}
	if e.SELinuxOptions == nil && psc.SELinuxOptions != nil {
		e.SELinuxOptions = psc.SELinuxOptions.DeepCopy()
	}
	if e.RunAsUser == nil {
		e.RunAsUser = psc.RunAsUser
	}
	if e.RunAsGroup == nil {
		e.RunAsGroup = psc.RunAsGroup
	}
	if e.RunAsNonRoot == nil {
		e.RunAsNonRoot = psc.RunAsNonRoot
	}
	if e.SeccompProfile == nil {
		e.SeccompProfile = psc.SeccompProfile
	}
	if e.AppArmorProfile == nil {
		e.AppArmorProfile = psc.AppArmorProfile
	}
	return e
}

// seccompProfile is the container's seccomp profile (upstream
// getSeccompProfile): the container's field, else the pod's, else
// RuntimeDefault under seccompDefault and Unconfined without. A Localhost
// profile is a path under root (<root-dir>/seccomp).
func seccompProfile(p *corev1.SeccompProfile, root string, seccompDefault bool) (*runtimeapi.SecurityProfile, error) {
	if p == nil {
		if seccompDefault {
			return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	}
	switch p.Type {
	case corev1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case corev1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return nil, errors.New("localhostProfile must be set if seccompProfile type is Localhost.")
		}
		return &runtimeapi.SecurityProfile{
			ProfileType:  runtimeapi.SecurityProfile_Localhost,
			LocalhostRef: filepath.Join(root, *p.LocalhostProfile),
		}, nil
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
}

// selinuxOptions converts SELinux options; nil stays nil.
func selinuxOptions(o *corev1.SELinuxOptions) *runtimeapi.SELinuxOption {
	if o == nil {
		return nil
	}
	return &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
}

// podGroups are the supplemental groups of every container of the pod:
// fsGroup first, then supplementalGroups, with the policy.
func podGroups(psc *corev1.PodSecurityContext) ([]int64, runtimeapi.SupplementalGroupsPolicy) {
	if psc == nil {
		return nil, runtimeapi.SupplementalGroupsPolicy_Merge
	}
	var groups []int64
	if psc.FSGroup != nil {
		groups = append(groups, *psc.FSGroup)
	}
	groups = append(groups, psc.SupplementalGroups...)
	policy := runtimeapi.SupplementalGroupsPolicy_Merge
	if psc.SupplementalGroupsPolicy != nil && *psc.SupplementalGroupsPolicy == corev1.SupplementalGroupsPolicyStrict {
		policy = runtimeapi.SupplementalGroupsPolicy_Strict
	}
	return groups, policy
}

// containerSecurity builds the container's Linux security context
// (upstream determineEffectiveSecurityContext). runAsNonRoot is checked
// against the image's user by VerifyRunAsNonRoot, not here. AppArmor
// profiles are refused (CreateContainerConfigError) rather than dropped.
func containerSecurity(pod *corev1.Pod, c *corev1.Container, node Node, userns *UserNamespace, extraGroups []int64) (*runtimeapi.LinuxContainerSecurityContext, error) {
	e := effectiveSecurity(pod, c)
	if e.AppArmorProfile != nil {
		return nil, errors.New("appArmorProfile is not supported yet")
	}
	seccomp, err := seccompProfile(e.SeccompProfile, node.SeccompProfileRoot, node.SeccompDefault)
	if err != nil {
		return nil, err
	}
	sc := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: namespaceOptions(pod, userns),
		SelinuxOptions:   selinuxOptions(e.SELinuxOptions),
		Seccomp:          seccomp,
		Privileged:       e.Privileged != nil && *e.Privileged,
		ReadonlyRootfs:   e.ReadOnlyRootFilesystem != nil && *e.ReadOnlyRootFilesystem,
		NoNewPrivs:       e.AllowPrivilegeEscalation != nil && !*e.AllowPrivilegeEscalation,
	}
	if e.ProcMount == nil || *e.ProcMount != corev1.UnmaskedProcMount {
		sc.MaskedPaths = slices.Clone(node.MaskedPaths)
		sc.ReadonlyPaths = slices.Clone(defaultReadonlyPaths)
	}
	if e.RunAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *e.RunAsUser}
	}
	if e.RunAsGroup != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *e.RunAsGroup}
	}
	sc.SupplementalGroups, sc.SupplementalGroupsPolicy = podGroups(pod.Spec.SecurityContext)
	sc.SupplementalGroups = append(sc.SupplementalGroups, extraGroups...) // upstream's order: the volumes' last
	if caps := e.Capabilities; caps != nil {
		sc.Capabilities = &runtimeapi.Capability{}
		for _, c := range caps.Add {
			sc.Capabilities.AddCapabilities = append(sc.Capabilities.AddCapabilities, string(c))
		}
		for _, c := range caps.Drop {
			sc.Capabilities.DropCapabilities = append(sc.Capabilities.DropCapabilities, string(c))
		}
	}
	return sc, nil
}

// sandboxLinuxConfig is the sandbox's Linux config (upstream
// generatePodSandboxLinuxConfig and applySandboxResources). The sandbox
// always runs RuntimeDefault seccomp, under cgroupParent (the pod's
// cgroup, or "" for the runtime's default). Its sysctls are the defaults
// that apply to the pod (defaultPodSysctls) overridden by the pod's own,
// which admission allowed (admission.Sysctls).
func sandboxLinuxConfig(pod *corev1.Pod, p SandboxParams) *runtimeapi.LinuxPodSandboxConfig {
	defaults, res := p.DefaultSysctls, p.Resources
	lc := &runtimeapi.LinuxPodSandboxConfig{
		CgroupParent: p.CgroupParent,
		SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: namespaceOptions(pod, p.UserNamespace),
			Privileged:       hasPrivilegedContainer(pod),
			Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
		},
		Overhead:  overheadResources(pod, res),
		Resources: sandboxResources(pod, res),
		Sysctls:   defaults.ForPod(pod),
	}
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return lc
	}
	if sc.RunAsUser != nil {
		lc.SecurityContext.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
	}
	if sc.RunAsGroup != nil {
		lc.SecurityContext.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
	}
	lc.SecurityContext.SupplementalGroups, lc.SecurityContext.SupplementalGroupsPolicy = podGroups(sc)
	if len(p.ExtraGroups) > 0 { // upstream's sandbox order: fsGroup, the volumes', supplementalGroups
		groups := lc.SecurityContext.SupplementalGroups[:0:0]
		if sc.FSGroup != nil {
			groups = append(groups, *sc.FSGroup)
		}
		groups = append(append(groups, p.ExtraGroups...), sc.SupplementalGroups...)
		lc.SecurityContext.SupplementalGroups = groups
	}
	lc.SecurityContext.SelinuxOptions = selinuxOptions(sc.SELinuxOptions)
	if len(sc.Sysctls) > 0 {
		if lc.Sysctls == nil {
			lc.Sysctls = make(map[string]string, len(sc.Sysctls))
		}
		for _, s := range sc.Sysctls {
			lc.Sysctls[s.Name] = s.Value
		}
	}
	return lc
}
