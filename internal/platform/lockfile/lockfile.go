package lockfile

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
	"k8s.io/utils/inotify"
)

// Lock is a held lock file. Release is safe to call once.
type Lock struct {
	fd int
}

// Acquire opens path (creating it with mode 0600) and takes an exclusive
// flock on it, waiting while another process holds it, until ctx ends.
// The lock is held until Release or the process exits.
func Acquire(ctx context.Context, path string) (*Lock, error) {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file %q: %w", path, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err == nil {
		return &Lock{fd: fd}, nil
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		unix.Close(fd)
		return nil, fmt.Errorf("lock file %q: %w", path, err)
	}
	klog.FromContext(ctx).Info("Waiting for the lock file held by another process", "path", path)
	// flock(2) cannot be interrupted from Go: block in a goroutine that
	// closes the file itself if ctx ended first.
	got := make(chan error, 1)
	go func() { got <- unix.Flock(fd, unix.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("lock file %q: %w", path, err)
		}
		return &Lock{fd: fd}, nil
	case <-ctx.Done():
		go func() { _ = <-got; _ = unix.Close(fd) }()
		return nil, fmt.Errorf("lock file %q: %w", path, context.Cause(ctx))
	}
}

// Release unlocks and closes the file.
func (l *Lock) Release() error {
	if err := unix.Close(l.fd); err != nil {
		return fmt.Errorf("close lock file: %w", err)
	}
	return nil
}

// WatchContention watches path for another process opening or deleting it
// (inotify IN_OPEN and IN_DELETE_SELF, as upstream) and returns a channel
// closed at the first such event, or when the watch fails. Call it after
// Acquire, so berth's own open is not seen. The watch ends with ctx.
func WatchContention(ctx context.Context, path string) (<-chan struct{}, error) {
	logger := klog.FromContext(ctx)
	w, err := inotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch lock file %q: %w", path, err)
	}
	if err := w.AddWatch(path, inotify.InOpen|inotify.InDeleteSelf); err != nil {
		closeWatcher(w)
		return nil, fmt.Errorf("watch lock file %q: %w", path, err)
	}
	contended := make(chan struct{})
	go func() {
		select {
		case ev := <-w.Event:
			logger.Info("Lock file contention", "path", path, "event", ev)
			close(contended)
		case err := <-w.Error:
			logger.Error(err, "Lock file watch failed", "path", path)
			close(contended)
		case <-ctx.Done():
		}
		closeWatcher(w)
	}()
	return contended, nil
}

// closeWatcher stops w and drains its channels, so its reader goroutine,
// which sends without a buffer, can exit.
func closeWatcher(w *inotify.Watcher) {
	_ = w.Close()
	go func() {
		for range w.Event { //nolint:revive // drain
		}
	}()
	go func() {
		for range w.Error { //nolint:revive // drain
		}
	}()
}
