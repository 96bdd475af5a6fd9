package cm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The enforceNodeAllocatable keys of v1.37 (pkg/kubelet/types).
const (
	EnforcePods                     = "pods"
	EnforceSystemReserved           = "system-reserved"
	EnforceSystemReservedCompressed = "system-reserved-compressible"
	EnforceKubeReserved             = "kube-reserved"
	EnforceKubeReservedCompressed   = "kube-reserved-compressible"
	EnforceNone                     = "none"
)

// Drivers.
const (
	DriverCgroupfs = "cgroupfs"
	DriverSystemd  = "systemd"
)

// PickDriver is the cgroup driver berth uses: the runtime's when it
// reports one, as upstream (KubeletCgroupDriverFromCRI, GA), else the
// configured one; overridden says the runtime's differs from it.
func PickDriver(configured, fromRuntime string) (driver string, overridden bool) {
	if fromRuntime == "" || fromRuntime == configured {
		return configured, false
	}
	return fromRuntime, true
}

// Config is what the Manager needs; config.Config gives it, validated by
// the config package with upstream's rules.
type Config struct {
	// Driver is "cgroupfs" or "systemd", matching the runtime's.
	Driver string
	// Root is cgroupRoot ("" is "/"); kubepods is created under it, which
	// must exist.
	Root string
	// EnforceNodeAllocatable lists the enforced keys (Enforce*).
	EnforceNodeAllocatable []string
	// Capacity is the node's cpu, memory and "pid" capacity.
	Capacity                     corev1.ResourceList
	SystemReserved, KubeReserved corev1.ResourceList
	// SystemReservedCgroup and KubeReservedCgroup are cgroupfs names
	// ("/system.slice"), required when their keys are enforced.
	SystemReservedCgroup, KubeReservedCgroup string
	// Pod holds cpuCFSQuota, cpuCFSQuotaPeriod, podPidsLimit and the
	// memory QoS settings (its AllocatableMemory is ignored: the Manager
	// computes it from Capacity and the reserved resources).
	Pod PodOptions
	// QOSReservedMemory is qosReserved's memory percentage (0 to 100) when
	// the QOSReserved gate is on; nil otherwise.
	QOSReservedMemory *int64
	// Mounts maps each cgroup v1 subsystem to its mount point, or "" to the
	// cgroup v2 mount point (then the only key); nil reads the host's.
	Mounts map[string]string
}

func (c *Config) validate() error {
	if c.Driver != DriverCgroupfs && c.Driver != DriverSystemd {
		return fmt.Errorf("invalid cgroup driver %q", c.Driver)
	}
	if c.Root != "" && !strings.HasPrefix(c.Root, "/") {
		return fmt.Errorf("invalid cgroup root %q: must be an absolute path", c.Root)
	}
	if p := c.QOSReservedMemory; p != nil && (*p < 0 || *p > 100) {
		return fmt.Errorf("invalid qosReserved memory percentage %d: must be between 0 and 100", *p)
	}
	if c.enforced(EnforceSystemReserved) || c.enforced(EnforceSystemReservedCompressed) {
		if c.SystemReservedCgroup == "" {
			return errors.New("enforcing system-reserved needs systemReservedCgroup")
		}
	}
	if c.enforced(EnforceKubeReserved) || c.enforced(EnforceKubeReservedCompressed) {
		if c.KubeReservedCgroup == "" {
			return errors.New("enforcing kube-reserved needs kubeReservedCgroup")
		}
	}
	return nil
}

func (c *Config) enforced(key string) bool {
	return slices.Contains(c.EnforceNodeAllocatable, key)
}

// rootName is cgroupRoot as a Name.
func (c *Config) rootName() Name { return ParseCgroupfs(c.Root) }

// kubepods is the node allocatable cgroup: cgroupRoot/kubepods.
func (c *Config) kubepods() Name { return c.rootName().Child(kubepodsName) }

// qosName is the cgroup of a QoS class: kubepods itself for Guaranteed.
func (c *Config) qosName(class corev1.PodQOSClass) Name {
	switch class {
	case corev1.PodQOSBurstable, corev1.PodQOSBestEffort:
		return c.kubepods().Child(strings.ToLower(string(class)))
	}
	return c.kubepods()
}

// podName is the cgroup of a pod of the given class.
func (c *Config) podName(class corev1.PodQOSClass, uid types.UID) Name {
	return c.qosName(class).Child(podComponent(uid))
}

// driverName is n in the driver's form: a cgroupfs path or a systemd slice
// path.
func (c *Config) driverName(n Name) (string, error) {
	if c.Driver == DriverSystemd {
		return n.Systemd()
	}
	return n.Cgroupfs(), nil
}

// reservedName turns a reserved cgroup's configured name into a Name, as
// upstream's CgroupName: a systemd slice with the systemd driver, a
// cgroupfs path otherwise.
func (c *Config) reservedName(configured string) Name {
	if c.Driver == DriverSystemd {
		return ParseSystemd(configured)
	}
	return ParseCgroupfs(configured)
}

// kubepodsResources is what kubepods is set to: the node's capacity, or
// the enforced allocatable when "pods" is enforced (upstream's
// enforceNodeAllocatableCgroups: cpu shares always, so pods are not
// starved by the default shares).
func (c *Config) kubepodsResources() Resources {
	limit := c.Capacity
	if c.enforced(EnforcePods) {
		limit = EnforcedAllocatable(c.Capacity, c.SystemReserved, c.KubeReserved)
	}
	return ForReserved(limit, false)
}

// allocatableMemory is the node's memory less systemReserved and
// kubeReserved (upstream's GetNodeAllocatableAbsolute), whatever is
// enforced: what qosReserved and memory.high reserve from.
func (c *Config) allocatableMemory() int64 {
	q := EnforcedAllocatable(c.Capacity, c.SystemReserved, c.KubeReserved)[corev1.ResourceMemory]
	return q.Value()
}

// qosOptions are the QoS level cgroups' settings.
func (c *Config) qosOptions() QOSOptions {
	mem := c.Pod.Memory
	mem.AllocatableMemory = c.allocatableMemory()
	return QOSOptions{Memory: mem, ReservedMemoryPercent: c.QOSReservedMemory}
}
