package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
)

// TestCSIOnlineExpansion: a running pod's claim on a CSI volume of a
// driver with EXPAND_VOLUME is expanded on the node once the resize
// controller grew it. The test plays the user (a larger request) and the
// external-resizer, as upstream's expand controller leaves a claim whose
// volume needs a node expansion (Resizing, ControllerResizeInProgress and
// allocatedResources; the PV's capacity raised; then
// FileSystemResizePending and NodeResizePending). berth calls
// NodeExpandVolume with the volume's handle, the pod's target, the
// staging directory, the new size and the expand secret, and leaves the
// claim as upstream's kubelet does: capacity the new size, no resize
// status, no resize condition (other conditions, such as the controller
// manager's Unused, stay), a FileSystemResizeSuccessful event.
func TestCSIOnlineExpansion(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	driver := e.registerCSIMock(t, storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}, "--disable-attach", "--node-expansion-required")
	_, err := e.admin.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-expand"}, Provisioner: csiDriverName, AllowVolumeExpansion: ptr.To(true),
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "expand-secret"}, StringData: map[string]string{"expand-key": "x"},
	}, metav1.CreateOptions{})
	must(t, err)
	pv := claimVolume("e2e-expand", "e2e-expand", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: csiDriverName, VolumeHandle: "2", FSType: "ext4",
		NodeExpandSecretRef: &corev1.SecretReference{Namespace: "default", Name: "expand-secret"},
	}})
	_, err = e.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "expand-data"}, Spec: claimSpec("e2e-expand")}, metav1.CreateOptions{})
	must(t, err)
	created, err := e.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "expand"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "expand-data"}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sleep", "3600"}, VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	running := e.waitPodRunning(t, "expand")
	old, grown := resource.MustParse("10Mi"), resource.MustParse("20Mi")
	pvc, err := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "expand-data", metav1.GetOptions{})
	must(t, err)
	if c := pvc.Status.Capacity[corev1.ResourceStorage]; !c.Equal(old) {
		t.Fatalf("claim capacity %v before the resize, want %v", c.String(), old.String())
	}

	e.playResizer(t, pvc, "e2e-expand", grown)

	// berth's next refresh of the pod's volumes (at most a minute) expands it.
	e.waitClaimExpanded(t, "expand-data", grown)

	checkNodeExpand(t, e, driver, string(created.UID), grown)

	e.waitAPI(t, "FileSystemResizeSuccessful on the claim", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": "PersistentVolumeClaim", "involvedObject.name": "expand-data", "reason": "FileSystemResizeSuccessful",
		}.String()})
		return err == nil && len(evs.Items) > 0, err
	})
	after, err := e.admin.CoreV1().Pods("default").Get(ctx, "expand", metav1.GetOptions{})
	must(t, err)
	if s := after.Status.ContainerStatuses[0]; s.RestartCount != 0 || s.ContainerID != running.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("the container restarted during the expansion: %+v", s)
	}
}

// playResizer plays the user and the external resizer on the claim pvc
// and its volume pvName: the request raised to grown, the controller's
// Resizing and ControllerResizeInProgress with allocatedResources, the
// PersistentVolume grown, then FileSystemResizePending and
// NodeResizePending for the node.
func (e *clusterEnv) playResizer(t *testing.T, pvc *corev1.PersistentVolumeClaim, pvName string, grown resource.Quantity) {
	t.Helper()
	ctx := context.Background()
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = grown
	pvc, err := e.admin.CoreV1().PersistentVolumeClaims("default").Update(ctx, pvc, metav1.UpdateOptions{})
	must(t, err)
	pvc.Status.Conditions = append(pvc.Status.Conditions, corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now(),
	})
	pvc.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: grown}
	pvc.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
		corev1.ResourceStorage: corev1.PersistentVolumeClaimControllerResizeInProgress,
	}
	pvc, err = e.admin.CoreV1().PersistentVolumeClaims("default").UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
	must(t, err)
	livePV, err := e.admin.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
	must(t, err)
	livePV.Spec.Capacity[corev1.ResourceStorage] = grown
	_, err = e.admin.CoreV1().PersistentVolumes().Update(ctx, livePV, metav1.UpdateOptions{})
	must(t, err)
	pvc.Status.Conditions = append(pvc.Status.Conditions, corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now(),
		Message: "Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
	})
	pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] = corev1.PersistentVolumeClaimNodeResizePending
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
	must(t, err)

}

// waitClaimExpanded waits until the claim's capacity is grown, then checks
// it is left as upstream's kubelet leaves it: no resize status, no resize
// condition (others, such as the controller manager's Unused, may stay),
// allocatedResources grown.
func (e *clusterEnv) waitClaimExpanded(t *testing.T, claim string, grown resource.Quantity) {
	t.Helper()
	var final *corev1.PersistentVolumeClaim
	e.waitAPI(t, "claim "+claim+" expanded on the node", func(ctx context.Context) (bool, error) {
		var err error
		final, err = e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := final.Status.Capacity[corev1.ResourceStorage]
		return c.Equal(grown), nil
	})
	if len(final.Status.AllocatedResourceStatuses) != 0 {
		t.Errorf("allocatedResourceStatuses %v, want none", final.Status.AllocatedResourceStatuses)
	}
	for _, c := range final.Status.Conditions {
		switch c.Type {
		case corev1.PersistentVolumeClaimResizing, corev1.PersistentVolumeClaimFileSystemResizePending,
			corev1.PersistentVolumeClaimControllerResizeError, corev1.PersistentVolumeClaimNodeResizeError:
			t.Errorf("resize condition %s left on the claim: %+v", c.Type, c)
		}
	}
	if a := final.Status.AllocatedResources[corev1.ResourceStorage]; !a.Equal(grown) {
		t.Errorf("allocatedResources %v, want %v", a.String(), grown.String())
	}
}

// expandCalls are the driver's NodeExpandVolume calls, in order.
func expandCalls(t *testing.T, driver *csiMock) []csiCall {
	t.Helper()
	var out []csiCall
	for _, c := range driver.nodeCalls(t) {
		if c.Method == "NodeExpandVolume" {
			out = append(out, c)
		}
	}
	return out
}

// checkNodeExpand checks that the driver was asked one NodeExpandVolume,
// with the volume "2"'s handle, the pod's target, the staging path, the
// new size and the expand secret.
func checkNodeExpand(t *testing.T, e *clusterEnv, driver *csiMock, uid string, grown resource.Quantity) {
	t.Helper()
	expands := expandCalls(t, driver)
	if len(expands) != 1 {
		t.Fatalf("%d NodeExpandVolume calls, want 1: %v", len(expands), driver.nodeCalls(t))
	}
	req := expands[0].Request
	target := filepath.Join(e.node.rootDir, "pods", uid, "volumes", "kubernetes.io~csi", "e2e-expand", "mount")
	staging := filepath.Join(e.node.rootDir, "plugins", "kubernetes.io", "csi", csiDriverName, fmt.Sprintf("%x", sha256.Sum256([]byte("2"))), "globalmount")
	capRange, _ := req["capacity_range"].(map[string]any)
	secrets, _ := req["secrets"].(map[string]any)
	if req["volume_id"] != "2" || req["volume_path"] != target || req["staging_target_path"] != staging ||
		capRange["required_bytes"] != fmt.Sprint(grown.Value()) || secrets["expand-key"] != "x" {
		t.Errorf("NodeExpandVolume request %v, want volume 2 at %s staged at %s, %d bytes, the expand secret", req, target, staging, grown.Value())
	}

}
