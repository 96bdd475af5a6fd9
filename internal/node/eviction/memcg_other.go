//go:build !linux

package eviction

import (
	"context"
	"errors"
	"io"
)

// MemcgNotifier needs Linux cgroup v1.
type MemcgNotifier struct{}

var _ Notifier = MemcgNotifier{}

// Arm always fails off Linux.
func (MemcgNotifier) Arm(context.Context, string, int64, func()) (io.Closer, error) {
	return nil, errors.New("arm memcg notification: cgroup v1 memory notifications need Linux")
}
