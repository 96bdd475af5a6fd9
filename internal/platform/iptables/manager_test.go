package iptables

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeTables is one family's iptables in memory: chains by table.
type fakeTables struct {
	family  Family
	present bool
	// mu guards chains and applied.
	mu      sync.Mutex
	chains  map[string]bool // "table/chain"
	applied int
}

func newFakeTables(f Family, present bool) *fakeTables {
	return &fakeTables{family: f, present: present, chains: map[string]bool{}}
}

func (f *fakeTables) Family() Family { return f.family }

func (f *fakeTables) Present(context.Context) error {
	if !f.present {
		return errors.New("no iptables")
	}
	return nil
}

func (f *fakeTables) EnsureChain(_ context.Context, table, chain string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chains[table+"/"+chain] = true
	return nil
}

func (f *fakeTables) ChainExists(_ context.Context, table, chain string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.chains[table+"/"+chain] {
		return true, nil
	}
	return false, errors.New("no chain")
}

func (f *fakeTables) Apply(_ context.Context, steps []Step) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied++
	for _, s := range steps {
		if s.Rule == nil {
			f.chains[s.Table+"/"+s.Chain] = true
		}
	}
	return nil
}

// flush empties every table, as "iptables -F; iptables -X" in each would.
func (f *fakeTables) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chains = map[string]bool{}
}

func (f *fakeTables) state() (applied int, canaries int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, table := range CanaryTables() {
		if f.chains[table+"/"+CanaryChain] {
			canaries++
		}
	}
	return f.applied, canaries
}

// eventually steps clk until cond holds, failing after 10s of real time.
func eventually(t *testing.T, clk *clocktesting.FakeClock, step time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		clk.Step(step)
		time.Sleep(time.Millisecond)
	}
}

// start runs m until the test ends; stop ends it and returns Run's error,
// failing when Run does not return.
func start(t *testing.T, m *Manager) (stop func() error, done <-chan struct{}) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	ended := make(chan struct{})
	var err error
	go func() {
		defer close(ended)
		err = m.Run(ctx)
	}()
	stop = func() error {
		cancel()
		select {
		case <-ended:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after ctx ended")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return stop, ended
}

// TestManagerRemakesChainsAfterFlush: the chains of a present family are
// made at once with the canaries; once the tables are flushed they are
// made again; an absent family is left alone; Run returns when ctx ends.
func TestManagerRemakesChainsAfterFlush(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	v4, v6 := newFakeTables(IPv4, true), newFakeTables(IPv6, false)
	stop, _ := start(t, &Manager{clock: clk, interval: time.Minute, families: []tables{v4, v6}})

	eventually(t, clk, time.Second, "the first sync and the canaries", func() bool {
		applied, canaries := v4.state()
		return applied == 1 && canaries == 3
	})
	v4.flush()
	eventually(t, clk, time.Second, "a sync after the flush", func() bool {
		applied, canaries := v4.state()
		return applied == 2 && canaries == 3
	})
	for range 5 {
		clk.Step(time.Minute)
		time.Sleep(time.Millisecond)
	}
	if applied, _ := v4.state(); applied != 2 {
		t.Errorf("synced %d times with one flush, want 2", applied)
	}
	if applied, _ := v6.state(); applied != 0 {
		t.Errorf("absent IPv6 iptables synced %d times", applied)
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestManagerWithoutIPTables: no family present, nothing is made, and Run
// still blocks until ctx ends (a component that returns early fails the
// agent).
func TestManagerWithoutIPTables(t *testing.T) {
	v4 := newFakeTables(IPv4, false)
	stop, done := start(t, &Manager{clock: clocktesting.NewFakeClock(time.Now()), interval: time.Minute, families: []tables{v4}})
	select {
	case <-done:
		t.Fatal("Run returned before ctx ended")
	case <-time.After(50 * time.Millisecond):
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if applied, _ := v4.state(); applied != 0 {
		t.Errorf("synced %d times without iptables", applied)
	}
}
