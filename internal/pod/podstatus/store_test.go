package podstatus

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestStoreNeverLeavesTerminalPhase(t *testing.T) {
	tests := []struct {
		name      string
		stored    corev1.PodStatus
		set       corev1.PodStatus
		wantPhase corev1.PodPhase
		wantMsg   string
	}{
		{"pending to running", corev1.PodStatus{Phase: corev1.PodPending}, corev1.PodStatus{Phase: corev1.PodRunning}, corev1.PodRunning, ""},
		{"running to failed", corev1.PodStatus{Phase: corev1.PodRunning}, corev1.PodStatus{Phase: corev1.PodFailed, Message: "x"}, corev1.PodFailed, "x"},
		{"failed to running refused", corev1.PodStatus{Phase: corev1.PodFailed, Message: "evicted"}, corev1.PodStatus{Phase: corev1.PodRunning}, corev1.PodFailed, "evicted"},
		{"succeeded to pending refused", corev1.PodStatus{Phase: corev1.PodSucceeded}, corev1.PodStatus{Phase: corev1.PodPending}, corev1.PodSucceeded, ""},
		{"succeeded to failed allowed", corev1.PodStatus{Phase: corev1.PodSucceeded}, corev1.PodStatus{Phase: corev1.PodFailed}, corev1.PodFailed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(clock.RealClock{})
			s.Set("u", tc.stored)
			tc.set.HostIP = "10.0.0.1"
			ret := s.Set("u", tc.set)
			got, ok := s.Get("u")
			if !ok || got.Phase != tc.wantPhase || got.Message != tc.wantMsg || got.HostIP != "10.0.0.1" {
				t.Errorf("stored %+v, want phase %s message %q and the new host IP", got, tc.wantPhase, tc.wantMsg)
			}
			if diff := cmp.Diff(got, ret); diff != "" {
				t.Errorf("Set() returned something else than stored:\n%s", diff)
			}
		})
	}
}

func TestStoreCopiesAndSnapshot(t *testing.T) {
	s := NewStore(clock.RealClock{})
	in := corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.1.1.1"}}}
	s.Set("a", in)
	s.Set("b", corev1.PodStatus{Phase: corev1.PodPending})
	in.PodIPs[0].IP = "mutated"
	got, _ := s.Get("a")
	got.PodIPs[0].IP = "mutated too"
	snap := s.Snapshot()
	want := map[types.UID]corev1.PodStatus{
		"a": {Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.1.1.1"}}},
		"b": {Phase: corev1.PodPending},
	}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Errorf("snapshot mismatch (-want +got):\n%s", diff)
	}
	s.Forget(context.Background(), "a")
	if _, ok := s.Get("a"); ok {
		t.Error("Get after Forget found the pod")
	}
	if len(snap) != 2 {
		t.Error("snapshot changed after Forget")
	}
}

func TestStoreConcurrent(t *testing.T) {
	s := NewStore(clock.RealClock{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			uid := types.UID(rune('a' + i))
			for j := 0; j < 100; j++ {
				s.Set(uid, corev1.PodStatus{Phase: corev1.PodRunning})
				s.Get(uid)
				s.Snapshot()
			}
			s.Forget(context.Background(), uid)
		}(i)
	}
	wg.Wait()
	if n := len(s.Snapshot()); n != 0 {
		t.Errorf("%d pods left", n)
	}
}

func TestStoreChanged(t *testing.T) {
	s := NewStore(clock.RealClock{})
	pending := func() bool {
		select {
		case <-s.Changed():
			return true
		default:
			return false
		}
	}
	running := corev1.PodStatus{Phase: corev1.PodRunning}
	steps := []struct {
		name string
		do   func()
		want bool
	}{
		{"nothing yet", func() {}, false},
		{"first set", func() { s.Set("a", running) }, true},
		{"same status again", func() { s.Set("a", running) }, false},
		{"new status", func() { s.Set("a", corev1.PodStatus{Phase: corev1.PodFailed}) }, true},
		{"refused move out of terminal phase changes nothing", func() { s.Set("a", corev1.PodStatus{Phase: corev1.PodRunning}) }, false},
		{"two changes coalesce", func() { s.Set("b", running); s.Set("c", running) }, true},
		{"delete of an unknown pod", func() { s.Forget(context.Background(), "zzz") }, false},
		{"delete", func() { s.Forget(context.Background(), "b") }, true},
	}
	for _, st := range steps {
		st.do()
		if got := pending(); got != st.want {
			t.Errorf("%s: signal pending = %v, want %v", st.name, got, st.want)
		}
	}
}

// TestStoreEntriesChangeTime: an entry's Changed moves only when a Set
// changes the stored status.
func TestStoreEntriesChangeTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	s := NewStore(clk)
	running := corev1.PodStatus{Phase: corev1.PodRunning}
	steps := []struct {
		name        string
		set         corev1.PodStatus
		wantChanged time.Time
		wantSeq     uint64
	}{
		{"first set", corev1.PodStatus{Phase: corev1.PodPending}, t0.Add(time.Second), 1},
		{"same status again", corev1.PodStatus{Phase: corev1.PodPending}, t0.Add(time.Second), 1},
		{"new status", running, t0.Add(3 * time.Second), 2},
	}
	for _, st := range steps {
		clk.SetTime(clk.Now().Add(time.Second))
		s.Set("u", st.set)
		want := map[types.UID]Entry{"u": {Status: st.set, Changed: st.wantChanged, Seq: st.wantSeq}}
		got, seq := s.Entries()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Entries() (-want +got):\n%s", st.name, diff)
		}
		if seq != st.wantSeq {
			t.Errorf("%s: Entries() count = %d, want %d", st.name, seq, st.wantSeq)
		}
	}
}

// TestStoreEntriesSince: a reader that keeps the change count gets the
// entries changed since, plus the ones it asks for, and nothing else.
func TestStoreEntriesSince(t *testing.T) {
	s := NewStore(clock.RealClock{})
	pending, running := corev1.PodStatus{Phase: corev1.PodPending}, corev1.PodStatus{Phase: corev1.PodRunning}
	s.Set("a", pending)
	s.Set("b", pending)
	_, since := s.Entries()
	steps := []struct {
		name string
		do   func()
		also []types.UID
		want []types.UID
	}{
		{"nothing changed", func() {}, nil, nil},
		{"one changed", func() { s.Set("a", running) }, nil, []types.UID{"a"}},
		{"the same status again is no change", func() { s.Set("a", running) }, nil, nil},
		{"asked for, unchanged", func() {}, []types.UID{"b"}, []types.UID{"b"}},
		{"asked for and gone", func() {}, []types.UID{"zzz"}, nil},
		{"a new pod and a deletion", func() { s.Set("c", pending); s.Forget(context.Background(), "b") }, nil, []types.UID{"c"}},
		{"changed and asked for", func() { s.Set("c", running) }, []types.UID{"c", "a"}, []types.UID{"a", "c"}},
	}
	for _, st := range steps {
		st.do()
		also := map[types.UID]struct{}{}
		for _, uid := range st.also {
			also[uid] = struct{}{}
		}
		got, seq := s.EntriesSince(since, also)
		var uids []types.UID
		for uid := range got {
			uids = append(uids, uid)
		}
		slices.Sort(uids)
		if diff := cmp.Diff(st.want, uids); diff != "" {
			t.Errorf("%s: EntriesSince UIDs (-want +got):\n%s", st.name, diff)
		}
		since = seq
	}
}
