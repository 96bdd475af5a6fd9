package podworker

import (
	"k8s.io/apimachinery/pkg/types"
)

// staticGate serializes static pods with the same full name: editing a
// manifest gives the pod a new UID under the same name, and the new UID may
// start only once the old one is Finished. UIDs start in the order Update
// first saw them. Guarded by Workers.mu.
type staticGate struct {
	// started: the UID holding each full name (started, not yet finished).
	started map[string]types.UID
	// waiting: UIDs not yet started, per full name, oldest first.
	waiting map[string][]types.UID
}

func newStaticGate() staticGate {
	return staticGate{started: map[string]types.UID{}, waiting: map[string][]types.UID{}}
}

// enqueue records that uid wants to start under name.
func (g *staticGate) enqueue(name string, uid types.UID) {
	g.waiting[name] = append(g.waiting[name], uid)
}

// allowStart reports whether uid may start now, and if so makes it the
// holder of name. A UID may start when no other UID holds the name and it is
// the oldest waiting UID still able to start (stillWaiting). A non-static
// pod (name "") always may.
func (g *staticGate) allowStart(name string, uid types.UID, stillWaiting func(types.UID) bool) bool {
	if name == "" {
		return true
	}
	if holder, ok := g.started[name]; ok {
		return holder == uid
	}
	queue := g.waiting[name]
	for len(queue) > 0 && queue[0] != uid && !stillWaiting(queue[0]) {
		queue = queue[1:]
	}
	if len(queue) > 0 && queue[0] != uid {
		g.waiting[name] = queue
		return false
	}
	if len(queue) > 0 {
		queue = queue[1:]
	}
	if len(queue) == 0 {
		delete(g.waiting, name)
	} else {
		g.waiting[name] = queue
	}
	g.started[name] = uid
	return true
}

// release frees name if uid holds it, and drops uid from the waiting list.
// It returns the UIDs still waiting for name, to be woken.
func (g *staticGate) release(name string, uid types.UID) []types.UID {
	if name == "" {
		return nil
	}
	if g.started[name] == uid {
		delete(g.started, name)
	}
	queue := g.waiting[name]
	kept := queue[:0:0]
	for _, u := range queue {
		if u != uid {
			kept = append(kept, u)
		}
	}
	if len(kept) == 0 {
		delete(g.waiting, name)
	} else {
		g.waiting[name] = kept
	}
	return kept
}

// waitingToStart reports whether uid's worker exists and has not started
// nor been asked to terminate. Called with w.mu held.
func (w *Workers) waitingToStart(uid types.UID) bool {
	wk, ok := w.workers[uid]
	return ok && wk.phase == Waiting
}

// releaseName frees wk's full name and wakes the pods waiting for it.
// Called with w.mu held.
func (w *Workers) releaseName(wk *worker) {
	for _, uid := range w.static.release(wk.fullName, wk.uid) {
		if next, ok := w.workers[uid]; ok {
			next.signal()
		}
	}
}
