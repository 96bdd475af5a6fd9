package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// burstTimeout bounds one burst or one mass deletion.
const burstTimeout = 10 * time.Minute

// podWatch runs watchUntil over the pods of run. It closes listed once the
// initial list is done: every change after that reaches done.
func podWatch(ctx context.Context, c kubernetes.Interface, run string, listed chan<- struct{}, done func(watch.Event, time.Time) bool) error {
	sel := runLabel + "=" + run
	pods := c.CoreV1().Pods(benchNamespace)
	return watchUntil(ctx,
		func(ctx context.Context, o metav1.ListOptions) (string, error) {
			o.LabelSelector = sel
			l, err := pods.List(ctx, o)
			if err != nil {
				return "", err
			}
			if listed != nil {
				close(listed)
				listed = nil
			}
			return l.ResourceVersion, nil
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return pods.Watch(ctx, o)
		}, done)
}

// Burst creates n pods bound to nodeName at once, one goroutine each, and
// measures, per pod, the time from its create request to the watch showing
// it Running; and from the first request to the last Running pod. spans
// gives each pod's two moments, by "namespace/name".
func Burst(ctx context.Context, c kubernetes.Interface, nodeName, run string, n int) (perPod []float64, all float64, spans map[string]Span, err error) {
	ctx, cancel := context.WithTimeout(ctx, burstTimeout)
	defer cancel()
	times := newPodTimes()
	watchErr := make(chan error, 1)
	listed := make(chan struct{})
	go func() {
		watchErr <- podWatch(ctx, c, run, listed, func(ev watch.Event, at time.Time) bool {
			p, ok := ev.Object.(*corev1.Pod)
			return ok && p.Status.Phase == corev1.PodRunning && times.observe(p.Name, at) == n
		})
	}()
	if err := waitListed(ctx, listed, watchErr); err != nil {
		return nil, 0, nil, err
	}
	if err := createAll(ctx, c, nodeName, run, n, times); err != nil {
		cancel()
		_ = <-watchErr
		return nil, 0, nil, err
	}
	if err := <-watchErr; err != nil {
		return nil, 0, nil, fmt.Errorf("burst %s: wait for Running: %w", run, err)
	}
	perPod, all = times.result()
	return perPod, all, times.spans(benchNamespace), nil
}

// createAll creates the n pods of run in parallel.
func createAll(ctx context.Context, c kubernetes.Interface, nodeName, run string, n int, times *podTimes) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			pod := benchPod(run, i, nodeName)
			times.request(pod.Name, time.Now())
			_, errs[i] = c.CoreV1().Pods(benchNamespace).Create(ctx, pod, metav1.CreateOptions{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("create burst %s: %w", run, err)
	}
	return nil
}

// DeleteAll deletes the n pods of run at once and measures, per pod, the
// time from its delete request to the watch showing it gone.
func DeleteAll(ctx context.Context, c kubernetes.Interface, run string, n int) (perPod []float64, all float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, burstTimeout)
	defer cancel()
	times := newPodTimes()
	watchErr := make(chan error, 1)
	listed := make(chan struct{})
	go func() {
		watchErr <- podWatch(ctx, c, run, listed, func(ev watch.Event, at time.Time) bool {
			p, ok := ev.Object.(*corev1.Pod)
			return ok && ev.Type == watch.Deleted && times.observe(p.Name, at) == n
		})
	}()
	if err := waitListed(ctx, listed, watchErr); err != nil {
		return nil, 0, err
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			name := benchPod(run, i, "").Name
			times.request(name, time.Now())
			errs[i] = c.CoreV1().Pods(benchNamespace).Delete(ctx, name, metav1.DeleteOptions{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cancel()
		_ = <-watchErr
		return nil, 0, fmt.Errorf("delete burst %s: %w", run, err)
	}
	if err := <-watchErr; err != nil {
		return nil, 0, fmt.Errorf("delete burst %s: wait for removal: %w", run, err)
	}
	perPod, all = times.result()
	return perPod, all, nil
}

// waitListed waits for a pod watch's initial list, or its failure.
func waitListed(ctx context.Context, listed <-chan struct{}, watchErr <-chan error) error {
	select {
	case <-listed:
		return nil
	case err := <-watchErr:
		return fmt.Errorf("watch pods: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
}
