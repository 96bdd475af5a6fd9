package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/gc"
	"github.com/berthk8s/berth/internal/node/logrotate"
)

// guards are what keeps the node's disk in check: container log rotation,
// container GC and image GC. Run starts them after the pod sources and
// the stats provider (image GC reads the image filesystem through it).
type guards struct {
	logs       *logrotate.Manager
	containers *gc.ContainerGC
	images     *gc.ImageGC
}

// newGuards builds the log rotation and the garbage collectors from the
// configuration; they start nothing. It needs the runtime manager, the
// workers, the sources, the stats provider and the metrics.
func (n *node) newGuards() (guards, error) {
	kc, cl := &n.cfg.Kubelet, n.cluster
	maxSize, err := config.ParseContainerLogMaxSize(kc.ContainerLogMaxSize)
	if err != nil {
		return guards{}, fmt.Errorf("parse containerLogMaxSize %q: %w", kc.ContainerLogMaxSize, err)
	}
	var g guards
	if g.logs, err = logrotate.New(logrotate.Config{
		Runtime: n.conn.client.Runtime, PodLogsDir: kc.PodLogsDir,
		Policy:  logrotate.Policy{MaxSize: maxSize, MaxFiles: n.set.Logs.MaxFiles},
		Workers: n.set.Logs.MaxWorkers, Interval: kc.ContainerLogMonitorInterval.Duration,
		Clock: n.clock,
	}); err != nil {
		return guards{}, err
	}
	p := n.cfg.ContainerGC
	if g.containers, err = gc.NewContainerGC(gc.ContainerConfig{
		Runtime: n.pods.runtime, CleanLogs: g.logs.Clean,
		Policy:       gc.ContainerPolicy{MinAge: p.MinAge.Duration, MaxPerPodContainer: p.MaxPerPodContainer, MaxContainers: p.MaxContainers},
		SourcesReady: n.pods.sources.Ready, ContentRemovable: n.pods.workers.ShouldPodContentBeRemoved,
		RuntimeRemovable: n.pods.workers.ShouldPodRuntimeBeRemoved, Clock: n.clock, Recorder: cl.recorder,
	}); err != nil {
		return guards{}, err
	}
	if g.images, err = gc.NewImageGC(gc.ImageConfig{
		Images: n.conn.client.Image, Containers: n.conn.client.Runtime, FsStats: n.serve.observe.stats.ImageFsStats,
		Policy: gc.ImagePolicy{
			HighThresholdPercent: n.set.ImageGCHighThresholdPercent,
			LowThresholdPercent:  n.set.ImageGCLowThresholdPercent,
			MinAge:               kc.ImageMinimumGCAge.Duration, MaxAge: kc.ImageMaximumGCAge.Duration,
		},
		SandboxImage: n.cfg.PodInfraContainerImage, Clock: n.clock, Recorder: cl.recorder,
		Collected: n.metrics.ObserveImageCollected, Remaining: n.pruneRecords(),
	}); err != nil {
		return guards{}, err
	}
	return g, nil
}

// pruneRecords returns the image GC's Remaining hook: the image pull
// records forget images the runtime no longer has; nil without records.
func (n *node) pruneRecords() func(ctx context.Context, ids []string, listedAt time.Time) {
	if n.managers.pullRecords == nil {
		return nil
	}
	return n.managers.pullRecords.Prune
}
