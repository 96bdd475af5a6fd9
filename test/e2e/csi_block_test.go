package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCSIBlockVolume: a claim of volumeMode Block bound to a CSI
// PersistentVolume of the mock driver (which publishes a loop device)
// reaches the container as a device at its volumeDevices path, which it
// writes and reads back; the driver is asked as upstream's kubelet asks
// (a Block capability, staged at volumeDevices/staging/<pv>, published at
// volumeDevices/publish/<pv>/<pod uid>), berth binds the device at
// volumeDevices/<pv>/dev/<pod uid> (a loop device on it, upstream's fd
// lock) and links it in the pod; the claim grown by the resize
// controller (played) is expanded on the node online as a block volume
// (NodeExpandVolume with the published device, the staging path and a
// Block capability), the claim left as upstream's kubelet leaves it; berth
// restarted under the running pod publishes nothing again and restarts
// no container; once the pod is deleted the volume is unpublished, then
// unstaged, and nothing is left mounted or on disk.
func TestCSIBlockVolume(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	driver := e.registerCSIMock(t, storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}, "--disable-attach", "--node-expansion-required")
	_, err := e.admin.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-csi-block"}, Provisioner: csiDriverName, AllowVolumeExpansion: ptr.To(true),
	}, metav1.CreateOptions{})
	must(t, err)
	pv := claimVolume("e2e-csi-block", "e2e-csi-block", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: csiDriverName, VolumeHandle: "1",
	}})
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	_, err = e.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	must(t, err)
	spec := claimSpec("e2e-csi-block")
	spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-block-data"}, Spec: spec}, metav1.CreateOptions{})
	must(t, err)
	created, err := e.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-block"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "csi-block-data"}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "[ -b /dev/xvda ] && printf written-by-the-pod | dd of=/dev/xvda conv=fsync 2>/dev/null && " +
					`[ "$(dd if=/dev/xvda bs=18 count=1 2>/dev/null)" = written-by-the-pod ] && echo read-back-ok; sleep 3600`},
				VolumeDevices: []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/xvda"}},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	uid := string(created.UID)
	running := e.waitPodRunning(t, "csi-block")
	e.node.waitFor("the pod's write and read back on the device", func() bool {
		out, err := e.cl.Kubectl(ctx, "logs", "csi-block")
		return err == nil && strings.Contains(out, "read-back-ok")
	})

	plugin := filepath.Join(e.node.rootDir, "plugins", "kubernetes.io", "csi", "volumeDevices")
	staging := filepath.Join(plugin, "staging", "e2e-csi-block")
	publish := filepath.Join(plugin, "publish", "e2e-csi-block", uid)
	calls := lifecycleCalls(driver.nodeCalls(t))
	var methods []string
	for _, c := range calls {
		methods = append(methods, c.Method+" "+c.Request["volume_id"].(string))
	}
	if strings.Join(methods, ",") != "NodeStageVolume 1,NodePublishVolume 1" {
		t.Fatalf("node calls %v, want volume 1 staged, then published", methods)
	}
	for i, want := range []map[string]string{{"staging_target_path": staging}, {"staging_target_path": staging, "target_path": publish}} {
		for k, v := range want {
			if calls[i].Request[k] != v {
				t.Errorf("%s %s = %v, want %s", calls[i].Method, k, calls[i].Request[k], v)
			}
		}
		vc, _ := calls[i].Request["volume_capability"].(map[string]any)
		if _, ok := vc["block"]; !ok || vc["mount"] != nil {
			t.Errorf("%s capability %v, want a Block one", calls[i].Method, vc)
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(publish, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		t.Errorf("publish path %s: %v, mode %o; want the driver's block device", publish, err, st.Mode)
	}
	link := filepath.Join(e.node.rootDir, "pods", uid, "volumeDevices", "kubernetes.io~csi", "e2e-csi-block")
	if got, err := os.Readlink(link); err != nil || got != publish {
		t.Errorf("link %s -> %q, %v; want %s", link, got, err, publish)
	}
	globalMap := filepath.Join(plugin, "e2e-csi-block", "dev", uid)
	if !mountedAt(t, globalMap) {
		t.Errorf("nothing mounted at the global map path %s", globalMap)
	}
	if loops := loopsOf(t, globalMap); len(loops) != 1 {
		t.Errorf("loop devices on the global map path %s: %v, want one (upstream's fd lock)", globalMap, loops)
	}

	// The claim grown: berth's next refresh of the pod's volumes (at most
	// a minute) expands the block volume online.
	grown := resource.MustParse("20Mi")
	pvc, err := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "csi-block-data", metav1.GetOptions{})
	must(t, err)
	e.playResizer(t, pvc, "e2e-csi-block", grown)
	e.waitClaimExpanded(t, "csi-block-data", grown)
	expands := expandCalls(t, driver)
	if len(expands) != 1 {
		t.Fatalf("%d NodeExpandVolume calls, want 1: %v", len(expands), driver.nodeCalls(t))
	}
	req := expands[0].Request
	capRange, _ := req["capacity_range"].(map[string]any)
	vc, _ := req["volume_capability"].(map[string]any)
	if _, block := vc["block"]; req["volume_id"] != "1" || req["volume_path"] != publish || req["staging_target_path"] != staging ||
		capRange["required_bytes"] != fmt.Sprint(grown.Value()) || !block || vc["mount"] != nil {
		t.Errorf("NodeExpandVolume request %v, want volume 1's device %s staged at %s, %d bytes, a Block capability", req, publish, staging, grown.Value())
	}

	// berth restarted under the running pod: nothing published again, no
	// container restarted.
	e.node.stop()
	e.node.start()
	e.node.waitFor("berth synced the pod again", func() bool {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "csi-block", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	time.Sleep(5 * time.Second) // a few syncs
	if n := len(lifecycleCalls(driver.nodeCalls(t))); n != 2 {
		t.Errorf("%d node calls after berth restarted, want still 2: %v", n, driver.nodeCalls(t))
	}
	after, err := e.admin.CoreV1().Pods("default").Get(ctx, "csi-block", metav1.GetOptions{})
	must(t, err)
	if cs := after.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != running.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("the container restarted under berth's restart: %+v", cs)
	}

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "csi-block", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the volume unpublished and unstaged", func() bool { return len(lifecycleCalls(driver.nodeCalls(t))) >= 4 })
	var down []string
	for _, c := range lifecycleCalls(driver.nodeCalls(t))[2:] {
		down = append(down, c.Method+" "+c.Request["volume_id"].(string))
	}
	if strings.Join(down, ",") != "NodeUnpublishVolume 1,NodeUnstageVolume 1" {
		t.Errorf("tear-down calls %v, want volume 1 unpublished, then unstaged", down)
	}
	e.node.waitFor("the pod's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", uid))
		return os.IsNotExist(err)
	})
	for _, p := range []string{filepath.Join(plugin, "e2e-csi-block"), staging, filepath.Dir(publish)} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is left: %v", p, err)
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	must(t, err)
	if strings.Contains(string(mounts), e.node.rootDir+"/") {
		t.Errorf("mounts left under berth's root dir:\n%s", mounts)
	}
	if loops := loopsOf(t, globalMap); len(loops) != 0 {
		t.Errorf("loop devices left on %s: %v", globalMap, loops)
	}
}

// lifecycleCalls are the node calls that stage, publish, unpublish and
// unstage, without the expansions and stats between them.
func lifecycleCalls(calls []csiCall) []csiCall {
	return slices.DeleteFunc(calls, func(c csiCall) bool {
		return c.Method == "NodeExpandVolume" || c.Method == "NodeGetVolumeStats"
	})
}

// loopsOf returns the loop devices whose backing file is path, as the
// kernel names it (/sys/block/loopN/loop/backing_file).
func loopsOf(t *testing.T, path string) []string {
	t.Helper()
	files, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	must(t, err)
	var out []string
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == path {
			out = append(out, filepath.Base(filepath.Dir(filepath.Dir(f))))
		}
	}
	return out
}

// mountedAt reports whether path is a mount point of this mount
// namespace.
func mountedAt(t *testing.T, path string) bool {
	t.Helper()
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	must(t, err)
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}
