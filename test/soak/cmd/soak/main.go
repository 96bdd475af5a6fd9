// Command soak runs berth and the upstream kubelet through the soak
// suite's faults and churn side by side on this machine (test/soak,
// docs/reliability.md). `make soak` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/test/bench"
	"github.com/berthk8s/berth/test/soak"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run() error {
	berth := flag.String("berth", "_output/soak/berth", "berth binary")
	kubelet := flag.String("kubelet", "_output/tools/bin/kubelet", "upstream kubelet binary (\"\" runs berth alone)")
	out := flag.String("out", "_output/soak", "results directory")
	cri := flag.String("cri", "unix:///run/containerd/containerd.sock", "CRI endpoint")
	only := flag.String("only", "", "scenarios to run, comma-separated (default all: "+strings.Join(soak.Scenarios, ",")+")")
	cycles := flag.Int("churn-cycles", 10000, "churn: measured cycles")
	churnPods := flag.Int("churn-pods", 1, "churn: pods per cycle")
	warmup := flag.Int("churn-warmup", 100, "churn: cycles before measuring")
	rounds := flag.Int("crash-rounds", 5, "crash: rounds (a kill during a burst, a kill during its deletion)")
	pods := flag.Int("pods", 30, "pods of the crash, runtime, CRI fault and API outage scenarios")
	faultFor := flag.Duration("fault-for", time.Minute, "how long each CRI fault lasts")
	outage := flag.Duration("outage", 5*time.Minute, "how long the API server is away")
	seed := flag.Int64("seed", time.Now().UnixNano(), "seed of the crash points")
	flag.Parse()

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
	kubelets := []bench.Kubelet{{Name: bench.ColBerth, Binary: *berth}}
	if *kubelet != "" {
		kubelets = append(kubelets, bench.Kubelet{Name: bench.ColUpstream, Binary: *kubelet, Config: bench.UpstreamConfig()})
	}
	var scenarios []string
	if *only != "" {
		scenarios = strings.Split(*only, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	logf := func(format string, args ...any) {
		fmt.Printf("[soak %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	logf("seed %d", *seed)
	rep, runErr := soak.Run(ctx, soak.Config{
		Kubelets: kubelets, CRIEndpoint: *cri, NodeIP: nodeIPs[0], WorkDir: work, Only: scenarios,
		Churn:       soak.Churn{Warmup: *warmup, Cycles: *cycles, Pods: *churnPods},
		Crash:       soak.Crash{Rounds: *rounds, Pods: *pods},
		RuntimePods: *pods, RestartRuntime: restartContainerd, FaultPods: *pods, FaultFor: *faultFor,
		OutagePods: *pods, Outage: *outage, Seed: *seed, Logf: logf,
	})
	if rep != nil {
		table := rep.Markdown()
		fmt.Printf("\n%s, seed %d, run took %s\n\n%s", start.UTC().Format(time.RFC3339), *seed, time.Since(start).Round(time.Second), table)
		if err := os.WriteFile(filepath.Join(*out, "soak-"+stamp+".md"), []byte(table), 0o644); err != nil {
			return err
		}
	}
	return runErr
}

// restartContainerd restarts the containerd hack/node-setup.sh runs.
func restartContainerd(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "bash", "hack/node-setup.sh", "--restart-containerd")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
