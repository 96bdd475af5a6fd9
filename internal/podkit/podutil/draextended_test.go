package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func extendedPod() *corev1.Pod {
	return &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gpu"}, {Name: "plain"}}},
		Status: corev1.PodStatus{ExtendedResourceClaimStatus: &corev1.PodExtendedResourceClaimStatus{
			ResourceClaimName: "pod-extended-resources-x",
			RequestMappings:   []corev1.ContainerExtendedResourceRequest{{ContainerName: "gpu", ResourceName: "example.com/gpu", RequestName: "container-0-request-0"}},
		}},
	}
}

func TestDRAExtendedResources(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		"example.com/gpu":                          true,
		"deviceclass.resource.kubernetes.io/gpu":   true,
		"cpu":                                      false,
		"nvidia.com/gpu":                           true,
		"hugepages-2Mi":                            false,
		"kubernetes.io/something":                  false,
		"requests.example.com/gpu":                 false,
		"attachable-volumes-aws-ebs":               false,
		"deviceclass.resource.kubernetes.io/a.b-c": true,
	} {
		if got := IsDRAExtendedResourceName(name); got != want {
			t.Errorf("IsDRAExtendedResourceName(%q) = %t, want %t", name, got, want)
		}
	}
	pod := extendedPod()
	for _, tc := range []struct {
		container, resource string
		want                bool
	}{
		{"gpu", "example.com/gpu", true},
		{"gpu", "example.com/fpga", false},
		{"plain", "example.com/gpu", false},
	} {
		if got := IsDRAExtendedResource(pod, tc.container, tc.resource); got != tc.want {
			t.Errorf("IsDRAExtendedResource(%s, %s) = %t, want %t", tc.container, tc.resource, got, tc.want)
		}
	}
	if name, ok := ExtendedResourceClaimName(pod); !ok || name != "pod-extended-resources-x" {
		t.Errorf("ExtendedResourceClaimName = %q, %t", name, ok)
	}
	if !UsesResourceClaims(pod) || !ContainerUsesResourceClaims(pod, &pod.Spec.Containers[0]) || ContainerUsesResourceClaims(pod, &pod.Spec.Containers[1]) {
		t.Error("the pod uses claims through its gpu container only")
	}
	plain := &corev1.Pod{Spec: pod.Spec}
	if UsesResourceClaims(plain) || IsDRAExtendedResource(plain, "gpu", "example.com/gpu") {
		t.Error("a pod without the status uses no claim")
	}
	if _, ok := ExtendedResourceClaimName(plain); ok {
		t.Error("ExtendedResourceClaimName of a pod without the status")
	}
	plain.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "c"}}
	plain.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "c"}}}}}
	if !UsesResourceClaims(plain) || !ContainerUsesResourceClaims(plain, &plain.Spec.Containers[0]) {
		t.Error("spec.resourceClaims are claims")
	}
}
