package cpumanager

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/cpumanager/state"
)

// Config is what New needs.
type Config struct {
	// Policy is cpuManagerPolicy: PolicyNone or PolicyStatic.
	Policy  string
	Options Options
	// Topology is the machine's (TopologyOf).
	Topology *Topology
	// NumReserved is the CPUs kubeReserved and systemReserved hold, rounded
	// up; ReservedCPUs is reservedSystemCPUs (empty: picked by topology).
	NumReserved  int
	ReservedCPUs cpuset.CPUSet
	// StateDir is the root directory, where cpu_manager_state lives.
	StateDir string
	// ReconcilePeriod is cpuManagerReconcilePeriod.
	ReconcilePeriod time.Duration
	// Update sets a running container's cpuset through the CRI
	// (UpdateContainerResources with only CpusetCpus, as upstream).
	Update func(ctx context.Context, containerID string, cpus cpuset.CPUSet) error
	// Snapshot returns what the reconcile loop looks at.
	Snapshot func() Snapshot
	Clock    clock.WithTicker
}

// Snapshot is the node's pods as the reconcile loop and stale-state
// removal see them.
type Snapshot struct {
	// SourcesReady: every pod source has been seen. Before that no state
	// is removed, since a pod not seen yet may hold CPUs.
	SourcesReady bool
	// Active are the pods not terminated (upstream's GetActivePods).
	Active []*corev1.Pod
	// Running maps a pod UID to its running containers: name -> ID.
	Running map[string]map[string]string
}

// Manager is the CPU manager: it admits pods (allocating exclusive CPUs
// under the static policy), says which CPUs a container is created with,
// keeps running containers' cpusets current and releases the CPUs of pods
// that are gone. Safe for concurrent use; mu guards state and sent.
type Manager struct {
	cfg    Config
	static *Static // nil with the none policy

	mu    sync.Mutex
	state State
	// sent is the cpuset last given to each running container, by ID.
	sent map[string]cpuset.CPUSet
}

// New builds the manager and restores its state from the checkpoint, as
// upstream's NewManager and Start: a checkpoint of another policy is an
// error (drain the node and remove the file), as is a state that does not
// fit this machine. It writes the checkpoint back: a checkpoint it cannot
// create is an error, as upstream's restoreState; one it cannot rewrite
// (a full disk) keeps its last good copy, which holds the same state unless
// the policy's start changed it, and the failure is logged, as upstream's
// SetDefaultCPUSet does.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	m := &Manager{cfg: cfg, sent: map[string]cpuset.CPUSet{}}
	switch cfg.Policy {
	case PolicyNone:
	case PolicyStatic:
		if cfg.NumReserved <= 0 {
			return nil, fmt.Errorf("[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero")
		}
		s, err := NewStatic(cfg.Topology, cfg.NumReserved, cfg.ReservedCPUs, cfg.Options)
		if err != nil {
			return nil, fmt.Errorf("new static policy error: %w", err)
		}
		m.static = s
	default:
		return nil, fmt.Errorf("unknown policy: %q", cfg.Policy)
	}
	restored, found, err := restore(cfg.StateDir, cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("could not restore state from checkpoint: %w, please drain this node and delete the CPU manager checkpoint file %q before restarting Kubelet", err, cfg.StateDir+"/"+state.FileName)
	}
	if m.static != nil {
		if restored, err = m.static.Start(restored); err != nil {
			return nil, fmt.Errorf("start static policy: %w, please drain node and remove policy state file", err)
		}
	}
	m.state = restored
	if err := m.persist(); err != nil {
		if !found {
			return nil, err
		}
		klog.FromContext(ctx).Error(err, "Failed to store state to checkpoint")
	}
	return m, nil
}

// restore reads the checkpoint into a State (empty without a file) and
// says whether there was one.
func restore(dir, policy string) (State, bool, error) {
	c, found, err := state.Read(dir)
	if err != nil || !found {
		return State{Assignments: map[string]map[string]cpuset.CPUSet{}}, false, err
	}
	if c.PolicyName != policy {
		return State{}, true, fmt.Errorf("configured policy %q differs from state checkpoint policy %q", policy, c.PolicyName)
	}
	s := State{Assignments: map[string]map[string]cpuset.CPUSet{}}
	if s.Default, err = cpuset.Parse(c.DefaultCPUSet); err != nil {
		return State{}, true, fmt.Errorf("could not parse default CPU set %q: %w", c.DefaultCPUSet, err)
	}
	for pod, cs := range c.Entries {
		for container, str := range cs {
			set, err := cpuset.Parse(str)
			if err != nil {
				return State{}, true, fmt.Errorf("could not parse cpuset %q for container %q in pod %q: %w", str, container, pod, err)
			}
			s.set(pod, container, set)
		}
	}
	return s, true, nil
}

// persist writes the state; the caller holds mu or owns m alone.
func (m *Manager) persist() error {
	c := state.Checkpoint{PolicyName: m.cfg.Policy, DefaultCPUSet: m.state.Default.String(), Entries: map[string]map[string]string{}}
	for pod, cs := range m.state.Assignments {
		c.Entries[pod] = map[string]string{}
		for container, set := range cs {
			c.Entries[pod][container] = set.String()
		}
	}
	if err := state.Write(m.cfg.StateDir, c); err != nil {
		return fmt.Errorf("store cpu manager state: %w", err)
	}
	return nil
}

// State returns a copy of the current state.
func (m *Manager) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.Clone()
}

// Admit allocates the pod's exclusive CPUs, after removing the state of
// pods no longer active (upstream's Allocate calls removeStaleState
// first). It returns false with upstream's reason and message when they
// cannot be had. The none policy admits every pod.
func (m *Manager) Admit(ctx context.Context, pod *corev1.Pod, snap Snapshot) (ok bool, reason, message string) {
	if m.static == nil {
		return true, "", ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	snap.Active = append(slices.Clip(snap.Active), pod)
	changed := m.removeStaleLocked(ctx, snap)
	s, err := m.static.AllocatePod(m.state, pod)
	if err == nil {
		m.state, changed = s, true
	}
	if changed {
		if perr := m.persist(); perr != nil {
			klog.FromContext(ctx).Error(perr, "Store state to checkpoint error")
		}
	}
	if err != nil {
		reason, message = AdmitReason(err)
		return false, reason, message
	}
	return true, "", ""
}

// CPUSet returns the cpuset a container is created with ("" : not
// pinned, as with the none policy): its exclusive CPUs or the shared pool.
func (m *Manager) CPUSet(podUID, container string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.CPUsOf(podUID, container).String()
}

// ExclusiveCPUs returns the CPUs the container holds alone: empty on the
// shared pool and with the none policy (upstream's GetExclusiveCPUs, what
// the pod resources API reports).
func (m *Manager) ExclusiveCPUs(podUID, container string) cpuset.CPUSet {
	m.mu.Lock()
	defer m.mu.Unlock()
	cs, _ := m.state.Exclusive(podUID, container)
	return cs.Clone()
}

// AllocatableCPUs returns the CPUs exclusive allocations may come from:
// every CPU but the reserved ones with the static policy, none with the
// none policy (upstream's GetAllocatableCPUs).
func (m *Manager) AllocatableCPUs() cpuset.CPUSet {
	if m.static == nil {
		return cpuset.New()
	}
	return m.static.Allocatable()
}

// removeStaleLocked releases the CPUs of containers no active pod has;
// the caller holds mu. It reports whether the state changed.
func (m *Manager) removeStaleLocked(ctx context.Context, snap Snapshot) bool {
	if m.static == nil || !snap.SourcesReady {
		return false
	}
	active := map[string]map[string]bool{}
	for _, p := range snap.Active {
		names := map[string]bool{}
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			names[c.Name] = true
		}
		active[string(p.UID)] = names
	}
	changed := false
	for pod, cs := range m.state.Clone().Assignments {
		for container := range cs {
			if active[pod][container] {
				continue
			}
			klog.FromContext(ctx).V(2).Info("Releasing the CPUs of a container no active pod has", "podUID", pod, "containerName", container)
			m.state = m.static.Remove(m.state, pod, container)
			changed = true
		}
	}
	return changed
}

// Forget releases the CPUs of a pod that is gone (podgone.Owner) and
// persists the state. The stale-state removal of Admit, RemoveStale and
// Reconcile (upstream's removeStaleState) releases them earlier, once the
// pod is no longer active; the end of a pod that is gone is this one.
func (m *Manager) Forget(ctx context.Context, uid types.UID) {
	if m.static == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	pod := string(uid)
	containers := slices.Sorted(maps.Keys(m.state.Assignments[pod]))
	if len(containers) == 0 {
		return
	}
	for _, container := range containers {
		m.state = m.static.Remove(m.state, pod, container)
	}
	m.persistLogged(ctx)
}

// sentCopy is for tests.
func (m *Manager) sentCopy() map[string]cpuset.CPUSet {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.sent)
}
