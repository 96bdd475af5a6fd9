package simbench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	floor := &memoryFloorError{avail: 3 << 30, floor: 4 << 30, nodes: 40, rss: 40 * 300 << 20, pss: 40 * 230 << 20}
	for _, tc := range []struct {
		name       string
		ctx        context.Context
		err        error
		status     Status
		notePrefix string
	}{
		{"memory floor", live, floor, StatusNoFit, "did not fit: ~230 MiB a node (stopped: MemAvailable 3072 MiB under the floor of 4096 MiB with 40 nodes started"},
		{"memory floor, wrapped", live, errors.Join(errors.New("start kubemark"), floor), StatusNoFit, "did not fit: ~230 MiB a node"},
		{"timeout", live, &timeoutError{what: "nodes Ready", after: 15 * time.Minute}, StatusTimeout, "not all nodes Ready after 15m0s"},
		{"interrupted", ended, context.Canceled, StatusInterrupted, "interrupted"},
		{"a process exited", live, errors.New("kwok exited: exit status 1; the end of its log:\nflag provided but not defined"), StatusFailed,
			"failed: kwok exited: exit status 1; the end of its log:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := classify(tc.ctx, Result{Simulator: Kubemark, Nodes: 100}, tc.err)
			if r.Status != tc.status || !strings.HasPrefix(r.Note, tc.notePrefix) || strings.Contains(r.Note, "\n") || r.Error != tc.err.Error() {
				t.Errorf("classify = %q, %q, %q; want %q, a note starting %q", r.Status, r.Note, r.Error, tc.status, tc.notePrefix)
			}
		})
	}
}

func TestTimed(t *testing.T) {
	err := timed(context.Background(), time.Millisecond, "pods Running", func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	var timeout *timeoutError
	if !errors.As(err, &timeout) {
		t.Errorf("timed past its deadline = %v, want a *timeoutError", err)
	}
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	if err := timed(parent, time.Hour, "x", func(ctx context.Context) error { return ctx.Err() }); !errors.Is(err, context.Canceled) {
		t.Errorf("timed with its parent ended = %v, want context.Canceled", err)
	}
}

func TestWithCause(t *testing.T) {
	ctx, fail := context.WithCancelCause(context.Background())
	if got := withCause(ctx, nil); got != nil {
		t.Errorf("withCause(nil) = %v", got)
	}
	exited := errors.New("kwok exited")
	fail(exited)
	if got := withCause(ctx, context.Canceled); got != exited {
		t.Errorf("withCause = %v, want the cause", got)
	}
	plain, cancel := context.WithCancel(context.Background())
	cancel()
	if got := withCause(plain, context.Canceled); !errors.Is(got, context.Canceled) {
		t.Errorf("withCause without a cause = %v, want the error itself", got)
	}
}
