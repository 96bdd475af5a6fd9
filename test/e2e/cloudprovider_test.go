package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/berthk8s/berth/internal/platform/machine"
)

// TestExternalCloudProvider registers berth with --cloud-provider=external
// and --provider-id as a node of a cloud would be, then plays the cloud
// controller manager: berth must register the Node tainted uninitialized
// with spec.providerID and --node-ip in the provided-node-ip annotation,
// and leave the addresses the "CCM" sets alone.
func TestExternalCloudProvider(t *testing.T) {
	env := startClusterEnv(t)
	ips, err := machine.HostIPs(nil)
	must(t, err)
	const providerID = "berth-e2e:///zone-a/instance-1"
	env.node.extraArgs = append(env.node.extraArgs, "--cloud-provider=external", "--provider-id="+providerID, "--node-ip="+ips[0])
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
	if node.Spec.ProviderID != providerID {
		t.Errorf("spec.providerID = %q, want %q", node.Spec.ProviderID, providerID)
	}
	tainted := false
	for _, taint := range node.Spec.Taints {
		tainted = tainted || (taint.Key == "node.cloudprovider.kubernetes.io/uninitialized" && taint.Value == "true" && taint.Effect == corev1.TaintEffectNoSchedule)
	}
	if !tainted {
		t.Errorf("taints = %v, want node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule", node.Spec.Taints)
	}
	if got := node.Annotations["alpha.kubernetes.io/provided-node-ip"]; got != ips[0] {
		t.Errorf("provided-node-ip annotation = %q, want %q", got, ips[0])
	}

	// The cloud controller manager sets the addresses it knows.
	ccm := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.99.0.7"},
		{Type: corev1.NodeExternalIP, Address: "203.0.113.7"},
		{Type: corev1.NodeHostName, Address: nodeName},
	}
	ctx := context.Background()
	var since metav1.Time
	must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := env.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Addresses = ccm
		patched, err := env.admin.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		if err == nil {
			since = readyHeartbeat(patched)
		}
		return err
	}))
	env.waitAPI(t, "two status reports after the CCM's addresses", func(ctx context.Context) (bool, error) {
		n, err := env.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = n
		return readyHeartbeat(n).Sub(since.Time) >= 3*time.Second, nil
	})
	if len(node.Status.Addresses) != len(ccm) {
		t.Fatalf("addresses = %v, want the CCM's %v", node.Status.Addresses, ccm)
	}
	for i := range ccm {
		if node.Status.Addresses[i] != ccm[i] {
			t.Errorf("addresses = %v, want the CCM's %v", node.Status.Addresses, ccm)
			break
		}
	}
}

// readyHeartbeat is the Ready condition's last heartbeat.
func readyHeartbeat(n *corev1.Node) metav1.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastHeartbeatTime
		}
	}
	return metav1.Time{}
}
