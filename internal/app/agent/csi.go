package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/volumes/csi"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// newCSI builds the handler of the CSI drivers that register through the
// plugin manager, in cluster mode (nil standalone: a driver records what
// it is in the node's CSINode, which needs an API server, as upstream).
func (n *node) newCSI() (*csi.Handler, error) {
	client := n.cluster.apiClient()
	if client == nil {
		return nil, nil
	}
	h, err := csi.New(csi.Config{Client: client, NodeName: n.cfg.NodeName, Clock: n.clock})
	if err != nil {
		return nil, fmt.Errorf("create CSI handler: %w", err)
	}
	return h, nil
}

// newCSIMounter builds what publishes CSI volumes through the registered
// drivers, in cluster mode (nil standalone).
func (n *node) newCSIMounter() (*csi.Mounter, error) {
	if n.vols.csi == nil {
		return nil, nil
	}
	m, err := csi.NewMounter(csi.MounterConfig{
		Drivers: n.vols.csi.Drivers(), Client: n.cluster.apiClient(), NodeName: n.cfg.NodeName,
		PluginsDir: filepath.Join(n.cfg.RootDir, "plugins"), PodsDir: n.podsDir(), Clock: n.clock,
	})
	if err != nil {
		return nil, fmt.Errorf("create CSI mounter: %w", err)
	}
	return m, nil
}

// volumeCSI is the volume manager's CSI mounter: nil standalone (an
// interface holding a nil *csi.Mounter would not be nil).
func (n *node) volumeCSI() volume.CSI {
	if n.vols.mounter == nil {
		return nil
	}
	return n.vols.mounter
}

// volumeExpander is the volume manager's CSI expander: nil standalone,
// as volumeCSI.
func (n *node) volumeExpander() volume.CSIExpander {
	if n.vols.mounter == nil {
		return nil
	}
	return n.vols.mounter
}

// volumesInUse lists the attachable volumes in use for node status
// (nodestatus.Guards, built before the managers: none until then): the
// fibre channel ones and the CSI ones (none standalone), sorted.
func (n *node) volumesInUse(ctx context.Context) ([]corev1.UniqueVolumeName, error) {
	out := []corev1.UniqueVolumeName{}
	if n.vols.manager != nil {
		out = append(out, n.vols.manager.FCVolumesInUse()...)
	}
	if n.vols.mounter != nil {
		csi, err := n.vols.mounter.VolumesInUse(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, csi...)
	}
	slices.Sort(out)
	return out, nil
}

// storageErr is why the node's storage is not ready: the CSINode is not
// initialized yet (upstream's storage state, which keeps the node from
// being Ready). Read by node status through nodestatus.Guards, which is
// built before the handler: nil until then, and standalone.
func (n *node) storageErr() error {
	if n.vols.csi == nil {
		return nil
	}
	return n.vols.csi.InitError()
}

// initCSINode initializes the node's CSINode. A restarted node's Node
// exists: one attempt at once, before the node's first status update
// (which waits for it a moment, cluster.statusHold), so that a Ready node
// does not show NotReady ("CSINode is not yet initialized") at every
// restart; upstream's kubelet initializes long before its status loop
// starts. Otherwise it initializes once the Node is registered (its
// owner), with upstream's retries, and asks for a node status update at
// once so that Ready need not wait a status period. A failure after the
// retries stops berth, as it stops upstream's kubelet, to be restarted.
func (n *node) initCSINode(ctx context.Context) error {
	tctx, cancel := context.WithTimeout(ctx, statusHoldMax)
	err := n.vols.csi.TryInitializeCSINode(tctx)
	cancel()
	n.cluster.releaseStatus()
	if err != nil {
		klog.FromContext(ctx).V(4).Info("CSINode not initialized before registration", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-n.cluster.gates.nodeSynced:
		}
		if err := n.vols.csi.InitializeCSINode(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	klog.FromContext(ctx).V(2).Info("Initialized the node's CSINode")
	n.cluster.kickNode()
	<-ctx.Done()
	return nil
}
