package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/node/devicemanager/checkpoint"
)

// DefaultDir is upstream's device plugin directory (pluginapi.DevicePluginPath).
const DefaultDir = "/var/lib/kubelet/device-plugins"

// SocketName is the Registration service's socket in the directory.
const SocketName = "kubelet.sock"

// endpointStopGracePeriod is how long a resource whose plugin went away
// stays in capacity (upstream's).
const endpointStopGracePeriod = 5 * time.Minute

// Config is what New needs.
type Config struct {
	// Dir is the device plugin directory (DefaultDir outside tests): the
	// registration socket, the plugins' sockets and the checkpoint.
	Dir   string
	Clock clock.Clock
	// ActivePods are the desired pods that still count against the node
	// (podworker.Workers.ActivePods, admission's rule; upstream's
	// activePods): a container about to start of a pod not among them is
	// not given devices again (ContainerOptions). Admission frees the
	// devices of pods gone with RemoveStale.
	ActivePods func() []*corev1.Pod
	// SourcesReady reports whether every pod source has been seen; until
	// then no devices are freed and containers found running at start
	// keep theirs without a plugin (upstream's kubelet restart flow).
	SourcesReady func() bool
	// Running are the containers the runtime ran at start, pod UID ->
	// container names (upstream's initial container map and running set).
	Running map[string]sets.Set[string]
	// NUMANodes are the host's NUMA node IDs, for topology hints.
	NUMANodes []int
	// Changed is told when capacity or allocatable may have changed (a
	// node status update is due); nil for none.
	Changed func()
}

// Manager is the device manager. Build it with New, serve registrations
// with Run; its other methods may be called from any goroutine. One mutex
// guards the state below.
type Manager struct {
	cfg Config
	// fresh: the device plugin directory held nothing when New ran (set
	// once, then only read).
	fresh bool
	mu    sync.Mutex
	// endpoints is each resource's plugin, the last registered; a stopped
	// one stays for the grace period.
	endpoints map[string]*endpoint
	// connected are the connected plugins, resource -> socket path.
	connected map[string]map[string]*endpoint
	// devices are each resource's devices as its plugin last listed them.
	devices map[string]map[string]*pluginapi.Device
	// healthy and unhealthy split each registered resource's device IDs.
	healthy, unhealthy map[string]sets.Set[string]
	// allocated are the device IDs given to containers, by resource.
	allocated map[string]sets.Set[string]
	// pods are the containers' assignments.
	pods podDevices
	// reuse are the devices the pod being admitted may give its next
	// container (its init containers'), resource -> IDs; reuseFor names it.
	reuse    map[string]sets.Set[string]
	reuseFor string
	// unseen are the pods with containers running at start that
	// admission has not seen again yet: RemoveStale keeps their devices
	// (the pods of one batch are admitted one after the other).
	unseen sets.Set[string]
	// updates carries the pods whose devices' health changed (Updates);
	// never blocked on.
	updates chan types.UID
}

// New validates cfg and restores the checkpoint (an unreadable one is
// logged and ignored, as upstream); it starts nothing.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Dir == "" || cfg.Clock == nil || cfg.ActivePods == nil || cfg.SourcesReady == nil {
		return nil, errors.New("create device manager: Dir, Clock, ActivePods and SourcesReady are required")
	}
	m := &Manager{
		cfg: cfg, endpoints: map[string]*endpoint{}, connected: map[string]map[string]*endpoint{},
		devices: map[string]map[string]*pluginapi.Device{}, healthy: map[string]sets.Set[string]{},
		unhealthy: map[string]sets.Set[string]{}, allocated: map[string]sets.Set[string]{}, pods: podDevices{},
		unseen: sets.KeySet(cfg.Running), updates: make(chan types.UID, 100),
	}
	m.fresh = emptyDir(cfg.Dir)
	c, found, err := checkpoint.Read(cfg.Dir)
	switch {
	case err != nil:
		klog.FromContext(ctx).Error(err, "Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date")
	case found:
		m.restore(ctx, c)
	}
	return m, nil
}

// restore takes the checkpoint's assignments; each registered resource
// waits, at capacity 0, for its plugin behind a stopped endpoint.
func (m *Manager) restore(ctx context.Context, c checkpoint.Checkpoint) {
	m.pods.fromEntries(ctx, c.Entries)
	m.allocated = m.pods.devices()
	for name := range c.Registered {
		m.healthy[name], m.unhealthy[name] = sets.New[string](), sets.New[string]()
		m.endpoints[name] = &endpoint{resource: name, stopped: m.cfg.Clock.Now()}
	}
}

// checkpointLocked writes the assignments and the healthy devices (a
// failure is logged and returned); the caller holds mu.
func (m *Manager) checkpointLocked(ctx context.Context) error {
	registered := map[string][]string{}
	for name, ids := range m.healthy {
		registered[name] = sets.List(ids)
	}
	if err := checkpoint.Write(m.cfg.Dir, checkpoint.Checkpoint{Entries: m.pods.entries(ctx), Registered: registered}); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to write checkpoint file")
		return fmt.Errorf("failed to write checkpoint file %q: %w", checkpoint.FileName, err)
	}
	return nil
}

func (m *Manager) changed() {
	if m.cfg.Changed != nil {
		m.cfg.Changed()
	}
}

// Capacity is the device plugin resources for node status (upstream's
// GetCapacity): capacity counts every device, allocatable the healthy
// ones; removed are the resources whose plugin stayed away past the grace
// period, which node status reports at 0 and the manager forgets.
func (m *Manager) Capacity(ctx context.Context) (capacity, allocatable corev1.ResourceList, removed []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	capacity, allocatable = corev1.ResourceList{}, corev1.ResourceList{}
	gone := sets.New[string]()
	now := m.cfg.Clock.Now()
	for _, name := range slices.Sorted(maps.Keys(m.healthy)) {
		e, ok := m.endpoints[name]
		if !ok || e.graceExpired(now) {
			gone.Insert(name)
			continue
		}
		n := int64(m.healthy[name].Len())
		capacity[corev1.ResourceName(name)] = *resource.NewQuantity(n+int64(m.unhealthy[name].Len()), resource.DecimalSI)
		allocatable[corev1.ResourceName(name)] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	for name := range gone {
		delete(m.endpoints, name)
		delete(m.healthy, name)
		delete(m.unhealthy, name)
	}
	if gone.Len() > 0 {
		_ = m.checkpointLocked(ctx) // logged
	}
	return capacity, allocatable, sets.List(gone)
}

// Updates carries the UID of each pod whose devices' health changed (or
// whose device came back in its plugin's list), for a sync that shows it
// in the pod's status (upstream's Updates). A full channel drops the
// update, as upstream; the pod's next sync shows it then.
func (m *Manager) Updates() <-chan types.UID { return m.updates }

// Forget frees the pod's devices (the pod-gone route).
func (m *Manager) Forget(ctx context.Context, uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unseen.Delete(string(uid))
	if _, ok := m.pods[string(uid)]; !ok {
		return
	}
	delete(m.pods, string(uid))
	m.allocated = m.pods.devices()
	_ = m.checkpointLocked(ctx) // logged
}

// HeldPods are the pods holding devices (restored ones included), for
// housekeeping's orphans.
func (m *Manager) HeldPods() []types.UID {
	m.mu.Lock()
	defer m.mu.Unlock()
	uids := make([]types.UID, 0, len(m.pods))
	for uid := range m.pods {
		uids = append(uids, types.UID(uid))
	}
	return uids
}

// Device is one device as the pod resources API lists it: its ID and the
// NUMA nodes it sits on (none: no topology).
type Device struct {
	ID   string
	NUMA []int64
}

// GetDevices are the devices the container holds, by resource, each
// sorted by ID (upstream's GetDevices, for the pod resources API's List
// and Get); nil when it holds none.
func (m *Manager) GetDevices(podUID, container string) map[string][]Device {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pods.containerResources(podUID, container)
}

// GetAllocatableDevices are the healthy devices of every registered
// resource, by resource, each sorted by ID, with their NUMA nodes
// (upstream's GetAllocatableDevices, for GetAllocatableResources).
func (m *Manager) GetAllocatableDevices() map[string][]Device {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]Device{}
	for name, ids := range m.healthy {
		devs, ok := m.devices[name]
		if !ok {
			continue
		}
		list := []Device{}
		for _, id := range sets.List(ids) {
			if d, ok := devs[id]; ok {
				list = append(list, Device{ID: id, NUMA: numaNodes(d)})
			}
		}
		out[name] = list
	}
	return out
}

// numaNodes are the NUMA nodes of a device's topology, nil for none.
func numaNodes(d *pluginapi.Device) []int64 {
	var out []int64
	for _, n := range d.GetTopology().GetNodes() {
		out = append(out, n.GetID())
	}
	return out
}

// PluginResources is node for admission's predicates once pod's devices
// are allocated (upstream's UpdatePluginResources and
// sanitizeNodeAllocatable): for a pod holding devices, each device plugin
// resource's allocatable is raised to at least the devices given out, so
// pods admitted again after a restart keep theirs while their plugin has
// not registered again. node is not modified; a copy is returned when
// something changed.
func (m *Manager) PluginResources(pod *corev1.Pod, node *corev1.Node) *corev1.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.pods[string(pod.UID)]; !ok {
		return node
	}
	var out *corev1.Node
	for name, ids := range m.allocated {
		q, ok := node.Status.Allocatable[corev1.ResourceName(name)]
		if ok && q.Value() >= int64(ids.Len()) {
			continue
		}
		if out == nil {
			out = node.DeepCopy()
			if out.Status.Allocatable == nil {
				out.Status.Allocatable = corev1.ResourceList{}
			}
		}
		out.Status.Allocatable[corev1.ResourceName(name)] = *resource.NewQuantity(int64(ids.Len()), resource.DecimalSI)
	}
	if out == nil {
		return node
	}
	return out
}

// ResourceHealth is the health of the container's devices, one
// ResourceStatus per resource (by name) with each device (by ID), for its
// status.containerStatuses[].allocatedResourcesStatus (upstream's
// UpdateAllocatedResourcesStatus, ResourceHealthStatus): Healthy or
// Unhealthy as the plugin last listed it (Healthy for a device it no
// longer lists, as upstream); nil for a container without devices.
func (m *Manager) ResourceHealth(podUID, container string) []corev1.ResourceStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	resources := m.pods[podUID][container]
	var out []corev1.ResourceStatus
	for _, name := range slices.Sorted(maps.Keys(resources)) {
		st := corev1.ResourceStatus{Name: corev1.ResourceName(name), Resources: []corev1.ResourceHealth{}}
		for _, id := range sets.List(idsOf(resources[name].devices)) {
			health := corev1.ResourceHealthStatusHealthy
			if d, ok := m.devices[name][id]; ok && d.GetHealth() != pluginapi.Healthy {
				health = corev1.ResourceHealthStatusUnhealthy
			}
			st.Resources = append(st.Resources, corev1.ResourceHealth{ResourceID: corev1.ResourceID(id), Health: health})
		}
		out = append(out, st)
	}
	return out
}

// ShouldResetExtendedResourceCapacity is upstream's: whether a Node that
// already existed at registration has its extended resources zeroed until
// their plugins report them. Yes when the device plugin directory held
// nothing when berth started: no checkpoint and no socket, so this
// machine's device state is new (re-imaged, or its kubelet state wiped) and
// what the Node advertises is not known to be here. Upstream lists the
// directory when asked, which then races its own registration socket;
// berth reads it once, before its socket exists.
func (m *Manager) ShouldResetExtendedResourceCapacity() bool { return m.fresh }

// emptyDir reports whether dir holds no entry (a missing directory is
// empty); one it cannot read is not, as upstream answers no on an error.
func emptyDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && len(entries) == 0
}
