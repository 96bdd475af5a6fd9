package csi

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

var zoneTopology = map[string]string{"topology.example.com/zone": "z1", "topology.example.com/rack": "r1"}

func TestRegisterRecordsTheDriver(t *testing.T) {
	e := newEnv(t)
	drv, endpoint := startDriver(t, csifake.Config{Name: testDriver, NodeID: "n1", MaxVolumesPerNode: 10, Topology: zoneTopology})
	if err := e.register(t, testDriver, endpoint, "1.0.0"); err != nil {
		t.Fatalf("register: %v", err)
	}
	if got, ok := e.h.Drivers().Get(testDriver); !ok || got != endpoint {
		t.Errorf("Drivers.Get(%q) = %q, %v; want %q, true", testDriver, got, ok, endpoint)
	}
	if d, _ := e.h.Drivers().Driver(testDriver); d.Version == nil || d.Version.String() != "1.0.0" {
		t.Errorf("driver version %v, want 1.0.0", d.Version)
	}
	if diff := cmp.Diff([]string{"NodeGetInfo"}, drv.Methods()); diff != "" {
		t.Errorf("driver calls (-want +got):\n%s", diff)
	}
	cs := e.csiNode(t)
	want := []storagev1.CSINodeDriver{{
		Name: testDriver, NodeID: "n1",
		TopologyKeys: []string{"topology.example.com/rack", "topology.example.com/zone"},
		Allocatable:  &storagev1.VolumeNodeResources{Count: int32p(10)},
	}}
	if diff := cmp.Diff(want, cs.Spec.Drivers); diff != "" {
		t.Errorf("CSINode drivers (-want +got):\n%s", diff)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: testNode, UID: testNodeUID}}
	if diff := cmp.Diff(wantOwner, cs.OwnerReferences); diff != "" {
		t.Errorf("CSINode owner (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{testDriver: "n1"}, e.nodeIDAnnotation(t)); diff != "" {
		t.Errorf("node ID annotation (-want +got):\n%s", diff)
	}
	labels := e.node(t).Labels
	for k, v := range zoneTopology {
		if labels[k] != v {
			t.Errorf("Node label %s = %q, want %q", k, labels[k], v)
		}
	}
	if labels["kubernetes.io/hostname"] != testNode {
		t.Errorf("Node labels %v lost the hostname label", labels)
	}
}

func TestRegisterAgainReplacesTheEntry(t *testing.T) {
	e := newEnv(t)
	drv, endpoint := startDriver(t, csifake.Config{Name: testDriver, NodeID: "n1", MaxVolumesPerNode: 10, Topology: zoneTopology})
	_, otherEndpoint := startDriver(t, csifake.Config{Name: "other.example.com", NodeID: "o1"})
	if err := e.register(t, testDriver, endpoint, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := e.register(t, "other.example.com", otherEndpoint, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// The driver comes back with a higher version, another node ID, no
	// volume limit and one topology key fewer.
	drv.SetConfig(csifake.Config{Name: testDriver, NodeID: "n2", Topology: map[string]string{"topology.example.com/zone": "z1"}})
	if err := e.register(t, testDriver, endpoint, "1.1.0"); err != nil {
		t.Fatalf("register again: %v", err)
	}
	want := []storagev1.CSINodeDriver{
		{Name: "other.example.com", NodeID: "o1", TopologyKeys: []string{}},
		{Name: testDriver, NodeID: "n2", TopologyKeys: []string{"topology.example.com/zone"}},
	}
	if diff := cmp.Diff(want, e.csiNode(t).Spec.Drivers); diff != "" {
		t.Errorf("CSINode drivers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{testDriver: "n2", "other.example.com": "o1"}, e.nodeIDAnnotation(t)); diff != "" {
		t.Errorf("node ID annotation (-want +got):\n%s", diff)
	}
	if d, _ := e.h.Drivers().Driver(testDriver); d.Version.String() != "1.1.0" {
		t.Errorf("driver version %v, want 1.1.0", d.Version)
	}
}

func TestRegisterFailsOnTopologyCollision(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, UID: testNodeUID, Labels: map[string]string{"topology.example.com/zone": "elsewhere"}}}
	e := newEnv(t)
	if _, err := e.client.CoreV1().Nodes().Update(testContext(t), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, endpoint := startDriver(t, csifake.Config{Name: testDriver, NodeID: "n1", Topology: zoneTopology})
	err := e.register(t, testDriver, endpoint, "1.0.0")
	const want = `detected topology value collision: driver reported "topology.example.com/zone":"z1" but existing label is "topology.example.com/zone":"elsewhere"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("register = %v, want an error with %q", err, want)
	}
	if _, ok := e.h.Drivers().Get(testDriver); ok {
		t.Errorf("driver left in the registry after a failed registration")
	}
	if ids := e.nodeIDAnnotation(t); ids != nil {
		t.Errorf("node ID annotation %v after a failed registration", ids)
	}
	if diff := cmp.Diff(node.Labels, e.node(t).Labels); diff != "" {
		t.Errorf("Node labels changed (-want +got):\n%s", diff)
	}
	if _, err := e.client.StorageV1().CSINodes().Get(testContext(t), testNode, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("CSINode after a failed registration: %v, want not found", err)
	}
}

func TestRegisterFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg     csifake.Config
		fail    error
		timeout time.Duration
		wantErr string
	}{
		"the plugin client's timeout": {cfg: csifake.Config{NodeID: "n1"}, timeout: time.Nanosecond, wantErr: "DeadlineExceeded"},
		"NodeGetInfo fails":           {cfg: csifake.Config{NodeID: "n1"}, fail: status.Error(codes.Unavailable, "not ready"), wantErr: "not ready"},
		"no node ID":                  {cfg: csifake.Config{}, wantErr: "driverNodeID must not be empty"},
		"unparsable version":          {cfg: csifake.Config{NodeID: "n1"}, wantErr: "None of the versions specified"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			drv, endpoint := startDriver(t, tc.cfg)
			drv.Fail("NodeGetInfo", tc.fail)
			versions := []string{"1.0.0"}
			if name == "unparsable version" {
				versions = []string{"one"}
			}
			var timeout *time.Duration
			if tc.timeout != 0 {
				timeout = &tc.timeout
			}
			err := e.h.RegisterPlugin(testContext(t), testDriver, endpoint, versions, timeout)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("RegisterPlugin = %v, want an error with %q", err, tc.wantErr)
			}
			if names := e.h.Drivers().Names(); len(names) != 0 {
				t.Errorf("drivers %v after a failed registration", names)
			}
			if ids := e.nodeIDAnnotation(t); ids != nil {
				t.Errorf("node ID annotation %v after a failed registration", ids)
			}
		})
	}
}

// A CSINode update that conflicts is retried.
func TestRegisterRetriesConflicts(t *testing.T) {
	e := newEnv(t)
	conflicts := 0
	e.client.PrependReactor("update", "csinodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		if conflicts < 2 {
			conflicts++
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}, testNode, nil)
		}
		return false, nil, nil
	})
	_, endpoint := startDriver(t, csifake.Config{NodeID: "n1"})
	if err := e.register(t, testDriver, endpoint, "1.0.0"); err != nil {
		t.Fatalf("register: %v", err)
	}
	if conflicts != 2 {
		t.Errorf("%d conflicts, want 2", conflicts)
	}
	if got := e.csiNode(t).Spec.Drivers; len(got) != 1 || got[0].NodeID != "n1" {
		t.Errorf("CSINode drivers %+v, want the driver's entry", got)
	}
}

func TestDeRegisterRemovesTheDriver(t *testing.T) {
	e := newEnv(t)
	_, endpoint := startDriver(t, csifake.Config{NodeID: "n1", Topology: zoneTopology})
	_, otherEndpoint := startDriver(t, csifake.Config{NodeID: "o1"})
	if err := e.register(t, testDriver, endpoint, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := e.register(t, "other.example.com", otherEndpoint, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	e.h.DeRegisterPlugin(testContext(t), testDriver, endpoint)
	if _, ok := e.h.Drivers().Get(testDriver); ok {
		t.Errorf("driver still registered")
	}
	want := []storagev1.CSINodeDriver{{Name: "other.example.com", NodeID: "o1", TopologyKeys: []string{}}}
	if diff := cmp.Diff(want, e.csiNode(t).Spec.Drivers); diff != "" {
		t.Errorf("CSINode drivers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"other.example.com": "o1"}, e.nodeIDAnnotation(t)); diff != "" {
		t.Errorf("node ID annotation (-want +got):\n%s", diff)
	}
	if got := e.node(t).Labels["topology.example.com/zone"]; got != "z1" {
		t.Errorf("topology label %q, want it kept (z1) as upstream keeps it", got)
	}

	e.h.DeRegisterPlugin(testContext(t), "other.example.com", otherEndpoint)
	if got := e.csiNode(t).Spec.Drivers; len(got) != 0 {
		t.Errorf("CSINode drivers %+v, want none", got)
	}
	if _, ok := e.node(t).Annotations[AnnotationNodeID]; ok {
		t.Errorf("node ID annotation kept with no driver left")
	}
}

// A driver registered since at another endpoint under the same name is
// not the one a socket's removal deregisters.
func TestDeRegisterLeavesAnotherEndpoint(t *testing.T) {
	e := newEnv(t)
	_, oldEndpoint := startDriver(t, csifake.Config{NodeID: "n1"})
	_, newEndpoint := startDriver(t, csifake.Config{NodeID: "n1"})
	if err := e.register(t, testDriver, oldEndpoint, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := e.register(t, testDriver, newEndpoint, "1.1.0"); err != nil {
		t.Fatal(err)
	}
	e.h.DeRegisterPlugin(testContext(t), testDriver, oldEndpoint)
	if got, _ := e.h.Drivers().Get(testDriver); got != newEndpoint {
		t.Errorf("registered endpoint %q, want %q", got, newEndpoint)
	}
	if got := e.csiNode(t).Spec.Drivers; len(got) != 1 {
		t.Errorf("CSINode drivers %+v, want the driver's entry kept", got)
	}
}

func TestValidatePlugin(t *testing.T) {
	e := newEnv(t)
	_, endpoint := startDriver(t, csifake.Config{NodeID: "n1"})
	if err := e.register(t, "registered.example.com", endpoint, "1.2.0"); err != nil {
		t.Fatal(err)
	}
	const prefix = "validation failed for CSI Driver %s at endpoint /csi.sock: kubernetes.io/csi: ValidatePlugin for CSI driver %q failed. "
	for _, tc := range []struct {
		name     string
		driver   string
		versions []string
		wantErr  string
	}{
		{name: "1.0.0", versions: []string{"1.0.0"}},
		{name: "0.3.0 only", versions: []string{"0.3.0"},
			wantErr: `None of the versions specified ["0.3.0"] are supported. err=highest supported version reported is 0.3.0, must be v1.x`},
		{name: "0.3.0 and 1.0.0", versions: []string{"0.3.0", "1.0.0"}},
		{name: "2.0.0 only", versions: []string{"2.0.0"}, wantErr: `None of the versions specified ["2.0.0"] are supported.`},
		{name: "no versions", wantErr: "Plugin returned an empty list for supported versions"},
		{name: "registered with a higher version", driver: "registered.example.com", versions: []string{"1.1.0"},
			wantErr: `Another driver with the same name is already registered with a higher supported version: "1.2.0"`},
		{name: "registered with the same version", driver: "registered.example.com", versions: []string{"1.2.0"},
			wantErr: `Another driver with the same name is already registered with a higher supported version: "1.2.0"`},
		{name: "registered with a lower version", driver: "registered.example.com", versions: []string{"1.3.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			driver := tc.driver
			if driver == "" {
				driver = testDriver
			}
			err := e.h.ValidatePlugin(testContext(t), driver, "/csi.sock", tc.versions)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidatePlugin(%q) = %v, want nil", tc.versions, err)
				}
				return
			}
			want := strings.ReplaceAll(prefix, "%s", driver)
			want = strings.ReplaceAll(want, "%q", `"`+driver+`"`) + tc.wantErr
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("ValidatePlugin(%q) = %v, want an error starting %q", tc.versions, err, want)
			}
		})
	}
}

func TestNewRequires(t *testing.T) {
	e := newEnv(t)
	for name, cfg := range map[string]Config{
		"client": {NodeName: testNode, Clock: e.clock},
		"node":   {Client: e.client, Clock: e.clock},
		"clock":  {Client: e.client, NodeName: testNode},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New without a %s: no error", name)
		}
	}
}
