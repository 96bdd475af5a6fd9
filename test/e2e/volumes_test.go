package e2e

import (
	"context"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// volumesPod serves, from an emptyDir shared by two containers, what the
// writer copies there from the default service account token volume and a
// configMap volume.
func volumesPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "vols", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{
				{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
			},
			Containers: []corev1.Container{
				{
					Name: "web", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:      []string{"httpd", "-f", "-p", "8080", "-h", "/www"},
					VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/www"}},
				},
				{
					Name: "writer", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
					Command: []string{"sh", "-c", `sa=/var/run/secrets/kubernetes.io/serviceaccount
while true; do
  cp $sa/token /shared/token; cp $sa/namespace /shared/namespace; cp /config/greeting /shared/greeting
  sleep 1
done`},
					VolumeMounts: []corev1.VolumeMount{
						{Name: "shared", MountPath: "/shared"},
						{Name: "config", MountPath: "/config", ReadOnly: true},
					},
				},
			},
		},
	}
}

func (e *clusterEnv) testVolumes(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: "default"}, Data: map[string]string{"greeting": "hello"}}
	_, err := e.admin.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().Pods("default").Create(ctx, volumesPod(), metav1.CreateOptions{})
	must(t, err)
	pod := e.waitPodRunning(t, "vols")
	get := func(file string) string {
		b, err := httpGet("http://" + pod.Status.PodIP + ":8080/" + file)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(b)
	}
	e.node.waitFor("namespace from the token volume", func() bool { return get("namespace") == "default" })
	e.node.waitFor("greeting from the configMap volume", func() bool { return get("greeting") == "hello" })

	review, err := e.admin.AuthenticationV1().TokenReviews().Create(ctx,
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: get("token")}}, metav1.CreateOptions{})
	must(t, err)
	if !review.Status.Authenticated || review.Status.User.Username != "system:serviceaccount:default:default" {
		t.Errorf("token review: %+v", review.Status)
	}

	cm.Data["greeting"] = "bonjour"
	_, err = e.admin.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{})
	must(t, err)
	e.node.waitFor("configMap edit reaches the running pod", func() bool { return get("greeting") == "bonjour" })
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "vols", metav1.DeleteOptions{}))
}
