package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func container(name string, kv ...string) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: rl(kv...)}}
}

func sidecar(name string, kv ...string) corev1.Container {
	c := container(name, kv...)
	c.RestartPolicy = ptrTo(corev1.ContainerRestartPolicyAlways)
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
		want: rl("cpu", "750m", "memory", "1Gi", "example.com/gpu", "1"),
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
		want: rl("cpu", "3", "memory", "3G"),
	}, {
		name: "an init container's resource the containers do not request",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container("i", "ephemeral-storage", "1Gi")},
			Containers:     []corev1.Container{container("c", "cpu", "1")},
		},
		want: rl("cpu", "1", "ephemeral-storage", "1Gi"),
	}, {
		name: "sidecars add to the containers",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("s", "cpu", "500m", "memory", "100Mi")},
			Containers:     []corev1.Container{container("c", "cpu", "1", "memory", "1Gi")},
		},
		want: rl("cpu", "1500m", "memory", "1124Mi"),
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
		want: rl("cpu", "4"),
	}, {
		name: "an init container before a sidecar runs alone",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				container("i", "cpu", "3"),
				sidecar("s", "cpu", "1"),
			},
			Containers: []corev1.Container{container("c", "cpu", "500m")},
		},
		want: rl("cpu", "3"),
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
		want: rl("memory", "5Gi"),
	}, {
		name: "overhead is added",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container("i", "cpu", "2")},
			Containers:     []corev1.Container{container("c", "cpu", "1", "memory", "1Gi")},
			Overhead:       rl("cpu", "250m", "memory", "120Mi"),
		},
		want: rl("cpu", "2250m", "memory", "1144Mi"),
	}, {
		name: "pod-level requests replace cpu, memory and hugepages only",
		spec: corev1.PodSpec{
			Containers: []corev1.Container{container("c", "cpu", "1", "memory", "1Gi", "ephemeral-storage", "1Gi")},
			Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "3", "hugepages-2Mi", "4Mi")},
			Overhead:   rl("cpu", "100m"),
		},
		want: rl("cpu", "3100m", "memory", "1Gi", "ephemeral-storage", "1Gi", "hugepages-2Mi", "4Mi"),
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
		Overhead:       rl("cpu", "1"),
	}}
	before := pod.DeepCopy()
	PodRequests(pod)
	if diff := cmp.Diff(before, pod); diff != "" {
		t.Errorf("PodRequests modified the pod (-before +after):\n%s", diff)
	}
}

func TestFitCountsSidecarsOfActivePods(t *testing.T) {
	node := testNode()
	active := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{sidecar("s", "cpu", "1")},
		Containers:     []corev1.Container{container("c", "cpu", "2")},
	}}
	active.UID = "uid-old"
	got := fit(testPod("new", "cpu", "1500m"), node, []*corev1.Pod{active})
	want := []shortfall{{name: corev1.ResourceCPU, requested: 1500, used: 3000, capacity: 4000}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(shortfall{})); diff != "" {
		t.Errorf("fit (-want +got):\n%s", diff)
	}
}

// TestFitCountsResizesInProgress: as upstream's NodeInfo, an admitted pod
// holds the larger of its allocation and what its status reports, per
// container: a decrease not yet applied still holds the old amount; and
// the pod being admitted counts at its spec alone.
func TestFitCountsResizesInProgress(t *testing.T) {
	shrinking := testPod("shrinking", "cpu", "1") // allocated 1, still running at 3
	shrinking.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
		Resources: &corev1.ResourceRequirements{Requests: rl("cpu", "3")}}}
	growing := testPod("growing", "cpu", "2") // allocated 2, still running at 1
	growing.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
		Resources: &corev1.ResourceRequirements{Requests: rl("cpu", "1")}}}
	tests := []struct {
		name   string
		active *corev1.Pod
		want   []shortfall
	}{
		{name: "a decrease in progress holds the old amount", active: shrinking,
			want: []shortfall{{name: corev1.ResourceCPU, requested: 1500, used: 3000, capacity: 4000}}},
		{name: "an increase in progress holds the allocation", active: growing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("new", "cpu", "1500m")
			// The status of the pod being admitted is not its own yet.
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
				Resources: &corev1.ResourceRequirements{Requests: rl("cpu", "4")}}}
			got := fit(pod, testNode(), []*corev1.Pod{tt.active})
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(shortfall{})); diff != "" {
				t.Errorf("fit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFitReportsEveryShortfallInOrder(t *testing.T) {
	node := testNode()
	pod := testPod("new", "example.com/gpu", "3", "hugepages-2Mi", "2Mi", "ephemeral-storage", "200Gi", "memory", "9Gi", "cpu", "5")
	got := fit(pod, node, []*corev1.Pod{testPod("a"), testPod("b"), testPod("c")})
	var names []corev1.ResourceName
	for _, s := range got {
		names = append(names, s.name)
	}
	want := []corev1.ResourceName{"pods", "cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}

func TestResourceKinds(t *testing.T) {
	tests := []struct {
		name             corev1.ResourceName
		extended, scalar bool
	}{
		{"cpu", false, false},
		{"memory", false, false},
		{"storage", false, false},
		{"hugepages-1Gi", false, true},
		{"example.com/gpu", true, true},
		{"nvidia.com/gpu", true, true},
		{"kubernetes.io/something", false, true},
		{"requests.example.com/gpu", false, false},
		{"attachable-volumes-csi-x", false, true},
		{"bad name/x", false, false},
	}
	for _, tt := range tests {
		if got := isExtended(tt.name); got != tt.extended {
			t.Errorf("isExtended(%q) = %v, want %v", tt.name, got, tt.extended)
		}
		if got := isScalar(tt.name); got != tt.scalar {
			t.Errorf("isScalar(%q) = %v, want %v", tt.name, got, tt.scalar)
		}
	}
}
