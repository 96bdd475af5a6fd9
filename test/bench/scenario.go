package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// benchNamespace holds every pod the harness creates.
const benchNamespace = "default"

// runLabel marks the pods of one burst.
const runLabel = "berth.dev/bench-run"

// BusyboxImage is the pre-pulled image every bench pod runs.
const BusyboxImage = "docker.io/library/busybox:1.36"

// benchCommand sleeps and exits at once on SIGTERM, so deletions measure
// the kubelet, not a grace period.
func benchCommand() []string {
	return []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"}
}

// benchPod is burst pod i of run, bound to nodeName.
func benchPod(run string, i int, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: run + "-" + strconv.Itoa(i), Namespace: benchNamespace, Labels: map[string]string{runLabel: run}},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []corev1.Container{{
				Name: "c", Image: BusyboxImage, ImagePullPolicy: corev1.PullIfNotPresent, Command: benchCommand(),
			}},
		},
	}
}

// watchUntil watches the objects list selects until done returns true for
// an event, re-watching when the API server closes the watch.
func watchUntil(ctx context.Context, list func(context.Context, metav1.ListOptions) (string, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), done func(watch.Event, time.Time) bool) error {
	rv, err := list(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for {
		w, err := watchFn(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			return err
		}
		for ev := range w.ResultChan() {
			now := time.Now()
			if ev.Type == watch.Error {
				w.Stop()
				return fmt.Errorf("watch: %v", ev.Object)
			}
			if o, ok := ev.Object.(metav1.Object); ok {
				rv = o.GetResourceVersion()
			}
			if ev.Type != watch.Bookmark && done(ev, now) {
				w.Stop()
				return nil
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// WaitNodeReady watches Node name until its Ready condition is True and
// returns when that was observed: at once when it is Ready now (a Node
// that stays Ready may not change for minutes: its heartbeat is its
// Lease).
func WaitNodeReady(ctx context.Context, c kubernetes.Interface, name string) (time.Time, error) {
	if n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil && nodeReady(n) {
		return time.Now(), nil
	}
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	var at time.Time
	err := watchUntil(ctx,
		func(ctx context.Context, o metav1.ListOptions) (string, error) {
			o.FieldSelector = sel
			l, err := c.CoreV1().Nodes().List(ctx, o)
			if err != nil {
				return "", err
			}
			for i := range l.Items {
				if nodeReady(&l.Items[i]) {
					at = time.Now()
				}
			}
			return l.ResourceVersion, nil
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Nodes().Watch(ctx, o)
		},
		func(ev watch.Event, now time.Time) bool {
			if !at.IsZero() {
				return true
			}
			if n, ok := ev.Object.(*corev1.Node); ok && nodeReady(n) {
				at = now
				return true
			}
			return false
		})
	if err == nil && at.IsZero() {
		err = errors.New("node never became Ready")
	}
	return at, err
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podTimes records, per pod name, when an operation on it was requested
// and when its outcome was observed.
type podTimes struct {
	mu        sync.Mutex // guards the maps
	requested map[string]time.Time
	observed  map[string]time.Time
}

func newPodTimes() *podTimes {
	return &podTimes{requested: map[string]time.Time{}, observed: map[string]time.Time{}}
}

func (p *podTimes) request(name string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requested[name] = at
}

// observe records the first observation of name; it returns how many pods
// have been observed.
func (p *podTimes) observe(name string, at time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.observed[name]; !ok {
		p.observed[name] = at
	}
	return len(p.observed)
}

// result is each pod's observed-requested seconds, and first request to
// last observation for all.
func (p *podTimes) result() (perPod []float64, all float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first, last time.Time
	for name, req := range p.requested {
		obs, ok := p.observed[name]
		if !ok {
			continue
		}
		perPod = append(perPod, obs.Sub(req).Seconds())
		if first.IsZero() || req.Before(first) {
			first = req
		}
		if obs.After(last) {
			last = obs
		}
	}
	return perPod, last.Sub(first).Seconds()
}

// Span is one pod's request and observation.
type Span struct{ Requested, Observed time.Time }

// spans returns the pods observed, by "namespace/name".
func (p *podTimes) spans(namespace string) map[string]Span {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]Span{}
	for name, req := range p.requested {
		if obs, ok := p.observed[name]; ok {
			out[namespace+"/"+name] = Span{Requested: req, Observed: obs}
		}
	}
	return out
}
