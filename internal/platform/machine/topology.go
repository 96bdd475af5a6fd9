package machine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// SystemDir is where ReadTopology's file system is rooted on a Linux
// host: os.DirFS(SystemDir).
const SystemDir = "/sys/devices/system"

// maxSysfsFile bounds one sysfs file ReadTopology reads; a larger one is
// an error, not a truncated value.
const maxSysfsFile = 64 << 10

// nodeDir names a NUMA node: node/nodeN, and the cpu/cpuM/nodeN link.
var nodeDir = regexp.MustCompile(`^node([0-9]+)$`)

// Topology is the host's NUMA and CPU topology, what cadvisor's
// GetNodesInfo gives upstream's CPU, memory and topology managers. It is
// a plain value built once: read it from any goroutine, change nothing.
type Topology struct {
	// Nodes are the NUMA nodes, by ascending ID; never empty.
	Nodes []NUMANode
	// CPUs are the online CPUs by ID; never empty.
	CPUs map[int]CPU
}

// NUMANode is one NUMA node.
type NUMANode struct {
	ID int
	// CPUs are the node's online CPUs.
	CPUs cpuset.CPUSet
	// MemTotal is the node's memory in bytes (MemTotal of its meminfo).
	MemTotal uint64
	// HugePages maps a page size, written as in Info.HugePages ("2Mi"),
	// to the bytes of the pages of that size reserved on the node.
	HugePages map[string]uint64
	// Distances[j] is the distance from this node to node j; nil when
	// sysfs has no distance file for the node (as cadvisor).
	Distances []uint64
}

// CPU is where one online CPU sits.
type CPU struct {
	SocketID int
	// CoreID is the lowest online CPU among the thread siblings,
	// upstream's unique core ID.
	CoreID     int
	NUMANodeID int
	// UncoreCacheID is the level 3 cache's id, the socket without one.
	UncoreCacheID int
}

// ReadTopology reads the host topology from sys, an fs.FS rooted at
// /sys/devices/system (SystemDir), as cadvisor's GetNodesInfo does:
//
//   - the online CPUs (cpu/online); for each, the socket from
//     topology/physical_package_id, the core from
//     topology/thread_siblings_list (its lowest online CPU), the NUMA node
//     from the cpuN/nodeM link (node 0 without one), the uncore cache from
//     the level 3 cache's id (the socket without one);
//   - the NUMA nodes node/nodeN: MemTotal of nodeN/meminfo, the huge pages
//     of nodeN/hugepages, the distances of nodeN/distance.
//
// A host without node directories (a kernel without NUMA) has one node,
// 0, holding every online CPU and the machine's memory and huge pages
// (host.MemoryBytes, host.HugePages from /proc/meminfo and
// /sys/kernel/mm/hugepages). cadvisor there groups the CPUs by socket and
// reports no memory, which would leave upstream's memory manager nothing
// to hand out; berth's managers have always seen node 0 there, and now
// all see it the same.
func ReadTopology(sys fs.FS, host Info) (*Topology, error) {
	cpus, err := readCPUs(sys)
	if err != nil {
		return nil, err
	}
	t := &Topology{CPUs: cpus}
	ids, err := nodeIDs(sys)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		t.Nodes = []NUMANode{{ID: 0, CPUs: t.cpusOf(0), MemTotal: nonNegative(host.MemoryBytes), HugePages: wholeHugePages(host.HugePages)}}
		return t, nil
	}
	for _, id := range ids {
		n, err := readNode(sys, id)
		if err != nil {
			return nil, err
		}
		n.CPUs = t.cpusOf(id)
		t.Nodes = append(t.Nodes, n)
	}
	return t, nil
}

// cpusOf is the set of online CPUs on a node.
func (t *Topology) cpusOf(node int) cpuset.CPUSet {
	var ids []int
	for id, c := range t.CPUs {
		if c.NUMANodeID == node {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...)
}

func readCPUs(sys fs.FS) (map[int]CPU, error) {
	s, err := readSysfs(sys, "cpu/online")
	if err != nil {
		return nil, err
	}
	online, err := cpuset.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parse cpu/online %q: %w", s, err)
	}
	if online.Size() == 0 {
		return nil, errors.New("could not detect number of cpus")
	}
	cpus := make(map[int]CPU, online.Size())
	for _, id := range online.List() {
		c, err := readCPU(sys, id, online)
		if err != nil {
			return nil, err
		}
		cpus[id] = c
	}
	return cpus, nil
}

func readCPU(sys fs.FS, cpu int, online cpuset.CPUSet) (CPU, error) {
	dir := "cpu/cpu" + strconv.Itoa(cpu)
	socket, err := readInt(sys, dir+"/topology/physical_package_id")
	if err != nil {
		return CPU{}, err
	}
	s, err := readSysfs(sys, dir+"/topology/thread_siblings_list")
	if err != nil {
		return CPU{}, err
	}
	siblings, err := cpuset.Parse(s)
	if err != nil {
		return CPU{}, fmt.Errorf("parse %s/topology/thread_siblings_list %q: %w", dir, s, err)
	}
	siblings = siblings.Intersection(online)
	if siblings.IsEmpty() {
		siblings = cpuset.New(cpu)
	}
	c := CPU{SocketID: socket, CoreID: siblings.List()[0], UncoreCacheID: socket}
	entries, err := fs.ReadDir(sys, dir)
	if err != nil {
		return CPU{}, fmt.Errorf("read directory %q: %w", dir, err)
	}
	for _, e := range entries {
		if m := nodeDir.FindStringSubmatch(e.Name()); m != nil {
			if c.NUMANodeID, err = strconv.Atoi(m[1]); err != nil {
				return CPU{}, fmt.Errorf("parse NUMA node of %q: %w", dir, err)
			}
			break
		}
	}
	if id, ok := uncoreCache(sys, dir); ok {
		c.UncoreCacheID = id
	}
	return c, nil
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

// nodeIDs lists the nodeN directories under node/, ascending; none when
// there is no node/.
func nodeIDs(sys fs.FS) ([]int, error) {
	entries, err := fs.ReadDir(sys, "node")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read directory %q: %w", "node", err)
	}
	var ids []int
	for _, e := range entries {
		if m := nodeDir.FindStringSubmatch(e.Name()); m != nil {
			id, err := strconv.Atoi(m[1])
			if err != nil {
				return nil, fmt.Errorf("parse NUMA node %q: %w", e.Name(), err)
			}
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids, nil
}

func readNode(sys fs.FS, id int) (NUMANode, error) {
	dir := "node/node" + strconv.Itoa(id)
	n := NUMANode{ID: id}
	var err error
	if n.MemTotal, err = nodeMemTotal(sys, dir+"/meminfo"); err != nil {
		return NUMANode{}, err
	}
	if n.HugePages, err = nodeHugePages(sys, dir+"/hugepages"); err != nil {
		return NUMANode{}, err
	}
	if n.Distances, err = nodeDistances(sys, dir+"/distance"); err != nil {
		return NUMANode{}, err
	}
	return n, nil
}

// nodeMemTotal reads "Node N MemTotal: X kB" from a node's meminfo.
func nodeMemTotal(sys fs.FS, name string) (uint64, error) {
	s, err := readSysfs(sys, name)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 5 && fields[2] == "MemTotal:" && fields[4] == "kB" {
			kb, err := strconv.ParseUint(fields[3], 10, 54)
			if err != nil {
				return 0, fmt.Errorf("parse MemTotal in %q: %w", name, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("read %q: no MemTotal", name)
}

// nodeHugePages reads each hugepages-<size>kB/nr_hugepages of a node;
// none when the kernel has no huge pages.
func nodeHugePages(sys fs.FS, dir string) (map[string]uint64, error) {
	out := map[string]uint64{}
	entries, err := fs.ReadDir(sys, dir)
	if err != nil {
		return out, nil
	}
	for _, e := range entries {
		size, ok := ParseHugePageDir(e.Name())
		if !ok {
			continue
		}
		name := dir + "/" + e.Name() + "/nr_hugepages"
		s, err := readSysfs(sys, name)
		if err != nil {
			return nil, err
		}
		pages, err := strconv.ParseUint(s, 10, 64)
		if err == nil && pages > math.MaxUint64/uint64(size) {
			err = strconv.ErrRange
		}
		if err != nil {
			return nil, fmt.Errorf("parse %q: %w", name, err)
		}
		out[HugePageSize(size)] = pages * uint64(size)
	}
	return out, nil
}

// nodeDistances reads a node's distance file; nil without one.
func nodeDistances(sys fs.FS, name string) ([]uint64, error) {
	s, err := readSysfs(sys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, f := range strings.Fields(s) {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse %q: %w", name, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// wholeHugePages is the machine's huge pages as node 0's.
func wholeHugePages(in map[string]int64) map[string]uint64 {
	out := make(map[string]uint64, len(in))
	for size, b := range in {
		out[size] = nonNegative(b)
	}
	return out
}

func nonNegative(v int64) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}

// readSysfs reads one sysfs file, at most maxSysfsFile bytes, without
// the surrounding white space.
func readSysfs(sys fs.FS, name string) (string, error) {
	f, err := sys.Open(name)
	if err != nil {
		return "", fmt.Errorf("open %q: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSysfsFile+1))
	if err != nil {
		return "", fmt.Errorf("read %q: %w", name, err)
	}
	if len(b) > maxSysfsFile {
		return "", fmt.Errorf("read %q: larger than %d bytes", name, maxSysfsFile)
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(sys fs.FS, name string) (int, error) {
	s, err := readSysfs(sys, name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("parse %q: %w", name, err)
	}
	return n, nil
}
