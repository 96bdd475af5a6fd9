package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
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
// the pod, the device untouched. In the same cluster: a blank local disk
// (checkLocalDeviceFilesystem) and a fibre channel one (checkFCVolume).
func TestBlockVolume(t *testing.T) {
	dev, file := loopDevice(t)
	e := startClusterEnv(t)
	e.node.extraArgs = append(e.node.extraArgs, "--volume-stats-agg-period=2s")
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
	checkBlockVolumeStats(t, e)

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "block", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the pod's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", uid))
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(dev); err != nil {
		t.Errorf("the device after the pod: %v", err)
	}
	checkLocalDeviceFilesystem(t, e)
	checkFCVolume(t, e)
}

// checkLocalDeviceFilesystem (in TestBlockVolume's cluster): a claim of
// volumeMode Filesystem bound to a local PersistentVolume on a blank
// block device: berth formats it (ext4, upstream's default), mounts it
// once at upstream's plugins/kubernetes.io/local-volume/mounts/<pv>,
// binds that into the pod, and unmounts it after the pod; a second pod
// finds the first one's file (not formatted again).
func checkLocalDeviceFilesystem(t *testing.T, e *clusterEnv) {
	t.Helper()
	dev, _ := loopDevice(t)
	ctx := context.Background()
	_, err := e.admin.CoreV1().PersistentVolumes().Create(ctx,
		claimVolume("e2e-disk", "e2e-disk", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dev}}), metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "disk-data"}, Spec: claimSpec("e2e-disk")}, metav1.CreateOptions{})
	must(t, err)
	pod := func(name, script string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](1),
				RestartPolicy: corev1.RestartPolicyNever,
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "disk-data"}}}},
				Containers: []corev1.Container{{
					Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:      []string{"sh", "-c", script},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}},
			},
		}
	}
	global := filepath.Join(e.node.rootDir, "plugins", "kubernetes.io", "local-volume", "mounts", "e2e-disk")
	mounted := func() bool {
		b, err := os.ReadFile("/proc/self/mountinfo")
		must(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[4] == global {
				return true
			}
		}
		return false
	}

	created, err := e.admin.CoreV1().Pods("default").Create(ctx, pod("writer", "echo kept > /data/hello && sync; sleep 3600"), metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "writer")
	if !mounted() {
		t.Fatalf("%s is not a mount point while the pod runs", global)
	}
	if out, err := exec.Command("blkid", "-o", "value", "-s", "TYPE", dev).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ext4" {
		t.Errorf("blkid %s = %q, %v; want ext4", dev, out, err)
	}
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "writer", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the writer's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", string(created.UID)))
		return os.IsNotExist(err)
	})
	if mounted() {
		t.Errorf("%s still mounted after its only pod", global)
	}

	_, err = e.admin.CoreV1().Pods("default").Create(ctx, pod("reader", "cat /data/hello > /dev/termination-log"), metav1.CreateOptions{})
	must(t, err)
	e.node.waitFor("the reader to end with the writer's file", func() bool {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "reader", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			return false
		}
		term := p.Status.ContainerStatuses[0].State.Terminated
		if term.ExitCode != 0 || strings.TrimSpace(term.Message) != "kept" {
			t.Fatalf("reader ended with %d %q; want 0 and the writer's file", term.ExitCode, term.Message)
		}
		return true
	})
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "reader", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the device unmounted after the reader", func() bool { return !mounted() })
}

// checkBlockVolumeStats (in TestBlockVolume, its pod running): the block
// volume is in /stats/summary with its claim's pvcRef, the device's
// 16 MiB as its capacity and 0 for the other figures, and its claim's
// kubelet_volume_stats_capacity_bytes is on /metrics, as upstream's
// local block mapper (metricsBlock) reports it.
func checkBlockVolumeStats(t *testing.T, e *clusterEnv) {
	t.Helper()
	ctx := context.Background()
	raw := func(path string) (string, error) {
		return e.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy"+path)
	}
	var data *statsapi.VolumeStats
	e.node.waitFor("the block volume in /stats/summary", func() bool {
		body, err := raw("/stats/summary")
		var sum statsapi.Summary
		if err != nil || json.Unmarshal([]byte(body), &sum) != nil {
			return false
		}
		if ps := findPodStats(sum.Pods, "block"); ps != nil {
			data = findVolume(ps.VolumeStats, "data")
		}
		return data != nil
	})
	if want := (statsapi.PVCReference{Name: "block-data", Namespace: "default"}); data.PVCRef == nil || *data.PVCRef != want {
		t.Errorf("block volume pvcRef %+v, want %+v", data.PVCRef, want)
	}
	if data.CapacityBytes == nil || *data.CapacityBytes != 16<<20 {
		t.Errorf("block volume capacity %v, want the device's 16 MiB", data.CapacityBytes)
	}
	if data.UsedBytes == nil || *data.UsedBytes != 0 || data.Inodes == nil || *data.Inodes != 0 {
		t.Errorf("block volume stats %+v, want 0 used bytes and inodes, as upstream", data.FsStats)
	}
	e.node.waitFor("the block claim's kubelet_volume_stats_capacity_bytes on /metrics", func() bool {
		body, err := raw("/metrics")
		return err == nil && strings.Contains(body, `kubelet_volume_stats_capacity_bytes{namespace="default",persistentvolumeclaim="block-data"} 1.6777216e+07`)
	})
}
