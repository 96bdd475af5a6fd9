package volume

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
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

// TestBlockVolumeRefusals: a local Block volume whose path is no block
// device, and a CSI Block volume, fail with errors naming why.
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
		{corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}, `type csi of volumeMode Block is not supported by berth yet`},
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
