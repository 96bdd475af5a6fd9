package pleg

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type result struct {
	pod *runtimestate.Pod
	err error
}

// getAsync starts GetNewerThan in a goroutine and waits until it is either
// answered or registered as a waiter, so the caller can assert on it
// without sleeping.
func getAsync(t *testing.T, ctx context.Context, c *Cache, uid types.UID, min time.Time) <-chan result {
	t.Helper()
	out := make(chan result, 1)
	go func() {
		pod, err := c.GetNewerThan(ctx, uid, min)
		out <- result{pod, err}
	}()
	for {
		c.mu.Lock()
		n := len(c.waiters[uid])
		c.mu.Unlock()
		if n > 0 || len(out) > 0 {
			return out
		}
		runtime.Gosched()
	}
}

func mustPending(t *testing.T, ch <-chan result) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("GetNewerThan returned early: %+v", r)
	default:
	}
}

func mustReturn(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("GetNewerThan did not return")
	}
	return result{}
}

func TestCacheGetDefaultsToEmptyPod(t *testing.T) {
	c := NewCache()
	pod, err := c.Get("u")
	if err != nil || pod == nil || pod.UID != "u" || len(pod.Containers) != 0 {
		t.Fatalf("Get() = %+v, %v; want empty pod with UID", pod, err)
	}
	want := errors.New("boom")
	c.Set("u", nil, want, t0)
	pod, err = c.Get("u")
	if !errors.Is(err, want) || pod == nil || pod.UID != "u" {
		t.Fatalf("Get() after failed Set = %+v, %v", pod, err)
	}
}

func TestGetNewerThanImmediate(t *testing.T) {
	pod := &runtimestate.Pod{UID: "u", Name: "web"}
	tests := []struct {
		name   string
		setup  func(c *Cache)
		min    time.Time
		want   *runtimestate.Pod
		wantOK bool
	}{
		{"entry newer", func(c *Cache) { c.Set("u", pod, nil, t0.Add(time.Second)) }, t0, pod, true},
		{"entry equal is not newer", func(c *Cache) { c.Set("u", pod, nil, t0) }, t0, nil, false},
		{"global newer returns entry", func(c *Cache) { c.Set("u", pod, nil, t0); c.UpdateTime(t0.Add(time.Second)) }, t0, pod, true},
		{"global newer, no entry", func(c *Cache) { c.UpdateTime(t0.Add(time.Second)) }, t0, &runtimestate.Pod{UID: "u"}, true},
		{"global not newer, no entry", func(c *Cache) { c.UpdateTime(t0) }, t0, nil, false},
		{"deleted entry, global newer", func(c *Cache) {
			c.Set("u", pod, nil, t0.Add(time.Second))
			c.Delete("u")
			c.UpdateTime(t0.Add(time.Second))
		}, t0, &runtimestate.Pod{UID: "u"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache()
			tc.setup(c)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := getAsync(t, ctx, c, "u", tc.min)
			if !tc.wantOK {
				mustPending(t, ch)
				return
			}
			r := mustReturn(t, ch)
			if r.err != nil {
				t.Fatalf("GetNewerThan() error = %v", r.err)
			}
			if diff := cmp.Diff(tc.want, r.pod); diff != "" {
				t.Errorf("GetNewerThan() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetNewerThanWokenBySetAndUpdateTime(t *testing.T) {
	c := NewCache()
	ctx := context.Background()
	pod := &runtimestate.Pod{UID: "u", Name: "web"}

	bySet := getAsync(t, ctx, c, "u", t0)
	other := getAsync(t, ctx, c, "other", t0)
	c.Set("u", pod, nil, t0) // not after minTime
	mustPending(t, bySet)
	c.Set("u", pod, nil, t0.Add(time.Millisecond))
	if r := mustReturn(t, bySet); r.pod != pod {
		t.Errorf("woken by Set with %+v, want %+v", r.pod, pod)
	}
	mustPending(t, other)

	c.UpdateTime(t0) // not after minTime
	mustPending(t, other)
	c.UpdateTime(t0.Add(time.Second))
	if r := mustReturn(t, other); r.err != nil || r.pod.UID != "other" {
		t.Errorf("woken by UpdateTime with %+v, %v; want empty pod", r.pod, r.err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) != 0 {
		t.Errorf("waiters left behind: %v", c.waiters)
	}
}

func TestGetNewerThanHonoursContext(t *testing.T) {
	c := NewCache()
	ctx, cancel := context.WithCancel(context.Background())
	ch := getAsync(t, ctx, c, "u", t0)
	mustPending(t, ch)
	cancel()
	r := mustReturn(t, ch)
	if !errors.Is(r.err, context.Canceled) || r.pod != nil {
		t.Fatalf("GetNewerThan() = %+v, %v; want context.Canceled", r.pod, r.err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) != 0 {
		t.Errorf("cancelled waiter not removed: %v", c.waiters)
	}
}

func TestUpdateTimeNeverMovesBack(t *testing.T) {
	c := NewCache()
	c.UpdateTime(t0.Add(time.Second))
	c.UpdateTime(t0)
	ch := getAsync(t, context.Background(), c, "u", t0)
	if r := mustReturn(t, ch); r.pod.UID != "u" {
		t.Errorf("got %+v", r.pod)
	}
}
