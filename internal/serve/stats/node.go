package stats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// nodeReader reads the node's figures from /proc and the root cgroups. It
// holds only paths and is safe for concurrent use.
type nodeReader struct {
	proc, cgroup string
}

// unified reports a cgroup v2 (unified) hierarchy. A hybrid host (v1
// controllers, v2 mounted under unified/) reads as v1.
func (r nodeReader) unified() bool {
	_, err := os.Stat(filepath.Join(r.cgroup, "cgroup.controllers"))
	return err == nil
}

func (r nodeReader) read(parts ...string) (string, error) {
	path := filepath.Join(parts...)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %q: %w", path, err)
	}
	return string(b), nil
}

// cpuUsage is the node's cumulative CPU time in nanoseconds.
func (r nodeReader) cpuUsage() (uint64, error) {
	if r.unified() {
		data, err := r.read(r.cgroup, "cpu.stat")
		if err != nil {
			return 0, err
		}
		ns, ok := cpuV2(parseKeyValues(data))
		if !ok {
			return 0, fmt.Errorf("read node cpu: no usage_usec in %q", filepath.Join(r.cgroup, "cpu.stat"))
		}
		return ns, nil
	}
	data, err := r.read(r.cgroup, "cpuacct", "cpuacct.usage")
	if err != nil {
		return 0, err
	}
	return parseUint(data)
}

// memory is the node's memory.
func (r nodeReader) memory() (memory, error) {
	mi, err := r.read(r.proc, "meminfo")
	if err != nil {
		return memory{}, err
	}
	meminfo := parseMeminfo(mi)
	if r.unified() {
		stat, err := r.read(r.cgroup, "memory.stat")
		if err != nil {
			return memory{}, err
		}
		return memoryV2(meminfo, parseKeyValues(stat)).withSwap(meminfo), nil
	}
	usageData, err := r.read(r.cgroup, "memory", "memory.usage_in_bytes")
	if err != nil {
		return memory{}, err
	}
	usage, err := parseUint(usageData)
	if err != nil {
		return memory{}, err
	}
	stat, err := r.read(r.cgroup, "memory", "memory.stat")
	if err != nil {
		return memory{}, err
	}
	return memoryV1(usage, parseKeyValues(stat), meminfo["MemTotal"]).withSwap(meminfo), nil
}

// bootTime is when the node booted: the node's start time.
func (r nodeReader) bootTime() (time.Time, error) {
	data, err := r.read(r.proc, "stat")
	if err != nil {
		return time.Time{}, err
	}
	btime, err := parseBootTime(data)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(btime, 0), nil
}

// rlimit is the node's process limit (the smaller of pid_max and
// threads-max) and its number of processes, as upstream reports them.
func (r nodeReader) rlimit(now time.Time) (*statsapi.RlimitStats, error) {
	out := &statsapi.RlimitStats{Time: metav1.NewTime(now)}
	var maxPID int64
	for _, name := range []string{"pid_max", "threads-max"} {
		data, err := r.read(r.proc, "sys", "kernel", name)
		if err != nil {
			return nil, err
		}
		v, err := parseUint(data)
		if err != nil {
			return nil, err
		}
		if maxPID == 0 || int64(v) < maxPID {
			maxPID = int64(v)
		}
	}
	out.MaxPID = &maxPID
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		return nil, fmt.Errorf("read sysinfo: %w", err)
	}
	procs := int64(info.Procs)
	out.NumOfRunningProcesses = &procs
	return out, nil
}

// statfs returns the capacity, availability and inodes of the filesystem
// holding path.
func statfs(path string, now time.Time) (*statsapi.FsStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, fmt.Errorf("statfs %q: %w", path, err)
	}
	return statfsStats(&st, now), nil
}

// network is the host network namespace's interfaces (berth runs in it):
// <proc>/net/dev.
func (r nodeReader) network(now time.Time) (*statsapi.NetworkStats, error) {
	f, err := os.Open(filepath.Join(r.proc, "net", "dev"))
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", filepath.Join(r.proc, "net", "dev"), err)
	}
	defer f.Close()
	n := networkFromInterfaces(parseNetDev(f))
	if n != nil {
		n.Time = metav1.NewTime(now)
	}
	return n, nil
}

// machine is what cAdvisor's machine metrics report.
type machine struct {
	Cores                         int
	MemoryBytes                   uint64
	MachineID, SystemUUID, BootID string
}

// machine reads the machine's logical CPUs, memory and identity; an
// identity that cannot be read is empty, as cAdvisor leaves it.
func (r nodeReader) machine() (machine, error) {
	var m machine
	f, err := os.Open(filepath.Join(r.proc, "cpuinfo"))
	if err != nil {
		return m, fmt.Errorf("open %q: %w", filepath.Join(r.proc, "cpuinfo"), err)
	}
	m.Cores = countProcessors(f)
	_ = f.Close()
	mi, err := r.read(r.proc, "meminfo")
	if err != nil {
		return m, err
	}
	m.MemoryBytes = parseMeminfo(mi)["MemTotal"]
	first := func(paths ...string) string {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				return strings.TrimSpace(string(b))
			}
		}
		return ""
	}
	m.MachineID = first("/etc/machine-id", "/var/lib/dbus/machine-id")
	m.SystemUUID = first("/sys/class/dmi/id/product_uuid")
	m.BootID = first(filepath.Join(r.proc, "sys", "kernel", "random", "boot_id"))
	return m, nil
}
