package podsapi

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	podsv1alpha1 "k8s.io/kubelet/pkg/apis/pods/v1alpha1"
)

// Upstream's bounds: the broadcaster's queue and each watcher's buffer.
const (
	queueSize     = 1000
	watcherBuffer = 100
)

// event is one watch event; pod carries its status (a DELETED one only its
// name, namespace and UID, as upstream's OnPodRemoved).
type event struct {
	typ podsv1alpha1.EventType
	pod *corev1.Pod
}

// broadcaster fans events out to the watchers. One goroutine (run) owns
// the delivery; mu guards clients and stopped.
type broadcaster struct {
	dropped  prometheus.Counter
	incoming chan event
	mu       sync.Mutex
	clients  map[chan event]struct{}
	stopped  bool
}

func newBroadcaster(dropped prometheus.Counter) *broadcaster {
	return &broadcaster{dropped: dropped, incoming: make(chan event, queueSize), clients: map[chan event]struct{}{}}
}

// run delivers queued events until ctx ends, then closes every watcher. A
// watcher whose buffer is full is dropped (its channel closed), as
// upstream's: a slow client never holds berth up.
func (b *broadcaster) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			b.mu.Lock()
			b.stopped = true
			for c := range b.clients {
				delete(b.clients, c)
				close(c)
			}
			b.mu.Unlock()
			return
		case ev := <-b.incoming:
			b.mu.Lock()
			for c := range b.clients {
				select {
				case c <- ev:
				default:
					logger.Info("Watch client channel is full, dropping client.")
					b.dropped.Inc()
					delete(b.clients, c)
					close(c)
				}
			}
			b.mu.Unlock()
		}
	}
}

// register adds a watcher; after run ended its channel is closed at once.
func (b *broadcaster) register(c chan event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		close(c)
		return
	}
	b.clients[c] = struct{}{}
}

// unregister removes a watcher (and closes its channel) if still there.
func (b *broadcaster) unregister(c chan event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.clients[c]; ok {
		delete(b.clients, c)
		close(c)
	}
}

// broadcast queues ev without blocking; a full queue drops it (counted).
func (b *broadcaster) broadcast(ev event) {
	select {
	case b.incoming <- ev:
	default:
		b.dropped.Inc()
	}
}

// seenPods are the pods a watch event was sent for, with the status sent:
// per-UID state that ends with Forget (the pod-gone route). mu guards pods
// and orders each pod's events as they are queued.
type seenPods struct {
	mu   sync.Mutex
	pods map[types.UID]seenPod
}

type seenPod struct {
	name, namespace string
	status          corev1.PodStatus
	// finished: DELETED was sent (Finished); nothing more is.
	finished bool
}

// Observe tells watchers of a pod's new status, as upstream's status
// manager notifies the Pods API: ADDED the first time (unless the pod is
// being deleted), MODIFIED after; a status equal to the one sent last
// sends nothing. The agent calls it after every status the pod workers
// store.
func (s *Server) Observe(pod *corev1.Pod, st corev1.PodStatus) {
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	prev, ok := s.seen.pods[pod.UID]
	if ok && (prev.finished || apiequality.Semantic.DeepEqual(prev.status, st)) {
		return
	}
	typ := podsv1alpha1.EventType_MODIFIED
	if !ok && pod.DeletionTimestamp == nil {
		typ = podsv1alpha1.EventType_ADDED
	}
	s.seen.pods[pod.UID] = seenPod{name: pod.Name, namespace: pod.Namespace, status: *st.DeepCopy()}
	c := *pod
	c.Status = *st.DeepCopy()
	s.bc.broadcast(event{typ: typ, pod: &c})
}

// Finished tells watchers the pod's worker finished it (containers
// stopped, volumes torn down): DELETED, with its name, namespace and UID
// only, as upstream's status manager sends at TerminatePod. Nothing more
// is sent for the pod.
func (s *Server) Finished(uid types.UID) {
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	s.deletedLocked(uid)
}

// Forget drops what Observe kept of a pod that is gone (podgone.Owner),
// telling watchers DELETED if Finished did not.
func (s *Server) Forget(_ context.Context, uid types.UID) {
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	s.deletedLocked(uid)
	delete(s.seen.pods, uid)
}

// deletedLocked sends DELETED once; the caller holds seen.mu.
func (s *Server) deletedLocked(uid types.UID) {
	p, ok := s.seen.pods[uid]
	if !ok || p.finished {
		return
	}
	p.finished = true
	s.seen.pods[uid] = p
	s.bc.broadcast(event{typ: podsv1alpha1.EventType_DELETED, pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.namespace, UID: uid},
	}})
}

// HeldPods lists the pods Observe keeps (podgone.Holder).
func (s *Server) HeldPods() []types.UID {
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	out := make([]types.UID, 0, len(s.seen.pods))
	for uid := range s.seen.pods {
		out = append(out, uid)
	}
	return out
}

// WatchPods sends ADDED for every pod, INITIAL_SYNC_COMPLETE, then the
// events as they come, until the client goes (its context's error) or
// falls behind (ResourceExhausted, as upstream).
func (s *Server) WatchPods(_ *podsv1alpha1.WatchPodsRequest, stream podsv1alpha1.Pods_WatchPodsServer) error {
	if err := s.ready(); err != nil {
		return err
	}
	ctx := stream.Context()
	ch := make(chan event, watcherBuffer)
	s.bc.register(ch)
	defer s.bc.unregister(ch)
	for _, p := range s.sortedPods() {
		if err := send(stream, podsv1alpha1.EventType_ADDED, s.withStatus(p)); err != nil {
			return err
		}
	}
	if err := stream.Send(&podsv1alpha1.WatchPodsEvent{Type: podsv1alpha1.EventType_INITIAL_SYNC_COMPLETE}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-ch:
			if !ok {
				return status.Error(codes.ResourceExhausted, msgWatcherDropped)
			}
			if err := send(stream, ev.typ, ev.pod); err != nil {
				return err
			}
		}
	}
}

func send(stream podsv1alpha1.Pods_WatchPodsServer, typ podsv1alpha1.EventType, pod *corev1.Pod) error {
	b, err := pod.Marshal()
	if err != nil {
		return status.Errorf(codes.Internal, msgMarshalEvent, err)
	}
	return stream.Send(&podsv1alpha1.WatchPodsEvent{Type: typ, Pod: b})
}
