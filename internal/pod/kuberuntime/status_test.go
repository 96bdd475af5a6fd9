package kuberuntime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func milli(m int64) *resource.Quantity { return resource.NewMilliQuantity(m, resource.DecimalSI) }
func bytes(b int64) *resource.Quantity { return resource.NewQuantity(b, resource.BinarySI) }

// TestContainerResources pins containerResources to upstream's
// toKubeContainerResources.
func TestContainerResources(t *testing.T) {
	linux := func(l *runtimeapi.LinuxContainerResources) *runtimeapi.ContainerResources {
		return &runtimeapi.ContainerResources{Linux: l}
	}
	tests := []struct {
		name string
		in   *runtimeapi.ContainerResources
		want *runtimestate.ContainerResources
	}{
		{"nothing reported", nil, nil},
		{"no linux resources", &runtimeapi.ContainerResources{}, nil},
		{"all zero", linux(&runtimeapi.LinuxContainerResources{}), nil},
		{"all three", linux(&runtimeapi.LinuxContainerResources{CpuShares: 20, CpuQuota: 50000, CpuPeriod: 100000, MemoryLimitInBytes: 256 << 20}),
			&runtimestate.ContainerResources{CPURequest: milli(20), CPULimit: milli(500), MemoryLimit: bytes(256 << 20)}},
		{"shares round up", linux(&runtimeapi.LinuxContainerResources{CpuShares: 102}),
			&runtimestate.ContainerResources{CPURequest: milli(100)}},
		{"min shares", linux(&runtimeapi.LinuxContainerResources{CpuShares: 2}),
			&runtimestate.ContainerResources{CPURequest: milli(2)}},
		{"shares below the minimum", linux(&runtimeapi.LinuxContainerResources{CpuShares: 1}), nil},
		{"unlimited quota", linux(&runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: -1, CpuPeriod: 100000}),
			&runtimestate.ContainerResources{CPURequest: milli(1000)}},
		{"quota without a period", linux(&runtimeapi.LinuxContainerResources{CpuQuota: 50000}), nil},
		{"other period", linux(&runtimeapi.LinuxContainerResources{CpuQuota: 25000, CpuPeriod: 50000}),
			&runtimestate.ContainerResources{CPULimit: milli(500)}},
		{"memory only", linux(&runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 1 << 30}),
			&runtimestate.ContainerResources{MemoryLimit: bytes(1 << 30)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := containerResources(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("containerResources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodStatusReportsResources: PodStatus carries the resources the
// runtime reports, those the container was created with and, after
// UpdateContainerResources, the new ones.
func TestPodStatusReportsResources(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m")},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("500m"),
			corev1.ResourceMemory: resource.MustParse("128Mi"),
		},
	}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	c := e.running(pod, "app")
	want := &runtimestate.ContainerResources{CPURequest: milli(20), CPULimit: milli(500), MemoryLimit: bytes(128 << 20)}
	if diff := cmp.Diff(want, c.Resources); diff != "" {
		t.Fatalf("created container's resources (-want +got):\n%s", diff)
	}

	_, err := e.m.cfg.Runtime.UpdateContainerResources(e.ctx, &runtimeapi.UpdateContainerResourcesRequest{
		ContainerId: c.ID,
		Linux:       &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: 200000, CpuPeriod: 100000, MemoryLimitInBytes: 256 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = &runtimestate.ContainerResources{CPURequest: milli(1000), CPULimit: milli(2000), MemoryLimit: bytes(256 << 20)}
	if diff := cmp.Diff(want, e.running(pod, "app").Resources); diff != "" {
		t.Errorf("updated container's resources (-want +got):\n%s", diff)
	}
}
