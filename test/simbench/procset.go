package simbench

import (
	"context"
	"fmt"
	"sync"
)

// procSet holds the processes of the simulator under measure. A process
// that exits before stop is called fails the run: fail is called with
// how it ended. Safe for concurrent use.
type procSet struct {
	fail context.CancelCauseFunc

	mu       sync.Mutex // guards the fields below
	children []*child
	stopping bool
}

// add takes c into the set and watches it.
func (s *procSet) add(c *child) {
	s.mu.Lock()
	s.children = append(s.children, c)
	s.mu.Unlock()
	go func() {
		<-c.done
		s.mu.Lock()
		stopping := s.stopping
		s.mu.Unlock()
		if !stopping {
			s.fail(fmt.Errorf("%w; the end of its log:\n%s", c.exitErr(), c.logTail(2048)))
		}
	}()
}

// list returns the processes in the order they were added.
func (s *procSet) list() []*child {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*child(nil), s.children...)
}

// pids returns the processes' ids.
func (s *procSet) pids() []int {
	var out []int
	for _, c := range s.list() {
		out = append(out, c.pid())
	}
	return out
}

// stop ends every process (stopChildren); exits from then on are
// expected. It is idempotent.
func (s *procSet) stop() {
	s.mu.Lock()
	s.stopping = true
	children := s.children
	s.mu.Unlock()
	stopChildren(children)
}
