package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the checkpoint's name in the root directory.
const FileName = "memory_manager_state"

// maxSize bounds the file Read accepts.
const maxSize = 16 << 20

// Read reads the checkpoint in dir; found is false when there is none.
func Read(dir string) (c Checkpoint, found bool, err error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("open checkpoint %q: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("read checkpoint %q: %w", path, err)
	}
	if len(b) > maxSize {
		return Checkpoint{}, false, fmt.Errorf("read checkpoint %q: larger than %d bytes", path, maxSize)
	}
	c, err = Decode(b)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("decode checkpoint %q: %w", path, err)
	}
	return c, true, nil
}

// Write replaces the checkpoint in dir atomically.
func Write(dir string, c Checkpoint) error {
	b, err := Encode(c)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+FileName+".*")
	if err != nil {
		return fmt.Errorf("create checkpoint in %q: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write checkpoint %q: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync checkpoint %q: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close checkpoint %q: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, FileName)); err != nil {
		return fmt.Errorf("rename checkpoint into %q: %w", dir, err)
	}
	return nil
}
