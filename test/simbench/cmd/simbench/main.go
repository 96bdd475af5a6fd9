// Command simbench runs berth simulate, kwok and kubemark's hollow nodes
// side by side against the loopback control plane and prints a markdown
// table of what each costs (see test/simbench). `make simbench` runs it.
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
	"strings"
	"syscall"
	"time"

	"github.com/berthk8s/berth/test/cluster"
	"github.com/berthk8s/berth/test/simbench"
)

// report is the JSON written beside the table.
type report struct {
	Date    time.Time         `json:"date"`
	Machine string            `json:"machine"`
	Args    []string          `json:"args"`
	Seconds float64           `json:"seconds"`
	Results []simbench.Result `json:"results"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "simbench:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, out, err := parseFlags()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "simbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	cfg.WorkDir = work
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the harness at once; its children get SIGKILL with it
	}()
	start := time.Now()
	results, runErr := simbench.Run(ctx, cfg)
	rep := report{Date: start.UTC(), Machine: describeMachine(), Args: os.Args[1:],
		Seconds: time.Since(start).Seconds(), Results: results}
	table := fmt.Sprintf("%s, %s, run took %s, %d pods a node, windows of %s after %s settling\n\n%s",
		rep.Date.Format(time.RFC3339), rep.Machine, time.Since(start).Round(time.Second), cfg.PodsPerNode,
		cfg.Window, cfg.Settle, simbench.Markdown(results))
	fmt.Printf("\n%s", table)
	if err := write(out, start, table, rep); err != nil {
		return err
	}
	return runErr
}

// parseFlags reads the command line into a Config and the output directory.
func parseFlags() (simbench.Config, string, error) {
	sizes := flag.String("sizes", "100,500,1000", "node counts, comma-separated; every simulator runs at each")
	sims := flag.String("simulators", strings.Join(simbench.Simulators, ","), "simulators to run: berth, kwok, kubemark")
	perNode := flag.Int("pods-per-node", 10, "pods created on each node once all are Ready")
	window := flag.Duration("window", time.Minute, "length of the idle and of the busy measuring window")
	settle := flag.Duration("settle", 10*time.Second, "wait after all nodes Ready (all pods Running) before a window")
	readyTimeout := flag.Duration("ready-timeout", 15*time.Minute, "how long to wait for all nodes Ready")
	runningTimeout := flag.Duration("running-timeout", 15*time.Minute, "how long to wait for all pods Running")
	berth := flag.String("berth", "bin/berth", "berth binary (make build)")
	berthArgs := flag.String("berth-args", "", "more arguments of berth simulate, space-separated")
	binDir := flag.String("bin-dir", "", "control plane, kwok, kwok-stages and kubemark binaries (default $"+cluster.BinDirEnv+", else <repo>/_output/tools/bin)")
	floor := flag.Int("mem-floor-mib", 4096, "MemAvailable (MiB) a run must leave: one that would not is not started, one that does not is stopped")
	out := flag.String("out", "_output/simbench", "directory of the table and the raw JSON")
	flag.Parse()
	cfg := simbench.Config{PodsPerNode: *perNode, Window: *window, Settle: *settle, ReadyTimeout: *readyTimeout,
		RunningTimeout: *runningTimeout, BerthArgs: strings.Fields(*berthArgs), MemFloor: uint64(*floor) << 20,
		Logf: func(format string, args ...any) {
			fmt.Printf("[simbench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		}}
	var err error
	if cfg.Sizes, err = simbench.ParseSizes(*sizes); err != nil {
		return cfg, "", err
	}
	if cfg.Simulators, err = simbench.ParseSimulators(*sims); err != nil {
		return cfg, "", err
	}
	if cfg.BerthBinary, err = filepath.Abs(*berth); err != nil {
		return cfg, "", err
	}
	if cfg.BinDir, err = cluster.ResolveBinDir(*binDir); err != nil {
		return cfg, "", err
	}
	if cfg.BinDir, err = filepath.Abs(cfg.BinDir); err != nil {
		return cfg, "", err
	}
	return cfg, *out, checkBinaries(cfg)
}

// checkBinaries fails early on a missing binary, saying how to build it.
func checkBinaries(cfg simbench.Config) error {
	var extra []string
	for _, sim := range cfg.Simulators {
		switch sim {
		case simbench.Kwok:
			extra = append(extra, "kwok", "kwok-stages")
		case simbench.Kubemark:
			extra = append(extra, "kubemark")
		}
	}
	if err := cluster.CheckBinaries(cfg.BinDir, extra...); err != nil {
		return fmt.Errorf("%w; kwok, kwok-stages and kubemark: hack/cluster-build.sh --simbench", err)
	}
	if info, err := os.Stat(cfg.BerthBinary); err != nil || info.IsDir() {
		return fmt.Errorf("berth binary %s missing: run make build", cfg.BerthBinary)
	}
	return nil
}

// write saves the table and the raw results under out.
func write(out string, start time.Time, table string, rep report) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	stamp := start.UTC().Format("20060102-150405")
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	jsonPath := filepath.Join(out, "simbench-"+stamp+".json")
	if err := os.WriteFile(jsonPath, data, 0o644); err != nil {
		return err
	}
	mdPath := filepath.Join(out, "simbench-"+stamp+".md")
	if err := os.WriteFile(mdPath, []byte(table), 0o644); err != nil {
		return err
	}
	fmt.Printf("\ntable: %s\nraw results: %s\n", mdPath, jsonPath)
	return nil
}

// describeMachine describes this machine in one line.
func describeMachine() string {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%d CPUs, %s RAM, Linux %s, %s", runtime.NumCPU(), mem, strings.TrimSpace(string(kernel)), runtime.GOARCH)
}
