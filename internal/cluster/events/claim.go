package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
)

// ClaimEventf records an event about a PersistentVolumeClaim (the volume
// manager's expansion events, which upstream's kubelet records against
// the claim as well as the pod).
func (r *Recorder) ClaimEventf(pvc *corev1.PersistentVolumeClaim, eventType, reason, messageFmt string, args ...any) {
	msg := fmt.Sprintf(messageFmt, args...)
	if pvc == nil {
		r.log(eventType, "reason", reason, "message", msg)
		return
	}
	r.log(eventType, "persistentVolumeClaim", klog.KObj(pvc), "reason", reason, "message", msg)
	if !r.sending() {
		return
	}
	ref, err := reference.GetReference(scheme.Scheme, pvc)
	if err != nil {
		r.logger.Error(fmt.Errorf("get reference to claim %q: %w", pvc.Namespace+"/"+pvc.Name, err), "Not sending event", "persistentVolumeClaim", klog.KObj(pvc), "reason", reason)
		return
	}
	r.recorder.Event(ref, eventType, reason, msg)
}
