package mirrorpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

func staticPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-node1", Namespace: "default", UID: "hash1",
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				podutil.ConfigHashAnnotation:   "hash1",
				podutil.ConfigSourceAnnotation: "file",
				podutil.ConfigSeenAnnotation:   "2026-11-22T19:00:00.000000000Z",
			},
		},
		Spec: corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "web", Image: "busybox"}}},
	}
}

func mirrorPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "web-node1", Namespace: "default", UID: "mirror-uid",
		Annotations: map[string]string{podutil.ConfigMirrorAnnotation: "hash1"},
	}}
}

func TestPlan(t *testing.T) {
	now := metav1.Now()
	with := func(f func(*corev1.Pod)) *corev1.Pod { p := mirrorPod(); f(p); return p }
	tests := []struct {
		name        string
		static      *corev1.Pod
		mirror      *corev1.Pod
		terminating bool
		want        Action
	}{
		{"nothing", nil, nil, false, None},
		{"up to date", staticPod(), mirrorPod(), false, None},
		{"missing", staticPod(), nil, false, Create},
		{"other hash", staticPod(), with(func(p *corev1.Pod) { p.Annotations[podutil.ConfigMirrorAnnotation] = "old" }), false, Recreate},
		{"no mirror annotation", staticPod(), with(func(p *corev1.Pod) { p.Annotations = nil }), false, Recreate},
		{"being deleted", staticPod(), with(func(p *corev1.Pod) { p.DeletionTimestamp = &now }), false, Recreate},
		{"static pod gone", nil, mirrorPod(), false, Delete},
		{"static pod gone, still terminating", nil, mirrorPod(), true, None},
		{"static pod terminating, mirror missing", staticPod(), nil, true, None},
		{"static pod terminating, mirror outdated", staticPod(), with(func(p *corev1.Pod) { p.Annotations[podutil.ConfigMirrorAnnotation] = "old" }), true, None},
		{"static pod terminating, nothing", nil, nil, true, None},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plan(tc.static, tc.mirror, tc.terminating); got != tc.want {
				t.Errorf("Plan() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsMirrorOf(t *testing.T) {
	other := staticPod()
	other.Namespace = "kube-system"
	noHash := staticPod()
	delete(noHash.Annotations, podutil.ConfigHashAnnotation)
	tests := []struct {
		name           string
		mirror, static *corev1.Pod
		want           bool
	}{
		{"match", mirrorPod(), staticPod(), true},
		{"other namespace", mirrorPod(), other, false},
		{"hash from the UID", mirrorPod(), noHash, true},
		{"nil mirror", nil, staticPod(), false},
		{"nil static", mirrorPod(), nil, false},
	}
	for _, tc := range tests {
		if got := IsMirrorOf(tc.mirror, tc.static); got != tc.want {
			t.Errorf("%s: IsMirrorOf() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
