package soak

import (
	"context"
	"fmt"
	"time"
)

// churn: cycles of pods created, Running and deleted. Afterwards nothing
// is left (runtime objects, pod directories, mounts, pod cgroups, CNI
// leases), the kubelet's goroutines are back where they were after the
// warm-up, and its resident memory grew at most MaxRSSGrowth over the
// measured cycles.
func churn(ctx context.Context, e *env) error {
	c := e.cfg.Churn
	cycle := func(i int) error {
		run := fmt.Sprintf("%s-%d", e.name, i)
		if err := createPods(ctx, e.client, e.name, run, c.Pods); err != nil {
			return err
		}
		if _, err := waitRunning(ctx, e.client, run, c.Pods, 3*time.Minute); err != nil {
			return err
		}
		return deletePods(ctx, e.client, run, 3*time.Minute)
	}
	for i := range c.Warmup {
		if err := cycle(i); err != nil {
			return fmt.Errorf("warm-up cycle %d: %w", i, err)
		}
	}
	rss0, err := rssMiB(ctx, e.node)
	if err != nil {
		return err
	}
	g0, gErr := goroutines(ctx, e.cfg.NodeIP)
	began := time.Now()
	for i := range c.Cycles {
		if err := cycle(c.Warmup + i); err != nil {
			return fmt.Errorf("cycle %d: %w", c.Warmup+i, err)
		}
		if i%100 == 99 {
			e.cfg.Logf("%s: %d cycles", e.name, i+1)
		}
	}
	took := time.Since(began)
	e.out.add("cycles", "", float64(c.Cycles))
	e.out.add("pods", "", float64(c.Cycles*c.Pods))
	e.out.add("cycle", "s", took.Seconds()/float64(max(1, c.Cycles)))
	e.settle(ctx, "")
	rss1, err := rssMiB(ctx, e.node)
	if err != nil {
		return err
	}
	growth := (rss1 - rss0) / rss0
	e.out.add("RSS after warm-up", "MiB", rss0)
	e.out.add("RSS at the end", "MiB", rss1)
	e.out.add("RSS growth", "%", 100*growth)
	if c.Cycles >= c.PromiseRSSCycles {
		e.out.promise(growth <= c.MaxRSSGrowth, "resident memory grew %.1f%% over %d cycles (at most %.0f%%)", 100*growth, c.Cycles, 100*c.MaxRSSGrowth)
	}
	g1, err := goroutines(ctx, e.cfg.NodeIP)
	if gErr != nil || err != nil {
		e.out.promise(false, "read goroutines: %v %v", gErr, err)
		return nil
	}
	e.out.add("goroutines after warm-up", "", float64(g0))
	e.out.add("goroutines at the end", "", float64(g1))
	// A few goroutines come and go with the node's own loops; a leak per
	// pod or per cycle is far more.
	e.out.promise(g1 <= g0+20, "goroutines grew from %d to %d", g0, g1)
	return nil
}
