package userns

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func first(int) int { return 0 }

func TestNewAllocatorChecksTheRange(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r         Range
		idsPerPod uint32
		maxPods   int
		wantErr   string
	}{
		{name: "default range", r: DefaultRange(65536), idsPerPod: 65536, maxPods: 110},
		{name: "subordinate range", r: Range{First: 65536 * 2, Length: 65536 * 110}, idsPerPod: 65536, maxPods: 110},
		{name: "larger pods", r: Range{First: 65536 * 4, Length: 65536 * 8}, idsPerPod: 65536 * 2, maxPods: 4},
		{name: "length not a unit multiple", r: DefaultRange(65536), idsPerPod: 1000, maxPods: 1,
			wantErr: "kubelet user namespace length 1000 is not a multiple of 65536"},
		{name: "first not aligned", r: Range{First: 100000, Length: 65536 * 10}, idsPerPod: 65536, maxPods: 1,
			wantErr: "kubelet user assigned ID 100000 is not a multiple of 65536"},
		{name: "would map root", r: Range{First: 0, Length: 65536 * 10}, idsPerPod: 65536, maxPods: 1,
			wantErr: "kubelet user assigned ID 0 must be greater or equal to 65536"},
		{name: "length not aligned", r: Range{First: 65536, Length: 65536*10 + 1}, idsPerPod: 65536, maxPods: 1,
			wantErr: "kubelet user assigned IDs length 655361 is not a multiple of 65536"},
		{name: "too few for maxPods", r: Range{First: 65536, Length: 65536 * 10}, idsPerPod: 65536, maxPods: 11,
			wantErr: "kubelet user assigned IDs are not enough to support 11 pods"},
		{name: "past the last ID", r: Range{First: 1<<32 - 65536, Length: 65536 * 2}, idsPerPod: 65536, maxPods: 1,
			wantErr: "kubelet user assigned IDs 4294901760 to 4295032831 go past the last ID, 4294967295: a pod's IDs would wrap to host ID 0"},
		{name: "up to the last ID", r: Range{First: 1<<32 - 65536*2, Length: 65536 * 2}, idsPerPod: 65536, maxPods: 1},
		{name: "default range and an idsPerPod that does not divide 2^32", r: DefaultRange(3 * 65536), idsPerPod: 3 * 65536, maxPods: 1,
			wantErr: "kubelet user assigned IDs length 4294770688 is not a multiple of 196608"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAllocator(tc.r, tc.idsPerPod, tc.maxPods)
			if got := errText(err); got != tc.wantErr {
				t.Errorf("error %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// step is one operation on an allocator and what it must give.
type step struct {
	op      string // allocate, record, release
	pod     types.UID
	m       Mapping // record's input
	pick    int
	want    Mapping // allocate's result
	wantErr string
	wantOK  bool // release's result
}

func TestAllocator(t *testing.T) {
	const size = 65536
	r := Range{First: 2 * size, Length: 3 * size} // slots at 2, 3 and 4 × 65536
	for _, tc := range []struct {
		name  string
		steps []step
		pods  []types.UID
	}{
		{name: "first free slot from the pick", steps: []step{
			{op: "allocate", pod: "a", pick: 1, want: Mapping{3 * size, size}},
			{op: "allocate", pod: "b", pick: 1, want: Mapping{4 * size, size}},
			{op: "allocate", pod: "c", pick: 1, want: Mapping{2 * size, size}}, // wraps around
		}, pods: []types.UID{"a", "b", "c"}},
		{name: "a pod keeps its mapping", steps: []step{
			{op: "allocate", pod: "a", pick: 2, want: Mapping{4 * size, size}},
			{op: "allocate", pod: "a", pick: 0, want: Mapping{4 * size, size}},
		}, pods: []types.UID{"a"}},
		{name: "full", steps: []step{
			{op: "allocate", pod: "a", want: Mapping{2 * size, size}},
			{op: "allocate", pod: "b", want: Mapping{3 * size, size}},
			{op: "allocate", pod: "c", want: Mapping{4 * size, size}},
			{op: "allocate", pod: "d", wantErr: "could not find an empty slot to allocate a user namespace"},
		}, pods: []types.UID{"a", "b", "c"}},
		{name: "a released slot is free again", steps: []step{
			{op: "allocate", pod: "a", want: Mapping{2 * size, size}},
			{op: "release", pod: "a", wantOK: true},
			{op: "release", pod: "a"},
			{op: "allocate", pod: "b", want: Mapping{2 * size, size}},
		}, pods: []types.UID{"b"}},
		{name: "recorded slots are taken", steps: []step{
			{op: "record", pod: "a", m: Mapping{2 * size, size}},
			{op: "record", pod: "a", m: Mapping{2 * size, size}}, // again: no change
			{op: "allocate", pod: "b", want: Mapping{3 * size, size}},
		}, pods: []types.UID{"a", "b"}},
		{name: "record refuses what upstream refuses", steps: []step{
			{op: "record", pod: "a", m: Mapping{2 * size, 1000}, wantErr: "wrong user namespace length 1000"},
			{op: "record", pod: "a", m: Mapping{2*size + 1, size}, wantErr: "wrong user namespace offset specified 131073"},
			{op: "record", pod: "a", m: Mapping{size, size}, wantErr: "id 65536 is out of range"},
			{op: "record", pod: "a", m: Mapping{5 * size, size}, wantErr: "id 327680 is out of range"},
			{op: "record", pod: "a", m: Mapping{2 * size, size}},
			{op: "record", pod: "a", m: Mapping{3 * size, size}, wantErr: `different user namespace range already used by pod "a"`},
			{op: "record", pod: "b", m: Mapping{2 * size, size}, wantErr: `range picked for pod "b" already taken`},
		}, pods: []types.UID{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAllocator(r, size, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				var got Mapping
				var err error
				switch s.op {
				case "allocate":
					got, err = a.Allocate(s.pod, func(n int) int {
						if n != 3 {
							t.Errorf("pick(%d), want pick(3)", n)
						}
						return s.pick
					})
				case "record":
					err = a.Record(s.pod, s.m)
				case "release":
					if ok := a.Release(s.pod); ok != s.wantOK {
						t.Errorf("step %d: release %v, want %v", i, ok, s.wantOK)
					}
				}
				if errText(err) != s.wantErr {
					t.Errorf("step %d (%s %s): error %q, want %q", i, s.op, s.pod, errText(err), s.wantErr)
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Errorf("step %d (%s %s) mapping (-want +got):\n%s", i, s.op, s.pod, diff)
				}
			}
			if diff := cmp.Diff(tc.pods, a.Pods(), cmpEmpty); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Transformer("empty", func(s []types.UID) []types.UID {
	if len(s) == 0 {
		return nil
	}
	return s
})

// TestAllocationsNeverOverlap allocates every slot with random picks and
// checks no two pods share an ID.
func TestAllocationsNeverOverlap(t *testing.T) {
	const size = 65536
	a, err := NewAllocator(Range{First: size, Length: 64 * size}, size, 64)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]types.UID{}
	for i := range 64 {
		uid := types.UID(string(rune('A' + i)))
		m, err := a.Allocate(uid, func(n int) int { return (i * 37) % n })
		if err != nil {
			t.Fatalf("allocate %d: %v", i, err)
		}
		if m.HostID < size || m.HostID+m.Length > 65*size {
			t.Errorf("pod %s: mapping %+v outside the range", uid, m)
		}
		if other, ok := seen[m.HostID]; ok {
			t.Errorf("pods %s and %s share host ID %d", other, uid, m.HostID)
		}
		seen[m.HostID] = uid
	}
}
