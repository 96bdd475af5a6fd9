package machine

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

// Host is what Read looks at. OSHost returns the real one; tests inject
// their own. Read calls the functions from its own goroutine only.
type Host struct {
	ReadFile func(name string) ([]byte, error)
	ReadDir  func(name string) ([]fs.DirEntry, error)
	// KernelRelease is uname's release ("6.1.0-18-amd64").
	KernelRelease func() (string, error)
	// FSCapacity is the size in bytes of the filesystem holding path.
	FSCapacity func(path string) (int64, error)
	// NumCPU is the fallback when /proc/cpuinfo lists no processor.
	NumCPU func() int
	// CgroupV2 reports a host on the unified cgroup v2 hierarchy.
	CgroupV2 func() bool
	// SELinux reports a host with SELinux on; nil: off.
	SELinux func() bool
}

// The files Read opens, named once.
const (
	cpuInfoFile = "/proc/cpuinfo"
	memInfoFile = "/proc/meminfo"
	swapsFile   = "/proc/swaps"
	// memswFile is the cgroup v1 swap accounting file, selfCgroupFile
	// where berth's v2 cgroup is read, cgroup2Root the v2 mount and
	// swapMaxFile the v2 swap limit: upstream's swap controller check.
	memswFile       = "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"
	selfCgroupFile  = "/proc/self/cgroup"
	cgroup2Root     = "/sys/fs/cgroup"
	swapMaxFile     = cgroupmath.SwapMax
	pidMaxFile      = "/proc/sys/kernel/pid_max"
	threadsMaxFile  = "/proc/sys/kernel/threads-max"
	hugePagesDir    = "/sys/kernel/mm/hugepages"
	productUUIDFile = "/sys/class/dmi/id/product_uuid"
	bootIDFile      = "/proc/sys/kernel/random/boot_id"
	// possibleCPUsFile lists the CPUs the kernel could bring online, and
	// thermalThrottleFormat is a CPU's thermal_throttle directory: as
	// upstream's securitycontext (TestThermalThrottleMatchesUpstream).
	possibleCPUsFile      = "/sys/devices/system/cpu/possible"
	thermalThrottleFormat = "/sys/devices/system/cpu/cpu%d/thermal_throttle"
)

var (
	machineIDFiles = []string{"/etc/machine-id", "/var/lib/dbus/machine-id"}
	osReleaseFiles = []string{"/etc/os-release", "/usr/lib/os-release"}
)

// Read gathers Info. Facts that may be missing on a healthy host (system
// UUID, machine ID, huge pages, swap) are left empty; an error is returned
// when memory, the kernel release or the root filesystem cannot be read,
// together with the facts that could be. Huge pages and the filesystem's
// size can change while berth runs; a caller that caches Info should read
// it again now and then.
func Read(rootDir string, h Host) (Info, error) {
	info := Info{
		OperatingSystem: runtime.GOOS,
		Architecture:    runtime.GOARCH,
		MachineID:       firstID(h, machineIDFiles),
		SystemUUID:      firstID(h, []string{productUUIDFile}),
		BootID:          firstID(h, []string{bootIDFile}),
		OSImage:         "Linux",
	}
	var errs []error
	if b, err := h.ReadFile(cpuInfoFile); err == nil {
		info.NumCPU = ParseCPUInfo(string(b))
	}
	if info.NumCPU == 0 {
		info.NumCPU = h.NumCPU()
	}
	b, err := h.ReadFile(memInfoFile)
	if err == nil {
		info.MemoryBytes, info.SwapBytes, err = ParseMemInfo(string(b))
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("read memory: %w", err))
	}
	if b, err := h.ReadFile(swapsFile); err == nil {
		// A missing /proc/swaps means no swap, as upstream assumes.
		info.SwapOn = ParseSwapsOn(b)
	}
	info.HugePages = readHugePages(h)
	info.MaxPID = readMaxPID(h)
	info.ThermalThrottleDirs = thermalThrottleDirs(h)
	info.CgroupV2 = h.CgroupV2()
	info.SELinux = h.SELinux != nil && h.SELinux()
	info.SwapController = swapController(h, info.CgroupV2)
	if rel, err := h.KernelRelease(); err == nil {
		info.KernelVersion = rel
	} else {
		errs = append(errs, fmt.Errorf("read kernel release: %w", err))
	}
	for _, f := range osReleaseFiles {
		if b, err := h.ReadFile(f); err == nil {
			info.OSImage = ParseOSRelease(string(b))
			break
		}
	}
	if info.RootFSBytes, err = h.FSCapacity(rootDir); err != nil {
		errs = append(errs, fmt.Errorf("stat filesystem of %q: %w", rootDir, err))
	}
	return info, errors.Join(errs...)
}

// swapController reports whether the kernel accounts swap per cgroup, as
// upstream's checkSwapControllerAvailability: on cgroup v1 the memory
// root has memory.memsw.limit_in_bytes; on v2 berth's own cgroup (the
// root has none) has memory.swap.max. A file that cannot be read counts
// as absent.
func swapController(h Host, cgroupV2 bool) bool {
	p := memswFile
	if cgroupV2 {
		b, err := h.ReadFile(selfCgroupFile)
		if err != nil {
			return false
		}
		self, ok := ParseUnifiedCgroup(string(b))
		if !ok {
			return false
		}
		p = path.Join(cgroup2Root, self, swapMaxFile)
	}
	_, err := h.ReadFile(p)
	return err == nil
}

// readMaxPID returns the smaller of pid_max and threads-max, as upstream's
// pidlimit.Stats; a file that cannot be read or parsed is skipped.
func readMaxPID(h Host) int64 {
	var out int64
	for _, f := range []string{pidMaxFile, threadsMaxFile} {
		b, err := h.ReadFile(f)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 {
			continue
		}
		if out == 0 || v < out {
			out = v
		}
	}
	return out
}

// firstID returns the trimmed content of the first readable file, or "".
func firstID(h Host, files []string) string {
	for _, f := range files {
		if b, err := h.ReadFile(f); err == nil {
			return ParseID(string(b))
		}
	}
	return ""
}

// thermalThrottleDirs lists the thermal_throttle directories of the
// possible CPUs (all NumCPU when the list cannot be read) that exist, as
// upstream finds them.
func thermalThrottleDirs(h Host) []string {
	var cpus []int
	if b, err := h.ReadFile(possibleCPUsFile); err == nil {
		if set, err := cpuset.Parse(strings.TrimSpace(string(b))); err == nil {
			cpus = set.List()
		}
	}
	if len(cpus) == 0 {
		for i := range h.NumCPU() {
			cpus = append(cpus, i)
		}
	}
	var out []string
	for _, cpu := range cpus {
		dir := fmt.Sprintf(thermalThrottleFormat, cpu)
		if _, err := h.ReadDir(dir); err == nil {
			out = append(out, dir)
		}
	}
	return out
}

// readHugePages reads the reserved pages of every size; nil without any.
func readHugePages(h Host) map[string]int64 {
	entries, err := h.ReadDir(hugePagesDir)
	if err != nil {
		return nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var out map[string]int64
	for _, e := range entries {
		size, ok := ParseHugePageDir(e.Name())
		if !ok {
			continue
		}
		b, err := h.ReadFile(hugePagesDir + "/" + e.Name() + "/nr_hugepages")
		if err != nil {
			continue
		}
		n, err := parseCount(ParseID(string(b)))
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[HugePageSize(size)] = size * n
	}
	return out
}
