package machine

// Info is what berth knows about the host. It is a plain value: copy it
// freely and read it from any goroutine.
type Info struct {
	// NumCPU is the number of logical CPUs.
	NumCPU int
	// MemoryBytes is MemTotal.
	MemoryBytes int64
	// SwapBytes is SwapTotal (0 without swap).
	SwapBytes int64
	// SwapOn: /proc/swaps lists a swap device or file (upstream's IsSwapOn,
	// what failSwapOn refuses).
	SwapOn bool
	// SwapController: the kernel accounts swap per cgroup, upstream's
	// checkSwapControllerAvailability (memory.memsw.limit_in_bytes of the
	// v1 memory root, memory.swap.max of berth's own v2 cgroup). Only
	// then does berth limit containers' swap.
	SwapController bool
	// HugePages maps a page size, written as a Kubernetes quantity ("2Mi",
	// "1Gi"), to the total bytes of the pages of that size the kernel has
	// reserved. The resource name is "hugepages-" + the key.
	HugePages map[string]int64

	MachineID     string
	SystemUUID    string
	BootID        string
	KernelVersion string
	OSImage       string
	// OperatingSystem and Architecture are GOOS and GOARCH, as upstream.
	OperatingSystem string
	Architecture    string

	// RootFSBytes is the capacity of the filesystem that holds the root
	// directory: the node's ephemeral-storage.
	RootFSBytes int64

	// ThermalThrottleDirs are the per-CPU thermal_throttle directories of
	// sysfs that exist, for the possible CPUs in order. Containers get them
	// masked, as upstream's securitycontext masks them.
	ThermalThrottleDirs []string

	// MaxPID is the smaller of kernel.pid_max and kernel.threads-max, 0
	// when neither can be read: upstream's "pid" capacity (pidlimit.Stats),
	// which the kubepods cgroup's pids.max is computed from.
	MaxPID int64

	// CgroupV2: the host runs the unified cgroup v2 hierarchy only
	// (upstream's IsCgroup2UnifiedMode), which decides memory.oom.group.
	CgroupV2 bool

	// SELinux: SELinux is on (platform/selinux.Host.Enabled), so the
	// runtime relabels the files berth mounts into containers.
	SELinux bool
}
