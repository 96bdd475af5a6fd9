package csi

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// Driver is a registered CSI driver: where its node service serves and the
// highest CSI version it and berth both support (upstream's csi.Driver).
type Driver struct {
	// Endpoint is the driver's socket, as its registration named it.
	Endpoint string
	// Version is the highest supported version with major 1 among those
	// the driver advertised.
	Version *utilversion.Version
}

// Drivers is the registry of the CSI drivers registered on the node, by
// name (upstream's DriversStore): the Handler writes it as drivers come and
// go; the volume code reads it to find a driver's socket. The zero value is
// empty and ready; it is safe for concurrent use.
type Drivers struct {
	// mu guards byName.
	mu     sync.RWMutex
	byName map[string]Driver
}

// Get returns the endpoint of the driver registered under name.
func (d *Drivers) Get(name string) (endpoint string, ok bool) {
	drv, ok := d.Driver(name)
	return drv.Endpoint, ok
}

// Driver returns the driver registered under name.
func (d *Drivers) Driver(name string) (Driver, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	drv, ok := d.byName[name]
	return drv, ok
}

// Names returns the names of the registered drivers, sorted.
func (d *Drivers) Names() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	names := make([]string, 0, len(d.byName))
	for n := range d.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Upstream's messages (newCsiDriverClient); upstream_test.go pins them.
const (
	msgNoName   = "driver name is empty"
	msgNoDriver = "driver name %s not found in the list of registered CSI drivers"
)

// Dial returns a client of the node service of the driver registered
// under name; the caller closes it.
func (d *Drivers) Dial(name string) (*NodeClient, error) {
	if name == "" {
		return nil, errors.New(msgNoName)
	}
	endpoint, ok := d.Get(name)
	if !ok {
		return nil, fmt.Errorf(msgNoDriver, name)
	}
	return Dial(endpoint)
}

// add registers drv under name unless a driver registered under that name
// already has a version as high: the check and the write are one step, so
// that two plugins of one name registering at once cannot both win. The
// error is upstream's (validateVersions); caller names the calling method.
func (d *Drivers) add(caller, name string, drv Driver) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := checkExisting(caller, name, d.byName[name], drv.Version); err != nil {
		return err
	}
	if d.byName == nil {
		d.byName = map[string]Driver{}
	}
	d.byName[name] = drv
	return nil
}

// remove forgets the driver registered under name if it serves at
// endpoint, and reports whether it did.
func (d *Drivers) remove(name, endpoint string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	drv, ok := d.byName[name]
	if !ok || drv.Endpoint != endpoint {
		return false
	}
	delete(d.byName, name)
	return true
}
