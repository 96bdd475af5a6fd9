package admission

import (
	"runtime"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

// rl builds a resource list from name, quantity pairs.
func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = q(kv[i+1])
	}
	return out
}

func testNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{
			"kubernetes.io/hostname": "node-a",
			corev1.LabelOSStable:     runtime.GOOS,
			"zone":                   "z1",
			"cores":                  "8",
		}},
		Status: corev1.NodeStatus{Allocatable: rl(
			"cpu", "4", "memory", "8Gi", "ephemeral-storage", "100Gi", "pods", "3",
			"hugepages-2Mi", "0", "example.com/gpu", "2",
		)},
	}
}

// testPod is a pod requesting cpu and memory.
func testPod(name string, kv ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "app",
			Resources: corev1.ResourceRequirements{Requests: rl(kv...)},
		}}},
	}
}

func withHostPort(pod *corev1.Pod, ip string, proto corev1.Protocol, port int32) *corev1.Pod {
	c := &pod.Spec.Containers[0]
	c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, HostIP: ip, Protocol: proto})
	return pod
}

func ptrTo[T any](v T) *T { return &v }
