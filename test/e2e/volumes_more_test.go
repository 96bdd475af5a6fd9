package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// testMoreVolumes checks secret, downwardAPI and hostPath volumes, and that
// a subPath a symlink leads out of its volume is refused, on real
// containerd.
func (e *clusterEnv) testMoreVolumes(t *testing.T) {
	ctx := context.Background()
	hostDir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(hostDir, "hostfile"), []byte("from-the-host\n"), 0o644))
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret", Namespace: "default"}, Data: map[string][]byte{"password": []byte("s3cret")}}
	_, err := e.admin.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{})
	must(t, err)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "vols2", Namespace: "default", Labels: map[string]string{"tier": "gold"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{
				{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-secret", DefaultMode: ptr.To[int32](0o400)}}},
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
					{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
				}}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: ptr.To(corev1.HostPathDirectory)}}},
			},
			Containers: []corev1.Container{{
				Name: "web", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", `cp /sec/password /www/password; ls -lL /sec/password > /www/mode
cp /info/name /www/name; cp /info/labels /www/labels; cp /host/hostfile /www/hostfile
exec httpd -f -p 8080 -h /www`},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "www", MountPath: "/www"}, {Name: "sec", MountPath: "/sec"},
					{Name: "info", MountPath: "/info"}, {Name: "host", MountPath: "/host", ReadOnly: true},
				},
			}},
		},
	}
	_, err = e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	running := e.waitPodRunning(t, "vols2")
	get := func(file string) string {
		b, err := httpGet("http://" + running.Status.PodIP + ":8080/" + file)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(b)
	}
	e.node.waitFor("secret content", func() bool { return get("password") == "s3cret" })
	if mode := get("mode"); !strings.HasPrefix(mode, "-r--------") {
		t.Errorf("secret file mode: %q, want -r--------", mode)
	}
	if got := get("name"); got != "vols2" {
		t.Errorf("downward API name = %q", got)
	}
	if got := get("labels"); got != `tier="gold"` {
		t.Errorf("downward API labels = %q", got)
	}
	if got := get("hostfile"); got != "from-the-host" {
		t.Errorf("hostPath file = %q", got)
	}
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "vols2", metav1.DeleteOptions{}))
	e.waitAPI(t, "vols2 gone", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().Pods("default").Get(ctx, "vols2", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	// An init container plants a symlink to /etc in an emptyDir; a subPath
	// through it must not reach the host's /etc.
	escape := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "escape", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes:                       []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			InitContainers: []corev1.Container{{
				Name: "plant", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"ln", "-s", "/etc", "/data/link"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Containers: []corev1.Container{{
				Name: "reader", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sleep", "3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/escaped", SubPath: "link"}},
			}},
		},
	}
	_, err = e.admin.CoreV1().Pods("default").Create(ctx, escape, metav1.CreateOptions{})
	must(t, err)
	var msg string
	e.waitAPI(t, "subPath escape refused", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "escape", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		if w != nil && w.Reason == "CreateContainerConfigError" {
			msg = w.Message
			return true, nil
		}
		return false, nil
	})
	if !strings.Contains(msg, "escapes its volume") {
		t.Errorf("waiting message = %q, want a subPath escape refusal", msg)
	}
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "escape", metav1.DeleteOptions{}))
	e.waitAPI(t, "escape pod gone", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().Pods("default").Get(ctx, "escape", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
