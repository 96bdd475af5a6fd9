package simbench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWindowPerNode(t *testing.T) {
	w := Window{Seconds: 60, RSSMeanBytes: 200 << 20, PSSMeanBytes: 100 << 20, CPUSeconds: 3, Requests: 1200}
	for _, tc := range []struct {
		name               string
		w                  Window
		nodes              int
		rss, pss, mcore, r float64
	}{
		{"100 nodes", w, 100, 2, 1, 0.5, 12},
		{"one node", w, 1, 200, 100, 50, 1200},
		{"half a minute", Window{Seconds: 30, RSSMeanBytes: 10 << 20, PSSMeanBytes: 5 << 20, CPUSeconds: 0.3, Requests: 30}, 10, 1, 0.5, 1, 6},
		{"no nodes", w, 0, 0, 0, 0, 0},
		{"empty window", Window{RSSMeanBytes: 1 << 20}, 1, 1, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []float64{tc.w.RSSMiBPerNode(tc.nodes), tc.w.PSSMiBPerNode(tc.nodes), tc.w.MillicoresPerNode(tc.nodes), tc.w.RequestsPerNodeMinute(tc.nodes)}
			if diff := cmp.Diff([]float64{tc.rss, tc.pss, tc.mcore, tc.r}, got); diff != "" {
				t.Errorf("RSS, PSS, CPU, requests per node (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWindowEnd(t *testing.T) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	if got, want := (Window{Start: start, Seconds: 60.5}).End(), start.Add(60500*time.Millisecond); !got.Equal(want) {
		t.Errorf("End = %s, want %s", got, want)
	}
}

func TestMilestones(t *testing.T) {
	s := func(v ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x*float64(time.Second)))
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		arrivals []time.Duration
		total    int
		want     []Milestone
	}{
		{"all of 10", s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, []Milestone{{50, 5, 5}, {90, 9, 9}, {99, 10, 10}, {100, 10, 10}}},
		{"7 of 10", s(1, 2, 3, 4, 5, 6, 7), 10, []Milestone{{50, 5, 5}}},
		{"none", nil, 10, nil},
		{"one of one", s(0.5), 1, []Milestone{{50, 1, 0.5}, {90, 1, 0.5}, {99, 1, 0.5}, {100, 1, 0.5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, milestones(tc.arrivals, tc.total)); diff != "" {
				t.Errorf("milestones (-want +got):\n%s", diff)
			}
		})
	}
}
