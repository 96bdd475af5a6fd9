package simbench

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// progressEvery is how often a wait logs how far it has got.
const progressEvery = 15 * time.Second

// arrivals records when each object first got where a wait waits for it.
// Safe for concurrent use.
type arrivals struct {
	start time.Time

	mu   sync.Mutex // guards seen
	seen map[string]time.Duration
}

func newArrivals(start time.Time) *arrivals {
	return &arrivals{start: start, seen: map[string]time.Duration{}}
}

// mark records name's arrival now, once, and returns how many arrived.
func (a *arrivals) mark(name string, now time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.seen[name]; !ok {
		a.seen[name] = now.Sub(a.start)
	}
	return len(a.seen)
}

// count is how many arrived.
func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.seen)
}

// sorted returns the arrival times, first first.
func (a *arrivals) sorted() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []time.Duration
	for _, d := range a.seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// waitFor watches the objects lw lists until want of them satisfy got,
// logging the count every progressEvery; it records each one's arrival.
func waitFor(ctx context.Context, lw cache.ListerWatcher, obj runtime.Object, want int, arr *arrivals,
	got func(runtime.Object) (string, bool), logf func(string, ...any), what string) error {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				logf("%d/%d %s after %s", arr.count(), want, what, time.Since(arr.start).Round(time.Second))
			}
		}
	}()
	_, err := watchtools.UntilWithSync(ctx, lw, obj, nil, func(ev watch.Event) (bool, error) {
		if ev.Type != watch.Added && ev.Type != watch.Modified {
			return false, nil
		}
		name, ok := got(ev.Object)
		return ok && arr.mark(name, time.Now()) >= want, nil
	})
	return err
}

// waitNodesReady waits until n nodes whose names start with prefix are
// Ready.
func waitNodesReady(ctx context.Context, client kubernetes.Interface, prefix string, n int, arr *arrivals, logf func(string, ...any)) error {
	lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "nodes", "", fields.Everything())
	return waitFor(ctx, lw, &corev1.Node{}, n, arr, func(o runtime.Object) (string, bool) {
		node, ok := o.(*corev1.Node)
		if !ok {
			return "", false
		}
		return node.Name, strings.HasPrefix(node.Name, prefix) && nodeReady(node)
	}, logf, "nodes Ready")
}

// nodeReady reports whether the node's Ready condition is True. It is
// pure.
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitPodsRunning waits until n of the harness's pods are Running.
func waitPodsRunning(ctx context.Context, client kubernetes.Interface, n int, arr *arrivals, logf func(string, ...any)) error {
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "pods", podNamespace,
		func(o *metav1.ListOptions) { o.LabelSelector = podLabel })
	return waitFor(ctx, lw, &corev1.Pod{}, n, arr, func(o runtime.Object) (string, bool) {
		pod, ok := o.(*corev1.Pod)
		if !ok {
			return "", false
		}
		return pod.Name, pod.Status.Phase == corev1.PodRunning
	}, logf, "pods Running")
}
