package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// emptyDirFSGroupPod is the pod of upstream's "EmptyDir volumes when
// FSGroup is specified nonexistent volume subPath should have the correct
// mode and owner using FSGroup": as user 1001, it reports on the missing
// subPath test-sub of a tmpfs emptyDir under fsGroup 123. Upstream runs
// agnhost mounttest in it (the conformance smoke set runs that spec); here
// busybox's stat reports the same facts, with the images every e2e run has.
func emptyDirFSGroupPod() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: fsgroup-subpath
spec:
  restartPolicy: Never
  securityContext:
    fsGroup: 123
    runAsUser: 1001
    seLinuxOptions: {level: s0}
  volumes:
  - name: test-volume
    emptyDir: {medium: Memory}
  containers:
  - name: test-container
    image: %s
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "stat -c 'mode %%A uid %%u gid %%g' /test-volume && stat -f -c 'fs %%T' /test-volume"]
    volumeMounts:
    - {name: test-volume, mountPath: /test-volume, subPath: test-sub}
`, busybox)
}

// TestEmptyDirFSGroupSubPath: the subPath directory berth creates has the
// volume root's mode, setgid and sticky bits included, berth's user as
// owner and the fsGroup as group: the lines upstream's test expects.
func TestEmptyDirFSGroupSubPath(t *testing.T) {
	t.Run("StaticPod", func(t *testing.T) {
		n := newNode(t)
		n.writeManifest("pod.yaml", emptyDirFSGroupPod())
		n.start()
		pod := n.waitPod(fullName("fsgroup-subpath"), "succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		checkStat(t, pod)
	})
	t.Run("APIPod", func(t *testing.T) {
		e := startClusterEnv(t)
		e.node.start()
		e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
			_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		})
		var pod corev1.Pod
		must(t, yaml.Unmarshal([]byte(emptyDirFSGroupPod()), &pod))
		pod.Spec.AutomountServiceAccountToken = ptr.To(false)
		_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), &pod, metav1.CreateOptions{})
		must(t, err)
		var got *corev1.Pod
		e.waitAPI(t, "pod succeeded", func(ctx context.Context) (bool, error) {
			p, err := e.admin.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
			got = p
			return err == nil && p.Status.Phase == corev1.PodSucceeded, err
		})
		checkStat(t, got)
	})
}

// checkStat checks the output of emptyDirFSGroupPod's pod.
func checkStat(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	logPath := filepath.Join("/var/log/pods", "default_"+pod.Name+"_"+string(pod.UID), "test-container", "0.log")
	got, err := readFile(logPath)
	must(t, err)
	// Upstream's mounttest lines: perms -rwxrwxrwx, owner UID 0, owner GID
	// 123, mode dgtrwxrwxrwx (setgid and sticky), mount type tmpfs.
	for _, want := range []string{
		"mode drwxrwsrwt uid 0 gid 123",
		"fs tmpfs",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("container output lacks %q:\n%s", want, got)
		}
	}
}
