package admission

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// TestDecideOrder holds the admit handlers to upstream's order: eviction,
// sysctls, node shutdown, the CPU manager, the predicates.
func TestDecideOrder(t *testing.T) {
	cpuReject := Result{Reason: "SMTAlignmentError", Message: "SMT Alignment Error"}
	tests := []struct {
		name     string
		pressure bool
		shutdown bool
		sysctl   bool // the pod sets an unsafe sysctl not allowed
		cpus     *Result
		nodeName string
		want     string
	}{
		{name: "admitted", want: ""},
		{name: "eviction first", pressure: true, sysctl: true, shutdown: true, cpus: &cpuReject, want: "Evicted"},
		{name: "sysctls before shutdown", sysctl: true, shutdown: true, cpus: &cpuReject, want: "SysctlForbidden"},
		{name: "shutdown before CPUs", shutdown: true, cpus: &cpuReject, want: "NodeShutdown"},
		{name: "CPUs before predicates", cpus: &cpuReject, nodeName: "other", want: "SMTAlignmentError"},
		{name: "predicates", nodeName: "other", want: "NodeName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			a := &Handlers{
				Node: func() *corev1.Node {
					n := &corev1.Node{}
					n.Name = "node"
					n.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}
					return n
				},
				ShuttingDown: func() bool { return tt.shutdown },
				Pressure:     func(*corev1.Pod) (bool, string) { return !tt.pressure, "pressure" },
				Sysctls:      sysctl.SafeAllowlist("6.1.0"),
			}
			if tt.cpus != nil {
				a.CPUs = func(_ context.Context, p *corev1.Pod, _ []*corev1.Pod) Result {
					asked = append(asked, p.Name)
					return *tt.cpus
				}
			}
			pod := &corev1.Pod{}
			pod.Name, pod.UID, pod.Spec.NodeName = "p", "u", tt.nodeName
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}}}
			if tt.sysctl {
				pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: "kernel.msgmax", Value: "1"})
			}
			got := a.Decide(context.Background(), pod, nil)
			if got.Reason != tt.want {
				t.Errorf("decide = %+v, want reason %q", got, tt.want)
			}
			if tt.cpus != nil && tt.want == "SMTAlignmentError" {
				if d := cmp.Diff([]string{"p"}, asked); d != "" {
					t.Errorf("CPU manager asked (-want +got):\n%s", d)
				}
			}
		})
	}
}
