package soak

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"

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
	e.settle(ctx, "")
	return nil
}
