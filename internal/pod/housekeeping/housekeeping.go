package housekeeping

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// Config holds what housekeeping needs.
type Config struct {
	Workers interface {
		SyncKnownPods(ctx context.Context, desired func(types.UID) bool) map[types.UID]podworker.KnownState
		Known(uid types.UID) bool
		Update(ctx context.Context, opts podworker.UpdateOptions)
	}
	// Desired is the sync loop's view of the desired pods and of the
	// mirror pods the API source has (syncloop.Desired), read live: the
	// loop admits pods while a round runs.
	Desired interface {
		Pods() []*corev1.Pod
		Has(uid types.UID) bool
		MirrorPods() []*corev1.Pod
	}
	// Gone is the route by which per-pod state ends (podgone.Route):
	// housekeeping asks it which pods its Holders hold state for, and
	// tells it of the orphans among them.
	Gone interface {
		Held() map[types.UID]struct{}
		Gone(ctx context.Context, uid types.UID)
	}
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
	if cfg.Workers == nil || cfg.Desired == nil || cfg.Gone == nil || cfg.Runtime == nil || cfg.SourcesReady == nil || cfg.PodsDir == "" ||
		cfg.PodLogsDir == "" || cfg.TearDown == nil {
		return nil, errors.New("housekeeping: Workers, Desired, Gone, Runtime, SourcesReady, PodsDir, PodLogsDir and TearDown are required")
	}
	return &Housekeeper{cfg: cfg}, nil
}

// Run forgets finished workers, restarts workers for desired pods that lost
// theirs (a UID re-added after termination), kills runtime pods that no
// worker owns, announces the orphans (announceOrphans) and removes what
// is left of pods gone for good.
//
// The sync loop admits pods while a round runs, so nothing here decides
// from a view older than what it acts on. A pod is desired before it has a
// worker, and has a worker before anything of it exists (directory, log
// directory, cgroup, sandbox); so whatever a listing finds belongs to a pod
// that was desired and had a worker before the listing, and gone, asked
// after the listing, asks the live view and the live workers. A round
// that asked a view taken at its start tore down the tmpfs of a pod
// admitted during it, under its first container.
func (h *Housekeeper) Run(ctx context.Context) {
	if !h.cfg.SourcesReady() {
		return
	}
	logger := klog.FromContext(ctx)
	known := h.cfg.Workers.SyncKnownPods(ctx, h.cfg.Desired.Has)
	for _, pod := range h.cfg.Desired.Pods() {
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
		if h.wanted(uid) {
			continue
		}
		logger.V(2).Info("Killing runtime pod no source wants", "podUID", uid, "pod", klog.KRef(rp.Namespace, rp.Name))
		h.cfg.Workers.Update(ctx, podworker.UpdateOptions{Type: podworker.SyncPodKill, RuntimePod: rp})
	}
	// gone: no source has the pod (desired or mirror), no worker, nothing
	// in the runtime's listing (a sandbox made since has a worker).
	gone := func(uid types.UID) bool {
		_, isRunning := running[uid]
		return !isRunning && !h.wanted(uid)
	}
	h.announceOrphans(ctx, gone)
	h.removeOrphanedDirs(ctx, gone)
	h.removeOrphanedLogDirs(ctx, gone)
	if h.cfg.Cgroups != nil {
		if err := h.cfg.Cgroups.Cleanup(ctx, h.cfg.Desired.Pods(), gone); err != nil {
			logger.Error(err, "Housekeeping: pod cgroups")
		}
	}
}

// wanted reports whether, now, a worker has uid or a source wants it (a
// desired pod, or a mirror pod: known to a source, never an orphan). The
// worker is asked first: a pod is desired before it gets a worker, so a
// pod admitted between the two questions is still found.
func (h *Housekeeper) wanted(uid types.UID) bool {
	if h.cfg.Workers.Known(uid) || h.cfg.Desired.Has(uid) {
		return true
	}
	return slices.ContainsFunc(h.cfg.Desired.MirrorPods(), func(m *corev1.Pod) bool { return m.UID == uid })
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
		if err := volume.RemoveOneFilesystem(path); err != nil {
			klog.FromContext(ctx).Error(err, "Housekeeping: remove orphaned pod directory", "path", path)
			continue
		}
		klog.FromContext(ctx).V(2).Info("Removed orphaned pod directory", "path", path)
	}
}
