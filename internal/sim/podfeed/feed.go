package podfeed

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/podsource"
)

// Config configures a Feed.
type Config struct {
	// Client lists and watches the pods (one watch for every node).
	Client kubernetes.Interface
	// Clock drives the reflector's backoff and watch timeouts.
	Clock clock.Clock
}

// Feed is one list and watch of the pods bound to any node, kept by node
// name and handed to the nodes that subscribe (podsource.Feed). Run owns
// the watch; Subscribe may be called from any goroutine.
type Feed struct {
	cfg    Config
	synced chan struct{} // closed after the first complete list
	once   sync.Once

	mu   sync.Mutex                           // guards pods and subs
	pods map[string]map[types.UID]*corev1.Pod // by spec.nodeName
	subs map[string]*queue                    // by node name
}

var (
	_ podsource.Feed       = (*Feed)(nil)
	_ cache.ReflectorStore = (*store)(nil)
)

// New validates cfg; Run starts the watch.
func New(cfg Config) (*Feed, error) {
	if cfg.Client == nil || cfg.Clock == nil {
		return nil, errors.New("pod feed: Client and Clock are required")
	}
	return &Feed{
		cfg: cfg, synced: make(chan struct{}),
		pods: map[string]map[types.UID]*corev1.Pod{}, subs: map[string]*queue{},
	}, nil
}

// Run lists and watches every pod with a node (spec.nodeName!=""), in
// all namespaces, until ctx ends. The reflector retries failed lists and
// watches with backoff, so it returns no error of its own.
func (f *Feed) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("source", "shared-pod-feed")
	selector := fields.OneTermNotEqualSelector("spec.nodeName", "").String()
	logger.Info("Watching apiserver pods for every simulated node", "fieldSelector", selector)
	r := cache.NewReflectorWithOptions(podsource.PodListWatch(f.cfg.Client, selector), &corev1.Pod{}, (*store)(f),
		cache.ReflectorOptions{Name: "podfeed", Logger: &logger, Clock: f.cfg.Clock})
	r.RunWithContext(ctx)
	f.mu.Lock()
	for name, q := range f.subs {
		q.close()
		delete(f.subs, name)
	}
	f.mu.Unlock()
	return nil
}

// Subscribe waits for the first complete list and subscribes nodeName:
// its first event is the node's pods now (a FeedReplace), then each
// change, in the watch's order. Taken under the lock the watch's store
// takes, so no change falls between the snapshot and the queue.
func (f *Feed) Subscribe(ctx context.Context, nodeName string) (podsource.Subscription, error) {
	select {
	case <-f.synced:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[nodeName]; ok {
		return nil, fmt.Errorf("pod feed: node %q is subscribed already", nodeName)
	}
	q := newQueue()
	q.push(podsource.FeedEvent{Op: podsource.FeedReplace, Pods: podList(f.pods[nodeName])})
	f.subs[nodeName] = q
	return &subscription{feed: f, node: nodeName, q: q}, nil
}

// Nodes is how many nodes are subscribed.
func (f *Feed) Nodes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// subscription is one node's.
type subscription struct {
	feed *Feed
	node string
	q    *queue
	once sync.Once
}

func (s *subscription) Next(ctx context.Context) (podsource.FeedEvent, bool) { return s.q.pop(ctx) }

func (s *subscription) Close() {
	s.once.Do(func() {
		s.feed.mu.Lock()
		if s.feed.subs[s.node] == s.q {
			delete(s.feed.subs, s.node)
		}
		s.feed.mu.Unlock()
		s.q.close()
	})
}

// store is the Feed as the reflector's store: only the reflector's
// goroutine calls it.
type store Feed

func (s *store) Add(obj interface{}) error    { return s.upsert(obj) }
func (s *store) Update(obj interface{}) error { return s.upsert(obj) }
func (s *store) Resync() error                { return nil }

func (s *store) upsert(obj interface{}) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("pod feed: unexpected object %T", obj)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byUID := s.pods[pod.Spec.NodeName]
	if byUID == nil {
		byUID = map[types.UID]*corev1.Pod{}
		s.pods[pod.Spec.NodeName] = byUID
	}
	byUID[pod.UID] = pod
	if q := s.subs[pod.Spec.NodeName]; q != nil {
		q.push(podsource.FeedEvent{Op: podsource.FeedUpsert, Pods: []*corev1.Pod{pod}})
	}
	return nil
}

func (s *store) Delete(obj interface{}) error {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("pod feed: unexpected object %T", obj)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if byUID := s.pods[pod.Spec.NodeName]; byUID != nil {
		delete(byUID, pod.UID)
		if len(byUID) == 0 {
			delete(s.pods, pod.Spec.NodeName)
		}
	}
	if q := s.subs[pod.Spec.NodeName]; q != nil {
		q.push(podsource.FeedEvent{Op: podsource.FeedDelete, Pods: []*corev1.Pod{pod}})
	}
	return nil
}

// Replace takes a complete list (the first, or a relist): every
// subscribed node gets its pods in it as a FeedReplace, which its
// apiStore diffs against what it had.
func (s *store) Replace(list []interface{}, _ string) error {
	next := map[string]map[types.UID]*corev1.Pod{}
	for _, obj := range list {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("pod feed: unexpected object %T", obj)
		}
		byUID := next[pod.Spec.NodeName]
		if byUID == nil {
			byUID = map[types.UID]*corev1.Pod{}
			next[pod.Spec.NodeName] = byUID
		}
		byUID[pod.UID] = pod
	}
	s.mu.Lock()
	s.pods = next
	for name, q := range s.subs {
		q.push(podsource.FeedEvent{Op: podsource.FeedReplace, Pods: podList(next[name])})
	}
	s.mu.Unlock()
	s.once.Do(func() { close(s.synced) })
	return nil
}

// podList is byUID's pods, in no order.
func podList(byUID map[types.UID]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(byUID))
	for _, p := range byUID {
		out = append(out, p)
	}
	return out
}
