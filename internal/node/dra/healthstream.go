package dra

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// healthRetry is how long after a health stream ends (or fails to open)
// it is opened again, upstream's wait.UntilWithContext period (sliding:
// counted from the end of the previous stream).
const healthRetry = 5 * time.Second

// healthUpdates is the capacity of Updates, upstream's update channel's.
const healthUpdates = 100

// Updates carries the UID of each pod whose claims' devices changed
// health, for a sync that shows it in the pod's status (upstream's
// Updates, which the kubelet's sync loop reads as the device manager's).
// A full channel drops the update, logged, as upstream.
func (m *Manager) Updates() <-chan types.UID { return m.updates }

// watchHealth follows the plugin's health stream until ctx ends (the
// plugin deregistered, or Run over): each stream that ends is opened again
// healthRetry later, except after Unimplemented (the driver lists the
// service without serving it: it is not asked again until it registers
// again), as upstream's.
func (m *Manager) watchHealth(ctx context.Context, p *plugin) {
	log := klog.FromContext(ctx).WithValues("driver", p.driver, "endpoint", p.endpoint, "healthService", p.health)
	ctx = klog.NewContext(ctx, log)
	for ctx.Err() == nil {
		err := m.streamHealth(ctx, p)
		log.V(2).Info("DRA health stream has ended", "err", err)
		if status.Code(err) == codes.Unimplemented {
			log.V(2).Info("DRA driver does not support the health stream, stopping")
			return
		}
		t := m.cfg.Clock.NewTimer(healthRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// streamHealth opens one NodeWatchResources stream and takes its reports
// until it ends (upstream's HandleWatchResourcesStream); once it was open,
// the driver's device health is dropped as it ends, as upstream's.
func (m *Manager) streamHealth(ctx context.Context, p *plugin) error {
	log := klog.FromContext(ctx)
	stream, err := p.watchResources(ctx)
	if err != nil {
		log.V(3).Info("Failed to open the DRA health stream, will retry", "err", err)
		return err
	}
	log.V(2).Info("Opened the DRA health stream")
	defer func() {
		if err := m.health.clearDriver(p.driver); err != nil {
			log.Error(err, "Failed to clear the DRA driver's device health")
		}
	}()
	for {
		resp, err := stream.Recv()
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case ctx.Err() != nil, status.Code(err) == codes.Canceled, status.Code(err) == codes.Unimplemented:
			return err
		default:
			log.Error(err, "Error receiving from the DRA health stream")
			return err
		}
		devices := make([]DeviceHealth, 0, len(resp.GetDevices()))
		for _, d := range resp.GetDevices() {
			devices = append(devices, deviceHealthOf(d))
		}
		changed, ignored, err := m.health.update(p.driver, devices, m.cfg.Clock.Now())
		if err != nil {
			log.Error(err, "Failed to save the DRA health checkpoint; a restart may lose the device health")
		}
		if ignored > 0 {
			log.Error(nil, "Health report contains more devices than the cache keeps per driver, ignoring new devices beyond the limit", "limit", maxDevicesPerDriver, "ignoredDevices", ignored)
		}
		if len(changed) > 0 {
			m.notifyHealth(log, p.driver, changed)
		}
	}
}

// notifyHealth sends the pods whose claims hold one of the driver's
// changed devices to Updates.
func (m *Manager) notifyHealth(log klog.Logger, driver string, changed []DeviceHealth) {
	uids := m.podsWithDevices(driver, changed)
	if len(uids) == 0 {
		log.V(4).Info("DRA device health changed, but no pod uses the devices", "devices", len(changed))
		return
	}
	log.Info("DRA device health changed, syncing the pods that use the devices", "pods", uids)
	for _, uid := range uids {
		select {
		case m.updates <- uid:
		default:
			log.Error(nil, "DRA health update channel is full, discarding pod update notification", "podUID", uid)
		}
	}
}

// podsWithDevices lists, sorted, the pods of the claims in the cache that
// hold one of the driver's devices.
func (m *Manager) podsWithDevices(driver string, devices []DeviceHealth) []types.UID {
	want := map[string]bool{}
	for _, d := range devices {
		want[deviceKey(d.PoolName, d.DeviceName)] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	set := map[types.UID]struct{}{}
	for _, e := range m.claims {
		for _, d := range e.DriverState[driver].Devices {
			if want[deviceKey(d.PoolName, d.DeviceName)] {
				for uid := range e.PodUIDs {
					set[types.UID(uid)] = struct{}{}
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
