package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// loopDevice attaches a 16 MiB file as a loop device and returns the
// device and the file; t.Cleanup detaches it.
func loopDevice(t *testing.T) (dev, file string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "disk.img")
	must(t, os.WriteFile(file, make([]byte, 16<<20), 0o600))
	out, err := exec.Command("losetup", "--find", "--show", file).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev = strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	return dev, file
}

// TestBlockVolume: a claim of volumeMode Block bound to a local
// PersistentVolume on a block device reaches the container as a device
// at its volumeDevices path (written there, seen on the host's device);
// berth links it at upstream's volumeDevices path, and the link goes with
// the pod, the device untouched.
func TestBlockVolume(t *testing.T) {
	dev, file := loopDevice(t)
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	pv := claimVolume("e2e-block", "e2e-block", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dev}})
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	_, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	must(t, err)
	spec := claimSpec("e2e-block")
	spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "block-data"}, Spec: spec}, metav1.CreateOptions{})
	must(t, err)
	created, err := e.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "block"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "block-data"}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:       []string{"sh", "-c", "[ -b /dev/xvda ] && printf written-by-the-pod | dd of=/dev/xvda conv=fsync 2>/dev/null; sleep 3600"},
				VolumeDevices: []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/xvda"}},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	uid := string(created.UID)
	e.waitPodRunning(t, "block")
	e.node.waitFor("the pod's write on the device", func() bool {
		b, err := os.ReadFile(file)
		return err == nil && strings.HasPrefix(string(b), "written-by-the-pod")
	})
	link := filepath.Join(e.node.rootDir, "pods", uid, "volumeDevices", "kubernetes.io~local-volume", "e2e-block")
	if got, err := os.Readlink(link); err != nil || got != dev {
		t.Errorf("link %s -> %q, %v; want %s", link, got, err, dev)
	}

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "block", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the pod's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", uid))
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(dev); err != nil {
		t.Errorf("the device after the pod: %v", err)
	}
}
