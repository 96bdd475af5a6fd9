package csi

import (
	"context"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	storagelisters "k8s.io/client-go/listers/storage/v1"
)

// driverObjects is the Mounter's view of the cluster's CSIDriver
// objects: a shared informer of CSIDriver objects alone (no resync), as
// upstream's kubelet volume host builds one for its CSI plugin
// (NewInitializedVolumePluginMgr's csiDriverLister), started by
// Mounter.Run as upstream's VolumePluginMgr.Run starts it with the
// volume manager. Reads go through its lister once it has synced; before
// that they wait, as upstream's getCSIDriver waits (WaitForCacheSync),
// there for ever, here until the read's context ends: upstream reads no
// CSIDriver by a GET.
//
// Set once by NewMounter; synced is closed by run once the informer has
// synced, and the lister is safe for concurrent use.
type driverObjects struct {
	factory informers.SharedInformerFactory
	lister  storagelisters.CSIDriverLister
	synced  chan struct{}
}

func newDriverObjects(client kubernetes.Interface) *driverObjects {
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Storage().V1().CSIDrivers()
	informer.Informer() // registered with the factory, which starts it
	return &driverObjects{factory: factory, lister: informer.Lister(), synced: make(chan struct{})}
}

// run runs the informer until ctx ends.
func (d *driverObjects) run(ctx context.Context) {
	d.factory.Start(ctx.Done())
	synced := true
	for _, ok := range d.factory.WaitForCacheSync(ctx.Done()) {
		synced = synced && ok
	}
	if synced && ctx.Err() == nil {
		close(d.synced)
	}
	<-ctx.Done()
	d.factory.Shutdown()
}

// get returns the CSIDriver object named driver from the informer's
// cache (shared: not to be changed), once it has synced; a missing
// object is the lister's NotFound error.
func (d *driverObjects) get(ctx context.Context, driver string) (*storagev1.CSIDriver, error) {
	select {
	case <-d.synced:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the CSIDriver informer to sync: %w", context.Cause(ctx))
	}
	return d.lister.Get(driver)
}
