package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    procStat
		wantErr bool
	}{
		{name: "plain", stat: "42 (berth) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 10 5 20 0 12 0 100 0 0",
			want: procStat{PID: 42, PPID: 1, Comm: "berth", Ticks: 340}},
		{name: "spaces and parentheses in the name", stat: "7 (a (b) c) R 3 7 7 0 -1 0 0 0 0 0 10 5 0 0",
			want: procStat{PID: 7, PPID: 3, Comm: "a (b) c", Ticks: 15}},
		{name: "no name", stat: "7 a R", wantErr: true},
		{name: "truncated", stat: "7 (a) R 1 2 3 0 -1 0 0 0 0 0 10 5 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.stat))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStat error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseStat (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTreeAndTicks(t *testing.T) {
	table := map[int]procStat{
		1:  {PID: 1, PPID: 0, Ticks: 1000},
		10: {PID: 10, PPID: 1, Ticks: 100}, // the kubelet
		11: {PID: 11, PPID: 10, Ticks: 7},  // its child
		12: {PID: 12, PPID: 11, Ticks: 3},  // a grandchild
		20: {PID: 20, PPID: 1, Ticks: 50},  // someone else
	}
	got := tree(table, 10)
	if diff := cmp.Diff(map[int]bool{10: true, 11: true, 12: true}, got); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if n := ticks(table, got); n != 110 {
		t.Errorf("ticks = %d, want 110", n)
	}
	if got := tree(table, 99); len(got) != 0 {
		t.Errorf("tree of a gone process = %v", got)
	}
}

func TestParseStatusRSS(t *testing.T) {
	got, err := parseStatusRSS([]byte("Name:\tberth\nVmPeak:\t  9999 kB\nVmRSS:\t   2048 kB\nThreads:\t12\n"))
	if err != nil || got != 2048*1024 {
		t.Errorf("parseStatusRSS = %d, %v; want %d", got, err, 2048*1024)
	}
	if _, err := parseStatusRSS([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("parseStatusRSS without VmRSS: no error")
	}
}

func TestUsage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var samples []procSample
	// 11 samples a second apart: 10 ticks a second for the first five
	// seconds (10 %), then 50 (50 %); RSS grows by 1 MiB a second.
	ticks := uint64(0)
	for i := range 11 {
		samples = append(samples, procSample{At: t0.Add(time.Duration(i) * time.Second), CPUTicks: ticks, RSSBytes: uint64(10+i) << 20})
		if i < 5 {
			ticks += 10
		} else {
			ticks += 50
		}
	}
	cpu, rss := usage(samples)
	if diff := cmp.Diff([]float64{10, 50}, cpu); diff != "" {
		t.Errorf("cpu (-want +got):\n%s", diff)
	}
	if len(rss) != 11 || rss[0] != 10 || rss[10] != 20 {
		t.Errorf("rss = %v, want 10..20 MiB", rss)
	}
}

func TestPeakCPUAndCPUTime(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	samples := []procSample{{At: at(0), CPUTicks: 0}, {At: at(1), CPUTicks: 10}, {At: at(2), CPUTicks: 50}}
	peak, ok := peakCPU(samples)
	if !ok || peak != 25 {
		t.Errorf("peakCPU = %v, %v; want 25 (50 ticks in the 2 s window)", peak, ok)
	}
	if _, ok := peakCPU(samples[:1]); ok {
		t.Error("peakCPU of one sample: ok")
	}
	if got := cpuSeconds(samples); got != 0.5 {
		t.Errorf("cpuSeconds = %v, want 0.5", got)
	}
	if got := cpuSecondsPerMinute(samples); got != 15 {
		t.Errorf("cpuSecondsPerMinute = %v, want 15", got)
	}
}
