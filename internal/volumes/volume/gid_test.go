package volume

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExtraGroups(t *testing.T) {
	pv := func(gid string) *corev1.PersistentVolume {
		p := &corev1.PersistentVolume{}
		if gid != "" {
			p.Annotations = map[string]string{volumeGIDAnnotation: gid}
		}
		return p
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{SupplementalGroups: []int64{3000}}}}
	got := extraGroups(pod, []*corev1.PersistentVolume{pv("2000"), pv(""), pv("not-a-number"), pv("3000"), pv("1000"), pv("2000")})
	if want := []int64{1000, 2000}; !slices.Equal(got, want) {
		t.Errorf("extraGroups() = %v, want %v (the pod's own 3000 and the bad one left out, each once)", got, want)
	}
}

// TestSupplementalGroupsOfClaims: a set-up claim whose PV has the gid
// annotation adds the group; nothing before SetUp.
func TestSupplementalGroupsOfClaims(t *testing.T) {
	pvc, pv := boundClaim("c", "pv1", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: t.TempDir()}})
	pv.ObjectMeta = metav1.ObjectMeta{Name: "pv1", Annotations: map[string]string{volumeGIDAnnotation: "5555"}}
	e := newEnv(t, pvc, pv)
	pod := claimPod(pvcSource("c", false))
	if got := e.m.SupplementalGroups(pod); got != nil {
		t.Errorf("before SetUp: %v, want none", got)
	}
	if _, err := e.m.SetUp(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if got := e.m.SupplementalGroups(pod); !slices.Equal(got, []int64{5555}) {
		t.Errorf("SupplementalGroups() = %v, want [5555]", got)
	}
}
