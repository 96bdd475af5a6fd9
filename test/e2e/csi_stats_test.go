package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// TestCSIVolumeStats: with the e2e CSI mock driver registered (it has
// GET_VOLUME_STATS), a pod's claim bound to a CSI PersistentVolume and
// its inline CSI volume appear in /stats/summary with the driver's
// figures (the mock gives its volume "1" 100 GiB; the inline volume is
// its target's filesystem), the claim's with its pvcRef and the inline
// one without; the claim's kubelet_volume_stats_* series are on
// /metrics. Volume stats are measured every 2 s.
func TestCSIVolumeStats(t *testing.T) {
	e := startClusterEnv(t)
	e.node.extraArgs = append(e.node.extraArgs, "--volume-stats-agg-period=2s")
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	driver := e.registerCSIMock(t, storagev1.CSIDriverSpec{
		AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true), // the mock knows inline volumes by their pod information
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral},
	}, "--disable-attach")
	pv := claimVolume("e2e-csi-stats", "e2e-csi-stats", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: csiDriverName, VolumeHandle: "1", FSType: "ext4",
	}})
	_, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-stats-data"}, Spec: claimSpec("e2e-csi-stats")}, metav1.CreateOptions{})
	must(t, err)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-stats"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "csi-stats-data"}}},
				{Name: "inline", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: csiDriverName}}},
			},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sleep", "3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "inline", MountPath: "/inline"}},
			}},
		},
	}
	_, err = e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "csi-stats")
	raw := func(path string) (string, error) {
		return e.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy"+path)
	}

	var data, inline *statsapi.VolumeStats
	e.node.waitFor("the pod's CSI volumes in /stats/summary", func() bool {
		body, err := raw("/stats/summary")
		var sum statsapi.Summary
		if err != nil || json.Unmarshal([]byte(body), &sum) != nil {
			return false
		}
		ps := findPodStats(sum.Pods, "csi-stats")
		if ps == nil {
			return false
		}
		data, inline = findVolume(ps.VolumeStats, "data"), findVolume(ps.VolumeStats, "inline")
		return data != nil && inline != nil
	})
	if want := (statsapi.PVCReference{Name: "csi-stats-data", Namespace: "default"}); data.PVCRef == nil || *data.PVCRef != want {
		t.Errorf("claim volume pvcRef %+v, want %+v", data.PVCRef, want)
	}
	if data.CapacityBytes == nil || *data.CapacityBytes != 100<<30 {
		t.Errorf("claim volume capacity %v, want the mock's 100 GiB", data.CapacityBytes)
	}
	if inline.PVCRef != nil {
		t.Errorf("inline volume pvcRef %+v, want none", inline.PVCRef)
	}
	if inline.CapacityBytes == nil || *inline.CapacityBytes == 0 || inline.Inodes == nil || *inline.Inodes == 0 {
		t.Errorf("inline volume stats %+v, want its target's filesystem", inline.FsStats)
	}
	var calls []csiCall
	for _, c := range driver.nodeCalls(t) {
		if c.Method == "NodeGetVolumeStats" {
			calls = append(calls, c)
		}
	}
	if len(calls) == 0 || !strings.HasSuffix(calls[0].Request["volume_path"].(string), "/mount") {
		t.Errorf("NodeGetVolumeStats calls %+v, want some at the volumes' targets", calls)
	}

	var body string
	e.node.waitFor("the claim's kubelet_volume_stats_* on /metrics", func() bool {
		body, err = raw("/metrics")
		return err == nil && strings.Contains(body, `kubelet_volume_stats_capacity_bytes{namespace="default",persistentvolumeclaim="csi-stats-data"} 1.073741824e+11`)
	})
	for _, name := range []string{"available_bytes", "used_bytes", "inodes", "inodes_free", "inodes_used"} {
		if series := `kubelet_volume_stats_` + name + `{namespace="default",persistentvolumeclaim="csi-stats-data"}`; !strings.Contains(body, series) {
			t.Errorf("no %s on /metrics", series)
		}
	}
	if n := strings.Count(body, "# TYPE kubelet_volume_stats_"); n != 6 {
		t.Errorf("%d kubelet_volume_stats_ metrics, want upstream's 6", n)
	}
}
