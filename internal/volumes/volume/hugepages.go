package volume

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// isHugePagesMedium reports whether an emptyDir medium is HugePages or
// HugePages-<size>.
func isHugePagesMedium(m corev1.StorageMedium) bool {
	return m == corev1.StorageMediumHugePages || strings.HasPrefix(string(m), string(corev1.StorageMediumHugePagesPrefix))
}

// hugePageSize is the page size of a hugetlbfs emptyDir, as upstream's
// getPageSizeMountOption decides it from the medium and the pod's hugepage
// requests (pod-level and every container's, init containers included):
// medium HugePages takes the one size the pod requests, HugePages-<size>
// needs a request of that size. It is the hugetlbfs pagesize option.
func hugePageSize(medium corev1.StorageMedium, pod *corev1.Pod) (string, error) {
	var want *resource.Quantity
	if medium != corev1.StorageMediumHugePages {
		q, err := resource.ParseQuantity(strings.TrimPrefix(string(medium), string(corev1.StorageMediumHugePagesPrefix)))
		if err != nil {
			return "", fmt.Errorf("size not specified: %w", err)
		}
		want = &q
	}
	lists := []corev1.ResourceList{}
	if pod.Spec.Resources != nil {
		lists = append(lists, pod.Spec.Resources.Requests)
	}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...) {
		lists = append(lists, c.Resources.Requests)
	}
	var found *resource.Quantity
	for _, l := range lists {
		for name := range l {
			size, ok := strings.CutPrefix(string(name), corev1.ResourceHugePagesPrefix)
			if !ok {
				continue
			}
			q, err := resource.ParseQuantity(size)
			if err != nil {
				return "", fmt.Errorf("unable to parse hugepage size %q: %w", size, err)
			}
			switch {
			case want == nil && found != nil && found.Cmp(q) != 0:
				return "", fmt.Errorf("medium: %s can't be used if container requests multiple huge page sizes", medium)
			case want == nil || want.Cmp(q) == 0:
				found = &q
			}
		}
	}
	if found == nil {
		return "", fmt.Errorf("medium %s: hugePages storage requested, but there is no resource request for huge pages", medium)
	}
	return found.String(), nil
}
