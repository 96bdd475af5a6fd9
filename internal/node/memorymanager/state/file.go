package state

import (
	"github.com/berthk8s/berth/internal/platform/checkpoint"
)

// FileName is the checkpoint's name in the root directory.
const FileName = "memory_manager_state"

// Read reads the checkpoint in dir; found is false when there is none.
func Read(dir string) (Checkpoint, bool, error) {
	return checkpoint.Load(dir, FileName, Decode)
}

// Write replaces the checkpoint in dir atomically.
func Write(dir string, c Checkpoint) error {
	return checkpoint.Store(dir, FileName, c, Encode)
}
