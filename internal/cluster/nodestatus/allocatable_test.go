package nodestatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCapacityAndAllocatable(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*Inputs)
		existing    corev1.ResourceList
		capacity    map[string]string
		allocatable map[string]string
	}{
		{
			// 10% of 100e9 in float32 is 10000000149, as upstream.
			name:        "default eviction thresholds",
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
			allocatable: map[string]string{"cpu": "4", "memory": "8092Mi", "pods": "110", "ephemeral-storage": "89999999851"},
		},
		{
			name: "kube and system reserved add up",
			mutate: func(in *Inputs) {
				in.Reserved.KubeReserved = map[string]string{"cpu": "100m", "memory": "1Gi", "ephemeral-storage": "1G", "pid": "100"}
				in.Reserved.SystemReserved = map[string]string{"cpu": "200m", "memory": "512Mi"}
				in.Reserved.EvictionHard = map[string]string{"memory.available": "100Mi", "nodefs.available": "4G"}
			},
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
			allocatable: map[string]string{"cpu": "3700m", "memory": "6556Mi", "pods": "110", "ephemeral-storage": "95G"},
		},
		{
			name: "reservations above capacity floor at zero",
			mutate: func(in *Inputs) {
				in.Reserved.KubeReserved = map[string]string{"cpu": "8", "memory": "16Gi"}
			},
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
			allocatable: map[string]string{"cpu": "0", "memory": "0", "pods": "110", "ephemeral-storage": "89999999851"},
		},
		{
			name: "percentage memory threshold; 0% and 100% are ignored",
			mutate: func(in *Inputs) {
				in.Reserved.EvictionHard = map[string]string{"memory.available": "50%", "nodefs.available": "0%"}
			},
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
			allocatable: map[string]string{"cpu": "4", "memory": "4Gi", "pods": "110", "ephemeral-storage": "100G"},
		},
		{
			name:        "100% is ignored",
			mutate:      func(in *Inputs) { in.Reserved.EvictionHard = map[string]string{"memory.available": "100%"} },
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
			allocatable: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
		},
		{
			name: "huge pages come out of allocatable memory",
			mutate: func(in *Inputs) {
				in.Machine.HugePages = map[string]int64{"2Mi": 1 << 30, "1Gi": 0}
				in.Reserved.KubeReserved = map[string]string{"hugepages-2Mi": "256Mi"}
			},
			capacity: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G",
				"hugepages-2Mi": "1Gi", "hugepages-1Gi": "0"},
			allocatable: map[string]string{"cpu": "4", "memory": "7068Mi", "pods": "110", "ephemeral-storage": "89999999851",
				"hugepages-2Mi": "768Mi", "hugepages-1Gi": "0"},
		},
		{
			name:        "no evictionHard, unknown root filesystem",
			mutate:      func(in *Inputs) { in.Reserved.EvictionHard = nil; in.Machine.RootFSBytes = 0 },
			existing:    corev1.ResourceList{"ephemeral-storage": resource.MustParse("1G")},
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110"},
			allocatable: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110"},
		},
		{
			name:        "localStorageCapacityIsolation off: no ephemeral-storage",
			mutate:      func(in *Inputs) { in.LocalStorageCapacityIsolation = false },
			existing:    corev1.ResourceList{"ephemeral-storage": resource.MustParse("1G")},
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110"},
			allocatable: map[string]string{"cpu": "4", "memory": "8092Mi", "pods": "110"},
		},
		{
			name:   "extended resources are kept, stale huge page sizes dropped",
			mutate: func(in *Inputs) { in.Reserved.EvictionHard = nil },
			existing: corev1.ResourceList{
				"example.com/dongle": resource.MustParse("2"),
				"hugepages-1Gi":      resource.MustParse("2Gi"),
			},
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G", "example.com/dongle": "2"},
			allocatable: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G", "example.com/dongle": "2"},
		},
		{
			name: "device plugin resources: capacity all devices, allocatable the healthy ones, removed at 0",
			mutate: func(in *Inputs) {
				in.Reserved.EvictionHard = nil
				in.DevicePlugins = DevicePlugins{
					Capacity:    corev1.ResourceList{"example.com/gpu": resource.MustParse("4")},
					Allocatable: corev1.ResourceList{"example.com/gpu": resource.MustParse("3")},
					Removed:     []string{"example.com/gone"},
				}
			},
			existing: corev1.ResourceList{"example.com/gone": resource.MustParse("2"), "example.com/gpu": resource.MustParse("1")},
			capacity: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G",
				"example.com/gpu": "4", "example.com/gone": "0"},
			allocatable: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G",
				"example.com/gpu": "3", "example.com/gone": "0"},
		},
		{
			name: "unparsable values are ignored",
			mutate: func(in *Inputs) {
				in.Reserved.KubeReserved = map[string]string{"cpu": "lots"}
				in.Reserved.EvictionHard = map[string]string{"memory.available": "x%"}
			},
			capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
			allocatable: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100G"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			if tt.mutate != nil {
				tt.mutate(&in)
			}
			c := Capacity(tt.existing, in)
			if diff := cmp.Diff(tt.capacity, quantities(c)); diff != "" {
				t.Errorf("Capacity() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.allocatable, quantities(Allocatable(c, in))); diff != "" {
				t.Errorf("Allocatable() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
