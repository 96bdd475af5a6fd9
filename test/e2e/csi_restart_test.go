package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// kill ends berth with SIGKILL, as a crash would: nothing of its own
// shutdown runs.
func (n *node) kill() {
	n.t.Helper()
	must(n.t, n.cmd.Process.Kill())
	<-n.exited
}

// csiRestartPod is a pod writing name to its claim's volume, then
// sleeping.
func csiRestartPod(name, claim string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", "echo " + name + " > /data/out && sleep 3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}
}

// TestCSIRestarts: berth killed while the driver publishes (after the
// stage) comes back, finds the volume, and the pod runs on it; the driver
// restarted under the running pod (it deregisters, then registers again on
// a new socket) disturbs nothing: no container restarts, nothing is
// published again; once the pod is deleted the restarted driver is asked
// to unpublish and unstage, and nothing is left mounted or on disk.
func TestCSIRestarts(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	hold := filepath.Join(t.TempDir(), "hold")
	must(t, os.WriteFile(hold, nil, 0o644))
	spec := storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}
	driver := e.registerCSIMock(t, spec, "--disable-attach", "--hold-publish", hold)
	pv := claimVolume("e2e-csi-restart", "e2e-csi-restart", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: csiDriverName, VolumeHandle: "1", FSType: "ext4",
	}})
	_, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "restart-data"}, Spec: claimSpec("e2e-csi-restart")}, metav1.CreateOptions{})
	must(t, err)
	created, err := e.admin.CoreV1().Pods("default").Create(ctx, csiRestartPod("csi-restart", "restart-data"), metav1.CreateOptions{})
	must(t, err)
	uid := string(created.UID)

	// Killed inside the publish: the stage is done, the publish held.
	e.node.waitFor("berth inside NodePublishVolume", func() bool { _, err := os.Stat(hold + ".held"); return err == nil })
	e.node.kill()
	must(t, os.Remove(hold))
	e.node.start()
	running := e.waitPodRunning(t, "csi-restart")
	target := filepath.Join(e.node.rootDir, "pods", uid, "volumes", "kubernetes.io~csi", "e2e-csi-restart", "mount")
	e.node.waitFor("the pod's write through the volume", func() bool {
		got, err := readFile(filepath.Join(target, "out"))
		return err == nil && got == "csi-restart\n"
	})

	// The driver restarted under the running pod.
	driver.stop()
	e.waitAPI(t, "the driver gone from the CSINode", func(ctx context.Context) (bool, error) {
		n, err := e.admin.StorageV1().CSINodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && csiNodeDriver(n, csiDriverName) == nil, nil
	})
	again := startCSIMock(t, e.node.rootDir, "--disable-attach")
	e.waitAPI(t, "the driver back in the CSINode", func(ctx context.Context) (bool, error) {
		n, err := e.admin.StorageV1().CSINodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && csiNodeDriver(n, csiDriverName) != nil, nil
	})
	time.Sleep(5 * time.Second) // a few syncs
	if calls := again.nodeCalls(t); len(calls) != 0 {
		t.Errorf("the restarted driver was asked %d node calls under the running pod, want none: %v", len(calls), calls)
	}
	after, err := e.admin.CoreV1().Pods("default").Get(ctx, "csi-restart", metav1.GetOptions{})
	must(t, err)
	if cs := after.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != running.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("the container restarted: %+v", cs)
	}

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "csi-restart", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the volume unpublished and unstaged by the restarted driver", func() bool { return len(again.nodeCalls(t)) >= 2 })
	var down []string
	for _, c := range again.nodeCalls(t) {
		down = append(down, c.Method+" "+c.Request["volume_id"].(string))
	}
	if strings.Join(down, ",") != "NodeUnpublishVolume 1,NodeUnstageVolume 1" {
		t.Errorf("tear-down calls %v, want volume 1 unpublished, then unstaged", down)
	}
	e.node.waitFor("the pod's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", uid))
		return os.IsNotExist(err)
	})
	staging := filepath.Join(e.node.rootDir, "plugins", "kubernetes.io", "csi", csiDriverName)
	if entries, err := os.ReadDir(staging); err == nil && len(entries) != 0 {
		t.Errorf("staging directories left: %v", entries)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	must(t, err)
	if strings.Contains(string(mounts), e.node.rootDir+"/") {
		t.Errorf("mounts left under berth's root dir:\n%s", mounts)
	}
}
