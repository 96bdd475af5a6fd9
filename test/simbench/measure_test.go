package simbench

import (
	"testing"
	"time"

	"github.com/berthk8s/berth/test/bench"
)

func TestSummarize(t *testing.T) {
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	s := func(ticks, rssMiB uint64, sec int) bench.ProcSample {
		return bench.ProcSample{At: at.Add(time.Duration(sec) * time.Second), CPUTicks: ticks, RSSBytes: rssMiB << 20}
	}
	samples := map[int][]bench.ProcSample{
		1: {s(100, 10, 0), s(150, 30, 1), s(200, 20, 2)},
		2: {s(0, 5, 0), s(10, 5, 1), s(50, 5, 2)},
	}
	mean, peak, cpu, err := summarize(samples, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	// Sums per instant: 15, 35, 25 MiB; CPU 100 + 50 ticks.
	if mean != 25<<20 || peak != 35<<20 || cpu != 1.5 {
		t.Errorf("summarize = %d, %d, %v; want 25 MiB, 35 MiB, 1.5 s", mean>>20, peak>>20, cpu)
	}
	samples[2] = samples[2][:2]
	if _, _, _, err := summarize(samples, []int{1, 2}); err == nil {
		t.Error("summarize of uneven samples: no error")
	}
	if _, _, _, err := summarize(nil, nil); err == nil {
		t.Error("summarize of no processes: no error")
	}
}
