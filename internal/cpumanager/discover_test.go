package cpumanager

import (
	"os"
	"strconv"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// sysfs builds a /sys/devices/system for a two-socket machine with two
// NUMA nodes, two cores per socket and two threads per core: CPUs c and
// c+4 are the threads of core c; socket = node = c/2. CPU 7 is offline.
func sysfs() fstest.MapFS {
	fsys := fstest.MapFS{"cpu/online": {Data: []byte("0-6\n")}}
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

func TestDiscover(t *testing.T) {
	got, err := Discover(sysfs())
	if err != nil {
		t.Fatal(err)
	}
	want := &Topology{NumCPUs: 7, NumCores: 4, NumSockets: 2, NumNUMANodes: 2, NumUncoreCache: 2, CPUDetails: CPUDetails{
		0: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
		1: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
		2: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
		3: {CoreID: 3, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
		4: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
		5: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
		6: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Discover (-want +got):\n%s", d)
	}
}

func TestDiscoverErrors(t *testing.T) {
	for name, mutate := range map[string]func(fstest.MapFS){
		"no online file": func(f fstest.MapFS) { delete(f, "cpu/online") },
		"bad online":     func(f fstest.MapFS) { f["cpu/online"] = &fstest.MapFile{Data: []byte("x")} },
		"no package id":  func(f fstest.MapFS) { delete(f, "cpu/cpu3/topology/physical_package_id") },
		"bad siblings": func(f fstest.MapFS) {
			f["cpu/cpu3/topology/thread_siblings_list"] = &fstest.MapFile{Data: []byte("3-")}
		},
		"empty online set": func(f fstest.MapFS) { f["cpu/online"] = &fstest.MapFile{Data: []byte("\n")} },
	} {
		t.Run(name, func(t *testing.T) {
			f := sysfs()
			mutate(f)
			if _, err := Discover(f); err == nil {
				t.Errorf("Discover succeeded")
			}
		})
	}
}

// TestDiscoverHost reads this machine's sysfs: every online CPU is known.
func TestDiscoverHost(t *testing.T) {
	topo, err := Discover(os.DirFS(SysfsRoot))
	if err != nil {
		t.Skipf("no sysfs here: %v", err)
	}
	if topo.NumCPUs == 0 || topo.CPUsPerCore() == 0 {
		t.Errorf("Discover = %+v", topo)
	}
}
