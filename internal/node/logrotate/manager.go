package logrotate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// Runtime is what the manager asks of the CRI runtime service.
type Runtime interface {
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
	ContainerStatus(ctx context.Context, in *runtimeapi.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error)
	ReopenContainerLog(ctx context.Context, in *runtimeapi.ReopenContainerLogRequest, opts ...grpc.CallOption) (*runtimeapi.ReopenContainerLogResponse, error)
}

// Config is what New needs.
type Config struct {
	Runtime Runtime
	// PodLogsDir is where every container log lies (podLogsDir); a log
	// path elsewhere is never touched.
	PodLogsDir string
	Policy     Policy
	// Workers rotate logs concurrently (containerLogMaxWorkers); Interval
	// is containerLogMonitorInterval.
	Workers  int
	Interval time.Duration
	Clock    clock.WithTicker
}

// Manager rotates the logs of running containers. Run is its only
// goroutine, with the workers it starts per round; Clean may be called
// from another goroutine: the two never work on the same container (Clean
// is for containers that are not running).
type Manager struct {
	cfg Config
}

// New validates cfg. It starts nothing.
func New(cfg Config) (*Manager, error) {
	if cfg.Runtime == nil || cfg.PodLogsDir == "" || cfg.Clock == nil {
		return nil, errors.New("create log rotation: Runtime, PodLogsDir and Clock are required")
	}
	if cfg.Policy.MaxFiles <= 1 {
		return nil, fmt.Errorf("create log rotation: invalid MaxFiles %d, must be > 1", cfg.Policy.MaxFiles)
	}
	if cfg.Workers < 1 || cfg.Interval <= 0 {
		return nil, fmt.Errorf("create log rotation: invalid workers %d or interval %v", cfg.Workers, cfg.Interval)
	}
	return &Manager{cfg: cfg}, nil
}

// Run checks the logs of every running container each Interval until ctx
// ends. A negative MaxSize turns rotation off, as upstream.
func (m *Manager) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if m.cfg.Policy.MaxSize < 0 {
		logger.V(2).Info("Container log rotation is off: containerLogMaxSize is negative")
		<-ctx.Done()
		return nil
	}
	logger.Info("Initializing container log rotate workers", "workers", m.cfg.Workers, "monitorPeriod", m.cfg.Interval)
	t := m.cfg.Clock.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		if err := m.RotateAll(ctx); err != nil {
			logger.Error(err, "Failed to rotate container logs")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// RotateAll checks each running container's log with Workers workers and
// returns when all are done. Per-container failures are logged: the next
// round tries again.
func (m *Manager) RotateAll(ctx context.Context) error {
	resp, err := m.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
	}})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	ids := make(chan string)
	var wg sync.WaitGroup
	for range m.cfg.Workers {
		wg.Go(func() {
			for id := range ids {
				if err := m.rotateContainer(ctx, id); err != nil {
					klog.FromContext(ctx).Error(err, "Failed to rotate log for container", "containerID", id)
				}
			}
		})
	}
	for _, c := range resp.GetContainers() {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			ids <- c.GetId()
		}
	}
	close(ids)
	wg.Wait()
	return nil
}

// rotateContainer rotates one container's log if it is too big, as
// upstream's processContainer and rotateLog: a missing current log is
// reopened first; leftovers and excess files go, the rotated ones left are
// compressed, the current log is renamed, and the runtime reopens it (on
// failure the rename is undone, so the next round tries again).
func (m *Manager) rotateContainer(ctx context.Context, id string) error {
	d, err := m.openLogDir(ctx, id)
	if err != nil || d == nil {
		return err
	}
	defer func() { _ = d.Close() }()
	size, err := d.size()
	if errors.Is(err, fs.ErrNotExist) {
		if err := m.reopen(ctx, id); err != nil {
			return fmt.Errorf("container log %q does not exist, and reopening it failed: %w", d.base, err)
		}
		size, err = d.size()
	}
	if err != nil {
		return fmt.Errorf("stat container log: %w", err)
	}
	names, err := d.siblings()
	if err != nil {
		return err
	}
	plan, ok := Choose(d.base, size, names, m.cfg.Policy, m.cfg.Clock.Now())
	if !ok {
		return nil
	}
	klog.FromContext(ctx).V(4).Info("Rotating container log", "containerID", id, "log", d.base, "size", size, "plan", plan)
	return m.apply(ctx, id, d, plan)
}

// apply performs a plan in its order.
func (m *Manager) apply(ctx context.Context, id string, d *logDir, plan Plan) error {
	for _, n := range plan.Remove {
		if err := d.remove(n); err != nil {
			return err
		}
	}
	for _, n := range plan.Compress {
		if err := d.compress(n); err != nil {
			return err
		}
	}
	if err := d.root.Rename(d.base, plan.RotateTo); err != nil {
		return fmt.Errorf("rotate log %q to %q: %w", d.base, plan.RotateTo, err)
	}
	if err := m.reopen(ctx, id); err != nil {
		if rerr := d.root.Rename(plan.RotateTo, d.base); rerr != nil {
			klog.FromContext(ctx).Error(rerr, "Failed to rename rotated log back", "rotatedLog", plan.RotateTo, "log", d.base, "containerID", id)
		}
		return fmt.Errorf("reopen container log %q: %w", id, err)
	}
	return nil
}

func (m *Manager) reopen(ctx context.Context, id string) error {
	_, err := m.cfg.Runtime.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
	return err
}

// openLogDir asks the runtime where the container logs and opens that
// directory; nil without error when the container is gone or has no log.
func (m *Manager) openLogDir(ctx context.Context, id string) (*logDir, error) {
	resp, err := m.cfg.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if errors.Is(err, cri.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read status of container %q: %w", id, err)
	}
	path := resp.GetStatus().GetLogPath()
	if path == "" {
		return nil, nil
	}
	return openLogDir(m.cfg.PodLogsDir, path)
}

// Clean removes a container's log and every rotated file of it, as
// upstream's Clean; the container GC calls it before removing the
// container. A container gone, or without a log, is not an error.
func (m *Manager) Clean(ctx context.Context, id string) error {
	d, err := m.openLogDir(ctx, id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the pod's log directory is gone already
	}
	if err != nil || d == nil {
		return err
	}
	defer func() { _ = d.Close() }()
	names, err := d.siblings()
	if err != nil {
		return err
	}
	errs := []error{d.remove(d.base)}
	for _, n := range names {
		errs = append(errs, d.remove(n))
	}
	return errors.Join(errs...)
}
