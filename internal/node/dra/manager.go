package dra

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Config is what a Manager is built from.
type Config struct {
	// Client reads the pods' ResourceClaims and wipes the node's
	// ResourceSlices. Nil (standalone): a pod with claims cannot start,
	// and nothing is wiped.
	Client kubernetes.Interface
	// NodeName is the node's name (the slices' spec.nodeName). Required
	// with Client.
	NodeName string
	// StateDir holds StateFileName (the root directory). Required.
	StateDir string
	// Clock times the wipes. Required.
	Clock clock.Clock
	// WipeDelay is how long a driver may stay away before its slices
	// are wiped; zero is upstream's WipeDelay.
	WipeDelay time.Duration
	// Health is the ResourceHealthStatus gate: a driver that offers the
	// DRAResourceHealth service has its devices' health followed
	// (health.go, healthstream.go) for the containers'
	// allocatedResourcesStatus (ClaimHealth). Off: no stream is opened.
	Health bool
	// HealthMessages is the ResourceHealthStatusMessage gate: the
	// drivers' messages are shown beside the health.
	HealthMessages bool
}

// Manager is the node's DRA manager (upstream's pkg/kubelet/cm/dra
// Manager): it prepares the ResourceClaims of a pod with their drivers
// before the pod's sandbox is created, unprepares them when the pod has
// stopped, and says which CDI devices each container gets. The claims
// are kept by namespace/name with the pods that use them, and
// checkpointed in StateDir/StateFileName in upstream's format whenever
// that changes, so a restart forgets no claim to unprepare.
//
// Safe for concurrent use: mu guards claims and the checkpoint writes;
// the drivers are called without it, so different pods prepare at once,
// as upstream.
type Manager struct {
	cfg     Config
	drivers *Drivers

	// health is the drivers' device health; updates carries the pods
	// whose devices' health changed (Updates).
	health  *healthCache
	updates chan types.UID
	// healthErr is why the health checkpoint was not read (Run logs it).
	healthErr error

	mu     sync.Mutex
	claims map[string]*claimEntry
}

// New reads the checkpoints; it starts nothing. A claim checkpoint that
// cannot be read is an error, as upstream's (drain the node and remove
// it); a health checkpoint that cannot be read leaves the health empty,
// as upstream's, and Run logs why.
func New(cfg Config) (*Manager, error) {
	switch {
	case cfg.StateDir == "":
		return nil, errors.New("DRA manager needs a state directory")
	case cfg.Clock == nil:
		return nil, errors.New("DRA manager needs a clock")
	case cfg.Client != nil && cfg.NodeName == "":
		return nil, errors.New("DRA manager needs the node name")
	}
	if cfg.WipeDelay == 0 {
		cfg.WipeDelay = WipeDelay
	}
	restored, err := loadState(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("create DRA manager: %w", err)
	}
	health, healthErr := newHealthCache(cfg.StateDir)
	m := &Manager{cfg: cfg, drivers: newDrivers(cfg.Clock, cfg.WipeDelay), claims: map[string]*claimEntry{},
		health: health, healthErr: healthErr, updates: make(chan types.UID, healthUpdates)}
	if cfg.Health {
		m.drivers.watch = m.watchHealth
	}
	for _, c := range restored {
		m.claims[claimKey(c.Namespace, c.ClaimName)] = &claimEntry{ClaimState: c}
	}
	return m, nil
}

// Drivers is the handler of DRA drivers for the plugin manager.
func (m *Manager) Drivers() *Drivers { return m.drivers }

// Run wipes the node's ResourceSlices of every driver (upstream does at
// start: a driver that is still there publishes its slices again), then
// the slices of each driver that stays away WipeDelay, until ctx ends;
// it closes the drivers' connections then.
func (m *Manager) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer func() {
		close(m.drivers.done)
		wg.Wait()
		m.drivers.close()
	}()
	if m.healthErr != nil {
		klog.FromContext(ctx).Error(m.healthErr, "Failed to load the DRA health checkpoint, proceeding with empty health")
	}
	wg.Go(func() { m.wipe(klog.NewContext(ctx, klog.FromContext(ctx).WithName("startup")), "") })
	for {
		select {
		case <-ctx.Done():
			return nil
		case name := <-m.drivers.due:
			if m.drivers.stillAway(name) {
				wg.Go(func() { m.wipe(ctx, name) })
			}
		}
	}
}

// HeldPods lists the pods that use a claim in the cache (podgone.Holder):
// after a restart, those that left while berth was down have theirs
// unprepared through the route.
func (m *Manager) HeldPods() []types.UID {
	m.mu.Lock()
	defer m.mu.Unlock()
	set := map[types.UID]struct{}{}
	for _, c := range m.claims {
		for uid := range c.PodUIDs {
			set[types.UID(uid)] = struct{}{}
		}
	}
	return slices.Collect(maps.Keys(set))
}

// Forget unprepares what the pod still holds (the pod is gone: its
// syncTerminatingPod's Unprepare failed or never ran, or it left while
// berth was down). A failure is logged; the pod stays held, and
// housekeeping tells the route again.
func (m *Manager) Forget(ctx context.Context, uid types.UID) {
	if err := m.Unprepare(ctx, uid); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to unprepare the dynamic resources of a gone pod, retried later", "podUID", uid)
	}
}

// storeLocked checkpoints the cache, ordered by claim for a stable file.
// m.mu is held.
func (m *Manager) storeLocked() error {
	list := make([]ClaimState, 0, len(m.claims))
	for _, k := range slices.Sorted(maps.Keys(m.claims)) {
		list = append(list, m.claims[k].ClaimState)
	}
	if err := storeState(m.cfg.StateDir, list); err != nil {
		return fmt.Errorf("checkpoint ResourceClaim state: %w", err)
	}
	return nil
}
