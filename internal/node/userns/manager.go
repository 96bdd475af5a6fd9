package userns

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// Config holds what a Manager needs.
type Config struct {
	// PodsDir is <root-dir>/pods: each pod's mapping is kept in
	// PodsDir/<uid>/userns.
	PodsDir string
	// IDsPerPod is userNamespaces.idsPerPod (0: DefaultIDsPerPod).
	IDsPerPod uint32
	// MaxPods is the kubelet's maxPods: the range must hold that many
	// pods.
	MaxPods int
	// Range is the host IDs pods' user namespaces come from
	// (KubeletRange).
	Range Range
	// Handlers returns the runtime handlers of the runtime's latest
	// Status (cri.Health.Info).
	Handlers func() []cri.RuntimeHandler
	// Pick returns where in n slots the search for a free one starts;
	// nil picks at random, as upstream.
	Pick func(n int) int
}

// Manager gives pods that ask for a user namespace (spec.hostUsers:
// false) a range of host IDs of their own, as upstream's UsernsManager:
// allocated without overlap from the kubelet's range, persisted in the
// pod's directory so a restarted berth keeps it, rebuilt from the pod
// directories by New, and freed when the pod has terminated or is gone.
//
// A Manager is safe for concurrent use: mu guards the allocator and the
// mappings files.
type Manager struct {
	cfg   Config
	store store
	mu    sync.Mutex
	alloc *Allocator
}

// New checks the range against IDsPerPod and MaxPods as upstream does and
// records the mapping of every pod directory that has one. A mapping file
// that cannot be read or conflicts with another stops berth, as upstream:
// running on would risk handing the same IDs to two pods.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.PodsDir == "" || cfg.Handlers == nil {
		return nil, errors.New("userns: PodsDir and Handlers are required")
	}
	if cfg.IDsPerPod == 0 {
		cfg.IDsPerPod = DefaultIDsPerPod
	}
	if cfg.Pick == nil {
		cfg.Pick = rand.IntN
	}
	alloc, err := NewAllocator(cfg.Range, cfg.IDsPerPod, cfg.MaxPods)
	if err != nil {
		return nil, fmt.Errorf("kubelet mappings: %w", err)
	}
	m := &Manager{cfg: cfg, store: store{podsDir: cfg.PodsDir}, alloc: alloc}
	found, err := m.store.list()
	if err != nil {
		return nil, fmt.Errorf("read pods from disk: %w", err)
	}
	logger := klog.FromContext(ctx)
	logger.V(5).Info("User namespace manager mapping", "first", cfg.Range.First, "length", cfg.Range.Length, "idsPerPod", cfg.IDsPerPod)
	for _, uid := range found {
		content, err := m.store.read(uid)
		if err == nil && content != nil {
			err = m.record(uid, content)
		}
		if err != nil {
			return nil, fmt.Errorf("record pod mappings for existing pod %q: %w", uid, err)
		}
	}
	return m, nil
}

func (m *Manager) record(uid types.UID, content []byte) error {
	mp, err := Decode(content)
	if err != nil {
		return err
	}
	return m.alloc.Record(uid, mp)
}

// PodMapping returns the pod's user namespace mapping, or nil when the
// pod runs in the host's user namespace (hostUsers unset or true). A pod
// with hostUsers: false is refused, with upstream's message, when the
// runtime handler does not declare user namespace support; otherwise it
// gets the mapping its directory holds, or a new one, written there
// before it is returned.
func (m *Manager) PodMapping(ctx context.Context, pod *corev1.Pod, handler string) (*Mapping, error) {
	if !WantsUserNamespace(pod) {
		return nil, nil
	}
	if err := HandlerSupports(m.cfg.Handlers(), handler); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	content, err := m.store.read(pod.UID)
	if err != nil {
		return nil, err
	}
	if content != nil {
		if err := m.record(pod.UID, content); err != nil {
			return nil, fmt.Errorf("user namespace: %w", err)
		}
		mp, _ := m.alloc.Get(pod.UID)
		return &mp, nil
	}
	mp, err := m.alloc.Allocate(pod.UID, m.cfg.Pick)
	if err == nil {
		if err = m.store.write(pod.UID, Encode(mp)); err != nil {
			m.alloc.Release(pod.UID)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create user namespace: %w", err)
	}
	klog.FromContext(ctx).V(5).Info("New pod user namespace allocation", "podUID", pod.UID, "hostID", mp.HostID)
	return &mp, nil
}

// Release frees the pod's mapping and removes its file (upstream
// Release, once the pod has terminated: podsync).
func (m *Manager) Release(ctx context.Context, uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.releaseLocked(ctx, uid)
}

func (m *Manager) releaseLocked(ctx context.Context, uid types.UID) {
	if !m.alloc.Release(uid) {
		return
	}
	klog.FromContext(ctx).V(5).Info("Releasing pod user namespace allocation", "podUID", uid)
	if err := m.store.remove(uid); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to remove a released user namespace mapping", "podUID", uid)
	}
}

// Forget frees the mapping of a pod that is gone (podgone.Owner): pods
// that left while berth was down, whose mappings New read back, are
// housekeeping's orphans (upstream's
// CleanupOrphanedPodUsernsAllocations). It is Release.
func (m *Manager) Forget(ctx context.Context, uid types.UID) { m.Release(ctx, uid) }

// HeldPods lists the pods holding a mapping (podgone.Holder).
func (m *Manager) HeldPods() []types.UID {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.alloc.Pods()
}
