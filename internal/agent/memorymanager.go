package agent

import (
	"fmt"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/memorymanager"
)

// startMemoryManager starts the memory manager (internal/memorymanager)
// as upstream's container manager does: it restores
// <root-dir>/memory_manager_state, failing the start on a checkpoint of
// another policy, and writes one when there is none. Under the None
// policy, the only one berth runs, nothing reads it afterwards: no
// container gets a cpuset.mems.
func startMemoryManager(cfg *config.Config) error {
	if _, err := memorymanager.New(memorymanager.Config{Policy: cfg.Kubelet.MemoryManagerPolicy, StateDir: cfg.RootDir}); err != nil {
		return fmt.Errorf("start memory manager: %w", err)
	}
	return nil
}
