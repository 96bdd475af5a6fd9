package topology

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestReadNUMAInfo(t *testing.T) {
	two := fstest.MapFS{
		"node/node0/distance": {Data: []byte("10 21\n")},
		"node/node1/distance": {Data: []byte("21 10\n")},
		"node/possible":       {Data: []byte("0-1\n")},
	}
	for _, tt := range []struct {
		name      string
		sys       fstest.MapFS
		distances bool
		want      *NUMAInfo
		wantErr   bool
	}{
		{name: "two nodes with distances", sys: two, distances: true,
			want: &NUMAInfo{Nodes: []int{0, 1}, Distances: map[int][]uint64{0: {10, 21}, 1: {21, 10}}}},
		{name: "two nodes without", sys: two,
			want: &NUMAInfo{Nodes: []int{0, 1}, Distances: map[int][]uint64{0: nil, 1: nil}}},
		{name: "no node directory is node 0", sys: fstest.MapFS{"cpu/online": {Data: []byte("0")}},
			want: &NUMAInfo{Nodes: []int{0}, Distances: map[int][]uint64{0: nil}}},
		{name: "distance missing", sys: fstest.MapFS{"node/node0/cpulist": {Data: []byte("0")}}, distances: true, wantErr: true},
		{name: "distance not a number", sys: fstest.MapFS{"node/node0/distance": {Data: []byte("ten")}}, distances: true, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadNUMAInfo(tt.sys, tt.distances)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %t", err, tt.wantErr)
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
