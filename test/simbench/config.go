package simbench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The simulators, by the name -simulators takes.
const (
	Berth    = "berth"    // bin/berth simulate: N nodes in one process
	Kwok     = "kwok"     // sigs.k8s.io/kwok's kwok: N Node objects the harness creates
	Kubemark = "kubemark" // k8s.io/kubernetes/cmd/kubemark --morph=kubelet: one process a node
)

// Simulators lists every simulator, in the table's order.
var Simulators = []string{Berth, Kwok, Kubemark}

// Config configures Run. Every field is required but Logf.
type Config struct {
	Sizes       []int    // nodes of each run, in order
	PodsPerNode int      // pods created on each node once all are Ready
	Simulators  []string // which simulators run, at every size
	// Window is the length of each measuring window, idle and busy.
	Window time.Duration
	// Settle is the wait after all nodes are Ready (all pods Running)
	// before the idle (busy) window opens.
	Settle time.Duration
	// ReadyTimeout and RunningTimeout bound the waits for all nodes Ready
	// and all pods Running.
	ReadyTimeout, RunningTimeout time.Duration
	BerthBinary                  string   // bin/berth
	BerthArgs                    []string // more arguments of berth simulate
	// BinDir holds the control plane's binaries, kwok, kwok-stages and
	// kubemark (hack/cluster-build.sh --simbench).
	BinDir string
	// WorkDir is where every run makes its directories (removed after it).
	WorkDir string
	// MemFloor is the MemAvailable (bytes) a run never goes under: a run
	// that would is not started, one that does is stopped.
	MemFloor uint64
	Logf     func(format string, args ...any)
}

// ParseSizes parses a comma-separated list of node counts.
func ParseSizes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("size %q: want a node count of at least 1", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseSimulators parses a comma-separated list of simulator names and
// returns them in the table's order.
func ParseSimulators(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		name := strings.TrimSpace(f)
		if !slices.Contains(Simulators, name) {
			return nil, fmt.Errorf("simulator %q: want one of %s", name, strings.Join(Simulators, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(Simulators, a) - slices.Index(Simulators, b) })
	return out, nil
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	switch {
	case len(c.Sizes) == 0:
		return fmt.Errorf("no sizes")
	case len(c.Simulators) == 0:
		return fmt.Errorf("no simulators")
	case c.PodsPerNode < 1:
		return fmt.Errorf("pods per node %d: want at least 1", c.PodsPerNode)
	case c.Window < 5*time.Second:
		return fmt.Errorf("window %s: want at least 5s (CPU time is counted in 10 ms ticks)", c.Window)
	case c.ReadyTimeout <= 0 || c.RunningTimeout <= 0:
		return fmt.Errorf("timeouts must be positive")
	case c.BinDir == "" || c.WorkDir == "" || c.BerthBinary == "":
		return fmt.Errorf("bin dir, work dir and berth binary are required")
	}
	return nil
}
