package e2e

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// fcWWN is the target world wide name of the e2e fibre channel disk, one
// no host here has.
const fcWWN = "5000b3e2d4c6f801"

// fcDisk makes a loop device look like LUN 0 of target fcWWN to the fc
// plugin: a /dev/disk/by-path link as udev names an FC disk's, removed
// (with the directories it needed) by t.Cleanup. It returns the device.
func fcDisk(t *testing.T) string {
	t.Helper()
	dev, _ := loopDevice(t)
	byPath := "/dev/disk/by-path"
	var made []string
	for d := byPath; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	must(t, os.MkdirAll(byPath, 0o755))
	link := filepath.Join(byPath, "pci-0000:00:00.0-fc-0x"+fcWWN+"-lun-0")
	must(t, os.Symlink(dev, link))
	t.Cleanup(func() {
		_ = os.Remove(link)
		for _, d := range made {
			_ = os.Remove(d)
		}
	})
	return dev
}

// checkFCVolume (in TestBlockVolume's cluster): a pod's inline fc volume
// reaches its container: berth finds the disk by its by-path link, formats
// it (ext4, upstream's default), mounts it once at upstream's
// plugins/kubernetes.io/fc/<wwn>-lun-<lun>, binds that into the pod at
// volumes/kubernetes.io~fc/<volume>, and reports it in the Node's
// status.volumesInUse under upstream's unique name; after the pod the disk
// is unmounted, its mount point removed, and it leaves volumesInUse.
func checkFCVolume(t *testing.T, e *clusterEnv) {
	t.Helper()
	dev := fcDisk(t)
	ctx := context.Background()
	created, err := e.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "fc"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{{Name: "disk", VolumeSource: corev1.VolumeSource{
				FC: &corev1.FCVolumeSource{TargetWWNs: []string{fcWWN}, Lun: ptr.To[int32](0)}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", "echo on-the-disk > /disk/hello && sync; sleep 3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "disk", MountPath: "/disk"}},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "fc")
	global := filepath.Join(e.node.rootDir, "plugins", "kubernetes.io", "fc", fcWWN+"-lun-0")
	bind := filepath.Join(e.node.rootDir, "pods", string(created.UID), "volumes", "kubernetes.io~fc", "disk")
	e.node.waitFor("the pod's file on the disk", func() bool {
		b, err := os.ReadFile(filepath.Join(bind, "hello"))
		return err == nil && string(b) == "on-the-disk\n"
	})
	for _, p := range []string{global, bind} {
		if !mountedAt(t, p) {
			t.Errorf("%s is not a mount point while the pod runs", p)
		}
	}
	if out, err := exec.Command("blkid", "-o", "value", "-s", "TYPE", dev).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ext4" {
		t.Errorf("blkid %s = %q, %v; want ext4", dev, out, err)
	}
	unique := corev1.UniqueVolumeName("kubernetes.io/fc/[" + fcWWN + "]:0")
	e.waitAPI(t, "the fc volume in the Node's volumesInUse", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && slices.Contains(n.Status.VolumesInUse, unique), err
	})

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "fc", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the fc pod's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", string(created.UID)))
		return os.IsNotExist(err)
	})
	if mountedAt(t, global) {
		t.Errorf("%s still mounted after its only pod", global)
	}
	if _, err := os.Stat(global); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the disk's mount point after its only pod: %v", err)
	}
	if _, err := os.Stat(dev); err != nil {
		t.Errorf("the loop device after the pod: %v", err)
	}
	e.waitAPI(t, "the fc volume out of the Node's volumesInUse", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && !slices.Contains(n.Status.VolumesInUse, unique), err
	})
}
