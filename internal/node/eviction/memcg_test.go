package eviction

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func memSummary(available, workingSet, usage uint64, allocatable bool) *statsapi.Summary {
	m := &statsapi.MemoryStats{AvailableBytes: ptr.To(available), WorkingSetBytes: ptr.To(workingSet), UsageBytes: ptr.To(usage)}
	if allocatable {
		return &statsapi.Summary{Node: statsapi.NodeStats{SystemContainers: []statsapi.ContainerStats{{Name: statsapi.SystemContainerPods, Memory: m}}}}
	}
	return &statsapi.Summary{Node: statsapi.NodeStats{Memory: m}}
}

func TestMemcgThreshold(t *testing.T) {
	const gi = 1 << 30
	hard := func(sig Signal, v Value) Threshold { return Threshold{Signal: sig, Value: v} }
	tests := []struct {
		name    string
		t       Threshold
		sum     *statsapi.Summary
		want    int64
		wantErr bool
	}{
		// upstream's TestUpdateThreshold cases.
		{name: "node level threshold", t: hard(SignalMemoryAvailable, Value{Quantity: q("1Gi")}),
			sum: memSummary(3*gi, 1*gi, 2*gi, false), want: 4 * gi},
		{name: "allocatable threshold", t: hard(SignalAllocatableMemoryAvailable, Value{Quantity: q("1Gi")}),
			sum: memSummary(4*gi, 1*gi, 3*gi, true), want: 6 * gi},
		// capacity 8Gi, 25% of it is 2Gi, inactive file 1Gi.
		{name: "percentage of capacity", t: hard(SignalMemoryAvailable, Value{Percentage: 0.25}),
			sum: memSummary(6*gi, 2*gi, 3*gi, false), want: 7 * gi},
		{name: "allocatable threshold reads the pods container, not the node",
			t: hard(SignalAllocatableMemoryAvailable, Value{Quantity: q("1Gi")}), sum: memSummary(3*gi, 1*gi, 2*gi, false), wantErr: true},
		{name: "no usage", t: hard(SignalMemoryAvailable, Value{Quantity: q("1Gi")}),
			sum: &statsapi.Summary{Node: statsapi.NodeStats{Memory: &statsapi.MemoryStats{AvailableBytes: ptr.To(uint64(gi)), WorkingSetBytes: ptr.To(uint64(gi))}}}, wantErr: true},
		{name: "usage below the working set", t: hard(SignalMemoryAvailable, Value{Quantity: q("1Gi")}),
			sum: memSummary(3*gi, 2*gi, 1*gi, false), wantErr: true},
		{name: "no summary", t: hard(SignalMemoryAvailable, Value{Quantity: q("1Gi")}), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MemcgThreshold(tt.t, tt.sum)
			if (err != nil) != tt.wantErr {
				t.Fatalf("MemcgThreshold error %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("MemcgThreshold = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestNotifierDescription(t *testing.T) {
	got := []string{
		notifierDescription(Threshold{Signal: SignalMemoryAvailable}),
		notifierDescription(Threshold{Signal: SignalAllocatableMemoryAvailable, GracePeriod: time.Minute}),
	}
	want := []string{"hard memory eviction threshold", "soft allocatable memory eviction threshold"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptions (-want +got):\n%s", diff)
	}
}

// fakeNotifier records what is armed and closed and keeps the last wake.
type fakeNotifier struct {
	mu    sync.Mutex
	calls []string
	wakes []func()
}

type fakeWatch struct {
	n    *fakeNotifier
	name string
}

func (w fakeWatch) Close() error {
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	w.n.calls = append(w.n.calls, "close "+w.name)
	return nil
}

func (f *fakeNotifier) Arm(_ context.Context, dir string, usage int64, wake func()) (io.Closer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := fmt.Sprintf("%s@%d", dir, usage)
	f.calls = append(f.calls, "arm "+name)
	f.wakes = append(f.wakes, wake)
	return fakeWatch{f, name}, nil
}

func (f *fakeNotifier) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func TestManagerArmsMemoryNotifiers(t *testing.T) {
	const gi = 1 << 30
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sum := memSummary(3*gi, 1*gi, 2*gi, false)
	sum.Node.SystemContainers = memSummary(4*gi, 1*gi, 3*gi, true).Node.SystemContainers
	n := &fakeNotifier{}
	m, err := New(Config{
		Thresholds: []Threshold{
			{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}},
			{Signal: SignalAllocatableMemoryAvailable, Value: Value{Quantity: q("1Gi")}},
			{Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.1}},
		},
		Summary:      func(context.Context, bool) (*statsapi.Summary, error) { return sum, nil },
		ActivePods:   func() []*corev1.Pod { return nil },
		PodCleanedUp: func(*corev1.Pod) bool { return true },
		Killer:       &fakeKiller{}, Recorder: &fakeRecorder{}, Clock: clk,
		Notifier: n, MemoryCgroups: MemoryCgroups{Node: "/cg/memory", Pods: "/cg/memory/kubepods"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m.Pass(ctx)
	armed := []string{"arm /cg/memory@4294967296", "arm /cg/memory/kubepods@6442450944"}
	if diff := cmp.Diff(armed, n.log()); diff != "" {
		t.Fatalf("first pass (-want +got):\n%s", diff)
	}
	clk.Step(notifierRefreshInterval)
	m.Pass(ctx)
	if diff := cmp.Diff(armed, n.log()); diff != "" {
		t.Fatalf("within the refresh interval nothing is re-armed (-want +got):\n%s", diff)
	}
	clk.Step(time.Second)
	*sum.Node.Memory.UsageBytes += gi // one more Gi of inactive file
	m.Pass(ctx)
	want := append(armed, "close /cg/memory@4294967296", "arm /cg/memory@5368709120",
		"close /cg/memory/kubepods@6442450944", "arm /cg/memory/kubepods@6442450944")
	if diff := cmp.Diff(want, n.log()); diff != "" {
		t.Fatalf("after the refresh interval (-want +got):\n%s", diff)
	}

	// A notification makes Run pass at once, without the ticker.
	passes := make(chan struct{}, 10)
	m.cfg.Summary = func(context.Context, bool) (*statsapi.Summary, error) {
		passes <- struct{}{}
		return sum, nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	<-passes // Run's first pass
	n.mu.Lock()
	wake := n.wakes[len(n.wakes)-1]
	n.mu.Unlock()
	wake()
	select {
	case <-passes:
	case <-time.After(10 * time.Second):
		t.Fatal("a memory notification did not make the manager pass")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	log := n.log()
	if got := log[len(log)-2:]; !(got[0][:5] == "close" && got[1][:5] == "close") {
		t.Errorf("Run left notifications armed: %v", log)
	}
}
