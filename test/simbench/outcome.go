package simbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// timeoutError is a wait that ran out of time.
type timeoutError struct {
	what  string
	after time.Duration
}

func (e *timeoutError) Error() string { return fmt.Sprintf("not all %s after %s", e.what, e.after) }

// timed runs wait with a deadline d from now; a wait that ends by the
// deadline is a *timeoutError.
func timed(ctx context.Context, d time.Duration, what string, wait func(context.Context) error) error {
	tctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := wait(tctx)
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return &timeoutError{what: what, after: d}
	}
	return err
}

// withCause replaces err by the cause the run's context was cancelled
// with (a process that exited, the memory floor), when there is one.
func withCause(runCtx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// classify fills r's status and note from how the run ended: err, and
// whether ctx (the harness's) ended.
func classify(ctx context.Context, r Result, err error) Result {
	var floor *memoryFloorError
	var timeout *timeoutError
	switch {
	case errors.As(err, &floor):
		r.Status, r.NodeBytes = StatusNoFit, floor.perNode()
		r.Note = fmt.Sprintf("%s (stopped: %s)", noFitNote(floor.perNode()), floor.Error())
	case ctx.Err() != nil:
		r.Status, r.Note = StatusInterrupted, "interrupted"
	case errors.As(err, &timeout):
		r.Status, r.Note = StatusTimeout, timeout.Error()
	default:
		r.Status, r.Note = StatusFailed, "failed: "+firstLine(err.Error(), 160)
	}
	r.Error = err.Error()
	return r
}

// failed is r failed with err.
func failed(r Result, err error) Result {
	r.Status, r.Note, r.Error = StatusFailed, "failed: "+firstLine(err.Error(), 160), err.Error()
	return r
}

// firstLine is s up to its first newline, at most n bytes of it. It is
// pure.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
