package cpumanager

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/topology"
)

func hint(preferred bool, nodes ...int) topology.Hint {
	return topology.Hint{Affinity: topology.MustMask(nodes...), Preferred: preferred}
}

// dualSocket is the static policy on topoDualSocketHT (NUMA 0: CPUs
// 0,2,4,6,8,10; NUMA 1: 1,3,5,7,9,11) with CPU 0 reserved.
func dualSocket(t *testing.T) (*Static, State) {
	t.Helper()
	p, err := NewStatic(topoDualSocketHT, 1, cpuset.New(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Start(State{})
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

// TestTopologyHints is modelled on upstream's cpumanager topology hints
// cases: which NUMA sets can hold the request, the narrowest preferred.
func TestTopologyHints(t *testing.T) {
	p, base := dualSocket(t)
	held := func(uid, name, cpus string) State {
		s := base.Clone()
		cs := mustParse(t, cpus)
		s.Default = s.Default.Difference(cs)
		s.set(uid, name, cs)
		return s
	}
	for _, tt := range []struct {
		name  string
		state State
		pod   *corev1.Pod
		want  topology.ProviderHints
	}{
		{name: "burstable: no preference", state: base, pod: pod("u", nil, container("c", "1", "2"))},
		{name: "2 CPUs fit either node", state: base, pod: pod("u", nil, container("c", "2", "2")),
			want: topology.ProviderHints{"cpu": {hint(true, 0), hint(true, 1), hint(false, 0, 1)}}},
		{name: "6 CPUs: node 0 has 5 free", state: base, pod: pod("u", nil, container("c", "6", "6")),
			want: topology.ProviderHints{"cpu": {hint(true, 1), hint(false, 0, 1)}}},
		{name: "7 CPUs need both", state: base, pod: pod("u", nil, container("c", "7", "7")),
			want: topology.ProviderHints{"cpu": {hint(true, 0, 1)}}},
		{name: "more than free: no hint", state: base, pod: pod("u", nil, container("c", "12", "12")),
			want: topology.ProviderHints{"cpu": {}}},
		{name: "already held: hints of its CPUs", state: held("u", "c", "2,8"), pod: pod("u", nil, container("c", "2", "2")),
			want: topology.ProviderHints{"cpu": {hint(true, 0), hint(false, 0, 1)}}},
		{name: "held of another size", state: held("u", "c", "2,8"), pod: pod("u", nil, container("c", "4", "4")),
			want: topology.ProviderHints{"cpu": {}}},
		{name: "an init container's CPUs to reuse", state: held("u", "init", "1,7"),
			pod:  pod("u", []corev1.Container{container("init", "2", "2")}, container("c", "2", "2")),
			want: topology.ProviderHints{"cpu": {hint(true, 1), hint(false, 0, 1)}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.pod.Spec.Containers[0]
			got := p.TopologyHints(tt.state, tt.pod, &c)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("hints (-want +got):\n%s", d)
			}
		})
	}
}

func TestPodTopologyHints(t *testing.T) {
	p, base := dualSocket(t)
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want topology.ProviderHints
	}{
		{name: "two containers of 3 CPUs: one node", pod: pod("u", nil, container("a", "3", "3"), container("b", "3", "3")),
			want: topology.ProviderHints{"cpu": {hint(true, 1), hint(false, 0, 1)}}},
		{name: "a wide init container counts alone", pod: pod("u", []corev1.Container{container("i", "7", "7")}, container("a", "1", "1")),
			want: topology.ProviderHints{"cpu": {hint(true, 0, 1)}}},
		{name: "shared pool only", pod: pod("u", nil, container("a", "500m", "500m"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, p.PodTopologyHints(base, tt.pod)); d != "" {
				t.Errorf("hints (-want +got):\n%s", d)
			}
		})
	}
}

func TestAllocateContainerWithAffinity(t *testing.T) {
	p, base := dualSocket(t)
	for _, tt := range []struct {
		name     string
		request  string
		affinity topology.Mask
		want     string
	}{
		{name: "on node 1", request: "2", affinity: topology.MustMask(1), want: "1,7"},
		{name: "on node 0, CPU 0 reserved", request: "2", affinity: topology.MustMask(0), want: "2,8"},
		{name: "more than the node has free: the rest elsewhere", request: "6", affinity: topology.MustMask(0), want: "1-2,4,6,8,10"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pd := pod("u", nil, container("c", tt.request, tt.request))
			s, err := p.AllocateContainer(base, pd, &pd.Spec.Containers[0], tt.affinity)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.Exclusive("u", "c")
			if got.String() != tt.want {
				t.Errorf("CPUs = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestTopologyManagerAdmits runs the topology manager over the CPU
// manager on two NUMA nodes: single-numa-node refuses what one node
// cannot hold and aligns what it can.
func TestTopologyManagerAdmits(t *testing.T) {
	ctx := context.Background()
	m, err := New(t.Context(), Config{
		Policy: PolicyStatic, Topology: topoDualSocketHT, NumReserved: 1, StateDir: t.TempDir(),
		ReconcilePeriod: time.Second, Snapshot: func() Snapshot { return Snapshot{} },
		Clock: clocktesting.NewFakeClock(time.Unix(0, 0)),
	})
	if err != nil {
		t.Fatal(err)
	}
	tm, err := topology.New(topology.Config{
		Policy: topology.PolicySingleNUMANode, Scope: topology.ScopeContainer,
		Options: topology.Options{MaxAllowableNUMANodes: 8}, NUMA: &topology.NUMAInfo{Nodes: []int{0, 1}},
		Providers: []topology.HintProvider{m},
	})
	if err != nil {
		t.Fatal(err)
	}
	wide := pod("wide", nil, container("c", "7", "7"))
	if ok, reason, msg := tm.Admit(ctx, wide); ok || reason != "TopologyAffinityError" || msg != "Resources cannot be allocated with Topology locality" {
		t.Errorf("7 CPUs: admit %t %q %q, want TopologyAffinityError", ok, reason, msg)
	}
	four := pod("four", nil, container("a", "4", "4"), container("b", "4", "4"))
	if ok, reason, msg := tm.Admit(ctx, four); !ok {
		t.Fatalf("two containers of 4 CPUs refused: %q %q", reason, msg)
	}
	for _, name := range []string{"a", "b"} {
		cs, _ := m.State().Exclusive("four", name)
		nodes := map[int]bool{}
		for _, c := range cs.List() {
			nodes[topoDualSocketHT.CPUDetails[c].NUMANodeID] = true
		}
		if len(nodes) != 1 || cs.Size() != 4 {
			t.Errorf("container %s got %s on NUMA nodes %v, want 4 CPUs on one", name, cs, nodes)
		}
	}
}
