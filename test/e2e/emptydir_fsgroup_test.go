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

// emptyDirFSGroupPod is upstream's "EmptyDir volumes when FSGroup is
// specified nonexistent volume subPath should have the correct mode and
// owner using FSGroup" pod as a static pod: agnhost mounttest, as user
// 1001, reports on the missing subPath test-sub of a tmpfs emptyDir under
// fsGroup 123.
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
    args: [mounttest, --fs_type=/test-volume, --file_perm=/test-volume, --file_owner=/test-volume, --file_mode=/test-volume]
    volumeMounts:
    - {name: test-volume, mountPath: /test-volume, subPath: test-sub}
`, agnhostImage)
}

// agnhostImage is the agnhost of upstream's v1.37 e2e tests.
const agnhostImage = "registry.k8s.io/e2e-test-images/agnhost:2.66.1"

// TestEmptyDirFSGroupSubPath: the subPath directory berth creates has the
// volume root's mode, setgid and sticky bits included, berth's user as
// owner and the fsGroup as group: the lines upstream's test expects.
func TestEmptyDirFSGroupSubPath(t *testing.T) {
	t.Run("StaticPod", func(t *testing.T) {
		n := newNode(t)
		n.writeManifest("pod.yaml", emptyDirFSGroupPod())
		n.start()
		pod := n.waitPod(fullName("fsgroup-subpath"), "succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		checkMounttest(t, pod)
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
		checkMounttest(t, got)
	})
}

// checkMounttest checks the mounttest output of emptyDirFSGroupPod's pod.
func checkMounttest(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	logPath := filepath.Join("/var/log/pods", "default_"+pod.Name+"_"+string(pod.UID), "test-container", "0.log")
	got, err := readFile(logPath)
	must(t, err)
	for _, want := range []string{
		`perms of file "/test-volume": -rwxrwxrwx`,
		`owner UID of "/test-volume": 0`,
		`owner GID of "/test-volume": 123`,
		`mode of file "/test-volume": dgtrwxrwxrwx`,
		`mount type of "/test-volume": tmpfs`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("container output lacks %q:\n%s", want, got)
		}
	}
}
