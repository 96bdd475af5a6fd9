package nodestatus

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Annotations berth sets on its Node, as upstream. (The deprecated beta OS
// and architecture labels upstream still sets are k8s.io/kubelet's.)
const (
	// AnnotationControllerManagedAttach tells the attach/detach controller
	// that it attaches and detaches this node's volumes
	// (enableControllerAttachDetach, true by default).
	AnnotationControllerManagedAttach = "volumes.kubernetes.io/controller-managed-attach-detach"
	// AnnotationProvidedNodeIP carries --node-ip to an external cloud
	// controller manager (k8s.io/cloud-provider/api
	// AnnotationAlphaProvidedIPAddr).
	AnnotationProvidedNodeIP = "alpha.kubernetes.io/provided-node-ip"
	// TaintExternalCloudProvider marks a Node that an external cloud
	// controller manager has not initialized yet (k8s.io/cloud-provider/api
	// TaintExternalCloudProvider); the CCM removes it.
	TaintExternalCloudProvider = "node.cloudprovider.kubernetes.io/uninitialized"
)

// defaultLabels are the labels reconciled onto an existing Node at
// registration, as upstream's updateDefaultLabels (TestDefaultLabelsMatchUpstream).
func defaultLabels() []string {
	return []string{
		corev1.LabelHostname,
		corev1.LabelTopologyZone,
		corev1.LabelTopologyRegion,
		corev1.LabelFailureDomainBetaZone,
		corev1.LabelFailureDomainBetaRegion,
		corev1.LabelInstanceTypeStable,
		corev1.LabelInstanceType,
		corev1.LabelOSStable,
		corev1.LabelArchStable,
		corev1.LabelWindowsBuild,
		kubeletapis.LabelOS,
		kubeletapis.LabelArch,
	}
}

// InitialNode builds the Node berth registers: its name, the hostname, OS
// and architecture labels (stable and beta) with labels (--node-labels)
// over them, taints (--register-with-taints, then the uninitialized taint
// with an external cloud provider, as upstream), the controller-managed
// attach/detach annotation (with in.ControllerAttachDetach),
// spec.providerID, and the status from in.
func InitialNode(in Inputs, labels map[string]string, taints []corev1.Taint) *corev1.Node {
	node, _ := initialNode(in, labels, taints)
	return node
}

// initialNode is InitialNode with the events its status calls for.
func initialNode(in Inputs, labels map[string]string, taints []corev1.Taint) (*corev1.Node, []Event) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: in.NodeName,
			Labels: map[string]string{
				corev1.LabelHostname:   in.Hostname,
				corev1.LabelOSStable:   in.Machine.OperatingSystem,
				corev1.LabelArchStable: in.Machine.Architecture,
				kubeletapis.LabelOS:    in.Machine.OperatingSystem,
				kubeletapis.LabelArch:  in.Machine.Architecture,
			},
			Annotations: map[string]string{},
		},
	}
	if in.ControllerAttachDetach {
		node.Annotations[AnnotationControllerManagedAttach] = "true"
	}
	for k, v := range labels {
		node.Labels[k] = v
	}
	if len(taints) > 0 {
		node.Spec.Taints = make([]corev1.Taint, len(taints))
		for i := range taints {
			taints[i].DeepCopyInto(&node.Spec.Taints[i])
		}
	}
	if in.ExternalCloudProvider {
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{
			Key: TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule,
		})
	}
	node.Spec.ProviderID = in.ProviderID
	return node, Apply(node, in)
}

// ReconcileExisting brings a Node that already existed at registration in
// line with the one berth would have created, as upstream does: the
// attach/detach annotation, the default labels, empty capacity or
// allocatable, the huge page sizes and, with resetExtended, every extended
// resource's capacity and allocatable at 0 until its plugin reports it
// (upstream's reconcileExtendedResource). It changes existing in place
// and says whether it changed anything.
func ReconcileExisting(initial, existing *corev1.Node, resetExtended bool) bool {
	changed := false
	if want, ok := initial.Annotations[AnnotationControllerManagedAttach]; existing.Annotations[AnnotationControllerManagedAttach] != want {
		if ok {
			if existing.Annotations == nil {
				existing.Annotations = map[string]string{}
			}
			existing.Annotations[AnnotationControllerManagedAttach] = want
		} else {
			delete(existing.Annotations, AnnotationControllerManagedAttach)
		}
		changed = true
	}
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	for _, l := range defaultLabels() {
		want, ok := initial.Labels[l]
		if !ok {
			continue
		}
		if existing.Labels[l] != want {
			existing.Labels[l] = want
			changed = true
		}
		if existing.Labels[l] == "" {
			delete(existing.Labels, l)
		}
	}
	changed = reconcileResources(initial, existing) || changed
	if resetExtended {
		changed = zeroExtended(existing) || changed
	}
	return changed
}

// zeroExtended sets the capacity and allocatable of every extended
// resource in the Node's capacity to 0; existing's lists are not nil
// (reconcileResources made them).
func zeroExtended(existing *corev1.Node) bool {
	changed := false
	for name, q := range existing.Status.Capacity {
		if !podutil.IsExtendedResourceName(name) {
			continue
		}
		alloc, ok := existing.Status.Allocatable[name]
		if q.IsZero() && ok && alloc.IsZero() {
			continue
		}
		existing.Status.Capacity[name] = *resource.NewQuantity(0, resource.DecimalSI)
		existing.Status.Allocatable[name] = *resource.NewQuantity(0, resource.DecimalSI)
		changed = true
	}
	return changed
}

// reconcileResources fills empty capacity and allocatable from initial and
// makes the huge page sizes those of initial.
func reconcileResources(initial, existing *corev1.Node) bool {
	changed := false
	if existing.Status.Capacity == nil {
		existing.Status.Capacity = initial.Status.Capacity.DeepCopy()
		changed = existing.Status.Capacity != nil
	}
	if existing.Status.Allocatable == nil {
		existing.Status.Allocatable = initial.Status.Allocatable.DeepCopy()
		changed = changed || existing.Status.Allocatable != nil
	}
	if existing.Status.Capacity == nil {
		existing.Status.Capacity = corev1.ResourceList{}
	}
	if existing.Status.Allocatable == nil {
		existing.Status.Allocatable = corev1.ResourceList{}
	}
	for name, want := range initial.Status.Capacity {
		if !isHugePages(name) {
			continue
		}
		if got, ok := existing.Status.Capacity[name]; !ok || got.Cmp(want) != 0 {
			existing.Status.Capacity[name] = want.DeepCopy()
			changed = true
		}
		wantAlloc := initial.Status.Allocatable[name]
		if got, ok := existing.Status.Allocatable[name]; !ok || got.Cmp(wantAlloc) != 0 {
			existing.Status.Allocatable[name] = wantAlloc.DeepCopy()
			changed = true
		}
	}
	for name := range existing.Status.Capacity {
		if _, ok := initial.Status.Capacity[name]; isHugePages(name) && !ok {
			delete(existing.Status.Capacity, name)
			delete(existing.Status.Allocatable, name)
			changed = true
		}
	}
	return changed
}

// EnsureOSArchLabels sets kubernetes.io/os and kubernetes.io/arch when
// they are missing or wrong, as upstream does before every status update,
// and says whether it changed them.
func EnsureOSArchLabels(node *corev1.Node, in Inputs) bool {
	changed := false
	for label, want := range map[string]string{
		corev1.LabelOSStable:   in.Machine.OperatingSystem,
		corev1.LabelArchStable: in.Machine.Architecture,
	} {
		if got, ok := node.Labels[label]; !ok || got != want {
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			node.Labels[label] = want
			changed = true
		}
	}
	return changed
}

// StatusChanged says whether status differs from old in anything but the
// conditions' heartbeat times.
func StatusChanged(old, status *corev1.NodeStatus) bool {
	if old == nil || status == nil {
		return old != status
	}
	if len(old.Conditions) != len(status.Conditions) {
		return true
	}
	a, b := stripHeartbeats(old.Conditions), stripHeartbeats(status.Conditions)
	if !apiequality.Semantic.DeepEqual(a, b) {
		return true
	}
	oc, nc := old.DeepCopy(), status.DeepCopy()
	oc.Conditions, nc.Conditions = nil, nil
	return !apiequality.Semantic.DeepEqual(oc, nc)
}

// stripHeartbeats returns the conditions sorted by type without their
// heartbeat times.
func stripHeartbeats(cs []corev1.NodeCondition) []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, len(cs))
	for i := range cs {
		cs[i].DeepCopyInto(&out[i])
		out[i].LastHeartbeatTime = metav1.Time{}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}
