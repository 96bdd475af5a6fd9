package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/volumes/subpath"
	"github.com/berthk8s/berth/internal/volumes/transient"
)

// refreshPeriod is how often Run re-fetches configMaps and secrets, checks
// tokens and rewrites downward API files of set-up pods.
const refreshPeriod = time.Minute

// EventRecorder records FailedMount warnings about a pod.
type EventRecorder interface {
	Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
}

// PodCertificates keeps the credentials of projected podCertificate
// sources (internal/volumes/podcert): Bundle returns the private key (PEM)
// and certificate chain of the source at index of a pod's projected
// volume, or why there are none yet (podcert.ErrNotIssued while the first
// certificate is not issued).
type PodCertificates interface {
	Bundle(ctx context.Context, pod *corev1.Pod, volume string, index int) (key, chain []byte, err error)
}

// SubPathCleaner unmounts and removes the subPath binds of a pod (package
// subpath).
type SubPathCleaner interface {
	CleanPod(ctx context.Context, podDir string) error
}

// Config configures a Manager.
type Config struct {
	// PodsDir is <root-dir>/pods; a pod's volumes live in
	// PodsDir/<uid>/volumes/<plugin>/<name>.
	PodsDir string
	// Client requests tokens; nil in standalone mode, where projected
	// token volumes fail to set up.
	Client kubernetes.Interface
	// Objects reads configMaps and secrets; nil fails those volumes.
	Objects Objects
	// Clock drives refreshes and token expiry (required).
	Clock clock.WithTicker
	// NodeName is the node's name (for logs).
	NodeName string
	// Recorder gets FailedMount warnings; nil records nothing.
	Recorder EventRecorder
	// Mounter mounts tmpfs, hugetlbfs, nfs, binds and local block
	// devices; nil means SysMounter{}.
	Mounter Mounter
	// PluginsDir is <root-dir>/plugins: a local persistent volume on a
	// block device is mounted once for all its pods at
	// PluginsDir/kubernetes.io/local-volume/mounts/<pv name>, a fibre
	// channel disk at PluginsDir/kubernetes.io/fc/<disk>, as upstream's.
	// Empty refuses such volumes.
	PluginsDir string
	// FC is where fibre channel disks are found; the zero value is the
	// host's /dev and /sys.
	FC FCHost
	// NodeAllocatable, when set, gives the values of downward API limits a
	// container does not set.
	NodeAllocatable func() corev1.ResourceList
	// SubPaths removes the pod's subPath binds at TearDown; nil means a
	// subpath.Binder of its own.
	SubPaths SubPathCleaner
	// CSI publishes CSI volumes (csi.Mounter); nil fails them (berth
	// runs standalone).
	CSI CSI
	// BootID is the machine's boot ID: a CSI volume published in this
	// boot is not published again after berth restarts. Empty publishes
	// again.
	BootID string
	// PodCertificates gives the key and certificate chain of projected
	// podCertificate sources (podcert.Manager); nil fails them (berth runs
	// standalone).
	PodCertificates PodCertificates
	// Expander expands CSI volumes on the node when their claims grow
	// (csi.Mounter); nil expands nothing.
	Expander CSIExpander
	// ClaimRecorder gets the events about claims of their expansion; nil
	// records none.
	ClaimRecorder ClaimEventRecorder
	// Retry is how token requests and configMap and secret reads retry
	// failures that clear on their own; zero Attempts means
	// transient.DefaultPolicy.
	Retry transient.Policy
	// Stages records each volume's set-up in pods' start timelines
	// (StageRecorder); nil records none.
	Stages StageRecorder
	// SELinux says whether a CSI volume's filesystem carries SELinux
	// labels (platform/selinux.Host); nil: none does.
	SELinux SELinuxHost
}

// Manager sets up and tears down the volumes of pods and keeps the content
// of configMap, secret, downwardAPI and projected volumes current.
//
// Concurrency: SetUp, TearDown and Update are safe for concurrent use
// across pods; the caller does not call SetUp and TearDown concurrently for
// the same pod (Run's refreshes are serialised with them per pod).
type Manager struct {
	cfg  Config
	wake chan struct{} // capacity 1: Update asks Run for a refresh round

	mu   sync.Mutex // guards pods (the map only; each podState has its own lock)
	pods map[types.UID]*podState

	// localMu serialises the device mounts of local persistent volumes
	// with their pods' binds: a device is unmounted only when no pod
	// binds it, and never between a pod's check and its bind.
	localMu sync.Mutex
}

// podState is what the Manager remembers about one pod.
type podState struct {
	latest atomic.Pointer[corev1.Pod]     // newest pod object, from SetUp or Update
	dirty  atomic.Bool                    // Update saw a change not yet written
	stats  atomic.Pointer[PodStatVolumes] // the StatVolumes of the last successful SetUp

	mu       sync.Mutex                                // serialises set-up, refresh and tear-down of the pod; guards the fields below
	ready    bool                                      // a SetUp succeeded: Run refreshes the pod
	written  map[string]bool                           // volumes whose content this process wrote
	tokens   map[string]*authenticationv1.TokenRequest // by tokenKey
	claims   map[string]*claimed                       // by volume name: claims resolved to their volumes
	reported map[string]bool                           // FailedMount messages already recorded
	seen     time.Time                                 // when the Manager first heard of the pod (set once)
}

// New validates cfg and returns a Manager; it starts nothing.
func New(cfg Config) (*Manager, error) {
	if cfg.PodsDir == "" {
		return nil, errors.New("volume manager needs PodsDir")
	}
	if cfg.Clock == nil {
		return nil, errors.New("volume manager needs Clock")
	}
	if cfg.Mounter == nil {
		cfg.Mounter = SysMounter{}
	}
	if cfg.SubPaths == nil {
		cfg.SubPaths = subpath.New(subpath.Config{})
	}
	if cfg.Retry.Attempts == 0 {
		cfg.Retry = transient.DefaultPolicy()
	}
	return &Manager{cfg: cfg, wake: make(chan struct{}, 1), pods: map[types.UID]*podState{}}, nil
}

func (m *Manager) state(uid types.UID) *podState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.pods[uid]
	if st == nil {
		st = &podState{
			written: map[string]bool{}, tokens: map[string]*authenticationv1.TokenRequest{}, claims: map[string]*claimed{},
			reported: map[string]bool{}, seen: m.cfg.Clock.Now(),
		}
		m.pods[uid] = st
	}
	return st
}

// SetUp sets up every volume of pod and returns volume name -> host
// directory (for hostPath, the host path). It is idempotent; an error names
// each failed volume and its reason, and is recorded as a FailedMount event
// once per distinct message.
func (m *Manager) SetUp(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	st := m.state(pod.UID)
	st.latest.Store(pod)
	st.mu.Lock()
	defer st.mu.Unlock()
	paths, err := m.setUpPod(ctx, pod, st, false)
	if err == nil {
		st.ready = true
		st.dirty.Store(false)
		st.publishStats(pod)
	}
	return paths, err
}

// Update records a changed pod object; Run rewrites its downward API files
// in its next round, which Update starts.
func (m *Manager) Update(pod *corev1.Pod) {
	m.mu.Lock()
	st := m.pods[pod.UID]
	m.mu.Unlock()
	if st == nil {
		return
	}
	st.latest.Store(pod)
	st.dirty.Store(true)
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// TearDown unmounts the subPath binds and the tmpfs volumes of a terminated
// pod, unpublishes its CSI volumes and unmaps its CSI block volumes, removes PodsDir/<uid>/volume-subpaths, PodsDir/<uid>/volumes and
// the volumes' ready markers, and forgets the pod. An error means
// something may still be mounted: the caller must keep the pod directory
// (never remove it recursively).
func (m *Manager) TearDown(ctx context.Context, uid types.UID) error {
	m.mu.Lock()
	st := m.pods[uid]
	delete(m.pods, uid)
	m.mu.Unlock()
	if st != nil {
		// Wait for a refresh of the pod in flight.
		st.mu.Lock()
		defer st.mu.Unlock()
	}
	podDir := filepath.Join(m.cfg.PodsDir, string(uid))
	// The binds first: one of a hostPath subPath shows host files.
	if err := m.cfg.SubPaths.CleanPod(ctx, podDir); err != nil {
		return err
	}
	if err := m.tearDownDir(ctx, filepath.Join(podDir, "volumes")); err != nil {
		return err
	}
	if err := m.tearDownCSIBlocks(ctx, uid, filepath.Join(podDir, volumeDevicesDir)); err != nil {
		return err
	}
	// Links to block devices only: RemoveAll follows no symlink.
	if err := os.RemoveAll(filepath.Join(podDir, volumeDevicesDir)); err != nil {
		return fmt.Errorf("remove volume device links: %w", err)
	}
	if err := m.releaseFCBlocks(ctx, string(uid)); err != nil {
		return err
	}
	markers := readyMarkers(m.cfg.PodsDir, uid)
	if err := os.RemoveAll(markers); err != nil {
		return fmt.Errorf("remove ready markers %q: %w", markers, err)
	}
	return nil
}

// Forget drops what the Manager remembers of a pod that is gone
// (podgone.Owner). It unmounts nothing: a pod is gone only once its
// volumes were torn down (TearDown), by its worker or by housekeeping.
func (m *Manager) Forget(_ context.Context, uid types.UID) {
	m.mu.Lock()
	delete(m.pods, uid)
	m.mu.Unlock()
}

func (m *Manager) tearDownDir(ctx context.Context, volumesDir string) error {
	if err := m.tearDownCSI(ctx, volumesDir); err != nil {
		return err
	}
	dirs, err := filepath.Glob(filepath.Join(volumesDir, "*", "*"))
	if err != nil {
		return fmt.Errorf("list volumes in %q: %w", volumesDir, err)
	}
	for _, dir := range dirs {
		mounted, err := m.cfg.Mounter.IsMountPoint(dir)
		if err != nil {
			return fmt.Errorf("check mount %q: %w", dir, err)
		}
		if mounted {
			if err := m.cfg.Mounter.Unmount(dir); err != nil {
				return fmt.Errorf("unmount volume %q: %w", dir, err)
			}
			klog.FromContext(ctx).V(4).Info("Unmounted volume", "path", dir)
		}
		// A bind or nfs mount shows data that outlives the pod: its mount
		// point must be empty once unmounted, or nothing below it is
		// removed.
		plugin := filepath.Base(filepath.Dir(dir))
		if plugin == localVolumePlugin || plugin == nfsPlugin || plugin == fcPlugin {
			if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove volume mount point %q: %w", dir, err)
			}
		}
		if plugin == localVolumePlugin {
			if err := m.releaseLocalDevice(ctx, filepath.Base(dir)); err != nil {
				return err
			}
		}
	}
	if err := m.releaseFCDisks(ctx); err != nil {
		return err
	}
	if err := RemoveOneFilesystem(volumesDir); err != nil {
		return fmt.Errorf("remove volumes %q: %w", volumesDir, err)
	}
	return nil
}

// Run refreshes set-up pods every minute and after Update until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	ticker := m.cfg.Clock.NewTicker(refreshPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			m.refresh(ctx, false)
		case <-m.wake:
			m.refresh(ctx, true)
		}
	}
}

// refresh rewrites the volumes of every set-up pod (only those Update
// marked when dirtyOnly).
func (m *Manager) refresh(ctx context.Context, dirtyOnly bool) {
	m.mu.Lock()
	states := make([]*podState, 0, len(m.pods))
	for _, st := range m.pods {
		states = append(states, st)
	}
	m.mu.Unlock()
	for _, st := range states {
		if ctx.Err() != nil {
			return
		}
		if dirtyOnly && !st.dirty.Load() {
			continue
		}
		m.refreshPod(ctx, st)
	}
}

func (m *Manager) refreshPod(ctx context.Context, st *podState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.ready {
		return
	}
	pod := st.latest.Load()
	m.mu.Lock()
	forgotten := m.pods[pod.UID] != st
	m.mu.Unlock()
	if forgotten {
		return
	}
	st.dirty.Store(false)
	if _, err := m.setUpPod(ctx, pod, st, true); err != nil {
		klog.FromContext(ctx).Error(err, "Refresh of pod volumes failed", "pod", klog.KObj(pod))
	}
}

// recordFailure records a FailedMount warning once per distinct message.
func (m *Manager) recordFailure(pod *corev1.Pod, st *podState, volume string, err error) {
	msg, reason := fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", volume, err), ""
	if whole, r, ok := isVolumeError(err); ok {
		msg, reason = whole, r
	}
	if reason == "" {
		reason = "FailedMount"
	}
	if st.reported[msg] || m.cfg.Recorder == nil {
		return
	}
	st.reported[msg] = true
	m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, reason, "%s", msg)
}
