package eviction

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MemcgNotifier is the cgroup v1 Notifier: an eventfd registered through
// the cgroup's cgroup.event_control on its memory.usage_in_bytes, as
// upstream's linuxCgroupNotifier. cgroup v2 has no such interface
// (upstream leaves the notifier disabled there, kubernetes#106331), so the
// agent arms none on v2 and the manager polls. It is stateless and safe
// for concurrent use.
type MemcgNotifier struct{}

var _ Notifier = MemcgNotifier{}

// Arm registers the threshold and starts one goroutine that reads the
// eventfd through the runtime's poller and calls wake per notification;
// Close unregisters (closing the eventfd is what the kernel unregisters
// on) and waits for that goroutine.
func (MemcgNotifier) Arm(_ context.Context, dir string, usageThreshold int64, wake func()) (io.Closer, error) {
	usagePath := filepath.Join(dir, "memory.usage_in_bytes")
	watch, err := unix.Open(usagePath, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", usagePath, err)
	}
	defer unix.Close(watch)
	controlPath := filepath.Join(dir, "cgroup.event_control")
	control, err := unix.Open(controlPath, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", controlPath, err)
	}
	defer unix.Close(control)
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("create eventfd: %w", err)
	}
	if _, err := unix.Write(control, fmt.Appendf(nil, "%d %d %d", efd, watch, usageThreshold)); err != nil {
		unix.Close(efd)
		return nil, fmt.Errorf("write %q: %w", controlPath, err)
	}
	// Non-blocking, so os.File reads it through the runtime's poller and
	// Close interrupts a pending Read.
	w := &memcgWatch{f: os.NewFile(uintptr(efd), "memcg-eventfd"), done: make(chan struct{})}
	go w.run(wake)
	return w, nil
}

// memcgWatch is one armed notification.
type memcgWatch struct {
	f    *os.File
	done chan struct{}
}

func (w *memcgWatch) run(wake func()) {
	defer close(w.done)
	buf := make([]byte, 8) // an eventfd read is one 8-byte counter
	for {
		if _, err := w.f.Read(buf); err != nil {
			return
		}
		wake()
	}
}

// Close unregisters the notification and waits for its goroutine.
func (w *memcgWatch) Close() error {
	err := w.f.Close()
	<-w.done
	return err
}
