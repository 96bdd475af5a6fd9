package eviction

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

type fakeKiller struct{ calls []string }

func (k *fakeKiller) Evict(_ context.Context, ev Eviction) {
	call := fmt.Sprintf("%s grace=%d %s", ev.Pod.Name, ev.GracePeriod, ev.Message)
	if ev.NoDisruptionTarget {
		call = "(no DisruptionTarget) " + call
	}
	k.calls = append(k.calls, call)
}

type fakeMetrics struct{ evictions, ages []string }

func (f *fakeMetrics) ObserveEviction(signal string) { f.evictions = append(f.evictions, signal) }
func (f *fakeMetrics) ObserveEvictionStatsAge(signal string, age time.Duration) {
	f.ages = append(f.ages, fmt.Sprintf("%s %s", signal, age))
}

type fakeRecorder struct{ events, nodeEvents []string }

func (r *fakeRecorder) NodeEventf(typ, reason, format string, args ...any) {
	r.nodeEvents = append(r.nodeEvents, typ+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (r *fakeRecorder) Eventf(pod *corev1.Pod, typ, reason, format string, args ...any) {
	r.events = append(r.events, pod.Name+" "+typ+" "+reason)
}

// fakeReclaimer frees disk: each call adds freed bytes to the summary.
type fakeReclaimer struct {
	calls []string
	sum   *statsapi.Summary
	freed uint64
}

func (f *fakeReclaimer) DeleteAllUnusedContainers(context.Context) error {
	f.calls = append(f.calls, "containers")
	return nil
}

func (f *fakeReclaimer) DeleteUnusedImages(context.Context) error {
	f.calls = append(f.calls, "images")
	*f.sum.Node.Fs.AvailableBytes += f.freed
	return nil
}

func summary(now time.Time, memAvail, fsAvail uint64, pods ...*statsapi.PodStats) *statsapi.Summary {
	s := &statsapi.Summary{Node: statsapi.NodeStats{
		Memory: &statsapi.MemoryStats{Time: metav1.NewTime(now), AvailableBytes: ptr.To(memAvail), WorkingSetBytes: ptr.To(uint64(4 << 30))},
		Fs:     &statsapi.FsStats{Time: metav1.NewTime(now), AvailableBytes: ptr.To(fsAvail), CapacityBytes: ptr.To(uint64(100 << 30))},
	}}
	for _, p := range pods {
		s.Pods = append(s.Pods, *p)
	}
	return s
}

func TestManagerPass(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	memHard := Threshold{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}}
	fsHard := Threshold{Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.1}}
	guaranteed, besteffort := pod("guaranteed", 0, "2Gi"), pod("besteffort", 0, "")
	static := pod("static", 0, "")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	scratch := pod("scratch", 0, "1Gi")
	scratch.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: q("1Mi")}}}}
	scratchStats := memStats("scratch", 1)
	scratchStats.VolumeStats = []statsapi.VolumeStats{{Name: "tmp", FsStats: statsapi.FsStats{UsedBytes: ptr.To(uint64(2 << 20))}}}
	tests := []struct {
		name       string
		thresholds []Threshold
		sum        *statsapi.Summary
		pods       []*corev1.Pod
		freed      uint64
		wantKills  []string
		wantConds  []corev1.NodeConditionType
		wantGC     []string
		wantMetric []string
		// isolationOff is localStorageCapacityIsolation false.
		isolationOff bool
	}{
		{name: "no pressure", thresholds: []Threshold{memHard, fsHard}, sum: summary(now, 4<<30, 50<<30), pods: []*corev1.Pod{besteffort}},
		{name: "memory: besteffort before guaranteed, static never", thresholds: []Threshold{memHard},
			sum:  summary(now, 512<<20, 50<<30, memStats("guaranteed", 1<<30), memStats("besteffort", 100<<20), memStats("static", 3<<30)),
			pods: []*corev1.Pod{static, guaranteed, besteffort},
			wantKills: []string{"besteffort grace=0 The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. " +
				"Container c was using 100Mi, request is 0, has larger consumption of memory. "},
			wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, wantMetric: []string{"memory.available"}},
		{name: "disk: node reclaim suffices", thresholds: []Threshold{fsHard}, sum: summary(now, 4<<30, 5<<30, memStats("besteffort", 1)),
			pods: []*corev1.Pod{besteffort}, freed: 20 << 30, wantGC: []string{"containers", "images"},
			wantConds: []corev1.NodeConditionType{corev1.NodeDiskPressure}},
		{name: "disk: reclaim falls short, a pod goes", thresholds: []Threshold{fsHard}, sum: summary(now, 4<<30, 5<<30, memStats("besteffort", 1)),
			pods: []*corev1.Pod{besteffort}, freed: 1 << 30, wantGC: []string{"containers", "images"},
			wantKills: []string{"besteffort grace=0 The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. "}, // float32 10%, as upstream
			wantConds: []corev1.NodeConditionType{corev1.NodeDiskPressure}, wantMetric: []string{"nodefs.available"}},
		{name: "disk: nodefs with a dedicated imagefs, no node reclaim", thresholds: []Threshold{fsHard},
			sum:  withImageFs(summary(now, 4<<30, 5<<30, memStats("besteffort", 1)), 200<<30),
			pods: []*corev1.Pod{besteffort}, freed: 20 << 30,
			wantKills: []string{"besteffort grace=0 The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. "},
			wantConds: []corev1.NodeConditionType{corev1.NodeDiskPressure}, wantMetric: []string{"nodefs.available"}},
		{name: "emptyDir over its limit, no thresholds", sum: summary(now, 4<<30, 50<<30, scratchStats), pods: []*corev1.Pod{scratch},
			wantKills: []string{`(no DisruptionTarget) scratch grace=0 Usage of EmptyDir volume "tmp" exceeds the limit "1Mi". `}, wantMetric: []string{"emptydirfs.limit"}},
		{name: "emptyDir over its limit without localStorageCapacityIsolation: kept", sum: summary(now, 4<<30, 50<<30, scratchStats), pods: []*corev1.Pod{scratch},
			isolationOff: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			killer, rec, mt := &fakeKiller{}, &fakeRecorder{}, &fakeMetrics{}
			gc := &fakeReclaimer{sum: tt.sum, freed: tt.freed}
			kicked := 0
			m, err := New(Config{Thresholds: tt.thresholds, TransitionPeriod: time.Minute, LocalStorageCapacityIsolation: !tt.isolationOff,
				Summary:    func(context.Context, bool) (*statsapi.Summary, error) { return tt.sum, nil },
				ActivePods: func() []*corev1.Pod { return tt.pods }, PodCleanedUp: func(*corev1.Pod) bool { return true }, Killer: killer, Reclaimer: gc, Recorder: rec, Metrics: mt,
				OnConditions: func() { kicked++ }, Clock: clocktesting.NewFakeClock(now)})
			if err != nil {
				t.Fatal(err)
			}
			m.Pass(context.Background())
			if diff := cmp.Diff(tt.wantKills, killer.calls); diff != "" {
				t.Errorf("kills (-want +got):\n%s", diff)
			}
			if wantNode := len(tt.thresholds) > 0 && len(tt.wantConds) > 0; wantNode != (len(rec.nodeEvents) == 1) {
				t.Errorf("node events %v, want one EvictionThresholdMet: %v", rec.nodeEvents, wantNode)
			}
			if len(rec.events) != len(tt.wantKills) {
				t.Errorf("events %v, want one Evicted per kill", rec.events)
			}
			if diff := cmp.Diff(tt.wantConds, m.Conditions(), cmp.Transformer("nilEmpty", func(c []corev1.NodeConditionType) []corev1.NodeConditionType {
				if len(c) == 0 {
					return nil
				}
				return c
			})); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if wantKick := min(len(tt.wantConds), 1); kicked != wantKick {
				t.Errorf("node status kicked %d times, want %d", kicked, wantKick)
			}
			if diff := cmp.Diff(tt.wantMetric, mt.evictions); diff != "" {
				t.Errorf("kubelet_evictions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantGC, gc.calls); diff != "" {
				t.Errorf("node reclaim (-want +got):\n%s", diff)
			}
		})
	}
}

// withImageFs gives s an image filesystem of capacity bytes, apart from
// the node's when capacity differs.
func withImageFs(s *statsapi.Summary, capacity uint64) *statsapi.Summary {
	s.Node.Runtime = &statsapi.RuntimeStats{ImageFs: &statsapi.FsStats{CapacityBytes: ptr.To(capacity), AvailableBytes: ptr.To(capacity)}}
	return s
}

func TestNodeReclaimable(t *testing.T) {
	tests := []struct {
		signal    Signal
		dedicated bool
		want      bool
	}{
		{signal: SignalMemoryAvailable},
		{signal: SignalPIDAvailable},
		{signal: SignalNodeFsAvailable, want: true},
		{signal: SignalNodeFsInodesFree, want: true},
		{signal: SignalImageFsAvailable, want: true},
		{signal: SignalContainerFsAvailable, want: true},
		{signal: SignalNodeFsAvailable, dedicated: true},
		{signal: SignalNodeFsInodesFree, dedicated: true},
		{signal: SignalImageFsAvailable, dedicated: true, want: true},
		{signal: SignalImageFsInodesFree, dedicated: true, want: true},
		{signal: SignalContainerFsAvailable, dedicated: true, want: true},
		{signal: SignalContainerFsInodesFree, dedicated: true, want: true},
	}
	for _, tt := range tests {
		if got := NodeReclaimable(tt.signal, tt.dedicated); got != tt.want {
			t.Errorf("NodeReclaimable(%s, dedicated %v) = %v, want %v", tt.signal, tt.dedicated, got, tt.want)
		}
	}
}

// chanKiller sends each evicted pod's name.
type chanKiller chan string

func (k chanKiller) Evict(_ context.Context, ev Eviction) { k <- ev.Pod.Name }

// cleanupNode is a node under memory pressure at every pass, with stats
// of the pass's time (as upstream, a threshold is acted on only with newer
// stats), whose evicted pods are cleaned up when the test says so. Run
// calls its methods; the test reads its counts.
type cleanupNode struct {
	clk *clocktesting.FakeClock
	sum *statsapi.Summary
	mu  sync.Mutex
	// evicted are the pods evicted so far, cleaned those cleaned up;
	// passes counts the summaries taken, polls the cleanup checks.
	evicted       []string
	cleaned       map[string]bool
	passes, polls int
}

func (n *cleanupNode) summary(context.Context, bool) (*statsapi.Summary, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.passes++
	n.sum.Node.Memory.Time = metav1.NewTime(n.clk.Now())
	return n.sum, nil
}

// activePods are the pods not evicted yet.
func (n *cleanupNode) activePods() []*corev1.Pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range []*corev1.Pod{pod("guaranteed", 0, "2Gi"), pod("besteffort", 0, "")} {
		if !slices.Contains(n.evicted, p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func (n *cleanupNode) podCleanedUp(p *corev1.Pod) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.polls++
	return n.cleaned[p.Name]
}

// locked runs f under n's lock.
func (n *cleanupNode) locked(f func()) { n.mu.Lock(); defer n.mu.Unlock(); f() }

// until waits for cond, which another goroutine makes true.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Run never got to: %s", what)
		}
	}
}

// TestRunWaitsForCleanup checks upstream's waitForPodsCleanup: after a pass
// that evicted, Run passes again only once the evicted pod is cleaned up
// (polled every second), or after 30 s, whatever the pressure meanwhile:
// what the eviction frees must be seen before a second pod goes.
func TestRunWaitsForCleanup(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := &cleanupNode{clk: clocktesting.NewFakeClock(now), cleaned: map[string]bool{},
		sum: summary(now, 512<<20, 50<<30, memStats("guaranteed", 1<<30), memStats("besteffort", 100<<20))}
	kills := make(chanKiller, 2)
	m, err := New(Config{
		Thresholds: []Threshold{{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}}},
		Summary:    n.summary, ActivePods: n.activePods, PodCleanedUp: n.podCleanedUp,
		Killer: kills, Recorder: &fakeRecorder{}, Clock: n.clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	kill := func() string {
		t.Helper()
		select {
		case name := <-kills:
			n.locked(func() { n.evicted = append(n.evicted, name) })
			return name
		case <-time.After(10 * time.Second):
			t.Fatal("no eviction")
			return ""
		}
	}
	count := func(c *int) (v int) { n.locked(func() { v = *c }); return v }

	if got := kill(); got != "besteffort" {
		t.Fatalf("first eviction %s, want besteffort", got)
	}
	// Run's monitoring ticker, the cleanup timeout and its poll ticker.
	until(t, "waiting for the cleanup", func() bool { return n.clk.Waiters() == 3 })
	for i := 1; i <= 12; i++ { // past a monitoring period: no pass
		n.clk.Step(podCleanupPollFreq)
		until(t, fmt.Sprintf("poll %d", i), func() bool { return count(&n.polls) == i })
	}
	if p := count(&n.passes); p != 1 || len(kills) != 0 {
		t.Fatalf("%d passes, %d more evictions while the evicted pod was not cleaned up; want 1 and 0", p, len(kills))
	}
	n.locked(func() { n.cleaned["besteffort"] = true })
	n.clk.Step(podCleanupPollFreq)
	if got := kill(); got != "guaranteed" {
		t.Fatalf("second eviction %s, want guaranteed", got)
	}
	// Never cleaned up: Run waits 30 s, then passes again (nothing is
	// left to evict). Its poll ticker may not exist yet: step until it
	// polls.
	polled := count(&n.polls)
	until(t, "waiting for the second cleanup", func() bool {
		n.clk.Step(podCleanupPollFreq)
		time.Sleep(10 * time.Millisecond)
		return count(&n.polls) > polled
	})
	if p := count(&n.passes); p != 2 {
		t.Fatalf("%d passes before the cleanup timeout, want 2", p)
	}
	n.clk.Step(podCleanupTimeout)
	until(t, "the pass after the timeout", func() bool { return count(&n.passes) >= 3 })
}

// TestEvictableLeavesTerminatingPods: a pod whose termination was
// requested already (an evicted one) is not a candidate again.
func TestEvictableLeavesTerminatingPods(t *testing.T) {
	a, b := &corev1.Pod{}, &corev1.Pod{}
	a.UID, b.UID = "a", "b"
	m := &Manager{cfg: Config{ActivePods: func() []*corev1.Pod { return []*corev1.Pod{a, b} }}}
	if got := m.evictable(); len(got) != 2 {
		t.Errorf("without Terminating: %d candidates, want 2", len(got))
	}
	m.cfg.Terminating = func(uid types.UID) bool { return uid == "a" }
	if got := m.evictable(); len(got) != 1 || got[0] != b {
		t.Errorf("evictable = %v, want only b", got)
	}
}
