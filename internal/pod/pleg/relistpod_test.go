package pleg

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// drain returns the events published so far.
func (f *fixture) drain() []Event {
	var got []Event
	for {
		select {
		case e := <-f.pleg.Events():
			got = append(got, e)
		default:
			return got
		}
	}
}

// A sync started a container: RelistPod puts it in the cache and publishes
// its event without a periodic relist, and a worker waiting for a status
// newer than its sync gets it; the next relist does not repeat the event.
func TestRelistPodAfterStart(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready)
	f.relist(t)
	f.rt.takeInspected()

	f.clock.Step(100 * time.Millisecond)
	f.rt.set("a", ready, running) // the sync started a container
	lastSync := f.clock.Now()
	waited := make(chan error, 1)
	go func() {
		pod, err := f.cache.GetNewerThan(context.Background(), "a", lastSync)
		if err == nil && (len(pod.Containers) != 1 || pod.Containers[0].State != running) {
			err = errors.New("status without the running container")
		}
		waited <- err
	}()
	f.clock.Step(time.Millisecond)
	inspectedAt := f.clock.Now()
	f.pleg.RelistPod(context.Background(), "a")

	if diff := cmp.Diff([]Event{{ID: "a", Type: ContainerStarted, Data: "a-c0"}}, f.drain()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]types.UID{"a"}, f.rt.takeInspected()); diff != "" {
		t.Errorf("inspected (-want +got):\n%s", diff)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("GetNewerThan(last sync) = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GetNewerThan(last sync) still waits after RelistPod")
	}
	f.cache.mu.Lock()
	modified, global := f.cache.pods["a"].modified, f.cache.timestamp
	f.cache.mu.Unlock()
	if !modified.Equal(inspectedAt) {
		t.Errorf("entry time = %v, want the time the inspection began %v", modified, inspectedAt)
	}
	if global.After(lastSync) {
		t.Errorf("global timestamp moved to %v by a one-pod relist", global)
	}
	if got := f.relist(t); len(got) != 0 {
		t.Errorf("next relist repeated events %v", got)
	}
	if got := f.rt.takeInspected(); len(got) != 0 {
		t.Errorf("next relist inspected %v again", got)
	}
}

// A pod whose listing did not change is not inspected: its entry is marked
// observed at the time the listing began, which answers a waiter.
func TestRelistPodUnchanged(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready, running)
	f.relist(t)
	f.rt.takeInspected()
	f.drain()

	lastSync := f.clock.Now()
	f.clock.Step(time.Millisecond)
	listedAt := f.clock.Now()
	f.pleg.RelistPod(context.Background(), "a")
	if got := f.rt.takeInspected(); len(got) != 0 {
		t.Errorf("inspected %v, want none", got)
	}
	if got := f.drain(); len(got) != 0 {
		t.Errorf("events %v, want none", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := f.cache.GetNewerThan(ctx, "a", lastSync); err != nil {
		t.Errorf("GetNewerThan(last sync) = %v", err)
	}
	f.cache.mu.Lock()
	modified := f.cache.pods["a"].modified
	f.cache.mu.Unlock()
	if !modified.Equal(listedAt) {
		t.Errorf("entry time = %v, want %v", modified, listedAt)
	}
}

// A failed inspection keeps the pod's record and marks it for
// reinspection: the next relist inspects it and publishes the events.
// A failed listing changes nothing.
func TestRelistPodFailures(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready)
	f.relist(t)
	f.rt.takeInspected()

	f.rt.set("a", ready, running)
	f.rt.listErr = errors.New("runtime down")
	f.pleg.RelistPod(context.Background(), "a")
	if got := f.rt.takeInspected(); len(got) != 0 || len(f.drain()) != 0 {
		t.Fatalf("a failed listing inspected %v", got)
	}
	f.rt.listErr = nil
	f.rt.statusErr["a"] = errors.New("status failed")
	f.pleg.RelistPod(context.Background(), "a")
	if got := f.drain(); len(got) != 0 {
		t.Errorf("events of a failed inspection published: %v", got)
	}
	delete(f.rt.statusErr, "a")
	want := []Event{{ID: "a", Type: ContainerStarted, Data: "a-c0"}}
	if diff := cmp.Diff(want, f.relist(t)); diff != "" {
		t.Errorf("relist after the failed inspection (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]types.UID{"a", "a"}, f.rt.takeInspected()); diff != "" {
		t.Errorf("inspections (-want +got):\n%s", diff)
	}
}

func TestCacheSetObserved(t *testing.T) {
	c := NewCache()
	c.Set("a", nil, nil, t0.Add(time.Second))
	tests := []struct {
		name string
		uid  types.UID
		at   time.Time
		want time.Time
		has  bool
	}{
		{name: "older time is ignored", uid: "a", at: t0, want: t0.Add(time.Second), has: true},
		{name: "newer time moves the entry", uid: "a", at: t0.Add(2 * time.Second), want: t0.Add(2 * time.Second), has: true},
		{name: "no entry, none made", uid: "b", at: t0.Add(3 * time.Second)},
	}
	for _, tt := range tests {
		c.SetObserved(tt.uid, tt.at)
		c.mu.Lock()
		e, ok := c.pods[tt.uid]
		c.mu.Unlock()
		if ok != tt.has || !e.modified.Equal(tt.want) {
			t.Errorf("%s: entry %v (present %v), want time %v (present %v)", tt.name, e.modified, ok, tt.want, tt.has)
		}
	}
}

// TestReinspect: a pod whose listing did not change is inspected again
// after Reinspect (an in-place resize changed its containers' resources),
// once, with no event.
func TestReinspect(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready, running)
	f.relist(t)
	f.rt.takeInspected()
	f.drain()

	f.pleg.Reinspect("a")
	f.clock.Step(time.Millisecond)
	f.pleg.RelistPod(context.Background(), "a")
	if diff := cmp.Diff([]types.UID{"a"}, f.rt.takeInspected()); diff != "" {
		t.Errorf("inspected after Reinspect (-want +got):\n%s", diff)
	}
	if got := f.drain(); len(got) != 0 {
		t.Errorf("events %v, want none", got)
	}
	f.pleg.RelistPod(context.Background(), "a")
	if got := f.rt.takeInspected(); len(got) != 0 {
		t.Errorf("inspected again %v, want once", got)
	}
}
