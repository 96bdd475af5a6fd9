package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeWithoutAttachDetachNorStorageIsolation registers berth with
// --enable-controller-attach-detach=false and
// --local-storage-capacity-isolation=false: the Node must come up Ready
// without the controller-managed attach/detach annotation and without
// ephemeral-storage in its capacity and allocatable, as upstream's.
func TestNodeWithoutAttachDetachNorStorageIsolation(t *testing.T) {
	env := startClusterEnv(t)
	env.node.extraArgs = append(env.node.extraArgs, "--enable-controller-attach-detach=false", "--local-storage-capacity-isolation=false")
	env.node.start()

	var node *corev1.Node
	env.waitAPI(t, "node Ready", func(ctx context.Context) (bool, error) {
		n, err := env.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = n
		return conditionTrue(n.Status.Conditions, corev1.NodeReady), nil
	})
	if v, ok := node.Annotations["volumes.kubernetes.io/controller-managed-attach-detach"]; ok {
		t.Errorf("the Node carries the controller-managed attach/detach annotation (%q)", v)
	}
	for name, list := range map[string]corev1.ResourceList{"capacity": node.Status.Capacity, "allocatable": node.Status.Allocatable} {
		if q, ok := list[corev1.ResourceEphemeralStorage]; ok {
			t.Errorf("%s has ephemeral-storage %s", name, q.String())
		}
		if _, ok := list[corev1.ResourceMemory]; !ok {
			t.Errorf("%s has no memory: %v", name, list)
		}
	}
}
