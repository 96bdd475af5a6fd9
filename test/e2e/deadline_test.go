package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// TestActiveDeadlineUpdated is upstream's "Pods should allow
// activeDeadlineSeconds to be updated" on berth: a running pod with a long
// deadline is patched down to 5 s; berth fails it with DeadlineExceeded
// (without waiting for its minute resync) and stops its containers.
func TestActiveDeadlineUpdated(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	pod := apiWebPod("deadline")
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	pod = e.waitPodRunning(t, "deadline")

	patched := time.Now()
	_, err = e.admin.CoreV1().Pods("default").Patch(ctx, pod.Name, types.StrategicMergePatchType,
		[]byte(`{"spec":{"activeDeadlineSeconds":5}}`), metav1.PatchOptions{})
	must(t, err)
	var failed *corev1.Pod
	e.waitAPI(t, "pod Failed with DeadlineExceeded", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		failed = p
		return p.Status.Phase == corev1.PodFailed, nil
	})
	if failed.Status.Reason != "DeadlineExceeded" ||
		failed.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("status reason %q message %q; want upstream's DeadlineExceeded", failed.Status.Reason, failed.Status.Message)
	}
	// The pod started before the patch, so its deadline had passed or
	// passes within 5 s of it; the resync interval is a minute.
	if d := time.Since(patched); d > 30*time.Second {
		t.Errorf("pod failed %v after the patch; want within the deadline plus a sync", d)
	}
	c := runtimeClient(t)
	e.node.waitFor("containers stopped", func() bool {
		_, cs := runtimeObjects(t, c, string(pod.UID))
		for _, x := range cs {
			if x.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				return false
			}
		}
		return len(cs) > 0
	})
	e.waitAPI(t, "DeadlineExceeded event", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=deadline"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == "DeadlineExceeded" && ev.Type == corev1.EventTypeNormal && ev.InvolvedObject.UID == pod.UID {
				return true, nil
			}
		}
		return false, nil
	})
}
