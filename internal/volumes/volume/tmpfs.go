package volume

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// tmpfsSize decides whether a volume lives on tmpfs and the size of that
// tmpfs in bytes (0: the kernel's default). Secret and projected volumes
// always do; emptyDir volumes of medium Memory do. The size is, as
// upstream's calculateEmptyDirMemorySize: the node's allocatable memory,
// lowered to the pod's memory limit and then to the volume's sizeLimit when
// those are positive and smaller.
func tmpfsSize(kind Kind, pod *corev1.Pod, v corev1.Volume, nodeAllocatable *resource.Quantity) (bool, int64, error) {
	var sizeLimit *resource.Quantity
	switch {
	case kind.onTmpfs():
	case kind != KindEmptyDir:
		return false, 0, nil
	case v.EmptyDir.Medium == corev1.StorageMediumDefault:
		return false, 0, nil
	case v.EmptyDir.Medium == corev1.StorageMediumMemory:
		sizeLimit = v.EmptyDir.SizeLimit
	case isHugePagesMedium(v.EmptyDir.Medium):
		return false, 0, nil // hugetlbfs (hugePageSize)
	default:
		return false, 0, fmt.Errorf("emptyDir medium %s is not supported by berth yet", v.EmptyDir.Medium)
	}
	size := int64(0)
	if nodeAllocatable != nil {
		size = nodeAllocatable.Value()
	}
	lower := func(v int64) {
		if v > 0 && (size == 0 || v < size) {
			size = v
		}
	}
	lower(podMemoryLimit(pod))
	if sizeLimit != nil {
		lower(sizeLimit.Value())
	}
	return true, size, nil
}

// podMemoryLimit is the memory limit of the pod's cgroup: the pod-level
// limit when set, else the sum of its containers' limits (or the largest
// init container's, when larger) when every container has one, else 0.
func podMemoryLimit(pod *corev1.Pod) int64 {
	if r := pod.Spec.Resources; r != nil {
		if q, ok := r.Limits[corev1.ResourceMemory]; ok {
			return q.Value()
		}
	}
	var sum int64
	for _, c := range pod.Spec.Containers {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok {
			return 0
		}
		sum += q.Value()
	}
	var sidecars, initMax int64
	for _, c := range pod.Spec.InitContainers {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok {
			return 0
		}
		if podutil.IsSidecar(&c) {
			sidecars += q.Value()
			continue
		}
		initMax = max(initMax, sidecars+q.Value())
	}
	return max(sum+sidecars, initMax)
}
