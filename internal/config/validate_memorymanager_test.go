package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func reservation(node int32, kv ...string) kubeletconfigv1beta1.MemoryReservation {
	r := kubeletconfigv1beta1.MemoryReservation{NumaNode: node, Limits: corev1.ResourceList{}}
	for i := 0; i < len(kv); i += 2 {
		r.Limits[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return r
}

// TestValidateMemoryManager has upstream's cases of
// TestValidateReservedMemoryConfiguration (validation_reserved_memory_test.go)
// and the policy names NewManager takes.
func TestValidateMemoryManager(t *testing.T) {
	const f = `kubeletConfiguration field "reservedMemory": invalid configuration: `
	tests := []struct {
		name     string
		policy   string
		reserved []kubeletconfigv1beta1.MemoryReservation
		want     []string
	}{
		{name: "None, nothing reserved", policy: "None"},
		{name: "valid", policy: "None", reserved: []kubeletconfigv1beta1.MemoryReservation{
			reservation(0, "memory", "1Gi", "hugepages-2Mi", "2Mi"), reservation(1, "memory", "1Gi")}},
		{name: "duplicate", policy: "None", reserved: []kubeletconfigv1beta1.MemoryReservation{
			reservation(5, "memory", "1Gi"), reservation(5, "memory", "1Gi")},
			want: []string{f + `the reserved memory has a duplicate value for NUMA node 5 and resource "memory"`}},
		{name: "unsupported type", policy: "None", reserved: []kubeletconfigv1beta1.MemoryReservation{
			reservation(0, "memory", "1Gi", "cpu", "1")},
			want: []string{f + `the limit type "cpu" for NUMA node 0 is not supported, only [memory hugepages-<HugePageSize>] is accepted`}},
		{name: "zero", policy: "None", reserved: []kubeletconfigv1beta1.MemoryReservation{
			reservation(0, "hugepages-1Gi", "0")},
			want: []string{f + `reserved memory may not be zero for NUMA node 0 and resource "hugepages-1Gi"`}},
		{name: "Static", policy: "Static", reserved: []kubeletconfigv1beta1.MemoryReservation{reservation(0, "memory", "100Mi")}},
		{name: "BestEffort is Windows only", policy: "BestEffort",
			want: []string{`kubeletConfiguration field "memoryManagerPolicy": policy "BestEffort" is not available for platform "linux"`}},
		{name: "unknown", policy: "none",
			want: []string{`kubeletConfiguration field "memoryManagerPolicy": unknown policy: "none"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{MemoryManagerPolicy: tt.policy, ReservedMemory: tt.reserved}
			if d := cmp.Diff(tt.want, problemMsgs(validateMemoryManager(kc))); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

// TestReservedMemoryWordingIsUpstreams pins the messages to upstream's
// validation_reserved_memory.go and memory_manager.go.
func TestReservedMemoryWordingIsUpstreams(t *testing.T) {
	dir := upstreamsrc.New(t).ModuleDir("k8s.io/kubernetes")
	for file, want := range map[string][]string{
		"pkg/kubelet/apis/config/validation/validation_reserved_memory.go": {
			`"invalid configuration: the limit type %q for NUMA node %d is not supported, only %v is accepted"`,
			`"invalid configuration: reserved memory may not be zero for NUMA node %d and resource %q"`,
			`"invalid configuration: the reserved memory has a duplicate value for NUMA node %d and resource %q"`,
		},
		"pkg/kubelet/cm/memorymanager/memory_manager.go": {
			`fmt.Errorf("unknown policy: %q", policyName)`,
			`fmt.Errorf("policy %q is not available for platform %q", policyTypeBestEffort, runtime.GOOS)`,
		},
		"pkg/kubelet/cm/memorymanager/policy_none.go":        {`policyTypeNone policyType = "None"`},
		"pkg/kubelet/cm/memorymanager/policy_static.go":      {`PolicyTypeStatic policyType = "Static"`},
		"pkg/kubelet/cm/memorymanager/policy_best_effort.go": {`policyTypeBestEffort policyType = "BestEffort"`},
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("read upstream %s: %v", file, err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("upstream's %s no longer has %s", file, w)
			}
		}
	}
}
