package checkpoint

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxSize bounds what Read accepts: a checkpoint lists a node's pods.
const MaxSize = 16 << 20

// Read returns the content of dir/name; found is false when there is no
// such file.
func Read(dir, name string) (b []byte, found bool, err error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("open checkpoint %q: %w", path, err)
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, false, fmt.Errorf("read checkpoint %q: %w", path, err)
	}
	if len(b) > MaxSize {
		return nil, false, fmt.Errorf("read checkpoint %q: larger than %d bytes", path, MaxSize)
	}
	return b, true, nil
}

// Write replaces dir/name with b atomically: a synced temporary file in
// dir, renamed into place.
func Write(dir, name string, b []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
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
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename checkpoint into %q: %w", dir, err)
	}
	return nil
}

// SyncDir flushes dir's entries to disk, so that a file Write renamed
// into it survives a crash of the machine, not only of berth (a rename is
// durable only once its directory is synced).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open checkpoint directory %q: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync checkpoint directory %q: %w", dir, err)
	}
	return nil
}

// Hash is upstream's checksum of a rendered object: FNV-32a over its
// dump.ForHash text (hashutil.DeepHashObject).
func Hash(rendered string) uint32 {
	h := fnv.New32a()
	_, _ = io.WriteString(h, rendered)
	return h.Sum32()
}

// Load reads dir/name and decodes it; found is false when there is none.
// A decoding error names the file.
func Load[T any](dir, name string, decode func([]byte) (T, error)) (c T, found bool, err error) {
	b, found, err := Read(dir, name)
	if err != nil || !found {
		return c, false, err
	}
	if c, err = decode(b); err != nil {
		return c, false, fmt.Errorf("decode checkpoint %q: %w", filepath.Join(dir, name), err)
	}
	return c, true, nil
}

// Store encodes c and replaces dir/name with it atomically.
func Store[T any](dir, name string, c T, encode func(T) ([]byte, error)) error {
	b, err := encode(c)
	if err != nil {
		return err
	}
	return Write(dir, name, b)
}
