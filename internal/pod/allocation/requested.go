package allocation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// change is one change an update asks of a container's resources: a label
// set of kubelet_container_requested_resizes_total.
type change struct{ resource, requirement, operation string }

// The operations of a change, as upstream's resizeOperationForResources
// (pinned in its order by TestRequestedMatchesUpstream).
const (
	opRemove   = "remove"
	opAdd      = "add"
	opDecrease = "decrease"
	opIncrease = "increase"
)

// requestedResources are the resources and requirements whose changes
// are counted, in upstream's order (recordContainerResizeOperations).
var requestedResources = []struct {
	resource    corev1.ResourceName
	requirement string
}{
	{corev1.ResourceMemory, "requests"},
	{corev1.ResourceMemory, "limits"},
	{corev1.ResourceCPU, "requests"},
	{corev1.ResourceCPU, "limits"},
}

// requested is upstream's recordResizeOperations: the changes of cpu and
// memory requests and limits that an update from old to pod asks of each
// container (init and regular, matched by name and kind: every container
// is resizable, InPlacePodVerticalScalingInitContainers being GA), and
// whether the update asks for a resize at all: such a change, or a change
// of the pod-level resources. A pod new to berth (old nil) is a resize
// with no change counted, as upstream's HandlePodAdditions.
// (InPlacePodVerticalScalingMemoryBackedVolumes is alpha and off, so a
// volume's sizeLimit is not looked at.)
func requested(old, pod *corev1.Pod) (changes []change, resize bool) {
	if old == nil {
		return nil, true
	}
	for _, init := range []bool{true, false} {
		news := containersOf(pod, init)
		for _, o := range containersOf(old, init) {
			n := named(news, o.Name)
			if n == nil {
				continue
			}
			for _, r := range requestedResources {
				was, now := quantity(o.Resources, r.requirement, r.resource), quantity(n.Resources, r.requirement, r.resource)
				if op := resizeOperation(now, was); op != "" {
					changes = append(changes, change{string(r.resource), r.requirement, op})
				}
			}
		}
	}
	podLevel := !equality.Semantic.DeepEqual(old.Spec.Resources, pod.Spec.Resources)
	return changes, len(changes) > 0 || podLevel
}

// resizeOperation is upstream's resizeOperationForResources: how a
// quantity changes from old to new, "" if it does not.
func resizeOperation(new, old resource.Quantity) string {
	switch {
	case new.IsZero() && !old.IsZero():
		return opRemove
	case old.IsZero() && !new.IsZero():
		return opAdd
	case new.Cmp(old) < 0:
		return opDecrease
	case new.Cmp(old) > 0:
		return opIncrease
	}
	return ""
}

func quantity(r corev1.ResourceRequirements, requirement string, name corev1.ResourceName) resource.Quantity {
	list := r.Requests
	if requirement == "limits" {
		list = r.Limits
	}
	return list[name]
}

func named(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}
