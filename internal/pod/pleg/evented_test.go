package pleg

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// fakeSource is an EventSource whose streams the test drives: every
// WatchContainerEvents call hands the test a fakeStream on streams.
type fakeSource struct {
	noStream bool
	streams  chan *fakeStream
}

type fakeStream struct {
	events chan ContainerEvent
	// handled receives once handle has returned for the event sent.
	handled chan struct{}
	end     chan error
}

func newFakeSource() *fakeSource { return &fakeSource{streams: make(chan *fakeStream, 10)} }

func (s *fakeSource) WatchContainerEvents(ctx context.Context, handle func(ContainerEvent)) error {
	if s.noStream {
		return fmt.Errorf("get container events: %w", ErrNoEventStream)
	}
	st := &fakeStream{events: make(chan ContainerEvent), handled: make(chan struct{}), end: make(chan error, 1)}
	s.streams <- st
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-st.end:
			return err
		case e := <-st.events:
			handle(e)
			st.handled <- struct{}{}
		}
	}
}

// send delivers e and returns once the PLEG has handled it.
func (st *fakeStream) send(e ContainerEvent) {
	st.events <- e
	<-st.handled
}

// nextStream returns the next stream the watcher opens, failing after 5 s.
func (s *fakeSource) nextStream(t *testing.T) *fakeStream {
	t.Helper()
	select {
	case st := <-s.streams:
		return st
	case <-time.After(5 * time.Second):
		t.Fatal("the PLEG did not open an event stream")
		return nil
	}
}

// noStream fails if the watcher opens a stream within a short while.
func (s *fakeSource) noStreamYet(t *testing.T) {
	t.Helper()
	select {
	case <-s.streams:
		t.Fatal("the PLEG reconnected the event stream before its delay")
	case <-time.After(50 * time.Millisecond):
	}
}

// watch starts the fixture's event watcher over src and returns a
// channel closed when it returns; the watcher ends with the test.
func (f *fixture) watch(t *testing.T, ctx context.Context, src *fakeSource) <-chan struct{} {
	t.Helper()
	f.pleg.source = src
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.pleg.watchEvents(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return done
}

func (f *fixture) listedOne() []types.UID {
	f.rt.mu.Lock()
	defer f.rt.mu.Unlock()
	out := f.rt.listedOne
	f.rt.listedOne = nil
	return out
}

// An event puts the pod's new state in the cache and publishes its events
// at once, without a periodic relist.
func TestEventUpdatesCacheWithoutRelist(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready)
	f.relist(t)
	src := newFakeSource()
	f.watch(t, context.Background(), src)
	st := src.nextStream(t)

	f.clock.Step(time.Millisecond)
	f.rt.set("a", ready, running)
	started := f.clock.Now()
	st.send(ContainerEvent{PodUID: "a", ContainerID: "a-c0", Type: ContainerStartedEvent, Created: started})

	if diff := cmp.Diff([]Event{{ID: "a", Type: ContainerStarted, Data: "a-c0"}}, f.drain()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := len(f.stats); got != 1 {
		t.Errorf("relists = %d, want only the first", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pod, err := f.cache.GetNewerThan(ctx, "a", started.Add(-time.Nanosecond))
	if err != nil {
		t.Fatalf("GetNewerThan(event time) = %v; the event did not update the cache", err)
	}
	if pod.Name != "a-full" || len(pod.Containers) != 1 || pod.Containers[0].State != running {
		t.Errorf("cached pod = %+v, want the inspected status with a running container", pod)
	}
}

// The cache's newer-than contract orders events against relists: an event
// generated before the pod's cached status was read (an on-demand or
// periodic relist overtook it) costs nothing; one generated after it
// relists the pod.
func TestEventOrderAgainstRelists(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready)
	f.relist(t)
	src := newFakeSource()
	f.watch(t, context.Background(), src)
	st := src.nextStream(t)

	f.clock.Step(time.Millisecond)
	f.rt.set("a", ready, running)
	eventTime := f.clock.Now()
	f.clock.Step(time.Millisecond)
	f.pleg.RelistPod(context.Background(), "a") // the worker's on-demand relist, after the start
	f.drain()
	f.listedOne()

	st.send(ContainerEvent{PodUID: "a", Type: ContainerStartedEvent, Created: eventTime})
	if got := f.listedOne(); len(got) != 0 {
		t.Errorf("event older than the cached status relisted %v, want nothing", got)
	}

	f.clock.Step(time.Second)
	f.rt.set("a", ready, exited)
	st.send(ContainerEvent{PodUID: "a", Type: ContainerStoppedEvent, Created: f.clock.Now()})
	if diff := cmp.Diff([]types.UID{"a"}, f.listedOne()); diff != "" {
		t.Errorf("newer event: pods relisted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Event{{ID: "a", Type: ContainerDied, Data: "a-c0"}}, f.drain()); diff != "" {
		t.Errorf("newer event: events (-want +got):\n%s", diff)
	}

	// A periodic relist that began after an event answers for every pod.
	old := f.clock.Now()
	f.relist(t)
	st.send(ContainerEvent{PodUID: "b", Type: ContainerCreatedEvent, Created: old})
	if got := f.listedOne(); len(got) != 0 {
		t.Errorf("event older than the last relist relisted %v, want nothing", got)
	}
}

// Events for pods the PLEG has no record of: a pod the runtime holds is
// relisted and its events published (as the next relist would); one the
// runtime no longer holds leaves nothing behind; an event without a
// sandbox is left to the relist.
func TestEventForUnknownPods(t *testing.T) {
	f := newFixture(t, 0)
	f.relist(t)
	src := newFakeSource()
	f.watch(t, context.Background(), src)
	st := src.nextStream(t)

	f.clock.Step(time.Millisecond)
	f.rt.set("new", ready, running)
	st.send(ContainerEvent{PodUID: "new", Type: ContainerStartedEvent, Created: f.clock.Now()})
	want := []Event{{ID: "new", Type: ContainerStarted, Data: "new-c0"}, {ID: "new", Type: ContainerStarted, Data: "new-sb"}}
	if diff := cmp.Diff(want, f.drain()); diff != "" {
		t.Errorf("pod new to the PLEG: events (-want +got):\n%s", diff)
	}

	st.send(ContainerEvent{PodUID: "gone", Type: ContainerDeletedEvent, Created: f.clock.Now()})
	if got := f.drain(); len(got) != 0 {
		t.Errorf("pod the runtime no longer holds: events %v, want none", got)
	}
	if pod, err := f.cache.Get("gone"); err != nil || len(pod.Sandboxes)+len(pod.Containers) != 0 {
		t.Errorf("pod the runtime no longer holds: cache = %+v, %v; want empty", pod, err)
	}

	f.listedOne()
	st.send(ContainerEvent{ContainerID: "x", Type: ContainerStoppedEvent, Created: f.clock.Now()})
	if got := f.listedOne(); len(got) != 0 {
		t.Errorf("event without a sandbox relisted %v, want nothing", got)
	}
}

// A dropped stream: the periodic relist carries on at its period, the
// stream is reopened after DefaultEventRetry (doubled while attempts
// deliver nothing, reset once one does), and events drive the cache again.
func TestDroppedStreamFallsBackAndReconnects(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready)
	f.relist(t)
	src := newFakeSource()
	f.watch(t, context.Background(), src)
	st := src.nextStream(t)
	waitWaiters := func() {
		for !f.clock.HasWaiters() {
			runtime.Gosched()
		}
	}

	st.end <- fmt.Errorf("receive container event: %w", context.DeadlineExceeded)
	waitWaiters()
	f.rt.set("a", ready, running)
	if diff := cmp.Diff([]Event{{ID: "a", Type: ContainerStarted, Data: "a-c0"}}, f.relist(t)); diff != "" {
		t.Errorf("relist while the stream is down: events (-want +got):\n%s", diff)
	}
	// f.relist stepped the clock by DefaultPeriod = DefaultEventRetry.
	st = src.nextStream(t)
	st.end <- fmt.Errorf("receive container event: %w", context.DeadlineExceeded)
	waitWaiters()
	f.clock.Step(time.Second)
	src.noStreamYet(t) // the second failure without an event waits 2 s
	f.clock.Step(time.Second)
	st = src.nextStream(t)

	f.clock.Step(time.Millisecond)
	f.rt.set("a", ready, exited)
	st.send(ContainerEvent{PodUID: "a", Type: ContainerStoppedEvent, Created: f.clock.Now()})
	if diff := cmp.Diff([]Event{{ID: "a", Type: ContainerDied, Data: "a-c0"}}, f.drain()); diff != "" {
		t.Errorf("after reconnecting: events (-want +got):\n%s", diff)
	}
	st.end <- fmt.Errorf("receive container event: %w", context.DeadlineExceeded)
	waitWaiters()
	f.clock.Step(time.Second) // an attempt that delivered an event resets the delay
	src.nextStream(t)
}

// A runtime without the stream (containerd 1.6): one info line, no error,
// no retry; relisting goes on.
func TestNoEventStreamIsQuiet(t *testing.T) {
	f := newFixture(t, 0)
	src := newFakeSource()
	src.noStream = true
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(context.Background(), logger)
	done := f.watch(t, ctx, src)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher did not give up on a runtime without an event stream")
	}
	if f.clock.HasWaiters() {
		t.Error("the watcher left a retry timer behind")
	}
	log := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "no event stream") || strings.Contains(log, "ERROR") {
		t.Errorf("log = %q, want one info line", log)
	}
}
