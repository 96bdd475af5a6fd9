package allocation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestRequested(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	base := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: list("cpu", "50m")}}},
			Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
				Requests: list("cpu", "100m", "memory", "128Mi"), Limits: list("memory", "256Mi"),
			}}},
		}}
	}
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []change
		resize bool
	}{
		{"nothing changes", func(*corev1.Pod) {}, nil, false},
		{"a label changes", func(p *corev1.Pod) { p.Labels = map[string]string{"x": "y"} }, nil, false},
		{"cpu request up", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		},
			[]change{{"cpu", "requests", opIncrease}}, true},
		{"memory request down, memory limit removed", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("64Mi")
			p.Spec.Containers[0].Resources.Limits = nil
		}, []change{{"memory", "requests", opDecrease}, {"memory", "limits", opRemove}}, true},
		{"cpu limit added, an explicit zero cpu request set", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1")
			p.Spec.InitContainers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0")
		}, []change{{"cpu", "requests", opRemove}, {"cpu", "limits", opAdd}}, true},
		{"the same quantity written differently", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.1")
		},
			nil, false},
		{"pod-level resources only", func(p *corev1.Pod) { p.Spec.Resources = &corev1.ResourceRequirements{Limits: list("cpu", "2")} }, nil, true},
		{"a container of another name", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "other" }, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, pod := base(), base()
			tt.mutate(pod)
			got, resize := requested(old, pod)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(change{})); diff != "" || resize != tt.resize {
				t.Errorf("requested = %v, resize %v; want resize %v (-want +got):\n%s", got, resize, tt.resize, diff)
			}
		})
	}
	if got, resize := requested(nil, base()); got != nil || !resize {
		t.Errorf("requested for a pod new to berth = %v, %v; want a resize, nothing counted", got, resize)
	}
}
