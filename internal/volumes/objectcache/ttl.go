package objectcache

import (
	"context"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// DefaultTTL is how long the Cache strategy serves an object before it
// GETs it again when the Node carries no TTL annotation (upstream's
// defaultTTL of the caching configMap and secret managers).
const DefaultTTL = time.Minute

// TTL returns how long the Cache strategy may serve an object: the whole
// seconds of the Node's node.alpha.kubernetes.io/ttl annotation (which the
// control plane's TTL controller sets by cluster size), else DefaultTTL.
// As upstream's GetObjectTTLFromNodeFunc, any integer is taken as it is.
func TTL(node *corev1.Node) time.Duration {
	if node == nil {
		return DefaultTTL
	}
	v, ok := node.Annotations[corev1.ObjectTTLAnnotationKey]
	if !ok {
		return DefaultTTL
	}
	secs, err := strconv.Atoi(v)
	if err != nil {
		return DefaultTTL
	}
	return time.Duration(secs) * time.Second
}

// ttlStore serves objects from a cache that it refreshes with a GET once
// they are older than the TTL (strategy Cache), as upstream's objectStore.
type ttlStore struct {
	kind   kind
	client kubernetes.Interface
	clock  clock.PassiveClock
	ttl    func() time.Duration

	mu    sync.Mutex // guards items and each item's refs and data pointer
	items map[key]*ttlItem
}

type ttlItem struct {
	refs int
	// data is replaced by a fresh one when a pod adds a reference, so the
	// next get fetches again (a new pod sees current content).
	data *ttlData
}

// ttlData is the cached answer for one object.
type ttlData struct {
	mu      sync.Mutex // serialises fetches of the object; guards the fields below
	object  runtime.Object
	err     error // the last answer was NotFound
	fetched time.Time
}

func newTTLStore(kd kind, c kubernetes.Interface, clk clock.PassiveClock, ttl func() time.Duration) *ttlStore {
	return &ttlStore{kind: kd, client: c, clock: clk, ttl: ttl, items: map[key]*ttlItem{}}
}

func (s *ttlStore) add(k key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.items[k]
	if it == nil {
		it = &ttlItem{}
		s.items[k] = it
	}
	it.refs++
	it.data = &ttlData{}
}

func (s *ttlStore) remove(k key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it := s.items[k]; it != nil {
		if it.refs--; it.refs <= 0 {
			delete(s.items, k)
		}
	}
}

// get returns the cached object while it is fresh, else GETs it. A failed
// GET keeps serving what was cached; with nothing cached its error is
// returned and not cached. A NotFound answer is cached but, as upstream,
// asked again on every get.
func (s *ttlStore) get(ctx context.Context, k key) (runtime.Object, error) {
	s.mu.Lock()
	it := s.items[k]
	var d *ttlData
	if it != nil {
		d = it.data
	}
	s.mu.Unlock()
	if d == nil {
		return nil, errNotRegistered(s.kind, k)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := s.clock.Now()
	if d.err == nil && now.Before(d.fetched.Add(s.ttl())) {
		return d.object, nil
	}
	var opts metav1.GetOptions
	if d.object != nil && d.err == nil {
		// A periodic refresh: the API server's watch cache is fresh
		// enough, and spares etcd (upstream's FromApiserverCache).
		opts.ResourceVersion = "0"
	}
	obj, err := fetch(ctx, s.kind, s.client, k, opts)
	switch {
	case apierrors.IsNotFound(err):
		d.object, d.err, d.fetched = nil, err, now
	case err != nil && d.object == nil && d.err == nil:
		return nil, err
	case err == nil && !olderThan(obj, d.object):
		d.object, d.err, d.fetched = obj, nil, now
	}
	return d.object, d.err
}

// olderThan reports whether obj has a lower resourceVersion than cached
// (a lagging API server cache); unparsable versions never count as older.
func olderThan(obj, cached runtime.Object) bool {
	if obj == nil || cached == nil {
		return false
	}
	a, errA := resourceVersion(obj)
	b, errB := resourceVersion(cached)
	return errA == nil && errB == nil && a < b
}

func resourceVersion(obj runtime.Object) (uint64, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseUint(m.GetResourceVersion(), 10, 64)
}
