package podsource

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// APIConfig configures an APIWatcher.
type APIConfig struct {
	// Client lists and watches the pods; the main API client.
	Client kubernetes.Interface
	// NodeName is this node's name: berth sees the pods bound to it.
	NodeName string
	// NodeSynced, when set, holds the first list back until it is closed,
	// as upstream starts its pod reflector only once the node informer
	// has synced (so admission sees the node's allocatable).
	NodeSynced <-chan struct{}
	// Clock drives the reflector's backoff and watch timeouts.
	Clock clock.Clock
	// Feed, when set, gives the node's pods in place of a list and watch
	// of its own (berth simulate's shared pod informer); Client is then
	// not used.
	Feed Feed
}

// APIWatcher gives berth the pods the scheduler bound to this node: it
// lists and watches pods with the field selector spec.nodeName=<node>,
// like upstream's pkg/kubelet/config/apiserver.go. It holds only its
// immutable configuration; the pods it knows live in the Run goroutine.
type APIWatcher struct {
	cfg APIConfig
}

// NewAPISource validates cfg and returns an APIWatcher; it starts nothing.
func NewAPISource(cfg APIConfig) (*APIWatcher, error) {
	if (cfg.Client == nil && cfg.Feed == nil) || cfg.NodeName == "" {
		return nil, errors.New("new api source: a client or a feed, and the node name, are required")
	}
	if cfg.Clock == nil {
		return nil, errors.New("new api source: Clock is required")
	}
	return &APIWatcher{cfg: cfg}, nil
}

// nodeSelector is the field selector of the pods bound to nodeName.
func nodeSelector(nodeName string) fields.Selector {
	return fields.OneTermEqualSelector("spec.nodeName", nodeName)
}

// Run lists and watches the node's pods until ctx ends, then returns nil.
// After the first complete list it sends one Snapshot (Source podutil.APISource)
// of all the pods, which marks the source as seen; after that it sends
// each change to changes as an Update: OpAdd for a new pod; OpUpdate for a
// changed spec, labels, annotations or deletion grace period; OpDelete once
// the deletionTimestamp is set; OpReconcile for a status-only change;
// OpRemove for a pod gone from the API. A relist (after the watch expired)
// sends only what differs from the pods the source already gave. Pods are
// deep copies, sent as the API gave them: the merger adds config.source and
// config.seen. The reflector retries failed lists and watches with
// backoff, so Run returns no error of its own; with a Feed, only a
// refused subscription is returned.
func (s *APIWatcher) Run(ctx context.Context, snapshots chan<- Snapshot, changes chan<- Update) error {
	logger := klog.FromContext(ctx).WithValues("source", podutil.APISource)
	ctx = klog.NewContext(ctx, logger)
	if s.cfg.NodeSynced != nil {
		logger.Info("Waiting for node sync before watching apiserver pods")
		select {
		case <-s.cfg.NodeSynced:
		case <-ctx.Done():
			return nil
		}
	}
	store := &apiStore{
		nodeName: s.cfg.NodeName, pods: podSet{},
		snapshots: snapshots, changes: changes, done: ctx.Done(), logger: logger,
	}
	if s.cfg.Feed != nil {
		logger.Info("Taking apiserver pods from the shared feed")
		return s.runFeed(ctx, store)
	}
	logger.Info("Watching apiserver", "fieldSelector", nodeSelector(s.cfg.NodeName).String())
	r := cache.NewReflectorWithOptions(s.listWatch(), &corev1.Pod{}, store, cache.ReflectorOptions{
		Name: "podsource-api", Logger: &logger, Clock: s.cfg.Clock,
	})
	r.RunWithContext(ctx)
	return nil
}

// listWatch lists and watches the node's pods.
func (s *APIWatcher) listWatch() cache.ListerWatcher {
	return PodListWatch(s.cfg.Client, nodeSelector(s.cfg.NodeName).String())
}

// PodListWatch lists and watches the pods of every namespace that match
// the field selector through the typed client (so the fake clientset
// serves it too), telling the reflector whether the client can stream
// lists (WatchList). The API source's, and berth simulate's shared feed's.
func PodListWatch(client kubernetes.Interface, selector string) cache.ListerWatcher {
	pods := client.CoreV1().Pods(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return pods.Watch(ctx, o)
		},
	}
	return cache.ToListWatcherWithWatchListSemantics(lw, client)
}

// apiStore is the reflector's store. It keeps the node's pods as the API
// last gave them, by UID, and sends every change on. The reflector calls it
// from its one ListAndWatch goroutine (there is no resync), which thus owns
// pods and listed.
type apiStore struct {
	nodeName  string
	pods      podSet
	listed    bool
	snapshots chan<- Snapshot
	changes   chan<- Update
	// done is the Run context's Done: sends give up once it is closed.
	done   <-chan struct{}
	logger klog.Logger
}

var _ cache.ReflectorStore = (*apiStore)(nil)

// Add and Update take a pod the watch reports as added or changed.
func (a *apiStore) Add(obj interface{}) error    { return a.apply(obj) }
func (a *apiStore) Update(obj interface{}) error { return a.apply(obj) }

// Resync does nothing: the reflector runs without a resync period.
func (a *apiStore) Resync() error { return nil }

func (a *apiStore) apply(obj interface{}) error {
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	old := a.pods[pod.UID]
	if pod.Spec.NodeName != a.nodeName {
		// Not ours (a server that ignored the field selector): forget it.
		if old == nil {
			return nil
		}
		delete(a.pods, pod.UID)
		return a.send(Update{Op: OpRemove, Pods: []*corev1.Pod{pod}})
	}
	a.pods[pod.UID] = pod
	op, changed := classifyPod(old, pod)
	if !changed || !a.listed {
		return nil
	}
	return a.send(Update{Op: op, Pods: []*corev1.Pod{pod}})
}

// Delete takes a pod the watch reports as deleted.
func (a *apiStore) Delete(obj interface{}) error {
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	if _, ok := a.pods[pod.UID]; !ok {
		return nil
	}
	delete(a.pods, pod.UID)
	if !a.listed {
		return nil
	}
	return a.send(Update{Op: OpRemove, Pods: []*corev1.Pod{pod}})
}

// Replace takes a complete list. The first one goes out as the source's
// Snapshot; later ones (relists) as the Updates that bring the merger from
// what the source gave before to the list.
func (a *apiStore) Replace(list []interface{}, _ string) error {
	pods := make([]*corev1.Pod, 0, len(list))
	for _, obj := range list {
		pod, err := asPod(obj)
		if err != nil {
			return err
		}
		if pod.Spec.NodeName == a.nodeName {
			pods = append(pods, pod)
		}
	}
	next, updates := diffAPIList(a.pods, pods)
	a.pods = next
	if !a.listed {
		a.listed = true
		a.logger.V(2).Info("Listed pods", "pods", len(pods))
		select {
		case a.snapshots <- Snapshot{Source: podutil.APISource, Pods: deepCopyPods(pods)}:
		case <-a.done:
		}
		return nil
	}
	for _, u := range updates {
		if err := a.send(u); err != nil {
			return err
		}
	}
	return nil
}

// send deep-copies u's pods and sends it; it gives up quietly when Run's
// context ends (the state no longer matters then).
func (a *apiStore) send(u Update) error {
	u.Source = podutil.APISource
	u.Pods = deepCopyPods(u.Pods)
	a.logger.V(4).Info("Sending pod change", "op", u.Op, "pods", klog.KObjSlice(u.Pods))
	select {
	case a.changes <- u:
	case <-a.done:
	}
	return nil
}

func asPod(obj interface{}) (*corev1.Pod, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("read pod from the API: unexpected object %T", obj)
	}
	return pod, nil
}

// classifyPod says what a pod's new state means against its old one (nil
// when the source did not have it), by the rules the merger applies
// (diffPods): a new pod is OpAdd; a change to what berth acts on (spec,
// labels, annotations other than berth's own, deletion fields) is OpDelete
// when the deletionTimestamp is set and OpUpdate otherwise; a change to the
// status alone is OpReconcile. changed is false when nothing of that moved
// (resourceVersion, managed fields, finalizers and the like).
func classifyPod(old, pod *corev1.Pod) (op Op, changed bool) {
	switch {
	case old == nil:
		return OpAdd, true
	case podsDifferSemantically(old, pod):
		if pod.DeletionTimestamp != nil {
			return OpDelete, true
		}
		return OpUpdate, true
	case !equality.Semantic.DeepEqual(old.Status, pod.Status):
		return OpReconcile, true
	}
	return 0, false
}

// diffAPIList compares the pods the source gave (by UID) with a complete
// new list and returns the new state and the Updates that lead there, in
// the merger's order: removes, adds, updates, deletes, reconciles. A pod
// deleted and recreated under the same name has a new UID: it is removed
// and added. It does not change old or the pods.
func diffAPIList(old podSet, list []*corev1.Pod) (podSet, []Update) {
	next := make(podSet, len(list))
	byOp := map[Op][]*corev1.Pod{}
	for _, pod := range list {
		next[pod.UID] = pod
		if op, changed := classifyPod(old[pod.UID], pod); changed {
			byOp[op] = append(byOp[op], pod)
		}
	}
	for uid, pod := range old {
		if _, ok := next[uid]; !ok {
			byOp[OpRemove] = append(byOp[OpRemove], pod)
		}
	}
	sort.Slice(byOp[OpRemove], func(i, j int) bool {
		return podutil.FullName(byOp[OpRemove][i]) < podutil.FullName(byOp[OpRemove][j])
	})
	var updates []Update
	for _, op := range []Op{OpRemove, OpAdd, OpUpdate, OpDelete, OpReconcile} {
		if len(byOp[op]) > 0 {
			updates = append(updates, Update{Op: op, Source: podutil.APISource, Pods: byOp[op]})
		}
	}
	return next, updates
}
