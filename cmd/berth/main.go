package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/app/agent"
	"github.com/berthk8s/berth/internal/app/simulate"
	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/hostsetup"
	"github.com/berthk8s/berth/internal/platform/lockfile"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], deps{
		stdout: os.Stdout,
		stderr: os.Stderr,
		env:    config.OSEnv(),
		runAgent: func(ctx context.Context, cfg *config.Config) error {
			return agent.Run(ctx, cfg, version, clock.RealClock{})
		},
		applyLogging: applyLogging,
		setupHost:    setupHost,
		runSimulate:  runSimulate,
	})
	stop()
	klog.Flush()
	os.Exit(code)
}

// deps is what run needs from the outside world; tests replace it.
type deps struct {
	stdout, stderr io.Writer
	env            config.Env
	runAgent       func(ctx context.Context, cfg *config.Config) error
	// applyLogging applies the configuration's logging (format, verbosity,
	// vmodule, flush frequency) to the process, once.
	applyLogging func(ctx context.Context, cfg *config.Config) error
	// setupHost makes the changes berth makes to the host for itself
	// before it runs pods; an error stops berth before the agent starts.
	setupHost func(ctx context.Context, cfg *config.Config) error
	// runSimulate runs berth simulate's nodes until ctx ends.
	runSimulate func(ctx context.Context, cfg simulate.Config) error
}

// run executes the berth command with args and returns the exit code:
// 0 on success or a signal-initiated stop, 1 on any error.
func run(ctx context.Context, args []string, d deps) int {
	cmd := newCommand(d)
	cmd.InitDefaultHelpFlag()
	// pflag stops at the first unknown flag; report them all at once
	// (the kubelet's flags; berth simulate has its own).
	simulating := len(args) > 0 && args[0] == "simulate" // cobra checks its flags
	if err := config.CheckArgs(cmd.Flags(), args); err != nil && !simulating {
		fmt.Fprintf(d.stderr, "berth: %v (see berth --help)\n", err)
		return 1
	}
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(d.stderr, "berth: %v\n", err)
		return 1
	}
	return 0
}

func newCommand(d deps) *cobra.Command {
	flags := config.NewFlags()
	var showVersion bool
	cmd := &cobra.Command{
		Use:   "berth",
		Short: "berth runs static pods on a CRI runtime, in place of the kubelet",
		Long: `berth is a node agent that stands in for the Kubernetes ` + config.KubernetesVersion + ` kubelet.
It reads the upstream kubelet flags and KubeletConfiguration (--config,
--config-dir) and runs static pods from staticPodPath or staticPodURL on a
CRI runtime such as containerd. Settings berth does not support yet are
rejected at start-up, never silently ignored.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				_, err := fmt.Fprintf(d.stdout, "berth %s (kubelet %s)\n", version, config.KubernetesVersion)
				return err
			}
			return start(cmd.Context(), flags, d)
		},
	}
	cmd.SetOut(d.stdout)
	cmd.SetErr(d.stderr)
	cmd.AddCommand(newSimulateCommand(d))
	flags.AddFlags(cmd.Flags())
	cmd.Flags().SetOutput(d.stderr) // upstream's deprecation notices
	cmd.Flags().BoolVar(&showVersion, "version", false, "Print the berth version and the Kubernetes version it speaks, then exit.")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w (see berth --help)", err)
	})
	return cmd
}

// start loads the configuration and runs the agent until ctx ends. Nothing
// is started when the configuration is invalid.
func start(ctx context.Context, flags *config.Flags, d deps) error {
	cfg, err := config.Load(ctx, flags, d.env)
	if err != nil {
		return err
	}
	if err := d.applyLogging(ctx, cfg); err != nil {
		return fmt.Errorf("apply logging configuration: %w", err)
	}
	if err := d.setupHost(ctx, cfg); err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	logger.Info("Starting berth", "version", version, "kubernetesVersion", config.KubernetesVersion, "node", cfg.NodeName)
	ctx, release, err := holdLockFile(ctx, cfg)
	if err != nil {
		return err
	}
	defer release()
	err = d.runAgent(ctx, cfg)
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
		logger.Info("berth stopped", "reason", context.Cause(ctx))
		return nil
	}
	if err != nil {
		return fmt.Errorf("run agent: %w", err)
	}
	return nil
}

// setupHost sets berth's own OOM score adjustment (oomScoreAdj; a refusal
// by the kernel is a warning) and checks or sets the kernel tunables
// (protectKernelDefaults), as upstream's kubelet does at start.
func setupHost(ctx context.Context, cfg *config.Config) error {
	hostsetup.ApplyOOMScoreAdj(ctx, hostsetup.WriteOOMScoreAdj, cfg.Settings().OOMScoreAdj)
	return hostsetup.EnsureKernelTunables(ctx, hostsetup.ProcSys, cfg.Kubelet.ProtectKernelDefaults)
}

// applyLogging applies logging as upstream's kubelet does, through
// component-base's logs API: the format (text, or json, registered by
// internal/config), verbosity, vmodule and the flush daemon's period.
func applyLogging(ctx context.Context, cfg *config.Config) error {
	gates, err := cfg.FeatureGates(klog.FromContext(ctx))
	if err != nil {
		return err
	}
	logging := cfg.Kubelet.Logging
	return logsapi.ValidateAndApply(&logging, gates)
}

// errLockContention ends berth's context when another process opens the
// lock file (--exit-on-lock-contention).
var errLockContention = errors.New("another process opened the lock file")

// holdLockFile takes --lock-file before anything starts, as upstream, and
// with --exit-on-lock-contention returns a context that ends when another
// process opens the file: berth then stops as on SIGTERM (pods keep
// running) and exits 0. release frees the lock and the watch.
func holdLockFile(ctx context.Context, cfg *config.Config) (context.Context, func(), error) {
	if cfg.LockFile == "" {
		return ctx, func() {}, nil
	}
	logger := klog.FromContext(ctx)
	logger.Info("Acquiring file lock", "path", cfg.LockFile)
	lock, err := lockfile.Acquire(ctx, cfg.LockFile)
	if err != nil {
		return nil, nil, fmt.Errorf("acquire lock file %q: %w", cfg.LockFile, err)
	}
	if !cfg.ExitOnLockContention {
		return ctx, func() { _ = lock.Release() }, nil
	}
	logger.Info("Watching for inotify events", "path", cfg.LockFile)
	ctx, cancel := context.WithCancelCause(ctx)
	contended, err := lockfile.WatchContention(ctx, cfg.LockFile)
	if err != nil {
		cancel(nil)
		_ = lock.Release()
		return nil, nil, err
	}
	go func() {
		select {
		case <-contended:
			cancel(errLockContention)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil); _ = lock.Release() }, nil
}
