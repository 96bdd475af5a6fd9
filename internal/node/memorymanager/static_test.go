package memorymanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
)

const (
	mb           = 1024 * 1024
	gb           = 1024 * mb
	hugepages1Gi = corev1.ResourceName("hugepages-1Gi")
)

// fourNodes is upstream's multi-NUMA fixture ("should succeed to allocate
// memory from multiple NUMA nodes"): four nodes of 1Gi memory (512Mi
// reserved) and one 1Gi huge page each.
func fourNodes(t *testing.T) *Static {
	t.Helper()
	var nodes []NUMANode
	var reserved []kubeletconfigv1beta1.MemoryReservation
	for id := 0; id < 4; id++ {
		nodes = append(nodes, NUMANode{ID: id, Memory: 2 * gb, HugePages: map[corev1.ResourceName]uint64{hugepages1Gi: gb}})
		reserved = append(reserved, kubeletconfigv1beta1.MemoryReservation{NumaNode: int32(id), Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}})
	}
	p, err := NewStatic(nodes, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}, reserved)
	if err != nil {
		t.Fatalf("NewStatic: %v", err)
	}
	return p
}

func table(total, reserved, allocatable, used uint64) *state.MemoryTable {
	return &state.MemoryTable{TotalMemSize: total, SystemReserved: reserved, Allocatable: allocatable, Reserved: used, Free: allocatable - used}
}

func TestNewStatic(t *testing.T) {
	nodes := []NUMANode{{ID: 0, Memory: 4 * gb}, {ID: 1, Memory: 4 * gb}}
	res := func(node int32, kv ...string) kubeletconfigv1beta1.MemoryReservation {
		r := kubeletconfigv1beta1.MemoryReservation{NumaNode: node, Limits: corev1.ResourceList{}}
		for i := 0; i < len(kv); i += 2 {
			r.Limits[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return r
	}
	tests := []struct {
		name        string
		reservation corev1.ResourceList
		reserved    []kubeletconfigv1beta1.MemoryReservation
		wantErr     string
	}{
		{name: "sum matches", reservation: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1100Mi")},
			reserved: []kubeletconfigv1beta1.MemoryReservation{res(0, "memory", "1Gi"), res(1, "memory", "76Mi")}},
		{name: "nothing reserved but the eviction threshold", reservation: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")},
			wantErr: `the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature`},
		{name: "huge pages must add up too", reservation: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			reserved: []kubeletconfigv1beta1.MemoryReservation{res(0, "memory", "1Gi", "hugepages-2Mi", "4Mi")},
			wantErr:  `the total amount "4Mi" of type "hugepages-2Mi" is not equal to the value "0" determined by Node Allocatable feature`},
		{name: "a NUMA node the machine lacks", reservation: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			reserved: []kubeletconfigv1beta1.MemoryReservation{res(2, "memory", "1Gi")},
			wantErr:  "the reserved memory configuration references a NUMA node 2 that does not exist on this machine"},
		{name: "no memory reserved", reservation: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			wantErr: "[memorymanager] you should specify the system reserved memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewStatic(nodes, tt.reservation, tt.reserved)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("NewStatic error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestDefaultMachineState is upstream's getDefaultMachineState: huge
// pages leave memory's allocatable.
func TestDefaultMachineState(t *testing.T) {
	got := fourNodes(t).DefaultMachineState()
	for id := 0; id < 4; id++ {
		want := &state.NUMANodeState{Cells: []int{id}, MemoryMap: map[corev1.ResourceName]*state.MemoryTable{
			corev1.ResourceMemory: table(2*gb, 512*mb, 512*mb, 0),
			hugepages1Gi:          table(gb, 0, gb, 0),
		}}
		if d := cmp.Diff(want, got[id]); d != "" {
			t.Errorf("node %d (-want +got):\n%s", id, d)
		}
	}
}
