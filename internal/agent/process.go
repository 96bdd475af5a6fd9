package agent

import (
	"context"
	"runtime"

	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/config"
)

// processSetters change berth's own process. Tests inject their own, so
// they never change the test process.
type processSetters struct {
	// setBlockProfileRate is runtime.SetBlockProfileRate.
	setBlockProfileRate func(rate int)
}

// osProcess returns the real setters.
func osProcess() processSetters {
	return processSetters{setBlockProfileRate: runtime.SetBlockProfileRate}
}

// tuneProcess applies, once at start, the settings upstream's kubelet sets
// on its own process: block profiling (enableContentionProfiling, see
// config.BlockProfiling).
func tuneProcess(ctx context.Context, cfg *config.Config, set processSetters) {
	if cfg.BlockProfiling() {
		set.setBlockProfileRate(1)
		klog.FromContext(ctx).Info("Block profiling enabled (enableContentionProfiling)")
	}
}
