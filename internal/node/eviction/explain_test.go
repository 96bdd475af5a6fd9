package eviction

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

const mib = 1 << 20

// podOf is a pod of one container with the given QoS class: Guaranteed
// has limits equal to its requests (cpu and memory), Burstable requests
// only, BestEffort none. ephReq adds an ephemeral-storage request.
func podOf(name string, prio int32, qos corev1.PodQOSClass, memReq, ephReq string) *corev1.Pod {
	p := pod(name, prio, "")
	res := &p.Spec.Containers[0].Resources
	switch qos {
	case corev1.PodQOSGuaranteed:
		res.Requests = corev1.ResourceList{corev1.ResourceCPU: *q("100m"), corev1.ResourceMemory: *q(memReq)}
		res.Limits = res.Requests.DeepCopy()
	case corev1.PodQOSBurstable:
		res.Requests = corev1.ResourceList{corev1.ResourceMemory: *q(memReq)}
	}
	if ephReq != "" {
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		res.Requests[corev1.ResourceEphemeralStorage] = *q(ephReq)
		if qos == corev1.PodQOSGuaranteed {
			res.Limits[corev1.ResourceEphemeralStorage] = *q(ephReq)
		}
	}
	return p
}

// podUsage is a pod's stats: working set, writable layer and logs.
func podUsage(name string, ws, rootfs, logs uint64) *statsapi.PodStats {
	s := memStats(name, ws)
	s.Containers[0].Rootfs = &statsapi.FsStats{UsedBytes: ptr.To(rootfs), InodesUsed: ptr.To(rootfs / mib)}
	s.Containers[0].Logs = &statsapi.FsStats{UsedBytes: ptr.To(logs), InodesUsed: ptr.To(uint64(1))}
	return s
}

// rankFixture is a node's pods across QoS classes, priorities and usages:
// a static (critical) pod, a pod without stats, BestEffort, Burstable over
// and under its requests, Guaranteed, and a BestEffort pod of high
// priority.
func rankFixture() ([]*corev1.Pod, []*statsapi.PodStats) {
	static := podOf("static", 0, corev1.PodQOSBestEffort, "", "")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	pods := []*corev1.Pod{
		static,
		podOf("guar", 0, corev1.PodQOSGuaranteed, "512Mi", ""),
		podOf("burst-under", 0, corev1.PodQOSBurstable, "1Gi", ""),
		podOf("be-big", 0, corev1.PodQOSBestEffort, "", ""),
		podOf("hiprio-be", 1000, corev1.PodQOSBestEffort, "", ""),
		podOf("burst-over", 0, corev1.PodQOSBurstable, "100Mi", "1Gi"),
		podOf("be-small", 0, corev1.PodQOSBestEffort, "", ""),
		podOf("nostats", 0, corev1.PodQOSBurstable, "64Mi", ""),
	}
	stats := []*statsapi.PodStats{
		podUsage("static", 2048*mib, 1024*mib, 0),
		podUsage("guar", 500*mib, 2048*mib, 0),
		podUsage("burst-under", 200*mib, 10*mib, 0),
		podUsage("be-big", 800*mib, 100*mib, 0),
		podUsage("hiprio-be", 900*mib, 5120*mib, 0),
		podUsage("burst-over", 600*mib, 500*mib, 0),
		podUsage("be-small", 50*mib, 1024*mib, 2048*mib),
	}
	return pods, stats
}

// pressured is a summary at now with memory, the node filesystem or a
// dedicated image filesystem low, as the case asks.
func pressured(now time.Time, sig Signal, pods []*statsapi.PodStats) *statsapi.Summary {
	memAvail, nodeAvail, imageAvail := uint64(4<<30), uint64(50<<30), uint64(150<<30)
	switch sig {
	case SignalMemoryAvailable:
		memAvail = 512 * mib
	case SignalNodeFsAvailable:
		nodeAvail = 5 << 30
	case SignalImageFsAvailable:
		imageAvail = 5 << 30
	}
	s := summary(now, memAvail, nodeAvail, pods...)
	s.Node.Fs.Inodes, s.Node.Fs.InodesFree = ptr.To(uint64(1e6)), ptr.To(uint64(9e5))
	if sig == SignalImageFsAvailable {
		s.Node.Runtime = &statsapi.RuntimeStats{ImageFs: &statsapi.FsStats{Time: metav1.NewTime(now),
			CapacityBytes: ptr.To(uint64(200 << 30)), AvailableBytes: ptr.To(imageAvail)}}
	}
	return s
}

// TestExplainerOrderIsManagersChoice runs the manager pass after pass
// under one pressure, each eviction taking its pod away, and holds the
// order of its evictions to the explainer's ranking of the first pass
// (critical pods left out) and to upstream's order written out by hand.
func TestExplainerOrderIsManagersChoice(t *testing.T) {
	thresholds := []Threshold{
		{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}},
		{Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.1}},
		{Signal: SignalImageFsAvailable, Value: Value{Percentage: 0.1}},
	}
	tests := []struct {
		signal Signal
		want   []string
	}{
		// Over their request first (BestEffort always is), lower priority
		// first, larger usage above the request first; no stats before all.
		{SignalMemoryAvailable, []string{"nostats", "be-big", "burst-over", "be-small", "hiprio-be", "guar", "burst-under"}},
		// The node filesystem holds writable layers and logs: be-small
		// uses 3Gi, burst-over is within its 1Gi ephemeral-storage request.
		{SignalNodeFsAvailable, []string{"nostats", "be-small", "guar", "be-big", "burst-under", "hiprio-be", "burst-over"}},
		// A dedicated image filesystem holds the writable layers only.
		{SignalImageFsAvailable, []string{"nostats", "guar", "be-small", "be-big", "burst-under", "hiprio-be", "burst-over"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.signal), func(t *testing.T) {
			pods, stats := rankFixture()
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			active := slices.Clone(pods)
			var evicted []string
			killer := killFunc(func(ev Eviction) {
				evicted = append(evicted, ev.Pod.Name)
				active = slices.DeleteFunc(active, func(p *corev1.Pod) bool { return p == ev.Pod })
			})
			m, err := New(Config{Thresholds: thresholds, TransitionPeriod: time.Minute,
				Summary: func(context.Context, bool) (*statsapi.Summary, error) {
					return pressured(clk.Now(), tt.signal, stats), nil
				},
				ActivePods: func() []*corev1.Pod { return active }, PodCleanedUp: func(*corev1.Pod) bool { return true },
				Killer: killer, Recorder: &fakeRecorder{}, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			if e := m.Explain(); e.Observed || e.Message != notObservedMessage {
				t.Errorf("before the first pass: %+v, want not observed", e)
			}
			// What the explainer says before any eviction (the pass
			// published it and evicted the first pod).
			m.Pass(context.Background())
			first := m.Explain()
			for range len(pods) {
				clk.Step(10 * time.Second)
				if len(m.Pass(context.Background())) == 0 {
					break
				}
			}
			if diff := cmp.Diff(tt.want, evicted); diff != "" {
				t.Errorf("the manager's evictions (-upstream's order +got):\n%s", diff)
			}
			var explained []string
			var ranking *RankingView
			for i := range first.Rankings {
				if first.Rankings[i].Signal == tt.signal {
					ranking = &first.Rankings[i]
				}
			}
			if ranking == nil {
				t.Fatalf("no ranking for %s in %+v", tt.signal, first.Rankings)
			}
			for _, p := range ranking.Pods {
				if !p.Critical {
					explained = append(explained, p.Pod[len("ns/"):])
				}
			}
			if diff := cmp.Diff(evicted, explained); diff != "" {
				t.Errorf("the explainer's order against the manager's evictions (-manager +explainer):\n%s", diff)
			}
			if r := first.Reclaim; r == nil || r.Signal != tt.signal || r.Next == nil || r.Next.Pod != "ns/"+tt.want[0] {
				t.Errorf("explained reclaim = %+v, want %s evicting ns/%s", r, tt.signal, tt.want[0])
			}
			if got := first.Evicted; len(got) != 1 || got[0].Pod != "ns/"+evicted[0] {
				t.Errorf("explained evictions of the first pass = %+v, want ns/%s", got, evicted[0])
			}
		})
	}
}

type killFunc func(Eviction)

func (f killFunc) Evict(_ context.Context, ev Eviction) { f(ev) }

// TestExplainThresholds: each threshold's status, since, grace remaining
// and distance, and the conditions.
func TestExplainThresholds(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	start := now.Add(-30 * time.Second)
	memHard := Threshold{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("100Mi")}}
	memSoft := Threshold{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}, GracePeriod: time.Minute}
	fsHard := Threshold{Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.1}, MinReclaim: &Value{Quantity: q("5Gi")}}
	pidHard := Threshold{Signal: SignalPIDAvailable, Value: Value{Quantity: q("100")}}
	obs := Observations{
		SignalMemoryAvailable: {Available: *q("512Mi"), Capacity: *q("8Gi"), Time: now},
		SignalNodeFsAvailable: {Available: *q("12Gi"), Capacity: *q("100Gi"), Time: now},
	}
	prev := State{FirstMet: map[string]time.Time{memSoft.key(): start, fsHard.key(): start},
		Met: []Threshold{fsHard}, ConditionSeen: map[corev1.NodeConditionType]time.Time{corev1.NodeDiskPressure: start}}
	ts := []Threshold{memHard, memSoft, fsHard, pidHard}
	d := Decide(Input{Thresholds: ts, Observations: obs, Previous: prev, TransitionPeriod: 5 * time.Minute, Now: now})
	e := Explain(Snapshot{At: now, Thresholds: ts, Observations: obs, Decision: d})
	type row struct {
		Signal                                     Signal
		Status, Since, Grace, Left, Quantity, Kind string
		Met                                        bool
		LeftPercent                                float64
	}
	var got []row
	for _, v := range e.Thresholds {
		got = append(got, row{v.Signal, v.Status, v.Since, v.GraceRemaining, v.Left, v.Quantity, v.Kind, v.Met, v.LeftPercent})
	}
	want := []row{
		{SignalMemoryAvailable, StatusNotMet, "", "", "412Mi", "100Mi", "hard", false, 5},
		{SignalMemoryAvailable, StatusMetInGracePeriod, "2026-01-01T00:09:30Z", "30s", "-512Mi", "1Gi", "soft", true, -6.3},
		// 12Gi is above 10% (float32, as upstream) but not above it plus
		// the 5Gi minimum reclaim: the threshold is held.
		{SignalNodeFsAvailable, StatusHeld, "2026-01-01T00:09:30Z", "", "2147483488", "10737418400", "hard", false, 2},
		{SignalPIDAvailable, StatusNotObserved, "", "", "", "", "hard", false, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("thresholds (-want +got):\n%s", diff)
	}
	wantConds := []ConditionView{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, LastObservedAt: "2026-01-01T00:10:00Z"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue, LastObservedAt: "2026-01-01T00:10:00Z"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse},
	}
	if diff := cmp.Diff(wantConds, e.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	// The held nodefs threshold is acted on: it reclaims disk.
	if e.Reclaim == nil || e.Reclaim.Signal != SignalNodeFsAvailable || e.Reclaim.Next != nil || !e.Reclaim.NodeReclaimFirst {
		t.Errorf("reclaim = %+v, want nodefs.available, node-level first, no pod to evict", e.Reclaim)
	}
}

// TestExplainRankReasons: the reason of each place names what decided it.
func TestExplainRankReasons(t *testing.T) {
	pods, stats := rankFixture()
	sum := pressured(time.Time{}, SignalMemoryAvailable, stats)
	e := Explain(Snapshot{Pods: pods, Stats: PodStatsOf(sum), Thresholds: []Threshold{{Signal: SignalPIDAvailable}}})
	if got := []Signal{e.Rankings[0].Signal, e.Rankings[1].Signal}; !cmp.Equal(got, []Signal{SignalMemoryAvailable, SignalPIDAvailable}) {
		t.Fatalf("ranked signals = %v, want memory then pid", got)
	}
	reasons := map[string]string{}
	for _, p := range e.Rankings[0].Pods {
		reasons[p.Pod] = p.Reason
		if want := podutil.QOSClass(podByName(pods, p.Pod[len("ns/"):])); p.QOSClass != want {
			t.Errorf("%s: qos %s, want %s", p.Pod, p.QOSClass, want)
		}
	}
	want := map[string]string{
		"ns/static":      "critical: never evicted; BestEffort: memory usage 2Gi exceeds its request 0; priority 0; 2Gi above its request",
		"ns/nostats":     "no stats: ranked first, as upstream; priority 0",
		"ns/guar":        "Guaranteed: memory usage 500Mi within its request 512Mi; priority 0; 12Mi below its request",
		"ns/hiprio-be":   "BestEffort: memory usage 900Mi exceeds its request 0; priority 1000; 900Mi above its request",
		"ns/burst-under": "Burstable: memory usage 200Mi within its request 1Gi; priority 0; 824Mi below its request",
	}
	for pod, w := range want {
		if reasons[pod] != w {
			t.Errorf("%s: reason %q, want %q", pod, reasons[pod], w)
		}
	}
}

func podByName(pods []*corev1.Pod, name string) *corev1.Pod {
	for _, p := range pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// TestExplainWhilePassing reads the explanation while the manager passes
// (go test -race holds the snapshot's publication).
func TestExplainWhilePassing(t *testing.T) {
	pods, stats := rankFixture()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m, err := New(Config{Thresholds: []Threshold{{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}}},
		Summary: func(context.Context, bool) (*statsapi.Summary, error) {
			return pressured(clk.Now(), SignalMemoryAvailable, stats), nil
		},
		ActivePods: func() []*corev1.Pod { return pods }, PodCleanedUp: func(*corev1.Pod) bool { return true },
		Killer: killFunc(func(Eviction) {}), Recorder: &fakeRecorder{}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			clk.Step(10 * time.Second) // fresh stats every pass
			m.Pass(context.Background())
		}
	}()
	for {
		select {
		case <-done:
			if e := m.Explain(); !e.Observed || e.Reclaim == nil || e.Reclaim.Next == nil || e.Reclaim.Next.Pod != "ns/nostats" {
				t.Errorf("after the passes: reclaim %+v, want ns/nostats next", e.Reclaim)
			}
			return
		default:
			_ = m.Explain()
		}
	}
}
