package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// usernsRefusal is upstream's message for a hostUsers: false pod on a
// runtime that does not declare user namespace support, in upstream's
// FailedCreatePodSandBox event.
const usernsRefusal = "Failed to create pod sandbox: can't set `spec.hostUsers: false`, runtime does not support user namespaces"

// TestClusterHostUsersFalseRefusedWithoutRuntimeSupport: on a runtime that
// reports no user namespace support in its Status (containerd 1.6 reports
// no runtime handlers), a pod with hostUsers: false is refused as
// upstream's kubelet refuses it: a FailedCreatePodSandBox event with
// upstream's message, the pod Pending with its container
// ContainerCreating, and nothing of it in the runtime, so nothing of it
// ever runs in the host's user namespace. A pod that does not ask runs.
func TestClusterHostUsersFalseRefusedWithoutRuntimeSupport(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	rc := runtimeClient(t)
	st, err := rc.Runtime.Status(context.Background(), &runtimeapi.StatusRequest{})
	must(t, err)
	for _, h := range st.GetRuntimeHandlers() {
		if h.GetFeatures().GetUserNamespaces() {
			t.Skipf("the runtime supports user namespaces (handler %q): the refusal cannot be shown here", h.GetName())
		}
	}
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	pods := e.admin.CoreV1().Pods("default")
	mk := func(name string, hostUsers *bool) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{
				HostUsers:                     hostUsers,
				AutomountServiceAccountToken:  ptr.To(false),
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{
					Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
					Command: []string{"sleep", "3600"},
				}},
			},
		}
	}
	ctx := context.Background()
	created, err := pods.Create(ctx, mk("userns-refused", ptr.To(false)), metav1.CreateOptions{})
	must(t, err)
	_, err = pods.Create(ctx, mk("userns-host", nil), metav1.CreateOptions{})
	must(t, err)

	e.waitAPI(t, "FailedCreatePodSandBox event", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=userns-refused,reason=FailedCreatePodSandBox"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Type == corev1.EventTypeWarning && ev.Message == usernsRefusal {
				return true, nil
			}
			t.Logf("event %s %s: %q", ev.Type, ev.Reason, ev.Message)
		}
		return false, nil
	})
	// The pod that does not ask for a user namespace runs meanwhile.
	e.waitPodRunning(t, "userns-host")

	// A few more syncs (the worker's back-off retries the sandbox): the
	// refusal stays a refusal.
	time.Sleep(5 * time.Second)
	pod, err := pods.Get(ctx, "userns-refused", metav1.GetOptions{})
	must(t, err)
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", pod.Status.Phase)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" {
			t.Errorf("container %s state %+v, want waiting ContainerCreating", cs.Name, cs.State)
		}
	}
	sandboxes, containers := runtimeObjects(t, rc, string(created.UID))
	if len(sandboxes) != 0 || len(containers) != 0 {
		t.Errorf("the refused pod reached the runtime: %d sandboxes, %d containers", len(sandboxes), len(containers))
	}
	if _, err := os.Stat(filepath.Join(e.node.rootDir, "pods", string(created.UID), "userns")); !os.IsNotExist(err) {
		t.Errorf("a user namespace was allocated for a refused pod: %v", err)
	}
	for _, name := range []string{"userns-refused", "userns-host"} {
		e.deleteSecurityPod(t, name)
	}
}
