package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// cinderDriver is the CSI driver upstream migrates the in-tree cinder
// plugin to; the e2e mock driver plays it.
const cinderDriver = "cinder.csi.openstack.org"

// TestCSIMigratedVolume: a claim bound to an in-tree (cinder)
// PersistentVolume runs on the plugin's CSI driver, as on the upstream
// kubelet, which no longer has the in-tree plugin: the volume is staged
// and published with the translated handle at the CSI driver's paths, the
// pod writes through it, and it is unpublished and unstaged once the pod
// is deleted.
func TestCSIMigratedVolume(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	// The mock's volume "2" stands for the cinder volume of that ID.
	driver := e.registerNamedCSIMock(t, cinderDriver, storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}, "--disable-attach")
	pv := claimVolume("e2e-cinder", "e2e-cinder", corev1.PersistentVolumeSource{Cinder: &corev1.CinderPersistentVolumeSource{VolumeID: "2", FSType: "ext4"}})
	_, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "cinder-data"}, Spec: claimSpec("e2e-cinder")}, metav1.CreateOptions{})
	must(t, err)
	created, err := e.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cinder"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cinder-data"}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", "echo migrated > /data/out && sleep 3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	uid := string(created.UID)
	e.waitPodRunning(t, "cinder")
	target := filepath.Join(e.node.rootDir, "pods", uid, "volumes", "kubernetes.io~csi", "e2e-cinder", "mount")
	e.node.waitFor("the pod's write through the migrated volume", func() bool {
		got, err := readFile(filepath.Join(target, "out"))
		return err == nil && got == "migrated\n"
	})
	staging := filepath.Join(e.node.rootDir, "plugins", "kubernetes.io", "csi", cinderDriver,
		fmt.Sprintf("%x", sha256.Sum256([]byte("2"))), "globalmount")
	var up []string
	for _, c := range driver.nodeCalls(t) {
		up = append(up, c.Method+" "+c.Request["volume_id"].(string))
		if c.Method == "NodePublishVolume" && (c.Request["staging_target_path"] != staging || c.Request["target_path"] != target) {
			t.Errorf("publish paths: staging %v, target %v; want %s and %s", c.Request["staging_target_path"], c.Request["target_path"], staging, target)
		}
	}
	if strings.Join(up, ",") != "NodeStageVolume 2,NodePublishVolume 2" {
		t.Errorf("node calls %v, want the translated volume 2 staged, then published", up)
	}

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "cinder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the volume unpublished and unstaged", func() bool { return len(driver.nodeCalls(t)) >= 4 })
	var down []string
	for _, c := range driver.nodeCalls(t)[2:] {
		down = append(down, c.Method+" "+c.Request["volume_id"].(string))
	}
	if strings.Join(down, ",") != "NodeUnpublishVolume 2,NodeUnstageVolume 2" {
		t.Errorf("tear-down calls %v, want volume 2 unpublished, then unstaged", down)
	}
	e.node.waitFor("the pod's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", uid))
		return os.IsNotExist(err)
	})
}
