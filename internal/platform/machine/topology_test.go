package machine

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/cpuset"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

var cpusetEqual = cmp.Comparer(func(a, b cpuset.CPUSet) bool { return a.Equals(b) })

// twoNodes builds a /sys/devices/system for a two-socket machine with two
// NUMA nodes, two cores per socket and two threads per core: CPUs c and
// c+4 are the threads of core c; socket = node = c/2; each socket has its
// own L3 cache, id 10+socket. CPU 7 is offline. Node 0 has 4 GiB and
// 2 MiB huge pages, node 1 2 GiB and none.
func twoNodes() fstest.MapFS {
	fsys := fstest.MapFS{
		"cpu/online":          {Data: []byte("0-6\n")},
		"node/possible":       {Data: []byte("0-1\n")},
		"node/node0/meminfo":  {Data: []byte("Node 0 MemTotal:       4194304 kB\nNode 0 MemFree:   1 kB\n")},
		"node/node0/distance": {Data: []byte("10 21\n")},
		"node/node0/hugepages/hugepages-2048kB/nr_hugepages":    {Data: []byte("4\n")},
		"node/node0/hugepages/hugepages-1048576kB/nr_hugepages": {Data: []byte("0\n")},
		"node/node0/hugepages/README":                           {Data: []byte("not a size\n")},
		"node/node1/meminfo":                                    {Data: []byte("Node 1 MemTotal:       2097152 kB\n")},
		"node/node1/distance":                                   {Data: []byte("21 10\n")},
	}
	for cpu := 0; cpu < 8; cpu++ {
		core := cpu % 4
		socket := core / 2
		dir := "cpu/cpu" + strconv.Itoa(cpu)
		fsys[dir+"/topology/physical_package_id"] = &fstest.MapFile{Data: []byte(strconv.Itoa(socket) + "\n")}
		fsys[dir+"/topology/thread_siblings_list"] = &fstest.MapFile{Data: []byte(strconv.Itoa(core) + "," + strconv.Itoa(core+4) + "\n")}
		fsys[dir+"/node"+strconv.Itoa(socket)] = &fstest.MapFile{Mode: os.ModeSymlink}
		fsys[dir+"/cache/index0/level"] = &fstest.MapFile{Data: []byte("1\n")}
		fsys[dir+"/cache/index3/level"] = &fstest.MapFile{Data: []byte("3\n")}
		fsys[dir+"/cache/index3/id"] = &fstest.MapFile{Data: []byte(strconv.Itoa(10+socket) + "\n")}
	}
	return fsys
}

// oneNode is a two-CPU machine, one core with two threads, no L3 cache,
// and a single NUMA node.
func oneNode() fstest.MapFS {
	fsys := fstest.MapFS{
		"cpu/online":          {Data: []byte("0-1\n")},
		"node/node0/meminfo":  {Data: []byte("Node 0 MemTotal:       1048576 kB\n")},
		"node/node0/distance": {Data: []byte("10\n")},
	}
	for cpu := 0; cpu < 2; cpu++ {
		dir := "cpu/cpu" + strconv.Itoa(cpu)
		fsys[dir+"/topology/physical_package_id"] = &fstest.MapFile{Data: []byte("0\n")}
		fsys[dir+"/topology/thread_siblings_list"] = &fstest.MapFile{Data: []byte("0-1\n")}
		fsys[dir+"/node0"] = &fstest.MapFile{Mode: os.ModeSymlink}
	}
	return fsys
}

// withoutNodes is oneNode on a kernel without NUMA: no node/, no links.
func withoutNodes() fstest.MapFS {
	fsys := oneNode()
	for name := range fsys {
		if strings.HasPrefix(name, "node/") || strings.HasSuffix(name, "/node0") {
			delete(fsys, name)
		}
	}
	return fsys
}

func TestReadTopology(t *testing.T) {
	host := Info{MemoryBytes: 3 * gib, HugePages: map[string]int64{"2Mi": 4 * mib}}
	for _, tt := range []struct {
		name string
		sys  fstest.MapFS
		want *Topology
	}{
		{name: "two sockets, two nodes, SMT, L3 caches", sys: twoNodes(), want: &Topology{
			Nodes: []NUMANode{
				{ID: 0, CPUs: cpuset.New(0, 1, 4, 5), MemTotal: 4 * gib, Distances: []uint64{10, 21},
					HugePages: map[string]uint64{"2Mi": 8 * mib, "1Gi": 0}},
				{ID: 1, CPUs: cpuset.New(2, 3, 6), MemTotal: 2 * gib, Distances: []uint64{21, 10},
					HugePages: map[string]uint64{}},
			},
			CPUs: map[int]CPU{
				0: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				1: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				2: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
				3: {CoreID: 3, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
				4: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				5: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				6: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
			},
		}},
		{name: "one node, no L3 cache: the socket", sys: oneNode(), want: &Topology{
			Nodes: []NUMANode{{ID: 0, CPUs: cpuset.New(0, 1), MemTotal: 1 * gib, Distances: []uint64{10}, HugePages: map[string]uint64{}}},
			CPUs:  map[int]CPU{0: {}, 1: {}},
		}},
		{name: "no node directory: node 0 holds every CPU and the machine's memory", sys: withoutNodes(), want: &Topology{
			Nodes: []NUMANode{{ID: 0, CPUs: cpuset.New(0, 1), MemTotal: 3 * gib, HugePages: map[string]uint64{"2Mi": 4 * mib}}},
			CPUs:  map[int]CPU{0: {}, 1: {}},
		}},
		{name: "a node without a distance file has none", sys: mutate(oneNode(), func(f fstest.MapFS) { delete(f, "node/node0/distance") }), want: &Topology{
			Nodes: []NUMANode{{ID: 0, CPUs: cpuset.New(0, 1), MemTotal: 1 * gib, HugePages: map[string]uint64{}}},
			CPUs:  map[int]CPU{0: {}, 1: {}},
		}},
		{name: "siblings offline: the CPU is its own core", sys: mutate(twoNodes(), func(f fstest.MapFS) {
			f["cpu/online"] = &fstest.MapFile{Data: []byte("0,4")}
			f["cpu/cpu4/topology/thread_siblings_list"] = &fstest.MapFile{Data: []byte("7")}
		}), want: &Topology{
			Nodes: []NUMANode{
				{ID: 0, CPUs: cpuset.New(0, 4), MemTotal: 4 * gib, Distances: []uint64{10, 21}, HugePages: map[string]uint64{"2Mi": 8 * mib, "1Gi": 0}},
				{ID: 1, CPUs: cpuset.New(), MemTotal: 2 * gib, Distances: []uint64{21, 10}, HugePages: map[string]uint64{}},
			},
			CPUs: map[int]CPU{0: {UncoreCacheID: 10}, 4: {CoreID: 4, UncoreCacheID: 10}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadTopology(tt.sys, host)
			if err != nil {
				t.Fatalf("ReadTopology: %v", err)
			}
			if d := cmp.Diff(tt.want, got, cpusetEqual); d != "" {
				t.Errorf("ReadTopology (-want +got):\n%s", d)
			}
		})
	}
}

func mutate(f fstest.MapFS, change func(fstest.MapFS)) fstest.MapFS {
	change(f)
	return f
}

func TestReadTopologyErrors(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, tt := range []struct {
		name    string
		change  func(fstest.MapFS)
		wantErr string
	}{
		{"no online file", func(f fstest.MapFS) { delete(f, "cpu/online") }, `open "cpu/online"`},
		{"bad online", func(f fstest.MapFS) { f["cpu/online"] = file("x") }, `parse cpu/online "x"`},
		{"empty online set", func(f fstest.MapFS) { f["cpu/online"] = file("\n") }, "could not detect number of cpus"},
		{"no package id", func(f fstest.MapFS) { delete(f, "cpu/cpu3/topology/physical_package_id") }, `open "cpu/cpu3/topology/physical_package_id"`},
		{"bad package id", func(f fstest.MapFS) { f["cpu/cpu3/topology/physical_package_id"] = file("one") }, `parse "cpu/cpu3/topology/physical_package_id"`},
		{"bad siblings", func(f fstest.MapFS) { f["cpu/cpu3/topology/thread_siblings_list"] = file("3-") }, "thread_siblings_list"},
		{"no meminfo", func(f fstest.MapFS) { delete(f, "node/node1/meminfo") }, `open "node/node1/meminfo"`},
		{"meminfo without MemTotal", func(f fstest.MapFS) { f["node/node1/meminfo"] = file("nothing\n") }, "no MemTotal"},
		{"MemTotal not a number", func(f fstest.MapFS) { f["node/node1/meminfo"] = file("Node 1 MemTotal: lots kB\n") }, "parse MemTotal"},
		{"huge pages unreadable", func(f fstest.MapFS) {
			f["node/node0/hugepages/hugepages-2048kB"] = &fstest.MapFile{Mode: os.ModeDir}
			delete(f, "node/node0/hugepages/hugepages-2048kB/nr_hugepages")
		}, "hugepages-2048kB/nr_hugepages"},
		{"huge pages not a number", func(f fstest.MapFS) { f["node/node0/hugepages/hugepages-2048kB/nr_hugepages"] = file("-1") }, "nr_hugepages"},
		{"huge pages overflow", func(f fstest.MapFS) {
			f["node/node0/hugepages/hugepages-1048576kB/nr_hugepages"] = file("18446744073709551615")
		}, "value out of range"},
		{"distance not a number", func(f fstest.MapFS) { f["node/node0/distance"] = file("ten") }, `parse "node/node0/distance"`},
		{"oversize file", func(f fstest.MapFS) {
			f["node/node0/meminfo"] = file("Node 0 MemTotal: 1 kB\n" + strings.Repeat("x", maxSysfsFile))
		}, "larger than 65536 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := twoNodes()
			tt.change(f)
			_, err := ReadTopology(f, Info{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ReadTopology error = %v, want one with %q", err, tt.wantErr)
			}
		})
	}
}

// TestReadSysfsBound: a file of exactly the bound is read whole.
func TestReadSysfsBound(t *testing.T) {
	data := strings.Repeat("1", maxSysfsFile)
	got, err := readSysfs(fstest.MapFS{"f": {Data: []byte(data)}}, "f")
	if err != nil || got != data {
		t.Errorf("readSysfs of %d bytes = %d bytes, %v", len(data), len(got), err)
	}
}

// TestReadTopologyHost reads this machine's sysfs: every online CPU is on
// a node, and every node with CPUs has memory.
func TestReadTopologyHost(t *testing.T) {
	if _, err := os.Stat(SystemDir + "/cpu/online"); err != nil {
		t.Skipf("no sysfs here: %v", err)
	}
	topo, err := ReadTopology(os.DirFS(SystemDir), Info{MemoryBytes: 1})
	if err != nil {
		t.Fatalf("ReadTopology: %v", err)
	}
	var onNodes int
	for _, n := range topo.Nodes {
		onNodes += n.CPUs.Size()
		if n.CPUs.Size() > 0 && n.MemTotal == 0 {
			t.Errorf("node %d has CPUs and no memory", n.ID)
		}
	}
	if len(topo.CPUs) == 0 || onNodes != len(topo.CPUs) {
		t.Errorf("ReadTopology = %d CPUs, %d on nodes", len(topo.CPUs), onNodes)
	}
}
