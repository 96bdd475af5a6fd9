package soak

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/berthk8s/berth/test/apiproxy"
)

// apiStormPhases are the storms the API server (through apiproxy) shows
// the kubelet, each for FaultFor: every request throttled with a
// Retry-After, then every request failing with 500. The requests in
// flight, watches included, are cut when a storm begins.
var apiStormPhases = []struct {
	name  string
	fault apiproxy.Fault
}{
	{name: "429", fault: apiproxy.Fault{Status: http.StatusTooManyRequests, RetryAfter: time.Second}},
	{name: "500", fault: apiproxy.Fault{Status: http.StatusInternalServerError}},
}

// apiStorm: the kubelet reaches the API server through apiproxy; under
// running pods, a storm of 429s, then one of 500s, each for FaultFor,
// while a pod is created for the node. No pod loses its container to
// the storm; once it ends the Node is Ready and the pod created during it
// runs. How hard the kubelet pressed the throttled API server (its
// requests a second during the storm) is a figure.
func apiStorm(ctx context.Context, e *env) error {
	p, err := apiproxy.Start(e.kubecfg, e.dir)
	if err != nil {
		return err
	}
	defer func() { _ = p.Close() }()
	// The kubelet runs again, through the proxy.
	e.node.Stop(ctx)
	e.kubecfg = p.Kubeconfig()
	if err := e.start(ctx); err != nil {
		return fmt.Errorf("start the kubelet through the API proxy: %w", err)
	}
	n := e.cfg.FaultPods
	run, pods, err := e.runningPods(ctx, n)
	if err != nil {
		return err
	}
	e.out.add("pods", "", float64(n))
	e.out.add("each storm", "s", e.cfg.FaultFor.Seconds())
	for i, ph := range apiStormPhases {
		before, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		w := watchReady(ctx, e.client, e.name)
		seen, _ := p.Counts()
		p.Inject(ph.fault)
		began := time.Now()
		late := fmt.Sprintf("%s-late-%d", e.name, i)
		if err := createPods(ctx, e.client, e.name, late, 1); err != nil {
			p.Clear()
			return err
		}
		if err := sleep(ctx, e.cfg.FaultFor-time.Since(began)); err != nil {
			p.Clear()
			return err
		}
		during, _ := p.Counts()
		p.Clear()
		ended := time.Now()
		rate := float64(during-seen) / ended.Sub(began).Seconds()
		recovered, err := waitRecovered(ctx, e, run, n, 3*time.Minute)
		notReady := w.end()
		if err != nil {
			return fmt.Errorf("after the %s storm: %w", ph.name, err)
		}
		_, lateErr := waitRunning(ctx, e.client, late, 1, 3*time.Minute)
		lateAfter := time.Since(ended)
		after, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		replaced := changed(before, after, pods)
		e.out.add(ph.name+": requests a second during the storm", "", float64(int(rate*10))/10)
		e.out.add(ph.name+": Node not Ready", "s", notReady.Seconds())
		e.out.add(ph.name+": recovered", "s", recovered.Round(100*time.Millisecond).Seconds())
		e.out.add(ph.name+": pod created during the storm Running after it", "s", lateAfter.Round(100*time.Millisecond).Seconds())
		e.out.add(ph.name+": containers replaced", "", float64(replaced))
		e.out.promise(replaced == 0, "%s storm: %d of %d pods lost their container", ph.name, replaced, n)
		e.out.promise(lateErr == nil, "%s storm: the pod created during it did not run after it: %v", ph.name, lateErr)
		if err := deletePods(ctx, e.client, late, 3*time.Minute); err != nil {
			return err
		}
		if pods, err = listRun(ctx, e.client, run); err != nil {
			return err
		}
	}
	if err := deletePods(ctx, e.client, run, 3*time.Minute); err != nil {
		return err
	}
	e.settle(ctx, "")
	return nil
}
