package csi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func expandCaps(extra ...csipb.NodeServiceCapability_RPC_Type) []csipb.NodeServiceCapability_RPC_Type {
	return append([]csipb.NodeServiceCapability_RPC_Type{
		csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME, csipb.NodeServiceCapability_RPC_EXPAND_VOLUME,
	}, extra...)
}

// TestExpandAsksAsUpstream: NodeExpandVolume of a published persistent
// volume carries the handle, the pod's target as the volume path, the
// staging directory, the new size in bytes, the published capability
// (no mount group) and the expand secret, as upstream's csiPlugin
// NodeExpand sends them.
func TestExpandAsksAsUpstream(t *testing.T) {
	e := newMounterEnv(t, expandCaps(csipb.NodeServiceCapability_RPC_VOLUME_MOUNT_GROUP),
		secret("kube-system", "expand", map[string]string{"expand-key": "x"}))
	pod := testPod(testPodUID)
	err := e.m.Expand(testContext(t), pod, testPV(), Expansion{
		NewSize: resource.MustParse("2Gi"), Secret: &corev1.SecretReference{Namespace: "kube-system", Name: "expand"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &csipb.NodeExpandVolumeRequest{
		VolumeId:          testHandle,
		VolumePath:        e.target(testPodUID, testPVName),
		StagingTargetPath: e.staging(testHandle),
		CapacityRange:     &csipb.CapacityRange{RequiredBytes: 2 << 30},
		VolumeCapability:  mountCap("ext4", []string{"noatime"}, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, ""),
		Secrets:           map[string]string{"expand-key": "x"},
	}
	if diff := cmp.Diff(want, request[*csipb.NodeExpandVolumeRequest](t, e.drv, "NodeExpandVolume"), protocmp.Transform()); diff != "" {
		t.Errorf("NodeExpandVolume (-want +got):\n%s", diff)
	}
}

// TestExpandFailures: each way an expansion fails is classified as
// upstream's NodeExpand classifies it, with upstream's message.
func TestExpandFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		caps    []csipb.NodeServiceCapability_RPC_Type
		driver  string // "" the test driver
		fail    map[string]error
		secret  bool
		want    ExpandFailure
		wantMsg string
		calls   int // NodeExpandVolume calls
	}{
		{name: "no EXPAND_VOLUME", caps: stageCaps(), want: ExpandNotSupported,
			wantMsg: "NodeExpand is not supported by the CSI driver " + testDriver},
		{name: "driver not registered", driver: "other.csi", want: ExpandTransient,
			wantMsg: "driver name other.csi not found in the list of registered CSI drivers"},
		{name: "capabilities fail", fail: map[string]error{"NodeGetCapabilities": status.Error(codes.Internal, "boom")},
			want: ExpandFailed, wantMsg: "Expander.NodeExpand failed to check if node supports expansion : rpc error: code = Internal desc = boom"},
		{name: "secret missing", secret: true, want: ExpandFailed,
			wantMsg: "expander.NodeExpand failed to get NodeExpandSecretRef kube-system/gone: "},
		{name: "in use", fail: map[string]error{"NodeExpandVolume": status.Error(codes.FailedPrecondition, "busy")}, calls: 1,
			want: ExpandInUse, wantMsg: "Expander.NodeExpand failed to expand the volume : rpc error: code = FailedPrecondition desc = busy"},
		{name: "out of range", fail: map[string]error{"NodeExpandVolume": status.Error(codes.OutOfRange, "too big")}, calls: 1,
			want: ExpandInfeasible, wantMsg: "Expander.NodeExpand failed to expand the volume rpc error: code = OutOfRange desc = too big"},
		{name: "not found", fail: map[string]error{"NodeExpandVolume": status.Error(codes.NotFound, "gone")}, calls: 1,
			want: ExpandInfeasible, wantMsg: "Expander.NodeExpand failed to expand the volume rpc error: code = NotFound desc = gone"},
		{name: "internal", fail: map[string]error{"NodeExpandVolume": status.Error(codes.Internal, "disk")}, calls: 1,
			want: ExpandFailed, wantMsg: "Expander.NodeExpand failed to expand the volume : rpc error: code = Internal desc = disk"},
		// Upstream wraps its UncertainProgressError, and the wrapped error
		// counts as final.
		{name: "timeout", fail: map[string]error{"NodeExpandVolume": status.Error(codes.DeadlineExceeded, "slow")}, calls: 1,
			want: ExpandFailed, wantMsg: "Expander.NodeExpand failed to expand the volume : rpc error: code = DeadlineExceeded desc = slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caps := tc.caps
			if caps == nil {
				caps = expandCaps()
			}
			e := newMounterEnv(t, caps)
			for method, err := range tc.fail {
				e.drv.Fail(method, err)
			}
			v := testPV()
			if tc.driver != "" {
				v.Driver = tc.driver
			}
			exp := Expansion{NewSize: resource.MustParse("2Gi")}
			if tc.secret {
				exp.Secret = &corev1.SecretReference{Namespace: "kube-system", Name: "gone"}
			}
			err := e.m.Expand(testContext(t), testPod(testPodUID), v, exp)
			if err == nil {
				t.Fatal("Expand succeeded")
			}
			var ee *ExpandError
			if !errors.As(err, &ee) || FailureOf(err) != tc.want {
				t.Errorf("Expand() = %v (failure %v), want failure %v", err, FailureOf(err), tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.wantMsg) {
				t.Errorf("Expand() = %q, want %q", err, tc.wantMsg)
			}
			if n := len(e.drv.CallsTo("NodeExpandVolume")); n != tc.calls {
				t.Errorf("%d NodeExpandVolume calls, want %d", n, tc.calls)
			}
		})
	}
}

// TestExpandRefusesInline: an inline volume has no claim to expand.
func TestExpandRefusesInline(t *testing.T) {
	e := newMounterEnv(t, expandCaps())
	v := testPV()
	v.Inline = true
	if err := e.m.Expand(testContext(t), testPod(testPodUID), v, Expansion{NewSize: resource.MustParse("1Gi")}); err == nil {
		t.Error("Expand of an inline volume succeeded")
	}
	if n := len(e.drv.CallsTo("NodeExpandVolume")); n != 0 {
		t.Errorf("%d NodeExpandVolume calls, want none", n)
	}
}

// TestExpandBlockAsksAsUpstream: NodeExpandVolume of a mapped block
// volume carries, as upstream's nodeExpandWithClient for a volume that
// is no filesystem, the device published for the pod (the publish path,
// a driver's symlink followed) as the volume path, a Block capability
// with the PersistentVolume's access mode, no fsType or mount flags, and
// the block staging path: none right after the map when the driver does
// not stage (upstream's SetUpDevice staged nothing), the staging path
// online whatever the driver (upstream's GetStagingPath).
func TestExpandBlockAsksAsUpstream(t *testing.T) {
	stage, noStage := expandCaps(), []csipb.NodeServiceCapability_RPC_Type{csipb.NodeServiceCapability_RPC_EXPAND_VOLUME}
	for _, tc := range []struct {
		name        string
		caps        []csipb.NodeServiceCapability_RPC_Type
		atMount     bool
		symlink     bool // the driver publishes a symlink to its device
		wantStaging bool
	}{
		{name: "staged, at map", caps: stage, atMount: true, wantStaging: true},
		{name: "staged, online", caps: stage, wantStaging: true},
		{name: "not staged, at map", caps: noStage, atMount: true},
		{name: "not staged, online", caps: noStage, wantStaging: true},
		{name: "published as a symlink", caps: stage, symlink: true, wantStaging: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBlockEnv(t, tc.caps, csiDriver(nil))
			pod := testPod(testPodUID)
			if _, err := e.m.MapBlock(testContext(t), pod, blockPV()); err != nil {
				t.Fatal(err)
			}
			publish := e.blockDir("publish", testPVName, testPodUID)
			device := publish
			if tc.symlink {
				device = filepath.Join(e.root, "dev-sdb")
				if err := os.WriteFile(device, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(publish); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(device, publish); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.m.Expand(testContext(t), pod, blockPV(), Expansion{NewSize: resource.MustParse("2Gi"), AtMount: tc.atMount}); err != nil {
				t.Fatal(err)
			}
			want := &csipb.NodeExpandVolumeRequest{
				VolumeId:         testHandle,
				VolumePath:       device,
				CapacityRange:    &csipb.CapacityRange{RequiredBytes: 2 << 30},
				VolumeCapability: blockCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER),
			}
			if tc.wantStaging {
				want.StagingTargetPath = e.blockDir("staging", testPVName)
			}
			if diff := cmp.Diff(want, request[*csipb.NodeExpandVolumeRequest](t, e.drv, "NodeExpandVolume"), protocmp.Transform()); diff != "" {
				t.Errorf("NodeExpandVolume (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExpandBlockUnpublished: a block volume with nothing at its publish
// path is not expanded: a final failure, no NodeExpandVolume.
func TestExpandBlockUnpublished(t *testing.T) {
	e := newBlockEnv(t, expandCaps(), csiDriver(nil))
	err := e.m.Expand(testContext(t), testPod(testPodUID), blockPV(), Expansion{NewSize: resource.MustParse("2Gi")})
	if err == nil || FailureOf(err) != ExpandFailed || !strings.Contains(err.Error(), "the device published at") {
		t.Errorf("Expand() = %v (failure %v), want a final failure naming the publish path", err, FailureOf(err))
	}
	if n := len(e.drv.CallsTo("NodeExpandVolume")); n != 0 {
		t.Errorf("%d NodeExpandVolume calls, want none", n)
	}
}
