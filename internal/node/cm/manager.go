package cm

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Manager keeps the cgroupsPerQOS hierarchy: Start creates kubepods and the
// QoS cgroups, EnsurePod a pod's cgroup before its sandbox, Cleanup keeps
// the QoS shares current and removes the cgroups of pods gone for good.
//
// A Manager is safe for concurrent use: pod workers call EnsurePod and the
// housekeeping goroutine Cleanup. mu serializes the changes to the
// hierarchy, so a pod's cgroup is never created and removed at once.
type Manager struct {
	cfg Config
	fs  *cgroupfs

	mu sync.Mutex
	// lastQOS is what the QoS level cgroups were last set to (guarded
	// by mu).
	lastQOS QOSResources
	// allocatablePending: kubepods' limits could not be set yet (guarded
	// by mu); Cleanup retries until they are.
	allocatablePending bool
}

// New validates cfg and returns a Manager; it touches nothing (Start does).
func New(cfg Config) (*Manager, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure container manager: %w", err)
	}
	mounts := cfg.Mounts
	if mounts == nil {
		var err error
		if mounts, err = hostMounts(); err != nil {
			return nil, fmt.Errorf("configure container manager: %w", err)
		}
	}
	m := &Manager{cfg: cfg}
	m.fs = &cgroupfs{cfg: &m.cfg, mounts: mounts, apply: libApply}
	return m, nil
}

// Start lays out the hierarchy before any pod runs, as upstream's setupNode
// and QoS manager: cgroupRoot must exist; kubepods is created (or updated)
// with the node allocatable limits; the reserved cgroups are limited where
// enforceNodeAllocatable asks; burstable and besteffort are created (or
// updated) with their cpu shares.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	root := m.cfg.rootName()
	if ok, err := m.fs.exists(root); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("check cgroup root %q: it does not exist", root.Cgroupfs())
	}
	if err := m.fs.create(m.cfg.kubepods(), Resources{}); err != nil {
		return fmt.Errorf("create node allocatable cgroup: %w", err)
	}
	m.enforceAllocatable(ctx)
	if err := m.enforceReserved(ctx); err != nil {
		return err
	}
	if err := m.startQOS(ctx); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Created the pod cgroup hierarchy", "kubepods", m.cfg.kubepods().Cgroupfs(),
		"driver", m.cfg.Driver, "enforceNodeAllocatable", m.cfg.EnforceNodeAllocatable)
	return nil
}

// startQOS creates (or updates) burstable and besteffort with ForQOS's
// resources for no pods, and on cgroup v2 resets the memory protection an
// earlier configuration may have left (staleProtection); a failed reset of
// kubepods is logged, as upstream. mu held.
func (m *Manager) startQOS(ctx context.Context) error {
	q := ForQOS(nil, m.cfg.qosOptions())
	staleKubepods, staleBurstable := staleProtection(m.cfg.Pod.Memory)
	burstable := q.Burstable
	if staleBurstable != nil {
		burstable.Unified = staleBurstable
	}
	for class, r := range map[corev1.PodQOSClass]Resources{corev1.PodQOSBurstable: burstable, corev1.PodQOSBestEffort: q.BestEffort} {
		if err := m.fs.create(m.cfg.qosName(class), r); err != nil {
			return fmt.Errorf("create %s QoS cgroup: %w", class, err)
		}
	}
	kubepods := q.Kubepods
	if staleKubepods != nil {
		kubepods.Unified = staleKubepods
	}
	if !reflect.DeepEqual(kubepods, Resources{}) {
		if err := m.fs.update(m.cfg.kubepods(), kubepods); err != nil {
			klog.FromContext(ctx).Error(err, "Failed to reset memory protection on the node allocatable cgroup")
		}
	}
	m.lastQOS = q
	return nil
}

// enforceAllocatable sets kubepods' limits (mu held). As upstream, a
// failure does not stop berth: pods may already use more than the new
// limit until they are evicted, so it is logged and retried by Cleanup.
func (m *Manager) enforceAllocatable(ctx context.Context) {
	err := m.fs.update(m.cfg.kubepods(), m.cfg.kubepodsResources())
	logger := klog.FromContext(ctx)
	switch {
	case err != nil && !m.allocatablePending:
		logger.Error(err, "Failed to enforce node allocatable; retrying", "cgroup", m.cfg.kubepods().Cgroupfs())
	case err == nil && m.allocatablePending:
		logger.Info("Enforced node allocatable", "cgroup", m.cfg.kubepods().Cgroupfs())
	}
	m.allocatablePending = err != nil
}

// enforceReserved limits the reserved cgroups as upstream's
// enforceExistingCgroup: they must exist; "-compressible" sets cpu only.
func (m *Manager) enforceReserved(ctx context.Context) error {
	for _, r := range []struct {
		full, compressible string
		cgroup             string
		reserved           corev1.ResourceList
	}{
		{EnforceSystemReserved, EnforceSystemReservedCompressed, m.cfg.SystemReservedCgroup, m.cfg.SystemReserved},
		{EnforceKubeReserved, EnforceKubeReservedCompressed, m.cfg.KubeReservedCgroup, m.cfg.KubeReserved},
	} {
		full, compressible := m.cfg.enforced(r.full), m.cfg.enforced(r.compressible)
		if !full && !compressible {
			continue
		}
		name := m.cfg.reservedName(r.cgroup)
		if ok, err := m.fs.exists(name); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("enforce %s on cgroup %q: it does not exist", r.full, r.cgroup)
		}
		if err := m.fs.update(name, reservedMemoryMin(ForReserved(r.reserved, compressible), m.cfg.Pod.Memory)); err != nil {
			return fmt.Errorf("enforce %s on cgroup %q: %w", r.full, r.cgroup, err)
		}
		klog.FromContext(ctx).Info("Enforced reserved resources", "cgroup", r.cgroup, "limits", r.reserved, "compressibleOnly", compressible)
	}
	return nil
}

// PodCgroupParent returns the pod's cgroup in the driver's form, the
// sandbox's cgroup_parent.
func (m *Manager) PodCgroupParent(pod *corev1.Pod) (string, error) {
	return m.cfg.driverName(m.cfg.podName(podutil.QOSClass(pod), pod.UID))
}

// EnsurePod makes sure the pod's cgroup exists, as upstream's SyncPod:
// when it does not, the QoS shares are brought up to date with active
// (which should hold pod) and the pod cgroup is created with ForPod's
// resources. An existing pod cgroup is left as it is (ResizePod changes
// it).
func (m *Manager) EnsurePod(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) error {
	if err := podutil.ValidateUID(pod.UID); err != nil {
		return fmt.Errorf("create pod cgroup: %w", err)
	}
	name := m.cfg.podName(podutil.QOSClass(pod), pod.UID)
	m.mu.Lock()
	defer m.mu.Unlock()
	ok, err := m.fs.exists(name)
	if err != nil || ok {
		return err
	}
	if err := m.updateQOS(ctx, append(append([]*corev1.Pod{}, active...), pod)); err != nil {
		return err
	}
	if err := m.fs.create(name, ForPod(pod, m.podOptions())); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Created pod cgroup", "pod", klog.KObj(pod), "cgroup", name.Cgroupfs())
	return nil
}

// ResizePod sets the cgroup of a pod resized in place from one
// allocation (from) to another (to), of the same QoS class: with widen,
// to the larger of ForPod's values for each (Widen), so that containers
// can be set to either; without, to ForPod(to). A pod without its cgroup
// yet is left alone: EnsurePod creates it with to's resources.
func (m *Manager) ResizePod(ctx context.Context, from, to *corev1.Pod, widen bool) error {
	if err := podutil.ValidateUID(to.UID); err != nil {
		return fmt.Errorf("resize pod cgroup: %w", err)
	}
	name := m.cfg.podName(podutil.QOSClass(to), to.UID)
	m.mu.Lock()
	defer m.mu.Unlock()
	if ok, err := m.fs.exists(name); err != nil || !ok {
		return err
	}
	opts := m.podOptions()
	want := ForPod(to, opts)
	if widen {
		have := ForPod(from, opts)
		if err := m.checkMemoryDecrease(name, have, want); err != nil {
			return err
		}
		want = Widen(have, want)
	}
	if err := m.fs.update(name, want); err != nil {
		return fmt.Errorf("resize pod cgroup %q: %w", name.Cgroupfs(), err)
	}
	klog.FromContext(ctx).V(2).Info("Resized pod cgroup", "pod", klog.KObj(to), "cgroup", name.Cgroupfs(), "widen", widen)
	return nil
}

// checkMemoryDecrease is upstream's validateMemoryResizeAction for the
// pod: a pod memory limit that is lowered (or set) must stay above the
// pod cgroup's usage (mu held).
func (m *Manager) checkMemoryDecrease(name Name, have, want Resources) error {
	if want.Memory == nil || *want.Memory <= 0 || (have.Memory != nil && *have.Memory > 0 && *want.Memory >= *have.Memory) {
		return nil
	}
	usage, err := m.fs.memoryUsage(name)
	if err != nil {
		return fmt.Errorf("cannot decrease memory limits: unable to read pod memory usage: %w", err)
	}
	if usage >= *want.Memory {
		return fmt.Errorf("cannot decrease memory limits: attempting to set pod memory limit (%d) below current usage (%d)", *want.Memory, usage)
	}
	return nil
}

// podOptions are the pod cgroups' settings, with the node's allocatable
// memory.
func (m *Manager) podOptions() PodOptions {
	opts := m.cfg.Pod
	opts.Memory.AllocatableMemory = m.cfg.allocatableMemory()
	return opts
}

// updateQOS sets the QoS level cgroups to ForQOS's resources for the
// active pods, each one only when it changed (mu held). active may hold a
// pod twice; each UID counts once.
func (m *Manager) updateQOS(ctx context.Context, active []*corev1.Pod) error {
	seen := make(map[types.UID]bool, len(active))
	pods := make([]*corev1.Pod, 0, len(active))
	for _, p := range active {
		if !seen[p.UID] && !podutil.IsTerminal(p.Status.Phase) {
			seen[p.UID] = true
			pods = append(pods, p)
		}
	}
	want := ForQOS(pods, m.cfg.qosOptions())
	changed := false
	for _, c := range []struct {
		name      Name
		want, got *Resources
	}{
		{m.cfg.kubepods(), &want.Kubepods, &m.lastQOS.Kubepods},
		{m.cfg.qosName(corev1.PodQOSBurstable), &want.Burstable, &m.lastQOS.Burstable},
		{m.cfg.qosName(corev1.PodQOSBestEffort), &want.BestEffort, &m.lastQOS.BestEffort},
	} {
		if reflect.DeepEqual(*c.want, *c.got) {
			continue
		}
		if err := m.fs.update(c.name, *c.want); err != nil {
			if !m.capQOSToUsage(ctx, c.name, *c.want) {
				return fmt.Errorf("update QoS cgroups: %w", err)
			}
			// Capped, not yet as wanted: the next round tries again.
			continue
		}
		*c.got = *c.want
		changed = true
	}
	if changed {
		klog.FromContext(ctx).V(4).Info("Updated QoS cgroups", "burstableShares", *want.Burstable.CPUShares)
	}
	return nil
}

// capQOSToUsage retries a QoS class whose qosReserved memory limit could
// not be set with the limit capped to its usage (capToUsage), as upstream;
// it reports whether that succeeded (mu held).
func (m *Manager) capQOSToUsage(ctx context.Context, name Name, want Resources) bool {
	if m.cfg.QOSReservedMemory == nil || want.Memory == nil {
		return false
	}
	usage, err := m.fs.memoryUsage(name)
	if err != nil {
		return false
	}
	capped := capToUsage(want, usage)
	if capped.Memory == want.Memory || m.fs.update(name, capped) != nil {
		return false
	}
	klog.FromContext(ctx).V(2).Info("QoS cgroup uses more memory than qosReserved leaves it; limited to its usage", "cgroup", name.Cgroupfs(), "usage", usage, "limit", *want.Memory)
	return true
}

// Cleanup retries node allocatable until it is enforced, brings the QoS
// shares up to date with the active pods and
// removes the cgroups of pods gone for good (gone: no source wants them,
// no worker knows them, the runtime has nothing of them), as upstream's
// cleanupOrphanedPodCgroups; after a restart that removes the cgroups of
// pods that went while berth was down. A pod cgroup that still holds
// processes stays, and the next round tries again.
func (m *Manager) Cleanup(ctx context.Context, active []*corev1.Pod, gone func(types.UID) bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.allocatablePending {
		m.enforceAllocatable(ctx)
	}
	errs := []error{m.updateQOS(ctx, active)}
	for _, class := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		parent := m.cfg.qosName(class)
		children, err := m.fs.children(parent)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, c := range children {
			if ctx.Err() != nil {
				// Stopping: the next start's first pass finishes the job.
				return errors.Join(append(errs, context.Cause(ctx))...)
			}
			uid, ok := podUIDFromComponent(c, m.cfg.Driver == DriverSystemd)
			if !ok || podutil.ValidateUID(uid) != nil || !gone(uid) {
				continue
			}
			name := m.cfg.podName(class, uid)
			if err := m.fs.destroy(name); err != nil {
				errs = append(errs, err)
				continue
			}
			klog.FromContext(ctx).V(2).Info("Removed orphaned pod cgroup", "podUID", uid, "cgroup", name.Cgroupfs())
		}
	}
	return errors.Join(errs...)
}

// MemoryCgroups are the v1 memory controller's directories of the root
// cgroup and of kubepods (node allocatable), which the eviction manager's
// kernel memcg notifications watch; ok is false on cgroup v2, which has
// no such notifications, or without a memory controller.
func (m *Manager) MemoryCgroups() (root, pods string, ok bool) {
	mount, found := m.fs.mounts["memory"]
	if m.fs.unified() || !found {
		return "", "", false
	}
	paths, err := m.fs.paths(m.cfg.kubepods())
	if err != nil {
		return "", "", false
	}
	return mount, paths["memory"], true
}
