package kuberuntime

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// hasSidecar reports whether the pod has a restartable init container.
func hasSidecar(pod *corev1.Pod) bool {
	for i := range pod.Spec.InitContainers {
		if podutil.IsSidecarIn(&pod.Spec, &pod.Spec.InitContainers[i]) {
			return true
		}
	}
	return false
}

// stopAfter is upstream's termination ordering of a pod with sidecars, as
// data: for each sidecar, the containers that must have stopped before it
// stops: every regular container, and the next sidecar declared after it
// (so sidecars stop in reverse order of declaration). Regular and ordinary
// init containers wait for nothing.
func stopAfter(pod *corev1.Pod) map[string][]string {
	out := map[string][]string{}
	var regular []string
	for i := range pod.Spec.Containers {
		regular = append(regular, pod.Spec.Containers[i].Name)
	}
	later := ""
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		if !podutil.IsSidecarIn(&pod.Spec, c) {
			continue
		}
		deps := append([]string(nil), regular...)
		if later != "" {
			deps = append(deps, later)
		}
		out[c.Name] = deps
		later = c.Name
	}
	return out
}

// termOrder makes the kills of one KillPod wait for their turn. Safe for
// concurrent use: mu guards pending; each name's channel is closed once,
// when its last running instance has stopped.
type termOrder struct {
	clock clock.Clock
	deps  map[string][]string
	// gone holds one channel per container name; a name with nothing
	// running starts closed.
	gone map[string]chan struct{}

	mu      sync.Mutex
	pending map[string]int // running instances not yet stopped, by name
}

// newTermOrder builds the ordering for the given running container names
// (duplicates allowed: several instances of one name).
func newTermOrder(clk clock.Clock, pod *corev1.Pod, running []string) *termOrder {
	o := &termOrder{clock: clk, deps: stopAfter(pod), gone: map[string]chan struct{}{}, pending: map[string]int{}}
	for _, n := range running {
		o.pending[n]++
	}
	add := func(name string) {
		ch := make(chan struct{})
		if o.pending[name] == 0 {
			close(ch)
		}
		o.gone[name] = ch
	}
	for i := range pod.Spec.Containers {
		add(pod.Spec.Containers[i].Name)
	}
	for i := range pod.Spec.InitContainers {
		add(pod.Spec.InitContainers[i].Name)
	}
	return o
}

// waitTurn blocks until every container name must stop after has stopped,
// or grace seconds passed, and returns the whole seconds it waited.
func (o *termOrder) waitTurn(name string, grace int64) int64 {
	deps := o.deps[name]
	if len(deps) == 0 {
		return 0
	}
	start := o.clock.Now()
	timeout := o.clock.After(time.Duration(grace) * time.Second)
	for _, d := range deps {
		ch, ok := o.gone[d]
		if !ok {
			continue
		}
		select {
		case <-ch:
		case <-timeout:
			return int64(o.clock.Since(start).Seconds())
		}
	}
	return int64(o.clock.Since(start).Seconds())
}

// stopped records that one instance of name has stopped (or failed to).
func (o *termOrder) stopped(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending[name] == 0 {
		return
	}
	o.pending[name]--
	if o.pending[name] == 0 {
		if ch, ok := o.gone[name]; ok {
			close(ch)
		}
	}
}
