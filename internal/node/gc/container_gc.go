package gc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// ContainerGCPeriod is upstream's ContainerGCPeriod.
const ContainerGCPeriod = time.Minute

// Event reasons, as upstream's pkg/kubelet/events.
const (
	eventContainerGCFailed   = "ContainerGCFailed"
	eventImageGCFailed       = "ImageGCFailed"
	eventFreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	eventInvalidDiskCapacity = "InvalidDiskCapacity"
)

// NodeRecorder records events about the node.
type NodeRecorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// ContainerRuntime is what the container GC asks of the runtime manager.
type ContainerRuntime interface {
	ListPods(ctx context.Context) (map[types.UID]*runtimestate.Pod, error)
	RemoveContainer(ctx context.Context, c runtimestate.Container) error
	RemoveSandbox(ctx context.Context, id string) error
}

// ContainerConfig is what NewContainerGC needs.
type ContainerConfig struct {
	Runtime ContainerRuntime
	// CleanLogs removes a container's log files before the container goes
	// (logrotate.Manager.Clean), as upstream's removeContainerLog.
	CleanLogs func(ctx context.Context, containerID string) error
	Policy    ContainerPolicy
	// SourcesReady: every pod source was seen; until then no pod's content
	// counts as removable. ContentRemovable is podworker's
	// ShouldPodContentBeRemoved; RuntimeRemovable its
	// ShouldPodRuntimeBeRemoved, which DeleteAllUnusedContainers counts
	// too (a terminated pod not yet deleted).
	SourcesReady     func() bool
	ContentRemovable func(types.UID) bool
	RuntimeRemovable func(types.UID) bool
	Clock            clock.WithTicker
	Recorder         NodeRecorder
}

// ContainerGC removes dead containers and idle sandboxes every minute. Run
// is its only goroutine (Collect is called by Run, or by a test instead of
// Run); DeleteAllUnusedContainers is called by the eviction manager's
// goroutine. It keeps no state between collections; mu keeps two
// collections from removing the same containers at once.
type ContainerGC struct {
	cfg ContainerConfig
	mu  sync.Mutex
}

// NewContainerGC validates cfg. It starts nothing.
func NewContainerGC(cfg ContainerConfig) (*ContainerGC, error) {
	if cfg.Runtime == nil || cfg.CleanLogs == nil || cfg.SourcesReady == nil || cfg.ContentRemovable == nil || cfg.RuntimeRemovable == nil ||
		cfg.Clock == nil || cfg.Recorder == nil {
		return nil, errors.New("create container GC: every Config field is required")
	}
	if cfg.Policy.MinAge < 0 {
		return nil, fmt.Errorf("create container GC: invalid minimum garbage collection age: %v", cfg.Policy.MinAge)
	}
	return &ContainerGC{cfg: cfg}, nil
}

// Run collects every ContainerGCPeriod until ctx ends. A failed collection
// is logged and recorded as a ContainerGCFailed event, as upstream.
func (g *ContainerGC) Run(ctx context.Context) error {
	t := g.cfg.Clock.NewTicker(ContainerGCPeriod)
	defer t.Stop()
	for {
		if err := g.Collect(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Container garbage collection failed")
			g.cfg.Recorder.NodeEventf(corev1.EventTypeWarning, eventContainerGCFailed, "%s", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Collect removes what ChooseContainers picks, then lists again and
// removes what ChooseSandboxes picks, as upstream's GarbageCollect.
func (g *ContainerGC) Collect(ctx context.Context) error {
	return g.collect(ctx, false)
}

// DeleteAllUnusedContainers is Collect for the eviction manager's
// node-level reclaim, as upstream's (GarbageCollect with
// evictNonDeletedPods): with the same policy, but every dead container and
// idle sandbox of a pod whose runtime may be removed (terminated, deleted
// or not) goes too.
func (g *ContainerGC) DeleteAllUnusedContainers(ctx context.Context) error {
	klog.FromContext(ctx).Info("Attempting to delete unused containers")
	return g.collect(ctx, true)
}

// collect is Collect; nonDeleted counts pods whose runtime may be removed
// as content-removable.
func (g *ContainerGC) collect(ctx context.Context, nonDeleted bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	logger := klog.FromContext(ctx)
	in, err := g.inputs(ctx, nonDeleted)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range ChooseContainers(in) {
		logger.V(2).Info("Removing dead container", "podUID", d.PodUID, "container", d.Container.Name, "containerID", d.Container.ID)
		if err := g.cfg.CleanLogs(ctx, d.Container.ID); err != nil {
			logger.Error(err, "Cannot remove the logs of a dead container", "containerID", d.Container.ID)
		}
		if err := g.cfg.Runtime.RemoveContainer(ctx, d.Container); err != nil {
			errs = append(errs, err)
		}
	}
	if in, err = g.inputs(ctx, nonDeleted); err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, s := range ChooseSandboxes(in) {
		logger.V(2).Info("Removing idle pod sandbox", "sandboxID", s.ID)
		if err := g.cfg.Runtime.RemoveSandbox(ctx, s.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// inputs lists the runtime and asks which pods' content may go (with
// nonDeleted, also those whose runtime may go).
func (g *ContainerGC) inputs(ctx context.Context, nonDeleted bool) (ContainerInputs, error) {
	pods, err := g.cfg.Runtime.ListPods(ctx)
	if err != nil {
		return ContainerInputs{}, fmt.Errorf("list runtime pods: %w", err)
	}
	removable := map[types.UID]bool{}
	if g.cfg.SourcesReady() {
		for uid := range pods {
			if g.cfg.ContentRemovable(uid) || (nonDeleted && g.cfg.RuntimeRemovable(uid)) {
				removable[uid] = true
			}
		}
	}
	return ContainerInputs{Pods: pods, ContentRemovable: removable, Policy: g.cfg.Policy, Now: g.cfg.Clock.Now()}, nil
}
