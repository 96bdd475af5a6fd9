package volume

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// hostBlockDevice returns a block device of this machine (its path only is
// used: nothing is opened), or skips.
func hostBlockDevice(t *testing.T) string {
	t.Helper()
	paths, _ := filepath.Glob("/dev/*")
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil && info.Mode()&fs.ModeDevice != 0 && info.Mode()&fs.ModeCharDevice == 0 {
			return p
		}
	}
	t.Skip("no block device on this machine")
	return ""
}

// blockPod uses claim c as a device.
func blockPod(readOnly bool) *corev1.Pod {
	pod := claimPod(pvcSource("c", readOnly))
	pod.Spec.Containers[0].VolumeMounts = nil
	pod.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/xvda"}}
	return pod
}

// TestLocalBlockVolume: a local volume of volumeMode Block is linked at
// volumeDevices/kubernetes.io~local-volume/<pv> (nothing mounted), and the
// link goes at tear-down, the device untouched.
func TestLocalBlockVolume(t *testing.T) {
	dev := hostBlockDevice(t)
	pvc, pv := boundClaim("c", "block-pv", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dev}})
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	e := newEnv(t, pvc, pv)
	pod := blockPod(false)
	for range 2 { // a second sync finds the link in place
		paths, err := e.m.SetUp(context.Background(), pod)
		if err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(e.dir, "uid-1", "volumeDevices", "kubernetes.io~local-volume", "block-pv")
		if paths["data"] != link {
			t.Fatalf("SetUp() paths = %v, want data at %s", paths, link)
		}
		if got, err := os.Readlink(link); err != nil || got != dev {
			t.Fatalf("link %s -> %q, %v; want %s", link, got, err, dev)
		}
	}
	if got := e.mounter.snapshot(); len(got) != 0 {
		t.Errorf("mounts %v for a block volume, want none", got)
	}
	if err := e.m.TearDown(context.Background(), pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(e.dir, "uid-1", "volumeDevices")); !os.IsNotExist(err) {
		t.Errorf("volumeDevices after TearDown: %v", err)
	}
	if _, err := os.Stat(dev); err != nil {
		t.Errorf("the device after TearDown: %v", err)
	}
}

// TestLocalDeviceFilesystem: a local volume of volumeMode Filesystem on a
// block device is mounted once at
// plugins/kubernetes.io/local-volume/mounts/<pv> (formatted when blank, as
// upstream: fsType ext4 unless set, "ro" for a read-only claim, the
// volume's mountOptions), and that mount is bound into each pod; the
// device is unmounted when the last pod's bind goes, not before. Without
// a plugins directory the volume is refused.
func TestLocalDeviceFilesystem(t *testing.T) {
	dev := hostBlockDevice(t)
	pvc, pv := boundClaim("c", "disk-pv", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dev, FSType: ptr.To("xfs")}})
	pv.Spec.MountOptions = []string{"noatime"}
	e := newEnv(t, pvc, pv)
	plugins := filepath.Join(e.dir, "plugins")
	m, err := New(Config{PodsDir: e.dir, Client: e.client, Clock: e.clock, Mounter: e.mounter, PluginsDir: plugins})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	global := filepath.Join(plugins, "kubernetes.io", "local-volume", "mounts", "disk-pv")
	first, second := claimPod(pvcSource("c", true)), claimPod(pvcSource("c", false))
	second.UID = "uid-2"
	for _, pod := range []*corev1.Pod{first, second} {
		paths, err := m.SetUp(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(e.dir, string(pod.UID), "volumes", "kubernetes.io~local-volume", "disk-pv"); paths["data"] != want {
			t.Errorf("SetUp() paths = %v, want data at %s", paths, want)
		}
	}
	if diff := cmp.Diff(map[string]string{global: dev + " xfs ro,noatime"}, e.mounter.devices); diff != "" {
		t.Errorf("device mounts (-want +got):\n%s", diff)
	}
	if err := m.TearDown(ctx, first.UID); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.mounter.IsMountPoint(global); !ok {
		t.Fatal("the device was unmounted while a pod still binds it")
	}
	if err := m.TearDown(ctx, second.UID); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.mounter.IsMountPoint(global); ok {
		t.Error("the device is still mounted after its last pod")
	}
	if _, err := os.Stat(global); !os.IsNotExist(err) {
		t.Errorf("device mount point after the last pod: %v", err)
	}
	if _, err := os.Stat(dev); err != nil {
		t.Errorf("the device after TearDown: %v", err)
	}

	pv.Spec.Local.FSType = nil
	if fsType, opts := localDeviceMountArgs(pv, false); fsType != "ext4" || !cmp.Equal(opts, []string{"noatime"}) {
		t.Errorf("localDeviceMountArgs(no fsType) = %q, %v; want ext4, [noatime]", fsType, opts)
	}
	// Without a plugins directory (e.m has none) it is refused.
	if _, err := e.m.SetUp(ctx, claimPod(pvcSource("c", false))); err == nil || !strings.Contains(err.Error(), "no plugins directory") {
		t.Errorf("SetUp() without PluginsDir = %v", err)
	}
}

// TestBlockVolumeRefusals: a local Block volume whose path is no block
// device, an iscsi Block volume, and a CSI one standalone, fail with
// errors naming why.
func TestBlockVolumeRefusals(t *testing.T) {
	file := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  corev1.PersistentVolumeSource
		want string
	}{
		{corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: file}}, `is not a block device`},
		{corev1.PersistentVolumeSource{ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "t", IQN: "i"}}, `type iscsi of volumeMode Block is not supported by berth yet`},
		{corev1.PersistentVolumeSource{RBD: &corev1.RBDPersistentVolumeSource{CephMonitors: []string{"m"}, RBDImage: "i"}}, `type rbd has no volume plugin: it was removed from Kubernetes`},
		{corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}, `CSI volumes need an API server (berth runs standalone)`},
	} {
		pvc, pv := boundClaim("c", "block-pv", tc.src)
		pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
		e := newEnv(t, pvc, pv)
		_, err := e.m.SetUp(context.Background(), blockPod(false))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetUp() = %v, want %q", err, tc.want)
		}
	}
}

// csiBlockEnv is csiEnv with claim c bound to a CSI PersistentVolume
// "pv-csi" of volumeMode Block.
func csiBlockEnv(t *testing.T) (env, *fakeCSI) {
	t.Helper()
	pvc, pv := boundClaim("c", "pv-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: "mock.csi", VolumeHandle: "vol-1", VolumeAttributes: map[string]string{"a": "b"},
		NodePublishSecretRef: &corev1.SecretReference{Namespace: "sec", Name: "publish"},
	}})
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	e, f := csiEnv(t, csi.Published{})
	for _, o := range []runtime.Object{pvc, pv} {
		if err := e.client.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return e, f
}

// TestCSIBlockClaim: a claim bound to a CSI PersistentVolume of
// volumeMode Block is mapped by the mounter, its device link is the
// volume's path (the containers' device); a sync and a restart of berth
// in the same boot map nothing again; tear-down unmaps the pod's block
// volumes before the links go.
func TestCSIBlockClaim(t *testing.T) {
	e, f := csiBlockEnv(t)
	ctx := context.Background()
	pod := blockPod(true)
	link := filepath.Join(e.dir, "uid-1", "volumeDevices", "kubernetes.io~csi", "pv-csi")
	for range 2 {
		paths, err := e.m.SetUp(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		if paths["data"] != link {
			t.Fatalf("SetUp() paths = %v, want data at %s", paths, link)
		}
	}
	want := []csi.Volume{{
		SpecName: "pv-csi", Driver: "mock.csi", Handle: "vol-1", ReadOnly: true,
		Attributes: map[string]string{"a": "b"}, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PublishSecret: &corev1.SecretReference{Namespace: "sec", Name: "publish"}, Block: true,
	}}
	if diff := cmp.Diff(want, f.maps); diff != "" {
		t.Errorf("mounter MapBlocks (-want +got):\n%s", diff)
	}
	if len(f.setUps) != 0 {
		t.Errorf("a block volume was set up as a filesystem: %v", f.setUps)
	}

	restarted, err := New(Config{PodsDir: e.dir, Clock: e.clock, Mounter: e.mounter, Client: e.client, CSI: f, BootID: "boot-1"})
	if err != nil {
		t.Fatal(err)
	}
	if paths, err := restarted.SetUp(ctx, pod); err != nil || paths["data"] != link {
		t.Fatalf("SetUp() after a restart = %v, %v", paths, err)
	}
	if len(f.maps) != 1 {
		t.Errorf("mapped %d times after a restart, want once", len(f.maps))
	}

	f.downErr = errors.New("driver gone")
	if err := restarted.TearDown(ctx, pod.UID); err == nil {
		t.Fatal("TearDown() succeeded with the driver gone")
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the link went with a failed unmap: %v", err)
	}
	restarted.cfg.CSI = nil
	if err := restarted.TearDown(ctx, pod.UID); err == nil || !strings.Contains(err.Error(), "no CSI driver can unmap it") {
		t.Errorf("TearDown() standalone = %v", err)
	}
	restarted.cfg.CSI, f.downErr = f, nil
	if err := restarted.TearDown(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]types.UID{"uid-1", "uid-1"}, f.unmaps); diff != "" {
		t.Errorf("UnmapPodBlocks (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(e.dir, "uid-1", "volumeDevices")); !os.IsNotExist(err) {
		t.Errorf("volumeDevices after TearDown: %v", err)
	}
	if _, err := os.Lstat(readyMarker(e.dir, "uid-1", "data")); !os.IsNotExist(err) {
		t.Errorf("ready marker after TearDown: %v", err)
	}
}

// TestCSIBlockMapFailure: a failed map is a FailedMapVolume event worded
// as upstream's, with the step that failed, and is tried again.
func TestCSIBlockMapFailure(t *testing.T) {
	e, f := csiBlockEnv(t)
	f.mapErr = &csi.MapError{Op: csi.OpMapBlockVolume, Err: errors.New(`the CSI driver published "/p", which is not a block device`)}
	pod := blockPod(false)
	if _, err := e.m.SetUp(context.Background(), pod); err == nil {
		t.Fatal("SetUp() succeeded")
	}
	want := []string{`Warning FailedMapVolume MapVolume.MapBlockVolume failed for volume "pv-csi" : the CSI driver published "/p", which is not a block device`}
	if diff := cmp.Diff(want, e.events.messages); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	f.mapErr = nil
	if _, err := e.m.SetUp(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if len(f.maps) != 2 {
		t.Errorf("%d maps, want 2", len(f.maps))
	}
}
