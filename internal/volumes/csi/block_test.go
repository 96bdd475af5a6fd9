package csi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

// blockDir is upstream's <plugins>/kubernetes.io/csi/volumeDevices, by
// hand.
func (e *mounterEnv) blockDir(elems ...string) string {
	return filepath.Join(append([]string{e.root, "plugins", "kubernetes.io", "csi", "volumeDevices"}, elems...)...)
}

// blockPV is testPV of volumeMode Block: no fsType, no mount options.
func blockPV() Volume {
	v := testPV()
	v.FSType, v.MountOptions = "", nil
	v.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	v.Block = true
	return v
}

func blockCap(mode csipb.VolumeCapability_AccessMode_Mode) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
	}
}

func newBlockEnv(t *testing.T, caps []csipb.NodeServiceCapability_RPC_Type, driver *storagev1.CSIDriver) *mounterEnv {
	t.Helper()
	e := newMounterEnv(t, caps, driver,
		attachment(testHandle, true, map[string]string{"devicePath": "/dev/sdb"}),
		secret("kube-system", "stage", map[string]string{"stage-key": "s"}),
		secret("kube-system", "publish", map[string]string{"publish-key": "p"}))
	e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: caps, ManageTargets: true})
	return e
}

// TestMapBlockStagesPublishesMaps: a persistent volume of volumeMode
// Block is staged, published and then bound at its global map path and
// linked in the pod, at upstream's paths and with upstream's requests.
func TestMapBlockStagesPublishesMaps(t *testing.T) {
	e := newBlockEnv(t, stageCaps(), csiDriver(func(s *storagev1.CSIDriverSpec) {
		s.PodInfoOnMount = ptr.To(true)
		s.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}} // not for block, as upstream
	}))
	pod := testPod(testPodUID)
	v := blockPV()
	v.ReadOnly = true

	link, err := e.m.MapBlock(testContext(t), pod, v)
	if err != nil {
		t.Fatal(err)
	}
	staging := e.blockDir("staging", testPVName)
	publish := e.blockDir("publish", testPVName, testPodUID)
	podMap := e.blockDir(testPVName, "dev", testPodUID)
	wantLink := filepath.Join(e.root, "pods", testPodUID, "volumeDevices", "kubernetes.io~csi", testPVName)
	if link != wantLink {
		t.Errorf("link %q, want %q", link, wantLink)
	}
	if diff := cmp.Diff([]string{"NodeGetCapabilities", "NodeStageVolume", "NodePublishVolume"}, e.drv.Methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	publishContext := map[string]string{"devicePath": "/dev/sdb"}
	wantStage := &csipb.NodeStageVolumeRequest{
		VolumeId: testHandle, PublishContext: publishContext, StagingTargetPath: staging,
		VolumeCapability: blockCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER),
		Secrets:          map[string]string{"stage-key": "s"}, VolumeContext: map[string]string{"attr": "value"},
	}
	if diff := cmp.Diff(wantStage, request[*csipb.NodeStageVolumeRequest](t, e.drv, "NodeStageVolume"), protocmp.Transform()); diff != "" {
		t.Errorf("NodeStageVolume (-want +got):\n%s", diff)
	}
	wantPublish := &csipb.NodePublishVolumeRequest{
		VolumeId: testHandle, PublishContext: publishContext, StagingTargetPath: staging, TargetPath: publish,
		VolumeCapability: blockCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER),
		Readonly:         true,
		Secrets:          map[string]string{"publish-key": "p"},
		VolumeContext: map[string]string{
			"attr":                                   "value",
			"csi.storage.k8s.io/pod.name":            pod.Name,
			"csi.storage.k8s.io/pod.namespace":       pod.Namespace,
			"csi.storage.k8s.io/pod.uid":             testPodUID,
			"csi.storage.k8s.io/serviceAccount.name": "sa",
			"csi.storage.k8s.io/ephemeral":           "false",
		},
	}
	if diff := cmp.Diff(wantPublish, request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume"), protocmp.Transform()); diff != "" {
		t.Errorf("NodePublishVolume (-want +got):\n%s", diff)
	}
	wantMounts := []string{"bind " + publish + " " + podMap + " after [NodeGetCapabilities NodeStageVolume NodePublishVolume]", "attach loop " + podMap}
	if diff := cmp.Diff(wantMounts, e.mounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	if got, err := os.Readlink(link); err != nil || got != publish {
		t.Errorf("link to %q (%v), want %q", got, err, publish)
	}
	wantData := map[string]string{
		"specVolID": testPVName, "volumeHandle": testHandle, "driverName": testDriver, "nodeName": testNode,
		"attachmentID": attachmentName(testHandle, testDriver, testNode),
	}
	if diff := cmp.Diff(wantData, readVolData(t, e.blockDir(testPVName, "data"))); diff != "" {
		t.Errorf("vol_data.json (-want +got):\n%s", diff)
	}

	// Mapped again (a sync after a failure elsewhere): nothing bound twice
	// (the loop device's attach finds its own).
	if _, err := e.m.MapBlock(testContext(t), pod, v); err != nil {
		t.Fatal(err)
	}
	if len(e.mounts) != 3 || e.mounts[2] != "attach loop "+podMap {
		t.Errorf("mounts after a second MapBlock: %v", e.mounts)
	}
}

// TestUnmapBlockOrder: the first pod's unmap unmounts its global map
// entry and unpublishes; the last pod's unpublishes, then unstages, and
// every directory of the volume goes.
func TestUnmapBlockOrder(t *testing.T) {
	e := newBlockEnv(t, stageCaps(), csiDriver(nil))
	ctx := testContext(t)
	for _, uid := range []string{"pod-a", "pod-b"} {
		if _, err := e.m.MapBlock(ctx, testPod(uid), blockPV()); err != nil {
			t.Fatal(err)
		}
	}
	e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: stageCaps(), ManageTargets: true})
	before := len(e.drv.Calls())
	e.mounts = nil

	if err := e.m.UnmapBlock(ctx, "pod-a", testPVName); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeUnpublishVolume"}, e.drv.Methods()[before:]); diff != "" {
		t.Errorf("calls of the first unmap (-want +got):\n%s", diff)
	}
	if got := request[*csipb.NodeUnpublishVolumeRequest](t, e.drv, "NodeUnpublishVolume").TargetPath; got != e.blockDir("publish", testPVName, "pod-a") {
		t.Errorf("NodeUnpublishVolume at %q", got)
	}
	if exists(t, DeviceLink(e.podsDir(), "pod-a", testPVName)) || exists(t, e.blockDir(testPVName, "dev", "pod-a")) {
		t.Error("pod-a's link or global map entry stayed")
	}
	if !exists(t, e.blockDir("staging", testPVName)) || !exists(t, e.blockDir(testPVName, "dev", "pod-b")) {
		t.Error("the volume was unstaged under pod-b")
	}

	if err := e.m.UnmapBlock(ctx, "pod-b", testPVName); err != nil {
		t.Fatal(err)
	}
	want := []string{"NodeUnpublishVolume", "NodeUnpublishVolume", "NodeGetCapabilities", "NodeUnstageVolume"}
	if diff := cmp.Diff(want, e.drv.Methods()[before:]); diff != "" {
		t.Errorf("calls of both unmaps (-want +got):\n%s", diff)
	}
	wantMounts := []string{
		"detach loop " + e.blockDir(testPVName, "dev", "pod-a"),
		"unmount " + e.blockDir(testPVName, "dev", "pod-a") + " before [" + strings.Join(e.drv.Methods()[:before], " ") + "]",
		"detach loop " + e.blockDir(testPVName, "dev", "pod-b"),
		"unmount " + e.blockDir(testPVName, "dev", "pod-b") + " before [" + strings.Join(e.drv.Methods()[:before+1], " ") + "]",
	}
	if diff := cmp.Diff(wantMounts, e.mounts); diff != "" {
		t.Errorf("unmounts (-want +got):\n%s", diff)
	}
	for _, p := range []string{e.blockDir(testPVName), e.blockDir("staging", testPVName), e.blockDir("publish", testPVName),
		filepath.Join(e.podsDir(), "pod-b", "volumeDevices", "kubernetes.io~csi", testPVName)} {
		if exists(t, p) {
			t.Errorf("%s stayed", p)
		}
	}
}

// TestUnmapPodBlocksAfterRestart: a new Mounter (berth restarted) finds
// a pod's block volumes on the disk and unmaps them.
func TestUnmapPodBlocksAfterRestart(t *testing.T) {
	e := newBlockEnv(t, stageCaps(), csiDriver(nil))
	ctx := testContext(t)
	if _, err := e.m.MapBlock(ctx, testPod(testPodUID), blockPV()); err != nil {
		t.Fatal(err)
	}
	restarted, err := NewMounter(e.m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	runMounter(t, restarted)
	names, err := restarted.BlockVolumes(testPodUID)
	if err != nil || len(names) != 1 || names[0] != testPVName {
		t.Fatalf("BlockVolumes = %v, %v; want [%s]", names, err, testPVName)
	}
	before := len(e.drv.Calls())
	if err := restarted.UnmapPodBlocks(ctx, testPodUID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeUnpublishVolume", "NodeGetCapabilities", "NodeUnstageVolume"}, e.drv.Methods()[before:]); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(e.mountPoints) != 0 {
		t.Errorf("still mounted: %v", e.mountPoints)
	}
	if names, _ := restarted.BlockVolumes(testPodUID); len(names) != 0 {
		t.Errorf("BlockVolumes after the unmap = %v", names)
	}
	// Nothing of the pod: nothing to do, no call.
	if err := restarted.UnmapPodBlocks(ctx, "other-pod"); err != nil {
		t.Fatal(err)
	}
}

// TestMapBlockWithoutStaging: a driver without STAGE_UNSTAGE_VOLUME is
// only published (still told the staging path, as upstream) and never
// unstaged.
func TestMapBlockWithoutStaging(t *testing.T) {
	e := newBlockEnv(t, nil, csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) }))
	ctx := testContext(t)
	if _, err := e.m.MapBlock(ctx, testPod(testPodUID), blockPV()); err != nil {
		t.Fatal(err)
	}
	req := request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume")
	if req.StagingTargetPath != e.blockDir("staging", testPVName) || req.PublishContext != nil {
		t.Errorf("NodePublishVolume staging %q, publish context %v", req.StagingTargetPath, req.PublishContext)
	}
	if err := e.m.UnmapBlock(ctx, testPodUID, testPVName); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeGetCapabilities", "NodePublishVolume", "NodeUnpublishVolume"}, e.drv.Methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if exists(t, e.blockDir(testPVName)) {
		t.Error("the volume's directory stayed")
	}
}

// TestMapBlockRefusals: names that cannot be one path element, an inline
// volume and a publication that is no block device are refused; the
// first two before anything touches the disk or the driver.
func TestMapBlockRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		uid  types.UID
		mod  func(*Volume)
		want string
	}{
		{name: "dot-dot", uid: testPodUID, mod: func(v *Volume) { v.SpecName = ".." }, want: `volume name ".." is not a valid path element`},
		{name: "staging", uid: testPodUID, mod: func(v *Volume) { v.SpecName = "staging" }, want: `volume name "staging" of a block volume`},
		{name: "publish", uid: testPodUID, mod: func(v *Volume) { v.SpecName = "publish" }, want: `volume name "publish" of a block volume`},
		{name: "slash", uid: testPodUID, mod: func(v *Volume) { v.SpecName = "a/b" }, want: `volume name "a/b" is not a valid path element`},
		{name: "pod UID", uid: "../x", mod: func(*Volume) {}, want: `pod UID "../x" is not a valid path element`},
		{name: "driver", uid: testPodUID, mod: func(v *Volume) { v.Driver = "../d" }, want: `CSI driver name "../d" is not a valid path element`},
		{name: "inline", uid: testPodUID, mod: func(v *Volume) { v.Inline = true }, want: "an inline CSI volume cannot be of volumeMode Block"},
		{name: "no handle", uid: testPodUID, mod: func(v *Volume) { v.Handle = "" }, want: "the volume handle is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBlockEnv(t, stageCaps(), csiDriver(nil))
			v := blockPV()
			tc.mod(&v)
			_, err := e.m.MapBlock(testContext(t), testPod(string(tc.uid)), v)
			var me *MapError
			if !errors.As(err, &me) || me.Op != OpMapPodDevice || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("MapBlock = %v, want a MapError of %s with %q", err, OpMapPodDevice, tc.want)
			}
			if calls := e.drv.Methods(); len(calls) != 0 {
				t.Errorf("driver called: %v", calls)
			}
			if exists(t, e.pluginsDir()) || exists(t, e.podsDir()) {
				t.Error("directories made")
			}
		})
	}
	if err := (&Mounter{}).UnmapBlock(testContext(t), testPodUID, "../x"); err == nil {
		t.Error("UnmapBlock of ../x: no error")
	}
}

// TestMapBlockNotADevice: a driver that publishes a plain file gets a
// MapBlockVolume error, nothing is bound or linked, and the pod's
// tear-down unpublishes and unstages it.
func TestMapBlockNotADevice(t *testing.T) {
	e := newBlockEnv(t, stageCaps(), csiDriver(nil))
	e.notBlock = true
	ctx := testContext(t)
	_, err := e.m.MapBlock(ctx, testPod(testPodUID), blockPV())
	var me *MapError
	if !errors.As(err, &me) || me.Op != OpMapBlockVolume || !strings.Contains(err.Error(), "which is not a block device") {
		t.Fatalf("MapBlock = %v, want a MapError of %s", err, OpMapBlockVolume)
	}
	if !strings.HasPrefix(err.Error(), "MapVolume.MapBlockVolume failed: the CSI driver published ") {
		t.Errorf("message %q", err)
	}
	if len(e.mounts) != 0 || exists(t, DeviceLink(e.podsDir(), testPodUID, testPVName)) {
		t.Errorf("bound or linked: %v", e.mounts)
	}
	if err := e.m.UnmapPodBlocks(ctx, testPodUID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeGetCapabilities", "NodeStageVolume", "NodePublishVolume", "NodeUnpublishVolume", "NodeGetCapabilities", "NodeUnstageVolume"}, e.drv.Methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestMapBlockStageFailure: a stage failure is a SetUpDevice error and
// nothing is published.
func TestMapBlockStageFailure(t *testing.T) {
	e := newBlockEnv(t, stageCaps(), csiDriver(nil))
	e.drv.Fail("NodeStageVolume", errors.New("boom"))
	_, err := e.m.MapBlock(testContext(t), testPod(testPodUID), blockPV())
	var me *MapError
	if !errors.As(err, &me) || me.Op != OpSetUpDevice {
		t.Fatalf("MapBlock = %v, want a MapError of %s", err, OpSetUpDevice)
	}
	if len(e.drv.CallsTo("NodePublishVolume")) != 0 {
		t.Error("published after a failed stage")
	}
	// The pod's tear-down finds the half-done map and unstages.
	e.drv.Fail("NodeStageVolume", nil)
	if err := e.m.UnmapPodBlocks(testContext(t), testPodUID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeGetCapabilities", "NodeStageVolume", "NodeUnpublishVolume", "NodeGetCapabilities", "NodeUnstageVolume"}, e.drv.Methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if exists(t, e.blockDir(testPVName)) || exists(t, e.blockDir("staging", testPVName)) {
		t.Error("the volume's directories stayed")
	}
}

// TestBlockVolumesInUse: an attachable block volume is in the node's
// volumesInUse from its map until the last pod's unmap, also for a new
// Mounter (berth restarted).
func TestBlockVolumesInUse(t *testing.T) {
	e := newBlockEnv(t, stageCaps(), csiDriver(nil))
	ctx := testContext(t)
	want := []corev1.UniqueVolumeName{corev1.UniqueVolumeName("kubernetes.io/csi/" + testDriver + "^" + testHandle)}
	for _, uid := range []string{"pod-a", "pod-b"} {
		if _, err := e.m.MapBlock(ctx, testPod(uid), blockPV()); err != nil {
			t.Fatal(err)
		}
	}
	restarted, err := NewMounter(e.m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	runMounter(t, restarted)
	for _, uid := range []types.UID{"pod-a", "pod-b"} {
		got, err := restarted.VolumesInUse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("in use before %s's unmap (-want +got):\n%s", uid, diff)
		}
		if err := restarted.UnmapBlock(ctx, uid, testPVName); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := restarted.VolumesInUse(ctx); err != nil || len(got) != 0 {
		t.Errorf("in use after the last unmap: %v, %v", got, err)
	}
}
