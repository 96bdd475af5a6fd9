package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/opencontainers/cgroups"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/node/eviction"
	"github.com/berthk8s/berth/internal/node/gc"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/serve/server"
)

// newEviction builds the eviction manager over the stats provider: it
// evicts through the pod workers, reclaims disk at the node level through
// the container and image GC (n.guards, built before), and kicks the node
// status when a pressure condition changes.
func (n *node) newEviction() (*eviction.Manager, error) {
	kc := &n.cfg.Kubelet
	thresholds, err := eviction.ParseThresholds(eviction.Settings{
		Hard: kc.EvictionHard, Soft: kc.EvictionSoft, SoftGracePeriod: kc.EvictionSoftGracePeriod,
		MinimumReclaim: kc.EvictionMinimumReclaim, EnforceNodeAllocatable: n.cfg.EvictionEnforceNodeAllocatable(),
	})
	if err != nil {
		return nil, fmt.Errorf("parse eviction thresholds: %w", err)
	}
	cfg := eviction.Config{
		Thresholds: thresholds, TransitionPeriod: kc.EvictionPressureTransitionPeriod.Duration,
		LocalStorageCapacityIsolation: kc.LocalStorageCapacityIsolation == nil || *kc.LocalStorageCapacityIsolation,
		MaxPodGracePeriod:             int64(kc.EvictionMaxPodGracePeriod),
		Summary:                       n.summary(),
		ActivePods:                    n.activePods,
		Terminating:                   n.pods.workers.IsPodTerminationRequested,
		PodCleanedUp:                  func(p *corev1.Pod) bool { return n.pods.workers.ShouldPodBeFinished(p.UID) },
		Killer:                        podKiller{workers: n.pods.workers, clock: n.clock},
		Reclaimer:                     diskReclaimer{containers: n.guards.containers, images: n.guards.images},
		Recorder:                      n.cluster.recorder,
		Metrics:                       n.metrics,
		OnConditions:                  n.cluster.kickNode,
		Clock:                         n.clock,
	}
	if kc.KernelMemcgNotification {
		cfg.Notifier, cfg.MemoryCgroups = n.memcgNotifier()
	}
	m, err := eviction.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("create eviction manager: %w", err)
	}
	return m, nil
}

// memcgNotifier is kernelMemcgNotification's notifier and the cgroups it
// watches: cgroup v1 memory threshold notifications on the root memory
// cgroup and on kubepods. As upstream, none on cgroup v2 (nil: the
// manager polls every monitoring period).
func (n *node) memcgNotifier() (eviction.Notifier, eviction.MemoryCgroups) {
	if n.managers.cgroups != nil {
		root, pods, ok := n.managers.cgroups.MemoryCgroups()
		if !ok {
			return nil, eviction.MemoryCgroups{}
		}
		return eviction.MemcgNotifier{}, eviction.MemoryCgroups{Node: root, Pods: pods}
	}
	// Without cgroupsPerQOS there is no kubepods (and no allocatable
	// threshold, which needs it).
	if cgroups.IsCgroup2UnifiedMode() {
		return nil, eviction.MemoryCgroups{}
	}
	root, err := cgroups.FindCgroupMountpoint("", "memory")
	if err != nil {
		return nil, eviction.MemoryCgroups{}
	}
	return eviction.MemcgNotifier{}, eviction.MemoryCgroups{Node: root}
}

// diskReclaimer is the node-level reclaim: the container GC's and the
// image GC's, as upstream's eviction manager calls them.
type diskReclaimer struct {
	containers *gc.ContainerGC
	images     *gc.ImageGC
}

var _ eviction.NodeReclaimer = diskReclaimer{}

func (r diskReclaimer) DeleteAllUnusedContainers(ctx context.Context) error {
	return r.containers.DeleteAllUnusedContainers(ctx)
}

func (r diskReclaimer) DeleteUnusedImages(ctx context.Context) error {
	return r.images.DeleteUnusedImages(ctx)
}

// podKiller evicts through the pod workers' kill path: the kill's reason
// and message become the pod's status.
type podKiller struct {
	workers *podworker.Workers
	clock   interface{ Now() time.Time }
}

func (k podKiller) Evict(ctx context.Context, ev eviction.Eviction) {
	grace := ev.GracePeriod
	k.workers.Update(ctx, podworker.UpdateOptions{
		Type: podworker.SyncPodKill, Pod: ev.Pod, StartTime: k.clock.Now(),
		KillGracePeriod: &grace, KillReason: eviction.Reason, KillMessage: ev.Message,
		KillNoDisruptionTarget: ev.NoDisruptionTarget,
	})
}

// pressure is the eviction manager's verdicts for the node status (none
// before the manager exists).
func (n *node) pressure() (memory, disk, pid bool) {
	if n.managers.evictor == nil {
		return false, false, false
	}
	p := n.managers.evictor.Pressure()
	return p.Memory, p.Disk, p.PID
}

// evictionReport is the eviction manager's explanation of its last pass,
// which /debug/eviction serves (not observed before the manager exists).
func (n *node) evictionReport() server.EvictionReport {
	if n.managers.evictor == nil {
		return eviction.NotObserved()
	}
	return n.managers.evictor.Explain()
}
