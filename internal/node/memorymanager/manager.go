package memorymanager

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
)

// Config is what New needs.
type Config struct {
	// Policy is memoryManagerPolicy (validated at load).
	Policy string
	// StateDir is the root directory, where memory_manager_state lives.
	StateDir string
	// Static is the static policy (NewStatic); required with PolicyStatic.
	Static *Static
}

// Manager is the memory manager of a running berth: it admits pods
// (AllocatePod under the Static policy) and answers the cpuset.mems a
// container is created with. It is safe for concurrent use.
type Manager struct {
	policy string
	dir    string
	static *Static

	mu sync.Mutex // guards state and the checkpoint file
	// state is the checkpoint as last written.
	state state.Checkpoint
}

// New restores <StateDir>/memory_manager_state, as upstream's Start: a
// checkpoint of another policy fails the start (the node must be drained
// and the file removed, as upstream says), as does a Static one that does
// not match the machine; a missing one is written with the policy's name
// and the machine's default state.
func New(cfg Config) (*Manager, error) {
	if cfg.Policy != PolicyNone && (cfg.Policy != PolicyStatic || cfg.Static == nil) {
		return nil, fmt.Errorf("start memory manager: policy %q is not implemented", cfg.Policy)
	}
	c, found, err := state.Read(cfg.StateDir)
	if err == nil {
		c, err = restore(cfg.Policy, c, found)
	}
	if err != nil {
		return nil, fmt.Errorf("could not restore state from checkpoint: %w, please drain this node and delete the memory manager checkpoint file %q before restarting Kubelet",
			err, filepath.Join(cfg.StateDir, state.FileName))
	}
	// Written when new, or when the static policy fills an empty machine
	// state, as upstream's state stores it.
	write := !found || (cfg.Static != nil && len(c.MachineState) == 0)
	if cfg.Static != nil {
		if c, err = cfg.Static.Restore(c); err != nil {
			return nil, fmt.Errorf("start memory manager: %w, please drain node and remove policy state file", err)
		}
	}
	if write {
		if err := state.Write(cfg.StateDir, c); err != nil {
			return nil, fmt.Errorf("write memory manager checkpoint: %w", err)
		}
	}
	return &Manager{policy: cfg.Policy, dir: cfg.StateDir, static: cfg.Static, state: c}, nil
}

// restore decides what a restored checkpoint gives: the checkpoint itself
// when its policy is the configured one, an empty state of the policy when
// there was none, an error (upstream's wording) otherwise.
func restore(policy string, c state.Checkpoint, found bool) (state.Checkpoint, error) {
	if !found {
		return state.Checkpoint{PolicyName: policy, MachineState: state.NUMANodeMap{}, Entries: state.ContainerMemoryAssignments{}}, nil
	}
	if c.PolicyName != policy {
		return state.Checkpoint{}, fmt.Errorf("[memorymanager] configured policy %q differs from state checkpoint policy %q", policy, c.PolicyName)
	}
	return c, nil
}

// Policy is the policy the manager runs.
func (m *Manager) Policy() string { return m.policy }

// Admit allocates a pod's memory under the Static policy, as upstream's
// admission through the topology manager: first, once every pod source is
// ready, the blocks of containers no active pod has any more are released
// (upstream's removeStaleState), then the pod's containers get theirs. A
// pod that does not fit is refused with upstream's reason and message.
func (m *Manager) Admit(pod *corev1.Pod, active []*corev1.Pod, sourcesReady bool) (ok bool, reason, message string) {
	if m.static == nil {
		return true, "", ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next := m.state
	if sourcesReady {
		next = releaseStale(next, append(slices.Clone(active), pod))
	}
	next, err := m.static.AllocatePod(next, pod)
	if err == nil {
		err = state.Write(m.dir, next)
	}
	if err != nil {
		reason, message = AdmitReason(err)
		return false, reason, message
	}
	m.state = next
	return true, "", ""
}

// releaseStale releases the blocks of every container that no active pod
// has.
func releaseStale(st state.Checkpoint, active []*corev1.Pod) state.Checkpoint {
	names := map[string]map[string]bool{}
	for _, p := range active {
		n := map[string]bool{}
		for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			n[c.Name] = true
		}
		names[string(p.UID)] = n
	}
	for _, uid := range slices.Sorted(maps.Keys(st.Entries)) {
		for _, c := range slices.Sorted(maps.Keys(st.Entries[uid])) {
			if !names[uid][c] {
				st = Release(st, uid, c)
			}
		}
	}
	return st
}

// Forget gives back the memory of a pod that is gone (podgone.Owner) and
// writes the checkpoint; a failed write keeps the state as last written.
// Admit releases stale containers' memory earlier (upstream's
// removeStaleState); the end of a pod that is gone is this one.
func (m *Manager) Forget(ctx context.Context, uid types.UID) {
	if m.static == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	pod := string(uid)
	containers := slices.Sorted(maps.Keys(m.state.Entries[pod]))
	if len(containers) == 0 {
		return
	}
	next := m.state
	for _, c := range containers {
		next = Release(next, pod, c)
	}
	if err := state.Write(m.dir, next); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to write the memory manager checkpoint", "podUID", uid)
		return
	}
	m.state = next
}

// CPUSetMems is the cpuset.mems a container is created with, as
// upstream's PreCreateContainer: the NUMA nodes of its blocks, sorted and
// comma-separated; "" (the runtime's default) when it has none.
func (m *Manager) CPUSetMems(podUID, container string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	nodes := map[int]bool{}
	for _, b := range m.state.Entries[podUID][container] {
		for _, id := range b.NUMAAffinity {
			nodes[id] = true
		}
	}
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		ids = append(ids, strconv.Itoa(id))
	}
	return strings.Join(ids, ",")
}

// Memory returns the memory blocks the container holds (none without the
// Static policy): upstream's GetMemory, what the pod resources API
// reports.
func (m *Manager) Memory(podUID, container string) []state.Block {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneBlocks(m.state.Entries[podUID][container])
}

// AllocatableMemory returns one block per NUMA node and memory type with
// allocatable memory (none without the Static policy), by NUMA node then
// type: upstream's GetAllocatableMemory, in a stable order.
func (m *Manager) AllocatableMemory() []state.Block {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []state.Block
	for _, id := range slices.Sorted(maps.Keys(m.state.MachineState)) {
		n := m.state.MachineState[id]
		if n == nil {
			continue
		}
		for _, t := range slices.Sorted(maps.Keys(n.MemoryMap)) {
			if mt := n.MemoryMap[t]; mt != nil && mt.Allocatable != 0 {
				out = append(out, state.Block{NUMAAffinity: []int{id}, Type: t, Size: mt.Allocatable})
			}
		}
	}
	return out
}

func cloneBlocks(bs []state.Block) []state.Block {
	out := make([]state.Block, len(bs))
	for i, b := range bs {
		out[i] = b
		out[i].NUMAAffinity = slices.Clone(b.NUMAAffinity)
	}
	return out
}
