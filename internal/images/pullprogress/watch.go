package pullprogress

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// DefaultInterval is how often a pull is read when Config.Interval is 0.
const DefaultInterval = time.Second

// Config is what New needs.
type Config struct {
	// Store is the runtime's content store. Required.
	Store Store
	Clock clock.WithTicker
	// Interval is how often a pull is read (0: DefaultInterval).
	Interval time.Duration
}

// Watcher reads pulls while they run. Safe for concurrent use; a nil
// *Watcher watches nothing. Each Watch owns one goroutine until its stop.
type Watcher struct {
	cfg Config
	// unsupported is set once the runtime answered that it has no content
	// store API; said makes that logged once.
	unsupported atomic.Bool
	said        sync.Once
}

// New returns a Watcher.
func New(cfg Config) (*Watcher, error) {
	if cfg.Store == nil || cfg.Clock == nil {
		return nil, errors.New("create pull progress watcher: a store and a clock are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	return &Watcher{cfg: cfg}, nil
}

// Watch reads the pull of repository ("docker.io/library/busybox") that
// began at since, every interval, and calls report with each reading that
// differs from the one before, from its own goroutine, one call at a time.
// stop ends the watch and returns once report is no longer called.
func (w *Watcher) Watch(ctx context.Context, repository string, since time.Time, report func(Progress)) (stop func()) {
	if w == nil || w.unsupported.Load() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx, newPull(repository, since), report)
	}()
	return func() {
		cancel()
		<-done
	}
}

func (w *Watcher) run(ctx context.Context, p *pull, report func(Progress)) {
	logger := klog.FromContext(ctx)
	t := w.cfg.Clock.NewTicker(w.cfg.Interval)
	defer t.Stop()
	var last Progress
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		pr, err := p.sample(ctx, w.cfg.Store, w.cfg.Clock.Now())
		switch {
		case errors.Is(err, cri.ErrUnimplemented):
			w.unsupported.Store(true)
			w.said.Do(func() {
				logger.Info("The container runtime does not report image pull progress: its content store API is not served", "err", err)
			})
			return
		case ctx.Err() != nil:
			return
		case err != nil:
			logger.V(4).Info("Cannot read image pull progress", "repository", p.host+"/"+p.repo, "err", err)
			continue
		}
		if pr.Known && pr != last {
			last = pr
			report(pr)
		}
	}
}

// String is the reading as the Pulling event's message tells it:
// "12.3 MiB of 40.1 MiB (30%), 2.1 MiB/s".
func (p Progress) String() string {
	if !p.Known {
		return "progress not known yet"
	}
	pct := 0
	if p.Total > 0 {
		pct = int(p.Done * 100 / p.Total)
	}
	return fmt.Sprintf("%s of %s (%d%%), %s/s", bytesText(p.Done), bytesText(p.Total), pct, bytesText(int64(p.BytesPerSecond)))
}

// bytesText is n in B, KiB, MiB or GiB with one decimal.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if f < unit {
			break
		}
		f, suffix = f/unit, s
	}
	return fmt.Sprintf("%.1f %s", f, suffix)
}
