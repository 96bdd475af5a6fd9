package simbench

import (
	"testing"
)

func TestParseMemAvailable(t *testing.T) {
	got, err := parseMemAvailable([]byte("MemTotal:       24610000 kB\nMemFree:        1000 kB\nMemAvailable:   20000000 kB\n"))
	if err != nil || got != 20000000*1024 {
		t.Errorf("parseMemAvailable = %d, %v; want %d", got, err, 20000000*1024)
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "MemAvailable: x kB\n", "MemAvailable: 12 MB\n"} {
		if _, err := parseMemAvailable([]byte(bad)); err == nil {
			t.Errorf("parseMemAvailable(%q): no error", bad)
		}
	}
}

func TestFits(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, tc := range []struct {
		name                  string
		nodes                 int
		perNode, avail, floor uint64
		want                  bool
	}{
		{"room to spare", 100, 3 * mib, 20 * gib, 4 * gib, true},
		{"exactly to the floor", 16, gib, 20 * gib, 4 * gib, true},
		{"one node over", 17, gib, 20 * gib, 4 * gib, false},
		{"kubemark at 500", 500, 220 * mib, 20 * gib, 4 * gib, false},
		{"already under the floor", 1, 1, 3 * gib, 4 * gib, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fits(tc.nodes, tc.perNode, tc.avail, tc.floor); got != tc.want {
				t.Errorf("fits = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeEstimate(t *testing.T) {
	earlier := []Result{
		{Simulator: Kubemark, Nodes: 10, Idle: &Window{RSSMeanBytes: 800 << 20, PSSMeanBytes: 300 << 20},
			Busy: &Window{RSSMeanBytes: 1000 << 20, PSSMeanBytes: 1000 << 20}},
		{Simulator: Berth, Nodes: 100, Idle: &Window{RSSMeanBytes: 310 << 20, PSSMeanBytes: 300 << 20}},
		{Simulator: Kubemark, Nodes: 50, Status: StatusNoFit, NodeBytes: 90 << 20},
	}
	for _, tc := range []struct {
		sim  string
		want uint64
		ok   bool
	}{
		{Kubemark, 100 << 20, true}, // the busy window's PSS: the most per node
		{Berth, 3 << 20, true},
		{Kwok, 0, false},
	} {
		got, ok := nodeEstimate(earlier, tc.sim)
		if got != tc.want || ok != tc.ok {
			t.Errorf("nodeEstimate(%s) = %d, %v; want %d, %v", tc.sim, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNoFitNote(t *testing.T) {
	if got, want := noFitNote(230<<20+1), "did not fit: ~230 MiB a node"; got != want {
		t.Errorf("noFitNote = %q, want %q", got, want)
	}
}
