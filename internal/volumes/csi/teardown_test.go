package csi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

// publishedEnv is a Mounter whose staging driver (which manages its
// targets) published testPV for pods "a" and "b".
func publishedEnv(t *testing.T) *mounterEnv {
	t.Helper()
	e := newMounterEnv(t, stageCaps(), csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) }),
		secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
	e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: stageCaps(), ManageTargets: true})
	for _, uid := range []string{"a", "b"} {
		if _, err := e.m.SetUp(testContext(t), testPod(uid), testPV()); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// TestTearDownUnstagesAfterTheLastPublication: the first tear-down only
// unpublishes; the last one unstages too; each leaves nothing of its own.
func TestTearDownUnstagesAfterTheLastPublication(t *testing.T) {
	e := publishedEnv(t)
	if got := len(e.drv.CallsTo("NodeStageVolume")); got != 2 {
		t.Errorf("NodeStageVolume called %d times, want 2 (once a set-up)", got)
	}
	ta, tb := e.target("a", testPVName), e.target("b", testPVName)

	before := len(e.drv.Calls())
	if err := e.m.TearDown(testContext(t), ta); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeUnpublishVolume"}, e.drv.Methods()[before:]); diff != "" {
		t.Errorf("first tear-down's calls (-want +got):\n%s", diff)
	}
	want := &csipb.NodeUnpublishVolumeRequest{VolumeId: testHandle, TargetPath: ta}
	if diff := cmp.Diff(want, e.drv.CallsTo("NodeUnpublishVolume")[0].Request, protocmp.Transform()); diff != "" {
		t.Errorf("NodeUnpublishVolume (-want +got):\n%s", diff)
	}
	if exists(t, filepath.Dir(ta)) {
		t.Errorf("%s left", filepath.Dir(ta))
	}
	if !exists(t, e.staging(testHandle)) || !exists(t, filepath.Join(filepath.Dir(e.staging(testHandle)), "vol_data.json")) {
		t.Fatal("unstaged while pod b has it published")
	}

	before = len(e.drv.Calls())
	if err := e.m.TearDown(testContext(t), tb); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeUnpublishVolume", "NodeGetCapabilities", "NodeUnstageVolume"}, e.drv.Methods()[before:]); diff != "" {
		t.Errorf("last tear-down's calls (-want +got):\n%s", diff)
	}
	wantUnstage := &csipb.NodeUnstageVolumeRequest{VolumeId: testHandle, StagingTargetPath: e.staging(testHandle)}
	if diff := cmp.Diff(wantUnstage, request[*csipb.NodeUnstageVolumeRequest](t, e.drv, "NodeUnstageVolume"), protocmp.Transform()); diff != "" {
		t.Errorf("NodeUnstageVolume (-want +got):\n%s", diff)
	}
	for _, dir := range []string{filepath.Dir(tb), filepath.Dir(e.staging(testHandle))} {
		if exists(t, dir) {
			t.Errorf("%s left", dir)
		}
	}
	if e.m.locks.len() != 0 {
		t.Errorf("%d volume locks left", e.m.locks.len())
	}
}

// TestTearDownRetriesAFailedUnstage: the target's vol_data.json stays
// until the volume is unstaged, so that the next tear-down unstages it.
func TestTearDownRetriesAFailedUnstage(t *testing.T) {
	e := publishedEnv(t)
	if err := e.m.TearDown(testContext(t), e.target("a", testPVName)); err != nil {
		t.Fatal(err)
	}
	tb := e.target("b", testPVName)
	e.drv.Fail("NodeUnstageVolume", status.Error(codes.Internal, "device busy"))
	if err := e.m.TearDown(testContext(t), tb); err == nil || !strings.Contains(err.Error(), "device busy") {
		t.Fatalf("TearDown error %v, want the unstage's", err)
	}
	if !exists(t, filepath.Join(filepath.Dir(tb), "vol_data.json")) || !exists(t, e.staging(testHandle)) {
		t.Fatal("the target's vol_data.json or the staging directory went with the unstage failed")
	}
	e.drv.Fail("NodeUnstageVolume", nil)
	if err := e.m.TearDown(testContext(t), tb); err != nil {
		t.Fatal(err)
	}
	if got := len(e.drv.CallsTo("NodeUnstageVolume")); got != 2 {
		t.Errorf("NodeUnstageVolume called %d times, want 2", got)
	}
	if exists(t, filepath.Dir(tb)) || exists(t, filepath.Dir(e.staging(testHandle))) {
		t.Error("directories left after the unstage")
	}
}

// TestTearDownKeepsATargetWithData: a target the driver left with files
// in it, or still a mount point, stays with its vol_data.json, and the
// volume stays staged.
func TestTearDownKeepsATargetWithData(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(e *mounterEnv, target string)
		want  string
	}{
		{"files in it", func(e *mounterEnv, target string) {
			e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: stageCaps()}) // leaves the target
			if err := os.WriteFile(filepath.Join(target, "data"), []byte("keep"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "directory not empty"},
		{"a mount point", func(e *mounterEnv, target string) {
			e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: stageCaps()})
			e.mountPoints[target] = true
		}, "still a mount point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := publishedEnv(t)
			if err := e.m.TearDown(testContext(t), e.target("b", testPVName)); err != nil {
				t.Fatal(err)
			}
			target := e.target("a", testPVName)
			tc.setup(e, target)
			err := e.m.TearDown(testContext(t), target)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("TearDown error %v, want one saying %q", err, tc.want)
			}
			if !exists(t, target) || !exists(t, filepath.Join(filepath.Dir(target), "vol_data.json")) {
				t.Error("the target or its vol_data.json went")
			}
			if tc.name == "files in it" && !exists(t, filepath.Join(target, "data")) {
				t.Error("the target's data went")
			}
			if calls := e.drv.CallsTo("NodeUnstageVolume"); len(calls) != 0 {
				t.Errorf("unstaged under a target that stays: %v", calls)
			}
		})
	}
}

// TestTearDownWithoutVolData: nothing published; empty directories go,
// a directory with data stays and is an error; the driver is not called.
func TestTearDownWithoutVolData(t *testing.T) {
	e := newMounterEnv(t, stageCaps())
	target := e.target("a", "gone")
	if err := os.MkdirAll(target, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := e.m.TearDown(testContext(t), target); err != nil {
		t.Fatal(err)
	}
	if exists(t, filepath.Dir(target)) {
		t.Error("empty directories left")
	}
	if err := e.m.TearDown(testContext(t), target); err != nil {
		t.Errorf("TearDown of a target that is gone: %v", err)
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "data"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.m.TearDown(testContext(t), target); err == nil {
		t.Error("TearDown of a target with data and no vol_data.json succeeded")
	}
	if !exists(t, filepath.Join(target, "data")) {
		t.Error("data removed")
	}
	if calls := e.drv.Methods(); len(calls) != 0 {
		t.Errorf("driver called: %v", calls)
	}
}

// TestTearDownDriverMissing: the driver gone is upstream's error, and
// everything stays.
func TestTearDownDriverMissing(t *testing.T) {
	e := publishedEnv(t)
	endpoint, _ := e.drivers.Get(testDriver)
	e.drivers.remove(testDriver, endpoint)
	target := e.target("a", testPVName)
	err := e.m.TearDown(testContext(t), target)
	if want := "driver name csi.example.com not found in the list of registered CSI drivers"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("TearDown error %v, want one saying %q", err, want)
	}
	if !exists(t, filepath.Join(filepath.Dir(target), "vol_data.json")) {
		t.Error("vol_data.json went")
	}
}

// TestTearDownRefusesOtherPaths: only a TargetDir under PodsDir.
func TestTearDownRefusesOtherPaths(t *testing.T) {
	e := newMounterEnv(t, stageCaps())
	for _, p := range []string{
		e.staging(testHandle),
		filepath.Join(e.podsDir(), "a", "volumes", "kubernetes.io~empty-dir", "x", "mount"),
		filepath.Join(e.podsDir(), "a", "volumes", "kubernetes.io~csi", "x"),
		filepath.Join(e.root, "elsewhere", "a", "volumes", "kubernetes.io~csi", "x", "mount"),
	} {
		if err := e.m.TearDown(testContext(t), p); err == nil {
			t.Errorf("TearDown(%s) succeeded", p)
		}
	}
}

// TestTearDownInline: an inline volume is unpublished, never unstaged;
// a vol_data.json half written by a crash goes too.
func TestTearDownInline(t *testing.T) {
	e := newMounterEnv(t, stageCaps(), csiDriver(func(s *storagev1.CSIDriverSpec) {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}
	}))
	if _, err := e.m.SetUp(testContext(t), testPod("a"), Volume{SpecName: "scratch", Driver: testDriver, Inline: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(e.target("a", "scratch")), ".vol_data.json-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(e.drv.Calls())
	if err := e.m.TearDown(testContext(t), e.target("a", "scratch")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeUnpublishVolume"}, e.drv.Methods()[before:]); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if exists(t, filepath.Dir(e.target("a", "scratch"))) {
		t.Error("volume directory left")
	}
}
