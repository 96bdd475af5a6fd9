package containerconfig

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestVolumeGroups: the groups the pod's volumes add come after the pod's
// fsGroup and supplementalGroups in a container, between them in the
// sandbox, and in the sandbox only with a pod security context, as
// upstream orders them.
func TestVolumeGroups(t *testing.T) {
	pod := basePod()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](10), SupplementalGroups: []int64{20}}
	extra := []int64{30}
	sb, _, err := Sandbox(SandboxParams{Pod: pod, PodLogsDir: "/var/log/pods", ExtraGroups: extra})
	if err != nil {
		t.Fatal(err)
	}
	if got := sb.GetLinux().GetSecurityContext().GetSupplementalGroups(); !slices.Equal(got, []int64{10, 30, 20}) {
		t.Errorf("sandbox groups %v, want [10 30 20]", got)
	}
	c, err := Container(ContainerParams{Pod: pod, Container: &pod.Spec.Containers[0], Type: TypeRegular, ExtraGroups: extra})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.GetLinux().GetSecurityContext().GetSupplementalGroups(); !slices.Equal(got, []int64{10, 20, 30}) {
		t.Errorf("container groups %v, want [10 20 30]", got)
	}
	pod.Spec.SecurityContext = nil
	sb, _, err = Sandbox(SandboxParams{Pod: pod, PodLogsDir: "/var/log/pods", ExtraGroups: extra})
	if err != nil {
		t.Fatal(err)
	}
	if got := sb.GetLinux().GetSecurityContext().GetSupplementalGroups(); len(got) != 0 {
		t.Errorf("sandbox groups without a security context %v, want none", got)
	}
	c, err = Container(ContainerParams{Pod: pod, Container: &pod.Spec.Containers[0], Type: TypeRegular, ExtraGroups: extra})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.GetLinux().GetSecurityContext().GetSupplementalGroups(); !slices.Equal(got, []int64{30}) {
		t.Errorf("container groups without a security context %v, want [30]", got)
	}
}
