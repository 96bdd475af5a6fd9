package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// testMissingConfigMapReason: a pod whose configMap volume names a
// configMap that does not exist waits with PodReadyToStartContainers
// False, upstream's reason and message, and then berth's reason and the
// volume's (docs/why-waiting.md); once the configMap is made, it runs.
func (e *clusterEnv) testMissingConfigMapReason(t *testing.T) {
	ctx := context.Background()
	pods := e.admin.CoreV1().Pods("default")
	cms := e.admin.CoreV1().ConfigMaps("default")
	t.Cleanup(func() {
		_ = pods.Delete(ctx, "waits-for-config", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		_ = cms.Delete(ctx, "made-later", metav1.DeleteOptions{})
		e.waitAPI(t, "waits-for-config gone", func(ctx context.Context) (bool, error) {
			_, err := pods.Get(ctx, "waits-for-config", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	pod := apiWebPod("waits-for-config")
	pod.Spec.Volumes = []corev1.Volume{{Name: "settings", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "made-later"}}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "settings", MountPath: "/settings"}}
	_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	var cond corev1.PodCondition
	e.waitAPI(t, "PodReadyToStartContainers False with the volume's reason", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "waits-for-config", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReadyToStartContainers {
				cond = c
			}
		}
		return cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, "; VolumeNotReady: "), nil
	})
	t.Logf("PodReadyToStartContainers: reason %q, message %q", cond.Reason, cond.Message)
	if cond.Reason != "PodSandboxNotReady" ||
		!strings.HasPrefix(cond.Message, "no pod sandbox exists; VolumeNotReady: volume \"settings\" is not ready: ") ||
		!strings.Contains(cond.Message, `"made-later"`) {
		t.Errorf("condition %+v: want upstream's reason, then the settings volume waiting on configMap made-later", cond)
	}
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made-later"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "waits-for-config")
}
