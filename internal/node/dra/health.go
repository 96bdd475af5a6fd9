package dra

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	drahealthv1 "k8s.io/kubelet/pkg/apis/dra-health/v1"

	"github.com/berthk8s/berth/internal/platform/checkpoint"
)

// HealthStateFileName is the checkpoint of the drivers' device health in
// the root directory, upstream's dra_health_state (plain JSON, no
// checksum, as upstream's healthInfoCache writes it).
const HealthStateFileName = "dra_health_state"

// DefaultHealthTimeout is how long a device's last report holds when its
// driver gives no HealthCheckTimeoutSeconds (upstream's
// DefaultHealthTimeout); past it the device reads as Unknown.
const DefaultHealthTimeout = 30 * time.Second

// maxDevicesPerDriver caps the devices kept per driver, upstream's: a
// report naming more new devices has those ignored.
const maxDevicesPerDriver = 16384

// DeviceHealthStatus is a device's health as the cache keeps it,
// upstream's state.DeviceHealthStatus (the same strings).
type DeviceHealthStatus string

// The health values, upstream's.
const (
	DeviceHealthy   DeviceHealthStatus = "Healthy"
	DeviceUnhealthy DeviceHealthStatus = "Unhealthy"
	DeviceUnknown   DeviceHealthStatus = "Unknown"
)

// DeviceHealth is one device's last report, upstream's state.DeviceHealth
// (field names and order, so either kubelet reads the other's file).
type DeviceHealth struct {
	PoolName   string
	DeviceName string
	Health     DeviceHealthStatus
	// LastUpdated is when berth received the report (upstream overwrites
	// the driver's time with its own).
	LastUpdated time.Time
	// HealthCheckTimeout is how long the report holds; zero is
	// DefaultHealthTimeout.
	HealthCheckTimeout time.Duration
	Message            string
}

// driverHealth is upstream's state.DriverHealthState: the devices by
// "<pool>/<device>".
type driverHealth struct {
	Devices map[string]DeviceHealth
}

// healthCache is the device health per driver (upstream's
// healthInfoCache), checkpointed in dir/HealthStateFileName whenever it
// changes. Safe for concurrent use: mu guards drivers and the writes.
type healthCache struct {
	dir string
	mu  sync.Mutex
	// drivers are the devices' health by driver name.
	drivers map[string]driverHealth
}

// newHealthCache reads the checkpoint; one that cannot be read is
// returned as an error beside an empty cache, which the caller logs, as
// upstream (the health is not worth refusing to start for).
func newHealthCache(dir string) (*healthCache, error) {
	c := &healthCache{dir: dir, drivers: map[string]driverHealth{}}
	b, found, err := checkpoint.Read(dir, HealthStateFileName)
	if err != nil || !found {
		return c, err
	}
	var m map[string]driverHealth
	if err := json.Unmarshal(b, &m); err != nil {
		return c, fmt.Errorf("decode %s: %w", HealthStateFileName, err)
	}
	for name, d := range m {
		if d.Devices == nil {
			d.Devices = map[string]DeviceHealth{}
		}
		c.drivers[name] = d
	}
	return c, nil
}

func deviceKey(pool, device string) string { return pool + "/" + device }

// timeoutOf is the device's timeout, the default for zero.
func timeoutOf(d DeviceHealth) time.Duration {
	if d.HealthCheckTimeout == 0 {
		return DefaultHealthTimeout
	}
	return d.HealthCheckTimeout
}

// get is the device's health at now (upstream's getHealthInfo): its last
// report while that holds, else Unknown with no message (never reported,
// or stale past its timeout).
func (c *healthCache) get(driver, pool, device string, now time.Time) DeviceHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	unknown := DeviceHealth{PoolName: pool, DeviceName: device, Health: DeviceUnknown}
	d, ok := c.drivers[driver].Devices[deviceKey(pool, device)]
	if !ok || now.Sub(d.LastUpdated) > timeoutOf(d) {
		return unknown
	}
	return d
}

// update takes a report of the driver's devices received at now and
// returns the devices whose health, message or timeout changed
// (upstream's updateHealthInfo): every reported device is stamped now; a
// device the report leaves out is kept until its timeout runs out, then
// dropped, and counted as changed to Unknown unless it was Unknown
// already. The checkpoint is written when anything changed; its error is
// returned beside the changes.
func (c *healthCache) update(driver string, devices []DeviceHealth, now time.Time) ([]DeviceHealth, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.drivers[driver]
	if !ok {
		cur = driverHealth{Devices: map[string]DeviceHealth{}}
		c.drivers[driver] = cur
	}
	var changed []DeviceHealth
	reported := map[string]bool{}
	ignored := 0
	for _, d := range devices {
		d.LastUpdated = now
		key := deviceKey(d.PoolName, d.DeviceName)
		reported[key] = true
		old, known := cur.Devices[key]
		if !known && len(cur.Devices) >= maxDevicesPerDriver {
			ignored++
			continue
		}
		if !known || old.Health != d.Health || old.Message != d.Message || old.HealthCheckTimeout != d.HealthCheckTimeout {
			changed = append(changed, d)
		}
		cur.Devices[key] = d
	}
	deleted := false
	for _, key := range slices.Sorted(maps.Keys(cur.Devices)) {
		d := cur.Devices[key]
		if reported[key] || now.Sub(d.LastUpdated) <= timeoutOf(d) {
			continue
		}
		if d.Health != DeviceUnknown {
			d.Health, d.Message, d.LastUpdated = DeviceUnknown, "", now
			changed = append(changed, d)
		}
		delete(cur.Devices, key)
		deleted = true
	}
	if len(changed) > 0 || deleted {
		return changed, ignored, c.storeLocked()
	}
	return changed, ignored, nil
}

// clearDriver drops the driver's devices (upstream's clearDriver, when
// its health stream ends) and writes the checkpoint.
func (c *healthCache) clearDriver(driver string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.drivers, driver)
	return c.storeLocked()
}

// storeLocked writes the checkpoint. c.mu is held.
func (c *healthCache) storeLocked() error {
	b, err := json.Marshal(c.drivers)
	if err != nil {
		return fmt.Errorf("encode %s: %w", HealthStateFileName, err)
	}
	if err := checkpoint.Write(c.dir, HealthStateFileName, b); err != nil {
		return fmt.Errorf("write %s: %w", HealthStateFileName, err)
	}
	return nil
}

// deviceHealthOf is a reported device as the cache keeps it (upstream's
// buildDeviceHealth): a timeout of zero or less is the default, the
// message truncated to the API's ResourceHealthMessageMaxLength with
// "...", an unknown enum value Unknown.
func deviceHealthOf(d *drahealthv1.DeviceHealth) DeviceHealth {
	timeout := DefaultHealthTimeout
	if s := d.GetHealthCheckTimeoutSeconds(); s > 0 {
		timeout = time.Duration(s) * time.Second
	}
	return DeviceHealth{
		PoolName:           d.GetDevice().GetPoolName(),
		DeviceName:         d.GetDevice().GetDeviceName(),
		Health:             healthOf(d.GetHealth()),
		LastUpdated:        time.Unix(d.GetLastUpdatedTime(), 0),
		HealthCheckTimeout: timeout,
		Message:            truncateHealthMessage(d.GetMessage()),
	}
}

func healthOf(h drahealthv1.HealthStatus) DeviceHealthStatus {
	switch h {
	case drahealthv1.HealthStatus_HEALTHY:
		return DeviceHealthy
	case drahealthv1.HealthStatus_UNHEALTHY:
		return DeviceUnhealthy
	default:
		return DeviceUnknown
	}
}

// truncateHealthMessage is upstream's.
func truncateHealthMessage(m string) string {
	if len(m) <= corev1.ResourceHealthMessageMaxLength {
		return m
	}
	return m[:corev1.ResourceHealthMessageMaxLength-3] + "..."
}
