package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestIsCritical(t *testing.T) {
	withPriority := func(p int32) *corev1.Pod { return &corev1.Pod{Spec: corev1.PodSpec{Priority: ptr.To(p)}} }
	annotated := func(k, v string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{k: v}}}
	}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"no priority", &corev1.Pod{}, false},
		{"below system-critical", withPriority(SystemCriticalPriority - 1), false},
		{"system-critical", withPriority(SystemCriticalPriority), true},
		{"system-node-critical", withPriority(SystemCriticalPriority + 1000), true},
		{"static", annotated(ConfigSourceAnnotation, FileSource), true},
		{"mirror", annotated(ConfigMirrorAnnotation, "hash"), true},
		{"from the API server", annotated(ConfigSourceAnnotation, APISource), false},
	} {
		if got := IsCritical(tt.pod); got != tt.want {
			t.Errorf("%s: IsCritical = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSystemCriticalPriorityMatchesUpstream pins the priority from which a
// pod is critical to upstream's.
func TestSystemCriticalPriorityMatchesUpstream(t *testing.T) {
	const sched = "k8s.io/kubernetes/pkg/apis/scheduling"
	if up := upstreamsrc.New(t).Value(sched, "SystemCriticalPriority").AsInt(); up != SystemCriticalPriority {
		t.Errorf("berth %d, upstream %s.SystemCriticalPriority %d", SystemCriticalPriority, sched, up)
	}
}
