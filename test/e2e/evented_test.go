package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// eventedRelistPeriod is berth's relist period in TestEventedPLEG: far
// longer than the test's one-second bound, so only the container event
// stream can meet it.
const eventedRelistPeriod = "60s"

// TestEventedPLEG runs berth against a private containerd 2, whose CRI has
// the container event stream, with the periodic relist lengthened to a
// minute: a pod's Running status, and its Succeeded status when its
// container exits on its own (which no sync of berth's causes, so only an
// event can report it), reach the API server within a second of the
// container's start and exit as containerd records them.
func TestEventedPLEG(t *testing.T) {
	ctrd := startContainerd2(t)
	env := startClusterEnv(t)
	useRuntime(t, env.node, ctrd.endpoint)
	env.node.extraArgs = append(env.node.extraArgs, "--pleg-relist-period="+eventedRelistPeriod)
	env.node.start()
	waitEventedNode(t, env)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := env.admin.CoreV1().Pods("default")
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "evented").String()})
	must(t, err)
	defer w.Stop()
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "evented", Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			RestartPolicy:                 corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "app", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "sleep 3"},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)

	seen := phaseTimes(t, ctx, w.ResultChan(), corev1.PodSucceeded)
	status := privateContainerStatus(t, ctrd, string(pod.UID))
	started, finished := time.Unix(0, status.StartedAt), time.Unix(0, status.FinishedAt)
	for _, c := range []struct {
		what     string
		runtime  time.Time
		apiPhase corev1.PodPhase
	}{
		{"Running after the container's start", started, corev1.PodRunning},
		{"Succeeded after the container's exit", finished, corev1.PodSucceeded},
	} {
		got := seen[c.apiPhase]
		if got.IsZero() {
			t.Errorf("%s: the phase never reached the API server", c.what)
			continue
		}
		lag := got.Sub(c.runtime)
		t.Logf("%s: %v", c.what, lag)
		if lag > time.Second {
			t.Errorf("%s: %v, want at most 1s", c.what, lag)
		}
	}
	log, err := os.ReadFile(env.node.logPath)
	must(t, err)
	if !strings.Contains(string(log), "Container event stream is live") {
		t.Error("berth's log does not say the container event stream is live")
	}
}

// waitEventedNode waits for the node to be Ready on containerd 2 and for
// the default service account pods need.
func waitEventedNode(t *testing.T, env *clusterEnv) {
	t.Helper()
	env.testNodeReady(t)
	node, err := env.admin.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	must(t, err)
	if v := node.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(v, "containerd://v2.") {
		t.Fatalf("container runtime %q, want the private containerd 2", v)
	}
	env.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := env.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// phaseTimes records when each pod phase was first seen on events, until
// the last one.
func phaseTimes(t *testing.T, ctx context.Context, events <-chan watch.Event, last corev1.PodPhase) map[corev1.PodPhase]time.Time {
	t.Helper()
	seen := map[corev1.PodPhase]time.Time{}
	for seen[last].IsZero() {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("watch closed before the pod reached %s", last)
			}
			p, ok := ev.Object.(*corev1.Pod)
			if ok && seen[p.Status.Phase].IsZero() {
				seen[p.Status.Phase] = time.Now()
			}
		case <-ctx.Done():
			t.Fatalf("pod did not reach %s; phases seen at %v", last, seen)
		}
	}
	return seen
}

// useRuntime points the node's configuration at another CRI endpoint.
func useRuntime(t *testing.T, n *node, endpoint string) {
	t.Helper()
	data, err := os.ReadFile(n.config)
	must(t, err)
	from := "containerRuntimeEndpoint: " + criEndpoint + "\n"
	if !strings.Contains(string(data), from) {
		t.Fatalf("%s has no %q", n.config, from)
	}
	must(t, os.WriteFile(n.config, []byte(strings.Replace(string(data), from, "containerRuntimeEndpoint: "+endpoint+"\n", 1)), 0o644))
}

// privateContainerStatus returns the status of the pod's only container, as the
// private containerd holds it.
func privateContainerStatus(t *testing.T, ctrd *containerd2, uid string) *runtimeapi.ContainerStatus {
	t.Helper()
	ctx := context.Background()
	sel := map[string]string{"io.kubernetes.pod.uid": uid}
	cs, err := ctrd.client.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	must(t, err)
	if len(cs.Containers) != 1 {
		t.Fatalf("containerd 2 holds %d containers of the pod, want 1", len(cs.Containers))
	}
	st, err := ctrd.client.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cs.Containers[0].Id})
	must(t, err)
	return st.Status
}
