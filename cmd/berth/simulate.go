package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/app/simulate"
)

// newSimulateCommand is berth simulate: many berth nodes in one process
// on in-memory runtimes (internal/app/simulate).
func newSimulateCommand(d deps) *cobra.Command {
	var f simulate.Flags
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "run many simulated berth nodes in one process, on in-memory runtimes",
		Long: `berth simulate runs --nodes berth nodes named <prefix>0 ... <prefix>(N-1) in
one process against the cluster of --kubeconfig. Each is a real berth node
(its Node and Lease, pod source, sync loop, pod workers, planner, status
writer, admission, prober) on its own in-memory container runtime, so it
needs neither root nor containerd. Containers behave as their pods'
sim.berth.dev/ annotations say (see internal/sim/appmodel and the README).
The kubeconfig's identity (without --kubeconfig, in a pod, the pod's
service account) must be allowed to write every simulated Node; see
examples/simulate for the Deployment and its RBAC.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.Config(version, clock.RealClock{})
			if err != nil {
				return err
			}
			return d.runSimulate(cmd.Context(), cfg)
		},
	}
	f.AddFlags(cmd.Flags())
	return cmd
}

// runSimulate runs the Sim until ctx ends, in a temporary root directory
// unless cfg names one.
func runSimulate(ctx context.Context, cfg simulate.Config) error {
	if cfg.RootDir == "" {
		dir, err := os.MkdirTemp("", "berth-simulate-")
		if err != nil {
			return fmt.Errorf("simulate: make root directory: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }()
		cfg.RootDir = dir
	}
	s, err := simulate.New(cfg)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting berth simulate", "version", version, "nodes", cfg.Nodes, "prefix", cfg.Prefix)
	return s.Run(ctx)
}
