package kuberuntime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestMilliCPUToShares(t *testing.T) {
	tests := []struct{ milli, want int64 }{
		{0, 2}, {1, 2}, {1, 2}, {2, 2}, {10, 10}, {100, 102}, {250, 256}, {1000, 1024},
		{1500, 1536}, {300000, 262144},
	}
	for _, tt := range tests {
		if got := milliCPUToShares(tt.milli); got != tt.want {
			t.Errorf("milliCPUToShares(%d) = %d, want %d", tt.milli, got, tt.want)
		}
	}
}

func TestMilliCPUToQuota(t *testing.T) {
	tests := []struct{ milli, want int64 }{
		{0, 0}, {5, 1000}, {9, 1000}, {10, 1000}, {200, 20000}, {500, 50000}, {1000, 100000}, {1500, 150000},
	}
	for _, tt := range tests {
		if got := milliCPUToQuota(tt.milli, quotaPeriod); got != tt.want {
			t.Errorf("milliCPUToQuota(%d) = %d, want %d", tt.milli, got, tt.want)
		}
	}
}

func TestContainerResources(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name string
		res  corev1.ResourceRequirements
		want *runtimeapi.LinuxContainerResources
	}{
		{
			name: "nothing set",
			want: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000},
		},
		{
			name: "requests only",
			res:  corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("250m"), corev1.ResourceMemory: q("64Mi")}},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000},
		},
		{
			name: "limits only: request defaults to limit",
			res:  corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("128Mi")}},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 128 << 20},
		},
		{
			name: "requests and limits",
			res: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")},
			},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000, CpuQuota: 200000, MemoryLimitInBytes: 1 << 30},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := containerResources(&corev1.Container{Resources: tt.res})
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("containerResources (-want +got):\n%s", diff)
			}
		})
	}
}
