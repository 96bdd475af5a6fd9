package containerconfig

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/expansion"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ContainerParams is everything a container config is built from. The
// caller resolves what needs the world (image, mounts, environment) and
// passes the values in.
type ContainerParams struct {
	Pod       *corev1.Pod
	Container *corev1.Container
	// Type is TypeInit, TypeRegular or TypeEphemeral.
	Type string
	// Hash is podplan.HashContainer of the container spec.
	Hash         uint64
	RestartCount int
	// ImageRef is the image to run: the runtime's image ID when the pull
	// resolved one, else the image as the pod names it.
	ImageRef string
	// TerminationMessageHostPath is the host file mounted at the
	// container's terminationMessagePath ("" for none).
	TerminationMessageHostPath string
	// Mounts are the container's volumeMounts, resolved (kuberuntime's
	// resolveMounts).
	Mounts []*runtimeapi.Mount
	// Devices are the container's volumeDevices, resolved (kuberuntime's
	// deviceSpecs).
	Devices []*runtimeapi.Device
	// ExtraGroups are the supplemental groups the pod's volumes add (their
	// PersistentVolumes' pv.beta.kubernetes.io/gid), after the pod's own.
	ExtraGroups []int64
	// Node holds the node settings of the Linux resources and security.
	Node Node
	// Env is the container's environment, resolved (kuberuntime's
	// resolveEnv), in the CRI's order.
	Env []*runtimeapi.KeyValue
	// Vars is Env as a map, for $(VAR) in command and args.
	Vars map[string]string
	// HostsMount is the managed /etc/hosts (nil for none), mounted last.
	HostsMount *runtimeapi.Mount
	// UserNamespace is the pod's own user namespace (hostUsers: false),
	// the sandbox's; nil for the host's.
	UserNamespace *UserNamespace
	// CPUSet is the CPU manager's cpuset for the container (its exclusive
	// CPUs or the shared pool), the resources' cpuset_cpus; "" is none.
	CPUSet string
	// CPUSetMems is the memory manager's NUMA nodes for the container
	// (upstream's PreCreateContainer), the resources' cpuset_mems; "" is
	// none.
	CPUSetMems string
	// TargetID is, for an ephemeral container with a targetContainerName,
	// the runtime ID of the target's running instance (the plan's
	// podplan.EphemeralStart.TargetID): the container joins its PID
	// namespace. "" for none.
	TargetID string
	// DevicePlugins are what the device plugins' Allocate responses add
	// beside the environment, mounts and devices (which come first in
	// Env, Mounts and Devices): annotations, under the kubelet's own, and
	// CDI devices.
	DevicePlugins DevicePluginOptions
	// CDIDevices are the CDI devices of the container's ResourceClaims
	// (kuberuntime's cdiDevices), before the device plugins' in the
	// config's CDIDevices.
	CDIDevices []*runtimeapi.CDIDevice
}

// DevicePluginOptions are a container's device plugin annotations and CDI
// devices (internal/node/devicemanager's ContainerOptions).
type DevicePluginOptions struct {
	Annotations map[string]string
	CDIDevices  []*runtimeapi.CDIDevice
}

// Container builds the ContainerConfig for one container (upstream
// generateContainerConfig). It is pure; its errors are
// configuration errors (CreateContainerConfigError).
func Container(p ContainerParams) (*runtimeapi.ContainerConfig, error) {
	pod, c := p.Pod, p.Container
	security, err := containerSecurity(pod, c, p.Node, p.UserNamespace, p.ExtraGroups)
	if err != nil {
		return nil, err
	}
	command, args := expandCommand(c, p.Vars)
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{
			Name:    c.Name,
			Attempt: uint32(p.RestartCount),
		},
		Image:       &runtimeapi.ImageSpec{Image: p.ImageRef, UserSpecifiedImage: c.Image},
		Command:     command,
		Args:        args,
		WorkingDir:  c.WorkingDir,
		Envs:        p.Env,
		Labels:      containerLabels(pod, c),
		Annotations: containerAnnotations(pod, c, p.Type, p.Hash, p.RestartCount),
		LogPath:     podutil.ContainerLogFile(c.Name, p.RestartCount),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       containerResources(pod, c, p.Node, p.CPUSet),
			SecurityContext: security,
		},
	}
	cfg.Linux.Resources.CpusetMems = p.CPUSetMems
	for k, v := range p.DevicePlugins.Annotations {
		// The kubelet's own annotations win over a plugin's, as upstream.
		if _, ok := cfg.Annotations[k]; !ok {
			cfg.Annotations[k] = v
		}
	}
	targetPIDNamespace(security.NamespaceOptions, p.TargetID)
	cfg.Mounts = append(cfg.Mounts, p.Mounts...)
	cfg.Devices = p.Devices
	// The claims' CDI devices, then the device plugins', as upstream's
	// GetResources gathers them.
	cfg.CDIDevices = append(slices.Clone(p.CDIDevices), p.DevicePlugins.CDIDevices...)
	if len(cfg.CDIDevices) == 0 {
		cfg.CDIDevices = nil
	}
	if p.TerminationMessageHostPath != "" && c.TerminationMessagePath != "" {
		cfg.Mounts = append(cfg.Mounts, &runtimeapi.Mount{
			HostPath:       p.TerminationMessageHostPath,
			ContainerPath:  c.TerminationMessagePath,
			SelinuxRelabel: p.Node.SELinux,
		})
	}
	if p.HostsMount != nil {
		cfg.Mounts = append(cfg.Mounts, p.HostsMount)
	}
	idmapMounts(cfg.Mounts, security.NamespaceOptions.UsernsOptions)
	return cfg, nil
}

// idmapMounts gives every mount of a container in its pod's own user
// namespace the namespace's mappings, so the runtime idmaps it: volumes
// and the files berth writes for the pod (/etc/hosts, the termination
// log), owned by host IDs, show as owned by the same IDs inside, as
// upstream's applyPlatformSpecificContainerConfig does. Mounts of a pod in
// the host's user namespace are left alone.
func idmapMounts(mounts []*runtimeapi.Mount, u *runtimeapi.UserNamespace) {
	if u.GetMode() != runtimeapi.NamespaceMode_POD {
		return
	}
	for _, m := range mounts {
		m.UidMappings, m.GidMappings = u.GetUids(), u.GetGids()
	}
}

// targetPIDNamespace puts a container with a target into the target's
// PID namespace (upstream generateLinuxContainerConfig with nsTarget):
// only when it would otherwise have its own (a pod sharing the host's or
// the pod's PID namespace already sees the target's processes).
func targetPIDNamespace(ns *runtimeapi.NamespaceOption, targetID string) {
	if targetID == "" || ns.GetPid() != runtimeapi.NamespaceMode_CONTAINER {
		return
	}
	ns.Pid = runtimeapi.NamespaceMode_TARGET
	ns.TargetId = targetID
}

// expandCommand expands $(VAR) references in the container's command and
// args (upstream ExpandContainerCommandAndArgs). Empty stays nil.
func expandCommand(c *corev1.Container, vars map[string]string) (command, args []string) {
	for _, s := range c.Command {
		command = append(command, expansion.Expand(s, vars))
	}
	for _, s := range c.Args {
		args = append(args, expansion.Expand(s, vars))
	}
	return command, args
}
