package soak

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/bench"
)

const (
	namespace = "default"
	runLabel  = "berth.dev/soak-run"
	// podUIDLabel is the label both kubelets put on a pod's sandbox and
	// containers.
	podUIDLabel = "io.kubernetes.pod.uid"
	poll        = 500 * time.Millisecond
)

// soakPod is pod i of run, bound to nodeName: busybox sleeping, ending at
// once on SIGTERM, restarted always.
func soakPod(run string, i int, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: run + "-" + strconv.Itoa(i), Namespace: namespace, Labels: map[string]string{runLabel: run}},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []corev1.Container{{
				Name: "c", Image: bench.BusyboxImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
			}},
		},
	}
}

// podBuilder makes pod i of run, bound to nodeName.
type podBuilder func(run string, i int, nodeName string) *corev1.Pod

// createPods creates the n pods of run in parallel (soakPods).
func createPods(ctx context.Context, c kubernetes.Interface, nodeName, run string, n int) error {
	return createPodsOf(ctx, c, nodeName, run, n, soakPod)
}

// createPodsOf creates the n pods build makes for run in parallel.
func createPodsOf(ctx context.Context, c kubernetes.Interface, nodeName, run string, n int, build podBuilder) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = c.CoreV1().Pods(namespace).Create(ctx, build(run, i, nodeName), metav1.CreateOptions{})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runningPods creates the n pods of the scenario's run "<node>-0" and
// waits until they are Running: the start of the scenarios that act on
// running pods.
func (e *env) runningPods(ctx context.Context, n int) (string, []corev1.Pod, error) {
	run := e.name + "-0"
	if err := createPods(ctx, e.client, e.name, run, n); err != nil {
		return "", nil, err
	}
	pods, err := waitRunning(ctx, e.client, run, n, 3*time.Minute)
	return run, pods, err
}

// listRun lists the pods of run.
func listRun(ctx context.Context, c kubernetes.Interface, run string) ([]corev1.Pod, error) {
	l, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + run})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// waitRunning waits until the n pods of run are Running with every
// container ready, and returns them.
func waitRunning(ctx context.Context, c kubernetes.Interface, run string, n int, timeout time.Duration) ([]corev1.Pod, error) {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := listRun(ctx, c, run)
		if err == nil && len(pods) == n && allRunning(pods) {
			return pods, nil
		}
		if time.Now().After(deadline) {
			running := 0
			for _, p := range pods {
				if allRunning([]corev1.Pod{p}) {
					running++
				}
			}
			return nil, fmt.Errorf("wait for %d pods of %s Running: %d of %d after %v (%v)", n, run, running, len(pods), timeout, err)
		}
		if err := sleep(ctx, poll); err != nil {
			return nil, err
		}
	}
}

func allRunning(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		for _, cs := range p.Status.ContainerStatuses {
			if !cs.Ready || cs.State.Running == nil {
				return false
			}
		}
	}
	return true
}

// deletePods deletes the pods of run and waits until the API has none.
func deletePods(ctx context.Context, c kubernetes.Interface, run string, timeout time.Duration) error {
	if err := c.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: runLabel + "=" + run}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the pods of %s: %w", run, err)
	}
	return waitGone(ctx, c, run, timeout)
}

// waitGone waits until the API has no pod of run.
func waitGone(ctx context.Context, c kubernetes.Interface, run string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := listRun(ctx, c, run)
		if err == nil && len(pods) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for the pods of %s to go: %d left after %v (%v)", run, len(pods), timeout, err)
		}
		if err := sleep(ctx, poll); err != nil {
			return err
		}
	}
}

// restarts sums the restart counts of the pods' containers.
func restarts(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			n += int(cs.RestartCount)
		}
	}
	return n
}

// restartedContainers counts the pods' container restarts in two: cut
// are those whose previous instance never ran because the kill cut its
// start short (the runtime ends a start whose caller went away with
// StartError; the kubelet then starts the container again and, as
// upstream, counts a restart), other are the rest (an instance that ran
// was replaced). why describes each restarted container.
func restartedContainers(pods []corev1.Pod) (cut, other int, why []string) {
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount == 0 {
				continue
			}
			last := "previous instance unknown"
			t := cs.LastTerminationState.Terminated
			if t != nil {
				last = fmt.Sprintf("previous instance %s (exit code %d, started %s): %s",
					t.Reason, t.ExitCode, t.StartedAt.UTC().Format(time.RFC3339), t.Message)
			}
			why = append(why, fmt.Sprintf("%s/%s restarted %d times, %s", p.Name, cs.Name, cs.RestartCount, last))
			// A start that never ran has no start time: zero (berth) or
			// the Unix epoch (upstream, from the runtime's 0).
			if cs.RestartCount == 1 && t != nil && t.Reason == "StartError" && (t.StartedAt.IsZero() || t.StartedAt.Unix() == 0) {
				cut++
				continue
			}
			other += int(cs.RestartCount)
		}
	}
	return cut, other, why
}

// runtimeObjects is what the runtime holds of some pods, by pod UID.
type runtimeObjects struct {
	// readySandboxes and sandboxes count each pod's sandboxes.
	readySandboxes, sandboxes map[string]int
	// running are the IDs of each pod's running containers.
	running map[string][]string
}

func listRuntime(ctx context.Context, rt runtimeapi.RuntimeServiceClient) (runtimeObjects, error) {
	o := runtimeObjects{readySandboxes: map[string]int{}, sandboxes: map[string]int{}, running: map[string][]string{}}
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return o, fmt.Errorf("list pod sandboxes: %w", err)
	}
	for _, sb := range sbs.GetItems() {
		uid := sb.GetLabels()[podUIDLabel]
		o.sandboxes[uid]++
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			o.readySandboxes[uid]++
		}
	}
	cs, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}})
	if err != nil {
		return o, fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs.GetContainers() {
		uid := c.GetLabels()[podUIDLabel]
		o.running[uid] = append(o.running[uid], c.GetId())
	}
	return o, nil
}

// duplicates counts, over pods, the ready sandboxes beyond one and the
// running containers beyond one (every soak pod has one container).
func (o runtimeObjects) duplicates(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		uid := string(p.UID)
		n += max(0, o.readySandboxes[uid]-1) + max(0, len(o.running[uid])-1)
	}
	return n
}

// changed counts the pods whose running container is not the one before
// had (or that have none now).
func changed(before, after runtimeObjects, pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		uid := string(p.UID)
		if len(after.running[uid]) != 1 || len(before.running[uid]) != 1 || after.running[uid][0] != before.running[uid][0] {
			n++
		}
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
