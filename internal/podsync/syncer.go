package podsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/kuberuntime"
	"github.com/berthk8s/berth/internal/podstatus"
	"github.com/berthk8s/berth/internal/podutil"
	"github.com/berthk8s/berth/internal/podworker"
	"github.com/berthk8s/berth/internal/prober"
	"github.com/berthk8s/berth/internal/runtimestate"
)

// Runtime is what the syncer needs of the runtime manager.
type Runtime interface {
	SyncPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, opts kuberuntime.SyncOptions) (kuberuntime.Result, error)
	KillPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, gracePeriod *int64) error
	RemovePod(ctx context.Context, rt *runtimestate.Pod) error
	PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*runtimestate.Pod, error)
	ForgetPod(uid types.UID)
}

// StatusStore keeps the latest generated status per pod.
type StatusStore interface {
	Set(uid types.UID, status corev1.PodStatus) corev1.PodStatus
	Get(uid types.UID) (corev1.PodStatus, bool)
	Delete(uid types.UID)
}

// Volumes sets up and tears down pods' volumes.
type Volumes interface {
	// SetUp mounts every volume of the pod (idempotent) and returns each
	// volume's host directory by name.
	SetUp(ctx context.Context, pod *corev1.Pod) (map[string]string, error)
	// TearDown releases the volumes of a terminated pod.
	TearDown(ctx context.Context, uid types.UID) error
	// Update tells that the pod object changed (downward API content).
	Update(pod *corev1.Pod)
}

// Mirrors keeps the mirror pods of static pods in the API server.
type Mirrors interface {
	// Sync creates or replaces the static pod's mirror pod as needed.
	Sync(ctx context.Context, static *corev1.Pod) error
	// Delete removes the mirror pod of a static pod that is gone.
	Delete(ctx context.Context, static *corev1.Pod) error
}

// Prober runs the pods' probes (internal/prober).
type Prober interface {
	// AddPod starts (or keeps) probing a pod that runs.
	AddPod(pod *corev1.Pod)
	// StopLivenessAndStartup ends the probes that would restart the
	// containers of a terminating pod.
	StopLivenessAndStartup(uid types.UID)
	// RemovePod ends every probe of a terminated pod.
	RemovePod(uid types.UID)
	// Snapshot returns the pod's probe results for the planner and status.
	Snapshot(pod *corev1.Pod, rt *runtimestate.Pod) prober.Snapshot
}

// Config holds the syncer's collaborators.
type Config struct {
	Runtime  Runtime
	Statuses StatusStore
	Clock    clock.PassiveClock
	// PodsDir is <root-dir>/pods; each pod gets PodsDir/<uid>.
	PodsDir string
	HostIPs []string
	// RuntimeName prefixes container IDs in status ("containerd").
	RuntimeName string
	// Desired reports whether a source still wants the pod; a terminated pod
	// that is no longer desired has its containers and directories removed.
	Desired func(uid types.UID) bool
	// IsStatic reports whether a pod came from a file or URL source.
	IsStatic func(pod *corev1.Pod) bool
	// Mirrors is nil in standalone mode.
	Mirrors Mirrors
	// Volumes may be nil: then a pod's volumeMounts fail its containers
	// with CreateContainerConfigError (never silently skipped).
	Volumes Volumes
	// Prober may be nil: then no probe runs and containers are ready and
	// started as soon as they run.
	Prober Prober
}

// Syncer implements podworker.Syncer. It is safe for concurrent use; the
// pod workers call it at most once at a time per UID.
type Syncer struct {
	cfg Config
	// mu guards failures.
	mu       sync.Mutex
	failures map[types.UID]map[string]runtimestate.StartFailure
}

var _ podworker.Syncer = (*Syncer)(nil)

// New validates cfg and returns a Syncer.
func New(cfg Config) (*Syncer, error) {
	if cfg.Runtime == nil || cfg.Statuses == nil || cfg.Clock == nil || cfg.PodsDir == "" || cfg.Desired == nil {
		return nil, errors.New("podsync: Runtime, Statuses, Clock, PodsDir and Desired are required")
	}
	if cfg.Mirrors != nil && cfg.IsStatic == nil {
		return nil, errors.New("podsync: IsStatic is required with Mirrors")
	}
	if cfg.RuntimeName == "" {
		cfg.RuntimeName = "containerd"
	}
	return &Syncer{cfg: cfg, failures: map[types.UID]map[string]runtimestate.StartFailure{}}, nil
}

// SyncPod generates the pod's status and, unless the pod is finished,
// converges the runtime toward the pod's spec.
func (s *Syncer) SyncPod(ctx context.Context, t podworker.UpdateType, pod *corev1.Pod, rt *runtimestate.Pod) (bool, error) {
	if s.cfg.Prober != nil {
		// Before the status: a container of a known pod is not ready until
		// its readiness probe says so.
		s.cfg.Prober.AddPod(pod)
	}
	status := s.generate(pod, rt, false)
	s.syncMirror(ctx, pod)
	if podutil.IsTerminal(status.Phase) {
		return true, nil
	}
	if err := os.MkdirAll(s.PodDir(pod.UID), 0o750); err != nil {
		return false, fmt.Errorf("create pod directory: %w", err)
	}
	var volumes map[string]string
	if s.cfg.Volumes != nil && len(pod.Spec.Volumes) > 0 {
		if t == podworker.SyncPodUpdate {
			s.cfg.Volumes.Update(pod)
		}
		v, err := s.cfg.Volumes.SetUp(ctx, pod)
		if err != nil {
			return false, fmt.Errorf("set up volumes of pod %q: %w", klog.KObj(pod), err)
		}
		volumes = v
	}
	res, err := s.cfg.Runtime.SyncPod(ctx, pod, rt, kuberuntime.SyncOptions{Volumes: volumes, Probes: s.probes(pod, rt).Plan})
	if changed := s.setFailures(pod.UID, res.Failures); changed {
		s.generate(pod, rt, false)
	}
	if err != nil {
		return false, fmt.Errorf("sync pod %q: %w", klog.KObj(pod), err)
	}
	if len(res.Failures) > 0 {
		// Retry after the worker's backoff: a container waits on an image
		// pull or a crash-loop back-off that will expire.
		return false, fmt.Errorf("sync pod %q: %w", klog.KObj(pod), failuresError(res.Failures))
	}
	return false, nil
}

// SyncTerminatingPod stops every container and sandbox of the pod, then
// records its final status from what the runtime says after the kill: the
// pod is terminal (upstream's podIsTerminal), so its phase becomes
// Succeeded or Failed.
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, gracePeriod int64) error {
	if s.cfg.Prober != nil {
		s.cfg.Prober.StopLivenessAndStartup(pod.UID)
	}
	if err := s.cfg.Runtime.KillPod(ctx, pod, rt, &gracePeriod); err != nil {
		return fmt.Errorf("kill pod %q: %w", klog.KObj(pod), err)
	}
	after, err := s.cfg.Runtime.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("read status of killed pod %q: %w", klog.KObj(pod), err)
	}
	s.generate(pod, after, true)
	return nil
}

// SyncTerminatingRuntimePod kills and removes a pod no source knows.
func (s *Syncer) SyncTerminatingRuntimePod(ctx context.Context, rt *runtimestate.Pod) error {
	if err := s.cfg.Runtime.KillPod(ctx, nil, rt, nil); err != nil {
		return fmt.Errorf("kill orphaned pod %q: %w", rt.UID, err)
	}
	if err := s.cfg.Runtime.RemovePod(ctx, rt); err != nil {
		return fmt.Errorf("remove orphaned pod %q: %w", rt.UID, err)
	}
	s.forget(rt.UID)
	return nil
}

// SyncTerminatedPod records the pod's final status and, when no source
// wants the pod any more, removes its containers, sandboxes and directories.
// A finished pod that is still desired keeps its containers for their logs.
func (s *Syncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod) error {
	if s.cfg.Prober != nil {
		s.cfg.Prober.RemovePod(pod.UID)
	}
	if s.cfg.Volumes != nil {
		if err := s.cfg.Volumes.TearDown(ctx, pod.UID); err != nil {
			return fmt.Errorf("tear down volumes of pod %q: %w", klog.KObj(pod), err)
		}
	}
	if s.cfg.Desired(pod.UID) {
		status := s.generate(pod, rt, true)
		// Every container is stopped: none may stay "waiting" and the pod
		// must end in a terminal phase, or a deleted pod whose containers
		// never started would never be removed from the API.
		s.cfg.Statuses.Set(pod.UID, podstatus.Terminated(status, s.cfg.IsStatic != nil && s.cfg.IsStatic(pod)))
		return nil
	}
	if err := s.cfg.Runtime.RemovePod(ctx, rt); err != nil {
		return fmt.Errorf("remove pod %q: %w", klog.KObj(pod), err)
	}
	if s.cfg.Mirrors != nil && s.cfg.IsStatic(pod) {
		if err := s.cfg.Mirrors.Delete(ctx, pod); err != nil {
			return fmt.Errorf("delete mirror pod of %q: %w", klog.KObj(pod), err)
		}
	}
	if err := os.RemoveAll(s.PodDir(pod.UID)); err != nil {
		return fmt.Errorf("remove pod directory: %w", err)
	}
	s.forget(pod.UID)
	return nil
}

// syncMirror keeps a static pod's mirror pod in the API server. A failure
// is logged and retried on the next sync: it must not stop the pod.
func (s *Syncer) syncMirror(ctx context.Context, pod *corev1.Pod) {
	if s.cfg.Mirrors == nil || !s.cfg.IsStatic(pod) {
		return
	}
	if err := s.cfg.Mirrors.Sync(ctx, pod); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to sync mirror pod", "pod", klog.KObj(pod))
	}
}

// PodDir is the pod's directory under PodsDir.
func (s *Syncer) PodDir(uid types.UID) string { return filepath.Join(s.cfg.PodsDir, string(uid)) }

// Forget drops everything kept for a pod that is gone for good.
func (s *Syncer) forget(uid types.UID) {
	s.mu.Lock()
	delete(s.failures, uid)
	s.mu.Unlock()
	s.cfg.Statuses.Delete(uid)
	s.cfg.Runtime.ForgetPod(uid)
	if s.cfg.Prober != nil {
		s.cfg.Prober.RemovePod(uid)
	}
}

// probes returns the prober's results for the pod (none without a prober).
func (s *Syncer) probes(pod *corev1.Pod, rt *runtimestate.Pod) prober.Snapshot {
	if s.cfg.Prober == nil {
		return prober.Snapshot{}
	}
	return s.cfg.Prober.Snapshot(pod, rt)
}

// generate computes and stores the pod's status from the runtime snapshot;
// terminal says the pod worker has finished the pod.
func (s *Syncer) generate(pod *corev1.Pod, rt *runtimestate.Pod, terminal bool) corev1.PodStatus {
	var prev *corev1.PodStatus
	if st, ok := s.cfg.Statuses.Get(pod.UID); ok {
		prev = &st
	}
	s.mu.Lock()
	failures := s.failures[pod.UID]
	s.mu.Unlock()
	probes := s.probes(pod, rt)
	status := podstatus.Generate(podstatus.Input{
		Pod:         pod,
		Runtime:     rt,
		Previous:    prev,
		Failures:    failures,
		Readiness:   probes.Readiness,
		Startup:     probes.Startup,
		Terminal:    terminal,
		HostIPs:     s.cfg.HostIPs,
		RuntimeName: s.cfg.RuntimeName,
		Now:         s.cfg.Clock.Now(),
	})
	s.cfg.Statuses.Set(pod.UID, status)
	return status
}

// setFailures stores the last sync's start failures; it reports whether
// they differ from the previous ones.
func (s *Syncer) setFailures(uid types.UID, f map[string]runtimestate.StartFailure) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if maps.Equal(s.failures[uid], f) {
		return false
	}
	if len(f) == 0 {
		delete(s.failures, uid)
	} else {
		s.failures[uid] = maps.Clone(f)
	}
	return true
}

func failuresError(f map[string]runtimestate.StartFailure) error {
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("container %q: %s: %s", n, f[n].Reason, f[n].Message))
	}
	return errors.New(strings.Join(parts, "; "))
}
