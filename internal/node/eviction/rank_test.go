package eviction

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

func pod(name string, prio int32, memReq string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)},
		Spec: corev1.PodSpec{Priority: ptr.To(prio), Containers: []corev1.Container{{Name: "c"}}}}
	if memReq != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: *q(memReq)}
	}
	return p
}

func memStats(name string, ws uint64) *statsapi.PodStats {
	return &statsapi.PodStats{PodRef: statsapi.PodReference{Name: name, UID: name},
		Memory:     &statsapi.MemoryStats{WorkingSetBytes: ptr.To(ws)},
		Containers: []statsapi.ContainerStats{{Name: "c", Memory: &statsapi.MemoryStats{WorkingSetBytes: ptr.To(ws)}}}}
}

func names(rs []Ranked) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Pod.Name)
	}
	return out
}

func TestRankMemory(t *testing.T) {
	const mi = 1 << 20
	pods := []*corev1.Pod{pod("guaranteed", 0, "500Mi"), pod("high-prio-over", 1000, "10Mi"), pod("besteffort-small", 0, ""),
		pod("besteffort-big", 0, ""), pod("no-stats", 5000, "1Gi")}
	stats := PodStats{"guaranteed": memStats("guaranteed", 400*mi), "high-prio-over": memStats("high-prio-over", 900*mi),
		"besteffort-small": memStats("besteffort-small", 10*mi), "besteffort-big": memStats("besteffort-big", 300*mi)}
	got := names(RankPods(pods, stats, SignalMemoryAvailable, false))
	want := []string{"no-stats", "besteffort-big", "besteffort-small", "high-prio-over", "guaranteed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("memory ranking (-want +got):\n%s", diff)
	}
}

func TestRankPIDsAndDisk(t *testing.T) {
	procs := func(name string, n uint64, rootfs uint64) *statsapi.PodStats {
		return &statsapi.PodStats{PodRef: statsapi.PodReference{Name: name, UID: name}, ProcessStats: &statsapi.ProcessStats{ProcessCount: ptr.To(n)},
			Containers: []statsapi.ContainerStats{{Name: "c", Rootfs: &statsapi.FsStats{UsedBytes: ptr.To(rootfs)}, Logs: &statsapi.FsStats{UsedBytes: ptr.To(uint64(0))}}}}
	}
	pods := []*corev1.Pod{pod("a", 10, ""), pod("b", 0, ""), pod("c", 0, "")}
	stats := PodStats{"a": procs("a", 500, 900), "b": procs("b", 5, 100), "c": procs("c", 50, 50)}
	if diff := cmp.Diff([]string{"c", "b", "a"}, names(RankPods(pods, stats, SignalPIDAvailable, false))); diff != "" {
		t.Errorf("pid ranking (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "c", "a"}, names(RankPods(pods, stats, SignalNodeFsAvailable, false))); diff != "" {
		t.Errorf("disk ranking (-want +got):\n%s", diff)
	}
	// With a dedicated image filesystem, nodefs measures no writable layer.
	if diff := cmp.Diff([]string{"b", "c", "a"}, names(RankPods(pods, stats, SignalImageFsAvailable, true))); diff != "" {
		t.Errorf("imagefs ranking (-want +got):\n%s", diff)
	}
}

// TestMessage: upstream's wording, threshold and the containers over
// their request.
func TestMessage(t *testing.T) {
	p := pod("web", 0, "100Mi")
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side"})
	s := memStats("web", 200<<20)
	s.Containers = append(s.Containers, statsapi.ContainerStats{Name: "side", Memory: &statsapi.MemoryStats{WorkingSetBytes: ptr.To(uint64(0))}})
	act := []Threshold{{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("100Mi")}}}
	obs := Observations{SignalMemoryAvailable: {Available: *q("50Mi"), Capacity: *q("8Gi")}}
	got := Message(corev1.ResourceMemory, p, s, act, obs)
	want := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. " +
		"Container c was using 200Mi, request is 100Mi, has larger consumption of memory. "
	if got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
}

func TestLocalStorageViolation(t *testing.T) {
	withVol := func(limit string) *corev1.Pod {
		p := pod("p", 0, "")
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: q(limit)}}}}
		return p
	}
	withLimit := func(limit string) *corev1.Pod {
		p := pod("p", 0, "")
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: *q(limit)}
		return p
	}
	st := func(vol, root, logs, eph uint64) *statsapi.PodStats {
		return &statsapi.PodStats{VolumeStats: []statsapi.VolumeStats{{Name: "scratch", FsStats: statsapi.FsStats{UsedBytes: ptr.To(vol)}}},
			EphemeralStorage: &statsapi.FsStats{UsedBytes: ptr.To(eph)},
			Containers:       []statsapi.ContainerStats{{Name: "c", Rootfs: &statsapi.FsStats{UsedBytes: ptr.To(root)}, Logs: &statsapi.FsStats{UsedBytes: ptr.To(logs)}}}}
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		stats     *statsapi.PodStats
		dedicated bool
		want      string
		wantSig   Signal
	}{
		{name: "emptyDir within limit", pod: withVol("1Mi"), stats: st(1<<20, 0, 0, 0)},
		{name: "emptyDir over limit", pod: withVol("1Mi"), stats: st(1<<20+1, 0, 0, 0), want: `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `, wantSig: SignalEmptyDirFsLimit},
		{name: "no stats", pod: withVol("1Mi")},
		{name: "pod over total limit", pod: withLimit("10Ki"), stats: st(0, 0, 0, 20<<10), want: "Pod ephemeral local storage usage exceeds the total limit of containers 10Ki. ", wantSig: SignalEphemeralPodFsLimit},
		{name: "container over limit", pod: withLimit("10Ki"), stats: st(0, 8<<10, 4<<10, 0), want: `Container c exceeded its local ephemeral storage limit "10Ki". `, wantSig: SignalEphemeralContainerFsLimit},
		{name: "writable layer not counted with dedicated imagefs", pod: withLimit("10Ki"), stats: st(0, 8<<10, 4<<10, 0), dedicated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, sig := LocalStorageViolation(tt.pod, tt.stats, tt.dedicated); got != tt.want || sig != tt.wantSig {
				t.Errorf("got %q %q, want %q %q", got, sig, tt.want, tt.wantSig)
			}
		})
	}
}

func TestAdmitAndChoose(t *testing.T) {
	be, burst := pod("be", 0, ""), pod("burst", 0, "10Mi")
	tolerant := pod("tolerant", 0, "")
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	critical := pod("critical", podutil.SystemCriticalPriority, "")
	mem, disk := []corev1.NodeConditionType{corev1.NodeMemoryPressure}, []corev1.NodeConditionType{corev1.NodeDiskPressure}
	for _, tt := range []struct {
		name  string
		pod   *corev1.Pod
		conds []corev1.NodeConditionType
		want  bool
	}{
		{"no pressure", be, nil, true}, {"besteffort under memory", be, mem, false}, {"burstable under memory", burst, mem, true},
		{"tolerant besteffort", tolerant, mem, true}, {"burstable under disk", burst, disk, false}, {"critical under disk", critical, disk, true},
	} {
		ok, msg := Admit(tt.pod, tt.conds)
		if ok != tt.want || (!ok && msg != "The node had condition: ["+string(tt.conds[0])+"]. ") {
			t.Errorf("%s: admit %v %q, want %v", tt.name, ok, msg, tt.want)
		}
	}
	hard := Threshold{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}}
	soft := Threshold{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}, GracePeriod: 1}
	be.Spec.TerminationGracePeriodSeconds = ptr.To(int64(5))
	stats := PodStats{"be": memStats("be", 1<<30), "critical": memStats("critical", 1<<31), "burst": memStats("burst", 1)}
	for _, tt := range []struct {
		name  string
		t     Threshold
		grace int64
	}{{"hard", hard, 0}, {"soft capped by pod", soft, 5}} {
		ev, ok := Choose(ChooseInput{Decision: Decision{Reclaim: &tt.t, Resource: corev1.ResourceMemory, Act: []Threshold{tt.t}},
			Pods: []*corev1.Pod{burst, critical, be}, Stats: stats, MaxPodGracePeriod: 30})
		if !ok || ev.Pod.Name != "be" || ev.GracePeriod != tt.grace {
			t.Errorf("%s: chose %v %s grace %d, want be grace %d", tt.name, ok, ev.Pod.Name, ev.GracePeriod, tt.grace)
		}
	}
	if _, ok := Choose(ChooseInput{Decision: Decision{Reclaim: &hard}, Pods: []*corev1.Pod{critical}, Stats: stats}); ok {
		t.Error("chose a critical pod")
	}
}
