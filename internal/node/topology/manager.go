package topology

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// HintProvider is what the topology manager needs of a resource manager
// (upstream's HintProvider): the NUMA hints of a container and of a whole
// pod, by resource, and the allocation with the merged affinity. The CPU
// manager is one; the memory manager must be one to be aligned with it.
type HintProvider interface {
	// TopologyHints are the container's hints (nil: no preference).
	TopologyHints(ctx context.Context, pod *corev1.Pod, c *corev1.Container) ProviderHints
	// PodTopologyHints are the whole pod's hints, for the pod scope.
	PodTopologyHints(ctx context.Context, pod *corev1.Pod) ProviderHints
	// Allocate gives the container its resources, aligned to affinity
	// (Hint{}: no preference) where it can.
	Allocate(ctx context.Context, pod *corev1.Pod, c *corev1.Container, affinity Hint) error
	// AdmitError is the reason and message a pod is refused with when
	// Allocate fails (upstream's admission.GetPodAdmitResult).
	AdmitError(err error) (reason, message string)
}

// Config is what New needs.
type Config struct {
	Policy  string // topologyManagerPolicy
	Scope   string // topologyManagerScope
	Options Options
	// NUMA is the host's NUMA nodes (NUMAInfoOf); unused with none.
	NUMA      *NUMAInfo
	Providers []HintProvider
}

// Manager is the topology manager: it admits pods by merging its
// providers' hints and has them allocate with the merged affinity. It
// holds no state of its own; call Admit from one goroutine at a time (the
// admit handlers run in turn), since a container's hints depend on the
// allocations before it.
type Manager struct {
	policy    Policy
	scope     string
	providers []HintProvider
}

// New checks the configuration as upstream's NewManager: a policy other
// than none refuses a host with more NUMA nodes than
// max-allowable-numa-nodes.
func New(cfg Config) (*Manager, error) {
	m := &Manager{policy: Policy{Name: cfg.Policy, NUMA: cfg.NUMA, Options: cfg.Options}, scope: cfg.Scope, providers: cfg.Providers}
	switch cfg.Policy {
	case PolicyNone:
		return m, nil
	case PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode:
	default:
		return nil, fmt.Errorf("unknown policy: %q", cfg.Policy)
	}
	if cfg.NUMA == nil || len(cfg.NUMA.Nodes) == 0 {
		return nil, fmt.Errorf("cannot discover NUMA topology: no NUMA nodes")
	}
	if len(cfg.NUMA.Nodes) > cfg.Options.MaxAllowableNUMANodes {
		return nil, fmt.Errorf("unsupported on machines with more than %v NUMA Nodes", cfg.Options.MaxAllowableNUMANodes)
	}
	if cfg.Scope != ScopeContainer && cfg.Scope != ScopePod {
		return nil, fmt.Errorf("unknown scope: %q", cfg.Scope)
	}
	return m, nil
}

// Admit is upstream's scope Admit: with policy none every provider
// allocates each container without a preference; with the container scope
// each container's hints are merged and allocated in turn; with the pod
// scope the pod's hints are merged once for all its containers. A merged
// hint the policy does not admit refuses the pod with
// TopologyAffinityError.
func (m *Manager) Admit(ctx context.Context, pod *corev1.Pod) (ok bool, reason, message string) {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	if m.policy.Name == PolicyNone {
		return m.allocateAll(ctx, pod, containers, func(*corev1.Container) (Hint, bool) { return Hint{}, true })
	}
	if m.scope == ScopePod {
		var hints []ProviderHints
		for _, p := range m.providers {
			hints = append(hints, p.PodTopologyHints(ctx, pod))
		}
		best, admit := m.policy.Merge(hints)
		logger.V(2).Info("Pod topology hint", "bestHint", best, "admit", admit)
		if !admit {
			return false, ReasonTopologyAffinity, MessageTopologyAffinity
		}
		return m.allocateAll(ctx, pod, containers, func(*corev1.Container) (Hint, bool) { return best, true })
	}
	return m.allocateAll(ctx, pod, containers, func(c *corev1.Container) (Hint, bool) {
		var hints []ProviderHints
		for _, p := range m.providers {
			hints = append(hints, p.TopologyHints(ctx, pod, c))
		}
		best, admit := m.policy.Merge(hints)
		logger.V(2).Info("Container topology hint", "containerName", c.Name, "bestHint", best, "admit", admit)
		return best, admit
	})
}

// allocateAll has every provider allocate each container, in order, with
// the affinity hint gives it; it stops at the first refusal.
func (m *Manager) allocateAll(ctx context.Context, pod *corev1.Pod, containers []corev1.Container, hint func(*corev1.Container) (Hint, bool)) (bool, string, string) {
	for i := range containers {
		c := &containers[i]
		affinity, admit := hint(c)
		if !admit {
			return false, ReasonTopologyAffinity, MessageTopologyAffinity
		}
		for _, p := range m.providers {
			if err := p.Allocate(ctx, pod, c, affinity); err != nil {
				reason, message := p.AdmitError(err)
				return false, reason, message
			}
		}
	}
	return true, "", ""
}
