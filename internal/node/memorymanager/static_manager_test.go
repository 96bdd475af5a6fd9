package memorymanager

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
	"github.com/berthk8s/berth/internal/platform/machine"
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

// TestForgetGivesTheMemoryBack: a pod that is gone gives its memory back
// at once, in the checkpoint too, so the next pod fits.
func TestForgetGivesTheMemoryBack(t *testing.T) {
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
	ctx := context.Background()
	m.Forget(ctx, "a")
	m.Forget(ctx, "a") // idempotent
	c, _, err := state.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(empty(p).MachineState, c.MachineState); diff != "" || len(c.Entries) != 0 {
		t.Errorf("checkpoint after Forget(a): entries %v, machine state (-want +got):\n%s", c.Entries, diff)
	}
	// Not admitted before every source is ready: the memory is free all the same.
	if ok, reason, msg := m.Admit(namedPod("b", guaranteed("c", "memory", "2Gi")), nil, false); !ok {
		t.Errorf("Admit b after a was forgotten: %s %s", reason, msg)
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

func TestNodesOf(t *testing.T) {
	for _, tt := range []struct {
		name    string
		host    *machine.Topology
		want    []NUMANode
		wantErr string
	}{
		{name: "two nodes, huge pages on one", host: &machine.Topology{Nodes: []machine.NUMANode{
			{ID: 0, MemTotal: 4 * gb, HugePages: map[string]uint64{"2Mi": 8 * mb, "1Gi": 0}},
			{ID: 1, MemTotal: 2 * gb, HugePages: map[string]uint64{}},
		}}, want: []NUMANode{
			{ID: 0, Memory: 4 * gb, HugePages: map[corev1.ResourceName]uint64{"hugepages-2Mi": 8 * mb, "hugepages-1Gi": 0}},
			{ID: 1, Memory: 2 * gb, HugePages: map[corev1.ResourceName]uint64{}},
		}},
		{name: "node 0 of a host without NUMA holds all memory", host: &machine.Topology{Nodes: []machine.NUMANode{
			{ID: 0, MemTotal: 3 * gb, HugePages: map[string]uint64{"2Mi": 4 * mb}},
		}}, want: []NUMANode{
			{ID: 0, Memory: 3 * gb, HugePages: map[corev1.ResourceName]uint64{"hugepages-2Mi": 4 * mb}},
		}},
		{name: "node 63 is the last one a mask holds", host: &machine.Topology{Nodes: []machine.NUMANode{{ID: 63, MemTotal: gb}}},
			want: []NUMANode{{ID: 63, Memory: gb, HugePages: map[corev1.ResourceName]uint64{}}}},
		{name: "node 64 is refused", host: &machine.Topology{Nodes: []machine.NUMANode{{ID: 64, MemTotal: gb}}},
			wantErr: "use NUMA node 64: unsupported ID"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NodesOf(tt.host)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NodesOf error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NodesOf: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("NodesOf (-want +got):\n%s", d)
			}
		})
	}
}

// TestNodesOfThisMachine reads this host's sysfs: every node with CPUs
// has memory.
func TestNodesOfThisMachine(t *testing.T) {
	host, err := machine.ReadTopology(os.DirFS(machine.SystemDir), machine.Info{MemoryBytes: 1})
	if err != nil {
		t.Skipf("no sysfs here: %v", err)
	}
	nodes, err := NodesOf(host)
	if err != nil {
		t.Fatalf("NodesOf: %v", err)
	}
	if len(nodes) == 0 || nodes[0].Memory == 0 {
		t.Errorf("NodesOf = %+v, want nodes with memory", nodes)
	}
}

// TestMemoryBlocks: what the pod resources API reports: a container's
// blocks, the allocatable memory per NUMA node and type; nothing with None.
func TestMemoryBlocks(t *testing.T) {
	m, err := New(Config{Policy: PolicyStatic, StateDir: t.TempDir(), Static: fourNodes(t)})
	if err != nil {
		t.Fatal(err)
	}
	a := namedPod("a", guaranteed("narrow", "memory", "256Mi"))
	if ok, reason, msg := m.Admit(a, nil, true); !ok {
		t.Fatalf("Admit a: %s %s", reason, msg)
	}
	want := []state.Block{{NUMAAffinity: []int{0}, Type: "memory", Size: 256 << 20}}
	if diff := cmp.Diff(want, m.Memory("a", "narrow")); diff != "" {
		t.Errorf("Memory(a, narrow) (-want +got):\n%s", diff)
	}
	if got := m.Memory("a", "other"); len(got) != 0 {
		t.Errorf("Memory(a, other) = %v, want none", got)
	}
	var wantAlloc []state.Block
	for id := range 4 {
		wantAlloc = append(wantAlloc,
			state.Block{NUMAAffinity: []int{id}, Type: "hugepages-1Gi", Size: gb},
			state.Block{NUMAAffinity: []int{id}, Type: "memory", Size: 512 << 20}) // 2Gi less 1Gi of huge pages and 512Mi reserved
	}
	if diff := cmp.Diff(wantAlloc, m.AllocatableMemory()); diff != "" {
		t.Errorf("AllocatableMemory (-want +got):\n%s", diff)
	}
	none, err := New(Config{Policy: PolicyNone, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := none.AllocatableMemory(); len(got) != 0 {
		t.Errorf("None: AllocatableMemory = %v, want none", got)
	}
}
