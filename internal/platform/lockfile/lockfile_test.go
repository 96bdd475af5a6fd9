package lockfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
)

// TestAcquireWaitsForHolder: a second Acquire waits while the first holds
// the lock and gets it once the first is released; a waiting Acquire ends
// with its context.
func TestAcquireWaitsForHolder(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	path := filepath.Join(t.TempDir(), "kubelet.lock")
	first, err := Acquire(ctx, path)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v, %v; want mode 0600", fi, err)
	}

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := Acquire(short, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire while held = %v; want it to wait until its context ends", err)
	}

	got := make(chan error, 1)
	go func() {
		l, err := Acquire(ctx, path)
		if err == nil {
			err = l.Release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second Acquire returned %v while the lock is held", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("second Acquire: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second Acquire did not get the released lock")
	}
}

func TestWatchContention(t *testing.T) {
	tests := []struct {
		name    string
		contend func(t *testing.T, path string)
	}{
		{name: "another process opens the file", contend: func(t *testing.T, path string) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}},
		{name: "a second berth opens it to lock it", contend: func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			path := filepath.Join(t.TempDir(), "kubelet.lock")
			l, err := Acquire(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = l.Release() }()
			contended, err := WatchContention(ctx, path)
			if err != nil {
				t.Fatalf("WatchContention: %v", err)
			}
			select {
			case <-contended:
				t.Fatal("contention reported before anyone touched the file")
			case <-time.After(100 * time.Millisecond):
			}
			tt.contend(t, path)
			select {
			case <-contended:
			case <-time.After(10 * time.Second):
				t.Fatal("contention not reported")
			}
		})
	}
}

// TestWatchContentionEndsWithContext: cancelling the watch reports nothing.
func TestWatchContentionEndsWithContext(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	path := filepath.Join(t.TempDir(), "kubelet.lock")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	contended, err := WatchContention(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-contended:
		t.Fatal("a cancelled watch reported contention")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestWatchContentionMissingFile(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	if _, err := WatchContention(ctx, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("WatchContention on a missing file succeeded")
	}
}
