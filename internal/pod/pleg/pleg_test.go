package pleg

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// fakeRuntime returns canned listings. PodStatus returns the listed pod
// with Name "<name>-full" so tests can tell an inspected status apart.
type fakeRuntime struct {
	mu        sync.Mutex
	pods      map[types.UID]*runtimestate.Pod
	listErr   error
	statusErr map[types.UID]error
	inspected []types.UID
	listedOne []types.UID // ListPod calls
}

func (f *fakeRuntime) ListPods(context.Context) (map[types.UID]*runtimestate.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	out := make(map[types.UID]*runtimestate.Pod, len(f.pods))
	for uid, p := range f.pods {
		cp := *p
		cp.Containers = append([]runtimestate.Container(nil), p.Containers...)
		cp.Sandboxes = append([]runtimestate.Sandbox(nil), p.Sandboxes...)
		out[uid] = &cp
	}
	return out, nil
}

func (f *fakeRuntime) ListPod(ctx context.Context, uid types.UID) (*runtimestate.Pod, error) {
	pods, err := f.ListPods(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listedOne = append(f.listedOne, uid)
	return pods[uid], err
}

func (f *fakeRuntime) PodStatus(_ context.Context, uid types.UID, name, _ string) (*runtimestate.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inspected = append(f.inspected, uid)
	if err := f.statusErr[uid]; err != nil {
		return nil, err
	}
	p, ok := f.pods[uid]
	if !ok {
		return &runtimestate.Pod{UID: uid}, nil
	}
	cp := *p
	cp.Name = name + "-full"
	return &cp, nil
}

func (f *fakeRuntime) set(uid types.UID, sandbox runtimestate.SandboxState, containers ...runtimestate.ContainerState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := &runtimestate.Pod{UID: uid, Name: string(uid), Namespace: "default",
		Sandboxes: []runtimestate.Sandbox{{ID: string(uid) + "-sb", State: sandbox}}}
	for i, s := range containers {
		p.Containers = append(p.Containers, runtimestate.Container{ID: string(uid) + "-c" + string(rune('0'+i)), State: s})
	}
	f.pods[uid] = p
}

func (f *fakeRuntime) remove(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pods, uid)
}

func (f *fakeRuntime) takeInspected() []types.UID {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.inspected
	f.inspected = nil
	return out
}

type fixture struct {
	rt    *fakeRuntime
	cache *Cache
	clock *clocktesting.FakeClock
	pleg  *PLEG
	stats []RelistStats
}

func newFixture(t *testing.T, buffer int) *fixture {
	t.Helper()
	f := &fixture{
		rt:    &fakeRuntime{pods: map[types.UID]*runtimestate.Pod{}, statusErr: map[types.UID]error{}},
		cache: NewCache(),
		clock: clocktesting.NewFakeClock(t0),
	}
	p, err := New(Config{Runtime: f.rt, Cache: f.cache, Clock: f.clock, EventBuffer: buffer,
		Observe: func(s RelistStats) { f.stats = append(f.stats, s) }})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	f.pleg = p
	return f
}

// relist steps the clock by a second, relists and drains the events.
func (f *fixture) relist(t *testing.T) []Event {
	t.Helper()
	f.clock.Step(time.Second)
	f.pleg.Relist(context.Background())
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

const (
	running = runtimestate.ContainerRunning
	exited  = runtimestate.ContainerExited
	created = runtimestate.ContainerCreated
	ready   = runtimestate.SandboxReady
	notRdy  = runtimestate.SandboxNotReady
)

func TestRelistEventsOncePerTransition(t *testing.T) {
	f := newFixture(t, 0)
	steps := []struct {
		name   string
		change func()
		want   []Event
	}{
		{"pod appears", func() { f.rt.set("a", ready, running) }, []Event{
			{ID: "a", Type: ContainerStarted, Data: "a-c0"},
			{ID: "a", Type: ContainerStarted, Data: "a-sb"},
		}},
		{"nothing changes", func() {}, nil},
		{"container created: inspected, not published", func() { f.rt.set("a", ready, running, created) }, nil},
		{"container dies", func() { f.rt.set("a", ready, exited, created) }, []Event{
			{ID: "a", Type: ContainerDied, Data: "a-c0"},
		}},
		{"still dead", func() {}, nil},
		{"pod removed", func() { f.rt.remove("a") }, []Event{
			{ID: "a", Type: ContainerRemoved, Data: "a-c0"},
			{ID: "a", Type: ContainerDied, Data: "a-c1"},
			{ID: "a", Type: ContainerRemoved, Data: "a-c1"},
			{ID: "a", Type: ContainerDied, Data: "a-sb"},
			{ID: "a", Type: ContainerRemoved, Data: "a-sb"},
		}},
		{"gone stays quiet", func() {}, nil},
	}
	for _, s := range steps {
		s.change()
		if diff := cmp.Diff(s.want, f.relist(t)); diff != "" {
			t.Fatalf("%s: events mismatch (-want +got):\n%s", s.name, diff)
		}
	}
}

func TestRelistInspectsOnlyChangedPods(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready, running)
	f.rt.set("b", ready, running)
	f.relist(t)
	if diff := cmp.Diff([]types.UID{"a", "b"}, f.rt.takeInspected()); diff != "" {
		t.Fatalf("first relist must inspect every pod (-want +got):\n%s", diff)
	}
	first := f.clock.Now()
	for _, uid := range []types.UID{"a", "b"} {
		if pod, err := f.cache.Get(uid); err != nil || pod.Name != string(uid)+"-full" {
			t.Fatalf("cache[%s] = %+v, %v; want inspected status", uid, pod, err)
		}
	}

	f.rt.set("b", ready, exited)
	f.relist(t)
	if diff := cmp.Diff([]types.UID{"b"}, f.rt.takeInspected()); diff != "" {
		t.Fatalf("only the changed pod must be inspected (-want +got):\n%s", diff)
	}
	pod, _ := f.cache.Get("b")
	if pod.Containers[0].State != exited {
		t.Errorf("cache[b] not updated: %+v", pod)
	}
	f.cache.mu.Lock()
	modifiedA := f.cache.pods["a"].modified
	f.cache.mu.Unlock()
	if !modifiedA.Equal(first) {
		t.Errorf("cache[a] rewritten at %v, want untouched since %v", modifiedA, first)
	}

	f.rt.remove("b")
	f.relist(t)
	if got := f.rt.takeInspected(); len(got) != 0 {
		t.Errorf("a removed pod is deleted, not inspected; inspected %v", got)
	}
	f.cache.mu.Lock()
	_, stillThere := f.cache.pods["b"]
	f.cache.mu.Unlock()
	if stillThere {
		t.Errorf("cache still holds removed pod b")
	}
}

func TestRelistRetriesFailedInspection(t *testing.T) {
	f := newFixture(t, 0)
	boom := errors.New("boom")
	f.rt.set("a", ready, running)
	f.rt.statusErr["a"] = boom

	if got := f.relist(t); len(got) != 0 {
		t.Fatalf("events published for a pod whose inspection failed: %v", got)
	}
	if _, err := f.cache.Get("a"); !errors.Is(err, boom) {
		t.Fatalf("cache error = %v, want %v", err, boom)
	}

	f.rt.mu.Lock()
	delete(f.rt.statusErr, "a")
	f.rt.mu.Unlock()
	want := []Event{{ID: "a", Type: ContainerStarted, Data: "a-c0"}, {ID: "a", Type: ContainerStarted, Data: "a-sb"}}
	if diff := cmp.Diff(want, f.relist(t)); diff != "" {
		t.Fatalf("retry must publish the delayed events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]types.UID{"a", "a"}, f.rt.takeInspected()); diff != "" {
		t.Fatalf("inspections mismatch (-want +got):\n%s", diff)
	}
	if _, err := f.cache.Get("a"); err != nil {
		t.Fatalf("cache error after retry = %v", err)
	}
	if got := f.relist(t); len(got) != 0 || len(f.rt.takeInspected()) != 0 {
		t.Errorf("after a successful retry nothing is left to do; events %v", got)
	}
}

func TestGetNewerThanWaitsForNextRelist(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready, running)
	f.relist(t)
	syncedAt := f.clock.Now() // a worker finished syncing after that relist

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := getAsync(t, ctx, f.cache, "a", syncedAt)
	unknown := getAsync(t, ctx, f.cache, "never-seen", syncedAt)
	mustPending(t, ch)
	mustPending(t, unknown)

	f.relist(t) // nothing changed, but the global timestamp moves on
	if r := mustReturn(t, ch); r.err != nil || r.pod.Name != "a-full" {
		t.Errorf("GetNewerThan(a) = %+v, %v", r.pod, r.err)
	}
	if r := mustReturn(t, unknown); r.err != nil || r.pod == nil || r.pod.UID != "never-seen" || len(r.pod.Containers) != 0 {
		t.Errorf("GetNewerThan(never-seen) = %+v, %v; want empty pod", r.pod, r.err)
	}
}

func TestHealthy(t *testing.T) {
	f := newFixture(t, 0)
	if ok, err := f.pleg.Healthy(); ok || err == nil {
		t.Fatalf("Healthy() before any relist = %v, %v; want false", ok, err)
	}
	f.relist(t)
	if ok, err := f.pleg.Healthy(); !ok || err != nil {
		t.Fatalf("Healthy() after relist = %v, %v", ok, err)
	}
	f.rt.mu.Lock()
	f.rt.listErr = errors.New("runtime down")
	f.rt.mu.Unlock()
	f.relist(t) // fails: does not refresh
	f.clock.Step(DefaultThreshold - time.Second)
	if ok, _ := f.pleg.Healthy(); !ok {
		t.Fatalf("Healthy() = false at the threshold")
	}
	f.clock.Step(time.Nanosecond)
	if ok, err := f.pleg.Healthy(); ok || err == nil {
		t.Fatalf("Healthy() past the threshold = %v, %v; want false", ok, err)
	}
	if last := f.stats[len(f.stats)-1]; last.Err == nil {
		t.Errorf("failed relist not observed: %+v", last)
	}
}

func TestFullChannelDropsAndObserves(t *testing.T) {
	f := newFixture(t, 1)
	f.rt.set("a", ready, running, running)
	f.clock.Step(time.Second)
	f.pleg.Relist(context.Background())
	if n := len(f.pleg.Events()); n != 1 {
		t.Fatalf("channel holds %d events, want 1", n)
	}
	f.clock.Step(time.Second)
	f.pleg.Relist(context.Background())
	want := []RelistStats{
		{Pods: 1, Inspected: 1, Published: 1, Dropped: 2, RunningPods: 1, Containers: map[string]int{"running": 2}},
		{Pods: 1, Interval: time.Second, RunningPods: 1, Containers: map[string]int{"running": 2}},
	}
	if diff := cmp.Diff(want, f.stats); diff != "" {
		t.Errorf("stats mismatch (-want +got):\n%s", diff)
	}
}

func TestRunRelistsEveryPeriod(t *testing.T) {
	f := newFixture(t, 0)
	f.rt.set("a", ready)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.pleg.Run(ctx) }()

	if e := <-f.pleg.Events(); e != (Event{ID: "a", Type: ContainerStarted, Data: "a-sb"}) {
		t.Fatalf("first relist event = %+v", e)
	}
	for !f.clock.HasWaiters() { // the ticker exists before the first relist
		runtime.Gosched()
	}
	f.rt.set("a", notRdy)
	f.clock.Step(DefaultPeriod)
	if e := <-f.pleg.Events(); e != (Event{ID: "a", Type: ContainerDied, Data: "a-sb"}) {
		t.Fatalf("second relist event = %+v", e)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New(Config{}) succeeded")
	}
	p, err := New(Config{Runtime: &fakeRuntime{}, Cache: NewCache(), Clock: clock.RealClock{}})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	if p.period != DefaultPeriod || p.threshold != DefaultThreshold || cap(p.events) != DefaultEventBuffer {
		t.Errorf("defaults not applied: %v %v %d", p.period, p.threshold, cap(p.events))
	}
}
