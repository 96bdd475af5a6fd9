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

// TestFitLeavesDRAExtendedResources: as upstream's admission
// (removeMissingExtendedResources), a container's request that the pod's
// extended resource claim serves is not counted against the node's
// allocatable, whether the node lacks the resource
// (deviceclass.resource.kubernetes.io/<class>, never allocatable) or a
// device plugin advertises too few; a request no mapping names still is,
// and an extended resource the node does not know never is.
func TestFitLeavesDRAExtendedResources(t *testing.T) {
	mapped := func(pod *corev1.Pod, resources ...string) *corev1.Pod {
		st := &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: pod.Name + "-extended-resources-abcde"}
		for i, r := range resources {
			st.RequestMappings = append(st.RequestMappings, corev1.ContainerExtendedResourceRequest{
				ContainerName: "app", ResourceName: r, RequestName: "container-0-request-" + string(rune('0'+i))})
		}
		pod.Status.ExtendedResourceClaimStatus = st
		return pod
	}
	const class = "deviceclass.resource.kubernetes.io/gpu.example.com"
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []corev1.ResourceName
	}{
		{name: "a device class name without the claim status is refused", pod: testPod("p", class, "1"),
			want: []corev1.ResourceName{class}},
		{name: "a device class name DRA serves is admitted", pod: mapped(testPod("p", class, "1"), class)},
		{name: "an extended resource DRA serves is not counted against a device plugin's", pod: mapped(testPod("p", "example.com/gpu", "3"), "example.com/gpu")},
		{name: "without the mapping it is", pod: testPod("p", "example.com/gpu", "3"), want: []corev1.ResourceName{"example.com/gpu"}},
		{name: "a mapping of another resource leaves it counted", pod: mapped(testPod("p", "example.com/gpu", "3"), "example.com/fpga"),
			want: []corev1.ResourceName{"example.com/gpu"}},
		{name: "an extended resource the node does not know is dropped anyway", pod: testPod("p", "example.com/fpga", "9")},
		{name: "the rest is still counted", pod: mapped(testPod("p", class, "1", "cpu", "5"), class), want: []corev1.ResourceName{"cpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []corev1.ResourceName
			for _, s := range fit(tt.pod, testNode(), nil) {
				names = append(names, s.name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("shortfalls (-want +got):\n%s", diff)
			}
		})
	}
	pod := mapped(testPod("p", class, "1"), class)
	withoutDRAExtendedRequests(pod)
	if _, ok := pod.Spec.Containers[0].Resources.Requests[class]; !ok {
		t.Error("withoutDRAExtendedRequests changed the pod it was given")
	}
}
