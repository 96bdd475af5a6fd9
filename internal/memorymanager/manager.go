package memorymanager

import (
	"fmt"
	"path/filepath"

	"github.com/berthk8s/berth/internal/memorymanager/state"
)

// Config is what New needs.
type Config struct {
	// Policy is memoryManagerPolicy (validated at load).
	Policy string
	// StateDir is the root directory, where memory_manager_state lives.
	StateDir string
}

// Manager is the memory manager of a running berth. With the None policy
// it holds the restored checkpoint and nothing changes it; it is safe for
// concurrent use because it is never written after New.
type Manager struct {
	policy string
	state  state.Checkpoint
}

// New restores <StateDir>/memory_manager_state, as upstream's Start: a
// checkpoint of another policy fails the start (the node must be drained
// and the file removed, as upstream says), a missing one is written with
// the policy's name and an empty state.
func New(cfg Config) (*Manager, error) {
	if cfg.Policy != PolicyNone {
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
	if !found {
		if err := state.Write(cfg.StateDir, c); err != nil {
			return nil, fmt.Errorf("write memory manager checkpoint: %w", err)
		}
	}
	return &Manager{policy: cfg.Policy, state: c}, nil
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
