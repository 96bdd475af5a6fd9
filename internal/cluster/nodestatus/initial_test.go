package nodestatus

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

func TestInitialNode(t *testing.T) {
	in := baseInputs()
	taints := []corev1.Taint{{Key: "dedicated", Value: "berth", Effect: corev1.TaintEffectNoSchedule}}
	labels := map[string]string{"role": "edge", corev1.LabelHostname: "override"}
	node := InitialNode(in, labels, taints)

	wantMeta := metav1.ObjectMeta{
		Name: "node-a",
		Labels: map[string]string{
			"kubernetes.io/hostname": "override", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", "role": "edge",
		},
		Annotations: map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"},
	}
	if diff := cmp.Diff(wantMeta, node.ObjectMeta); diff != "" {
		t.Errorf("metadata mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(taints, node.Spec.Taints); diff != "" {
		t.Errorf("taints mismatch (-want +got):\n%s", diff)
	}
	taints[0].Value = "changed"
	if node.Spec.Taints[0].Value != "berth" {
		t.Errorf("InitialNode shares the taints slice with its caller")
	}
	want := &corev1.Node{Status: corev1.NodeStatus{}}
	Apply(want, in)
	if diff := cmp.Diff(want.Status, node.Status); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
	if InitialNode(in, nil, nil).Spec.Taints != nil {
		t.Errorf("no taints should leave spec.taints nil")
	}
}

// TestInitialNodeWithoutControllerAttachDetach: enableControllerAttachDetach
// false registers the Node without the annotation, and an existing Node
// that has it loses it, as upstream's reconcileCMADAnnotationWithExistingNode.
func TestInitialNodeWithoutControllerAttachDetach(t *testing.T) {
	in := baseInputs()
	in.ControllerAttachDetach = false
	node := InitialNode(in, nil, nil)
	if _, ok := node.Annotations[AnnotationControllerManagedAttach]; ok {
		t.Errorf("annotations %v: want no %s", node.Annotations, AnnotationControllerManagedAttach)
	}
	existing := InitialNode(baseInputs(), nil, nil)
	existing.Annotations["other"] = "kept"
	if !ReconcileExisting(node, existing, false) {
		t.Errorf("ReconcileExisting: want a change (annotation removed)")
	}
	if diff := cmp.Diff(map[string]string{"other": "kept"}, existing.Annotations); diff != "" {
		t.Errorf("annotations after reconcile (-want +got):\n%s", diff)
	}
}

func TestReconcileExisting(t *testing.T) {
	in := baseInputs()
	in.Machine.HugePages = map[string]int64{"2Mi": 1 << 30}
	initial := InitialNode(in, nil, nil)
	q := resource.MustParse
	tests := []struct {
		name    string
		mutate  func(*corev1.Node)
		reset   bool
		changed bool
		check   func(*testing.T, *corev1.Node)
	}{
		{name: "identical", mutate: func(*corev1.Node) {}},
		{
			name:    "annotation missing",
			mutate:  func(n *corev1.Node) { n.Annotations = nil },
			changed: true,
			check: func(t *testing.T, n *corev1.Node) {
				if n.Annotations[AnnotationControllerManagedAttach] != "true" {
					t.Errorf("annotation not set: %v", n.Annotations)
				}
			},
		},
		{
			name: "default labels fixed, other labels kept",
			mutate: func(n *corev1.Node) {
				n.Labels = map[string]string{"kubernetes.io/hostname": "old", "custom": "x"}
			},
			changed: true,
			check: func(t *testing.T, n *corev1.Node) {
				want := map[string]string{
					"kubernetes.io/hostname": "node-a", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", "custom": "x",
				}
				if diff := cmp.Diff(want, n.Labels); diff != "" {
					t.Errorf("labels mismatch (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "empty capacity filled",
			mutate:  func(n *corev1.Node) { n.Status.Capacity, n.Status.Allocatable = nil, nil },
			changed: true,
			check: func(t *testing.T, n *corev1.Node) {
				if diff := cmp.Diff(quantities(initial.Status.Allocatable), quantities(n.Status.Allocatable)); diff != "" {
					t.Errorf("allocatable mismatch (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "huge page sizes follow the machine",
			mutate: func(n *corev1.Node) {
				n.Status.Capacity["hugepages-1Gi"] = q("2Gi")
				n.Status.Allocatable["hugepages-1Gi"] = q("2Gi")
				n.Status.Capacity["hugepages-2Mi"] = q("2Gi")
			},
			changed: true,
			check: func(t *testing.T, n *corev1.Node) {
				if _, ok := n.Status.Capacity["hugepages-1Gi"]; ok {
					t.Errorf("stale huge page size kept")
				}
				if got := n.Status.Capacity["hugepages-2Mi"]; got.String() != "1Gi" {
					t.Errorf("hugepages-2Mi = %s, want 1Gi", got.String())
				}
			},
		},
		{
			name: "extended resources kept without a reset",
			mutate: func(n *corev1.Node) {
				n.Status.Capacity["example.com/gpu"] = q("4")
				n.Status.Allocatable["example.com/gpu"] = q("3")
			},
			check: func(t *testing.T, n *corev1.Node) {
				if got := n.Status.Allocatable["example.com/gpu"]; got.String() != "3" {
					t.Errorf("example.com/gpu allocatable = %s, want 3", got.String())
				}
			},
		},
		{
			name: "extended resources zeroed on a reset, native ones and huge pages kept",
			mutate: func(n *corev1.Node) {
				n.Status.Capacity["example.com/gpu"] = q("4")
				n.Status.Allocatable["example.com/gpu"] = q("3")
				n.Status.Capacity["vendor.io/nic"] = q("2")
			},
			reset:   true,
			changed: true,
			check: func(t *testing.T, n *corev1.Node) {
				for _, name := range []corev1.ResourceName{"example.com/gpu", "vendor.io/nic"} {
					c, a := n.Status.Capacity[name], n.Status.Allocatable[name]
					if c.String() != "0" || a.String() != "0" {
						t.Errorf("%s capacity %s, allocatable %s, want 0 and 0", name, c.String(), a.String())
					}
				}
				if diff := cmp.Diff(quantities(initial.Status.Capacity), quantities(withoutExtended(n.Status.Capacity))); diff != "" {
					t.Errorf("other capacity changed (-want +got):\n%s", diff)
				}
			},
		},
		{name: "a reset with no extended resource changes nothing", mutate: func(*corev1.Node) {}, reset: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := initial.DeepCopy()
			existing.UID = "uid-1"
			tt.mutate(existing)
			if got := ReconcileExisting(initial, existing, tt.reset); got != tt.changed {
				t.Errorf("ReconcileExisting() = %v, want %v", got, tt.changed)
			}
			if tt.check != nil {
				tt.check(t, existing)
			}
		})
	}
}

func TestEnsureOSArchLabels(t *testing.T) {
	in := baseInputs()
	node := &corev1.Node{}
	if !EnsureOSArchLabels(node, in) {
		t.Errorf("missing labels: want a change")
	}
	if diff := cmp.Diff(map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}, node.Labels); diff != "" {
		t.Errorf("labels mismatch (-want +got):\n%s", diff)
	}
	if EnsureOSArchLabels(node, in) {
		t.Errorf("labels present: want no change")
	}
}

func TestStatusChanged(t *testing.T) {
	base := &corev1.Node{}
	Apply(base, baseInputs())
	tests := []struct {
		name   string
		mutate func(*corev1.NodeStatus)
		want   bool
	}{
		{"identical", func(*corev1.NodeStatus) {}, false},
		{"heartbeat only", func(s *corev1.NodeStatus) { s.Conditions[3].LastHeartbeatTime = now }, false},
		{"conditions reordered", func(s *corev1.NodeStatus) { s.Conditions[0], s.Conditions[3] = s.Conditions[3], s.Conditions[0] }, false},
		{"condition status", func(s *corev1.NodeStatus) { s.Conditions[3].Status = "False" }, true},
		{"condition dropped", func(s *corev1.NodeStatus) { s.Conditions = s.Conditions[:3] }, true},
		{"allocatable", func(s *corev1.NodeStatus) { s.Allocatable["pods"] = resource.MustParse("10") }, true},
		{"same quantity written differently", func(s *corev1.NodeStatus) { s.Capacity["cpu"] = resource.MustParse("4000m") }, false},
		{"images", func(s *corev1.NodeStatus) { s.Images = []corev1.ContainerImage{{Names: []string{"x"}}} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := base.Status.DeepCopy()
			tt.mutate(next)
			if got := StatusChanged(&base.Status, next); got != tt.want {
				t.Errorf("StatusChanged() = %v, want %v", got, tt.want)
			}
		})
	}
	if !StatusChanged(nil, &base.Status) || StatusChanged(nil, nil) {
		t.Errorf("StatusChanged with nil statuses")
	}
}

func TestStatusPatch(t *testing.T) {
	old := InitialNode(baseInputs(), nil, nil)
	old.Spec.Unschedulable = true

	t.Run("heartbeat only touches conditions, never spec", func(t *testing.T) {
		in := baseInputs()
		in.Now = t0.Add(10e9)
		next := old.DeepCopy()
		next.Spec.Unschedulable = false
		Apply(next, in)
		patch := decodePatch(t, old, next)
		if _, ok := patch["spec"]; ok {
			t.Errorf("patch has spec: %v", patch)
		}
		status := patch["status"].(map[string]any)
		if _, ok := status["conditions"]; !ok || len(status) != 2 { // conditions + $setElementOrder/conditions
			t.Errorf("status patch = %v, want only conditions", status)
		}
	})
	t.Run("changed addresses replace the list", func(t *testing.T) {
		next := old.DeepCopy()
		next.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.6"}, {Type: corev1.NodeHostName, Address: "node-a"}}
		patch := decodePatch(t, old, next)
		got := patch["status"].(map[string]any)["addresses"]
		want := []any{
			map[string]any{"type": "InternalIP", "address": "10.0.0.6"},
			map[string]any{"type": "Hostname", "address": "node-a"},
			map[string]any{"$patch": "replace"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("addresses patch mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("labels travel with the status", func(t *testing.T) {
		next := old.DeepCopy()
		next.Labels["kubernetes.io/os"] = "plan9"
		patch := decodePatch(t, old, next)
		want := map[string]any{"metadata": map[string]any{"labels": map[string]any{"kubernetes.io/os": "plan9"}}}
		if diff := cmp.Diff(want, patch); diff != "" {
			t.Errorf("patch mismatch (-want +got):\n%s", diff)
		}
	})
}

func decodePatch(t *testing.T, old, next *corev1.Node) map[string]any {
	t.Helper()
	data, err := StatusPatch(old, next)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInitialNodeCloudProvider(t *testing.T) {
	in := baseInputs()
	in.ExternalCloudProvider = true
	in.ProviderID = "aws:///eu-west-1a/i-0123"
	taints := []corev1.Taint{{Key: "dedicated", Value: "berth", Effect: corev1.TaintEffectNoSchedule}}
	node := InitialNode(in, nil, taints)
	want := []corev1.Taint{taints[0], {Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(want, node.Spec.Taints); diff != "" {
		t.Errorf("taints mismatch (-want +got):\n%s", diff)
	}
	if node.Spec.ProviderID != in.ProviderID {
		t.Errorf("spec.providerID %q, want %q", node.Spec.ProviderID, in.ProviderID)
	}
	if len(taints) != 1 {
		t.Errorf("InitialNode appended to its caller's taints")
	}
	in.ExternalCloudProvider, in.ProviderID = false, ""
	if node := InitialNode(in, nil, nil); node.Spec.Taints != nil || node.Spec.ProviderID != "" {
		t.Errorf("without a cloud provider: taints %v, providerID %q", node.Spec.Taints, node.Spec.ProviderID)
	}
}

func withoutExtended(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range l {
		if !podutil.IsExtendedResourceName(name) {
			out[name] = q
		}
	}
	return out
}
