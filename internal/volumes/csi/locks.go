package csi

import (
	"context"
	"fmt"
	"sync"
)

// volumeLocks serializes the operations on one volume (by driver and
// handle): the set-up of one pod's publication and the tear-down of
// another's must not interleave, or a volume is unstaged under a
// publication being made (upstream's operation executor runs one
// operation per volume at a time). An entry lives while someone holds or
// waits for it. The zero value is ready; safe for concurrent use.
type volumeLocks struct {
	// mu guards held and each entry's users.
	mu   sync.Mutex
	held map[string]*volumeLock
}

type volumeLock struct {
	// sem holds a token while the volume is locked.
	sem chan struct{}
	// users counts holders and waiters.
	users int
}

// lock locks the volume key, waiting at most until ctx ends, and returns
// its unlock.
func (l *volumeLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*volumeLock{}
	}
	vl := l.held[key]
	if vl == nil {
		vl = &volumeLock{sem: make(chan struct{}, 1)}
		l.held[key] = vl
	}
	vl.users++
	l.mu.Unlock()

	release := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if vl.users--; vl.users == 0 {
			delete(l.held, key)
		}
	}
	select {
	case vl.sem <- struct{}{}:
		return func() { <-vl.sem; release() }, nil
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("wait for another operation on volume %q: %w", key, context.Cause(ctx))
	}
}

// len is how many volumes are held or waited for.
func (l *volumeLocks) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}
