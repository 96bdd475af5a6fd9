package agent

import (
	"context"
	"runtime"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/config"
)

// processSetters change berth's own process. Tests inject their own, so
// they never change the test process.
type processSetters struct {
	// setBlockProfileRate is runtime.SetBlockProfileRate.
	setBlockProfileRate func(rate int)
	// setNumFiles sets RLIMIT_NOFILE, soft and hard, to n.
	setNumFiles func(n uint64) error
}

// osProcess returns the real setters.
func osProcess() processSetters {
	return processSetters{setBlockProfileRate: runtime.SetBlockProfileRate, setNumFiles: setNumFiles}
}

// setNumFiles sets berth's open files limit as upstream's rlimit.SetNumFiles.
func setNumFiles(n uint64) error {
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: n, Max: n})
}

// tuneProcess applies, once at start, the settings upstream's kubelet sets
// on its own process: block profiling (enableContentionProfiling, see
// config.BlockProfiling) and the open files limit (maxOpenFiles), whose
// failure upstream logs and goes on.
func tuneProcess(ctx context.Context, cfg *config.Config, set processSetters) {
	if cfg.BlockProfiling() {
		set.setBlockProfileRate(1)
		klog.FromContext(ctx).Info("Block profiling enabled (enableContentionProfiling)")
	}
	if err := set.setNumFiles(uint64(cfg.Kubelet.MaxOpenFiles)); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to set rlimit on max file handles", "maxOpenFiles", cfg.Kubelet.MaxOpenFiles)
	}
}
