package nodeshutdown

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/node/nodeshutdown/logindfake"
)

// node is the pod side the manager drives: a log of what happened, in
// order, and which pods have finished.
type node struct {
	mu       sync.Mutex
	log      []string
	finished map[types.UID]bool
	// finishAfterKill: a killed pod finishes on its own after this long
	// (0: never; the test finishes it).
	finishAfterKill time.Duration
}

func (n *node) record(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log = append(n.log, fmt.Sprintf(format, args...))
}

func (n *node) events() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.log...)
}

func (n *node) kill(_ context.Context, pod *corev1.Pod, grace int64) {
	n.record("kill %s grace=%d", pod.Name, grace)
	if n.finishAfterKill > 0 {
		time.AfterFunc(n.finishAfterKill, func() { n.finish(pod) })
	}
}

func (n *node) finish(pod *corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.finished[pod.UID] = true
	n.log = append(n.log, "finished "+pod.Name)
}

func (n *node) isFinished(uid types.UID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.finished[uid]
}

func testPods() []*corev1.Pod {
	mk := func(name string, prio *int32) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
			Spec: corev1.PodSpec{Priority: prio, TerminationGracePeriodSeconds: ptr.To[int64](30)}}
	}
	// The critical pod comes first: the plan, not the order, decides.
	return []*corev1.Pod{mk("critical", ptr.To[int32](2000001000)), mk("app", nil)}
}

type fixture struct {
	fake    *logindfake.Logind
	node    *node
	m       *Manager
	changed chan struct{}
	cancel  context.CancelFunc
	done    chan error
}

func startManager(t *testing.T, clk clock.WithTicker, delay time.Duration, finishAfterKill time.Duration) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	addr := logindfake.StartBus(t)
	confDir := t.TempDir()
	f := &fixture{
		fake:    logindfake.New(t, addr, delay, confDir),
		node:    &node{finished: map[types.UID]bool{}, finishAfterKill: finishAfterKill},
		changed: make(chan struct{}, 16),
		done:    make(chan error, 1),
	}
	m, err := New(Config{
		Periods: []Period{{0, 20}, {2000000000, 10}},
		Connect: func(context.Context) (*Logind, error) {
			conn, err := dbus.Connect(addr)
			return NewLogind(conn), err
		},
		LogindConfDir: confDir,
		Pods:          testPods,
		Kill:          f.node.kill,
		Finished:      f.node.isFinished,
		Changed:       func() { f.changed <- struct{}{} },
		Event:         func(_, reason, msg string) { f.node.record("event %s: %s", reason, msg) },
		Clock:         clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	ctx, f.cancel = context.WithCancel(ctx)
	go func() { f.done <- m.Run(ctx) }()
	t.Cleanup(func() {
		f.cancel()
		if err := <-f.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return f
}

// TestShutdownEndsPodsInPriorityOrder: on PrepareForShutdown(true) the node
// is shutting down, the default-priority pod ends first with its group's
// budget, the critical pod only once it finished, and the lock is released
// after both; a cancellation takes the lock again.
func TestShutdownEndsPodsInPriorityOrder(t *testing.T) {
	f := startManager(t, clock.RealClock{}, time.Minute, 200*time.Millisecond)
	f.fake.WaitHeld(os.Getpid(), 1)
	if f.m.ShuttingDown() {
		t.Fatal("shutting down before logind said so")
	}

	f.fake.Prepare(true)
	waitFor(t, "the pods to end", func() bool { return len(f.node.events()) >= 5 })
	f.fake.WaitHeld(os.Getpid(), 0)
	if !f.m.ShuttingDown() {
		t.Error("not shutting down after PrepareForShutdown(true)")
	}
	want := []string{
		"event NodeShutdown: Shutdown manager detected shutdown event",
		"kill app grace=20",
		"finished app",
		"kill critical grace=10",
		"finished critical",
	}
	if diff := cmp.Diff(want, f.node.events()); diff != "" {
		t.Errorf("shutdown (-want +got):\n%s", diff)
	}
	select {
	case <-f.changed:
	default:
		t.Error("node status not told of the shutdown")
	}

	f.fake.Prepare(false)
	f.fake.WaitHeld(os.Getpid(), 1)
	waitFor(t, "the cancellation", func() bool { return !f.m.ShuttingDown() })
}

// TestGroupBudgetBoundsTheWait: a pod that does not finish holds its group
// for the group's grace period, then the next group starts anyway.
func TestGroupBudgetBoundsTheWait(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	f := startManager(t, clk, time.Minute, 0)
	f.fake.WaitHeld(os.Getpid(), 1)
	f.fake.Prepare(true)
	waitFor(t, "the app to be killed", func() bool {
		return strings.Join(f.node.events(), "\n") == "event NodeShutdown: Shutdown manager detected shutdown event\nkill app grace=20"
	})
	waitFor(t, "the group's timer", clk.HasWaiters)
	clk.Step(19 * time.Second)
	time.Sleep(100 * time.Millisecond)
	if got := f.node.events(); len(got) != 2 {
		t.Fatalf("before the budget ran out: %q", got)
	}
	clk.Step(time.Second)
	waitFor(t, "the critical pod to be killed", func() bool { return len(f.node.events()) == 3 })
	if got := f.node.events()[2]; got != "kill critical grace=10" {
		t.Errorf("after the app's budget: %q; want the critical pod killed", got)
	}
	waitFor(t, "the critical group's timer", clk.HasWaiters)
	for f.fake.Held(os.Getpid()) != 0 {
		clk.Step(time.Second)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestInhibitDelayRaised: when logind allows less than the budget, berth
// writes upstream's drop-in, has logind reload it and then takes the lock.
func TestInhibitDelayRaised(t *testing.T) {
	f := startManager(t, clock.RealClock{}, 5*time.Second, 0)
	f.fake.WaitHeld(os.Getpid(), 1)
	data, err := os.ReadFile(filepath.Join(f.fake.ConfDir(), "99-kubelet.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=30\n"; string(data) != want {
		t.Errorf("drop-in %q; want %q", data, want)
	}
}

// TestInhibitDelayTooSmall: a logind that keeps a smaller delay gets no
// lock (berth cannot keep its promise) and an error, as upstream.
func TestInhibitDelayTooSmall(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	addr := logindfake.StartBus(t)
	fake := logindfake.New(t, addr, 5*time.Second, t.TempDir())
	fake.IgnoreReload()
	m, err := New(Config{Periods: []Period{{0, 30}}, LogindConfDir: fake.ConfDir(), Pods: testPods,
		Kill: func(context.Context, *corev1.Pod, int64) {}, Finished: func(types.UID) bool { return true }, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	l := connectLogind(t, addr)
	err = m.ensureDelay(ctx, l)
	if err == nil || !strings.Contains(err.Error(), "logind InhibitDelayMaxSec is 5s after 5 checks, less than the 30s") {
		t.Errorf("ensureDelay = %v; want the delay refused", err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReconnectBacksOff: without a bus, berth retries after 1s, 2s, 4s...
// and keeps running.
func TestReconnectBacksOff(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	clk := testingclock.NewFakeClock(time.Now())
	var mu sync.Mutex
	var attempts []time.Time
	m, err := New(Config{Periods: []Period{{0, 30}}, Pods: testPods, Clock: clk,
		Kill: func(context.Context, *corev1.Pod, int64) {}, Finished: func(types.UID) bool { return true },
		Connect: func(context.Context) (*Logind, error) {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, clk.Now())
			return nil, fmt.Errorf("connect to the system bus: no such file")
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(attempts) }
	for i := 1; i <= 4; i++ {
		waitFor(t, fmt.Sprintf("attempt %d", i), func() bool { return count() == i && clk.HasWaiters() })
		clk.Step(time.Second)
		for count() == i && clk.HasWaiters() {
			clk.Step(time.Second)
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v; want nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(attempts); i++ {
		gaps = append(gaps, attempts[i].Sub(attempts[i-1]))
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, gaps[:3]); diff != "" {
		t.Errorf("waits between attempts (-want +got):\n%s", diff)
	}
}
