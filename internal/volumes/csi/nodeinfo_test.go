package csi

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func nodeWith(annotations, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, Annotations: annotations, Labels: labels}}
}

func TestNodeChanges(t *testing.T) {
	ids := func(v string) map[string]string { return map[string]string{AnnotationNodeID: v} }
	for _, tc := range []struct {
		name        string
		node        *corev1.Node
		change      func(*corev1.Node) (bool, error)
		want        *corev1.Node
		wantChanged bool
		wantErr     string
	}{
		{name: "set: first driver", node: nodeWith(nil, nil),
			change: func(n *corev1.Node) (bool, error) { return setNodeID(n, "b.example.com", "n1") },
			want:   nodeWith(ids(`{"b.example.com":"n1"}`), nil), wantChanged: true},
		{name: "set: second driver, keys sorted", node: nodeWith(ids(`{"b.example.com":"n1"}`), nil),
			change: func(n *corev1.Node) (bool, error) { return setNodeID(n, "a.example.com", "n2") },
			want:   nodeWith(ids(`{"a.example.com":"n2","b.example.com":"n1"}`), nil), wantChanged: true},
		{name: "set: another ID replaces", node: nodeWith(ids(`{"b.example.com":"n1"}`), nil),
			change: func(n *corev1.Node) (bool, error) { return setNodeID(n, "b.example.com", "n2") },
			want:   nodeWith(ids(`{"b.example.com":"n2"}`), nil), wantChanged: true},
		{name: "set: same ID is no change", node: nodeWith(ids(`{"b.example.com":"n1"}`), nil),
			change: func(n *corev1.Node) (bool, error) { return setNodeID(n, "b.example.com", "n1") },
			want:   nodeWith(ids(`{"b.example.com":"n1"}`), nil)},
		{name: "set: a broken annotation is an error", node: nodeWith(ids(`{`), nil),
			change:  func(n *corev1.Node) (bool, error) { return setNodeID(n, "b.example.com", "n1") },
			wantErr: `failed to parse node's "csi.volume.kubernetes.io/nodeid" annotation value ("{")`},
		{name: "remove: one of two", node: nodeWith(ids(`{"a.example.com":"n2","b.example.com":"n1"}`), nil),
			change: func(n *corev1.Node) (bool, error) { return removeNodeID(n, "a.example.com") },
			want:   nodeWith(ids(`{"b.example.com":"n1"}`), nil), wantChanged: true},
		{name: "remove: the last removes the annotation", node: nodeWith(map[string]string{AnnotationNodeID: `{"b.example.com":"n1"}`, "x": "y"}, nil),
			change: func(n *corev1.Node) (bool, error) { return removeNodeID(n, "b.example.com") },
			want:   nodeWith(map[string]string{"x": "y"}, nil), wantChanged: true},
		{name: "remove: absent is no change", node: nodeWith(ids(`{"b.example.com":"n1"}`), nil),
			change: func(n *corev1.Node) (bool, error) { return removeNodeID(n, "a.example.com") },
			want:   nodeWith(ids(`{"b.example.com":"n1"}`), nil)},
		{name: "remove: no annotation is no change", node: nodeWith(nil, nil),
			change: func(n *corev1.Node) (bool, error) { return removeNodeID(n, "a.example.com") },
			want:   nodeWith(nil, nil)},
		{name: "labels: added", node: nodeWith(nil, map[string]string{"x": "y"}),
			change: func(n *corev1.Node) (bool, error) { return addTopologyLabels(n, map[string]string{"zone": "z1"}) },
			want:   nodeWith(nil, map[string]string{"x": "y", "zone": "z1"}), wantChanged: true},
		{name: "labels: already there", node: nodeWith(nil, map[string]string{"zone": "z1"}),
			change: func(n *corev1.Node) (bool, error) { return addTopologyLabels(n, map[string]string{"zone": "z1"}) },
			want:   nodeWith(nil, map[string]string{"zone": "z1"})},
		{name: "labels: none", node: nodeWith(nil, nil),
			change: func(n *corev1.Node) (bool, error) { return addTopologyLabels(n, nil) },
			want:   nodeWith(nil, nil)},
		{name: "labels: a collision changes nothing", node: nodeWith(nil, map[string]string{"rack": "r9"}),
			change: func(n *corev1.Node) (bool, error) {
				return addTopologyLabels(n, map[string]string{"zone": "z1", "rack": "r1"})
			},
			want:    nodeWith(nil, map[string]string{"rack": "r9"}),
			wantErr: `detected topology value collision: driver reported "rack":"r1" but existing label is "rack":"r9"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, err := tc.change(tc.node)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if tc.want != nil {
					if diff := cmp.Diff(tc.want, tc.node); diff != "" {
						t.Errorf("node (-want +got):\n%s", diff)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, tc.node); diff != "" {
				t.Errorf("node (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDriverEntry(t *testing.T) {
	for _, tc := range []struct {
		name string
		info NodeInfo
		want storagev1.CSINodeDriver
	}{
		{name: "plain", info: NodeInfo{NodeID: "n1"}, want: storagev1.CSINodeDriver{Name: testDriver, NodeID: "n1", TopologyKeys: []string{}}},
		{name: "topology keys sorted", info: NodeInfo{NodeID: "n1", Topology: map[string]string{"b": "1", "a": "2"}},
			want: storagev1.CSINodeDriver{Name: testDriver, NodeID: "n1", TopologyKeys: []string{"a", "b"}}},
		{name: "volume limit", info: NodeInfo{NodeID: "n1", MaxVolumesPerNode: 39},
			want: storagev1.CSINodeDriver{Name: testDriver, NodeID: "n1", TopologyKeys: []string{}, Allocatable: &storagev1.VolumeNodeResources{Count: int32p(39)}}},
		{name: "volume limit above int32", info: NodeInfo{NodeID: "n1", MaxVolumesPerNode: math.MaxInt32 + 5},
			want: storagev1.CSINodeDriver{Name: testDriver, NodeID: "n1", TopologyKeys: []string{}, Allocatable: &storagev1.VolumeNodeResources{Count: int32p(math.MaxInt32)}}},
		{name: "negative volume limit: none", info: NodeInfo{NodeID: "n1", MaxVolumesPerNode: -1},
			want: storagev1.CSINodeDriver{Name: testDriver, NodeID: "n1", TopologyKeys: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, driverEntry(testDriver, tc.info)); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInstallDriver(t *testing.T) {
	migrated := map[string]string{corev1.MigratedPluginsAnnotationKey: "kubernetes.io/gce-pd"}
	entry := storagev1.CSINodeDriver{Name: "b", NodeID: "n1", TopologyKeys: []string{"zone"}, Allocatable: &storagev1.VolumeNodeResources{Count: int32p(5)}}
	other := storagev1.CSINodeDriver{Name: "a", NodeID: "o1", TopologyKeys: []string{}}
	csiNode := func(annotations map[string]string, drivers ...storagev1.CSINodeDriver) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: testNode, Annotations: annotations}, Spec: storagev1.CSINodeSpec{Drivers: drivers}}
	}
	with := func(f func(*storagev1.CSINodeDriver)) storagev1.CSINodeDriver {
		e := *entry.DeepCopy()
		f(&e)
		return e
	}
	for _, tc := range []struct {
		name        string
		cs          *storagev1.CSINode
		want        *storagev1.CSINode
		wantChanged bool
	}{
		{name: "added last", cs: csiNode(migrated, other), want: csiNode(migrated, other, entry), wantChanged: true},
		{name: "same entry: no change", cs: csiNode(migrated, entry, other), want: csiNode(migrated, entry, other)},
		{name: "same entry, topology keys in another order: no change",
			cs:   csiNode(migrated, with(func(e *storagev1.CSINodeDriver) { e.TopologyKeys = []string{"zone", "zone"} })),
			want: csiNode(migrated, with(func(e *storagev1.CSINodeDriver) { e.TopologyKeys = []string{"zone", "zone"} }))},
		{name: "same entry, annotation missing: annotated and moved last", cs: csiNode(nil, entry, other), want: csiNode(migrated, other, entry), wantChanged: true},
		{name: "another node ID: replaced",
			cs: csiNode(migrated, with(func(e *storagev1.CSINodeDriver) { e.NodeID = "old" }), other), want: csiNode(migrated, other, entry), wantChanged: true},
		{name: "another limit: replaced",
			cs: csiNode(migrated, with(func(e *storagev1.CSINodeDriver) { e.Allocatable = nil })), want: csiNode(migrated, entry), wantChanged: true},
		{name: "other topology keys: replaced",
			cs: csiNode(migrated, with(func(e *storagev1.CSINodeDriver) { e.TopologyKeys = nil })), want: csiNode(migrated, entry), wantChanged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := installDriver(tc.cs, entry, []string{"kubernetes.io/gce-pd"})
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, tc.cs); diff != "" {
				t.Errorf("CSINode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemoveDriver(t *testing.T) {
	cs := &storagev1.CSINode{Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a"}, {Name: "b"}}}}
	if removeDriver(cs, "c") {
		t.Errorf("removing an absent driver changed the CSINode")
	}
	if !removeDriver(cs, "a") {
		t.Errorf("removing a driver did not change the CSINode")
	}
	if diff := cmp.Diff([]storagev1.CSINodeDriver{{Name: "b"}}, cs.Spec.Drivers); diff != "" {
		t.Errorf("drivers (-want +got):\n%s", diff)
	}
}

func TestSetMigratedPlugins(t *testing.T) {
	key := corev1.MigratedPluginsAnnotationKey
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		plugins     []string
		want        map[string]string
		wantChanged bool
	}{
		{name: "none yet", plugins: []string{"b", "a"}, want: map[string]string{key: "a,b"}, wantChanged: true},
		{name: "same set in another order", annotations: map[string]string{key: "b,a"}, plugins: []string{"a", "b"}, want: map[string]string{key: "b,a"}},
		{name: "another set", annotations: map[string]string{key: "a", "x": "y"}, plugins: []string{"a", "b"}, want: map[string]string{key: "a,b", "x": "y"}, wantChanged: true},
		{name: "no plugins: removed", annotations: map[string]string{key: "a", "x": "y"}, want: map[string]string{"x": "y"}, wantChanged: true},
		{name: "no plugins, none annotated", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
			if changed := setMigratedPlugins(cs, tc.plugins); changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, cs.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnedBy(t *testing.T) {
	ref := func(kind, name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: kind, Name: name, UID: types.UID(uid)}
	}
	for _, tc := range []struct {
		name      string
		refs      []metav1.OwnerReference
		wantOwned bool
		wantOwner string
	}{
		{name: "ours", refs: []metav1.OwnerReference{ref("Node", testNode, testNodeUID)}, wantOwned: true, wantOwner: testNodeUID},
		{name: "an earlier Node's", refs: []metav1.OwnerReference{ref("Node", testNode, "old")}, wantOwner: "old"},
		{name: "another Node's", refs: []metav1.OwnerReference{ref("Node", "node-2", testNodeUID)}, wantOwner: testNodeUID},
		{name: "not a Node", refs: []metav1.OwnerReference{ref("Pod", testNode, testNodeUID)}},
		{name: "no owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tc.refs}}
			owned, owner := ownedBy(cs, testNode, testNodeUID)
			if owned != tc.wantOwned || string(owner) != tc.wantOwner {
				t.Errorf("ownedBy = %v, %q; want %v, %q", owned, owner, tc.wantOwned, tc.wantOwner)
			}
		})
	}
}

// The patch of the Node carries the metadata that changed and nothing
// else.
func TestNodePatch(t *testing.T) {
	old := nodeWith(map[string]string{"keep": "1"}, map[string]string{"x": "y"})
	old.Spec.PodCIDR = "10.0.0.0/24"
	node := old.DeepCopy()
	if _, err := setNodeID(node, "a", "n1"); err != nil {
		t.Fatal(err)
	}
	if _, err := addTopologyLabels(node, map[string]string{"zone": "z1"}); err != nil {
		t.Fatal(err)
	}
	patch, err := nodePatch(old, node)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"metadata":{"annotations":{"csi.volume.kubernetes.io/nodeid":"{\"a\":\"n1\"}"},"labels":{"zone":"z1"}}}`
	if string(patch) != want {
		t.Errorf("patch %s, want %s", patch, want)
	}
}
