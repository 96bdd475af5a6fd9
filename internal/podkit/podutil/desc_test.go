package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDesc(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{name: "name, namespace, uid", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}, want: "web_default(uid-1)"},
		{name: "empty", pod: &corev1.Pod{}, want: "_()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Desc(tt.pod); got != tt.want {
				t.Errorf("Desc = %q, want %q", got, tt.want)
			}
		})
	}
}
