package soak

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// apiOutage: the API server stopped under running pods for Outage; a
// container dies meanwhile. The kubelet restarts it during the outage,
// leaves the other pods alone, and once the API server is back the
// pod's status shows the restart and the Node is Ready.
func apiOutage(ctx context.Context, e *env) error {
	n := e.cfg.OutagePods
	run, pods, err := e.runningPods(ctx, n)
	if err != nil {
		return err
	}
	before, err := listRuntime(ctx, e.runtime)
	if err != nil {
		return err
	}
	victim := pods[0]
	e.cl.StopAPIServer()
	apiUp := false
	defer func() {
		if !apiUp {
			_ = e.cl.StartAPIServer(ctx)
		}
	}()
	if err := sleep(ctx, 5*time.Second); err != nil {
		return err
	}
	if ids := before.running[string(victim.UID)]; len(ids) == 1 {
		if _, err := e.runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ids[0], Timeout: 0}); err != nil {
			return fmt.Errorf("stop the victim's container: %w", err)
		}
	}
	if err := sleep(ctx, e.cfg.Outage); err != nil {
		return err
	}
	during, err := listRuntime(ctx, e.runtime)
	if err != nil {
		return err
	}
	restartedDuring := len(during.running[string(victim.UID)]) == 1 && during.running[string(victim.UID)][0] != before.running[string(victim.UID)][0]
	if err := e.cl.StartAPIServer(ctx); err != nil {
		return fmt.Errorf("start the API server again: %w", err)
	}
	apiUp = true
	began := time.Now()
	caughtUp, err := waitRestartSeen(ctx, e, victim, 3*time.Minute)
	if err != nil {
		return err
	}
	_, err = waitRecovered(ctx, e, run, n, 3*time.Minute)
	if err != nil {
		return fmt.Errorf("after the outage: %w", err)
	}
	after, err := listRuntime(ctx, e.runtime)
	if err != nil {
		return err
	}
	others := changed(before, after, pods[1:])
	e.out.add("pods", "", float64(n))
	e.out.add("outage", "s", e.cfg.Outage.Seconds())
	e.out.add("dead container restarted during the outage", "", b2f(restartedDuring))
	e.out.add("restart in the pod's status after", "s", caughtUp.Sub(began).Round(100*time.Millisecond).Seconds())
	e.out.add("all Running and Node Ready after", "s", time.Since(began).Round(100*time.Millisecond).Seconds())
	e.out.add("other pods' containers replaced", "", float64(others))
	e.out.promise(restartedDuring, "the dead container was not restarted while the API server was away")
	e.out.promise(others == 0, "%d other pods lost their container during the outage", others)
	if err := deletePods(ctx, e.client, run, 3*time.Minute); err != nil {
		return err
	}
	e.settle(ctx, "")
	return nil
}

// waitRestartSeen waits until the API shows pod's container restarted.
func waitRestartSeen(ctx context.Context, e *env, pod corev1.Pod, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		p, err := e.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && restarts([]corev1.Pod{*p}) > restarts([]corev1.Pod{pod}) {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("the restart of %s was not in its status %v after the outage (%v)", pod.Name, timeout, err)
		}
		if err := sleep(ctx, poll); err != nil {
			return time.Time{}, err
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
