package csi

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// What the node's CSI drivers make of the Node and its CSINode, as
// upstream's nodeinfomanager: each function changes the object it is
// given and reports whether it changed it. Pure.

// AnnotationNodeID is the Node annotation that maps each CSI driver
// registered on the node to the node's ID in that driver, a JSON object
// (upstream's annotationKeyNodeID).
const AnnotationNodeID = "csi.volume.kubernetes.io/nodeid"

// Upstream's messages (nodeinfomanager); upstream_test.go pins them.
const (
	msgBadAnnotation = "failed to parse node's %q annotation value (%q) err=%w"
	msgCollision     = "detected topology value collision: driver reported %q:%q but existing label is %q:%q"
)

// MigratedPlugins returns the in-tree volume plugins whose volumes berth
// leaves to their CSI drivers, sorted: every plugin upstream's kubelet
// migrates (all of them unconditionally in 1.37). The CSINode's
// storage.alpha.kubernetes.io/migrated-plugins annotation lists them, so
// that the scheduler and the attach/detach controller treat those volumes
// as CSI volumes on this node. upstream_test.go pins the list.
func MigratedPlugins() []string {
	return []string{
		"kubernetes.io/aws-ebs",
		"kubernetes.io/azure-disk",
		"kubernetes.io/azure-file",
		"kubernetes.io/cinder",
		"kubernetes.io/gce-pd",
		"kubernetes.io/portworx-volume",
		"kubernetes.io/vsphere-volume",
	}
}

// nodeIDs decodes the node's AnnotationNodeID (an empty map if it has
// none).
func nodeIDs(node *corev1.Node) (map[string]string, error) {
	ids := map[string]string{}
	v := node.Annotations[AnnotationNodeID]
	if v == "" {
		return ids, nil
	}
	if err := json.Unmarshal([]byte(v), &ids); err != nil {
		return nil, fmt.Errorf(msgBadAnnotation, AnnotationNodeID, v, err)
	}
	if ids == nil { // the value was "null"
		ids = map[string]string{}
	}
	return ids, nil
}

// setNodeID records that the node is nodeID to driver in
// AnnotationNodeID.
func setNodeID(node *corev1.Node, driver, nodeID string) (bool, error) {
	ids, err := nodeIDs(node)
	if err != nil {
		return false, err
	}
	if cur, ok := ids[driver]; ok && cur == nodeID {
		return false, nil
	}
	ids[driver] = nodeID
	return true, putNodeIDs(node, ids)
}

// removeNodeID removes driver from AnnotationNodeID, and the annotation
// once no driver is left in it.
func removeNodeID(node *corev1.Node, driver string) (bool, error) {
	if node.Annotations[AnnotationNodeID] == "" {
		return false, nil
	}
	ids, err := nodeIDs(node)
	if err != nil {
		return false, err
	}
	if _, ok := ids[driver]; !ok {
		return false, nil
	}
	delete(ids, driver)
	if len(ids) == 0 {
		delete(node.Annotations, AnnotationNodeID)
		return true, nil
	}
	return true, putNodeIDs(node, ids)
}

func putNodeIDs(node *corev1.Node, ids map[string]string) error {
	v, err := json.Marshal(ids) // keys sorted
	if err != nil {
		return fmt.Errorf("encode node ID map: %w", err)
	}
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[AnnotationNodeID] = string(v)
	return nil
}

// addTopologyLabels makes the driver's topology segments labels of the
// node. A label the node already has with another value is upstream's
// collision error, and the node is left as it was.
func addTopologyLabels(node *corev1.Node, topology map[string]string) (bool, error) {
	for _, k := range slices.Sorted(maps.Keys(topology)) {
		if cur, ok := node.Labels[k]; ok && cur != topology[k] {
			return false, fmt.Errorf(msgCollision, k, topology[k], k, cur)
		}
	}
	changed := false
	for k, v := range topology {
		if cur, ok := node.Labels[k]; ok && cur == v {
			continue
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[k] = v
		changed = true
	}
	return changed, nil
}

// nodePatch is the strategic merge patch from old to node, which differ
// in metadata only. It goes to the status subresource, as upstream's
// PatchNodeStatus sends the annotation and the labels.
func nodePatch(old, node *corev1.Node) ([]byte, error) {
	oldData, err := json.Marshal(old)
	if err != nil {
		return nil, fmt.Errorf("encode node %q: %w", old.Name, err)
	}
	newData, err := json.Marshal(node)
	if err != nil {
		return nil, fmt.Errorf("encode node %q: %w", node.Name, err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, corev1.Node{})
	if err != nil {
		return nil, fmt.Errorf("compute patch of node %q: %w", node.Name, err)
	}
	return patch, nil
}

// driverEntry is a driver's entry in the CSINode: its name, the node's ID
// in it, its topology keys (sorted), and its volume limit when it has one
// (above the API's int32, the largest int32, as upstream).
func driverEntry(driver string, info NodeInfo) storagev1.CSINodeDriver {
	e := storagev1.CSINodeDriver{Name: driver, NodeID: info.NodeID, TopologyKeys: slices.Sorted(maps.Keys(info.Topology))}
	if e.TopologyKeys == nil {
		e.TopologyKeys = []string{}
	}
	if info.MaxVolumesPerNode > 0 {
		n := int32(min(info.MaxVolumesPerNode, math.MaxInt32))
		e.Allocatable = &storagev1.VolumeNodeResources{Count: &n}
	}
	return e
}

// installDriver puts entry in the CSINode in place of the entry of the
// same name, last, and sets the migrated plugins annotation (to plugins).
// An entry that is already there (same node ID, topology keys and volume
// limit) with the annotation already right changes nothing, as upstream.
func installDriver(cs *storagev1.CSINode, entry storagev1.CSINodeDriver, plugins []string) bool {
	same := false
	drivers := []storagev1.CSINodeDriver{}
	for _, d := range cs.Spec.Drivers {
		if d.Name != entry.Name {
			drivers = append(drivers, d)
			continue
		}
		same = d.NodeID == entry.NodeID && sameKeys(d.TopologyKeys, entry.TopologyKeys) && count(d) == count(entry)
	}
	annotated := setMigratedPlugins(cs, plugins)
	if same && !annotated {
		return false
	}
	cs.Spec.Drivers = append(drivers, entry)
	return true
}

// removeDriver removes driver's entry from the CSINode.
func removeDriver(cs *storagev1.CSINode, driver string) bool {
	n := len(cs.Spec.Drivers)
	cs.Spec.Drivers = slices.DeleteFunc(cs.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == driver })
	return len(cs.Spec.Drivers) != n
}

func sameKeys(a, b []string) bool {
	return slices.Equal(slices.Compact(slices.Sorted(slices.Values(a))), slices.Compact(slices.Sorted(slices.Values(b))))
}

// count is an entry's volume limit, 0 when it has none.
func count(d storagev1.CSINodeDriver) int64 {
	if d.Allocatable == nil || d.Allocatable.Count == nil {
		return 0
	}
	return int64(*d.Allocatable.Count)
}

// setMigratedPlugins sets the CSINode's migrated plugins annotation to
// plugins (comma-separated, sorted; removed when there are none), unless
// it already names the same set.
func setMigratedPlugins(cs *storagev1.CSINode, plugins []string) bool {
	want := slices.Compact(slices.Sorted(slices.Values(plugins)))
	var have []string
	if v := cs.Annotations[corev1.MigratedPluginsAnnotationKey]; v != "" {
		have = slices.Compact(slices.Sorted(slices.Values(strings.Split(v, ","))))
	}
	if slices.Equal(have, want) {
		return false
	}
	if len(want) == 0 {
		delete(cs.Annotations, corev1.MigratedPluginsAnnotationKey)
		return true
	}
	if cs.Annotations == nil {
		cs.Annotations = map[string]string{}
	}
	cs.Annotations[corev1.MigratedPluginsAnnotationKey] = strings.Join(want, ",")
	return true
}

// newCSINode is the node's CSINode as berth creates it: owned by the Node
// (so that it goes with the Node), no drivers, the migrated plugins
// annotated.
func newCSINode(nodeName string, nodeUID types.UID, plugins []string) *storagev1.CSINode {
	cs := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{
			Name: nodeName,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: corev1.SchemeGroupVersion.Version, Kind: "Node", Name: nodeName, UID: nodeUID,
			}},
		},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{}},
	}
	setMigratedPlugins(cs, plugins)
	return cs
}

// ownedBy reports whether the Node nodeName of UID nodeUID owns the
// CSINode, and the UID of the Node owner it names (the last one).
func ownedBy(cs *storagev1.CSINode, nodeName string, nodeUID types.UID) (bool, types.UID) {
	var owner types.UID
	for _, ref := range cs.OwnerReferences {
		if ref.Kind != "Node" {
			continue
		}
		owner = ref.UID
		if ref.Name == nodeName && ref.UID == nodeUID {
			return true, owner
		}
	}
	return false, owner
}
