package agent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// logRecorder records pod events in berth's log. In standalone mode there
// is no API server to receive them.
type logRecorder struct {
	logger klog.Logger
}

func (r logRecorder) Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any) {
	msg := fmt.Sprintf(messageFmt, args...)
	kv := []any{"pod", klog.KObj(pod), "type", eventType, "reason", reason, "message", msg}
	if eventType == corev1.EventTypeWarning {
		r.logger.Info("Warning event", kv...)
		return
	}
	r.logger.V(1).Info("Event", kv...)
}
