// Command bench runs berth and the upstream kubelet side by side on this
// machine (see test/bench and docs/performance.md). `make bench` runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/test/bench"
)

// report is the JSON written beside the table.
type report struct {
	Date           time.Time                `json:"date"`
	Machine        string                   `json:"machine"`
	Repeats        int                      `json:"repeats"`
	Bursts         []int                    `json:"bursts"`
	Density        int                      `json:"density"`
	MaxPods        int                      `json:"max_pods"`
	Configurations []string                 `json:"configurations"`
	Steady         string                   `json:"steady"`
	Measures       []bench.Measure          `json:"measures"`
	Samples        map[string]bench.Samples `json:"samples"` // by configuration
	Heaps          []bench.HeapPoint        `json:"heaps"`
	Idle           bench.IdleReport         `json:"idle"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	berth := flag.String("berth", "_output/bench/berth", "berth binary")
	kubelet := flag.String("kubelet", "_output/tools/bin/kubelet", "upstream kubelet binary")
	out := flag.String("out", "_output/bench", "results directory")
	cri := flag.String("cri", "unix:///run/containerd/containerd.sock", "CRI endpoint")
	repeats := flag.Int("repeats", 3, "repeats of every scenario")
	burstList := flag.String("bursts", "30,100", "burst sizes, comma-separated")
	confList := flag.String("configs", strings.Join(bench.Configurations(), ","),
		"configurations, comma-separated, in order: shared (the bench's shared file), defaults (only what this machine needs)")
	density := flag.Int("density", 250, "pods of the density scenario (a burst, its steady state, its deletion); 0 = off")
	maxPods := flag.Int("max-pods", 250, "both kubelets' maxPods")
	heap := flag.Bool("heap", true, "profile berth's heap at 0, 10, 110 and -density pods (first repeat of each configuration)")
	steady := flag.Duration("steady", time.Minute, "steady-state sampling window")
	settle := flag.Duration("settle", 10*time.Second, "wait before steady-state sampling")
	idle := flag.Float64("idle-threshold", bench.DefaultIdleThreshold, "share of the machine's CPU other processes may use (0 to 1)")
	allowBusy := flag.Bool("allow-busy", false, "run even when other processes use more than -idle-threshold before the run")
	flag.Parse()

	bursts, err := parseBursts(*burstList)
	if err != nil {
		return err
	}
	confs, err := parseConfigs(*confList)
	if err != nil {
		return err
	}
	nodeIPs, err := machine.HostIPs(nil)
	if err != nil {
		return err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	work, err := filepath.Abs(filepath.Join(*out, "work-"+stamp))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	res, runErr := bench.Run(ctx, bench.Config{
		Kubelets: []bench.Kubelet{
			{Name: bench.ColBerth, Binary: *berth},
			{Name: bench.ColUpstream, Binary: *kubelet},
		},
		Configurations: confs,
		CRIEndpoint:    *cri, NodeIP: nodeIPs[0], PodLogsDir: "/var/log/pods",
		Repeats: *repeats, Bursts: bursts, Density: *density, MaxPods: *maxPods, Heap: *heap,
		Steady: *steady, Settle: *settle, WorkDir: work,
		IdleThreshold: *idle, AllowBusy: *allowBusy,
		Logf: func(format string, args ...any) {
			fmt.Printf("[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		},
	})
	measures := bench.Measures(bursts, *density)
	rep := report{Date: start.UTC(), Machine: describeMachine(), Repeats: *repeats, Bursts: bursts, Density: *density,
		MaxPods: *maxPods, Configurations: confs, Steady: steady.String(),
		Measures: measures, Samples: res.Samples, Heaps: res.Heaps, Idle: res.Idle}
	table := idleLines(res.Idle) + tables(confs, bursts, *density, *repeats, measures, res)
	fmt.Printf("\n%s, %s, %d repeats, run took %s\n\n%s", rep.Date.Format(time.RFC3339), rep.Machine, *repeats,
		time.Since(start).Round(time.Second), table)
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	jsonPath := filepath.Join(*out, "bench-"+stamp+".json")
	if err := os.WriteFile(jsonPath, data, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "bench-"+stamp+".txt"), []byte(table), 0o644); err != nil {
		return err
	}
	fmt.Println("raw samples:", jsonPath)
	return runErr
}

// idleLines states what the idle-machine check saw, warnings first.
func idleLines(r bench.IdleReport) string {
	var b strings.Builder
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	fmt.Fprintf(&b, "other processes' CPU share: %.1f%% before the run, %.1f%% mean and %.1f%% max during it (threshold %.0f%%)\n\n",
		r.Before*100, r.Mean*100, r.Max*100, r.Threshold*100)
	return b.String()
}

// tables is the report: create → Running per repeat with every
// configuration side by side, each configuration's full table, berth's
// heap profiles.
func tables(confs []string, bursts []int, density, repeats int, measures []bench.Measure, res bench.Result) string {
	if len(res.Samples) == 0 {
		return ""
	}
	all := bursts
	if density > 0 {
		all = append(slices.Clone(bursts), density)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "create to Running, per pod, per repeat (configurations side by side):\n\n%s", bench.RepeatTable(all, repeats, confs, res.Samples))
	for _, c := range confs {
		if s, ok := res.Samples[c]; ok {
			fmt.Fprintf(&b, "\nconfiguration %s:\n\n%s", c, bench.Table(measures, s))
		}
	}
	if len(res.Heaps) > 0 {
		fmt.Fprintf(&b, "\n%s", bench.HeapTable(res.Heaps))
	}
	return b.String()
}

// parseBursts reads -bursts; their bounds (maxPods) are bench.Run's check.
func parseBursts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("burst size %q: want a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseConfigs reads -configs: known names, each once.
func parseConfigs(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(bench.Configurations(), f) || slices.Contains(out, f) {
			return nil, fmt.Errorf("configuration %q: want each of %v at most once", f, bench.Configurations())
		}
		out = append(out, f)
	}
	return out, nil
}

// describeMachine describes this machine in one line.
func describeMachine() string {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]); len(f) >= 2 {
			if kb, err := strconv.Atoi(f[1]); err == nil {
				mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
			}
		}
	}
	cgroup := "cgroup v1"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		cgroup = "cgroup v2"
	}
	return fmt.Sprintf("%d CPUs, %s RAM, Linux %s, %s, %s", runtime.NumCPU(), mem, strings.TrimSpace(string(kernel)), cgroup, runtime.GOARCH)
}
