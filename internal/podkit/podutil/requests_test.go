package podutil

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func container(name string, kv ...string) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: res(kv...)}}
}

func sidecar(name string, kv ...string) corev1.Container {
	c := container(name, kv...)
	c.RestartPolicy = policy(corev1.ContainerRestartPolicyAlways)
	return c
}

// cmpQuantities compares resource lists by value, not by representation.
var cmpQuantities = cmp.Comparer(func(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
})

func TestPodRequests(t *testing.T) {
	tests := []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList
	}{{
		name: "no requests",
		spec: corev1.PodSpec{Containers: []corev1.Container{container("a")}},
		want: corev1.ResourceList{},
	}, {
		name: "containers add up",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			container("a", "cpu", "500m", "memory", "1Gi"),
			container("b", "cpu", "250m", "example.com/gpu", "1"),
		}},
		want: res("cpu", "750m", "memory", "1Gi", "example.com/gpu", "1"),
	}, {
		// Upstream's example: init containers run one at a time, so the
		// pod needs the largest of them or the sum of its containers.
		name: "init containers take the maximum",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				container("i1", "cpu", "2", "memory", "1G"),
				container("i2", "cpu", "2", "memory", "3G"),
			},
			Containers: []corev1.Container{
				container("c1", "cpu", "2", "memory", "1G"),
				container("c2", "cpu", "1", "memory", "1G"),
			},
		},
		want: res("cpu", "3", "memory", "3G"),
	}, {
		name: "an init container's resource the containers do not request",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container("i", "ephemeral-storage", "1Gi")},
			Containers:     []corev1.Container{container("c", "cpu", "1")},
		},
		want: res("cpu", "1", "ephemeral-storage", "1Gi"),
	}, {
		name: "sidecars add to the containers",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("s", "cpu", "500m", "memory", "100Mi")},
			Containers:     []corev1.Container{container("c", "cpu", "1", "memory", "1Gi")},
		},
		want: res("cpu", "1500m", "memory", "1124Mi"),
	}, {
		// An init container after a sidecar runs beside it: 1 + 3 cpu is
		// more than the 0.5 + 1 of the running pod.
		name: "an init container after a sidecar runs beside it",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				sidecar("s", "cpu", "1"),
				container("i", "cpu", "3"),
			},
			Containers: []corev1.Container{container("c", "cpu", "500m")},
		},
		want: res("cpu", "4"),
	}, {
		name: "an init container before a sidecar runs alone",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				container("i", "cpu", "3"),
				sidecar("s", "cpu", "1"),
			},
			Containers: []corev1.Container{container("c", "cpu", "500m")},
		},
		want: res("cpu", "3"),
	}, {
		name: "sidecars accumulate for later init containers",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				sidecar("s1", "memory", "1Gi"),
				sidecar("s2", "memory", "1Gi"),
				container("i", "memory", "3Gi"),
			},
			Containers: []corev1.Container{container("c", "memory", "1Gi")},
		},
		want: res("memory", "5Gi"),
	}, {
		name: "overhead is added",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container("i", "cpu", "2")},
			Containers:     []corev1.Container{container("c", "cpu", "1", "memory", "1Gi")},
			Overhead:       res("cpu", "250m", "memory", "120Mi"),
		},
		want: res("cpu", "2250m", "memory", "1144Mi"),
	}, {
		name: "pod-level requests replace cpu, memory and hugepages only",
		spec: corev1.PodSpec{
			Containers: []corev1.Container{container("c", "cpu", "1", "memory", "1Gi", "ephemeral-storage", "1Gi")},
			Resources:  &corev1.ResourceRequirements{Requests: res("cpu", "3", "hugepages-2Mi", "4Mi")},
			Overhead:   res("cpu", "100m"),
		},
		want: res("cpu", "3100m", "memory", "1Gi", "ephemeral-storage", "1Gi", "hugepages-2Mi", "4Mi"),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PodRequests(&corev1.Pod{Spec: tt.spec})
			if diff := cmp.Diff(tt.want, got, cmpQuantities); diff != "" {
				t.Errorf("PodRequests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodRequestsDoesNotModifyThePod(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{sidecar("s", "cpu", "1")},
		Containers:     []corev1.Container{container("c", "cpu", "1")},
		Overhead:       res("cpu", "1"),
	}}
	before := pod.DeepCopy()
	PodRequests(pod)
	if diff := cmp.Diff(before, pod); diff != "" {
		t.Errorf("PodRequests modified the pod (-before +after):\n%s", diff)
	}
}

// TestHeldRequests: as upstream's NodeInfo, an admitted pod holds, per
// container, the larger of its allocation and what its status reports: a
// decrease not yet applied still holds the old amount, an increase not yet
// applied holds the allocation; pod-level resources likewise. PodRequests
// reads the spec alone.
func TestHeldRequests(t *testing.T) {
	onePod := func(kv ...string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("app", kv...)}}}
	}
	withStatus := func(pod *corev1.Pod, kv ...string) *corev1.Pod {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
			Resources: &corev1.ResourceRequirements{Requests: res(kv...)}}}
		return pod
	}
	podLevel := onePod()
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: res("cpu", "1")}
	podLevel.Status.Resources = &corev1.ResourceRequirements{Requests: res("cpu", "2")}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		held, spec corev1.ResourceList
	}{
		{"no status: the allocation", onePod("cpu", "1", "memory", "1Gi"),
			res("cpu", "1", "memory", "1Gi"), res("cpu", "1", "memory", "1Gi")},
		{"a decrease in progress holds the old amount", withStatus(onePod("cpu", "1"), "cpu", "3"),
			res("cpu", "3"), res("cpu", "1")},
		{"an increase in progress holds the allocation", withStatus(onePod("cpu", "2"), "cpu", "1"),
			res("cpu", "2"), res("cpu", "2")},
		{"pod-level resources: the larger too", podLevel, res("cpu", "2"), res("cpu", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.held, HeldRequests(tt.pod), cmpQuantities); diff != "" {
				t.Errorf("HeldRequests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.spec, PodRequests(tt.pod), cmpQuantities); diff != "" {
				t.Errorf("PodRequests (-want +got):\n%s", diff)
			}
		})
	}
}
