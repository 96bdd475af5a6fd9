package topology

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// NUMAInfo is the host's NUMA nodes and, when prefer-closest-numa-nodes
// is set, their distances (Distances[i][j] from node i to node j).
type NUMAInfo struct {
	Nodes     []int
	Distances map[int][]uint64
}

// DefaultAffinity is the mask of every NUMA node.
func (n *NUMAInfo) DefaultAffinity() Mask {
	m, _ := NewMask(n.Nodes...)
	return m
}

// narrowest is upstream's NUMAInfo.Narrowest.
func narrowest(m1, m2 Mask) Mask {
	if m1.IsNarrowerThan(m2) {
		return m1
	}
	return m2
}

// closest is upstream's NUMAInfo.Closest: the narrower mask, or of two as
// wide the one of the lower average distance, or of equal distance the
// lower one.
func (n *NUMAInfo) closest(m1, m2 Mask) Mask {
	if m1.Count() != m2.Count() {
		return narrowest(m1, m2)
	}
	d1, d2 := n.averageDistance(m1), n.averageDistance(m2)
	if d1 == d2 {
		if m1 < m2 {
			return m1
		}
		return m2
	}
	if d1 < d2 {
		return m1
	}
	return m2
}

// averageDistance is upstream's CalculateAverageFor.
func (n *NUMAInfo) averageDistance(m Mask) float64 {
	if m.Count() == 0 {
		return 0
	}
	var sum, count float64
	for _, a := range m.Bits() {
		for _, b := range m.Bits() {
			row := n.Distances[a]
			if b < len(row) {
				sum += float64(row[b])
			}
			count++
		}
	}
	return sum / count
}

var nodeDir = regexp.MustCompile(`^node([0-9]+)$`)

// maxSysfsFile bounds one sysfs file ReadNUMAInfo reads.
const maxSysfsFile = 64 << 10

// ReadNUMAInfo reads the NUMA nodes from sysfs (an fs.FS rooted at
// /sys/devices/system, as cpumanager.Discover's): the nodeN directories
// under node/, and with withDistances each node's distance file (cadvisor's
// source for upstream). A host without node/ has one node, 0, as
// cadvisor reports it.
func ReadNUMAInfo(sys fs.FS, withDistances bool) (*NUMAInfo, error) {
	entries, err := fs.ReadDir(sys, "node")
	if err != nil && !isNotExist(err) {
		return nil, fmt.Errorf("read directory %q: %w", "node", err)
	}
	info := &NUMAInfo{Distances: map[int][]uint64{}}
	for _, e := range entries {
		if m := nodeDir.FindStringSubmatch(e.Name()); m != nil {
			id, _ := strconv.Atoi(m[1])
			info.Nodes = append(info.Nodes, id)
		}
	}
	if len(info.Nodes) == 0 {
		info.Nodes = []int{0}
	}
	sort.Ints(info.Nodes)
	for _, id := range info.Nodes {
		info.Distances[id] = nil
		if !withDistances {
			continue
		}
		d, err := readDistances(sys, fmt.Sprintf("node/node%d/distance", id))
		if err != nil {
			return nil, err
		}
		info.Distances[id] = d
	}
	return info, nil
}

func readDistances(sys fs.FS, name string) ([]uint64, error) {
	f, err := sys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("error getting NUMA distances: open %q: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSysfsFile))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", name, err)
	}
	var out []uint64
	for _, s := range strings.Fields(string(b)) {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse %q: %w", name, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
