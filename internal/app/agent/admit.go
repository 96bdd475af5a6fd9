package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/eviction"
	"github.com/berthk8s/berth/internal/node/nodeshutdown"
	"github.com/berthk8s/berth/internal/pod/admission"
	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/podkit/sysctl"
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
	// cpus is the resource managers' admission (the topology manager's,
	// or the CPU manager's alone with its policy none), among the active
	// pods; nil admits.
	cpus func(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) admission.Result
	// memory is the memory manager's admission (NUMA memory), among the
	// active pods; nil admits.
	memory func(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) admission.Result
	// sysctls are the sysctls pods may set on this node
	// (sysctl.NodeAllowlist).
	sysctls sysctl.Allowlist
	// features is the declared features' admission (upstream's
	// DeclaredFeaturesAdmitHandler, last); nil admits.
	features func(pod *corev1.Pod) admission.Result
	// alloc holds the pods' allocations: a pod is admitted at its
	// allocation (after a restart of berth, the one it had) among the
	// others at theirs, and an admitted pod's allocation is recorded. Nil
	// admits pods at their spec.
	alloc    *allocation.Manager
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
	if a.alloc != nil {
		a.alloc.Backfill(pod)
		pod, active = a.alloc.Allocated(pod), a.alloc.AllocatedPods(active)
	}
	r := a.decide(ctx, pod, active)
	if r.Admit {
		if a.alloc != nil {
			a.alloc.Admitted(ctx, pod)
		}
		return
	}
	klog.FromContext(ctx).Info("Pod rejected", "pod", klog.KObj(pod), "reason", r.Reason, "message", r.Message)
	a.reject(pod.UID, admission.RejectedStatus(pod, r))
	a.recorder.Eventf(pod, corev1.EventTypeWarning, r.Reason, "%s", r.Message)
}

// decide runs the admit handlers in upstream's order: eviction, sysctls,
// node shutdown, the resource managers (the topology manager over the CPU
// manager, then the memory manager), the scheduler's predicates, the
// node's declared features; the first failure is the answer.
func (a *admitter) decide(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) admission.Result {
	if ok, msg := a.pressure(pod); !ok {
		return admission.Result{Reason: eviction.Reason, Message: msg}
	}
	if r := admission.Sysctls(pod, a.sysctls); !r.Admit {
		return r
	}
	if a.shuttingDown != nil && a.shuttingDown() {
		return admission.Result{Reason: nodeshutdown.NotAdmittedReason, Message: nodeshutdown.NotAdmittedMessage}
	}
	if a.cpus != nil {
		if r := a.cpus(ctx, pod, active); !r.Admit {
			return r
		}
	}
	if a.memory != nil {
		if r := a.memory(ctx, pod, active); !r.Admit {
			return r
		}
	}
	if r := admission.Admit(admission.Inputs{Pod: pod, Node: a.node(), Active: active, MaxPods: a.maxPods}); !r.Admit {
		return r
	}
	if a.features != nil {
		return a.features(pod)
	}
	return admission.Result{Admit: true}
}

// Resize is the allocation manager's admission of a resize: pod at its
// new resources among others at their allocations, after the manager
// found it feasible (upstream's resize handler comes first): the admit
// handlers (decide) except the resource managers', whose exclusive
// assignments a resize does not change (a static policy's Guaranteed pod
// was refused as Infeasible already).
func (a *admitter) Resize(ctx context.Context, pod *corev1.Pod, others []*corev1.Pod) (ok bool, reason, message string) {
	b := *a
	b.cpus, b.memory = nil, nil
	r := b.decide(ctx, pod, others)
	return r.Admit, r.Reason, r.Message
}
