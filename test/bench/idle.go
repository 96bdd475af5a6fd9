package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The idle-machine check: the bench's figures are only comparable on a
// machine that does nothing else. The machine's CPU use comes from the
// aggregate line of /proc/stat; the measured processes' from their
// /proc/<pid>/stat: the bench and its children (the control plane, the
// kubelet under test and theirs), containerd and the containerd shims
// with their children (runc, the pods). The rest is others' use.

// DefaultIdleThreshold is the share of the machine's CPU (all cores) that
// others may use before the bench warns or refuses to start.
const DefaultIdleThreshold = 0.10

// idleInterval is the period of the machine samples during a run.
const idleInterval = 5 * time.Second

// machineSample is one reading of the machine's CPU and of the measured
// processes' CPU, in clock ticks.
type machineSample struct {
	Busy, Total uint64
	Measured    uint64
}

// parseProcStat returns the busy and total ticks of all CPUs from the
// content of /proc/stat: busy is user, nice, system, irq, softirq and
// steal (guest time is inside user); total adds idle and iowait.
func parseProcStat(b []byte) (busy, total uint64, err error) {
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("parse /proc/stat: first line %q", line)
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("parse /proc/stat: %w", err)
		}
	}
	busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	return busy, busy + v[3] + v[4], nil
}

// othersShare is the share of the machine's CPU that processes other than
// the measured ones used between a and b (0 to 1; 0 when no time passed).
// It is pure.
func othersShare(a, b machineSample) float64 {
	total := float64(b.Total) - float64(a.Total)
	if total <= 0 {
		return 0
	}
	others := (float64(b.Busy) - float64(a.Busy)) - (float64(b.Measured) - float64(a.Measured))
	return min(max(others/total, 0), 1)
}

// measuredRoots are the roots of the measured process trees: the bench,
// containerd and every containerd shim.
func measuredRoots(table map[int]procStat, self, containerd int) []int {
	roots := []int{self, containerd}
	for pid, st := range table {
		if strings.HasPrefix(st.Comm, "containerd-shim") {
			roots = append(roots, pid)
		}
	}
	return roots
}

// readMachine samples the machine now.
func readMachine(self, containerd int) (machineSample, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineSample{}, err
	}
	table, err := readTable()
	if err != nil {
		return machineSample{}, err
	}
	busy, total, err := parseProcStat(b)
	if err != nil {
		return machineSample{}, err
	}
	return machineSample{Busy: busy, Total: total, Measured: ticks(table, tree(table, measuredRoots(table, self, containerd)...))}, nil
}

// IdleReport is what the idle-machine check saw.
type IdleReport struct {
	Threshold float64 `json:"threshold"`
	// Before is others' share over the check before the run.
	Before float64 `json:"before"`
	// During is others' share per idleInterval of the run.
	During []float64 `json:"during"`
	// Mean and Max summarize During.
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	// Warnings say where others used more than Threshold; none on an idle
	// machine.
	Warnings []string `json:"warnings,omitempty"`
}

// CheckIdle measures others' share of the CPU over d before a run.
func CheckIdle(ctx context.Context, d time.Duration, containerd int) (float64, error) {
	a, err := readMachine(os.Getpid(), containerd)
	if err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	b, err := readMachine(os.Getpid(), containerd)
	if err != nil {
		return 0, err
	}
	return othersShare(a, b), nil
}

// idleMonitor samples the machine every idleInterval while a run lasts.
type idleMonitor struct {
	containerd int
	// mu guards shares and err.
	mu     sync.Mutex
	shares []float64
	err    error
}

// run samples until ctx ends.
func (m *idleMonitor) run(ctx context.Context) {
	prev, err := readMachine(os.Getpid(), m.containerd)
	tick := time.NewTicker(idleInterval)
	defer tick.Stop()
	for err == nil {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var cur machineSample
		if cur, err = readMachine(os.Getpid(), m.containerd); err == nil {
			m.mu.Lock()
			m.shares = append(m.shares, othersShare(prev, cur))
			m.mu.Unlock()
			prev = cur
		}
	}
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
}

// report summarizes the run's samples against threshold.
func (m *idleMonitor) report(threshold, before float64) IdleReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := summarizeIdle(threshold, before, m.shares)
	if m.err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the machine could not be sampled: %v", m.err))
	}
	return r
}

// summarizeIdle builds the report of an idle check. It is pure.
func summarizeIdle(threshold, before float64, during []float64) IdleReport {
	r := IdleReport{Threshold: threshold, Before: before, During: during}
	var sum float64
	over := 0
	for _, s := range during {
		sum += s
		r.Max = max(r.Max, s)
		if s > threshold {
			over++
		}
	}
	if len(during) > 0 {
		r.Mean = sum / float64(len(during))
	}
	if before > threshold {
		r.Warnings = append(r.Warnings, fmt.Sprintf("before the run, other processes used %.0f%% of the machine's CPU (threshold %.0f%%)",
			before*100, threshold*100))
	}
	if r.Mean > threshold || over > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("during the run, other processes used %.0f%% of the machine's CPU on average, "+
			"%.0f%% at most, above %.0f%% in %d of %d intervals of %s (threshold %.0f%%): the figures are not those of an idle machine",
			r.Mean*100, r.Max*100, threshold*100, over, len(during), idleInterval, threshold*100))
	}
	return r
}
