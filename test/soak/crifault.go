package soak

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/test/criproxy"
)

// criPhase is one fault the runtime shows the kubelet for FaultFor.
type criPhase struct {
	name   string
	faults []criproxy.Fault
}

var criPhases = []criPhase{
	{name: "unavailable", faults: []criproxy.Fault{{Method: "*", Code: codes.Unavailable}}},
	{name: "deadline exceeded", faults: []criproxy.Fault{{Method: "*", Code: codes.DeadlineExceeded}}},
	{name: "status calls hang", faults: []criproxy.Fault{
		{Method: "ListPodSandbox", Hang: true}, {Method: "ListContainers", Hang: true},
		{Method: "PodSandboxStatus", Hang: true}, {Method: "ContainerStatus", Hang: true},
	}},
	{name: "slow", faults: []criproxy.Fault{{Method: "*", Delay: 2 * time.Second}}},
}

// criFaults: under running pods, the runtime (through criproxy) answers
// Unavailable, DeadlineExceeded, hangs on its status calls, or is slow,
// each for FaultFor. No pod loses its container to a runtime hiccup; the
// Node is Ready again once the runtime answers.
func criFaults(ctx context.Context, e *env) error {
	n := e.cfg.FaultPods
	run, pods, err := e.runningPods(ctx, n)
	if err != nil {
		return err
	}
	e.out.add("pods", "", float64(n))
	e.out.add("each fault", "s", e.cfg.FaultFor.Seconds())
	for _, ph := range criPhases {
		before, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		w := watchReady(ctx, e.client, e.name)
		for _, f := range ph.faults {
			e.proxy.Inject(f)
		}
		if err := sleep(ctx, e.cfg.FaultFor); err != nil {
			return err
		}
		e.proxy.Clear()
		recovered, err := waitRecovered(ctx, e, run, n, 3*time.Minute)
		notReady := w.end()
		if err != nil {
			return fmt.Errorf("after %s: %w", ph.name, err)
		}
		after, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		replaced := changed(before, after, pods)
		e.out.add(ph.name+": Node not Ready", "s", notReady.Seconds())
		e.out.add(ph.name+": recovered", "s", recovered.Round(100*time.Millisecond).Seconds())
		e.out.add(ph.name+": containers replaced", "", float64(replaced))
		e.out.promise(replaced == 0, "%s: %d of %d pods lost their container", ph.name, replaced, n)
		if pods, err = listRun(ctx, e.client, run); err != nil {
			return err
		}
	}
	if err := deletePods(ctx, e.client, run, 3*time.Minute); err != nil {
		return err
	}
	if err := pullError(ctx, e); err != nil {
		return err
	}
	e.settle(ctx, "")
	return nil
}

// pullErrorMessage is what the proxy answers PullImage with in pullError.
const pullErrorMessage = "PullImage failed"

// pullError is upstream's e2e_node criproxy spec "Pod failed to start
// due to an image pull error" (test/e2e_node/criproxy_test.go): with
// PullImage failing, a pod that always pulls waits in ErrImagePull or
// ImagePullBackOff, and its Failed event carries the runtime's error.
// (The spec beside it, "Image pull time exceeded 10 seconds", needs an
// image a registry serves: none is reachable here.)
func pullError(ctx context.Context, e *env) error {
	e.proxy.Inject(criproxy.Fault{Method: "PullImage", Code: codes.Unknown, Message: pullErrorMessage})
	defer e.proxy.Clear()
	run := e.name + "-pull"
	if err := createPodsOf(ctx, e.client, e.name, run, 1, func(run string, i int, node string) *corev1.Pod {
		p := soakPod(run, i, node)
		p.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
		return p
	}); err != nil {
		return err
	}
	name := run + "-0"
	var waiting, message string
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && (waiting == "" || message == "") {
		if p, err := e.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			for _, cs := range p.Status.ContainerStatuses {
				if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
					waiting = w.Reason
				}
			}
		}
		events, err := e.client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=Failed"})
		if err == nil {
			for _, ev := range events.Items {
				if strings.Contains(ev.Message, pullErrorMessage) {
					message = ev.Message
				}
			}
		}
		if err := sleep(ctx, poll); err != nil {
			return err
		}
	}
	e.out.promise(waiting != "", "pull error: the container did not wait in ErrImagePull or ImagePullBackOff within a minute")
	e.out.promise(message != "", "pull error: no Failed event with the runtime's %q within a minute", pullErrorMessage)
	e.out.add("pull error: event has the runtime's error", "", map[bool]float64{false: 0, true: 1}[message != ""])
	return deletePods(ctx, e.client, run, 3*time.Minute)
}
