package topology

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/platform/machine"
)

func TestNUMAInfoOf(t *testing.T) {
	two := &machine.Topology{Nodes: []machine.NUMANode{{ID: 0, Distances: []uint64{10, 21}}, {ID: 1, Distances: []uint64{21, 10}}}}
	for _, tt := range []struct {
		name      string
		host      *machine.Topology
		distances bool
		want      *NUMAInfo
		wantErr   string
	}{
		{name: "two nodes with distances", host: two, distances: true,
			want: &NUMAInfo{Nodes: []int{0, 1}, Distances: map[int][]uint64{0: {10, 21}, 1: {21, 10}}}},
		{name: "two nodes without", host: two,
			want: &NUMAInfo{Nodes: []int{0, 1}, Distances: map[int][]uint64{0: nil, 1: nil}}},
		{name: "node 0 of a host without NUMA", host: &machine.Topology{Nodes: []machine.NUMANode{{ID: 0}}},
			want: &NUMAInfo{Nodes: []int{0}, Distances: map[int][]uint64{0: nil}}},
		{name: "distances missing", host: &machine.Topology{Nodes: []machine.NUMANode{{ID: 0}}}, distances: true,
			wantErr: "error getting NUMA distances of node 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NUMAInfoOf(tt.host, tt.distances)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("NUMAInfo (-want +got):\n%s", d)
			}
		})
	}
}

func TestIterateMasks(t *testing.T) {
	var got []Mask
	IterateMasks([]int{0, 1, 3}, func(m Mask) { got = append(got, m) })
	want := []Mask{MustMask(0), MustMask(1), MustMask(3), MustMask(0, 1), MustMask(0, 3), MustMask(1, 3), MustMask(0, 1, 3)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("masks (-want +got):\n%s", d)
	}
}
