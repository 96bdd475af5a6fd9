package admission

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/eviction"
	"github.com/berthk8s/berth/internal/node/nodeshutdown"
	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// Handlers are the node's admit handlers, which Decide runs in upstream's
// order. A nil func admits. Plain values: build it once every handler
// exists.
type Handlers struct {
	// Node returns the Node to admit against (nil: node-independent checks).
	Node    func() *corev1.Node
	MaxPods int
	// Pressure is the eviction manager's admission under node pressure.
	Pressure func(pod *corev1.Pod) (ok bool, message string)
	// Sysctls are the sysctls pods may set on this node
	// (sysctl.NodeAllowlist).
	Sysctls sysctl.Allowlist
	// ShuttingDown reports a graceful node shutdown under way: no pod is
	// admitted then.
	ShuttingDown func() bool
	// CPUs is the resource managers' admission (the topology manager's,
	// or the CPU manager's alone with its policy none) and Memory the
	// memory manager's (NUMA memory), among the active pods.
	CPUs, Memory func(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) Result
	// PluginResources gives the node to check the predicates against once
	// the device manager allocated the pod's devices (upstream's
	// UpdatePluginResources: allocatable at least what is allocated, so
	// pods keep their devices while a plugin re-registers); nil: the node.
	PluginResources func(pod *corev1.Pod, node *corev1.Node) *corev1.Node
	// Features is the declared features' admission (upstream's
	// DeclaredFeaturesAdmitHandler, last).
	Features func(pod *corev1.Pod) Result
}

// Decide runs the admit handlers in upstream's order: eviction, sysctls,
// node shutdown, the resource managers (the topology manager over the CPU
// manager, then the memory manager), the scheduler's predicates (Admit),
// the node's declared features; the first failure is the answer.
func (h *Handlers) Decide(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) Result {
	if h.Pressure != nil {
		if ok, msg := h.Pressure(pod); !ok {
			return Result{Reason: eviction.Reason, Message: msg}
		}
	}
	if r := Sysctls(pod, h.Sysctls); !r.Admit {
		return r
	}
	if h.ShuttingDown != nil && h.ShuttingDown() {
		return Result{Reason: nodeshutdown.NotAdmittedReason, Message: nodeshutdown.NotAdmittedMessage}
	}
	for _, manager := range []func(context.Context, *corev1.Pod, []*corev1.Pod) Result{h.CPUs, h.Memory} {
		if manager == nil {
			continue
		}
		if r := manager(ctx, pod, active); !r.Admit {
			return r
		}
	}
	var node *corev1.Node
	if h.Node != nil {
		node = h.Node()
	}
	if h.PluginResources != nil && node != nil {
		node = h.PluginResources(pod, node)
	}
	if r := Admit(Inputs{Pod: pod, Node: node, Active: active, MaxPods: h.MaxPods}); !r.Admit {
		return r
	}
	if h.Features != nil {
		return h.Features(pod)
	}
	return Result{Admit: true}
}

// Resize is the admission of a resize (the allocation manager's Admit):
// pod at its new resources among the others at their allocations, after
// the manager found it feasible (upstream's resize handler comes first).
// It runs Decide's handlers but the resource managers', whose exclusive
// assignments a resize does not change (a static policy's Guaranteed pod
// was refused as Infeasible already).
func (h *Handlers) Resize(ctx context.Context, pod *corev1.Pod, others []*corev1.Pod) (ok bool, reason, message string) {
	without := *h
	without.CPUs, without.Memory = nil, nil
	r := without.Decide(ctx, pod, others)
	return r.Admit, r.Reason, r.Message
}

// Allocations are the pods' allocations as admission uses them
// (internal/pod/allocation): a pod is admitted at its allocation (after a
// restart of berth, the one it had) among the others at theirs, and an
// admitted pod's allocation is recorded.
type Allocations interface {
	Backfill(pod *corev1.Pod)
	Allocated(pod *corev1.Pod) *corev1.Pod
	AllocatedPods(pods []*corev1.Pod) []*corev1.Pod
	Admitted(ctx context.Context, pod *corev1.Pod)
}

// Recorder records the rejection's Warning event.
type Recorder interface {
	Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Admitter admits the pods new to the node (the sync loop's Admit), as
// upstream's HandlePodAdditions: among the pods admitted before that still
// count (Active), at their allocations; a rejected pod gets
// RejectedStatus (Reject) and a Warning event. Its fields are set once, by
// the wiring.
type Admitter struct {
	Handlers *Handlers
	// Active reports whether an admitted pod still counts against the
	// node (podworker.Workers.IsActive).
	Active      func(uid types.UID) bool
	Allocations Allocations // nil admits pods at their spec
	Reject      func(uid types.UID, status corev1.PodStatus)
	Recorder    Recorder
	// Stages records each pod's admission as the first stage of its
	// start (internal/pod/timeline); nil records none.
	Stages StageRecorder
}

// StageRecorder records a stage of a pod's start: Begin starts it now and
// returns its end (timeline.Recorder). Safe for concurrent use.
type StageRecorder interface {
	Begin(pod *corev1.Pod, stage, target string) timeline.EndFunc
}

// Admit is syncloop.Config.Admit: it admits pod against others, the pods
// admitted before it.
func (a *Admitter) Admit(ctx context.Context, pod *corev1.Pod, others []*corev1.Pod) {
	active := make([]*corev1.Pod, 0, len(others))
	for _, p := range others {
		if a.Active(p.UID) {
			active = append(active, p)
		}
	}
	if a.Allocations != nil {
		a.Allocations.Backfill(pod)
		pod, active = a.Allocations.Allocated(pod), a.Allocations.AllocatedPods(active)
	}
	end := func(int64, string, error) {}
	if a.Stages != nil {
		end = a.Stages.Begin(pod, timeline.StageAdmitted, "")
	}
	r := a.Handlers.Decide(ctx, pod, active)
	if r.Admit {
		end(0, "", nil)
		if a.Allocations != nil {
			a.Allocations.Admitted(ctx, pod)
		}
		return
	}
	end(0, "", errors.New(r.Reason+": "+r.Message))
	klog.FromContext(ctx).Info("Pod rejected", "pod", klog.KObj(pod), "reason", r.Reason, "message", r.Message)
	a.Reject(pod.UID, RejectedStatus(pod, r))
	a.Recorder.Eventf(pod, corev1.EventTypeWarning, r.Reason, "%s", r.Message)
}
