package userns

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// WantsUserNamespace reports whether the pod asks for a user namespace of
// its own (spec.hostUsers: false; unset means the host's).
func WantsUserNamespace(pod *corev1.Pod) bool {
	return pod != nil && pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers
}

// HandlerSupports says whether the runtime handler, among those the
// runtime reports, supports user namespaces, as upstream's
// HandlerSupportsUserNamespaces: a runtime that reports no handlers (too
// old to say) does not; a handler it does not report is an error. The
// error is upstream's refusal of a hostUsers: false pod.
func HandlerSupports(handlers []cri.RuntimeHandler, handler string) error {
	msg := "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
	if handler != "" {
		msg = fmt.Sprintf("can't set `spec.hostUsers: false`, RuntimeClass handler %q does not support user namespaces", handler)
	}
	if len(handlers) == 0 {
		return fmt.Errorf("%s", msg)
	}
	for _, h := range handlers {
		if h.Name == handler {
			if !h.UserNamespaces {
				return fmt.Errorf("%s", msg)
			}
			return nil
		}
	}
	return fmt.Errorf("%s: the handler %q is not known", msg, handler)
}
