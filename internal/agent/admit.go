package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/admission"
	"github.com/berthk8s/berth/internal/eviction"
	"github.com/berthk8s/berth/internal/nodeshutdown"
)

// admitter runs admission for pods new to berth and records rejections.
type admitter struct {
	// node returns the Node to admit against (nil: node-independent checks).
	node    func() *corev1.Node
	maxPods int
	// active reports whether an admitted pod still counts against the node:
	// not in a terminal phase and not known terminated.
	active func(uid types.UID) bool
	reject func(uid types.UID, status corev1.PodStatus)
	// shuttingDown reports a graceful node shutdown under way: no pod is
	// admitted then.
	shuttingDown func() bool
	// pressure is the eviction manager's admission under node pressure
	// (upstream runs it before the other checks).
	pressure func(pod *corev1.Pod) (ok bool, message string)
	recorder interface {
		Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
	}
}

// Admit is syncloop.Config.Admit.
func (a *admitter) Admit(ctx context.Context, pod *corev1.Pod, others []*corev1.Pod) {
	active := make([]*corev1.Pod, 0, len(others))
	for _, p := range others {
		if a.active(p.UID) {
			active = append(active, p)
		}
	}
	// Upstream's order of admit handlers: eviction, node shutdown, the
	// scheduler's predicates.
	var r admission.Result
	if ok, msg := a.pressure(pod); !ok {
		r = admission.Result{Reason: eviction.Reason, Message: msg}
	} else if a.shuttingDown != nil && a.shuttingDown() {
		r = admission.Result{Reason: nodeshutdown.NotAdmittedReason, Message: nodeshutdown.NotAdmittedMessage}
	} else {
		r = admission.Admit(admission.Inputs{Pod: pod, Node: a.node(), Active: active, MaxPods: a.maxPods})
	}
	if r.Admit {
		return
	}
	klog.FromContext(ctx).Info("Pod rejected", "pod", klog.KObj(pod), "reason", r.Reason, "message", r.Message)
	a.reject(pod.UID, admission.RejectedStatus(pod, r))
	a.recorder.Eventf(pod, corev1.EventTypeWarning, r.Reason, "%s", r.Message)
}
