package cpumanager

import (
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// SysfsRoot is where Discover reads the machine's topology from, as an
// fs.FS: os.DirFS(SysfsRoot) on a real host.
const SysfsRoot = "/sys/devices/system"

var nodeDir = regexp.MustCompile(`^node([0-9]+)$`)

// maxSysfsFile bounds one sysfs file Discover reads.
const maxSysfsFile = 64 << 10

// Discover reads the topology of the online CPUs from sysfs (rooted at
// /sys/devices/system), as cadvisor does for upstream's topology.Discover:
// the socket from topology/physical_package_id, the core from
// topology/thread_siblings_list (its lowest CPU, upstream's unique core
// ID), the NUMA node from the cpuN/nodeM link (node 0 without NUMA), the
// uncore cache from the level 3 cache's id (the socket without one).
func Discover(sys fs.FS) (*Topology, error) {
	s, err := readFile(sys, "cpu/online")
	if err != nil {
		return nil, err
	}
	online, err := cpuset.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parse cpu/online %q: %w", s, err)
	}
	if online.Size() == 0 {
		return nil, fmt.Errorf("could not detect number of cpus")
	}
	d := CPUDetails{}
	for _, cpu := range online.List() {
		info, err := discoverCPU(sys, cpu, online)
		if err != nil {
			return nil, err
		}
		d[cpu] = info
	}
	return NewTopology(d), nil
}

func discoverCPU(sys fs.FS, cpu int, online cpuset.CPUSet) (CPUInfo, error) {
	dir := "cpu/cpu" + strconv.Itoa(cpu)
	socket, err := readInt(sys, dir+"/topology/physical_package_id")
	if err != nil {
		return CPUInfo{}, err
	}
	s, err := readFile(sys, dir+"/topology/thread_siblings_list")
	if err != nil {
		return CPUInfo{}, err
	}
	siblings, err := cpuset.Parse(s)
	if err != nil {
		return CPUInfo{}, fmt.Errorf("parse %s/topology/thread_siblings_list %q: %w", dir, s, err)
	}
	siblings = siblings.Intersection(online)
	if siblings.IsEmpty() {
		siblings = cpuset.New(cpu)
	}
	info := CPUInfo{SocketID: socket, CoreID: siblings.List()[0], UncoreCacheID: socket}
	entries, err := fs.ReadDir(sys, dir)
	if err != nil {
		return CPUInfo{}, fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range entries {
		if m := nodeDir.FindStringSubmatch(e.Name()); m != nil {
			info.NUMANodeID, _ = strconv.Atoi(m[1])
			break
		}
	}
	if id, ok := uncoreCache(sys, dir); ok {
		info.UncoreCacheID = id
	}
	return info, nil
}

// uncoreCache returns the id of the CPU's level 3 cache, if sysfs says.
func uncoreCache(sys fs.FS, dir string) (int, bool) {
	entries, err := fs.ReadDir(sys, dir+"/cache")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		if level, err := readInt(sys, dir+"/cache/"+e.Name()+"/level"); err != nil || level != 3 {
			continue
		}
		if id, err := readInt(sys, dir+"/cache/"+e.Name()+"/id"); err == nil {
			return id, true
		}
	}
	return 0, false
}

func readFile(sys fs.FS, name string) (string, error) {
	f, err := sys.Open(name)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSysfsFile))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(sys fs.FS, name string) (int, error) {
	s, err := readFile(sys, name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("parse %s %q: %w", name, s, err)
	}
	return n, nil
}
