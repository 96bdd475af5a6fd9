//go:build !linux

package subpath

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"k8s.io/mount-utils"
)

// Config configures a Binder.
type Config struct {
	Mounter mount.Interface
}

// Binder binds nothing outside Linux.
type Binder struct{}

// New returns a Binder.
func New(Config) *Binder { return &Binder{} }

var errNotLinux = errors.New("subPath mounts need Linux")

// Bind fails outside Linux.
func (*Binder) Bind(context.Context, Request) (string, error) { return "", errNotLinux }

// CleanPod fails when the pod has subPath binds, which only Linux makes.
func (*Binder) CleanPod(_ context.Context, podDir string) error {
	if _, err := os.Lstat(filepath.Join(podDir, DirName)); err == nil {
		return errNotLinux
	}
	return nil
}
