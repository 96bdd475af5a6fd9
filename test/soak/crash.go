package soak

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// maxCrashDelay bounds the random point at which the kubelet is killed
// after a burst's creation or deletion begins.
const maxCrashDelay = 3 * time.Second

// crash: the kubelet SIGKILLed at a random point of a burst's creation,
// restarted: every pod ends Running with one ready sandbox and one
// running container, never restarted (but for a start the kill cut short:
// the runtime fails it, with StartError, when its caller goes away, and the
// container is started once more, a restart by upstream's count; those are
// a figure); then killed at a random point of
// their deletion, restarted: every pod goes and nothing is left.
func crash(ctx context.Context, e *env) error { return crashRounds(ctx, e, soakPod) }

// crashRounds is the crash scenario on the pods build makes.
func crashRounds(ctx context.Context, e *env, build podBuilder) error {
	c := e.cfg.Crash
	var dups, restarted, cut int
	var slowest time.Duration
	for round := range c.Rounds {
		run := fmt.Sprintf("%s-%d", e.name, round)
		created := make(chan error, 1)
		go func() { created <- createPodsOf(ctx, e.client, e.name, run, c.Pods, build) }()
		if err := e.killAndRestart(ctx); err != nil {
			return err
		}
		if err := <-created; err != nil {
			return err
		}
		began := time.Now()
		pods, err := waitRunning(ctx, e.client, run, c.Pods, 3*time.Minute)
		if err != nil {
			return fmt.Errorf("round %d, after the kill during creation: %w", round, err)
		}
		slowest = max(slowest, time.Since(began))
		objs, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		dups += objs.duplicates(pods)
		c, o, why := restartedContainers(pods)
		cut, restarted = cut+c, restarted+o
		if len(why) > 0 {
			e.cfg.Logf("crash round %d: %s", round, strings.Join(why, "; "))
		}

		deleted := make(chan error, 1)
		go func() { deleted <- deletePods(ctx, e.client, run, 4*time.Minute) }()
		if err := e.killAndRestart(ctx); err != nil {
			return err
		}
		if err := <-deleted; err != nil {
			return fmt.Errorf("round %d, after the kill during deletion: %w", round, err)
		}
	}
	e.out.add("rounds", "", float64(c.Rounds))
	e.out.add("pods", "", float64(c.Rounds*c.Pods))
	e.out.add("all Running after the restart", "s", slowest.Round(100*time.Millisecond).Seconds())
	e.out.add("duplicate sandboxes or containers", "", float64(dups))
	e.out.add("starts cut short by the kill, made again", "", float64(cut))
	e.out.add("container restarts", "", float64(restarted))
	e.out.promise(dups == 0, "%d duplicate sandboxes or containers after a crash", dups)
	e.out.promise(restarted == 0, "%d container restarts after a crash", restarted)
	e.settle(ctx, "")
	return nil
}

// killAndRestart kills the kubelet at a random point within
// maxCrashDelay and starts it again on the same directory.
func (e *env) killAndRestart(ctx context.Context) error {
	if err := sleep(ctx, time.Duration(e.rand.Int64N(int64(maxCrashDelay)))); err != nil {
		return err
	}
	e.node.Kill()
	return e.start(ctx)
}
