package state

import (
	"fmt"
	"path/filepath"

	"github.com/berthk8s/berth/internal/checkpoint"
)

// FileName is the checkpoint's name in the root directory.
const FileName = "memory_manager_state"

// Read reads the checkpoint in dir; found is false when there is none.
func Read(dir string) (c Checkpoint, found bool, err error) {
	b, found, err := checkpoint.Read(dir, FileName)
	if err != nil || !found {
		return Checkpoint{}, false, err
	}
	if c, err = Decode(b); err != nil {
		return Checkpoint{}, false, fmt.Errorf("decode checkpoint %q: %w", filepath.Join(dir, FileName), err)
	}
	return c, true, nil
}

// Write replaces the checkpoint in dir atomically.
func Write(dir string, c Checkpoint) error {
	b, err := Encode(c)
	if err != nil {
		return err
	}
	return checkpoint.Write(dir, FileName, b)
}
