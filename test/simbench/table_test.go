package simbench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarkdown(t *testing.T) {
	results := []Result{
		{Simulator: Berth, Nodes: 100, PodsPerNode: 10, Status: StatusOK, NodesReady: 100, ReadySeconds: 4.52,
			PodsRunning: 1000, RunningSeconds: 31.04, LoadAvg: "1.00 0.50 0.25",
			Idle: &Window{Seconds: 60, Procs: 1, RSSMeanBytes: 250 << 20, PSSMeanBytes: 240 << 20, CPUSeconds: 6, Requests: 7200, OthersShare: 0.05},
			Busy: &Window{Seconds: 60, Procs: 1, RSSMeanBytes: 400 << 20, PSSMeanBytes: 390 << 20, CPUSeconds: 12, Requests: 9000, OthersShare: 0.1}},
		{Simulator: Kubemark, Nodes: 500, PodsPerNode: 10, Status: StatusNoFit, NodeBytes: 230 << 20,
			Note: "did not fit: ~230 MiB a node"},
		{Simulator: Berth, Nodes: 1000, PodsPerNode: 10, Status: StatusTimeout, NodesReady: 734,
			Note: "not all nodes Ready after 15m0s", LoadAvg: "2.00 1.00 0.50"},
	}
	want := "| simulator | nodes | pods | all nodes Ready (s) | all pods Running (s) | idle RSS/node (MiB) | idle PSS/node (MiB) | idle CPU/node (mcore) | busy RSS/node (MiB) | busy PSS/node (MiB) | busy CPU/node (mcore) | idle API req/node/min | busy API req/node/min | note |\n" +
		"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n" +
		"| berth | 100 | 1000 | 4.52 | 31.0 | 2.50 | 2.40 | 1.00 | 4.00 | 3.90 | 2.00 | 72.0 | 90.0 |  |\n" +
		"| kubemark | 500 | 5000 | - | - | - | - | - | - | - | - | - | - | did not fit: ~230 MiB a node |\n" +
		"| berth | 1000 | 10000 | - | - | - | - | - | - | - | - | - | - | not all nodes Ready after 15m0s; 734/1000 nodes Ready |\n" +
		"\n" +
		"- berth, 100 nodes: load average at start 1.00 0.50 0.25; idle window 60.0 s, 1 processes, other processes 5% of the CPU, 7200 API requests; busy window 60.0 s, 1 processes, other processes 10% of the CPU, 9000 API requests\n" +
		"- berth, 1000 nodes: load average at start 2.00 1.00 0.50\n"
	if diff := cmp.Diff(want, Markdown(results)); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{1234.5: "1234", 123.4: "123", 12.34: "12.3", 1.234: "1.23", 0: "0.00", 0.004: "0.00"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}
