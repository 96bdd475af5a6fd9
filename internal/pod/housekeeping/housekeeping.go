package housekeeping

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Config holds what housekeeping needs.
type Config struct {
	Workers interface {
		SyncKnownPods(ctx context.Context, desired []*corev1.Pod) map[types.UID]podworker.KnownState
		Update(ctx context.Context, opts podworker.UpdateOptions)
	}
	// Gone is the route by which per-pod state ends (podgone.Route):
	// housekeeping asks it which pods its Holders hold state for, and
	// tells it of the orphans among them.
	Gone interface {
		Held() map[types.UID]struct{}
		Gone(ctx context.Context, uid types.UID)
	}
	// Mirrors returns the mirror pods the API source has (the sync loop's;
	// nil: none). A mirror pod is known to a source: never an orphan.
	Mirrors func() []*corev1.Pod
	Runtime interface {
		ListPods(ctx context.Context) (map[types.UID]*runtimestate.Pod, error)
	}
	// SourcesReady: every pod source has been seen. Until then nothing is
	// cleaned up, so a restarted berth never kills a pod it will adopt.
	SourcesReady func() bool
	PodsDir      string
	// PodLogsDir holds one <namespace>_<name>_<uid> directory per pod.
	PodLogsDir string
	// TearDown releases what is left of a pod's volumes (tmpfs mounts)
	// before its directory is removed.
	TearDown func(ctx context.Context, uid types.UID) error
	// Cgroups (internal/node/cm; nil without cgroupsPerQOS) keeps the QoS
	// cgroups current with the desired pods and removes the cgroups of
	// pods gone for good.
	Cgroups interface {
		Cleanup(ctx context.Context, active []*corev1.Pod, gone func(types.UID) bool) error
	}
}

// Housekeeper cleans up after pods no source wants any more. Run is called
// from one goroutine at a time (the sync loop's housekeeping goroutine),
// which alone reads and writes suspects.
type Housekeeper struct {
	cfg Config
	// suspects are the orphans the last round found: a pod is announced
	// gone when the next round finds it an orphan again. Rebuilt whole
	// every round.
	suspects map[types.UID]struct{}
}

// New validates cfg and returns a Housekeeper.
func New(cfg Config) (*Housekeeper, error) {
	if cfg.Workers == nil || cfg.Gone == nil || cfg.Runtime == nil || cfg.SourcesReady == nil || cfg.PodsDir == "" ||
		cfg.PodLogsDir == "" || cfg.TearDown == nil {
		return nil, errors.New("housekeeping: Workers, Gone, Runtime, SourcesReady, PodsDir, PodLogsDir and TearDown are required")
	}
	return &Housekeeper{cfg: cfg}, nil
}

// Run forgets finished workers, restarts workers for desired pods that lost
// theirs (a UID re-added after termination), kills runtime pods that no
// worker owns, announces the orphans (announceOrphans) and removes what
// is left of pods gone for good.
func (h *Housekeeper) Run(ctx context.Context, desired []*corev1.Pod) {
	if !h.cfg.SourcesReady() {
		return
	}
	logger := klog.FromContext(ctx)
	known := h.cfg.Workers.SyncKnownPods(ctx, desired)
	want := make(map[types.UID]bool, len(desired))
	if h.cfg.Mirrors != nil {
		for _, m := range h.cfg.Mirrors() {
			want[m.UID] = true
		}
	}
	for _, pod := range desired {
		want[pod.UID] = true
		if _, ok := known[pod.UID]; !ok {
			h.cfg.Workers.Update(ctx, podworker.UpdateOptions{Type: podworker.SyncPodCreate, Pod: pod})
		}
	}
	running, err := h.cfg.Runtime.ListPods(ctx)
	if err != nil {
		logger.Error(err, "Housekeeping: list runtime pods")
		return
	}
	for uid, rp := range running {
		if _, ok := known[uid]; ok || want[uid] {
			continue
		}
		logger.V(2).Info("Killing runtime pod no source wants", "podUID", uid, "pod", klog.KRef(rp.Namespace, rp.Name))
		h.cfg.Workers.Update(ctx, podworker.UpdateOptions{Type: podworker.SyncPodKill, RuntimePod: rp})
	}
	// gone: no source has the pod (desired or mirror), no worker, nothing
	// in the runtime.
	gone := func(uid types.UID) bool {
		_, isKnown := known[uid]
		_, isRunning := running[uid]
		return !want[uid] && !isKnown && !isRunning
	}
	h.announceOrphans(ctx, gone)
	h.removeOrphanedDirs(ctx, gone)
	h.removeOrphanedLogDirs(ctx, gone)
	if h.cfg.Cgroups != nil {
		if err := h.cfg.Cgroups.Cleanup(ctx, desired, gone); err != nil {
			logger.Error(err, "Housekeeping: pod cgroups")
		}
	}
}

// announceOrphans tells the route of the pods a Holder holds state for that
// are gone this round and were last round: after a restart of berth, the
// pods that left while it was down (upstream's RemoveOrphanedPods and
// CleanupOrphanedPodUsernsAllocations); otherwise a pod whose state no
// worker's end covered. Two rounds, because the state of a pod new to
// berth is created as it is admitted, before it is desired and has a
// worker: a round that runs meanwhile must not take it for an orphan's.
func (h *Housekeeper) announceOrphans(ctx context.Context, gone func(types.UID) bool) {
	next := map[types.UID]struct{}{}
	for uid := range h.cfg.Gone.Held() {
		if !gone(uid) {
			continue
		}
		if _, again := h.suspects[uid]; !again {
			next[uid] = struct{}{}
			continue
		}
		klog.FromContext(ctx).V(2).Info("Forgetting the state of a pod gone for good", "podUID", uid)
		h.cfg.Gone.Gone(ctx, uid)
	}
	h.suspects = next
}

// removeOrphanedLogDirs removes the log directories of pods gone for good.
func (h *Housekeeper) removeOrphanedLogDirs(ctx context.Context, gone func(types.UID) bool) {
	entries, err := os.ReadDir(h.cfg.PodLogsDir)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Housekeeping: read pod logs directory", "path", h.cfg.PodLogsDir)
		return
	}
	for _, e := range entries {
		i := strings.LastIndexByte(e.Name(), '_')
		if i < 0 {
			continue
		}
		if uid, ok := listedUID(e, e.Name()[i+1:]); !ok || !gone(uid) {
			continue
		}
		path := filepath.Join(h.cfg.PodLogsDir, e.Name())
		if err := os.RemoveAll(path); err != nil {
			klog.FromContext(ctx).Error(err, "Housekeeping: remove pod log directory", "path", path)
			continue
		}
		klog.FromContext(ctx).V(2).Info("Removed pod log directory", "path", path)
	}
}

// listedUID returns the pod UID in the name of a directory entry that
// housekeeping may remove: a real directory (a symlink is never followed,
// nor removed) whose UID part passes podutil.ValidateUID. Housekeeping
// removes only what it found by listing, never a path built from a UID it
// was given.
func listedUID(e os.DirEntry, uidPart string) (types.UID, bool) {
	uid := types.UID(uidPart)
	if !e.IsDir() || podutil.ValidateUID(uid) != nil {
		return "", false
	}
	return uid, true
}

// removeOrphanedDirs removes pod directories of pods gone for good. What
// berth held of them in memory (their status, ...) is the route's to end
// (announceOrphans), never dropped here.
func (h *Housekeeper) removeOrphanedDirs(ctx context.Context, gone func(types.UID) bool) {
	entries, err := os.ReadDir(h.cfg.PodsDir)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Housekeeping: read pods directory", "path", h.cfg.PodsDir)
		return
	}
	for _, e := range entries {
		uid, ok := listedUID(e, e.Name())
		if !ok || !gone(uid) {
			continue
		}
		path := filepath.Join(h.cfg.PodsDir, e.Name())
		if err := h.cfg.TearDown(ctx, uid); err != nil {
			klog.FromContext(ctx).Error(err, "Housekeeping: tear down volumes of orphaned pod", "podUID", uid)
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			klog.FromContext(ctx).Error(err, "Housekeeping: remove orphaned pod directory", "path", path)
			continue
		}
		klog.FromContext(ctx).V(2).Info("Removed orphaned pod directory", "path", path)
	}
}
