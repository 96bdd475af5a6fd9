package admission

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// RejectedStatus is the status of a pod Admit rejected, as upstream's
// rejectPod sets it: phase Failed, the rejection's reason, its message after
// "Pod was rejected: ", and the pod's QoS class.
func RejectedStatus(pod *corev1.Pod, r Result) corev1.PodStatus {
	return corev1.PodStatus{
		Phase:    corev1.PodFailed,
		Reason:   r.Reason,
		Message:  "Pod was rejected: " + r.Message,
		QOSClass: podutil.QOSClass(pod),
	}
}
