package memorymanager

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
)

// guaranteed is a container whose requests equal its limits.
func guaranteed(name string, kv ...string) corev1.Container {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: l, Requests: l.DeepCopy()}}
}

func podWith(init []corev1.Container, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metavMeta("pod1"), Spec: corev1.PodSpec{InitContainers: init, Containers: containers}}
}

func block(size uint64, t corev1.ResourceName, nodes ...int) state.Block {
	return state.Block{NUMAAffinity: nodes, Type: t, Size: size}
}

func empty(p *Static) state.Checkpoint {
	return state.Checkpoint{PolicyName: PolicyStatic, MachineState: p.DefaultMachineState(), Entries: state.ContainerMemoryAssignments{}}
}

// TestAllocateMultiNUMA is upstream's "should succeed to allocate memory
// from multiple NUMA nodes": 1Gi of memory and a 1Gi huge page do not fit
// one node (512Mi allocatable), so the first pair of nodes takes them,
// memory from both, the huge page from node 0, and the pair is a group.
func TestAllocateMultiNUMA(t *testing.T) {
	p := fourNodes(t)
	st := empty(p)
	got, err := p.AllocatePod(st, podWith(nil, guaranteed("container1", "memory", "1Gi", "hugepages-1Gi", "1Gi")))
	if err != nil {
		t.Fatalf("AllocatePod: %v", err)
	}
	wantEntries := state.ContainerMemoryAssignments{"pod1": {"container1": {block(gb, hugepages1Gi, 0, 1), block(gb, corev1.ResourceMemory, 0, 1)}}}
	if d := cmp.Diff(wantEntries, got.Entries); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	want := p.DefaultMachineState()
	for id, hugeUsed := range map[int]uint64{0: gb, 1: 0} {
		want[id].MemoryMap[corev1.ResourceMemory] = table(2*gb, 512*mb, 512*mb, 512*mb)
		want[id].MemoryMap[hugepages1Gi] = table(gb, 0, gb, hugeUsed)
		want[id].Cells, want[id].NumberOfAssignments = []int{0, 1}, 2
	}
	if d := cmp.Diff(want, got.MachineState); d != "" {
		t.Errorf("machine state (-want +got):\n%s", d)
	}
	if d := cmp.Diff(empty(p), st); d != "" {
		t.Errorf("AllocatePod changed its input (-was +now):\n%s", d)
	}
	// Releasing the container gives everything back.
	if d := cmp.Diff(empty(p), Release(got, "pod1", "container1")); d != "" {
		t.Errorf("after Release (-want +got):\n%s", d)
	}
}

// TestAllocate covers upstream's other Allocate cases on the four-node
// machine; state is what is allocated before the pod comes.
func TestAllocate(t *testing.T) {
	p := fourNodes(t)
	single := func(st state.Checkpoint) state.Checkpoint {
		// A container holding 256Mi on node 0 alone.
		st.Entries["pod0"] = map[string][]state.Block{"c": {block(256*mb, corev1.ResourceMemory, 0)}}
		st.MachineState[0].NumberOfAssignments = 1
		st.MachineState[0].MemoryMap[corev1.ResourceMemory] = table(2*gb, 512*mb, 512*mb, 256*mb)
		return st
	}
	tests := []struct {
		name    string
		before  func(state.Checkpoint) state.Checkpoint
		pod     *corev1.Pod
		want    map[string][]state.Block
		wantErr string
	}{
		{name: "should do nothing for non-guaranteed pods",
			pod: podWith(nil, corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}})},
		{name: "the narrowest set that fits: one node",
			pod:  podWith(nil, guaranteed("c", "memory", "256Mi")),
			want: map[string][]state.Block{"c": {block(256*mb, corev1.ResourceMemory, 0)}}},
		{name: "a node with single-NUMA memory joins no group",
			before: single,
			pod:    podWith(nil, guaranteed("c", "memory", "768Mi")),
			want:   map[string][]state.Block{"c": {block(768*mb, corev1.ResourceMemory, 1, 2)}}},
		{name: "a node with single-NUMA memory still takes more single-NUMA memory",
			before: single,
			pod:    podWith(nil, guaranteed("c", "memory", "256Mi")),
			want:   map[string][]state.Block{"c": {block(256*mb, corev1.ResourceMemory, 0)}}},
		{name: "should fail when no NUMA set has enough memory",
			pod:     podWith(nil, guaranteed("c", "memory", "3Gi")),
			wantErr: "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available"},
		{name: "should do nothing for guaranteed pod with pod level resources",
			pod: func() *corev1.Pod {
				pod := podWith(nil, guaranteed("c", "memory", "256Mi"))
				pod.Spec.Resources = &corev1.ResourceRequirements{Limits: pod.Spec.Containers[0].Resources.Limits.DeepCopy(), Requests: pod.Spec.Containers[0].Resources.Limits.DeepCopy()}
				return pod
			}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := empty(p)
			if tt.before != nil {
				st = tt.before(st)
			}
			got, err := p.AllocatePod(st, tt.pod)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("AllocatePod error %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("AllocatePod: %v", err)
			}
			if d := cmp.Diff(tt.want, got.Entries["pod1"]); d != "" {
				t.Errorf("pod1's blocks (-want +got):\n%s", d)
			}
		})
	}
}

// oneBigNode is one node with 16Gi of memory, 1Gi reserved.
func oneBigNode(t *testing.T) *Static {
	t.Helper()
	p, err := NewStatic([]NUMANode{{ID: 0, Memory: 16 * gb}}, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		[]kubeletconfigv1beta1.MemoryReservation{{NumaNode: 0, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInitContainersMemoryIsReused follows upstream's "should re-use init
// containers memory" cases: what init containers held is reused by the
// containers after them, their blocks shrink to what was not reused, and
// a restartable init container's memory is never reused.
func TestInitContainersMemoryIsReused(t *testing.T) {
	sidecar := guaranteed("sidecar", "memory", "1Gi")
	always := corev1.ContainerRestartPolicyAlways
	sidecar.RestartPolicy = &always
	tests := []struct {
		name         string
		pod          *corev1.Pod
		want         map[string][]state.Block
		wantReserved uint64
	}{
		{name: "init 1Gi and 2Gi, apps 3Gi and 4Gi",
			pod: podWith([]corev1.Container{guaranteed("init1", "memory", "1Gi"), guaranteed("init2", "memory", "2Gi")},
				guaranteed("app1", "memory", "3Gi"), guaranteed("app2", "memory", "4Gi")),
			want: map[string][]state.Block{
				"init1": {block(0, corev1.ResourceMemory, 0)}, "init2": {block(0, corev1.ResourceMemory, 0)},
				"app1": {block(3*gb, corev1.ResourceMemory, 0)}, "app2": {block(4*gb, corev1.ResourceMemory, 0)},
			},
			wantReserved: 7 * gb},
		{name: "init 7Gi and 4Gi, apps 4Gi and 3Gi",
			pod: podWith([]corev1.Container{guaranteed("init1", "memory", "7Gi"), guaranteed("init2", "memory", "4Gi")},
				guaranteed("app1", "memory", "4Gi"), guaranteed("app2", "memory", "3Gi")),
			want: map[string][]state.Block{
				"init1": {block(0, corev1.ResourceMemory, 0)}, "init2": {block(0, corev1.ResourceMemory, 0)},
				"app1": {block(4*gb, corev1.ResourceMemory, 0)}, "app2": {block(3*gb, corev1.ResourceMemory, 0)},
			},
			wantReserved: 7 * gb},
		{name: "should not re-use restartable init containers memory",
			pod: podWith([]corev1.Container{sidecar}, guaranteed("app1", "memory", "1Gi")),
			want: map[string][]state.Block{
				"sidecar": {block(gb, corev1.ResourceMemory, 0)}, "app1": {block(gb, corev1.ResourceMemory, 0)},
			},
			wantReserved: 2 * gb},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := oneBigNode(t)
			got, err := p.AllocatePod(empty(p), tt.pod)
			if err != nil {
				t.Fatalf("AllocatePod: %v", err)
			}
			if d := cmp.Diff(tt.want, got.Entries["pod1"]); d != "" {
				t.Errorf("blocks (-want +got):\n%s", d)
			}
			if r := got.MachineState[0].MemoryMap[corev1.ResourceMemory].Reserved; r != tt.wantReserved {
				t.Errorf("reserved %d, want %d", r, tt.wantReserved)
			}
			// Admitting the same pod again changes nothing.
			again, err := p.AllocatePod(got, tt.pod)
			if err != nil {
				t.Fatalf("AllocatePod again: %v", err)
			}
			if d := cmp.Diff(got, again); d != "" {
				t.Errorf("second AllocatePod (-first +second):\n%s", d)
			}
		})
	}
}

func TestAdmitReasonIsUpstreams(t *testing.T) {
	reason, msg := AdmitReason(errString("[memorymanager] x"))
	if reason != "UnexpectedAdmissionError" || !strings.HasPrefix(msg, "Allocate failed due to [memorymanager] x, which is unexpected") {
		t.Errorf("AdmitReason = %q, %q", reason, msg)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func metavMeta(uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: uid, Namespace: "default", UID: types.UID(uid)}
}
