package csi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

// TestVolumeLocks: one holder a volume at a time, others volumes apart; a
// waiter gives up when its context ends; entries go with their last user.
func TestVolumeLocks(t *testing.T) {
	var l volumeLocks
	ctx := context.Background()
	unlockA, err := l.lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	unlockB, err := l.lock(ctx, "b")
	if err != nil {
		t.Fatalf("volume b waits for volume a: %v", err)
	}
	unlockB()

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.lock(cancelled, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("lock of a held volume with an ended context: %v, want context.Canceled", err)
	}
	got := make(chan struct{})
	go func() {
		unlock, err := l.lock(ctx, "a")
		if err == nil {
			unlock()
		}
		close(got)
	}()
	for waiting := false; !waiting; runtime.Gosched() {
		select {
		case <-got:
			t.Fatal("volume a locked twice at once")
		default:
		}
		l.mu.Lock()
		waiting = l.held["a"] != nil && l.held["a"].users == 2
		l.mu.Unlock()
	}
	unlockA()
	<-got
	if n := l.len(); n != 0 {
		t.Errorf("%d entries left", n)
	}
}

// TestConcurrentSetUpAndTearDown: pods publishing and unpublishing one
// volume at once leave it unstaged exactly once, after the last, and
// nothing behind.
func TestConcurrentSetUpAndTearDown(t *testing.T) {
	e := newMounterEnv(t, stageCaps(), csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) }),
		secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
	e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: stageCaps(), ManageTargets: true})
	const pods = 8
	run := func(f func(uid string) error) {
		var wg sync.WaitGroup
		errs := make(chan error, pods)
		for i := range pods {
			wg.Go(func() { errs <- f(fmt.Sprintf("pod-%d", i)) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	run(func(uid string) error {
		_, err := e.m.SetUp(testContext(t), testPod(uid), testPV())
		return err
	})
	run(func(uid string) error { return e.m.TearDown(testContext(t), e.target(uid, testPVName)) })
	if got := len(e.drv.CallsTo("NodeUnstageVolume")); got != 1 {
		t.Errorf("NodeUnstageVolume called %d times, want 1", got)
	}
	entries, err := os.ReadDir(filepath.Join(e.pluginsDir(), "kubernetes.io", "csi", testDriver))
	if err != nil || len(entries) != 0 {
		t.Errorf("staging directories left: %v, %v", entries, err)
	}
	for i := range pods {
		if dir := filepath.Dir(e.target(fmt.Sprintf("pod-%d", i), testPVName)); exists(t, dir) {
			t.Errorf("%s left", dir)
		}
	}
}
