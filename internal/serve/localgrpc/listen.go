package localgrpc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// DirMode is the mode upstream's CreateListener makes a socket's directory
// with (when it does not exist): only root and the group may enter it.
const DirMode = 0o750

// Listen binds the unix socket path as upstream's CreateListener
// (k8s.io/cri-client/pkg/util): the socket a previous run left is
// unlinked, the directory is made (DirMode) if missing, and the socket is
// bound under a temporary name in that directory and renamed to path, so a
// client never connects to a half-made socket.
func Listen(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("failed to unlink socket file %q: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("error creating socket directory %q: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "")
	if err != nil {
		return nil, fmt.Errorf("failed to create temporary file: %w", err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	if err := os.Remove(name); err != nil {
		return nil, fmt.Errorf("failed to remove temporary file: %w", err)
	}
	l, err := net.Listen("unix", name)
	if err != nil {
		return nil, fmt.Errorf("listen on %q: %w", name, err)
	}
	if err := os.Rename(name, path); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("failed to move temporary file to addr %q: %w", path, err)
	}
	return l, nil
}
