package soak

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// runtimeRestart: the runtime restarted under running pods. Afterwards
// every pod runs the container it ran before (none restarted, none
// replaced), and the Node is Ready again.
func runtimeRestart(ctx context.Context, e *env) error {
	if e.cfg.RestartRuntime == nil {
		return errors.New("no way to restart the runtime was given")
	}
	n := e.cfg.RuntimePods
	run, pods, err := e.runningPods(ctx, n)
	if err != nil {
		return err
	}
	before, err := listRuntime(ctx, e.runtime)
	if err != nil {
		return err
	}
	w := watchReady(ctx, e.client, e.name)
	began := time.Now()
	if err := e.cfg.RestartRuntime(ctx); err != nil {
		w.end()
		return fmt.Errorf("restart the runtime: %w", err)
	}
	restarted := time.Since(began)
	// The kubelet notices at its next relist or status check: give it
	// time to act (wrongly) before judging.
	if err := sleep(ctx, 20*time.Second); err != nil {
		return err
	}
	recovered, err := waitRecovered(ctx, e, run, n, 3*time.Minute)
	notReady := w.end()
	if err != nil {
		return fmt.Errorf("after the runtime restart: %w", err)
	}
	after, err := listRuntime(ctx, e.runtime)
	if err != nil {
		return err
	}
	pods2, err := listRun(ctx, e.client, run)
	if err != nil {
		return err
	}
	replaced, added := changed(before, after, pods), restarts(pods2)-restarts(pods)
	e.out.add("pods", "", float64(n))
	e.out.add("runtime restart", "s", restarted.Round(100*time.Millisecond).Seconds())
	e.out.add("Node not Ready", "s", notReady.Seconds())
	e.out.add("recovered 20 s after", "s", recovered.Round(100*time.Millisecond).Seconds())
	e.out.add("containers replaced", "", float64(replaced))
	e.out.add("container restarts", "", float64(added))
	e.out.promise(replaced == 0, "%d of %d pods lost their container to a runtime restart", replaced, n)
	e.out.promise(added == 0, "%d container restarts after a runtime restart", added)
	if err := deletePods(ctx, e.client, run, 3*time.Minute); err != nil {
		return err
	}
	e.settle(ctx, "")
	return nil
}
