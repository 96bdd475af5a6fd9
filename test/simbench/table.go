package simbench

import (
	"fmt"
	"strconv"
	"strings"
)

// Markdown renders the results as a markdown table, one row per
// simulator and size, then the conditions of each run. It is pure.
func Markdown(results []Result) string {
	var b strings.Builder
	b.WriteString("| simulator | nodes | pods | all nodes Ready (s) | all pods Running (s) | idle RSS/node (MiB) | idle PSS/node (MiB) | idle CPU/node (mcore) | busy RSS/node (MiB) | busy PSS/node (MiB) | busy CPU/node (mcore) | idle API req/node/min | busy API req/node/min | note |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, r := range results {
		idleRSS, idlePSS, idleCPU := memCPU(r.Idle, r.Nodes)
		busyRSS, busyPSS, busyCPU := memCPU(r.Busy, r.Nodes)
		cells := []string{r.Simulator, strconv.Itoa(r.Nodes), strconv.Itoa(r.Nodes * r.PodsPerNode),
			seconds(r.ReadySeconds, r.NodesReady == r.Nodes && r.Nodes > 0),
			seconds(r.RunningSeconds, r.PodsRunning == r.Nodes*r.PodsPerNode && r.Nodes > 0),
			idleRSS, idlePSS, idleCPU, busyRSS, busyPSS, busyCPU, requests(r.Idle, r.Nodes), requests(r.Busy, r.Nodes), note(r)}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if c := conditions(results); c != "" {
		b.WriteString("\n" + c)
	}
	return b.String()
}

// memCPU are a window's RSS, PSS and CPU per node, "-" without a window.
func memCPU(w *Window, nodes int) (rss, pss, cpu string) {
	if w == nil {
		return "-", "-", "-"
	}
	return num(w.RSSMiBPerNode(nodes)), num(w.PSSMiBPerNode(nodes)), num(w.MillicoresPerNode(nodes))
}

// requests is a window's API requests per node and minute, "-" without a
// window.
func requests(w *Window, nodes int) string {
	if w == nil {
		return "-"
	}
	return num(w.RequestsPerNodeMinute(nodes))
}

// note is the last cell: what kept a run from being ok, with the number
// of nodes and pods that got there when it was not all.
func note(r Result) string {
	var parts []string
	if r.Status != StatusOK {
		n := r.Note
		if n == "" {
			n = string(r.Status)
		}
		parts = append(parts, n)
	}
	if r.Nodes > 0 && r.NodesReady < r.Nodes && (r.Status != StatusNoFit || r.NodesReady > 0) {
		parts = append(parts, fmt.Sprintf("%d/%d nodes Ready", r.NodesReady, r.Nodes))
	}
	if r.Status != StatusOK && r.PodsRunning > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d pods Running", r.PodsRunning, r.Nodes*r.PodsPerNode))
	}
	return strings.ReplaceAll(strings.Join(parts, "; "), "|", "/")
}

// conditions lists, per run that measured a window, the machine's load
// while it did: the others' share of the CPU and the load average at the
// run's start.
func conditions(results []Result) string {
	var b strings.Builder
	for _, r := range results {
		if r.Idle == nil && r.Busy == nil && r.LoadAvg == "" {
			continue
		}
		fmt.Fprintf(&b, "- %s, %d nodes: load average at start %s", r.Simulator, r.Nodes, orDash(r.LoadAvg))
		for _, w := range []struct {
			name string
			w    *Window
		}{{"idle", r.Idle}, {"busy", r.Busy}} {
			if w.w != nil {
				fmt.Fprintf(&b, "; %s window %s s, %d processes, other processes %.0f%% of the CPU, %d API requests",
					w.name, num(w.w.Seconds), w.w.Procs, w.w.OthersShare*100, w.w.Requests)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// seconds formats a duration in seconds, or "-" when it was not reached.
func seconds(s float64, reached bool) string {
	if !reached {
		return "-"
	}
	return num(s)
}

// num formats v with three significant digits or more: 1234, 123, 12.3, 1.23.
func num(v float64) string {
	switch a := max(v, -v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
