package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// securityPod serves, from an emptyDir at /www, what script writes there
// before httpd starts; both run with the pod's security context.
func securityPod(name, script string, psc *corev1.PodSecurityContext, csc *corev1.SecurityContext) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			SecurityContext:               psc,
			Volumes:                       []corev1.Volume{{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name: "app", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sh", "-c", script + " && exec httpd -f -p 8080 -h /www"},
				VolumeMounts:    []corev1.VolumeMount{{Name: "www", MountPath: "/www"}},
				SecurityContext: csc,
			}},
		},
	}
}

// deleteSecurityPod deletes a pod of the default namespace and waits until
// the API object is gone: berth has then torn down its volumes.
func (e *clusterEnv) deleteSecurityPod(t *testing.T, name string) {
	t.Helper()
	must(t, e.admin.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}))
	e.waitAPI(t, "pod "+name+" gone", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// testSecurity runs pods whose security context berth maps to the CRI and
// checks, from inside the containers, what the runtime applied: users and
// groups, seccomp, the OOM score, a read-only root filesystem; and that
// runAsNonRoot refuses an image that runs as root.
func (e *clusterEnv) testSecurity(t *testing.T) {
	ctx := context.Background()
	pods := e.admin.CoreV1().Pods("default")
	get := func(pod *corev1.Pod, file string) string {
		b, err := httpGet("http://" + pod.Status.PodIP + ":8080/" + file)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(b)
	}

	t.Run("UsersGroupsSeccompOOMScore", func(t *testing.T) {
		psc := &corev1.PodSecurityContext{
			RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000), SupplementalGroups: []int64{4000},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
		script := "id > /www/index.html && grep ^Seccomp: /proc/self/status > /www/seccomp && cat /proc/self/oom_score_adj > /www/oom"
		_, err := pods.Create(ctx, securityPod("sec-ids", script, psc, nil), metav1.CreateOptions{})
		must(t, err)
		pod := e.waitPodRunning(t, "sec-ids")
		var id string
		e.node.waitFor("id served", func() bool { id = get(pod, ""); return id != "" })
		if want := "uid=1000 gid=3000 groups=3000,4000"; id != want {
			t.Errorf("id = %q, want %q", id, want)
		}
		// 2 is SECCOMP_MODE_FILTER: the runtime's default profile.
		if got := strings.Join(strings.Fields(get(pod, "seccomp")), " "); got != "Seccomp: 2" {
			t.Errorf("seccomp status = %q, want %q", got, "Seccomp: 2")
		}
		// A BestEffort pod scores 1000.
		if got := get(pod, "oom"); got != "1000" {
			t.Errorf("oom_score_adj = %q, want 1000", got)
		}
		e.deleteSecurityPod(t, "sec-ids")
	})

	t.Run("ReadOnlyRootFilesystem", func(t *testing.T) {
		csc := &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}
		_, err := pods.Create(ctx, securityPod("sec-rofs", "{ touch /x 2> /www/index.html; true; }", nil, csc), metav1.CreateOptions{})
		must(t, err)
		pod := e.waitPodRunning(t, "sec-rofs")
		var out string
		e.node.waitFor("touch error served", func() bool { out = get(pod, ""); return out != "" })
		if !strings.Contains(out, "Read-only file system") {
			t.Errorf("touch /x said %q, want a read-only file system error", out)
		}
		e.deleteSecurityPod(t, "sec-rofs")
	})

	t.Run("RunAsNonRootRefusesARootImage", func(t *testing.T) {
		csc := &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
		created, err := pods.Create(ctx, securityPod("sec-nonroot", "true", nil, csc), metav1.CreateOptions{})
		must(t, err)
		want := fmt.Sprintf("container has runAsNonRoot and image will run as root (pod: %q, container: app)",
			fmt.Sprintf("sec-nonroot_default(%s)", created.UID))
		var waiting *corev1.ContainerStateWaiting
		e.waitAPI(t, "container waiting with CreateContainerConfigError", func(ctx context.Context) (bool, error) {
			p, err := pods.Get(ctx, "sec-nonroot", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cs := range p.Status.ContainerStatuses {
				if w := cs.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" {
					waiting = w
					return true, nil
				}
			}
			return false, nil
		})
		if waiting.Message != want {
			t.Errorf("waiting message = %q, want %q", waiting.Message, want)
		}
		// A graceful delete: berth marks the never-started pod Failed once
		// it terminated (upstream's TerminatePod) and removes the object.
		must(t, pods.Delete(ctx, "sec-nonroot", metav1.DeleteOptions{}))
		e.waitAPI(t, "never-started pod object gone", func(ctx context.Context) (bool, error) {
			_, err := pods.Get(ctx, "sec-nonroot", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		dir := filepath.Join(e.node.rootDir, "pods", string(created.UID))
		e.node.waitFor("pod directory removed", func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) })
	})
}
