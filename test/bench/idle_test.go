package bench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcStat(t *testing.T) {
	busy, total, err := parseProcStat([]byte("cpu  100 5 50 800 20 3 2 1 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\n"))
	if err != nil || busy != 161 || total != 981 {
		t.Errorf("parseProcStat = %d, %d, %v; want 161, 981", busy, total, err)
	}
	if _, _, err := parseProcStat([]byte("intr 1 2 3\n")); err == nil {
		t.Error("parseProcStat without a cpu line: no error")
	}
}

func TestOthersShare(t *testing.T) {
	a := machineSample{Busy: 1000, Total: 5000, Measured: 300}
	tests := []struct {
		name string
		b    machineSample
		want float64
	}{
		{"only the measured processes", machineSample{Busy: 1100, Total: 6000, Measured: 400}, 0},
		{"others use a quarter", machineSample{Busy: 1350, Total: 6000, Measured: 400}, 0.25},
		{"measured more than the machine (a reaped child counted twice)", machineSample{Busy: 1100, Total: 6000, Measured: 500}, 0},
		{"no time passed", a, 0},
	}
	for _, tt := range tests {
		if got := othersShare(a, tt.b); got != tt.want {
			t.Errorf("%s: othersShare = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMeasuredRoots(t *testing.T) {
	table := map[int]procStat{
		5:  {PID: 5, Comm: "containerd"},
		9:  {PID: 9, Comm: "containerd-shim"},
		12: {PID: 12, Comm: "go"},
	}
	got := measuredRoots(table, 100, 5)
	if diff := cmp.Diff([]int{100, 5, 9}, got); diff != "" {
		t.Errorf("measuredRoots (-want +got):\n%s", diff)
	}
}

func TestSummarizeIdle(t *testing.T) {
	tests := []struct {
		name         string
		before       float64
		during       []float64
		wantWarnings []string // substrings, one per warning
	}{
		{"idle", 0.02, []float64{0.01, 0.03}, nil},
		{"busy before", 0.4, []float64{0.01}, []string{"before the run, other processes used 40%"}},
		{"one busy interval", 0, []float64{0.01, 0.5, 0.01}, []string{"above 10% in 1 of 3 intervals"}},
	}
	for _, tt := range tests {
		r := summarizeIdle(0.1, tt.before, tt.during)
		if len(r.Warnings) != len(tt.wantWarnings) {
			t.Errorf("%s: warnings %q, want %d", tt.name, r.Warnings, len(tt.wantWarnings))
			continue
		}
		for i, w := range tt.wantWarnings {
			if !strings.Contains(r.Warnings[i], w) {
				t.Errorf("%s: warning %q lacks %q", tt.name, r.Warnings[i], w)
			}
		}
	}
	if r := summarizeIdle(0.1, 0, []float64{0.1, 0.3}); r.Mean != 0.2 || r.Max != 0.3 {
		t.Errorf("mean %v, max %v; want 0.2, 0.3", r.Mean, r.Max)
	}
}
