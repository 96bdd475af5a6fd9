package memorymanager

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/memorymanager/state"
)

func namedPod(uid string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid)}, Spec: corev1.PodSpec{Containers: containers}}
}

// TestStaticManager: a Guaranteed pod's containers get cpuset.mems, one
// that does not fit is refused with upstream's reason, and once the first
// pod is no longer active its memory is released at the next admission
// and the state survives a restart.
func TestStaticManager(t *testing.T) {
	dir := t.TempDir()
	p := fourNodes(t)
	m, err := New(Config{Policy: PolicyStatic, StateDir: dir, Static: p})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a := namedPod("a", guaranteed("wide", "memory", "1Gi", "hugepages-1Gi", "1Gi"), guaranteed("narrow", "memory", "256Mi"))
	if ok, reason, msg := m.Admit(a, nil, true); !ok {
		t.Fatalf("Admit a: %s %s", reason, msg)
	}
	for c, want := range map[string]string{"wide": "0,1", "narrow": "2", "other": ""} {
		if got := m.CPUSetMems("a", c); got != want {
			t.Errorf("CPUSetMems(a, %s) = %q, want %q", c, got, want)
		}
	}
	big := namedPod("b", guaranteed("c", "memory", "2Gi"))
	ok, reason, msg := m.Admit(big, []*corev1.Pod{a}, true)
	wantMsg := "Allocate failed due to [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available, which is unexpected"
	if ok || reason != "UnexpectedAdmissionError" || msg != wantMsg {
		t.Errorf("Admit b = %v, %q, %q; want refused, UnexpectedAdmissionError, %q", ok, reason, msg, wantMsg)
	}
	// A restart restores and checks the state.
	m, err = New(Config{Policy: PolicyStatic, StateDir: dir, Static: p})
	if err != nil {
		t.Fatalf("New after restart: %v", err)
	}
	if got := m.CPUSetMems("a", "wide"); got != "0,1" {
		t.Errorf("after restart CPUSetMems = %q, want 0,1", got)
	}
	// Before every source is ready, a's memory is kept.
	if ok, _, _ := m.Admit(big, nil, false); ok {
		t.Error("Admit b with sources not ready: admitted, want a's memory kept")
	}
	// a is gone: its memory goes back, and b fits.
	if ok, reason, msg := m.Admit(big, nil, true); !ok {
		t.Fatalf("Admit b after a left: %s %s", reason, msg)
	}
	if got := m.CPUSetMems("a", "wide"); got != "" {
		t.Errorf("a's cpuset.mems after release = %q, want none", got)
	}
	c, _, err := state.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Entries["a"]; ok || c.Entries["b"] == nil {
		t.Errorf("checkpoint entries %v, want b's only", c.Entries)
	}
}

func TestStaticRestore(t *testing.T) {
	p := fourNodes(t)
	allocated, err := p.AllocatePod(empty(p), namedPod("a", guaranteed("c", "memory", "1Gi")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		c       func() state.Checkpoint
		wantErr string
	}{
		{name: "a new checkpoint gets the default state", c: func() state.Checkpoint { return state.Checkpoint{PolicyName: PolicyStatic} }},
		{name: "a consistent state", c: func() state.Checkpoint { return allocated }},
		{name: "assignments without a machine state", c: func() state.Checkpoint {
			return state.Checkpoint{PolicyName: PolicyStatic, Entries: allocated.Entries}
		}, wantErr: "[memorymanager] machine state can not be empty when it has memory assignments"},
		{name: "the machine changed", c: func() state.Checkpoint {
			c := state.Checkpoint{MachineState: allocated.MachineState.Clone(), Entries: allocated.Entries}
			c.MachineState[3].MemoryMap[corev1.ResourceMemory].TotalMemSize++
			return c
		}, wantErr: "[memorymanager] the expected machine state is different from the real one"},
		{name: "an assignment the state does not show", c: func() state.Checkpoint {
			return state.Checkpoint{MachineState: p.DefaultMachineState(), Entries: allocated.Entries}
		}, wantErr: "[memorymanager] the expected machine state is different from the real one"},
		{name: "a NUMA node the machine lacks", c: func() state.Checkpoint {
			return state.Checkpoint{MachineState: p.DefaultMachineState(), Entries: state.ContainerMemoryAssignments{"a": {"c": {block(1, corev1.ResourceMemory, 7)}}}}
		}, wantErr: "[memorymanager] (pod: a, container: c) the memory assignment uses the NUMA that does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Restore(tt.c())
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Restore error %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if len(got.MachineState) != 4 {
				t.Errorf("machine state %v, want 4 nodes", got.MachineState)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	fsys := fstest.MapFS{
		"node0/meminfo": {Data: []byte("Node 0 MemTotal:       4194304 kB\nNode 0 MemFree:   1 kB\n")},
		"node0/hugepages/hugepages-2048kB/nr_hugepages":    {Data: []byte("4\n")},
		"node0/hugepages/hugepages-1048576kB/nr_hugepages": {Data: []byte("0\n")},
		"node1/meminfo": {Data: []byte("Node 1 MemTotal:       2097152 kB\n")},
		"possible":      {Data: []byte("0-1\n")},
	}
	got, err := Discover(fsys)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	want := []NUMANode{
		{ID: 0, Memory: 4 * gb, HugePages: map[corev1.ResourceName]uint64{"hugepages-2Mi": 8 * mb, "hugepages-1Gi": 0}},
		{ID: 1, Memory: 2 * gb, HugePages: map[corev1.ResourceName]uint64{}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Discover (-want +got):\n%s", d)
	}
	if _, err := Discover(fstest.MapFS{"node0/meminfo": {Data: []byte("nothing\n")}}); err == nil || !strings.Contains(err.Error(), "no MemTotal") {
		t.Errorf("Discover of a meminfo without MemTotal: %v", err)
	}
}

// TestDiscoverThisMachine reads this host's sysfs, where there is one.
func TestDiscoverThisMachine(t *testing.T) {
	if _, err := os.Stat(SysfsNodes); err != nil {
		t.Skipf("no %s: %v", SysfsNodes, err)
	}
	nodes, err := Discover(os.DirFS(SysfsNodes))
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if len(nodes) == 0 || nodes[0].Memory == 0 {
		t.Errorf("Discover = %+v, want nodes with memory", nodes)
	}
}
