package objectcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// syncTimeout bounds how long a get waits for the first list of a new
	// watch (upstream polls for one second, then fails the get).
	syncTimeout = time.Second
	// minWatchTimeout is the shortest watch request, as upstream raises
	// it for per-object watches so they are not re-established every 5
	// minutes.
	minWatchTimeout = 30 * time.Minute
)

// watchStore keeps one informer per referenced object (strategy Watch), as
// upstream's watch-based manager: a list-watch of the object's namespace
// with the field selector metadata.name=<name> (what the node authorizer
// allows a node for the objects its pods reference), started at the first
// reference and stopped at the last.
//
// run is the owner goroutine of the informers: add and remove only count
// references and wake it; it starts the informers of new objects and stops
// those of removed or immutable ones.
type watchStore struct {
	kind   kind
	client kubernetes.Interface
	clock  clock.Clock
	wake   chan struct{} // capacity 1: asks run to reconcile

	mu      sync.Mutex // guards items, retired and each item's refs
	items   map[key]*watchItem
	retired []*watchItem // no longer referenced; run stops their informers
}

// watchItem is the informer of one object. store and ctl are set at
// creation and never change.
type watchItem struct {
	key   key
	refs  int
	store cache.Store
	ctl   cache.Controller
	// immutable is set by get once the object is immutable: run stops the
	// informer and the store keeps serving the last object, as upstream.
	immutable atomic.Bool
}

func newWatchStore(kd kind, c kubernetes.Interface, clk clock.Clock) *watchStore {
	return &watchStore{kind: kd, client: c, clock: clk, wake: make(chan struct{}, 1), items: map[key]*watchItem{}}
}

func (s *watchStore) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *watchStore) add(k key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.items[k]
	if it == nil {
		it = s.newItem(k)
		s.items[k] = it
		s.signal()
	}
	it.refs++
}

func (s *watchStore) remove(k key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.items[k]
	if it == nil {
		return
	}
	if it.refs--; it.refs <= 0 {
		delete(s.items, k)
		s.retired = append(s.retired, it)
		s.signal()
	}
}

// newItem builds the informer of one object; run starts it.
func (s *watchStore) newItem(k key) *watchItem {
	selector := fields.OneTermEqualSelector("metadata.name", k.name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return s.kind.list(ctx, s.client, k.namespace, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return s.kind.watch(ctx, s.client, k.namespace, opts)
		},
	}
	store, ctl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher:   cache.ToListWatcherWithWatchListSemantics(lw, s.client),
		ObjectType:      s.kind.object,
		Handler:         cache.ResourceEventHandlerFuncs{},
		MinWatchTimeout: minWatchTimeout,
	})
	return &watchItem{key: k, store: store, ctl: ctl}
}

// ErrNotSynced is wrapped by a read whose object's watch has not listed
// yet (strategy Watch): a failure that clears on its own (package
// transient).
var ErrNotSynced = errors.New("watch not synced")

// get returns the object from its informer's store, waiting (within ctx
// and syncTimeout) for the informer's first list.
func (s *watchStore) get(ctx context.Context, k key) (runtime.Object, error) {
	s.mu.Lock()
	it := s.items[k]
	s.mu.Unlock()
	if it == nil {
		return nil, errNotRegistered(s.kind, k)
	}
	if err := s.waitSynced(ctx, it); err != nil {
		return nil, err
	}
	obj, exists, err := it.store.GetByKey(k.String())
	if err != nil {
		return nil, fmt.Errorf("get %s %q from cache: %w", s.kind.name, k, err)
	}
	if !exists {
		return nil, apierrors.NewNotFound(s.kind.resource, k.name)
	}
	o, ok := obj.(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("get %s %q from cache: unexpected type %T", s.kind.name, k, obj)
	}
	if s.kind.immutable(o) && !it.immutable.Swap(true) {
		s.signal()
	}
	return o, nil
}

func (s *watchStore) waitSynced(ctx context.Context, it *watchItem) error {
	synced := it.ctl.HasSyncedChecker().Done()
	select {
	case <-synced:
		return nil
	default:
	}
	t := s.clock.NewTimer(syncTimeout)
	defer t.Stop()
	select {
	case <-synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the watch of %s %q: %w", s.kind.name, it.key, context.Cause(ctx))
	case <-t.C():
		return fmt.Errorf("get %s %q: %w within %s", s.kind.name, it.key, ErrNotSynced, syncTimeout)
	}
}

// run starts and stops the informers until ctx ends, then stops them all
// and waits for them.
func (s *watchStore) run(ctx context.Context) {
	running := map[*watchItem]context.CancelFunc{} // nil: stopped for good
	var wg sync.WaitGroup
	defer func() {
		for _, cancel := range running {
			if cancel != nil {
				cancel()
			}
		}
		wg.Wait()
	}()
	for {
		s.reconcile(ctx, running, &wg)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
	}
}

// reconcile stops the informers of retired and immutable items and starts
// those of new ones.
func (s *watchStore) reconcile(ctx context.Context, running map[*watchItem]context.CancelFunc, wg *sync.WaitGroup) {
	s.mu.Lock()
	retired := s.retired
	s.retired = nil
	items := make([]*watchItem, 0, len(s.items))
	for _, it := range s.items {
		items = append(items, it)
	}
	s.mu.Unlock()
	logger := klog.FromContext(ctx)
	for _, it := range retired {
		if cancel := running[it]; cancel != nil {
			cancel()
		}
		delete(running, it)
		logger.V(4).Info("Stopped watching: no pod references it", s.kind.name, it.key.String())
	}
	for _, it := range items {
		cancel, started := running[it]
		switch {
		case it.immutable.Load():
			if cancel != nil {
				cancel()
				logger.V(4).Info("Stopped watching: the object is immutable", s.kind.name, it.key.String())
			}
			running[it] = nil
		case !started:
			ictx, cancel := context.WithCancel(klog.NewContext(ctx, logger.WithValues(s.kind.name, it.key.String())))
			running[it] = cancel
			wg.Go(func() { it.ctl.RunWithContext(ictx) })
		}
	}
}
