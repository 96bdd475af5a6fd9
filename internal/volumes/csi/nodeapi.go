package csi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Upstream's messages (nodeinfomanager); upstream_test.go pins them.
const (
	msgNoNodeID       = "error adding CSI driver node info: driverNodeID must not be empty"
	msgInstallNode    = "error updating Node object with CSI driver node info: %w"
	msgInstallCSINode = "error updating CSINode object with CSI driver node info: %w"
	msgUninstallCSI   = "error uninstalling CSI driver from CSINode object %w"
	msgUninstallNode  = "error removing CSI driver node info from Node object %w"
	msgOwnedElsewhere = "CSINode %q was owned by different node (oldNodeID=%q, newNodeID=%q), deleted it"
)

// nodeAPI writes what the node's CSI drivers say about the node to the
// API server, as upstream's nodeInfoManager: the Node's AnnotationNodeID
// and topology labels (patched), and the CSINode (updated, created when
// missing). Each write is a read-modify-write retried with updateBackoff;
// mu makes one at a time, so that two drivers registering at once do not
// undo each other's annotation entry.
type nodeAPI struct {
	client   kubernetes.Interface
	nodeName string
	clock    clock.Clock
	// mu serializes the read-modify-write rounds and guards nodeUID, the
	// Node's UID as last read, which the CSINode's owner reference names.
	mu      sync.Mutex
	nodeUID types.UID
}

// install records a registered driver: its node ID in the Node's
// annotation and its topology as the Node's labels, then its entry in the
// CSINode (upstream's InstallCSIDriver).
func (a *nodeAPI) install(ctx context.Context, driver string, info NodeInfo) error {
	if info.NodeID == "" {
		return errors.New(msgNoNodeID)
	}
	log := klog.FromContext(ctx)
	if info.MaxVolumesPerNode > math.MaxInt32 {
		log.Info("Exceeded max supported attach limit value, truncating it", "driver", driver, "limit", info.MaxVolumesPerNode, "max", math.MaxInt32)
	} else if info.MaxVolumesPerNode < 0 {
		log.Error(nil, "Invalid attach limit value cannot be added to CSINode object", "driver", driver, "limit", info.MaxVolumesPerNode)
	}
	err := a.updateNode(ctx, func(node *corev1.Node) (bool, error) {
		idChanged, err := setNodeID(node, driver, info.NodeID)
		if err != nil {
			return false, err
		}
		labelsChanged, err := addTopologyLabels(node, info.Topology)
		return idChanged || labelsChanged, err
	})
	if err != nil {
		return fmt.Errorf(msgInstallNode, err)
	}
	entry := driverEntry(driver, info)
	err = retry(ctx, a.clock, updateBackoff(), "error updating CSINode", func(ctx context.Context) error {
		return a.installInCSINode(ctx, entry)
	})
	if err != nil {
		return fmt.Errorf(msgInstallCSINode, err)
	}
	return nil
}

// uninstall removes a driver's entry from the CSINode, then its node ID
// from the Node's annotation (upstream's UninstallCSIDriver). The topology
// labels stay, as upstream's.
func (a *nodeAPI) uninstall(ctx context.Context, driver string) error {
	err := retry(ctx, a.clock, updateBackoff(), "error updating CSINode", func(ctx context.Context) error {
		return a.uninstallFromCSINode(ctx, driver)
	})
	if err != nil {
		return fmt.Errorf(msgUninstallCSI, err)
	}
	err = a.updateNode(ctx, func(node *corev1.Node) (bool, error) { return removeNodeID(node, driver) })
	if err != nil {
		return fmt.Errorf(msgUninstallNode, err)
	}
	return nil
}

// initialize makes sure the CSINode exists, is the Node's, and names the
// migrated plugins (upstream's InitializeCSINodeWithAnnotation).
func (a *nodeAPI) initialize(ctx context.Context) error {
	return retry(ctx, a.clock, updateBackoff(), "error updating CSINode annotation", func(ctx context.Context) error {
		err := a.tryInitialize(ctx)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Failed to publish CSINode", "err", err)
		}
		return err
	})
}

// updateNode applies change to the latest Node and patches the Node when
// it changed something, retried with updateBackoff.
func (a *nodeAPI) updateNode(ctx context.Context, change func(*corev1.Node) (bool, error)) error {
	return retry(ctx, a.clock, updateBackoff(), "error updating node", func(ctx context.Context) error {
		return a.tryUpdateNode(ctx, change)
	})
}

func (a *nodeAPI) tryUpdateNode(ctx context.Context, change func(*corev1.Node) (bool, error)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	nodes := a.client.CoreV1().Nodes()
	old, err := nodes.Get(ctx, a.nodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	a.nodeUID = old.UID
	node := old.DeepCopy()
	changed, err := change(node)
	if err != nil || !changed {
		return err
	}
	patch, err := nodePatch(old, node)
	if err != nil {
		return err
	}
	if _, err := nodes.Patch(ctx, a.nodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("failed to patch status %q for node %q: %w", patch, a.nodeName, err)
	}
	return nil
}

// installInCSINode puts entry in the CSINode, which it creates if missing.
func (a *nodeAPI) installInCSINode(ctx context.Context, entry storagev1.CSINodeDriver) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	csiNodes := a.client.StorageV1().CSINodes()
	cs, err := csiNodes.Get(ctx, a.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cs, err = csiNodes.Create(ctx, newCSINode(a.nodeName, a.nodeUID, MigratedPlugins()), metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	if err := a.ensureOwned(ctx, cs); err != nil {
		return err
	}
	if !installDriver(cs, entry, MigratedPlugins()) {
		return nil
	}
	_, err = csiNodes.Update(ctx, cs, metav1.UpdateOptions{})
	return err
}

func (a *nodeAPI) uninstallFromCSINode(ctx context.Context, driver string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	csiNodes := a.client.StorageV1().CSINodes()
	cs, err := csiNodes.Get(ctx, a.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !removeDriver(cs, driver) {
		return nil
	}
	_, err = csiNodes.Update(ctx, cs, metav1.UpdateOptions{})
	return err
}

func (a *nodeAPI) tryInitialize(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	node, err := a.client.CoreV1().Nodes().Get(ctx, a.nodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	a.nodeUID = node.UID
	csiNodes := a.client.StorageV1().CSINodes()
	cs, err := csiNodes.Get(ctx, a.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = csiNodes.Create(ctx, newCSINode(a.nodeName, a.nodeUID, MigratedPlugins()), metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if err := a.ensureOwned(ctx, cs); err != nil {
		return err
	}
	if !setMigratedPlugins(cs, MigratedPlugins()) {
		return nil
	}
	_, err = csiNodes.Update(ctx, cs, metav1.UpdateOptions{})
	return err
}

// ensureOwned deletes a CSINode the Node does not own (a CSINode left by
// an earlier Node of the same name) and fails, so that the next attempt
// creates the Node's own, as upstream. a.mu is held.
func (a *nodeAPI) ensureOwned(ctx context.Context, cs *storagev1.CSINode) error {
	owned, owner := ownedBy(cs, a.nodeName, a.nodeUID)
	if owned {
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Existing CSINode is owned by a different node, cleaning up", "csiNode", cs.Name, "oldNodeID", owner, "newNodeID", a.nodeUID)
	// The UID precondition: never a CSINode created since it was read.
	del := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cs.UID}}
	if err := a.client.StorageV1().CSINodes().Delete(ctx, a.nodeName, del); err != nil {
		return fmt.Errorf("error deleting existing CSINode %q: %w", cs.Name, err)
	}
	return fmt.Errorf(msgOwnedElsewhere, cs.Name, owner, a.nodeUID)
}
