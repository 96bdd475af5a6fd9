package podutil

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// IsExtendedResourceName reports whether name is an extended resource
// (upstream's v1helper.IsExtendedResourceName): fully qualified outside
// kubernetes.io/, not starting with "requests.", and valid as a quota name
// "requests.<name>". Admission counts these; device plugins must register
// one.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}
