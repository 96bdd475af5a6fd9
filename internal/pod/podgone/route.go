package podgone

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Owner keeps state keyed by pod UID. Forget drops all of it for uid: the
// pod is gone for good. It must be idempotent (a UID it does not know is
// a no-op), safe for concurrent use, and must not block on a pod worker
// or call back into the Route.
type Owner interface {
	Forget(ctx context.Context, uid types.UID)
}

// Holder is an Owner whose state may outlive every pod worker (restored
// from disk after a restart of berth, or fed by a source no worker
// follows, like mirror pods): housekeeping asks it which pods it holds
// to find the orphans among them.
type Holder interface {
	Owner
	// HeldPods lists the pods the owner holds state for (any order).
	HeldPods() []types.UID
}

// Func is a function as an Owner (tests, adapters).
type Func func(ctx context.Context, uid types.UID)

// Forget calls f.
func (f Func) Forget(ctx context.Context, uid types.UID) { f(ctx, uid) }

// Route is the one "pod gone" signal of a node.
//
// Concurrency: Register is called by the wiring, from one goroutine,
// before anything runs; Gone and Held may then be called from any
// goroutine. The owners are fixed by the first Gone or Held: a Register
// after it panics (an owner registered late would miss pods).
type Route struct {
	// mu guards owners and sealed.
	mu     sync.Mutex
	owners []entry
	sealed bool
}

type entry struct {
	name  string
	owner Owner
}

// New returns a Route with no owner.
func New() *Route { return &Route{} }

// Register adds an owner under a name (for logs and tests). It panics on
// a nil owner, a name already registered, or a Route already in use.
func (r *Route) Register(name string, o Owner) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case o == nil:
		panic(fmt.Sprintf("podgone: nil owner %q", name))
	case r.sealed:
		panic(fmt.Sprintf("podgone: owner %q registered after the route was first used", name))
	}
	for _, e := range r.owners {
		if e.name == name {
			panic(fmt.Sprintf("podgone: owner %q registered twice", name))
		}
	}
	r.owners = append(r.owners, entry{name: name, owner: o})
}

// seal fixes the owners and returns them.
func (r *Route) seal() []entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sealed = true
	return r.owners
}

// Gone tells every owner, in registration order, that the pod is gone:
// each forgets what it holds for it. The callers (package doc) send it
// once per pod end.
func (r *Route) Gone(ctx context.Context, uid types.UID) {
	owners := r.seal()
	klog.FromContext(ctx).V(4).Info("Pod gone: forgetting its state", "podUID", uid, "owners", len(owners))
	for _, e := range owners {
		e.owner.Forget(ctx, uid)
	}
}

// Held returns the pods any Holder holds state for.
func (r *Route) Held() map[types.UID]struct{} {
	out := map[types.UID]struct{}{}
	for _, e := range r.seal() {
		if h, ok := e.owner.(Holder); ok {
			for _, uid := range h.HeldPods() {
				out[uid] = struct{}{}
			}
		}
	}
	return out
}

// Owners returns the registered owners' names, in order.
func (r *Route) Owners() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.owners))
	for i, e := range r.owners {
		out[i] = e.name
	}
	return out
}
